/* The chain of bench/core's first row, for counting instructions (callgrind), not for timing: device A
 * copies x into y, device B copies y back into x, `n` times each. Usage:
 *   chain_count A B N [LENGTH [launch]]
 * A and B name devices: "memory:NAME" for a memory device, anything else for rig_device_open ("cuda:0").
 * A == B runs both copies on one device (no point of another device to follow: the chain without the edge).
 * With "launch", each operation is instead a tiny kernel (rig_add_u32 of tests/cuda/kernels.ptx, in place
 * on x's LENGTH bytes, two launch slots and 8 bytes of scalars), alternating between A and B as the copies
 * do: for CUDA and HIP devices (the fake libcuda binds the kernels' names).
 * Count rig's own work per operation with
 *   valgrind --tool=callgrind --toggle-collect=rig_submit build-rel/bench/core/chain_count memory:A memory:B 100000
 * then callgrind_annotate --inclusive=yes: rig_submit's inclusive count, less the copy's own (memmove, or
 * the driver library's entry points), divided by 2N. bench/README.md has the figures. */
#include <rig.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/add_part.h"
#include "kernels_ptx.h"

static void check(rig_status s, const char *what, int line) {
  if (s == RIG_OK) return;
  fprintf(stderr, "chain_count:%d: %s: %s: %s\n", line, what, rig_status_name(s), rig_last_error());
  exit(1);
}
#define CHECK(call) check((call), #call, __LINE__)

static rig_device open_named(const char *name) {
  rig_device d;
  if (strncmp(name, "memory:", 7) == 0)
    CHECK(rig_memory_device(name + 7, &d));
  else
    CHECK(rig_device_open(name, &d));
  return d;
}

static rig_run copy_run(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_part p;
  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.kind = RIG_PART_COPY;
  p.src_slot = 0;
  p.dst_slot = 1;
  p.length = RIG_WHOLE;
  rig_access a[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission s;
  rig_run r;
  CHECK(rig_submission_make(d, &p, 1, a, 2, &s));
  CHECK(rig_run_take(s, &r));
  CHECK(rig_submission_release(s));
  CHECK(rig_run_set_buffer(r, 0, src));
  CHECK(rig_run_set_buffer(r, 1, dst));
  return r;
}

/* x += 1 in place on device d (one READ_WRITE slot passed as both of rig_add_u32's arguments). */
static rig_run add_run(rig_device d, rig_buffer x, size_t length) {
  rig_module m;
  CHECK(rig_module_load(d, RIG_MODULE_PTX, kernels_ptx, strlen(kernels_ptx), &m));
  uint32_t n = (uint32_t)(length / 4), scalars[2] = {n, 1};
  rig_part p = bench_add_part(m, n);
  rig_access a[1] = {RIG_ACCESS_READ_WRITE};
  rig_submission s;
  rig_run r;
  CHECK(rig_submission_make(d, &p, 1, a, 1, &s));
  CHECK(rig_module_release(m)); /* the submission keeps it */
  CHECK(rig_run_take(s, &r));
  CHECK(rig_submission_release(s));
  CHECK(rig_run_set_buffer(r, 0, x));
  CHECK(rig_run_set_scalars(r, scalars, sizeof scalars));
  return r;
}

static void *nothing(void *arg) { return arg; }

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: chain_count A B N [LENGTH [launch]]\n");
    return 2;
  }
  long n = atol(argv[3]);
  size_t length = argc > 4 ? (size_t)atol(argv[4]) : 4096;
  int launch = argc > 5 && strcmp(argv[5], "launch") == 0;
  /* A process with threads, as bench/core's (glibc's mutexes take their lock prefix from then on). */
  pthread_t t;
  pthread_create(&t, NULL, nothing, NULL);
  pthread_join(t, NULL);
  int same = strcmp(argv[1], argv[2]) == 0;
  rig_device a = open_named(argv[1]);
  rig_device b = same ? a : open_named(argv[2]);
  rig_buffer x, y, xb = NULL, yb = NULL;
  CHECK(rig_buffer_create(a, length, RIG_MEMORY_DEVICE, &x));
  CHECK(rig_buffer_create(a, length, RIG_MEMORY_DEVICE, &y));
  if (!same) {
    CHECK(rig_buffer_borrow(b, x, &xb));
    CHECK(rig_buffer_borrow(b, y, &yb));
  }
  rig_run forth = launch ? add_run(a, x, length) : copy_run(a, x, y);
  rig_run back = launch ? add_run(b, same ? x : xb, length) : copy_run(b, same ? y : yb, same ? x : xb);
  rig_point last = 0;
  for (long i = 0; i < n; ++i) {
    CHECK(rig_submit(forth, NULL, 0, NULL));
    CHECK(rig_submit(back, NULL, 0, &last));
  }
  CHECK(rig_wait_point(last, UINT64_MAX));
  printf("chain_count: %ld chained %s of %zu bytes, %s <-> %s\n", 2 * n, launch ? "launches" : "copies", length,
         argv[1], argv[2]);
  return 0;
}
