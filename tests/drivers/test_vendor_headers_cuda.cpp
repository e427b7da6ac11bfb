// rig's CUDA declarations (drivers/cuda/cu.h, the stream table it fills) against the CUDA Toolkit's cuda.h:
// every entry point's signature, every value rig uses. Compiled only where cuda.h is found (the GPU machine:
// tests/drivers/meson.build looks in the default paths and /usr/local/cuda/include; scripts/gpu/
// vendor-headers.sh compiles it there without a build). A wrong declaration fails the compile with its name.
// rig declares no CUDA struct: its handles are opaque pointers, checked by size below.

// rig's types first: cuda.h maps names onto their _v2 symbols with macros (cuMemAlloc -> cuMemAlloc_v2),
// which would rename Api's fields. Each field's type is taken before, each vendor function after.
#include "drivers/cuda/api.h"

namespace rig_types {
#define RIG_TYPE(field, symbol, ret, params) using rig_##field = decltype(rig::cuda::Api::field);
RIG_CU_OWN_ENTRY_POINTS(RIG_TYPE)
#undef RIG_TYPE
#define RIG_CALL_TYPE(A, field, ...) using calls_##field = decltype(rig::stream::Calls::field);
RIG_STREAM_CALLS(RIG_CALL_TYPE, _)
RIG_STREAM_OPTIONAL_CALLS(RIG_CALL_TYPE, _)
#undef RIG_CALL_TYPE
}  // namespace rig_types

#include <cuda.h>

#include <cstddef>
#include <cstdio>

#include "vendor_abi.h"

