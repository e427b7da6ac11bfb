/* The Vulkan device as rig shows it: discovery and info, independent devices over one name, memory kinds
 * and export, and every refusal answered with a status and words (never a crash). */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_common.h"

static const uint32_t affine_spv[] =
#include "affine.spv.inc"
    ;

static void vulkan_devices_are_listed_and_described(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  const char *names[64];
  size_t count = 0;
  OK(rig_device_list(names, 64, &count));
  int found = 0;
  for (size_t i = 0; i < count && i < 64; ++i) found |= strcmp(names[i], "vulkan:0") == 0;
  assert_true(found);
  rig_device_info info = {sizeof info};
  OK(rig_device_get_info(a, &info));
  assert_string_equal(info.name, "vulkan:0");
  assert_string_equal(info.framework, "Vulkan");
  assert_true(info.model[0] != '\0');
  assert_true(info.kind == RIG_DEVICE_GPU || info.kind == RIG_DEVICE_CPU);
  /* lavapipe (Mesa's "llvmpipe") is a CPU device and says so. */
  if (strstr(info.model, "llvmpipe")) {
    assert_int_equal(info.kind, RIG_DEVICE_CPU);
    assert_int_equal(info.integrated, 1);
  }
  assert_true(info.memory_bytes > 0);
  assert_int_equal(info.lost, 0);
  fprintf(stderr, "vulkan:0 is %s (%s), %llu MiB\n", info.model, info.kind == RIG_DEVICE_CPU ? "CPU" : "GPU",
          (unsigned long long)(info.memory_bytes >> 20));
  OK(rig_device_release(a));
}

