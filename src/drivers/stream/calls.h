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

// The types both families' entry points take (HIP kept CUDA's shapes): cu.h and hip.h take them in with a
// using-directive, and name only what is their own.
namespace types {
using Result = int;                    // CUresult, hipError_t
using DevicePtr = unsigned long long;  // CUdeviceptr; HIP's void * device addresses as integers
using Context = struct rig_stream_context *;  // CUcontext; HIP: the device id + 1 (see hip/api.h)
using Stream = struct rig_stream_stream *;    // CUstream, hipStream_t
using Event = struct rig_stream_event *;      // CUevent, hipEvent_t
using Module = struct rig_stream_module *;    // CUmodule, hipModule_t
using Function = struct rig_stream_function *;  // CUfunction, hipFunction_t
using Graph = struct rig_stream_graph *;          // CUgraph
using GraphExec = struct rig_stream_graph_exec *;  // CUgraphExec
// CUipcMemHandle, CUipcEventHandle, hipIpcMemHandle_t, hipIpcEventHandle_t: 64 opaque bytes, passed by value.
struct IpcHandle {
  char reserved[64];
};
// CUmemcpyAttributes (CUDA 12.8 on): how a batched copy reads its source. rig's copies read in stream order
// (src_access_order MEMCPY_SRC_ACCESS_ORDER_STREAM); the location hints apply to managed memory only.
struct MemcpyAttributes {
  int src_access_order;
  int src_location_type, src_location_id;
  int dst_location_type, dst_location_id;
  unsigned flags;
};
}  // namespace types
using namespace types;

// Results and flags with one number in both families (HIP kept CUDA's), by CUDA's names: cu.h and hip.h
// take them in with a using-directive and add their own. Checked against the vendors' headers where those
// are installed (tests/drivers/test_vendor_headers.cpp).
namespace values {
enum : Result {
  SUCCESS = 0, ERROR_INVALID_VALUE = 1, ERROR_OUT_OF_MEMORY = 2, ERROR_NOT_INITIALIZED = 3,
  ERROR_DEINITIALIZED = 4, ERROR_NO_DEVICE = 100, ERROR_INVALID_DEVICE = 101,
  // Module images.
  ERROR_INVALID_IMAGE = 200, ERROR_INVALID_CONTEXT = 201, ERROR_NO_BINARY_FOR_GPU = 209,
  // Faults, peers, handles. HIP calls 214 hipErrorECCNotCorrectable and 719 hipErrorLaunchFailure.
  ERROR_ECC_UNCORRECTABLE = 214, ERROR_PEER_ACCESS_UNSUPPORTED = 217, ERROR_INVALID_HANDLE = 400,
  ERROR_NOT_FOUND = 500, ERROR_NOT_READY = 600, ERROR_ILLEGAL_ADDRESS = 700, ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  ERROR_LAUNCH_TIMEOUT = 702, ERROR_PEER_ACCESS_ALREADY_ENABLED = 704, ERROR_CONTEXT_IS_DESTROYED = 709,
  ERROR_ASSERT = 710, ERROR_LAUNCH_FAILED = 719,
  // Host registration.
  ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712, ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
  ERROR_NOT_SUPPORTED = 801, ERROR_UNKNOWN = 999,
};

// Flags (CUDA's name, HIP's name).
constexpr unsigned STREAM_NON_BLOCKING = 0x1;     // CU_STREAM_NON_BLOCKING, hipStreamNonBlocking
constexpr unsigned EVENT_DISABLE_TIMING = 0x2;    // CU_EVENT_DISABLE_TIMING, hipEventDisableTiming
constexpr unsigned EVENT_INTERPROCESS = 0x4;      // CU_EVENT_INTERPROCESS, hipEventInterprocess
constexpr unsigned HOST_ALLOC_PORTABLE = 0x1;     // CU_MEMHOSTALLOC_PORTABLE, hipHostMallocPortable
constexpr unsigned HOST_ALLOC_MAPPED = 0x2;       // CU_MEMHOSTALLOC_DEVICEMAP, hipHostMallocMapped
constexpr unsigned HOST_REGISTER_PORTABLE = 0x1;  // CU_MEMHOSTREGISTER_PORTABLE, hipHostRegisterPortable
constexpr unsigned HOST_REGISTER_MAPPED = 0x2;    // CU_MEMHOSTREGISTER_DEVICEMAP, hipHostRegisterMapped
constexpr unsigned HOST_REGISTER_READ_ONLY = 0x8;  // CU_MEMHOSTREGISTER_READ_ONLY, hipHostRegisterReadOnly
constexpr int MEMCPY_SRC_ACCESS_ORDER_STREAM = 1;  // CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
// A capture that leaves other threads' calls alone (CU_STREAM_CAPTURE_MODE_RELAXED).
constexpr int STREAM_CAPTURE_MODE_RELAXED = 2;
// (int64_t)(*addr - value) >= 0: CU_STREAM_WAIT_VALUE_GEQ, hipStreamWaitValueGte.
constexpr unsigned WAIT_VALUE_GEQ = 0x0;
// The write follows the work before it, fenced: CU_STREAM_WRITE_VALUE_DEFAULT, HIP's 0.
constexpr unsigned WRITE_VALUE_FENCED = 0x0;
}  // namespace values
using namespace values;

