/* Loss: a launch fails while it runs (the fake's fail_launch_at; on a GPU, a kernel storing to an address no
 * allocation holds). Every later wait that must pass the lost point answers RIG_LOST, including a wait on
 * a device whose queue waited for that point; values reached before it stay reached; devices that do not
 * depend on it finish their work; nothing crashes and nothing leaks (run under AddressSanitizer).
 * One test per process: on a GPU the fault ends the context for the rest of the process. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"

/* A device opened on the other GPU after GPU 0's fault: it opens and its work finishes, or rig answers
 * RIG_LOST with the driver's reason (the fault ended that GPU's context too, as seen on the H200 pair);
 * never a crash, a hang or another status. */
static void check_other_gpu_after_the_fault(uint32_t n) {
  rig_device e;
  rig_status opened = rig_device_open(gt_name(1), &e);
  fprintf(stderr, "%s opened after %s's fault: %s%s%s\n", gt_name(1), gt_name(0), rig_status_name(opened), opened ? ": " : "",
          opened ? rig_last_error() : "");
  if (opened != RIG_OK) {
    assert_int_equal(opened, RIG_LOST);
    assert_non_null(strstr(rig_last_error(), gt_error_prefix()));
    return;
  }
  rig_buffer v = NULL, v2 = NULL;
  rig_status made = rig_buffer_create(e, n * 4, RIG_MEMORY_DEVICE, &v);
  if (made == RIG_OK) {
    made = rig_buffer_create(e, n * 4, RIG_MEMORY_DEVICE, &v2);
    if (made != RIG_OK) OK(rig_buffer_release(v));
  }
  assert_true(made == RIG_OK || made == RIG_LOST);
  if (made == RIG_OK) {
    rig_point pe = 0;
    rig_status s = rt_try_copy(e, v, v2, NULL, 0, &pe);
    if (s == RIG_OK) s = rig_wait_point(pe, UINT64_MAX);
    assert_true(s == RIG_OK || s == RIG_LOST);
    fprintf(stderr, "%s's work after %s's fault: %s%s%s\n", gt_name(1), gt_name(0), rig_status_name(s), s ? ": " : "",
            s ? rig_last_error() : "");
    if (s == RIG_LOST) assert_non_null(strstr(rig_last_error(), gt_error_prefix()));
    OK(rig_buffer_release(v2));
    OK(rig_buffer_release(v));
  } else {
    fprintf(stderr, "%s's buffer after %s's fault: %s\n", gt_name(1), gt_name(0), rig_last_error());
  }
  OK(rig_device_release(e));
}

