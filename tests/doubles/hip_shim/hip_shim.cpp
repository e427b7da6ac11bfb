// A shim library exporting the hip* entry points rig's HIP driver loads (src/drivers/hip/hip.h), each over
// the CUDA driver API, so the HIP driver's own code runs on a real NVIDIA GPU: RIG_HIP_LIBRARY=<this file>.
// It builds without any SDK: the cu* entry points come from rig's own declarations (drivers/cuda/cu.h),
// loaded with dlopen from libcuda.so.1 (or HIPSHIM_CUDA_LIBRARY: the tests point it at the fake libcuda).
//
// HIP's runtime model over CUDA's driver model: a thread's current HIP device is a device ordinal; each call
// that needs a context makes that device's primary context current (as the CUDA runtime does). hipError_t and
// CUresult share their values for every error rig tells apart, as do the flags rig passes (stream, event,
// host allocation and registration flags), so results and flags pass through unchanged; attributes are
// translated one by one.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "drivers/cuda/cu.h"
#include "drivers/hip/hip.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace cu = rig::cu;
namespace hip = rig::hip;

namespace {

struct Cuda {
  using Result = cu::Result;
  using Device = cu::Device;
  using DevicePtr = cu::DevicePtr;
  using Context = cu::Context;
  using Stream = cu::Stream;
  using Event = cu::Event;
  using Module = cu::Module;
  using Function = cu::Function;
  using IpcHandle = cu::IpcHandle;
  using MemcpyAttributes = cu::MemcpyAttributes;
  using Graph = cu::Graph;
  using GraphExec = cu::GraphExec;
#define SHIM_MEMBER(field, symbol, ret, params) ret(*field) params = nullptr;
  RIG_CU_ENTRY_POINTS(SHIM_MEMBER)
  RIG_CU_OPTIONAL_ENTRY_POINTS(SHIM_MEMBER)
#undef SHIM_MEMBER
  cu::Result init = cu::ERROR_NOT_INITIALIZED;  // cuInit's answer, or NOT_INITIALIZED if not loaded
  std::mutex lock;
  std::vector<cu::Context> contexts;  // primary contexts by ordinal (retained once, never released)
};

Cuda &cuda() {
  static Cuda &c = *[] {
    auto *c = new Cuda;  // never destroyed: the runtime's objects outlive static destruction
    const char *env = std::getenv("HIPSHIM_CUDA_LIBRARY");
    void *lib = dlopen(env && *env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return c;
    bool missing = false;
    using namespace rig::cu;
#define SHIM_LOAD(field, symbol, ret, params) \
  c->field = reinterpret_cast<ret(*) params>(dlsym(lib, symbol));  \
  missing |= c->field == nullptr;
    RIG_CU_ENTRY_POINTS(SHIM_LOAD)
#undef SHIM_LOAD
#define SHIM_LOAD_OPTIONAL(field, symbol, ret, params) c->field = reinterpret_cast<ret(*) params>(dlsym(lib, symbol));
    RIG_CU_OPTIONAL_ENTRY_POINTS(SHIM_LOAD_OPTIONAL)
#undef SHIM_LOAD_OPTIONAL
    if (!missing) c->init = c->cuInit(0);
    return c;
  }();
  return c;
}

thread_local int current_device = 0;

// Makes the current HIP device's primary context current on this thread; the CUDA error if it cannot.
cu::Result bind(int device = -1) {
  Cuda &c = cuda();
  if (c.init != cu::SUCCESS) return c.init;
  if (device < 0) device = current_device;
  cu::Context ctx = nullptr;
  {
    std::lock_guard g(c.lock);
    if (static_cast<size_t>(device) >= c.contexts.size()) c.contexts.resize(device + 1, nullptr);
    if (!c.contexts[device]) {
      cu::Device d = 0;
      if (cu::Result r = c.cuDeviceGet(&d, device); r != cu::SUCCESS) return r;
      if (cu::Result r = c.cuDevicePrimaryCtxRetain(&c.contexts[device], d); r != cu::SUCCESS) return r;
    }
    ctx = c.contexts[device];
  }
  cu::Context now = nullptr;
  if (c.cuCtxGetCurrent(&now) == cu::SUCCESS && now == ctx) return cu::SUCCESS;
  return c.cuCtxSetCurrent(ctx);
}

#define BIND()                                  \
  do {                                          \
    if (cu::Result r_ = bind(); r_ != cu::SUCCESS) return r_; \
  } while (0)

// The CUdevice of a HIP device ordinal (cuDeviceGet's answer: not promised to equal the ordinal).
cu::Result device_of(int ordinal, cu::Device *out) {
  if (cuda().init != cu::SUCCESS) return cuda().init;
  return cuda().cuDeviceGet(out, ordinal);
}

#define DEVICE(ordinal, var)                                                            \
  cu::Device var = 0;                                                                   \
  if (cu::Result r_ = device_of(ordinal, &var); r_ != cu::SUCCESS) return r_

cu::DevicePtr dptr(const void *p) { return static_cast<cu::DevicePtr>(reinterpret_cast<uintptr_t>(p)); }

// hipDeviceAttribute_t -> CUdevice_attribute, -1 where rig's HIP driver never asks for it.
int cuda_attribute(int hip_attribute) {
  switch (hip_attribute) {
    case hip::ATTR_INTEGRATED: return cu::ATTR_INTEGRATED;
    case hip::ATTR_MAX_BLOCK_DIM_X: return cu::ATTR_MAX_BLOCK_DIM_X;
    case hip::ATTR_MAX_BLOCK_DIM_Y: return cu::ATTR_MAX_BLOCK_DIM_Y;
    case hip::ATTR_MAX_BLOCK_DIM_Z: return cu::ATTR_MAX_BLOCK_DIM_Z;
    case hip::ATTR_MAX_GRID_DIM_X: return cu::ATTR_MAX_GRID_DIM_X;
    case hip::ATTR_MAX_GRID_DIM_Y: return cu::ATTR_MAX_GRID_DIM_Y;
    case hip::ATTR_MAX_GRID_DIM_Z: return cu::ATTR_MAX_GRID_DIM_Z;
    case hip::ATTR_MAX_THREADS_PER_BLOCK: return cu::ATTR_MAX_THREADS_PER_BLOCK;
    case hip::ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES:
      return cu::ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES;
    case hip::ATTR_MAX_SHARED_MEMORY_PER_BLOCK: return cu::ATTR_MAX_SHARED_MEMORY_PER_BLOCK;
    case hip::ATTR_HOST_REGISTER_SUPPORTED: return cu::ATTR_HOST_REGISTER_SUPPORTED;
    case hip::ATTR_CAN_USE_STREAM_WAIT_VALUE: return cu::ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS;
    default: return -1;
  }
}

}  // namespace

// ----- initialisation, errors, devices -------------------------------------------------------------------

EXPORT hip::Error hipInit(unsigned flags) {
  if (flags != 0) return hip::ERROR_INVALID_VALUE;
  return cuda().init;
}

EXPORT hip::Error hipDriverGetVersion(int *version) {
  if (cuda().init != cu::SUCCESS) return cuda().init;
  return cuda().cuDriverGetVersion(version);
}

EXPORT const char *hipGetErrorName(hip::Error error) {
  const char *name = nullptr;
  if (cuda().cuGetErrorName && cuda().cuGetErrorName(error, &name) == cu::SUCCESS && name) return name;
  return "hipErrorUnknown";
}

EXPORT hip::Error hipGetDeviceCount(int *count) {
  if (cuda().init != cu::SUCCESS) return cuda().init;
  return cuda().cuDeviceGetCount(count);
}

EXPORT hip::Error hipGetDevice(int *device) {
  if (!device) return hip::ERROR_INVALID_VALUE;
  *device = current_device;
  return hip::SUCCESS;
}

EXPORT hip::Error hipSetDevice(int device) {
  int count = 0;
  if (hip::Error r = hipGetDeviceCount(&count); r != hip::SUCCESS) return r;
  if (device < 0 || device >= count) return hip::ERROR_INVALID_DEVICE;
  current_device = device;
  return hip::SUCCESS;
}

EXPORT hip::Error hipDeviceGetName(char *name, int length, int device) {
  DEVICE(device, d);
  return cuda().cuDeviceGetName(name, length, d);
}

EXPORT hip::Error hipDeviceTotalMem(size_t *bytes, int device) {
  DEVICE(device, d);
  return cuda().cuDeviceTotalMem(bytes, d);
}

EXPORT hip::Error hipDeviceGetAttribute(int *value, int attribute, int device) {
  DEVICE(device, d);
  int a = cuda_attribute(attribute);
  if (a < 0) return hip::ERROR_INVALID_VALUE;
  return cuda().cuDeviceGetAttribute(value, a, d);
}

EXPORT hip::Error hipDeviceCanAccessPeer(int *can, int device, int peer) {
  DEVICE(device, d);
  DEVICE(peer, p);
  return cuda().cuDeviceCanAccessPeer(can, d, p);
}

EXPORT hip::Error hipDeviceEnablePeerAccess(int peer, unsigned flags) {
  if (cu::Result r = bind(peer); r != cu::SUCCESS) return r;  // retains the peer's primary context
  cu::Context peer_ctx = nullptr;
  {
    std::lock_guard g(cuda().lock);  // another thread may be growing the table
    peer_ctx = cuda().contexts[peer];
  }
  BIND();
  return cuda().cuCtxEnablePeerAccess(peer_ctx, flags);
}

EXPORT hip::Error hipDeviceSynchronize(void) {
  BIND();
  return cuda().cuCtxSynchronize();
}

// ----- streams and events --------------------------------------------------------------------------------

EXPORT hip::Error hipStreamCreateWithFlags(hip::Stream *stream, unsigned flags) {
  BIND();
  return cuda().cuStreamCreate(reinterpret_cast<cu::Stream *>(stream), flags);  // hipStreamNonBlocking == 1
}

EXPORT hip::Error hipStreamDestroy(hip::Stream stream) {
  BIND();
  return cuda().cuStreamDestroy(reinterpret_cast<cu::Stream>(stream));
}

EXPORT hip::Error hipStreamQuery(hip::Stream stream) {
  BIND();
  return cuda().cuStreamQuery(reinterpret_cast<cu::Stream>(stream));
}

EXPORT hip::Error hipStreamSynchronize(hip::Stream stream) {
  BIND();
  return cuda().cuStreamSynchronize(reinterpret_cast<cu::Stream>(stream));
}

EXPORT hip::Error hipStreamWaitEvent(hip::Stream stream, hip::Event event, unsigned flags) {
  BIND();
  return cuda().cuStreamWaitEvent(reinterpret_cast<cu::Stream>(stream), reinterpret_cast<cu::Event>(event), flags);
}

EXPORT hip::Error hipEventCreateWithFlags(hip::Event *event, unsigned flags) {
  BIND();
  return cuda().cuEventCreate(reinterpret_cast<cu::Event *>(event), flags);  // hipEventDisableTiming == 2
}

EXPORT hip::Error hipEventDestroy(hip::Event event) {
  BIND();
  return cuda().cuEventDestroy(reinterpret_cast<cu::Event>(event));
}

EXPORT hip::Error hipEventRecord(hip::Event event, hip::Stream stream) {
  BIND();
  return cuda().cuEventRecord(reinterpret_cast<cu::Event>(event), reinterpret_cast<cu::Stream>(stream));
}

EXPORT hip::Error hipEventQuery(hip::Event event) {
  BIND();
  return cuda().cuEventQuery(reinterpret_cast<cu::Event>(event));
}

EXPORT hip::Error hipEventSynchronize(hip::Event event) {
  BIND();
  return cuda().cuEventSynchronize(reinterpret_cast<cu::Event>(event));
}

EXPORT hip::Error hipStreamWriteValue64(hip::Stream stream, void *ptr, uint64_t value, unsigned flags) {
  if (!cuda().cuStreamWriteValue64 || flags != 0) return hip::ERROR_NOT_SUPPORTED;
  BIND();
  return cuda().cuStreamWriteValue64(reinterpret_cast<cu::Stream>(stream), dptr(ptr), value,
                                     cu::WRITE_VALUE_FENCED);
}

EXPORT hip::Error hipStreamWaitValue64(hip::Stream stream, void *ptr, uint64_t value, unsigned flags,
                                       uint64_t mask) {
  // CUDA has no masked wait: only the full-word greater-or-equal wait rig uses.
  if (!cuda().cuStreamWaitValue64 || flags != hip::WAIT_VALUE_GEQ || mask != ~uint64_t{0})
    return hip::ERROR_NOT_SUPPORTED;
  BIND();
  return cuda().cuStreamWaitValue64(reinterpret_cast<cu::Stream>(stream), dptr(ptr), value,
                                    cu::WAIT_VALUE_GEQ);
}

// ----- memory --------------------------------------------------------------------------------------------

EXPORT hip::Error hipMalloc(void **ptr, size_t bytes) {
  if (!ptr) return hip::ERROR_INVALID_VALUE;
  if (bytes == 0) {
    *ptr = nullptr;
    return hip::SUCCESS;
  }
  BIND();
  cu::DevicePtr p = 0;
  cu::Result r = cuda().cuMemAlloc(&p, bytes);
  if (r == cu::SUCCESS) *ptr = reinterpret_cast<void *>(static_cast<uintptr_t>(p));
  return r;
}

// Interprocess handles: CUDA's bytes are HIP's (64 of them). HIP's lazy peer access flag is 0, CUDA's 1.
#define SHIM_IPC(call) \
  if (!cuda().call) return hip::ERROR_NOT_SUPPORTED; \
  BIND()

EXPORT hip::Error hipIpcGetMemHandle(cu::IpcHandle *handle, void *ptr) {
  SHIM_IPC(cuIpcGetMemHandle);
  return cuda().cuIpcGetMemHandle(handle, dptr(ptr));
}

EXPORT hip::Error hipIpcOpenMemHandle(void **ptr, cu::IpcHandle handle, unsigned flags) {
  SHIM_IPC(cuIpcOpenMemHandle);
  if (flags != hip::IPC_MEM_LAZY_ENABLE_PEER_ACCESS) return hip::ERROR_INVALID_VALUE;
  cu::DevicePtr p = 0;
  cu::Result r = cuda().cuIpcOpenMemHandle(&p, handle, cu::IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  *ptr = reinterpret_cast<void *>(static_cast<uintptr_t>(p));
  return r;
}

EXPORT hip::Error hipIpcCloseMemHandle(void *ptr) {
  SHIM_IPC(cuIpcCloseMemHandle);
  return cuda().cuIpcCloseMemHandle(dptr(ptr));
}

EXPORT hip::Error hipIpcGetEventHandle(cu::IpcHandle *handle, hip::Event event) {
  SHIM_IPC(cuIpcGetEventHandle);
  return cuda().cuIpcGetEventHandle(handle, reinterpret_cast<cu::Event>(event));
}

EXPORT hip::Error hipIpcOpenEventHandle(hip::Event *event, cu::IpcHandle handle) {
  SHIM_IPC(cuIpcOpenEventHandle);
  return cuda().cuIpcOpenEventHandle(reinterpret_cast<cu::Event *>(event), handle);
}
#undef SHIM_IPC

EXPORT hip::Error hipFree(void *ptr) {
  if (!ptr) return hip::SUCCESS;
  BIND();
  return cuda().cuMemFree(dptr(ptr));
}

EXPORT hip::Error hipHostMalloc(void **ptr, size_t bytes, unsigned flags) {
  BIND();
  return cuda().cuMemHostAlloc(ptr, bytes, flags);  // Portable 1, Mapped 2 == CUDA's Portable, DeviceMap
}

EXPORT hip::Error hipHostFree(void *ptr) {
  BIND();
  return cuda().cuMemFreeHost(ptr);
}

EXPORT hip::Error hipHostGetDevicePointer(void **device, void *host, unsigned flags) {
  if (!device) return hip::ERROR_INVALID_VALUE;
  BIND();
  cu::DevicePtr p = 0;
  cu::Result r = cuda().cuMemHostGetDevicePointer(&p, host, flags);
  if (r == cu::SUCCESS) *device = reinterpret_cast<void *>(static_cast<uintptr_t>(p));
  return r;
}

EXPORT hip::Error hipHostRegister(void *host, size_t bytes, unsigned flags) {
  BIND();
  return cuda().cuMemHostRegister(host, bytes, flags);  // Portable 1, Mapped 2, ReadOnly 8: CUDA's values
}

EXPORT hip::Error hipHostUnregister(void *host) {
  BIND();
  return cuda().cuMemHostUnregister(host);
}

EXPORT hip::Error hipMemcpyHtoD(void *dst, const void *src, size_t bytes) {
  BIND();
  // HIP's hipMemcpyHtoD is synchronous; cuMemcpyHtoD from pageable memory returns before the DMA lands.
  cu::Result r = cuda().cuMemcpyHtoD(dptr(dst), src, bytes);
  return r != 0 ? r : cuda().cuCtxSynchronize();
}

EXPORT hip::Error hipMemcpyDtoH(void *dst, void *src, size_t bytes) {
  BIND();
  return cuda().cuMemcpyDtoH(dst, dptr(src), bytes);
}

EXPORT hip::Error hipMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, hip::Stream stream) {
  if (kind != hip::MEMCPY_DEFAULT) return hip::ERROR_INVALID_VALUE;  // rig passes unified addresses only
  BIND();
  return cuda().cuMemcpyAsync(dptr(dst), dptr(src), bytes, reinterpret_cast<cu::Stream>(stream));
}

EXPORT hip::Error hipMemsetD8Async(void *dst, unsigned char value, size_t count, hip::Stream stream) {
  BIND();
  return cuda().cuMemsetD8Async(dptr(dst), value, count, reinterpret_cast<cu::Stream>(stream));
}

// ----- modules and launches ------------------------------------------------------------------------------

EXPORT hip::Error hipModuleLoadData(hip::Module *module, const void *image) {
  BIND();
  return cuda().cuModuleLoadDataEx(reinterpret_cast<cu::Module *>(module), image, 0, nullptr, nullptr);
}

EXPORT hip::Error hipModuleUnload(hip::Module module) {
  BIND();
  return cuda().cuModuleUnload(reinterpret_cast<cu::Module>(module));
}

EXPORT hip::Error hipModuleGetFunction(hip::Function *function, hip::Module module, const char *name) {
  BIND();
  return cuda().cuModuleGetFunction(reinterpret_cast<cu::Function *>(function), reinterpret_cast<cu::Module>(module),
                                    name);
}

EXPORT hip::Error hipModuleLaunchKernel(hip::Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned shared, hip::Stream stream,
                                        void **params, void **extra) {
  BIND();
  return cuda().cuLaunchKernel(reinterpret_cast<cu::Function>(f), gx, gy, gz, bx, by, bz, shared,
                               reinterpret_cast<cu::Stream>(stream), params, extra);
}
