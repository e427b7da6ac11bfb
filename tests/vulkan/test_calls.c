/* The Vulkan calls rig's submit path makes, counted through lose_shim (RIG_VULKAN_LIBRARY), which forwards
 * every entry point to the real loader.
 *
 * Whether a point of another Vulkan device is reached is the submit
 * path's question for every point it collects: the driver answers it from the last value it read from the
 * semaphore (VulkanDevice::known_reached), asking the driver nothing. Before, each such submit made one
 * vkGetSemaphoreCounterValue that the same work written by hand does not make.
 *
 * A run whose buffers are set is recorded once into a command buffer of its own (src/drivers/vulkan/
 * recorded.cpp), which each of its submits puts in the open batch: a submit begins no command buffer (before,
 * every batch began one and recorded the run's barrier and copy into it). */
#include <string.h>

#include "vk_common.h"
#include "vk_shim.h"

static long (*counter_reads)(void);
static long (*begins)(void);

static int setup(void **state) {
  (void)state;
  counter_reads = (long (*)(void))vk_shim_symbol("rig_vkshim_counter_reads");
  begins = (long (*)(void))vk_shim_symbol("rig_vkshim_begins");
  return counter_reads && begins ? 0 : -1;
}

/* A chain between two rig devices on one VkDevice: `forth` copies x to y on a, `back` copies y back to x on
 * b, each reading what the other device wrote last. x starts as 0x5a bytes. */
typedef struct Chain {
  rig_device a, b;
  rig_buffer x, y, xb, yb;
  rig_run forth, back;
} Chain;

/* Opens the chain, its runs made with recording ahead on or off; 0 after skipping the test. */
static int chain_open(Chain *c, int record_ahead) {
  if (!vk_open(&c->a) || !vk_open(&c->b)) return 0;
  c->x = vk_buffer(c->a, 4096, RIG_MEMORY_DEVICE), c->y = vk_buffer(c->a, 4096, RIG_MEMORY_DEVICE);
  c->xb = rt_borrow(c->b, c->x), c->yb = rt_borrow(c->b, c->y);
  uint8_t bytes[4096];
  memset(bytes, 0x5a, sizeof bytes);
  OK(rig_buffer_write_from(c->x, 0, bytes, sizeof bytes));
  vulkan_testing_record_ahead(record_ahead);
  c->forth = rt_copy_run(c->a, c->x, c->y), c->back = rt_copy_run(c->b, c->yb, c->xb);
  vulkan_testing_record_ahead(1);
  return 1;
}

/* `pairs` pairs of submits, a host wait after each pair; adds the semaphore reads and the command buffers
 * begun by the submits alone (the host wait may read the semaphore: that is its job). */
static void chain_run(Chain *c, int pairs, long *reads, long *begun) {
  for (int i = 0; i < pairs; ++i) {
    rig_point p = 0;
    long reads_before = counter_reads(), begins_before = begins();
    OK(rig_submit(c->forth, NULL, 0, NULL));
    OK(rig_submit(c->back, NULL, 0, &p));
    *reads += counter_reads() - reads_before;
    *begun += begins() - begins_before;
    OK(rig_wait_point(p, UINT64_MAX));
  }
}

/* Checks that the bytes went round intact, and releases everything. */
static void chain_close(Chain *c) {
  uint8_t bytes[4096];
  OK(rig_buffer_read_into(c->x, 0, bytes, sizeof bytes));
  for (size_t i = 0; i < sizeof bytes; ++i)
    if (bytes[i] != 0x5a) fail_msg("byte %zu is 0x%02x after the chain, not 0x5a", i, bytes[i]);
  OK(rig_run_release(c->forth));
  OK(rig_run_release(c->back));
  OK(rig_buffer_release(c->xb));
  OK(rig_buffer_release(c->yb));
  OK(rig_buffer_release(c->x));
  OK(rig_buffer_release(c->y));
  OK(rig_device_release(c->b));
  OK(rig_device_release(c->a));
}

/* The points the first submit of a pair collects are reached and were read by the last host wait, and the
 * second's is the first's, just submitted: the submits ask the semaphore nothing (one read each before).
 * Both runs are recorded ahead: the submits begin no command buffer (one a batch before). */
static void a_submit_asks_the_semaphore_nothing_and_a_recorded_run_records_nothing(void **state) {
  (void)state;
  Chain c;
  if (!chain_open(&c, 1)) return;
  enum { kPairs = 100 };
  long reads = 0, begun = 0;
  chain_run(&c, kPairs, &reads, &begun);
  if (reads >= kPairs / 4)
    fail_msg("%ld vkGetSemaphoreCounterValue calls for %d submits whose points were known reached", reads, 2 * kPairs);
  if (begun != 0)
    fail_msg("%d submits of two recorded runs began %ld command buffers (a recorded run records nothing)", 2 * kPairs,
             begun);
  chain_close(&c);
}

/* The same chain with runs made while recording ahead is off (vulkan_testing_record_ahead): each batch
 * begins its own command buffer and records the copy at hand-over, so the counter above counts. */
static void runs_recorded_at_hand_over_begin_a_command_buffer_a_batch(void **state) {
  (void)state;
  Chain c;
  if (!chain_open(&c, 0)) return;
  enum { kPairs = 20 };
  long reads = 0, begun = 0;
  chain_run(&c, kPairs, &reads, &begun);
  /* forth's batch is submitted for back to wait on it, and back's for the host: two batches a pair */
  if (begun < 2 * kPairs) fail_msg("%ld command buffers begun for %d batches recorded at hand-over", begun, 2 * kPairs);
  chain_close(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_submit_asks_the_semaphore_nothing_and_a_recorded_run_records_nothing),
      cmocka_unit_test(runs_recorded_at_hand_over_begin_a_command_buffer_a_batch),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
