// The fake libamdhip64: the fake stream library (../fake_stream/fake_stream.h) renamed to HIP, as ggml's
// ggml-cuda/vendors/hip.h makes HIP of CUDA and src/drivers/hip/api.cpp loads HIP into the stream table.
// The table's calls whose signature HIP kept (SAME in src/drivers/stream/calls.h) are exported as
// implemented, under HIP's names; the rest (ADAPTED: device ids for contexts, void * device addresses, a
// copy's direction, a wait's mask) through one adapter each below, the real driver's adapters turned
// around. The Face says where the HIP runtime behaves apart (docs/mapped.md: false successes, a registered
// range's own device address, device 0 current by default). There are no interprocess calls: the fake HIP
// runtime has none. Switches and counters: fake_hip.h.
#include "fake_hip.h"

#include "../fake_stream/fake_stream.h"
#include "drivers/hip/hip.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace hip = rig::hip;

namespace fake_stream {

const Face &face() {
  static const Face f{
      "FAKEHIP_",
      "Fake HIP Device %d",
      size_t{24} << 30,
      70224,  // as ROCm 7.2.4 would report it: the runtime the seed measured
      {hip::ATTR_MAX_THREADS_PER_BLOCK,
       {hip::ATTR_MAX_BLOCK_DIM_X, hip::ATTR_MAX_BLOCK_DIM_Y, hip::ATTR_MAX_BLOCK_DIM_Z},
       {hip::ATTR_MAX_GRID_DIM_X, hip::ATTR_MAX_GRID_DIM_Y, hip::ATTR_MAX_GRID_DIM_Z},
       hip::ATTR_MAX_SHARED_MEMORY_PER_BLOCK, hip::ATTR_INTEGRATED, -1, -1, hip::ATTR_HOST_REGISTER_SUPPORTED,
       hip::ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, -1, hip::ATTR_CAN_USE_STREAM_WAIT_VALUE},
      {{1024, 1024, 1024}, {2147483647, 2147483647, 2147483647}, 65536},
      /*device_zero_current=*/true,
      /*pageable_uploads_land_later=*/false,
      /*false_registrations=*/true,
      /*registered_alias=*/uintptr_t{1} << 47,  // above every user-space address: never the host pointer
  };
  return f;
}

}  // namespace fake_stream

// The calls whose signature HIP kept, under HIP's names (the stream table is the rename table).
#define FAKE_HIP_EXPORT(A, field, params, cu, cu_symbol, hip, how) FAKE_HIP_##how(field, params, hip)
#define FAKE_HIP_SAME(field, params, hip) FAKE_STREAM_EXPORT_AS(field, params, #hip)
#define FAKE_HIP_ADAPTED(field, params, hip)
RIG_STREAM_CALLS(FAKE_HIP_EXPORT, _)
#undef FAKE_HIP_EXPORT
#undef FAKE_HIP_SAME
#undef FAKE_HIP_ADAPTED

EXPORT int fakehip_control(const char *name, long long value) { return control(name, value); }

EXPORT long long fakehip_query(const char *name) { return query(name); }

// ----- the adapters: HIP's signatures onto the table's -----------------------------------------------------

namespace {
DevicePtr address(const void *p) { return reinterpret_cast<uintptr_t>(p); }
void *pointer(DevicePtr a) { return reinterpret_cast<void *>(static_cast<uintptr_t>(a)); }
}  // namespace

EXPORT Result hipGetDevice(int *device) {
  entered(Entry::get_current);
  if (!device) return ERROR_INVALID_VALUE;
  *device = current()->ordinal;
  return SUCCESS;
}

EXPORT Result hipSetDevice(int device) {
  entered(Entry::set_current);
  if (!valid_device(device)) return ERROR_INVALID_DEVICE;
  std::lock_guard g(state().lock);
  current_gpu = gpu_of(device);
  return SUCCESS;
}

EXPORT Result hipDeviceEnablePeerAccess(int peer, unsigned flags) {
  if (!valid_device(peer)) return ERROR_INVALID_VALUE;
  Gpu *p;
  {
    std::lock_guard g(state().lock);
    p = gpu_of(peer);
  }
  return fake_enable_peer_access(handle(p), flags);
}

