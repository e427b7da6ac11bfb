// The subset of the HIP runtime API that rig calls, declared here so rig builds with no ROCm installed.
// Values are HIP's ABI (hip_runtime_api.h: hipError_t, hipDeviceAttribute_t and the flags keep their values
// across ROCm 5..7); names follow HIP's so a reader can look each one up. The tests' fake libamdhip64
// (tests/doubles/fake_hip) and the shim over the CUDA driver (tests/doubles/hip_shim) implement exactly
// these entry points.
#pragma once

#include <cstddef>
#include <cstdint>

#include "drivers/stream/calls.h"

namespace rig::hip {

// Handles are the stream device's types (drivers/stream/calls.h: Stream, Event, Module, Function), so the
// entry points whose signatures are the table's go into it as loaded; device addresses stay HIP's void *
// (adapters convert, hip/api.cpp).
using namespace stream::types;
using Error = stream::Result;  // hipError_t
using DeviceId = int;          // hipDevice_t, and the int device ids of the runtime calls
using DevicePtr = void *;      // hipDeviceptr_t (hides the table's integer DevicePtr in this namespace)

// hipError_t values and flags rig tells apart: those CUDA shares (stream::values, by CUDA's names), and
// HIP's own.
using namespace stream::values;
enum : Error {
  ERROR_ECC_NOT_CORRECTABLE = ERROR_ECC_UNCORRECTABLE,  // HIP's names for two shared values
  ERROR_LAUNCH_FAILURE = ERROR_LAUNCH_FAILED,
  // Modules; the HSA runtime's failures (sticky).
  ERROR_INVALID_KERNEL_FILE = 218, ERROR_SHARED_OBJECT_INIT_FAILED = 303,
  ERROR_RUNTIME_MEMORY = 1052, ERROR_RUNTIME_OTHER = 1053,
};
constexpr int MEMCPY_DEFAULT = 4;  // hipMemcpyDefault: direction from unified addresses
constexpr unsigned IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x0;  // hipIpcMemLazyEnablePeerAccess (CUDA's is 1)

// hipDeviceAttribute_t values rig reads (positions in HIP's enum; the AMD-specific ones start at 10000).
enum Attribute : int {
  // Launch limits, checked at rig_submission_make.
  ATTR_MAX_BLOCK_DIM_X = 26, ATTR_MAX_BLOCK_DIM_Y = 27, ATTR_MAX_BLOCK_DIM_Z = 28, ATTR_MAX_GRID_DIM_X = 29,
  ATTR_MAX_GRID_DIM_Y = 30, ATTR_MAX_GRID_DIM_Z = 31, ATTR_MAX_THREADS_PER_BLOCK = 56,
  ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 74,
  // Host memory: mapped registration's static table and borrows. Host registration's attribute is in newer
  // runtimes only; older ones answer an error (read as unknown).
  ATTR_INTEGRATED = 16, ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 66, ATTR_HOST_REGISTER_SUPPORTED = 90,
  // The timeline (stream/timeline.h).
  ATTR_CAN_USE_STREAM_WAIT_VALUE = 10013,
};

// The entry points rig loads by name, as X(name, symbol, return, parameters): HIP's own, and those behind
// the stream device's ADAPTED calls (drivers/stream/calls.h), whose signatures are not the table's. The
// calls marked SAME there are loaded straight into the table (hip/api.cpp). hipGetErrorName returns the
// name itself.
#define RIG_HIP_ENTRY_POINTS(X)                                                                                \
  X(hipGetErrorName, "hipGetErrorName", const char *, (Error error))                                         \
  X(hipModuleLoadData, "hipModuleLoadData", Error, (Module * module, const void *image))                     \
  /* adapted: device ids for contexts */                                                                     \
  X(hipGetDevice, "hipGetDevice", Error, (DeviceId * device))                                                \
  X(hipSetDevice, "hipSetDevice", Error, (DeviceId device))                                                  \
  X(hipDeviceEnablePeerAccess, "hipDeviceEnablePeerAccess", Error, (DeviceId peer, unsigned flags))          \
  /* adapted: void * device addresses, a copy's direction */                                                 \
  X(hipMalloc, "hipMalloc", Error, (void **ptr, size_t bytes))                                               \
  X(hipFree, "hipFree", Error, (void *ptr))                                                                  \
  X(hipHostGetDevicePointer, "hipHostGetDevicePointer", Error, (void **device, void *host, unsigned flags)) \
  X(hipMemcpyHtoD, "hipMemcpyHtoD", Error, (DevicePtr dst, const void *src, size_t bytes))                   \
  X(hipMemcpyDtoH, "hipMemcpyDtoH", Error, (void *dst, DevicePtr src, size_t bytes))                         \
  X(hipMemcpyAsync, "hipMemcpyAsync", Error,                                                                 \
    (void *dst, const void *src, size_t bytes, int kind, Stream stream))                                     \
  X(hipMemsetD8Async, "hipMemsetD8Async", Error, (DevicePtr dst, unsigned char value, size_t count, Stream stream))

// Optional, adapted: 64-bit stream memory operations (rig falls back to events where they are missing, the
// device says it cannot wait on a value, or RIG_HIP_TIMELINE=events) and interprocess memory.
#define RIG_HIP_OPTIONAL_ENTRY_POINTS(X)                                                                       \
  X(hipStreamWriteValue64, "hipStreamWriteValue64", Error,                                                   \
    (Stream stream, void *ptr, uint64_t value, unsigned flags))                                              \
  X(hipStreamWaitValue64, "hipStreamWaitValue64", Error,                                                     \
    (Stream stream, void *ptr, uint64_t value, unsigned flags, uint64_t mask))                              \
  /* interprocess memory: void * device addresses */                                                       \
  X(hipIpcGetMemHandle, "hipIpcGetMemHandle", Error, (stream::IpcHandle * handle, void *ptr))               \
  X(hipIpcOpenMemHandle, "hipIpcOpenMemHandle", Error, (void **ptr, stream::IpcHandle handle, unsigned flags)) \
  X(hipIpcCloseMemHandle, "hipIpcCloseMemHandle", Error, (void *ptr))

}  // namespace rig::hip
