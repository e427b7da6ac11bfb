// The subset of the CUDA driver API that rig calls, declared here so rig builds with no CUDA SDK.
// Values are the driver's ABI (stable across CUDA 11..13); names follow cuda.h so a reader can look
// each one up. The tests' fake libcuda (tests/doubles/fake_cuda) implements exactly these entry points.
#pragma once

#include <cstddef>
#include <cstdint>

#include "drivers/stream/calls.h"

namespace rig::cu {

// The stream device's types (drivers/stream/calls.h: Result, DevicePtr, Context, Stream, Event, Module,
// Function), which are CUDA's: the entry points the stream device calls go into its table as loaded, with no
// adapter between (drivers/cuda/api.cpp).
using namespace stream::types;
using Device = int;  // CUdevice

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
constexpr unsigned IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1;
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

// CUDA's own entry points, by the exact symbol rig loads (the _v2 names where cuda.h maps a name onto one).
#define RIG_CU_OWN_ENTRY_POINTS(X)                                                                             \
  X(cuGetErrorName, "cuGetErrorName", Result, (Result error, const char **name))                             \
  X(cuGetErrorString, "cuGetErrorString", Result, (Result error, const char **text))                         \
  X(cuDeviceGet, "cuDeviceGet", Result, (Device * device, int ordinal))                                      \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", Result, (Context * context, Device device))        \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", Result, (Device device))                      \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", Result,                                                        \
    (Module * module, const void *image, unsigned count, int *options, void **values))

// Every entry point rig loads, as X(name, symbol, return, parameters): CUDA's own, and the stream device's
// calls (drivers/stream/calls.h) under CUDA's names with the table's signatures, which are CUDA's.
#define RIG_CU_FROM_CALL(X, field, params, name, symbol, hip, how) X(name, symbol, Result, params)
#define RIG_CU_ENTRY_POINTS(X) RIG_CU_OWN_ENTRY_POINTS(X) RIG_STREAM_CALLS(RIG_CU_FROM_CALL, X)
// Optional: 64-bit stream memory operations (rig falls back to events where they are missing or the device
// says it cannot use them).
#define RIG_CU_OPTIONAL_ENTRY_POINTS(X) RIG_STREAM_OPTIONAL_CALLS(RIG_CU_FROM_CALL, X)

}  // namespace rig::cu
