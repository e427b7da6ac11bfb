// The subset of the CUDA driver API that rig calls, declared here so rig builds with no CUDA SDK.
// Values are the driver's ABI (stable across CUDA 11..13); names follow cuda.h so a reader can look
// each one up. The tests' fake libcuda (tests/doubles/fake_cuda) implements exactly these entry points.
#pragma once

#include <cstddef>
#include <cstdint>

#include "drivers/stream/calls.h"

namespace rig::cu {

// The stream device's types (drivers/stream/calls.h), which are CUDA's: the entry points the stream device
// calls go into its table as loaded, with no adapter between (drivers/cuda/api.cpp).
using Result = stream::Result;        // CUresult
using Device = int;                   // CUdevice
using DevicePtr = stream::DevicePtr;  // CUdeviceptr (64-bit)
using Context = stream::Context;      // CUcontext
using Stream = stream::Stream;        // CUstream
using Event = stream::Event;          // CUevent
using Module = stream::Module;        // CUmodule
using Function = stream::Function;    // CUfunction

// CUresult values and flags rig tells apart: those HIP shares (stream::values), and CUDA's own.
using namespace stream::values;
enum : Result {
  ERROR_DEVICE_UNAVAILABLE = 46, ERROR_NOT_PERMITTED = 800,
  // Modules.
  ERROR_INVALID_PTX = 218, ERROR_UNSUPPORTED_PTX_VERSION = 222,
  // Sticky: the context can run nothing more.
  ERROR_NVLINK_UNCORRECTABLE = 220, ERROR_CONTAINED = 226, ERROR_HARDWARE_STACK_ERROR = 714,
  ERROR_ILLEGAL_INSTRUCTION = 715, ERROR_MISALIGNED_ADDRESS = 716, ERROR_INVALID_ADDRESS_SPACE = 717,
  ERROR_INVALID_PC = 718, ERROR_TENSOR_MEMORY_LEAK = 721,
};
constexpr int JIT_ERROR_LOG_BUFFER = 5;
constexpr int JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// CUdevice_attribute values rig reads.
enum Attribute : int {
  // Launch limits, checked at rig_submission_make.
  ATTR_MAX_THREADS_PER_BLOCK = 1, ATTR_MAX_BLOCK_DIM_X = 2, ATTR_MAX_BLOCK_DIM_Y = 3, ATTR_MAX_BLOCK_DIM_Z = 4,
  ATTR_MAX_GRID_DIM_X = 5, ATTR_MAX_GRID_DIM_Y = 6, ATTR_MAX_GRID_DIM_Z = 7, ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  // Host memory: mapped registration's static table and borrows.
  ATTR_INTEGRATED = 18, ATTR_CAN_MAP_HOST_MEMORY = 19, ATTR_UNIFIED_ADDRESSING = 41,
  ATTR_PAGEABLE_MEMORY_ACCESS = 88, ATTR_HOST_REGISTER_SUPPORTED = 99,
  ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100, ATTR_READ_ONLY_HOST_REGISTER_SUPPORTED = 113,
  // The timeline (stream/timeline.h).
  ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
};

// The entry points, by the exact symbol rig loads (the _v2 names where cuda.h maps a name onto one).
#define RIG_CU_ENTRY_POINTS(X)                                                                                 \
  X(cuInit, "cuInit", Result, (unsigned flags))                                                              \
  X(cuDriverGetVersion, "cuDriverGetVersion", Result, (int *version))                                        \
  X(cuGetErrorName, "cuGetErrorName", Result, (Result error, const char **name))                             \
  X(cuGetErrorString, "cuGetErrorString", Result, (Result error, const char **text))                         \
  X(cuDeviceGetCount, "cuDeviceGetCount", Result, (int *count))                                              \
  X(cuDeviceGet, "cuDeviceGet", Result, (Device * device, int ordinal))                                      \
  X(cuDeviceGetName, "cuDeviceGetName", Result, (char *name, int length, Device device))                     \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", Result, (size_t * bytes, Device device))                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", Result, (int *value, int attribute, Device device))        \
  X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", Result, (int *can, Device device, Device peer))          \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", Result, (Context * context, Device device))        \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", Result, (Device device))                      \
  X(cuCtxGetCurrent, "cuCtxGetCurrent", Result, (Context * context))                                         \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", Result, (Context context))                                           \
  X(cuCtxSynchronize, "cuCtxSynchronize", Result, (void))                                                    \
  X(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", Result, (Context peer, unsigned flags))                  \
  X(cuStreamCreate, "cuStreamCreate", Result, (Stream * stream, unsigned flags))                             \
  X(cuStreamDestroy, "cuStreamDestroy_v2", Result, (Stream stream))                                          \
  X(cuStreamQuery, "cuStreamQuery", Result, (Stream stream))                                                 \
  X(cuStreamSynchronize, "cuStreamSynchronize", Result, (Stream stream))                                     \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", Result, (Stream stream, Event event, unsigned flags))            \
  X(cuEventCreate, "cuEventCreate", Result, (Event * event, unsigned flags))                                 \
  X(cuEventDestroy, "cuEventDestroy_v2", Result, (Event event))                                              \
  X(cuEventRecord, "cuEventRecord", Result, (Event event, Stream stream))                                    \
  X(cuEventQuery, "cuEventQuery", Result, (Event event))                                                     \
  X(cuEventSynchronize, "cuEventSynchronize", Result, (Event event))                                         \
  X(cuMemAlloc, "cuMemAlloc_v2", Result, (DevicePtr * ptr, size_t bytes))                                    \
  X(cuMemFree, "cuMemFree_v2", Result, (DevicePtr ptr))                                                      \
  X(cuMemHostAlloc, "cuMemHostAlloc", Result, (void **ptr, size_t bytes, unsigned flags))                    \
  X(cuMemFreeHost, "cuMemFreeHost", Result, (void *ptr))                                                     \
  X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", Result,                                       \
    (DevicePtr * ptr, void *host, unsigned flags))                                                           \
  X(cuMemHostRegister, "cuMemHostRegister_v2", Result, (void *ptr, size_t bytes, unsigned flags))            \
  X(cuMemHostUnregister, "cuMemHostUnregister", Result, (void *ptr))                                         \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", Result, (DevicePtr dst, const void *src, size_t bytes))                 \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", Result, (void *dst, DevicePtr src, size_t bytes))                       \
  X(cuMemcpyAsync, "cuMemcpyAsync", Result, (DevicePtr dst, DevicePtr src, size_t bytes, Stream stream))     \
  X(cuMemsetD8Async, "cuMemsetD8Async", Result,                                                              \
    (DevicePtr dst, unsigned char value, size_t count, Stream stream))                                       \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", Result,                                                        \
    (Module * module, const void *image, unsigned count, int *options, void **values))                       \
  X(cuModuleUnload, "cuModuleUnload", Result, (Module module))                                               \
  X(cuModuleGetFunction, "cuModuleGetFunction", Result, (Function * function, Module module, const char *name)) \
  X(cuLaunchKernel, "cuLaunchKernel", Result,                                                                \
    (Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,               \
     unsigned shared, Stream stream, void **params, void **extra))

