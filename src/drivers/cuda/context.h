// CUDA's GPUs as the stream device sees them (drivers/stream/gpu.h): each GPU's primary context, retained
// once, the first time a device on it opens, and never released (timeline words, in-queue waits of other
// devices and modules may outlive any one rig device; the CUDA runtime keeps its primary contexts until exit
// for the same reason). Every rig device on one GPU shares it, so their memory, modules and events are
// usable by one another without peer access.
#pragma once

#include <rig.h>

#include "drivers/cuda/api.h"
#include "drivers/stream/gpu.h"

namespace rig::cuda {

// The GPU of `ordinal`, retaining its primary context on first use. RIG_NOT_FOUND where there is none.
rig_status gpu_at(const Api &api, unsigned ordinal, const stream::Gpu **out);

}  // namespace rig::cuda
