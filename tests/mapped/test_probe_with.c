/* rig_probe_with against a double (probe_double.c): every verdict kind, every Inconclusive cause the seed
 * lists, Still_registered after two and after three failed releases, the errors a callback returns as the
 * probe's own, and the windows' bounds. The map's bytes past the two windows are PROT_NONE and differ from
 * the reference's, so a probe that registered, read or compared them would fail these tests. */
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

#include "probe_double.h"

#define KIB ((size_t)1024)
#define W (256 * KIB) /* the window the probe must choose for LENGTH */
/* Half of LENGTH is W + 32 KiB + 61: rounded down to 64 KiB it is W. */
#define LENGTH (2 * W + 64 * KIB + 123)

typedef struct fx {
  char *map; /* LENGTH bytes of a larger anonymous mapping; [2W, ...) PROT_NONE */
  size_t map_size;
  char *ref;
  pd d;
  unsigned logs, release_logs;
  rig_verdict v;
} fx;

static void on_log(void *user, const char *message) {
  fx *f = user;
  f->logs++;
  if (strstr(message, "release of window")) f->release_logs++;
}

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  f->map_size = 2 * W + 128 * KIB;
  f->map = mmap(NULL, f->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(f->map != MAP_FAILED);
  uint32_t x = 12345;
  for (size_t i = 0; i < 2 * W; ++i) {
    x = x * 1664525u + 1013904223u;
    f->map[i] = (char)(x >> 24);
  }
  f->ref = malloc(LENGTH);
  memcpy(f->ref, f->map, 2 * W);
  memset(f->ref + 2 * W, 0xee, LENGTH - 2 * W); /* differs from the map's tail, which is 0 */
  assert_int_equal(mprotect(f->map + 2 * W, f->map_size - 2 * W, PROT_NONE), 0);
  pd_init(&f->d, W);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  if (f->v) rig_verdict_release(f->v);
  pd_fini(&f->d);
  munmap(f->map, f->map_size);
  free(f->ref);
  free(f);
  return 0;
}

/* Runs the probe with min_relative_speed `m` (0: default); checks the windows' bounds. */
static rig_status probe_m(fx *f, double m) {
  rig_probe_ops ops = pd_ops(&f->d);
  rig_probe_options o = {sizeof o, m, on_log, f};
  if (f->v) rig_verdict_release(f->v);
  f->v = NULL;
  rig_status s = rig_probe_with(&ops, f->map, f->ref, LENGTH, &o, &f->v);
  for (size_t i = 0; i < f->d.ever_count; ++i) {
    pd_range r = f->d.ever[i];
    assert_int_equal(r.length, W);
    assert_true(r.base == f->map || r.base == f->map + W);
  }
  return s;
}
static rig_status probe(fx *f) { return probe_m(f, 0); }

static rig_verdict_kind kind_of(rig_verdict v) {
  rig_verdict_kind k = 0;
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  return k;
}
static int cacheable(rig_verdict v) {
  int c = -1;
  assert_int_equal(rig_verdict_cacheable(v, &c), RIG_OK);
  return c;
}
static const char *reason(rig_verdict v) {
  const char *r = NULL;
  assert_int_equal(rig_verdict_reason(v, &r), RIG_OK);
  return r;
}
static void expect(fx *f, rig_verdict_kind kind, const char *words) {
  const char *text = NULL;
  assert_int_equal(rig_verdict_to_string(f->v, &text), RIG_OK);
  if (kind_of(f->v) != kind || (words && !strstr(reason(f->v), words)))
    fail_msg("want %s (\"%s\"), got: %s", rig_verdict_kind_name(kind), words ? words : "", text);
}
/* Nothing left registered or allocated. */
static void clean(fx *f) {
  assert_int_equal(f->d.registered_count, 0);
  assert_int_equal(f->d.allocation_count, 0);
}

static void usable(void **state) {
  fx *f = *state;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_USABLE, "registered");
  assert_int_equal(cacheable(f->v), 1);
  double reg = 0, stg = 0;
  assert_int_equal(rig_verdict_speeds(f->v, &reg, &stg), RIG_OK);
  /* W bytes in 1 ms and in 2 ms of the fake clock */
  assert_true(reg > 0.99 * W * 1e3 && reg < 1.01 * W * 1e3);
  assert_true(stg > 0.99 * W * 0.5e3 && stg < 1.01 * W * 0.5e3);
  assert_int_equal(f->d.calls[PD_REGISTER], 2);
  assert_int_equal(f->d.calls[PD_ROUND_TRIP], 2);
  assert_int_equal(f->d.calls[PD_UPLOAD], 14); /* best of 7 against best of 7 */
  assert_int_equal(f->d.calls[PD_UNREGISTER], 2);
  rig_refusal r = 99;
  assert_int_equal(rig_verdict_refusal(f->v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_NONE);
  clean(f);
}

