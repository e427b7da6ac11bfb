// What the stream device (drivers/stream/device.h) asks of a GPU API that runs work on streams: CUDA's
// driver API and HIP's runtime. One table of entry points per family, filled once when the family's
// library loads (drivers/cuda/api.cpp, drivers/hip/api.cpp), the way IREE's CUDA and HIP drivers share one
// event-semaphore implementation over a table. CUDA's entry points are stored as loaded (its signatures
// are these), so CUDA's submit path makes the calls it made before; HIP's are stored as loaded where the
// signature matches and through a one-line adapter where HIP's differs (an extra argument, void* device
// addresses).
#pragma once

#include <rig.h>

#include <cstddef>
#include <cstdint>

namespace rig::stream {

// The values both families give these types and codes (HIP kept CUDA's): checked against each family's
// own declarations (cu.h, hip.h) by static assertions in drivers/cuda/api.cpp and drivers/hip/api.cpp.
using Result = int;                    // CUresult, hipError_t
using DevicePtr = unsigned long long;  // CUdeviceptr; HIP's void * device addresses as integers
using Context = struct rig_stream_context *;  // CUcontext; HIP: the device id + 1 (see hip/api.cpp)
using Stream = struct rig_stream_stream *;    // CUstream, hipStream_t
using Event = struct rig_stream_event *;      // CUevent, hipEvent_t
using Module = struct rig_stream_module *;    // CUmodule, hipModule_t
using Function = struct rig_stream_function *;  // CUfunction, hipFunction_t

enum : Result {
  SUCCESS = 0,
  ERROR_OUT_OF_MEMORY = 2,
  ERROR_NOT_FOUND = 500,
  ERROR_NOT_READY = 600,
  ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  ERROR_NOT_SUPPORTED = 801,
};

// Flags, the same bits in both families.
constexpr unsigned STREAM_NON_BLOCKING = 0x1;   // CU_STREAM_NON_BLOCKING, hipStreamNonBlocking
constexpr unsigned EVENT_DISABLE_TIMING = 0x2;  // CU_EVENT_DISABLE_TIMING, hipEventDisableTiming
constexpr unsigned HOST_ALLOC_PORTABLE = 0x1;   // CU_MEMHOSTALLOC_PORTABLE, hipHostMallocPortable
constexpr unsigned HOST_ALLOC_MAPPED = 0x2;     // CU_MEMHOSTALLOC_DEVICEMAP, hipHostMallocMapped
constexpr unsigned HOST_REGISTER_PORTABLE = 0x1;
constexpr unsigned HOST_REGISTER_MAPPED = 0x2;  // CU_MEMHOSTREGISTER_DEVICEMAP, hipHostRegisterMapped
constexpr unsigned HOST_REGISTER_READ_ONLY = 0x8;
constexpr unsigned WAIT_VALUE_GEQ = 0x0;     // (int64_t)(*addr - value) >= 0
constexpr unsigned WRITE_VALUE_FENCED = 0x0;  // the write follows the work before it, fenced

// The entry points: (field, return, parameters). Each family names the symbol behind every field in its
// own list (cu.h, hip.h), so a message can name the call the way the vendor's documentation does.
#define RIG_STREAM_CALLS(X)                                                                                 \
  X(get_current, (Context * context))                                                                     \
  X(set_current, (Context context))                                                                       \
  X(synchronize_context, (void))                                                                          \
  X(device_attribute, (int *value, int attribute, int device))                                           \
  X(can_access_peer, (int *can, int device, int peer))                                                    \
  X(enable_peer_access, (Context peer, unsigned flags))                                                   \
  X(stream_create, (Stream * stream, unsigned flags))                                                     \
  X(stream_destroy, (Stream stream))                                                                      \
  X(stream_query, (Stream stream))                                                                        \
  X(stream_synchronize, (Stream stream))                                                                  \
  X(stream_wait_event, (Stream stream, Event event, unsigned flags))                                      \
  X(event_create, (Event * event, unsigned flags))                                                        \
  X(event_destroy, (Event event))                                                                         \
  X(event_record, (Event event, Stream stream))                                                           \
  X(event_query, (Event event))                                                                           \
  X(event_synchronize, (Event event))                                                                     \
  X(mem_alloc, (DevicePtr * address, size_t bytes))                                                       \
  X(mem_free, (DevicePtr address))                                                                        \
  X(host_alloc, (void **host, size_t bytes, unsigned flags))                                              \
  X(host_free, (void *host))                                                                              \
  X(host_device_pointer, (DevicePtr * address, void *host, unsigned flags))                               \
  X(host_register, (void *host, size_t bytes, unsigned flags))                                            \
  X(host_unregister, (void *host))                                                                        \
  X(copy_to_device, (DevicePtr dst, const void *src, size_t bytes))                                       \
  X(copy_to_host, (void *dst, DevicePtr src, size_t bytes))                                               \
  X(copy_async, (DevicePtr dst, DevicePtr src, size_t bytes, Stream stream))                              \
  X(fill_async, (DevicePtr dst, unsigned char value, size_t bytes, Stream stream))                        \
  X(module_unload, (Module module))                                                                       \
  X(module_function, (Function * function, Module module, const char *name))                              \
  X(launch, (Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,     \
             unsigned shared, Stream stream, void **params, void **extra))                                \
  /* optional (null where the library lacks them): 64-bit stream memory operations */                     \
  X(write_value64, (Stream stream, DevicePtr address, uint64_t value, unsigned flags))                    \
  X(wait_value64, (Stream stream, DevicePtr address, uint64_t value, unsigned flags))

struct Calls {
#define RIG_STREAM_FIELD(field, params) Result(*field) params = nullptr;
  RIG_STREAM_CALLS(RIG_STREAM_FIELD)
#undef RIG_STREAM_FIELD
};

// The vendor's name of each call, for messages ("cuMemcpyAsync", "hipMemcpyAsync").
struct CallNames {
#define RIG_STREAM_NAME(field, params) const char *field = #field;
  RIG_STREAM_CALLS(RIG_STREAM_NAME)
#undef RIG_STREAM_NAME
};

// The device attributes the stream device reads, by each family's number (-1: the family has none).
struct Attributes {
  int max_block[3];
  int max_grid[3];
  int max_threads_per_block;
  int max_shared_per_block;
  int host_register_supported;
  int integrated;
  int pageable_uses_host_page_tables;
  int read_only_host_register;  // -1: the family takes the flag with no attribute saying so (HIP)
};

struct Gpu;

// One family: its table, its names for calls and results, and the few things it does its own way.
struct Family {
  const char *prefix;     // "cuda", "hip": devices are named prefix:N
  const char *framework;  // "CUDA", "HIP"
  Calls calls;
  CallNames names;
  Attributes attributes;
  // The library's name for a result ("CUDA_ERROR_ILLEGAL_ADDRESS"); never null.
  const char *(*error_name)(Result result);
  // True for the errors after which the GPU's queued work is gone (a fault, a torn-down context).
  bool (*is_sticky)(Result result);
  // The module formats the family loads (a second slot may repeat the first), and their words for messages.
  rig_module_format formats[2];
  const char *formats_named;  // "PTX, cubin or fatbin modules"
  // Loads a module of one of `formats` on `gpu` (non-empty bytes; current context made by the caller): the
  // family's loader, its options and error log. RIG_* with a message on failure.
  rig_status (*load_module)(const Gpu &gpu, rig_module_format format, const void *bytes, size_t length,
                            Module *out);
  // A synchronous host-to-device copy returns before the DMA lands where this is true (CUDA from pageable
  // memory, on the legacy stream): the stream device then waits for the legacy (null) stream.
  bool copies_finish_on_legacy_stream;
};

// The rig status for a failed call: OUT_OF_MEMORY, LOST (sticky) or DRIVER.
inline rig_status status_of(const Family &family, Result result) {
  if (result == ERROR_OUT_OF_MEMORY) return RIG_OUT_OF_MEMORY;
  if (family.is_sticky(result)) return RIG_LOST;
  return RIG_DRIVER;
}

}  // namespace rig::stream
