#define _GNU_SOURCE
#include "hip_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hip.h"
#include "hip_kernels.h"

int ht_hip_available(void) {
  rig_device d = NULL;
  if (rig_device_open("hip:0", &d) == RIG_OK) {
    rig_device_release(d);
    return 1;
  }
  if (rt_required("hip")) {
    fprintf(stderr, "FAIL: RIG_REQUIRE names hip but hip:0 did not open: %s\n", rig_last_error());
    exit(1);
  }
  fprintf(stderr, "SKIP: no HIP device: %s\n", rig_last_error());
  return 0;
}

int ht_open(const char *name, rig_device *out) {
  if (rig_device_open(name, out) == RIG_OK) return 1;
  if (rt_required("hip")) fail_msg("RIG_REQUIRE names hip but %s did not open: %s", name, rig_last_error());
  fprintf(stderr, "SKIP: %s did not open: %s\n", name, rig_last_error());
  skip();
  return 0;
}

size_t ht_gpu_count(void) {
  const char *names[64];
  size_t count = 0, gpus = 0;
  OK(rig_device_list(names, 64, &count));
  for (size_t i = 0; i < count && i < 64; ++i)
    if (strncmp(names[i], "hip:", 4) == 0) ++gpus;
  return gpus;
}

void *ht_symbol(const char *name) {
  const char *path = getenv("RIG_HIP_LIBRARY");
  if (!path || !*path) return NULL;
  /* The same file rig loaded: dlopen gives the already-loaded instance (its state is rig's). */
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : NULL;
}

int ht_fake(void) { return ht_symbol("fakehip_control") != NULL; }

void ht_set(const char *name, long long value) {
  fakehip_control_fn f = (fakehip_control_fn)ht_symbol("fakehip_control");
  if (!f) fail_msg("not on the fake libamdhip64: cannot set %s", name);
  if (f(name, value) != 0) fail_msg("the fake has no switch %s", name);
}

long long ht_query(const char *name) {
  fakehip_query_fn f = (fakehip_query_fn)ht_symbol("fakehip_query");
  return f ? f(name) : -1;
}

rig_module ht_kernels(rig_device d) {
  rig_module m = NULL;
  /* Without the NUL: rig's HIP driver ends the image itself (hipModuleLoadData takes no length). */
  OK(rig_module_load(d, RIG_MODULE_HIP_CODE_OBJECT, hip_kernels_ptx, strlen(hip_kernels_ptx), &m));
  return m;
}

static rig_point submit_launch(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                               const rig_access *access, uint32_t slot_count, const uint32_t *slots,
                               uint32_t launch_slots, const void *scalars, size_t scalar_length, uint32_t grid) {
  rig_part part;
  memset(&part, 0, sizeof part);
  part.size = sizeof part;
  part.kind = RIG_PART_LAUNCH;
  part.module = m;
  part.function = function;
  part.grid[0] = grid ? grid : 1;
  part.grid[1] = part.grid[2] = 1;
  part.block[0] = 256;
  part.block[1] = part.block[2] = 1;
  part.slots = slots;
  part.slot_count = launch_slots;
  rig_submission sub = NULL;
  rig_run run = NULL;
  rig_point p = 0;
  OK(rig_submission_make(d, &part, 1, access, slot_count, &sub));
  OK(rig_run_take(sub, &run));
  for (uint32_t i = 0; i < slot_count; ++i) OK(rig_run_set_buffer(run, i, buffers[i]));
  OK(rig_run_set_scalars(run, scalars, scalar_length));
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_run_release(run));
  OK(rig_submission_release(sub));
  return p;
}

rig_point ht_step(rig_device d, rig_module m, const char *function, rig_buffer in, rig_buffer out, uint32_t n,
                  uint32_t k) {
  uint32_t scalars[2] = {n, k};
  uint32_t grid = (n + 255) / 256;
  if (in == out) {
    rig_access access[1] = {RIG_ACCESS_READ_WRITE};
    uint32_t slots[2] = {0, 0};
    return submit_launch(d, m, function, &in, access, 1, slots, 2, scalars, sizeof scalars, grid);
  }
  rig_buffer buffers[2] = {in, out};
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  uint32_t slots[2] = {0, 1};
  return submit_launch(d, m, function, buffers, access, 2, slots, 2, scalars, sizeof scalars, grid);
}

rig_point ht_fill_u32(rig_device d, rig_module m, rig_buffer out, uint32_t n, uint32_t k) {
  uint32_t scalars[2] = {n, k};
  rig_access access[1] = {RIG_ACCESS_WRITE};
  uint32_t slots[1] = {0};
  return submit_launch(d, m, "rig_fill_u32", &out, access, 1, slots, 1, scalars, sizeof scalars, (n + 255) / 256);
}

rig_point ht_fault(rig_device d, rig_module m) {
  uint64_t nowhere = 0x10;
  return submit_launch(d, m, "rig_fault", NULL, NULL, 0, NULL, 0, &nowhere, sizeof nowhere, 1);
}

rig_point ht_delay(rig_device d, rig_module m, uint64_t ns) {
  return submit_launch(d, m, "rig_delay", NULL, NULL, 0, NULL, 0, &ns, sizeof ns, 1);
}
