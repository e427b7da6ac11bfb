#include "drivers/cuda/api.h"

#include <cstdio>
#include <string>

#include "core/error.h"
#include "drivers/common/library.h"
#include "drivers/cuda/context.h"
#include "drivers/cuda/module.h"

namespace rig::cuda {
namespace {

using Loaded = common::Loaded<Api>;

// The stream device's table, filled with the very pointers loaded (cu.h's types are the table's). Names are
// the calls as CUDA's documentation spells them.
// The table's copy_batch over CUDA 12.8's entry point (Api::cuMemcpyBatchAsync_12_8): the failure index
// it reports is not used (a failed batch loses the device whichever copy failed).
cu::Result copy_batch_12_8(cu::DevicePtr *dsts, cu::DevicePtr *srcs, size_t *sizes, size_t count,
                           stream::MemcpyAttributes *attributes, size_t *attribute_starts, size_t attribute_count,
                           cu::Stream stream) {
  size_t fail_index = 0;
  return api()->cuMemcpyBatchAsync_12_8(dsts, srcs, sizes, count, attributes, attribute_starts, attribute_count,
                                        &fail_index, stream);
}

void fill_family(Api &a) {
  stream::Family &f = a.family;
  f.prefix = "cuda";
  f.framework = "CUDA";
#define RIG_CU_STREAM(A, field, params, name, ...) \
  f.calls.field = a.name;                          \
  f.names.field = #name;
  RIG_STREAM_CALLS(RIG_CU_STREAM, _)
  RIG_STREAM_OPTIONAL_CALLS(RIG_CU_STREAM, _)
#undef RIG_CU_STREAM
  if (!f.calls.copy_batch && a.cuMemcpyBatchAsync_12_8) f.calls.copy_batch = copy_batch_12_8;
  using namespace cu;  // the attributes, in Attributes' order
  f.attributes = {{ATTR_MAX_BLOCK_DIM_X, ATTR_MAX_BLOCK_DIM_Y, ATTR_MAX_BLOCK_DIM_Z}, {ATTR_MAX_GRID_DIM_X,
                  ATTR_MAX_GRID_DIM_Y, ATTR_MAX_GRID_DIM_Z}, ATTR_MAX_THREADS_PER_BLOCK,
                  ATTR_MAX_SHARED_MEMORY_PER_BLOCK, ATTR_HOST_REGISTER_SUPPORTED, ATTR_INTEGRATED,
                  ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, ATTR_READ_ONLY_HOST_REGISTER_SUPPORTED};
  RIG_STREAM_FAMILY_HOOKS(f)
  f.library = "the CUDA driver";
  f.integrated_when_unknown = -1;
  f.formats[0] = RIG_MODULE_PTX;
  f.formats[1] = RIG_MODULE_CUBIN;
  f.formats_named = "PTX, cubin or fatbin modules";
  // From pageable memory cuMemcpyHtoD returns before the DMA lands (see stream/device_memory.cpp).
  f.copies_finish_on_legacy_stream = true;
  f.ipc_lazy_peer_access = cu::IPC_MEM_LAZY_ENABLE_PEER_ACCESS;
}

void resolve_all(common::Resolver &entry, Api &api) {
  RIG_CU_ENTRY_POINTS(RIG_RESOLVE_REQUIRED)
  RIG_CU_OPTIONAL_ENTRY_POINTS(RIG_RESOLVE_OPTIONAL)
  entry.optional("cuMemcpyBatchAsync", api.cuMemcpyBatchAsync_12_8);
}

bool init(Api &a, std::string *why) {
  fill_family(a);
  cu::Result r = a.cuInit(0);
  if (r != cu::SUCCESS) {
    const char *name = nullptr;
    if (a.cuGetErrorName(r, &name) != cu::SUCCESS) name = nullptr;
    *why = std::string("cuInit failed: ") + (name ? name : std::to_string(r));
    return false;
  }
  if (a.cuDriverGetVersion(&a.driver_version) != cu::SUCCESS) a.driver_version = 0;
  return true;
}

// Never closed: the driver must outlive every context and stream rig made.
Loaded load() {
  return common::load_library<Api>("RIG_CUDA_LIBRARY", "libcuda.so.1", "the CUDA driver", resolve_all, init);
}

}  // namespace

const Api *api() { return common::load_once<Api, load>(); }

const char *error_name(cu::Result result) {
  // Names of codes the driver does not know come from a small thread-local buffer.
  thread_local char fallback[32];
  const Api *a = api();
  const char *name = nullptr;
  if (a && a->cuGetErrorName(result, &name) == cu::SUCCESS && name) return name;
  std::snprintf(fallback, sizeof fallback, "CUDA_ERROR_%d", result);
  return fallback;
}

bool is_sticky(cu::Result r) {
  switch (r) {
    case cu::ERROR_DEINITIALIZED:
    case cu::ERROR_DEVICE_UNAVAILABLE:
    case cu::ERROR_ECC_UNCORRECTABLE:
    case cu::ERROR_NVLINK_UNCORRECTABLE:
    case cu::ERROR_CONTAINED:
    case cu::ERROR_ILLEGAL_ADDRESS:
    case cu::ERROR_LAUNCH_TIMEOUT:
    case cu::ERROR_CONTEXT_IS_DESTROYED:
    case cu::ERROR_ASSERT:
    case cu::ERROR_HARDWARE_STACK_ERROR:
    case cu::ERROR_ILLEGAL_INSTRUCTION:
    case cu::ERROR_MISALIGNED_ADDRESS:
    case cu::ERROR_INVALID_ADDRESS_SPACE:
    case cu::ERROR_INVALID_PC:
    case cu::ERROR_LAUNCH_FAILED:
    case cu::ERROR_TENSOR_MEMORY_LEAK:
    case cu::ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

}  // namespace rig::cuda
