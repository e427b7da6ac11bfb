// StreamDevice's memory: allocations, host mappings (map_host), peer access (map_peer), host copies, and the
// HostRegistration calls the engine's range table makes. Every registration goes through that process-wide
// table (core/range_table.h) first: HIP answers success for a range registered twice or overlapping another
// (docs/mapped.md), so such a range must never reach the library.
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "core/error.h"
#include "drivers/stream/device.h"

namespace rig::stream {
namespace {

// Pairs of GPUs whose peer access rig enabled: enable_peer_access once per pair (a Gpu is one family's).
struct PeerPairs {
  std::mutex lock;
  std::set<std::pair<const Gpu *, const Gpu *>> enabled;
};

PeerPairs &peer_pairs() {
  static PeerPairs &p = *new PeerPairs;
  return p;
}

}  // namespace

Result StreamDevice::mem_alloc_or_reclaim(size_t length, DevicePtr *address) {
  Result r = calls_.mem_alloc(address, length);
  // What the GPU's reuse pools keep is the first thing given back when memory runs out.
  if (r == ERROR_OUT_OF_MEMORY && reclaim_for_allocation()) r = calls_.mem_alloc(address, length);
  return r;
}

rig_status StreamDevice::allocate(size_t length, rig_memory kind, Memory *out) {
  if (lost()) return lose("");
  Memory m;
  m.length = length;
  if (length == 0) {  // the driver refuses empty allocations; nothing to allocate
    m.handle = static_cast<uintptr_t>(MemoryTag::none);
    *out = m;
    return RIG_OK;
  }
  Current current(gpu_);
  if (kind == kMemoryDeviceReused) {
    if (reuse_pool_ready()) {
      if (rig_status s = allocate_reused(length, &m); s != RIG_OK) return s;
      *out = m;
      return RIG_OK;
    }
    kind = RIG_MEMORY_DEVICE;
  }
  switch (kind) {
    case RIG_MEMORY_DEVICE: {
      DevicePtr address = 0;
      if (Result r = mem_alloc_or_reclaim(length, &address); r != SUCCESS)
        return fault(family_.names.mem_alloc, r, false);
      m.address = address;
      m.handle = static_cast<uintptr_t>(MemoryTag::device);
      break;
    }
    case RIG_MEMORY_PINNED:
    case RIG_MEMORY_MAPPED: {
      // MAPPED is pinned host memory mapped into the device (rig.h: "else PINNED"): CUDA GPUs have no
      // device memory the host addresses directly, and rig asks HIP for no large-BAR memory. PORTABLE:
      // other devices of the family borrow it in place.
      void *host = nullptr;
      Result r = calls_.host_alloc(&host, length, HOST_ALLOC_PORTABLE | HOST_ALLOC_MAPPED);
      if (r != SUCCESS) return fault(family_.names.host_alloc, r, false);
      DevicePtr address = 0;
      r = calls_.host_device_pointer(&address, host, 0);
      if (r != SUCCESS) {
        calls_.host_free(host);
        return fault(family_.names.host_device_pointer, r, false);
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

void StreamDevice::free(const Memory &memory) noexcept {
  Current current(gpu_);
  switch (static_cast<MemoryTag>(memory.handle)) {
    case MemoryTag::device:
      calls_.mem_free(memory.address);
      break;
    case MemoryTag::reused:
      free_reused(memory);
      break;
    case MemoryTag::pinned:
      calls_.host_free(memory.host);
      break;
    case MemoryTag::ipc_mapping:  // the exporter's memory stays its own: only our mapping goes
      calls_.ipc_close_memory(static_cast<DevicePtr>(memory.extra));
      break;
    default:
      break;  // none; mappings go through unmap()
  }
}

rig_status StreamDevice::map_host(void *host, size_t length, bool, Memory *out) {
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
  // call, with register_range below: only the device's address of the bytes is found here. Kernels and
  // copies get that address, never the raw host pointer.
  Current current(gpu_);
  DevicePtr address = 0, last = 0;
  Result r = calls_.host_device_pointer(&address, host, 0);
  if (r == SUCCESS) r = calls_.host_device_pointer(&last, static_cast<char *>(host) + length - 1, 0);
  if (r != SUCCESS)
    return fail(RIG_UNMAPPABLE, "%s registered %p but %s failed: %s", info_.name.c_str(), host,
                family_.names.host_device_pointer, family_.error_name(r));
  // The range may span registrations (the table registers only pages not registered yet): the device
  // must see it as one range for work to use one address.
  if (last - address != length - 1)
    return fail(RIG_UNMAPPABLE, "%s: the registered pages of [%p, +%zu) are not contiguous on the device",
                info_.name.c_str(), host, length);
  m.address = address;
  *out = m;
  return RIG_OK;
}

rig_status StreamDevice::map_peer(DriverDevice &owner, const Memory &memory, Memory *out) {
  if (lost()) return lose("");
  StreamDevice *o = of_family(owner);
  if (!o)
    return fail(RIG_UNMAPPABLE, "%s cannot map memory of %s: not a %s device", info_.name.c_str(),
                owner.info().name.c_str(), family_.framework);
  Memory m = memory;
  m.handle = static_cast<uintptr_t>(MemoryTag::peer_mapping);
  auto tag = static_cast<MemoryTag>(memory.handle);
  // Same GPU (one primary context), or host memory registered or allocated PORTABLE: usable in place.
  if (&o->gpu_ == &gpu_ || tag == MemoryTag::pinned || tag == MemoryTag::host_mapping || tag == MemoryTag::none) {
    *out = m;
    return RIG_OK;
  }
  auto key = std::make_pair(&gpu_, &o->gpu_);
  auto &pairs = peer_pairs();
  std::lock_guard hold(pairs.lock);
  if (!pairs.enabled.count(key)) {
    int can = 0;
    Result r = calls_.can_access_peer(&can, gpu_.device, o->gpu_.device);
    if (r != SUCCESS)
      return fail(RIG_UNMAPPABLE, "%s(%s, %s) failed: %s", family_.names.can_access_peer, info_.name.c_str(),
                  o->info_.name.c_str(), family_.error_name(r));
    if (!can)
      return fail(RIG_UNMAPPABLE, "%s has no peer access to %s's memory", info_.name.c_str(), o->info_.name.c_str());
    Current current(gpu_);
    r = calls_.enable_peer_access(o->gpu_.context, 0);
    if (r != SUCCESS && r != ERROR_PEER_ACCESS_ALREADY_ENABLED)
      return fail(RIG_UNMAPPABLE, "%s(%s -> %s) refused: %s", family_.names.enable_peer_access, info_.name.c_str(),
                  o->info_.name.c_str(), family_.error_name(r));
    pairs.enabled.insert(key);
  }
  *out = m;  // unified addressing: the owner's device pointer is valid here once peer access is on
  return RIG_OK;
}

// Peer access stays on; host mappings' registrations are the engine's range table's to release.
void StreamDevice::unmap(const Memory &) noexcept {}

rig_status StreamDevice::copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {  // pinned or registered host memory: the engine waited, the bytes are the host's
    std::memcpy(dst, static_cast<const char *>(memory.host) + offset, length);
    return RIG_OK;
  }
  if (lost()) return lose("");
  Current current(gpu_);
  Result r = calls_.copy_to_host(dst, memory.address + offset, length);
  if (r != SUCCESS) return fault(family_.names.copy_to_host, r, false);
  return RIG_OK;
}

rig_status StreamDevice::copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {
    std::memcpy(static_cast<char *>(memory.host) + offset, src, length);
    return RIG_OK;
  }
  if (lost()) return lose("");
  Current current(gpu_);
  Result r = calls_.copy_to_device(memory.address + offset, src, length);
  if (r != SUCCESS) return fault(family_.names.copy_to_device, r, false);
  if (rig_status s = finish_legacy_copy(); s != RIG_OK) return s;
  return RIG_OK;
}

// CUDA: from pageable memory cuMemcpyHtoD returns once the bytes are staged, before the DMA lands, and rig's
// streams (non-blocking) do not synchronize with the legacy stream the copy used: without this, the next
// work on a rig stream can read the old bytes (seen on a real GPU by the cross-device kernel chain test).
// Only the legacy stream is waited for, not the context: other devices' work on this GPU goes on.
rig_status StreamDevice::finish_legacy_copy() {
  if (!family_.copies_finish_on_legacy_stream) return RIG_OK;
  Result r = calls_.stream_synchronize(nullptr);
  if (r != SUCCESS) return fault("the legacy stream's synchronisation after a host-to-device copy", r, false);
  return RIG_OK;
}

// HostRegistration ---------------------------------------------------------------------------------------

rig_status StreamDevice::register_range(void *host, size_t length, bool read_only) {
  if (lost()) return lose("");
  if (attribute(family_.attributes.host_register_supported) == 0)  // -1: unknown (older HIP runtimes)
    return fail(RIG_UNMAPPABLE, "%s does not support host memory registration", info_.name.c_str());
  // The read-only flag only where the device takes it (CUDA: attribute 113; elsewhere the driver answers
  // 801, and the message says why).
  unsigned flags = HOST_REGISTER_PORTABLE | HOST_REGISTER_MAPPED;
  bool ro_flag = read_only && read_only_supported() == 1;
  if (ro_flag) flags |= HOST_REGISTER_READ_ONLY;
  Current current(gpu_);
  Result r = calls_.host_register(host, length, flags);
  if (r == SUCCESS) return RIG_OK;
  const char *call = family_.names.host_register;
  if (r == ERROR_OUT_OF_MEMORY)
    return fail(RIG_OUT_OF_MEMORY, "%s(%p, %zu) on %s: %s", call, host, length, info_.name.c_str(),
                family_.error_name(r));
  if (family_.is_sticky(r)) return fault(call, r, false);
  return fail(RIG_UNMAPPABLE, "%s cannot map host memory at %p: %s(%zu bytes, flags 0x%x) refused: %s%s",
              info_.name.c_str(), host, call, length, flags, family_.error_name(r),
              read_only && !ro_flag ? " (the device does not register read-only memory: attribute 113 is not 1)"
                                    : "");
}

rig_status StreamDevice::unregister_range(void *host) {
  Current current(gpu_);
  Result r = calls_.host_unregister(host);
  if (r == SUCCESS) return RIG_OK;
  return fail(status_of(family_, r), "%s(%p) on %s failed: %s", family_.names.host_unregister, host,
              info_.name.c_str(), family_.error_name(r));
}

rig_status StreamDevice::alloc_pinned(size_t length, void **out) {
  Current current(gpu_);
  Result r = calls_.host_alloc(out, length ? length : 1, HOST_ALLOC_PORTABLE);
  if (r != SUCCESS)
    return fail(status_of(family_, r), "%s(%zu) failed: %s", family_.names.host_alloc, length, family_.error_name(r));
  return RIG_OK;
}

rig_status StreamDevice::free_pinned(void *host) {
  Current current(gpu_);
  Result r = calls_.host_free(host);
  if (r != SUCCESS)
    return fail(status_of(family_, r), "%s(%p) failed: %s", family_.names.host_free, host, family_.error_name(r));
  return RIG_OK;
}

rig_status StreamDevice::upload(const void *host, const Memory &device, size_t offset, size_t length) {
  if (length == 0) return RIG_OK;
  if (offset > device.length || length > device.length - offset)
    return fail(RIG_INVALID_ARGUMENT, "upload of %zu bytes at %zu leaves the %zu-byte buffer", length, offset,
                device.length);
  Current current(gpu_);
  Result r = calls_.copy_to_device(device.address + offset, host, length);
  if (r != SUCCESS) return fault(family_.names.copy_to_device, r, false);
  // The upload is over when the bytes are on the device (a speed measured without this flatters pageable
  // memory, and a kernel launched next would race the DMA).
  return finish_legacy_copy();
}

rig_status StreamDevice::download(const Memory &device, size_t offset, void *host, size_t length) {
  if (length == 0) return RIG_OK;
  if (offset > device.length || length > device.length - offset)
    return fail(RIG_INVALID_ARGUMENT, "download of %zu bytes at %zu leaves the %zu-byte buffer", length, offset,
                device.length);
  Current current(gpu_);
  Result r = calls_.copy_to_host(host, device.address + offset, length);
  if (r != SUCCESS) return fault(family_.names.copy_to_host, r, false);
  return RIG_OK;
}

}  // namespace rig::stream
