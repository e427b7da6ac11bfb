// CUDA's GPUs as the stream device sees them (drivers/stream/gpu.h): each GPU's primary context, retained
// once, the first time a device on it opens, and never released (timeline words, in-queue waits of other
// devices and modules may outlive any one rig device; the CUDA runtime keeps its primary contexts until exit
// for the same reason). Every rig device on one GPU shares it, so their memory, modules and events are
// usable by one another without peer access. Also the rest of CUDA's Family hooks (stream/calls.h).
#pragma once

#include <rig.h>

#include "core/driver.h"
#include "drivers/cuda/api.h"
#include "drivers/stream/gpu.h"

namespace rig::cuda {

// Family::open_gpu: the CUdevice of a listed ordinal, and its primary context, retained.
rig_status open_gpu(stream::Gpu *gpu);
// Family::memory_operations: events unless RIG_CUDA_TIMELINE=memops asks for stream memory operations and
// the device and driver have 64-bit ones.
bool memory_operations(const stream::Gpu &gpu);

}  // namespace rig::cuda
