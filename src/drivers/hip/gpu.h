// HIP's GPUs as the stream device sees them (drivers/stream/gpu.h). HIP has no context objects: every rig
// device on one GPU ("hip:0" opened several times) uses that GPU's one runtime context, made current for
// each call (hip/api.h's context_of), so their memory and modules are usable by one another without peer
// access.
#pragma once

#include <rig.h>

#include "drivers/hip/api.h"
#include "drivers/stream/gpu.h"

namespace rig::hip {

// The GPU of `ordinal` (kept for the life of the process). RIG_NOT_FOUND where the runtime lists none.
rig_status gpu_at(const Api &api, unsigned ordinal, const stream::Gpu **out);

}  // namespace rig::hip
