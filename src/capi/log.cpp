// rig.h's diagnostics: where rig's messages go (core/log.h holds the sink and says them).
#include "capi/api.h"
#include "core/log.h"

using namespace rig;
using namespace rig::capi;

extern "C" {

rig_status rig_set_log(rig_log_fn fn, void *user, rig_log_level min_level) {
  return entry("set_log", [&] {
    if (min_level < RIG_LOG_DEBUG || min_level > RIG_LOG_ERROR)
      return fail(RIG_INVALID_ARGUMENT, "set_log: level %d is not a rig_log_level (RIG_LOG_DEBUG..RIG_LOG_ERROR)",
                  int(min_level));
    set_log_sink({fn, user, min_level});
    return RIG_OK;
  });
}

}  // extern "C"
