// HipDevice's memory: allocations, host mappings (map_host), peer access (map_peer), host copies, and
// the HostRegistration calls the engine's range table makes. Every registration goes through that
// process-wide table (core/range_table.h) first: HIP answers success for a range registered twice or
// overlapping another (docs/mapped.md), so such a range must never reach hipHostRegister.
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "core/error.h"
#include "drivers/hip/device.h"

namespace rig::hip {
namespace {

// Pairs of GPUs (by ordinal) whose peer access rig enabled: hipDeviceEnablePeerAccess once per pair.
struct PeerPairs {
  std::mutex lock;
  std::set<std::pair<int, int>> enabled;
};

PeerPairs &peer_pairs() {
  static PeerPairs &p = *new PeerPairs;
  return p;
}

uint64_t address_of(const void *p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }
void *pointer_of(uint64_t a) { return reinterpret_cast<void *>(static_cast<uintptr_t>(a)); }

}  // namespace

rig_status HipDevice::allocate(size_t length, rig_memory kind, Memory *out) {
  if (lost()) return lose("");
  Memory m;
  m.length = length;
  if (length == 0) {  // nothing to allocate
    m.handle = static_cast<uintptr_t>(MemoryTag::none);
    *out = m;
    return RIG_OK;
  }
  CurrentDevice current(api_, gpu_.ordinal);
  switch (kind) {
    case RIG_MEMORY_DEVICE: {
      void *p = nullptr;
      Error r = api_.hipMalloc(&p, length);
      if (r != SUCCESS) return fault("hipMalloc", r, false);
      m.address = address_of(p);
      m.handle = static_cast<uintptr_t>(MemoryTag::device);
      break;
    }
    case RIG_MEMORY_PINNED:
    case RIG_MEMORY_MAPPED: {
      // MAPPED is pinned host memory mapped into the device (rig.h: "else PINNED"): rig does not ask for
      // large-BAR device memory the host addresses. PORTABLE: other HIP devices borrow it in place.
      void *host = nullptr;
      Error r = api_.hipHostMalloc(&host, length, HOST_MALLOC_PORTABLE | HOST_MALLOC_MAPPED);
      if (r != SUCCESS) return fault("hipHostMalloc", r, false);
      void *device = nullptr;
      r = api_.hipHostGetDevicePointer(&device, host, 0);
      if (r != SUCCESS) {
        api_.hipHostFree(host);
        return fault("hipHostGetDevicePointer", r, false);
      }
      m.address = address_of(device);
      m.host = host;
      m.handle = static_cast<uintptr_t>(MemoryTag::pinned);
      break;
    }
    default:
      return fail(RIG_INVALID_ARGUMENT, "unknown memory kind %d", static_cast<int>(kind));
  }
  *out = m;
  return RIG_OK;
}

void HipDevice::free(const Memory &memory) noexcept {
  CurrentDevice current(api_, gpu_.ordinal);
  switch (static_cast<MemoryTag>(memory.handle)) {
    case MemoryTag::device:
      api_.hipFree(pointer_of(memory.address));
      break;
    case MemoryTag::pinned:
      api_.hipHostFree(memory.host);
      break;
    default:
      break;  // none; mappings go through unmap()
  }
}

rig_status HipDevice::map_host(void *host, size_t length, bool, Memory *out) {
  if (lost()) return lose("");
  Memory m;
  m.host = host;
  m.length = length;
  m.handle = static_cast<uintptr_t>(MemoryTag::host_mapping);
  if (length == 0) {
    m.handle = static_cast<uintptr_t>(MemoryTag::none);
    *out = m;
    return RIG_OK;
  }
  // The engine registered the enclosing pages through its range table (core/range_table.h) before this
  // call, with register_range below. Kernels and copies get the device's address of the registered
  // bytes, never the raw host pointer.
  CurrentDevice current(api_, gpu_.ordinal);
  void *device = nullptr;
  Error r = api_.hipHostGetDevicePointer(&device, host, 0);
  if (r != SUCCESS)
    return fail(RIG_UNMAPPABLE, "%s registered %p but hipHostGetDevicePointer failed: %s", info_.name.c_str(), host,
                error_name(r));
  m.address = address_of(device);
  *out = m;
  return RIG_OK;
}

rig_status HipDevice::map_peer(DriverDevice &owner, const Memory &memory, Memory *out) {
  if (lost()) return lose("");
  auto *o = dynamic_cast<HipDevice *>(&owner);
  if (!o)
    return fail(RIG_UNMAPPABLE, "%s cannot map memory of %s: not a HIP device", info_.name.c_str(),
                owner.info().name.c_str());
  Memory m = memory;
  m.handle = static_cast<uintptr_t>(MemoryTag::peer_mapping);
  auto tag = static_cast<MemoryTag>(memory.handle);
  // Same GPU, or host memory registered or allocated PORTABLE: usable in place.
  if (&o->gpu_ == &gpu_ || tag == MemoryTag::pinned || tag == MemoryTag::host_mapping || tag == MemoryTag::none) {
    *out = m;
    return RIG_OK;
  }
  auto key = std::make_pair(gpu_.ordinal, o->gpu_.ordinal);
  auto &pairs = peer_pairs();
  std::lock_guard hold(pairs.lock);
  if (!pairs.enabled.count(key)) {
    int can = 0;
    Error r = api_.hipDeviceCanAccessPeer(&can, gpu_.ordinal, o->gpu_.ordinal);
    if (r != SUCCESS)
      return fail(RIG_UNMAPPABLE, "hipDeviceCanAccessPeer(%s, %s) failed: %s", info_.name.c_str(),
                  o->info_.name.c_str(), error_name(r));
    if (!can)
      return fail(RIG_UNMAPPABLE, "%s has no peer access to %s's memory", info_.name.c_str(), o->info_.name.c_str());
    CurrentDevice current(api_, gpu_.ordinal);
    r = api_.hipDeviceEnablePeerAccess(o->gpu_.ordinal, 0);
    if (r != SUCCESS && r != ERROR_PEER_ACCESS_ALREADY_ENABLED)
      return fail(RIG_UNMAPPABLE, "hipDeviceEnablePeerAccess(%s -> %s) refused: %s", info_.name.c_str(),
                  o->info_.name.c_str(), error_name(r));
    pairs.enabled.insert(key);
  }
  *out = m;  // unified addressing: the owner's device pointer is valid here once peer access is on
  return RIG_OK;
}

// Peer access stays on; host mappings' registrations are the engine's range table's to release.
void HipDevice::unmap(const Memory &) noexcept {}

rig_status HipDevice::copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {  // pinned or registered host memory: the engine waited, the bytes are the host's
    std::memcpy(dst, static_cast<const char *>(memory.host) + offset, length);
    return RIG_OK;
  }
  if (lost()) return lose("");
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipMemcpyDtoH(dst, pointer_of(memory.address + offset), length);
  if (r != SUCCESS) return fault("hipMemcpyDtoH", r, false);
  return RIG_OK;
}

