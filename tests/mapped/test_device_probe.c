/* rig_probe and the registered-range table over a rig device (the registering double): the device-backed
 * ops, the read-only flag, every self-test kind through the engine's device, and the table refusing a second
 * or overlapping registration before the driver sees it. */
#include <rig_mapped.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "registering_double.h"

#define MIB ((size_t)1 << 20)
#define LEN (4 * MIB)

typedef struct fx {
  char *map, *ref;
  rig_device d;
  rig_verdict v;
} fx;

static int open_with(void **state, const char *framework, int read_only) {
  fx *f = calloc(1, sizeof *f);
  /* A file's pages, as the probe is given: the double slows uploads from registered file mappings only
   * (registered anonymous memory, the probe's own staging, is pinned memory to it). */
  char path[] = "/tmp/rig-device-probe-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  assert_int_equal(ftruncate(fd, LEN), 0);
  f->map = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  close(fd);
  assert_true(f->map != MAP_FAILED);
  uint32_t x = 7;
  for (size_t i = 0; i < LEN; ++i) {
    x = x * 1664525u + 1013904223u;
    f->map[i] = (char)(x >> 24);
  }
  f->ref = malloc(LEN);
  memcpy(f->ref, f->map, LEN);
  rd_config c = {framework, RIG_DEVICE_GPU, 0, 0, read_only, 1};
  assert_int_equal(rd_open(&c, &f->d), RIG_OK);
  *state = f;
  return 0;
}
static int setup(void **state) { return open_with(state, "CUDA", 1); }
static int setup_no_read_only(void **state) { return open_with(state, "CUDA", 0); }

static int teardown(void **state) {
  fx *f = *state;
  if (f->v) rig_verdict_release(f->v);
  rig_device_release(f->d);
  munmap(f->map, LEN);
  free(f->ref);
  free(f);
  return 0;
}

/* With speed margin `m` (0: the default, 0.8). The test driver's timed copies are both host memcpys, so
 * their ratio is the machine's noise: cases that do not test the margin pass kNoise. */
static const double kNoise = 0.25;
static rig_verdict_kind probe_margin(fx *f, double m) {
  if (f->v) rig_verdict_release(f->v);
  f->v = NULL;
  rig_probe_options o = {sizeof o, m, NULL, NULL};
  assert_int_equal(rig_probe(f->d, f->map, f->ref, LEN, &o, &f->v), RIG_OK);
  rig_verdict_kind k;
  assert_int_equal(rig_verdict_get_kind(f->v, &k), RIG_OK);
  return k;
}
static rig_verdict_kind probe(fx *f) { return probe_margin(f, kNoise); }
static const char *text(fx *f) {
  const char *t;
  assert_int_equal(rig_verdict_to_string(f->v, &t), RIG_OK);
  return t;
}
static int registered(const void *p, size_t n) {
  int r = -1;
  assert_int_equal(rig_host_is_registered(p, n, &r), RIG_OK);
  return r;
}

static void usable_with_read_only_flag(void **state) {
  fx *f = *state;
  rig_verdict_kind k = probe(f);
  if (k != RIG_VERDICT_USABLE) fail_msg("%s", text(f));
  rd_counts n = rd_get_counts(f->d);
  assert_int_equal(n.registers, 3); /* the two windows (read-only) and the staging buffer */
  assert_int_equal(n.read_only_registers, 2);
  assert_int_equal(n.unregisters, 3);
  assert_int_equal(n.live_registrations, 0);
  assert_int_equal(n.device_allocs, 1);
  assert_int_equal(n.device_frees, 1); /* the ops' device buffer is freed */
  assert_int_equal(n.allocs, n.frees);
  assert_int_equal(registered(f->map, LEN), 0);
}

static void without_read_only_support_no_flag(void **state) {
  fx *f = *state;
  probe(f);
  rd_counts n = rd_get_counts(f->d);
  assert_int_equal(n.registers, 3);
  assert_int_equal(n.read_only_registers, 0);
}

