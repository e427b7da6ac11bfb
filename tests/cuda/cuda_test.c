#define _GNU_SOURCE
#include "cuda_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "kernels_ptx.h"

int ct_cuda_available(void) {
  rig_device d = NULL;
  if (rig_device_open("cuda:0", &d) == RIG_OK) {
    rig_device_release(d);
    return 1;
  }
  if (rt_required("cuda")) {
    fprintf(stderr, "FAIL: RIG_REQUIRE names cuda but cuda:0 did not open: %s\n", rig_last_error());
    exit(1);
  }
  fprintf(stderr, "SKIP: no CUDA device: %s\n", rig_last_error());
  return 0;
}

int ct_open(const char *name, rig_device *out) {
  if (rig_device_open(name, out) == RIG_OK) return 1;
  if (rt_required("cuda")) fail_msg("RIG_REQUIRE names cuda but %s did not open: %s", name, rig_last_error());
  fprintf(stderr, "SKIP: %s did not open: %s\n", name, rig_last_error());
  skip();
  return 0;
}

size_t ct_gpu_count(void) {
  const char *names[64];
  size_t count = 0, gpus = 0;
  OK(rig_device_list(names, 64, &count));
  for (size_t i = 0; i < count && i < 64; ++i)
    if (strncmp(names[i], "cuda:", 5) == 0) ++gpus;
  return gpus;
}

static void *fake_symbol(const char *name) {
  const char *path = getenv("RIG_CUDA_LIBRARY");
  if (!path || !*path) return NULL;
  /* The same file rig loaded: dlopen gives the already-loaded instance (its state is rig's). */
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : NULL;
}

int ct_fake(void) { return fake_symbol("fakecuda_control") != NULL; }

void ct_set(const char *name, long long value) {
  fakecuda_control_fn f = (fakecuda_control_fn)fake_symbol("fakecuda_control");
  if (!f) fail_msg("not on the fake libcuda: cannot set %s", name);
  if (f(name, value) != 0) fail_msg("the fake has no switch %s", name);
}

long long ct_query(const char *name) {
  fakecuda_query_fn f = (fakecuda_query_fn)fake_symbol("fakecuda_query");
  return f ? f(name) : -1;
}

rig_module ct_kernels(rig_device d) {
  rig_module m = NULL;
  OK(rig_module_load(d, RIG_MODULE_PTX, kernels_ptx, strlen(kernels_ptx), &m));
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
  part.grid[0] = grid;
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

rig_point ct_step(rig_device d, rig_module m, const char *function, rig_buffer in, rig_buffer out, uint32_t n,
                  uint32_t k) {
  uint32_t scalars[2] = {n, k};
  uint32_t grid = (n + 255) / 256;
  if (in == out) {
    rig_access access[1] = {RIG_ACCESS_READ_WRITE};
    uint32_t slots[2] = {0, 0};
    return submit_launch(d, m, function, &in, access, 1, slots, 2, scalars, sizeof scalars, grid ? grid : 1);
  }
  rig_buffer buffers[2] = {in, out};
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  uint32_t slots[2] = {0, 1};
  return submit_launch(d, m, function, buffers, access, 2, slots, 2, scalars, sizeof scalars, grid ? grid : 1);
}

rig_point ct_fill_u32(rig_device d, rig_module m, rig_buffer out, uint32_t n, uint32_t k) {
  uint32_t scalars[2] = {n, k};
  rig_access access[1] = {RIG_ACCESS_WRITE};
  uint32_t slots[1] = {0};
  return submit_launch(d, m, "rig_fill_u32", &out, access, 1, slots, 1, scalars, sizeof scalars, (n + 255) / 256);
}

rig_point ct_delay(rig_device d, rig_module m, uint64_t ns) {
  return submit_launch(d, m, "rig_delay", NULL, NULL, 0, NULL, 0, &ns, sizeof ns, 1);
}
