/* Random programs over one backend's devices (gpu_test.h: CUDA, HIP, memory devices, the test driver)
 * checked against the host: every program's result must be what running
 * its operations one after another gives, because rig orders work by the memory it uses (rules 3 to 6)
 * whatever device each operation runs on. Operations: kernels (fill, add, chain step: order-dependent),
 * copies, host writes and host reads (checked on every element), spread over three rig devices (two
 * streams on GPU 0 and GPU 1 where there is one, else a third on GPU 0) and buffers owned by any of
 * them or wrapped host memory. On the fake, launches and copies are slowed so that a missing wait shows. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"

#define DEVICES 3
#define BUFFERS 5 /* 4 device allocations and 1 wrapped host page set */
#define N 1024    /* uint32 elements per buffer */

static uint64_t rng_state;
static uint32_t next(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}

static void free_host(void *user) { free(user); }

static void check_buffer(rig_buffer b, const uint32_t *want, int program, int op, int which) {
  static uint32_t got[N];
  OK(rig_buffer_read_into(b, 0, got, sizeof got));
  for (uint32_t i = 0; i < N; ++i)
    if (got[i] != want[i])
      fail_msg("program %d, after op %d: buffer %d element %u is %u, sequential order gives %u", program, op, which,
               i, got[i], want[i]);
}

static void test_random_programs_give_what_sequential_order_gives(void **state) {
  (void)state;
  if (gt_fake()) {
    gt_set("reset", 0);
    gt_set("launch_delay_us", 30);
    gt_set("copy_delay_us", 30);
  }
  const char *seed_env = getenv("RIG_CUDA_PROGRAMS_SEED");
  uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : 12345;
  int quick = gt_fake() || gt()->host_kernels || (getenv("RIG_CUDA_TEST_QUICK") && atoi(getenv("RIG_CUDA_TEST_QUICK")));
  const int programs = quick ? 12 : 60, length = quick ? 40 : 120;
  fprintf(stderr, "programs: seed %llu, %d programs of %d operations\n", (unsigned long long)seed, programs, length);
  rng_state = seed;

  rig_device dev[DEVICES];
  if (!gt_open(gt_name(0), &dev[0]) || !gt_open(gt_name(0), &dev[1])) return;
  if (!gt_open(gt_name(gt_gpu_count() > 1 ? 1 : 0), &dev[2])) return;
  rig_module mod[DEVICES];
  for (int d = 0; d < DEVICES; ++d) mod[d] = gt_kernels(dev[d]);

  for (int p = 0; p < programs; ++p) {
    /* Buffers: 4 on random devices, 1 wrapping page-aligned host memory; each seen by every device. */
    rig_buffer view[BUFFERS][DEVICES];
    rig_buffer base[BUFFERS];
    uint32_t *host_mem = aligned_alloc(4096, N * 4);
    static uint32_t ref[BUFFERS][N], tmp[N];
    for (int b = 0; b < BUFFERS; ++b) {
      if (b < BUFFERS - 1) {
        int owner = (int)(next() % DEVICES);
        OK(rig_buffer_create(dev[owner], N * 4, RIG_MEMORY_DEVICE, &base[b]));
      } else {
        OK(rig_buffer_wrap(host_mem, N * 4, RIG_ACCESS_READ_WRITE, free_host, host_mem, &base[b]));
      }
      for (uint32_t i = 0; i < N; ++i) ref[b][i] = next();
      OK(rig_buffer_write_from(base[b], 0, ref[b], N * 4));
      for (int d = 0; d < DEVICES; ++d) {
        rig_device owner;
        OK(rig_buffer_device(base[b], &owner));
        if (owner == dev[d]) {
          view[b][d] = base[b];
        } else {
          OK(rig_buffer_borrow(dev[d], base[b], &view[b][d]));
        }
      }
    }
    for (int op = 0; op < length; ++op) {
      int d = (int)(next() % DEVICES);
      int src = (int)(next() % BUFFERS), dst = (int)(next() % BUFFERS);
      uint32_t k = next();
      switch (next() % 7) {
        case 0:
          gt_fill_u32(dev[d], mod[d], view[dst][d], N, k);
          for (uint32_t i = 0; i < N; ++i) ref[dst][i] = k;
          break;
        case 1:
          gt_step(dev[d], mod[d], "rig_add_u32", view[src][d], view[dst][d], N, k);
          for (uint32_t i = 0; i < N; ++i) ref[dst][i] = ref[src][i] + k;
          break;
        case 2:
        case 3:
          gt_step(dev[d], mod[d], "rig_chain_step", view[src][d], view[dst][d], N, k);
          for (uint32_t i = 0; i < N; ++i) ref[dst][i] = ref[src][i] * 31u + k + i;
          break;
        case 4:
          if (src == dst) dst = (dst + 1) % BUFFERS;
          rt_copy(dev[d], view[src][d], view[dst][d]);
          memcpy(ref[dst], ref[src], sizeof ref[dst]);
          break;
        case 5:
          for (uint32_t i = 0; i < N; ++i) tmp[i] = k ^ (i * 2654435761u);
          OK(rig_buffer_write_from(base[dst], 0, tmp, sizeof tmp));
          memcpy(ref[dst], tmp, sizeof tmp);
          break;
        case 6:
          check_buffer(base[src], ref[src], p, op, src);
          break;
      }
    }
    for (int b = 0; b < BUFFERS; ++b) check_buffer(base[b], ref[b], p, length, b);
    for (int b = 0; b < BUFFERS; ++b) {
      for (int d = 0; d < DEVICES; ++d)
        if (view[b][d] != base[b]) OK(rig_buffer_release(view[b][d]));
      OK(rig_buffer_release(base[b]));
    }
    /* host_mem is freed by free_host once rig no longer uses it */
  }
  for (int d = 0; d < DEVICES; ++d) {
    gt_release_kernels(mod[d]);
    OK(rig_device_release(dev[d]));
  }
}

int main(void) {
  if (!gt_available()) return 77;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_programs_give_what_sequential_order_gives),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
