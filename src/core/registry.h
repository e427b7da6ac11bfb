// The one registry of process-wide state: devices by index, and the drivers' entry to the engine.
#pragma once

#include <rig.h>

#include <memory>

#include "core/driver.h"

namespace rig {

class Device;

// Makes an engine device over an opened driver device and returns its handle. Used by rig_device_open
// (through Driver::open) and by the tests' test driver. The device index is new (never reused).
rig_status open_device(std::unique_ptr<DriverDevice> driver, rig_device *out);

// The device with this index (null if none was opened). Devices are never freed before process exit, so
// the pointer stays valid; a released device answers its points as reached.
[[gnu::hot]] Device *device_at(uint32_t index);

// Keeps memory that a lost device may still use for the life of the process (reachable, never freed).
void keep_forever(const Memory &memory);

}  // namespace rig
