// The host registration concern of the driver interface (core/driver.h), for drivers that can register
// host memory (CUDA, HIP): the raw register and unregister calls the engine's range table makes, the facts
// mapped registration's static table reads, pinned staging memory and host-synchronous copies.
#pragma once

#include <rig.h>

#include <cstddef>

#include "core/driver_memory.h"

namespace rig {

// What mapped registration (src/mapped) needs of a driver that can register host memory (CUDA, HIP).
// Reached through DriverDevice::host_registration(); null for drivers that cannot register.
class HostRegistration {
 public:
  // 1 integrated, 0 discrete, -1 the query failed.
  virtual int integrated() = 0;
  // The device reads pageable host memory through the host's page tables (Grace Hopper): 1, 0, -1.
  virtual int pageable_uses_host_page_tables() = 0;
  // Registration with a read-only flag is supported: 1, 0, -1.
  virtual int read_only_supported() = 0;
  // Registers [host, host+length) with the driver (read-only flag where asked): the raw driver call only.
  // Only the engine's range table (core/range_table.h) calls these, so overlapping ranges never reach the
  // driver and every registration is released once.
  virtual rig_status register_range(void *host, size_t length, bool read_only) = 0;
  virtual rig_status unregister_range(void *host) = 0;
  // Page-locked host memory for staging.
  virtual rig_status alloc_pinned(size_t length, void **out) = 0;
  virtual rig_status free_pinned(void *host) = 0;
  // Host-synchronous copies between host memory (registered, pinned or pageable) and device memory.
  virtual rig_status upload(const void *host, const Memory &device, size_t offset, size_t length) = 0;
  virtual rig_status download(const Memory &device, size_t offset, void *host, size_t length) = 0;

 protected:
  ~HostRegistration() = default;
};

}  // namespace rig
