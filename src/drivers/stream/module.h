// Device code loaded into a stream family's GPU (CUDA: PTX, cubin, fatbin; HIP: code objects). Loading is the
// family's (Family::load_module: its formats, its loader's options); finding functions and unloading are
// shared.
#pragma once

#include <rig.h>

#include <memory>

#include "core/driver.h"
#include "drivers/stream/gpu.h"

namespace rig::stream {

class StreamModule final : public DriverModule {
 public:
  // Loads `bytes` on `gpu` through its family; RIG_UNSUPPORTED for a format the family does not load.
  static rig_status load(const Gpu &gpu, rig_module_format format, const void *bytes, size_t length,
                         std::unique_ptr<DriverModule> *out);
  // Unloads after the GPU's work finished (see module.cpp); never after a loss on the GPU.
  ~StreamModule() override;
  // RIG_NOT_FOUND where the module has no such function. Takes the GPU's context for the call.
  rig_status find(const char *name, uintptr_t *function) override;
  const Gpu &gpu() const { return gpu_; }

 private:
  StreamModule(const Gpu &gpu, Module module) : gpu_(gpu), module_(module) {}
  const Gpu &gpu_;
  Module module_;
};

}  // namespace rig::stream
