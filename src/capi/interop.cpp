// The C face of rig_interop.h: translation only (src/interop holds the logic).
#include <rig_interop.h>

#include "capi/api.h"
#include "interop/operations.h"

using namespace rig;
using namespace rig::capi;

extern "C" {

rig_status rig_interop_supported(rig_device device, rig_device producer, rig_interop_kind kind, int *supported) {
  return entry("interop_supported", [&] {
    RIG_REQUIRE_OUT(supported, "interop_supported");
    auto d = pin_device(device, "interop_supported");
    if (!d) return RIG_INVALID_HANDLE;
    if (!producer) return interop::supported(*d, nullptr, kind, supported);
    auto p = pin_device(producer, "interop_supported");
    if (!p) return RIG_INVALID_HANDLE;
    return interop::supported(*d, &*p, kind, supported);
  });
}

rig_status rig_stream_wait_point(rig_device device, void *native_stream, rig_point point) {
  return entry("stream_wait_point", [&] {
    auto d = pin_device(device, "stream_wait_point");
    if (!d) return RIG_INVALID_HANDLE;
    return interop::stream_wait_point(*d, native_stream, point);
  });
}

rig_status rig_stream_point(rig_device device, void *native_stream, rig_point *point) {
  return entry("stream_point", [&] {
    RIG_REQUIRE_OUT(point, "stream_point");
    auto d = pin_device(device, "stream_point");
    if (!d) return RIG_INVALID_HANDLE;
    return interop::stream_point(*d, native_stream, point);
  });
}

rig_status rig_point_export_event(rig_point point, void **native_event) {
  return entry("point_export_event", [&] {
    RIG_REQUIRE_OUT(native_event, "point_export_event");
    return interop::export_event(point, native_event);
  });
}

rig_status rig_point_import_event(rig_device device, void *native_event, rig_point *point) {
  return entry("point_import_event", [&] {
    RIG_REQUIRE_OUT(point, "point_import_event");
    auto d = pin_device(device, "point_import_event");
    if (!d) return RIG_INVALID_HANDLE;
    return interop::import_event(*d, native_event, point);
  });
}

rig_status rig_point_fd(rig_point point, int *fd) {
  return entry("point_fd", [&] {
    RIG_REQUIRE_OUT(fd, "point_fd");
    return interop::point_fd(point, fd);
  });
}

rig_status rig_buffer_wrap_device(rig_device device, uint64_t address, size_t length, rig_release_fn release,
                                  void *user, rig_buffer *out) {
  return entry("buffer_wrap_device", [&] {
    RIG_REQUIRE_OUT(out, "buffer_wrap_device");
    auto d = pin_device(device, "buffer_wrap_device");
    if (!d) return RIG_INVALID_HANDLE;
    std::shared_ptr<Buffer> b;
    if (rig_status s = interop::wrap_device(*d, address, length, release, user, &b); s != RIG_OK) return s;
    return give(Kind::buffer, std::move(b), out);
  });
}

rig_status rig_buffer_device_address(rig_buffer buffer, uint64_t *address) {
  return entry("buffer_device_address", [&] {
    RIG_REQUIRE_OUT(address, "buffer_device_address");
    auto b = pin_buffer(buffer, "buffer_device_address");
    if (!b) return RIG_INVALID_HANDLE;
    return interop::device_address(*b, address);
  });
}

rig_status rig_buffer_stamp(rig_buffer buffer, rig_point point, rig_access access) {
  return entry("buffer_stamp", [&] {
    auto b = pin_buffer(buffer, "buffer_stamp");
    if (!b) return RIG_INVALID_HANDLE;
    return interop::stamp(*b, point, access);
  });
}

rig_status rig_buffer_last_write(rig_buffer buffer, rig_point *point) {
  return entry("buffer_last_write", [&] {
    RIG_REQUIRE_OUT(point, "buffer_last_write");
    auto b = pin_buffer(buffer, "buffer_last_write");
    if (!b) return RIG_INVALID_HANDLE;
    return interop::last_write(*b, point);
  });
}

rig_status rig_buffer_dlpack_device(rig_buffer buffer, int32_t *device_type, int32_t *device_id) {
  return entry("buffer_dlpack_device", [&] {
    RIG_REQUIRE_OUT(device_type, "buffer_dlpack_device");
    RIG_REQUIRE_OUT(device_id, "buffer_dlpack_device");
    auto b = pin_buffer(buffer, "buffer_dlpack_device");
    if (!b) return RIG_INVALID_HANDLE;
    return interop::dlpack_device(*b, device_type, device_id);
  });
}

rig_status rig_buffer_to_dlpack(rig_buffer buffer, uint8_t code, uint8_t bits, uint16_t lanes,
                                struct DLManagedTensor **out) {
  return entry("buffer_to_dlpack", [&] {
    RIG_REQUIRE_OUT(out, "buffer_to_dlpack");
    auto b = pin_buffer(buffer, "buffer_to_dlpack");
    if (!b) return RIG_INVALID_HANDLE;
    return interop::to_dlpack(*b, code, bits, lanes, out);
  });
}

rig_status rig_buffer_export_ipc(rig_buffer buffer, rig_ipc_handle *out) {
  return entry("buffer_export_ipc", [&] {
    RIG_REQUIRE_OUT(out, "buffer_export_ipc");
    auto b = pin_buffer(buffer, "buffer_export_ipc");
    if (!b) return RIG_INVALID_HANDLE;
    return interop::export_memory_ipc(*b, out);
  });
}

rig_status rig_buffer_import_ipc(rig_device device, const rig_ipc_handle *handle, rig_buffer *out) {
  return entry("buffer_import_ipc", [&] {
    if (!handle) return fail(RIG_INVALID_ARGUMENT, "buffer_import_ipc: null handle");
    RIG_REQUIRE_OUT(out, "buffer_import_ipc");
    auto d = pin_device(device, "buffer_import_ipc");
    if (!d) return RIG_INVALID_HANDLE;
    std::shared_ptr<Buffer> b;
    if (rig_status s = interop::import_memory_ipc(*d, *handle, &b); s != RIG_OK) return s;
    return give(Kind::buffer, std::move(b), out);
  });
}

rig_status rig_point_export_ipc(rig_point point, rig_ipc_handle *out) {
  return entry("point_export_ipc", [&] {
    RIG_REQUIRE_OUT(out, "point_export_ipc");
    return interop::export_point_ipc(point, out);
  });
}

rig_status rig_point_export_ipc_close(const rig_ipc_handle *handle) {
  return entry("point_export_ipc_close", [&] {
    if (!handle) return fail(RIG_INVALID_ARGUMENT, "point_export_ipc_close: null handle");
    return interop::close_point_ipc(*handle);
  });
}

rig_status rig_point_import_ipc(rig_device device, const rig_ipc_handle *handle, rig_point *point) {
  return entry("point_import_ipc", [&] {
    if (!handle) return fail(RIG_INVALID_ARGUMENT, "point_import_ipc: null handle");
    RIG_REQUIRE_OUT(point, "point_import_ipc");
    auto d = pin_device(device, "point_import_ipc");
    if (!d) return RIG_INVALID_HANDLE;
    return interop::import_point_ipc(*d, *handle, point);
  });
}

rig_status rig_buffer_export_fd(rig_buffer buffer, int *fd, size_t *length) {
  return entry("buffer_export_fd", [&] {
    RIG_REQUIRE_OUT(fd, "buffer_export_fd");
    RIG_REQUIRE_OUT(length, "buffer_export_fd");
    auto b = pin_buffer(buffer, "buffer_export_fd");
    if (!b) return RIG_INVALID_HANDLE;
    return interop::export_memory_fd(*b, fd, length);
  });
}

rig_status rig_buffer_import_fd(rig_device device, int fd, size_t length, rig_buffer *out) {
  return entry("buffer_import_fd", [&] {
    RIG_REQUIRE_OUT(out, "buffer_import_fd");
    auto d = pin_device(device, "buffer_import_fd");
    if (!d) return RIG_INVALID_HANDLE;
    std::shared_ptr<Buffer> b;
    if (rig_status s = interop::import_memory_fd(*d, fd, length, &b); s != RIG_OK) return s;
    return give(Kind::buffer, std::move(b), out);
  });
}

rig_status rig_point_export_semaphore_fd(rig_point point, int *fd, uint64_t *value) {
  return entry("point_export_semaphore_fd", [&] {
    RIG_REQUIRE_OUT(fd, "point_export_semaphore_fd");
    RIG_REQUIRE_OUT(value, "point_export_semaphore_fd");
    return interop::export_semaphore_fd(point, fd, value);
  });
}

rig_status rig_point_import_semaphore_fd(rig_device device, int fd, uint64_t value, rig_point *point) {
  return entry("point_import_semaphore_fd", [&] {
    RIG_REQUIRE_OUT(point, "point_import_semaphore_fd");
    auto d = pin_device(device, "point_import_semaphore_fd");
    if (!d) return RIG_INVALID_HANDLE;
    return interop::import_semaphore_fd(*d, fd, value, point);
  });
}

rig_status rig_point_export_sync_fd(rig_point point, int *fd) {
  return entry("point_export_sync_fd", [&] {
    RIG_REQUIRE_OUT(fd, "point_export_sync_fd");
    return interop::export_sync_fd(point, fd);
  });
}

rig_status rig_point_import_sync_fd(rig_device device, int fd, rig_point *point) {
  return entry("point_import_sync_fd", [&] {
    RIG_REQUIRE_OUT(point, "point_import_sync_fd");
    auto d = pin_device(device, "point_import_sync_fd");
    if (!d) return RIG_INVALID_HANDLE;
    return interop::import_sync_fd(*d, fd, point);
  });
}

}  // extern "C"
