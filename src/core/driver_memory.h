// Memory as a driver sees it, and a range of it: what the engine hands every concern of the driver
// interface (core/driver.h) and copies around without looking inside.
#pragma once

#include <rig.h>

#include <cstddef>
#include <cstdint>

namespace rig {

// rig's own memory kind beside rig.h's, which no caller can ask for (rig_buffer_create refuses it): device
// memory the driver may take from a pool of the device's that keeps freed memory for the next allocation.
// The loader's tensors are made of it (load/load.cpp): host-to-device copies into memory allocated just
// after other memory was freed ran slower than into memory the pool kept (bench/probes/dst_probe.cu,
// bench/README.md, "Why: stream drivers"), which held a later load in a process under its goal. A
// driver with no such pool treats it as RIG_MEMORY_DEVICE.
inline constexpr rig_memory kMemoryDeviceReused = static_cast<rig_memory>(0x100);

// Memory as the driver sees it. `host` is set where the host addresses the bytes (host, memory device,
// pinned, mapped memory); `address` is what work uses (a CUDA device pointer, a Vulkan buffer's device
// address or 0); `handle` is the driver's own object (VkBuffer, ...). The engine only copies this around.
struct Memory {
  void *host = nullptr;
  uint64_t address = 0;
  uintptr_t handle = 0;
  uintptr_t extra = 0;  // a second driver word (Vulkan: its VkDeviceMemory)
  size_t length = 0;
  // Host memory a driver reaches through registrations (core/range_table.h) that met inside it: where one
  // registration ends and the next begins, as ascending offsets from `host` (the engine's storage, alive
  // as long as this memory). A copy through such memory is split there, one registration a copy.
  const size_t *seams = nullptr;
  size_t seam_count = 0;
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