// Optional: 64-bit stream memory operations (CUDA 11.7+ exports the _v2 names; rig falls back to events
// where they are missing or the device says it cannot use them).
#define RIG_CU_OPTIONAL_ENTRY_POINTS(X)                                                                        \
  X(cuStreamWriteValue64, "cuStreamWriteValue64_v2", Result,                                                 \
    (Stream stream, DevicePtr addr, uint64_t value, unsigned flags))                                         \
  X(cuStreamWaitValue64, "cuStreamWaitValue64_v2", Result,                                                   \
    (Stream stream, DevicePtr addr, uint64_t value, unsigned flags))

// The stream device's table (drivers/stream/calls.h): each field and the entry point above that fills it.
#define RIG_CU_STREAM_CALLS(X)                                                                                 \
  X(get_current, cuCtxGetCurrent)                                                                            \
  X(set_current, cuCtxSetCurrent)                                                                            \
  X(synchronize_context, cuCtxSynchronize)                                                                   \
  X(device_attribute, cuDeviceGetAttribute)                                                                  \
  X(can_access_peer, cuDeviceCanAccessPeer)                                                                  \
  X(enable_peer_access, cuCtxEnablePeerAccess)                                                               \
  X(stream_create, cuStreamCreate)                                                                           \
  X(stream_destroy, cuStreamDestroy)                                                                         \
  X(stream_query, cuStreamQuery)                                                                             \
  X(stream_synchronize, cuStreamSynchronize)                                                                 \
  X(stream_wait_event, cuStreamWaitEvent)                                                                    \
  X(event_create, cuEventCreate)                                                                             \
  X(event_destroy, cuEventDestroy)                                                                           \
  X(event_record, cuEventRecord)                                                                             \
  X(event_query, cuEventQuery)                                                                               \
  X(event_synchronize, cuEventSynchronize)                                                                   \
  X(mem_alloc, cuMemAlloc)                                                                                   \
  X(mem_free, cuMemFree)                                                                                     \
  X(host_alloc, cuMemHostAlloc)                                                                              \
  X(host_free, cuMemFreeHost)                                                                                \
  X(host_device_pointer, cuMemHostGetDevicePointer)                                                          \
  X(host_register, cuMemHostRegister)                                                                        \
  X(host_unregister, cuMemHostUnregister)                                                                    \
  X(copy_to_device, cuMemcpyHtoD)                                                                            \
  X(copy_to_host, cuMemcpyDtoH)                                                                              \
  X(copy_async, cuMemcpyAsync)                                                                               \
  X(fill_async, cuMemsetD8Async)                                                                             \
  X(module_unload, cuModuleUnload)                                                                           \
  X(module_function, cuModuleGetFunction)                                                                    \
  X(launch, cuLaunchKernel)                                                                                  \
  X(write_value64, cuStreamWriteValue64)                                                                     \
  X(wait_value64, cuStreamWaitValue64)

}  // namespace rig::cu
