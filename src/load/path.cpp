#include "load/path.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace rig::load {
namespace {

struct Cached {
  bool usable;
  std::string verdict;
};
// The probe cache: process-wide because a verdict is a fact about the machine (the file system and the
// device), not about one load; it holds only what rig_verdict_cacheable says may be kept.
std::mutex cache_mutex;
std::map<std::string, Cached> cache;

std::string key_of(rig_device device, const File &file) {
  rig_device_info info{};
  info.size = sizeof info;
  rig_device_get_info(device, &info);
  return std::to_string(file.file_system) + "|" + info.framework + "|" + info.name + "|" + info.model;
}

std::string words(rig_verdict v) {
  const char *text = "";
  rig_verdict_to_string(v, &text);
  return text;
}

// Probes a scratch mapping of the file's first region (at most 64 MiB, at least the probe's 128 KiB):
// never the mapping a load copies from, as rig_probe asks.
rig_status probe(rig_device device, const File &file, bool *usable, bool *cacheable, std::string *verdict) {
  uint64_t length = std::min<uint64_t>(file.size, uint64_t(64) << 20) / (128 << 10) * (128 << 10);
  if (length < (128 << 10)) {
    *usable = false;
    *cacheable = false;
    *verdict = "Inconclusive: the file is under the probe's 128 KiB";
    return RIG_OK;
  }
  void *map = mmap(nullptr, length, PROT_READ, MAP_SHARED, file.fd, 0);
  if (map == MAP_FAILED) return fail(RIG_DRIVER, "mmap for the probe: %s", strerror(errno));
  std::vector<unsigned char> reference(length);
  if (rig_status s = read_fully(file.fd, 0, reference.data(), length)) {
    munmap(map, length);
    return s;
  }
  rig_verdict v;
  rig_status s = rig_probe(device, map, reference.data(), length, nullptr, &v);
  if (s != RIG_OK) {
    munmap(map, length);
    return fail(s, "probing the device: %s", rig_last_error());
  }
  rig_verdict_kind kind;
  int keep = 0;
  rig_verdict_get_kind(v, &kind);
  rig_verdict_cacheable(v, &keep);
  *usable = kind == RIG_VERDICT_USABLE;
  *cacheable = keep != 0;
  *verdict = words(v);
  rig_verdict_release(v);
  // A window left registered must never be unmapped (rig_probe's contract): keep that mapping for good.
  if (kind != RIG_VERDICT_STILL_REGISTERED) munmap(map, length);
  return RIG_OK;
}

}  // namespace

rig_status allowed_on(rig_device device, const File &file, bool want_probe, Allowed *out) {
  rig_verdict decided = nullptr;
  if (rig_status s = rig_static_verdict(device, &decided)) return s;
  if (decided) {
    rig_verdict_kind kind;
    rig_verdict_get_kind(decided, &kind);
    out->direct = kind == RIG_VERDICT_NOT_NEEDED;
    out->registered = false;
    out->verdict = words(decided);
    rig_verdict_release(decided);
    return RIG_OK;
  }
  out->direct = false;
  out->verdict = "self-test required";
  if (!want_probe) return RIG_OK;
  std::string key = key_of(device, file);
  {
    std::lock_guard lock(cache_mutex);
    if (auto it = cache.find(key); it != cache.end()) {
      out->registered = it->second.usable;
      out->verdict = it->second.verdict + " (cached)";
      return RIG_OK;
    }
  }
  bool usable = false, cacheable = false;
  std::string verdict;
  if (rig_status s = probe(device, file, &usable, &cacheable, &verdict)) return s;
  if (cacheable) {
    std::lock_guard lock(cache_mutex);
    cache[key] = Cached{usable, verdict};
  }
  out->registered = usable;
  out->verdict = verdict;
  return RIG_OK;
}

void forget_probes() {
  std::lock_guard lock(cache_mutex);
  cache.clear();
}

}  // namespace rig::load
