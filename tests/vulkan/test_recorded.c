/* Recorded runs on Vulkan (src/drivers/vulkan/recorded.cpp): a run whose buffers are set is recorded once
 * into a command buffer of its own, which every submit of the run puts in the open batch. What must hold:
 * the command buffer runs many times, pending in several batches at once; replays and work recorded into a
 * batch at hand-over keep the order of their submits within one batch; a run rebound or released while its
 * command buffer is pending leaves that command buffer alive until it completes; scalars set again are what
 * the next submit runs; a replay that writes host-visible memory is seen by the host after a wait. Every
 * test checks bytes against a model on the host, and the group ends with the validation layer's count. */
#include <stdio.h>
#include <string.h>

#include "vk_common.h"

static const uint32_t affine_spv[] =
#include "affine.spv.inc"
    ;

enum { N = 1024, BLOCK = 64 };
static const uint64_t kForever = UINT64_MAX;

typedef struct affine_scalars {
  uint32_t a, b, n;
} affine_scalars;

/* A device with the affine shader (x = x * a + b) loaded and x, N words written from `words`. */
typedef struct Affine {
  rig_device a;
  rig_module m;
  rig_buffer x;
} Affine;

/* 0 after skipping the test. */
static int affine_open(Affine *f, const uint32_t *words) {
  if (!vk_open(&f->a)) return 0;
  f->m = vk_module(f->a, affine_spv, sizeof affine_spv);
  f->x = vk_buffer(f->a, N * 4, RIG_MEMORY_DEVICE);
  OK(rig_buffer_write_from(f->x, 0, words, N * 4));
  return 1;
}

/* A run of one launch of the shader over x. */
static rig_run affine_run(const Affine *f, affine_scalars s) {
  rig_access rw = RIG_ACCESS_READ_WRITE;
  return vk_launch_run(f->a, f->m, "main", &f->x, &rw, 1, &s, sizeof s, (N + BLOCK - 1) / BLOCK, BLOCK);
}

/* Checks x against `want` (after its last write), then releases everything. */
static void affine_close(Affine *f, const uint32_t *want, const char *what) {
  uint32_t got[N];
  OK(rig_buffer_read_into(f->x, 0, got, sizeof got));
  for (size_t i = 0; i < N; ++i)
    if (got[i] != want[i]) fail_msg("%s: word %zu is %u, want %u", what, i, got[i], want[i]);
  OK(rig_module_release(f->m));
  OK(rig_buffer_release(f->x));
  OK(rig_device_release(f->a));
}

static void expect_bytes(rig_buffer b, size_t n, uint8_t want, const char *what) {
  size_t bad = vk_mismatches(b, n, want);
  if (bad) fail_msg("%s: %zu of %zu bytes are not %u", what, bad, n, want);
}

/* One run submitted 3k + 2 times with no wait between (k: the driver's commit bound): the same command buffer
 * is in the held batch several times and pending in several submitted batches at once, and each submit
 * applies the launch once more, in order. */
static void a_recorded_run_runs_once_for_each_submit_in_and_across_batches(void **state) {
  (void)state;
  uint32_t words[N];
  for (uint32_t i = 0; i < N; ++i) words[i] = i * 2654435761u;
  Affine f;
  if (!affine_open(&f, words)) return;
  rig_run run = affine_run(&f, (affine_scalars){3, 1, N});
  const uint64_t times = 3 * vulkan_testing_commit_every() + 2;
  rig_point p = 0;
  for (uint64_t t = 0; t < times; ++t) OK(rig_submit(run, NULL, 0, &p));
  OK(rig_wait_point(p, kForever));
  OK(rig_run_release(run));
  for (uint64_t t = 0; t < times; ++t)
    for (uint32_t i = 0; i < N; ++i) words[i] = words[i] * 3 + 1;
  affine_close(&f, words, "after the repeated launch");
}

/* Recorded runs and runs recorded at hand-over (made while recording ahead is off), submitted alternately on
 * one device with nothing to wait for, so that they share a batch: fill x with 1, copy x to y, fill x with
 * 2, copy x to z. Each copy must see the fill just before it, so the batch runs its command buffers in the
 * order of the submits (work recorded after a replay goes to the next batch). Then the other way round. */
