/* Mapped registration end to end through the CUDA driver: a real file, mapped shared and read-only, probed
 * on cuda:0. With RIG_CUDA_LIBRARY naming the fake libcuda (tests/doubles/fake_cuda) every verdict the fake's
 * switches can produce is checked; on a real GPU (no fake) the cases a real driver can show run: Usable with
 * both speeds, the read-only registration of a read-only mapping, the range table refusing a second or
 * overlapping registration, Not_needed for none of it. No CUDA device: skipped (exit 77), or failed when
 * RIG_REQUIRE names cuda. */
#include <rig_mapped.h>

#include <dlfcn.h>
#include <fcntl.h>
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

typedef int (*control_fn)(const char *name, long long value);
typedef long long (*query_fn)(const char *name);

static rig_device dev;
static control_fn fake_control; /* null on a real driver */
static query_fn fake_query;
static size_t region;

typedef struct fx {
  int fd;
  char path[64];
  char *map;
  char *ref;
  rig_verdict v;
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  const char *dir = getenv("TMPDIR");
  snprintf(f->path, sizeof f->path, "%s/rig-mapped-XXXXXX", dir && strlen(dir) < 40 ? dir : "/tmp");
  f->fd = mkstemp(f->path);
  assert_true(f->fd >= 0);
  unlink(f->path);
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
  f->map = mmap(NULL, region, PROT_READ, MAP_SHARED, f->fd, 0);
  assert_true(f->map != MAP_FAILED);
  if (fake_control) fake_control("reset", 1);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  if (f->v) rig_verdict_release(f->v);
  int reg = 0;
  rig_host_is_registered(f->map, region, &reg);
  if (!reg) munmap(f->map, region); /* never unmap a range left registered */
  close(f->fd);
  free(f->ref);
  free(f);
  if (fake_control) fake_control("reset", 1);
  return 0;
}

/* With speed margin `m` (0: the default, 0.8). */
static rig_verdict_kind probe_margin(fx *f, double m) {
  if (f->v) rig_verdict_release(f->v);
  f->v = NULL;
  rig_probe_options o = {sizeof o, m, NULL, NULL};
  rig_status s = rig_probe(dev, f->map, f->ref, region, &o, &f->v);
  if (s != RIG_OK) fail_msg("rig_probe: %s: %s", rig_status_name(s), rig_last_error());
  rig_verdict_kind k;
  assert_int_equal(rig_verdict_get_kind(f->v, &k), RIG_OK);
  const char *t;
  rig_verdict_to_string(f->v, &t);
  print_message("verdict: %s\n", t);
  return k;
}
/* On the fake both timed copies are host memcpys, so their speed ratio is the machine's noise, and cases that
 * do not test the margin take 0.25 (a real GPU keeps the default); too_slow keeps the default. */
static rig_verdict_kind probe(fx *f) { return probe_margin(f, fake_control ? 0.25 : 0); }
static const char *text(fx *f) {
  const char *t;
  assert_int_equal(rig_verdict_to_string(f->v, &t), RIG_OK);
  return t;
}

static void fake_only(void) {
  if (!fake_control) skip();
}

/* The real driver or the fake at defaults: discrete, self-test required, Usable with both speeds. */
static void usable_with_speeds(void **state) {
  fx *f = *state;
  rig_verdict st = (rig_verdict)(uintptr_t)1;
  assert_int_equal(rig_static_verdict(dev, &st), RIG_OK);
  assert_null(st); /* self-test required on a discrete GPU */
  if (fake_control) {
    fake_control("registered_upload_ns_per_kib", 10);
    fake_control("pinned_upload_ns_per_kib", 10);
  }
  if (probe(f) != RIG_VERDICT_USABLE) fail_msg("%s", text(f));
  int c;
  double reg, stg;
  assert_int_equal(rig_verdict_cacheable(f->v, &c), RIG_OK);
  assert_int_equal(c, 1);
  assert_int_equal(rig_verdict_speeds(f->v, &reg, &stg), RIG_OK);
  assert_true(reg > 0 && stg > 0);
  print_message("registered %.2f GB/s, staged %.2f GB/s over %zu-byte windows\n", reg / 1e9, stg / 1e9, region / 2);
  int is = 1;
  assert_int_equal(rig_host_is_registered(f->map, region, &is), RIG_OK);
  assert_int_equal(is, 0);
  if (fake_query) {
    assert_int_equal(fake_query("registers"), 3); /* the two windows and the staging buffer */
    assert_int_equal(fake_query("unregisters"), 3);
    assert_true(fake_query("last_register_flags") & 0x08); /* CU_MEMHOSTREGISTER_READ_ONLY */
  }
}

