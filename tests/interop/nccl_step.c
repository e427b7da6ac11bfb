/* An NCCL collective ordered between rig kernels (docs/interop.md, "Several GPUs, one process: NCCL"), on
 * one GPU with a single-rank communicator: rig fills x; NCCL's stream waits for that point
 * (rig_stream_wait_point); ncclAllReduce(x -> y, sum) runs on it; a point taken from the stream
 * (rig_stream_point), stamped as y's write and x's read, orders rig's next kernel (z = y + 1) after the
 * collective and rig's overwrite of x after its read. z is checked element by element (a single rank's sum is
 * its own x: every z is 8), and y after x's overwrite (still 7), over ROUNDS rounds with no host wait
 * between the steps.
 * NCCL is loaded at run time (dlopen of $RIG_NCCL_LIBRARY, else libnccl.so.2 from the machine's
 * installation), never a build dependency. Where it is absent the program says why and exits 77 (skipped),
 * or 1 under RIG_REQUIRE=cuda. Usage: nccl_step [ROUNDS] (default 100). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <rig_interop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "native.h"

#define N 65536u /* uint32 elements */

/* NCCL's ABI, as nccl.h declares it (stable since 2.0): an opaque communicator, a 128-byte unique id. */
typedef struct { char internal[128]; } nccl_unique_id;
typedef struct nccl_comm *nccl_comm;
enum { NCCL_UINT32 = 3, NCCL_SUM = 0 };

static struct {
  int (*get_unique_id)(nccl_unique_id *id);
  int (*comm_init_rank)(nccl_comm *comm, int ranks, nccl_unique_id id, int rank);
  int (*all_reduce)(const void *send, void *recv, size_t count, int type, int op, nccl_comm comm, void *stream);
  int (*comm_destroy)(nccl_comm comm);
  const char *(*error_string)(int result);
} nccl;

/* 1 with `nccl` filled, else 0 with the reason printed. */
static int load_nccl(void) {
  const char *path = getenv("RIG_NCCL_LIBRARY");
  if (!path || !*path) path = "libnccl.so.2";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "SKIP nccl_step: NCCL is not installed here: %s\n", dlerror());
    return 0;
  }
  nccl.get_unique_id = (int (*)(nccl_unique_id *))dlsym(lib, "ncclGetUniqueId");
  nccl.comm_init_rank = (int (*)(nccl_comm *, int, nccl_unique_id, int))dlsym(lib, "ncclCommInitRank");
  nccl.all_reduce = (int (*)(const void *, void *, size_t, int, int, nccl_comm, void *))dlsym(lib, "ncclAllReduce");
  nccl.comm_destroy = (int (*)(nccl_comm))dlsym(lib, "ncclCommDestroy");
  nccl.error_string = (const char *(*)(int))dlsym(lib, "ncclGetErrorString");
  if (!nccl.get_unique_id || !nccl.comm_init_rank || !nccl.all_reduce || !nccl.comm_destroy || !nccl.error_string) {
    fprintf(stderr, "SKIP nccl_step: %s lacks an entry point rig's step calls\n", path);
    return 0;
  }
  return 1;
}

static void check(rig_status s, const char *what) {
  if (s == RIG_OK) return;
  fprintf(stderr, "nccl_step: %s: %s: %s\n", what, rig_status_name(s), rig_last_error());
  exit(1);
}

static void check_nccl(int r, const char *what) {
  if (r == 0) return;
  fprintf(stderr, "nccl_step: %s: %s\n", what, nccl.error_string(r));
  exit(1);
}

static uint64_t address_of(rig_buffer b) {
  uint64_t a = 0;
  check(rig_buffer_device_address(b, &a), "rig_buffer_device_address");
  return a;
}

/* The number of elements of b that are not `want`. */
static size_t mismatches(rig_buffer b, uint32_t want) {
  uint32_t *host = malloc(N * 4);
  check(rig_buffer_read_into(b, 0, host, N * 4), "rig_buffer_read_into");
  size_t bad = 0;
  for (uint32_t i = 0; i < N; ++i) bad += host[i] != want;
  free(host);
  return bad;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 100;
  if (!load_nccl()) return rt_required("cuda") ? 1 : 77;
  if (!gt_available()) return 77; /* says why; fails under RIG_REQUIRE=cuda */
  const native_api *api = native();
  if (!api) return 1;
  rig_device d;
  check(rig_device_open("cuda:0", &d), "rig_device_open");
  rig_module m = gt_kernels(d);
  rig_buffer x, y, z;
  check(rig_buffer_create(d, N * 4, RIG_MEMORY_DEVICE, &x), "create x");
  check(rig_buffer_create(d, N * 4, RIG_MEMORY_DEVICE, &y), "create y");
  check(rig_buffer_create(d, N * 4, RIG_MEMORY_DEVICE, &z), "create z");
  void *stream = NULL;
  if (api->use_gpu(0) || api->stream_create(&stream)) return 1;
  nccl_unique_id id;
  nccl_comm comm;
  check_nccl(nccl.get_unique_id(&id), "ncclGetUniqueId");
  check_nccl(nccl.comm_init_rank(&comm, 1, id, 0), "ncclCommInitRank");
  size_t bad_z = 0, bad_y = 0;
  for (int r = 0; r < rounds; ++r) {
    rig_point filled = gt_fill_u32(d, m, x, N, 7);
    check(rig_stream_wait_point(d, stream, filled), "rig_stream_wait_point");
    check_nccl(nccl.all_reduce((const void *)(uintptr_t)address_of(x), (void *)(uintptr_t)address_of(y), N,
                               NCCL_UINT32, NCCL_SUM, comm, stream),
               "ncclAllReduce");
    rig_point reduced = 0;
    check(rig_stream_point(d, stream, &reduced), "rig_stream_point");
    check(rig_buffer_stamp(y, reduced, RIG_ACCESS_WRITE), "stamp y");
    check(rig_buffer_stamp(x, reduced, RIG_ACCESS_READ), "stamp x");
    gt_step(d, m, "rig_add_u32", y, z, N, 1); /* after the collective's write (rule 3) */
    gt_fill_u32(d, m, x, N, 1000 + (uint32_t)r); /* after the collective's read (rule 4) */
    bad_z += mismatches(z, 8);
    bad_y += mismatches(y, 7);
  }
  check_nccl(nccl.comm_destroy(comm), "ncclCommDestroy");
  api->stream_destroy(stream);
  check(rig_buffer_release(x), "release x");
  check(rig_buffer_release(y), "release y");
  check(rig_buffer_release(z), "release z");
  check(rig_module_release(m), "release module");
  check(rig_device_release(d), "release device");
  printf("nccl_step: %d rounds of rig fill -> ncclAllReduce -> rig add on cuda:0: %zu mismatching elements of z, "
         "%zu of y after x's overwrite; %s\n", rounds, bad_z, bad_y, bad_z || bad_y ? "FAIL" : "PASS");
  return bad_z || bad_y ? 1 : 0;
}
