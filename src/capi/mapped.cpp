// rig_mapped.h's face: checks, pins, calls src/mapped (which holds the logic) and gives handles, as every
// face does (capi/api.h). Verdicts and opened probe ops share the handle kind `verdict`, told apart by a
// tag, so that both are generation-checked: a forged ops->user or a stale verdict is RIG_INVALID_HANDLE.
#include <rig_mapped.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "capi/api.h"
#include "capi/handles.h"
#include "capi/sized.h"
#include "core/device.h"
#include "core/error.h"
#include "mapped/device_ops.h"
#include "mapped/device_probe.h"
#include "mapped/probe.h"
#include "core/range_table.h"
#include "mapped/static_table.h"
#include "mapped/verdict.h"

using rig::capi::Kind;
using rig::capi::Pinned;

namespace {

struct Entry {
  enum class Tag { verdict, ops } tag;
  rig::mapped::Verdict verdict;
  std::string text;  // verdict.to_string(), made once so that the returned pointer stays valid
  std::unique_ptr<rig::mapped::DeviceOps> ops;
};

rig_status new_verdict(rig::mapped::Verdict v, rig_verdict *out) {
  auto e = std::make_shared<Entry>();
  e->tag = Entry::Tag::verdict;
  e->text = v.to_string();
  e->verdict = std::move(v);
  return rig::capi::give(Kind::verdict, std::move(e), out);
}

// A pinned verdict, or null with RIG_INVALID_HANDLE's message set (`what` names the call).
Pinned<Entry> pin_verdict(rig_verdict v, const char *what) {
  Pinned<Entry> p(rig::capi::word_of(v), Kind::verdict, what);
  if (p && p->tag != Entry::Tag::verdict) {
    rig::fail(RIG_INVALID_HANDLE, "%s: the handle names opened probe ops, not a verdict", what);
    return {};
  }
  return p;
}

Pinned<Entry> pin_ops(void *user) {
  Pinned<Entry> p(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(user)), Kind::verdict, "probe ops");
  if (p && p->tag != Entry::Tag::ops) {
    rig::fail(RIG_INVALID_HANDLE, "probe ops: ops->user names a verdict, not opened probe ops");
    return {};
  }
  return p;
}

// An enum argument's value as the caller passed it. C callers may pass any int; loading a value outside the
// enum's range as the C++ enum type is undefined, so the bits are copied out instead.
template <class E>
int raw_enum(const E *e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized on the platforms rig supports");
  int v;
  std::memcpy(&v, e, sizeof v);
  return v;
}

// The caller's options (capi/sized.h: an older caller's lack a log, read as none). `what` names the call.
rig_status read_options(const rig_probe_options *caller, const char *what, rig::mapped::ProbeOptions *out) {
  if (!caller) return RIG_OK;
  rig_probe_options o;
  if (rig_status s = rig::capi::read_sized(*caller, offsetof(rig_probe_options, min_relative_speed) + sizeof(double),
                                           what, "options", &o))
    return s;
  double m = o.min_relative_speed;
  if (std::isnan(m) || std::isinf(m) || m < 0)
    return rig::fail(RIG_INVALID_ARGUMENT, "%s: min_relative_speed %g is not a finite fraction >= 0", what, m);
  if (m > 0) out->min_relative_speed = m;
  if (o.log) {
    auto fn = o.log;
    void *user = o.log_user;
    out->log = [fn, user](const std::string &msg) { fn(user, msg.c_str()); };
  }
  return RIG_OK;
}

// The region a probe reads: both pointers set, the map on a page (`what` names the call).
rig_status check_region(const void *map, const void *reference, rig_verdict *out, const char *what) {
  if (!map || !reference || !out)
    return rig::fail(RIG_INVALID_ARGUMENT, "%s: map, reference and out must not be null", what);
  if (reinterpret_cast<uintptr_t>(map) % 4096 != 0)
    return rig::fail(RIG_INVALID_ARGUMENT,
                     "%s: map %p does not start on a 4 KiB page boundary (a mapping from mmap does)", what, map);
  return RIG_OK;
}

