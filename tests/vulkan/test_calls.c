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

/* A chain between two rig devices on one VkDevice, each copy reading what the other device wrote last, with
 * a host wait after each pair: the points the first submit of a pair collects are reached and were read by
 * that wait, and the second's is the first's, just submitted. The submits ask the semaphore nothing (one
 * read each before). The bytes go round intact. */
static void a_submit_asks_the_semaphore_nothing_for_a_point_known_reached(void **state) {
  (void)state;
  rig_device a, b;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  rig_buffer x = vk_buffer(a, 4096, RIG_MEMORY_DEVICE), y = vk_buffer(a, 4096, RIG_MEMORY_DEVICE);
  rig_buffer xb = rt_borrow(b, x), yb = rt_borrow(b, y);
  uint8_t bytes[4096];
  memset(bytes, 0x5a, sizeof bytes);
  OK(rig_buffer_write_from(x, 0, bytes, sizeof bytes));
  rig_run forth = rt_copy_run(a, x, y), back = rt_copy_run(b, yb, xb);
  enum { kPairs = 100 };
  long reads = 0;  /* the submits' own: the host wait may read the semaphore (that is its job) */
  long begun = 0;  /* command buffers the submits began */
  for (int i = 0; i < kPairs; ++i) {
    rig_point p = 0;
    long before = counter_reads(), begins_before = begins();
    OK(rig_submit(forth, NULL, 0, NULL));
    OK(rig_submit(back, NULL, 0, &p));
    reads += counter_reads() - before;
    begun += begins() - begins_before;
    OK(rig_wait_point(p, UINT64_MAX));
  }
  if (reads >= kPairs / 4)
    fail_msg("%ld vkGetSemaphoreCounterValue calls for %d submits whose points were known reached", reads, 2 * kPairs);
  if (begun != 0)
    fail_msg("%d submits of two recorded runs began %ld command buffers (a recorded run records nothing)", 2 * kPairs,
             begun);
  memset(bytes, 0, sizeof bytes);
  OK(rig_buffer_read_into(x, 0, bytes, sizeof bytes));
  for (size_t i = 0; i < sizeof bytes; ++i)
    if (bytes[i] != 0x5a) fail_msg("byte %zu is 0x%02x after the chain, not 0x5a", i, bytes[i]);
  OK(rig_run_release(forth));
  OK(rig_run_release(back));
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(yb));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(b));
  OK(rig_device_release(a));
}

/* The same chain with runs made while recording ahead is off (rig_vulkan_testing_record_ahead): each batch
 * begins its own command buffer and records the copy at hand-over, so the counter above counts. */
static void runs_recorded_at_hand_over_begin_a_command_buffer_a_batch(void **state) {
  (void)state;
  rig_device a, b;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  rig_buffer x = vk_buffer(a, 4096, RIG_MEMORY_DEVICE), y = vk_buffer(a, 4096, RIG_MEMORY_DEVICE);
  rig_buffer xb = rt_borrow(b, x), yb = rt_borrow(b, y);
  rig_vulkan_testing_record_ahead(0);
  rig_run forth = rt_copy_run(a, x, y), back = rt_copy_run(b, yb, xb);
  rig_vulkan_testing_record_ahead(1);
  enum { kPairs = 20 };
  long before = begins();
  for (int i = 0; i < kPairs; ++i) {
    rig_point p = 0;
    OK(rig_submit(forth, NULL, 0, NULL));
    OK(rig_submit(back, NULL, 0, &p));
    OK(rig_wait_point(p, UINT64_MAX));
  }
  long begun = begins() - before;
  /* forth's batch is submitted for back to wait on it, and back's for the host: two batches a pair */
  if (begun < 2 * kPairs) fail_msg("%ld command buffers begun for %d batches recorded at hand-over", begun, 2 * kPairs);
  OK(rig_run_release(forth));
  OK(rig_run_release(back));
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(yb));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(b));
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_submit_asks_the_semaphore_nothing_for_a_point_known_reached),
      cmocka_unit_test(runs_recorded_at_hand_over_begin_a_command_buffer_a_batch),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