static void too_slow(void **state) {
  fx *f = *state;
  f->d.registered_ns = 4000000; /* half the staged copy's speed */
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_TOO_SLOW, "below 0.80");
  assert_int_equal(cacheable(f->v), 0);
  double reg = 0, stg = 0;
  assert_int_equal(rig_verdict_speeds(f->v, &reg, &stg), RIG_OK);
  assert_true(reg > 0 && reg < stg);
  clean(f);
}

/* registered at 1/1.1 of staged: above the default 0.8, below 0.95. */
static void min_relative_speed_is_the_margin(void **state) {
  fx *f = *state;
  f->d.registered_ns = 2200000;
  assert_int_equal(probe_m(f, 0), RIG_OK);
  expect(f, RIG_VERDICT_USABLE, NULL);
  assert_int_equal(probe_m(f, 0.95), RIG_OK);
  expect(f, RIG_VERDICT_TOO_SLOW, "below 0.95");
}

static void wrong_bytes_refused_and_cacheable(void **state) {
  fx *f = *state;
  f->d.wrong_bytes = 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_REFUSED, "differing from the file");
  rig_refusal r = 0;
  assert_int_equal(rig_verdict_refusal(f->v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_WRONG_BYTES);
  assert_int_equal(cacheable(f->v), 1);
  assert_int_equal(f->d.calls[PD_UPLOAD], 0); /* wrong bytes are not timed */
  clean(f);
}

/* A round trip that writes nothing leaves the other window's bytes in the buffer: caught. */
static void copy_that_did_nothing_is_wrong_bytes(void **state) {
  fx *f = *state;
  f->d.lazy_round_trip = 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_REFUSED, NULL);
  clean(f);
}

/* The buffer the copy lands in already holds the window's bytes (pinned memory recycled from an earlier
 * probe of the same file) and the first copy writes nothing: caught only because every page of the buffer
 * is made to differ before each copy. */
static void stale_buffer_does_not_pass_for_a_copy(void **state) {
  fx *f = *state;
  f->d.alloc_fill_from = f->map;
  f->d.lazy_first_round_trip = 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_REFUSED, "window 0 came back");
  clean(f);
}

static void file_changed_during_probe_is_inconclusive(void **state) {
  fx *f = *state;
  f->d.change_map_at = f->map + W + 17;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "changed during the probe");
  assert_int_equal(cacheable(f->v), 0);
  clean(f);
}

/* Each callback failing (RIG_DRIVER) answers Inconclusive naming it, and leaves nothing behind. */
static void callback_failure_is_inconclusive(void **state) {
  fx *f = *state;
  struct {
    enum pd_op op;
    unsigned at;
    const char *words;
  } cases[] = {
      {PD_ALLOC, 1, "alloc_host"},       {PD_REGISTER, 1, "register window 0"},
      {PD_REGISTER, 2, "register window 1"}, {PD_ROUND_TRIP, 2, "round trip of window 1"},
      {PD_UPLOAD, 1, "registered upload"},   {PD_UPLOAD, 6, "staged upload"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pd_fini(&f->d);
    pd_init(&f->d, W);
    f->d.fail_at[cases[i].op] = cases[i].at;
    assert_int_equal(probe(f), RIG_OK);
    expect(f, RIG_VERDICT_INCONCLUSIVE, cases[i].words);
    assert_non_null(strstr(reason(f->v), "RIG_DRIVER"));
    assert_int_equal(cacheable(f->v), 0);
    clean(f);
    /* every window registered was released exactly once */
    for (int w = 0; w < 2; ++w)
      if (f->d.window_base[w]) assert_int_equal(f->d.window_tries[w], 1);
  }
}

static void region_too_small_is_inconclusive(void **state) {
  fx *f = *state;
  rig_probe_ops ops = pd_ops(&f->d);
  assert_int_equal(rig_probe_with(&ops, f->map, f->ref, 128 * KIB - 1, NULL, &f->v), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "smaller than two windows");
  for (int op = 0; op < PD_OPS; ++op) assert_int_equal(f->d.calls[op], 0);
  rig_verdict_release(f->v);
  /* exactly two units is enough */
  assert_int_equal(rig_probe_with(&ops, f->map, f->ref, 128 * KIB, NULL, &f->v), RIG_OK);
  expect(f, RIG_VERDICT_USABLE, NULL);
}

static void reference_differs_is_inconclusive_before_registering(void **state) {
  fx *f = *state;
  f->ref[W + 5000] ^= 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "reference differs from the mapping at byte 267144");
  for (int op = 0; op < PD_OPS; ++op) assert_int_equal(f->d.calls[op], 0);
}

