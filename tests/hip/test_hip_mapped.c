/* Mapped registration end to end through the HIP driver. On the fake libamdhip64 (RIG_HIP_LIBRARY) the seed's
 * false successes are reproduced (hipHostRegister answers success for a PROT_NONE mapping, a tmpfs file, a
 * range registered twice and overlapping ranges; the device then reads other bytes; unregistering them
 * answers 713) and each must end in the right verdict, never Usable; a range registered twice or overlapping
 * is refused by rig's table before the runtime sees it; a 713 on release gives Still_registered with the range
 * kept in the table; a failed integrated query gives Refused (Integrated_gpu), not cacheable. Through the
 * shim on a real GPU (or a real HIP runtime) the cases that need no switch run. No HIP device: exit 77, or 1
 * under RIG_REQUIRE=hip. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <rig_mapped.h>

#include "gpu_test.h"

#define TMPFS_MAGIC_NUMBER 0x01021994

typedef int (*hip_register_fn)(void *host, size_t bytes, unsigned flags);
typedef int (*hip_unregister_fn)(void *host);

static rig_device dev;
static size_t region;

typedef struct fx {
  int fd;
  char path[256];
  char *map;
  char *ref;
  rig_verdict v;
} fx;

static int is_tmpfs(const char *dir) {
  struct statfs st;
  return statfs(dir, &st) == 0 && st.f_type == TMPFS_MAGIC_NUMBER;
}

/* A directory on a disk file system (registration there can serve), or on tmpfs; NULL where none. */
static const char *dir_for(int tmpfs) {
  const char *tmp = getenv("TMPDIR");
  const char *candidates[] = {tmp && *tmp ? tmp : "/tmp", "/var/tmp", ".", "/dev/shm", "/run/shm"};
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates; ++i)
    if (access(candidates[i], W_OK) == 0 && is_tmpfs(candidates[i]) == tmpfs) return candidates[i];
  return NULL;
}

/* A file of `region` pseudo-random bytes in `dir`, mapped shared and read-only; the bytes also in f->ref. */
static fx *make_fixture(const char *dir) {
  fx *f = calloc(1, sizeof *f);
  snprintf(f->path, sizeof f->path, "%s/rig-hip-mapped-XXXXXX", dir);
  f->fd = mkstemp(f->path);
  assert_true(f->fd >= 0);
  f->ref = malloc(region);
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < region; i += 8) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    memcpy(f->ref + i, &x, 8);
  }
  for (size_t done = 0; done < region;) {
    ssize_t w = write(f->fd, f->ref + done, region - done);
    assert_true(w > 0);
    done += (size_t)w;
  }
  /* The file keeps its name while mapped: the fake tells tmpfs from the mapping's path. */
  f->map = mmap(NULL, region, PROT_READ, MAP_SHARED, f->fd, 0);
  assert_true(f->map != MAP_FAILED);
  return f;
}

static int setup_disk(void **state) {
  if (gt_fake()) gt_set("reset", 0);
  const char *dir = dir_for(0);
  if (!dir) {
    fprintf(stderr, "no writable directory off tmpfs\n");
    return -1;
  }
  *state = make_fixture(dir);
  return 0;
}

static int setup_tmpfs(void **state) {
  if (gt_fake()) gt_set("reset", 0);
  const char *dir = dir_for(1);
  if (!dir) {
    fprintf(stderr, "no writable tmpfs directory\n");
    return -1;
  }
  *state = make_fixture(dir);
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  if (f->v) rig_verdict_release(f->v);
  int reg = 0;
  rig_host_is_registered(f->map, region, &reg);
  if (!reg) munmap(f->map, region); /* never unmap a range left registered */
  close(f->fd);
  unlink(f->path);
  free(f->ref);
  free(f);
  if (gt_fake()) gt_set("reset", 0);
  return 0;
}

