// HIP's module loader for the stream device (Family::load_module): a code object through hipModuleLoadData
// (on AMD an ELF of the GPU's ISA; HIP on NVIDIA takes what the CUDA driver takes, cubin or PTX text).
#pragma once

#include <rig.h>

#include "drivers/stream/gpu.h"

namespace rig::hip {

// Loads `bytes` (RIG_MODULE_HIP_CODE_OBJECT, non-empty) on `gpu`, made current by the caller.
// RIG_INVALID_ARGUMENT for a bad image, RIG_UNSUPPORTED for code not for this GPU, else the runtime's failure.
rig_status load_module(const stream::Gpu &gpu, rig_module_format format, const void *bytes, size_t length,
                       stream::Module *out);

}  // namespace rig::hip
