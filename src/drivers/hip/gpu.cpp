#include "drivers/hip/gpu.h"

#include <map>
#include <memory>
#include <mutex>

#include "core/error.h"

namespace rig::hip {
namespace {

struct Gpus {
  std::mutex lock;
  std::map<unsigned, std::unique_ptr<Gpu>> by_ordinal;  // never removed: pointers stay valid
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
  Error r = api.hipGetDeviceCount(&count);
  if (r != SUCCESS) return fail(RIG_NOT_FOUND, "hipGetDeviceCount failed: %s", error_name(r));
  if (ordinal >= static_cast<unsigned>(count))
    return fail(RIG_NOT_FOUND, "no device hip:%u (the HIP runtime lists %d)", ordinal, count);
  auto gpu = std::make_unique<Gpu>();
  gpu->ordinal = static_cast<DeviceId>(ordinal);
  *out = gpu.get();
  g.by_ordinal.emplace(ordinal, std::move(gpu));
  return RIG_OK;
}

}  // namespace rig::hip
