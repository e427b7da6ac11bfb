// rig's HIP declarations (drivers/hip/hip.h, the stream table it fills) against ROCm's hip_runtime_api.h
// (Debian's libamdhip64-dev): every entry point's signature, every value rig uses. No AMD GPU is here to
// catch a wrong declaration, so this compiles only where the header is found (tests/drivers/meson.build);
// a wrong declaration fails the build with the entry point's name. rig declares no HIP struct: its handles
// are opaque pointers, checked by size below.
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include <cstddef>
#include <cstdio>

#include "drivers/hip/api.h"
#include "vendor_abi.h"

namespace {

using namespace rig;

// rig's types as HIP names them, for picking one overload where the header has several.
template <class T> struct to_vendor { using type = T; };
template <> struct to_vendor<stream::Stream> { using type = hipStream_t; };
template <> struct to_vendor<stream::Event> { using type = hipEvent_t; };
template <> struct to_vendor<stream::Module> { using type = hipModule_t; };
template <> struct to_vendor<stream::Function> { using type = hipFunction_t; };
template <> struct to_vendor<stream::IpcHandle> { using type = hipIpcMemHandle_t; };
template <class T> struct to_vendor<T *> { using type = typename to_vendor<T>::type *; };
template <class F> struct exact;
template <class R, class... A> struct exact<R (*)(A...)> {
  using type = hipError_t (*)(typename to_vendor<A>::type...);
};
template <class F> using exact_t = typename exact<F>::type;

// Every entry point rig loads, by its own declaration.
#define CHECK_ENTRY(field, symbol, ret, params) \
  RIG_VENDOR_CHECK(decltype(hip::Api::field), field, exact_t<decltype(hip::Api::field)>);
RIG_HIP_ENTRY_POINTS(CHECK_ENTRY)
RIG_HIP_OPTIONAL_ENTRY_POINTS(CHECK_ENTRY)
#undef CHECK_ENTRY

// Every entry point the stream device calls as loaded, by the table's declaration (the adapters are rig's
// own code, checked by the compiler against hip.h, which the lines above check against HIP's).
#define CHECK_CALL(A, field, params, cu, cu_symbol, entry, how) CHECK_##how(field, entry)
#define CHECK_SAME(field, entry) \
  RIG_VENDOR_CHECK(decltype(stream::Calls::field), entry, exact_t<decltype(stream::Calls::field)>);
#define CHECK_ADAPTED(field, entry)
#define CHECK_NONE(field, entry)
RIG_STREAM_CALLS(CHECK_CALL, _)
RIG_STREAM_OPTIONAL_CALLS(CHECK_CALL, _)
#undef CHECK_CALL
#undef CHECK_SAME
#undef CHECK_ADAPTED
#undef CHECK_NONE

// Sizes of what crosses the boundary.
static_assert(sizeof(hip::Error) == sizeof(hipError_t));
static_assert(sizeof(hip::DevicePtr) == sizeof(hipDeviceptr_t));
static_assert(sizeof(stream::Stream) == sizeof(hipStream_t) && sizeof(stream::Event) == sizeof(hipEvent_t));
static_assert(sizeof(stream::Module) == sizeof(hipModule_t) && sizeof(stream::Function) == sizeof(hipFunction_t));
static_assert(sizeof(stream::IpcHandle) == sizeof(hipIpcMemHandle_t) &&
              sizeof(stream::IpcHandle) == sizeof(hipIpcEventHandle_t));
static_assert(stream::EVENT_INTERPROCESS == hipEventInterprocess &&
              hip::IPC_MEM_LAZY_ENABLE_PEER_ACCESS == hipIpcMemLazyEnablePeerAccess);
// The stream device carries HIP's void * device addresses as integers.
static_assert(sizeof(stream::DevicePtr) == sizeof(void *));

// Results: the values shared with CUDA (stream::values, by CUDA's names) and HIP's own.
#define CHECK_VALUE(rig_value, vendor_value) \
  static_assert(static_cast<long long>(rig_value) == static_cast<long long>(vendor_value), #rig_value " != " #vendor_value);
CHECK_VALUE(hip::SUCCESS, hipSuccess)
CHECK_VALUE(hip::ERROR_INVALID_VALUE, hipErrorInvalidValue)
CHECK_VALUE(hip::ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory)
CHECK_VALUE(hip::ERROR_NOT_INITIALIZED, hipErrorNotInitialized)
CHECK_VALUE(hip::ERROR_DEINITIALIZED, hipErrorDeinitialized)
CHECK_VALUE(hip::ERROR_NO_DEVICE, hipErrorNoDevice)
CHECK_VALUE(hip::ERROR_INVALID_DEVICE, hipErrorInvalidDevice)
CHECK_VALUE(hip::ERROR_INVALID_IMAGE, hipErrorInvalidImage)
CHECK_VALUE(hip::ERROR_INVALID_CONTEXT, hipErrorInvalidContext)
CHECK_VALUE(hip::ERROR_NO_BINARY_FOR_GPU, hipErrorNoBinaryForGpu)
CHECK_VALUE(hip::ERROR_ECC_NOT_CORRECTABLE, hipErrorECCNotCorrectable)
CHECK_VALUE(hip::ERROR_PEER_ACCESS_UNSUPPORTED, hipErrorPeerAccessUnsupported)
CHECK_VALUE(hip::ERROR_INVALID_KERNEL_FILE, hipErrorInvalidKernelFile)
CHECK_VALUE(hip::ERROR_SHARED_OBJECT_INIT_FAILED, hipErrorSharedObjectInitFailed)
CHECK_VALUE(hip::ERROR_INVALID_HANDLE, hipErrorInvalidHandle)
CHECK_VALUE(hip::ERROR_NOT_FOUND, hipErrorNotFound)
CHECK_VALUE(hip::ERROR_NOT_READY, hipErrorNotReady)
CHECK_VALUE(hip::ERROR_ILLEGAL_ADDRESS, hipErrorIllegalAddress)
CHECK_VALUE(hip::ERROR_LAUNCH_OUT_OF_RESOURCES, hipErrorLaunchOutOfResources)
CHECK_VALUE(hip::ERROR_LAUNCH_TIMEOUT, hipErrorLaunchTimeOut)
CHECK_VALUE(hip::ERROR_PEER_ACCESS_ALREADY_ENABLED, hipErrorPeerAccessAlreadyEnabled)
CHECK_VALUE(hip::ERROR_CONTEXT_IS_DESTROYED, hipErrorContextIsDestroyed)
CHECK_VALUE(hip::ERROR_ASSERT, hipErrorAssert)
CHECK_VALUE(hip::ERROR_HOST_MEMORY_ALREADY_REGISTERED, hipErrorHostMemoryAlreadyRegistered)
CHECK_VALUE(hip::ERROR_HOST_MEMORY_NOT_REGISTERED, hipErrorHostMemoryNotRegistered)
CHECK_VALUE(hip::ERROR_LAUNCH_FAILURE, hipErrorLaunchFailure)
CHECK_VALUE(hip::ERROR_NOT_SUPPORTED, hipErrorNotSupported)
CHECK_VALUE(hip::ERROR_UNKNOWN, hipErrorUnknown)
CHECK_VALUE(hip::ERROR_RUNTIME_MEMORY, hipErrorRuntimeMemory)
CHECK_VALUE(hip::ERROR_RUNTIME_OTHER, hipErrorRuntimeOther)

// Device attributes (positions in hipDeviceAttribute_t).
CHECK_VALUE(hip::ATTR_INTEGRATED, hipDeviceAttributeIntegrated)
CHECK_VALUE(hip::ATTR_MAX_BLOCK_DIM_X, hipDeviceAttributeMaxBlockDimX)
CHECK_VALUE(hip::ATTR_MAX_BLOCK_DIM_Y, hipDeviceAttributeMaxBlockDimY)
CHECK_VALUE(hip::ATTR_MAX_BLOCK_DIM_Z, hipDeviceAttributeMaxBlockDimZ)
CHECK_VALUE(hip::ATTR_MAX_GRID_DIM_X, hipDeviceAttributeMaxGridDimX)
CHECK_VALUE(hip::ATTR_MAX_GRID_DIM_Y, hipDeviceAttributeMaxGridDimY)
CHECK_VALUE(hip::ATTR_MAX_GRID_DIM_Z, hipDeviceAttributeMaxGridDimZ)
CHECK_VALUE(hip::ATTR_MAX_THREADS_PER_BLOCK, hipDeviceAttributeMaxThreadsPerBlock)
CHECK_VALUE(hip::ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
            hipDeviceAttributePageableMemoryAccessUsesHostPageTables)
CHECK_VALUE(hip::ATTR_MAX_SHARED_MEMORY_PER_BLOCK, hipDeviceAttributeMaxSharedMemoryPerBlock)
#if HIP_VERSION_MAJOR >= 6  // newer runtimes only (rig reads a failed query as unknown)
CHECK_VALUE(hip::ATTR_HOST_REGISTER_SUPPORTED, hipDeviceAttributeHostRegisterSupported)
#endif
CHECK_VALUE(hip::ATTR_CAN_USE_STREAM_WAIT_VALUE, hipDeviceAttributeCanUseStreamWaitValue)

// Flags and kinds.
CHECK_VALUE(hip::STREAM_NON_BLOCKING, hipStreamNonBlocking)
CHECK_VALUE(hip::EVENT_DISABLE_TIMING, hipEventDisableTiming)
CHECK_VALUE(hip::HOST_ALLOC_PORTABLE, hipHostMallocPortable)
CHECK_VALUE(hip::HOST_ALLOC_MAPPED, hipHostMallocMapped)
CHECK_VALUE(hip::HOST_REGISTER_PORTABLE, hipHostRegisterPortable)
CHECK_VALUE(hip::HOST_REGISTER_MAPPED, hipHostRegisterMapped)
#if HIP_VERSION_MAJOR >= 6  // the read-only flag came after ROCm 5
CHECK_VALUE(hip::HOST_REGISTER_READ_ONLY, hipHostRegisterReadOnly)
#endif
CHECK_VALUE(hip::WAIT_VALUE_GEQ, hipStreamWaitValueGte)
CHECK_VALUE(hip::MEMCPY_DEFAULT, hipMemcpyDefault)
#undef CHECK_VALUE

}  // namespace

// Everything above is checked when this file compiles; running it says so in the log.
int main() {
  std::puts("rig's HIP declarations match hip_runtime_api.h (checked at compile time)");
  return 0;
}
