// Device code loaded with hipModuleLoadData: a code object (on AMD an ELF of the GPU's ISA; HIP on NVIDIA
// takes what the CUDA driver takes, cubin or PTX text).
#pragma once

#include <rig.h>

#include <memory>

#include "core/driver.h"
#include "drivers/hip/api.h"
#include "drivers/hip/gpu.h"

namespace rig::hip {

class HipModule final : public DriverModule {
 public:
  // Loads `bytes` (RIG_MODULE_HIP_CODE_OBJECT) on `gpu`.
  static rig_status load(const Api &api, const Gpu &gpu, rig_module_format format, const void *bytes,
                         size_t length, std::unique_ptr<DriverModule> *out);
  ~HipModule() override;
  rig_status find(const char *name, uintptr_t *function) override;
  const Gpu &gpu() const { return gpu_; }

 private:
  HipModule(const Api &api, const Gpu &gpu, Module module) : api_(api), gpu_(gpu), module_(module) {}
  const Api &api_;
  const Gpu &gpu_;
  Module module_;
};

}  // namespace rig::hip