static void wrong_bytes(void **state) {
  fx *f = *state;
  fake_only();
  fake_control("register_wrong_bytes", 1);
  assert_int_equal(probe(f), RIG_VERDICT_REFUSED);
  rig_refusal r;
  int c;
  assert_int_equal(rig_verdict_refusal(f->v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_WRONG_BYTES);
  assert_int_equal(rig_verdict_cacheable(f->v, &c), RIG_OK);
  assert_int_equal(c, 1);
  assert_int_equal(fake_query("unregisters"), 3); /* the two windows and the staging buffer */
}

static void too_slow(void **state) {
  fx *f = *state;
  fake_only();
  fake_control("registered_upload_ns_per_kib", 20000); /* slow enough to lose even under ThreadSanitizer */
  fake_control("pinned_upload_ns_per_kib", 10);
  if (probe_margin(f, 0) != RIG_VERDICT_TOO_SLOW) fail_msg("%s", text(f));
}

static void still_registered(void **state) {
  fx *f = *state;
  fake_only();
  fake_control("unregister_fail", 2);
  assert_int_equal(probe(f), RIG_VERDICT_STILL_REGISTERED);
  assert_non_null(strstr(text(f), "never unmap"));
  assert_non_null(strstr(text(f), "window 0 [")); /* both windows, three tries each */
  assert_non_null(strstr(text(f), "window 1 ["));
  assert_non_null(strstr(text(f), "after 3 tries"));
  assert_int_equal(fake_query("unregisters"), 0); /* the fake counts the releases that succeeded */
  int is = 0;
  assert_int_equal(rig_host_is_registered(f->map, region, &is), RIG_OK);
  assert_int_equal(is, 1);
  /* release them once the driver recovers, so the fixture may unmap */
  fake_control("unregister_fail", 0);
  assert_int_equal(rig_host_unregister(dev, f->map), RIG_OK);
  assert_int_equal(rig_host_unregister(dev, f->map + region / 2), RIG_OK);
}

static void release_failed_once(void **state) {
  fx *f = *state;
  fake_only();
  fake_control("unregister_fail", 1);
  assert_int_equal(probe(f), RIG_VERDICT_INCONCLUSIVE);
  assert_non_null(strstr(text(f), "succeeded on try 2"));
}

static void refused_registration(void **state) {
  fx *f = *state;
  fake_only();
  fake_control("register_refuse", 1);
  assert_int_equal(probe(f), RIG_VERDICT_INCONCLUSIVE);
  assert_non_null(strstr(text(f), "cuMemHostRegister"));
}

static void static_rows_of_the_driver(void **state) {
  (void)state;
  fake_only();
  rig_verdict v;
  rig_refusal r;
  rig_verdict_kind k;
  fake_control("integrated", 1);
  assert_int_equal(rig_static_verdict(dev, &v), RIG_OK);
  assert_non_null(v);
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_INTEGRATED_GPU);
  rig_verdict_release(v);
  fake_control("integrated", 0);
  fake_control("integrated_query_fails", 1);
  assert_int_equal(rig_static_verdict(dev, &v), RIG_OK);
  assert_non_null(v);
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_DEVICE_KIND_UNKNOWN);
  rig_verdict_release(v);
  fake_control("integrated_query_fails", 0);
  fake_control("pageable_host_page_tables", 1);
  assert_int_equal(rig_static_verdict(dev, &v), RIG_OK);
  assert_non_null(v);
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  assert_int_equal(k, RIG_VERDICT_NOT_NEEDED);
  rig_verdict_release(v);
  assert_int_equal(fake_query("registers"), 0);
}