rig_status run_probe(const rig_probe_ops &ops, const void *map, const void *reference, size_t length,
                     const rig::mapped::ProbeOptions &options, rig_verdict *out) {
  rig::mapped::Verdict v;
  if (rig_status s = rig::mapped::probe_with(ops, map, reference, length, options, &v)) return s;
  return new_verdict(std::move(v), out);
}

// The callbacks of device-backed ops: translation from ops->user to the opened state.
rig_status ops_register(void *user, void *host, size_t length) {
  return rig::capi::entry("register", [&] {
    auto p = pin_ops(user);
    return p ? p->ops->register_host(host, length) : RIG_INVALID_HANDLE;
  });
}
rig_status ops_unregister(void *user, void *host, size_t length) {
  return rig::capi::entry("unregister", [&] {
    auto p = pin_ops(user);
    return p ? p->ops->unregister_host(host, length) : RIG_INVALID_HANDLE;
  });
}
rig_status ops_alloc_host(void *user, size_t length, void **host) {
  return rig::capi::entry("alloc_host", [&] {
    if (!host) return rig::fail(RIG_INVALID_ARGUMENT, "alloc_host: null out pointer");
    auto p = pin_ops(user);
    return p ? p->ops->alloc_host(length, host) : RIG_INVALID_HANDLE;
  });
}
rig_status ops_free_host(void *user, void *host, size_t length) {
  return rig::capi::entry("free_host", [&] {
    auto p = pin_ops(user);
    return p ? p->ops->free_host(host, length) : RIG_INVALID_HANDLE;
  });
}
rig_status ops_round_trip(void *user, const void *host, void *into, size_t length) {
  return rig::capi::entry("round trip", [&] {
    auto p = pin_ops(user);
    return p ? p->ops->round_trip(host, into, length) : RIG_INVALID_HANDLE;
  });
}
rig_status ops_upload(void *user, const void *host, size_t length) {
  return rig::capi::entry("upload", [&] {
    auto p = pin_ops(user);
    return p ? p->ops->upload(host, length) : RIG_INVALID_HANDLE;
  });
}

}  // namespace

