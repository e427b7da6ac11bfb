#include "mapped/device_ops.h"

#include <sys/mman.h>

#include "core/device.h"
#include "core/error.h"
#include "core/range_table.h"
#include "mapped/host_map.h"
#include "mapped/static_table.h"

namespace rig::mapped {
namespace {

// Refuses what the static table refuses, so no path of this module registers on a refused device (Vulkan
// above all), and a driver without host registration.
rig_status registering_driver(Device &device, const char *what, HostRegistration **out) {
  if (device.lost()) return fail(RIG_LOST, "%s: device %s is lost", what, device.info().name.c_str());
  if (device.released()) return fail(RIG_LOST, "%s: device %s was released", what, device.info().name.c_str());
  auto decided = static_verdict_of(device);
  if (decided && decided->kind == RIG_VERDICT_REFUSED)
    return fail(RIG_UNSUPPORTED, "%s: device %s is refused: %s", what, device.info().name.c_str(),
                decided->to_string().c_str());
  HostRegistration *hr = device.driver().host_registration();
  if (!hr)
    return fail(RIG_UNSUPPORTED, "%s: the %s driver of %s registers no host memory", what,
                device.info().framework.c_str(), device.info().name.c_str());
  *out = hr;
  return RIG_OK;
}

}  // namespace

std::optional<Verdict> static_verdict_of(Device &device) {
  const DriverInfo &info = device.info();
  DriverDevice &driver = device.driver();
  return static_verdict(info.framework, device.kind(), [&](rig_device_fact fact) -> int {
    HostRegistration *hr = driver.host_registration();
    switch (fact) {
      case RIG_FACT_INTEGRATED: return hr ? hr->integrated() : info.integrated;
      case RIG_FACT_PAGEABLE_USES_HOST_PAGE_TABLES: return hr ? hr->pageable_uses_host_page_tables() : -1;
      default: break;  // a fact added later: unknown here
    }
    return -1;
  });
}

rig_status host_register(Device &device, void *host, size_t length, rig_access access) {
  HostRegistration *hr = nullptr;
  if (rig_status s = registering_driver(device, "register", &hr)) return s;
  return range_table::register_exclusive(device, host, length, access == RIG_ACCESS_READ);
}

rig_status host_unregister(Device &device, void *host) {
  if (!device.driver().host_registration())
    return fail(RIG_UNSUPPORTED, "unregister: device %s registers no host memory", device.info().name.c_str());
  return range_table::unregister_exclusive(device, host);
}

rig_status DeviceOps::open(Device &device, size_t bytes, std::unique_ptr<DeviceOps> *out) {
  HostRegistration *hr = nullptr;
  if (rig_status s = registering_driver(device, "probe ops", &hr)) return s;
  if (bytes == 0) return fail(RIG_INVALID_ARGUMENT, "probe ops: a device buffer of 0 bytes");
  Memory buffer;
  if (rig_status s = device.driver().allocate(bytes, RIG_MEMORY_DEVICE, &buffer)) return s;
  out->reset(new DeviceOps(device, *hr, buffer));
  return RIG_OK;
}

DeviceOps::~DeviceOps() { device_.driver().free(buffer_); }

rig_status DeviceOps::usable(const char *what, size_t length) const {
  if (device_.lost()) return fail(RIG_LOST, "%s: device %s is lost", what, device_.info().name.c_str());
  if (device_.released()) return fail(RIG_LOST, "%s: device %s was released", what, device_.info().name.c_str());
  if (length > buffer_.length)
    return fail(RIG_INVALID_ARGUMENT, "%s: %zu bytes exceed the ops' device buffer of %zu", what, length,
                buffer_.length);
  return RIG_OK;
}

// The probe only reads the windows (host to device), so they are registered read-only where the device
// can: a PROT_READ shared file mapping registers only that way on CUDA.
rig_status DeviceOps::register_host(void *host, size_t length) {
  if (rig_status s = usable("register", 0)) return s;
  return range_table::register_exclusive(device_, host, length, true);
}

rig_status DeviceOps::unregister_host(void *host, size_t) {
  if (rig_status s = usable("unregister", 0)) return s;
  return range_table::unregister_exclusive(device_, host);
}

// The probe's page-locked staging buffer: an anonymous mapping, on huge pages where the kernel gives them,
// registered with the driver (an exclusive entry of the range table). Why not the driver's own pinned
// allocation: it was the probe's largest phase; registering 4 KiB pages gained nothing, 2 MiB pages took
// about half as long (bench/README.md, "Why: mapped registration and the probe"), and a copy from either
// runs as from the driver's pinned memory. Where the registration is refused, the driver's own allocation.
rig_status DeviceOps::alloc_host(size_t length, void **host) {
  if (rig_status s = usable("alloc_host", 0)) return s;
  if (void *p = map_for_registering(length)) {
    if (range_table::register_exclusive(device_, p, length, false) == RIG_OK) {
      registered_ = p;
      registered_length_ = length;
      *host = p;
      return RIG_OK;
    }
    munmap(p, length);
  }
  clear_error();
  return hr_.alloc_pinned(length, host);
}

rig_status DeviceOps::free_host(void *host, size_t) {
  if (!host || host != registered_) return hr_.free_pinned(host);
  // Unmapped only once unregistered: pages the driver may still hold are never handed back.
  if (rig_status s = range_table::unregister_exclusive(device_, host)) return s;
  munmap(host, registered_length_);
  registered_ = nullptr;
  return RIG_OK;
}

rig_status DeviceOps::round_trip(const void *host, void *into, size_t length) {
  if (rig_status s = usable("round trip", length)) return s;
  if (rig_status s = hr_.upload(host, buffer_, 0, length)) return s;
  return hr_.download(buffer_, 0, into, length);
}

rig_status DeviceOps::upload(const void *host, size_t length) {
  if (rig_status s = usable("upload", length)) return s;
  return hr_.upload(host, buffer_, 0, length);
}

}  // namespace rig::mapped
