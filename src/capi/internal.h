// What rig's own modules (the loader) ask of the C API beyond rig.h: the same entries, with rig's own
// memory kinds (core/driver_memory.h). Not exported: librig.so's symbols are rig.h's.
#pragma once

#include <rig.h>

namespace rig::capi {

// rig_buffer_create with any memory kind, kMemoryDeviceReused included (the loader's tensors). Its contract
// is rig_buffer_create's: it may block for the driver's allocation, holding no rig lock.
rig_status buffer_create_any(rig_device device, size_t length, rig_memory memory, rig_buffer *out);

}  // namespace rig::capi
