#include "drivers/hip/gpu.h"

#include <cstdlib>
#include <cstring>


namespace rig::hip {

rig_status open_gpu(stream::Gpu *gpu) {
  gpu->device = static_cast<DeviceId>(gpu->ordinal);
  gpu->context = context_of(gpu->device);
  return RIG_OK;
}

bool memory_operations(const stream::Gpu &gpu) {
  const Api &api = *hip::api();
  const char *forced = std::getenv("RIG_HIP_TIMELINE");
  if (forced && std::strcmp(forced, "events") == 0) return false;
  if (!api.hipStreamWriteValue64 || !api.hipStreamWaitValue64) return false;
  int can = 0;
  if (api.family.calls.device_attribute(&can, ATTR_CAN_USE_STREAM_WAIT_VALUE, gpu.device) != SUCCESS) return false;
  return can == 1;
}

}  // namespace rig::hip
