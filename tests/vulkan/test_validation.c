/* The validation check itself: where the layer is active, one deliberate error (made by the driver's
 * testing hook on a VkDevice of its own) is counted, so a clean count in the other tests means something. */
#include <stdio.h>
#include <stdlib.h>

#include "vk_common.h"

int64_t vulkan_testing_provoke_validation(void);

static void a_deliberate_validation_error_is_counted(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  uint64_t messages = 0;
  int active = vulkan_testing_validation(&messages);
  if (active != 1) {
    if (getenv("RIG_VULKAN_VALIDATION") && rt_required("vulkan-validation"))
      fail_msg("RIG_REQUIRE names vulkan-validation but the layer is not active");
    fprintf(stderr, "SKIP: the validation layer is not active\n");
    OK(rig_device_release(a));
    skip();
    return;
  }
  int64_t added = vulkan_testing_provoke_validation();
  assert_true(added >= 1);
  uint64_t after = 0;
  vulkan_testing_validation(&after);
  assert_int_equal(after, messages); /* forgiven: the group teardown and the exit check see only real ones */
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_deliberate_validation_error_is_counted),
  };
  return cmocka_run_group_tests(tests, NULL, vk_validation_teardown);
}
