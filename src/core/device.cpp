#include "core/device.h"

#include <thread>

#include "core/error.h"

namespace rig {

Device::Device(uint32_t index, std::unique_ptr<DriverDevice> driver, rig_device_kind kind)
    : index_(index), kind_(kind), driver_(std::move(driver)),
      commits_at_hand_over_(driver_->info().commits_at_hand_over) {
  driver_->set_loss_sink(this);
}

rig_status Device::commit_held(uint64_t value) {
  std::lock_guard g(turn_);
  if (committed_.load(std::memory_order_relaxed) >= value) return RIG_OK;
  if (lost()) return fail(RIG_LOST, "%s lost: %s", info().name.c_str(), lost_reason_.c_str());
  uint64_t through = submitted();
  rig_status s = driver_->commit();
  if (s != RIG_OK) {
    lose(last_error());
    return fail(RIG_LOST, "%s lost: %s", info().name.c_str(), lost_reason_.c_str());
  }
  committed_.store(through, std::memory_order_release);
  return RIG_OK;
}

rig_status Device::wait(uint64_t value, Deadline deadline) {
  if (reached(value)) return RIG_OK;
  if (lost()) return fail(RIG_LOST, "%s lost: %s", info().name.c_str(), lost_reason_.c_str());
  if (rig_status s = commit_through(value); s != RIG_OK) return s;
  rig_status s = driver_->wait(value, deadline);
  if (s == RIG_LOST || (s != RIG_OK && lost())) {
    if (!lost()) lose(last_error());
    if (driver_->reached(value)) return RIG_OK;  // the wanted value was reached before the fault
    return fail(RIG_LOST, "%s lost: %s", info().name.c_str(), lost_reason_.c_str());
  }
  return s;
}

void Device::lose(const char *why) noexcept {
  std::call_once(lost_once_, [&] {
    try {
      lost_reason_ = why && *why ? why : "driver fault";
    } catch (...) {
    }
    driver_->mark_lost();
    lost_.store(true, std::memory_order_release);
  });
}

rig_status Device::release() {
  uint64_t last = submitted();
  rig_status s = RIG_OK;
  if (last && !lost()) s = wait(last, Deadline::forever());
  // Even after a failed wait the handle goes: a lost device's memory is kept by its allocations.
  released_.store(true, std::memory_order_release);
  return s == RIG_LOST ? RIG_OK : s;
}

}  // namespace rig
