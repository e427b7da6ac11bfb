// StreamDevice: opening, the timeline side (hand-over, waits, loss) and part checks. Memory and host
// registration are in device_memory.cpp.
#include "drivers/stream/device.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "core/error.h"
#include "drivers/common/parts.h"
#include "drivers/stream/host_wait.h"
#include "drivers/stream/module.h"

namespace rig::stream {
namespace {

// A failed call while opening: a sticky error means the GPU's context can run nothing more in this
// process (on two GPUs of one host a fault on one ended the other's context too), which is a loss.
rig_status open_failed(const Family &family, const char *call, unsigned ordinal, Result r) {
  rig_status s = status_of(family, r);  // sticky: RIG_LOST
  return fail(s, "%s on %s:%u failed: %s%s", call, family.prefix, ordinal, family.error_name(r),
              s == RIG_LOST ? " (the GPU's context can run nothing more in this process)" : "");
}

}  // namespace

rig_status StreamDevice::open(const Gpu &gpu, DriverInfo info, bool memops, std::unique_ptr<DriverDevice> *out) {
  size_t window = 0;  // the events timeline's first window (RIG_EVENT_WINDOW), refused before anything is made
  if (!memops)
    if (rig_status s = Timeline::window_asked(&window); s != RIG_OK) return s;
  std::unique_ptr<StreamDevice> d(new StreamDevice(gpu));
  const Family &family = *gpu.family;
  const Calls &calls = family.calls;
  const Attributes &attributes = family.attributes;
  Current current(gpu);

  d->info_ = std::move(info);
  d->info_.kind = RIG_DEVICE_GPU;
  d->info_.runs_host_kernels = false;
  d->info_.commits_at_hand_over = true;  // CUDA and HIP run enqueued work without a commit

  const int which[8] = {attributes.max_block[0], attributes.max_block[1], attributes.max_block[2],
                        attributes.max_grid[0],  attributes.max_grid[1],  attributes.max_grid[2],
                        attributes.max_threads_per_block, attributes.max_shared_per_block};
  for (int i = 0; i < 8; ++i) d->limits_[i] = d->attribute(which[i]);

  // Non-blocking: the legacy default stream (used by other code in the process) never joins our order.
  Result r = calls.stream_create(&d->stream_, STREAM_NON_BLOCKING);
  if (r != SUCCESS) {
    d->stream_ = nullptr;
    return open_failed(family, family.names.stream_create, gpu.ordinal, r);
  }
  r = calls.event_create(&d->edge_event_, EVENT_DISABLE_TIMING);
  if (r != SUCCESS) {
    d->edge_event_ = nullptr;
    return open_failed(family, family.names.event_create, gpu.ordinal, r);
  }
  TimelineSlot *slot = nullptr;
  if (rig_status s = take_timeline_slot(family, &slot); s != RIG_OK) return s;
  std::snprintf(slot->name, sizeof slot->name, "%s", d->info_.name.c_str());
  d->timeline_ = std::make_unique<Timeline>(family, d->stream_, slot, memops, window);
  if (rig_status s = d->timeline_->init(); s != RIG_OK) return s;
  d->info_.known_signal = d->timeline_->known_signal();
  {
    std::lock_guard hold(slot->owner_lock);
    slot->owner = d.get();
    slot->probe = [](void *owner) {
      auto *self = static_cast<StreamDevice *>(owner);
      if (!self->lost()) {
        Current current(self->gpu_);
        self->check_stream();
      }
    };
  }
  *out = std::move(d);
  return RIG_OK;
}

StreamDevice::~StreamDevice() {
  if (timeline_) {
    std::lock_guard hold(timeline_->slot()->owner_lock);
    timeline_->slot()->owner = nullptr;
    timeline_->slot()->probe = nullptr;
  }
  Current current(gpu_);
  // The engine waited for every value before releasing; this only drains what a lost device left.
  // A lost device's stream is not waited for: its context may never finish anything again.
  if (stream_ && !lost()) calls_.stream_synchronize(stream_);
  destroy_graphs();
  destroy_reuse_pool();
  timeline_.reset();
  if (edge_event_) calls_.event_destroy(edge_event_);
  if (stream_) calls_.stream_destroy(stream_);
}

int StreamDevice::attribute(int which) const {
  int value = 0;
  if (which < 0 || calls_.device_attribute(&value, which, gpu_.device) != SUCCESS) return -1;
  return value;
}

rig_status StreamDevice::lose(const char *why, uint64_t reached_cap) noexcept {
  const char *text = why && *why ? why : "lost";
  // The timeline freezes before the engine hears of the loss: the engine reads the value reached at the loss
  // from signaled(), which must then be the frozen one. The freeze's winner reports; the engine keeps the
  // first report it gets (a loss it decided itself, e.g. the testing hook, came first: then it ignores this).
  if (timeline_->freeze(reached_cap)) {
    gpu_.had_loss.store(true, std::memory_order_release);
    report_loss(text);
  }
  const char *reason = lost_reason();
  return fail(RIG_LOST, "%s is lost: %s", info_.name.c_str(), reason ? reason : text);
}

rig_status StreamDevice::fault(const char *call, Result result, bool always_lose) {
  char why[256];
  std::snprintf(why, sizeof why, "%s failed: %s", call, family_.error_name(result));
  if (always_lose || family_.is_sticky(result)) return lose(why);
  return fail(status_of(family_, result), "%s on %s", why, info_.name.c_str());
}

rig_status StreamDevice::check_stream() {
  Result r = calls_.stream_query(stream_);
  if (r == SUCCESS || r == ERROR_NOT_READY) return RIG_OK;
  // Any other answer from a query means the stream's work is gone (sticky, or a context torn down).
  char call[64];
  std::snprintf(call, sizeof call, "the stream's work (%s)", family_.names.stream_query);
  return fault(call, r, true);
}

rig_status StreamDevice::check_producers(uint64_t up_to, bool probe) {
  // No timeline was ever lost: no kept wait's producer can be, and a walk would find nothing to taint. A
  // producer lost after this load is one the walk could miss as well (it reads each producer once); the
  // probe asks producers not known lost to look for their faults, so it walks anyway.
  if (!probe && !Timeline::any_frozen()) return RIG_OK;
  char why[160] = {};
  uint64_t first_tainted = UINT64_MAX;
  TimelineSlot *unsettled[8];
  size_t n_unsettled = 0;
  queued_.for_each([&](const QueuedWaits::Wait &q) {
    if (!q.producer->lost.load(std::memory_order_acquire)) {
      bool listed = false;
      for (size_t i = 0; i < n_unsettled; ++i) listed |= unsettled[i] == q.producer;
      if (q.value <= up_to && !listed && n_unsettled < 8) unsettled[n_unsettled++] = q.producer;
      return;
    }
    if (q.producer->frozen.load(std::memory_order_relaxed) >= q.producer_value) return;
    // Work from q.value on followed a wait that was let go without its value: it ran on bad input.
    if (q.value < first_tainted) {
      first_tainted = q.value;
      std::snprintf(why, sizeof why, "its queue waited for %s value %llu, which was lost before reaching it",
                    q.producer->name, static_cast<unsigned long long>(q.producer_value));
    }
  });
  if (why[0]) {
    rig_status lost = lose(why, first_tainted - 1);
    // Values before the first tainted one ran on good input: a wait for one of them still succeeds.
    return up_to < first_tainted ? RIG_OK : lost;
  }
  if (!probe || n_unsettled == 0) return RIG_OK;
  // Producers not known lost: let each look at its own stream (under its owner lock; it may lose itself).
  for (size_t i = 0; i < n_unsettled; ++i) {
    std::lock_guard hold(unsettled[i]->owner_lock);
    if (unsettled[i]->probe) unsettled[i]->probe(unsettled[i]->owner);
  }
  return check_producers(up_to, false);
}

bool StreamDevice::can_wait_in_queue(const DriverDevice &producer) const {
  const StreamDevice *p = of_family(producer);
  if (!p || p->lost()) return false;
  // On one GPU: always (an event recorded on the producer's stream). Across GPUs: a producer on events
  // can always be waited on (cuStreamWaitEvent works across contexts); one on memory operations only by
  // a stream that can wait on a value itself.
  if (&p->gpu_ == &gpu_) return true;
  return !p->timeline_->memory_operations() || timeline_->memory_operations();
}

void StreamDevice::prune_queued() {
  // Waits our timeline has passed whose producer was not lost short of them are settled. Pruned in
  // batches that grow with what is left, against what is known reached without asking the driver
  // (events: what the ring's reuse last saw): a prune must not cost a call, nor run on every submit
  // while the GPU is far behind.
  uint64_t reached = timeline_->known();
  queued_.drop_settled([&](const QueuedWaits::Wait &q) {
    return q.value <= reached && !(q.producer->lost.load(std::memory_order_acquire) &&
                                   q.producer->frozen.load(std::memory_order_relaxed) < q.producer_value);
  });
  prune_at_ = static_cast<uint32_t>(std::clamp(2 * queued_.live(), kPruneAt, QueuedWaits::kCapacity));
}

rig_status StreamDevice::make_queued_room(uint64_t value) {
  prune_queued();
  while (queued_.full()) {
    // Every kept wait is one our timeline has not passed (or one whose producer was lost short of it, which
    // the wait below answers with the loss). Wait for the value of the middle one, handed over before this
    // one: half the ring is dropped then, so the host waits once per half ring, as a full queue would.
    uint64_t target = queued_.value_at(QueuedWaits::kCapacity / 2);
    if (target >= value) target = queued_.oldest_value();
    if (target >= value) {  // one submit waiting in queue on more devices than the ring holds
      char why[128];
      std::snprintf(why, sizeof why, "a submit waited in its queue on more other devices' values than rig tracks (%zu)",
                    QueuedWaits::kCapacity);
      return lose(why);
    }
    // A held value (hand_over_empty) is proved only by a later mark: mark the newest held one first, as the
    // engine commits before any wait, or a wait for a held target would never end.
    if (rig_status s = commit(); s != RIG_OK) return s;
    if (rig_status s = wait(target, Deadline::forever()); s != RIG_OK) return s;
    prune_queued();
  }
  return RIG_OK;
}

rig_status StreamDevice::hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) {
  prepared_.prepare(work);
  return hand_over_prepared(prepared_, value, waits);
}

