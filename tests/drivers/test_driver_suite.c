/* One driver suite for every driver, compiled once per backend (gpu_test.h) the way IREE's conformance tests
 * run once per driver: the stream drivers (CUDA, HIP) on their fakes, through the HIP shim over the fake
 * libcuda and on real GPUs; Vulkan (lavapipe in CI); memory devices and the test driver, whose kernels are
 * host kernels. Discovery, independent devices over one GPU, memory kinds, copies, fills, kernels whose
 * output depends on the order of a chain across two devices, in-queue waits, borrows of host and peer
 * memory, module and part checks, timeouts and interrupts, and loss. A backend leaves out the cases it does
 * not support, each printed with why (gpu_test.c's lists); cases that need a fake's switches skip, with the
 * reason, on a real GPU. No device: exit 77, or 1 under RIG_REQUIRE=<prefix>. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rig_mapped.h>

#include "gpu_test.h"

#define PAGE 4096

static void release_all(rig_device *devices, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (devices[i]) OK(rig_device_release(devices[i]));
}

static void reset_fake(void) {
  if (gt_fake()) gt_set("reset", 0);
}

static rig_device_info info_of(rig_device d) {
  rig_device_info info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  OK(rig_device_get_info(d, &info));
  return info;
}

/* The second device of a pair: device 1 where there is one, else device 0 opened again (still two streams
 * ordered only by rig). */
static int open_pair(rig_device *a, rig_device *b) {
  if (!gt_open(gt_name(0), a)) return 0;
  return gt_open(gt_name(gt_gpu_count() > 1 ? 1 : 0), b);
}

static int quick(void) {
  /* Small on the fakes, on the HIP shim over the fake libcuda (HIPSHIM_CUDA_LIBRARY names it: a full chain
   * there took 282 s under ThreadSanitizer), and under compute-sanitizer (RIG_TEST_QUICK=1, or the older
   * RIG_CUDA_TEST_QUICK). */
  const char *q = getenv("RIG_TEST_QUICK");
  if (!q) q = getenv("RIG_CUDA_TEST_QUICK");
  return gt_fake() || gt()->host_kernels || getenv("HIPSHIM_CUDA_LIBRARY") || (q && atoi(q));
}

static void test_devices_are_listed_with_name_framework_memory_and_kind(void **state) {
  (void)state;
  reset_fake();
  if (gt()->opener == GT_OPEN_DRIVER) { /* memory and test devices are made by name, not listed */
    const char *names[16];
    size_t count = 0;
    OK(rig_device_list(names, 16, &count));
    int seen = 0;
    for (size_t i = 0; i < count && i < 16; ++i)
      if (strcmp(names[i], gt_name(0)) == 0) seen = 1;
    assert_true(seen);
  }
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  rig_device_info info = info_of(d);
  assert_string_equal(info.name, gt_name(0));
  assert_string_equal(info.framework, gt()->framework);
  /* Vulkan on a CPU (lavapipe) is a CPU device. */
  assert_true(info.kind == gt()->device_kind || (strcmp(gt()->prefix, "vulkan") == 0 && info.kind == RIG_DEVICE_CPU));
  if (gt()->opener == GT_OPEN_DRIVER) { /* a driver's device has a model and memory of its own */
    assert_true(strlen(info.model) > 0);
    assert_true(info.memory_bytes > 0);
  }
  assert_true(info.integrated == 0 || info.integrated == 1);
  assert_int_equal(info.lost, 0);
  if (gt_fake()) assert_int_equal(info.integrated, 0);
  fprintf(stderr, "%s is %s, %llu MiB, integrated %d\n", info.name, info.model,
          (unsigned long long)(info.memory_bytes >> 20), info.integrated);
  OK(rig_device_release(d));
  if (gt()->opener != GT_OPEN_DRIVER) return; /* made by name: no name is absent */
  char absent[32];
  snprintf(absent, sizeof absent, "%s:999", gt()->prefix);
  STATUS(RIG_NOT_FOUND, rig_device_open(absent, &d));
}

/* A failed integrated query: HIP counts it as integrated (the seed), CUDA says it does not know (-1). */
static void test_a_failed_integrated_query_reads_as_the_family_counts_it(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  reset_fake();
  gt_set("integrated_query_fails", 1);
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  assert_int_equal(info_of(d).integrated, strcmp(gt()->prefix, "hip") == 0 ? 1 : -1);
  OK(rig_device_release(d));
  reset_fake();
}

static void test_two_opens_of_one_gpu_are_independent_devices(void **state) {
  (void)state;
  reset_fake();
  rig_device a, b;
  if (!gt_open(gt_name(0), &a)) return;
  if (!gt_open(gt_name(0), &b)) return;
  assert_int_not_equal(info_of(a).index, info_of(b).index);
  rig_buffer x = rt_create(a, 64);
  rt_fill(a, x, 7);
  rt_fill(a, x, 8);
  assert_int_equal(rt_submitted(a), 2);
  assert_int_equal(rt_submitted(b), 0);
  OK(rig_device_wait(a, 2, UINT64_MAX));
  assert_true(rt_signaled(a) >= 2);
  assert_int_equal(rt_signaled(b), 0);
  OK(rig_buffer_release(x));
  rig_device all[2] = {a, b};
  release_all(all, 2);
}

