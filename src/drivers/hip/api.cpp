#include "drivers/hip/api.h"

#include <cstdio>
#include <string>

#include "core/error.h"
#include "drivers/common/library.h"
#include "drivers/hip/gpu.h"
#include "drivers/hip/module.h"

namespace rig::hip {
namespace {

using Loaded = common::Loaded<Api>;

// The loaded runtime, for the adapters below (they run only once api() has answered with it).
const Api &loaded() { return *api(); }

void *pointer(stream::DevicePtr a) { return reinterpret_cast<void *>(static_cast<uintptr_t>(a)); }
stream::DevicePtr address(const void *p) { return reinterpret_cast<uintptr_t>(p); }

// Adapters where HIP's signature is not the table's: device ids for contexts, void * device addresses, a
// copy's direction argument, a wait's mask. One call each; the rest of the table is HIP's entry points.
Error get_current(stream::Context *context) {
  DeviceId id = -1;
  Error r = loaded().hipGetDevice(&id);
  *context = r == SUCCESS ? context_of(id) : nullptr;
  return r;
}
Error set_current(stream::Context context) {
  return context ? loaded().hipSetDevice(device_of(context)) : SUCCESS;  // "none": HIP always has one
}
Error enable_peer_access(stream::Context peer, unsigned flags) {
  return loaded().hipDeviceEnablePeerAccess(device_of(peer), flags);
}
Error mem_alloc(stream::DevicePtr *a, size_t bytes) {
  void *p = nullptr;
  Error r = loaded().hipMalloc(&p, bytes);
  *a = address(p);
  return r;
}
Error mem_free(stream::DevicePtr a) { return loaded().hipFree(pointer(a)); }
Error host_device_pointer(stream::DevicePtr *a, void *host, unsigned flags) {
  void *p = nullptr;
  Error r = loaded().hipHostGetDevicePointer(&p, host, flags);
  *a = address(p);
  return r;
}
Error copy_to_device(stream::DevicePtr dst, const void *src, size_t bytes) {
  return loaded().hipMemcpyHtoD(pointer(dst), src, bytes);
}
Error copy_to_host(void *dst, stream::DevicePtr src, size_t bytes) {
  return loaded().hipMemcpyDtoH(dst, pointer(src), bytes);
}
Error copy_async(stream::DevicePtr dst, stream::DevicePtr src, size_t bytes, Stream stream) {
  return loaded().hipMemcpyAsync(pointer(dst), pointer(src), bytes, MEMCPY_DEFAULT, stream);
}
Error fill_async(stream::DevicePtr dst, unsigned char value, size_t bytes, Stream stream) {
  return loaded().hipMemsetD8Async(pointer(dst), value, bytes, stream);
}
Error write_value64(Stream stream, stream::DevicePtr a, uint64_t value, unsigned flags) {
  return loaded().hipStreamWriteValue64(stream, pointer(a), value, flags);
}
Error wait_value64(Stream stream, stream::DevicePtr a, uint64_t value, unsigned flags) {
  return loaded().hipStreamWaitValue64(stream, pointer(a), value, flags, ~uint64_t{0});
}

Error ipc_get_memory(stream::IpcHandle *handle, stream::DevicePtr a) {
  return loaded().hipIpcGetMemHandle(handle, pointer(a));
}
Error ipc_open_memory(stream::DevicePtr *a, stream::IpcHandle handle, unsigned flags) {
  void *p = nullptr;
  Error r = loaded().hipIpcOpenMemHandle(&p, handle, flags);
  *a = address(p);
  return r;
}
Error ipc_close_memory(stream::DevicePtr a) { return loaded().hipIpcCloseMemHandle(pointer(a)); }

void fill_family(Api &a) {
  stream::Family &f = a.family;
  f.prefix = "hip";
  f.framework = "HIP";
  stream::Calls &c = f.calls;
  stream::CallNames &n = f.names;
  // The SAME calls were loaded into the table (resolve_all); the ADAPTED ones are the adapters above.
#define RIG_HIP_NAME(A, field, params, cu, cu_symbol, name, how) \
  n.field = #name;                                               \
  RIG_HIP_FILL_##how(field)
#define RIG_HIP_FILL_SAME(field)
#define RIG_HIP_FILL_ADAPTED(field) c.field = field;
#define RIG_HIP_FILL_NONE(field)
  RIG_STREAM_CALLS(RIG_HIP_NAME, _)
  RIG_STREAM_OPTIONAL_CALLS(RIG_HIP_NAME, _)
#undef RIG_HIP_NAME
#undef RIG_HIP_FILL_SAME
#undef RIG_HIP_FILL_ADAPTED
#undef RIG_HIP_FILL_NONE
  if (!a.hipStreamWriteValue64 || !a.hipStreamWaitValue64) c.write_value64 = c.wait_value64 = nullptr;
  if (!a.hipIpcGetMemHandle || !a.hipIpcOpenMemHandle || !a.hipIpcCloseMemHandle)
    c.ipc_get_memory = nullptr, c.ipc_open_memory = nullptr, c.ipc_close_memory = nullptr;
  // hipHostRegisterReadOnly has no attribute (-1): the runtime answers the registration itself.
  f.attributes = {{ATTR_MAX_BLOCK_DIM_X, ATTR_MAX_BLOCK_DIM_Y, ATTR_MAX_BLOCK_DIM_Z}, {ATTR_MAX_GRID_DIM_X,
                  ATTR_MAX_GRID_DIM_Y, ATTR_MAX_GRID_DIM_Z}, ATTR_MAX_THREADS_PER_BLOCK,
                  ATTR_MAX_SHARED_MEMORY_PER_BLOCK, ATTR_HOST_REGISTER_SUPPORTED, ATTR_INTEGRATED,
                  ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, -1};
  RIG_STREAM_FAMILY_HOOKS(f)
  f.library = "the HIP runtime";
  f.integrated_when_unknown = 1;
  f.formats[0] = f.formats[1] = RIG_MODULE_HIP_CODE_OBJECT;
  f.formats_named = "HIP code objects (RIG_MODULE_HIP_CODE_OBJECT)";
  f.copies_finish_on_legacy_stream = false;
  f.ipc_lazy_peer_access = IPC_MEM_LAZY_ENABLE_PEER_ACCESS;
}

void resolve_all(common::Resolver &entry, Api &api) {
  stream::Calls &c = api.family.calls;
  // hipHostAlloc is the same call under CUDA's name: taken where a runtime no longer exports hipHostMalloc.
  entry.optional("hipHostMalloc", c.host_alloc);
  entry.optional("hipHostAlloc", c.host_alloc);
  // The table's calls whose signature is HIP's, straight into the table; the rest by name into Api.
#define RIG_HIP_RESOLVE(A, field, params, cu, cu_symbol, name, how) RIG_HIP_RESOLVE_##how(field, name)
#define RIG_HIP_RESOLVE_SAME(field, name) entry.required(#name, c.field);
#define RIG_HIP_RESOLVE_ADAPTED(field, name)
  RIG_STREAM_CALLS(RIG_HIP_RESOLVE, _)
#undef RIG_HIP_RESOLVE
#undef RIG_HIP_RESOLVE_SAME
#undef RIG_HIP_RESOLVE_ADAPTED
  // Optional calls of the table: the same, where the runtime has them (null, and unused, where not).
#define RIG_HIP_RESOLVE_OPTIONAL(A, field, params, cu, cu_symbol, name, how) RIG_HIP_RESOLVE_OPTIONAL_##how(field, name)
#define RIG_HIP_RESOLVE_OPTIONAL_SAME(field, name) entry.optional(#name, c.field);
#define RIG_HIP_RESOLVE_OPTIONAL_ADAPTED(field, name)
#define RIG_HIP_RESOLVE_OPTIONAL_NONE(field, name)
  RIG_STREAM_OPTIONAL_CALLS(RIG_HIP_RESOLVE_OPTIONAL, _)
#undef RIG_HIP_RESOLVE_OPTIONAL
#undef RIG_HIP_RESOLVE_OPTIONAL_SAME
#undef RIG_HIP_RESOLVE_OPTIONAL_ADAPTED
#undef RIG_HIP_RESOLVE_OPTIONAL_NONE
  RIG_HIP_ENTRY_POINTS(RIG_RESOLVE_REQUIRED)
  RIG_HIP_OPTIONAL_ENTRY_POINTS(RIG_RESOLVE_OPTIONAL)
}

bool init(Api &a, std::string *why) {
  fill_family(a);
  Error r = a.family.calls.init(0);
  if (r != SUCCESS) {
    const char *name = a.hipGetErrorName(r);
    *why = "hipInit failed: " + (name ? std::string(name) : std::to_string(r));
    return false;
  }
  if (a.family.calls.driver_version(&a.driver_version) != SUCCESS) a.driver_version = 0;
  return true;
}

Loaded load() {
  return common::load_library<Api>("RIG_HIP_LIBRARY", "libamdhip64.so", "the HIP runtime", resolve_all, init);
}

}  // namespace

const Api *api() { return common::load_once<Api, load>(); }

const char *error_name(Error error) {
  thread_local char fallback[32];
  const Api *a = api();
  const char *name = a ? a->hipGetErrorName(error) : nullptr;
  // HIP answers "hipErrorUnknown" for codes it does not know; the number then says more.
  if (name && *name && (error == ERROR_UNKNOWN || std::string(name) != "hipErrorUnknown")) return name;
  std::snprintf(fallback, sizeof fallback, "hipError %d", error);
  return fallback;
}

bool is_sticky(Error e) {
  switch (e) {
    case ERROR_DEINITIALIZED:
    case ERROR_ECC_NOT_CORRECTABLE:
    case ERROR_ILLEGAL_ADDRESS:
    case ERROR_LAUNCH_TIMEOUT:
    case ERROR_CONTEXT_IS_DESTROYED:
    case ERROR_ASSERT:
    case ERROR_LAUNCH_FAILURE:
    case ERROR_UNKNOWN:
    case ERROR_RUNTIME_MEMORY:
    case ERROR_RUNTIME_OTHER:
      return true;
    default:
      return false;
  }
}

}  // namespace rig::hip