static rig_verdict_kind probe_map(fx *f, const void *map) {
  if (f->v) rig_verdict_release(f->v);
  f->v = NULL;
  /* On a double (RIG_HIP_LIBRARY set) both timed copies are host memcpys, so their speed ratio is the
   * machine's noise: 0.80 failed once as Too_slow (1.34 against 1.98 GB/s) on a loaded 2-core machine under
   * ASan. No case here tests the speed margin (tests/mapped does, with a slowed double); a real GPU keeps
   * the default. */
  rig_probe_options o = {sizeof o, 0.25, NULL, NULL};
  const char *lib = getenv("RIG_HIP_LIBRARY");
  rig_status s = rig_probe(dev, map, f->ref, region, lib && *lib ? &o : NULL, &f->v);
  if (s != RIG_OK) fail_msg("rig_probe: %s: %s", rig_status_name(s), rig_last_error());
  rig_verdict_kind k;
  assert_int_equal(rig_verdict_get_kind(f->v, &k), RIG_OK);
  const char *t;
  rig_verdict_to_string(f->v, &t);
  print_message("verdict: %s\n", t);
  return k;
}

static rig_verdict_kind probe(fx *f) { return probe_map(f, f->map); }

static const char *text(fx *f) {
  const char *t;
  assert_int_equal(rig_verdict_to_string(f->v, &t), RIG_OK);
  return t;
}

static int cacheable(rig_verdict v) {
  int c = -1;
  assert_int_equal(rig_verdict_cacheable(v, &c), RIG_OK);
  return c;
}

static rig_refusal refusal(rig_verdict v) {
  rig_refusal r;
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  return r;
}

/* A file on a disk file system registers for real: the self-test answers Usable with both speeds. */
static void test_a_disk_file_mapping_is_usable(void **state) {
  fx *f = *state;
  rig_verdict st = (rig_verdict)(uintptr_t)1;
  assert_int_equal(rig_static_verdict(dev, &st), RIG_OK);
  assert_null(st); /* a discrete GPU: self-test required */
  if (gt_fake()) {
    gt_set("registered_upload_ns_per_kib", 10);
    gt_set("pinned_upload_ns_per_kib", 10);
  }
  if (probe(f) != RIG_VERDICT_USABLE) fail_msg("%s", text(f));
  assert_int_equal(cacheable(f->v), 1);
  double reg = 0, stg = 0;
  assert_int_equal(rig_verdict_speeds(f->v, &reg, &stg), RIG_OK);
  assert_true(reg > 0 && stg > 0);
  print_message("registered %.2f GB/s, staged %.2f GB/s over %zu-byte windows\n", reg / 1e9, stg / 1e9, region / 2);
  int is = 1;
  assert_int_equal(rig_host_is_registered(f->map, region, &is), RIG_OK);
  assert_int_equal(is, 0);
  if (gt_fake()) {
    assert_int_equal(gt_query("registers"), 3); /* the two windows and the staging buffer */
    assert_int_equal(gt_query("false_successes"), 0);
    assert_int_equal(gt_query("unregisters"), 3);
    assert_true(gt_query("last_register_flags") & 0x08); /* hipHostRegisterReadOnly: the mapping is PROT_READ */
  }
}

/* A tmpfs file: hipHostRegister's success is false (the device reads other bytes). Released cleanly, the
 * verdict is Refused (Wrong_bytes), cacheable: a fact about the machine. */
static void test_a_tmpfs_false_success_is_refused_as_wrong_bytes(void **state) {
  fx *f = *state;
  GT_FAKE_ONLY();
  gt_set("false_unregister_713", 0);
  assert_int_equal(probe(f), RIG_VERDICT_REFUSED);
  assert_int_equal(refusal(f->v), RIG_REFUSAL_WRONG_BYTES);
  assert_int_equal(cacheable(f->v), 1);
  assert_int_equal(gt_query("false_successes"), 2); /* both windows: the runtime said success twice */
  int is = 1;
  assert_int_equal(rig_host_is_registered(f->map, region, &is), RIG_OK);
  assert_int_equal(is, 0);
}

/* The same tmpfs file as measured: the release of the false registration answers 713. The verdict is
 * Still_registered (not cacheable), and the windows stay in rig's table so the range is never registered
 * again or unmapped; once the runtime lets go, rig_host_unregister empties the table. */