/* Without read-only support the flag is not used (the driver would answer 801). */
static void no_read_only_flag_where_unsupported(void **state) {
  fx *f = *state;
  fake_only();
  fake_control("read_only_supported", 0);
  probe(f);
  assert_int_equal(fake_query("registers"), 3); /* the staging buffer first, then the two windows */
  assert_false(fake_query("last_register_flags") & 0x08);
}

/* The same range twice and an overlapping range are refused by rig's table before the driver sees them. */
static void range_table_refuses_before_the_driver(void **state) {
  fx *f = *state;
  size_t mib = 1 << 20;
  rig_status s = rig_host_register(dev, f->map, 4 * mib, RIG_ACCESS_READ);
  if (s != RIG_OK) fail_msg("register: %s: %s", rig_status_name(s), rig_last_error());
  long long before = fake_query ? fake_query("registers") : 0;
  assert_int_equal(rig_host_register(dev, f->map, 4 * mib, RIG_ACCESS_READ), RIG_BUSY);
  assert_int_equal(rig_host_register(dev, f->map + 2 * mib, 4 * mib, RIG_ACCESS_READ), RIG_BUSY);
  assert_non_null(strstr(rig_last_error(), "overlaps"));
  if (fake_query) assert_int_equal(fake_query("registers"), before);
  /* a probe over it is Inconclusive, not a false Usable */
  assert_int_equal(probe(f), RIG_VERDICT_INCONCLUSIVE);
  assert_non_null(strstr(text(f), "overlaps"));
  assert_int_equal(rig_host_unregister(dev, f->map), RIG_OK);
  assert_int_equal(rig_host_unregister(dev, f->map), RIG_INVALID_ARGUMENT);
}

static int required(void) {
  const char *r = getenv("RIG_REQUIRE");
  return r && strstr(r, "cuda");
}

int main(void) {
  rig_status s = rig_device_open("cuda:0", &dev);
  if (s != RIG_OK) {
    fprintf(stderr, "no CUDA device (%s: %s)%s\n", rig_status_name(s), rig_last_error(),
            required() ? ": RIG_REQUIRE names cuda, failing" : ": skipped");
    return required() ? 1 : 77;
  }
  const char *lib = getenv("RIG_CUDA_LIBRARY");
  if (lib && *lib) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (h) {
      fake_control = (control_fn)(uintptr_t)dlsym(h, "fakecuda_control");
      fake_query = (query_fn)(uintptr_t)dlsym(h, "fakecuda_query");
    }
  }
  if (lib && *lib && !fake_control) fprintf(stderr, "RIG_CUDA_LIBRARY=%s is not the fake: fake-only cases skip\n", lib);
  /* 64 MiB on a real GPU (windows of 32 MiB), 8 MiB on the fake */
  region = fake_control ? (8u << 20) : (64u << 20);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(usable_with_speeds, setup, teardown),
      cmocka_unit_test_setup_teardown(wrong_bytes, setup, teardown),
      cmocka_unit_test_setup_teardown(too_slow, setup, teardown),
      cmocka_unit_test_setup_teardown(still_registered, setup, teardown),
      cmocka_unit_test_setup_teardown(release_failed_once, setup, teardown),
      cmocka_unit_test_setup_teardown(refused_registration, setup, teardown),
      cmocka_unit_test_setup_teardown(static_rows_of_the_driver, setup, teardown),
      cmocka_unit_test_setup_teardown(no_read_only_flag_where_unsupported, setup, teardown),
      cmocka_unit_test_setup_teardown(range_table_refuses_before_the_driver, setup, teardown),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  rig_device_release(dev);
  return failed;
}
