// The HIP driver's entry in rig's registry: prefix "hip", devices "hip:N".
#include <string>
#include <vector>

#include "core/driver.h"
#include "core/error.h"
#include "drivers/hip/api.h"
#include "drivers/hip/device.h"
#include "drivers/hip/gpu.h"

namespace rig {
namespace hip {
namespace {

class HipDriver final : public Driver {
 public:
  const char *prefix() const override { return "hip"; }

  std::vector<std::string> list() override {
    std::vector<std::string> names;
    const Api *a = api();
    int count = 0;
    if (!a || a->hipGetDeviceCount(&count) != SUCCESS) return names;
    for (int i = 0; i < count; ++i) names.push_back("hip:" + std::to_string(i));
    return names;
  }

  rig_status open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) override {
    const Api *a = api();
    if (!a) return RIG_NOT_FOUND;  // api() set the message (which library, why)
    const Gpu *gpu = nullptr;
    if (rig_status s = gpu_at(*a, ordinal, &gpu); s != RIG_OK) return s;
    return HipDevice::open(*a, *gpu, out);
  }
};

}  // namespace
}  // namespace hip

// Declared weak by src/core/drivers.cpp, so the engine builds without this directory.
Driver *hip_driver() {
  static hip::HipDriver driver;
  return &driver;
}

}  // namespace rig
