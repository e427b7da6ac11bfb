/* rig_submit_many through the C face on memory devices: its refusals (no runs, null runs, too many, runs of
 * two devices, a run not ready, a released run, a run named twice, null or bad waits) each answer before
 * anything is assigned and leave every byte as it was (all or nothing); a batch takes consecutive values in
 * order, runs its runs in that order (each reading what the one before wrote), and takes null points. */
#include <string.h>

#include "rigtest.h"

#define N 4
#define BYTES 64

typedef struct {
  rig_device a, b;
  rig_buffer x[N + 1]; /* on a: run i copies x[i] into x[i+1] */
  rig_buffer y;        /* on b */
  rig_run runs[N];
} fixture;

static void fill_pattern(fixture *f) {
  for (int i = 0; i <= N; ++i) {
    unsigned char bytes[BYTES];
    memset(bytes, 'a' + i, sizeof bytes);
    OK(rig_buffer_write_from(f->x[i], 0, bytes, sizeof bytes));
  }
}

static void setup(fixture *f) {
  OK(rig_memory_device("A", &f->a));
  OK(rig_memory_device("B", &f->b));
  for (int i = 0; i <= N; ++i) f->x[i] = rt_create(f->a, BYTES);
  f->y = rt_create(f->b, BYTES);
  for (int i = 0; i < N; ++i) f->runs[i] = rt_copy_run(f->a, f->x[i], f->x[i + 1]);
  fill_pattern(f);
}

static void teardown(fixture *f) {
  for (int i = 0; i < N; ++i)
    if (f->runs[i]) OK(rig_run_release(f->runs[i]));
  for (int i = 0; i <= N; ++i) OK(rig_buffer_release(f->x[i]));
  OK(rig_buffer_release(f->y));
  OK(rig_device_release(f->b));
  OK(rig_device_release(f->a));
}

/* Nothing assigned on either device and every x[i] still holds its own letter. */
static void assert_untouched(const fixture *f, uint64_t a_before, uint64_t b_before) {
  assert_int_equal(rt_submitted(f->a), a_before);
  assert_int_equal(rt_submitted(f->b), b_before);
  for (int i = 0; i <= N; ++i) {
    unsigned char got[BYTES], want[BYTES];
    memset(want, 'a' + i, sizeof want);
    OK(rig_buffer_read_into(f->x[i], 0, got, sizeof got));
    assert_memory_equal(got, want, sizeof want);
  }
}

static void a_batch_takes_consecutive_values_and_runs_in_order(void **state) {
  (void)state;
  fixture f;
  setup(&f);
  uint64_t before = rt_submitted(f.a);
  rig_point points[N];
  OK(rig_submit_many(f.runs, N, NULL, 0, points));
  for (int i = 0; i < N; ++i) {
    assert_int_equal(rig_point_value(points[i]), before + 1 + (uint64_t)i);
    assert_int_equal(rig_point_device_index(points[i]), rig_point_device_index(points[0]));
  }
  assert_int_equal(rt_submitted(f.a), before + N);
  /* Run i read what run i-1 wrote: every x[i] holds x[0]'s letter. */
  for (int i = 0; i <= N; ++i) {
    unsigned char got[BYTES], want[BYTES];
    memset(want, 'a', sizeof want);
    OK(rig_buffer_read_into(f.x[i], 0, got, sizeof got));
    assert_memory_equal(got, want, sizeof want);
  }
  /* Null points: the values are taken all the same. */
  OK(rig_submit_many(f.runs, N, NULL, 0, NULL));
  assert_int_equal(rt_submitted(f.a), before + 2 * N);
  /* A batch of one is a submit. */
  OK(rig_submit_many(f.runs, 1, NULL, 0, points));
  assert_int_equal(rig_point_value(points[0]), before + 2 * N + 1);
  teardown(&f);
}

