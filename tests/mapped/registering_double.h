/* A rig device whose driver is a double of host registration (src/core/driver.h HostRegistration) over
 * host memory, opened with any framework name and kind: it counts every query and every registration, so a
 * test can prove that Vulkan is refused before any query and that nothing is ever registered on a refused
 * device; and it misbehaves on demand (wrong bytes, refused registration, unregister failing, slow
 * registered uploads). Linked with the engine's static archive, like the tests' test driver. */
#ifndef RIG_TESTS_MAPPED_REGISTERING_DOUBLE_H
#define RIG_TESTS_MAPPED_REGISTERING_DOUBLE_H

#include <rig.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rd_config {
  const char *framework;   /* "CUDA", "Vulkan", ... */
  rig_device_kind kind;
  int integrated;          /* the fact's answer: 1, 0, -1 */
  int pageable;            /* pageable memory through host page tables: 1, 0, -1 */
  int read_only_supported; /* 1, 0, -1 */
  int registers;           /* 0: the driver has no host registration */
} rd_config;

typedef struct rd_counts {
  unsigned queries;    /* integrated, pageable, read-only queries */
  unsigned registers;  /* register_range calls that reached the driver */
  unsigned unregisters;
  unsigned read_only_registers; /* of which with the read-only flag */
  unsigned allocs, frees, uploads, downloads, device_allocs, device_frees;
  unsigned live_registrations;
} rd_counts;

rig_status rd_open(const rd_config *config, rig_device *out);
rd_counts rd_get_counts(rig_device d);
void rd_set_wrong_bytes(rig_device d, int on);
void rd_set_refuse_register(rig_device d, int on);
/* The next n unregisters fail with 713's equivalent (RIG_DRIVER); -1: all of them. */
void rd_set_unregister_failures(rig_device d, int n);
/* Uploads from registered file mappings sleep this long (a slow registered path; registered anonymous
 * memory, such as the probe's staging, is pinned like an allocation of the driver's and not slowed). */
void rd_set_registered_upload_delay_us(rig_device d, unsigned us);

#ifdef __cplusplus
}
#endif

#endif
