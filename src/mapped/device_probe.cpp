#include "mapped/device_probe.h"

#include <memory>
#include <new>
#include <string>

#include "core/device.h"
#include "core/error.h"
#include "mapped/device_ops.h"
#include "mapped/static_table.h"

namespace rig::mapped {
namespace {

// A probe callback over the DeviceOps in `user`: the message cleared first, as at a C entry, so the
// probe's words come from this call alone; no exception leaves it (probe_with calls it through C).
template <class F>
rig_status call(void *user, F &&f) noexcept {
  clear_error();
  try {
    return f(*static_cast<DeviceOps *>(user));
  } catch (const std::bad_alloc &) {
    return fail(RIG_OUT_OF_MEMORY, "probe: out of host memory");
  } catch (...) {
    return fail(RIG_DRIVER, "probe: unexpected failure");
  }
}

rig_probe_ops ops_over(DeviceOps &ops) {
  rig_probe_ops o{};
  o.size = sizeof o;
  o.user = &ops;
  o.register_host = [](void *u, void *host, size_t n) { return call(u, [&](DeviceOps &d) { return d.register_host(host, n); }); };
  o.unregister_host = [](void *u, void *host, size_t n) { return call(u, [&](DeviceOps &d) { return d.unregister_host(host, n); }); };
  o.alloc_host = [](void *u, size_t n, void **host) {
    return call(u, [&](DeviceOps &d) {
      return host ? d.alloc_host(n, host) : fail(RIG_INVALID_ARGUMENT, "alloc_host: null out pointer");
    });
  };
  o.free_host = [](void *u, void *host, size_t n) { return call(u, [&](DeviceOps &d) { return d.free_host(host, n); }); };
  o.round_trip = [](void *u, const void *host, void *into, size_t n) {
    return call(u, [&](DeviceOps &d) { return d.round_trip(host, into, n); });
  };
  o.upload = [](void *u, const void *host, size_t n) { return call(u, [&](DeviceOps &d) { return d.upload(host, n); }); };
  o.now_ns = nullptr;
  return o;
}

}  // namespace

rig_status probe_device(Device &device, const void *map, const void *reference, size_t length,
                        const ProbeOptions &options, Verdict *out) noexcept {
  try {
    if (auto decided = static_verdict_of(device)) {
      *out = std::move(*decided);
      return RIG_OK;
    }
    size_t w = window_length(length);
    if (w == 0) {
      rig_probe_ops none{};  // never called: the probe answers a region this small before any callback
      return probe_with(none, map, reference, length, options, out);
    }
    std::unique_ptr<DeviceOps> ops;
    if (rig_status s = DeviceOps::open(device, w, &ops)) return s;
    rig_status s = probe_with(ops_over(*ops), map, reference, length, options, out);
    std::string kept = last_error();
    ops.reset();  // a failure to free the device buffer is not the probe's answer
    if (s != RIG_OK) fail(s, "%s", kept.c_str());
    else clear_error();
    return s;
  } catch (const std::bad_alloc &) {
    return fail(RIG_OUT_OF_MEMORY, "probe: out of host memory");
  } catch (...) {
    return fail(RIG_DRIVER, "probe: unexpected failure");
  }
}

}  // namespace rig::mapped