static void test_a_tmpfs_false_success_whose_release_fails_713_is_still_registered(void **state) {
  fx *f = *state;
  GT_FAKE_ONLY();
  assert_int_equal(probe(f), RIG_VERDICT_STILL_REGISTERED);
  assert_int_equal(cacheable(f->v), 0);
  assert_non_null(strstr(text(f), "hipErrorHostMemoryNotRegistered"));
  assert_non_null(strstr(text(f), "never unmap"));
  int is = 0;
  assert_int_equal(rig_host_is_registered(f->map, region, &is), RIG_OK);
  assert_int_equal(is, 1);
  /* Kept: a second registration of the range is refused by the table, before the runtime. */
  long long calls = gt_query("register_calls");
  STATUS(RIG_BUSY, rig_host_register(dev, f->map, 4096, RIG_ACCESS_READ));
  assert_int_equal(gt_query("register_calls"), calls);
  gt_set("false_unregister_713", 0);
  OK(rig_host_unregister(dev, f->map));
  OK(rig_host_unregister(dev, f->map + region / 2));
  assert_int_equal(rig_host_is_registered(f->map, region, &is), RIG_OK);
  assert_int_equal(is, 0);
}

/* A PROT_NONE mapping: the runtime itself would answer success (checked on the double directly), but the
 * probe finds the map unreadable and answers Inconclusive before registering anything. */
