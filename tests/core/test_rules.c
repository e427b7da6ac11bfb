/* One test per rule of docs/ordering-model.md. The producer is device kind 1 of RIG_TEST_KINDS (the test driver
 * by default) holding its work until committed, so a missing wait leaves work unrun and the check sees
 * stale bytes. Each test fails when its rule's code is compiled out (RIG_MUTATE_RULE N in src/core/mutate.h; see
 * tests/core/mutation.sh). Consumers are kind 0 (a memory device: host waits) and kind 1 again (a second
 * test-driver device: in-queue waits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rigtest.h"
#include "test_driver.h"

typedef struct pair {
  size_t consumer_kind;
} pair;

static pair host_waits = {0}, queue_waits = {1};

static void open_pair(void **state, rig_device *a, rig_device *b, int *ok) {
  pair *p = (pair *)*state;
  *ok = rt_open_kind(1, "A", a) && rt_open_kind(p->consumer_kind, "B", b);
  if (*ok && rt_is_test_driver(*a)) tdrv_set_hold(*a, 1);
}

static void close_pair(rig_device a, rig_device b) {
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

static uint8_t byte_at(rig_buffer b, size_t i) {
  uint8_t v = 0;
  OK(rig_buffer_read_into(b, i, &v, 1));
  return v;
}

/* Rule 1: a device's later value runs after its earlier ones with no stamp-derived wait on itself. */
static void rule1_device_order_needs_no_wait_on_itself(void **state) {
  (void)state;
  rig_device a;
  if (!rt_open_kind(1, "A", &a)) return;
  int t = rt_is_test_driver(a);
  if (t) tdrv_set_hold(a, 1);
  rig_buffer x = rt_create(a, 256), y = rt_create(a, 256);
  tdrv_log_clear();
  rt_fill(a, x, 7);
  rt_copy(a, x, y); /* reads what A's own value 1 wrote */
  if (t) {
    assert_int_equal(tdrv_log_find("hand_over A 2 []", 0) >= 0, 1); /* no wait on A:1 */
    assert_int_equal(tdrv_log_find("wait A", 0), -1);               /* and no host wait either */
    assert_int_equal(tdrv_queued(a), 2);
  }
  assert_int_equal(byte_at(y, 255), 7);
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
}

/* Rule 2: a submit follows every point in its waits, even over memory it does not share. */
static int a_ran;
static int a_ran_seen_by_b = -1;
static void mark_a(void *u, const rig_span *s, size_t n) { (void)u, (void)s, (void)n, a_ran = 1; }
static void see_a(void *u, const rig_span *s, size_t n) { (void)u, (void)s, (void)n, a_ran_seen_by_b = a_ran; }

/* Devices that run no host kernels (GPUs): A fills one wrap of some bytes, B copies from a second wrap of
 * the same bytes. The two wraps are two allocations, so only the explicit wait orders B after A. */
static void rule2_by_two_wraps(rig_device a, rig_device b) {
  static uint8_t bytes[1 << 20] __attribute__((aligned(4096)));
  memset(bytes, 0, sizeof bytes);
  rig_buffer w1, w2, y = rt_create(b, sizeof bytes);
  OK(rig_buffer_wrap(bytes, sizeof bytes, RIG_ACCESS_READ_WRITE, NULL, NULL, &w1));
  OK(rig_buffer_wrap(bytes, sizeof bytes, RIG_ACCESS_READ_WRITE, NULL, NULL, &w2));
  rig_buffer w1_on_a = NULL, w2_on_b = NULL;
  if (rig_buffer_borrow(a, w1, &w1_on_a) != RIG_OK || rig_buffer_borrow(b, w2, &w2_on_b) != RIG_OK) {
    char why[600];
    snprintf(why, sizeof why, "these devices run no host kernels and borrow no host memory: %s", rig_last_error());
    rig_buffer_release(w1), rig_buffer_release(w2), rig_buffer_release(y);
    if (w1_on_a) rig_buffer_release(w1_on_a);
    rt_skip(why);
    return;
  }
  rig_point pa = rt_fill(a, w1_on_a, 0x11);
  rig_point pb = 0;
  OK(rt_try_copy(b, w2_on_b, y, &pa, 1, &pb));
  OK(rig_wait_point(pb, UINT64_MAX));
  uint8_t out[64];
  OK(rig_buffer_read_into(y, sizeof bytes - 64, out, 64));
  for (int i = 0; i < 64; ++i) assert_int_equal(out[i], 0x11);
  rig_buffer all[] = {w1_on_a, w2_on_b, w1, w2, y};
  for (int i = 0; i < 5; ++i) OK(rig_buffer_release(all[i]));
}

static int runs_host_kernels(rig_device d) {
  rig_part p = {sizeof p};
  p.kind = RIG_PART_HOST_KERNEL;
  p.fn = mark_a;
  rig_submission s;
  if (rig_submission_make(d, &p, 1, NULL, 0, &s) != RIG_OK) return 0;
  rig_submission_release(s);
  return 1;
}

