// The GPUs rig has opened through HIP. Every rig device on one GPU ("hip:0" opened several times) uses that
// GPU's one runtime context, so their memory and modules are usable by one another without peer access.
#pragma once

#include <rig.h>

#include <atomic>

#include "drivers/hip/api.h"

namespace rig::hip {

struct Gpu {
  DeviceId ordinal = 0;
  // Set once a device on this GPU is lost: its stream may never drain again, so whole-device
  // synchronisation (before a module unload) is no longer attempted.
  mutable std::atomic<bool> had_loss{false};
};

// The GPU of `ordinal` (kept for the life of the process). RIG_NOT_FOUND where the runtime lists none.
rig_status gpu_at(const Api &api, unsigned ordinal, const Gpu **out);

}  // namespace rig::hip
