#include "drivers/hip/gpu.h"

#include "core/error.h"

namespace rig::hip {
namespace {

// Fills a new Gpu: checks the ordinal against the runtime's count; the device id is its context.
rig_status open_gpu(const stream::Family &, stream::Gpu *gpu) {
  int count = 0;
  Error r = hip::api()->hipGetDeviceCount(&count);  // loaded: gpu_at was called with it
  if (r != SUCCESS) return fail(RIG_NOT_FOUND, "hipGetDeviceCount failed: %s", error_name(r));
  if (gpu->ordinal >= static_cast<unsigned>(count))
    return fail(RIG_NOT_FOUND, "no device hip:%u (the HIP runtime lists %d)", gpu->ordinal, count);
  gpu->device = static_cast<DeviceId>(gpu->ordinal);
  gpu->context = context_of(gpu->device);
  return RIG_OK;
}

}  // namespace

rig_status gpu_at(const Api &api, unsigned ordinal, const stream::Gpu **out) {
  return stream::gpu_at(api.family, ordinal, open_gpu, out);
}

}  // namespace rig::hip