/* Written, read back, exported where the host addresses it, filled on the device and read again. */
static void round_trip(rig_device d, rig_memory kind, size_t n) {
  rig_buffer x = NULL;
  OK(rig_buffer_create(d, n, kind, &x));
  unsigned char *in = malloc(n), *out = malloc(n);
  for (size_t i = 0; i < n; ++i) in[i] = (unsigned char)(i * 7 + kind);
  OK(rig_buffer_write_from(x, 0, in, n));
  memset(out, 0, n);
  OK(rig_buffer_read_into(x, 0, out, n));
  assert_memory_equal(in, out, n);
  void *host = NULL;
  if (kind == RIG_MEMORY_DEVICE && gt()->opener == GT_OPEN_DRIVER) { /* elsewhere all memory is the host's */
    STATUS(RIG_UNSUPPORTED, rig_buffer_export(x, &host));
  } else {
    OK(rig_buffer_export(x, &host));
    assert_memory_equal(host, in, n);
  }
  rt_fill(d, x, 0x5a);
  OK(rig_buffer_read_into(x, 0, out, n));
  for (size_t i = 0; i < n; ++i)
    if (out[i] != 0x5a) fail_msg("byte %zu is 0x%02x after a fill with 0x5a", i, out[i]);
  free(in);
  free(out);
  OK(rig_buffer_release(x));
}

static void test_device_pinned_and_mapped_memory_round_trip(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  round_trip(d, RIG_MEMORY_DEVICE, 1 << 20);
  round_trip(d, RIG_MEMORY_DEVICE, 100000);
  round_trip(d, RIG_MEMORY_PINNED, 5000);
  round_trip(d, RIG_MEMORY_PINNED, 12345);
  round_trip(d, RIG_MEMORY_MAPPED, 4096);
  round_trip(d, RIG_MEMORY_MAPPED, 70000);
  rig_buffer empty = NULL;
  OK(rig_buffer_create(d, 0, RIG_MEMORY_DEVICE, &empty));
  OK(rig_buffer_release(empty));
  OK(rig_device_release(d));
}

/* Copies and fills alternate between two devices over one allocation: each step must see the last. */
static void test_copies_and_fills_alternating_devices_keep_order(void **state) {
  (void)state;
  reset_fake();
  if (gt_fake()) gt_set("copy_delay_us", 200); /* a copy that ran early would be overtaken */
  rig_device a, b;
  if (!open_pair(&a, &b)) return;
  const size_t n = 4096;
  rig_buffer x = rt_create(a, n), y = rt_create(a, n);
  rig_buffer xb = rt_borrow(b, x), yb = rt_borrow(b, y);
  unsigned char expect[4096], got[4096];
  for (int step = 0; step < 40; ++step) {
    rig_device d = step % 2 ? b : a;
    rig_buffer sx = step % 2 ? xb : x, sy = step % 2 ? yb : y;
    rt_fill(d, sx, (uint8_t)step); /* x = step */
    rt_copy(d, sx, sy);            /* y = x */
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
  rig_device all[2] = {a, b};
  release_all(all, 2);
}

/* A run made once and submitted again after a buffer is set again goes to the new buffer: the hand-over the
 * stream device recorded for the old one (its device addresses) is dropped with it, never replayed. */
static void test_a_run_submitted_after_a_buffer_is_set_again_uses_the_new_buffer(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  const size_t n = 4096;
  rig_buffer x = rt_create(d, n), w = rt_create(d, n), y = rt_create(d, n), z = rt_create(d, n);
  unsigned char a[4096], b[4096], c[4096], got[4096];
  memset(a, 0xa1, n), memset(b, 0xb2, n), memset(c, 0xc3, n);
  OK(rig_buffer_write_from(x, 0, a, n));
  OK(rig_buffer_write_from(w, 0, c, n));
  OK(rig_buffer_write_from(z, 0, c, n));
  rig_run run = rt_copy_run(d, x, y);
  rig_point p = 0;
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_submit(run, NULL, 0, &p)); /* the same run again: y = x */
  OK(rig_buffer_write_from(x, 0, b, n));
  OK(rig_run_set_buffer(run, 1, z)); /* destination changed: z = x (b), y keeps a */
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_buffer_read_into(y, 0, got, n));
  assert_memory_equal(got, a, n);
  OK(rig_buffer_read_into(z, 0, got, n));
  assert_memory_equal(got, b, n);
  OK(rig_run_set_buffer(run, 0, w)); /* source changed: z = w (c) */
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_buffer_read_into(z, 0, got, n));
  assert_memory_equal(got, c, n);
  OK(rig_run_release(run));
  rig_buffer bufs[] = {x, w, y, z};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(bufs[i]));
  OK(rig_device_release(d));
}

/* A launch run submitted again after its scalars are set again sees the new scalars, whether the new block
 * is longer (the run's storage moves: a parameter block recorded into the old one would read freed memory)
 * or the same length. */
