#include "drivers/cuda/context.h"

#include <map>
#include <memory>
#include <mutex>

#include "core/error.h"

namespace rig::cuda {
namespace {

struct Gpus {
  std::mutex lock;
  std::map<unsigned, std::unique_ptr<Gpu>> by_ordinal;  // entries never removed: pointers stay valid
};

Gpus &gpus() {
  static Gpus &g = *new Gpus;  // never destroyed: devices may be released during static destruction
  return g;
}

}  // namespace

rig_status gpu_at(const Api &api, unsigned ordinal, const Gpu **out) {
  auto &g = gpus();
  std::lock_guard hold(g.lock);
  auto it = g.by_ordinal.find(ordinal);
  if (it != g.by_ordinal.end()) {
    *out = it->second.get();
    return RIG_OK;
  }
  int count = 0;
  cu::Result r = api.cuDeviceGetCount(&count);
  if (r != cu::SUCCESS) return fail(RIG_NOT_FOUND, "cuDeviceGetCount failed: %s", error_name(r));
  if (ordinal >= static_cast<unsigned>(count))
    return fail(RIG_NOT_FOUND, "no device cuda:%u (the CUDA driver lists %d)", ordinal, count);
  auto gpu = std::make_unique<Gpu>();
  gpu->ordinal = ordinal;
  r = api.cuDeviceGet(&gpu->device, static_cast<int>(ordinal));
  if (r != cu::SUCCESS) return fail(RIG_NOT_FOUND, "cuDeviceGet(%u) failed: %s", ordinal, error_name(r));
  r = api.cuDevicePrimaryCtxRetain(&gpu->context, gpu->device);
  if (r != cu::SUCCESS)
    return fail(r == cu::ERROR_OUT_OF_MEMORY ? RIG_OUT_OF_MEMORY : RIG_NOT_FOUND,
                "cuDevicePrimaryCtxRetain(cuda:%u) failed: %s", ordinal, error_name(r));
  *out = gpu.get();
  g.by_ordinal.emplace(ordinal, std::move(gpu));
  return RIG_OK;
}

}  // namespace rig::cuda
