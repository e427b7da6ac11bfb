/* Host memory on Vulkan. By default (this binary, RIG_VULKAN_HOST_IMPORT unset) a borrow imports it
 * through VK_EXT_external_memory_host:
 *  - host memory of any alignment is imported (its enclosing pages) and work on the device reads and
 *    writes the caller's own bytes, read-only borrows of writable pages too;
 *  - a launch binds a borrow where it lies in its import, on the storage alignment or off it;
 *  - neighbours on one page are each borrowed, copied through the device and back, and released in any
 *    order;
 *  - a shared or read-only file mapping is refused with its reason (the kernel hazard), and so are
 *    read-only pages borrowed writable and unmapped pages, before any import is attempted; a private
 *    writable file mapping (a program's globals) is the process's own copy, imported;
 *  - mapped registration's static verdict is Refused (Kernel_hazard) all the same, and neither it, nor a
 *    probe, nor rig_host_register makes a single import: the driver's import counter proves it, and the
 *    control borrow above proves the counter counts.
 * With RIG_VULKAN_HOST_IMPORT=0 (the vulkan_import[off] test) every borrow of host memory is refused, with
 * the variable named and the portable way (rig_buffer_write_from) said, and nothing is imported. */
#define _DEFAULT_SOURCE /* posix_memalign, mkstemp, mmap */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rig_mapped.h>

#include "vk_common.h"

static const uint32_t affine_spv[] =
#include "affine.spv.inc"
    ;

/* Borrows `bytes` (n of them) on a, writable or not; RIG_OK or the refusal (the wrap is the caller's). */
static rig_status borrow(rig_device a, void *bytes, size_t n, rig_access access, rig_buffer *wrap, rig_buffer *out) {
  OK(rig_buffer_wrap(bytes, n, access, NULL, NULL, wrap));
  return rig_buffer_borrow(a, *wrap, out);
}

/* A borrow of `bytes` refused with RIG_UNMAPPABLE, its message naming `why` and `also` (if not null). */
static void refused(rig_device a, void *bytes, size_t n, rig_access access, const char *why, const char *also) {
  rig_buffer w, out;
  STATUS(RIG_UNMAPPABLE, borrow(a, bytes, n, access, &w, &out));
  if (!strstr(rig_last_error(), why) || (also && !strstr(rig_last_error(), also)))
    fail_msg("the refusal names no \"%s\"%s%s: %s", why, also ? " or no " : "", also ? also : "", rig_last_error());
  OK(rig_buffer_release(w));
}

/* Where the driver offers no import (a device without the extension) the default cases cannot run. */
static int import_offered(rig_device a) {
  char byte = 0;
  rig_buffer w, out;
  rig_status s = borrow(a, &byte, 1, RIG_ACCESS_READ_WRITE, &w, &out);
  if (s == RIG_OK) {
    OK(rig_buffer_release(out));
    OK(rig_buffer_release(w));
    return 1;
  }
  assert_int_equal(s, RIG_UNMAPPABLE);
  assert_non_null(strstr(rig_last_error(), "does not offer VK_EXT_external_memory_host"));
  assert_non_null(strstr(rig_last_error(), "rig_buffer_write_from"));
  OK(rig_buffer_release(w));
  if (rt_required("vulkan-import")) fail_msg("RIG_REQUIRE names vulkan-import but the device has none");
  return 0;
}

static int open_importing(rig_device *a) {
  if (!vk_open(a)) return 0;
  if (import_offered(*a)) return 1;
  OK(rig_device_release(*a));
  skip();
  return 0;
}

