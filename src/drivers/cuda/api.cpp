#include "drivers/cuda/api.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "core/error.h"

namespace rig::cuda {
namespace {

struct Loaded {
  Api api;
  bool ok = false;
  std::string why;  // the reason it is not ok, repeated on every later call
};

Loaded load() {
  Loaded l;
  const char *env = std::getenv("RIG_CUDA_LIBRARY");
  const char *file = env && *env ? env : "libcuda.so.1";
  // RTLD_LOCAL: the driver's symbols never leak into the program's namespace. Never dlclosed: the driver
  // must outlive every context and stream rig made.
  void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    l.why = std::string("cannot load the CUDA driver ") + file + ": " + (e ? e : "unknown dlopen error");
    return l;
  }
  using namespace cu;  // the entry point table names its types unqualified
  Api &a = l.api;
  const char *missing = nullptr;
#define RIG_CU_LOAD(field, symbol, ret, params)                                  \
  a.field = reinterpret_cast<ret(*) params>(dlsym(lib, symbol));                 \
  if (!a.field && !missing) missing = symbol;
  RIG_CU_ENTRY_POINTS(RIG_CU_LOAD)
#undef RIG_CU_LOAD
  if (missing) {
    l.why = std::string("the CUDA driver ") + file + " lacks " + missing;
    return l;
  }
#define RIG_CU_LOAD_OPTIONAL(field, symbol, ret, params) \
  a.field = reinterpret_cast<ret(*) params>(dlsym(lib, symbol));
  RIG_CU_OPTIONAL_ENTRY_POINTS(RIG_CU_LOAD_OPTIONAL)
#undef RIG_CU_LOAD_OPTIONAL
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

rig_status status_of(cu::Result r) {
  if (r == cu::ERROR_OUT_OF_MEMORY) return RIG_OUT_OF_MEMORY;
  if (is_sticky(r)) return RIG_LOST;
  return RIG_DRIVER;
}

}  // namespace rig::cuda