rig_status HipDevice::copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {
    std::memcpy(static_cast<char *>(memory.host) + offset, src, length);
    return RIG_OK;
  }
  if (lost()) return lose("");
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipMemcpyHtoD(pointer_of(memory.address + offset), src, length);
  if (r != SUCCESS) return fault("hipMemcpyHtoD", r, false);
  return RIG_OK;
}

// HostRegistration ---------------------------------------------------------------------------------------

rig_status HipDevice::register_range(void *host, size_t length, bool read_only) {
  if (lost()) return lose("");
  if (attribute(ATTR_HOST_REGISTER_SUPPORTED) == 0)  // -1: an older runtime without the attribute
    return fail(RIG_UNMAPPABLE, "%s does not support host memory registration", info_.name.c_str());
  unsigned flags = HOST_REGISTER_PORTABLE | HOST_REGISTER_MAPPED | (read_only ? HOST_REGISTER_READ_ONLY : 0u);
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipHostRegister(host, length, flags);
  if (r == SUCCESS) return RIG_OK;
  if (r == ERROR_OUT_OF_MEMORY)
    return fail(RIG_OUT_OF_MEMORY, "hipHostRegister(%p, %zu) on %s: %s", host, length, info_.name.c_str(),
                error_name(r));
  if (is_sticky(r)) return fault("hipHostRegister", r, false);
  return fail(RIG_UNMAPPABLE, "%s cannot map host memory at %p: hipHostRegister(%zu bytes, flags 0x%x) refused: %s",
              info_.name.c_str(), host, length, flags, error_name(r));
}

rig_status HipDevice::unregister_range(void *host) {
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipHostUnregister(host);
  if (r == SUCCESS) return RIG_OK;
  return fail(status_of(r), "hipHostUnregister(%p) on %s failed: %s", host, info_.name.c_str(), error_name(r));
}

rig_status HipDevice::alloc_pinned(size_t length, void **out) {
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipHostMalloc(out, length ? length : 1, HOST_MALLOC_PORTABLE);
  if (r != SUCCESS) return fail(status_of(r), "hipHostMalloc(%zu) failed: %s", length, error_name(r));
  return RIG_OK;
}

rig_status HipDevice::free_pinned(void *host) {
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipHostFree(host);
  if (r != SUCCESS) return fail(status_of(r), "hipHostFree(%p) failed: %s", host, error_name(r));
  return RIG_OK;
}

rig_status HipDevice::upload(const void *host, const Memory &device, size_t offset, size_t length) {
  if (length == 0) return RIG_OK;
  if (offset > device.length || length > device.length - offset)
    return fail(RIG_INVALID_ARGUMENT, "upload of %zu bytes at %zu leaves the %zu-byte buffer", length, offset,
                device.length);
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipMemcpyHtoD(pointer_of(device.address + offset), host, length);
  if (r != SUCCESS) return fault("hipMemcpyHtoD", r, false);
  return RIG_OK;
}

rig_status HipDevice::download(const Memory &device, size_t offset, void *host, size_t length) {
  if (length == 0) return RIG_OK;
  if (offset > device.length || length > device.length - offset)
    return fail(RIG_INVALID_ARGUMENT, "download of %zu bytes at %zu leaves the %zu-byte buffer", length, offset,
                device.length);
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipMemcpyDtoH(host, pointer_of(device.address + offset), length);
  if (r != SUCCESS) return fault("hipMemcpyDtoH", r, false);
  return RIG_OK;
}

}  // namespace rig::hip
