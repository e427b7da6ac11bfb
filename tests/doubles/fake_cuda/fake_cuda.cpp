// The fake libcuda: the fake stream library (../fake_stream/fake_stream.h) under CUDA's names. The stream
// table's signatures are CUDA's (src/drivers/cuda/cu.h), so every call of the table is exported as
// implemented, under the exact symbol rig loads ("cuMemAlloc_v2"); CUDA's own entry points (errors'
// names, devices, primary contexts, module loading with JIT options) and cuLaunchHostFunc for the fake
// libnccl are this file's. Switches and counters: fake_cuda.h.
#include "fake_cuda.h"

#include "../fake_stream/fake_stream.h"
#include "drivers/cuda/cu.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace cu = rig::cu;

namespace fake_stream {

const Face &face() {
  static const Face f{
      "FAKECUDA_",
      "Fake CUDA Device %d",
      size_t{16} << 30,
      13000,
      {cu::ATTR_MAX_THREADS_PER_BLOCK,
       {cu::ATTR_MAX_BLOCK_DIM_X, cu::ATTR_MAX_BLOCK_DIM_Y, cu::ATTR_MAX_BLOCK_DIM_Z},
       {cu::ATTR_MAX_GRID_DIM_X, cu::ATTR_MAX_GRID_DIM_Y, cu::ATTR_MAX_GRID_DIM_Z},
       cu::ATTR_MAX_SHARED_MEMORY_PER_BLOCK, cu::ATTR_INTEGRATED, cu::ATTR_CAN_MAP_HOST_MEMORY,
       cu::ATTR_UNIFIED_ADDRESSING, cu::ATTR_HOST_REGISTER_SUPPORTED,
       cu::ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, cu::ATTR_READ_ONLY_HOST_REGISTER_SUPPORTED,
       cu::ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS},
      {{1024, 1024, 64}, {2147483647, 65535, 65535}, 49152},
      /*device_zero_current=*/false,
      /*pageable_uploads_land_later=*/true,
      /*false_registrations=*/false,
      /*registered_alias=*/0,
  };
  return f;
}

}  // namespace fake_stream

// Every call of the stream table, under CUDA's symbol.
#define FAKE_CUDA_EXPORT(A, field, params, cu, symbol, hip, how) FAKE_STREAM_EXPORT_AS(field, params, symbol)
RIG_STREAM_CALLS(FAKE_CUDA_EXPORT, _)
RIG_STREAM_OPTIONAL_CALLS(FAKE_CUDA_EXPORT, _)
#undef FAKE_CUDA_EXPORT

// CUDA 12.8's cuMemcpyBatchAsync (a failure index before the stream): the fake's batch, the index written
// only where the batch is refused (always 0 here: the fake does not say which copy it refused).
EXPORT Result cuMemcpyBatchAsync(DevicePtr *dsts, DevicePtr *srcs, size_t *sizes, size_t count,
                                 MemcpyAttributes *attributes, size_t *attribute_starts, size_t attribute_count,
                                 size_t *fail_index, Stream stream) {
  Result r = fake_copy_batch(dsts, srcs, sizes, count, attributes, attribute_starts, attribute_count, stream);
  if (r != SUCCESS && fail_index) *fail_index = 0;
  return r;
}

EXPORT int fakecuda_control(const char *name, long long value) { return control(name, value); }

EXPORT long long fakecuda_query(const char *name) { return query(name); }

// ----- CUDA's own entry points ---------------------------------------------------------------------------

EXPORT Result cuGetErrorName(Result error, const char **name) {
  static const std::map<int, const char *> &names = *new std::map<int, const char *>{
      {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
      {3, "CUDA_ERROR_NOT_INITIALIZED"}, {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
      {200, "CUDA_ERROR_INVALID_IMAGE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
      {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"}, {218, "CUDA_ERROR_INVALID_PTX"},
      {400, "CUDA_ERROR_INVALID_HANDLE"}, {500, "CUDA_ERROR_NOT_FOUND"}, {600, "CUDA_ERROR_NOT_READY"},
      {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
      {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"}, {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
      {719, "CUDA_ERROR_LAUNCH_FAILED"}, {800, "CUDA_ERROR_NOT_PERMITTED"}, {801, "CUDA_ERROR_NOT_SUPPORTED"},
      {999, "CUDA_ERROR_UNKNOWN"}};
  if (!name) return ERROR_INVALID_VALUE;
  auto it = names.find(error);
  if (it == names.end()) {
    *name = nullptr;
    return ERROR_INVALID_VALUE;
  }
  *name = it->second;
  return SUCCESS;
}

EXPORT Result cuGetErrorString(Result error, const char **text) { return cuGetErrorName(error, text); }

EXPORT Result cuDeviceGet(cu::Device *device, int ordinal) {
  if (!device || !valid_device(ordinal)) return ERROR_INVALID_DEVICE;
  *device = ordinal;
  return SUCCESS;
}

EXPORT Result cuDevicePrimaryCtxRetain(Context *context, cu::Device device) {
  if (!context || !valid_device(device)) return ERROR_INVALID_DEVICE;
  std::lock_guard g(state().lock);
  Gpu *c = gpu_of(device);
  ++c->retains;
  *context = handle(c);
  return SUCCESS;
}

EXPORT Result cuDevicePrimaryCtxRelease_v2(cu::Device device) {
  if (!valid_device(device)) return ERROR_INVALID_DEVICE;
  std::lock_guard g(state().lock);
  Gpu *c = gpu_of(device);
  if (c->retains == 0) return ERROR_INVALID_CONTEXT;
  --c->retains;
  return SUCCESS;
}

// PTX text (or any text) binds the builtins its `.entry` lines name; ELF and fatbin bytes have no code for
// the fake's GPU; "fakecuda:invalid" fails as bad PTX, with the reason in the JIT error log.
EXPORT Result cuModuleLoadDataEx(Module *out, const void *image, unsigned count, int *options, void **values) {
  if (!out || !image) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  char *log = nullptr;
  size_t log_size = 0;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == cu::JIT_ERROR_LOG_BUFFER) log = static_cast<char *>(values[i]);
    if (options[i] == cu::JIT_ERROR_LOG_BUFFER_SIZE_BYTES) log_size = reinterpret_cast<uintptr_t>(values[i]);
  }
  auto say = [&](const char *text) {
    if (log && log_size) std::snprintf(log, log_size, "%s", text);
  };
  const auto *bytes = static_cast<const unsigned char *>(image);
  if ((bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F') ||
      (bytes[0] == 0x50 && bytes[1] == 0xED && bytes[2] == 0x55 && bytes[3] == 0xBA))
    return ERROR_NO_BINARY_FOR_GPU;
  std::string text(static_cast<const char *>(image));
  if (text.find("fakecuda:invalid") != std::string::npos) {
    say("ptxas fatal: fakecuda was asked to reject this text");
    return cu::ERROR_INVALID_PTX;
  }
  auto m = module_from_text(cur, text);
  if (!m) {
    say("fakecuda: no .entry in the module text");
    return cu::ERROR_INVALID_PTX;
  }
  return keep_module(std::move(m), out);
}

// Not one of rig's entry points: the fake libnccl (tests/doubles/fake_nccl) runs its collectives' work on
// the caller's streams through it, as NCCL's kernels run there. Skipped after a sticky error, as all work.
EXPORT Result cuLaunchHostFunc(Stream stream, void (*fn)(void *), void *data) {
  if (!fn) return ERROR_INVALID_VALUE;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  st->push([fn, data] { fn(data); });
  return SUCCESS;
}
