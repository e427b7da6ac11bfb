/* What the CUDA driver asks of the driver API per submit, counted by the fake libcuda. A chain of copies
 * alternating between two devices must cost what a program written by hand with streams and events costs
 * (a cuStreamWaitEvent, the copy, a cuEventRecord), with no query of the device on the submit path: every
 * extra call is host time on every operation (issue 4's goal is rig within 5% of the hand-written chain).
 * With RIG_CUDA_TIMELINE=memops the counts of that timeline are checked instead. Fake only: on a real GPU
 * the cases skip with the reason. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_test.h"

#define OPS 3000 /* about three rings of events: reusing entries must stay cheap too */
#define BYTES 4096

static int memops_timeline(void) {
  const char *t = getenv("RIG_CUDA_TIMELINE");
  const char *m = getenv("FAKECUDA_MEMOPS");
  return t && strcmp(t, "memops") == 0 && !(m && atoi(m) == 0);
}

static long long q(const char *counter) { return gt_query(counter); }

/* Opens devices n0 and n1, x and y on n0 (borrowed by n1: x[1], y[1]), x holding `pattern` (filled here);
 * 0 where a device does not open (the test is skipped). */
static int open_chain(const char *n0, const char *n1, rig_device dev[2], rig_buffer x[2], rig_buffer y[2],
                      unsigned char pattern[BYTES]) {
  if (!gt_open(n0, &dev[0]) || !gt_open(n1, &dev[1])) return 0;
  OK(rig_buffer_create(dev[0], BYTES, RIG_MEMORY_DEVICE, &x[0]));
  OK(rig_buffer_create(dev[0], BYTES, RIG_MEMORY_DEVICE, &y[0]));
  x[1] = rt_borrow(dev[1], x[0]);
  y[1] = rt_borrow(dev[1], y[0]);
  for (int i = 0; i < BYTES; ++i) pattern[i] = (unsigned char)(i * 7 + 3);
  OK(rig_buffer_write_from(x[0], 0, pattern, BYTES));
  return 1;
}

/* Gives back a chain's runs (and their submissions where `sub` is not null), buffers and devices. */
static void release_chain(rig_device dev[2], rig_buffer x[2], rig_buffer y[2], rig_run forth[2], rig_run back[2],
                          rig_submission *sub) {
  for (int d = 0; d < 2; ++d) {
    OK(rig_run_release(forth[d]));
    OK(rig_run_release(back[d]));
    if (sub) OK(rig_submission_release(sub[d]));
  }
  for (int d = 1; d >= 0; --d) {
    OK(rig_buffer_release(x[d]));
    OK(rig_buffer_release(y[d]));
  }
  OK(rig_device_release(dev[1]));
  OK(rig_device_release(dev[0]));
}

