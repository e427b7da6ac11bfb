// Memory devices and the host: host memory, work run inline at hand-over (so the value is reached before
// rig_submit returns). The host uses the same driver but runs no work.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/driver.h"

namespace rig {

class MemoryDevice final : public DriverDevice {
 public:
  MemoryDevice(std::string name, rig_device_kind kind);
  // DriverDevice: memory and code (core/driver.h).
  RIG_DRIVER_DEVICE_OVERRIDES
  // DriverWork: parts and the timeline (core/driver_work.h).
  rig_status check_part(const Part &part) override;
  bool can_wait_in_queue(const DriverDevice &) const override { return false; }
  // Runs the work inline. A run of one copy does not come here: the engine runs it itself and raises
  // signaled_ (DriverInfo::inline_signal), the same steps without the call.
  rig_status hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) override;
  rig_status commit() override { return RIG_OK; }
  uint64_t signaled() const override { return signaled_.load(std::memory_order_acquire); }
  rig_status wait(uint64_t value, Deadline deadline) override;

  // The tests' fault: the device is lost with its last value unreached (the fault hit that work).
  void fault(const char *why);

 private:
  std::atomic<uint64_t> signaled_{0};
};

// Runs a part over host-addressed bindings: shared by every driver whose memory the host addresses.
void run_host_part(const Part &part, std::span<const Binding> slots);

}  // namespace rig
