// The CUDA driver's entry in rig's registry: prefix "cuda", devices "cuda:N", each a stream device
// (drivers/stream) over CUDA's table, described by CUDA's attributes.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/driver.h"
#include "core/error.h"
#include "drivers/cuda/api.h"
#include "drivers/cuda/context.h"
#include "drivers/stream/device.h"

namespace rig {
namespace cuda {
namespace {

// Events unless RIG_CUDA_TIMELINE=memops asks for stream memory operations and the device and driver have
// 64-bit ones (stream/timeline.h says what each costs; the tests and the benchmark run both).
bool use_memory_operations(const Api &api, cu::Device device) {
  const char *asked = std::getenv("RIG_CUDA_TIMELINE");
  if (!asked || std::strcmp(asked, "memops") != 0) return false;
  if (!api.cuStreamWriteValue64 || !api.cuStreamWaitValue64) return false;
  int can = 0;
  if (api.cuDeviceGetAttribute(&can, cu::ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS, device) != cu::SUCCESS) return false;
  return can == 1;
}

// What a CUDA GPU says of itself: name, model, memory, integrated (-1 where a query fails).
DriverInfo describe(const Api &api, const stream::Gpu &gpu) {
  DriverInfo info;
  char model[256] = {};
  if (api.cuDeviceGetName(model, sizeof model - 1, gpu.device) != cu::SUCCESS) model[0] = 0;
  size_t total = 0;
  if (api.cuDeviceTotalMem(&total, gpu.device) != cu::SUCCESS) total = 0;
  int integrated = 0;
  if (api.cuDeviceGetAttribute(&integrated, cu::ATTR_INTEGRATED, gpu.device) != cu::SUCCESS) integrated = -1;
  info.name = "cuda:" + std::to_string(gpu.ordinal);
  info.framework = "CUDA";
  info.model = model;
  info.memory_bytes = total;
  info.integrated = integrated;
  return info;
}

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
    const stream::Gpu *gpu = nullptr;
    if (rig_status s = gpu_at(*a, ordinal, &gpu); s != RIG_OK) return s;
    stream::Current current(*gpu);
    return stream::StreamDevice::open(*gpu, describe(*a, *gpu), use_memory_operations(*a, gpu->device), out);
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