static void test_a_launch_submitted_after_its_scalars_are_set_again_sees_the_new_ones(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  rig_module m = gt_kernels(d);
  const uint32_t n = 1024;
  rig_buffer out = rt_create(d, n * 4);
  rig_access access[1] = {RIG_ACCESS_WRITE};
  uint32_t slots[1] = {0};
  rig_run run = gt_launch_run(d, m, "rig_fill_u32", &out, access, 1, slots, 1, n / 256);
  /* {n, k}; the kernel reads the first 8 bytes of the block (a struct parameter). */
  uint32_t scalars[3][4] = {{n, 11, 0, 0}, {n, 22, 0, 0}, {n, 33, 0, 0}};
  size_t lengths[3] = {8, 16, 16};
  uint32_t got[1024];
  for (int round = 0; round < 3; ++round) {
    OK(rig_run_set_scalars(run, scalars[round], lengths[round]));
    rig_point p = 0;
    OK(rig_submit(run, NULL, 0, &p));
    OK(rig_submit(run, NULL, 0, &p));
    OK(rig_wait_point(p, UINT64_MAX));
    OK(rig_buffer_read_into(out, 0, got, sizeof got));
    for (uint32_t i = 0; i < n; ++i)
      if (got[i] != scalars[round][1])
        fail_msg("round %d: element %u is %u, the scalars say %u", round, i, got[i], scalars[round][1]);
  }
  OK(rig_run_release(run));
  OK(rig_buffer_release(out));
  gt_release_kernels(m);
  OK(rig_device_release(d));
}

static uint32_t chain_step(uint32_t v, uint32_t k, uint32_t i) { return v * 31u + k + i; }

/* The order test: a chain of kernels alternating between two devices, each reading the previous result,
 * in place and ping-pong; every element checked against the host's chain, many times. */
static void test_kernel_chain_across_two_devices_follows_order(void **state) {
  (void)state;
  reset_fake();
  if (gt_fake()) gt_set("launch_delay_us", 100);
  rig_device a, b;
  if (!open_pair(&a, &b)) return;
  rig_module ma = gt_kernels(a), mb = gt_kernels(b);
  const uint32_t n = quick() ? 4096 : 1 << 20;
  const int rounds = quick() ? 4 : 50, steps = quick() ? 12 : 40;
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
        case 0: gt_step(a, ma, "rig_chain_step", x, x, n, k); break;   /* x on A, in place */
        case 1: gt_step(b, mb, "rig_chain_step", xb, y, n, k); break;  /* B: y = f(x) */
        case 2: gt_step(a, ma, "rig_chain_step", ya, x, n, k); break;  /* A: x = f(y) */
        case 3: gt_step(b, mb, "rig_chain_step", xb, xb, n, k); break; /* x on B, in place */
      }
      for (uint32_t i = 0; i < n; ++i) want[i] = chain_step(want[i], k, i);
    }
    memset(host, 0, n * 4);
    OK(rig_buffer_read_into(x, 0, host, n * 4));
    for (uint32_t i = 0; i < n; ++i)
      if (host[i] != want[i]) fail_msg("round %d: element %u is %u, the chain gives %u", r, i, host[i], want[i]);
  }
  /* The consumer waited in its queue (no host wait between the steps): on values or on events. */
  if (gt_fake()) assert_true(gt_query("event_waits") + gt_query("wait_values") > 0);
  free(host);
  free(want);
  rig_buffer bufs[] = {xb, ya, x, y};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(bufs[i]));
  gt_release_kernels(ma);
  gt_release_kernels(mb);
  rig_device all[2] = {a, b};
  release_all(all, 2);
}

/* In-queue waits: a consumer on the second device follows a slow producer without any host wait in
 * between (the fake counts the stream waits it was given). */
static void test_a_consumer_waits_for_a_producer_in_its_queue(void **state) {
  (void)state;
  reset_fake();
  rig_device a, b;
  if (!open_pair(&a, &b)) return;
  rig_module ma = gt_kernels(a), mb = gt_kernels(b);
  const uint32_t n = 256;
  rig_buffer x = rt_create(a, n * 4), y = rt_create(b, n * 4);
  rig_buffer xb = rt_borrow(b, x);
  long long before = gt_query("wait_values") + gt_query("event_waits");
  gt_delay(a, ma, 50u * 1000 * 1000);
  gt_fill_u32(a, ma, x, n, 77);
  rig_point pb = gt_step(b, mb, "rig_add_u32", xb, y, n, 1);
  if (gt_fake()) assert_true(gt_query("wait_values") + gt_query("event_waits") > before);
  OK(rig_wait_point(pb, UINT64_MAX));
  uint32_t out[256];
  OK(rig_buffer_read_into(y, 0, out, sizeof out));
  for (uint32_t i = 0; i < n; ++i) assert_int_equal(out[i], 78);
  rig_buffer bufs[] = {xb, x, y};
  for (int i = 0; i < 3; ++i) OK(rig_buffer_release(bufs[i]));
  gt_release_kernels(ma);
  gt_release_kernels(mb);
  rig_device all[2] = {a, b};
  release_all(all, 2);
}

