#include "keep/shared_memory.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/allocation.h"
#include "core/error.h"
#include "interop/operations.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

namespace rig::keep {
namespace {

// A mapping's pages, unmapped by the allocation's release (rig_release_fn's user).
struct Mapping {
  void *host;
  size_t bytes;
};

void unmap(void *user) {
  std::unique_ptr<Mapping> m(static_cast<Mapping *>(user));
  ::munmap(m->host, m->bytes);
}

// An empty tensor still maps a page: every buffer has an address of its own.
size_t mapped_bytes(size_t length) { return length ? length : 1; }

rig_status buffer_over_mapping(Device &device, void *host, size_t length, bool read_only,
                               std::shared_ptr<Buffer> *out) {
  Memory m;
  m.host = host;
  m.address = reinterpret_cast<uintptr_t>(host);
  m.length = length;
  auto mapping = std::make_unique<Mapping>(Mapping{host, mapped_bytes(length)});
  auto allocation = std::make_shared<Allocation>(device, m, length, read_only, false);
  allocation->on_release(unmap, mapping.release());
  *out = interop::buffer_over(device, std::move(allocation));
  return RIG_OK;
}

rig_status check_memory_device(Device &device, const char *call) {
  if (device.kind() != RIG_DEVICE_MEMORY)
    return fail(RIG_UNSUPPORTED, "%s: %s is no memory device (memfd memory is for memory devices)", call,
                device.info().name.c_str());
  return interop::check_open(device, call);
}

}  // namespace

rig_status make_shared_memory(Device &device, size_t length, bool writable, Fd *fd, std::shared_ptr<Buffer> *out) {
  if (rig_status s = check_memory_device(device, "keep")) return s;
  Fd f(::memfd_create("rig-keep", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!f) return fail(RIG_DRIVER, "keep: memfd_create: %s", std::strerror(errno));
  size_t bytes = mapped_bytes(length);
  if (::ftruncate(f.get(), off_t(bytes)) != 0)
    return fail(errno == ENOMEM || errno == ENOSPC ? RIG_OUT_OF_MEMORY : RIG_DRIVER, "keep: %zu bytes of memfd: %s",
                length, std::strerror(errno));
  void *host = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, f.get(), 0);
  if (host == MAP_FAILED) return fail(RIG_OUT_OF_MEMORY, "keep: mapping %zu bytes of memfd: %s", length, std::strerror(errno));
  int seals = F_SEAL_SHRINK | F_SEAL_GROW | (writable ? 0 : F_SEAL_FUTURE_WRITE);
  // Sealed before any other process sees it: no holder can shrink the file under another's mapping.
  if (::fcntl(f.get(), F_ADD_SEALS, seals) != 0 || ::fcntl(f.get(), F_ADD_SEALS, F_SEAL_SEAL) != 0) {
    int e = errno;
    ::munmap(host, bytes);
    return fail(RIG_DRIVER, "keep: sealing the memfd: %s", std::strerror(e));
  }
  rig_status s = buffer_over_mapping(device, host, length, false, out);
  if (s == RIG_OK) *fd = std::move(f);
  return s;
}

rig_status map_shared_memory(Device &device, int fd, size_t length, bool writable, std::shared_ptr<Buffer> *out) {
  if (rig_status s = check_memory_device(device, "attach")) return s;
  int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || !(seals & F_SEAL_SHRINK))
    return fail(RIG_INVALID_ARGUMENT, "attach: the tensor's descriptor is no memfd sealed against shrinking");
  struct stat st;
  if (::fstat(fd, &st) != 0 || uint64_t(st.st_size) < mapped_bytes(length))
    return fail(RIG_INVALID_ARGUMENT, "attach: the tensor's memfd holds fewer than its %zu bytes", length);
  int prot = PROT_READ | (writable ? PROT_WRITE : 0);
  void *host = ::mmap(nullptr, mapped_bytes(length), prot, MAP_SHARED, fd, 0);
  if (host == MAP_FAILED)
    return fail(RIG_INVALID_ARGUMENT, "attach: mapping the tensor's memfd: %s", std::strerror(errno));
  return buffer_over_mapping(device, host, length, !writable, out);
}

}  // namespace rig::keep