// Every call of the table, once for both families: (A, field, parameters, CUDA's name, the symbol CUDA's is
// loaded from, HIP's name (its symbol too), how HIP's is stored). HIP's is SAME where its signature is the
// table's (loaded into the field as is), ADAPTED where it differs (hip.h declares HIP's own signature and
// hip/api.cpp adapts it in one call), NONE where HIP's is not loaded (the field stays null). CUDA's signatures are the table's: cu.h declares CUDA's entry points
// from this list. `A` is passed through to X, so that a family can turn the list into its own (cu.h).
#define RIG_STREAM_CALLS(X, A)                                                                                 \
  /* the submit path's calls first: one cache line of Calls (alignas) that every hand-over reads */          \
  X(A, stream_wait_event, (Stream stream, Event event, unsigned flags), cuStreamWaitEvent, "cuStreamWaitEvent", \
    hipStreamWaitEvent, SAME)                                                                                \
  X(A, event_record, (Event event, Stream stream), cuEventRecord, "cuEventRecord", hipEventRecord, SAME)     \
  X(A, copy_async, (DevicePtr dst, DevicePtr src, size_t bytes, Stream stream), cuMemcpyAsync, "cuMemcpyAsync", \
    hipMemcpyAsync, ADAPTED)                                                                                 \
  X(A, fill_async, (DevicePtr dst, unsigned char value, size_t bytes, Stream stream), cuMemsetD8Async,      \
    "cuMemsetD8Async", hipMemsetD8Async, ADAPTED)                                                            \
  X(A, launch,                                                                                               \
    (Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared, \
     Stream stream, void **params, void **extra),                                                            \
    cuLaunchKernel, "cuLaunchKernel", hipModuleLaunchKernel, SAME)                                           \
  /* the library and its GPUs */                                                                             \
  X(A, init, (unsigned flags), cuInit, "cuInit", hipInit, SAME)                                              \
  X(A, driver_version, (int *version), cuDriverGetVersion, "cuDriverGetVersion", hipDriverGetVersion, SAME)  \
  X(A, device_count, (int *count), cuDeviceGetCount, "cuDeviceGetCount", hipGetDeviceCount, SAME)            \
  X(A, device_name, (char *name, int length, int device), cuDeviceGetName, "cuDeviceGetName", hipDeviceGetName, \
    SAME)                                                                                                    \
  X(A, total_memory, (size_t * bytes, int device), cuDeviceTotalMem, "cuDeviceTotalMem_v2", hipDeviceTotalMem, \
    SAME)                                                                                                    \
  X(A, device_attribute, (int *value, int attribute, int device), cuDeviceGetAttribute, "cuDeviceGetAttribute", \
    hipDeviceGetAttribute, SAME)                                                                             \
  X(A, can_access_peer, (int *can, int device, int peer), cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer",   \
    hipDeviceCanAccessPeer, SAME)                                                                            \
  /* contexts (HIP: the current device) */                                                                   \
  X(A, get_current, (Context * context), cuCtxGetCurrent, "cuCtxGetCurrent", hipGetDevice, ADAPTED)          \
  X(A, set_current, (Context context), cuCtxSetCurrent, "cuCtxSetCurrent", hipSetDevice, ADAPTED)            \
  X(A, synchronize_context, (void), cuCtxSynchronize, "cuCtxSynchronize", hipDeviceSynchronize, SAME)        \
  X(A, enable_peer_access, (Context peer, unsigned flags), cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess",  \
    hipDeviceEnablePeerAccess, ADAPTED)                                                                      \
  /* streams and events */                                                                                   \
  X(A, stream_create, (Stream * stream, unsigned flags), cuStreamCreate, "cuStreamCreate",                  \
    hipStreamCreateWithFlags, SAME)                                                                          \
  X(A, stream_destroy, (Stream stream), cuStreamDestroy, "cuStreamDestroy_v2", hipStreamDestroy, SAME)       \
  X(A, stream_query, (Stream stream), cuStreamQuery, "cuStreamQuery", hipStreamQuery, SAME)                  \
  X(A, stream_synchronize, (Stream stream), cuStreamSynchronize, "cuStreamSynchronize", hipStreamSynchronize, \
    SAME)                                                                                                    \
  X(A, event_create, (Event * event, unsigned flags), cuEventCreate, "cuEventCreate", hipEventCreateWithFlags, \
    SAME)                                                                                                    \
  X(A, event_destroy, (Event event), cuEventDestroy, "cuEventDestroy_v2", hipEventDestroy, SAME)             \
  X(A, event_query, (Event event), cuEventQuery, "cuEventQuery", hipEventQuery, SAME)                        \
  X(A, event_synchronize, (Event event), cuEventSynchronize, "cuEventSynchronize", hipEventSynchronize, SAME) \
  /* memory */                                                                                               \
  X(A, mem_alloc, (DevicePtr * address, size_t bytes), cuMemAlloc, "cuMemAlloc_v2", hipMalloc, ADAPTED)      \
  X(A, mem_free, (DevicePtr address), cuMemFree, "cuMemFree_v2", hipFree, ADAPTED)                           \
  X(A, host_alloc, (void **host, size_t bytes, unsigned flags), cuMemHostAlloc, "cuMemHostAlloc",           \
    hipHostMalloc, SAME)                                                                                     \
  X(A, host_free, (void *host), cuMemFreeHost, "cuMemFreeHost", hipHostFree, SAME)                           \
  X(A, host_device_pointer, (DevicePtr * address, void *host, unsigned flags), cuMemHostGetDevicePointer,   \
    "cuMemHostGetDevicePointer_v2", hipHostGetDevicePointer, ADAPTED)                                        \
  X(A, host_register, (void *host, size_t bytes, unsigned flags), cuMemHostRegister, "cuMemHostRegister_v2", \
    hipHostRegister, SAME)                                                                                   \
  X(A, host_unregister, (void *host), cuMemHostUnregister, "cuMemHostUnregister", hipHostUnregister, SAME)   \
  X(A, copy_to_device, (DevicePtr dst, const void *src, size_t bytes), cuMemcpyHtoD, "cuMemcpyHtoD_v2",     \
    hipMemcpyHtoD, ADAPTED)                                                                                  \
  X(A, copy_to_host, (void *dst, DevicePtr src, size_t bytes), cuMemcpyDtoH, "cuMemcpyDtoH_v2", hipMemcpyDtoH, \
    ADAPTED)                                                                                                 \
  /* modules (loading is each family's own: Family::load_module) */                                          \
  X(A, module_unload, (Module module), cuModuleUnload, "cuModuleUnload", hipModuleUnload, SAME)              \
  X(A, module_function, (Function * function, Module module, const char *name), cuModuleGetFunction,        \
    "cuModuleGetFunction", hipModuleGetFunction, SAME)

