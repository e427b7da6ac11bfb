/* The few native calls the interop tests make as "the program's own code" (PyTorch's, NCCL's): a stream,
 * events, a device-to-device copy, a stream gated on a host word, device memory. One table, filled for
 * CUDA's driver API or HIP's runtime by the backend the test runs (gt()->prefix), from the library rig
 * loaded (the fake, through RIG_*_LIBRARY) or the system's. */
#ifndef RIG_TEST_NATIVE_H
#define RIG_TEST_NATIVE_H

#include <stddef.h>
#include <stdint.h>

typedef struct native_api {
  int hip;
  /* Makes GPU `ordinal` current on this thread (CUDA: its primary context; HIP: the device). */
  int (*use_gpu)(int ordinal);
  int (*stream_create)(void **stream);
  int (*stream_destroy)(void *stream);
  int (*stream_synchronize)(void *stream);
  int (*event_create)(void **event);
  int (*event_destroy)(void *event);
  int (*event_record)(void *event, void *stream);
  int (*event_query)(void *event); /* 0 done, 600 not ready */
  int (*event_synchronize)(void *event);
  int (*copy_async)(uint64_t dst, uint64_t src, size_t bytes, void *stream);
  int (*mem_alloc)(uint64_t *address, size_t bytes);
  int (*mem_free)(uint64_t address);
  /* Pinned host memory the GPU addresses: *host for the test, *device for stream memory operations. */
  int (*host_alloc)(void **host, uint64_t *device, size_t bytes);
  /* The stream waits until the 64-bit word at `device` is >= value (a stream memory operation). */
  int (*wait_word)(void *stream, uint64_t device, uint64_t value);
} native_api;

/* The table for the running backend; null (with the reason printed) where a call is missing. */
const native_api *native(void);

/* For a test's main: 0 with *out set where the backend's device is there and the table complete; else the
 * status to exit with, the reason printed: 77 (skipped: no device) or 1 (a native call is missing). */
int native_ready(const native_api **out);

#endif
