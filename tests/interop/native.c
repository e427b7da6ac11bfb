/* native.h's table: CUDA's driver API or HIP's runtime, called the way a program calls them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "native.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpu_test.h"

static void *lib;

static void *sym(const char *name) {
  void *f = gt_symbol(name);
  if (!f && lib) f = dlsym(lib, name);
  if (!f) fprintf(stderr, "native: %s not found\n", name);
  return f;
}

/* CUDA: the signatures of the driver API with its handles as void * and CUdeviceptr as uint64_t. */
static int (*cu_retain)(void **, int);
static int (*cu_set_current)(void *);
static int (*cu_stream_create)(void **, unsigned);
static int (*cu_event_create)(void **, unsigned);
static int (*cu_copy)(uint64_t, uint64_t, size_t, void *);
static int (*cu_alloc)(uint64_t *, size_t);
static int (*cu_host_alloc)(void **, size_t, unsigned);
static int (*cu_host_pointer)(uint64_t *, void *, unsigned);
static int (*cu_wait_value)(void *, uint64_t, uint64_t, unsigned);

static int cu_use_gpu(int ordinal) {
  void *ctx = NULL;
  int r = cu_retain(&ctx, ordinal);
  return r ? r : cu_set_current(ctx);
}
static int cu_stream_new(void **s) { return cu_stream_create(s, 1 /* non-blocking */); }
static int cu_event_new(void **e) { return cu_event_create(e, 2 /* timing disabled */); }
static int cu_host_new(void **host, uint64_t *device, size_t n) {
  int r = cu_host_alloc(host, n, 0x3 /* portable, device-mapped */);
  return r ? r : cu_host_pointer(device, *host, 0);
}
static int cu_wait_word(void *s, uint64_t device, uint64_t value) { return cu_wait_value(s, device, value, 0); }

/* HIP: the runtime's signatures where they differ (void * addresses, a copy kind, a wait mask). */
static int (*hip_set_device)(int);
static int (*hip_stream_create)(void **, unsigned);
static int (*hip_event_create)(void **, unsigned);
static int (*hip_copy)(void *, const void *, size_t, int, void *);
static int (*hip_alloc)(void **, size_t);
static int (*hip_free)(void *);
static int (*hip_host_alloc)(void **, size_t, unsigned);
static int (*hip_host_pointer)(void **, void *, unsigned);
static int (*hip_wait_value)(void *, void *, uint64_t, unsigned, uint64_t);

static int hip_stream_new(void **s) { return hip_stream_create(s, 1); }
static int hip_event_new(void **e) { return hip_event_create(e, 2); }
static int hip_copy_async(uint64_t dst, uint64_t src, size_t n, void *s) {
  return hip_copy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, 4 /* hipMemcpyDefault */, s);
}
static int hip_mem_alloc(uint64_t *a, size_t n) {
  void *p = NULL;
  int r = hip_alloc(&p, n);
  *a = (uint64_t)(uintptr_t)p;
  return r;
}
static int hip_mem_free(uint64_t a) { return hip_free((void *)(uintptr_t)a); }
static int hip_host_new(void **host, uint64_t *device, size_t n) {
  void *d = NULL;
  int r = hip_host_alloc(host, n, 0x2 /* mapped */);
  if (!r) r = hip_host_pointer(&d, *host, 0);
  *device = (uint64_t)(uintptr_t)d;
  return r;
}
static int hip_wait_word(void *s, uint64_t device, uint64_t value) {
  return hip_wait_value(s, (void *)(uintptr_t)device, value, 0 /* >= */, ~(uint64_t)0);
}

#define LOAD(field, name) ok &= (*(void **)&(field) = sym(name)) != NULL

const native_api *native(void) {
  static native_api api;
  static int done, ok = 1;
  if (done) return ok ? &api : NULL;
  done = 1;
  int hip = strcmp(gt()->prefix, "hip") == 0;
  if (!gt_symbol(hip ? "hipInit" : "cuInit"))
    lib = dlopen(hip ? "libamdhip64.so" : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  api.hip = hip;
  if (!hip) {
    LOAD(cu_retain, "cuDevicePrimaryCtxRetain");
    LOAD(cu_set_current, "cuCtxSetCurrent");
    LOAD(cu_stream_create, "cuStreamCreate");
    LOAD(cu_event_create, "cuEventCreate");
    LOAD(cu_copy, "cuMemcpyAsync");
    LOAD(cu_alloc, "cuMemAlloc_v2");
    LOAD(cu_host_alloc, "cuMemHostAlloc");
    LOAD(cu_host_pointer, "cuMemHostGetDevicePointer_v2");
    LOAD(cu_wait_value, "cuStreamWaitValue64_v2");
    LOAD(api.stream_destroy, "cuStreamDestroy_v2");
    LOAD(api.stream_synchronize, "cuStreamSynchronize");
    LOAD(api.event_destroy, "cuEventDestroy_v2");
    LOAD(api.event_record, "cuEventRecord");
    LOAD(api.event_query, "cuEventQuery");
    LOAD(api.event_synchronize, "cuEventSynchronize");
    LOAD(api.mem_free, "cuMemFree_v2");
    api.use_gpu = cu_use_gpu;
    api.stream_create = cu_stream_new;
    api.event_create = cu_event_new;
    api.copy_async = cu_copy;
    api.mem_alloc = cu_alloc;
    api.host_alloc = cu_host_new;
    api.wait_word = cu_wait_word;
  } else {
    LOAD(hip_set_device, "hipSetDevice");
    LOAD(hip_stream_create, "hipStreamCreateWithFlags");
    LOAD(hip_event_create, "hipEventCreateWithFlags");
    LOAD(hip_copy, "hipMemcpyAsync");
    LOAD(hip_alloc, "hipMalloc");
    LOAD(hip_free, "hipFree");
    LOAD(hip_host_alloc, "hipHostMalloc");
    LOAD(hip_host_pointer, "hipHostGetDevicePointer");
    LOAD(hip_wait_value, "hipStreamWaitValue64");
    LOAD(api.stream_destroy, "hipStreamDestroy");
    LOAD(api.stream_synchronize, "hipStreamSynchronize");
    LOAD(api.event_destroy, "hipEventDestroy");
    LOAD(api.event_record, "hipEventRecord");
    LOAD(api.event_query, "hipEventQuery");
    LOAD(api.event_synchronize, "hipEventSynchronize");
    api.use_gpu = hip_set_device;
    api.stream_create = hip_stream_new;
    api.event_create = hip_event_new;
    api.copy_async = hip_copy_async;
    api.mem_alloc = hip_mem_alloc;
    api.mem_free = hip_mem_free;
    api.host_alloc = hip_host_new;
    api.wait_word = hip_wait_word;
  }
  return ok ? &api : NULL;
}

int native_ready(const native_api **out) {
  if (!gt_available()) return 77; /* skipped, with the reason printed */
  *out = native();
  if (*out) return 0;
  fprintf(stderr, "%s: the native calls the test makes are missing\n", gt()->prefix);
  return 1;
}
