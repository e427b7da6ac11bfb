// Recorded hand-overs on a stream device: a ready run's calls prepared once, when its buffers or scalars
// are set (device addresses, launch parameter blocks pointing into the record and the run's scalars), so a
// repeated submit enqueues its waits, the prepared calls and the mark, and works nothing out again. The run
// drops the record before its bindings or scalars change (core/submission.h); a lost device replays nothing
// (the engine asks under the turn before every hand-over, DriverWork::hand_over).
#include <new>

#include "drivers/stream/device.h"

namespace rig::stream {
namespace {

// One line for what a repeated submit reads of it: the vtable pointer (the engine's call), the device and the
// calls' span (Prepared's first member); the calls' own line follows it. Unaligned, the span fell on a second
// line of the record in some heap layouts: one more miss on a cold submit.
class alignas(64) StreamRecord final : public RecordedWork {
 public:
  StreamRecord(StreamDevice &device, uint64_t serial) : device_(device), serial_(serial) {}
  void prepare(const Work &work) { calls_.prepare(work); }
  // Hot: laid out with the rest of the submit path (.text.hot), not a page of its own to fetch again.
  [[gnu::hot]] rig_status hand_over(uint64_t value, std::span<const QueueWait> waits) override {
    return device_.hand_over_prepared(calls_, value, waits);
  }
  const Prepared &calls() const { return calls_; }
  uint64_t serial() const { return serial_; }

 private:
  StreamDevice &device_;  // never freed before the process exits (core/device.h), so it outlives the run
  Prepared calls_;
  uint64_t serial_;  // batches only
};

}  // namespace

// A run's record is made by the device the run submits to (the engine asks only that device's driver), so
// a record a batch hands this device is a StreamRecord.
const Prepared &StreamDevice::recorded_calls(const RecordedWork &recorded) {
  return static_cast<const StreamRecord &>(recorded).calls();
}

uint64_t StreamDevice::recorded_serial(const RecordedWork &recorded) {
  return static_cast<const StreamRecord &>(recorded).serial();
}

std::unique_ptr<RecordedWork> StreamDevice::record(const Work &work) {
  try {
    auto r = std::make_unique<StreamRecord>(*this, next_serial_.fetch_add(1, std::memory_order_relaxed));
    r->prepare(work);
    return r;
  } catch (const std::bad_alloc &) {
    return nullptr;  // the general hand-over prepares the same calls at each submit
  }
}

}  // namespace rig::stream
