// Device handles: the C layer mints them (core knows devices by index only) and keeps, per device index,
// the handle word that rig_buffer_device gives back. Core opens the devices (core/registry.h).
#pragma once

#include <rig.h>

#include <memory>

#include "core/device.h"
#include "core/driver.h"

namespace rig::capi {

// The handle of a device core just registered, minted once and written to *out. RIG_OUT_OF_MEMORY if no
// handle is left. Never blocks.
rig_status give_device(Device &device, rig_device *out);

// Registers an engine device over an opened driver device and writes its new handle to *out: the tests'
// drivers, which core's driver list does not hold. RIG_OUT_OF_MEMORY if no index or handle is left.
rig_status open_device(std::unique_ptr<DriverDevice> driver, rig_device *out);

// The host's handle word (always live): core's host device (core/registry.h, host_device).
uint64_t host_word();

// The handle of a device (the borrowed handle of rig_buffer_device); RIG_LOST for a released device.
rig_status device_handle(Device &d, rig_device *out);

}  // namespace rig::capi