static void a_borrow_imports_host_memory_and_work_uses_the_callers_bytes(void **state) {
  (void)state;
  rig_device a;
  if (!open_importing(&a)) return;
  const size_t n = 1 << 16;
  uint8_t *mem = NULL;
  assert_int_equal(posix_memalign((void **)&mem, 65536, n + 64), 0);
  memset(mem, 0, n + 64);
  /* At an odd offset: the import covers the enclosing pages, the borrow its own bytes. */
  uint8_t *at = mem + 13;
  rig_buffer w, on_a;
  uint64_t before = vulkan_testing_imports();
  OK(borrow(a, at, n, RIG_ACCESS_READ_WRITE, &w, &on_a));
  assert_int_equal(vulkan_testing_imports(), before + 1);
  rig_buffer view;
  OK(rig_buffer_view(on_a, 100, 1000, &view));
  rt_fill(a, view, 0xab);
  /* A host read through the wrap follows the device's write (rule 5), then sees the caller's bytes. */
  uint8_t got[1200];
  OK(rig_buffer_read_into(w, 0, got, sizeof got));
  for (size_t i = 0; i < sizeof got; ++i) assert_int_equal(got[i], (i >= 100 && i < 1100) ? 0xab : 0);
  for (size_t i = 0; i < sizeof got; ++i) assert_int_equal(at[i], got[i]);
  assert_int_equal(mem[12], 0); /* the byte before the borrow, on its page, untouched */
  OK(rig_buffer_release(view));
  OK(rig_buffer_release(on_a));
  OK(rig_buffer_release(w));
  OK(rig_device_release(a)); /* the import is released once its work is reached */
  free(mem);
}

/* A launch binds a borrow where it lies in its import (the import starts at the enclosing page): x*3+1 over
 * words at an offset on the storage alignment and at one off it (staged through scratch), both on the
 * caller's bytes. */
static void a_launch_reads_and_writes_a_borrow_where_it_lies_in_its_import(void **state) {
  (void)state;
  rig_device a;
  if (!open_importing(&a)) return;
  rig_module affine = vk_module(a, affine_spv, sizeof affine_spv);
  enum { N = 1000 };
  uint32_t *mem = malloc((N + 8) * sizeof(uint32_t));
  assert_non_null(mem);
  const size_t shifts[] = {0, 1, 3}; /* words from a 16-byte aligned malloc start */
  for (size_t k = 0; k < sizeof shifts / sizeof shifts[0]; ++k) {
    uint32_t *x = mem + shifts[k];
    for (uint32_t i = 0; i < N; ++i) x[i] = i;
    rig_buffer w, on_a;
    OK(borrow(a, x, N * sizeof(uint32_t), RIG_ACCESS_READ_WRITE, &w, &on_a));
    struct { uint32_t a, b, n; } sc = {3, 1, N};
    rig_access rw = RIG_ACCESS_READ_WRITE;
    vk_launch(a, affine, "main", &on_a, &rw, 1, &sc, sizeof sc, (N + 63) / 64, 64, NULL, 0);
    uint32_t got[N];
    OK(rig_buffer_read_into(w, 0, got, sizeof got)); /* follows the launch (rule 5) */
    for (uint32_t i = 0; i < N; ++i) assert_int_equal(got[i], i * 3 + 1);
    for (uint32_t i = 0; i < N; ++i) assert_int_equal(x[i], i * 3 + 1);
    OK(rig_buffer_release(on_a));
    OK(rig_buffer_release(w));
  }
  OK(rig_module_release(affine));
  OK(rig_device_release(a));
  free(mem);
}

static void neighbours_on_a_page_are_each_imported_and_released_in_any_order(void **state) {
  (void)state;
  rig_device a;
  if (!open_importing(&a)) return;
  enum { kPairs = 64 };
  char *src[kPairs], *dst[kPairs];
  rig_buffer ws[kPairs], wd[kPairs], bs[kPairs], bd[kPairs], dev[kPairs];
  for (int i = 0; i < kPairs; ++i) {
    size_t n = 24 + (size_t)i * 37 % 3000;
    src[i] = malloc(n);
    dst[i] = malloc(n);
    assert_non_null(src[i]);
    assert_non_null(dst[i]);
    for (size_t k = 0; k < n; ++k) src[i][k] = (char)(i * 7 + k);
    memset(dst[i], 0, n);
    OK(borrow(a, src[i], n, RIG_ACCESS_READ, &ws[i], &bs[i]));
    OK(borrow(a, dst[i], n, RIG_ACCESS_READ_WRITE, &wd[i], &bd[i]));
    dev[i] = rt_create(a, n);
    rt_copy(a, bs[i], dev[i]);
    rt_copy(a, dev[i], bd[i]);
  }
  /* Released in an order unlike the borrows': odd pairs first, then even ones from the last. */
  for (int pass = 0; pass < 2; ++pass)
    for (int j = 0; j < kPairs; ++j) {
      int i = pass == 0 ? j : kPairs - 1 - j;
      if ((i % 2 == 1) != (pass == 0)) continue;
      size_t n = 24 + (size_t)i * 37 % 3000;
      char got[3100];
      OK(rig_buffer_read_into(wd[i], 0, got, n)); /* follows the copy back (rule 5) */
      assert_memory_equal(got, src[i], n);
      assert_memory_equal(dst[i], src[i], n);
      OK(rig_buffer_release(bd[i]));
      OK(rig_buffer_release(bs[i]));
      OK(rig_buffer_release(dev[i]));
      OK(rig_buffer_release(wd[i]));
      OK(rig_buffer_release(ws[i]));
      free(src[i]);
      free(dst[i]);
    }
  OK(rig_device_release(a));
}

