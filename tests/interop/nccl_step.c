/* An NCCL collective ordered between rig kernels on every GPU it spans (docs/interop.md, "Several GPUs, one
 * process: NCCL"): one process, one rank per named GPU (one communicator made in one group). On each GPU,
 * rig fills x with its rank's value for the round (7 + rank + 8 * round: a result left from an earlier round,
 * or from another rank, never passes for this one's); NCCL's stream of that GPU waits for that point
 * (rig_stream_wait_point); ncclAllReduce(x -> y, sum) runs on every rank's stream in one group; a point
 * taken from each stream (rig_stream_point), stamped as y's write and x's read, orders that GPU's next rig
 * kernel (z = y + 1) after the collective and rig's overwrite of x after the collective's read. Every
 * element of every rank's z is checked (the sum of all ranks' values, plus 1: in round 0, 8 for one rank and
 * 16 for two), and y after x's overwrite (still the sum), over ROUNDS rounds with no host wait between the
 * steps: only the GPUs' queues carry the order, across GPUs through NCCL's own.
 * NCCL is loaded at run time (dlopen of $RIG_NCCL_LIBRARY, else libnccl.so.2 from the machine's
 * installation), never a build dependency. Where it is absent, or a named device does not open, the program
 * says why and exits 77 (skipped), or 1 under RIG_REQUIRE=cuda; 2 on bad arguments.
 * Usage: nccl_step [ROUNDS] [cuda:N ...] (default 100 rounds on cuda:0; `nccl_step 200 cuda:0 cuda:1` is the
 * pair). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <rig_interop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_names.h"
#include "gpu_test.h"
#include "native.h"

#define N 65536u /* uint32 elements */
#define MAX_RANKS 8
/* What rig writes into a rank's x before a round's all-reduce, and over it after (never a VALUE). */
#define VALUE(round, rank) (7u + (uint32_t)(rank) + 8u * (uint32_t)(round))
#define OVERWRITE(round, rank) (0x80000000u + (uint32_t)(round) * MAX_RANKS + (uint32_t)(rank))

/* NCCL's ABI, as nccl.h declares it (stable since 2.0): an opaque communicator, a 128-byte unique id. */
typedef struct { char internal[128]; } nccl_unique_id;
typedef struct nccl_comm *nccl_comm;
enum { NCCL_UINT32 = 3, NCCL_SUM = 0 };

