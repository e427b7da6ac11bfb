// Loads the HIP runtime at run time (dlopen "libamdhip64.so", or the file RIG_HIP_LIBRARY names: how the
// tests load their fake and the shim over CUDA) and holds its entry points for the life of the process.
#pragma once

#include <rig.h>

#include "drivers/hip/hip.h"

namespace rig::hip {

struct Api {
  // The macro's parameter lists name these types unqualified.
  using Error = hip::Error;
  using DeviceId = hip::DeviceId;
  using DevicePtr = hip::DevicePtr;
  using Stream = hip::Stream;
  using Event = hip::Event;
  using Module = hip::Module;
  using Function = hip::Function;

#define RIG_HIP_MEMBER(field, symbol, ret, params) ret(*field) params = nullptr;
  RIG_HIP_ENTRY_POINTS(RIG_HIP_MEMBER)
  RIG_HIP_OPTIONAL_ENTRY_POINTS(RIG_HIP_MEMBER)
#undef RIG_HIP_MEMBER
  int driver_version = 0;
};

// The loaded runtime, initialised (hipInit done); null when it cannot be loaded, with the reason set by
// rig::fail (RIG_NOT_FOUND). Loads once per process; never unloaded.
const Api *api();

// The runtime's name for an error ("hipErrorIllegalAddress"), or "hipError <n>" if it has none.
const char *error_name(Error error);

// True for the errors after which the device's queued work is gone (a fault in a kernel, a lost or reset
// device, an HSA runtime failure): rig loses the device.
bool is_sticky(Error error);

// The rig status for a failed call: OUT_OF_MEMORY, LOST (sticky) or DRIVER.
rig_status status_of(Error error);

// Makes `device` the calling thread's current HIP device for a scope and restores the caller's afterwards,
// so rig never changes what a program's own HIP code sees as current (HIP's runtime calls act on it).
class CurrentDevice {
 public:
  CurrentDevice(const Api &api, DeviceId device) : api_(api) {
    if (api_.hipGetDevice(&previous_) != SUCCESS) previous_ = -1;
    if (previous_ != device) set_ = api_.hipSetDevice(device) == SUCCESS;
  }
  ~CurrentDevice() {
    if (set_ && previous_ >= 0) api_.hipSetDevice(previous_);
  }
  CurrentDevice(const CurrentDevice &) = delete;
  CurrentDevice &operator=(const CurrentDevice &) = delete;

 private:
  const Api &api_;
  DeviceId previous_ = -1;
  bool set_ = false;
};

}  // namespace rig::hip