/* A kernel reads and writes host memory borrowed through registration, reaching it through the device
 * pointer the library gives (the fakes make that differ from the host pointer, so a kernel handed the raw
 * host pointer would fault). The range is in rig's table while borrowed, and gone after. */
static void test_borrow_of_page_aligned_host_memory_registers_it(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  rig_module m = gt_kernels(d);
  const uint32_t n = 3000;
  uint32_t *mem = aligned_alloc(PAGE, 3 * PAGE);
  for (uint32_t i = 0; i < n; ++i) mem[i] = i;
  rig_buffer w = NULL;
  OK(rig_buffer_wrap(mem, n * 4, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  long long before = gt_query("registers");
  rig_buffer wd = rt_borrow(d, w);
  int reg = 0;
  OK(rig_host_is_registered(mem, n * 4, &reg));
  assert_int_equal(reg, 1);
  gt_step(d, m, "rig_add_u32", wd, wd, n, 5);
  uint32_t got[3000];
  OK(rig_buffer_read_into(w, 0, got, sizeof got));
  for (uint32_t i = 0; i < n; ++i)
    if (got[i] != i + 5) fail_msg("element %u is %u, want %u", i, got[i], i + 5);
  if (gt_fake()) {
    assert_int_equal(gt_query("registers"), before + 1);
    assert_int_equal(gt_query("last_register_flags") & 0x08, 0); /* writable: no read-only flag */
    assert_int_equal(gt_query("sticky"), 0);
  }
  OK(rig_buffer_release(wd));
  OK(rig_buffer_release(w));
  OK(rig_host_is_registered(mem, n * 4, &reg));
  assert_int_equal(reg, 0);
  if (gt_fake()) assert_int_equal(gt_query("unregisters"), 1);
  gt_release_kernels(m);
  OK(rig_device_release(d));
  free(mem);
}

/* Host memory of any alignment borrows: the enclosing page is registered, and released with the borrow. */
static void test_borrow_of_unaligned_host_memory_registers_its_page(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  char *mem = aligned_alloc(PAGE, 2 * PAGE);
  rig_buffer w = NULL, out = NULL;
  OK(rig_buffer_wrap(mem + 64, 1024, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  OK(rig_buffer_borrow(d, w, &out));
  if (gt_fake()) assert_int_equal(gt_query("registers"), 1);
  OK(rig_buffer_release(out));
  OK(rig_buffer_release(w));
  if (gt_fake()) assert_int_equal(gt_query("unregisters"), 1);
  OK(rig_device_release(d));
  free(mem);
}

/* Pages held by rig_host_register are not borrowed, and the borrow never reaches the library's register
 * call (HIP would answer success for an overlap). */
static void test_host_memory_registered_by_rig_host_register_is_not_borrowed(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  char *mem = aligned_alloc(PAGE, 3 * PAGE);
  rig_buffer w = NULL, out = NULL;
  OK(rig_host_register(d, mem, 2 * PAGE, RIG_ACCESS_READ_WRITE));
  long long calls = gt_query("register_calls");
  OK(rig_buffer_wrap(mem + PAGE, PAGE, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  rig_status s = rig_buffer_borrow(d, w, &out);
  if (s != RIG_UNMAPPABLE || !strstr(rig_last_error(), "overlaps"))
    fail_msg("borrow over a registered range: %s: %s", rig_status_name(s), rig_last_error());
  if (gt_fake()) assert_int_equal(gt_query("register_calls"), calls);
  OK(rig_buffer_release(w));
  OK(rig_host_unregister(d, mem));
  free(mem);
  OK(rig_device_release(d));
}

/* Borrows a read-only wrap of a page holding 3s, writable or (protect) made PROT_READ, with the device
 * taking the read-only flag or not (CUDA's attribute 113): `want` is the borrow's status, `want_flag` whether
 * the registration that served it carried the read-only flag. */
static void borrow_read_only(int protect, int supported, rig_status want, int want_flag) {
  reset_fake();
  if (gt()->read_only_attribute) gt_set("read_only_supported", supported);
  gt_set("read_only_pages_need_flag", 1);  /* as the real drivers answer for PROT_READ pages */
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  char *mem = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(mem != MAP_FAILED);
  memset(mem, 3, PAGE);
  if (protect) assert_int_equal(mprotect(mem, PAGE, PROT_READ), 0);
  rig_buffer w = NULL, wd = NULL, y = rt_create(d, PAGE);
  OK(rig_buffer_wrap(mem, PAGE, RIG_ACCESS_READ, NULL, NULL, &w));
  rig_status s = rig_buffer_borrow(d, w, &wd);
  if (s != want) fail_msg("borrow of a read-only wrap: %s (%s), want %s", rig_status_name(s), rig_last_error(),
                          rig_status_name(want));
  if (s == RIG_OK) {
    assert_int_equal((gt_query("last_register_flags") & 0x08) != 0, want_flag);
    rt_copy(d, wd, y);
    char got[PAGE], expect[PAGE];
    memset(expect, 3, PAGE);
    OK(rig_buffer_read_into(y, 0, got, PAGE));
    assert_memory_equal(got, expect, PAGE);
    OK(rig_buffer_release(wd));
  }
  OK(rig_buffer_release(w));
  OK(rig_buffer_release(y));
  OK(rig_device_release(d));
  munmap(mem, PAGE);
}

/* A read-only wrap's pages are registered writable where the process can write them (other bytes on those
 * pages may be copied into), and with the read-only flag only where it cannot (a PROT_READ mapping, which
 * the driver refuses to register writable). CUDA takes the flag where attribute 113 says the device does,
 * else such pages cannot be borrowed; HIP has no such attribute: the runtime answers. */
static void test_read_only_borrow_uses_the_read_only_flag_where_supported(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  borrow_read_only(0, 1, RIG_OK, 0);
  borrow_read_only(1, 1, RIG_OK, 1);
  if (gt()->read_only_attribute) borrow_read_only(1, 0, RIG_UNMAPPABLE, 0);
}

static void test_refused_registration_is_unmappable_with_the_driver_error(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  reset_fake();
  gt_set("register_refuse", 801);
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  char *mem = aligned_alloc(PAGE, PAGE);
  rig_buffer w = NULL, out = NULL;
  OK(rig_buffer_wrap(mem, PAGE, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  STATUS(RIG_UNMAPPABLE, rig_buffer_borrow(d, w, &out));
  assert_non_null(strstr(rig_last_error(), gt()->not_supported));
  OK(rig_buffer_release(w));
  OK(rig_device_release(d));
  free(mem);
}

/* Two rig devices on one GPU borrowing one allocation share its registration (CUDA refuses a range
 * registered twice; HIP would answer success). */
static void test_two_devices_borrowing_one_wrap_share_its_registration(void **state) {
  (void)state;
  reset_fake();
  rig_device a, b;
  if (!gt_open(gt_name(0), &a) || !gt_open(gt_name(0), &b)) return;
  char *mem = aligned_alloc(PAGE, PAGE);
  memset(mem, 9, PAGE);
  rig_buffer w = NULL;
  OK(rig_buffer_wrap(mem, PAGE, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  rig_buffer wa = rt_borrow(a, w), wb = rt_borrow(b, w);
  if (gt_fake()) assert_int_equal(gt_query("registers"), 1);
  rt_fill(a, wa, 1);
  rt_fill(b, wb, 2);
  char got[PAGE], want[PAGE];
  memset(want, 2, PAGE);
  OK(rig_buffer_read_into(w, 0, got, PAGE));
  assert_memory_equal(got, want, PAGE);
  OK(rig_buffer_release(wa));
  OK(rig_buffer_release(wb));
  OK(rig_buffer_release(w));
  if (gt_fake()) assert_int_equal(gt_query("unregisters"), 1);
  rig_device all[2] = {a, b};
  release_all(all, 2);
  free(mem);
}

/* Another GPU's memory is refused without peer access and borrowed with it (enabled once per pair, so
 * this runs before any other case enables it between devices 0 and 1). */
static void test_peer_memory_is_refused_without_peer_access_and_borrowed_with_it(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  reset_fake();
  rig_device a, b;
  if (!gt_open(gt_name(0), &a) || !gt_open(gt_name(1), &b)) return;
  rig_buffer x = rt_create(a, 4096), out = NULL;
  gt_set("peer_access", 0);
  STATUS(RIG_UNMAPPABLE, rig_buffer_borrow(b, x, &out));
  assert_non_null(strstr(rig_last_error(), "peer access"));
  gt_set("peer_access", 1);
  rig_buffer xb = rt_borrow(b, x);
  rig_module mb = gt_kernels(b);
  gt_fill_u32(b, mb, xb, 1024, 77); /* a kernel of device 1 writes device 0's memory */
  uint32_t got[1024];
  OK(rig_buffer_read_into(x, 0, got, sizeof got));
  for (int i = 0; i < 1024; ++i) assert_int_equal(got[i], 77);
  assert_int_equal(gt_query("sticky1"), 0);
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(x));
  gt_release_kernels(mb);
  rig_device all[2] = {a, b};
  release_all(all, 2);
}

static void test_peer_memory_borrows_where_peer_access_exists(void **state) {
  (void)state;
  reset_fake();
  if (gt_gpu_count() < 2) {
    char two[32];
    snprintf(two, sizeof two, "%s2", gt()->prefix);
    if (rt_required(two)) fail_msg("RIG_REQUIRE names %s but there is one GPU", two);
    fprintf(stderr, "SKIP: peer access needs two GPUs\n");
    skip();
  }
  rig_device a, b;
  if (!gt_open(gt_name(0), &a) || !gt_open(gt_name(1), &b)) return;
  rig_module mb = gt_kernels(b);
  const uint32_t n = 1024;
  rig_buffer x = rt_create(a, n * 4), y = rt_create(b, n * 4);
  uint32_t in[1024], out[1024];
  for (uint32_t i = 0; i < n; ++i) in[i] = 3 * i;
  OK(rig_buffer_write_from(x, 0, in, sizeof in));
  rig_buffer xb = NULL;
  rig_status s = rig_buffer_borrow(b, x, &xb);
  if (s == RIG_UNMAPPABLE && !gt_fake()) {
    fprintf(stderr, "SKIP: these GPUs have no peer access: %s\n", rig_last_error());
  } else {
    OK(s);
    gt_step(b, mb, "rig_add_u32", xb, y, n, 1);
    OK(rig_buffer_read_into(y, 0, out, sizeof out));
    for (uint32_t i = 0; i < n; ++i) assert_int_equal(out[i], 3 * i + 1);
    OK(rig_buffer_release(xb));
  }
  if (gt_fake()) {
    /* A third GPU whose peer access to the others was never enabled (enabled pairs stay enabled). */
    gt_set("devices", 3);
    gt_set("peer_access", 0);
    rig_device c;
    if (!gt_open(gt_name(2), &c)) return;
    rig_buffer yc = NULL;
    STATUS(RIG_UNMAPPABLE, rig_buffer_borrow(c, y, &yc));
    assert_non_null(strstr(rig_last_error(), "peer access"));
    OK(rig_device_release(c));
  }
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  gt_release_kernels(mb);
  rig_device all[2] = {a, b};
  release_all(all, 2);
}

/* Neighbouring heap allocations (issue 36): two sources and two destinations from malloc, often sharing
 * pages, each borrowed, each source copied into device memory and back into its destination. A borrow may
 * be refused (RIG_UNMAPPABLE: the device cannot take a range partly registered for other memory); a borrow
 * that is taken copies right, and nothing loses the device. */
static void test_neighbouring_heap_borrows_are_refused_or_copied_never_lost(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  int taken = 0, refused = 0;
  srand(36);
  for (int pair = 0; pair < 300; ++pair) {
    size_t n = 24 + (size_t)(rand() % 2977);
    unsigned char *p[4];
    rig_buffer wrap[4], borrow[4] = {NULL, NULL, NULL, NULL};
    int all = 1;
    for (int i = 0; i < 4; ++i) {
      p[i] = malloc(n);
      for (size_t j = 0; j < n; ++j) p[i][j] = i < 2 ? (unsigned char)(j * 13 + i + pair) : 0;
      OK(rig_buffer_wrap(p[i], n, RIG_ACCESS_READ_WRITE, NULL, NULL, &wrap[i]));
    }
    for (int i = 0; i < 4 && all; ++i) {
      rig_status s = rig_buffer_borrow(d, wrap[i], &borrow[i]);
      if (s == RIG_UNMAPPABLE) all = 0;
      else OK(s);
    }
    if (all) {
      ++taken;
      for (int i = 0; i < 2; ++i) {
        rig_buffer on_device = rt_create(d, n);
        rt_copy(d, borrow[i], on_device);
        OK(rig_wait_point(rt_copy(d, on_device, borrow[i + 2]), UINT64_MAX));
        OK(rig_buffer_release(on_device));
        if (memcmp(p[i], p[i + 2], n) != 0) fail_msg("pair %d: source %d's %zu bytes came back other", pair, i, n);
      }
    } else {
      ++refused;
    }
    for (int i = 0; i < 4; ++i) {
      if (borrow[i]) OK(rig_buffer_release(borrow[i]));
      OK(rig_buffer_release(wrap[i]));
    }
    OK(rig_device_wait(d, rt_submitted(d), UINT64_MAX)); /* rig uses none of the bytes any more */
    for (int i = 0; i < 4; ++i) free(p[i]);
  }
  assert_int_equal(info_of(d).lost, 0);
  fprintf(stderr, "%d of 300 neighbouring quadruples borrowed and copied, %d refused at a borrow\n", taken, refused);
  OK(rig_device_release(d));
}

static void host_kernel(void *user, const rig_span *slots, size_t slot_count) {
  (void)user, (void)slots, (void)slot_count;
}

static void test_host_kernels_and_bad_launches_are_refused(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  rig_module m = gt_kernels(d);
  rig_part part;
  memset(&part, 0, sizeof part);
  part.size = sizeof part;
  part.kind = RIG_PART_HOST_KERNEL;
  part.fn = host_kernel;
  rig_access access[1] = {RIG_ACCESS_READ_WRITE};
  rig_submission sub = NULL;
  STATUS(RIG_UNSUPPORTED, rig_submission_make(d, &part, 1, access, 1, &sub));
  uint32_t slots[2] = {0, 0};
  part.fn = NULL;
  part.kind = RIG_PART_LAUNCH;
  part.module = m;
  part.function = "rig_add_u32";
  part.grid[0] = part.grid[1] = part.grid[2] = 1;
  part.block[0] = 1u << 20; /* more threads than a block holds */
  part.block[1] = part.block[2] = 1;
  part.slots = slots;
  part.slot_count = 2;
  STATUS(RIG_INVALID_ARGUMENT, rig_submission_make(d, &part, 1, access, 1, &sub));
  part.block[0] = 256;
  part.function = "no_such_kernel";
  STATUS(RIG_NOT_FOUND, rig_submission_make(d, &part, 1, access, 1, &sub));
  /* A module of another device on another GPU is refused before anything runs. */
  if (gt_gpu_count() > 1) {
    rig_device e;
    if (!gt_open(gt_name(1), &e)) return;
    rig_module me = gt_kernels(e);
    part.module = me;
    part.function = "rig_add_u32";
    STATUS(RIG_INVALID_ARGUMENT, rig_submission_make(d, &part, 1, access, 1, &sub));
    gt_release_kernels(me);
    OK(rig_device_release(e));
  }
  assert_int_equal(rt_submitted(d), 0);
  gt_release_kernels(m);
  OK(rig_device_release(d));
}

/* Formats the family does not load are unsupported; images its loader refuses say why, naming the loader. */
static void test_bad_modules_are_refused_with_a_reason(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  rig_module m = NULL;
  static const unsigned char elf[4096] = {0x7f, 'E', 'L', 'F'}; /* room: the loader is not told the length */
  int spirv = gt()->kernels == RIG_MODULE_SPIRV;
  STATUS(RIG_UNSUPPORTED, rig_module_load(d, spirv ? RIG_MODULE_PTX : RIG_MODULE_SPIRV, elf, sizeof elf, &m));
  if (spirv) { /* Vulkan's own format: bytes that are not SPIR-V are refused, saying so */
    STATUS(RIG_INVALID_ARGUMENT, rig_module_load(d, RIG_MODULE_SPIRV, elf, sizeof elf, &m));
    assert_non_null(strstr(rig_last_error(), "SPIR-V"));
  }
  int cuda = gt()->kernels == RIG_MODULE_PTX;
  STATUS(RIG_UNSUPPORTED, rig_module_load(d, cuda ? RIG_MODULE_HIP_CODE_OBJECT : RIG_MODULE_PTX, elf, 8, &m));
  if (cuda) {
    const char *bad = ".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry broken( { fakecuda:invalid }";
    rig_status s = rig_module_load(d, RIG_MODULE_PTX, bad, strlen(bad), &m);
    assert_true(s == RIG_INVALID_ARGUMENT || s == RIG_UNSUPPORTED);
    assert_non_null(strstr(rig_last_error(), gt()->module_loader));
    s = rig_module_load(d, RIG_MODULE_CUBIN, elf, sizeof elf, &m);
    assert_true(s == RIG_INVALID_ARGUMENT || s == RIG_UNSUPPORTED);
  } else if (gt_fake()) {
    STATUS(RIG_INVALID_ARGUMENT, rig_module_load(d, RIG_MODULE_HIP_CODE_OBJECT, "fakehip:invalid", 15, &m));
    assert_non_null(strstr(rig_last_error(), gt()->module_loader));
    STATUS(RIG_UNSUPPORTED, rig_module_load(d, RIG_MODULE_HIP_CODE_OBJECT, "\x7f" "ELF....", 8, &m));
  }
  STATUS(RIG_INVALID_ARGUMENT, rig_module_load(d, gt()->kernels, elf, 0, &m));
  OK(rig_device_release(d));
}

/* A slow kernel: a wait with a short timeout times out, an interrupted wait is interrupted, neither loses
 * the device; a wait without a limit then succeeds and the timeline shows the value. */
static void test_waits_time_out_and_are_interrupted_without_loss(void **state) {
  (void)state;
  reset_fake();
  rig_device d;
  if (!gt_open(gt_name(0), &d)) return;
  rig_module m = gt_kernels(d);
  rig_point p = gt_delay(d, m, 300u * 1000 * 1000); /* 300 ms */
  uint64_t v = rig_point_value(p);
  STATUS(RIG_TIMEOUT, rig_device_wait(d, v, 1000 * 1000));
  STATUS(RIG_TIMEOUT, rig_device_wait(d, v, 0));
  rig_interrupt_waits(1);
  STATUS(RIG_INTERRUPTED, rig_wait_point(p, UINT64_MAX));
  rig_interrupt_waits(0);
  assert_true(rt_signaled(d) < v);
  OK(rig_wait_point(p, UINT64_MAX));
  assert_true(rt_signaled(d) >= v);
  assert_int_equal(info_of(d).lost, 0);
  STATUS(RIG_INVALID_ARGUMENT, rig_device_wait(d, v + 1, 0));
  gt_release_kernels(m);
  OK(rig_device_release(d));
}

/* A launch that fails when it runs loses its device; a device whose queue waits on the lost work is lost
 * with it; independent devices go on. On a fake the failure is the fake's; on a GPU a kernel writes through
 * a bad address. */
static void test_a_failing_launch_loses_its_device_and_what_waits_on_it(void **state) {
  (void)state;
  reset_fake();
  rig_device a, b, m;
  if (!gt_open(gt_name(0), &a)) return;
  if (gt_gpu_count() < 2) {
    /* On one real GPU a fault ends the whole device's work: nothing else on it can stand in for b. */
    fprintf(stderr, "SKIP: one %s GPU: a consumer on another GPU is needed\n", gt()->framework);
    OK(rig_device_release(a));
    skip();
  }
  if (!gt_open(gt_name(1), &b)) return;
  OK(rig_memory_device("M", &m));
  rig_module ma = gt_kernels(a), mb = gt_kernels(b);
  const uint32_t n = 1024;
  rig_buffer x = rt_create(a, n * 4), y = rt_create(b, n * 4);
  gt_fill_u32(a, ma, x, n, 1);
  rig_point p2 = gt_step(a, ma, "rig_add_u32", x, x, n, 1);
  OK(rig_wait_point(p2, UINT64_MAX));
  if (gt_fake()) {
    gt_set("launch_delay_us", 50000); /* the launches after it are handed over before it fails */
    gt_set("fail_launch_at", 1);
    gt_step(a, ma, "rig_add_u32", x, x, n, 1);
  } else {
    gt_delay(a, ma, 20u * 1000 * 1000); /* the launches after the fault are handed over before it runs */
    gt_fault(a, ma);
  }
  rig_point p4 = gt_step(a, ma, "rig_add_u32", x, x, n, 1); /* never runs */
  if (gt_fake()) gt_set("launch_delay_us", 0);
  rig_buffer xb = rt_borrow(b, x);
  rig_point pb = gt_step(b, mb, "rig_add_u32", xb, y, n, 10); /* its queue waits for p4 */
  rig_buffer w = rt_create(m, 64);
  OK(rig_wait_point(rt_fill(m, w, 1), UINT64_MAX));
  STATUS(RIG_LOST, rig_wait_point(pb, UINT64_MAX)); /* the consumer first: it must find the fault itself */
  STATUS(RIG_LOST, rig_wait_point(p4, UINT64_MAX));
  assert_int_equal(info_of(a).lost, 1);
  const char *why = NULL;
  OK(rig_device_lost_reason(a, &why));
  assert_non_null(why);
  fprintf(stderr, "%s lost: %s\n", gt_name(0), why);
  if (gt_fake()) assert_non_null(strstr(why, gt()->launch_failure));
  assert_int_equal(info_of(b).lost, 1);
  uint32_t out[1024];
  STATUS(RIG_LOST, rig_buffer_read_into(x, 0, out, sizeof out));
  rig_buffer bufs[] = {xb, x, y, w};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(bufs[i]));
  gt_release_kernels(ma);
  gt_release_kernels(mb);
  rig_device all[3] = {a, b, m};
  release_all(all, 3);
  reset_fake();
}

int main(void) {
  if (!gt_available()) return 77;
  struct CMUnitTest tests[] = {
      cmocka_unit_test(test_devices_are_listed_with_name_framework_memory_and_kind),
      cmocka_unit_test(test_a_failed_integrated_query_reads_as_the_family_counts_it),
      /* before any other case enables peer access between devices 0 and 1 (enabled once per process) */
      cmocka_unit_test(test_peer_memory_is_refused_without_peer_access_and_borrowed_with_it),
      cmocka_unit_test(test_two_opens_of_one_gpu_are_independent_devices),
      cmocka_unit_test(test_device_pinned_and_mapped_memory_round_trip),
      cmocka_unit_test(test_copies_and_fills_alternating_devices_keep_order),
      cmocka_unit_test(test_a_run_submitted_after_a_buffer_is_set_again_uses_the_new_buffer),
      cmocka_unit_test(test_a_launch_submitted_after_its_scalars_are_set_again_sees_the_new_ones),
      cmocka_unit_test(test_kernel_chain_across_two_devices_follows_order),
      cmocka_unit_test(test_a_consumer_waits_for_a_producer_in_its_queue),
      cmocka_unit_test(test_borrow_of_page_aligned_host_memory_registers_it),
      cmocka_unit_test(test_borrow_of_unaligned_host_memory_registers_its_page),
      cmocka_unit_test(test_host_memory_registered_by_rig_host_register_is_not_borrowed),
      cmocka_unit_test(test_read_only_borrow_uses_the_read_only_flag_where_supported),
      cmocka_unit_test(test_refused_registration_is_unmappable_with_the_driver_error),
      cmocka_unit_test(test_two_devices_borrowing_one_wrap_share_its_registration),
      cmocka_unit_test(test_peer_memory_borrows_where_peer_access_exists),
      cmocka_unit_test(test_neighbouring_heap_borrows_are_refused_or_copied_never_lost),
      cmocka_unit_test(test_host_kernels_and_bad_launches_are_refused),
      cmocka_unit_test(test_bad_modules_are_refused_with_a_reason),
      cmocka_unit_test(test_waits_time_out_and_are_interrupted_without_loss),
      /* last: on a real GPU the fault may leave the device unusable for the rest of the process */
      cmocka_unit_test(test_a_failing_launch_loses_its_device_and_what_waits_on_it),
  };
  size_t n = sizeof tests / sizeof *tests;
  gt_leave_out_unsupported(tests, &n);
  return _cmocka_run_group_tests("driver suite", tests, n, NULL, NULL);
}
