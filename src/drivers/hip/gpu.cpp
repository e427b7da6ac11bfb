#include "drivers/hip/gpu.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"

namespace rig::hip {

int device_count() {
  int count = 0;
  return hip::api()->hipGetDeviceCount(&count) == SUCCESS ? count : -1;
}

rig_status open_gpu(stream::Gpu *gpu) {
  int count = device_count();
  if (count < 0) return fail(RIG_NOT_FOUND, "hipGetDeviceCount failed");
  if (gpu->ordinal >= static_cast<unsigned>(count))
    return fail(RIG_NOT_FOUND, "no device hip:%u (the HIP runtime lists %d)", gpu->ordinal, count);
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
  if (api.hipDeviceGetAttribute(&can, ATTR_CAN_USE_STREAM_WAIT_VALUE, gpu.device) != SUCCESS) return false;
  return can == 1;
}

void describe(const stream::Gpu &gpu, DriverInfo *out) {
  const Api &api = *hip::api();
  char model[256] = {};
  if (api.hipDeviceGetName(model, sizeof model - 1, gpu.device) != SUCCESS) model[0] = 0;
  size_t total = 0;
  if (api.hipDeviceTotalMem(&total, gpu.device) != SUCCESS) total = 0;
  int integrated = 0;
  if (api.hipDeviceGetAttribute(&integrated, ATTR_INTEGRATED, gpu.device) != SUCCESS) integrated = 1;
  out->name = "hip:" + std::to_string(gpu.ordinal);
  out->framework = "HIP";
  out->model = model;
  out->memory_bytes = total;
  out->integrated = integrated;
}

}  // namespace rig::hip
