/* Host memory on Vulkan, with the opt-in (this binary runs with RIG_VULKAN_HOST_IMPORT=1):
 *  - a borrow of page-aligned writable host memory imports it (VK_EXT_external_memory_host) and work on
 *    the device reads and writes the caller's own bytes;
 *  - read-only and unaligned memory stay unmappable;
 *  - mapped registration's static verdict is Refused (Kernel_hazard) all the same, and neither it, nor a
 *    probe, nor rig_host_register makes a single import: the driver's import counter proves it, and the
 *    control borrow above proves the counter counts. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig_mapped.h>

#include "vk_common.h"

static int import_offered(rig_device a) {
  /* Not every driver offers the extension: find out by trying the one legal case. */
  void *mem = NULL;
  assert_int_equal(posix_memalign(&mem, 65536, 65536), 0);
  rig_buffer w, out;
  OK(rig_buffer_wrap(mem, 65536, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  rig_status s = rig_buffer_borrow(a, w, &out);
  if (s == RIG_OK) OK(rig_buffer_release(out));
  else fprintf(stderr, "note: no host import on this device: %s\n", rig_last_error());
  OK(rig_buffer_release(w));
  free(mem);
  return s == RIG_OK;
}

static void an_opted_in_borrow_imports_host_memory_and_work_uses_the_callers_bytes(void **state) {
  (void)state;
  assert_non_null(getenv("RIG_VULKAN_HOST_IMPORT"));
  rig_device a;
  if (!vk_open(&a)) return;
  if (!import_offered(a)) {
    if (rt_required("vulkan-import")) fail_msg("RIG_REQUIRE names vulkan-import but the device has none");
    OK(rig_device_release(a));
    skip();
    return;
  }
  const size_t n = 1 << 16;
  uint8_t *mem = NULL;
  assert_int_equal(posix_memalign((void **)&mem, 65536, n), 0);
  memset(mem, 0, n);
  rig_buffer w, on_a;
  OK(rig_buffer_wrap(mem, n, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  uint64_t before = rig_vulkan_testing_imports();
  OK(rig_buffer_borrow(a, w, &on_a));
  assert_int_equal(rig_vulkan_testing_imports(), before + 1);
  rig_buffer view;
  OK(rig_buffer_view(on_a, 100, 1000, &view));
  rt_fill(a, view, 0xab);
  /* A host read through the wrap follows the device's write (rule 5), then sees the caller's bytes. */
  uint8_t got[1200];
  OK(rig_buffer_read_into(w, 0, got, sizeof got));
  for (size_t i = 0; i < sizeof got; ++i) assert_int_equal(got[i], (i >= 100 && i < 1100) ? 0xab : 0);
  for (size_t i = 0; i < sizeof got; ++i) assert_int_equal(mem[i], got[i]);
  OK(rig_buffer_release(view));
  OK(rig_buffer_release(on_a));
  OK(rig_buffer_release(w));
  OK(rig_device_release(a)); /* the import is released once its work is reached */
  free(mem);
}

static void read_only_and_unaligned_host_memory_stay_unmappable(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  uint8_t *mem = NULL;
  assert_int_equal(posix_memalign((void **)&mem, 65536, 3 * 65536), 0);
  rig_buffer ro, odd, out;
  OK(rig_buffer_wrap(mem, 65536, RIG_ACCESS_READ, NULL, NULL, &ro));
  STATUS(RIG_UNMAPPABLE, rig_buffer_borrow(a, ro, &out));
  OK(rig_buffer_wrap(mem + 65536 + 8, 4096, RIG_ACCESS_READ_WRITE, NULL, NULL, &odd));
  STATUS(RIG_UNMAPPABLE, rig_buffer_borrow(a, odd, &out));
  OK(rig_buffer_release(ro));
  OK(rig_buffer_release(odd));
  free(mem);
  OK(rig_device_release(a));
}

static void the_static_verdict_refuses_vulkan_and_nothing_registers(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  const uint64_t before = rig_vulkan_testing_imports();

  rig_verdict v = NULL;
  OK(rig_static_verdict(a, &v));
  assert_non_null(v);
  rig_verdict_kind kind;
  rig_refusal refusal;
  OK(rig_verdict_get_kind(v, &kind));
  OK(rig_verdict_refusal(v, &refusal));
  assert_int_equal(kind, RIG_VERDICT_REFUSED);
  assert_int_equal(refusal, RIG_REFUSAL_KERNEL_HAZARD);
  OK(rig_verdict_release(v));

  const size_t n = 1 << 18;
  uint8_t *map = NULL, *ref = malloc(n);
  assert_int_equal(posix_memalign((void **)&map, 65536, n), 0);
  assert_non_null(ref);
  for (size_t i = 0; i < n; ++i) map[i] = ref[i] = (uint8_t)(i * 13 + (i >> 16));
  v = NULL;
  OK(rig_probe(a, map, ref, n, NULL, &v));
  OK(rig_verdict_get_kind(v, &kind));
  OK(rig_verdict_refusal(v, &refusal));
  assert_int_equal(kind, RIG_VERDICT_REFUSED);
  assert_int_equal(refusal, RIG_REFUSAL_KERNEL_HAZARD);
  OK(rig_verdict_release(v));

  rig_probe_ops ops = {sizeof ops};
  STATUS(RIG_UNSUPPORTED, rig_probe_ops_open(a, 1 << 16, &ops));
  STATUS(RIG_UNSUPPORTED, rig_host_register(a, map, n, RIG_ACCESS_READ));
  int registered = -1;
  OK(rig_host_is_registered(map, n, &registered));
  assert_int_equal(registered, 0);

  assert_int_equal(rig_vulkan_testing_imports(), before); /* not one import attempted */
  free(map);
  free(ref);
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(an_opted_in_borrow_imports_host_memory_and_work_uses_the_callers_bytes),
      cmocka_unit_test(read_only_and_unaligned_host_memory_stay_unmappable),
      cmocka_unit_test(the_static_verdict_refuses_vulkan_and_nothing_registers),
  };
  return cmocka_run_group_tests(tests, NULL, vk_validation_teardown);
}
