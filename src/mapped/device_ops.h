// Mapped registration over a rig device: its static verdict, registration through the range table, and
// the ops the self-test needs (seed: with_device_ops) backed by the device's own driver.
#pragma once

#include <rig_mapped.h>

#include <memory>
#include <optional>

#include "core/driver.h"
#include "mapped/verdict.h"

namespace rig {
class Device;
}

namespace rig::mapped {

// The static verdict of an open device (nullopt: self-test required). Asks its driver only as the table says.
std::optional<Verdict> static_verdict_of(Device &device);

// Registers through the range table with the device's driver. UNSUPPORTED where the driver registers no
// host memory or the static verdict refuses the device.
rig_status host_register(Device &device, void *host, size_t length, rig_access access);
rig_status host_unregister(Device &device, void *host);

// The state behind rig_probe_ops_open: the device and a device buffer that round_trip and upload use.
class DeviceOps {
 public:
  // UNSUPPORTED for a statically refused device or one without host registration; the driver's
  // status where the buffer cannot be allocated.
  static rig_status open(Device &device, size_t bytes, std::unique_ptr<DeviceOps> *out);
  DeviceOps(const DeviceOps &) = delete;
  DeviceOps &operator=(const DeviceOps &) = delete;
  ~DeviceOps();

  rig_status register_host(void *host, size_t length);
  rig_status unregister_host(void *host, size_t length);
  rig_status alloc_host(size_t length, void **host);
  rig_status free_host(void *host, size_t length);
  rig_status round_trip(const void *host, void *into, size_t length);
  rig_status upload(const void *host, size_t length);

 private:
  DeviceOps(Device &device, HostRegistration &hr, Memory buffer) : device_(device), hr_(hr), buffer_(buffer) {}
  rig_status usable(const char *what, size_t length) const;

  Device &device_;  // devices live until the process exits (core/registry.h)
  HostRegistration &hr_;
  Memory buffer_;
  void *registered_ = nullptr;  // alloc_host's anonymous mapping, while registered (free_host's to release)
  size_t registered_length_ = 0;
};

}  // namespace rig::mapped