static struct {
  int (*get_unique_id)(nccl_unique_id *id);
  int (*comm_init_rank)(nccl_comm *comm, int ranks, nccl_unique_id id, int rank);
  int (*group_start)(void);
  int (*group_end)(void);
  int (*all_reduce)(const void *send, void *recv, size_t count, int type, int op, nccl_comm comm, void *stream);
  int (*comm_destroy)(nccl_comm comm);
  const char *(*error_string)(int result);
  const char *(*last_error)(nccl_comm comm); /* NCCL 2.13 and later; null before */
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
  *(void **)&nccl.get_unique_id = dlsym(lib, "ncclGetUniqueId");
  *(void **)&nccl.comm_init_rank = dlsym(lib, "ncclCommInitRank");
  *(void **)&nccl.group_start = dlsym(lib, "ncclGroupStart");
  *(void **)&nccl.group_end = dlsym(lib, "ncclGroupEnd");
  *(void **)&nccl.all_reduce = dlsym(lib, "ncclAllReduce");
  *(void **)&nccl.comm_destroy = dlsym(lib, "ncclCommDestroy");
  *(void **)&nccl.error_string = dlsym(lib, "ncclGetErrorString");
  *(void **)&nccl.last_error = dlsym(lib, "ncclGetLastError");
  if (!nccl.get_unique_id || !nccl.comm_init_rank || !nccl.group_start || !nccl.group_end || !nccl.all_reduce ||
      !nccl.comm_destroy || !nccl.error_string) {
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
  const char *detail = nccl.last_error ? nccl.last_error(NULL) : "";
  fprintf(stderr, "nccl_step: %s: %s%s%s\n", what, nccl.error_string(r), *detail ? ": " : "", detail);
  exit(1);
}

static void check_native(int r, const char *what, const char *device) {
  if (r == 0) return;
  fprintf(stderr, "nccl_step: %s on %s: CUDA error %d\n", what, device, r);
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
  if (!host) check(RIG_OUT_OF_MEMORY, "malloc");
  check(rig_buffer_read_into(b, 0, host, N * 4), "rig_buffer_read_into");
  size_t bad = 0;
  for (uint32_t i = 0; i < N; ++i) bad += host[i] != want;
  free(host);
  return bad;
}

/* One GPU's share: rig's device, kernels and buffers there, NCCL's stream and communicator for it. */
typedef struct rank {
  device_name name;
  rig_device d;
  rig_module m;
  rig_buffer x, y, z;
  void *stream;
  nccl_comm comm;
} rank;

static int usage(const char *why) {
  fprintf(stderr, "nccl_step: %s\nusage: nccl_step [ROUNDS] [cuda:N ...] (ROUNDS >= 1, default 100; devices "
          "default cuda:0, at most %d, each once)\n", why, MAX_RANKS);
  return 2;
}

int main(int argc, char **argv) {
  int rounds = 100, first = 1;
  if (argc > 1 && !strchr(argv[1], ':')) {
    char *end = NULL;
    long n = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end || n < 1 || n > 1000000) return usage("ROUNDS is not a number from 1 to 1000000");
    rounds = (int)n, first = 2;
  }
  static char *fallback[] = {"cuda:0"};
  char *const *texts = argc > first ? argv + first : fallback;
  int count = argc > first ? argc - first : 1;
  if (count > MAX_RANKS) return usage("too many devices");
  rank ranks[MAX_RANKS] = {0};
  device_name names[MAX_RANKS];
  if (!device_names_parse("nccl_step", texts, count, "cuda", 1, names)) return usage("bad device list");
  if (!load_nccl()) return rt_required("cuda") ? 1 : 77;
  for (int r = 0; r < count; ++r) {
    ranks[r].name = names[r];
    if (rig_device_open(names[r].text, &ranks[r].d) == RIG_OK) continue;
    int required = rt_required("cuda");
    fprintf(stderr, "%s nccl_step: %s did not open: %s\n", required ? "FAIL (RIG_REQUIRE=cuda)" : "SKIP",
            names[r].text, rig_last_error());
    while (r--) check(rig_device_release(ranks[r].d), "release device");
    return required ? 1 : 77;
  }
  const native_api *api = native(); /* after rig loaded the library: the table is of the same one */
  if (!api) return 1;
  for (int r = 0; r < count; ++r) {
    rank *k = &ranks[r];
    k->m = gt_kernels(k->d);
    check(rig_buffer_create(k->d, N * 4, RIG_MEMORY_DEVICE, &k->x), "create x");
    check(rig_buffer_create(k->d, N * 4, RIG_MEMORY_DEVICE, &k->y), "create y");
    check(rig_buffer_create(k->d, N * 4, RIG_MEMORY_DEVICE, &k->z), "create z");
  }
  /* One communicator over every rank, made in one group (a thread driving several GPUs must: each
   * ncclCommInitRank waits for the others otherwise), each rank with its GPU current, as NCCL requires. */
  nccl_unique_id id;
  check_nccl(nccl.get_unique_id(&id), "ncclGetUniqueId");
  check_nccl(nccl.group_start(), "ncclGroupStart");
  for (int r = 0; r < count; ++r) {
    check_native(api->use_gpu(ranks[r].name.ordinal), "making the GPU current", ranks[r].name.text);
    check_native(api->stream_create(&ranks[r].stream), "creating NCCL's stream", ranks[r].name.text);
    check_nccl(nccl.comm_init_rank(&ranks[r].comm, count, id, r), "ncclCommInitRank");
  }
  check_nccl(nccl.group_end(), "ncclGroupEnd (making the communicator)");
  size_t bad_z = 0, bad_y = 0;
  for (int round = 0; round < rounds; ++round) {
    uint32_t sum = 0;
    for (int r = 0; r < count; ++r) {
      sum += VALUE(round, r);
      rig_point filled = gt_fill_u32(ranks[r].d, ranks[r].m, ranks[r].x, N, VALUE(round, r));
      check(rig_stream_wait_point(ranks[r].d, ranks[r].stream, filled), "rig_stream_wait_point");
    }
    check_nccl(nccl.group_start(), "ncclGroupStart");
    for (int r = 0; r < count; ++r)
      check_nccl(nccl.all_reduce((const void *)(uintptr_t)address_of(ranks[r].x),
                                 (void *)(uintptr_t)address_of(ranks[r].y), N, NCCL_UINT32, NCCL_SUM, ranks[r].comm,
                                 ranks[r].stream),
                 "ncclAllReduce");
    check_nccl(nccl.group_end(), "ncclGroupEnd (the all-reduce)");
    for (int r = 0; r < count; ++r) {
      rank *k = &ranks[r];
      rig_point reduced = 0;
      check(rig_stream_point(k->d, k->stream, &reduced), "rig_stream_point");
      check(rig_buffer_stamp(k->y, reduced, RIG_ACCESS_WRITE), "stamp y");
      check(rig_buffer_stamp(k->x, reduced, RIG_ACCESS_READ), "stamp x");
      gt_step(k->d, k->m, "rig_add_u32", k->y, k->z, N, 1);                  /* after the collective's write (rule 3) */
      gt_fill_u32(k->d, k->m, k->x, N, OVERWRITE(round, r)); /* after its read (rule 4) */
    }
    for (int r = 0; r < count; ++r) {
      bad_z += mismatches(ranks[r].z, sum + 1);
      bad_y += mismatches(ranks[r].y, sum);
    }
  }
  for (int r = 0; r < count; ++r) {
    rank *k = &ranks[r];
    check_nccl(nccl.comm_destroy(k->comm), "ncclCommDestroy");
    check_native(api->stream_destroy(k->stream), "destroying NCCL's stream", k->name.text);
    check(rig_buffer_release(k->x), "release x");
    check(rig_buffer_release(k->y), "release y");
    check(rig_buffer_release(k->z), "release z");
    check(rig_module_release(k->m), "release module");
    check(rig_device_release(k->d), "release device");
  }
  printf("nccl_step: %d rounds of rig fill -> ncclAllReduce over %d rank(s) (", rounds, count);
  for (int r = 0; r < count; ++r) printf("%s%s", r ? " " : "", names[r].text);
  uint32_t round0 = 0; /* round 0's sum, as an example of what is checked */
  for (int r = 0; r < count; ++r) round0 += VALUE(0, r);
  printf(") -> rig add: %zu mismatching elements of z (want the ranks' sum + 1, %u in round 0), %zu of y after x's "
         "overwrite (want the sum); %s\n", bad_z, round0 + 1, bad_y, bad_z || bad_y ? "FAIL" : "PASS");
  return bad_z || bad_y ? 1 : 0;
}
