/* Helpers shared by the HIP tests: opening hip devices (skip, or fail under RIG_REQUIRE=hip), the fake
 * libamdhip64's switches when RIG_HIP_LIBRARY names it, and launches of the kernels of tests/cuda/kernels.ptx
 * (the fake binds their names; through the shim the CUDA driver compiles the PTX). */
#ifndef RIG_HIP_TEST_H
#define RIG_HIP_TEST_H

#include "rigtest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if "hip:0" opens; else prints why and returns 0 (the binary then exits 77), or exits 1 when RIG_REQUIRE
 * names hip. Call once from main. */
int ht_hip_available(void);
/* Opens `name` ("hip:0"); skips the test (fails under RIG_REQUIRE=hip) where it cannot. */
int ht_open(const char *name, rig_device *out);
/* The number of HIP devices rig lists. */
size_t ht_gpu_count(void);

/* 1 when running on the fake libamdhip64 (its control functions are found). */
int ht_fake(void);
/* Sets a switch of the fake (fails the test when not on the fake). */
void ht_set(const char *name, long long value);
/* Reads a counter of the fake (-1 when not on the fake). */
long long ht_query(const char *name);
/* A function of the loaded HIP library itself (the fake's hipHostRegister, ...), or null. */
void *ht_symbol(const char *name);
/* Skips the test, with the reason, unless on the fake. */
#define HT_FAKE_ONLY()                                                                   \
  do {                                                                                   \
    if (!ht_fake()) {                                                                    \
      fprintf(stderr, "SKIP %s: needs the fake libamdhip64's switches\n", __func__);     \
      skip();                                                                            \
    }                                                                                    \
  } while (0)

/* The module of kernels.ptx on d, loaded as a HIP code object. */
rig_module ht_kernels(rig_device d);
/* Submits `function`(in, out, {n, k}) on d over n uint32 elements; in == out is one READ_WRITE slot. */
rig_point ht_step(rig_device d, rig_module m, const char *function, rig_buffer in, rig_buffer out, uint32_t n,
                  uint32_t k);
/* rig_fill_u32(out, {n, k}) on d. */
rig_point ht_fill_u32(rig_device d, rig_module m, rig_buffer out, uint32_t n, uint32_t k);
/* rig_delay(ns) on d: a kernel busy for ns nanoseconds. */
rig_point ht_delay(rig_device d, rig_module m, uint64_t ns);
/* rig_fault(where) on d: a kernel that writes through a bad address. */
rig_point ht_fault(rig_device d, rig_module m);

#ifdef __cplusplus
}
#endif

#endif
