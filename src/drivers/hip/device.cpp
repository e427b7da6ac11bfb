// HipDevice: opening, the timeline side (hand-over, waits, loss) and part checks. Memory and host
// registration are in device_memory.cpp.
#include "drivers/hip/device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "drivers/common/host_wait.h"
#include "drivers/hip/module.h"

namespace rig::hip {
namespace {

// Stream memory operations unless the runtime lacks them, the device says it cannot wait on a value, or
// RIG_HIP_TIMELINE=events asks for events (how the tests cover both ways on one machine).
bool use_memory_operations(const Api &api, DeviceId device) {
  const char *forced = std::getenv("RIG_HIP_TIMELINE");
  if (forced && std::strcmp(forced, "events") == 0) return false;
  if (!api.hipStreamWriteValue64 || !api.hipStreamWaitValue64) return false;
  int can = 0;
  if (api.hipDeviceGetAttribute(&can, ATTR_CAN_USE_STREAM_WAIT_VALUE, device) != SUCCESS) return false;
  return can == 1;
}

}  // namespace

rig_status HipDevice::open(const Api &api, const Gpu &gpu, std::unique_ptr<DriverDevice> *out) {
  std::unique_ptr<HipDevice> d(new HipDevice(api, gpu));
  CurrentDevice current(api, gpu.ordinal);

  char model[256] = {};
  if (api.hipDeviceGetName(model, sizeof model - 1, gpu.ordinal) != SUCCESS) model[0] = 0;
  size_t total = 0;
  if (api.hipDeviceTotalMem(&total, gpu.ordinal) != SUCCESS) total = 0;
  d->info_.name = "hip:" + std::to_string(gpu.ordinal);
  d->info_.framework = "HIP";
  d->info_.model = model;
  d->info_.kind = RIG_DEVICE_GPU;
  d->info_.memory_bytes = total;
  // HIP counts a failed query as integrated (docs/mapped.md): so does the device's info.
  int integrated = d->attribute(ATTR_INTEGRATED);
  d->info_.integrated = integrated < 0 ? 1 : integrated;
  d->info_.runs_host_kernels = false;
  d->info_.commits_at_hand_over = true;  // HIP runs enqueued work without a commit

  const int which[8] = {ATTR_MAX_BLOCK_DIM_X, ATTR_MAX_BLOCK_DIM_Y, ATTR_MAX_BLOCK_DIM_Z,
                        ATTR_MAX_GRID_DIM_X,  ATTR_MAX_GRID_DIM_Y,  ATTR_MAX_GRID_DIM_Z,
                        ATTR_MAX_THREADS_PER_BLOCK, ATTR_MAX_SHARED_MEMORY_PER_BLOCK};
  for (int i = 0; i < 8; ++i) d->limits_[i] = d->attribute(which[i]);

  // Non-blocking: the null stream (used by other code in the process) never joins our order.
  Error r = api.hipStreamCreateWithFlags(&d->stream_, STREAM_NON_BLOCKING);
  if (r != SUCCESS) {
    d->stream_ = nullptr;
    return fail(status_of(r) == RIG_OUT_OF_MEMORY ? RIG_OUT_OF_MEMORY : RIG_DRIVER,
                "hipStreamCreateWithFlags on hip:%d failed: %s", gpu.ordinal, error_name(r));
  }
  TimelineSlot *slot = nullptr;
  if (rig_status s = take_timeline_slot(api, &slot); s != RIG_OK) return s;
  std::snprintf(slot->name, sizeof slot->name, "hip:%d", gpu.ordinal);
  d->timeline_ = std::make_unique<Timeline>(api, d->stream_, slot, use_memory_operations(api, gpu.ordinal));
  if (rig_status s = d->timeline_->init(); s != RIG_OK) return s;
  {
    std::lock_guard hold(slot->owner_lock);
    slot->owner = d.get();
    slot->probe = [](void *owner) {
      auto *self = static_cast<HipDevice *>(owner);
      if (!self->lost()) {
        CurrentDevice current(self->api_, self->gpu_.ordinal);
        self->check_stream();
      }
    };
  }
  d->launch_addresses_.reserve(16);
  d->launch_params_.reserve(17);
  d->queued_.reserve(16);
  *out = std::move(d);
  return RIG_OK;
}

HipDevice::~HipDevice() {
  if (timeline_) {
    std::lock_guard hold(timeline_->slot()->owner_lock);
    timeline_->slot()->owner = nullptr;
    timeline_->slot()->probe = nullptr;
  }
  CurrentDevice current(api_, gpu_.ordinal);
  // The engine waited for every value before releasing; this only drains what a lost device left. A lost
  // device's stream is not waited for: it may never finish anything again.
  if (stream_ && !lost()) api_.hipStreamSynchronize(stream_);
  timeline_.reset();
  if (stream_) api_.hipStreamDestroy(stream_);
}

int HipDevice::attribute(int which) const {
  int value = 0;
  if (api_.hipDeviceGetAttribute(&value, which, gpu_.ordinal) != SUCCESS) return -1;
  return value;
}

rig_status HipDevice::lose(const char *why, uint64_t reached_cap) noexcept {
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

rig_status HipDevice::fault(const char *call, Error result, bool always_lose) {
  char why[256];
  std::snprintf(why, sizeof why, "%s failed: %s", call, error_name(result));
  if (always_lose || is_sticky(result)) return lose(why);
  return fail(status_of(result), "%s on %s", why, info_.name.c_str());
}

rig_status HipDevice::check_stream() {
  Error r = api_.hipStreamQuery(stream_);
  if (r == SUCCESS || r == ERROR_NOT_READY) return RIG_OK;
  // Any other answer from a query means the stream's work is gone.
  return fault("the stream's work (hipStreamQuery)", r, true);
}

rig_status HipDevice::check_producers(uint64_t up_to, bool probe) {
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
      // Our work from q.value on followed a wait that was let go without its value (the lost producer
      // released its waiters): it ran on bad input, even where our stream went on and marked it reached.
      if (q.value < first_tainted) {
        first_tainted = q.value;
        std::snprintf(why, sizeof why, "its queue waited for %s value %llu, which was lost before reaching it",
                      q.producer->name, static_cast<unsigned long long>(q.producer_value));
      }
    }
  }
  if (why[0]) {
    rig_status lost = lose(why, first_tainted - 1);
    // Values before the first tainted one ran on good input: a wait for one of them still succeeds.
    return up_to < first_tainted ? RIG_OK : lost;
  }
  if (!probe || n_unsettled == 0) return RIG_OK;
  // Producers not known lost: let each look at its own stream (outside our lock; it may lose itself).
  for (size_t i = 0; i < n_unsettled; ++i) {
    std::lock_guard hold(unsettled[i]->owner_lock);
    if (unsettled[i]->probe) unsettled[i]->probe(unsettled[i]->owner);
  }
  return check_producers(up_to, false);
}

