// The CUDA driver's entry in rig's registry (prefix "cuda", devices "cuda:N", each a stream device over
// CUDA's table) and when a CUDA device keeps its timeline with stream memory operations.
#include <cstdlib>
#include <cstring>

#include "drivers/cuda/api.h"
#include "drivers/cuda/context.h"
#include "drivers/stream/driver.h"

namespace rig {
namespace cuda {

bool memory_operations(const stream::Gpu &gpu) {
  const Api &api = *cuda::api();
  const char *asked = std::getenv("RIG_CUDA_TIMELINE");
  if (!asked || std::strcmp(asked, "memops") != 0) return false;
  if (!api.cuStreamWriteValue64 || !api.cuStreamWaitValue64) return false;
  int can = 0;
  if (api.cuDeviceGetAttribute(&can, cu::ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS, gpu.device) != cu::SUCCESS) return false;
  return can == 1;
}

}  // namespace cuda

// Declared weak by src/core/drivers.cpp, so the engine builds without this directory.
Driver *cuda_driver() { return stream::driver_of<cuda::Api, cuda::api>("cuda"); }

}  // namespace rig
