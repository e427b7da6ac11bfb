// HIP's GPUs as the stream device sees them (drivers/stream/gpu.h), and the rest of HIP's Family hooks
// (stream/calls.h). HIP has no context objects: every rig device on one GPU ("hip:0" opened several times)
// uses that GPU's one runtime context, made current for each call (hip/api.h's context_of), so their memory
// and modules are usable by one another without peer access.
#pragma once

#include <rig.h>

#include "drivers/hip/api.h"
#include "drivers/stream/gpu.h"

namespace rig::hip {

// Family::open_gpu: a listed ordinal is the device id, and the id the GPU's context.
rig_status open_gpu(stream::Gpu *gpu);
// Family::memory_operations: stream memory operations unless the runtime lacks them, the device says it
// cannot wait on a value, or RIG_HIP_TIMELINE=events asks for events (how the tests cover both ways).
bool memory_operations(const stream::Gpu &gpu);

}  // namespace rig::hip
