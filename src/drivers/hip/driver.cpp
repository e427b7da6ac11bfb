// The HIP driver's entry in rig's registry: prefix "hip", devices "hip:N", each a stream device over HIP's
// table (hip/api.cpp, hip/gpu.cpp).
#include "drivers/hip/api.h"
#include "drivers/stream/driver.h"

namespace rig {

// Declared weak by src/core/drivers.cpp, so the engine builds without this directory.
Driver *hip_driver() { return stream::driver_of<hip::Api, hip::api>("hip"); }

}  // namespace rig
