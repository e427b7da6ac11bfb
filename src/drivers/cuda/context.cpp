#include "drivers/cuda/context.h"

#include "core/error.h"

namespace rig::cuda {

rig_status open_gpu(stream::Gpu *gpu) {
  const Api &api = *cuda::api();  // loaded: only its family calls this
  int count = device_count();
  if (count < 0) return fail(RIG_NOT_FOUND, "cuDeviceGetCount failed");
  if (gpu->ordinal >= static_cast<unsigned>(count))
    return fail(RIG_NOT_FOUND, "no device cuda:%u (the CUDA driver lists %d)", gpu->ordinal, count);
  cu::Result r = api.cuDeviceGet(&gpu->device, static_cast<int>(gpu->ordinal));
  if (r != cu::SUCCESS) return fail(RIG_NOT_FOUND, "cuDeviceGet(%u) failed: %s", gpu->ordinal, error_name(r));
  r = api.cuDevicePrimaryCtxRetain(&gpu->context, gpu->device);
  if (r != cu::SUCCESS)
    return fail(r == cu::ERROR_OUT_OF_MEMORY ? RIG_OUT_OF_MEMORY : RIG_NOT_FOUND,
                "cuDevicePrimaryCtxRetain(cuda:%u) failed: %s", gpu->ordinal, error_name(r));
  return RIG_OK;
}

rig_status gpu_at(const Api &api, unsigned ordinal, const stream::Gpu **out) {
  return stream::gpu_at(api.family, ordinal, out);
}

}  // namespace rig::cuda