static void opening_one_name_twice_gives_two_independent_timelines(void **state) {
  (void)state;
  rig_device a, b;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  rig_device_info ia = {sizeof ia}, ib = {sizeof ib};
  OK(rig_device_get_info(a, &ia));
  OK(rig_device_get_info(b, &ib));
  assert_true(ia.index != ib.index);
  rig_buffer x = vk_buffer(a, 64, RIG_MEMORY_DEVICE);
  rt_fill(a, x, 1);
  rt_fill(a, x, 2);
  assert_int_equal(rt_submitted(a), 2);
  assert_int_equal(rt_submitted(b), 0);
  OK(rig_device_wait(a, 2, UINT64_MAX));
  assert_int_equal(rt_signaled(b), 0);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

static void a_missing_device_is_not_found(void **state) {
  (void)state;
  rig_device d;
  rig_device a;
  if (!vk_open(&a)) return; /* only meaningful where Vulkan loads */
  STATUS(RIG_NOT_FOUND, rig_device_open("vulkan:999", &d));
  OK(rig_device_release(a));
}

static void export_gives_host_memory_and_refuses_device_memory(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_buffer dev = vk_buffer(a, 4096, RIG_MEMORY_DEVICE);
  rig_buffer pinned = vk_buffer(a, 4096, RIG_MEMORY_PINNED);
  rig_buffer mapped = vk_buffer(a, 4096, RIG_MEMORY_MAPPED);
  void *p = NULL;
  STATUS(RIG_UNSUPPORTED, rig_buffer_export(dev, &p));
  rt_fill(a, pinned, 0x42);
  OK(rig_buffer_export(pinned, &p)); /* waits for the fill (committing it) */
  for (int i = 0; i < 4096; ++i) assert_int_equal(((uint8_t *)p)[i], 0x42);
  rt_fill(a, mapped, 0x24);
  OK(rig_buffer_export(mapped, &p));
  for (int i = 0; i < 4096; ++i) assert_int_equal(((uint8_t *)p)[i], 0x24);
  OK(rig_buffer_release(dev));
  OK(rig_buffer_release(pinned));
  OK(rig_buffer_release(mapped));
  OK(rig_device_release(a));
}

static void memory_of_a_memory_device_is_imported_where_host_import_is_offered(void **state) {
  (void)state;
  rig_device a, m;
  if (!vk_open(&a)) return;
  OK(rig_memory_device("M", &m));
  rig_buffer x = rt_create(m, 4096), out;
  rig_status s = rig_buffer_borrow(a, x, &out);
  if (s == RIG_OK) { /* host memory, imported (test_import.c): the device writes the memory device's bytes */
    rt_fill(a, out, 0x3c);
    uint8_t got[4096];
    OK(rig_buffer_read_into(x, 0, got, sizeof got));
    for (size_t i = 0; i < sizeof got; ++i) assert_int_equal(got[i], 0x3c);
    OK(rig_buffer_release(out));
  } else {
    assert_int_equal(s, RIG_UNMAPPABLE);
    assert_non_null(strstr(rig_last_error(), "VK_EXT_external_memory_host"));
  }
  OK(rig_buffer_release(x));
  OK(rig_device_release(m));
  OK(rig_device_release(a));
}

static void bad_modules_are_refused_with_reasons(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_module m;
  STATUS(RIG_UNSUPPORTED, rig_module_load(a, RIG_MODULE_PTX, ".version 7.0", 12, &m));
  STATUS(RIG_INVALID_ARGUMENT, rig_module_load(a, RIG_MODULE_SPIRV, affine_spv, sizeof affine_spv - 2, &m));
  uint32_t junk[16] = {0xdeadbeef};
  STATUS(RIG_INVALID_ARGUMENT, rig_module_load(a, RIG_MODULE_SPIRV, junk, sizeof junk, &m));
  /* A truncated stream: the header and the first instruction claiming more words than remain. */
  uint32_t cut[8];
  memcpy(cut, affine_spv, sizeof cut);
  cut[5] = (1000u << 16) | 17u;
  STATUS(RIG_INVALID_ARGUMENT, rig_module_load(a, RIG_MODULE_SPIRV, cut, sizeof cut, &m));
  /* Unaligned bytes are fine: the driver copies them. */
  uint8_t *shifted = malloc(sizeof affine_spv + 1);
  assert_non_null(shifted);
  memcpy(shifted + 1, affine_spv, sizeof affine_spv);
  OK(rig_module_load(a, RIG_MODULE_SPIRV, shifted + 1, sizeof affine_spv, &m));
  free(shifted);
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

static rig_status make_one(rig_device d, rig_part *p, rig_access access) {
  rig_submission sub;
  rig_status s = rig_submission_make(d, p, 1, &access, 1, &sub);
  if (s == RIG_OK) rig_submission_release(sub);
  return s;
}

static void host_kernel(void *u, const rig_span *s, size_t n) { (void)u, (void)s, (void)n; }

static void parts_the_device_cannot_run_are_refused_at_make(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_module m = vk_module(a, affine_spv, sizeof affine_spv);
  uint32_t slot0 = 0;
  rig_part p;
  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.kind = RIG_PART_HOST_KERNEL;
  p.fn = host_kernel;
  STATUS(RIG_UNSUPPORTED, make_one(a, &p, RIG_ACCESS_WRITE));

  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.kind = RIG_PART_LAUNCH;
  p.module = m;
  p.function = "no_such_function";
  p.grid[0] = p.grid[1] = p.grid[2] = 1;
  p.block[0] = p.block[1] = p.block[2] = 1;
  p.slots = &slot0;
  p.slot_count = 1;
  STATUS(RIG_NOT_FOUND, make_one(a, &p, RIG_ACCESS_READ_WRITE));
  p.function = "main";
  p.shared_bytes = 1024;
  STATUS(RIG_UNSUPPORTED, make_one(a, &p, RIG_ACCESS_READ_WRITE));
  p.shared_bytes = 0;
  p.grid[0] = 0xffffffffu;
  STATUS(RIG_INVALID_ARGUMENT, make_one(a, &p, RIG_ACCESS_READ_WRITE));
  p.grid[0] = 1;
  p.block[0] = 1u << 20;
  STATUS(RIG_INVALID_ARGUMENT, make_one(a, &p, RIG_ACCESS_READ_WRITE));
  p.block[0] = 64;
  OK(make_one(a, &p, RIG_ACCESS_READ_WRITE));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

/* A module released right after its launch was submitted (and before the work ran) stays usable by that
 * work: the pipeline lives as long as the batch that records it. */
static void a_module_released_while_its_work_is_held_still_runs_it(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_module m = vk_module(a, affine_spv, sizeof affine_spv);
  uint32_t v[64];
  for (int i = 0; i < 64; ++i) v[i] = (uint32_t)i;
  rig_buffer x = vk_buffer(a, sizeof v, RIG_MEMORY_DEVICE);
  OK(rig_buffer_write_from(x, 0, v, sizeof v));
  struct { uint32_t a, b, n; } s = {2, 1, 64};
  rig_access rw = RIG_ACCESS_READ_WRITE;
  rig_point p = vk_launch(a, m, "main", &x, &rw, 1, &s, sizeof s, 1, 64, NULL, 0);
  OK(rig_module_release(m));
  OK(rig_wait_point(p, UINT64_MAX));
  OK(rig_buffer_read_into(x, 0, v, sizeof v));
  for (int i = 0; i < 64; ++i) assert_int_equal(v[i], 2u * (uint32_t)i + 1u);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Run with RIG_VULKAN_QUEUES set to something that is not a count from 1 to 64 (meson.build): every open
 * is refused with the variable named, and nothing is left open. */
static void a_bad_queue_count_is_refused_by_name(void **state) {
  (void)state;
  rig_device d = NULL;
  rig_status s = rig_device_open("vulkan:0", &d);
  if (s == RIG_NOT_FOUND) vk_missing();  /* no Vulkan at all: nothing to refuse */
  assert_int_equal(s, RIG_INVALID_ARGUMENT);
  assert_null(d);
  assert_non_null(strstr(rig_last_error(), "RIG_VULKAN_QUEUES"));
  assert_int_equal(rig_device_open("vulkan:0", &d), RIG_INVALID_ARGUMENT);  /* every time, not once */
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "bad-queues") == 0) {
    const struct CMUnitTest bad[] = {cmocka_unit_test(a_bad_queue_count_is_refused_by_name)};
    return cmocka_run_group_tests(bad, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vulkan_devices_are_listed_and_described),
      cmocka_unit_test(opening_one_name_twice_gives_two_independent_timelines),
      cmocka_unit_test(a_missing_device_is_not_found),
      cmocka_unit_test(export_gives_host_memory_and_refuses_device_memory),
            cmocka_unit_test(memory_of_a_memory_device_is_imported_where_host_import_is_offered),
      cmocka_unit_test(bad_modules_are_refused_with_reasons),
      cmocka_unit_test(parts_the_device_cannot_run_are_refused_at_make),
      cmocka_unit_test(a_module_released_while_its_work_is_held_still_runs_it),
  };
  return cmocka_run_group_tests(tests, NULL, vk_validation_teardown);
}
