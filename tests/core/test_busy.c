/* A run used by two threads at once (rig.h, Domains): the second call is refused with RIG_BUSY and changes
 * nothing, whether it submits or sets a buffer or scalars; once the first call returns the run works. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "rigtest.h"

typedef struct {
  atomic_int running, go;
} gate;

static void held_kernel(void *user, const rig_span *slots, size_t n) {
  gate *g = user;
  (void)slots, (void)n;
  atomic_store(&g->running, 1);
  while (!atomic_load(&g->go)) {
  }
}

typedef struct {
  rig_run run;
  rig_status status;
} submitter;

static void *submit_run(void *arg) {
  submitter *s = arg;
  s->status = rig_submit(s->run, NULL, 0, NULL);
  return NULL;
}

static void a_run_submitted_by_two_threads_at_once_is_refused_busy(void **state) {
  (void)state;
  rig_device a;
  OK(rig_memory_device("A", &a));
  rig_buffer x = rt_create(a, 64);
  gate g = {0, 0};
  rig_part part = {sizeof part, RIG_PART_HOST_KERNEL};
  part.fn = held_kernel;
  part.user = &g;
  rig_access access = RIG_ACCESS_WRITE;
  rig_submission sub;
  rig_run run;
  OK(rig_submission_make(a, &part, 1, &access, 1, &sub));
  OK(rig_run_take(sub, &run));
  OK(rig_run_set_buffer(run, 0, x));
  submitter s = {run, RIG_DRIVER};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, submit_run, &s), 0);
  while (!atomic_load(&g.running)) {
  }
  /* The other thread's submit is in its kernel: every call on the run is refused. */
  STATUS(RIG_BUSY, rig_submit(run, NULL, 0, NULL));
  assert_non_null(strstr(rig_last_error(), "another thread"));
  STATUS(RIG_BUSY, rig_run_set_buffer(run, 0, x));
  STATUS(RIG_BUSY, rig_run_set_scalars(run, "ab", 2));
  assert_int_equal(rt_submitted(a), 0); /* nothing assigned by the refused submit */
  atomic_store(&g.go, 1);
  assert_int_equal(pthread_join(t, NULL), 0);
  OK(s.status);
  assert_int_equal(rt_submitted(a), 1);
  /* Alone again: the run works. */
  OK(rig_run_set_buffer(run, 0, x));
  OK(rig_submit(run, NULL, 0, NULL));
  assert_int_equal(rt_submitted(a), 2);
  OK(rig_run_release(run));
  OK(rig_submission_release(sub));
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_run_submitted_by_two_threads_at_once_is_refused_busy),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
