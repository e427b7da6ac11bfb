#include "core/device.h"

#include <cstring>

#include "core/error.h"

namespace rig {

// Loss for good. A loss is one moment: before it, a value counts as reached when the driver says so; from
// it on, exactly the values the driver had reached at that moment (reached_at_loss), whatever the driver
// says later (work still running on a memory device, a CUDA event completing after the fault). So a wait
// that answered RIG_LOST never answers OK later, and one that answered OK never answers RIG_LOST.
// The moment is where kLost is set. reached() reads the driver, then the state; the loss sets the state,
// then (through reached_at_loss) reads the driver. Both seq_cst, so a value some caller saw reached with the
// state still clear is at most what the loss reads: reached_at_loss never takes back an answer. It is read
// by the first caller that needs it, not by lose(): a driver reports a fault from inside its own code,
// where asking it for signaled() could wait on a lock it holds.

namespace {
// Whether the engine runs a device's lone host copies itself (Device::runs_inline): its driver gives the
// word it signals and commits at hand-over.
bool runs_inline_of(const DriverInfo &info) { return info.inline_signal && info.commits_at_hand_over; }
}  // namespace

Device::Device(uint32_t index, std::unique_ptr<DriverDevice> driver, rig_device_kind kind)
    : index_(index),
      signal_(runs_inline_of(driver->info()) ? driver->info().inline_signal
                                              : const_cast<std::atomic<uint64_t> *>(driver->info().known_signal)),
      driver_(std::move(driver)), commits_at_hand_over_(driver_->info().commits_at_hand_over),
      runs_inline_(runs_inline_of(driver_->info())), kind_(kind) {
  driver_->set_loss_sink(this);
}

rig_status Device::lost_status() const {
  const char *why = reason_.load(std::memory_order_acquire);
  return fail(RIG_LOST, "%s lost: %s", info().name.c_str(), why ? why : "driver fault");
}

uint64_t Device::reached_at_loss() const {
  uint64_t at = reached_at_loss_.load(std::memory_order_acquire);
  if (at != kUnset) return at;
  uint64_t now = driver_->signaled();
  // The first reader fixes it; a later one takes the fixed value (a driver's signaled() never decreases).
  if (reached_at_loss_.compare_exchange_strong(at, now, std::memory_order_acq_rel, std::memory_order_acquire))
    return now;
  return at;
}

bool Device::settled(uint32_t state, uint64_t value) const {
  if (state & kLost) return value <= reached_at_loss();
  return true;  // released (not lost): release waited for every value
}

rig_status Device::commit_held(uint64_t value) {
  if (lost()) return lost_status();  // before the turn: a forked child may find it held for good
  std::lock_guard g(turn_);
  if (committed_.load(std::memory_order_relaxed) >= value) return RIG_OK;
  if (lost()) return lost_status();
  uint64_t through = submitted();
  rig_status s = driver_->commit();
  if (s != RIG_OK) {
    lose_now(last_error());
    return lost_status();
  }
  committed_.store(through, std::memory_order_release);
  return RIG_OK;
}

rig_status Device::wait(uint64_t value, Deadline deadline) {
  if (reached(value)) return RIG_OK;
  if (lost()) return lost_status();
  if (rig_status s = commit_through(value); s != RIG_OK) return s;
  rig_status s = driver_->wait(value, deadline);
  if (s == RIG_LOST && !lost()) lose_now(last_error());
  // Lost before or during the wait: the driver's answer, OK included, may come from after the loss.
  if (lost()) return reached(value) ? RIG_OK : lost_status();
  return s;
}

bool Device::begin_loss(const char *why) noexcept {
  // kLosing makes the loss once (no call_once: a forked child could find its flag held by a parent thread).
  if (state_.fetch_or(kLosing, std::memory_order_acq_rel) & kLosing) return false;
  const char *text = why && *why ? why : "driver fault";
  // Kept for the process: lost_reason() hands the pointer out. strdup, not std::string: noexcept, and a
  // failed copy still leaves a reason.
  char *copy = strdup(text);
  reason_.store(copy ? copy : "driver fault (its reason could not be copied)", std::memory_order_release);
  // seq_cst: the loss's moment, ordered against reached()'s reads (see the top of this file).
  state_.fetch_or(kLost, std::memory_order_seq_cst);
  // The driver keeps no flag of its own: it asks this state (DriverDevice::lost), so nothing is mirrored.
  return true;
}

void Device::lose(const char *why) noexcept { begin_loss(why); }

void Device::lose_now(const char *why) noexcept {
  if (begin_loss(why)) (void)reached_at_loss();
}

void Device::lose_inherited() noexcept {
  // Runs in the child of fork() with one thread: nothing else reads or writes, no lock may be taken and the
  // driver (its context belongs to the parent) must not be asked. Every value, reached or not, is left to
  // the parent: the child waits for none of them.
  reason_.store("inherited across fork", std::memory_order_relaxed);
  reached_at_loss_.store(0, std::memory_order_relaxed);
  state_.fetch_or(kLosing | kLost, std::memory_order_seq_cst);
}

rig_status Device::release() {
  uint64_t last = submitted();
  rig_status s = RIG_OK;
  if (last && !lost()) s = wait(last, Deadline::forever());
  // Even after a failed wait the handle goes: a lost device's memory is kept by its allocations.
  state_.fetch_or(kReleased, std::memory_order_seq_cst);
  driver_->released();
  return s == RIG_LOST ? RIG_OK : s;
}

}  // namespace rig
