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
// Timing (RIGCOUNT_TIME=1, for bench/cuda; issue 35's question of where a chained operation's host time
// goes): each entry's stub jumps through a timed trampoline instead, which reads the time-stamp counter
// around the real call, so `rigcount_query("cycles:FIELD")` (or "cycles:all") answers the TSC cycles spent
// inside the driver. The trampoline puts its own return address in place of the caller's, keeping the
// caller's in thread-local storage (the driver never calls back into these stubs on the same thread); the
// arguments, stack arguments included, are the caller's untouched. Two rdtsc a call (about 20 ns): rows
// measured under it are compared with each other, never with rows measured without it.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "drivers/cuda/cu.h"

#define RC_HIDDEN __attribute__((visibility("hidden")))

extern "C" {
RC_HIDDEN int rc_unsupported() { return 801; }

// Per thread: the caller's return address and the call's start, while a timed call runs.
struct RcTimed {
  void *ret;
  unsigned long long start;
};
RC_HIDDEN __thread __attribute__((tls_model("initial-exec"))) RcTimed rc_timed;

#define RC_STATE(field, symbol)                                                  \
  RC_HIDDEN void *rc_real_##field = reinterpret_cast<void *>(&rc_unsupported);   \
  RC_HIDDEN void *rc_target_##field = reinterpret_cast<void *>(&rc_unsupported); \
  RC_HIDDEN unsigned long long rc_count_##field = 0;                             \
  RC_HIDDEN unsigned long long rc_cycles_##field = 0;                            \
  RC_HIDDEN void rc_timed_##field();
#define RC_OWN_STATE(name, symbol, ret, params) RC_STATE(name, symbol)
#define RC_CALL_STATE(A, field, params, name, symbol, hip, how) RC_STATE(field, symbol)
RIG_CU_OWN_ENTRY_POINTS(RC_OWN_STATE)
RIG_STREAM_CALLS(RC_CALL_STATE, _)
RIG_STREAM_OPTIONAL_CALLS(RC_CALL_STATE, _)
}

// The stubs: the exported symbol counts (one locked add) and jumps through its target: the real function,
// or with RIGCOUNT_TIME=1 its timed trampoline. The trampoline keeps the caller's return address and the
// start (rdtsc: edx:eax, so the third argument rides in r11 meanwhile; r10 and r11 are scratch at a call),
// returns into its second half, which adds the cycles and jumps back to the caller with the driver's result.
#define RC_STUB(field, symbol)                                                                              \
  asm(".text\n.globl " symbol "\n.type " symbol ", @function\n" symbol                                       \
      ":\n\tlock incq rc_count_" #field "(%rip)\n\tjmp *rc_target_" #field "(%rip)\n.size " symbol           \
      ", .-" symbol "\n"                                                                                     \
      ".globl rc_timed_" #field "\n.hidden rc_timed_" #field "\n.type rc_timed_" #field ", @function\n"       \
      "rc_timed_" #field ":\n"                                                                               \
      "\tmovq rc_timed@gottpoff(%rip), %r10\n\tmovq (%rsp), %r11\n\tmovq %r11, %fs:(%r10)\n"              \
      "\tleaq rc_back_" #field "(%rip), %r11\n\tmovq %r11, (%rsp)\n\tmovq %rdx, %r11\n"                    \
      "\trdtsc\n\tshlq $32, %rdx\n\torq %rdx, %rax\n\tmovq %rax, %fs:8(%r10)\n\tmovq %r11, %rdx\n"        \
      "\tjmp *rc_real_" #field "(%rip)\n"                                                                   \
      "rc_back_" #field ":\n"                                                                                \
      "\tmovq %rax, %r11\n\trdtsc\n\tshlq $32, %rdx\n\torq %rdx, %rax\n"                                  \
      "\tmovq rc_timed@gottpoff(%rip), %r10\n\tsubq %fs:8(%r10), %rax\n"                                   \
      "\tlock addq %rax, rc_cycles_" #field "(%rip)\n\tmovq %r11, %rax\n\tjmp *%fs:(%r10)\n");
#define RC_OWN_STUB(name, symbol, ret, params) RC_STUB(name, symbol)
#define RC_CALL_STUB(A, field, params, name, symbol, hip, how) RC_STUB(field, symbol)
RIG_CU_OWN_ENTRY_POINTS(RC_OWN_STUB)
RIG_STREAM_CALLS(RC_CALL_STUB, _)
RIG_STREAM_OPTIONAL_CALLS(RC_CALL_STUB, _)

namespace {

struct Entry {
  const char *field, *symbol;
  void **real, **target;
  void (*timed)();
  unsigned long long *count, *cycles;
};

const Entry kEntries[] = {
#define RC_ENTRY(field, symbol) \
  {#field, symbol, &rc_real_##field, &rc_target_##field, &rc_timed_##field, &rc_count_##field, &rc_cycles_##field},
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
  const char *time = std::getenv("RIGCOUNT_TIME");
  bool timed = time && std::strcmp(time, "1") == 0;
  for (const Entry &e : kEntries) {
    if (void *f = dlsym(real, e.symbol)) *e.real = f;
    *e.target = timed ? reinterpret_cast<void *>(e.timed) : *e.real;
  }
}

}  // namespace

// How often `key`'s entry was called: "calls:FIELD" (the stream table's field, or a CUDA-own entry's name),
// as the fake libcuda's counters; "cycles:FIELD" the TSC cycles spent in it (0 unless RIGCOUNT_TIME=1),
// "cycles:all" and "calls:all" summed over every entry; -1 for any other key. Relaxed reads: a snapshot.
extern "C" __attribute__((visibility("default"))) long long rigcount_query(const char *key) {
  bool calls = std::strncmp(key, "calls:", 6) == 0, cycles = std::strncmp(key, "cycles:", 7) == 0;
  if (!calls && !cycles) return -1;
  const char *field = key + (calls ? 6 : 7);
  bool all = std::strcmp(field, "all") == 0;
  unsigned long long sum = 0;
  for (const Entry &e : kEntries)
    if (all || std::strcmp(field, e.field) == 0) {
      sum += __atomic_load_n(calls ? e.count : e.cycles, __ATOMIC_RELAXED);
      if (!all) return static_cast<long long>(sum);
    }
  return all ? static_cast<long long>(sum) : -1;
}
