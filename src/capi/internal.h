// What rig's own modules (the loader) ask of the C API beyond rig.h: the same entries, with rig's own
// memory kinds (core/driver_memory.h). Not exported: librig.so's symbols are rig.h's.
#pragma once

#include <rig.h>

#include <memory>

namespace rig {
class Allocation;
}

namespace rig::capi {

// rig_buffer_create with any memory kind, kMemoryDeviceReused included (the loader's tensors). Its contract
// is rig_buffer_create's: it may block for the driver's allocation, holding no rig lock.
rig_status buffer_create_any(rig_device device, size_t length, rig_memory memory, rig_buffer *out);

// Device memory (`memory`: RIG_MEMORY_DEVICE or kMemoryDeviceReused) of `length` bytes on `device` for
// buffers to be parts of (core/buffer.h: allocation_create, buffer_part): one driver allocation for many of
// the loader's tensors, each with stamps of its own. *whole is no handle: the caller holds it while it
// makes parts, each part holds it after. The contract is rig_buffer_create's.
rig_status allocation_create(rig_device device, size_t length, rig_memory memory, std::shared_ptr<Allocation> *whole);
// A buffer handle over bytes [start, start + length) of `whole` as a part of it. Never blocks.
rig_status buffer_create_part(const std::shared_ptr<Allocation> &whole, size_t start, size_t length, rig_buffer *out);

}  // namespace rig::capi
