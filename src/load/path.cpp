#include "load/path.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "load/direct_read.h"
#include "load/guarded_mapping.h"
#include "load/read_mode.h"
#include "mapped/device_ops.h"
#include "mapped/device_probe.h"

namespace rig::load {
namespace {

struct Cached {
  bool usable;
  std::string verdict;
};
// The probe cache: process-wide because a verdict is a fact about the machine (the file system and the
// device), not about one load; it holds only what Verdict::cacheable says may be kept.
std::mutex cache_mutex;
std::map<std::string, Cached> cache;

std::string key_of(const Device &device, const File &file) {
  const DriverInfo &info = device.info();
  return std::to_string(file.shards[0]->file_system) + "|" + info.framework + "|" + info.name + "|" + info.model;
}

// Probes a scratch mapping of the file's first region (at most 64 MiB, at least the probe's 128 KiB):
// never the mapping a load copies from, as the probe asks (mapped/device_probe.h).
rig_status probe(Device &device, const File &checkpoint, bool *usable, bool *cacheable, std::string *verdict) {
  const Shard &file = *checkpoint.shards[0];  // the shards share the verdict: the cache keys the first's file system
  uint64_t length = std::min<uint64_t>(file.size, uint64_t(64) << 20) / (128 << 10) * (128 << 10);
  if (length < (128 << 10)) {
    *usable = false;
    *cacheable = false;
    *verdict = "Inconclusive: the file is under the probe's 128 KiB";
    return RIG_OK;
  }
  // Guarded (load/guarded_mapping.h): a file cut during the probe reads zeros, not SIGBUS, and the probe's
  // verdict on them (wrong bytes, which the cache would keep for the file system) is thrown away below.
  void *map = map_guarded(file.fd, length);
  if (map == MAP_FAILED) return fail(RIG_DRIVER, "mmap for the probe: %s", strerror(errno));
  std::vector<unsigned char> reference(length);
  if (rig_status s = read_fully(file.fd, 0, reference.data(), length)) {
    unmap_guarded(map, length);
    return fail(s, "%s: %s", file.path.c_str(), last_error());
  }
  mapped::Verdict v;
  if (rig_status s = mapped::probe_device(device, map, reference.data(), length, mapped::ProbeOptions{}, &v)) {
    unmap_guarded(map, length);
    return fail(s, "probing the device: %s", last_error());
  }
  uint64_t missing;
  bool shrank = guarded_fault(map, &missing);
  // A window left registered must never be unmapped (rig_probe's contract): keep that mapping for good.
  if (v.kind != RIG_VERDICT_STILL_REGISTERED) unmap_guarded(map, length);
  if (shrank)
    return fail(RIG_INVALID_ARGUMENT, "the file %s could not be read through its mapping at offset %llu during the "
                "probe (it shrank, or the read failed)", file.path.c_str(), (unsigned long long)missing);
  *usable = v.kind == RIG_VERDICT_USABLE;
  *cacheable = v.cacheable();
  *verdict = v.to_string();
  return RIG_OK;
}

// The path from the devices' verdicts, as asked (the caller checked `asked` is one of rig_load_path's).
rig_status path_by_verdicts(const std::vector<Device *> &devices, const File &file, rig_load_path asked, Route *out) {
  bool all_direct = true, all_registered = true;
  std::string verdicts;
  for (size_t d = 0; d < devices.size(); ++d) {
    Allowed a;
    if (rig_status s = allowed_on(*devices[d], file, asked == RIG_LOAD_PATH_REGISTERED, &a)) return s;
    all_direct &= a.direct;
    all_registered &= a.registered;
    verdicts += (d ? "; " : "") + a.verdict;
  }
  switch (asked) {
    case RIG_LOAD_PATH_AUTO:
      out->path = all_direct ? RIG_LOAD_PATH_DIRECT : RIG_LOAD_PATH_STAGED;
      out->why = all_direct ? "auto: the verdict is Not_needed (the device reads the mapping itself): " + verdicts
                            : "auto: staged (registering pays only on a reload of a mapping kept registered; "
                              "pinned staging kept in a pool reaches the link on a first load): verdict " + verdicts;
      return RIG_OK;
    case RIG_LOAD_PATH_REGISTERED:
      if (!all_registered)
        return fail(RIG_UNSUPPORTED, "the registered path needs a Usable verdict on every device: %s", verdicts.c_str());
      out->path = RIG_LOAD_PATH_REGISTERED;
      out->why = "asked for: " + verdicts;
      return RIG_OK;
    case RIG_LOAD_PATH_DIRECT:
      if (!all_direct) return fail(RIG_UNSUPPORTED, "the direct path needs a Not_needed verdict on every device: %s", verdicts.c_str());
      out->path = RIG_LOAD_PATH_DIRECT;
      out->why = "asked for: " + verdicts;
      return RIG_OK;
    default:
      out->path = RIG_LOAD_PATH_STAGED;
      out->why = "asked for";
      return RIG_OK;
  }
}

}  // namespace

rig_status choose_path(const std::vector<Device *> &devices, File &file, rig_load_path asked, Route *out) {
  if (asked < RIG_LOAD_PATH_AUTO || asked > RIG_LOAD_PATH_DIRECT) return fail(RIG_INVALID_ARGUMENT, "unknown path %d", int(asked));
  // A registration kept on every device (rig_load_file_keep_registered, which checked the verdict): the
  // copies read it straight, with nothing to register, stage or probe.
  out->kept = asked == RIG_LOAD_PATH_AUTO || asked == RIG_LOAD_PATH_REGISTERED;
  for (Device *d : devices) out->kept = out->kept && file.kept_on(*d);
  if (!out->kept) return path_by_verdicts(devices, file, asked, out);
  out->path = RIG_LOAD_PATH_REGISTERED;
  out->why = "the file's registration is kept on every device (rig_load_file_keep_registered): nothing to register";
  return RIG_OK;
}

rig_status gather_route(rig_load_path asked, Route *out) {
  if (asked < RIG_LOAD_PATH_AUTO || asked > RIG_LOAD_PATH_DIRECT) return fail(RIG_INVALID_ARGUMENT, "unknown path %d", int(asked));
  out->path = RIG_LOAD_PATH_STAGED;
  out->kept = false;
  out->why = std::string("staged: slices along a later dim are gathered in staging") +
             (asked == RIG_LOAD_PATH_AUTO || asked == RIG_LOAD_PATH_STAGED ? "" : " (the path asked for copies whole ranges only)");
  return RIG_OK;
}

// The fraction of stream bytes [lo, hi) resident, over every shard it covers, weighted by their bytes (the
// gaps between shards' bases hold no file's bytes and count for nothing).
double resident_in(const File &file, uint64_t lo, uint64_t hi) {
  double resident = 0, covered = 0;
  for (const auto &shard : file.shards) {
    uint64_t a = std::max(lo, shard->base), b = std::min(hi, shard->base + shard->size);
    if (a >= b) continue;
    resident += resident_fraction(shard->fd, shard->size, a - shard->base, b - a) * double(b - a);
    covered += double(b - a);
  }
  return covered > 0 ? resident / covered : 1.0;
}

std::vector<int> open_direct(const File &file, rig_load_io io, uint64_t lo, uint64_t hi, unsigned readers,
                             std::string *why) {
  bool direct = io == RIG_LOAD_IO_DIRECT;
  if (io == RIG_LOAD_IO_AUTO && hi > lo && resident_in(file, lo, hi) < 0.5) {
    // Cold: the way this file system reads faster, timed on the first shard the load reads (read_mode.h).
    const Shard *first = file.shards[0].get();
    for (const auto &shard : file.shards)
      if (shard->base + shard->size > lo) {
        first = shard.get();
        break;
      }
    direct = learned_direct(*first, lo, hi, readers, why);
  }
  std::vector<int> fds;
  if (!direct) return fds;
  for (const auto &shard : file.shards) {
    int fd = ::open(shard->path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
      for (int open : fds) ::close(open);
      *why += "; buffered reads (the file system refused O_DIRECT)";
      return {};
    }
    fds.push_back(fd);
  }
  if (io == RIG_LOAD_IO_DIRECT) *why += "; O_DIRECT reads (asked for)";
  DirectRead ring(fds[0]);  // each reader thread makes its own; this one says whether they can
  *why += ring.uring() ? " through io_uring" : " with pread (" + ring.why_not() + ")";
  return fds;
}

rig_status allowed_on(Device &device, const File &file, bool want_probe, Allowed *out) {
  if (auto decided = mapped::static_verdict_of(device)) {
    out->direct = decided->kind == RIG_VERDICT_NOT_NEEDED;
    out->registered = false;
    out->verdict = decided->to_string();
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
