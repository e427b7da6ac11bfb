/* Device loss on Vulkan (VK_ERROR_DEVICE_LOST), through lose_shim (RIG_VULKAN_LIBRARY): the device is lost
 * once and for good, every wait that must pass its unreached points answers RIG_LOST with the reason, the
 * other rig device on the same VkDevice is lost with it, a memory device's unrelated work still runs, and
 * releasing everything afterwards neither hangs nor fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_common.h"
#include "vk_shim.h"

static void (*shim_lose)(void);
static void (*shim_reset)(void);

static int setup(void **state) {
  (void)state;
  shim_lose = (void (*)(void))vk_shim_symbol("rig_vkshim_lose");
  shim_reset = (void (*)(void))vk_shim_symbol("rig_vkshim_reset");
  return shim_lose && shim_reset ? 0 : -1;
}

static void expect_lost(rig_device d, const char *why_part) {
  rig_device_info info = {sizeof info};
  OK(rig_device_get_info(d, &info));
  assert_int_equal(info.lost, 1);
  const char *why = NULL;
  OK(rig_device_lost_reason(d, &why));
  assert_non_null(why);
  if (why_part && !strstr(why, why_part)) fail_msg("lost reason '%s' does not name %s", why, why_part);
}

/* The commit of held work fails: the device is lost at that wait, and stays lost. */
static void a_loss_at_commit_answers_lost_and_takes_the_vkdevice_with_it(void **state) {
  (void)state;
  shim_reset();
  rig_device a, b, m;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  OK(rig_memory_device("M", &m));
  rig_buffer x = vk_buffer(a, 4096, RIG_MEMORY_DEVICE), y = rt_create(m, 64);
  rig_point p = rt_fill(a, x, 1); /* held */
  shim_lose();
  uint8_t byte;
  STATUS(RIG_LOST, rig_buffer_read_into(x, 0, &byte, 1)); /* commits: vkQueueSubmit fails */
  expect_lost(a, "vkQueueSubmit");
  STATUS(RIG_LOST, rig_wait_point(p, UINT64_MAX));
  STATUS(RIG_LOST, rig_device_wait(a, 1, 0));
  rig_point q = 0;
  rig_run run = rt_fill_run(a, x, 0);
  STATUS(RIG_LOST, rig_submit(run, NULL, 0, &q));
  OK(rig_run_release(run));
  /* B shares the VkDevice: its next work is refused as lost too. */
  rig_buffer xb = vk_buffer(b, 64, RIG_MEMORY_DEVICE), yb = vk_buffer(b, 64, RIG_MEMORY_DEVICE);
  rig_point pb = 0;
  rig_status s = rt_try_copy(b, xb, yb, NULL, 0, &pb);  /* two buffers: a copy onto itself is refused */
  if (s == RIG_OK) s = rig_wait_point(pb, UINT64_MAX); /* a hand-over may pass; its wait may not */
  assert_int_equal(s, RIG_LOST);
  expect_lost(b, NULL);
  /* The memory device has nothing to do with it. */
  rt_fill(m, y, 9);
  OK(rig_buffer_read_into(y, 0, &byte, 1));
  assert_int_equal(byte, 9);
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(yb));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
  OK(rig_device_release(m));
}

/* The device is lost while work is in flight: the host wait sees VK_ERROR_DEVICE_LOST. A device opened
 * afterwards (a new VkDevice, once every rig device on the lost one is released) works again. */
static void a_loss_during_a_wait_answers_lost_and_a_new_device_works(void **state) {
  (void)state;
  shim_reset();
  rig_device a;
  if (!vk_open(&a)) return;
  /* Committed but not yet complete: a wait that only checks commits it; a fill of 64 MiB on a CPU device
   * takes long enough that the check times out (tried again with another fill if it did not). */
  rig_buffer x = vk_buffer(a, 64u << 20, RIG_MEMORY_DEVICE);
  rig_point p = 0;
  rig_status s = RIG_OK;
  for (int i = 0; i < 20 && s != RIG_TIMEOUT; ++i) {
    p = rt_fill(a, x, (uint8_t)i);
    s = rig_wait_point(p, 0);
  }
  if (s != RIG_TIMEOUT) {
    fprintf(stderr, "SKIP: every fill completed before a wait could see it in flight\n");
    OK(rig_buffer_release(x));
    OK(rig_device_release(a));
    skip();
  }
  shim_lose();
  STATUS(RIG_LOST, rig_wait_point(p, UINT64_MAX));
  expect_lost(a, NULL);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));

  shim_reset();
  rig_device c;
  if (!vk_open(&c)) return;
  rig_buffer z = vk_buffer(c, 64, RIG_MEMORY_DEVICE);
  rt_fill(c, z, 0x3c);
  uint8_t byte = 0;
  OK(rig_buffer_read_into(z, 63, &byte, 1));
  assert_int_equal(byte, 0x3c);
  OK(rig_buffer_release(z));
  OK(rig_device_release(c));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_loss_at_commit_answers_lost_and_takes_the_vkdevice_with_it),
      cmocka_unit_test(a_loss_during_a_wait_answers_lost_and_a_new_device_works),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
