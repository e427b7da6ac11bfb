/* The six rules of docs/ordering-model.md on Vulkan devices, where the producer's work is held in an open
 * command buffer until something commits it. lavapipe runs nothing that was not submitted, so a wait the
 * engine or the driver forgot (or a commit it forgot) leaves the producer's work unrun or run late, and the
 * bytes checked here come out stale. Consumers are a second Vulkan device on the same VkDevice (waits in
 * its queue on the producer's timeline semaphore) and a memory device (waits on the host). */
#include <stdio.h>
#include <string.h>

#include "vk_common.h"

enum { L = 1024 };

static void expect_bytes(rig_buffer b, uint8_t want, const char *what) {
  uint8_t buf[L];
  OK(rig_buffer_read_into(b, 0, buf, L));
  for (size_t i = 0; i < L; ++i)
    if (buf[i] != want) fail_msg("%s: byte %zu is 0x%02x, want 0x%02x", what, i, buf[i], want);
}

static void put_bytes(rig_buffer b, uint8_t v) {
  uint8_t buf[L];
  memset(buf, v, L);
  OK(rig_buffer_write_from(b, 0, buf, L));
}

/* Rule 1: values of one device run in order, within a batch and across batches (more than k values). */
static void rule1_a_devices_values_run_in_order_across_batches(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_DEVICE), y = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  const uint64_t k = vulkan_testing_commit_every();
  for (unsigned i = 1; i <= 3 * k + 1; ++i) {
    rt_fill(a, x, (uint8_t)i); /* x = i */
    rt_copy(a, x, y);          /* y = i: reads the fill just before it */
  }
  rt_fill(a, x, 0xee);
  expect_bytes(y, (uint8_t)(3 * k + 1), "y after the last copy");
  expect_bytes(x, 0xee, "x after the last fill");
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
}

/* Rule 3 with the host-waiting consumer reversed: a memory device writes (inline), then Vulkan reads. */
static void rule3_vulkan_reads_what_a_memory_device_wrote(void **state) {
  (void)state;
  rig_device a, m;
  if (!vk_open(&a)) return;
  OK(rig_memory_device("M", &m));
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_PINNED), y = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  rig_buffer xm = rt_borrow(m, x), src = rt_create(m, L);
  put_bytes(src, 0x5c);
  rt_fill(a, x, 0x01);    /* A:1 writes x (held) */
  rt_copy(m, src, xm);    /* M follows A:1's write (rule 4: commit A, host wait), then writes x */
  rt_copy(a, x, y);       /* A reads x after M's write (rule 3) */
  expect_bytes(y, 0x5c, "y");
  OK(rig_buffer_release(xm));
  OK(rig_buffer_release(src));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(m));
}

/* Rule 4 in a queue: B's write of x follows A's held read of x. Without the wait B's fill would run
 * first (A's copy is not even submitted) and y would get B's bytes. */
static void rule4_a_write_on_b_follows_a_held_read_on_a(void **state) {
  (void)state;
  rig_device a, b;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_DEVICE), y = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  put_bytes(x, 0x11);
  rt_copy(a, x, y); /* A:1 reads x, held */
  rig_buffer xb = rt_borrow(b, x);
  rig_point pb = rt_fill(b, xb, 0x22);
  OK(rig_wait_point(pb, UINT64_MAX));
  expect_bytes(y, 0x11, "y (A's read saw x before B's write)");
  expect_bytes(x, 0x22, "x");
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* Rule 4 on the host side of a memory device: M's write follows A's held read (commit A, host wait). */
static void rule4_a_memory_device_write_follows_a_held_vulkan_read(void **state) {
  (void)state;
  rig_device a, m;
  if (!vk_open(&a)) return;
  OK(rig_memory_device("M", &m));
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_PINNED), y = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  put_bytes(x, 0x33);
  rt_copy(a, x, y); /* held */
  rig_buffer xm = rt_borrow(m, x), src = rt_create(m, L);
  put_bytes(src, 0x44);
  rt_copy(m, src, xm);
  expect_bytes(y, 0x33, "y (A's read saw x before M's write)");
  expect_bytes(x, 0x44, "x");
  OK(rig_buffer_release(xm));
  OK(rig_buffer_release(src));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_device_release(a));
  OK(rig_device_release(m));
}

/* Rule 5: a host read follows the held write, committing it. */
static void rule5_a_host_read_commits_and_follows_the_held_write(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  rt_fill(a, x, 0x66);
  assert_int_equal(rt_signaled(a), 0);
  expect_bytes(x, 0x66, "x");
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Rule 6: a host write follows the held read; and releasing the last buffer over memory a held copy reads
 * waits for it (the validation layer would report a destroyed buffer in a submitted command buffer). */
static void rule6_host_writes_and_releases_follow_held_reads(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_DEVICE), y = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  put_bytes(x, 0x77);
  rt_copy(a, x, y); /* held */
  put_bytes(x, 0x88);
  expect_bytes(y, 0x77, "y (the copy ran before the host write)");
  rig_buffer z = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  rt_copy(a, x, z); /* held, reads x */
  OK(rig_buffer_release(x));
  expect_bytes(z, 0x88, "z");
  OK(rig_buffer_release(y));
  OK(rig_buffer_release(z));
  OK(rig_device_release(a));
}

/* Order is transitive through points: A writes, B copies it on (waiting in its queue), M copies B's
 * result on (waiting on the host), and the host reads M's copy. */
static void order_is_transitive_through_vulkan_and_memory_devices(void **state) {
  (void)state;
  rig_device a, b, m;
  if (!vk_open(&a)) return;
  if (!vk_open(&b)) return;
  OK(rig_memory_device("M", &m));
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_DEVICE), y = vk_buffer(b, L, RIG_MEMORY_PINNED), z = rt_create(m, L);
  rig_buffer xb = rt_borrow(b, x), ym = rt_borrow(m, y);
  for (unsigned i = 1; i <= 30; ++i) {
    rt_fill(a, x, (uint8_t)i);
    rt_copy(b, xb, y);
    rt_copy(m, ym, z);
    expect_bytes(z, (uint8_t)i, "z");
  }
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(ym));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_buffer_release(z));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
  OK(rig_device_release(m));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rule1_a_devices_values_run_in_order_across_batches),
      cmocka_unit_test(rule3_vulkan_reads_what_a_memory_device_wrote),
      cmocka_unit_test(rule4_a_write_on_b_follows_a_held_read_on_a),
      cmocka_unit_test(rule4_a_memory_device_write_follows_a_held_vulkan_read),
      cmocka_unit_test(rule5_a_host_read_commits_and_follows_the_held_write),
      cmocka_unit_test(rule6_host_writes_and_releases_follow_held_reads),
      cmocka_unit_test(order_is_transitive_through_vulkan_and_memory_devices),
  };
  return cmocka_run_group_tests(tests, NULL, vk_validation_teardown);
}
