// rig_interop.h's logic (the C face, capi/interop.cpp, only translates): native streams and events
// (streams.cpp), host file descriptors (fd.cpp), memory made elsewhere, stamps and DLPack (memory.cpp).
// Everything native goes through the driver's NativeHandles (core/native.h); nothing here knows CUDA.
#pragma once

#include <rig.h>
#include <rig_interop.h>

#include <cstdint>
#include <memory>

#include "core/buffer.h"
#include "core/device.h"

namespace rig::interop {

// streams.cpp
rig_status supported(Device &device, Device *producer, rig_interop_kind kind, int *out);
rig_status stream_wait_point(Device &device, void *stream, uint64_t point);
rig_status stream_point(Device &device, void *stream, uint64_t *point);
rig_status export_event(uint64_t point, void **event);
rig_status import_event(Device &device, void *event, uint64_t *point);

// fd.cpp
rig_status point_fd(uint64_t point, int *fd);

// memory.cpp
rig_status wrap_device(Device &device, uint64_t address, size_t length, rig_release_fn release, void *user,
                       std::shared_ptr<Buffer> *out);
// A buffer of `device` over the whole of a new allocation (memory made elsewhere, or another process's).
std::shared_ptr<Buffer> buffer_over(Device &device, std::shared_ptr<Allocation> allocation);
rig_status device_address(const Buffer &buffer, uint64_t *address);
rig_status stamp(const Buffer &buffer, uint64_t point, rig_access access);
rig_status last_write(const Buffer &buffer, uint64_t *point);
rig_status dlpack_device(const Buffer &buffer, int32_t *type, int32_t *id);
rig_status to_dlpack(const Buffer &buffer, uint8_t code, uint8_t bits, uint16_t lanes, DLManagedTensor **out);

// memory_fd.cpp
rig_status export_memory_fd(const Buffer &buffer, int *fd, size_t *length);
rig_status import_memory_fd(Device &device, int fd, size_t length, std::shared_ptr<Buffer> *out);

// semaphore_fd.cpp
rig_status export_semaphore_fd(uint64_t point, int *fd, uint64_t *value);
rig_status export_sync_fd(uint64_t point, int *fd);
rig_status import_semaphore_fd(Device &device, int fd, uint64_t value, uint64_t *point);
rig_status import_sync_fd(Device &device, int fd, uint64_t *point);

// descriptor.cpp: a checked duplicate of the caller's `fd` for a driver to import (`what` it should be,
// for the message): RIG_INVALID_ARGUMENT for a descriptor not open here, a pipe or a socket. After a
// refused import, drop_refused(mine) closes the duplicate unless the driver did.
rig_status duplicate_for_driver(int fd, const char *call, const char *what, int *mine);
void drop_refused(int mine);

// ipc.cpp
rig_status export_memory_ipc(const Buffer &buffer, rig_ipc_handle *out);
rig_status import_memory_ipc(Device &device, const rig_ipc_handle &handle, std::shared_ptr<Buffer> *out);
rig_status export_point_ipc(uint64_t point, rig_ipc_handle *out);
rig_status close_point_ipc(const rig_ipc_handle &handle);
rig_status import_point_ipc(Device &device, const rig_ipc_handle &handle, uint64_t *point);

// RIG_LOST (with the message) for a released or lost device, else RIG_OK.
rig_status check_open(const Device &d, const char *what);
// The device of a point to export as a native event (`what` names the call), its native handles, and
// whether the value is reached: the point committed, RIG_INVALID_ARGUMENT for the point 0, RIG_UNSUPPORTED
// for a device with no native events, RIG_LOST where its device was lost short of it.
rig_status exportable(uint64_t point, const char *what, Device **device, NativeHandles **native, bool *reached);
// exportable's steps, for exports of other kinds: the point's device (RIG_INVALID_ARGUMENT for the point 0,
// resolve's statuses), then its value committed (RIG_LOST where the device was lost short of it).
rig_status exported_device(uint64_t point, const char *what, Device **out);
rig_status commit_for_export(Device &device, uint64_t value, bool *reached);
// The device's native handles, or null with RIG_UNSUPPORTED's message (`what` names the call).
NativeHandles *native_of(Device &d, const char *what);

// A submitted point's device: RIG_NOT_FOUND for an index no device has, RIG_INVALID_ARGUMENT for a value
// past its device's submitted (`what` names the call in the message). The point must not be 0.
rig_status resolve(uint64_t point, const char *what, Device **out);

}  // namespace rig::interop
