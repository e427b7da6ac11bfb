// The fake stream library's device memory (tests/doubles/fake_stream, behind the fake libcuda and the fake
// HIP runtime): where its bytes come from and what is in use, within a limit (the device_memory_limit
// switch, the device_bytes counter), the same on either family. The library keeps one in its state.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fake_device_memory {

// A double's device memory: where its bytes come from (the fake libcuda's shared-memory arena, so that an
// IPC handle can name them; the fake HIP runtime's heap) and what is in use, within a limit.
struct DeviceMemory {
  using Obtain = void *(*)(size_t bytes);  // null where the source has no more
  using GiveBack = void (*)(void *p, size_t bytes);
  DeviceMemory(Obtain o, GiveBack g) : obtain(o), give_back(g) {}

  Obtain obtain;
  GiveBack give_back;
  // Device memory in use, every device's: what both fakes report as device_bytes (fakecuda_query,
  // fakehip_query). State, not reset with the doubles' counters.
  std::atomic<long long> device_bytes{0};

  // `bytes` of device memory within `limit` (bytes of every device; 0: no limit), or null where it runs
  // out. Takes no lock.
  void *allocate(size_t bytes, long long limit) {
    if (bytes > (size_t{64} << 30)) return nullptr;
    if (limit > 0 && device_bytes.load() + static_cast<long long>(bytes) > limit) return nullptr;
    void *p = obtain(bytes);
    if (!p) return nullptr;
    device_bytes += static_cast<long long>(bytes);
    std::memset(p, 0xCD, bytes);  // uninitialised device memory is not zero: tests must not rely on it
    return p;
  }

  void release(uintptr_t p, size_t bytes) {
    give_back(reinterpret_cast<void *>(p), bytes);
    device_bytes -= static_cast<long long>(bytes);
  }
};

}  // namespace fake_device_memory