static void identical_windows_are_inconclusive_before_registering(void **state) {
  fx *f = *state;
  memcpy(f->map + W, f->map, W);
  memcpy(f->ref + W, f->ref, W);
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "hold the same bytes");
  for (int op = 0; op < PD_OPS; ++op) assert_int_equal(f->d.calls[op], 0);
}

/* A PROT_NONE page inside a window is answered, not a crash, and nothing is registered. */
static void unreadable_map_is_inconclusive(void **state) {
  fx *f = *state;
  assert_int_equal(mprotect(f->map + W + 64 * KIB, 4 * KIB, PROT_NONE), 0);
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "cannot be read at byte 327680");
  for (int op = 0; op < PD_OPS; ++op) assert_int_equal(f->d.calls[op], 0);
}

/* A file mapping longer than its file: touching the pages past the end would raise SIGBUS. */
static void mapping_past_end_of_file_is_inconclusive(void **state) {
  fx *f = *state;
  char path[] = "/tmp/rig-mapped-short-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  assert_int_equal(write(fd, f->map, W), (ssize_t)W); /* W bytes: half of what gets mapped */
  char *m = mmap(NULL, 2 * W, PROT_READ, MAP_SHARED, fd, 0);
  assert_true(m != MAP_FAILED);
  rig_probe_ops ops = pd_ops(&f->d);
  assert_int_equal(rig_probe_with(&ops, m, f->ref, 2 * W, NULL, &f->v), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "cannot be read at byte 262144");
  for (int op = 0; op < PD_OPS; ++op) assert_int_equal(f->d.calls[op], 0);
  munmap(m, 2 * W);
  close(fd);
}

static void clock_without_duration_is_inconclusive(void **state) {
  fx *f = *state;
  f->d.frozen_clock = 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "clock gave no valid duration");
  clean(f);
}

static void buffer_not_freed_is_inconclusive(void **state) {
  fx *f = *state;
  f->d.fail_always[PD_FREE] = 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "a buffer could not be freed");
  assert_int_equal(f->d.calls[PD_FREE], 2); /* tried twice */
  assert_int_equal(f->d.registered_count, 0);
}

static void free_failed_once_is_inconclusive(void **state) {
  fx *f = *state;
  f->d.fail_times[PD_FREE] = 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "succeeded on the retry");
  clean(f);
}

static void release_failed_once_then_succeeded_is_inconclusive(void **state) {
  fx *f = *state;
  f->d.fail_times[PD_UNREGISTER] = 1; /* the checked release of the first window released (window 1) */
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "succeeded on try 2");
  assert_int_equal(f->d.window_tries[1], 2);
  assert_int_equal(f->d.window_tries[0], 1);
  assert_int_equal(f->release_logs, 1); /* the release error went to the log */
  clean(f);
}

/* The checked release was reached: it and the cleanup's two retries failed, three tries per window. */
static void still_registered_after_three_when_checked_release_reached(void **state) {
  fx *f = *state;
  f->d.fail_always[PD_UNREGISTER] = 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_STILL_REGISTERED, "never unmap");
  assert_int_equal(f->d.window_tries[0], 3);
  assert_int_equal(f->d.window_tries[1], 3);
  assert_int_equal(f->d.registered_count, 2);
  assert_int_equal(f->d.allocation_count, 0); /* the buffer is freed whatever happens */
  assert_int_equal(cacheable(f->v), 0);
  assert_int_equal(f->release_logs, 6);
  f->d.fail_always[PD_UNREGISTER] = 0; /* let the double's bookkeeping end clean */
}

/* The probe stopped before the checked release (a failed round trip): two tries per window. */
static void still_registered_after_two_when_stopped_earlier(void **state) {
  fx *f = *state;
  f->d.fail_at[PD_ROUND_TRIP] = 1;
  f->d.fail_always[PD_UNREGISTER] = 1;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_STILL_REGISTERED, "after 2 tries");
  assert_int_equal(f->d.window_tries[0], 2);
  assert_int_equal(f->d.window_tries[1], 2);
  assert_int_equal(f->d.allocation_count, 0);
  assert_int_equal(cacheable(f->v), 0);
}

