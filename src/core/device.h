// A device as the engine sees it: a timeline (submitted, committed), a turn, and loss. The driver does the
// work; the device keeps the order. Devices are never freed before the process exits (the registry owns
// them), so a point's device index always resolves.
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/deadline.h"
#include "core/driver.h"
#include "core/point.h"
#include "core/turn.h"

namespace rig {

// Aligned to a cache line, with what a submit reads of a device in its first line (index, state, the
// drivers' words, the timeline's values, the remembered queue peer, the turn): a submit of a chain reads its
// own device and the device before it in the chain, and each line is one a driver call pushed out
// (bench/README.md, "What rig's own time is made of").
class alignas(64) Device final : public LossSink {
 public:
  Device(uint32_t index, std::unique_ptr<DriverDevice> driver, rig_device_kind kind);
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  uint32_t index() const { return index_; }
  rig_device_kind kind() const { return kind_; }
  bool is_host() const { return kind_ == RIG_DEVICE_HOST; }
  DriverDevice &driver() const { return *driver_; }
  const DriverInfo &info() const { return driver_->info(); }
  uint64_t point(uint64_t value) const { return make_point(index_, value); }

  uint64_t submitted() const { return submitted_.load(std::memory_order_acquire); }
  // The last value reached; once lost, the last value reached at the loss, for good (see device.cpp).
  uint64_t signaled() const {
    uint64_t s = driver_->signaled();
    return state() & kLost ? reached_at_loss() : s;
  }
  // LossSink's answers, which drivers read too (this class is final: the engine's calls are direct and inline).
  bool lost() const noexcept override { return state_.load(std::memory_order_acquire) & kLost; }
  // The loss reason, or null while not lost.
  const char *lost_reason() const noexcept override {
    return lost() ? reason_.load(std::memory_order_acquire) : nullptr;
  }
  bool released() const { return state_.load(std::memory_order_acquire) & kReleased; }
  // Neither released nor lost: released() and lost() in one acquire load of the state word (the submit
  // path's first check) where asking both took two. Nothing is lost by it: the two loads never excluded a
  // change between them either, and a loss after this check is found under the turn (submit's lost()).
  bool open() const { return !(state_.load(std::memory_order_acquire) & (kReleased | kLost)); }

  // True once value is reached, or will never need waiting for (a released device's values). After a loss,
  // true only for values reached at the loss, whatever the driver says later.
  bool reached(uint64_t value) const {
    bool r = driver_->reached(value);  // the driver first, then the state: see "Loss for good" in device.cpp
    if (uint32_t s = state(); s != 0) [[unlikely]]
      return settled(s, value);
    return r;
  }
  // reached(), from what the driver knows without asking the device (the submit path's question): the
  // driver's word first where it has one (signal_): a value at or below it is reached. A device that runs
  // work inline knows no more than its word; elsewhere the newest submitted value is not asked about further
  // (a chain names it on every submit and it is rarely done yet: the stream driver does not ask about its
  // newest mark either), and an older one is asked of the driver, which may ask its device once. The driver
  // first, then the state, as reached().
  bool known_reached(uint64_t value) const {
    if (signal_) [[likely]] {
      bool r = signal_->load(std::memory_order_acquire) >= value;
      if (uint32_t s = state(); s != 0) [[unlikely]]
        return settled(s, value);
      if (r || runs_inline_ || value >= submitted()) return r;
    }
    bool r = driver_->known_reached(value);
    if (uint32_t s = state(); s != 0) [[unlikely]]
      return settled(s, value);
    return r;
  }
  // known_reached() of a device that runs work inline (runs_inline()), neither released nor lost; false for
  // one that is either, where the caller asks the full question instead (known_reached). What a submit's pass
  // asks (core/submit.h): it calls nothing (settled() is a call), so the pass keeps its values in registers.
  // The same two loads in the same order: the driver's word, then the state.
  bool inline_reached_open(uint64_t value) const {
    return signal_->load(std::memory_order_acquire) >= value && state() == 0;
  }

  // Commits held work through `value` (a wait's first step). LOST if the commit fails or the device is
  // lost (without taking the turn, which a forked child may find held forever). Inline for the
  // common answer (already committed: every value of a driver that commits at hand-over).
  rig_status commit_through(uint64_t value) {
    if (committed_.load(std::memory_order_acquire) >= value) return RIG_OK;
    return commit_held(value);
  }
  // Commits, then waits on the host for `value`, holding no lock. OK, TIMEOUT, INTERRUPTED, LOST.
  rig_status wait(uint64_t value, Deadline deadline);

  // Whether this device's queue can wait on `producer`'s values (DriverWork::can_wait_in_queue), with the
  // last producer the driver said yes to remembered: its answer for a producer not lost never changes, so a
  // chain's submits ask one word of this device's first line, not both drivers. The caller asks the
  // producer's loss first. Any thread; relaxed: a stale word only means asking the driver again.
  bool can_wait_in_queue(const Device &producer) {
    if (queue_peer_.load(std::memory_order_relaxed) == &producer) [[likely]]
      return true;
    if (!driver_->can_wait_in_queue(*producer.driver_)) return false;
    queue_peer_.store(&producer, std::memory_order_relaxed);
    return true;
  }

