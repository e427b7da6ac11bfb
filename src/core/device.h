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

namespace rig {

class Device final : public LossSink {
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
  uint64_t signaled() const { return driver_->signaled(); }
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  // The loss reason, or null while not lost.
  const char *lost_reason() const { return lost() ? lost_reason_.c_str() : nullptr; }
  bool released() const { return released_.load(std::memory_order_acquire); }

  // True once value is reached, or will never need waiting for (a released device's values).
  bool reached(uint64_t value) const { return released() || driver_->reached(value); }
  // reached(), from what the driver knows without asking the device (the submit path's question).
  bool known_reached(uint64_t value) const { return released() || driver_->known_reached(value); }

  // Commits held work through `value` (a wait's first step). LOST if the commit fails. Inline for the
  // common answer (already committed: every value of a driver that commits at hand-over).
  rig_status commit_through(uint64_t value) {
    if (committed_.load(std::memory_order_acquire) >= value) return RIG_OK;
    return commit_held(value);
  }
  // Commits, then waits on the host for `value`, holding no lock. OK, TIMEOUT, INTERRUPTED, LOST.
  rig_status wait(uint64_t value, Deadline deadline);

  // The turn: one caller at a time hands over and commits. Submit takes it in core/submit.cpp.
  std::mutex &turn() { return turn_; }
  // Called holding the turn, after the driver took value `value`.
  void assign(uint64_t value) {
    // release: a thread that reads a stamp naming `value` (acquire) sees submitted >= value.
    submitted_.store(value, std::memory_order_release);
    if (commits_at_hand_over_) committed_.store(value, std::memory_order_release);
  }

  // LossSink: a driver fault, a failed hand-over or commit. Once and for good.
  void lose(const char *why) noexcept override;

  // The C handle word of the device (set once when its handle is made).
  void set_handle(uint64_t word) { handle_.store(word, std::memory_order_release); }
  uint64_t handle() const { return handle_.load(std::memory_order_acquire); }

  // Waits for all submitted work, then marks the device released (its points count as reached).
  rig_status release();

 private:
  rig_status commit_held(uint64_t value);

  const uint32_t index_;
  const rig_device_kind kind_;
  std::unique_ptr<DriverDevice> driver_;
  const bool commits_at_hand_over_;  // the driver's fact, read once: assign() runs on every submit
  std::mutex turn_;
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> committed_{0};
  std::atomic<bool> lost_{false};
  std::atomic<bool> released_{false};
  std::atomic<uint64_t> handle_{0};
  std::once_flag lost_once_;
  std::string lost_reason_;
};

}  // namespace rig