/* Only window 1's release fails for good: still registered names it, window 0 is released. */
static void still_registered_names_the_window(void **state) {
  fx *f = *state;
  f->d.stuck_base = f->map + W;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_STILL_REGISTERED, "window 1");
  assert_null(strstr(reason(f->v), "window 0"));
  assert_int_equal(f->d.registered_count, 1);
  assert_ptr_equal(f->d.registered[0].base, f->map + W);
  assert_int_equal(f->d.window_tries[1], 3);
  assert_int_equal(f->d.window_tries[0], 1);
  f->d.stuck_base = NULL;
}

/* OUT_OF_MEMORY and INTERRUPTED from any callback are the call's own error; everything is released. */
static void out_of_memory_and_interrupted_are_the_calls_error(void **state) {
  fx *f = *state;
  rig_status kinds[] = {RIG_OUT_OF_MEMORY, RIG_INTERRUPTED};
  struct {
    enum pd_op op;
    unsigned at;
  } where[] = {{PD_ALLOC, 1}, {PD_REGISTER, 2}, {PD_ROUND_TRIP, 1}, {PD_UPLOAD, 3}};
  for (size_t k = 0; k < 2; ++k)
    for (size_t i = 0; i < sizeof where / sizeof where[0]; ++i) {
      pd_fini(&f->d);
      pd_init(&f->d, W);
      f->d.fail_at[where[i].op] = where[i].at;
      f->d.fail_status[where[i].op] = kinds[k];
      rig_verdict untouched = (rig_verdict)(uintptr_t)0x1234;
      rig_probe_ops ops = pd_ops(&f->d);
      assert_int_equal(rig_probe_with(&ops, f->map, f->ref, LENGTH, NULL, &untouched), kinds[k]);
      assert_ptr_equal(untouched, (rig_verdict)(uintptr_t)0x1234); /* out written only on RIG_OK */
      assert_true(strlen(rig_last_error()) > 0);
      clean(f);
    }
}

/* A release that answers INTERRUPTED during the cleanup is retried like any failure, not returned. */
static void interrupted_release_is_retried(void **state) {
  fx *f = *state;
  f->d.fail_at[PD_UNREGISTER] = 1;
  f->d.fail_status[PD_UNREGISTER] = RIG_INTERRUPTED;
  assert_int_equal(probe(f), RIG_OK);
  expect(f, RIG_VERDICT_INCONCLUSIVE, "succeeded on try 2");
  clean(f);
}

static void bad_input_is_an_error(void **state) {
  fx *f = *state;
  rig_probe_ops ops = pd_ops(&f->d);
  rig_verdict v = NULL;
  assert_int_equal(rig_probe_with(NULL, f->map, f->ref, LENGTH, NULL, &v), RIG_INVALID_ARGUMENT);
  assert_true(strlen(rig_last_error()) > 0);
  assert_int_equal(rig_probe_with(&ops, NULL, f->ref, LENGTH, NULL, &v), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_probe_with(&ops, f->map, NULL, LENGTH, NULL, &v), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_probe_with(&ops, f->map, f->ref, LENGTH, NULL, NULL), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_probe_with(&ops, f->map + 64, f->ref, LENGTH - 64, NULL, &v), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "page boundary"));
  rig_probe_ops missing = ops;
  missing.upload = NULL;
  assert_int_equal(rig_probe_with(&missing, f->map, f->ref, LENGTH, NULL, &v), RIG_INVALID_ARGUMENT);
  rig_probe_ops small = ops;
  small.size = 8;
  assert_int_equal(rig_probe_with(&small, f->map, f->ref, LENGTH, NULL, &v), RIG_INVALID_ARGUMENT);
  rig_probe_options o = {sizeof o, -1.0, NULL, NULL};
  assert_int_equal(rig_probe_with(&ops, f->map, f->ref, LENGTH, &o, &v), RIG_INVALID_ARGUMENT);
  o.min_relative_speed = 0.0 / 0.0;
  assert_int_equal(rig_probe_with(&ops, f->map, f->ref, LENGTH, &o, &v), RIG_INVALID_ARGUMENT);
  o.size = 4;
  o.min_relative_speed = 0.5;
  assert_int_equal(rig_probe_with(&ops, f->map, f->ref, LENGTH, &o, &v), RIG_INVALID_ARGUMENT);
  assert_null(v);
  for (int op = 0; op < PD_OPS; ++op) assert_int_equal(f->d.calls[op], 0);
}

