// The work concern of the driver interface (core/driver.h): what a device is handed to run, how it checks
// it, and its timeline (hand-over, commit, the values it reaches, waits). The engine's rules decide what to
// hand over and when; a driver only runs it in value order.
#pragma once

#include <rig.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/deadline.h"
#include "core/driver_memory.h"

namespace rig {

// A driver's loaded module and a function in it (opaque to the engine).
struct DriverModule {
  virtual ~DriverModule() = default;
  // Finds a function by name; its handle goes into Part::function. RIG_NOT_FOUND with a message otherwise.
  virtual rig_status find(const char *name, uintptr_t *function) = 0;
};

// A part of some work, checked by the engine against the slots before any driver sees it.
struct Part {
  rig_part_kind kind = RIG_PART_COPY;
  uint32_t src_slot = 0, dst_slot = 0;
  size_t src_offset = 0, dst_offset = 0, length = 0;
  uint8_t byte = 0;
  rig_host_kernel_fn fn = nullptr;
  void *user = nullptr;
  DriverModule *module = nullptr;
  uintptr_t function = 0;
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;
  std::vector<uint32_t> slots;  // a launch's slot arguments (made once, at rig_submission_make)
};

// What one submit hands over: the parts and the run's bindings and scalars.
struct Work {
  std::span<const Part> parts;
  std::span<const Binding> slots;
  std::span<const std::byte> scalars;
};

class DriverDevice;

// A wait the submitting device makes in its own queue on another device's value (rule 2..4's foreign
// points, when can_wait_in_queue said yes). The producer was committed through `value` first.
struct QueueWait {  // no member initializers: submit keeps an array of these on the stack, unzeroed
  DriverDevice *producer;
  uint64_t value;
};

// The hand-over of one run's work, prepared ahead by the driver that runs it (DriverWork::record): what the
// driver would otherwise work out from the same Work on every hand-over (device addresses, parameter blocks).
// Opaque to the engine, which keeps it with the run and drops it before the run's bindings or scalars change.
class RecordedWork {
 public:
  virtual ~RecordedWork() = default;
  // DriverWork::hand_over of the work this was recorded from, with the same contract: called holding the
  // device's turn, after `waits`; a failure loses the device. Never called on a lost device.
  virtual rig_status hand_over(uint64_t value, std::span<const QueueWait> waits) = 0;
};

// One run of a batch (DriverWork::hand_over_batch): its work, and its hand-over recorded by this driver
// (DriverWork::record), or null where there is none.
struct BatchWork {  // a batch keeps an array of these on the stack (core/submit.cpp), never the heap
  Work work;
  RecordedWork *recorded;
};

// The work a device runs and its timeline. All calls come from the engine, which guarantees:
//  - hand_over and commit are called holding the device's turn (one caller at a time);
//  - every other call may come from any thread at any time (drivers make them safe);
//  - wait is called with no lock of the engine held, after commit covered the value.
// A call that fails returns a status and sets the message with rig::fail (core/error.h).
class DriverWork {
 public:
  // Checks a part the engine has already range-checked (RIG_UNSUPPORTED for what the device cannot run).
  virtual rig_status check_part(const Part &part) = 0;
  // Checks a run whose every slot is bound and in range against what the device can bind (a binding
  // range limit, say): RIG_INVALID_ARGUMENT with a message. Called when a run's buffers change, never on
  // the submit path, so that work hand_over would have to refuse (which loses the device) is refused at
  // rig_submit instead, leaving the device as it was.
  virtual rig_status check_work(const Work &) const { return RIG_OK; }

  // Timeline.
  // True where this device's queue can wait on `producer`'s timeline values itself. The answer for a producer
  // that is not lost never changes: the engine asks once per producer in a row and remembers a yes
  // (Device::can_wait_in_queue), asking the producer's loss itself before each wait.
  virtual bool can_wait_in_queue(const DriverDevice &producer) const = 0;
  // Takes the work of timeline value `value` (= previous + 1), to run after `waits` and after value-1.
  // A failure here loses the device. May block (a full queue) while the engine holds the turn. The engine
  // calls it holding the turn with the device not lost (asked under the turn just before: the driver need
  // not ask again), and each wait's producer one can_wait_in_queue said yes to.
  virtual rig_status hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) = 0;
  // Takes values first .. first+batch.size()-1 for the batch's works in order, `waits` before the first:
  // what batch.size() hand_overs would (each by its record where it has one), one caller's turn for all.
  // The engine assigns the values once this returns OK. A failure loses the device. The default is those
  // hand-overs one by one; a driver that can give its device several values' work at once overrides it.
  virtual rig_status hand_over_batch(std::span<const BatchWork> batch, uint64_t first,
                                     std::span<const QueueWait> waits) {
    for (size_t i = 0; i < batch.size(); ++i) {
      std::span<const QueueWait> before = i ? std::span<const QueueWait>() : waits;
      rig_status s = batch[i].recorded ? batch[i].recorded->hand_over(first + i, before)
                                       : hand_over(batch[i].work, first + i, before);
      if (s != RIG_OK) return s;
    }
    return RIG_OK;
  }
  // Prepares the hand-over of `work` (a ready run's: every slot bound and checked by check_work) for
  // repeated hand-overs, or null where the driver prepares nothing (the engine then calls hand_over). The
  // record may keep pointers into `work`'s bindings and scalars: the engine drops it before they change.
  // Called when a run's buffers or scalars are set, never on the submit path; may allocate; a driver that
  // cannot record (out of memory) returns null.
  virtual std::unique_ptr<RecordedWork> record(const Work &) { return nullptr; }
  // Takes value `value` (= previous + 1) with no work and no waits of its own: only what the device's queue
  // was made to wait for just before, holding the turn (NativeHandles' queue waits, a semaphore's), which
  // it stands for. Called holding the turn; a failure loses the device. *held: true where the driver
  // leaves the value's mark to its next hand-over or to commit() (the engine then counts it handed over,
  // not committed: a wait on it commits first); the default hands over empty work and holds nothing.
  virtual rig_status hand_over_empty(uint64_t value, bool *held) {
    *held = false;
    return hand_over(Work{}, value, {});
  }
  // Makes every value handed over so far eligible to run, and provable: a value held by hand_over_empty
  // gets its mark. A failure loses the device.
  virtual rig_status commit() = 0;
  // The last value the device's timeline shows reached. A pure read: commits nothing, never blocks
  // (it may ask the device, which costs a driver call).
  virtual uint64_t signaled() const = 0;
  // Whether `value` is reached; as signaled() >= value, but a driver may answer it with one question
  // about that value where finding the last one reached would take several.
  virtual bool reached(uint64_t value) const { return signaled() >= value; }
  // Whether `value` is reached, as far as the driver can tell cheaply: may answer no for a value already
  // reached. The submit path asks it for every point it collects, so a driver whose signaled() costs a
  // call answers from what it last saw, asking the device only where that is likely to pay; a wrong no
  // costs an in-queue wait for work already done (or a host wait that returns at once), never a missed one.
  virtual bool known_reached(uint64_t value) const { return signaled() >= value; }
  // Blocks until signaled() >= value or the deadline or an interrupt (core/deadline.h): OK, TIMEOUT,
  // INTERRUPTED, or LOST (after calling the loss sink) on a fault.
  virtual rig_status wait(uint64_t value, Deadline deadline) = 0;

 protected:
  ~DriverWork() = default;
};

}  // namespace rig