/* Runs the chain x->y, y->x, ... alternating between devices named n0 and n1, then checks the counts. */
static void chain(const char *n0, const char *n1) {
  GT_FAKE_ONLY();
  gt_set("reset", 0);
  rig_device dev[2];
  rig_buffer x[2], y[2];
  static unsigned char pattern[BYTES], got[BYTES];
  if (!open_chain(n0, n1, dev, x, y, pattern)) return;

  rig_part copy = rt_copy_part();
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission sub[2];
  rig_run forth[2], back[2];
  for (int d = 0; d < 2; ++d) {
    OK(rig_submission_make(dev[d], &copy, 1, access, 2, &sub[d]));
    OK(rig_run_take(sub[d], &forth[d]));
    OK(rig_run_set_buffer(forth[d], 0, x[d]));
    OK(rig_run_set_buffer(forth[d], 1, y[d]));
    OK(rig_run_take(sub[d], &back[d]));
    OK(rig_run_set_buffer(back[d], 0, y[d]));
    OK(rig_run_set_buffer(back[d], 1, x[d]));
  }

  const char *counters[] = {"copies", "event_records", "event_waits", "event_queries", "event_syncs",
                            "write_values", "wait_values"};
  long long before[7];
  for (int i = 0; i < 7; ++i) before[i] = q(counters[i]);
  rig_point last = 0;
  for (int i = 0; i < OPS; ++i) OK(rig_submit(i % 2 ? back[i % 2] : forth[i % 2], NULL, 0, &last));
  long long n[7];
  for (int i = 0; i < 7; ++i) n[i] = q(counters[i]) - before[i];
  fprintf(stderr, "%s/%s, %s timeline, %d ops: copies %lld, event records %lld, event waits %lld, queries %lld, "
          "synchronizes %lld, value writes %lld, value waits %lld\n", n0, n1, memops_timeline() ? "memops" : "events",
          OPS, n[0], n[1], n[2], n[3], n[4], n[5], n[6]);
  OK(rig_wait_point(last, UINT64_MAX));
  OK(rig_buffer_read_into(y[0], 0, got, BYTES));
  assert_memory_equal(got, pattern, BYTES);

  int same_gpu = strcmp(n0, n1) == 0;
  assert_int_equal(n[0], OPS);
  if (!memops_timeline()) {
    /* The hand-written chain's calls: one record per op, one wait per edge, nothing else. */
    assert_int_equal(n[1], OPS);
    assert_int_equal(n[2], OPS - 1);
    assert_int_equal(n[5] + n[6], 0);
    /* Making room in the ring: a question per half ring at most. */
    assert_true(n[3] + n[4] <= 2 * (OPS / 512 + 1));
  } else {
    /* One value write per op; an edge on one GPU is an event at the producer's tail, across GPUs a value
     * wait. The host reads the word, so a producer seen done needs no wait: at most one per edge. */
    assert_int_equal(n[5], OPS);
    assert_true(n[2] + n[6] <= OPS - 1);
    assert_int_equal(same_gpu ? n[6] : n[2], 0);
    assert_true(n[1] <= (same_gpu ? OPS - 1 : 0));
    assert_int_equal(n[3] + n[4], 0);
  }

  release_chain(dev, x, y, forth, back, sub);
}

static void test_a_chain_on_one_gpu_costs_the_hand_written_calls(void **state) {
  (void)state;
  chain("cuda:0", "cuda:0");
}

static void test_a_chain_across_two_gpus_costs_the_hand_written_calls(void **state) {
  (void)state;
  chain("cuda:0", "cuda:1");
}

/* A point older than its device's newest value is asked about once (likely done) and then known: reading
 * a buffer another device wrote long ago costs no wait at all, not a wait on every submit. */
static void test_an_old_point_is_asked_about_once_then_never_waited_on(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  gt_set("reset", 0);
  rig_device a, b;
  if (!gt_open("cuda:0", &a) || !gt_open("cuda:0", &b)) return;
  rig_buffer x, z, y;
  OK(rig_buffer_create(a, BYTES, RIG_MEMORY_DEVICE, &x));
  OK(rig_buffer_create(a, BYTES, RIG_MEMORY_DEVICE, &z));
  OK(rig_buffer_create(b, BYTES, RIG_MEMORY_DEVICE, &y));
  rig_buffer xb = rt_borrow(b, x);
  rt_fill(a, x, 7);                              /* a's value 1: the write b will read */
  for (int i = 0; i < 10; ++i) rt_fill(a, z, i); /* a moves on: its newest is 11 */
  /* the fake's streams run them meanwhile; no host wait tells rig (a loaded machine may take a while) */
  struct timespec pause = {0, 1000 * 1000};
  for (int i = 0; i < 10000 && q("ops_pending") != 0; ++i) nanosleep(&pause, NULL);
  assert_int_equal(q("ops_pending"), 0);
  long long waits0 = q("event_waits") + q("wait_values"), queries0 = q("event_queries");
  rig_point last = 0;
  for (int i = 0; i < 100; ++i) last = rt_copy(b, xb, y);
  long long waits = q("event_waits") + q("wait_values") - waits0, queries = q("event_queries") - queries0;
  fprintf(stderr, "100 reads of a's old write on b: %lld in-queue waits, %lld queries\n", waits, queries);
  assert_int_equal(waits, 0);
  assert_true(queries <= 1);
  OK(rig_wait_point(last, UINT64_MAX));
  static unsigned char got[BYTES], want[BYTES];
  memset(want, 7, BYTES);
  OK(rig_buffer_read_into(y, 0, got, BYTES));
  assert_memory_equal(got, want, BYTES);
  rig_buffer all[] = {xb, y, z, x};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(all[i]));
  OK(rig_device_release(b));
  OK(rig_device_release(a));
}

