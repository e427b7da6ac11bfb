/* Helpers for the driver suite (test_driver_suite.c) and the stream drivers' own tests, one source for every
 * backend: opening devices (skip, or fail under RIG_REQUIRE=<prefix>), the fake library's switches when the
 * driver's RIG_*_LIBRARY names it, and the suite's kernels: those of tests/cuda/kernels.ptx on CUDA and HIP
 * (the fakes bind their names; through the HIP shim the CUDA driver compiles them), the same kernels as C
 * functions (host kernels) on memory devices and the test driver. The backend is fixed when this file is
 * compiled (GT_DRIVER_CUDA, _HIP, _VULKAN, _MEMORY or _TEST): tests/drivers/meson.build builds it once per
 * backend. Each backend lists the suite's cases it does not support, and why (IREE's hal/cts backends). */
#ifndef RIG_GPU_TEST_H
#define RIG_GPU_TEST_H

#include "rigtest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A case of the suite a backend does not support, and why (printed where the suite leaves it out). */
typedef struct gt_unsupported {
  const char *name; /* the case's function name */
  const char *why;
} gt_unsupported;

/* How a backend's devices are opened. */
typedef enum gt_opener {
  GT_OPEN_DRIVER = 0, /* rig_device_open("prefix:N"): a driver's GPU */
  GT_OPEN_MEMORY = 1, /* rig_memory_device(name): any number, by name */
  GT_OPEN_TEST = 2,   /* tdrv_open(name): the test driver (tests/support/test_driver.h) */
} gt_opener;

/* What tells one backend from another in a test. */
typedef struct gt_backend {
  const char *prefix;           /* "cuda": devices are prefix:N, and RIG_REQUIRE names it */
  const char *framework;        /* rig_device_info.framework: "CUDA" */
  const char *library_env;      /* the variable naming the library rig loads: "RIG_CUDA_LIBRARY" */
  const char *fake_name;        /* "the fake libcuda", for skip messages */
  const char *fake_control;     /* the fake's control and query functions */
  const char *fake_query;
  rig_module_format kernels;    /* the format kernels.ptx loads as: PTX, or a HIP code object */
  const char *module_loader;    /* the loader call a refused module's message names */
  const char *launch_failure;   /* the library's name for a failed launch (the fake's fail_launch_at) */
  const char *not_supported;    /* the library's name for 801 */
  int read_only_attribute;      /* 1: a device says whether it takes the read-only flag (CUDA's 113) */
  const char *error_prefix;     /* how the library's error names begin: "CUDA_ERROR_", "hipError" */
  const char *timeline_env;     /* the variable choosing a stream driver's timeline: "RIG_CUDA_TIMELINE" */
  int events_by_default;        /* 1: the timeline is kept with events unless memops is asked for (CUDA) */
  gt_opener opener;
  rig_device_kind device_kind;  /* rig_device_info.kind of its devices */
  int host_kernels;             /* 1: the suite's kernels run as C functions (RIG_PART_HOST_KERNEL) */
  const gt_unsupported *unsupported; /* ended by {NULL, NULL} */
} gt_backend;

/* The backend this binary was built for. */
const gt_backend *gt(void);
/* "prefix:i" (a static buffer per i < 8). */
const char *gt_name(unsigned i);

/* Why this backend does not support the suite's case `name`, or null where it does. */
const char *gt_unsupported_why(const char *name);
/* Leaves the cases this backend does not support out of tests[0..*n) (printing each with why). */
void gt_leave_out_unsupported(struct CMUnitTest *tests, size_t *n);

/* 1 if device 0 opens; else prints why and returns 0 (the binary then exits 77), or exits 1 when
 * RIG_REQUIRE names the backend. Call once from main. */
int gt_available(void);
/* Opens `name`; skips the test (fails under RIG_REQUIRE=<prefix>) where it cannot. */
int gt_open(const char *name, rig_device *out);
/* The number of this backend's devices rig lists. */
size_t gt_gpu_count(void);

/* 1 when running on the backend's fake library (its control function is found). */
int gt_fake(void);
/* Sets a switch of the fake (fails the test when not on the fake). */
void gt_set(const char *name, long long value);
/* Reads a counter of the fake, or over a real driver the counting interposer's "calls:FIELD" counters
 * (tests/doubles/count_cuda); -1 where neither is loaded. */
long long gt_query(const char *name);
/* A function of the loaded library itself (the fake's hipHostRegister, ...), or null. */
void *gt_symbol(const char *name);
/* How the loaded library begins its error names: the backend's error_prefix, or CUDA's where the library is
 * the HIP shim over the CUDA driver (it answers hipGetErrorName with CUDA's names). */
const char *gt_error_prefix(void);
/* Skips the test, with the reason, unless on the fake. */
#define GT_FAKE_ONLY()                                                                 \
  do {                                                                                 \
    if (!gt_fake()) {                                                                  \
      fprintf(stderr, "SKIP %s: needs %s's switches\n", __func__, gt()->fake_name);    \
      skip();                                                                          \
    }                                                                                  \
  } while (0)

/* The module of kernels.ptx on d; null where the kernels are host kernels (they need no module). */
rig_module gt_kernels(rig_device d);
/* Releases what gt_kernels gave (nothing where it gave null). */
void gt_release_kernels(rig_module m);
/* A run of one launch of `function` on d (module m) over `slot_count` slots of the given accesses, bound to
 * `buffers`, with `launch_slots` arguments naming `slots`, 256 threads a block and `grid` blocks (0: 1); no
 * scalars set. It keeps its submission. */
rig_run gt_launch_run(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                      const rig_access *access, uint32_t slot_count, const uint32_t *slots, uint32_t launch_slots,
                      uint32_t grid);
/* Submits `function`(in, out, {n, k}) on d over n uint32 elements (one block of 256 per 256 elements);
 * in == out is one READ_WRITE slot. Returns the point. */
rig_point gt_step(rig_device d, rig_module m, const char *function, rig_buffer in, rig_buffer out, uint32_t n,
                  uint32_t k);
/* rig_fill_u32(out, {n, k}) on d. */
rig_point gt_fill_u32(rig_device d, rig_module m, rig_buffer out, uint32_t n, uint32_t k);
/* rig_delay(ns) on d (a submission with no slots). */
rig_point gt_delay(rig_device d, rig_module m, uint64_t ns);
/* rig_fault on d: a write through a bad address (loses the device on a GPU). */
rig_point gt_fault(rig_device d, rig_module m);

#ifdef __cplusplus
}
#endif

#endif
