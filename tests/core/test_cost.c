/* Cost promises: a submit (or a batch, rig_submit_many) that does not wait allocates nothing on the heap (counted by a malloc hook), and
 * submit cost does not grow with history length (a ratio measured in one run, not a timed assertion). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rigtest.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOOKED 0
#else
#define HOOKED 1
/* Counting malloc: glibc's own entry points do the work; the counter is all this adds. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static volatile int counting;
static volatile long allocations;
void *malloc(size_t n) {
  if (counting) ++allocations;
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  if (counting) ++allocations;
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
  if (counting) ++allocations;
  return __libc_realloc(p, n);
}
#endif

static rig_run copy_run(rig_device d, rig_buffer src, rig_buffer dst, rig_submission *sub) {
  rig_part p = {sizeof p};
  p.kind = RIG_PART_COPY;
  p.src_slot = 0;
  p.dst_slot = 1;
  p.length = RIG_WHOLE;
  rig_access a[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_run r;
  OK(rig_submission_make(d, &p, 1, a, 2, sub));
  OK(rig_run_take(*sub, &r));
  OK(rig_run_set_buffer(r, 0, src));
  OK(rig_run_set_buffer(r, 1, dst));
  return r;
}

static void a_submit_that_does_not_wait_allocates_nothing(void **state) {
  (void)state;
#if !HOOKED
  fprintf(stderr, "SKIP: a sanitizer owns malloc here; the count runs in the plain build\n");
  skip();
#else
  rig_device a, b;
  OK(rig_memory_device("A", &a));
  OK(rig_memory_device("B", &b));
  rig_buffer x = rt_create(a, 4096), y = rt_create(b, 4096), z = rt_create(a, 4096);
  rig_buffer x_on_b = rt_borrow(b, x);
  rig_submission s1, s2, s3;
  rig_run ra = copy_run(a, z, x, &s1);         /* A writes x (from z: a copy onto itself is refused) */
  rig_run rb = copy_run(b, x_on_b, y, &s2);    /* B reads x: a foreign last write, already reached */
  rig_run empty;
  OK(rig_submission_make(a, NULL, 0, NULL, 0, &s3));
  OK(rig_run_take(s3, &empty));
  rig_point waits[1];
  OK(rig_submit(ra, NULL, 0, &waits[0]));
  /* A batch (rig_submit_many) that does not wait: the copy, the empty run, and B's run after a wait. */
  rig_run batch_a[2] = {ra, empty};
  rig_point points[2];
  counting = 1;
  for (int i = 0; i < 1000; ++i) {
    OK(rig_submit(ra, NULL, 0, NULL));
    OK(rig_submit(rb, waits, 1, NULL));
    OK(rig_submit(empty, NULL, 0, NULL));
    OK(rig_submit_many(batch_a, 2, NULL, 0, points));
    OK(rig_submit_many(&rb, 1, waits, 1, NULL));
  }
  counting = 0;
  printf("allocations in 3000 submits and 2000 batches: %ld\n", allocations);
  assert_int_equal(allocations, 0);
  rig_run_release(ra), rig_run_release(rb), rig_run_release(empty);
  rig_submission_release(s1), rig_submission_release(s2), rig_submission_release(s3);
  rig_buffer_release(x_on_b), rig_buffer_release(x), rig_buffer_release(y), rig_buffer_release(z);
  rig_device_release(a), rig_device_release(b);
#endif
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Best of several windows of 2000 submits, after `history` submits have gone before. */
static double ns_per_submit(rig_run r, long history) {
  for (long i = 0; i < history; ++i) OK(rig_submit(r, NULL, 0, NULL));
  double best = 1e30;
  for (int w = 0; w < 7; ++w) {
    double t0 = now_ns();
    for (int i = 0; i < 2000; ++i) rig_submit(r, NULL, 0, NULL);
    double t = (now_ns() - t0) / 2000;
    if (t < best) best = t;
  }
  return best;
}

static void submit_cost_does_not_grow_with_history(void **state) {
  (void)state;
  rig_device a, b;
  OK(rig_memory_device("A", &a));
  OK(rig_memory_device("B", &b));
  rig_buffer x = rt_create(a, 64), y = rt_create(b, 64), z = rt_create(a, 64);
  rig_buffer x_on_b = rt_borrow(b, x);
  rig_submission s1, s2;
  rig_run ra = copy_run(a, z, x, &s1), rb = copy_run(b, x_on_b, y, &s2);
  OK(rig_submit(ra, NULL, 0, NULL));
  double short_history = ns_per_submit(rb, 1000);
  double long_history = ns_per_submit(rb, 300000);
  printf("submit after 1e3: %.1f ns, after 3e5: %.1f ns, ratio %.2f\n", short_history, long_history,
         long_history / short_history);
  /* Flat is the promise; 3x leaves room for a noisy shared machine while catching any growth with history. */
  assert_true(long_history / short_history < 3.0);
  rig_run_release(ra), rig_run_release(rb);
  rig_submission_release(s1), rig_submission_release(s2);
  rig_buffer_release(x_on_b), rig_buffer_release(x), rig_buffer_release(y), rig_buffer_release(z);
  rig_device_release(a), rig_device_release(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_submit_that_does_not_wait_allocates_nothing),
      cmocka_unit_test(submit_cost_does_not_grow_with_history),
  };
  return cmocka_run_group_tests_name("cost", tests, NULL, NULL);
}