static void test_a_launch_failing_mid_run_loses_its_device_and_what_waits_on_it(void **state) {
  (void)state;
  if (gt_fake()) gt_set("reset", 0);
  int two_gpus = gt_gpu_count() > 1;
  rig_device a, b, c, m;
  if (!gt_open(gt_name(0), &a)) return;
  /* b's queue will wait on a's lost point; c and m do independent work. On a single real GPU b and c
   * share a's context, which the fault ends: c is then a memory device's stand-in only. On two real GPUs
   * too: on the H200 pair (driver 580.159.04) a fault on cuda:0 also ended cuda:1's context in the same
   * process (its next launch failed, its stream answered CUDA_ERROR_ILLEGAL_ADDRESS), with or without peer
   * access; what rig owes there is a clear LOST, checked at the end. The fake keeps contexts apart. */
  if (!gt_open(gt_name(two_gpus ? 1 : 0), &b)) return;
  int c_is_gpu = two_gpus && gt_fake();
  if (c_is_gpu) {
    if (!gt_open(gt_name(1), &c)) return;
  } else {
    OK(rig_memory_device("C", &c));
  }
  OK(rig_memory_device("M", &m));
  rig_module ma = gt_kernels(a), mb = gt_kernels(b), mc = c_is_gpu ? gt_kernels(c) : NULL;
  const uint32_t n = 1024;
  rig_buffer x = rt_create(a, n * 4), y = rt_create(b, n * 4);

  gt_fill_u32(a, ma, x, n, 1);
  rig_point p2 = gt_step(a, ma, "rig_add_u32", x, x, n, 1); /* x = 2 */
  OK(rig_wait_point(p2, UINT64_MAX));

  rig_point p3 = gt_step(a, ma, "rig_add_u32", x, x, n, 1); /* x = 3 */
  if (gt_fake()) {
    /* Slow enough that the launches after it are handed over before it fails. */
    gt_set("launch_delay_us", 50000);
    gt_set("fail_launch_at", 1);
    gt_step(a, ma, "rig_add_u32", x, x, n, 1); /* fails when it runs */
  } else {
    gt_delay(a, ma, 20u * 1000 * 1000);
    uint64_t nowhere = 0x10;
    rig_access none[1];
    (void)none;
    /* rig_fault(where): one scalar, no slots */
    rig_part part;
    memset(&part, 0, sizeof part);
    part.size = sizeof part;
    part.kind = RIG_PART_LAUNCH;
    part.module = ma;
    part.function = "rig_fault";
    part.grid[0] = part.grid[1] = part.grid[2] = 1;
    part.block[0] = part.block[1] = part.block[2] = 1;
    rig_submission sub;
    rig_run run;
    OK(rig_submission_make(a, &part, 1, NULL, 0, &sub));
    OK(rig_run_take(sub, &run));
    OK(rig_run_set_scalars(run, &nowhere, sizeof nowhere));
    OK(rig_submit(run, NULL, 0, NULL));
    OK(rig_run_release(run));
    OK(rig_submission_release(sub));
  }
  rig_point p5 = gt_step(a, ma, "rig_add_u32", x, x, n, 1); /* after the fault: never runs */
  if (gt_fake()) gt_set("launch_delay_us", 0);

  /* b reads x: its queue waits for a's last write, p5, which will never be reached. */
  rig_buffer xb = rt_borrow(b, x);
  rig_point pb = gt_step(b, mb, "rig_add_u32", xb, y, n, 10);

  /* Independent work elsewhere finishes. */
  rig_buffer z = NULL;
  OK(rig_buffer_create(c, n * 4, c_is_gpu ? RIG_MEMORY_DEVICE : RIG_MEMORY_PINNED, &z));
  rig_point pc = c_is_gpu ? gt_fill_u32(c, mc, z, n, 5) : rt_fill(c, z, 5);
  OK(rig_wait_point(pc, UINT64_MAX));
  rig_buffer w = rt_create(m, 64);
  rig_point pm = rt_fill(m, w, 1);
  OK(rig_wait_point(pm, UINT64_MAX));

  /* The consumer first: its wait must find the producer's fault itself (no one has looked at a yet). */
  STATUS(RIG_LOST, rig_wait_point(pb, UINT64_MAX));
  STATUS(RIG_LOST, rig_wait_point(p5, UINT64_MAX));
  /* A value reached before the fault stays reached where the timeline is a word in memory; with events
   * only values already seen reached do (after a sticky error the driver answers every event query with
   * the error). */
  const char *timeline = getenv(gt()->timeline_env);
  int events = timeline ? strcmp(timeline, "events") == 0 : gt()->events_by_default;
  if (gt_fake() && gt_query("memops") == 0) events = 1; /* memory operations asked for where there are none */
  rig_status s3 = rig_wait_point(p3, UINT64_MAX);
  if (gt_fake() && !events) OK(s3);
  else assert_true(s3 == RIG_OK || s3 == RIG_LOST);

  rig_device_info info = {sizeof info};
  OK(rig_device_get_info(a, &info));
  assert_int_equal(info.lost, 1);
  const char *why = NULL;
  OK(rig_device_lost_reason(a, &why));
  assert_non_null(why);
  fprintf(stderr, "%s lost: %s\n", gt_name(0), why);
  assert_non_null(strstr(why, gt_fake() ? gt()->launch_failure : gt_error_prefix()));
  OK(rig_device_get_info(b, &info));
  assert_int_equal(info.lost, 1);

  /* Later work on the lost device, and host access past its lost write, answer LOST. */
  rig_buffer q = NULL;
  rig_status s = rig_buffer_create(a, 64, RIG_MEMORY_DEVICE, &q);
  if (s == RIG_OK) {
    STATUS(RIG_LOST, rt_try_copy(a, q, q, NULL, 0, NULL));
    OK(rig_buffer_release(q));
  } else {
    assert_int_equal(s, RIG_LOST);
  }
  uint32_t out[1024];
  STATUS(RIG_LOST, rig_buffer_read_into(x, 0, out, sizeof out));

  /* c still works. */
  rig_point pc2 = c_is_gpu ? gt_fill_u32(c, mc, z, n, 6) : rt_fill(c, z, 6);
  OK(rig_wait_point(pc2, UINT64_MAX));
  OK(rig_buffer_read_into(z, 0, out, sizeof out));
  for (uint32_t i = 0; i < n; ++i) assert_int_equal(out[i], c_is_gpu ? 6u : 0x06060606u);

  if (two_gpus) check_other_gpu_after_the_fault(n);


  rig_buffer bufs[] = {xb, x, y, z, w};
  for (int i = 0; i < 5; ++i) OK(rig_buffer_release(bufs[i]));
  OK(rig_module_release(ma));
  OK(rig_module_release(mb));
  if (mc) OK(rig_module_release(mc));
  rig_device all[] = {a, b, c, m};
  for (int i = 0; i < 4; ++i) OK(rig_device_release(all[i]));
}

int main(void) {
  if (!gt_available()) return 77;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_launch_failing_mid_run_loses_its_device_and_what_waits_on_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
