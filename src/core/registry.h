// The one registry of process-wide state: devices by index, the names' locks, memory kept for lost devices.
// It knows devices, never their C handles: src/capi mints those (capi/devices.h).
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/driver.h"

namespace rig {

class Device;

// Makes an engine device over an opened driver device, under a new index (never reused), and writes it to
// *out. Devices are never freed before process exit. RIG_OUT_OF_MEMORY once all 65535 indices are used.
rig_status register_device(std::unique_ptr<DriverDevice> driver, Device **out);

// Devices by index, 0 and unopened indices null. A global of constant initialization, not a member of the
// registry behind a function-local static, so that device_at below is inline with no guard and no call: the
// submit path asks it for every collected point (issue 14). Written once per index, by register_device.
extern std::atomic<Device *> device_table[65536];

// The device with this index (null if none was opened). Devices are never freed before process exit, so
// the pointer stays valid; a released device answers its points as reached (unless it was lost). Never blocks.
[[gnu::always_inline]] inline Device *device_at(uint32_t index) {
  if (index > 65535) [[unlikely]] return nullptr;
  // acquire: pairs with the release store in register_device, so the Device is fully built when seen.
  return device_table[index].load(std::memory_order_acquire);
}

// The lock held while a device of this name opens (rig_memory_device, rig_device_open).
std::mutex &device_name_lock(const std::string &name);

// Keeps memory that a lost device may still use for the life of the process (reachable, never freed).
void keep_forever(const Memory &memory);
// Keeps `object` alive for the life of the process (an allocation's part that a lost device may still use
// keeps its whole).
void keep_forever(std::shared_ptr<void> object);

}  // namespace rig
