/* A run used by two threads at once (rig.h, Domains): the second call is refused with RIG_BUSY and changes
 * nothing, whether it submits or sets a buffer or scalars; once the first call returns the run works. A run
 * released by one thread while another submits it: the release waits for the submit in progress, and no
 * call ever uses the freed run (AddressSanitizer and ThreadSanitizer builds run these too). */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

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

/* A run on `a` of one host kernel writing x that holds its thread until g->go; *sub keeps its submission. */
static rig_run held_run(rig_device a, rig_buffer x, gate *g, rig_submission *sub) {
  rig_part part = {sizeof part, RIG_PART_HOST_KERNEL};
  part.fn = held_kernel;
  part.user = g;
  rig_access access = RIG_ACCESS_WRITE;
  rig_run run;
  OK(rig_submission_make(a, &part, 1, &access, 1, sub));
  OK(rig_run_take(*sub, &run));
  OK(rig_run_set_buffer(run, 0, x));
  return run;
}

/* A held run on memory device A that another thread is submitting: made by held_submit_start, which
 * returns once that thread's submit is inside its kernel (the run pinned); g.go lets it finish. */
typedef struct {
  rig_device a;
  rig_buffer x;
  gate g;
  rig_submission sub;
  rig_run run;
  rig_status status; /* the other thread's submit, once joined */
  pthread_t thread;
} held_submit;

static void *submit_run(void *arg) {
  held_submit *h = arg;
  h->status = rig_submit(h->run, NULL, 0, NULL);
  return NULL;
}

static void held_submit_start(held_submit *h) {
  OK(rig_memory_device("A", &h->a));
  h->x = rt_create(h->a, 64);
  atomic_init(&h->g.running, 0);
  atomic_init(&h->g.go, 0);
  h->run = held_run(h->a, h->x, &h->g, &h->sub);
  h->status = RIG_DRIVER;
  assert_int_equal(pthread_create(&h->thread, NULL, submit_run, h), 0);
  while (!atomic_load(&h->g.running)) {
  }
}