static void test_a_prot_none_mapping_is_inconclusive_and_never_registered(void **state) {
  fx *f = *state;
  char *none = mmap(NULL, region, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(none != MAP_FAILED);
  long long calls = gt_query("register_calls");
  assert_int_equal(probe_map(f, none), RIG_VERDICT_INCONCLUSIVE);
  if (gt_fake()) {
    assert_int_equal(gt_query("register_calls"), calls);
    /* What the probe avoided: the double, like the measured runtime, accepts the PROT_NONE range. */
    hip_register_fn reg = (hip_register_fn)gt_symbol("hipHostRegister");
    hip_unregister_fn unreg = (hip_unregister_fn)gt_symbol("hipHostUnregister");
    assert_non_null(reg);
    assert_int_equal(reg(none, 65536, 0), 0);
    assert_int_equal(gt_query("false_successes"), 1);
    assert_int_equal(unreg(none), 713);
    gt_set("false_unregister_713", 0);
    assert_int_equal(unreg(none), 0);
  }
  munmap(none, region);
}

/* The same range twice and an overlapping range: the double answers success for both (as measured), so rig's
 * table must refuse them first: RIG_BUSY, and the runtime is never called. A probe over a registered range is
 * Inconclusive, never a false Usable. */
static void test_twice_and_overlapping_ranges_are_refused_by_the_table_before_the_runtime(void **state) {
  fx *f = *state;
  size_t mib = 1 << 20;
  rig_status s = rig_host_register(dev, f->map, 2 * mib, RIG_ACCESS_READ);
  if (s != RIG_OK) fail_msg("register: %s: %s", rig_status_name(s), rig_last_error());
  long long calls = gt_query("register_calls");
  STATUS(RIG_BUSY, rig_host_register(dev, f->map, 2 * mib, RIG_ACCESS_READ));
  STATUS(RIG_BUSY, rig_host_register(dev, f->map + mib, 2 * mib, RIG_ACCESS_READ));
  assert_non_null(strstr(rig_last_error(), "overlaps"));
  if (gt_fake()) {
    assert_int_equal(gt_query("register_calls"), calls);
    /* Without the table: the double says success to the same range twice and to an overlapping one. */
    hip_register_fn reg = (hip_register_fn)gt_symbol("hipHostRegister");
    hip_unregister_fn unreg = (hip_unregister_fn)gt_symbol("hipHostUnregister");
    assert_int_equal(reg(f->map, 2 * mib, 0x8), 0);
    assert_int_equal(reg(f->map + mib, 2 * mib, 0x8), 0);
    assert_int_equal(gt_query("false_successes"), 2);
    gt_set("false_unregister_713", 0);
    assert_int_equal(unreg(f->map + mib), 0);
    assert_int_equal(unreg(f->map), 0); /* the later, false registration at that address */
    gt_set("false_unregister_713", 1);
  }
  assert_int_equal(probe(f), RIG_VERDICT_INCONCLUSIVE);
  assert_non_null(strstr(text(f), "overlaps"));
  OK(rig_host_unregister(dev, f->map));
  STATUS(RIG_INVALID_ARGUMENT, rig_host_unregister(dev, f->map));
}

/* A real registration whose release fails with 713 on every try: Still_registered, the range kept in the
 * table while the runtime refuses to let go, and released once it does. */
static void test_a_713_on_release_gives_still_registered_with_the_range_kept(void **state) {
  fx *f = *state;
  GT_FAKE_ONLY();
  gt_set("unregister_fail", 2);
  assert_int_equal(probe(f), RIG_VERDICT_STILL_REGISTERED);
  assert_int_equal(cacheable(f->v), 0);
  assert_non_null(strstr(text(f), "after 3 tries"));
  int is = 0;
  assert_int_equal(rig_host_is_registered(f->map, region, &is), RIG_OK);
  assert_int_equal(is, 1);
  assert_true(rig_host_unregister(dev, f->map) != RIG_OK);
  assert_int_equal(rig_host_is_registered(f->map, 1, &is), RIG_OK);
  assert_int_equal(is, 1);
  gt_set("unregister_fail", 0);
  OK(rig_host_unregister(dev, f->map));
  OK(rig_host_unregister(dev, f->map + region / 2));
  assert_int_equal(rig_host_is_registered(f->map, region, &is), RIG_OK);
  assert_int_equal(is, 0);
}

/* The integrated attribute cannot be read: HIP counts that as integrated. Refused (Integrated_gpu), not
 * cacheable (the query may succeed next time), decided before anything is registered; no probe ops open. */
static void test_a_failed_integrated_query_is_refused_integrated_and_not_cacheable(void **state) {
  fx *f = *state;
  GT_FAKE_ONLY();
  gt_set("integrated_query_fails", 1);
  rig_verdict v = NULL;
  assert_int_equal(rig_static_verdict(dev, &v), RIG_OK);
  assert_non_null(v);
  rig_verdict_kind k;
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  assert_int_equal(k, RIG_VERDICT_REFUSED);
  assert_int_equal(refusal(v), RIG_REFUSAL_INTEGRATED_GPU);
  assert_int_equal(cacheable(v), 0);
  const char *t = NULL;
  assert_int_equal(rig_verdict_to_string(v, &t), RIG_OK);
  assert_non_null(strstr(t, "could not read"));
  rig_verdict_release(v);
  assert_int_equal(probe(f), RIG_VERDICT_REFUSED);
  assert_int_equal(refusal(f->v), RIG_REFUSAL_INTEGRATED_GPU);
  assert_int_equal(cacheable(f->v), 0);
  rig_probe_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.size = sizeof ops;
  STATUS(RIG_UNSUPPORTED, rig_probe_ops_open(dev, region, &ops));
  STATUS(RIG_UNSUPPORTED, rig_host_register(dev, f->map, 4096, RIG_ACCESS_READ));
  assert_int_equal(gt_query("register_calls"), 0);
  /* An integrated device that says so: refused the same way. */
  gt_set("integrated_query_fails", 0);
  gt_set("integrated", 1);
  assert_int_equal(rig_static_verdict(dev, &v), RIG_OK);
  assert_non_null(v);
  assert_int_equal(refusal(v), RIG_REFUSAL_INTEGRATED_GPU);
  rig_verdict_release(v);
  assert_int_equal(gt_query("register_calls"), 0);
}

int main(void) {
  if (!gt_available()) return 77;
  OK(rig_device_open("hip:0", &dev));
  /* 64 MiB on a real GPU (windows of 32 MiB), 8 MiB on the fake */
  region = gt_fake() ? (8u << 20) : (64u << 20);
  if (!gt_fake()) fprintf(stderr, "not on the fake libamdhip64: the cases that need its switches skip\n");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_a_disk_file_mapping_is_usable, setup_disk, teardown),
      cmocka_unit_test_setup_teardown(test_a_tmpfs_false_success_is_refused_as_wrong_bytes, setup_tmpfs, teardown),
      cmocka_unit_test_setup_teardown(test_a_tmpfs_false_success_whose_release_fails_713_is_still_registered,
                                      setup_tmpfs, teardown),
      cmocka_unit_test_setup_teardown(test_a_prot_none_mapping_is_inconclusive_and_never_registered, setup_disk,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_twice_and_overlapping_ranges_are_refused_by_the_table_before_the_runtime,
                                      setup_disk, teardown),
      cmocka_unit_test_setup_teardown(test_a_713_on_release_gives_still_registered_with_the_range_kept, setup_disk,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_a_failed_integrated_query_is_refused_integrated_and_not_cacheable,
                                      setup_disk, teardown),
  };
  int failed = cmocka_run_group_tests_name("hip mapped", tests, NULL, NULL);
  rig_device_release(dev);
  return failed;
}
