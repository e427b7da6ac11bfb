// The memory-descriptor concern of the driver interface (core/driver.h): a driver's memory as a file
// descriptor another device or process imports (Vulkan's VK_KHR_external_memory_fd, opaque fds). A driver
// whose API has them returns this from DriverDevice::memory_fds(); the interop layer (src/interop) is its
// only caller.
#pragma once

#include <rig.h>

#include <cstddef>

#include "core/driver_memory.h"

namespace rig {

class MemoryFds {
 public:
  // Whether this device's memory (RIG_MEMORY_DEVICE) can leave as a descriptor and come back as one.
  virtual bool can_memory_fd() const = 0;
  // A new descriptor of `memory` (this driver's, of `length` bytes) that the caller owns. RIG_UNSUPPORTED
  // for memory that cannot leave (host-visible kinds, imports).
  virtual rig_status export_memory_fd(const Memory &memory, int *fd) = 0;
  // Memory of `length` bytes over descriptor `fd` (exported by a device of the same driver and GPU): on
  // success the driver owns `fd`, on failure it stays the caller's. The driver's refusal as
  // RIG_INVALID_ARGUMENT with its words. The Memory goes back through free().
  virtual rig_status import_memory_fd(int fd, size_t length, Memory *out) = 0;

 protected:
  ~MemoryFds() = default;
};

}  // namespace rig
