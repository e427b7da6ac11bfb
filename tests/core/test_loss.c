/* Loss for good (rig.h, Loss and rig_device_wait): from a device's loss on, it reaches no further value,
 * whatever its driver does later; a wait's answer never changes, RIG_LOST or RIG_OK. On the test driver
 * (a queue that keeps running after the fault, as work already on a GPU may) and on memory devices (a host
 * kernel still running when the device is lost). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <rig_testing.h>

#include "rigtest.h"
#include "test_driver.h"

/* Work queued on A completes after A's loss: none of it counts as reached; waits that answered RIG_LOST
 * before it ran answer RIG_LOST after; the value reached before the loss stays reached. */
static void work_completing_after_a_loss_is_never_reached(void **state) {
  (void)state;
  rig_device a, b;
  OK(tdrv_open("A", &a));
  OK(tdrv_open("B", &b));
  rig_buffer x = rt_create(a, 64), y = rt_create(a, 64), z = rt_create(b, 64);
  rig_point p1 = rt_fill(a, x, 1);
  rig_point p2 = rt_fill(a, y, 2);
  rt_fill(a, x, 3);
  assert_int_equal(tdrv_step(a, 1), 1);
  assert_int_equal(rt_signaled(a), 1);
  tdrv_lose(a, "pulled out", 1);
  assert_int_equal(rt_signaled(a), 1);
  OK(rig_device_wait(a, 1, UINT64_MAX));
  STATUS(RIG_LOST, rig_device_wait(a, 2, 0));
  assert_non_null(strstr(rig_last_error(), "pulled out"));
  STATUS(RIG_LOST, rig_wait_point(p2, UINT64_MAX));
  /* The driver runs values 2 and 3 after the fault. */
  assert_int_equal(tdrv_step(a, 2), 2);
  assert_int_equal(rt_signaled(a), 1); /* never 3, never below 1 */
  STATUS(RIG_LOST, rig_device_wait(a, 2, UINT64_MAX));
  STATUS(RIG_LOST, rig_device_wait(a, 3, UINT64_MAX));
  OK(rig_wait_point(p1, UINT64_MAX));
  uint8_t v = 0;
  STATUS(RIG_LOST, rig_buffer_read_into(y, 0, &v, 1)); /* its last write is A:2 */
  STATUS(RIG_LOST, rig_buffer_read_into(x, 0, &v, 1)); /* A:3 */
  /* Another device's submit that must pass A:2 is refused, and assigns nothing. */
  rig_buffer y_on_b = rt_borrow(b, y);
  STATUS(RIG_LOST, rt_try_copy(b, y_on_b, z, NULL, 0, NULL));
  assert_int_equal(rt_submitted(b), 0);
  /* Released, its unreached points still answer RIG_LOST. */
  rig_buffer all[] = {x, y, z, y_on_b};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(all[i]));
  OK(rig_device_release(a));
  STATUS(RIG_LOST, rig_wait_point(p2, UINT64_MAX));
  OK(rig_wait_point(p1, UINT64_MAX));
  OK(rig_device_release(b));
}

/* A memory device lost while a host kernel of its value 2 runs: the kernel ends after the loss, its submit
 * returns, and value 2 is still never reached; signaled stays at 1 throughout (it went 1 -> 0 -> 2 before). */
typedef struct {
  atomic_int running, go;
} gate;

static void held_kernel(void *user, const rig_span *slots, size_t n) {
  gate *g = user;
  atomic_store(&g->running, 1);
  while (!atomic_load(&g->go)) {
  }
  if (n) memset(slots[0].data, 9, slots[0].length);
}

typedef struct {
  rig_device device;
  rig_buffer buffer;
  gate *gate;
  rig_status status;
  rig_point point;
} submitter;

