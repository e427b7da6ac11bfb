// What every GPU driver (CUDA, HIP, Vulkan) checks first of a part in check_part (core/driver.h): the kinds
// a GPU runs. The launch itself (module, function, limits) is each driver's to check.
#pragma once

#include <rig.h>

#include "core/driver.h"

namespace rig::common {

// Copies and fills: RIG_OK (the engine checked their ranges). Host kernels: RIG_UNSUPPORTED naming the
// device `info` (a GPU runs launches of device code). Unknown kinds: RIG_INVALID_ARGUMENT. A launch:
// RIG_OK with *launch set, for the driver to check further. Never blocks.
rig_status check_gpu_part(const Part &part, const DriverInfo &info, bool *launch);

}  // namespace rig::common
