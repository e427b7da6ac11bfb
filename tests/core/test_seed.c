/* The seed page's three programs (the README's program, an export read too soon, a poll that commits
 * nothing: docs/ordering-model.md), over the suite's device kinds (RIG_TEST_KINDS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rigtest.h"
#include "test_driver.h"

/* Correct ordering: A copies src into x through a borrow; B copies x into y through a borrow; the host's
 * read of y follows B:1 and so A:1 (rules 3 and 5, transitively). Prints hello, world. */
static void correct_ordering_prints_hello_world(void **state) {
  (void)state;
  rig_device a, b;
  if (!rt_open_kind(1, "A", &a) || !rt_open_kind(0, "B", &b)) return;
  if (rt_is_test_driver(a)) tdrv_set_hold(a, 1); /* A's copy runs only once someone commits it */
  static char text[4096] __attribute__((aligned(4096))) = "hello, world"; /* GPUs register whole pages */
  rig_buffer src, x = rt_create_shared(a, 12), y = rt_create(b, 12);
  OK(rig_buffer_wrap(text, 12, RIG_ACCESS_READ, NULL, NULL, &src));
  rig_buffer src_on_a = NULL;
  if (rig_buffer_borrow(a, src, &src_on_a) == RIG_OK) {
    rt_copy(a, src_on_a, x);
  } else { /* a device that borrows no host memory (Vulkan by default) gets the bytes by a host write */
    fprintf(stderr, "note: %s; x is written from the host instead\n", rig_last_error());
    OK(rig_buffer_write_from(x, 0, text, 12));
    OK(rig_buffer_view(x, 0, 12, &src_on_a)); /* released below with the rest */
  }
  rig_buffer x_on_b = rt_borrow_or_skip(b, x);
  rt_copy(b, x_on_b, y);
  char out[13] = {0};
  OK(rig_buffer_read_into(y, 0, out, 12));
  printf("%s\n", out);
  assert_string_equal(out, "hello, world");
  rig_buffer all[] = {src, x, y, src_on_a, x_on_b};
  for (int i = 0; i < 5; ++i) OK(rig_buffer_release(all[i]));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* Incorrect ordering: an exported pointer follows only the work done when it was made. On a device that
 * runs later, the read through it sees the old value while rig_buffer_read sees the copy. */
static void export_is_ordered_only_at_the_call(void **state) {
  (void)state;
  rig_device host, d;
  OK(rig_host(&host));
  if (!rt_open_kind(1, "D", &d)) return;
  int held = rt_is_test_driver(d);
  if (held) tdrv_set_hold(d, 1);
  rig_buffer x;
  OK(rig_buffer_create(host, 4, RIG_MEMORY_DEVICE, &x));
  static int32_t v[1024] __attribute__((aligned(4096))) = {42};
  int32_t zero = 0, seen = -1;
  OK(rig_buffer_write_from(x, 0, &zero, 4));
  void *p = NULL;
  OK(rig_buffer_export(x, &p));
  rig_buffer src;
  OK(rig_buffer_wrap(v, 4, RIG_ACCESS_READ, NULL, NULL, &src));
  rig_buffer src_on_d = rt_borrow_or_skip(d, src), x_on_d = rt_borrow_or_skip(d, x);
  rt_copy(d, src_on_d, x_on_d);
  /* Reading through the export now is the page's incorrect program. It is read only where nothing runs
   * concurrently (held work, or a memory device that already ran it): on a GPU it is a data race, which
   * ThreadSanitizer rightly reports when the fake drivers' streams run the copy on their threads. */
  if (held)
    assert_int_equal(*(volatile int32_t *)p, 0); /* the copy is still held: the export follows nothing */
  else if (strcmp(rt_kind(1), "memory") == 0)
    assert_int_equal(*(volatile int32_t *)p, 42); /* a memory device ran the copy before submit returned */
  OK(rig_buffer_read_into(x, 0, &seen, 4)); /* follows x's last write (rule 5) */
  assert_int_equal(seen, 42);
  rig_buffer all[] = {x, src, src_on_d, x_on_d};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(all[i]));
  OK(rig_device_release(d));
}

/* Two wraps of the same bytes are two allocations: work through one follows no work through the other. */
static void two_wraps_of_the_same_bytes_are_independent(void **state) {
  (void)state;
  rig_device d;
  if (!rt_open_kind(1, "D", &d)) return;
  int held = rt_is_test_driver(d);
  if (held) tdrv_set_hold(d, 1);
  static uint8_t bytes[4096] __attribute__((aligned(4096)));
  memset(bytes, 0, sizeof bytes);
  rig_buffer w1, w2;
  OK(rig_buffer_wrap(bytes, 64, RIG_ACCESS_READ_WRITE, NULL, NULL, &w1));
  OK(rig_buffer_wrap(bytes, 64, RIG_ACCESS_READ_WRITE, NULL, NULL, &w2));
  rig_buffer w1_on_d = rt_borrow_or_skip(d, w1);
  rig_point p = rt_fill(d, w1_on_d, 0x5a);
  uint8_t first = 0xff;
  /* w2's stamps are empty: a read through it waits for nothing. Where the fill may run concurrently (a GPU)
   * that read is the page's data race, so it is made only where nothing runs meanwhile. */
  if (held || strcmp(rt_kind(1), "memory") == 0) OK(rig_buffer_read_into(w2, 0, &first, 1));
  if (held) {
    assert_int_equal(first, 0);
    assert_int_equal(tdrv_queued(d), 1); /* the read through w2 neither committed nor waited for d */
  }
  OK(rig_buffer_read_into(w1, 0, &first, 1)); /* through w1 it follows the fill */
  assert_int_equal(first, 0x5a);
  assert_true(rt_signaled(d) >= rig_point_value(p));
  OK(rig_buffer_release(w1_on_d));
  OK(rig_buffer_release(w1));
  OK(rig_buffer_release(w2));
  OK(rig_device_release(d));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(correct_ordering_prints_hello_world),
      cmocka_unit_test(export_is_ordered_only_at_the_call),
      cmocka_unit_test(two_wraps_of_the_same_bytes_are_independent),
  };
  return rt_finish(cmocka_run_group_tests_name(getenv("RIG_TEST_KINDS") ? getenv("RIG_TEST_KINDS") : "seed", tests, NULL, NULL));
}
