// Buffers and points across processes of one host: rig's header around the API's own 64-byte handle, so
// that an importer can say what is wrong with bytes it was sent before the driver sees them
// (rig_interop.h). The API's calls are the driver's (NativeHandles: stream/ipc.cpp).
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

#include "core/error.h"
#include "core/submit.h"
#include "interop/operations.h"

namespace rig::interop {
namespace {

constexpr char kMagic[8] = {'r', 'i', 'g', '-', 'i', 'p', 'c', '1'};  // the last byte: the layout's version

enum class What : uint32_t { memory = 1, point = 2 };

const char *named(What w) { return w == What::memory ? "a buffer's" : "a point's"; }

// The handle's bytes, in the exporter's byte order (both processes are on one host).
struct Wire {
  char magic[8];
  What what;
  uint32_t pid;     // the exporting process
  char api[8];      // the exporting API ("CUDA", "HIP"), zero-padded
  uint64_t serial;  // a point's export in its process (its close finds the event by it); 0 for memory
  uint64_t offset;  // memory: the buffer's bytes within the exported allocation
  uint64_t length;
  IpcBytes native;  // the API's handle
};
static_assert(sizeof(Wire) <= RIG_IPC_HANDLE_SIZE);

Wire new_wire(What what, const char *api) {
  Wire w{};
  std::memcpy(w.magic, kMagic, sizeof kMagic);
  w.what = what;
  w.pid = static_cast<uint32_t>(getpid());
  std::strncpy(w.api, api, sizeof w.api - 1);
  return w;
}

void put(const Wire &w, rig_ipc_handle *out) {
  std::memset(out->bytes, 0, sizeof out->bytes);
  std::memcpy(out->bytes, &w, sizeof w);
}

// The handle's header, checked to be rig's and of `want` (`call` names the call in the messages).
rig_status read(const rig_ipc_handle &h, What want, const char *call, Wire *out) {
  std::memcpy(out, h.bytes, sizeof *out);
  if (std::memcmp(out->magic, kMagic, sizeof kMagic) != 0)
    return fail(RIG_INVALID_ARGUMENT, "%s: the bytes are no rig interprocess handle (rig_buffer_export_ipc and "
                "rig_point_export_ipc write them; these are garbage, or of another rig version)", call);
  if (out->what != What::memory && out->what != What::point)
    return fail(RIG_INVALID_ARGUMENT, "%s: the handle names an unknown kind %u (damaged bytes?)", call,
                static_cast<unsigned>(out->what));
  if (out->what != want)
    return fail(RIG_INVALID_ARGUMENT, "%s: the handle is %s, not %s", call, named(out->what), named(want));
  out->api[sizeof out->api - 1] = 0;
  return RIG_OK;
}

// An import's checks beyond the header: the API is the device's, the exporter another process.
rig_status importable(const Wire &w, NativeHandles &n, const Device &device, const char *call) {
  if (std::strcmp(w.api, n.api()) != 0)
    return fail(RIG_INVALID_ARGUMENT, "%s: the handle is %s's; %s is a %s device", call, w.api,
                device.info().name.c_str(), n.api());
  if (w.pid == static_cast<uint32_t>(getpid()))
    return fail(RIG_INVALID_ARGUMENT, "%s: the handle was exported by this process (%u), which the API cannot "
                "open: use the buffer or the point itself", call, w.pid);
  return check_open(device, call);
}

// The interprocess events this process exported and has not closed, by serial.
struct Exports {
  std::mutex lock;
  uint64_t next = 1;
  std::map<uint64_t, std::pair<Device *, void *>> events;
};

Exports &exports() {
  static Exports &e = *new Exports;  // never destroyed: an export may be closed while the process exits
  return e;
}

NativeHandles *native_for_ipc(Device &d, bool memory, const char *call) {
  NativeHandles *n = native_of(d, call);
  if (n && !(memory ? n->can_ipc_memory() : n->can_ipc_event())) {
    fail(RIG_UNSUPPORTED, "%s: %s's library has no interprocess %s calls (%s)", call, d.info().name.c_str(),
         memory ? "memory" : "event", memory ? "cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle"
                                             : "cuIpcGetEventHandle, cuIpcOpenEventHandle");
    return nullptr;
  }
  return n;
}

// What an import starts with: the device's IPC calls, and the handle's header checked to be of `want`
// and openable by `device`.
rig_status open_wire(Device &device, const rig_ipc_handle &handle, What want, const char *call, NativeHandles **n,
                     Wire *w) {
  *n = native_for_ipc(device, want == What::memory, call);
  if (!*n) return RIG_UNSUPPORTED;
  if (rig_status s = read(handle, want, call, w); s != RIG_OK) return s;
  return importable(*w, **n, device, call);
}

}  // namespace

rig_status export_memory_ipc(const Buffer &buffer, rig_ipc_handle *out) {
  const char *call = "buffer_export_ipc";
  Device &owner = buffer.allocation->owner();
  NativeHandles *n = native_for_ipc(owner, true, call);
  if (!n) return RIG_UNSUPPORTED;
  if (rig_status s = check_open(owner, call); s != RIG_OK) return s;
  Wire w = new_wire(What::memory, n->api());
  if (rig_status s = n->export_memory_ipc(buffer.allocation->base(), &w.native); s != RIG_OK) return s;
  w.offset = buffer.offset;
  w.length = buffer.length;
  put(w, out);
  return RIG_OK;
}

rig_status import_memory_ipc(Device &device, const rig_ipc_handle &handle, std::shared_ptr<Buffer> *out) {
  const char *call = "buffer_import_ipc";
  NativeHandles *n = nullptr;
  Wire w;
  if (rig_status s = open_wire(device, handle, What::memory, call, &n, &w); s != RIG_OK) return s;
  if (w.offset + w.length < w.offset || w.length == 0)
    return fail(RIG_INVALID_ARGUMENT, "%s: the handle's range (%llu bytes at %llu) is empty or wraps (damaged bytes?)",
                call, static_cast<unsigned long long>(w.length), static_cast<unsigned long long>(w.offset));
  Memory m;
  if (rig_status s = n->import_memory_ipc(w.native, w.offset, w.length, &m); s != RIG_OK) return s;
  // Owned: the driver's free() closes the mapping once every use is reached (rule 6).
  *out = buffer_over(device, std::make_shared<Allocation>(device, m, w.length, false, true));
  return RIG_OK;
}

rig_status export_point_ipc(uint64_t point, rig_ipc_handle *out) {
  const char *call = "point_export_ipc";
  Device *p = nullptr;
  NativeHandles *n = nullptr;
  bool reached = false;
  if (rig_status s = exportable(point, call, &p, &n, &reached); s != RIG_OK) return s;
  if (!native_for_ipc(*p, false, call)) return RIG_UNSUPPORTED;
  Wire w = new_wire(What::point, n->api());
  void *event = nullptr;
  if (rig_status s = n->export_event_ipc(point_value(point), reached, &event, &w.native); s != RIG_OK) return s;
  Exports &e = exports();
  {
    std::lock_guard hold(e.lock);
    w.serial = e.next++;
    e.events[w.serial] = {p, event};
  }
  put(w, out);
  return RIG_OK;
}

rig_status close_point_ipc(const rig_ipc_handle &handle) {
  const char *call = "point_export_ipc_close";
  Wire w;
  if (rig_status s = read(handle, What::point, call, &w); s != RIG_OK) return s;
  if (w.pid != static_cast<uint32_t>(getpid()))
    return fail(RIG_INVALID_ARGUMENT, "%s: process %u exported this handle: only the exporter closes it", call, w.pid);
  std::pair<Device *, void *> found;
  {
    Exports &e = exports();
    std::lock_guard hold(e.lock);
    auto it = e.events.find(w.serial);
    if (it == e.events.end())
      return fail(RIG_NOT_FOUND, "%s: export %llu of this process is closed already", call,
                  static_cast<unsigned long long>(w.serial));
    found = it->second;
    e.events.erase(it);
  }
  found.first->driver().native()->destroy_event(found.second);
  return RIG_OK;
}

rig_status import_point_ipc(Device &device, const rig_ipc_handle &handle, uint64_t *point) {
  const char *call = "point_import_ipc";
  NativeHandles *n = nullptr;
  Wire w;
  if (rig_status s = open_wire(device, handle, What::point, call, &n, &w); s != RIG_OK) return s;
  return hand_over_empty(device, [&](uint64_t value) { return n->queue_wait_event_ipc(w.native, value); }, point);
}

}  // namespace rig::interop
