// The CUDA driver's entry in rig's registry (prefix "cuda", devices "cuda:N", each a stream device over
// CUDA's table) and what a CUDA GPU says of itself.
#include <cstdlib>
#include <cstring>
#include <string>

#include "drivers/cuda/api.h"
#include "drivers/cuda/context.h"
#include "drivers/stream/driver.h"

namespace rig {
namespace cuda {

int device_count() {
  int count = 0;
  return cuda::api()->cuDeviceGetCount(&count) == cu::SUCCESS ? count : -1;
}

bool memory_operations(const stream::Gpu &gpu) {
  const Api &api = *cuda::api();
  const char *asked = std::getenv("RIG_CUDA_TIMELINE");
  if (!asked || std::strcmp(asked, "memops") != 0) return false;
  if (!api.cuStreamWriteValue64 || !api.cuStreamWaitValue64) return false;
  int can = 0;
  if (api.cuDeviceGetAttribute(&can, cu::ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS, gpu.device) != cu::SUCCESS) return false;
  return can == 1;
}

void describe(const stream::Gpu &gpu, DriverInfo *out) {
  const Api &api = *cuda::api();
  char model[256] = {};
  if (api.cuDeviceGetName(model, sizeof model - 1, gpu.device) != cu::SUCCESS) model[0] = 0;
  size_t total = 0;
  if (api.cuDeviceTotalMem(&total, gpu.device) != cu::SUCCESS) total = 0;
  int integrated = 0;
  if (api.cuDeviceGetAttribute(&integrated, cu::ATTR_INTEGRATED, gpu.device) != cu::SUCCESS) integrated = -1;
  out->name = "cuda:" + std::to_string(gpu.ordinal);
  out->framework = "CUDA";
  out->model = model;
  out->memory_bytes = total;
  out->integrated = integrated;
}

}  // namespace cuda

// Declared weak by src/core/drivers.cpp, so the engine builds without this directory.
Driver *cuda_driver() {
  static stream::StreamDriver driver("cuda", [] {
    const cuda::Api *a = cuda::api();
    return a ? &a->family : nullptr;
  });
  return &driver;
}

}  // namespace rig
