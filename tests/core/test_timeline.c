/* Commits, the device turn, waits and loss, on the test driver (and loss on a memory device's test hook). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rigtest.h"
#include "test_driver.h"

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Held work is not shown by signaled (a pure read) until a wait commits it. */
static void signaled_shows_held_work_only_after_a_wait_commits_it(void **state) {
  (void)state;
  rig_device a;
  OK(tdrv_open("A", &a));
  tdrv_set_hold(a, 1);
  rig_buffer x = rt_create(a, 64);
  rig_point p = rt_fill(a, x, 1);
  tdrv_log_clear();
  for (int i = 0; i < 100; ++i) assert_int_equal(rt_signaled(a), 0); /* polling commits nothing */
  assert_int_equal(tdrv_run_all(), 0);                               /* held: nothing can run */
  assert_int_equal(tdrv_log_find("commit A", 0), -1);
  OK(rig_wait_point(p, UINT64_MAX));
  assert_true(tdrv_log_find("commit A", 0) >= 0);
  assert_int_equal(rt_signaled(a), 1);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* A wait placed in B's queue for A's held work commits A first: no deadlock. */
static void a_queue_wait_on_held_work_commits_the_producer_first(void **state) {
  (void)state;
  rig_device a, b;
  OK(tdrv_open("A", &a));
  OK(tdrv_open("B", &b));
  tdrv_set_hold(a, 1);
  rig_buffer x = rt_create(a, 64), y = rt_create(b, 64);
  rt_fill(a, x, 2);
  tdrv_log_clear();
  rig_buffer x_on_b = rt_borrow(b, x);
  rig_point pb = rt_copy(b, x_on_b, y);
  int c = tdrv_log_find("commit A", 0), h = tdrv_log_find("hand_over B 1 [A:1]", 0);
  assert_true(c >= 0 && h > c); /* committed before B's wait was handed over */
  assert_int_equal(tdrv_log_find("wait A", 0), -1); /* waited in B's queue, not on the host */
  OK(rig_wait_point(pb, UINT64_MAX));
  uint8_t v = 0;
  OK(rig_buffer_read_into(y, 0, &v, 1));
  assert_int_equal(v, 2);
  OK(rig_buffer_release(x_on_b));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* The driver commits held work by itself every k values. */
static void held_work_is_committed_by_itself_after_k_values(void **state) {
  (void)state;
  rig_device a;
  OK(tdrv_open("A", &a));
  tdrv_set_hold(a, 1);
  tdrv_set_commit_every(a, 4);
  rig_buffer x = rt_create(a, 64);
  for (int i = 0; i < 3; ++i) rt_fill(a, x, 1);
  assert_int_equal(tdrv_run_all(), 0);
  rt_fill(a, x, 1);
  assert_int_equal(tdrv_run_all(), 4);
  assert_int_equal(rt_signaled(a), 4);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* A submit with no parts still takes a value. */
static void an_empty_submit_takes_a_value(void **state) {
  (void)state;
  rig_device a;
  OK(rig_memory_device("A", &a));
  rig_submission s;
  rig_run r;
  OK(rig_submission_make(a, NULL, 0, NULL, 0, &s));
  OK(rig_run_take(s, &r));
  rig_point p1 = 0, p2 = 0;
  OK(rig_submit(r, NULL, 0, &p1));
  OK(rig_submit(r, NULL, 0, &p2));
  assert_int_equal(rig_point_value(p1), 1);
  assert_int_equal(rig_point_value(p2), 2);
  assert_int_equal(rt_submitted(a), 2);
  OK(rig_run_release(r));
  OK(rig_submission_release(s));
  OK(rig_device_release(a));
}

/* The turn is per device: a hand-over blocked on A holds A's turn only; B's submits go on, and a second
 * submit on A waits for the turn. */
typedef struct submitter {
  rig_device d;
  rig_buffer x;
  volatile int done;
} submitter;

static void *fill_in_thread(void *arg) {
  submitter *s = (submitter *)arg;
  rt_fill(s->d, s->x, 1);
  s->done = 1;
  return NULL;
}

static void a_blocked_hand_over_holds_only_its_devices_turn(void **state) {
  (void)state;
  rig_device a, b;
  OK(tdrv_open("A", &a));
  OK(tdrv_open("B", &b));
  rig_buffer xa = rt_create(a, 64), xa2 = rt_create(a, 64), xb = rt_create(b, 64);
  tdrv_set_block_hand_over(a, 1);
  submitter s1 = {a, xa, 0}, s2 = {a, xa2, 0};
  pthread_t t1, t2;
  pthread_create(&t1, NULL, fill_in_thread, &s1);
  while (!tdrv_in_hand_over(a)) sleep_ms(1);
  rt_fill(b, xb, 1); /* B is not blocked by A's turn */
  assert_int_equal(rt_submitted(b), 1);
  pthread_create(&t2, NULL, fill_in_thread, &s2);
  sleep_ms(20);
  assert_int_equal(s2.done, 0); /* waits for A's turn */
  assert_int_equal(rt_submitted(a), 0);
  tdrv_set_block_hand_over(a, 0);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  assert_int_equal(rt_submitted(a), 2);
  OK(rig_device_wait(a, 2, UINT64_MAX));
  OK(rig_buffer_release(xa));
  OK(rig_buffer_release(xa2));
  OK(rig_buffer_release(xb));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* A queue with little room: hand-over waits for room while the device makes progress. */
static void a_full_queue_makes_progress_before_taking_more(void **state) {
  (void)state;
  rig_device a;
  OK(tdrv_open("A", &a));
  tdrv_set_room(a, 2);
  rig_buffer x = rt_create(a, 64);
  for (int i = 0; i < 10; ++i) rt_fill(a, x, (uint8_t)i);
  assert_true(tdrv_queued(a) <= 2);
  assert_true(tdrv_log_find("full A", 0) >= 0);
  uint8_t v;
  OK(rig_buffer_read_into(x, 0, &v, 1));
  assert_int_equal(v, 9);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Waits: past submitted is invalid; a stall times out; an interrupted wait changes nothing. */
static void waits_time_out_are_interrupted_and_refuse_the_future(void **state) {
  (void)state;
  rig_device a;
  OK(tdrv_open("A", &a));
  rig_buffer x = rt_create(a, 64);
  STATUS(RIG_INVALID_ARGUMENT, rig_device_wait(a, 1, 0));
  tdrv_set_stall_at(a, 1);
  rt_fill(a, x, 1);
  STATUS(RIG_TIMEOUT, rig_device_wait(a, 1, 5 * 1000000ull));
  STATUS(RIG_TIMEOUT, rig_device_wait(a, 1, 0));
  tdrv_interrupt_next_wait(a);
  STATUS(RIG_INTERRUPTED, rig_device_wait(a, 1, UINT64_MAX));
  rig_interrupt_waits(1);
  STATUS(RIG_INTERRUPTED, rig_device_wait(a, 1, UINT64_MAX));
  rig_interrupt_waits(0);
  const char *why = "x";
  OK(rig_device_lost_reason(a, &why));
  assert_null(why); /* none of these lost the device */
  tdrv_set_stall_at(a, 0);
  OK(rig_device_wait(a, 1, UINT64_MAX));
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* A hang past the driver's bound loses the device. */
static void a_hang_past_the_bound_loses_the_device(void **state) {
  (void)state;
  rig_device a;
  OK(tdrv_open("A", &a));
  rig_buffer x = rt_create(a, 64);
  tdrv_set_stall_at(a, 1);
  tdrv_set_hang_bound_ns(a, 2 * 1000000ull);
  rt_fill(a, x, 1);
  STATUS(RIG_LOST, rig_device_wait(a, 1, UINT64_MAX));
  const char *why = NULL;
  OK(rig_device_lost_reason(a, &why));
  assert_non_null(why);
  STATUS(RIG_LOST, rt_try_copy(a, x, x, NULL, 0, NULL));
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Loss: a fault at A:2 loses A. Waits past it fail with LOST; work queued on B waiting for it is lost with
 * it; C's independent work finishes; memory whose uses A reached is ordinary again. */
static void a_fault_loses_the_device_and_what_waits_on_it(void **state) {
  (void)state;
  rig_device a, b, c;
  OK(tdrv_open("A", &a));
  OK(tdrv_open("B", &b));
  OK(rig_memory_device("C", &c));
  rig_buffer x = rt_create(a, 64), y = rt_create(b, 64), z = rt_create(c, 64), early = rt_create(a, 64);
  tdrv_set_fault_at(a, 2);
  rig_point p1 = rt_fill(a, early, 1);
  rig_point p2 = rt_fill(a, x, 2);
  rig_buffer x_on_b = rt_borrow(b, x);
  rig_point pb = rt_copy(b, x_on_b, y); /* B's queue waits on A:2 */
  rt_fill(c, z, 3);                     /* unrelated */
  OK(rig_wait_point(p1, UINT64_MAX));   /* reached before the fault */
  STATUS(RIG_LOST, rig_wait_point(p2, UINT64_MAX));
  STATUS(RIG_LOST, rig_wait_point(pb, UINT64_MAX));
  const char *why = NULL;
  OK(rig_device_lost_reason(b, &why));
  assert_non_null(why);
  assert_non_null(strstr(why, "A lost"));
  uint8_t v = 0;
  OK(rig_buffer_read_into(z, 0, &v, 1));
  assert_int_equal(v, 3);
  OK(rig_buffer_read_into(early, 0, &v, 1)); /* its use by A was reached */
  assert_int_equal(v, 1);
  STATUS(RIG_LOST, rig_buffer_read_into(x, 0, &v, 1)); /* its last write never will be */
  STATUS(RIG_LOST, rt_try_copy(a, early, early, NULL, 0, NULL));
  rig_device_info info = {sizeof info};
  OK(rig_device_get_info(a, &info));
  assert_int_equal(info.lost, 1);
  rig_buffer all[] = {x, y, z, early, x_on_b};
  for (int i = 0; i < 5; ++i) OK(rig_buffer_release(all[i]));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
  OK(rig_device_release(c));
}

/* Work a driver cannot take (a binding past its limit) is refused by rig_submit, before the turn: the
 * device keeps its timeline and takes the next run. Without the check the driver's hand_over would refuse
 * it, which loses the device. */
static void work_the_driver_cannot_take_is_refused_before_the_turn(void **state) {
  (void)state;
  rig_device a;
  OK(tdrv_open("A", &a));
  tdrv_set_binding_limit(a, 1024);
  rig_buffer small = rt_create(a, 1024), big = rt_create(a, 4096), big2 = rt_create(a, 4096);
  rig_part copy = rt_copy_part();
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission sub;
  rig_run run;
  OK(rig_submission_make(a, &copy, 1, access, 2, &sub));
  OK(rig_run_take(sub, &run));
  OK(rig_run_set_buffer(run, 0, big));
  OK(rig_run_set_buffer(run, 1, big2));
  STATUS(RIG_INVALID_ARGUMENT, rig_submit(run, NULL, 0, NULL));
  assert_non_null(strstr(rig_last_error(), "limit of 1024"));
  OK(rig_run_release(run));
  OK(rig_submission_release(sub));
  assert_int_equal(rt_submitted(a), 0);
  rig_buffer half = NULL;
  OK(rig_buffer_view(big, 0, 1024, &half));
  rig_point p = rt_copy(a, half, small); /* within the limit: taken */
  OK(rig_wait_point(p, UINT64_MAX));
  assert_int_equal(rt_submitted(a), 1);
  rig_device_info info = {sizeof info};
  OK(rig_device_get_info(a, &info));
  assert_int_equal(info.lost, 0);
  OK(rig_buffer_release(half));
  OK(rig_buffer_release(big2));
  OK(rig_buffer_release(big));
  OK(rig_buffer_release(small));
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(signaled_shows_held_work_only_after_a_wait_commits_it),
      cmocka_unit_test(work_the_driver_cannot_take_is_refused_before_the_turn),
      cmocka_unit_test(a_queue_wait_on_held_work_commits_the_producer_first),
      cmocka_unit_test(held_work_is_committed_by_itself_after_k_values),
      cmocka_unit_test(an_empty_submit_takes_a_value),
      cmocka_unit_test(a_blocked_hand_over_holds_only_its_devices_turn),
      cmocka_unit_test(a_full_queue_makes_progress_before_taking_more),
      cmocka_unit_test(waits_time_out_are_interrupted_and_refuse_the_future),
      cmocka_unit_test(a_hang_past_the_bound_loses_the_device),
      cmocka_unit_test(a_fault_loses_the_device_and_what_waits_on_it),
  };
  return cmocka_run_group_tests_name("timeline", tests, NULL, NULL);
}
