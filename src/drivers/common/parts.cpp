#include "drivers/common/parts.h"

#include "core/error.h"

namespace rig::common {

rig_status check_gpu_part(const Part &part, const DriverInfo &info, bool *launch) {
  *launch = false;
  switch (part.kind) {
    case RIG_PART_COPY:
    case RIG_PART_FILL:
      return RIG_OK;
    case RIG_PART_HOST_KERNEL:
      return fail(RIG_UNSUPPORTED, "%s runs no host kernels (%s devices run launches of device code)",
                  info.name.c_str(), info.framework.c_str());
    case RIG_PART_LAUNCH:
      *launch = true;
      return RIG_OK;
    default:
      return fail(RIG_INVALID_ARGUMENT, "unknown part kind %d", static_cast<int>(part.kind));
  }
}

}  // namespace rig::common
