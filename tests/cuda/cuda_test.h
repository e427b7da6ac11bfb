/* Helpers shared by the CUDA tests: opening cuda devices (skip, or fail under RIG_REQUIRE=cuda), the fake
 * libcuda's switches when RIG_CUDA_LIBRARY names it, and launches of the kernels of kernels.ptx. */
#ifndef RIG_CUDA_TEST_H
#define RIG_CUDA_TEST_H

#include "rigtest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if "cuda:0" opens; else prints why and returns 0 (the binary then exits 77, or fails when
 * RIG_REQUIRE names cuda). Call once from main. */
int ct_cuda_available(void);
/* Opens `name` ("cuda:0"); skips the test (fails under RIG_REQUIRE=cuda) where it cannot. */
int ct_open(const char *name, rig_device *out);
/* The number of CUDA devices rig lists. */
size_t ct_gpu_count(void);

/* 1 when running on the fake libcuda (its control functions are found). */
int ct_fake(void);
/* Sets a switch of the fake (fails the test when not on the fake). */
void ct_set(const char *name, long long value);
/* Reads a counter of the fake (-1 when not on the fake). */
long long ct_query(const char *name);
/* Skips the test, with the reason, unless on the fake. */
#define CT_FAKE_ONLY()                                                                   \
  do {                                                                                   \
    if (!ct_fake()) {                                                                    \
      fprintf(stderr, "SKIP %s: needs the fake libcuda's switches\n", __func__);         \
      skip();                                                                            \
    }                                                                                    \
  } while (0)

/* The module of kernels.ptx on d. */
rig_module ct_kernels(rig_device d);
/* Submits `function`(in, out, {n, k}) on d over n uint32 elements (one block of 256 per 256 elements);
 * in == out is one READ_WRITE slot. Returns the point. */
rig_point ct_step(rig_device d, rig_module m, const char *function, rig_buffer in, rig_buffer out, uint32_t n,
                  uint32_t k);
/* rig_fill_u32(out, {n, k}) on d. */
rig_point ct_fill_u32(rig_device d, rig_module m, rig_buffer out, uint32_t n, uint32_t k);
/* rig_delay(ns) on d (a submission with no slots). */
rig_point ct_delay(rig_device d, rig_module m, uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif
