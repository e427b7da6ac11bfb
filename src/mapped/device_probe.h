// The self-test on an open device (rig_probe's work, on core's objects): the static verdict where it
// decides, else probe_with over ops backed by the device's own driver (DeviceOps). What rig_probe and the
// loader's path policy (load/path.cpp) both call.
#pragma once

#include <rig_mapped.h>

#include <cstddef>

#include "mapped/probe.h"
#include "mapped/verdict.h"

namespace rig {
class Device;
}

namespace rig::mapped {

// The verdict of `device` on `map` (page-aligned, `length` bytes; `reference`: the same bytes read
// independently): decided statically where the table can, else by the self-test. OK with *out set, or
// the status (and message) of what failed. Waits for the driver's registrations and copies, holding no
// rig lock. Never throws.
rig_status probe_device(Device &device, const void *map, const void *reference, size_t length,
                        const ProbeOptions &options, Verdict *out) noexcept;

}  // namespace rig::mapped
