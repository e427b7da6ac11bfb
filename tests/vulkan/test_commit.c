/* Commits on Vulkan (docs/ordering-model.md, "Commits"): the driver holds handed-over work in an open command
 * buffer; rig_device_signaled never shows it until something commits it; every wait commits first (a host
 * wait, a wait placed in another device's queue, an explicit wait); and the driver commits by itself once
 * k values are held. lavapipe runs only what was submitted to its queue, so a value that is not committed
 * cannot be signaled, however long the test polls. */
#include <stdio.h>
#include <string.h>

#include "vk_common.h"

static const unsigned kHeldMs = 150;      /* how long held work is watched not to complete */
static const unsigned kReachMs = 20000;   /* how long committed work may take on a loaded CPU */

static void expect_bytes(rig_buffer b, size_t n, uint8_t want) {
  uint8_t buf[4096];
  assert_true(n <= sizeof buf);
  OK(rig_buffer_read_into(b, 0, buf, n));
  for (size_t i = 0; i < n; ++i)
    if (buf[i] != want) fail_msg("byte %zu is %u, want %u", i, buf[i], want);
}

static void held_work_is_not_signaled_until_a_host_wait_commits_it(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_buffer x = vk_buffer(a, 4096, RIG_MEMORY_DEVICE);
  rig_point p = rt_fill(a, x, 7);
  assert_int_equal(rt_submitted(a), 1);
  /* Held: polling signaled commits nothing, so value 1 never shows. */
  assert_int_equal(vk_poll_signaled(a, 1, kHeldMs), 0);
  OK(rig_wait_point(p, (uint64_t)kReachMs * 1000000));
  assert_true(rt_signaled(a) >= 1);
  /* A later value is held again after the wait committed the earlier one. */
  rig_point p2 = rt_fill(a, x, 8);
  assert_int_equal(rig_point_value(p2), 2);
  assert_int_equal(vk_poll_signaled(a, 2, kHeldMs), 1);
  OK(rig_device_wait(a, 2, (uint64_t)kReachMs * 1000000));
  assert_int_equal(rt_signaled(a), 2);
  expect_bytes(x, 4096, 8);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

static void a_timeout_zero_wait_on_held_work_commits_it(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_buffer x = vk_buffer(a, 256, RIG_MEMORY_DEVICE);
  rig_point p = rt_fill(a, x, 3);
  /* A wait that only checks still commits first (then may time out): afterwards the work completes
   * without any further wait. */
  rig_status s = rig_wait_point(p, 0);
  assert_true(s == RIG_OK || s == RIG_TIMEOUT);
  assert_true(vk_poll_signaled(a, 1, kReachMs) >= 1);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* B's work reads what A's held work writes: the submit on B commits A, then waits in B's queue on A's
 * timeline semaphore. Had A not been committed, B's batch would wait forever and the host wait time out. */
static void a_queue_wait_on_b_for_held_work_of_a_commits_a_first(void **state) {
  (void)state;
  rig_device a, b;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  rig_buffer x = vk_buffer(a, 4096, RIG_MEMORY_DEVICE);
  rig_buffer y = vk_buffer(b, 4096, RIG_MEMORY_DEVICE);
  rt_fill(a, x, 0x5a);
  assert_int_equal(vk_poll_signaled(a, 1, kHeldMs), 0); /* held */
  rig_buffer xb = rt_borrow(b, x);
  rig_point pb = rt_copy(b, xb, y);
  OK(rig_wait_point(pb, (uint64_t)kReachMs * 1000000));
  assert_true(rt_signaled(a) >= 1); /* B's value passed A's: A was committed and reached */
  expect_bytes(y, 4096, 0x5a);
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* Both directions at once, many times: A and B each hold work the other then reads. No wait ever waits
 * for held work, so this cannot deadlock; the bytes show each copy saw the other's fill. */
static void crossing_waits_between_two_devices_never_deadlock(void **state) {
  (void)state;
  rig_device a, b;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  rig_buffer xa = vk_buffer(a, 1024, RIG_MEMORY_DEVICE), ya = vk_buffer(a, 1024, RIG_MEMORY_DEVICE);
  rig_buffer xb = vk_buffer(b, 1024, RIG_MEMORY_DEVICE), yb = vk_buffer(b, 1024, RIG_MEMORY_DEVICE);
  rig_buffer xa_on_b = rt_borrow(b, xa), xb_on_a = rt_borrow(a, xb);
  for (unsigned i = 0; i < 50; ++i) {
    rt_fill(a, xa, (uint8_t)i);
    rt_fill(b, xb, (uint8_t)(i + 100));
    rt_copy(a, xb_on_a, ya); /* A waits in its queue for B's held fill */
    rt_copy(b, xa_on_b, yb); /* B waits for A's fill (held or committed) */
  }
  OK(rig_device_wait(a, rt_submitted(a), (uint64_t)kReachMs * 1000000));
  OK(rig_device_wait(b, rt_submitted(b), (uint64_t)kReachMs * 1000000));
  expect_bytes(ya, 1024, 149);
  expect_bytes(yb, 1024, 49);
  OK(rig_buffer_release(xa_on_b));
  OK(rig_buffer_release(xb_on_a));
  OK(rig_buffer_release(xa));
  OK(rig_buffer_release(ya));
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(yb));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* A memory device reading A's held work waits on the host: that wait commits A first too. */
static void a_host_wait_of_a_memory_device_commits_held_work_first(void **state) {
  (void)state;
  rig_device a, m;
  if (!vk_open(&a)) return;
  OK(rig_memory_device("M", &m));
  rig_buffer x = vk_buffer(a, 4096, RIG_MEMORY_PINNED);
  rig_buffer y = rt_create(m, 4096);
  rt_fill(a, x, 0x33);
  assert_int_equal(vk_poll_signaled(a, 1, kHeldMs), 0);
  rig_buffer xm = rt_borrow(m, x);
  rig_point pm = rt_copy(m, xm, y); /* runs inline, after the host wait for A:1 */
  OK(rig_wait_point(pm, 0));
  assert_true(rt_signaled(a) >= 1);
  expect_bytes(y, 4096, 0x33);
  OK(rig_buffer_release(xm));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(m));
}

/* An explicit wait (rule 2) over no shared memory commits the producer as well. */
static void an_explicit_wait_commits_the_producer(void **state) {
  (void)state;
  rig_device a, b;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  rig_buffer x = vk_buffer(a, 256, RIG_MEMORY_DEVICE), y = vk_buffer(b, 256, RIG_MEMORY_DEVICE);
  rig_point pa = rt_fill(a, x, 1);
  assert_int_equal(vk_poll_signaled(a, 1, kHeldMs), 0);
  rig_part part = {sizeof part};
  part.kind = RIG_PART_FILL;
  part.length = RIG_WHOLE;
  part.byte = 2;
  rig_access w = RIG_ACCESS_WRITE;
  rig_submission sub;
  rig_run run;
  OK(rig_submission_make(b, &part, 1, &w, 1, &sub));
  OK(rig_run_take(sub, &run));
  OK(rig_run_set_buffer(run, 0, y));
  rig_point pb = 0;
  OK(rig_submit(run, &pa, 1, &pb));
  OK(rig_wait_point(pb, (uint64_t)kReachMs * 1000000));
  assert_true(rt_signaled(a) >= 1);
  OK(rig_run_release(run));
  OK(rig_submission_release(sub));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* k-1 values stay held however long one polls; the k-th makes the driver commit by itself, and then the
 * timeline reaches k with no wait at all. */
static void held_work_is_committed_by_itself_after_k_values(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  const uint64_t k = vulkan_testing_commit_every();
  assert_true(k >= 2);
  rig_buffer x = vk_buffer(a, 256, RIG_MEMORY_DEVICE);
  for (uint64_t i = 1; i < k; ++i) rt_fill(a, x, (uint8_t)i);
  assert_int_equal(vk_poll_signaled(a, 1, kHeldMs), 0);
  rt_fill(a, x, (uint8_t)k);
  assert_int_equal(vk_poll_signaled(a, k, kReachMs), k);
  /* And again from there: the bound counts from the last commit. */
  for (uint64_t i = 1; i < k; ++i) rt_fill(a, x, 0);
  assert_int_equal(vk_poll_signaled(a, k + 1, kHeldMs), k);
  rt_fill(a, x, 0);
  assert_int_equal(vk_poll_signaled(a, 2 * k, kReachMs), 2 * k);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Releasing a device with held work waits for it (commits it first): the bytes are there afterwards
 * through a borrow on another device. */
static void releasing_a_device_commits_and_finishes_its_held_work(void **state) {
  (void)state;
  rig_device a, b;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  rig_buffer x = vk_buffer(a, 512, RIG_MEMORY_PINNED);
  rig_buffer xb = rt_borrow(b, x);
  rt_fill(a, x, 0x77);
  OK(rig_device_release(a));
  expect_bytes(xb, 512, 0x77);
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(x));
  OK(rig_device_release(b));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(held_work_is_not_signaled_until_a_host_wait_commits_it),
      cmocka_unit_test(a_timeout_zero_wait_on_held_work_commits_it),
      cmocka_unit_test(a_queue_wait_on_b_for_held_work_of_a_commits_a_first),
      cmocka_unit_test(crossing_waits_between_two_devices_never_deadlock),
      cmocka_unit_test(a_host_wait_of_a_memory_device_commits_held_work_first),
      cmocka_unit_test(an_explicit_wait_commits_the_producer),
      cmocka_unit_test(held_work_is_committed_by_itself_after_k_values),
      cmocka_unit_test(releasing_a_device_commits_and_finishes_its_held_work),
  };
  return cmocka_run_group_tests(tests, NULL, vk_validation_teardown);
}
