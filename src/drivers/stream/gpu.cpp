#include "drivers/stream/gpu.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "core/error.h"

namespace rig::stream {
namespace {

struct Gpus {
  std::mutex lock;
  // Entries never removed: pointers stay valid. Keyed by family too: cuda:0 and hip:0 may be one GPU seen
  // through two libraries, each with its own context.
  std::map<std::pair<const Family *, unsigned>, std::unique_ptr<Gpu>> by_ordinal;
};

Gpus &gpus() {
  static Gpus &g = *new Gpus;  // never destroyed: devices may be released during static destruction
  return g;
}

}  // namespace

int device_count(const Family &family) {
  int count = 0;
  return family.calls.device_count(&count) == SUCCESS ? count : -1;
}

rig_status gpu_at(const Family &family, unsigned ordinal, const Gpu **out) {
  auto &g = gpus();
  std::lock_guard hold(g.lock);
  auto key = std::make_pair(&family, ordinal);
  auto it = g.by_ordinal.find(key);
  if (it != g.by_ordinal.end()) {
    *out = it->second.get();
    return RIG_OK;
  }
  int count = device_count(family);
  if (count < 0) return fail(RIG_NOT_FOUND, "%s failed", family.names.device_count);
  if (ordinal >= static_cast<unsigned>(count))
    return fail(RIG_NOT_FOUND, "no device %s:%u (%s lists %d)", family.prefix, ordinal, family.library, count);
  auto gpu = std::make_unique<Gpu>();
  gpu->family = &family;
  gpu->ordinal = ordinal;
  if (rig_status s = family.open_gpu(gpu.get()); s != RIG_OK) return s;
  *out = gpu.get();
  g.by_ordinal.emplace(key, std::move(gpu));
  return RIG_OK;
}

}  // namespace rig::stream
