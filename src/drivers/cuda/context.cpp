#include "drivers/cuda/context.h"

#include "core/error.h"

namespace rig::cuda {

rig_status open_gpu(stream::Gpu *gpu) {
  const Api &api = *cuda::api();  // loaded: only its family calls this
  cu::Result r = api.cuDeviceGet(&gpu->device, static_cast<int>(gpu->ordinal));
  if (r != cu::SUCCESS) return fail(RIG_NOT_FOUND, "cuDeviceGet(%u) failed: %s", gpu->ordinal, error_name(r));
  r = api.cuDevicePrimaryCtxRetain(&gpu->context, gpu->device);
  if (r != cu::SUCCESS)
    return fail(r == cu::ERROR_OUT_OF_MEMORY ? RIG_OUT_OF_MEMORY : RIG_NOT_FOUND,
                "cuDevicePrimaryCtxRetain(cuda:%u) failed: %s", gpu->ordinal, error_name(r));
  return RIG_OK;
}

}  // namespace rig::cuda