static void wrong_bytes(void **state) {
  fx *f = *state;
  rd_set_wrong_bytes(f->d, 1);
  assert_int_equal(probe(f), RIG_VERDICT_REFUSED);
  rig_refusal r;
  int c;
  assert_int_equal(rig_verdict_refusal(f->v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_WRONG_BYTES);
  assert_int_equal(rig_verdict_cacheable(f->v, &c), RIG_OK);
  assert_int_equal(c, 1);
  assert_int_equal(rd_get_counts(f->d).live_registrations, 0);
}

static void too_slow(void **state) {
  fx *f = *state;
  /* 200 ms a registered upload: far below the staged path's speed even where a sanitizer and a loaded
   * machine make the staged copy itself slow (TSan on 2 busy cores measured it at 0.06 GB/s, as slow as a
   * 20 ms delay made the registered one). */
  rd_set_registered_upload_delay_us(f->d, 200000);
  if (probe_margin(f, 0) != RIG_VERDICT_TOO_SLOW) fail_msg("%s", text(f));
}

static void refused_registration_is_inconclusive(void **state) {
  fx *f = *state;
  rd_set_refuse_register(f->d, 1);
  assert_int_equal(probe(f), RIG_VERDICT_INCONCLUSIVE);
  assert_non_null(strstr(text(f), "registration refused"));
  assert_int_equal(registered(f->map, LEN), 0);
}

/* The release fails for good: the windows stay in the table (never unmap them), and the table refuses to
 * register them again before the driver is called; once the driver recovers they can be released. */
static void still_registered_stays_in_the_table(void **state) {
  fx *f = *state;
  rd_set_unregister_failures(f->d, -1);
  assert_int_equal(probe(f), RIG_VERDICT_STILL_REGISTERED);
  int c;
  assert_int_equal(rig_verdict_cacheable(f->v, &c), RIG_OK);
  assert_int_equal(c, 0);
  rd_counts n = rd_get_counts(f->d);
  assert_int_equal(n.unregisters, 8); /* three tries per window, two for the staging buffer */
  assert_int_equal(n.live_registrations, 3); /* the staging buffer too: kept mapped, never reused */
  assert_int_equal(registered(f->map, 1), 1);
  assert_int_equal(registered(f->map + LEN / 2, 1), 1);
  assert_int_equal(rig_host_register(f->d, f->map, 4096, RIG_ACCESS_READ), RIG_BUSY);
  assert_int_equal(rd_get_counts(f->d).registers, 3);
  /* probing again is refused by the table: Inconclusive, and the driver is not called for the windows
   * (only for the new probe's staging buffer) */
  assert_int_equal(probe(f), RIG_VERDICT_INCONCLUSIVE);
  assert_non_null(strstr(text(f), "overlaps"));
  assert_int_equal(rd_get_counts(f->d).registers, 4);
  rd_set_unregister_failures(f->d, 0);
  assert_int_equal(rig_host_unregister(f->d, f->map), RIG_OK);
  assert_int_equal(rig_host_unregister(f->d, f->map + LEN / 2), RIG_OK);
  assert_int_equal(registered(f->map, LEN), 0);
}

static void release_failed_once_is_inconclusive(void **state) {
  fx *f = *state;
  rd_set_unregister_failures(f->d, 1);
  assert_int_equal(probe(f), RIG_VERDICT_INCONCLUSIVE);
  assert_non_null(strstr(text(f), "succeeded on try 2"));
  assert_int_equal(registered(f->map, LEN), 0);
}

static void range_table_refuses_before_the_driver(void **state) {
  fx *f = *state;
  char *p = f->map;
  assert_int_equal(rig_host_register(f->d, p, MIB, RIG_ACCESS_READ), RIG_OK);
  assert_int_equal(rig_host_register(f->d, p, MIB, RIG_ACCESS_READ), RIG_BUSY);
  assert_non_null(strstr(rig_last_error(), "overlaps"));
  assert_int_equal(rig_host_register(f->d, p + 4096, MIB, RIG_ACCESS_READ), RIG_BUSY);
  assert_int_equal(rig_host_register(f->d, p - 0, 1, RIG_ACCESS_READ_WRITE), RIG_BUSY);
  assert_int_equal(rd_get_counts(f->d).registers, 1); /* the driver saw only the first */
  assert_int_equal(rig_host_register(f->d, p + MIB, 4096, RIG_ACCESS_READ), RIG_OK); /* adjacent */
  assert_int_equal(rd_get_counts(f->d).registers, 2);
  assert_int_equal(rd_get_counts(f->d).read_only_registers, 2);
  assert_int_equal(registered(p + MIB - 1, 1), 1);
  assert_int_equal(registered(p + MIB + 4096, 1), 0);
  /* another device cannot unregister it; a pointer inside a range is not its start */
  rd_config c = {"CUDA", RIG_DEVICE_GPU, 0, 0, 1, 1};
  rig_device other;
  assert_int_equal(rd_open(&c, &other), RIG_OK);
  assert_int_equal(rig_host_unregister(other, p), RIG_INVALID_ARGUMENT);
  assert_int_equal(rd_get_counts(other).unregisters, 0);
  rig_device_release(other);
  assert_int_equal(rig_host_unregister(f->d, p + 4096), RIG_INVALID_ARGUMENT);
  /* a failed unregister leaves the range listed */
  rd_set_unregister_failures(f->d, 1);
  assert_int_equal(rig_host_unregister(f->d, p), RIG_DRIVER);
  assert_int_equal(registered(p, 1), 1);
  assert_int_equal(rig_host_unregister(f->d, p), RIG_OK);
  assert_int_equal(rig_host_unregister(f->d, p), RIG_INVALID_ARGUMENT); /* twice */
  assert_int_equal(rig_host_unregister(f->d, p + MIB), RIG_OK);
  assert_int_equal(rd_get_counts(f->d).unregisters, 3);
  /* a refused registration is not listed */
  rd_set_refuse_register(f->d, 1);
  assert_int_equal(rig_host_register(f->d, p, MIB, RIG_ACCESS_READ), RIG_DRIVER);
  assert_int_equal(registered(p, MIB), 0);
  /* bad input */
  assert_int_equal(rig_host_register(f->d, NULL, MIB, RIG_ACCESS_READ), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_host_register(f->d, p, 0, RIG_ACCESS_READ), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_host_register(f->d, p, MIB, (rig_access)9), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_host_register(NULL, p, MIB, RIG_ACCESS_READ), RIG_INVALID_HANDLE);
  assert_int_equal(rig_host_register(f->d, (void *)(uintptr_t)(UINTPTR_MAX - 10), MIB, RIG_ACCESS_READ),
                   RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_host_is_registered(NULL, 1, NULL), RIG_INVALID_ARGUMENT);
}

/* Opened ops: callbacks work, close frees the device buffer, later calls and a second close are answered
 * RIG_INVALID_HANDLE, a forged user too. */
static void probe_ops_open_and_close(void **state) {
  fx *f = *state;
  rig_probe_ops ops;
  assert_int_equal(rig_probe_ops_open(f->d, MIB, &ops), RIG_OK);
  assert_int_equal(ops.size, sizeof ops);
  void *pinned = NULL;
  assert_int_equal(ops.alloc_host(ops.user, MIB, &pinned), RIG_OK);
  assert_int_equal(ops.register_host(ops.user, f->map, MIB), RIG_OK);
  assert_int_equal(ops.round_trip(ops.user, f->map, pinned, MIB), RIG_OK);
  assert_memory_equal(pinned, f->ref, MIB);
  assert_int_equal(ops.upload(ops.user, f->map, 2 * MIB), RIG_INVALID_ARGUMENT); /* beyond the buffer */
  assert_int_equal(ops.unregister_host(ops.user, f->map, MIB), RIG_OK);
  assert_int_equal(ops.free_host(ops.user, pinned, MIB), RIG_OK);
  /* probe_with over them: the same answer rig_probe gives */
  rig_verdict v;
  rig_verdict_kind k;
  rig_probe_options o = {sizeof o, kNoise, NULL, NULL};
  assert_int_equal(rig_probe_with(&ops, f->map, f->ref, 2 * MIB, &o, &v), RIG_OK);
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  assert_int_equal(k, RIG_VERDICT_USABLE);
  /* a verdict is not ops, ops are not a verdict */
  rig_probe_ops forged = ops;
  forged.user = v;
  assert_int_equal(forged.upload(forged.user, f->map, 4096), RIG_INVALID_HANDLE);
  assert_int_equal(rig_verdict_get_kind((rig_verdict)ops.user, &k), RIG_INVALID_HANDLE);
  assert_int_equal(rig_verdict_release((rig_verdict)ops.user), RIG_INVALID_HANDLE);
  rig_verdict_release(v);
  forged.user = (void *)(uintptr_t)0x4242;
  assert_int_equal(forged.upload(forged.user, f->map, 4096), RIG_INVALID_HANDLE);

  assert_int_equal(rig_probe_ops_close(&ops), RIG_OK);
  rd_counts n = rd_get_counts(f->d);
  assert_int_equal(n.device_allocs, 1);
  assert_int_equal(n.device_frees, 1);
  assert_int_equal(ops.upload(ops.user, f->map, 4096), RIG_INVALID_HANDLE);
  assert_int_equal(rig_probe_ops_close(&ops), RIG_INVALID_HANDLE);
  assert_int_equal(rig_probe_ops_open(f->d, 0, &ops), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_probe_ops_open(f->d, MIB, NULL), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_probe_ops_open(NULL, MIB, &ops), RIG_INVALID_HANDLE);
}

/* Ops opened on a device that is then released answer RIG_LOST; close still frees the device buffer. */
static void ops_of_a_released_device_answer_lost(void **state) {
  (void)state;
  rd_config c = {"CUDA", RIG_DEVICE_GPU, 0, 0, 1, 1};
  rig_device d;
  assert_int_equal(rd_open(&c, &d), RIG_OK);
  rig_probe_ops ops;
  assert_int_equal(rig_probe_ops_open(d, MIB, &ops), RIG_OK);
  rd_counts before = rd_get_counts(d);
  assert_int_equal(rig_device_release(d), RIG_OK);
  char *map = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_int_equal(ops.register_host(ops.user, map, MIB), RIG_LOST);
  assert_int_equal(ops.upload(ops.user, map, MIB), RIG_LOST);
  assert_int_equal(rig_probe_ops_close(&ops), RIG_OK);
  assert_int_equal(before.registers, 0);
  munmap(map, MIB);
}

/* A driver without host registration: the probe cannot run and says so. */
static void driver_without_registration_is_unsupported(void **state) {
  (void)state;
  rd_config c = {"CUDA", RIG_DEVICE_GPU, 0, 0, 1, 0};
  rig_device d;
  assert_int_equal(rd_open(&c, &d), RIG_OK);
  char *map = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  rig_verdict v = NULL;
  assert_int_equal(rig_probe(d, map, map, MIB, NULL, &v), RIG_UNSUPPORTED);
  assert_null(v);
  assert_non_null(strstr(rig_last_error(), "registers no host memory"));
  munmap(map, MIB);
  rig_device_release(d);
}

static void small_region_is_inconclusive_without_the_driver(void **state) {
  fx *f = *state;
  assert_int_equal(rig_probe(f->d, f->map, f->ref, 100000, NULL, &f->v), RIG_OK);
  rig_verdict_kind k;
  assert_int_equal(rig_verdict_get_kind(f->v, &k), RIG_OK);
  assert_int_equal(k, RIG_VERDICT_INCONCLUSIVE);
  assert_int_equal(rd_get_counts(f->d).device_allocs, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(usable_with_read_only_flag, setup, teardown),
      cmocka_unit_test_setup_teardown(without_read_only_support_no_flag, setup_no_read_only, teardown),
      cmocka_unit_test_setup_teardown(wrong_bytes, setup, teardown),
      cmocka_unit_test_setup_teardown(too_slow, setup, teardown),
      cmocka_unit_test_setup_teardown(refused_registration_is_inconclusive, setup, teardown),
      cmocka_unit_test_setup_teardown(still_registered_stays_in_the_table, setup, teardown),
      cmocka_unit_test_setup_teardown(release_failed_once_is_inconclusive, setup, teardown),
      cmocka_unit_test_setup_teardown(range_table_refuses_before_the_driver, setup, teardown),
      cmocka_unit_test_setup_teardown(probe_ops_open_and_close, setup, teardown),
      cmocka_unit_test(driver_without_registration_is_unsupported),
      cmocka_unit_test(ops_of_a_released_device_answer_lost),
      cmocka_unit_test_setup_teardown(small_region_is_inconclusive_without_the_driver, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
