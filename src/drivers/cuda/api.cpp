#include "drivers/cuda/api.h"

#include <cstdio>
#include <string>

#include "core/error.h"
#include "drivers/common/library.h"
#include "drivers/cuda/module.h"

namespace rig::cuda {
namespace {

struct Loaded {
  Api api;
  bool ok = false;
  std::string why;  // the reason it is not ok, repeated on every later call
};

// The stream device's table, filled with the very pointers loaded (cu.h's types are the table's). Names are
// the calls as CUDA's documentation spells them.
void fill_family(Api &a) {
  stream::Family &f = a.family;
  f.prefix = "cuda";
  f.framework = "CUDA";
#define RIG_CU_STREAM(field, entry)  \
  f.calls.field = a.entry;           \
  f.names.field = #entry;
  RIG_CU_STREAM_CALLS(RIG_CU_STREAM)
#undef RIG_CU_STREAM
  f.attributes = {{cu::ATTR_MAX_BLOCK_DIM_X, cu::ATTR_MAX_BLOCK_DIM_Y, cu::ATTR_MAX_BLOCK_DIM_Z},
                  {cu::ATTR_MAX_GRID_DIM_X, cu::ATTR_MAX_GRID_DIM_Y, cu::ATTR_MAX_GRID_DIM_Z},
                  cu::ATTR_MAX_THREADS_PER_BLOCK,
                  cu::ATTR_MAX_SHARED_MEMORY_PER_BLOCK,
                  cu::ATTR_HOST_REGISTER_SUPPORTED,
                  cu::ATTR_INTEGRATED,
                  cu::ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
                  cu::ATTR_READ_ONLY_HOST_REGISTER_SUPPORTED};
  f.error_name = error_name;
  f.is_sticky = is_sticky;
  f.load_module = load_module;
  f.formats[0] = RIG_MODULE_PTX;
  f.formats[1] = RIG_MODULE_CUBIN;
  f.formats_named = "PTX, cubin or fatbin modules";
  // From pageable memory cuMemcpyHtoD returns before the DMA lands (see stream/device_memory.cpp).
  f.copies_finish_on_legacy_stream = true;
}

Loaded load() {
  Loaded l;
  // Never closed: the driver must outlive every context and stream rig made.
  common::Library lib = common::open_library("RIG_CUDA_LIBRARY", "libcuda.so.1", "the CUDA driver");
  if (!lib.handle) {
    l.why = lib.why;
    return l;
  }
  Api &a = l.api;
  const char *missing = nullptr;
#define RIG_CU_LOAD(field, symbol, ret, params) \
  if (!common::resolve(lib, symbol, a.field) && !missing) missing = symbol;
  RIG_CU_ENTRY_POINTS(RIG_CU_LOAD)
#undef RIG_CU_LOAD
  if (missing) {
    l.why = "the CUDA driver " + lib.file + " lacks " + missing;
    return l;
  }
#define RIG_CU_LOAD_OPTIONAL(field, symbol, ret, params) common::resolve(lib, symbol, a.field);
  RIG_CU_OPTIONAL_ENTRY_POINTS(RIG_CU_LOAD_OPTIONAL)
#undef RIG_CU_LOAD_OPTIONAL
  fill_family(a);
  cu::Result r = a.cuInit(0);
  if (r != cu::SUCCESS) {
    const char *name = nullptr;
    if (a.cuGetErrorName(r, &name) != cu::SUCCESS) name = nullptr;
    l.why = std::string("cuInit failed: ") + (name ? name : std::to_string(r));
    return l;
  }
  if (a.cuDriverGetVersion(&a.driver_version) != cu::SUCCESS) a.driver_version = 0;
  l.ok = true;
  return l;
}

}  // namespace

const Api *api() {
  static const Loaded loaded = load();  // thread-safe once (magic static)
  if (!loaded.ok) {
    fail(RIG_NOT_FOUND, "%s", loaded.why.c_str());
    return nullptr;
  }
  return &loaded.api;
}

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