extern "C" {

RIG_API rig_status rig_verdict_get_kind(rig_verdict verdict, rig_verdict_kind *kind) {
  return rig::capi::entry("verdict_get_kind", [&] {
    RIG_REQUIRE_OUT(kind, "verdict_get_kind");
    auto p = pin_verdict(verdict, "verdict_get_kind");
    if (!p) return RIG_INVALID_HANDLE;
    *kind = p->verdict.kind;
    return RIG_OK;
  });
}

RIG_API rig_status rig_verdict_refusal(rig_verdict verdict, rig_refusal *refusal) {
  return rig::capi::entry("verdict_refusal", [&] {
    RIG_REQUIRE_OUT(refusal, "verdict_refusal");
    auto p = pin_verdict(verdict, "verdict_refusal");
    if (!p) return RIG_INVALID_HANDLE;
    *refusal = p->verdict.refusal;
    return RIG_OK;
  });
}

RIG_API rig_status rig_verdict_reason(rig_verdict verdict, const char **reason) {
  return rig::capi::entry("verdict_reason", [&] {
    RIG_REQUIRE_OUT(reason, "verdict_reason");
    auto p = pin_verdict(verdict, "verdict_reason");
    if (!p) return RIG_INVALID_HANDLE;
    *reason = p->verdict.reason.c_str();
    return RIG_OK;
  });
}

RIG_API rig_status rig_verdict_cacheable(rig_verdict verdict, int *cacheable) {
  return rig::capi::entry("verdict_cacheable", [&] {
    RIG_REQUIRE_OUT(cacheable, "verdict_cacheable");
    auto p = pin_verdict(verdict, "verdict_cacheable");
    if (!p) return RIG_INVALID_HANDLE;
    *cacheable = p->verdict.cacheable() ? 1 : 0;
    return RIG_OK;
  });
}

RIG_API rig_status rig_verdict_to_string(rig_verdict verdict, const char **text) {
  return rig::capi::entry("verdict_to_string", [&] {
    RIG_REQUIRE_OUT(text, "verdict_to_string");
    auto p = pin_verdict(verdict, "verdict_to_string");
    if (!p) return RIG_INVALID_HANDLE;
    *text = p->text.c_str();
    return RIG_OK;
  });
}

RIG_API rig_status rig_verdict_speeds(rig_verdict verdict, double *registered, double *staged) {
  return rig::capi::entry("verdict_speeds", [&] {
    RIG_REQUIRE_OUT(registered, "verdict_speeds");
    RIG_REQUIRE_OUT(staged, "verdict_speeds");
    auto p = pin_verdict(verdict, "verdict_speeds");
    if (!p) return RIG_INVALID_HANDLE;
    *registered = p->verdict.registered_bps;
    *staged = p->verdict.staged_bps;
    return RIG_OK;
  });
}

RIG_API rig_status rig_verdict_release(rig_verdict verdict) {
  return rig::capi::entry("verdict_release", [&] {
    {
      auto p = pin_verdict(verdict, "verdict_release");
      if (!p) return RIG_INVALID_HANDLE;
    }
    return rig::capi::remove(rig::capi::word_of(verdict), Kind::verdict, "verdict_release");
  });
}

RIG_API const char *rig_verdict_kind_name(rig_verdict_kind kind) { return rig::mapped::kind_name(raw_enum(&kind)); }
RIG_API const char *rig_refusal_name(rig_refusal refusal) { return rig::mapped::refusal_name(raw_enum(&refusal)); }

RIG_API rig_status rig_static_verdict(rig_device device, rig_verdict *decided) {
  return rig::capi::entry("static_verdict", [&] {
    RIG_REQUIRE_OUT(decided, "static_verdict");
    auto d = rig::capi::pin_device(device, "static_verdict");
    if (!d) return RIG_INVALID_HANDLE;
    auto v = rig::mapped::static_verdict_of(*d);
    if (!v) {
      *decided = nullptr;
      return RIG_OK;
    }
    return new_verdict(std::move(*v), decided);
  });
}

RIG_API rig_status rig_static_verdict_for(const char *framework, rig_device_kind kind, rig_device_fact_fn facts,
                                          void *user, rig_verdict *decided) {
  return rig::capi::entry("static_verdict_for", [&] {
    RIG_REQUIRE_OUT(decided, "static_verdict_for");
    if (!framework || !*framework)
      return rig::fail(RIG_INVALID_ARGUMENT, "static_verdict_for: null or empty framework name");
    rig::mapped::FactQuery query;
    if (facts) query = [facts, user](rig_device_fact f) { return facts(user, f); };
    int k = raw_enum(&kind);
    if (k < RIG_DEVICE_HOST || k > RIG_DEVICE_CPU)
      return rig::fail(RIG_INVALID_ARGUMENT, "static_verdict_for: kind %d is not a rig_device_kind", k);
    auto v = rig::mapped::static_verdict(framework, static_cast<rig_device_kind>(k), query);
    if (!v) {
      *decided = nullptr;
      return RIG_OK;
    }
    return new_verdict(std::move(*v), decided);
  });
}

RIG_API rig_status rig_probe_with(const rig_probe_ops *ops, const void *map, const void *reference, size_t length,
                                  const rig_probe_options *options, rig_verdict *out) {
  return rig::capi::entry("probe_with", [&] {
    if (!ops) return rig::fail(RIG_INVALID_ARGUMENT, "probe_with: null ops");
    // An older caller's table ends before now_ns (read as none: the probe's own clock).
    rig_probe_ops copy;
    if (rig_status s = rig::capi::read_sized(*ops, offsetof(rig_probe_ops, now_ns), "probe_with", "ops", &copy))
      return s;
    if (!copy.register_host || !copy.unregister_host || !copy.alloc_host || !copy.free_host || !copy.round_trip ||
        !copy.upload)
      return rig::fail(RIG_INVALID_ARGUMENT, "probe_with: every callback of ops but now_ns must be set");
    if (rig_status s = check_region(map, reference, out, "probe_with")) return s;
    rig::mapped::ProbeOptions opt;
    if (rig_status s = read_options(options, "probe_with", &opt)) return s;
    return run_probe(copy, map, reference, length, opt, out);
  });
}

RIG_API rig_status rig_probe(rig_device device, const void *map, const void *reference, size_t length,
                             const rig_probe_options *options, rig_verdict *out) {
  return rig::capi::entry("probe", [&] {
    if (rig_status s = check_region(map, reference, out, "probe")) return s;
    rig::mapped::ProbeOptions opt;
    if (rig_status s = read_options(options, "probe", &opt)) return s;
    auto d = rig::capi::pin_device(device, "probe");
    if (!d) return RIG_INVALID_HANDLE;
    rig::mapped::Verdict v;
    if (rig_status s = rig::mapped::probe_device(*d, map, reference, length, opt, &v)) return s;
    return new_verdict(std::move(v), out);
  });
}

RIG_API rig_status rig_probe_ops_open(rig_device device, size_t bytes, rig_probe_ops *ops) {
  return rig::capi::entry("probe_ops_open", [&] {
    RIG_REQUIRE_OUT(ops, "probe_ops_open");
    auto d = rig::capi::pin_device(device, "probe_ops_open");
    if (!d) return RIG_INVALID_HANDLE;
    auto e = std::make_shared<Entry>();
    e->tag = Entry::Tag::ops;
    if (rig_status s = rig::mapped::DeviceOps::open(*d, bytes, &e->ops)) return s;
    // The opened state's handle word is ops->user, which every callback pins (pin_ops).
    uint64_t word = rig::capi::insert(Kind::verdict, std::move(e));
    if (!word) return RIG_OUT_OF_MEMORY;
    *ops = rig_probe_ops{};
    ops->size = sizeof *ops;
    ops->user = reinterpret_cast<void *>(static_cast<uintptr_t>(word));
    ops->register_host = ops_register;
    ops->unregister_host = ops_unregister;
    ops->alloc_host = ops_alloc_host;
    ops->free_host = ops_free_host;
    ops->round_trip = ops_round_trip;
    ops->upload = ops_upload;
    ops->now_ns = nullptr;
    return RIG_OK;
  });
}

RIG_API rig_status rig_probe_ops_close(rig_probe_ops *ops) {
  return rig::capi::entry("probe_ops_close", [&] {
    if (!ops) return rig::fail(RIG_INVALID_ARGUMENT, "probe_ops_close: null ops");
    {
      auto p = pin_ops(ops->user);
      if (!p) return RIG_INVALID_HANDLE;
    }
    // remove waits for callbacks in flight (their pins) before the device buffer is freed.
    return rig::capi::remove(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ops->user)), Kind::verdict,
                             "probe_ops_close");
  });
}

