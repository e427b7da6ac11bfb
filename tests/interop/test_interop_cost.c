/* Cost promise of the interop edge (bench/interop's: a kernel submitted, a native stream made to wait for its
 * point, the native copy, a point taken from the stream, stamped on the buffer): in the steady state rig
 * allocates nothing on the heap for it. The driver (the fake, or CUDA) may allocate in its own calls; a malloc
 * hook tells them apart by the call stack: rig is linked into this program (tests/meson.build), so an
 * allocation counts as rig's where the innermost caller outside libc and libstdc++ (operator new) is this
 * program, and as the driver's where it is a library (the fake's, libcuda). The test's own code allocates
 * nothing while it counts. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <rig_interop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "native.h"

#define N 4096u /* uint32 elements */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#error "a sanitizer owns malloc: this test runs in plain builds only (tests/interop/meson.build)"
#endif

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static __thread int counting; /* this thread only: the fake's own threads allocate as they like */
static __thread int in_hook;  /* backtrace and dladdr may allocate: those are not looked at */
static long rig_allocations;
static const void *libc_base, *cxx_base, *self_base;

static const void *base_of(const void *address) {
  Dl_info info;
  return dladdr(address, &info) ? info.dli_fbase : NULL;
}

/* Not inlined: frames[0] is in look, frames[1] in the hook, frames[2] its caller. */
__attribute__((noinline)) static void look(void) {
  if (!counting || in_hook) return;
  in_hook = 1;
  void *frames[48];
  int n = backtrace(frames, 48);
  for (int i = 2; i < n; ++i) {
    const void *b = base_of(frames[i]);
    if (b == libc_base || b == cxx_base) continue;
    if (b == self_base) {
      ++rig_allocations;
      Dl_info info;
      if (dladdr(frames[i], &info)) /* addr2line -Cfe PROGRAM OFFSET names it */
        fprintf(stderr, "rig allocates at %s+0x%zx\n", info.dli_fname,
                (size_t)((const char *)frames[i] - (const char *)info.dli_fbase));
    }
    break; /* the innermost caller decides: rig's allocation, or the driver's */
  }
  in_hook = 0;
}

__attribute__((noinline)) void *malloc(size_t n) {
  look();
  return __libc_malloc(n);
}
__attribute__((noinline)) void *calloc(size_t a, size_t b) {
  look();
  return __libc_calloc(a, b);
}
__attribute__((noinline)) void *realloc(void *p, size_t n) {
  look();
  return __libc_realloc(p, n);
}

static const native_api *api;

static uint64_t address_of(rig_buffer b) {
  uint64_t a = 0;
  OK(rig_buffer_device_address(b, &a));
  return a;
}

/* One edge as bench/interop runs it, on a run made once. */
static rig_point edge(rig_device a, rig_run run, void *s, rig_buffer x, uint64_t y) {
  rig_point written = 0, copied = 0;
  OK(rig_submit(run, NULL, 0, &written));
  OK(rig_stream_wait_point(a, s, written));
  assert_int_equal(api->copy_async(y, address_of(x), N * 4, s), 0);
  OK(rig_stream_point(a, s, &copied));
  OK(rig_buffer_stamp(x, copied, RIG_ACCESS_READ));
  return copied;
}

static void interop_edge_allocates_nothing_in_rig(void **state) {
  (void)state;
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  rig_module m = gt_kernels(a);
  rig_buffer x = rt_create(a, N * 4), y = rt_create(a, N * 4);
  rig_access rw = RIG_ACCESS_READ_WRITE;
  uint32_t slots[2] = {0, 0}, scalars[2] = {N, 1};
  rig_run run = gt_launch_run(a, m, "rig_add_u32", &x, &rw, 1, slots, 2, N / 256);
  OK(rig_run_set_scalars(run, scalars, sizeof scalars));
  void *s = NULL;
  assert_int_equal(api->use_gpu(0), 0);
  assert_int_equal(api->stream_create(&s), 0);
  uint64_t y_address = address_of(y);
  void *frames[4];
  backtrace(frames, 4); /* its first call loads the unwinder (allocates): before counting */
  libc_base = base_of((const void *)__libc_malloc);
  cxx_base = base_of(dlsym(RTLD_DEFAULT, "_Znwm")); /* operator new: rig's C++ allocations pass through it */
  self_base = base_of((const void *)edge);
  assert_non_null(self_base);
  assert_true(self_base != libc_base && self_base != cxx_base);
  /* The steady state: the native stream's table entry, the queue's list of carried waits and the driver's
   * own lists have grown to what the edge needs. */
  rig_point last = 0;
  for (int i = 0; i < 300; ++i) last = edge(a, run, s, x, y_address);
  OK(rig_wait_point(last, UINT64_MAX));
  counting = 1;
  for (int i = 0; i < 2000; ++i) last = edge(a, run, s, x, y_address);
  counting = 0;
  printf("rig's heap allocations in 2000 edges: %ld\n", rig_allocations);
  assert_int_equal(rig_allocations, 0);
  /* The hook sees rig's allocations at all (else the count above proves nothing): a submission is made on
   * the heap. */
  counting = 1;
  rig_submission sub = NULL;
  OK(rig_submission_make(a, NULL, 0, NULL, 0, &sub));
  counting = 0;
  assert_true(rig_allocations > 0);
  OK(rig_submission_release(sub));
  OK(rig_wait_point(last, UINT64_MAX));
  api->stream_destroy(s);
  OK(rig_run_release(run));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

int main(void) {
  int not_ready = native_ready(&api);
  if (not_ready) return not_ready;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(interop_edge_allocates_nothing_in_rig),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