/* A run recorded while its device was well (its copy's call prepared when its buffers were set) enqueues
 * nothing once the device is lost. The loss comes from another GPU: cuda:1's launch faults, and cuda:0 is
 * lost because its queue waited for that launch; cuda:0's own context stays usable (the fake would take a
 * copy), so only rig's loss checks keep the recorded copy off its stream. */
/* A chain far ahead of the GPU (every copy slowed by the fake): each device keeps its in-queue waits in a
 * ring of 2048 (drivers/stream/queued_waits.h), and where the ring is full of waits its timeline has not
 * passed, the submit waits on the host (as a full queue does) instead of growing a list. So right after
 * the last submit neither device is more than about the ring behind; the memory-operation timeline has no
 * other bound (the event timeline's ring of 1024 events bounds it sooner), and every byte is right. */
#define FAR_OPS 6000
static void test_a_chain_far_ahead_of_the_gpu_stays_within_the_ring_of_waits(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  gt_set("reset", 0);
  gt_set("copy_delay_us", 20);
  rig_device dev[2];
  rig_buffer x[2], y[2];
  static unsigned char pattern[BYTES], got[BYTES];
  if (!open_chain("cuda:0", "cuda:0", dev, x, y, pattern)) return;
  rig_run forth[2], back[2];
  for (int d = 0; d < 2; ++d) forth[d] = rt_copy_run(dev[d], x[d], y[d]), back[d] = rt_copy_run(dev[d], y[d], x[d]);
  rig_point last = 0;
  for (int i = 0; i < FAR_OPS; ++i) OK(rig_submit(i % 2 ? back[i % 2] : forth[i % 2], NULL, 0, &last));
  for (int d = 0; d < 2; ++d) {
    uint64_t submitted = 0, signaled = 0;
    OK(rig_device_submitted(dev[d], &submitted));
    OK(rig_device_signaled(dev[d], &signaled));
    fprintf(stderr, "device %d: %llu submitted, %llu reached after the last submit\n", d,
            (unsigned long long)submitted, (unsigned long long)signaled);
    assert_true(submitted - signaled <= 2048 + 64);
  }
  OK(rig_wait_point(last, UINT64_MAX));
  OK(rig_buffer_read_into(y[0], 0, got, BYTES));  /* an even count of copies: the last y->x, y holds it too */
  assert_memory_equal(got, pattern, BYTES);
  gt_set("copy_delay_us", 0);
  release_chain(dev, x, y, forth, back, NULL);
}

/* A timeline's events are recorded in turn from a window (RIG_EVENT_WINDOW, drivers/stream/timeline.h). A
 * window of 2 with the GPU far behind (every copy slowed by the fake) widens as the values in flight grow,
 * a question each time, and never blocks the host where a ring of 2 would at every other submit; every
 * byte is right. Values that are not a window are refused when a device opens, naming the variable. */