RIG_API rig_status rig_host_register(rig_device device, void *host, size_t length, rig_access access) {
  return rig::capi::entry("host_register", [&] {
    if (!host || length == 0) return rig::fail(RIG_INVALID_ARGUMENT, "host_register: null host pointer or length 0");
    int a = raw_enum(&access);
    if (a != RIG_ACCESS_READ && a != RIG_ACCESS_WRITE && a != RIG_ACCESS_READ_WRITE)
      return rig::fail(RIG_INVALID_ARGUMENT, "host_register: access %d is not a rig_access", a);
    auto d = rig::capi::pin_device(device, "host_register");
    if (!d) return RIG_INVALID_HANDLE;
    return rig::mapped::host_register(*d, host, length, access);
  });
}

RIG_API rig_status rig_host_unregister(rig_device device, void *host) {
  return rig::capi::entry("host_unregister", [&] {
    if (!host) return rig::fail(RIG_INVALID_ARGUMENT, "host_unregister: null host pointer");
    auto d = rig::capi::pin_device(device, "host_unregister");
    if (!d) return RIG_INVALID_HANDLE;
    return rig::mapped::host_unregister(*d, host);
  });
}

RIG_API rig_status rig_host_is_registered(const void *host, size_t length, int *registered) {
  return rig::capi::entry("host_is_registered", [&] {
    if (!host) return rig::fail(RIG_INVALID_ARGUMENT, "host_is_registered: null host pointer");
    RIG_REQUIRE_OUT(registered, "host_is_registered");
    *registered = rig::range_table::is_registered(host, length) ? 1 : 0;
    return RIG_OK;
  });
}

}  // extern "C"