namespace {

using namespace rig;

// Every entry point rig loads, by its own declaration: `field` names the vendor function after cuda.h's
// macros, the same symbol rig loads (cuMemAlloc is cuMemAlloc_v2). CUDA's own first; then the stream
// device's calls, by the table's declaration, which is also Api's for them (cu.h declares them from it).
#define CHECK_ENTRY(field, symbol, ret, params) \
  RIG_VENDOR_CHECK(rig_types::rig_##field, field, rig_types::rig_##field);
RIG_CU_OWN_ENTRY_POINTS(CHECK_ENTRY)
#undef CHECK_ENTRY

#define CHECK_CALL(A, field, params, entry, ...) \
  RIG_VENDOR_CHECK(rig_types::calls_##field, entry, rig_types::calls_##field);
RIG_STREAM_CALLS(CHECK_CALL, _)
RIG_STREAM_OPTIONAL_CALLS(CHECK_CALL, _)
#undef CHECK_CALL

static_assert(sizeof(cu::Result) == sizeof(CUresult));
static_assert(std::is_same_v<cu::DevicePtr, CUdeviceptr>);
static_assert(sizeof(cu::Device) == sizeof(CUdevice));
static_assert(sizeof(cu::Context) == sizeof(CUcontext) && sizeof(cu::Stream) == sizeof(CUstream));
static_assert(sizeof(cu::Event) == sizeof(CUevent) && sizeof(cu::Module) == sizeof(CUmodule));
static_assert(sizeof(cu::Function) == sizeof(CUfunction));
// The reuse pool's structs (rig's own, stream/calls.h): sizes and the fields rig sets.
static_assert(sizeof(cu::MemPool) == sizeof(CUmemoryPool));
static_assert(sizeof(cu::MemPoolProps) == sizeof(CUmemPoolProps));
static_assert(offsetof(cu::MemPoolProps, alloc_type) == offsetof(CUmemPoolProps, allocType) &&
              offsetof(cu::MemPoolProps, location_type) == offsetof(CUmemPoolProps, location.type) &&
              offsetof(cu::MemPoolProps, location_id) == offsetof(CUmemPoolProps, location.id) &&
              offsetof(cu::MemPoolProps, win32_security_attributes) == offsetof(CUmemPoolProps, win32SecurityAttributes));
static_assert(sizeof(cu::MemAccessDesc) == sizeof(CUmemAccessDesc) &&
              offsetof(cu::MemAccessDesc, location_id) == offsetof(CUmemAccessDesc, location.id) &&
              offsetof(cu::MemAccessDesc, flags) == offsetof(CUmemAccessDesc, flags));
static_assert(cu::MEM_ALLOCATION_TYPE_PINNED == CU_MEM_ALLOCATION_TYPE_PINNED &&
              cu::MEM_LOCATION_TYPE_DEVICE == CU_MEM_LOCATION_TYPE_DEVICE &&
              cu::MEMPOOL_ATTR_RELEASE_THRESHOLD == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD &&
              cu::MEM_ACCESS_READ_WRITE == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

#define CHECK_VALUE(rig_value, vendor_value) \
  static_assert(static_cast<long long>(rig_value) == static_cast<long long>(vendor_value), #rig_value " != " #vendor_value);
CHECK_VALUE(cu::SUCCESS, CUDA_SUCCESS)
CHECK_VALUE(cu::ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE)
CHECK_VALUE(cu::ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY)
CHECK_VALUE(cu::ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED)
CHECK_VALUE(cu::ERROR_DEINITIALIZED, CUDA_ERROR_DEINITIALIZED)
CHECK_VALUE(cu::ERROR_DEVICE_UNAVAILABLE, CUDA_ERROR_DEVICE_UNAVAILABLE)
CHECK_VALUE(cu::ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE)
CHECK_VALUE(cu::ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE)
CHECK_VALUE(cu::ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_IMAGE)
CHECK_VALUE(cu::ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT)
CHECK_VALUE(cu::ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_NO_BINARY_FOR_GPU)
CHECK_VALUE(cu::ERROR_ECC_UNCORRECTABLE, CUDA_ERROR_ECC_UNCORRECTABLE)
CHECK_VALUE(cu::ERROR_PEER_ACCESS_UNSUPPORTED, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED)
CHECK_VALUE(cu::ERROR_INVALID_PTX, CUDA_ERROR_INVALID_PTX)
CHECK_VALUE(cu::ERROR_NVLINK_UNCORRECTABLE, CUDA_ERROR_NVLINK_UNCORRECTABLE)
CHECK_VALUE(cu::ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
CHECK_VALUE(cu::ERROR_CONTAINED, CUDA_ERROR_CONTAINED)
CHECK_VALUE(cu::ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE)
CHECK_VALUE(cu::ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND)
CHECK_VALUE(cu::ERROR_NOT_READY, CUDA_ERROR_NOT_READY)
CHECK_VALUE(cu::ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS)
CHECK_VALUE(cu::ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
CHECK_VALUE(cu::ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_LAUNCH_TIMEOUT)
CHECK_VALUE(cu::ERROR_PEER_ACCESS_ALREADY_ENABLED, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
CHECK_VALUE(cu::ERROR_CONTEXT_IS_DESTROYED, CUDA_ERROR_CONTEXT_IS_DESTROYED)
CHECK_VALUE(cu::ERROR_ASSERT, CUDA_ERROR_ASSERT)
CHECK_VALUE(cu::ERROR_HOST_MEMORY_ALREADY_REGISTERED, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
CHECK_VALUE(cu::ERROR_HOST_MEMORY_NOT_REGISTERED, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
CHECK_VALUE(cu::ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_HARDWARE_STACK_ERROR)
CHECK_VALUE(cu::ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_ILLEGAL_INSTRUCTION)
CHECK_VALUE(cu::ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS)
CHECK_VALUE(cu::ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_INVALID_ADDRESS_SPACE)
CHECK_VALUE(cu::ERROR_INVALID_PC, CUDA_ERROR_INVALID_PC)
CHECK_VALUE(cu::ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED)
CHECK_VALUE(cu::ERROR_NOT_PERMITTED, CUDA_ERROR_NOT_PERMITTED)
CHECK_VALUE(cu::ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED)
CHECK_VALUE(cu::ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN)
#if CUDA_VERSION >= 12080  // CUDA_ERROR_TENSOR_MEMORY_LEAK came with 12.8
CHECK_VALUE(cu::ERROR_TENSOR_MEMORY_LEAK, CUDA_ERROR_TENSOR_MEMORY_LEAK)
#endif

CHECK_VALUE(cu::ATTR_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
CHECK_VALUE(cu::ATTR_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)
CHECK_VALUE(cu::ATTR_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)
CHECK_VALUE(cu::ATTR_MAX_BLOCK_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)
CHECK_VALUE(cu::ATTR_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
CHECK_VALUE(cu::ATTR_MAX_GRID_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)
CHECK_VALUE(cu::ATTR_MAX_GRID_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)
CHECK_VALUE(cu::ATTR_MAX_SHARED_MEMORY_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
CHECK_VALUE(cu::ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
CHECK_VALUE(cu::ATTR_INTEGRATED, CU_DEVICE_ATTRIBUTE_INTEGRATED)
CHECK_VALUE(cu::ATTR_CAN_MAP_HOST_MEMORY, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)
CHECK_VALUE(cu::ATTR_UNIFIED_ADDRESSING, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)
CHECK_VALUE(cu::ATTR_PAGEABLE_MEMORY_ACCESS, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)
CHECK_VALUE(cu::ATTR_HOST_REGISTER_SUPPORTED, CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED)
CHECK_VALUE(cu::ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
            CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES)
CHECK_VALUE(cu::ATTR_READ_ONLY_HOST_REGISTER_SUPPORTED, CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED)
CHECK_VALUE(cu::ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS)

CHECK_VALUE(cu::STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING)
CHECK_VALUE(cu::EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING)
CHECK_VALUE(cu::HOST_ALLOC_PORTABLE, CU_MEMHOSTALLOC_PORTABLE)
CHECK_VALUE(cu::HOST_ALLOC_MAPPED, CU_MEMHOSTALLOC_DEVICEMAP)
CHECK_VALUE(cu::HOST_REGISTER_PORTABLE, CU_MEMHOSTREGISTER_PORTABLE)
CHECK_VALUE(cu::HOST_REGISTER_MAPPED, CU_MEMHOSTREGISTER_DEVICEMAP)
CHECK_VALUE(cu::HOST_REGISTER_READ_ONLY, CU_MEMHOSTREGISTER_READ_ONLY)
CHECK_VALUE(cu::WAIT_VALUE_GEQ, CU_STREAM_WAIT_VALUE_GEQ)
CHECK_VALUE(cu::WRITE_VALUE_FENCED, CU_STREAM_WRITE_VALUE_DEFAULT)
CHECK_VALUE(cu::JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER)
CHECK_VALUE(cu::JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
#undef CHECK_VALUE

}  // namespace

int main() {
  std::printf("rig's CUDA declarations match cuda.h %d (checked at compile time)\n", CUDA_VERSION);
  return 0;
}