// Optional calls (null where the library lacks them): a batch of copies (CUDA 12.8+: CUDA 13's signature,
// loaded as cuMemcpyBatchAsync_v2, else from 12.8's cuMemcpyBatchAsync through an adapter, cuda/api.cpp;
// HIP's is not used, NONE: one call per copy there), graphs recorded by stream capture (a batch of
// launches seen before goes to the driver as one graph launch; HIP's are not used: NONE), 64-bit stream
// memory operations (CUDA 11.7+ exports the _v2 names; without them the timeline keeps to events),
// interprocess handles of memory and events (without them rig_interop_supported says no to
// RIG_INTEROP_IPC_*: stream/ipc.cpp).
#define RIG_STREAM_OPTIONAL_CALLS(X, A)                                                                        \
  X(A, write_value64, (Stream stream, DevicePtr address, uint64_t value, unsigned flags), cuStreamWriteValue64, \
    "cuStreamWriteValue64_v2", hipStreamWriteValue64, ADAPTED)                                               \
  X(A, wait_value64, (Stream stream, DevicePtr address, uint64_t value, unsigned flags), cuStreamWaitValue64, \
    "cuStreamWaitValue64_v2", hipStreamWaitValue64, ADAPTED)                                                 \
  X(A, ipc_get_memory, (IpcHandle * handle, DevicePtr address), cuIpcGetMemHandle, "cuIpcGetMemHandle",      \
    hipIpcGetMemHandle, ADAPTED)                                                                             \
  X(A, ipc_open_memory, (DevicePtr * address, IpcHandle handle, unsigned flags), cuIpcOpenMemHandle,         \
    "cuIpcOpenMemHandle_v2", hipIpcOpenMemHandle, ADAPTED)                                                   \
  X(A, ipc_close_memory, (DevicePtr address), cuIpcCloseMemHandle, "cuIpcCloseMemHandle", hipIpcCloseMemHandle, \
    ADAPTED)                                                                                                 \
  X(A, ipc_get_event, (IpcHandle * handle, Event event), cuIpcGetEventHandle, "cuIpcGetEventHandle",         \
    hipIpcGetEventHandle, SAME)                                                                              \
  X(A, ipc_open_event, (Event * event, IpcHandle handle), cuIpcOpenEventHandle, "cuIpcOpenEventHandle",      \
    hipIpcOpenEventHandle, SAME)                                                                             \
  X(A, copy_batch,                                                                                           \
    (DevicePtr * dsts, DevicePtr * srcs, size_t * sizes, size_t count, MemcpyAttributes * attributes,        \
     size_t * attribute_starts, size_t attribute_count, Stream stream),                                      \
    cuMemcpyBatchAsync, "cuMemcpyBatchAsync_v2", hipMemcpyBatchAsync, NONE)                                \
  X(A, capture_begin, (Stream stream, int mode), cuStreamBeginCapture, "cuStreamBeginCapture_v2",            \
    hipStreamBeginCapture, NONE)                                                                             \
  X(A, capture_end, (Stream stream, Graph * graph), cuStreamEndCapture, "cuStreamEndCapture",                \
    hipStreamEndCapture, NONE)                                                                               \
  X(A, graph_instantiate, (GraphExec * exec, Graph graph, unsigned long long flags),                        \
    cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", hipGraphInstantiateWithFlags, NONE)          \
  X(A, graph_launch, (GraphExec exec, Stream stream), cuGraphLaunch, "cuGraphLaunch", hipGraphLaunch, NONE)  \
  X(A, graph_exec_destroy, (GraphExec exec), cuGraphExecDestroy, "cuGraphExecDestroy", hipGraphExecDestroy, \
    NONE)                                                                                                    \
  X(A, graph_destroy, (Graph graph), cuGraphDestroy, "cuGraphDestroy", hipGraphDestroy, NONE)

struct alignas(64) Calls {  // aligned: the submit path's calls (first in the list) share one line
#define RIG_STREAM_FIELD(A, field, params, ...) Result(*field) params = nullptr;
  RIG_STREAM_CALLS(RIG_STREAM_FIELD, _)
  RIG_STREAM_OPTIONAL_CALLS(RIG_STREAM_FIELD, _)
#undef RIG_STREAM_FIELD
};

// The vendor's name of each call, for messages ("cuMemcpyAsync", "hipMemcpyAsync").
struct CallNames {
#define RIG_STREAM_NAME(A, field, ...) const char *field = #field;
  RIG_STREAM_CALLS(RIG_STREAM_NAME, _)
  RIG_STREAM_OPTIONAL_CALLS(RIG_STREAM_NAME, _)
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
}  // namespace rig::stream
namespace rig {
struct DriverInfo;
}  // namespace rig
namespace rig::stream {

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
  // The driver's side (stream/driver.h). Fills a new Gpu of gpu->ordinal, an ordinal the library lists
  // (stream/gpu.cpp checked it): its device and context, retained for the process. RIG_* with a message.
  rig_status (*open_gpu)(Gpu *gpu);
  const char *library;  // "the CUDA driver", "the HIP runtime": the library, in messages
  // DriverInfo::integrated where the device_attribute query fails: CUDA says unknown (-1); HIP counts it
  // as integrated (1, docs/mapped.md), so that the static table refuses such a device.
  int integrated_when_unknown;
  // Whether a device opened now keeps its timeline with stream memory operations (timeline.h): the
  // family's default, its environment variable, the device's attribute.
  bool (*memory_operations)(const Gpu &gpu);
  // A synchronous host-to-device copy returns before the DMA lands where this is true (CUDA from pageable
  // memory, on the legacy stream): the stream device then waits for the legacy (null) stream.
  bool copies_finish_on_legacy_stream;
  // ipc_open_memory's flag that enables peer access for another GPU's memory: the families differ (CUDA's
  // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS is 1, HIP's hipIpcMemLazyEnablePeerAccess 0).
  unsigned ipc_lazy_peer_access;
};

// Fills a Family's hooks from the functions the family defines under the same names in its own namespace
// (cuda/, hip/: error_name, is_sticky, load_module, open_gpu, memory_operations).
#define RIG_STREAM_FAMILY_HOOKS(f)                                                                        \
  f.error_name = error_name;                                                                              \
  f.is_sticky = is_sticky;                                                                                \
  f.load_module = load_module;                                                                            \
  f.open_gpu = open_gpu;                                                                                  \
  f.memory_operations = memory_operations;

// The rig status for a failed call: OUT_OF_MEMORY, LOST (sticky) or DRIVER.
inline rig_status status_of(const Family &family, Result result) {
  if (result == ERROR_OUT_OF_MEMORY) return RIG_OUT_OF_MEMORY;
  if (family.is_sticky(result)) return RIG_LOST;
  return RIG_DRIVER;
}

}  // namespace rig::stream
