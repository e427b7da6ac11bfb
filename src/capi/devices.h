// Device handles: the C layer mints them (core knows devices by index only) and keeps, per device index,
// the handle word that rig_buffer_device gives back.
#pragma once

#include <rig.h>

#include <memory>

#include "core/device.h"
#include "core/driver.h"

namespace rig::capi {

// Registers an engine device over an opened driver device and writes its new handle to *out. Used by
// rig_memory_device, rig_device_open and the tests' drivers. RIG_OUT_OF_MEMORY if no index or handle is left.
rig_status open_device(std::unique_ptr<DriverDevice> driver, rig_device *out);

// The host device (index 0, never stamped) and its handle word (always live).
Device &host_device();
uint64_t host_word();

// The handle of a device (the borrowed handle of rig_buffer_device); RIG_LOST for a released device.
rig_status device_handle(Device &d, rig_device *out);

}  // namespace rig::capi