static void every_refusal_comes_before_anything_is_assigned(void **state) {
  (void)state;
  fixture f;
  setup(&f);
  uint64_t a0 = rt_submitted(f.a), b0 = rt_submitted(f.b);
  rig_point points[N];

  STATUS(RIG_INVALID_ARGUMENT, rig_submit_many(f.runs, 0, NULL, 0, points));
  STATUS(RIG_INVALID_ARGUMENT, rig_submit_many(NULL, 2, NULL, 0, points));
  STATUS(RIG_INVALID_ARGUMENT, rig_submit_many(f.runs, RIG_SUBMIT_MANY_MAX + 1, NULL, 0, points));
  assert_untouched(&f, a0, b0);

  /* Runs of two devices: the last run on b. */
  rig_run mixed[N];
  memcpy(mixed, f.runs, sizeof mixed);
  mixed[N - 1] = rt_fill_run(f.b, f.y, 7);
  STATUS(RIG_INVALID_ARGUMENT, rig_submit_many(mixed, N, NULL, 0, points));
  assert_untouched(&f, a0, b0);
  OK(rig_run_release(mixed[N - 1]));

  /* A run not ready (its slot 1 never set), after runs that are. */
  rig_part copy = rt_copy_part();
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission sub;
  rig_run unready;
  OK(rig_submission_make(f.a, &copy, 1, access, 2, &sub));
  OK(rig_run_take(sub, &unready));
  OK(rig_run_set_buffer(unready, 0, f.x[0]));
  OK(rig_submission_release(sub));
  rig_run with_unready[N];
  memcpy(with_unready, f.runs, sizeof with_unready);
  with_unready[N - 1] = unready;
  STATUS(RIG_INVALID_ARGUMENT, rig_submit_many(with_unready, N, NULL, 0, points));
  assert_untouched(&f, a0, b0);

  /* A released run. */
  OK(rig_run_release(unready));
  STATUS(RIG_INVALID_HANDLE, rig_submit_many(with_unready, N, NULL, 0, points));
  assert_untouched(&f, a0, b0);

  /* A run named twice: the second pin finds it held, as a second thread's submit would. */
  rig_run twice[2] = {f.runs[0], f.runs[0]};
  STATUS(RIG_BUSY, rig_submit_many(twice, 2, NULL, 0, points));
  assert_untouched(&f, a0, b0);

  /* Waits: null for a count, and a point past its device's submitted value. */
  STATUS(RIG_INVALID_ARGUMENT, rig_submit_many(f.runs, N, NULL, 1, points));
  rig_point later = rig_point_make(rig_point_device_index(rt_fill(f.b, f.y, 1)), b0 + 5);
  STATUS(RIG_INVALID_ARGUMENT, rig_submit_many(f.runs, N, &later, 1, points));
  assert_untouched(&f, a0, b0 + 1);

  /* And the same runs then go, all of them. */
  OK(rig_submit_many(f.runs, N, NULL, 0, points));
  assert_int_equal(rt_submitted(f.a), a0 + N);
  teardown(&f);
}

static void a_batch_follows_its_waits_and_other_devices_writes(void **state) {
  (void)state;
  fixture f;
  setup(&f);
  /* b writes y, borrowed on a; the batch's second run reads it (rule 3), after an explicit wait (rule 2). */
  rig_buffer y_a = rt_borrow(f.a, f.y);
  unsigned char zs[BYTES];
  memset(zs, 'z', sizeof zs);
  OK(rig_buffer_write_from(f.y, 0, zs, sizeof zs));
  rig_point on_b = rt_fill(f.b, f.y, 'q');
  rig_run runs[2] = {f.runs[0], rt_copy_run(f.a, y_a, f.x[2])};
  rig_point points[2];
  OK(rig_submit_many(runs, 2, &on_b, 1, points));
  unsigned char got[BYTES], want[BYTES];
  memset(want, 'q', sizeof want);
  OK(rig_buffer_read_into(f.x[2], 0, got, sizeof got));
  assert_memory_equal(got, want, sizeof want);
  memset(want, 'a', sizeof want);
  OK(rig_buffer_read_into(f.x[1], 0, got, sizeof got));
  assert_memory_equal(got, want, sizeof want);
  OK(rig_run_release(runs[1]));
  OK(rig_buffer_release(y_a));
  teardown(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_batch_takes_consecutive_values_and_runs_in_order),
      cmocka_unit_test(every_refusal_comes_before_anything_is_assigned),
      cmocka_unit_test(a_batch_follows_its_waits_and_other_devices_writes),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