#define WINDOW_OPS 100
static void test_a_small_event_window_widens_instead_of_blocking(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  if (memops_timeline()) skip();  /* no events to record in turn */
  const char *refused[] = {"3", "1", "2048", "16k"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    setenv("RIG_EVENT_WINDOW", refused[i], 1);
    rig_device d;
    assert_int_equal(rig_device_open("cuda:0", &d), RIG_INVALID_ARGUMENT);
    assert_non_null(strstr(rig_last_error(), "RIG_EVENT_WINDOW"));
  }
  gt_set("reset", 0);
  gt_set("copy_delay_us", 200);
  setenv("RIG_EVENT_WINDOW", "2", 1);
  rig_device dev[2];
  rig_buffer x[2], y[2];
  static unsigned char pattern[BYTES], got[BYTES];
  int opened = open_chain("cuda:0", "cuda:0", dev, x, y, pattern);
  unsetenv("RIG_EVENT_WINDOW");
  if (!opened) return;
  rig_run forth[2], back[2];
  for (int d = 0; d < 2; ++d) forth[d] = rt_copy_run(dev[d], x[d], y[d]), back[d] = rt_copy_run(dev[d], y[d], x[d]);
  long long records0 = q("event_records"), waits0 = q("event_waits"), queries0 = q("event_queries"),
            syncs0 = q("event_syncs");
  rig_point last = 0;
  for (int i = 0; i < WINDOW_OPS; ++i) OK(rig_submit(i % 2 ? back[i % 2] : forth[i % 2], NULL, 0, &last));
  long long records = q("event_records") - records0, waits = q("event_waits") - waits0,
            queries = q("event_queries") - queries0, syncs = q("event_syncs") - syncs0;
  uint64_t signaled = 0;
  OK(rig_device_signaled(dev[1], &signaled));
  fprintf(stderr, "window 2, %d ops: records %lld, waits %lld, queries %lld, synchronizes %lld; device 1 at %llu of %d\n",
          WINDOW_OPS, records, waits, queries, syncs, (unsigned long long)signaled, WINDOW_OPS / 2);
  assert_int_equal(records, WINDOW_OPS);
  assert_int_equal(waits, WINDOW_OPS - 1);
  assert_int_equal(syncs, 0);
  assert_true(queries <= 16);  /* a question before each widening (2 to 64), and a few that found room */
  OK(rig_wait_point(last, UINT64_MAX));
  OK(rig_buffer_read_into(y[0], 0, got, BYTES));
  assert_memory_equal(got, pattern, BYTES);
  gt_set("copy_delay_us", 0);
  release_chain(dev, x, y, forth, back, NULL);
}

static void test_a_lost_device_replays_no_recorded_run(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  gt_set("reset", 0);
  rig_device d, a;
  if (!gt_open("cuda:0", &d) || !gt_open("cuda:1", &a)) return;
  rig_module ma = gt_kernels(a);
  rig_buffer x, y, w;
  OK(rig_buffer_create(d, BYTES, RIG_MEMORY_DEVICE, &x));
  OK(rig_buffer_create(d, BYTES, RIG_MEMORY_DEVICE, &y));
  OK(rig_buffer_create(a, BYTES, RIG_MEMORY_DEVICE, &w));
  rig_buffer wd = rt_borrow(d, w);
  rig_run run = rt_copy_run(d, x, y);
  rig_point p = 0;
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_wait_point(p, UINT64_MAX));
  /* cuda:1's next launch faults on its stream, late enough that its submit returns first. */
  gt_set("fail_launch_at", 1);
  gt_set("launch_delay_us", 20000);
  gt_fill_u32(a, ma, w, BYTES / 4, 1);
  STATUS(RIG_LOST, rig_wait_point(rt_copy(d, wd, x), UINT64_MAX)); /* cuda:0's queue waited for it */
  long long copies = q("copies");
  STATUS(RIG_LOST, rig_submit(run, NULL, 0, &p));
  STATUS(RIG_LOST, rig_submit(run, NULL, 0, &p));
  assert_int_equal(q("copies"), copies);
  OK(rig_run_release(run));
  rig_buffer bufs[] = {wd, x, y, w};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(bufs[i]));
  OK(rig_module_release(ma));
  OK(rig_device_release(a));
  OK(rig_device_release(d));
  gt_set("reset", 0);
}

int main(void) {
  if (!gt_available()) return 77;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_chain_on_one_gpu_costs_the_hand_written_calls),
      cmocka_unit_test(test_a_chain_across_two_gpus_costs_the_hand_written_calls),
      cmocka_unit_test(test_an_old_point_is_asked_about_once_then_never_waited_on),
      cmocka_unit_test(test_a_small_event_window_widens_instead_of_blocking),
      /* last: it loses the devices it opens */
      cmocka_unit_test(test_a_chain_far_ahead_of_the_gpu_stays_within_the_ring_of_waits),
      cmocka_unit_test(test_a_lost_device_replays_no_recorded_run),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
