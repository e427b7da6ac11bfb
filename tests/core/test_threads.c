/* Several threads submitting at once on several devices, reading one shared allocation concurrently (the
 * Domains rules allow concurrent reads) and writing their own, with every byte of the outcome checked. The
 * devices come from RIG_TEST_KINDS (memory devices and test-driver devices by default; memory+cuda, cuda,
 * ... on GPUs, where a fill of half the buffer stands in for the host kernel). Run under ThreadSanitizer in
 * CI. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rigtest.h"
#include "test_driver.h"

enum { THREADS = 4, ROUNDS = 300, BYTES = 256 };

static rig_buffer shared_src; /* read by every thread */
static rig_device devs[THREADS], peers[THREADS];
static int kernels[THREADS]; /* the device runs host kernels */
static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void add_round(void *user, const rig_span *slots, size_t n) {
  (void)n;
  uint8_t add = (uint8_t)(uintptr_t)user;
  uint8_t *p = (uint8_t *)slots[0].data;
  for (size_t i = 0; i < slots[0].length; ++i) p[i] = (uint8_t)(p[i] + add);
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  rig_device d = devs[t], peer = peers[t];
  rig_buffer src_on_d = rt_borrow(d, shared_src);
  rig_buffer x = rt_create_shared(d, BYTES), y = rt_create(peer, BYTES), half = NULL;
  OK(rig_buffer_view(x, 0, BYTES / 2, &half));
  rig_buffer x_on_peer = rt_borrow(peer, x);
  for (int r = 0; r < ROUNDS; ++r) {
    rt_copy(d, src_on_d, x);                               /* x = shared */
    rig_access rw = RIG_ACCESS_READ_WRITE;
    if (kernels[t])
      rt_kernel(d, add_round, (void *)(uintptr_t)(t + 1), &x, &rw, 1, NULL, 0); /* x += t+1 */
    else
      rt_fill(d, half, (uint8_t)(t + 1)); /* x[0, BYTES/2) = t+1 */
    rt_copy(peer, x_on_peer, y);                           /* y = x on another device (rule 3) */
    uint8_t out[BYTES];
    OK(rig_buffer_read_into(y, 0, out, BYTES));            /* rule 5 */
    for (int i = 0; i < BYTES; ++i)
      if (out[i] != (kernels[t] ? (uint8_t)(i + t + 1) : i < BYTES / 2 ? (uint8_t)(t + 1) : (uint8_t)i)) {
        pthread_mutex_lock(&failures_lock);
        ++failures;
        pthread_mutex_unlock(&failures_lock);
        break;
      }
  }
  rig_buffer_release(half);
  rig_buffer_release(x_on_peer), rig_buffer_release(x), rig_buffer_release(y), rig_buffer_release(src_on_d);
  return NULL;
}

static void threads_submitting_at_once_on_several_devices_keep_every_byte(void **state) {
  (void)state;
  static uint8_t bytes[4096] __attribute__((aligned(4096))); /* page-aligned: GPUs register whole pages */
  for (int i = 0; i < BYTES; ++i) bytes[i] = (uint8_t)i;
  OK(rig_buffer_wrap(bytes, BYTES, RIG_ACCESS_READ, NULL, NULL, &shared_src));
  for (int t = 0; t < THREADS; ++t) {
    char name[16];
    snprintf(name, sizeof name, "D%d", t);
    if (!rt_open_kind((size_t)t + 1, name, &devs[t])) return;
    snprintf(name, sizeof name, "P%d", t);
    if (!rt_open_kind((size_t)t, name, &peers[t])) return;
    rig_part p = {sizeof p};
    p.kind = RIG_PART_HOST_KERNEL;
    p.fn = add_round;
    rig_submission s;
    kernels[t] = rig_submission_make(devs[t], &p, 1, NULL, 0, &s) == RIG_OK;
    if (kernels[t]) rig_submission_release(s);
    /* Devices that borrow no host memory (Vulkan by default) cannot read the shared wrap. */
    rig_buffer probe = NULL;
    if (rig_buffer_borrow(devs[t], shared_src, &probe) == RIG_UNMAPPABLE) {
      rt_skip(rig_last_error());
    }
    rig_buffer_release(probe);
  }
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
  for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
  assert_int_equal(failures, 0);
  OK(rig_buffer_release(shared_src));
  for (int t = 0; t < THREADS; ++t) OK(rig_device_release(devs[t])), OK(rig_device_release(peers[t]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_submitting_at_once_on_several_devices_keep_every_byte),
  };
  return rt_finish(cmocka_run_group_tests_name("threads", tests, NULL, NULL));
}
