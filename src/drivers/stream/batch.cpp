// A batch of runs handed to a stream device at once (rig_submit_many): one turn, one context check, the
// waits once, and consecutive copies as one batch of copies where the library has one (cuMemcpyBatchAsync).
// The copies of one such batch run in no order CUDA promises, so only copies that touch no bytes another
// of them writes are gathered; the rest start a new group, which the stream orders after the last.
#include "drivers/stream/device.h"

namespace rig::stream {
namespace {

// Whether [a, a+n) and [b, b+m) share a byte.
bool overlap(DevicePtr a, size_t n, DevicePtr b, size_t m) { return a < b + m && b < a + n; }

}  // namespace

bool StreamDevice::joins_copies(const PreparedCall &call) const {
  if (copies_.count == kCopyGroup) return false;
  for (size_t i = 0; i < copies_.count; ++i) {
    DevicePtr dst = copies_.dsts[i], src = copies_.srcs[i];
    size_t n = copies_.sizes[i];
    // Write after write or read, and read after write: the stream would order them, a batch does not.
    if (overlap(call.dst, call.length, dst, n) || overlap(call.dst, call.length, src, n) ||
        overlap(call.src, call.length, dst, n))
      return false;
  }
  return true;
}

rig_status StreamDevice::flush_copies() {
  size_t n = copies_.count;
  if (!n) return RIG_OK;
  copies_.count = 0;
  if (n > 1 && !copy_batch_refused_) {
    // Every source is read in stream order, after the work before the batch; the hints are for managed
    // memory only, which rig does not allocate.
    MemcpyAttributes in_order = {MEMCPY_SRC_ACCESS_ORDER_STREAM, 0, 0, 0, 0, 0};
    size_t from_first = 0;
    Result r = calls_.copy_batch(copies_.dsts, copies_.srcs, copies_.sizes, n, &in_order, &from_first, 1, stream_);
    if (r == SUCCESS) [[likely]]
      return RIG_OK;
    // A driver that refuses the batch's arguments refuses them while parsing them, before it enqueues any
    // copy: ask it no more, and enqueue these one by one. Any other failure is the stream's.
    if (r != ERROR_INVALID_VALUE && r != ERROR_NOT_SUPPORTED) return fault(family_.names.copy_batch, r, true);
    copy_batch_refused_ = true;
  }
  for (size_t i = 0; i < n; ++i) {
    Result r = calls_.copy_async(copies_.dsts[i], copies_.srcs[i], copies_.sizes[i], stream_);
    if (r != SUCCESS) return fault(family_.names.copy_async, r, true);
  }
  return RIG_OK;
}

rig_status StreamDevice::hand_over_batch(std::span<const BatchWork> batch, uint64_t first,
                                         std::span<const QueueWait> waits) {
  if (lost()) return lose("");
  Current current(gpu_);
  if (rig_status s = enqueue_waits(waits, first); s != RIG_OK) return s;
  bool gather = calls_.copy_batch != nullptr;
  copies_.count = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const Prepared *calls = &prepared_;
    if (batch[i].recorded)
      calls = &recorded_calls(*batch[i].recorded);
    else
      prepared_.prepare(batch[i].work);  // the last run's calls are all enqueued or gathered by now
    for (const PreparedCall &call : calls->calls()) {
      if (gather && call.kind == RIG_PART_COPY) {
        if (!joins_copies(call))
          if (rig_status s = flush_copies(); s != RIG_OK) return s;
        size_t k = copies_.count++;
        copies_.dsts[k] = call.dst, copies_.srcs[k] = call.src, copies_.sizes[k] = call.length;
        continue;
      }
      if (rig_status s = flush_copies(); s != RIG_OK) return s;
      Result r = enqueue(calls_, stream_, call);
      if (r != SUCCESS) return fault(call_name(family_.names, call), r, true);
    }
    // A run's value before the last: held, proved by a later mark (the stream is in order), unless the
    // timeline's run of held values is at its bound. The last value is marked, proving every one before.
    uint64_t value = first + i;
    if (i + 1 < batch.size() && timeline_->hold(value)) continue;
    if (rig_status s = flush_copies(); s != RIG_OK) return s;
    Result r = timeline_->mark(value);
    if (r != SUCCESS)
      return fault(timeline_->memory_operations() ? family_.names.write_value64 : family_.names.event_record, r, true);
  }
  return RIG_OK;
}

}  // namespace rig::stream