static void file_mappings_and_read_only_pages_are_refused_with_the_reason(void **state) {
  (void)state;
  rig_device a;
  if (!open_importing(&a)) return;
  const uint64_t before = vulkan_testing_imports();
  const long page = sysconf(_SC_PAGESIZE);

  char path[] = "/tmp/rig-vk-import-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  assert_int_equal(ftruncate(fd, 4 * page), 0);
  char *shared = mmap(NULL, 4 * (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  char *privately = mmap(NULL, 4 * (size_t)page, PROT_READ, MAP_PRIVATE, fd, 0);
  char *own = mmap(NULL, 4 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  assert_true(shared != MAP_FAILED && privately != MAP_FAILED && own != MAP_FAILED);
  refused(a, shared + 5, 100, RIG_ACCESS_READ_WRITE, "file mapping", "kernel hazard");
  refused(a, privately, 2 * (size_t)page, RIG_ACCESS_READ, "file mapping", "kernel hazard");
  assert_int_equal(vulkan_testing_imports(), before); /* refused before an import */
  /* A private writable mapping of a file (a program's globals) is the process's own copy: imported, the
   * device writing the process's pages and never the file's. */
  rig_buffer w, out;
  OK(borrow(a, own + 7, 2 * (size_t)page, RIG_ACCESS_READ_WRITE, &w, &out));
  rt_fill(a, out, 0x77);
  char back[64];
  OK(rig_buffer_read_into(w, 0, back, sizeof back));
  for (size_t i = 0; i < sizeof back; ++i) assert_int_equal(back[i], 0x77);
  assert_int_equal(own[2 * page + 6], 0x77);
  assert_int_equal(own[2 * page + 7], 0);
  assert_int_equal(pread(fd, back, sizeof back, 7), (ssize_t)sizeof back);
  for (size_t i = 0; i < sizeof back; ++i) assert_int_equal(back[i], 0); /* the file is untouched */
  OK(rig_buffer_release(out));
  OK(rig_buffer_release(w));
  const uint64_t after_own = vulkan_testing_imports();

  /* Anonymous pages the process cannot write: a read-only borrow is imported, a writable one refused. */
  char *ro = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(ro != MAP_FAILED);
  memset(ro, 0x5a, 2 * (size_t)page);
  assert_int_equal(mprotect(ro, 2 * (size_t)page, PROT_READ), 0);
  refused(a, ro + 1, 64, RIG_ACCESS_READ_WRITE, "read-only", NULL);
  assert_int_equal(vulkan_testing_imports(), after_own); /* refused before an import */
  rig_status s = borrow(a, ro + 1, 64, RIG_ACCESS_READ, &w, &out);
  if (s == RIG_OK) { /* where the driver imports read-only pages: the device reads the caller's bytes */
    rig_buffer d = rt_create(a, 64);
    rt_copy(a, out, d);
    char got[64];
    OK(rig_buffer_read_into(d, 0, got, 64));
    for (int i = 0; i < 64; ++i) assert_int_equal(got[i], 0x5a);
    OK(rig_buffer_release(d));
    OK(rig_buffer_release(out));
    OK(rig_buffer_release(w));
  } else {
    assert_int_equal(s, RIG_UNMAPPABLE);
    fprintf(stderr, "note: the driver imports no read-only pages: %s\n", rig_last_error());
    OK(rig_buffer_release(w));
  }
  /* Unmapped pages: refused by name, nothing imported. */
  assert_int_equal(munmap(ro + page, (size_t)page), 0);
  uint64_t held = vulkan_testing_imports();
  refused(a, ro + page - 8, 16, RIG_ACCESS_READ, "not mapped", NULL);
  assert_int_equal(vulkan_testing_imports(), held);

  munmap(ro, (size_t)page);
  munmap(shared, 4 * (size_t)page);
  munmap(privately, 4 * (size_t)page);
  munmap(own, 4 * (size_t)page);
  close(fd);
  OK(rig_device_release(a));
}

static void the_static_verdict_refuses_vulkan_and_nothing_registers(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  const uint64_t before = vulkan_testing_imports();

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

  assert_int_equal(vulkan_testing_imports(), before); /* not one import attempted */
  free(map);
  free(ref);
  OK(rig_device_release(a));
}

static void turned_off_every_borrow_of_host_memory_is_refused_with_the_way_around(void **state) {
  (void)state;
  rig_device a, m;
  if (!vk_open(&a)) return;
  const uint64_t before = vulkan_testing_imports();
  void *mem = NULL;
  assert_int_equal(posix_memalign(&mem, 65536, 65536), 0);
  rig_buffer out;
  refused(a, mem, 65536, RIG_ACCESS_READ_WRITE, "RIG_VULKAN_HOST_IMPORT=0", "rig_buffer_write_from");
  char text[] = "hello, world";
  refused(a, text, 12, RIG_ACCESS_READ, "RIG_VULKAN_HOST_IMPORT=0", "rig_buffer_write_from");
  /* A memory device's memory is host memory: refused the same way. */
  OK(rig_memory_device("M", &m));
  rig_buffer x = rt_create(m, 4096);
  STATUS(RIG_UNMAPPABLE, rig_buffer_borrow(a, x, &out));
  assert_non_null(strstr(rig_last_error(), "RIG_VULKAN_HOST_IMPORT=0"));
  assert_int_equal(vulkan_testing_imports(), before); /* nothing was imported */
  OK(rig_buffer_release(x));
  OK(rig_device_release(m));
  free(mem);
  OK(rig_device_release(a));
}

/* On a device without the extension (the stand-in hides it: RIG_TEST_HIDE_HOST_IMPORT=1), a borrow is
 * refused naming the extension and the portable way, and nothing is imported. */
static void without_the_extension_a_borrow_names_what_to_do_instead(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  const uint64_t before = vulkan_testing_imports();
  char text[] = "hello, world";
  refused(a, text, 12, RIG_ACCESS_READ, "does not offer VK_EXT_external_memory_host", "rig_buffer_write_from");
  assert_int_equal(vulkan_testing_imports(), before);
  /* The portable way works: write the bytes into a buffer of the device and read them back. */
  rig_buffer d = rt_create(a, 12);
  OK(rig_buffer_write_from(d, 0, text, 12));
  char got[13] = {0};
  OK(rig_buffer_read_into(d, 0, got, 12));
  assert_string_equal(got, "hello, world");
  OK(rig_buffer_release(d));
  OK(rig_device_release(a));
}

int main(void) {
  const char *hidden = getenv("RIG_TEST_HIDE_HOST_IMPORT");
  if (hidden && strcmp(hidden, "1") == 0) {
    const struct CMUnitTest absent[] = {
        cmocka_unit_test(without_the_extension_a_borrow_names_what_to_do_instead),
    };
    return cmocka_run_group_tests_name("host import not offered", absent, NULL, vk_validation_teardown);
  }
  const char *v = getenv("RIG_VULKAN_HOST_IMPORT");
  if (v && strcmp(v, "0") == 0) {
    const struct CMUnitTest off[] = {
        cmocka_unit_test(turned_off_every_borrow_of_host_memory_is_refused_with_the_way_around),
        cmocka_unit_test(the_static_verdict_refuses_vulkan_and_nothing_registers),
    };
    return cmocka_run_group_tests_name("host import turned off", off, NULL, vk_validation_teardown);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_borrow_imports_host_memory_and_work_uses_the_callers_bytes),
      cmocka_unit_test(a_launch_reads_and_writes_a_borrow_where_it_lies_in_its_import),
      cmocka_unit_test(neighbours_on_a_page_are_each_imported_and_released_in_any_order),
      cmocka_unit_test(file_mappings_and_read_only_pages_are_refused_with_the_reason),
      cmocka_unit_test(the_static_verdict_refuses_vulkan_and_nothing_registers),
  };
  return cmocka_run_group_tests_name("host import", tests, NULL, vk_validation_teardown);
}
