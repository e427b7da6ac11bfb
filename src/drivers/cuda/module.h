// CUDA's module loader for the stream device (Family::load_module): PTX text, cubin or fatbin through
// cuModuleLoadDataEx, with the JIT's error log in the message.
#pragma once

#include <rig.h>

#include "drivers/stream/gpu.h"

namespace rig::cuda {

// Loads `bytes` (RIG_MODULE_PTX or RIG_MODULE_CUBIN, which also takes fatbins; non-empty) on `gpu`, whose
// context the caller made current. RIG_INVALID_ARGUMENT for a bad image, RIG_UNSUPPORTED for code not for
// this GPU, else the driver's failure, each with the driver's error and the JIT's log.
rig_status load_module(const stream::Gpu &gpu, rig_module_format format, const void *bytes, size_t length,
                       stream::Module *out);

}  // namespace rig::cuda