/* An ops table of an older, shorter size (without now_ns) works on the probe's own clock. */
static void ops_without_clock_use_the_probes_clock(void **state) {
  fx *f = *state;
  rig_probe_ops ops = pd_ops(&f->d);
  ops.size = offsetof(rig_probe_ops, now_ns);
  assert_int_equal(rig_probe_with(&ops, f->map, f->ref, LENGTH, NULL, &f->v), RIG_OK);
  rig_verdict_kind k = kind_of(f->v);
  assert_true(k == RIG_VERDICT_USABLE || k == RIG_VERDICT_TOO_SLOW);
  clean(f);
}

static void verdict_handles_are_checked(void **state) {
  fx *f = *state;
  assert_int_equal(probe(f), RIG_OK);
  rig_verdict v = f->v;
  f->v = NULL;
  assert_int_equal(rig_verdict_release(v), RIG_OK);
  rig_verdict_kind k;
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_INVALID_HANDLE);
  assert_int_equal(rig_verdict_release(v), RIG_INVALID_HANDLE);
  assert_int_equal(rig_verdict_get_kind(NULL, &k), RIG_INVALID_HANDLE);
  assert_int_equal(rig_verdict_get_kind((rig_verdict)(uintptr_t)0xdeadbeef, &k), RIG_INVALID_HANDLE);
  const char *s;
  assert_int_equal(rig_verdict_to_string((rig_verdict)(uintptr_t)0x10, &s), RIG_INVALID_HANDLE);
  rig_device host;
  assert_int_equal(rig_host(&host), RIG_OK);
  assert_int_equal(rig_verdict_get_kind((rig_verdict)host, &k), RIG_INVALID_HANDLE); /* wrong type */
  /* a released verdict's slot reused by a new verdict: the old handle stays stale */
  assert_int_equal(probe(f), RIG_OK);
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_INVALID_HANDLE);
}

static void names_are_pinned(void **state) {
  (void)state;
  assert_string_equal(rig_verdict_kind_name(RIG_VERDICT_USABLE), "Usable");
  assert_string_equal(rig_verdict_kind_name(RIG_VERDICT_NOT_NEEDED), "Not_needed");
  assert_string_equal(rig_verdict_kind_name(RIG_VERDICT_STILL_REGISTERED), "Still_registered");
  assert_string_equal(rig_verdict_kind_name((rig_verdict_kind)77), "unknown");
  assert_string_equal(rig_refusal_name(RIG_REFUSAL_WRONG_BYTES), "Wrong_bytes");
  assert_string_equal(rig_refusal_name(RIG_REFUSAL_DEVICE_KIND_UNKNOWN), "Device_kind_unknown");
  assert_int_equal(RIG_VERDICT_USABLE, 1);
  assert_int_equal(RIG_VERDICT_STILL_REGISTERED, 6);
  assert_int_equal(RIG_REFUSAL_WRONG_BYTES, 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
      T(usable),
      T(too_slow),
      T(min_relative_speed_is_the_margin),
      T(wrong_bytes_refused_and_cacheable),
      T(copy_that_did_nothing_is_wrong_bytes),
      T(stale_buffer_does_not_pass_for_a_copy),
      T(file_changed_during_probe_is_inconclusive),
      T(callback_failure_is_inconclusive),
      T(region_too_small_is_inconclusive),
      T(reference_differs_is_inconclusive_before_registering),
      T(identical_windows_are_inconclusive_before_registering),
      T(unreadable_map_is_inconclusive),
      T(mapping_past_end_of_file_is_inconclusive),
      T(clock_without_duration_is_inconclusive),
      T(buffer_not_freed_is_inconclusive),
      T(free_failed_once_is_inconclusive),
      T(release_failed_once_then_succeeded_is_inconclusive),
      T(still_registered_after_three_when_checked_release_reached),
      T(still_registered_after_two_when_stopped_earlier),
      T(still_registered_names_the_window),
      T(out_of_memory_and_interrupted_are_the_calls_error),
      T(interrupted_release_is_retried),
      T(bad_input_is_an_error),
      T(ops_without_clock_use_the_probes_clock),
      T(verdict_handles_are_checked),
      T(names_are_pinned),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
