// Devices: the host, memory devices, driver devices; timelines and waits.
#include <cstring>
#include <list>
#include <mutex>
#include <string>
#include <vector>

#include "capi/api.h"
#include "capi/devices.h"
#include "core/registry.h"
#include "drivers/memory/memory_device.h"

using namespace rig;
using namespace rig::capi;

extern "C" {

unsigned rig_version_number(void) { return RIG_VERSION_NUMBER; }
const char *rig_version_string(void) { return "0.1.0"; }
const char *rig_last_error(void) { return last_error(); }

const char *rig_status_name(rig_status s) {
  switch (s) {
    case RIG_OK: return "RIG_OK";
    case RIG_INVALID_ARGUMENT: return "RIG_INVALID_ARGUMENT";
    case RIG_INVALID_HANDLE: return "RIG_INVALID_HANDLE";
    case RIG_UNSUPPORTED: return "RIG_UNSUPPORTED";
    case RIG_UNMAPPABLE: return "RIG_UNMAPPABLE";
    case RIG_OUT_OF_MEMORY: return "RIG_OUT_OF_MEMORY";
    case RIG_LOST: return "RIG_LOST";
    case RIG_TIMEOUT: return "RIG_TIMEOUT";
    case RIG_INTERRUPTED: return "RIG_INTERRUPTED";
    case RIG_DRIVER: return "RIG_DRIVER";
    case RIG_NOT_FOUND: return "RIG_NOT_FOUND";
    case RIG_BUSY: return "RIG_BUSY";
    default: break;
  }
  return "RIG_UNKNOWN_STATUS";
}

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
    if (!name || !*name) return fail(RIG_INVALID_ARGUMENT, "memory_device: the name is null or empty");
    if (std::strlen(name) > 255) return fail(RIG_INVALID_ARGUMENT, "memory_device: the name is longer than 255 bytes");
    std::lock_guard g(device_name_lock(std::string("memory:") + name));
    return open_device(std::make_unique<MemoryDevice>(name, RIG_DEVICE_MEMORY), out);
  });
}

rig_status rig_device_open(const char *name, rig_device *out) {
  return entry("device_open", [&]() -> rig_status {
    RIG_REQUIRE_OUT(out, "device_open");
    if (!name) return fail(RIG_INVALID_ARGUMENT, "device_open: null name");
    std::string n(name);
    auto colon = n.find(':');
    std::string prefix = n.substr(0, colon);
    // `rig devices` lists memory:NAME and the rig command opens it, so users hand it here too: say
    // which call opens memory devices rather than that "memory:A" is not shaped like DRIVER:N.
    if (prefix == "memory")
      return fail(RIG_INVALID_ARGUMENT, "device_open: \"%s\": memory devices are opened by name with rig_memory_device",
                  name);
    if (colon == std::string::npos)
      return fail(RIG_INVALID_ARGUMENT, "device_open: \"%s\" is not DRIVER:N (cuda:0, hip:0, vulkan:0)", name);
    char *end = nullptr;
    unsigned long ordinal = std::strtoul(n.c_str() + colon + 1, &end, 10);
    if (colon + 1 == n.size() || *end)
      return fail(RIG_INVALID_ARGUMENT, "device_open: \"%s\" is not DRIVER:N (cuda:0, hip:0, vulkan:0)", name);
    for (Driver *d : drivers()) {
      if (prefix != d->prefix()) continue;
      std::lock_guard g(device_name_lock(n));
      std::unique_ptr<DriverDevice> dev;
      if (rig_status s = d->open(static_cast<unsigned>(ordinal), &dev); s != RIG_OK) return s;
      return open_device(std::move(dev), out);
    }
    return fail(RIG_NOT_FOUND, "device_open: no driver \"%s\" in this build", prefix.c_str());
  });
}

rig_status rig_device_list(const char **names, size_t capacity, size_t *count) {
  return entry("device_list", [&] {
    RIG_REQUIRE_OUT(count, "device_list");
    if (capacity && !names) return fail(RIG_INVALID_ARGUMENT, "device_list: null names with capacity %zu", capacity);
    // Names are kept for the process: the contract gives them out as static strings.
    static std::mutex lock;
    static std::list<std::string> *all = new std::list<std::string>;  // a list: given pointers stay valid
    std::lock_guard g(lock);
    std::vector<std::string> now;
    for (Driver *d : drivers())
      for (auto &n : d->list()) now.push_back(n);
    size_t i = 0;
    for (auto &n : now) {
      const std::string *kept = nullptr;
      for (auto &k : *all)
        if (k == n) kept = &k;
      if (!kept) kept = &all->emplace_back(n);
      if (i < capacity) names[i] = kept->c_str();
      ++i;
    }
    *count = i;
    clear_error();
    return RIG_OK;
  });
}

rig_status rig_device_get_info(rig_device device, rig_device_info *info) {
  return entry("device_get_info", [&] {
    auto d = pin_device(device, "device_get_info");
    if (!d) return RIG_INVALID_HANDLE;
    if (!info) return fail(RIG_INVALID_ARGUMENT, "device_get_info: null info");
    if (info->size < sizeof(rig_device_info))
      return fail(RIG_INVALID_ARGUMENT, "device_get_info: info->size is %zu, want %zu", info->size, sizeof(rig_device_info));
    const DriverInfo &di = d->info();
    info->name = di.name.c_str();
    info->framework = di.framework.c_str();
    info->model = di.model.c_str();
    info->kind = d->kind();
    info->index = d->index();
    info->memory_bytes = di.memory_bytes;
    info->integrated = di.integrated;
    info->lost = d->lost() ? 1 : 0;
    return RIG_OK;
  });
}

rig_status rig_device_submitted(rig_device device, uint64_t *value) {
  return entry("device_submitted", [&] {
    auto d = pin_device(device, "device_submitted");
    if (!d) return RIG_INVALID_HANDLE;
    RIG_REQUIRE_OUT(value, "device_submitted");
    *value = d->submitted();
    return RIG_OK;
  });
}

rig_status rig_device_signaled(rig_device device, uint64_t *value) {
  return entry("device_signaled", [&] {
    auto d = pin_device(device, "device_signaled");
    if (!d) return RIG_INVALID_HANDLE;
    RIG_REQUIRE_OUT(value, "device_signaled");
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
    auto d = pin_device(device, "device_point");
    if (!d) return RIG_INVALID_HANDLE;
    RIG_REQUIRE_OUT(out, "device_point");
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
    auto d = pin_device(device, "device_lost_reason");
    if (!d) return RIG_INVALID_HANDLE;
    RIG_REQUIRE_OUT(why, "device_lost_reason");
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