static void a_run_submitted_by_two_threads_at_once_is_refused_busy(void **state) {
  (void)state;
  held_submit h;
  held_submit_start(&h);
  rig_device a = h.a;
  rig_buffer x = h.x;
  rig_run run = h.run;
  /* The other thread's submit is in its kernel: every call on the run is refused. */
  STATUS(RIG_BUSY, rig_submit(run, NULL, 0, NULL));
  assert_non_null(strstr(rig_last_error(), "another thread"));
  STATUS(RIG_BUSY, rig_run_set_buffer(run, 0, x));
  STATUS(RIG_BUSY, rig_run_set_scalars(run, "ab", 2));
  assert_int_equal(rt_submitted(a), 0); /* nothing assigned by the refused submit */
  atomic_store(&h.g.go, 1);
  assert_int_equal(pthread_join(h.thread, NULL), 0);
  OK(h.status);
  assert_int_equal(rt_submitted(a), 1);
  /* Alone again: the run works. */
  OK(rig_run_set_buffer(run, 0, x));
  OK(rig_submit(run, NULL, 0, NULL));
  assert_int_equal(rt_submitted(a), 2);
  OK(rig_run_release(run));
  OK(rig_submission_release(h.sub));
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

typedef struct {
  rig_run run;
  atomic_int released;
  rig_status status;
} releaser;

static void *release_run(void *arg) {
  releaser *r = arg;
  r->status = rig_run_release(r->run);
  atomic_store(&r->released, 1);
  return NULL;
}

static void a_run_released_while_another_thread_submits_it_is_freed_after_the_submit(void **state) {
  (void)state;
  held_submit h;
  held_submit_start(&h);
  rig_device a = h.a;
  rig_buffer x = h.x;
  rig_run run = h.run;
  OK(rig_submission_release(h.sub));
  pthread_t u;
  /* The submit is in its kernel, the run pinned: the release retires the handle and waits for the pin. */
  releaser r = {run, 0, RIG_DRIVER};
  assert_int_equal(pthread_create(&u, NULL, release_run, &r), 0);
  usleep(20000);
  assert_int_equal(atomic_load(&r.released), 0);
  /* Retired: refused, not busy. The releaser may not have run yet on a loaded machine (RIG_BUSY until it
   * retires the tag): ask again for up to 5 s, then the answer must be RIG_INVALID_HANDLE. */
  rig_status again = RIG_BUSY;
  for (int i = 0; i < 500 && (again = rig_submit(run, NULL, 0, NULL)) == RIG_BUSY; ++i) usleep(10000);
  STATUS(RIG_INVALID_HANDLE, again);
  atomic_store(&h.g.go, 1);
  assert_int_equal(pthread_join(h.thread, NULL), 0);
  assert_int_equal(pthread_join(u, NULL), 0);
  OK(h.status);
  OK(r.status);
  assert_int_equal(rt_submitted(a), 1);
  STATUS(RIG_INVALID_HANDLE, rig_submit(run, NULL, 0, NULL));
  STATUS(RIG_INVALID_HANDLE, rig_run_set_buffer(run, 0, x));
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Two threads submit one run of one copy (the inline path of memory devices: its points, of another
 * memory device, are reached) as fast as they can while a third releases it: every call answers OK,
 * RIG_BUSY (the other submitter's call in progress) or RIG_INVALID_HANDLE (released), each OK took one
 * value, and none touches the run once freed. */
typedef struct {
  rig_run run;
  atomic_int *start;
  long ok, busy;
  rig_status bad;
} hammer;

static void *hammer_run(void *arg) {
  hammer *h = arg;
  while (!atomic_load(h->start)) {
  }
  for (;;) {
    rig_status st = rig_submit(h->run, NULL, 0, NULL);
    if (st == RIG_OK)
      ++h->ok;
    else if (st == RIG_BUSY)
      ++h->busy;
    else if (st == RIG_INVALID_HANDLE)
      return NULL;
    else {
      h->bad = st;
      return NULL;
    }
  }
}

static void a_run_released_while_two_threads_submit_it_answers_ok_busy_or_invalid(void **state) {
  (void)state;
  rig_device a, b;
  OK(rig_memory_device("A", &a));
  OK(rig_memory_device("B", &b));
  rig_buffer x = rt_create_shared(a, 4096), y = rt_create_shared(a, 4096);
  rig_buffer xb = rt_borrow(b, x), yb = rt_borrow(b, y);
  long total = 0;
  for (int round = 0; round < 20; ++round) {
    /* b copies y into x first, so a's copy of x into y follows b's write of x and b's use of y */
    rig_run run = rt_copy_run(a, x, y), back = rt_copy_run(b, yb, xb);
    OK(rig_submit(back, NULL, 0, NULL));
    atomic_int start = 0;
    hammer h[2] = {{run, &start, 0, 0, RIG_OK}, {run, &start, 0, 0, RIG_OK}};
    pthread_t t[2];
    for (int i = 0; i < 2; ++i) assert_int_equal(pthread_create(&t[i], NULL, hammer_run, &h[i]), 0);
    uint64_t before = rt_submitted(a);
    atomic_store(&start, 1);
    usleep(100 * round);
    OK(rig_run_release(run));
    for (int i = 0; i < 2; ++i) assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; ++i) assert_int_equal(h[i].bad, RIG_OK);
    /* each OK took one value of a, and nothing else submitted on a */
    assert_int_equal(rt_submitted(a) - before, (uint64_t)(h[0].ok + h[1].ok));
    total += h[0].ok + h[1].ok;
    OK(rig_run_release(back));
  }
  assert_true(total > 0);
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(yb));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_run_submitted_by_two_threads_at_once_is_refused_busy),
      cmocka_unit_test(a_run_released_while_another_thread_submits_it_is_freed_after_the_submit),
      cmocka_unit_test(a_run_released_while_two_threads_submit_it_answers_ok_busy_or_invalid),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