rig_status StreamDevice::waited_on_lost(const TimelineSlot &producer, uint64_t value) {
  char why[128];
  std::snprintf(why, sizeof why, "its work waits for %s value %llu, which is lost", producer.name,
                static_cast<unsigned long long>(value));
  return lose(why);
}

rig_status StreamDevice::hand_over_empty(uint64_t value, bool *held) {
  *held = false;
  if (lost()) return lose("");
  // The stream is in order: the waits just enqueued are before every later mark, so the next one proves
  // this value as well as its own, and this one's record (the edge's seventh call) is saved.
  if (timeline_->hold(value)) {
    *held = true;
    return RIG_OK;
  }
  prepared_.prepare(Work{});  // a long run of held values: marked here, as any empty hand-over
  return hand_over_prepared(prepared_, value, {});
}

rig_status StreamDevice::commit() {
  // Work runs once enqueued; only a held value's mark is left to make. A lost device still answers LOST.
  if (lost()) return lose("");
  if (!timeline_->holding()) return RIG_OK;
  // At the tail, holding the turn (the engine's commit): the newest held value's mark, after every held
  // value's waits, proves them all.
  Current current(gpu_);
  Result r = timeline_->mark_held();
  if (r != SUCCESS)
    return fault(timeline_->memory_operations() ? family_.names.write_value64 : family_.names.event_record, r, true);
  return RIG_OK;
}