static void *submit_held(void *arg) {
  submitter *s = arg;
  rig_part part = {sizeof part, RIG_PART_HOST_KERNEL};
  part.fn = held_kernel;
  part.user = s->gate;
  rig_access access = RIG_ACCESS_WRITE;
  rig_submission sub;
  rig_run run;
  OK(rig_submission_make(s->device, &part, 1, &access, 1, &sub));
  OK(rig_run_take(sub, &run));
  OK(rig_run_set_buffer(run, 0, s->buffer));
  s->status = rig_submit(run, NULL, 0, &s->point);
  OK(rig_run_release(run));
  OK(rig_submission_release(sub));
  return NULL;
}

static void a_memory_device_lost_while_its_work_runs_reaches_no_further_value(void **state) {
  (void)state;
  rig_device a;
  OK(rig_memory_device("A", &a));
  rig_buffer x = rt_create(a, 64), y = rt_create(a, 64);
  rig_point p1 = rt_fill(a, x, 1);
  gate g = {0, 0};
  submitter s = {a, y, &g, RIG_DRIVER, 0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, submit_held, &s), 0);
  while (!atomic_load(&g.running)) {
  }
  OK(rig_testing_lose_device(a, "unplugged"));
  assert_int_equal(rt_signaled(a), 1);
  atomic_store(&g.go, 1);
  assert_int_equal(pthread_join(t, NULL), 0);
  /* The hand-over had begun before the loss: the submit returns its point, which is never reached. */
  OK(s.status);
  assert_int_equal(rig_point_value(s.point), 2);
  assert_int_equal(rt_signaled(a), 1);
  for (int i = 0; i < 2; ++i) {
    STATUS(RIG_LOST, rig_wait_point(s.point, UINT64_MAX));
    OK(rig_wait_point(p1, UINT64_MAX));
  }
  uint8_t v = 0;
  OK(rig_buffer_read_into(x, 0, &v, 1)); /* A:1 reached before the loss */
  assert_int_equal(v, 1);
  STATUS(RIG_LOST, rig_buffer_read_into(y, 0, &v, 1));
  STATUS(RIG_LOST, rt_try_copy(a, x, y, NULL, 0, NULL)); /* nothing new on a lost device */
  assert_int_equal(rt_submitted(a), 2);
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
}

/* The hook keeps what a memory device reached: only later values are lost. Another device goes on. */
static void a_lost_memory_device_keeps_the_values_it_reached(void **state) {
  (void)state;
  rig_device a, b;
  OK(rig_memory_device("A", &a));
  OK(rig_memory_device("B", &b));
  rig_buffer x = rt_create(a, 64), y = rt_create(b, 64);
  rig_point p = rt_fill(a, x, 1);
  OK(rig_testing_lose_device(a, "unplugged"));
  OK(rig_wait_point(p, UINT64_MAX));
  assert_int_equal(rt_signaled(a), 1);
  STATUS(RIG_LOST, rt_try_copy(a, x, x, NULL, 0, NULL));
  const char *why = NULL;
  OK(rig_device_lost_reason(a, &why));
  assert_string_equal(why, "unplugged");
  rig_buffer x_on_b = rt_borrow(b, x);
  rt_copy(b, x_on_b, y); /* x's last write, A:1, was reached */
  uint8_t v = 0;
  OK(rig_buffer_read_into(y, 0, &v, 1));
  assert_int_equal(v, 1);
  rig_device h;
  OK(rig_host(&h));
  STATUS(RIG_UNSUPPORTED, rig_testing_lose_device(h, "no"));
  rig_device t;
  OK(tdrv_open("T", &t));
  STATUS(RIG_UNSUPPORTED, rig_testing_lose_device(t, "no"));
  STATUS(RIG_INVALID_HANDLE, rig_testing_lose_device(NULL, "no"));
  OK(rig_buffer_release(x_on_b));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
  OK(rig_device_release(t));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(work_completing_after_a_loss_is_never_reached),
      cmocka_unit_test(a_memory_device_lost_while_its_work_runs_reaches_no_further_value),
      cmocka_unit_test(a_lost_memory_device_keeps_the_values_it_reached),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
