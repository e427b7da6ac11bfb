/* The HIP driver through the C ABI: discovery, memory, copies and fills, launches from a code object, the
 * order of work across two devices (in-queue waits), host waits, borrows of host memory through registration,
 * and loss. On the fake libamdhip64 (RIG_HIP_LIBRARY) every case runs; through the shim over the CUDA driver
 * (tests/doubles/hip_shim) on a real GPU the cases that need no fake switch run. No HIP device: exit 77, or
 * 1 under RIG_REQUIRE=hip. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_test.h"

static void reset_fake(void) {
  if (ht_fake()) ht_set("reset", 0);
}

static int open_pair(rig_device *a, rig_device *b) {
  /* Two GPUs where there are two; else two devices on one GPU (still two streams ordered only by rig). */
  if (!ht_open("hip:0", a)) return 0;
  return ht_open(ht_gpu_count() > 1 ? "hip:1" : "hip:0", b);
}

static void test_devices_are_listed_with_name_framework_memory_and_kind(void **state) {
  (void)state;
  reset_fake();
  assert_true(ht_gpu_count() >= 1);
  rig_device d;
  if (!ht_open("hip:0", &d)) return;
  rig_device_info info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  OK(rig_device_get_info(d, &info));
  assert_string_equal(info.name, "hip:0");
  assert_string_equal(info.framework, "HIP");
  assert_int_equal(info.kind, RIG_DEVICE_GPU);
  assert_true(info.memory_bytes > 0);
  assert_true(strlen(info.model) > 0);
  print_message("hip:0 is %s, %llu MiB, integrated %d\n", info.model,
                (unsigned long long)(info.memory_bytes >> 20), info.integrated);
  if (ht_fake()) {
    assert_string_equal(info.model, "Fake HIP Device 0");
    assert_int_equal(info.integrated, 0);
  }
  OK(rig_device_release(d));
  rig_device none;
  STATUS(RIG_NOT_FOUND, rig_device_open("hip:63", &none));
}

/* HIP counts a failed integrated query as integrated (the seed): so does the device's info. */
static void test_a_failed_integrated_query_reads_as_integrated(void **state) {
  (void)state;
  reset_fake();
  HT_FAKE_ONLY();
  ht_set("integrated_query_fails", 1);
  rig_device d;
  if (!ht_open("hip:0", &d)) return;
  rig_device_info info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  OK(rig_device_get_info(d, &info));
  assert_int_equal(info.integrated, 1);
  OK(rig_device_release(d));
  reset_fake();
}

static void round_trip(rig_device d, rig_memory kind, size_t n) {
  rig_buffer b = NULL;
  OK(rig_buffer_create(d, n, kind, &b));
  unsigned char *in = malloc(n), *out = malloc(n);
  for (size_t i = 0; i < n; ++i) in[i] = (unsigned char)(i * 7 + 3);
  OK(rig_buffer_write_from(b, 0, in, n));
  memset(out, 0, n);
  OK(rig_buffer_read_into(b, 0, out, n));
  assert_memory_equal(in, out, n);
  rt_fill(d, b, 0x5a);
  OK(rig_buffer_read_into(b, 0, out, n));
  for (size_t i = 0; i < n; ++i)
    if (out[i] != 0x5a) fail_msg("byte %zu is 0x%02x after a fill with 0x5a", i, out[i]);
  free(in);
  free(out);
  OK(rig_buffer_release(b));
}

static void test_device_pinned_and_mapped_memory_round_trip(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!ht_open("hip:0", &d)) return;
  round_trip(d, RIG_MEMORY_DEVICE, 1 << 20);
  round_trip(d, RIG_MEMORY_PINNED, 12345);
  round_trip(d, RIG_MEMORY_MAPPED, 4096);
  rig_buffer empty = NULL;
  OK(rig_buffer_create(d, 0, RIG_MEMORY_DEVICE, &empty));
  OK(rig_buffer_release(empty));
  OK(rig_device_release(d));
}

