#define _GNU_SOURCE
#include "gpu_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_ptx.h"

#if defined(GT_DRIVER_CUDA)
static const gt_backend backend = {"cuda", "CUDA", "RIG_CUDA_LIBRARY", "the fake libcuda", "fakecuda_control",
                                   "fakecuda_query", RIG_MODULE_PTX, "cuModuleLoadDataEx",
                                   "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_NOT_SUPPORTED", 1};
#elif defined(GT_DRIVER_HIP)
static const gt_backend backend = {"hip", "HIP", "RIG_HIP_LIBRARY", "the fake libamdhip64", "fakehip_control",
                                   "fakehip_query", RIG_MODULE_HIP_CODE_OBJECT, "hipModuleLoadData",
                                   "hipErrorLaunchFailure", "hipErrorNotSupported", 0};
#else
#error "define GT_DRIVER_CUDA or GT_DRIVER_HIP"
#endif

typedef int (*control_fn)(const char *name, long long value);
typedef long long (*query_fn)(const char *name);

const gt_backend *gt(void) { return &backend; }

const char *gt_name(unsigned i) {
  static char names[8][16];
  if (i >= 8) fail_msg("gt_name(%u): at most 8 devices", i);
  snprintf(names[i], sizeof names[i], "%s:%u", backend.prefix, i);
  return names[i];
}

int gt_available(void) {
  rig_device d = NULL;
  if (rig_device_open(gt_name(0), &d) == RIG_OK) {
    rig_device_release(d);
    return 1;
  }
  if (rt_required(backend.prefix)) {
    fprintf(stderr, "FAIL: RIG_REQUIRE names %s but %s did not open: %s\n", backend.prefix, gt_name(0),
            rig_last_error());
    exit(1);
  }
  fprintf(stderr, "SKIP: no %s device: %s\n", backend.framework, rig_last_error());
  return 0;
}

int gt_open(const char *name, rig_device *out) {
  if (rig_device_open(name, out) == RIG_OK) return 1;
  if (rt_required(backend.prefix))
    fail_msg("RIG_REQUIRE names %s but %s did not open: %s", backend.prefix, name, rig_last_error());
  fprintf(stderr, "SKIP: %s did not open: %s\n", name, rig_last_error());
  skip();
  return 0;
}

size_t gt_gpu_count(void) {
  const char *names[64];
  size_t count = 0, gpus = 0, n = strlen(backend.prefix);
  OK(rig_device_list(names, 64, &count));
  for (size_t i = 0; i < count && i < 64; ++i)
    if (strncmp(names[i], backend.prefix, n) == 0 && names[i][n] == ':') ++gpus;
  return gpus;
}

void *gt_symbol(const char *name) {
  const char *path = getenv(backend.library_env);
  if (!path || !*path) return NULL;
  /* The same file rig loaded: dlopen gives the already-loaded instance (its state is rig's). */
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : NULL;
}

int gt_fake(void) { return gt_symbol(backend.fake_control) != NULL; }

void gt_set(const char *name, long long value) {
  control_fn f = (control_fn)gt_symbol(backend.fake_control);
  if (!f) fail_msg("not on %s: cannot set %s", backend.fake_name, name);
  if (f(name, value) != 0) fail_msg("the fake has no switch %s", name);
}

long long gt_query(const char *name) {
  query_fn f = (query_fn)gt_symbol(backend.fake_query);
  return f ? f(name) : -1;
}

rig_module gt_kernels(rig_device d) {
  rig_module m = NULL;
  /* Without the NUL: both drivers end a text image themselves (the loaders take no length). */
  OK(rig_module_load(d, backend.kernels, kernels_ptx, strlen(kernels_ptx), &m));
  return m;
}

rig_run gt_launch_run(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                      const rig_access *access, uint32_t slot_count, const uint32_t *slots, uint32_t launch_slots,
                      uint32_t grid) {
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
  OK(rig_submission_make(d, &part, 1, access, slot_count, &sub));
  OK(rig_run_take(sub, &run));
  OK(rig_submission_release(sub));
  for (uint32_t i = 0; i < slot_count; ++i) OK(rig_run_set_buffer(run, i, buffers[i]));
  return run;
}

static rig_point submit_launch(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                               const rig_access *access, uint32_t slot_count, const uint32_t *slots,
                               uint32_t launch_slots, const void *scalars, size_t scalar_length, uint32_t grid) {
  rig_run run = gt_launch_run(d, m, function, buffers, access, slot_count, slots, launch_slots, grid);
  rig_point p = 0;
  OK(rig_run_set_scalars(run, scalars, scalar_length));
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_run_release(run));
  return p;
}

rig_point gt_step(rig_device d, rig_module m, const char *function, rig_buffer in, rig_buffer out, uint32_t n,
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

rig_point gt_fill_u32(rig_device d, rig_module m, rig_buffer out, uint32_t n, uint32_t k) {
  uint32_t scalars[2] = {n, k};
  rig_access access[1] = {RIG_ACCESS_WRITE};
  uint32_t slots[1] = {0};
  return submit_launch(d, m, "rig_fill_u32", &out, access, 1, slots, 1, scalars, sizeof scalars, (n + 255) / 256);
}

rig_point gt_fault(rig_device d, rig_module m) {
  uint64_t nowhere = 0x10;
  return submit_launch(d, m, "rig_fault", NULL, NULL, 0, NULL, 0, &nowhere, sizeof nowhere, 1);
}

rig_point gt_delay(rig_device d, rig_module m, uint64_t ns) {
  return submit_launch(d, m, "rig_delay", NULL, NULL, 0, NULL, 0, &ns, sizeof ns, 1);
}
