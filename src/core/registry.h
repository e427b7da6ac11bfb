// The one registry of process-wide state: devices by index, the names' locks, memory kept for lost devices.
// It knows devices, never their C handles: src/capi mints those (capi/devices.h).
#pragma once

#include <rig.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/driver.h"

namespace rig {

class Device;

// Makes an engine device over an opened driver device, under a new index (never reused), and writes it to
// *out. Devices are never freed before process exit. RIG_OUT_OF_MEMORY once all 65535 indices are used.
rig_status register_device(std::unique_ptr<DriverDevice> driver, Device **out);

// The device with this index (null if none was opened). Devices are never freed before process exit, so
// the pointer stays valid; a released device answers its points as reached (unless it was lost).
[[gnu::hot]] Device *device_at(uint32_t index);

// The lock held while a device of this name opens (rig_memory_device, rig_device_open).
std::mutex &device_name_lock(const std::string &name);

// Keeps memory that a lost device may still use for the life of the process (reachable, never freed).
void keep_forever(const Memory &memory);

}  // namespace rig