/* Copies and fills alternate between two devices over the same memory: each must follow the last. */
static void test_copies_and_fills_alternating_devices_keep_order(void **state) {
  (void)state;
  reset_fake();
  if (ht_fake()) ht_set("copy_delay_us", 200); /* a copy that ran early would be overtaken */
  rig_device a, b;
  if (!open_pair(&a, &b)) return;
  const size_t n = 4096;
  rig_buffer x = rt_create(a, n), y = rt_create(a, n);
  rig_buffer xb = rt_borrow(b, x), yb = rt_borrow(b, y);
  unsigned char expect[4096], got[4096];
  for (int step = 0; step < 40; ++step) {
    rig_device d = step % 2 ? b : a;
    rig_buffer sx = step % 2 ? xb : x, sy = step % 2 ? yb : y;
    rt_fill(d, sx, (uint8_t)step);
    rt_copy(d, sx, sy);
    if (step % 5 == 4) {
      OK(rig_buffer_read_into(y, 0, got, n));
      memset(expect, step, n);
      assert_memory_equal(expect, got, n);
    }
  }
  OK(rig_buffer_read_into(y, 0, got, n));
  memset(expect, 39, n);
  assert_memory_equal(expect, got, n);
  rig_buffer bufs[] = {xb, yb, x, y};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(bufs[i]));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

static uint32_t chain_step(uint32_t v, uint32_t k, uint32_t i) { return v * 31u + k + i; }

/* A chain of kernels alternating between two devices, each reading the previous result (in place and
 * ping-pong), checked element by element against the host's chain. Both timelines: RIG_HIP_TIMELINE. */
static void test_kernel_chain_across_two_devices_follows_order(void **state) {
  (void)state;
  reset_fake();
  if (ht_fake()) ht_set("launch_delay_us", 100);
  rig_device a, b;
  if (!open_pair(&a, &b)) return;
  rig_module ma = ht_kernels(a), mb = ht_kernels(b);
  /* Small on the fake and under compute-sanitizer (RIG_HIP_TEST_QUICK=1), larger on a GPU. */
  int quick = ht_fake() || (getenv("RIG_HIP_TEST_QUICK") && atoi(getenv("RIG_HIP_TEST_QUICK")));
  const uint32_t n = quick ? 4096 : 1 << 18;
  const int rounds = quick ? 4 : 12, steps = quick ? 12 : 40;
  uint32_t *host = malloc(n * sizeof *host), *want = malloc(n * sizeof *want);
  rig_buffer x = NULL, y = NULL;
  OK(rig_buffer_create(a, n * 4, RIG_MEMORY_DEVICE, &x));
  OK(rig_buffer_create(b, n * 4, RIG_MEMORY_DEVICE, &y));
  rig_buffer xb = rt_borrow(b, x), ya = rt_borrow(a, y);
  for (int r = 0; r < rounds; ++r) {
    for (uint32_t i = 0; i < n; ++i) want[i] = host[i] = i * 2654435761u + (uint32_t)r;
    OK(rig_buffer_write_from(x, 0, host, n * 4));
    for (int s = 0; s < steps; ++s) {
      uint32_t k = (uint32_t)(r * 1000 + s);
      switch (s % 4) {
        case 0: ht_step(a, ma, "rig_chain_step", x, x, n, k); break;
        case 1: ht_step(b, mb, "rig_chain_step", xb, y, n, k); break;
        case 2: ht_step(a, ma, "rig_chain_step", ya, x, n, k); break;
        case 3: ht_step(b, mb, "rig_chain_step", xb, xb, n, k); break;
      }
      for (uint32_t i = 0; i < n; ++i) want[i] = chain_step(want[i], k, i);
    }
    memset(host, 0, n * 4);
    OK(rig_buffer_read_into(x, 0, host, n * 4));
    for (uint32_t i = 0; i < n; ++i)
      if (host[i] != want[i]) fail_msg("round %d: element %u is %u, the chain gives %u", r, i, host[i], want[i]);
  }
  if (ht_fake()) {
    const char *t = getenv("RIG_HIP_TIMELINE");
    int events = (t && strcmp(t, "events") == 0) || (getenv("FAKEHIP_MEMOPS") && atoi(getenv("FAKEHIP_MEMOPS")) == 0);
    /* The consumer waited in its queue (no host wait between the steps): on values or on events. */
    if (events) assert_true(ht_query("event_waits") > 0);
    else assert_true(ht_query("wait_values") > 0);
  }
  free(host);
  free(want);
  rig_buffer bufs[] = {xb, ya, x, y};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(bufs[i]));
  OK(rig_module_release(ma));
  OK(rig_module_release(mb));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* A kernel reads and writes host memory borrowed through hipHostRegister, reaching it through the device
 * pointer hipHostGetDevicePointer gives (the fake makes that differ from the host pointer, so a kernel handed
 * the raw host pointer would fault). The range is in rig's table while borrowed, and gone after. */
