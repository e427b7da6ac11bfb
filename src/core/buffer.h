// A buffer: a range of one allocation as one device sees it. Views share the device and memory; borrows
// are buffers of another device over the same allocation. Host access (read, write, export) lives here:
// it is where rules 5 and 6 apply to the host.
#pragma once

#include <rig.h>

#include <atomic>
#include <memory>

#include "core/allocation.h"

namespace rig {

struct Buffer {
  std::shared_ptr<Allocation> allocation;
  Device *device = nullptr;
  const Memory *memory = nullptr;    // the device's memory for the allocation (base or mapping)
  size_t offset = 0;                 // within the allocation's base memory (a part's from its start)
  size_t length = 0;
  std::atomic<uint64_t> *use = nullptr;  // the device's last-use word; null for the host (never stamped)

  Binding binding(rig_access access) const { return {memory, offset, length, access}; }
  // The host's address of the bytes, or null where the host does not address the memory.
  void *host() const;
};

rig_status buffer_create(Device &device, size_t length, rig_memory kind, std::shared_ptr<Buffer> *out);
// An allocation of `length` bytes of device memory (RIG_MEMORY_DEVICE, or kMemoryDeviceReused) on
// `device` to make parts of (buffer_part) and no buffer of its own. The driver's status where the
// allocation fails. May block for the driver's allocation, holding no rig lock.
rig_status allocation_create(Device &device, size_t length, rig_memory kind, std::shared_ptr<Allocation> *out);
// A buffer over bytes [start, start + length) of `whole` (made by allocation_create) as a part of it
// (core/allocation.h): stamps of its own, the whole's memory. RIG_INVALID_ARGUMENT outside the whole.
rig_status buffer_part(const std::shared_ptr<Allocation> &whole, size_t start, size_t length,
                       std::shared_ptr<Buffer> *out);
rig_status buffer_wrap(Device &host, void *data, size_t length, rig_access access, rig_release_fn release,
                       void *user, std::shared_ptr<Buffer> *out);
rig_status buffer_view(const Buffer &buffer, size_t offset, size_t length, std::shared_ptr<Buffer> *out);
rig_status buffer_borrow(Device &device, const Buffer &buffer, std::shared_ptr<Buffer> *out);

rig_status buffer_read(const Buffer &buffer, rig_read_fn fn, void *user);
rig_status buffer_write(const Buffer &buffer, rig_write_fn fn, void *user);
rig_status buffer_read_into(const Buffer &buffer, size_t offset, void *dst, size_t length);
rig_status buffer_write_from(const Buffer &buffer, size_t offset, const void *src, size_t length);
rig_status buffer_export(const Buffer &buffer, void **data);

// True where [offset, offset+length) lies inside a buffer of `size` bytes (no overflow).
inline bool in_range(size_t size, size_t offset, size_t length) { return offset <= size && length <= size - offset; }

}  // namespace rig
