// CudaDevice's memory: allocations, host registration (map_host), peer access (map_peer), host copies, and
// the HostRegistration calls mapped registration makes.
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "core/error.h"
#include "drivers/cuda/device.h"
#include "mapped/range_table.h"

namespace rig::cuda {
namespace {

// Host ranges rig registered for borrows, shared by every CUDA device: registrations are PORTABLE, so one
// serves every context, and a second rig device borrowing the same allocation must reuse it (the driver
// refuses to register a range twice: 712).
struct Registration {
  size_t length;       // registered bytes (whole pages)
  bool read_only;      // registered with the read-only flag
  cu::DevicePtr address;
  unsigned users;
};

struct Registrations {
  std::mutex lock;
  std::map<uintptr_t, Registration> by_base;
};

Registrations &registrations() {
  static Registrations &r = *new Registrations;  // never destroyed: unmaps may run at exit
  return r;
}

// Pairs of GPUs (by device ordinal) whose peer access rig enabled: cuCtxEnablePeerAccess once per pair.
struct PeerPairs {
  std::mutex lock;
  std::set<std::pair<unsigned, unsigned>> enabled;
};

PeerPairs &peer_pairs() {
  static PeerPairs &p = *new PeerPairs;
  return p;
}

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
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

rig_status CudaDevice::map_host(void *host, size_t length, bool read_only, Memory *out) {
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
  auto base = reinterpret_cast<uintptr_t>(host);
  if (base % page_size() != 0)
    return fail(RIG_UNMAPPABLE, "%s cannot map host memory at %p: registration needs page-aligned memory (%zu)",
                info_.name.c_str(), host, page_size());
  if (attribute(cu::ATTR_HOST_REGISTER_SUPPORTED) == 0)
    return fail(RIG_UNMAPPABLE, "%s does not support host memory registration", info_.name.c_str());
  // Whole pages: the driver pins whole pages anyway, and the range table must see what the driver sees.
  size_t pages = (length + page_size() - 1) / page_size() * page_size();
  // The read-only flag where the device supports it (attribute 113); elsewhere the driver refuses it
  // (801), and a read-only mapping registered without it is refused too (the message says why).
  int ro_supported = read_only ? read_only_supported() : 0;
  bool ro_flag = read_only && ro_supported == 1;

  auto &regs = registrations();
  std::lock_guard hold(regs.lock);
  auto it = regs.by_base.find(base);
  if (it != regs.by_base.end()) {
    if (it->second.length != pages || it->second.read_only != ro_flag)
      return fail(RIG_UNMAPPABLE, "%p is already registered by rig for %zu bytes%s", host, it->second.length,
                  it->second.read_only ? ", read-only" : "");
    ++it->second.users;
    m.address = it->second.address;
    *out = m;
    return RIG_OK;
  }
  CurrentContext current(api_, gpu_.context);
  unsigned flags = cu::MEMHOSTREGISTER_PORTABLE | cu::MEMHOSTREGISTER_DEVICEMAP |
                   (ro_flag ? cu::MEMHOSTREGISTER_READ_ONLY : 0u);
  rig_status s = mapped::table_register(host, pages, [&]() -> rig_status {
    cu::Result r = api_.cuMemHostRegister(host, pages, flags);
    if (r == cu::SUCCESS) return RIG_OK;
    if (r == cu::ERROR_OUT_OF_MEMORY)
      return fail(RIG_OUT_OF_MEMORY, "cuMemHostRegister(%p, %zu) on %s: %s", host, pages, info_.name.c_str(),
                  error_name(r));
    return fail(RIG_UNMAPPABLE, "%s cannot map host memory at %p: cuMemHostRegister(%zu bytes, flags 0x%x) refused: %s%s",
                info_.name.c_str(), host, pages, flags, error_name(r),
                read_only && !ro_flag ? " (the device does not register read-only memory: attribute 113 is not 1)"
                                      : "");
  });
  if (s == RIG_BUSY)  // overlaps a range registered elsewhere (mapped registration, or another wrap)
    return fail(RIG_UNMAPPABLE, "%s cannot map host memory at %p: %s", info_.name.c_str(), host, last_error());
  if (s != RIG_OK) return s;
  cu::DevicePtr address = 0;
  cu::Result r = api_.cuMemHostGetDevicePointer(&address, host, 0);
  m.address = address;
  if (r != cu::SUCCESS) {
    mapped::table_unregister(host, [&]() -> rig_status {
      return api_.cuMemHostUnregister(host) == cu::SUCCESS ? RIG_OK : RIG_DRIVER;
    });
    return fail(RIG_UNMAPPABLE, "%s registered %p but cuMemHostGetDevicePointer failed: %s", info_.name.c_str(), host,
                error_name(r));
  }
  regs.by_base.emplace(base, Registration{pages, ro_flag, m.address, 1});
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

void CudaDevice::unmap(const Memory &mapping) noexcept {
  if (static_cast<MemoryTag>(mapping.handle) != MemoryTag::host_mapping) return;  // peer access stays on
  auto base = reinterpret_cast<uintptr_t>(mapping.host);
  auto &regs = registrations();
  std::lock_guard hold(regs.lock);
  auto it = regs.by_base.find(base);
  if (it == regs.by_base.end() || --it->second.users > 0) return;
  regs.by_base.erase(it);
  CurrentContext current(api_, gpu_.context);
  // A failed release leaves the range listed in the table (it may still be registered with the driver
  // and must not be unmapped); nothing else can be done from here.
  mapped::table_unregister(mapping.host, [&]() -> rig_status {
    cu::Result r = api_.cuMemHostUnregister(mapping.host);
    if (r == cu::SUCCESS) return RIG_OK;
    return fail(RIG_DRIVER, "cuMemHostUnregister(%p) failed: %s", mapping.host, error_name(r));
  });
}

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
