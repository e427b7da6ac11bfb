// The one registry of process-wide state: devices by index and by name (opened through the drivers of
// core/drivers.cpp), the names' locks, memory kept for lost devices. It knows devices, never their C
// handles: src/capi mints those (capi/devices.h).
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/driver.h"

namespace rig {

class Device;

// Opens the device called `name`, "DRIVER:NAME" ("cuda:0", "vulkan:1", "memory:A"), through the registered
// driver of that prefix (Driver::open_named), and registers it (register_device). RIG_INVALID_ARGUMENT for a
// name not DRIVER:NAME, RIG_NOT_FOUND for a driver not in this build, else the driver's statuses. Holds the
// name's lock while the driver opens the device, which may block (loading its library, making a context).
rig_status open_device(const std::string &name, Device **out);

// The names open_device accepts, as every registered driver lists them, in the order of drivers():
// strings kept for the process (never freed, the same pointer for a name each time). Loads each driver once;
// a driver that fails to load lists nothing. Holds the names' lock while the drivers list, which may block.
std::vector<const char *> device_names();

// The host as a device (index 0, never stamped, in no point), made by the memory driver on first use and
// kept for the process. Never blocks after its first call.
Device &host_device();

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

// Keeps memory that a lost device may still use for the life of the process (reachable, never freed).
void keep_forever(const Memory &memory);
// Keeps `object` alive for the life of the process (an allocation's part that a lost device may still use
// keeps its whole).
void keep_forever(std::shared_ptr<void> object);

}  // namespace rig
