// StreamDevice's interprocess handles (core/native.h): device memory and events shared with another
// process of the host through the API's 64-byte handles (cuIpc*, hipIpc*). Call names are CUDA's; HIP's
// are the same calls under hip names (through the family's table).
#include <cstring>

#include "core/error.h"
#include "drivers/stream/device.h"

namespace rig::stream {
namespace {

IpcHandle to_native(const IpcBytes &b) {
  static_assert(sizeof(IpcHandle) == sizeof(IpcBytes));
  IpcHandle h;
  std::memcpy(&h, b.bytes, sizeof h);
  return h;
}

void from_native(const IpcHandle &h, IpcBytes *b) { std::memcpy(b->bytes, &h, sizeof h); }

}  // namespace

rig_status StreamDevice::ipc_refused(const char *call, Result r) const {
  if (family_.is_sticky(r)) return native_failed(call, "another process's handle", r);
  if (r == ERROR_PEER_ACCESS_UNSUPPORTED)  // the one refusal that names the host, not the handle
    return fail(RIG_UNSUPPORTED,
                "%s refused the handle on %s: %s (the memory is on another GPU of the host, which this one cannot "
                "reach as a peer)",
                call, info_.name.c_str(), family_.error_name(r));
  // The driver cannot tell these apart: a handle is bytes, and a stale one looks like any other.
  return fail(RIG_INVALID_ARGUMENT,
              "%s refused the handle on %s: %s (its exporter freed or closed what it names, or exited; or the bytes "
              "are not a %s handle of this kind)",
              call, info_.name.c_str(), family_.error_name(r), family_.framework);
}

rig_status StreamDevice::export_memory_ipc(const Memory &memory, IpcBytes *handle) {
  auto tag = static_cast<MemoryTag>(memory.handle);
  if (tag != MemoryTag::device)
    return fail(RIG_UNSUPPORTED, "%s can share only its device memory with another process (%s)", info_.name.c_str(),
                tag == MemoryTag::ipc_mapping ? "this memory was opened from another process: its exporter shares it"
                : tag == MemoryTag::reused     ? "a loaded tensor's memory comes from the device's reuse pool, which hands "
                                                 "it to a later load: copy it into a buffer of rig_buffer_create"
                : tag == MemoryTag::none       ? "an empty buffer has none"
                                               : "this is host memory");
  if (lost()) return lose("");
  Current current(gpu_);
  IpcHandle h{};
  Result r = calls_.ipc_get_memory(&h, memory.address);
  if (r != SUCCESS) return native_failed(family_.names.ipc_get_memory, info_.name.c_str(), r);
  from_native(h, handle);
  return RIG_OK;
}

rig_status StreamDevice::import_memory_ipc(const IpcBytes &handle, size_t offset, size_t length, Memory *out) {
  if (lost()) return lose("");
  Current current(gpu_);
  DevicePtr base = 0;
  // Lazy peer access: the exporter's memory may be on another GPU of the host.
  Result r = calls_.ipc_open_memory(&base, to_native(handle), family_.ipc_lazy_peer_access);
  if (r != SUCCESS) return ipc_refused(family_.names.ipc_open_memory, r);
  Memory m;
  m.address = base + offset;
  m.extra = static_cast<uintptr_t>(base);
  m.length = length;
  m.handle = static_cast<uintptr_t>(MemoryTag::ipc_mapping);
  *out = m;
  return RIG_OK;
}

rig_status StreamDevice::export_event_ipc(uint64_t value, bool reached, void **event, IpcBytes *handle) {
  (void)value;  // handed over: the stream's tail follows it
  Current current(gpu_);  // cuIpcGetEventHandle answers INVALID_CONTEXT without the event's context current
  Event e = nullptr;
  // CUDA makes interprocess events only without timing.
  if (rig_status s = tail_event(reached, EVENT_DISABLE_TIMING | EVENT_INTERPROCESS, &e); s != RIG_OK) return s;
  IpcHandle h{};
  Result r = calls_.ipc_get_event(&h, e);
  if (r != SUCCESS) {
    calls_.event_destroy(e);
    return native_failed(family_.names.ipc_get_event, info_.name.c_str(), r);
  }
  from_native(h, handle);
  *event = e;
  return RIG_OK;
}

void StreamDevice::destroy_event(void *event) {
  Current current(gpu_);
  calls_.event_destroy(static_cast<Event>(event));
}

rig_status StreamDevice::queue_wait_event_ipc(const IpcBytes &handle, uint64_t value) {
  if (lost()) return lose("");
  Current current(gpu_);
  Event e = nullptr;
  Result r = calls_.ipc_open_event(&e, to_native(handle));
  if (r != SUCCESS) return ipc_refused(family_.names.ipc_open_event, r);
  rig_status s = queue_wait_event(e, value);
  calls_.event_destroy(e);  // the queued wait keeps what it waits for (CUDA's rule)
  return s;
}

}  // namespace rig::stream
