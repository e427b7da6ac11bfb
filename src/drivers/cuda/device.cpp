// CudaDevice: opening, the timeline side (hand-over, waits, loss) and part checks. Memory and host
// registration are in device_memory.cpp.
#include "drivers/cuda/device.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "drivers/cuda/module.h"

namespace rig::cuda {
namespace {

// Events unless RIG_CUDA_TIMELINE=memops asks for stream memory operations and the device and driver have
// 64-bit ones (timeline.h says what each costs; the tests and the benchmark run both).
bool use_memory_operations(const Api &api, cu::Device device) {
  const char *asked = std::getenv("RIG_CUDA_TIMELINE");
  if (!asked || std::strcmp(asked, "memops") != 0) return false;
  if (!api.cuStreamWriteValue64 || !api.cuStreamWaitValue64) return false;
  int can = 0;
  if (api.cuDeviceGetAttribute(&can, cu::ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS, device) != cu::SUCCESS) return false;
  return can == 1;
}

// A failed call while opening: a sticky error means the GPU's context can run nothing more in this
// process (on the H200 pair a fault on one GPU ended the other's context too), which is a loss.
rig_status open_failed(const char *call, unsigned ordinal, cu::Result r) {
  rig_status s = status_of(r);  // sticky: RIG_LOST
  return fail(s, "%s on cuda:%u failed: %s%s", call, ordinal, error_name(r),
              s == RIG_LOST ? " (the GPU's context can run nothing more in this process)" : "");
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

rig_status CudaDevice::open(const Api &api, const Gpu &gpu, std::unique_ptr<DriverDevice> *out) {
  std::unique_ptr<CudaDevice> d(new CudaDevice(api, gpu));
  CurrentContext current(api, gpu.context);

  char model[256] = {};
  if (api.cuDeviceGetName(model, sizeof model - 1, gpu.device) != cu::SUCCESS) model[0] = 0;
  size_t total = 0;
  if (api.cuDeviceTotalMem(&total, gpu.device) != cu::SUCCESS) total = 0;
  d->info_.name = "cuda:" + std::to_string(gpu.ordinal);
  d->info_.framework = "CUDA";
  d->info_.model = model;
  d->info_.kind = RIG_DEVICE_GPU;
  d->info_.memory_bytes = total;
  d->info_.integrated = d->attribute(cu::ATTR_INTEGRATED);
  d->info_.runs_host_kernels = false;
  d->info_.commits_at_hand_over = true;  // CUDA runs enqueued work without a commit

  const int which[8] = {cu::ATTR_MAX_BLOCK_DIM_X, cu::ATTR_MAX_BLOCK_DIM_Y, cu::ATTR_MAX_BLOCK_DIM_Z,
                        cu::ATTR_MAX_GRID_DIM_X,  cu::ATTR_MAX_GRID_DIM_Y,  cu::ATTR_MAX_GRID_DIM_Z,
                        cu::ATTR_MAX_THREADS_PER_BLOCK, cu::ATTR_MAX_SHARED_MEMORY_PER_BLOCK};
  for (int i = 0; i < 8; ++i) d->limits_[i] = d->attribute(which[i]);

  // Non-blocking: the legacy default stream (used by other code in the process) never joins our order.
  cu::Result r = api.cuStreamCreate(&d->stream_, cu::STREAM_NON_BLOCKING);
  if (r != cu::SUCCESS) {
    d->stream_ = nullptr;
    return open_failed("cuStreamCreate", gpu.ordinal, r);
  }
  r = api.cuEventCreate(&d->edge_event_, cu::EVENT_DISABLE_TIMING);
  if (r != cu::SUCCESS) {
    d->edge_event_ = nullptr;
    return open_failed("cuEventCreate", gpu.ordinal, r);
  }
  TimelineSlot *slot = nullptr;
  if (rig_status s = take_timeline_slot(api, &slot); s != RIG_OK) return s;
  std::snprintf(slot->name, sizeof slot->name, "cuda:%u", gpu.ordinal);
  d->timeline_ = std::make_unique<Timeline>(api, d->stream_, slot, use_memory_operations(api, gpu.device));
  if (rig_status s = d->timeline_->init(); s != RIG_OK) return s;
  {
    std::lock_guard hold(slot->owner_lock);
    slot->owner = d.get();
    slot->probe = [](void *owner) {
      auto *self = static_cast<CudaDevice *>(owner);
      if (!self->lost()) {
        CurrentContext current(self->api_, self->gpu_.context);
        self->check_stream();
      }
    };
  }
  d->launch_addresses_.reserve(16);
  d->launch_params_.reserve(17);
  d->queued_.reserve(2 * kPruneAt);
  *out = std::move(d);
  return RIG_OK;
}

CudaDevice::~CudaDevice() {
  if (timeline_) {
    std::lock_guard hold(timeline_->slot()->owner_lock);
    timeline_->slot()->owner = nullptr;
    timeline_->slot()->probe = nullptr;
  }
  CurrentContext current(api_, gpu_.context);
  // The engine waited for every value before releasing; this only drains what a lost device left.
  // A lost device's stream is not waited for: its context may never finish anything again.
  if (stream_ && !lost()) api_.cuStreamSynchronize(stream_);
  timeline_.reset();
  if (edge_event_) api_.cuEventDestroy(edge_event_);
  if (stream_) api_.cuStreamDestroy(stream_);
}

int CudaDevice::attribute(int which) const {
  int value = 0;
  if (api_.cuDeviceGetAttribute(&value, which, gpu_.device) != cu::SUCCESS) return -1;
  return value;
}

rig_status CudaDevice::lose(const char *why, uint64_t reached_cap) noexcept {
  bool first = false;
  {
    std::lock_guard hold(loss_lock_);
    if (!loss_reported_) {
      loss_reported_ = true;
      lost_why_ = why && *why ? why : "lost";
      first = true;
    }
  }
  if (first) {
    gpu_.had_loss.store(true, std::memory_order_release);
    timeline_->freeze(reached_cap);
    mark_lost();
    report_loss(lost_why_.c_str());
  }
  return fail(RIG_LOST, "%s is lost: %s", info_.name.c_str(), lost_why_.c_str());
}

rig_status CudaDevice::fault(const char *call, cu::Result result, bool always_lose) {
  char why[256];
  std::snprintf(why, sizeof why, "%s failed: %s", call, error_name(result));
  if (always_lose || is_sticky(result)) return lose(why);
  return fail(status_of(result), "%s on %s", why, info_.name.c_str());
}

rig_status CudaDevice::check_stream() {
  cu::Result r = api_.cuStreamQuery(stream_);
  if (r == cu::SUCCESS || r == cu::ERROR_NOT_READY) return RIG_OK;
  // Any other answer from a query means the stream's work is gone (sticky, or a context torn down).
  return fault("the stream's work (cuStreamQuery)", r, true);
}

rig_status CudaDevice::check_producers(uint64_t up_to, bool probe) {
  char why[160] = {};
  uint64_t first_tainted = UINT64_MAX;
  TimelineSlot *unsettled[8];
  size_t n_unsettled = 0;
  {
    std::lock_guard hold(queued_lock_);
    for (const QueuedWait &q : queued_) {
      if (!q.producer->lost.load(std::memory_order_acquire)) {
        bool listed = false;
        for (size_t i = 0; i < n_unsettled; ++i) listed |= unsettled[i] == q.producer;
        if (q.value <= up_to && !listed && n_unsettled < 8) unsettled[n_unsettled++] = q.producer;
        continue;
      }
      if (q.producer->frozen.load(std::memory_order_relaxed) >= q.producer_value) continue;
      // Work from q.value on followed a wait that was let go without its value: it ran on bad input.
      if (q.value < first_tainted) {
        first_tainted = q.value;
        std::snprintf(why, sizeof why, "its queue waited for %s value %llu, which was lost before reaching it",
                      q.producer->name, static_cast<unsigned long long>(q.producer_value));
      }
    }
  }
  if (why[0]) return lose(why, first_tainted - 1);
  if (!probe || n_unsettled == 0) return RIG_OK;
  // Producers not known lost: let each look at its own stream (outside our lock; it may lose itself).
  for (size_t i = 0; i < n_unsettled; ++i) {
    std::lock_guard hold(unsettled[i]->owner_lock);
    if (unsettled[i]->probe) unsettled[i]->probe(unsettled[i]->owner);
  }
  return check_producers(up_to, false);
}

bool CudaDevice::can_wait_in_queue(const DriverDevice &producer) const {
  const CudaDevice *p = as_cuda(producer);
  if (!p || p->lost()) return false;
  // On one GPU: always (an event recorded on the producer's stream). Across GPUs: a producer on events
  // can always be waited on (cuStreamWaitEvent works across contexts); one on memory operations only by
  // a stream that can wait on a value itself.
  if (&p->gpu_ == &gpu_) return true;
  return !p->timeline_->memory_operations() || timeline_->memory_operations();
}

cu::Result CudaDevice::enqueue_part(const Part &part, const Work &work) {
  switch (part.kind) {
    case RIG_PART_COPY: {
      const Binding &src = work.slots[part.src_slot];
      const Binding &dst = work.slots[part.dst_slot];
      size_t length = part.length == RIG_WHOLE ? src.length - part.src_offset : part.length;
      if (length == 0) return cu::SUCCESS;
      return api_.cuMemcpyAsync(dst.memory->address + dst.offset + part.dst_offset,
                                src.memory->address + src.offset + part.src_offset, length, stream_);
    }
    case RIG_PART_FILL: {
      const Binding &dst = work.slots[part.dst_slot];
      size_t length = part.length == RIG_WHOLE ? dst.length - part.dst_offset : part.length;
      if (length == 0) return cu::SUCCESS;
      return api_.cuMemsetD8Async(dst.memory->address + dst.offset + part.dst_offset, part.byte, length,
                                  stream_);
    }
    case RIG_PART_LAUNCH:
      return enqueue_launch(part, work);
    default:
      return cu::ERROR_NOT_SUPPORTED;  // check_part refused it; never reached
  }
}

cu::Result CudaDevice::enqueue_launch(const Part &part, const Work &work) {
  // Parameters: each slot's device address, then the run's scalars as one block (a struct parameter).
  size_t n = part.slots.size();
  launch_addresses_.resize(n);
  launch_params_.resize(n + (work.scalars.empty() ? 0 : 1));
  for (size_t i = 0; i < n; ++i) {
    const Binding &b = work.slots[part.slots[i]];
    launch_addresses_[i] = b.memory ? b.memory->address + b.offset : 0;
    launch_params_[i] = &launch_addresses_[i];
  }
  if (!work.scalars.empty()) launch_params_[n] = const_cast<std::byte *>(work.scalars.data());
  return api_.cuLaunchKernel(reinterpret_cast<cu::Function>(part.function), part.grid[0], part.grid[1], part.grid[2],
                             part.block[0], part.block[1], part.block[2], part.shared_bytes, stream_,
                             launch_params_.empty() ? nullptr : launch_params_.data(), nullptr);
}

static const char *call_of(rig_part_kind kind) {
  switch (kind) {
    case RIG_PART_COPY: return "cuMemcpyAsync";
    case RIG_PART_FILL: return "cuMemsetD8Async";
    case RIG_PART_LAUNCH: return "cuLaunchKernel";
    default: return "a part this device cannot run";
  }
}

void CudaDevice::prune_queued() {
  // Waits our timeline has passed whose producer was not lost short of them are settled. Pruned in
  // batches that grow with what is left, against what is known reached without asking the driver
  // (events: what the ring's reuse last saw): a prune must not cost a call, nor run on every submit
  // while the GPU is far behind.
  uint64_t reached = timeline_->known();
  std::lock_guard hold(queued_lock_);
  std::erase_if(queued_, [&](const QueuedWait &q) {
    return q.value <= reached && !(q.producer->lost.load(std::memory_order_acquire) &&
                                   q.producer->frozen.load(std::memory_order_relaxed) < q.producer_value);
  });
  queued_size_.store(queued_.size(), std::memory_order_relaxed);
  prune_at_ = std::max(kPruneAt, 2 * queued_.size());
}

rig_status CudaDevice::hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) {
  if (lost()) return lose("");
  CurrentContext current(api_, gpu_.context);
  if (!waits.empty() && queued_size_.load(std::memory_order_relaxed) >= prune_at_) [[unlikely]]
    prune_queued();
  for (const QueueWait &w : waits) {
    CudaDevice *p = as_cuda(*w.producer);
    if (!p) return lose("asked to wait in its queue on a device that is not a CUDA device");
    TimelineSlot *ps = p->timeline_->slot();
    if (ps->lost.load(std::memory_order_acquire) && ps->frozen.load(std::memory_order_relaxed) < w.value) {
      char why[128];
      std::snprintf(why, sizeof why, "its work waits for %s value %llu, which is lost", ps->name,
                    static_cast<unsigned long long>(w.value));
      return lose(why);
    }
    cu::Result r;
    const char *call;
    if (&p->gpu_ == &gpu_ && p->timeline_->memory_operations()) {
      // Same GPU: a dependency CUDA sees. Streams of one GPU may share a hardware queue (more streams than
      // connections), where a stream waiting on a value written later in that queue would deadlock;
      // CUDA's documentation asks for such orders to be expressed with events. The event is recorded at
      // the producer's tail, which covers w.value (committed, not yet reached): over-waiting at worst,
      // never a cycle (everything before the tail was handed over before this wait).
      call = "cuEventRecord/cuStreamWaitEvent (same GPU)";
      r = api_.cuEventRecord(edge_event_, p->stream_);
      if (r == cu::SUCCESS) r = api_.cuStreamWaitEvent(stream_, edge_event_, 0);
    } else {
      call = timeline_->memory_operations() && p->timeline_->memory_operations() ? "cuStreamWaitValue64"
                                                                                  : "cuStreamWaitEvent";
      r = p->timeline_->enqueue_wait(stream_, timeline_->memory_operations(), w.value);
    }
    if (r != cu::SUCCESS) return fault(call, r, true);
    std::lock_guard hold(queued_lock_);
    queued_.push_back({ps, w.value, value});
    queued_size_.store(queued_.size(), std::memory_order_relaxed);
  }
  for (const Part &part : work.parts) {
    cu::Result r = enqueue_part(part, work);
    if (r != cu::SUCCESS) return fault(call_of(part.kind), r, true);
  }
  cu::Result r = timeline_->mark(value);
  if (r != cu::SUCCESS)
    return fault(timeline_->memory_operations() ? "cuStreamWriteValue64" : "cuEventRecord", r, true);
  return RIG_OK;
}

rig_status CudaDevice::commit() {
  // Nothing is held: work runs once enqueued. A lost device still answers LOST.
  if (lost()) return lose("");
  return RIG_OK;
}

rig_status CudaDevice::wait(uint64_t value, Deadline deadline) {
  if (timeline_->reached(value)) {
    // Reached; but if our queue waited on a producer lost short of its value, the work ran on bad input.
    return check_producers(value, false);
  }
  if (lost()) return lose("");
  CurrentContext current(api_, gpu_.context);
  using namespace std::chrono;
  auto spin_until = Clock::now() + microseconds(50);  // most chain steps finish within tens of µs
  auto slice = microseconds(5);
  for (;;) {
    if (timeline_->reached(value)) return check_producers(value, false);
    if (timeline_->slot()->lost.load(std::memory_order_acquire)) return lose("");
    if (interrupted())
      return fail(RIG_INTERRUPTED, "wait for %s value %llu interrupted", info_.name.c_str(),
                  static_cast<unsigned long long>(value));
    if (deadline.passed())
      return fail(RIG_TIMEOUT, "%s did not reach value %llu in time (reached %llu)", info_.name.c_str(),
                  static_cast<unsigned long long>(value),
                  static_cast<unsigned long long>(timeline_->signaled()));
    if (Clock::now() < spin_until) {
      for (int i = 0; i < 32; ++i) cpu_relax();
      continue;
    }
    // Past the spin: look for faults (a sticky error, a lost producer) then sleep a growing slice, never
    // past the deadline and never more than 1 ms (the interrupt check's bound, core/deadline.h).
    if (rig_status s = check_stream(); s != RIG_OK) return s;
    if (rig_status s = check_producers(value, true); s != RIG_OK) return s;
    auto nap = slice;
    if (!deadline.is_forever()) {
      auto left = duration_cast<microseconds>(deadline.at - Clock::now());
      if (left < nap) nap = std::max(left, microseconds(0));
    }
    std::this_thread::sleep_for(nap);
    slice = std::min(slice * 2, microseconds(1000));
  }
}

rig_status CudaDevice::check_part(const Part &part) {
  switch (part.kind) {
    case RIG_PART_COPY:
    case RIG_PART_FILL:
      return RIG_OK;
    case RIG_PART_HOST_KERNEL:
      return fail(RIG_UNSUPPORTED, "%s runs no host kernels (CUDA devices run launches of device code)",
                  info_.name.c_str());
    case RIG_PART_LAUNCH: {
      auto *m = dynamic_cast<CudaModule *>(part.module);
      if (!m || !part.function) return fail(RIG_INVALID_ARGUMENT, "a launch on %s needs a CUDA module and function",
                                            info_.name.c_str());
      if (&m->gpu() != &gpu_)
        return fail(RIG_INVALID_ARGUMENT, "the launch's module was loaded on cuda:%u, not on %s", m->gpu().ordinal,
                    info_.name.c_str());
      uint64_t threads = 1;
      for (int i = 0; i < 3; ++i) {
        if (part.block[i] == 0 || part.grid[i] == 0)
          return fail(RIG_INVALID_ARGUMENT, "launch grid and block sizes must be at least 1");
        if (limits_[i] > 0 && part.block[i] > static_cast<uint32_t>(limits_[i]))
          return fail(RIG_INVALID_ARGUMENT, "block size %u in dimension %d exceeds %s's limit %d", part.block[i], i,
                      info_.name.c_str(), limits_[i]);
        if (limits_[3 + i] > 0 && part.grid[i] > static_cast<uint32_t>(limits_[3 + i]))
          return fail(RIG_INVALID_ARGUMENT, "grid size %u in dimension %d exceeds %s's limit %d", part.grid[i], i,
                      info_.name.c_str(), limits_[3 + i]);
        threads *= part.block[i];
      }
      if (limits_[6] > 0 && threads > static_cast<uint64_t>(limits_[6]))
        return fail(RIG_INVALID_ARGUMENT, "%llu threads per block exceed %s's limit %d",
                    static_cast<unsigned long long>(threads), info_.name.c_str(), limits_[6]);
      if (limits_[7] > 0 && part.shared_bytes > static_cast<uint32_t>(limits_[7]))
        return fail(RIG_INVALID_ARGUMENT, "%u bytes of dynamic shared memory exceed %s's limit %d", part.shared_bytes,
                    info_.name.c_str(), limits_[7]);
      return RIG_OK;
    }
    default:
      return fail(RIG_INVALID_ARGUMENT, "unknown part kind %d", static_cast<int>(part.kind));
  }
}

rig_status CudaDevice::load_module(rig_module_format format, const void *bytes, size_t length,
                                   std::unique_ptr<DriverModule> *out) {
  if (lost()) return lose("");
  return CudaModule::load(api_, gpu_, format, bytes, length, out);
}

}  // namespace rig::cuda
