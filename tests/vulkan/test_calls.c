/* The Vulkan calls rig's submit path makes, counted through lose_shim (RIG_VULKAN_LIBRARY), which forwards
 * every entry point to the real loader. Whether a point of another Vulkan device is reached is the submit
 * path's question for every point it collects: the driver answers it from the last value it read from the
 * semaphore (VulkanDevice::known_reached), asking the driver nothing. Before, each such submit made one
 * vkGetSemaphoreCounterValue that the same work written by hand does not make. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_common.h"

static long (*counter_reads)(void);

static int setup(void **state) {
  (void)state;
  const char *path = getenv("RIG_VULKAN_LIBRARY");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL; /* the same handle rig opens */
  if (!h) {
    fprintf(stderr, "test_calls needs RIG_VULKAN_LIBRARY=lose_shim: %s\n", path ? dlerror() : "unset");
    return -1;
  }
  counter_reads = (long (*)(void))dlsym(h, "rig_vkshim_counter_reads");
  return counter_reads ? 0 : -1;
}

static rig_run copy_run(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_part p;
  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.kind = RIG_PART_COPY;
  p.src_slot = 0;
  p.dst_slot = 1;
  p.length = RIG_WHOLE;
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission s;
  rig_run r;
  OK(rig_submission_make(d, &p, 1, access, 2, &s));
  OK(rig_run_take(s, &r));
  OK(rig_submission_release(s));
  OK(rig_run_set_buffer(r, 0, src));
  OK(rig_run_set_buffer(r, 1, dst));
  return r;
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
  rig_buffer x = vk_buffer(a, 4096, RIG_MEMORY_DEVICE), y = vk_buffer(a, 4096, RIG_MEMORY_DEVICE), xb, yb;
  OK(rig_buffer_borrow(b, x, &xb));
  OK(rig_buffer_borrow(b, y, &yb));
  uint8_t bytes[4096];
  memset(bytes, 0x5a, sizeof bytes);
  OK(rig_buffer_write_from(x, 0, bytes, sizeof bytes));
  rig_run forth = copy_run(a, x, y), back = copy_run(b, yb, xb);
  enum { kPairs = 100 };
  long reads = 0;  /* the submits' own: the host wait may read the semaphore (that is its job) */
  for (int i = 0; i < kPairs; ++i) {
    rig_point p = 0;
    long before = counter_reads();
    OK(rig_submit(forth, NULL, 0, NULL));
    OK(rig_submit(back, NULL, 0, &p));
    reads += counter_reads() - before;
    OK(rig_wait_point(p, UINT64_MAX));
  }
  if (reads >= kPairs / 4)
    fail_msg("%ld vkGetSemaphoreCounterValue calls for %d submits whose points were known reached", reads, 2 * kPairs);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_submit_asks_the_semaphore_nothing_for_a_point_known_reached),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
