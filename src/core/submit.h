// The submit algorithm (docs/ordering-model.md, "What a submit does"): check, collect, commit and wait, take
// the turn, hand over, raise. What a submit with nothing to wait for does is here, inline, so that the C
// entry (rig_submit) runs it in its own frame with no further call but the copy; the collect and the waits
// of the full path are in core/submit.cpp (submit_waiting).
#pragma once

#include <rig.h>

#include <cstring>
#include <mutex>
#include <span>

#include "core/buffer.h"
#include "core/callable_ref.h"
#include "core/deadline.h"
#include "core/error.h"
#include "core/mutate.h"
#include "core/registry.h"
#include "core/submission.h"
#include "core/testing.h"

namespace rig {

// Steps 2 to 4 in full, for a submit that passed step 1's checks: collect (rules 2 to 4), commit and wait
// for what is not reached (in the device's queue where the driver can, else on the host holding no lock),
// then the turn (submit_detail::in_turn). Out of line, in core/submit.cpp.
rig_status submit_waiting(Run &run, const rig_point *waits, size_t wait_count, rig_point *point);

// Submits runs of one device as consecutive values with the turn taken once (rig.h's rig_submit_many: its
// statuses, and what each run follows). Step 1 for every run before anything else, so a refusal assigns
// nothing; steps 2 and 3 once for the batch; then the turn, the driver's hand_over_batch and the stamps run
// by run. Out of line, in core/submit.cpp. Blocks only for the device's turn, or on the host for a point
// whose device cannot be waited for in this device's queue.
rig_status submit_many(std::span<Run *const> runs, const rig_point *waits, size_t wait_count, rig_point *points);

namespace submit_detail {

// The tests' collect observer where `self` is observed (Device::observed), else null: one flag of the
// device's first line where the observer is unset, not a line of its own.
[[gnu::always_inline]] inline testing::CollectObserver observer(const Device &self) {
  if (!self.observed()) [[likely]]
    return nullptr;
  return testing::collect_observer.fn.load(std::memory_order_acquire);
}

// The tests' observer (core/testing.h) of a submit that took the inline path: what the full collect names.
// Out of line and cold, in core/submit.cpp.
[[gnu::cold]] void report_collected(const Run &run, uint32_t self, testing::CollectObserver observe);

// Whether a point of `device` needs no wait from a submit: `device` runs work inline, is neither released
// nor lost, and is known to have reached the value. False for any other device, reached or not: no call here
// (see nothing_to_wait_for); the full collect asks the rest (a lost device's value reached at the loss, a
// released device's, a GPU's driver).
inline bool inline_passed(const Device &device, uint64_t p) {
  return device.runs_inline() && device.inline_reached_open(point_value(p));
}

// Whether a point needs no wait from a submit of device `self`: none (0), self's own (rule 1), or
// inline_passed.
inline bool passed(uint64_t p, const Device &self) {
  if (!p) return true;
  uint32_t d = point_device(p);
  if (rule_on(1) && d == self.index()) return true;
  return inline_passed(*device_at(d), p);
}

// Steps 2 and 3 where nothing is to be waited for: true if every point rules 3 and 4 name for the inline
// copy's slots (InlineCopy::read, written) is passed, found without collecting them (the highest point per
// device matters only to what must be waited for). False at the first other point: the full collect then
// decides (submit_waiting). Only open devices that run work inline are asked, from their signaled word and
// state: no call here, so the pass keeps its values in registers (a point of a GPU goes the full way, where
// its driver is asked once). A use word's device is the word's owner (Stamps), so rule 4 needs no lookup
// of the point's device. The kNear entries of each array are tested one by one, without a loop.
inline bool nothing_to_wait_for(const Run::InlineCopy &copy, const Device &self) {
  static_assert(Run::InlineCopy::kNear == 2);
  auto read_passed = [&self](const Stamps *stamps) { return !stamps || passed(stamps->last_write(), self); };
  auto uses_passed = [&self](const Stamps *stamps) {
    return !stamps || stamps->every_owned_use([&self](uint64_t p, const Device &owner) {
      return (rule_on(1) && &owner == &self) || inline_passed(owner, p);
    });
  };
  if (rule_on(3) && !(read_passed(copy.read[0]) && read_passed(copy.read[1]))) return false;
  if (rule_on(4) && !(uses_passed(copy.written[0]) && uses_passed(copy.written[1]))) return false;
  return true;
}

// Steps 2 and 3's collect for a run with no explicit waits whose points to follow (rule 3's last writes of
// what it reads, rule 4's uses of what it writes) are passed but for those of at most one other device: true
// with that device's highest such point in *foreign (0 where every point is passed), found without a
// collected set; false at a point of a second other device (the full collect then decides). The common run
// of a GPU chain names its own device (rule 1) and the device before it in the chain. A use word's device is
// the word's owner (Stamps), so rule 4 needs no lookup but for the one other device. No call.
inline bool near_points(std::span<const Run::Stamping> slots, const Device &self, uint64_t *foreign) {
  uint64_t f = 0;
  auto take = [&f](uint64_t p) {  // p: a point not passed
    if (f && point_device(f) != point_device(p)) return false;
    if (p > f) f = p;
    return true;
  };
  for (const Run::Stamping &slot : slots) {
    if (rule_on(3) && (slot.access & RIG_ACCESS_READ))
      if (uint64_t p = slot.stamps->last_write(); !passed(p, self) && !take(p)) return false;
    if (rule_on(4) && (slot.access & RIG_ACCESS_WRITE))
      if (!slot.stamps->every_owned_use([&](uint64_t p, const Device &owner) {
            return (rule_on(1) && &owner == &self) || inline_passed(owner, p) || take(p);
          }))
        return false;
  }
  *foreign = f;
  return true;
}

// The turn's first step, holding it: the device's next value in *value (written on every path, so that no
// caller is seen to read it unset); RIG_LOST for a lost device, RIG_INVALID_ARGUMENT for a full timeline
// (`what` names the call). Every value is taken here. Only the turn's holder changes submitted, so the order
// of the two loads does not matter.
[[gnu::always_inline]] inline rig_status next_value(Device &self, const char *what, uint64_t *value) {
  *value = self.submitted() + 1;
  if (self.lost()) return self.lost_status();
  if (*value > RIG_POINT_VALUE_MASK) [[unlikely]]
    return fail(RIG_INVALID_ARGUMENT, "%s: %s's timeline is full", what, self.info().name.c_str());
  return RIG_OK;
}

// A hand-over that failed, holding the turn: the device is lost (its driver may hold the value half taken),
// and the answer is RIG_LOST with the failure's words as the loss's reason.
[[gnu::cold]] inline rig_status lose_at_hand_over(Device &self) {
  self.lose_now(last_error());
  return self.lost_status();
}

// 4. The turn: take the value, hand over and assign it (`hand(value)`: OK, or a failure that loses the
// device), raise the stamps (`raise(point)`: the run's use words and the last write of what it writes).
// From here the work is handed over or the device is lost; nothing fails silently. Blocks while another
// thread holds the device's turn (a hand-over that blocks on a full queue holds it).
template <class HandOver, class Raise>
[[gnu::always_inline]] inline rig_status in_turn(Device &self, rig_point *point, HandOver &&hand, Raise &&raise) {
  std::lock_guard turn(self.turn());
  uint64_t value;
  if (rig_status s = next_value(self, "submit", &value); s != RIG_OK) return s;
  if (rig_status s = hand(value); s != RIG_OK) [[unlikely]]
    return lose_at_hand_over(self);
  uint64_t here = self.point(value);
  raise(here);
  if (point) *point = here;
  return RIG_OK;
}

// in_turn's raise for the run's slots (Run::stamping).
inline void raise_stamps(std::span<const Run::Stamping> slots, uint64_t here) {
  for (const Run::Stamping &slot : slots) {
    Stamps::raise_use(slot.use, here);
    if (slot.access & RIG_ACCESS_WRITE) slot.stamps->raise_write(here);
  }
}

// in_turn's raise for an inline copy's near slots (InlineCopy::use, written), one by one.
[[gnu::always_inline]] inline void raise_stamps(const Run::InlineCopy &copy, uint64_t here) {
  static_assert(Run::InlineCopy::kNear == 2);
  Stamps::raise_use(copy.use[0], here);  // a copy has a slot
  if (copy.use[1]) Stamps::raise_use(copy.use[1], here);
  if (copy.written[0]) copy.written[0]->raise_write(here);
  if (copy.written[1]) copy.written[1]->raise_write(here);
}

// in_turn's hand-over by the driver: the run's recorded one where the driver made it when the run's buffers
// were set (what it could decide ahead is decided), else the work itself; then the value assigned. Called
// holding the turn, the device not lost.
inline rig_status hand_over(const Run &run, Device &self, uint64_t value, std::span<const QueueWait> waits) {
  rig_status s;
  if (RecordedWork *recorded = run.recorded()) [[likely]]
    s = recorded->hand_over(value, waits);
  else
    s = self.driver().hand_over(run.work(), value, waits);
  if (s == RIG_OK) [[likely]]
    self.assign(value);
  return s;
}

// in_turn's hand-over of a run of one copy on a device that runs work inline and holds nothing (memory
// devices, Run::inline_copy): the copy itself, then the driver's signaled word and the assignment
// (Device::ran_inline); no driver call, no Work to build. The turn and the loss check hold as for every
// hand-over; nothing waits in a queue (such a driver's can_wait_in_queue says no). memmove: a copy within one
// allocation never overlaps (the run refused it when its buffers were set), but memmove is what the driver's
// hand_over runs. Called holding the turn.
[[gnu::always_inline]] inline rig_status hand_over_inline_copy(const Run::InlineCopy &copy, Device &self,
                                                               uint64_t value) {
  std::memmove(copy.dst, copy.src, copy.length);
  self.ran_inline(value);
  return RIG_OK;
}

// Step 3 for one point `p` of another device: nothing where it is reached; else its device committed
// through it and *wait set (*queued true) where `self`'s driver can wait for it in its queue, else waited for
// on the host with no lock held. The one place a point to follow is waited for (submit_waiting's collect,
// submit_near). Blocks only in that host wait.
[[gnu::always_inline]] inline rig_status wait_for(Device &self, uint64_t p, QueueWait *wait, bool *queued) {
  *queued = false;
  Device &d = *device_at(point_device(p));
  uint64_t v = point_value(p);
  if (d.known_reached(v)) return RIG_OK;
  if (d.lost()) {
    if (d.reached(v)) return RIG_OK;  // reached before the loss (what the driver knew lagged)
    return d.lost_status();
  }
  if (self.can_wait_in_queue(d)) {
    if (rig_status s = d.commit_through(v); s != RIG_OK) return s;
    *wait = {&d.driver(), v};
    *queued = true;
    return RIG_OK;
  }
  return d.wait(v, Deadline::forever());
}

// Steps 3 to 4 for a run near_points answered: `foreign` (0: none) committed and waited for in the device's
// queue where its driver can, else on the host with no lock held; then the turn. The full path's steps
// without its collected set and spill vectors (bench/README.md, "Why: the submit path"), inline in the C
// entry's frame: a GPU chain's every submit comes here, and a frame of its own cost it about 20 instructions
// of saves and restores (bench/README.md, "One frame fewer on each side"). Blocks as submit_waiting does.
[[gnu::always_inline]] inline rig_status submit_near(Run &run, uint64_t foreign, rig_point *point) {
  Device &self = run.device();
  if (auto observe = observer(self)) [[unlikely]]
    report_collected(run, self.index(), observe);
  QueueWait wait;
  bool queued = false;
  if (foreign)
    if (rig_status s = wait_for(self, foreign, &wait, &queued); s != RIG_OK) return s;
  std::span<const QueueWait> waits(&wait, queued ? 1 : 0);
  return in_turn(
      self, point,
      [&](uint64_t value) {
        if (const Run::InlineCopy *copy = run.inline_copy()) return hand_over_inline_copy(*copy, self, value);
        return hand_over(run, self, value, waits);
      },
      [&](uint64_t here) { raise_stamps(run.stamping(), here); });
}

}  // namespace submit_detail

// Work outside rig enters the timeline through these two, which keep the turn's protocol of a submit.

// A hand-over without work (rig_stream_point, the imports of events and semaphores): takes `device`'s turn
// and next value, lets its queue wait for work outside rig (`wait(value)`), hands over no work
// (DriverWork::hand_over_empty) and assigns the value, held where the driver holds it unmarked; the point in
// *point. RIG_LOST for a released or lost device. A refused `wait` is returned as it is, nothing assigned,
// the device lost only where its driver lost it; a failed hand-over loses the device. `wait` is only called,
// never kept. Blocks while another thread holds the turn, and holds it through `wait` and the hand-over.
rig_status hand_over_empty(Device &device, CallableRef<rig_status(uint64_t)> wait, rig_point *point);

// Raises the stamps of `buffer`'s allocation with `point`, a value of `device` (not the host) for work outside
// rig that uses the buffer (rig_buffer_stamp): the device's use word, and for a write the last write too. A
// write's are raised holding the device's turn, as a submit of that device raises them (one device's writes
// arrive in order, core/stamps.h); a read's without it (Stamps::raise_use_unturned). May take the stamps'
// lock (a device's first use word) before the turn; blocks only for the two.
void raise_outside(const Buffer &buffer, Device &device, uint64_t point, bool write);

// Submits the run: step 1's checks, then, for a run of one inline copy (memory devices) of at most two slots
// (InlineCopy::near) with no explicit waits whose every point to follow is already reached (every such
// submit but after a loss), steps 2 and 3 as one pass over the slots' stamps and the turn, here; for any
// other run with no explicit waits whose points name at most one other device (near_points), that device's
// point waited for and the turn (submit_near); anything else takes the full path (submit_waiting). Only
// the full path builds a collected set and in-queue waits with their spill vectors. Statuses: rig.h's
// rig_submit. Blocks only for the device's turn, or, past the inline path, on the host for a point whose
// device cannot be waited for in this device's queue.
[[gnu::always_inline]] inline rig_status submit(Run &run, const rig_point *waits, size_t wait_count,
                                                rig_point *point) {
  Device &self = run.device();
  // Before the turn, which a forked child may find held for good (its devices are lost: Device::lose_inherited).
  if (!self.open()) [[unlikely]]
    return self.released() ? fail(RIG_LOST, "%s was released", self.info().name.c_str()) : self.lost_status();
  // 1. Check: every slot set, every range inside its buffer (prepared by Run::set_buffer). A run with an
  // inline copy is ready (Run::inline_copy), so that path asks nothing more; with no waits named, the
  // null waits check has nothing to refuse.
  const Run::InlineCopy *copy = run.inline_copy();
  if (copy && copy->near && !wait_count && submit_detail::nothing_to_wait_for(*copy, self)) [[likely]] {
    if (auto observe = submit_detail::observer(self)) [[unlikely]]
      submit_detail::report_collected(run, self.index(), observe);
    return submit_detail::in_turn(
        self, point, [&](uint64_t value) { return submit_detail::hand_over_inline_copy(*copy, self, value); },
        [&](uint64_t here) { submit_detail::raise_stamps(*copy, here); });
  }
  if (rig_status s = run.check_ready(); s != RIG_OK) return s;
  // A run with no slots and no waits named (an empty submit: a point after the device's work so far) has
  // nothing to collect and nothing to wait for: straight to the turn, without the full path's collected
  // set and in-queue waits (a third of an empty submit's instructions: bench/README.md, "Why: the submit
  // path"). A device that runs work inline has nothing to run for it either: its value is reached once
  // assigned (Device::ran_inline).
  if (!wait_count && run.stamping().empty()) {
    if (auto observe = submit_detail::observer(self)) [[unlikely]]
      submit_detail::report_collected(run, self.index(), observe);
    return submit_detail::in_turn(
        self, point,
        [&](uint64_t value) {
          if (!self.runs_inline() || !run.work().parts.empty()) return submit_detail::hand_over(run, self, value, {});
          self.ran_inline(value);
          return RIG_OK;
        },
        [](uint64_t) {});
  }
  // No waits named and at most one other device to follow (a GPU chain's edge, or none): the collect and the
  // waits without the full path's collected set.
  uint64_t foreign;
  if (!wait_count && submit_detail::near_points(run.stamping(), self, &foreign)) [[likely]]
    return submit_detail::submit_near(run, foreign, point);
  if (wait_count && !waits) return fail(RIG_INVALID_ARGUMENT, "submit: null waits for %zu points", wait_count);
  return submit_waiting(run, waits, wait_count, point);
}

}  // namespace rig