bool HipDevice::can_wait_in_queue(const DriverDevice &producer) const {
  auto *p = dynamic_cast<const HipDevice *>(&producer);
  if (!p || p->lost()) return false;
  // A producer on events can always be waited on (hipStreamWaitEvent works across devices); one on memory
  // operations only by a stream that can wait on a value itself.
  return !p->timeline_->memory_operations() || timeline_->memory_operations();
}

Error HipDevice::enqueue_part(const Part &part, const Work &work) {
  // Every Memory::address here is a device address (device memory, or host memory through
  // hipHostGetDevicePointer): the raw host pointer never reaches the device.
  auto at = [](const Binding &b, size_t offset) {
    return reinterpret_cast<void *>(static_cast<uintptr_t>(b.memory->address + b.offset + offset));
  };
  switch (part.kind) {
    case RIG_PART_COPY: {
      const Binding &src = work.slots[part.src_slot];
      const Binding &dst = work.slots[part.dst_slot];
      size_t length = part.length == RIG_WHOLE ? src.length - part.src_offset : part.length;
      if (length == 0) return SUCCESS;
      return api_.hipMemcpyAsync(at(dst, part.dst_offset), at(src, part.src_offset), length, MEMCPY_DEFAULT,
                                 stream_);
    }
    case RIG_PART_FILL: {
      const Binding &dst = work.slots[part.dst_slot];
      size_t length = part.length == RIG_WHOLE ? dst.length - part.dst_offset : part.length;
      if (length == 0) return SUCCESS;
      return api_.hipMemsetD8Async(at(dst, part.dst_offset), part.byte, length, stream_);
    }
    case RIG_PART_LAUNCH: {
      // Parameters: each slot's device address, then the run's scalars as one block (a struct parameter).
      size_t n = part.slots.size();
      launch_addresses_.resize(n);
      launch_params_.resize(n + (work.scalars.empty() ? 0 : 1));
      for (size_t i = 0; i < n; ++i) {
        const Binding &b = work.slots[part.slots[i]];
        launch_addresses_[i] = b.memory ? at(b, 0) : nullptr;
        launch_params_[i] = &launch_addresses_[i];
      }
      if (!work.scalars.empty()) launch_params_[n] = const_cast<std::byte *>(work.scalars.data());
      return api_.hipModuleLaunchKernel(reinterpret_cast<Function>(part.function), part.grid[0], part.grid[1],
                                        part.grid[2], part.block[0], part.block[1], part.block[2],
                                        part.shared_bytes, stream_,
                                        launch_params_.empty() ? nullptr : launch_params_.data(), nullptr);
    }
    default:
      return ERROR_NOT_SUPPORTED;  // check_part refused it; never reached
  }
}