rig_status StreamDevice::wait(uint64_t value, Deadline deadline) {
  if (timeline_->reached(value)) {
    // Reached; but if our queue waited on a producer lost short of its value, the work ran on bad input.
    return check_producers(value, false);
  }
  if (lost()) return lose("");
  Current current(gpu_);
  rig_status s = host_wait(
      info_.name.c_str(), value, deadline, [&] { return timeline_->reached(value); },
      [&] { return timeline_->slot()->lost.load(std::memory_order_acquire) ? lose("") : RIG_OK; },
      [&] {
        // Past the spin: a sticky error on our stream, a producer lost short of what our queue waits for.
        if (rig_status f = check_stream(); f != RIG_OK) return f;
        return check_producers(value, true);
      },
      [&] { return timeline_->signaled(); });
  if (s != RIG_OK) return s;
  // Reached; but if our queue waited on a producer lost short of its value, the work ran on bad input.
  return check_producers(value, false);
}

rig_status StreamDevice::check_part(const Part &part) {
  bool launch = false;
  if (rig_status s = common::check_gpu_part(part, info_, &launch); s != RIG_OK || !launch) return s;
  auto *m = dynamic_cast<StreamModule *>(part.module);
  if (!m || m->gpu().family != &family_ || !part.function)
    return fail(RIG_INVALID_ARGUMENT, "a launch on %s needs a %s module and function", info_.name.c_str(),
                family_.framework);
  if (&m->gpu() != &gpu_)
    return fail(RIG_INVALID_ARGUMENT, "the launch's module was loaded on %s:%u, not on %s", family_.prefix, m->gpu().ordinal,
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

rig_status StreamDevice::load_module(rig_module_format format, const void *bytes, size_t length,
                                   std::unique_ptr<DriverModule> *out) {
  if (lost()) return lose("");
  return StreamModule::load(gpu_, format, bytes, length, out);
}

}  // namespace rig::stream
