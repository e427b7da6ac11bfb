// rig.h's buffers: create, wrap, view, borrow, host access, release.
#include "capi/api.h"
#include "core/driver_memory.h"
#include "core/registry.h"

using namespace rig;
using namespace rig::capi;

extern "C" {

rig_status rig_buffer_create(rig_device device, size_t length, rig_memory memory, rig_buffer *out) {
  return entry("buffer_create", [&] {
    if (memory == kMemoryDeviceReused)  // rig's own kind (core/driver_memory.h), never a caller's: as unknown
      return fail(RIG_INVALID_ARGUMENT, "create: unknown memory kind %d", static_cast<int>(memory));
    auto d = pin_device(device, "buffer_create");
    if (!d) return RIG_INVALID_HANDLE;
    RIG_REQUIRE_OUT(out, "buffer_create");
    std::shared_ptr<Buffer> b;
    if (rig_status s = buffer_create(*d, length, memory, &b); s != RIG_OK) return s;
    return give(Kind::buffer, std::move(b), out);
  });
}

rig_status rig_buffer_wrap(void *data, size_t length, rig_access access, rig_release_fn release, void *user,
                           rig_buffer *out) {
  return entry("buffer_wrap", [&] {
    RIG_REQUIRE_OUT(out, "buffer_wrap");
    std::shared_ptr<Buffer> b;
    if (rig_status s = buffer_wrap(host_device(), data, length, access, release, user, &b); s != RIG_OK) return s;
    return give(Kind::buffer, std::move(b), out);
  });
}

rig_status rig_buffer_view(rig_buffer buffer, size_t offset, size_t length, rig_buffer *out) {
  return entry("buffer_view", [&] {
    RIG_REQUIRE_OUT(out, "buffer_view");
    auto b = pin_buffer(buffer, "buffer_view");
    if (!b) return RIG_INVALID_HANDLE;
    std::shared_ptr<Buffer> v;
    if (rig_status s = buffer_view(*b, offset, length, &v); s != RIG_OK) return s;
    return give(Kind::buffer, std::move(v), out);
  });
}

rig_status rig_buffer_borrow(rig_device device, rig_buffer buffer, rig_buffer *out) {
  return entry("buffer_borrow", [&] {
    RIG_REQUIRE_OUT(out, "buffer_borrow");
    auto d = pin_device(device, "buffer_borrow");
    if (!d) return RIG_INVALID_HANDLE;
    auto b = pin_buffer(buffer, "buffer_borrow");
    if (!b) return RIG_INVALID_HANDLE;
    std::shared_ptr<Buffer> v;
    if (rig_status s = buffer_borrow(*d, *b, &v); s != RIG_OK) return s;
    return give(Kind::buffer, std::move(v), out);
  });
}

rig_status rig_buffer_length(rig_buffer buffer, size_t *length) {
  return entry("buffer_length", [&] {
    RIG_REQUIRE_OUT(length, "buffer_length");
    auto b = pin_buffer(buffer, "buffer_length");
    if (!b) return RIG_INVALID_HANDLE;
    *length = b->length;
    return RIG_OK;
  });
}

rig_status rig_buffer_device(rig_buffer buffer, rig_device *device) {
  return entry("buffer_device", [&] {
    RIG_REQUIRE_OUT(device, "buffer_device");
    auto b = pin_buffer(buffer, "buffer_device");
    if (!b) return RIG_INVALID_HANDLE;
    return device_handle(*b->device, device);
  });
}

rig_status rig_buffer_read(rig_buffer buffer, rig_read_fn fn, void *user) {
  return entry("buffer_read", [&] {
    if (!fn) return fail(RIG_INVALID_ARGUMENT, "buffer_read: null callback");
    auto b = pin_buffer(buffer, "buffer_read");
    if (!b) return RIG_INVALID_HANDLE;
    return buffer_read(*b, fn, user);
  });
}

rig_status rig_buffer_write(rig_buffer buffer, rig_write_fn fn, void *user) {
  return entry("buffer_write", [&] {
    if (!fn) return fail(RIG_INVALID_ARGUMENT, "buffer_write: null callback");
    auto b = pin_buffer(buffer, "buffer_write");
    if (!b) return RIG_INVALID_HANDLE;
    return buffer_write(*b, fn, user);
  });
}

rig_status rig_buffer_read_into(rig_buffer buffer, size_t offset, void *dst, size_t length) {
  return entry("buffer_read_into", [&] {
    auto b = pin_buffer(buffer, "buffer_read_into");
    if (!b) return RIG_INVALID_HANDLE;
    return buffer_read_into(*b, offset, dst, length);
  });
}

rig_status rig_buffer_write_from(rig_buffer buffer, size_t offset, const void *src, size_t length) {
  return entry("buffer_write_from", [&] {
    auto b = pin_buffer(buffer, "buffer_write_from");
    if (!b) return RIG_INVALID_HANDLE;
    return buffer_write_from(*b, offset, src, length);
  });
}

rig_status rig_buffer_export(rig_buffer buffer, void **data) {
  return entry("buffer_export", [&] {
    RIG_REQUIRE_OUT(data, "buffer_export");
    auto b = pin_buffer(buffer, "buffer_export");
    if (!b) return RIG_INVALID_HANDLE;
    return buffer_export(*b, data);
  });
}

rig_status rig_buffer_release(rig_buffer buffer) {
  return entry("buffer_release", [&] { return remove(word_of(buffer), Kind::buffer, "buffer_release"); });
}

}  // extern "C"
