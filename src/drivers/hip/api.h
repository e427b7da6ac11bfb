// Loads the HIP runtime at run time (dlopen "libamdhip64.so", or the file RIG_HIP_LIBRARY names: how the
// tests load their fake and the shim over CUDA) and holds its entry points for the life of the process: the
// stream device's table (drivers/stream/calls.h), into which the calls whose signature is HIP's are loaded
// as they are, and by their hip.h names the rest (HIP's own, and those behind the table's adapters).
#pragma once

#include <rig.h>

#include "drivers/hip/hip.h"
#include "drivers/stream/calls.h"

namespace rig::hip {

struct Api {
  // The entry points rig calls by HIP's names (the macro's parameter lists name hip.h's types, in scope here).
#define RIG_HIP_MEMBER(field, symbol, ret, params) ret(*field) params = nullptr;
  RIG_HIP_ENTRY_POINTS(RIG_HIP_MEMBER)
  RIG_HIP_OPTIONAL_ENTRY_POINTS(RIG_HIP_MEMBER)
#undef RIG_HIP_MEMBER
  int driver_version = 0;
  stream::Family family;  // HIP as a stream family: the entry points above (some through adapters)
};

// The loaded runtime, initialised (hipInit done); null when it cannot be loaded, with the reason set by
// rig::fail (RIG_NOT_FOUND). Loads once per process; never unloaded.
const Api *api();

// The runtime's name for an error ("hipErrorIllegalAddress"), or "hipError <n>" if it has none.
const char *error_name(Error error);

// True for the errors after which the device's queued work is gone (a fault in a kernel, a lost or reset
// device, an HSA runtime failure): rig loses the device.
bool is_sticky(Error error);

// HIP has no context objects: a device is current. The stream device's Context for HIP device `id` is
// id + 1 (so that no device is the null context, which means "none current").
inline stream::Context context_of(DeviceId id) {
  return reinterpret_cast<stream::Context>(static_cast<uintptr_t>(id) + 1);
}
inline DeviceId device_of(stream::Context context) {
  return static_cast<DeviceId>(reinterpret_cast<uintptr_t>(context) - 1);
}

}  // namespace rig::hip
