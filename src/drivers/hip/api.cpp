#include "drivers/hip/api.h"

#include <cstdio>
#include <string>

#include "core/error.h"
#include "drivers/common/library.h"

namespace rig::hip {
namespace {

struct Loaded {
  Api api;
  bool ok = false;
  std::string why;  // the reason it is not ok, repeated on every later call
};

Loaded load() {
  Loaded l;
  common::Library lib = common::open_library("RIG_HIP_LIBRARY", "libamdhip64.so", "the HIP runtime");
  if (!lib.handle) {
    l.why = lib.why;
    return l;
  }
  Api &a = l.api;
  const char *missing = nullptr;
#define RIG_HIP_LOAD(field, symbol, ret, params) common::resolve(lib, symbol, a.field);
  RIG_HIP_ENTRY_POINTS(RIG_HIP_LOAD)
#undef RIG_HIP_LOAD
  // hipHostAlloc is the same call under CUDA's name: taken where a runtime no longer exports hipHostMalloc.
  if (!a.hipHostMalloc) common::resolve(lib, "hipHostAlloc", a.hipHostMalloc);
#define RIG_HIP_CHECK(field, symbol, ret, params) \
  if (!a.field && !missing) missing = symbol;
  RIG_HIP_ENTRY_POINTS(RIG_HIP_CHECK)
#undef RIG_HIP_CHECK
  if (missing) {
    l.why = "the HIP runtime " + lib.file + " lacks " + missing;
    return l;
  }
#define RIG_HIP_LOAD_OPTIONAL(field, symbol, ret, params) common::resolve(lib, symbol, a.field);
  RIG_HIP_OPTIONAL_ENTRY_POINTS(RIG_HIP_LOAD_OPTIONAL)
#undef RIG_HIP_LOAD_OPTIONAL
  Error r = a.hipInit(0);
  if (r != SUCCESS) {
    const char *name = a.hipGetErrorName(r);
    l.why = "hipInit failed: " + (name ? std::string(name) : std::to_string(r));
    return l;
  }
  if (a.hipDriverGetVersion(&a.driver_version) != SUCCESS) a.driver_version = 0;
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

const char *error_name(Error error) {
  thread_local char fallback[32];
  const Api *a = api();
  const char *name = a ? a->hipGetErrorName(error) : nullptr;
  // HIP answers "hipErrorUnknown" for codes it does not know; the number then says more.
  if (name && *name && (error == ERROR_UNKNOWN || std::string(name) != "hipErrorUnknown")) return name;
  std::snprintf(fallback, sizeof fallback, "hipError %d", error);
  return fallback;
}

bool is_sticky(Error e) {
  switch (e) {
    case ERROR_DEINITIALIZED:
    case ERROR_ECC_NOT_CORRECTABLE:
    case ERROR_ILLEGAL_ADDRESS:
    case ERROR_LAUNCH_TIMEOUT:
    case ERROR_CONTEXT_IS_DESTROYED:
    case ERROR_ASSERT:
    case ERROR_LAUNCH_FAILURE:
    case ERROR_UNKNOWN:
    case ERROR_RUNTIME_MEMORY:
    case ERROR_RUNTIME_OTHER:
      return true;
    default:
      return false;
  }
}

rig_status status_of(Error e) {
  if (e == ERROR_OUT_OF_MEMORY) return RIG_OUT_OF_MEMORY;
  if (is_sticky(e)) return RIG_LOST;
  return RIG_DRIVER;
}

}  // namespace rig::hip
