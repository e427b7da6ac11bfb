// CudaDevice's memory: allocations, host mappings (map_host), peer access (map_peer), host copies, and
// the HostRegistration calls the engine's range table makes.
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "core/error.h"
#include "drivers/cuda/device.h"

namespace rig::cuda {
namespace {

// Pairs of GPUs (by device ordinal) whose peer access rig enabled: cuCtxEnablePeerAccess once per pair.
struct PeerPairs {
  std::mutex lock;
  std::set<std::pair<unsigned, unsigned>> enabled;
};

PeerPairs &peer_pairs() {
  static PeerPairs &p = *new PeerPairs;
  return p;
}

}  // namespace

rig_status CudaDevice::allocate(size_t length, rig_memory kind, Memory *out) {
  if (lost()) return lose("");
  Memory m;
  m.length = length;
  if (length == 0) {  // the driver refuses empty allocations; nothing to allocate
    m.handle = static_cast<uintptr_t>(MemoryTag::none);
    *out = m;
    return RIG_OK;
  }
  CurrentContext current(api_, gpu_.context);
  switch (kind) {
    case RIG_MEMORY_DEVICE: {
      cu::DevicePtr address = 0;
      cu::Result r = api_.cuMemAlloc(&address, length);
      if (r != cu::SUCCESS) return fault("cuMemAlloc", r, false);
      m.address = address;
      m.handle = static_cast<uintptr_t>(MemoryTag::device);
      break;
    }
    case RIG_MEMORY_PINNED:
    case RIG_MEMORY_MAPPED: {
      // MAPPED is pinned host memory mapped into the device: CUDA GPUs have no device memory the host
      // addresses directly (rig.h: "else PINNED"). PORTABLE: other CUDA devices borrow it in place.
      void *host = nullptr;
      cu::Result r = api_.cuMemHostAlloc(&host, length, cu::MEMHOSTALLOC_PORTABLE | cu::MEMHOSTALLOC_DEVICEMAP);
      if (r != cu::SUCCESS) return fault("cuMemHostAlloc", r, false);
      cu::DevicePtr address = 0;
      r = api_.cuMemHostGetDevicePointer(&address, host, 0);
      if (r != cu::SUCCESS) {
        api_.cuMemFreeHost(host);
        return fault("cuMemHostGetDevicePointer", r, false);
      }
      m.address = address;
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

void CudaDevice::free(const Memory &memory) noexcept {
  CurrentContext current(api_, gpu_.context);
  switch (static_cast<MemoryTag>(memory.handle)) {
    case MemoryTag::device:
      api_.cuMemFree(memory.address);
      break;
    case MemoryTag::pinned:
      api_.cuMemFreeHost(memory.host);
      break;
    default:
      break;  // none; mappings go through unmap()
  }
}

rig_status CudaDevice::map_host(void *host, size_t length, bool, Memory *out) {
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
  // call, with register_range below: only the device's address of the bytes is found here.
  CurrentContext current(api_, gpu_.context);
  cu::DevicePtr address = 0;
  cu::Result r = api_.cuMemHostGetDevicePointer(&address, host, 0);
  if (r != cu::SUCCESS)
    return fail(RIG_UNMAPPABLE, "%s registered %p but cuMemHostGetDevicePointer failed: %s", info_.name.c_str(), host,
                error_name(r));
  m.address = address;
  *out = m;
  return RIG_OK;
}

rig_status CudaDevice::map_peer(DriverDevice &owner, const Memory &memory, Memory *out) {
  if (lost()) return lose("");
  auto *o = dynamic_cast<CudaDevice *>(&owner);
  if (!o)
    return fail(RIG_UNMAPPABLE, "%s cannot map memory of %s: not a CUDA device", info_.name.c_str(),
                owner.info().name.c_str());
  Memory m = memory;
  m.handle = static_cast<uintptr_t>(MemoryTag::peer_mapping);
  auto tag = static_cast<MemoryTag>(memory.handle);
  // Same GPU (one primary context), or host memory registered or allocated PORTABLE: usable in place.
  if (&o->gpu_ == &gpu_ || tag == MemoryTag::pinned || tag == MemoryTag::host_mapping || tag == MemoryTag::none) {
    *out = m;
    return RIG_OK;
  }
  auto key = std::make_pair(gpu_.ordinal, o->gpu_.ordinal);
  auto &pairs = peer_pairs();
  std::lock_guard hold(pairs.lock);
  if (!pairs.enabled.count(key)) {
    int can = 0;
    cu::Result r = api_.cuDeviceCanAccessPeer(&can, gpu_.device, o->gpu_.device);
    if (r != cu::SUCCESS)
      return fail(RIG_UNMAPPABLE, "cuDeviceCanAccessPeer(%s, %s) failed: %s", info_.name.c_str(),
                  o->info_.name.c_str(), error_name(r));
    if (!can)
      return fail(RIG_UNMAPPABLE, "%s has no peer access to %s's memory", info_.name.c_str(), o->info_.name.c_str());
    CurrentContext current(api_, gpu_.context);
    r = api_.cuCtxEnablePeerAccess(o->gpu_.context, 0);
    if (r != cu::SUCCESS && r != cu::ERROR_PEER_ACCESS_ALREADY_ENABLED)
      return fail(RIG_UNMAPPABLE, "cuCtxEnablePeerAccess(%s -> %s) refused: %s", info_.name.c_str(),
                  o->info_.name.c_str(), error_name(r));
    pairs.enabled.insert(key);
  }
  *out = m;  // unified addressing: the owner's device pointer is valid here once peer access is on
  return RIG_OK;
}

// Peer access stays on; host mappings' registrations are the engine's range table's to release.
void CudaDevice::unmap(const Memory &) noexcept {}

rig_status CudaDevice::copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {  // pinned or registered host memory: the engine waited, the bytes are the host's
    std::memcpy(dst, static_cast<const char *>(memory.host) + offset, length);
    return RIG_OK;
  }
  if (lost()) return lose("");
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuMemcpyDtoH(dst, memory.address + offset, length);
  if (r != cu::SUCCESS) return fault("cuMemcpyDtoH", r, false);
  return RIG_OK;
}

rig_status CudaDevice::copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {
    std::memcpy(static_cast<char *>(memory.host) + offset, src, length);
    return RIG_OK;
  }
  if (lost()) return lose("");
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuMemcpyHtoD(memory.address + offset, src, length);
  if (r != cu::SUCCESS) return fault("cuMemcpyHtoD", r, false);
  if (rig_status s = finish_legacy_copy(); s != RIG_OK) return s;
  return RIG_OK;
}

// From pageable memory cuMemcpyHtoD returns once the bytes are staged, before the DMA lands, and rig's
// streams (non-blocking) do not synchronize with the legacy stream the copy used: without this, the next
// work on a rig stream can read the old bytes (seen on an H200 by the cross-device kernel chain test).
// Only the legacy stream is waited for, not the context: other devices' work on this GPU goes on.
rig_status CudaDevice::finish_legacy_copy() {
  cu::Result r = api_.cuStreamSynchronize(nullptr);
  if (r != cu::SUCCESS) return fault("cuStreamSynchronize(legacy stream) after cuMemcpyHtoD", r, false);
  return RIG_OK;
}

// HostRegistration ---------------------------------------------------------------------------------------

rig_status CudaDevice::register_range(void *host, size_t length, bool read_only) {
  if (lost()) return lose("");
  if (attribute(cu::ATTR_HOST_REGISTER_SUPPORTED) == 0)
    return fail(RIG_UNMAPPABLE, "%s does not support host memory registration", info_.name.c_str());
  // The read-only flag only where attribute 113 says the device takes it (else the driver answers 801).
  unsigned flags = cu::MEMHOSTREGISTER_PORTABLE | cu::MEMHOSTREGISTER_DEVICEMAP;
  if (read_only && read_only_supported() == 1) flags |= cu::MEMHOSTREGISTER_READ_ONLY;
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuMemHostRegister(host, length, flags);
  if (r == cu::SUCCESS) return RIG_OK;
  if (r == cu::ERROR_OUT_OF_MEMORY)
    return fail(RIG_OUT_OF_MEMORY, "cuMemHostRegister(%p, %zu): %s", host, length, error_name(r));
  if (is_sticky(r)) return fault("cuMemHostRegister", r, false);
  return fail(RIG_UNMAPPABLE, "cuMemHostRegister(%p, %zu, flags 0x%x) refused: %s", host, length, flags,
              error_name(r));
}

rig_status CudaDevice::unregister_range(void *host) {
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuMemHostUnregister(host);
  if (r == cu::SUCCESS) return RIG_OK;
  return fail(status_of(r), "cuMemHostUnregister(%p) failed: %s", host, error_name(r));
}

rig_status CudaDevice::alloc_pinned(size_t length, void **out) {
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuMemHostAlloc(out, length ? length : 1, cu::MEMHOSTALLOC_PORTABLE);
  if (r != cu::SUCCESS) return fail(status_of(r), "cuMemHostAlloc(%zu) failed: %s", length, error_name(r));
  return RIG_OK;
}

rig_status CudaDevice::free_pinned(void *host) {
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuMemFreeHost(host);
  if (r != cu::SUCCESS) return fail(status_of(r), "cuMemFreeHost(%p) failed: %s", host, error_name(r));
  return RIG_OK;
}

rig_status CudaDevice::upload(const void *host, const Memory &device, size_t offset, size_t length) {
  if (length == 0) return RIG_OK;
  if (offset > device.length || length > device.length - offset)
    return fail(RIG_INVALID_ARGUMENT, "upload of %zu bytes at %zu leaves the %zu-byte buffer", length, offset,
                device.length);
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuMemcpyHtoD(device.address + offset, host, length);
  if (r != cu::SUCCESS) return fault("cuMemcpyHtoD", r, false);
  // The upload is over when the bytes are on the device (a speed measured without this flatters pageable
  // memory, and a kernel launched next would race the DMA).
  return finish_legacy_copy();
}

rig_status CudaDevice::download(const Memory &device, size_t offset, void *host, size_t length) {
  if (length == 0) return RIG_OK;
  if (offset > device.length || length > device.length - offset)
    return fail(RIG_INVALID_ARGUMENT, "download of %zu bytes at %zu leaves the %zu-byte buffer", length, offset,
                device.length);
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuMemcpyDtoH(host, device.address + offset, length);
  if (r != cu::SUCCESS) return fault("cuMemcpyDtoH", r, false);
  return RIG_OK;
}

}  // namespace rig::cuda
