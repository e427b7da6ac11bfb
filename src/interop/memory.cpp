// Memory made elsewhere as rig buffers, outside work in the stamps, and rig buffers as DLPack tensors.
#include <dlpack/dlpack.h>

#include <new>

#include "core/error.h"
#include "core/registry.h"
#include "core/submit.h"
#include "interop/operations.h"

namespace rig::interop {
namespace {

bool host_memory(const Device &d) { return d.is_host() || d.kind() == RIG_DEVICE_MEMORY; }

// What a DLManagedTensor carries: the tensor, its shape, and the allocation it keeps alive.
struct Exported {
  DLManagedTensor tensor{};
  int64_t shape[1] = {0};
  std::shared_ptr<Allocation> allocation;
};

void delete_exported(DLManagedTensor *t) noexcept { delete static_cast<Exported *>(t->manager_ctx); }

}  // namespace

rig_status wrap_device(Device &device, uint64_t address, size_t length, rig_release_fn release, void *user,
                       std::shared_ptr<Buffer> *out) {
  if (device.released()) return fail(RIG_LOST, "wrap_device: %s was released", device.info().name.c_str());
  if (device.lost()) return device.lost_status();
  if (!address && length) return fail(RIG_INVALID_ARGUMENT, "wrap_device: null address for %zu bytes", length);
  if (address + length < address)
    return fail(RIG_INVALID_ARGUMENT, "wrap_device: %zu bytes at 0x%llx wrap around the address space", length,
                static_cast<unsigned long long>(address));
  Memory m;
  if (NativeHandles *n = device.driver().native()) {
    m = n->foreign_memory(address, length);
  } else if (host_memory(device)) {
    m.host = reinterpret_cast<void *>(address);
    m.address = address;
    m.length = length;
  } else {
    return fail(RIG_UNSUPPORTED, "wrap_device: %s's work addresses memory by no pointer (%s)",
                device.info().name.c_str(), device.info().framework.c_str());
  }
  auto b = buffer_over(device, std::make_shared<Allocation>(device, m, length, false, false));
  b->allocation->on_release(release, user);  // last: a failure above never calls it
  *out = std::move(b);
  return RIG_OK;
}

std::shared_ptr<Buffer> buffer_over(Device &device, std::shared_ptr<Allocation> allocation) {
  auto b = std::make_shared<Buffer>();
  b->length = allocation->length();
  b->allocation = std::move(allocation);
  b->device = &device;
  b->memory = &b->allocation->base();
  if (!device.is_host()) b->use = b->allocation->stamps().use_word(device);
  return b;
}

rig_status device_address(const Buffer &buffer, uint64_t *address) {
  const Device &d = *buffer.device;
  if (host_memory(d)) {
    *address = reinterpret_cast<uintptr_t>(buffer.host());
    return RIG_OK;
  }
  if (!d.driver().native())
    return fail(RIG_UNSUPPORTED, "device_address: %s's work addresses memory by no pointer (%s)",
                d.info().name.c_str(), d.info().framework.c_str());
  *address = buffer.memory->address + buffer.offset;
  return RIG_OK;
}

rig_status stamp(const Buffer &buffer, uint64_t point, rig_access access) {
  if (access != RIG_ACCESS_READ && access != RIG_ACCESS_WRITE && access != RIG_ACCESS_READ_WRITE)
    return fail(RIG_INVALID_ARGUMENT, "buffer_stamp: unknown access %d", static_cast<int>(access));
  if (!point) return fail(RIG_INVALID_ARGUMENT, "buffer_stamp: the point 0 names no work");
  Device *p = nullptr;
  if (rig_status s = resolve(point, "buffer_stamp", &p); s != RIG_OK) return s;
  if (p->is_host()) return fail(RIG_INVALID_ARGUMENT, "buffer_stamp: the host has no points");
  if ((access & RIG_ACCESS_WRITE) && buffer.allocation->read_only())
    return fail(RIG_INVALID_ARGUMENT, "buffer_stamp: a write into read-only memory");
  raise_outside(buffer, *p, point, access & RIG_ACCESS_WRITE);  // under the turn's protocol (core/submit.h)
  return RIG_OK;
}

rig_status last_write(const Buffer &buffer, uint64_t *point) {
  *point = buffer.allocation->stamps().last_write();
  return RIG_OK;
}

rig_status dlpack_device(const Buffer &buffer, int32_t *type, int32_t *id) {
  const Device &d = *buffer.device;
  if (host_memory(d)) {
    *type = kDLCPU;
    *id = 0;
    return RIG_OK;
  }
  NativeHandles *n = d.driver().native();
  if (!n)
    return fail(RIG_UNSUPPORTED, "dlpack: %s (%s) has no DLPack device", d.info().name.c_str(),
                d.info().framework.c_str());
  n->dlpack_device(type, id);
  return RIG_OK;
}

rig_status to_dlpack(const Buffer &buffer, uint8_t code, uint8_t bits, uint16_t lanes, DLManagedTensor **out) {
  int32_t type = 0, id = 0;
  if (rig_status s = dlpack_device(buffer, &type, &id); s != RIG_OK) return s;
  if (bits == 0 || bits % 8 != 0 || lanes == 0)
    return fail(RIG_INVALID_ARGUMENT, "to_dlpack: %u bits x %u lanes is not a whole number of bytes", bits, lanes);
  if (code > kDLComplex)
    return fail(RIG_INVALID_ARGUMENT, "to_dlpack: unknown DLPack type code %u", code);
  size_t element = size_t{bits} / 8 * lanes;
  if (buffer.length % element != 0)
    return fail(RIG_INVALID_ARGUMENT, "to_dlpack: %zu bytes are not a whole number of %zu-byte elements", buffer.length,
                element);
  uint64_t address = 0;
  if (rig_status s = device_address(buffer, &address); s != RIG_OK) return s;
  auto *e = new (std::nothrow) Exported;
  if (!e) return fail(RIG_OUT_OF_MEMORY, "to_dlpack: out of host memory");
  e->allocation = buffer.allocation;
  e->shape[0] = static_cast<int64_t>(buffer.length / element);
  DLTensor &t = e->tensor.dl_tensor;
  t.data = reinterpret_cast<void *>(address);
  t.device = {static_cast<DLDeviceType>(type), id};
  t.ndim = 1;
  t.dtype = {code, bits, lanes};
  t.shape = e->shape;
  t.strides = nullptr;  // compact, row-major
  t.byte_offset = 0;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = delete_exported;
  *out = &e->tensor;
  return RIG_OK;
}

}  // namespace rig::interop
