// Memory as a driver sees it, and a range of it: what the engine hands every concern of the driver
// interface (core/driver.h) and copies around without looking inside.
#pragma once

#include <rig.h>

#include <cstddef>
#include <cstdint>

namespace rig {

// Memory as the driver sees it. `host` is set where the host addresses the bytes (host, memory device,
// pinned, mapped memory); `address` is what work uses (a CUDA device pointer, a Vulkan buffer's device
// address or 0); `handle` is the driver's own object (VkBuffer, ...). The engine only copies this around.
struct Memory {
  void *host = nullptr;
  uint64_t address = 0;
  uintptr_t handle = 0;
  uintptr_t extra = 0;  // a second driver word (Vulkan: its VkDeviceMemory)
  size_t length = 0;
};

// One slot of a run as the driver receives it: a range of some Memory.
struct Binding {
  const Memory *memory = nullptr;
  size_t offset = 0;
  size_t length = 0;
  rig_access access = RIG_ACCESS_READ;
  void *host() const { return memory && memory->host ? static_cast<char *>(memory->host) + offset : nullptr; }
};

}  // namespace rig