static void rule2_explicit_waits_order_unshared_work(void **state) {
  rig_device a, b;
  int ok;
  open_pair(state, &a, &b, &ok);
  if (!ok) return;
  if (!runs_host_kernels(a) || !runs_host_kernels(b)) {
    rule2_by_two_wraps(a, b);
    close_pair(a, b);
    return;
  }
  a_ran = 0, a_ran_seen_by_b = -1;
  rig_buffer xa = rt_create(a, 16), xb = rt_create(b, 16);
  rig_access w = RIG_ACCESS_WRITE;
  rig_point pa = rt_kernel(a, mark_a, NULL, &xa, &w, 1, NULL, 0);
  rig_point pb = rt_kernel(b, see_a, NULL, &xb, &w, 1, &pa, 1);
  OK(rig_wait_point(pb, UINT64_MAX));
  assert_int_equal(a_ran_seen_by_b, 1);
  OK(rig_buffer_release(xa));
  OK(rig_buffer_release(xb));
  close_pair(a, b);
}

/* Rule 3: a read through a borrow follows the allocation's last write by another device. */
static void rule3_device_read_follows_last_write(void **state) {
  rig_device a, b;
  int ok;
  open_pair(state, &a, &b, &ok);
  if (!ok) return;
  rig_buffer x = rt_create_shared(a, 4096), y = rt_create(b, 4096);
  rt_fill(a, x, 3);
  rig_buffer x_on_b = rt_borrow_or_skip(b, x);
  rt_copy(b, x_on_b, y);
  assert_int_equal(byte_at(y, 4095), 3);
  OK(rig_buffer_release(x_on_b));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  close_pair(a, b);
}

/* Rule 4: a write follows every other device's last use, then becomes the last write. */
static void rule4_device_write_follows_every_use(void **state) {
  rig_device a, b;
  int ok;
  open_pair(state, &a, &b, &ok);
  if (!ok) return;
  rig_buffer x = rt_create_shared(b, 4096), z = rt_create(a, 4096);
  OK(rig_buffer_write_from(x, 0, (uint8_t[4096]){1}, 4096)); /* x[0] = 1 */
  rig_buffer x_on_a = rt_borrow_or_skip(a, x);
  rt_copy(a, x_on_a, z); /* A reads x (held) */
  rt_fill(b, x, 9);      /* B overwrites x: must follow A's read */
  assert_int_equal(byte_at(z, 0), 1);
  assert_int_equal(byte_at(x, 0), 9); /* and B's fill is now the last write */
  OK(rig_buffer_release(x_on_a));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(z));
  close_pair(a, b);
}

/* Rule 5: a host read follows the last write, committing the writer. */
static uint8_t read_seen;
static void read_first(void *u, const void *bytes, size_t n) { (void)u, (void)n, read_seen = *(const uint8_t *)bytes; }

static void rule5_host_read_follows_last_write(void **state) {
  (void)state;
  rig_device a;
  if (!rt_open_kind(1, "A", &a)) return;
  if (rt_is_test_driver(a)) tdrv_set_hold(a, 1);
  rig_buffer x = rt_create(a, 64);
  rt_fill(a, x, 5);
  read_seen = 0;
  OK(rig_buffer_read(x, read_first, NULL));
  assert_int_equal(read_seen, 5);
  rt_fill(a, x, 6);
  assert_int_equal(byte_at(x, 63), 6);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Rule 6: a host write follows every use; so does returning the memory. */
static int released_after_use = -1;
static rig_device rule6_device;
static rig_point rule6_point;
static void on_release(void *u) {
  (void)u;
  uint64_t s = 0;
  rig_device_signaled(rule6_device, &s);
  released_after_use = s >= rig_point_value(rule6_point);
}

static void rule6_host_write_and_release_follow_every_use(void **state) {
  (void)state;
  rig_device a;
  if (!rt_open_kind(1, "A", &a)) return;
  if (rt_is_test_driver(a)) tdrv_set_hold(a, 1);
  rig_buffer x = rt_create(a, 64), y = rt_create(a, 64);
  OK(rig_buffer_write_from(x, 0, (uint8_t[64]){4}, 64));
  rt_copy(a, x, y);                                             /* A reads x (held) */
  OK(rig_buffer_write_from(x, 0, (uint8_t[64]){8}, 64));        /* must follow A's read */
  assert_int_equal(byte_at(y, 0), 4);
  /* Memory goes back only after its uses: the wrap's release callback runs after A's copy. */
  static uint8_t wrapped[4096] __attribute__((aligned(4096)));
  rig_buffer w;
  OK(rig_buffer_wrap(wrapped, 64, RIG_ACCESS_READ, on_release, NULL, &w));
  rig_buffer w_on_a = rt_borrow_or_skip(a, w);
  rule6_device = a;
  rule6_point = rt_copy(a, w_on_a, y);
  released_after_use = -1;
  OK(rig_buffer_release(w_on_a));
  OK(rig_buffer_release(w));
  assert_int_equal(released_after_use, 1);
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rule1_device_order_needs_no_wait_on_itself),
      cmocka_unit_test_prestate(rule2_explicit_waits_order_unshared_work, &host_waits),
      cmocka_unit_test_prestate(rule2_explicit_waits_order_unshared_work, &queue_waits),
      cmocka_unit_test_prestate(rule3_device_read_follows_last_write, &host_waits),
      cmocka_unit_test_prestate(rule3_device_read_follows_last_write, &queue_waits),
      cmocka_unit_test_prestate(rule4_device_write_follows_every_use, &host_waits),
      cmocka_unit_test_prestate(rule4_device_write_follows_every_use, &queue_waits),
      cmocka_unit_test(rule5_host_read_follows_last_write),
      cmocka_unit_test(rule6_host_write_and_release_follow_every_use),
  };
  return rt_finish(cmocka_run_group_tests_name("rules", tests, NULL, NULL));
}
