// The CUDA driver's entry in rig's registry: prefix "cuda", devices "cuda:N".
#include <string>
#include <vector>

#include "core/driver.h"
#include "core/error.h"
#include "drivers/cuda/api.h"
#include "drivers/cuda/context.h"
#include "drivers/cuda/device.h"

namespace rig {
namespace cuda {
namespace {

class CudaDriver final : public Driver {
 public:
  const char *prefix() const override { return "cuda"; }

  std::vector<std::string> list() override {
    std::vector<std::string> names;
    const Api *a = api();
    int count = 0;
    if (!a || a->cuDeviceGetCount(&count) != cu::SUCCESS) return names;
    for (int i = 0; i < count; ++i) names.push_back("cuda:" + std::to_string(i));
    return names;
  }

  rig_status open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) override {
    const Api *a = api();
    if (!a) return RIG_NOT_FOUND;  // api() set the message (which library, why)
    const Gpu *gpu = nullptr;
    if (rig_status s = gpu_at(*a, ordinal, &gpu); s != RIG_OK) return s;
    return CudaDevice::open(*a, *gpu, out);
  }
};

}  // namespace
}  // namespace cuda

// Declared weak by src/core/drivers.cpp, so the engine builds without this directory.
Driver *cuda_driver() {
  static cuda::CudaDriver driver;
  return &driver;
}

}  // namespace rig
