/* rig_interop.h where no GPU API is: memory devices and the host. Memory made elsewhere wrapped as a
 * buffer of a memory device, outside work recorded in the stamps, DLPack on the host, host descriptors,
 * and the native-stream calls refused with RIG_UNSUPPORTED. Each test's name states its promise. */
#define _GNU_SOURCE
#include <dlpack/dlpack.h>
#include <poll.h>
#include <rig_interop.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rigtest.h"

static int released;
static void on_release(void *user) { *(int *)user += 1; }

static void wrapped_memory_takes_part_in_the_rules_and_is_never_freed(void **state) {
  (void)state;
  rig_device a;
  OK(rig_memory_device("A", &a));
  char *bytes = malloc(64);
  memset(bytes, 'x', 64);
  rig_buffer w, src;
  released = 0;
  OK(rig_buffer_wrap_device(a, (uint64_t)(uintptr_t)bytes, 64, on_release, &released, &w));
  uint64_t address = 0;
  OK(rig_buffer_device_address(w, &address));
  assert_int_equal(address, (uint64_t)(uintptr_t)bytes);
  src = rt_create(a, 64);
  rt_fill(a, src, 'y');
  rig_point copied = rt_copy(a, src, w);
  rig_point last = 0;
  OK(rig_buffer_last_write(w, &last));
  assert_int_equal(last, copied);
  assert_int_equal(bytes[63], 'y');
  OK(rig_buffer_release(w));
  assert_int_equal(released, 1);
  free(bytes); /* rig never freed it: the release function said rig is done */
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_wrap_device(a, 0, 1, NULL, NULL, &w));
  OK(rig_buffer_wrap_device(a, 0, 0, NULL, NULL, &w)); /* nothing at no address is fine */
  OK(rig_buffer_release(w));
  OK(rig_buffer_release(src));
  OK(rig_device_release(a));
}

/* A point of device B stamped on an allocation as B's write: A's next read of it follows that point. */
static void stamped_outside_point_is_followed_by_later_work(void **state) {
  (void)state;
  rig_device a, b;
  OK(rig_memory_device("A", &a));
  OK(rig_memory_device("B", &b));
  rig_buffer x = rt_create(a, 16), y = rt_create(a, 16), scratch = rt_create(b, 16);
  rig_point p = rt_fill(b, scratch, 1); /* stands for outside work of B */
  OK(rig_buffer_stamp(x, p, RIG_ACCESS_WRITE));
  rig_point last = 0;
  OK(rig_buffer_last_write(x, &last));
  assert_int_equal(last, p);
  rt_copy(a, x, y); /* a read of x: rule 3 collects B's point */
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_stamp(x, 0, RIG_ACCESS_READ));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_stamp(x, p, (rig_access)7));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_stamp(x, rig_point_make(rig_point_device_index(p), 999), RIG_ACCESS_READ));
  STATUS(RIG_NOT_FOUND, rig_buffer_stamp(x, rig_point_make(65000, 1), RIG_ACCESS_READ));
  STATUS(RIG_INVALID_HANDLE, rig_buffer_stamp(NULL, p, RIG_ACCESS_READ));
  rig_buffer ro;
  static const char text[16] = "read only bytes";
  OK(rig_buffer_wrap((void *)text, 16, RIG_ACCESS_READ, NULL, NULL, &ro));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_stamp(ro, p, RIG_ACCESS_WRITE));
  OK(rig_buffer_release(ro));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_buffer_release(scratch));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

static void host_buffer_exports_as_a_cpu_dlpack_tensor(void **state) {
  (void)state;
  rig_device a;
  OK(rig_memory_device("A", &a));
  rig_buffer x = rt_create(a, 32);
  rt_fill(a, x, 2);
  struct DLManagedTensor *t = NULL;
  OK(rig_buffer_to_dlpack(x, kDLFloat, 32, 1, &t));
  assert_int_equal(t->dl_tensor.device.device_type, kDLCPU);
  assert_int_equal(t->dl_tensor.shape[0], 8);
  assert_int_equal(t->dl_tensor.dtype.bits, 32);
  OK(rig_buffer_release(x));
  assert_int_equal(((unsigned char *)t->dl_tensor.data)[31], 2); /* kept alive by the tensor */
  t->deleter(t);
  STATUS(RIG_INVALID_HANDLE, rig_buffer_to_dlpack(NULL, kDLFloat, 32, 1, &t));
  OK(rig_device_release(a));
}

static void memory_points_give_readable_descriptors_and_native_calls_are_unsupported(void **state) {
  (void)state;
  rig_device a;
  OK(rig_memory_device("A", &a));
  rig_buffer x = rt_create(a, 8);
  rig_point p = rt_fill(a, x, 0);
  int fd = -1;
  OK(rig_point_fd(p, &fd));
  struct pollfd pfd = {fd, POLLIN, 0};
  assert_int_equal(poll(&pfd, 1, 1000), 1);
  close(fd);
  rig_point q = 0;
  void *event = NULL;
  STATUS(RIG_UNSUPPORTED, rig_stream_wait_point(a, NULL, p));
  STATUS(RIG_UNSUPPORTED, rig_stream_point(a, NULL, &q));
  STATUS(RIG_UNSUPPORTED, rig_point_import_event(a, &fd, &q));
  STATUS(RIG_UNSUPPORTED, rig_point_export_event(p, &event));
  int yes = -1;
  OK(rig_interop_supported(a, NULL, RIG_INTEROP_IMPORT_EVENT, &yes));
  assert_int_equal(yes, 0);
  OK(rig_interop_supported(a, NULL, RIG_INTEROP_DEVICE_POINTER, &yes));
  assert_int_equal(yes, 1);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(wrapped_memory_takes_part_in_the_rules_and_is_never_freed),
      cmocka_unit_test(stamped_outside_point_is_followed_by_later_work),
      cmocka_unit_test(host_buffer_exports_as_a_cpu_dlpack_tensor),
      cmocka_unit_test(memory_points_give_readable_descriptors_and_native_calls_are_unsupported),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