static const char *call_of(rig_part_kind kind) {
  switch (kind) {
    case RIG_PART_COPY: return "hipMemcpyAsync";
    case RIG_PART_FILL: return "hipMemsetD8Async";
    case RIG_PART_LAUNCH: return "hipModuleLaunchKernel";
    default: return "a part this device cannot run";
  }
}

rig_status HipDevice::hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) {
  if (lost()) return lose("");
  CurrentDevice current(api_, gpu_.ordinal);
  if (!waits.empty()) {
    uint64_t reached = timeline_->signaled();
    std::lock_guard hold(queued_lock_);
    // Waits our timeline has passed whose producer was not lost short of them are settled.
    std::erase_if(queued_, [&](const QueuedWait &q) {
      return q.value <= reached && !(q.producer->lost.load(std::memory_order_acquire) &&
                                     q.producer->frozen.load(std::memory_order_relaxed) < q.producer_value);
    });
  }
  for (const QueueWait &w : waits) {
    auto *p = dynamic_cast<HipDevice *>(w.producer);
    if (!p) return lose("asked to wait in its queue on a device that is not a HIP device");
    TimelineSlot *ps = p->timeline_->slot();
    if (ps->lost.load(std::memory_order_acquire) && ps->frozen.load(std::memory_order_relaxed) < w.value) {
      char why[128];
      std::snprintf(why, sizeof why, "its work waits for %s value %llu, which is lost", ps->name,
                    static_cast<unsigned long long>(w.value));
      return lose(why);
    }
    Error r = p->timeline_->enqueue_wait(stream_, timeline_->memory_operations(), w.value);
    if (r != SUCCESS)
      return fault(timeline_->memory_operations() ? "hipStreamWaitValue64" : "hipStreamWaitEvent", r, true);
    std::lock_guard hold(queued_lock_);
    queued_.push_back({ps, w.value, value});
  }
  for (const Part &part : work.parts) {
    Error r = enqueue_part(part, work);
    if (r != SUCCESS) return fault(call_of(part.kind), r, true);
  }
  Error r = timeline_->mark(value);
  if (r != SUCCESS)
    return fault(timeline_->memory_operations() ? "hipStreamWriteValue64" : "hipEventRecord", r, true);
  return RIG_OK;
}

rig_status HipDevice::commit() {
  // Nothing is held: work runs once enqueued. A lost device still answers LOST.
  if (lost()) return lose("");
  return RIG_OK;
}

rig_status HipDevice::wait(uint64_t value, Deadline deadline) {
  // Reached; but if our queue waited on a producer lost short of its value, the work ran on bad input.
  if (timeline_->signaled() >= value) return check_producers(value, false);
  if (lost()) return lose("");
  CurrentDevice current(api_, gpu_.ordinal);
  rig_status s = common::host_wait(
      info_.name.c_str(), value, deadline, [&] { return timeline_->signaled() >= value; },
      [&] { return timeline_->slot()->lost.load(std::memory_order_acquire) ? lose("") : RIG_OK; },
      [&] {
        if (rig_status f = check_stream(); f != RIG_OK) return f;
        return check_producers(value, true);
      },
      [&] { return timeline_->signaled(); });
  if (s != RIG_OK) return s;
  return check_producers(value, false);
}

rig_status HipDevice::check_part(const Part &part) {
  switch (part.kind) {
    case RIG_PART_COPY:
    case RIG_PART_FILL:
      return RIG_OK;
    case RIG_PART_HOST_KERNEL:
      return fail(RIG_UNSUPPORTED, "%s runs no host kernels (HIP devices run launches of device code)",
                  info_.name.c_str());
    case RIG_PART_LAUNCH: {
      auto *m = dynamic_cast<HipModule *>(part.module);
      if (!m || !part.function)
        return fail(RIG_INVALID_ARGUMENT, "a launch on %s needs a HIP module and function", info_.name.c_str());
      if (&m->gpu() != &gpu_)
        return fail(RIG_INVALID_ARGUMENT, "the launch's module was loaded on hip:%d, not on %s", m->gpu().ordinal,
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

rig_status HipDevice::load_module(rig_module_format format, const void *bytes, size_t length,
                                  std::unique_ptr<DriverModule> *out) {
  if (lost()) return lose("");
  return HipModule::load(api_, gpu_, format, bytes, length, out);
}

}  // namespace rig::hip
