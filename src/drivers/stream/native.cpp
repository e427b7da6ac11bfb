// StreamDevice's native handles (core/native.h): waits enqueued on the program's own streams, events
// recorded on them and waited for in rig's queue, and rig's values exported as events. Call names are
// CUDA's; HIP's are the same calls under hip names (through the family's table).
#include <cstdio>
#include <cstring>
#include <mutex>

#include "core/error.h"
#include "drivers/stream/device.h"

namespace rig::stream {

void StreamDevice::dlpack_device(int32_t *type, int32_t *id) const {
  // DLPack's kDLCUDA (2) and kDLROCM (10): HIP's memory is ROCm's device type.
  *type = std::strcmp(family_.prefix, "hip") == 0 ? 10 : 2;
  *id = static_cast<int32_t>(gpu_.ordinal);
}

rig_status StreamDevice::native_failed(const char *call, const char *what, Result r) const {
  if (family_.is_sticky(r))
    return fail(RIG_LOST, "%s on %s failed: %s (the GPU's context can run nothing more in this process)", call,
                what, family_.error_name(r));
  if (r == ERROR_INVALID_HANDLE || r == ERROR_INVALID_VALUE || r == ERROR_INVALID_CONTEXT)
    return fail(RIG_INVALID_ARGUMENT, "%s refused %s for %s: %s (not a live %s handle of this kind?)", call, what,
                info_.name.c_str(), family_.error_name(r), family_.framework);
  return fail(status_of(family_, r), "%s on %s failed for %s: %s", call, what, info_.name.c_str(),
              family_.error_name(r));
}

rig_status StreamDevice::stream_wait(void *stream, DriverDevice &producer, uint64_t value) {
  StreamDevice *p = of_family(producer);
  if (!p) return fail(RIG_UNSUPPORTED, "a %s stream cannot wait for %s", family_.framework, producer.info().name.c_str());
  TimelineSlot *ps = p->timeline_->slot();
  if (ps->lost.load(std::memory_order_acquire) && ps->frozen.load(std::memory_order_relaxed) < value)
    return fail(RIG_LOST, "%s was lost before reaching value %llu", ps->name, static_cast<unsigned long long>(value));
  auto native = static_cast<Stream>(stream);
  if (!p->timeline_->memory_operations()) {
    // The value's own event in the producer's ring: the native stream waits for exactly that value.
    Current current(gpu_);
    Result r = p->timeline_->enqueue_wait(native, false, value);
    return r == SUCCESS ? RIG_OK : native_failed(family_.names.stream_wait_event, "the native stream", r);
  }
  // A timeline of memory operations: an event recorded at the producer's tail covers the value (handed
  // over, so before the tail); a stream wait on the word itself would risk the deadlock hand_over avoids
  // when the native stream shares a hardware queue with the producer's.
  Event e = nullptr;
  {
    Current in_producer(p->gpu_);  // an event is recorded on a stream of its own context
    Result r = calls_.event_create(&e, EVENT_DISABLE_TIMING);
    if (r != SUCCESS) return native_failed(family_.names.event_create, p->info_.name.c_str(), r);
    r = calls_.event_record(e, p->stream_);
    if (r != SUCCESS) {
      calls_.event_destroy(e);
      return native_failed(family_.names.event_record, p->info_.name.c_str(), r);
    }
  }
  Current current(gpu_);
  Result r = calls_.stream_wait_event(native, e, 0);
  calls_.event_destroy(e);  // the queued wait keeps what it waits for (CUDA's rule)
  return r == SUCCESS ? RIG_OK : native_failed(family_.names.stream_wait_event, "the native stream", r);
}

rig_status StreamDevice::queue_wait_stream(void *stream, uint64_t value, std::span<const QueueWait> carried) {
  if (lost()) return lose("");
  Current current(gpu_);
  // The turn's own edge event: recorded on the native stream, waited on by ours (no event made per call).
  Result r = calls_.event_record(edge_event_, static_cast<Stream>(stream));
  if (r != SUCCESS) return native_failed(family_.names.event_record, "the native stream", r);
  r = calls_.stream_wait_event(stream_, edge_event_, 0);
  if (r != SUCCESS) return fault(family_.names.stream_wait_event, r, true);  // our own stream: a loss
  // The native work waited for rig values: tracked as this value's own in-queue waits, so that a producer
  // lost short of one loses this value (check_producers) instead of leaving rig's waits blocked for good.
  // Kept as hand_over keeps its own (keep_queued prunes them as the timeline passes them).
  for (const QueueWait &w : carried)
    if (StreamDevice *p = of_family(*w.producer))
      if (rig_status s = keep_queued(p->timeline_->slot(), w.value, value); s != RIG_OK) return s;
  return RIG_OK;
}

rig_status StreamDevice::queue_wait_event(void *event, uint64_t value) {
  (void)value;
  if (lost()) return lose("");
  Current current(gpu_);
  Result r = calls_.stream_wait_event(stream_, static_cast<Event>(event), 0);
  return r == SUCCESS ? RIG_OK : native_failed(family_.names.stream_wait_event, "the native event", r);
}

rig_status StreamDevice::tail_event(bool reached, unsigned flags, Event *out) {
  Current current(gpu_);
  Event e = nullptr;
  Result r = calls_.event_create(&e, flags);
  if (r != SUCCESS) return native_failed(family_.names.event_create, info_.name.c_str(), r);
  if (!reached) {
    // The tail of our stream as of now: after the value, perhaps after later work too. CUDA streams take
    // records from any thread; hand_over's own records are unaffected (another event).
    r = calls_.event_record(e, stream_);
    if (r != SUCCESS) {
      calls_.event_destroy(e);
      return native_failed(family_.names.event_record, info_.name.c_str(), r);
    }
  }
  *out = e;
  return RIG_OK;
}

rig_status StreamDevice::export_event(uint64_t value, bool reached, void **event) {
  (void)value;  // handed over: the stream's tail follows it
  Event e = nullptr;
  if (rig_status s = tail_event(reached, EVENT_DISABLE_TIMING, &e); s != RIG_OK) return s;
  *event = e;
  return RIG_OK;
}

}  // namespace rig::stream