static void replays_and_work_recorded_at_hand_over_keep_the_order_of_their_submits(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  enum { kBytes = 4096 };
  rig_buffer x = vk_buffer(a, kBytes, RIG_MEMORY_DEVICE), y = vk_buffer(a, kBytes, RIG_MEMORY_DEVICE),
             z = vk_buffer(a, kBytes, RIG_MEMORY_DEVICE);
  for (int round = 0; round < 2; ++round) {
    /* round 0: fills recorded ahead, copies at hand-over; round 1: the other way round */
    vulkan_testing_record_ahead(round == 0);
    rig_run one = rt_fill_run(a, x, 1), two = rt_fill_run(a, x, 2);
    vulkan_testing_record_ahead(round == 1);
    rig_run to_y = rt_copy_run(a, x, y), to_z = rt_copy_run(a, x, z);
    vulkan_testing_record_ahead(1);
    for (int pass = 0; pass < 3; ++pass) {
      rig_point p = 0;
      OK(rig_submit(one, NULL, 0, NULL));
      OK(rig_submit(to_y, NULL, 0, NULL));
      OK(rig_submit(two, NULL, 0, NULL));
      OK(rig_submit(to_z, NULL, 0, &p));
      OK(rig_wait_point(p, kForever));
      expect_bytes(y, kBytes, 1, round ? "y (copies recorded ahead)" : "y (fills recorded ahead)");
      expect_bytes(z, kBytes, 2, round ? "z (copies recorded ahead)" : "z (fills recorded ahead)");
      rt_fill(a, y, 0);
      rt_fill(a, z, 0);
    }
    OK(rig_run_release(one));
    OK(rig_run_release(two));
    OK(rig_run_release(to_y));
    OK(rig_run_release(to_z));
  }
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_buffer_release(z));
  OK(rig_device_release(a));
}

/* A run submitted many times with no wait, then rebound to another destination (its record is dropped while
 * batches still hold its command buffer), submitted again, and released before anything is reached: every
 * copy still runs with what it was recorded with. A command buffer destroyed while pending is a validation
 * error (the group's teardown) and, on lavapipe, a use after free. */
static void a_run_rebound_or_released_while_its_commands_are_pending_runs_them_all(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  enum { kBytes = 1 << 16 };
  rig_buffer x = vk_buffer(a, kBytes, RIG_MEMORY_DEVICE), y = vk_buffer(a, kBytes, RIG_MEMORY_DEVICE),
             z = vk_buffer(a, kBytes, RIG_MEMORY_DEVICE);
  rt_fill(a, x, 0x3c);
  rig_run run = rt_copy_run(a, x, y);
  const uint64_t times = 2 * vulkan_testing_commit_every() + 3;
  for (uint64_t t = 0; t < times; ++t) OK(rig_submit(run, NULL, 0, NULL));
  OK(rig_run_set_buffer(run, 1, z));  /* batches submitted and one held still run the old record */
  rig_point p = 0;
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_run_release(run));  /* before the point is reached, or even committed */
  OK(rig_wait_point(p, kForever));
  expect_bytes(y, kBytes, 0x3c, "y (the run's first destination)");
  expect_bytes(z, kBytes, 0x3c, "z (the run's destination once rebound)");
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_buffer_release(z));
  OK(rig_device_release(a));
}

/* Scalars set again between two submits: the first submit runs with the old ones, the second with the new. */
static void scalars_set_again_are_what_the_next_submit_runs(void **state) {
  (void)state;
  uint32_t words[N];
  for (uint32_t i = 0; i < N; ++i) words[i] = i;
  Affine f;
  if (!affine_open(&f, words)) return;
  affine_scalars s = {2, 0, N};
  rig_run run = affine_run(&f, s);
  OK(rig_submit(run, NULL, 0, NULL));  /* held */
  s.a = 1, s.b = 5;
  OK(rig_run_set_scalars(run, &s, sizeof s));
  rig_point p = 0;
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_wait_point(p, kForever));
  OK(rig_run_release(run));
  for (uint32_t i = 0; i < N; ++i) words[i] = words[i] * 2 + 5;
  affine_close(&f, words, "x * 2, then + 5");
}

/* A recorded copy into host-visible memory (RIG_MEMORY_PINNED), then a wait: the host reads the bytes through
 * the buffer's mapping, which the replay's barrier to the host makes visible. */
static void a_replay_that_writes_host_visible_memory_is_seen_by_the_host_after_a_wait(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  enum { kBytes = 1 << 16 };
  rig_buffer x = vk_buffer(a, kBytes, RIG_MEMORY_DEVICE), h = vk_buffer(a, kBytes, RIG_MEMORY_PINNED);
  rig_run run = rt_copy_run(a, x, h);
  for (uint8_t v = 1; v <= 4; ++v) {
    rt_fill(a, x, v);
    rig_point p = 0;
    OK(rig_submit(run, NULL, 0, &p));
    OK(rig_wait_point(p, kForever));
    expect_bytes(h, kBytes, v, "the pinned destination");
  }
  OK(rig_run_release(run));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(h));
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_recorded_run_runs_once_for_each_submit_in_and_across_batches),
      cmocka_unit_test(replays_and_work_recorded_at_hand_over_keep_the_order_of_their_submits),
      cmocka_unit_test(a_run_rebound_or_released_while_its_commands_are_pending_runs_them_all),
      cmocka_unit_test(scalars_set_again_are_what_the_next_submit_runs),
      cmocka_unit_test(a_replay_that_writes_host_visible_memory_is_seen_by_the_host_after_a_wait),
  };
  return cmocka_run_group_tests(tests, NULL, vk_validation_teardown);
}