  // Whether the tests' collect observer (core/testing.h) is set, kept in this line a submit reads anyway
  // rather than read from its own: testing::set_collect_observer sets it on every device, and a device opened
  // later takes it from the observer (register_device). Relaxed: the observer itself is then loaded.
  bool observed() const { return observed_.load(std::memory_order_relaxed); }
  void set_observed(bool observed) { observed_.store(observed, std::memory_order_relaxed); }

  // The turn: one caller at a time hands over and commits. Submit takes it in core/submit.cpp.
  Turn &turn() { return turn_; }
  // Whether the engine runs this device's lone host copies itself: its driver gave the word it signals
  // (DriverInfo::inline_signal) and commits at hand-over.
  bool runs_inline() const { return runs_inline_; }
  // Called holding the turn, after the engine ran value `value`'s one host copy itself (runs_inline()): the
  // driver's signaled word takes the value, with release so that a host that reads it sees the copy's bytes;
  // then assign(), without its test: a device that runs work inline commits at hand-over (the constructor
  // takes the driver's inline_signal only then).
  void ran_inline(uint64_t value) {
    signal_->store(value, std::memory_order_release);
    submitted_.store(value, std::memory_order_release);
    committed_.store(value, std::memory_order_release);
  }
  // Called holding the turn, after the driver took value `value`.
  void assign(uint64_t value) {
    // release: a thread that reads a stamp naming `value` (acquire) sees submitted >= value.
    submitted_.store(value, std::memory_order_release);
    if (commits_at_hand_over_) committed_.store(value, std::memory_order_release);
  }
  // Called holding the turn, after the driver took value `value` and held it (DriverWork::hand_over_empty):
  // submitted, not committed, so that a wait for it commits first (commit_through) and the driver marks it.
  // A later assign() commits it with its own value.
  void assign_held(uint64_t value) { submitted_.store(value, std::memory_order_release); }

  // LossSink: a driver fault, reported from inside the driver (which may hold its own locks: the value
  // reached at the loss is read from the driver later, by the first caller that needs it). Once and for good.
  void lose(const char *why) noexcept override;
  // A loss the engine itself decides (a failed hand-over or commit, the testing hook), on a thread that holds
  // no driver lock: the value reached at the loss is read from the driver now.
  void lose_now(const char *why) noexcept;
  // The fork child's loss (the registry's atfork handler, core/registry.cpp): every value unreached, no
  // driver called, no lock taken.
  void lose_inherited() noexcept;
  // RIG_LOST with the device's name and reason.
  [[gnu::cold]] rig_status lost_status() const;

  // Waits for all submitted work, then marks the device released (its points count as reached).
  rig_status release();

 private:
  rig_status commit_held(uint64_t value);
  static constexpr uint32_t kReleased = 1, kLost = 2, kLosing = 4;
  static constexpr uint64_t kUnset = ~uint64_t{0};
  // seq_cst: the reads of reached() (driver, then state) and the loss (state, then driver) must not pass
  // each other; a plain load on x86 and an ldar on ARM, as the acquire load it replaces.
  uint32_t state() const { return state_.load(std::memory_order_seq_cst) & (kReleased | kLost); }
  [[gnu::cold]] bool settled(uint32_t state, uint64_t value) const;
  [[gnu::cold]] uint64_t reached_at_loss() const;
  bool begin_loss(const char *why) noexcept;

  // The first line: what a submit reads (see the class's comment), 8 bytes of vtable pointer first.
  const uint32_t index_;
  std::atomic<uint32_t> state_{0};  // kReleased, kLost, kLosing
  // The driver's word known_reached reads, read once from its facts: DriverInfo::inline_signal where the
  // device runs work inline (runs_inline_: the engine raises it too, ran_inline; only where the driver also
  // commits at hand-over: a driver that runs work inline holds nothing), else DriverInfo::known_signal
  // (never written here: the const is the driver's), or null where the driver has neither.
  std::atomic<uint64_t> *const signal_;
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> committed_{0};
  std::atomic<const Device *> queue_peer_{nullptr};  // can_wait_in_queue's remembered yes
  std::unique_ptr<DriverDevice> driver_;  // here: a queued wait names the producer's driver
  Turn turn_;
  const bool commits_at_hand_over_;  // the driver's fact, read once: assign() runs on every submit
  const bool runs_inline_;
  std::atomic<bool> observed_{false};  // observed(): the tests' collect observer is set
  // The rest.
  const rig_device_kind kind_;
  mutable std::atomic<uint64_t> reached_at_loss_{kUnset};  // set once after the loss (see reached_at_loss)
  std::atomic<const char *> reason_{nullptr};      // a copy kept for the process, or a static string
};

}  // namespace rig