EXPORT Result hipMalloc(void **ptr, size_t bytes) {
  if (!ptr) return ERROR_INVALID_VALUE;
  DevicePtr a = 0;
  Result r = bytes == 0 ? SUCCESS : fake_mem_alloc(&a, bytes);  // HIP: nothing asked, a null pointer given
  *ptr = pointer(a);
  return r;
}

EXPORT Result hipFree(void *ptr) { return ptr ? fake_mem_free(address(ptr)) : SUCCESS; }

EXPORT Result hipHostGetDevicePointer(void **device, void *host, unsigned flags) {
  if (!device) return ERROR_INVALID_VALUE;
  DevicePtr a = 0;
  Result r = fake_host_device_pointer(&a, host, flags);
  if (r == SUCCESS) *device = pointer(a);
  return r;
}

EXPORT Result hipMemcpyHtoD(void *dst, const void *src, size_t bytes) {
  return fake_copy_to_device(address(dst), src, bytes);
}

EXPORT Result hipMemcpyDtoH(void *dst, void *src, size_t bytes) { return fake_copy_to_host(dst, address(src), bytes); }

EXPORT Result hipMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, Stream stream) {
  if (kind != hip::MEMCPY_DEFAULT) return ERROR_INVALID_VALUE;  // rig passes device addresses, direction inferred
  return fake_copy_async(address(dst), address(src), bytes, stream);
}

EXPORT Result hipMemsetD8Async(void *dst, unsigned char value, size_t count, Stream stream) {
  return fake_fill_async(address(dst), value, count, stream);
}

EXPORT Result hipStreamWriteValue64(Stream stream, void *ptr, uint64_t value, unsigned flags) {
  return fake_write_value64(stream, address(ptr), value, flags);
}

EXPORT Result hipStreamWaitValue64(Stream stream, void *ptr, uint64_t value, unsigned flags, uint64_t mask) {
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  if (mask != ~uint64_t{0}) return ERROR_INVALID_VALUE;  // rig compares the whole word
  return fake_wait_value64(stream, address(ptr), value, flags);
}

// ----- HIP's own entry points ------------------------------------------------------------------------------

EXPORT const char *hipGetErrorName(Result error) {
  static const std::map<int, const char *> &names = *new std::map<int, const char *>{
      {0, "hipSuccess"}, {1, "hipErrorInvalidValue"}, {2, "hipErrorOutOfMemory"},
      {3, "hipErrorNotInitialized"}, {100, "hipErrorNoDevice"}, {101, "hipErrorInvalidDevice"},
      {200, "hipErrorInvalidImage"}, {209, "hipErrorNoBinaryForGpu"}, {217, "hipErrorPeerAccessUnsupported"},
      {218, "hipErrorInvalidKernelFile"}, {400, "hipErrorInvalidHandle"}, {500, "hipErrorNotFound"},
      {600, "hipErrorNotReady"}, {700, "hipErrorIllegalAddress"}, {704, "hipErrorPeerAccessAlreadyEnabled"},
      {712, "hipErrorHostMemoryAlreadyRegistered"}, {713, "hipErrorHostMemoryNotRegistered"},
      {719, "hipErrorLaunchFailure"}, {801, "hipErrorNotSupported"}, {999, "hipErrorUnknown"}};
  auto it = names.find(error);
  return it == names.end() ? "hipErrorUnknown" : it->second;  // what HIP answers for codes it does not know
}

// Text binds the builtins its `.entry` lines name (the tests pass tests/cuda/kernels.ptx as their "code
// object"); ELF bytes have no code for the fake's GPU; "fakehip:invalid" fails as a bad kernel file.
EXPORT Result hipModuleLoadData(Module *out, const void *image) {
  if (!out || !image) return ERROR_INVALID_VALUE;
  const auto *bytes = static_cast<const unsigned char *>(image);
  if (bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F') return ERROR_NO_BINARY_FOR_GPU;
  std::string text(static_cast<const char *>(image));
  if (text.find("fakehip:invalid") != std::string::npos) return hip::ERROR_INVALID_KERNEL_FILE;
  auto m = module_from_text(current(), text);
  if (!m) return hip::ERROR_INVALID_KERNEL_FILE;
  return keep_module(std::move(m), out);
}
