#include "vk_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void vk_missing(void) {
  if (rt_required("vulkan")) fail_msg("RIG_REQUIRE names vulkan but vulkan:0 did not open: %s", rig_last_error());
  fprintf(stderr, "SKIP: no Vulkan device: %s\n", rig_last_error());
  skip();
}

int vk_open(rig_device *out) {
  if (rig_device_open("vulkan:0", out) == RIG_OK) return 1;
  vk_missing();
  return 0;
}

rig_module vk_module(rig_device d, const uint32_t *words, size_t bytes) {
  rig_module m = NULL;
  OK(rig_module_load(d, RIG_MODULE_SPIRV, words, bytes, &m));
  return m;
}

rig_run vk_launch_run(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                      const rig_access *access, uint32_t n, const void *scalars, size_t scalar_bytes,
                      uint32_t grid_x, uint32_t block_x) {
  uint32_t slots[8];
  assert_true(n <= 8);
  for (uint32_t i = 0; i < n; ++i) slots[i] = i;
  rig_part p;
  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.kind = RIG_PART_LAUNCH;
  p.module = m;
  p.function = function;
  p.grid[0] = grid_x, p.grid[1] = 1, p.grid[2] = 1;
  p.block[0] = block_x, p.block[1] = 1, p.block[2] = 1;
  p.slots = slots;  /* copied by rig_submission_make */
  p.slot_count = n;
  rig_run run = rt_run(d, &p, 1, buffers, access, n);
  if (scalar_bytes) OK(rig_run_set_scalars(run, scalars, scalar_bytes));
  return run;
}

rig_point vk_launch(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                    const rig_access *access, uint32_t n, const void *scalars, size_t scalar_bytes,
                    uint32_t grid_x, uint32_t block_x, const rig_point *waits, size_t wait_count) {
  rig_run run = vk_launch_run(d, m, function, buffers, access, n, scalars, scalar_bytes, grid_x, block_x);
  rig_point point = 0;
  OK(rig_submit(run, waits, wait_count, &point));
  OK(rig_run_release(run));
  return point;
}

rig_buffer vk_buffer(rig_device d, size_t n, rig_memory memory) {
  rig_buffer b = NULL;
  OK(rig_buffer_create(d, n, memory, &b));
  return b;
}

uint64_t vk_poll_signaled(rig_device d, uint64_t value, unsigned ms) {
  struct timespec start, now, nap = {0, 1000000};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    uint64_t v = rt_signaled(d);
    if (v >= value) return v;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed >= (long)ms) return v;
    nanosleep(&nap, NULL);
  }
}

int vk_validation_teardown(void **state) {
  (void)state;
  uint64_t messages = 0;
  int active = vulkan_testing_validation(&messages);
  if (active == 1 && messages > 0) {
    fprintf(stderr, "FAIL: the Vulkan validation layer reported %llu message(s) (printed above)\n",
            (unsigned long long)messages);
    return -1;
  }
  if (active != 1) {
    const char *why = active < 0 ? "Vulkan did not load"
                                 : getenv("RIG_VULKAN_VALIDATION") ? "VK_LAYER_KHRONOS_validation not installed"
                                                                   : "RIG_VULKAN_VALIDATION not set";
    if (getenv("RIG_VULKAN_VALIDATION") && rt_required("vulkan") && active == 0) {
      fprintf(stderr, "FAIL: RIG_VULKAN_VALIDATION=1 and RIG_REQUIRE=vulkan, but the layer is not active\n");
      return -1;
    }
    fprintf(stderr, "note: Vulkan validation not checked: %s\n", why);
  } else {
    fprintf(stderr, "Vulkan validation layer: 0 messages\n");
  }
  return 0;
}

size_t vk_mismatches(rig_buffer b, size_t n, uint8_t want) {
  uint8_t *host = malloc(n);
  assert_non_null(host);
  OK(rig_buffer_read_into(b, 0, host, n));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += host[i] != want;
  free(host);
  return bad;
}
