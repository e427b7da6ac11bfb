/* The loader onto a Vulkan device (lavapipe in CI). By default Vulkan imports host memory, so the staged
 * path stages through ordinary memory borrowed by the device (src/load/pool.cpp); with
 * RIG_VULKAN_HOST_IMPORT=0 (the second test) it borrows none and stages through the device's own pinned
 * buffers (RIG_MEMORY_PINNED, the pool's fallback). Either way every tensor's bytes equal the file's, with
 * a pool made by the load and with a pool kept across two loads, and a tensor (a part of the load's arena)
 * is refused a memory descriptor. Skipped (77, with the reason) without a Vulkan device;
 * fails instead when RIG_REQUIRE names vulkan. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig_interop.h>

#include "rigtest.h"
#include "weights.h"

static rig_device gpu;
static const size_t lengths[] = {100000, 300000, 4096, 700000, 1};
#define COUNT 5

static void every_tensor_equals_the_file(rig_load_file f, const char *path, const rig_load_pool *pool) {
  rig_load_options o = tw_options(RIG_LOAD_PATH_STAGED, 128 << 10, 2);
  o.pools = pool;
  o.pool_count = pool ? 1 : 0;
  rig_load_placement p = tw_placement(&gpu, 1, RIG_LOAD_RULE_EACH, NULL);
  rig_load load;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  rig_load_stats st;
  memset(&st, 0, sizeof st);
  st.size = sizeof st;
  assert_int_equal(rig_load_get_stats(load, &st), RIG_OK);
  assert_int_equal(st.path, RIG_LOAD_PATH_STAGED);
  assert_true(st.staging_bytes >= 128 << 10);
  for (size_t i = 0; i < COUNT; ++i)
    if (!tw_tensor_as_file(load, f, path, i, 0)) fail_msg("tensor %zu differs from the file (or its length)", i);
  /* The tensors are parts of one arena (load/arenas.h): a memory descriptor would carry the whole arena,
   * so where the device exports descriptors it refuses a tensor, saying why. */
  int fds = 0;
  assert_int_equal(rig_interop_supported(gpu, NULL, RIG_INTEROP_MEMORY_FD, &fds), RIG_OK);
  if (fds) {
    rig_buffer t;
    assert_int_equal(rig_load_buffer(load, 1, 0, &t), RIG_OK);
    int fd = -1;
    size_t length = 0;
    assert_int_equal(rig_buffer_export_fd(t, &fd, &length), RIG_INVALID_ARGUMENT);
    assert_non_null(strstr(rig_last_error(), "shared with other buffers"));
    assert_int_equal(fd, -1);
    rig_buffer_release(t);
  } else {
    fprintf(stderr, "SKIP the descriptor refusal: the device exports no memory descriptors\n");
  }
  assert_int_equal(rig_load_release(load), RIG_OK);
}

static void staged_through_borrowed_or_pinned_buffers(void **state) {
  (void)state;
  /* the premise: this device borrows host memory (pools borrow theirs) unless RIG_VULKAN_HOST_IMPORT=0 or
   * the device does not offer the import (pools fall back to the device's pinned buffers) */
  const char *import = getenv("RIG_VULKAN_HOST_IMPORT");
  const int turned_off = import && strcmp(import, "0") == 0;
  char *host = malloc(4096);
  assert_non_null(host);
  rig_buffer wrap, borrowed;
  assert_int_equal(rig_buffer_wrap(host, 4096, RIG_ACCESS_READ_WRITE, NULL, NULL, &wrap), RIG_OK);
  rig_status borrow = rig_buffer_borrow(gpu, wrap, &borrowed);
  if (turned_off) {
    assert_int_equal(borrow, RIG_UNMAPPABLE);
    assert_non_null(strstr(rig_last_error(), "RIG_VULKAN_HOST_IMPORT=0"));
  } else if (borrow == RIG_OK) {
    rig_buffer_release(borrowed);
  } else {
    assert_int_equal(borrow, RIG_UNMAPPABLE);
    assert_non_null(strstr(rig_last_error(), "does not offer VK_EXT_external_memory_host"));
    fprintf(stderr, "note: pools fall back here: %s\n", rig_last_error());
  }
  rig_buffer_release(wrap);
  free(host);
  const char *path = tw_path("weights-vulkan");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  every_tensor_equals_the_file(f, path, NULL);
  rig_load_pool pool;
  assert_int_equal(rig_load_pool_create(gpu, 1 << 20, 128 << 10, &pool), RIG_OK);
  every_tensor_equals_the_file(f, path, &pool);
  every_tensor_equals_the_file(f, path, &pool);
  assert_int_equal(rig_load_pool_release(pool), RIG_OK);
  assert_int_equal(rig_load_file_release(f), RIG_OK);
  unlink(path);
}

int main(void) {
  if (rig_device_open("vulkan:0", &gpu) != RIG_OK) {
    fprintf(stderr, "no Vulkan device (%s)%s\n", rig_last_error(), rt_required("vulkan") ? ": RIG_REQUIRE=vulkan" : ": skipped");
    return rt_required("vulkan") ? 1 : 77;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(staged_through_borrowed_or_pinned_buffers)};
  int failures = cmocka_run_group_tests_name("load on Vulkan", tests, NULL, NULL);
  rig_device_release(gpu);
  return failures;
}
