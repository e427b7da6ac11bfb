// A counting interposer over the real CUDA driver: a library with every entry point rig loads (the
// symbols of src/drivers/cuda/cu.h), each a two-instruction stub that counts the call and jumps to the real
// libcuda's function, so arguments, return values and the driver's behaviour are untouched. rig (and the
// tests and bench/cuda's hand-written rows, which load the driver the same way) take it through
// RIG_CUDA_LIBRARY; `rigcount_query("calls:FIELD")` answers how often the stream table's entry FIELD (or a
// CUDA-own entry by its name) was entered, as the fake libcuda's `calls:` counters do, so one test
// (tests/cuda/test_cuda_floor.cpp) holds the same budget on the fake and on a real GPU (issue 35's
// driver-call table). Why stubs in assembly: a forwarder in C would have to restate each of the signatures;
// a tail jump keeps every argument register as the caller left it, whatever the signature. x86-64 only.
// RIGCOUNT_REAL_LIBRARY names the real driver (default libcuda.so.1). An entry the real driver lacks
// answers CUDA_ERROR_NOT_SUPPORTED (801).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "drivers/cuda/cu.h"

#define RC_HIDDEN __attribute__((visibility("hidden")))

extern "C" {
RC_HIDDEN int rc_unsupported() { return 801; }

#define RC_STATE(field, symbol)                                         \
  RC_HIDDEN void *rc_real_##field = reinterpret_cast<void *>(&rc_unsupported); \
  RC_HIDDEN unsigned long long rc_count_##field = 0;
#define RC_OWN_STATE(name, symbol, ret, params) RC_STATE(name, symbol)
#define RC_CALL_STATE(A, field, params, name, symbol, hip, how) RC_STATE(field, symbol)
RIG_CU_OWN_ENTRY_POINTS(RC_OWN_STATE)
RIG_STREAM_CALLS(RC_CALL_STATE, _)
RIG_STREAM_OPTIONAL_CALLS(RC_CALL_STATE, _)
}

// The stubs: the exported symbol counts (one locked add) and jumps through the real function's pointer.
#define RC_STUB(field, symbol)                                        \
  asm(".text\n.globl " symbol "\n.type " symbol ", @function\n" symbol \
      ":\n\tlock incq rc_count_" #field "(%rip)\n\tjmp *rc_real_" #field "(%rip)\n.size " symbol ", .-" symbol "\n");
#define RC_OWN_STUB(name, symbol, ret, params) RC_STUB(name, symbol)
#define RC_CALL_STUB(A, field, params, name, symbol, hip, how) RC_STUB(field, symbol)
RIG_CU_OWN_ENTRY_POINTS(RC_OWN_STUB)
RIG_STREAM_CALLS(RC_CALL_STUB, _)
RIG_STREAM_OPTIONAL_CALLS(RC_CALL_STUB, _)

namespace {

struct Entry {
  const char *field, *symbol;
  void **real;
  unsigned long long *count;
};

const Entry kEntries[] = {
#define RC_ENTRY(field, symbol) {#field, symbol, &rc_real_##field, &rc_count_##field},
#define RC_OWN_ENTRY(name, symbol, ret, params) RC_ENTRY(name, symbol)
#define RC_CALL_ENTRY(A, field, params, name, symbol, hip, how) RC_ENTRY(field, symbol)
    RIG_CU_OWN_ENTRY_POINTS(RC_OWN_ENTRY) RIG_STREAM_CALLS(RC_CALL_ENTRY, _) RIG_STREAM_OPTIONAL_CALLS(RC_CALL_ENTRY, _)};

__attribute__((constructor)) void load_real_driver() {
  const char *path = std::getenv("RIGCOUNT_REAL_LIBRARY");
  if (!path) path = "libcuda.so.1";
  void *real = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!real) {
    std::fprintf(stderr, "count_cuda: %s: %s (every entry answers CUDA_ERROR_NOT_SUPPORTED)\n", path, dlerror());
    return;
  }
  for (const Entry &e : kEntries)
    if (void *f = dlsym(real, e.symbol)) *e.real = f;
}

}  // namespace

// How often `key`'s entry was called: "calls:FIELD" (the stream table's field, or a CUDA-own entry's name),
// as the fake libcuda's counters; -1 for any other key. Relaxed reads: a snapshot, not a fence.
extern "C" __attribute__((visibility("default"))) long long rigcount_query(const char *key) {
  if (std::strncmp(key, "calls:", 6) != 0) return -1;
  for (const Entry &e : kEntries)
    if (std::strcmp(key + 6, e.field) == 0) return static_cast<long long>(__atomic_load_n(e.count, __ATOMIC_RELAXED));
  return -1;
}