static void test_borrow_of_page_aligned_host_memory_registers_it(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!ht_open("hip:0", &d)) return;
  rig_module m = ht_kernels(d);
  const uint32_t n = 3000;
  uint32_t *mem = aligned_alloc(4096, 16384);
  for (uint32_t i = 0; i < n; ++i) mem[i] = i;
  rig_buffer w = NULL;
  OK(rig_buffer_wrap(mem, n * 4, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  rig_buffer wd = rt_borrow(d, w);
  int reg = 0;
  OK(rig_host_is_registered(mem, n * 4, &reg));
  assert_int_equal(reg, 1);
  ht_step(d, m, "rig_add_u32", wd, wd, n, 5);
  uint32_t *out = malloc(n * 4);
  OK(rig_buffer_read_into(w, 0, out, n * 4));
  for (uint32_t i = 0; i < n; ++i)
    if (out[i] != i + 5) fail_msg("element %u is %u, want %u", i, out[i], i + 5);
  if (ht_fake()) {
    assert_int_equal(ht_query("registers"), 1);
    assert_int_equal(ht_query("sticky"), 0);
  }
  OK(rig_buffer_release(wd));
  OK(rig_buffer_release(w));
  OK(rig_host_is_registered(mem, n * 4, &reg));
  assert_int_equal(reg, 0);
  if (ht_fake()) assert_int_equal(ht_query("unregisters"), 1);
  free(out);
  free(mem);
  OK(rig_module_release(m));
  OK(rig_device_release(d));
}

/* Unaligned host memory, and memory whose range is already registered (by rig_host_register), are not
 * borrowed: the second never reaches hipHostRegister. */
/* Unaligned host memory borrows (its page is registered); pages held by rig_host_register do not. */
static void test_unaligned_borrows_and_already_registered_host_memory_is_unmappable(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!ht_open("hip:0", &d)) return;
  char *mem = aligned_alloc(4096, 3 * 4096);
  rig_buffer w = NULL, out = NULL;
  OK(rig_buffer_wrap(mem + 8, 100, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  OK(rig_buffer_borrow(d, w, &out));
  OK(rig_buffer_release(out));
  OK(rig_buffer_release(w));
  if (ht_fake()) assert_int_equal(ht_query("unregisters"), ht_query("registers"));
  OK(rig_host_register(d, mem, 2 * 4096, RIG_ACCESS_READ_WRITE));
  long long calls = ht_query("register_calls");
  OK(rig_buffer_wrap(mem + 4096, 4096, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  rig_status s = rig_buffer_borrow(d, w, &out);
  if (s != RIG_UNMAPPABLE || !strstr(rig_last_error(), "overlaps"))
    fail_msg("borrow over a registered range: %s: %s", rig_status_name(s), rig_last_error());
  if (ht_fake()) assert_int_equal(ht_query("register_calls"), calls);
  OK(rig_buffer_release(w));
  OK(rig_host_unregister(d, mem));
  free(mem);
  OK(rig_device_release(d));
}

/* Another GPU's memory is borrowed through peer access (enabled once per pair) and refused without it. */
static void test_peer_memory_borrows_only_where_peer_access_exists(void **state) {
  (void)state;
  reset_fake();
  HT_FAKE_ONLY();
  rig_device a, b;
  if (!ht_open("hip:0", &a) || !ht_open("hip:1", &b)) return;
  rig_buffer x = rt_create(a, 4096), out = NULL;
  ht_set("peer_access", 0);
  STATUS(RIG_UNMAPPABLE, rig_buffer_borrow(b, x, &out));
  assert_non_null(strstr(rig_last_error(), "peer access"));
  ht_set("peer_access", 1);
  rig_buffer xb = rt_borrow(b, x);
  rig_module mb = ht_kernels(b);
  ht_fill_u32(b, mb, xb, 1024, 77); /* a kernel of hip:1 writes hip:0's memory */
  uint32_t got[1024];
  OK(rig_buffer_read_into(x, 0, got, sizeof got));
  for (int i = 0; i < 1024; ++i) assert_int_equal(got[i], 77);
  assert_int_equal(ht_query("sticky1"), 0);
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(x));
  OK(rig_module_release(mb));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

static void host_kernel(void *user, const rig_span *slots, size_t slot_count) {
  (void)user, (void)slots, (void)slot_count;
}

static void test_host_kernels_and_other_module_formats_are_refused(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!ht_open("hip:0", &d)) return;
  rig_part part;
  memset(&part, 0, sizeof part);
  part.size = sizeof part;
  part.kind = RIG_PART_HOST_KERNEL;
  part.fn = host_kernel;
  rig_access a = RIG_ACCESS_WRITE;
  rig_submission sub = NULL;
  STATUS(RIG_UNSUPPORTED, rig_submission_make(d, &part, 1, &a, 1, &sub));
  rig_module m = NULL;
  STATUS(RIG_UNSUPPORTED, rig_module_load(d, RIG_MODULE_SPIRV, "\x03\x02\x23\x07", 4, &m));
  STATUS(RIG_UNSUPPORTED, rig_module_load(d, RIG_MODULE_PTX, ".version 8.0", 12, &m));
  if (ht_fake()) {
    STATUS(RIG_INVALID_ARGUMENT, rig_module_load(d, RIG_MODULE_HIP_CODE_OBJECT, "fakehip:invalid", 15, &m));
    STATUS(RIG_UNSUPPORTED, rig_module_load(d, RIG_MODULE_HIP_CODE_OBJECT, "\x7f" "ELF....", 8, &m));
  }
  m = ht_kernels(d);
  uintptr_t dummy = 0;
  (void)dummy;
  part.kind = RIG_PART_LAUNCH;
  part.fn = NULL;
  part.module = m;
  part.function = "no_such_kernel";
  part.grid[0] = part.grid[1] = part.grid[2] = 1;
  part.block[0] = part.block[1] = part.block[2] = 1;
  STATUS(RIG_NOT_FOUND, rig_submission_make(d, &part, 1, NULL, 0, &sub));
  part.function = "rig_delay";
  part.block[0] = 1u << 20;
  STATUS(RIG_INVALID_ARGUMENT, rig_submission_make(d, &part, 1, NULL, 0, &sub));
  OK(rig_module_release(m));
  OK(rig_device_release(d));
}

/* A launch that fails when it runs loses its device; a device whose queue waits on the lost work is lost
 * with it; independent devices go on. On the fake the failure is the fake's (hipErrorLaunchFailure); on a
 * GPU a kernel writes through a bad address. */
static void test_a_failing_launch_loses_its_device_and_what_waits_on_it(void **state) {
  (void)state;
  reset_fake();
  int two = ht_gpu_count() > 1;
  rig_device a, b, m;
  if (!ht_open("hip:0", &a)) return;
  if (!two) {
    /* On one real GPU a fault ends the whole device's work: nothing else on it can stand in for b. */
    fprintf(stderr, "SKIP: one HIP GPU: a consumer on another GPU is needed\n");
    OK(rig_device_release(a));
    skip();
  }
  if (!ht_open("hip:1", &b)) return;
  OK(rig_memory_device("M", &m));
  rig_module ma = ht_kernels(a), mb = ht_kernels(b);
  const uint32_t n = 1024;
  rig_buffer x = rt_create(a, n * 4), y = rt_create(b, n * 4);
  ht_fill_u32(a, ma, x, n, 1);
  rig_point p2 = ht_step(a, ma, "rig_add_u32", x, x, n, 1);
  OK(rig_wait_point(p2, UINT64_MAX));
  if (ht_fake()) {
    ht_set("launch_delay_us", 50000); /* the launches after it are handed over before it fails */
    ht_set("fail_launch_at", 1);
    ht_step(a, ma, "rig_add_u32", x, x, n, 1);
  } else {
    ht_delay(a, ma, 20u * 1000 * 1000); /* the launches after the fault are handed over before it runs */
    ht_fault(a, ma);
  }
  rig_point p4 = ht_step(a, ma, "rig_add_u32", x, x, n, 1); /* never runs */
  if (ht_fake()) ht_set("launch_delay_us", 0);
  rig_buffer xb = rt_borrow(b, x);
  rig_point pb = ht_step(b, mb, "rig_add_u32", xb, y, n, 10); /* its queue waits for p4 */
  rig_buffer w = rt_create(m, 64);
  OK(rig_wait_point(rt_fill(m, w, 1), UINT64_MAX));
  STATUS(RIG_LOST, rig_wait_point(pb, UINT64_MAX)); /* the consumer first: it must find the fault itself */
  STATUS(RIG_LOST, rig_wait_point(p4, UINT64_MAX));
  rig_device_info info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  OK(rig_device_get_info(a, &info));
  assert_int_equal(info.lost, 1);
  const char *why = NULL;
  OK(rig_device_lost_reason(a, &why));
  assert_non_null(why);
  fprintf(stderr, "hip:0 lost: %s\n", why);
  if (ht_fake()) assert_non_null(strstr(why, "hipErrorLaunchFailure"));
  OK(rig_device_get_info(b, &info));
  assert_int_equal(info.lost, 1);
  uint32_t out[1024];
  STATUS(RIG_LOST, rig_buffer_read_into(x, 0, out, sizeof out));
  rig_buffer bufs[] = {xb, x, y, w};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(bufs[i]));
  OK(rig_module_release(ma));
  OK(rig_module_release(mb));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
  OK(rig_device_release(m));
  reset_fake();
}

/* A host wait times out and is interrupted without losing the device. */
static void test_waits_time_out_and_are_interrupted_without_loss(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!ht_open("hip:0", &d)) return;
  rig_module m = ht_kernels(d);
  if (ht_fake()) ht_set("launch_delay_us", 300000);
  uint64_t ns = 300u * 1000 * 1000;
  rig_part part;
  memset(&part, 0, sizeof part);
  part.size = sizeof part;
  part.kind = RIG_PART_LAUNCH;
  part.module = m;
  part.function = "rig_delay";
  part.grid[0] = part.grid[1] = part.grid[2] = 1;
  part.block[0] = part.block[1] = part.block[2] = 1;
  rig_submission sub;
  rig_run run;
  rig_point p = 0;
  OK(rig_submission_make(d, &part, 1, NULL, 0, &sub));
  OK(rig_run_take(sub, &run));
  OK(rig_run_set_scalars(run, &ns, sizeof ns));
  OK(rig_submit(run, NULL, 0, &p));
  STATUS(RIG_TIMEOUT, rig_wait_point(p, 1000000));
  rig_interrupt_waits(1);
  STATUS(RIG_INTERRUPTED, rig_wait_point(p, UINT64_MAX));
  rig_interrupt_waits(0);
  OK(rig_wait_point(p, UINT64_MAX));
  rig_device_info info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  OK(rig_device_get_info(d, &info));
  assert_int_equal(info.lost, 0);
  OK(rig_run_release(run));
  OK(rig_submission_release(sub));
  OK(rig_module_release(m));
  OK(rig_device_release(d));
  reset_fake();
}

int main(void) {
  if (!ht_hip_available()) return 77;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_devices_are_listed_with_name_framework_memory_and_kind),
      cmocka_unit_test(test_a_failed_integrated_query_reads_as_integrated),
      /* before any other test enables peer access between hip:0 and hip:1 (enabled once per process) */
      cmocka_unit_test(test_peer_memory_borrows_only_where_peer_access_exists),
      cmocka_unit_test(test_device_pinned_and_mapped_memory_round_trip),
      cmocka_unit_test(test_copies_and_fills_alternating_devices_keep_order),
      cmocka_unit_test(test_kernel_chain_across_two_devices_follows_order),
      cmocka_unit_test(test_borrow_of_page_aligned_host_memory_registers_it),
      cmocka_unit_test(test_unaligned_borrows_and_already_registered_host_memory_is_unmappable),
      cmocka_unit_test(test_host_kernels_and_other_module_formats_are_refused),
      cmocka_unit_test(test_waits_time_out_and_are_interrupted_without_loss),
      /* last: on a real GPU the fault may leave the device unusable for the rest of the process */
      cmocka_unit_test(test_a_failing_launch_loses_its_device_and_what_waits_on_it),
  };
  return cmocka_run_group_tests_name("hip driver", tests, NULL, NULL);
}
