// Device code loaded with cuModuleLoadDataEx (PTX text, cubin or fatbin) into a GPU's primary context.
#pragma once

#include <rig.h>

#include <memory>

#include "core/driver.h"
#include "drivers/cuda/api.h"
#include "drivers/cuda/context.h"

namespace rig::cuda {

class CudaModule final : public DriverModule {
 public:
  // Loads `bytes` (RIG_MODULE_PTX or RIG_MODULE_CUBIN, which also takes fatbins) on `gpu`. The JIT's
  // error log goes into the message when PTX does not compile.
  static rig_status load(const Api &api, const Gpu &gpu, rig_module_format format, const void *bytes,
                         size_t length, std::unique_ptr<DriverModule> *out);
  ~CudaModule() override;
  rig_status find(const char *name, uintptr_t *function) override;
  const Gpu &gpu() const { return gpu_; }

 private:
  CudaModule(const Api &api, const Gpu &gpu, cu::Module module) : api_(api), gpu_(gpu), module_(module) {}
  const Api &api_;
  const Gpu &gpu_;
  cu::Module module_;
};

}  // namespace rig::cuda
