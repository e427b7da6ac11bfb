// rig.h's diagnostics: where rig's messages go (core/log.h holds the sink and says them).
#include <cstdint>
#include <cstring>

#include "capi/api.h"
#include "core/log.h"

using namespace rig;
using namespace rig::capi;

extern "C" {

rig_status rig_set_log(rig_log_fn fn, void *user, rig_log_level min_level) {
  return entry("set_log", [&] {
    // The caller's bits, read as an integer: a value outside the enum's range may not be loaded as the enum.
    int32_t level;
    std::memcpy(&level, &min_level, sizeof level);
    if (level < RIG_LOG_DEBUG || level > RIG_LOG_ERROR)
      return fail(RIG_INVALID_ARGUMENT, "set_log: level %d is not a rig_log_level (RIG_LOG_DEBUG..RIG_LOG_ERROR)",
                  int(level));
    set_log_sink({fn, user, min_level});
    return RIG_OK;
  });
}

}  // extern "C"
