#include "core/buffer.h"

#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "core/error.h"

namespace rig {
namespace {

std::shared_ptr<Buffer> make_buffer(std::shared_ptr<Allocation> a, Device &d, const Memory *m, size_t offset,
                                    size_t length) {
  auto b = std::make_shared<Buffer>();
  b->allocation = std::move(a);
  b->device = &d;
  b->memory = m;
  b->offset = offset;
  b->length = length;
  if (!d.is_host()) b->use = b->allocation->stamps().use_word(d);
  return b;
}

const char *name_of(const Buffer &b) { return b.device->info().name.c_str(); }

// A device whose buffers are handed to the host's code refuses work once lost or released.
rig_status check_device(const Device &d) {
  if (d.released()) return fail(RIG_LOST, "%s was released", d.info().name.c_str());
  if (d.lost()) return fail(RIG_LOST, "%s lost: %s", d.info().name.c_str(), d.lost_reason());
  return RIG_OK;
}

// The driver's memory of `kind` as an allocation that owns it: once made, the allocation's end frees it
// (so a later throw, a buffer's, frees it once); before, a failure here frees it. `what` names the call.
rig_status allocate_owned(Device &device, size_t length, rig_memory kind, const char *what,
                          std::shared_ptr<Allocation> *out) {
  if (rig_status s = check_device(device); s != RIG_OK) return s;
  Memory m;
  if (rig_status s = device.driver().allocate(length, kind, &m); s != RIG_OK) return s;
  try {
    *out = std::make_shared<Allocation>(device, m, length, false, true);
  } catch (const std::bad_alloc &) {
    device.driver().free(m);
    return fail(RIG_OUT_OF_MEMORY, "%s: out of host memory", what);
  }
  return RIG_OK;
}

}  // namespace

void *Buffer::host() const {
  void *base = allocation->base().host;
  return base ? static_cast<char *>(base) + offset : nullptr;
}

rig_status buffer_create(Device &device, size_t length, rig_memory kind, std::shared_ptr<Buffer> *out) {
  if (kind != RIG_MEMORY_DEVICE && kind != RIG_MEMORY_PINNED && kind != RIG_MEMORY_MAPPED && kind != kMemoryDeviceReused)
    return fail(RIG_INVALID_ARGUMENT, "create: unknown memory kind %d", static_cast<int>(kind));
  std::shared_ptr<Allocation> a;
  if (rig_status s = allocate_owned(device, length, kind, "create", &a); s != RIG_OK) return s;
  *out = make_buffer(std::move(a), device, nullptr, 0, length);
  (*out)->memory = &(*out)->allocation->base();
  return RIG_OK;
}

rig_status allocation_create(Device &device, size_t length, rig_memory kind, std::shared_ptr<Allocation> *out) {
  if (kind != RIG_MEMORY_DEVICE && kind != kMemoryDeviceReused)
    return fail(RIG_INVALID_ARGUMENT, "allocation_create: memory kind %d is not device memory", static_cast<int>(kind));
  return allocate_owned(device, length, kind, "allocation_create", out);
}

rig_status buffer_part(const std::shared_ptr<Allocation> &whole, size_t start, size_t length,
                       std::shared_ptr<Buffer> *out) {
  if (whole->is_part() || !in_range(whole->length(), start, length))
    return fail(RIG_INVALID_ARGUMENT, "part: [%zu, +%zu) is not a part of an allocation of %zu bytes", start, length,
                whole->length());
  Device &owner = whole->owner();
  if (rig_status s = check_device(owner); s != RIG_OK) return s;
  auto a = std::make_shared<Allocation>(whole, length);
  *out = make_buffer(std::move(a), owner, nullptr, start, length);
  (*out)->memory = &(*out)->allocation->base();
  return RIG_OK;
}

rig_status buffer_wrap(Device &host, void *data, size_t length, rig_access access, rig_release_fn release,
                       void *user, std::shared_ptr<Buffer> *out) {
  if (!data && length) return fail(RIG_INVALID_ARGUMENT, "wrap: null data for %zu bytes", length);
  if (access != RIG_ACCESS_READ && access != RIG_ACCESS_WRITE && access != RIG_ACCESS_READ_WRITE)
    return fail(RIG_INVALID_ARGUMENT, "wrap: unknown access %d", static_cast<int>(access));
  if (reinterpret_cast<uintptr_t>(data) + length < reinterpret_cast<uintptr_t>(data))
    return fail(RIG_INVALID_ARGUMENT, "wrap: %zu bytes at %p wrap around the address space", length, data);
  auto a = std::make_shared<Allocation>(host, data, length, access == RIG_ACCESS_READ, release, user);
  *out = make_buffer(std::move(a), host, nullptr, 0, length);
  (*out)->memory = &(*out)->allocation->base();
  return RIG_OK;
}

rig_status buffer_view(const Buffer &b, size_t offset, size_t length, std::shared_ptr<Buffer> *out) {
  if (!in_range(b.length, offset, length))
    return fail(RIG_INVALID_ARGUMENT, "view: [%zu, +%zu) leaves the buffer of %zu bytes on %s", offset, length,
                b.length, name_of(b));
  auto v = std::make_shared<Buffer>(b);
  v->offset = b.offset + offset;
  v->length = length;
  *out = std::move(v);
  return RIG_OK;
}

rig_status buffer_borrow(Device &device, const Buffer &b, std::shared_ptr<Buffer> *out) {
  if (rig_status s = check_device(device); s != RIG_OK) return s;
  if (device.is_host()) {
    if (!b.allocation->base().host)
      return fail(RIG_UNMAPPABLE, "borrow: the host does not address %s's device memory", name_of(b));
    *out = make_buffer(b.allocation, device, &b.allocation->base(), b.offset, b.length);
    return RIG_OK;
  }
  const Memory *m = nullptr;
  if (rig_status s = b.allocation->memory_for(device, &m); s != RIG_OK) {
    if (s == RIG_UNMAPPABLE) return s;
    return fail(RIG_UNMAPPABLE, "borrow: %s cannot map memory of %s: %s", device.info().name.c_str(),
                b.allocation->owner().info().name.c_str(), last_error());
  }
  *out = make_buffer(b.allocation, device, m, b.offset, b.length);
  return RIG_OK;
}

// Runs `visit` on the buffer's bytes: in place where the host addresses them, else on a host copy made by
// the owner's driver, written back afterwards when `write_back` (the callback may change only some bytes,
// so the copy starts from what the buffer holds).
template <class Visit>
rig_status with_host_bytes(const Buffer &b, const char *what, bool write_back, Visit visit) {
  if (void *h = b.host()) {
    visit(h);
    return RIG_OK;
  }
  std::vector<char> staged;
  try {
    staged.resize(b.length);
  } catch (const std::bad_alloc &) {
    return fail(RIG_OUT_OF_MEMORY, "%s: no host memory to stage %zu bytes", what, b.length);
  }
  DriverDevice &owner = b.allocation->owner().driver();
  const Memory &base = b.allocation->base();
  if (rig_status s = owner.copy_to_host(base, b.offset, staged.data(), b.length); s != RIG_OK) return s;
  visit(staged.data());
  return write_back ? owner.copy_from_host(base, b.offset, staged.data(), b.length) : RIG_OK;
}

rig_status buffer_read(const Buffer &b, rig_read_fn fn, void *user) {
  if (rig_status s = b.allocation->wait_last_write(); s != RIG_OK) return s;  // rule 5
  return with_host_bytes(b, "read", false, [&](void *bytes) { fn(user, bytes, b.length); });
}

rig_status buffer_write(const Buffer &b, rig_write_fn fn, void *user) {
  if (b.allocation->read_only()) return fail(RIG_INVALID_ARGUMENT, "write: the buffer wraps read-only memory");
  if (rig_status s = b.allocation->wait_all_uses(); s != RIG_OK) return s;  // rule 6
  return with_host_bytes(b, "write", true, [&](void *bytes) { fn(user, bytes, b.length); });
}

rig_status buffer_read_into(const Buffer &b, size_t offset, void *dst, size_t length) {
  if (!in_range(b.length, offset, length))
    return fail(RIG_INVALID_ARGUMENT, "read_into: [%zu, +%zu) leaves the buffer of %zu bytes", offset, length,
                b.length);
  if (!dst && length) return fail(RIG_INVALID_ARGUMENT, "read_into: null destination");
  if (rig_status s = b.allocation->wait_last_write(); s != RIG_OK) return s;  // rule 5
  if (!length) return RIG_OK;
  if (void *h = b.host()) {
    std::memcpy(dst, static_cast<char *>(h) + offset, length);
    return RIG_OK;
  }
  return b.allocation->owner().driver().copy_to_host(b.allocation->base(), b.offset + offset, dst, length);
}

rig_status buffer_write_from(const Buffer &b, size_t offset, const void *src, size_t length) {
  if (!in_range(b.length, offset, length))
    return fail(RIG_INVALID_ARGUMENT, "write_from: [%zu, +%zu) leaves the buffer of %zu bytes", offset, length,
                b.length);
  if (!src && length) return fail(RIG_INVALID_ARGUMENT, "write_from: null source");
  if (b.allocation->read_only()) return fail(RIG_INVALID_ARGUMENT, "write_from: the buffer wraps read-only memory");
  if (rig_status s = b.allocation->wait_all_uses(); s != RIG_OK) return s;  // rule 6
  if (!length) return RIG_OK;
  if (void *h = b.host()) {
    std::memcpy(static_cast<char *>(h) + offset, src, length);
    return RIG_OK;
  }
  return b.allocation->owner().driver().copy_from_host(b.allocation->base(), b.offset + offset, src, length);
}

rig_status buffer_export(const Buffer &b, void **data) {
  void *h = b.host();
  if (!h && b.length)
    return fail(RIG_UNSUPPORTED, "export: the host does not address %s's device memory",
                b.allocation->owner().info().name.c_str());
  // Ordered only as of the call: every use so far is reached; later host accesses follow nothing.
  if (rig_status s = b.allocation->wait_all_uses(); s != RIG_OK) return s;
  *data = h;
  return RIG_OK;
}

}  // namespace rig
