// rig.h's devices: the host, memory devices, driver devices; timelines and waits. Core opens the devices
// (core/registry.h); this face checks, pins, calls and gives handles.
#include <algorithm>
#include <string>
#include <vector>

#include "capi/api.h"
#include "capi/devices.h"
#include "capi/sized.h"
#include "core/registry.h"

using namespace rig;
using namespace rig::capi;

namespace {

// Opens the device core calls `name` and gives its handle.
rig_status open_and_give(const std::string &name, rig_device *out) {
  Device *d = nullptr;
  if (rig_status s = rig::open_device(name, &d); s != RIG_OK) return s;
  return give_device(*d, out);
}

}  // namespace

extern "C" {

unsigned rig_version_number(void) { return RIG_VERSION_NUMBER; }
const char *rig_version_string(void) { return "0.1.0"; }
const char *rig_last_error(void) { return last_error(); }
const char *rig_status_name(rig_status s) { return status_name(s); }

rig_status rig_host(rig_device *out) {
  return entry("host", [&] {
    RIG_REQUIRE_OUT(out, "host");
    *out = handle_of<rig_device>(host_word());
    return RIG_OK;
  });
}

rig_status rig_memory_device(const char *name, rig_device *out) {
  return entry("memory_device", [&] {
    RIG_REQUIRE_OUT(out, "memory_device");
    if (!name) return fail(RIG_INVALID_ARGUMENT, "memory_device: the name is null or empty");
    return open_and_give(std::string("memory:") + name, out);  // the memory driver checks the name
  });
}

rig_status rig_device_open(const char *name, rig_device *out) {
  return entry("device_open", [&]() -> rig_status {
    RIG_REQUIRE_OUT(out, "device_open");
    if (!name) return fail(RIG_INVALID_ARGUMENT, "device_open: null name");
    // `rig devices` lists memory:NAME and the rig command opens it, so users hand it here too: say which
    // call opens memory devices rather than that "memory:A" is not shaped like DRIVER:N.
    std::string n(name);
    if (n.substr(0, n.find(':')) == "memory")
      return fail(RIG_INVALID_ARGUMENT, "device_open: \"%s\": memory devices are opened by name with rig_memory_device",
                  name);
    return open_and_give(n, out);
  });
}

rig_status rig_device_list(const char **names, size_t capacity, size_t *count) {
  return entry("device_list", [&] {
    RIG_REQUIRE_OUT(count, "device_list");
    if (capacity && !names) return fail(RIG_INVALID_ARGUMENT, "device_list: null names with capacity %zu", capacity);
    std::vector<const char *> all = device_names();
    std::copy_n(all.begin(), std::min(capacity, all.size()), names);
    *count = all.size();
    clear_error();  // a driver that failed to load is left out, and its reason with it (rig.h)
    return RIG_OK;
  });
}

rig_status rig_device_get_info(rig_device device, rig_device_info *info) {
  return entry("device_get_info", [&] {
    RIG_REQUIRE_OUT(info, "device_get_info");
    auto d = pin_device(device, "device_get_info");
    if (!d) return RIG_INVALID_HANDLE;
    const DriverInfo &di = d->info();
    rig_device_info ours{};
    ours.size = sizeof ours;
    ours.name = di.name.c_str();
    ours.framework = di.framework.c_str();
    ours.model = di.model.c_str();
    ours.kind = d->kind();
    ours.index = d->index();
    ours.memory_bytes = di.memory_bytes;
    ours.integrated = di.integrated;
    ours.lost = d->lost() ? 1 : 0;
    return write_sized(ours, "device_get_info", "info", info);
  });
}

rig_status rig_device_submitted(rig_device device, uint64_t *value) {
  return entry("device_submitted", [&] {
    RIG_REQUIRE_OUT(value, "device_submitted");
    auto d = pin_device(device, "device_submitted");
    if (!d) return RIG_INVALID_HANDLE;
    *value = d->submitted();
    return RIG_OK;
  });
}

rig_status rig_device_signaled(rig_device device, uint64_t *value) {
  return entry("device_signaled", [&] {
    RIG_REQUIRE_OUT(value, "device_signaled");
    auto d = pin_device(device, "device_signaled");
    if (!d) return RIG_INVALID_HANDLE;
    *value = d->is_host() ? 0 : d->signaled();
    return RIG_OK;
  });
}

static rig_status wait_value(Device &d, uint64_t value, uint64_t timeout_ns, const char *what) {
  if (value > d.submitted())
    return fail(RIG_INVALID_ARGUMENT, "%s: %s:%llu is past its submitted value %llu (no wait before signal)", what,
                d.info().name.c_str(), static_cast<unsigned long long>(value),
                static_cast<unsigned long long>(d.submitted()));
  if (value == 0) return RIG_OK;
  rig_status s = d.wait(value, Deadline::after_ns(timeout_ns));
  if (s == RIG_TIMEOUT)
    return fail(RIG_TIMEOUT, "%s: %s did not reach %llu in time", what, d.info().name.c_str(),
                static_cast<unsigned long long>(value));
  return s;
}

rig_status rig_device_wait(rig_device device, uint64_t value, uint64_t timeout_ns) {
  return entry("device_wait", [&] {
    auto d = pin_device(device, "device_wait");
    if (!d) return RIG_INVALID_HANDLE;
    return wait_value(*d, value, timeout_ns, "device_wait");
  });
}

rig_status rig_wait_point(rig_point point, uint64_t timeout_ns) {
  return entry("wait_point", [&] {
    if (!point) return RIG_OK;
    Device *d = device_at(rig_point_device_index(point));
    if (!d) return fail(RIG_NOT_FOUND, "wait_point: no device has index %u", rig_point_device_index(point));
    return wait_value(*d, rig_point_value(point), timeout_ns, "wait_point");
  });
}

rig_status rig_device_point(rig_device device, uint64_t value, rig_point *out) {
  return entry("device_point", [&] {
    RIG_REQUIRE_OUT(out, "device_point");
    auto d = pin_device(device, "device_point");
    if (!d) return RIG_INVALID_HANDLE;
    if (d->is_host()) return fail(RIG_INVALID_ARGUMENT, "device_point: the host has no timeline");
    if (value == 0 || value > d->submitted())
      return fail(RIG_INVALID_ARGUMENT, "device_point: value %llu is not in 1..%llu",
                  static_cast<unsigned long long>(value), static_cast<unsigned long long>(d->submitted()));
    *out = d->point(value);
    return RIG_OK;
  });
}

rig_status rig_device_lost_reason(rig_device device, const char **why) {
  return entry("device_lost_reason", [&] {
    RIG_REQUIRE_OUT(why, "device_lost_reason");
    auto d = pin_device(device, "device_lost_reason");
    if (!d) return RIG_INVALID_HANDLE;
    *why = d->lost_reason();
    return RIG_OK;
  });
}

rig_status rig_device_release(rig_device device) {
  return entry("device_release", [&] {
    uint64_t word = word_of(device);
    if (word == host_word()) return RIG_OK;
    Device *d;
    {
      auto p = pin_device(device, "device_release");
      if (!p) return RIG_INVALID_HANDLE;
      d = p.get();
    }
    if (rig_status s = remove(word, Kind::device, "device_release"); s != RIG_OK) return s;
    return d->release();
  });
}

void rig_interrupt_waits(int on) { interrupt_waits.store(on != 0, std::memory_order_relaxed); }

}  // extern "C"
