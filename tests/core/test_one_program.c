/* One program on every device kind (RIG_TEST_KINDS): the README's ten lines, borrows of host memory of any
 * alignment (malloc'd, stack, two wraps on one page), and the copy-overlap rule. Registered with the
 * ordering suite, so it runs over memory devices, the test driver, the fake libcuda, the fake HIP runtime
 * (and the HIP shim), Vulkan on lavapipe, and real GPUs (RIG_REQUIRE=cuda fails where it would skip).
 * Where the kind is a driver double, the double's counters show every registration is made once and
 * released exactly once. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rigtest.h"
#include "test_driver.h"

static const char *framework_of(rig_device d) {
  static char name[4][64];
  static int next;
  rig_device_info info = {sizeof info};
  OK(rig_device_get_info(d, &info));
  char *out = name[next++ % 4];
  snprintf(out, 64, "%s", info.framework);
  return out;
}

static int registers_host_memory(rig_device d) {
  const char *f = framework_of(d);
  return strcmp(f, "CUDA") == 0 || strcmp(f, "HIP") == 0;
}


typedef struct counts {
  long long registers, unregisters;
} counts;

static counts now(void) {
  rt_query_fn q = rt_double_query();
  counts c = {-1, -1};
  if (q) c = (counts){q("registers"), q("unregisters")};
  return c;
}

/* Registrations and releases since `before`, checked where a double counts them (and the device registers). */
static void expect_counts(rig_device d, counts before, long long registers, long long unregisters) {
  counts c = now();
  if (!registers_host_memory(d)) return;
  if (c.registers < 0) {  /* a real driver counts nothing; a double that does not answer is a broken test */
    /* (RIG_HIP_LIBRARY may name the HIP shim over the real CUDA driver: a double only where it is the fake) */
    const char *hip = getenv("RIG_HIP_LIBRARY");
    if (getenv("RIG_CUDA_LIBRARY") || getenv("HIPSHIM_CUDA_LIBRARY") || (hip && strstr(hip, "fakehip")))
      fail_msg("the driver double's counters are not found");
    return;
  }
  assert_int_equal(c.registers - before.registers, registers);
  assert_int_equal(c.unregisters - before.unregisters, unregisters);
}

/* `b`'s bytes on `d`: a borrow; where the device borrows no host memory (Vulkan without the opt-in, and
 * nothing else may refuse), the README's documented change: a buffer of the device, written from the host.
 * The refusal must name that portable way. */
static rig_buffer onto(rig_device d, rig_buffer b) {
  rig_buffer out = NULL;
  rig_status s = rig_buffer_borrow(d, b, &out);
  if (s == RIG_OK) return out;
  char why[1024];
  snprintf(why, sizeof why, "%s", rig_last_error());  /* every rig call clears it */
  if (s != RIG_UNMAPPABLE || strcmp(framework_of(d), "Vulkan") != 0)
    fail_msg("borrow onto %s: %s: %s", framework_of(d), rig_status_name(s), why);
  if (!strstr(why, "rig_buffer_write_from") || !strstr(why, "rig_buffer_read_into"))
    fail_msg("the refusal does not name the portable upload and download: %s", why);
  size_t n = 0;
  OK(rig_buffer_length(b, &n));
  char *bytes = malloc(n ? n : 1);
  assert_non_null(bytes);
  OK(rig_buffer_read_into(b, 0, bytes, n));
  OK(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &out));
  OK(rig_buffer_write_from(out, 0, bytes, n));
  free(bytes);
  return out;
}

/* The README's copy(), its statuses checked. */
static rig_status copy(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_part p = {sizeof p, RIG_PART_COPY}; p.src_slot = 0; p.dst_slot = 1; p.length = RIG_WHOLE;
  rig_access a[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE}; rig_submission s; rig_run r;
  OK(rig_submission_make(d, &p, 1, a, 2, &s)); OK(rig_run_take(s, &r));
  OK(rig_run_set_buffer(r, 0, src)); OK(rig_run_set_buffer(r, 1, dst));
  rig_status st = rig_submit(r, NULL, 0, NULL);
  OK(rig_run_release(r)); OK(rig_submission_release(s));
  return st;
}

/* README.md, "Ten lines of C", with the suite's devices for A and B and every status checked: a stack
 * string, not page-aligned, borrowed onto whatever A is. */
static void readme_program_prints_hello_world_on_every_kind(void **state) {
  (void)state;
  char text[] = "hello, world", out[13] = {0}; rig_device a, b; rig_buffer src, x, y, s_a, x_b;
  if (!rt_open_kind(0, "A", &a) || !rt_open_kind(1, "B", &b)) return;
  OK(rig_buffer_wrap(text, 12, RIG_ACCESS_READ, NULL, NULL, &src));
  OK(rig_buffer_create(a, 12, RIG_MEMORY_DEVICE, &x)); OK(rig_buffer_create(b, 12, RIG_MEMORY_DEVICE, &y));
  s_a = onto(a, src); OK(copy(a, s_a, x));      /* A:1 writes x        */
  x_b = onto(b, x);   OK(copy(b, x_b, y));      /* B:1 follows A:1      */
  OK(rig_buffer_read_into(y, 0, out, 12)); puts(out);  /* follows B:1 (rule 5) */
  assert_string_equal(out, "hello, world");
  rig_buffer all[] = {src, x, y, s_a, x_b};
  for (int i = 0; i < 5; ++i) OK(rig_buffer_release(all[i]));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* Host bytes at `data` borrowed onto d and copied into a device buffer: the bytes arrive. */
static void borrow_and_check(rig_device d, void *data, size_t n) {
  rig_buffer w, on_d, x;
  OK(rig_buffer_wrap(data, n, RIG_ACCESS_READ, NULL, NULL, &w));
  on_d = onto(d, w);
  OK(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &x));
  OK(copy(d, on_d, x));
  char *back = calloc(1, n);
  assert_non_null(back);
  OK(rig_buffer_read_into(x, 0, back, n));
  assert_memory_equal(back, data, n);
  free(back);
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(on_d));
  OK(rig_buffer_release(w));
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(seed + i * 7);
}

/* malloc'd memory (any alignment malloc gives, and one byte past it) and stack memory borrow onto every
 * device that borrows host memory; each borrow's registration is released with it. */
static void malloc_and_stack_memory_borrow(void **state) {
  (void)state;
  rig_device devs[2];
  if (!rt_open_kind(0, "A", &devs[0]) || !rt_open_kind(1, "B", &devs[1])) return;
  for (int i = 0; i < 2; ++i) {
    rig_device d = devs[i];
    unsigned char *heap = malloc(3000);
    assert_non_null(heap);
    fill_pattern(heap, 3000, 3);
    counts before = now();
    borrow_and_check(d, heap + 1, 2999);
    unsigned char stack[700];
    fill_pattern(stack, sizeof stack, 11);
    borrow_and_check(d, stack + 5, sizeof stack - 5);
    /* Each wrap was its own allocation and was released before the next: one registration each, each
     * released once (a wrap crossing a page boundary is one registration of its enclosing pages). */
    expect_counts(d, before, 2, 2);
    free(heap);
  }
  OK(rig_device_release(devs[0]));
  OK(rig_device_release(devs[1]));
}

/* Two wraps on one page borrowed onto one device share one registration, released exactly once after the
 * last borrow over it, in either order of release. A third wrap reaching from that page into the next
 * borrows beside them: it counts the page's registration and registers only the next page, and its copy
 * crosses the two registrations (split by the driver where they meet); the next page goes with it. */
static void wraps_sharing_a_page_share_one_registration(void **state) {
  (void)state;
  rig_device d, other;
  if (!rt_open_kind(0, "A", &d) || !rt_open_kind(1, "B", &other)) return;
  if (!registers_host_memory(d) && registers_host_memory(other)) {  /* memory+cuda: the GPU is device 1 */
    rig_device t = d; d = other; other = t;
  }
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *mem = aligned_alloc((size_t)page, 2 * (size_t)page);
  assert_non_null(mem);
  fill_pattern(mem, 2 * (size_t)page, 5);
  size_t at[3] = {16, 400, (size_t)page - 100}, len[3] = {100, 200, 300};  /* w[2] crosses into page 2 */
  for (int order = 0; order < 2; ++order) {
    counts before = now();
    rig_buffer w[3], on_d[3], x[3];
    for (int i = 0; i < 3; ++i) {
      OK(rig_buffer_wrap(mem + at[i], len[i], RIG_ACCESS_READ, NULL, NULL, &w[i]));
      OK(rig_buffer_create(d, len[i], RIG_MEMORY_DEVICE, &x[i]));
    }
    for (int i = 0; i < 2; ++i) {
      on_d[i] = onto(d, w[i]);
      OK(copy(d, on_d[i], x[i]));
    }
    expect_counts(d, before, 1, 0); /* page 1 once for both */
    /* The crossing wrap borrows beside them: page 2 only is registered. */
    on_d[2] = onto(d, w[2]);
    OK(copy(d, on_d[2], x[2]));
    expect_counts(d, before, 2, 0);
    /* Released in order (w0, w1, w2) or reversed: page 1 goes with the last wrap on it, page 2 with w2. */
    long long released_after[2][3] = {{0, 0, 2}, {1, 1, 2}};
    for (int k = 0; k < 3; ++k) {
      int i = order ? 2 - k : k;
      unsigned char back[300];
      OK(rig_buffer_read_into(x[i], 0, back, len[i])); /* the copy through the borrow is reached */
      assert_memory_equal(back, mem + at[i], len[i]);
      OK(rig_buffer_release(on_d[i]));
      OK(rig_buffer_release(w[i])); /* the last buffer over the wrap: its use is reached, it goes now */
      OK(rig_buffer_release(x[i]));
      expect_counts(d, before, 2, released_after[order][k]);
    }
  }
  free(mem);
  OK(rig_device_release(d));
  OK(rig_device_release(other));
}

/* One submission copying slot 0 [src_off, +n) into slot 1 [dst_off, +n); the run is returned unsubmitted. */
static void make_copy_run(rig_device d, size_t src_off, size_t dst_off, size_t n, rig_submission *s, rig_run *r) {
  rig_part p = {sizeof p, RIG_PART_COPY};
  p.src_slot = 0, p.dst_slot = 1, p.src_offset = src_off, p.dst_offset = dst_off, p.length = n;
  rig_access a[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  OK(rig_submission_make(d, &p, 1, a, 2, s));
  OK(rig_run_take(*s, r));
}

/* The overlap rule (rig.h, rig_submission_make): a copy whose source and destination share bytes of one
 * allocation is refused with RIG_INVALID_ARGUMENT on every device, before any work is handed over; copies
 * between disjoint ranges of one allocation run. */
static void overlapping_copies_are_refused_on_every_device(void **state) {
  (void)state;
  rig_device d;
  if (!rt_open_kind(0, "A", &d)) return;
  enum { N = 64 * 1024, SHIFT = 256 };
  rig_buffer whole, lo, hi, far;
  OK(rig_buffer_create(d, N, RIG_MEMORY_DEVICE, &whole));
  unsigned char *pattern = malloc(N);
  assert_non_null(pattern);
  fill_pattern(pattern, N, 1);
  OK(rig_buffer_write_from(whole, 0, pattern, N));
  OK(rig_buffer_view(whole, 0, N / 2, &lo));
  OK(rig_buffer_view(whole, SHIFT, N / 2, &hi));  /* shares N/2 - SHIFT bytes with lo */
  OK(rig_buffer_view(whole, N / 2, N / 2, &far));  /* adjacent to lo: shares none */
  uint64_t submitted = rt_submitted(d);

  /* Two views of one allocation, overlapping: found when the buffers are bound, answered by the submit. */
  rig_submission s;
  rig_run r;
  make_copy_run(d, 0, 0, RIG_WHOLE, &s, &r);
  OK(rig_run_set_buffer(r, 0, lo));
  OK(rig_run_set_buffer(r, 1, hi));
  STATUS(RIG_INVALID_ARGUMENT, rig_submit(r, NULL, 0, NULL));
  assert_non_null(strstr(rig_last_error(), "overlap"));
  /* The other direction too, and a view copied onto itself. */
  OK(rig_run_set_buffer(r, 0, hi));
  OK(rig_run_set_buffer(r, 1, lo));
  STATUS(RIG_INVALID_ARGUMENT, rig_submit(r, NULL, 0, NULL));
  OK(rig_run_set_buffer(r, 0, lo));
  OK(rig_run_set_buffer(r, 1, lo));
  STATUS(RIG_INVALID_ARGUMENT, rig_submit(r, NULL, 0, NULL));
  assert_int_equal(rt_submitted(d), submitted);  /* nothing was handed over */
  /* Disjoint views of the same allocation: the copy runs. */
  OK(rig_run_set_buffer(r, 1, far));
  OK(rig_submit(r, NULL, 0, NULL));
  OK(rig_run_release(r));
  OK(rig_submission_release(s));

  /* Within one slot: overlapping offsets are refused when the submission is made (the lengths are known). */
  rig_part p = {sizeof p, RIG_PART_COPY};
  p.src_slot = 0, p.dst_slot = 0, p.src_offset = 0, p.dst_offset = SHIFT, p.length = N / 2;
  rig_access rw = RIG_ACCESS_READ_WRITE;
  STATUS(RIG_INVALID_ARGUMENT, rig_submission_make(d, &p, 1, &rw, 1, &s));
  assert_non_null(strstr(rig_last_error(), "overlap"));
  /* ... and within one slot, disjoint ranges run. */
  p.dst_offset = N / 2;
  OK(rig_submission_make(d, &p, 1, &rw, 1, &s));
  OK(rig_run_take(s, &r));
  OK(rig_run_set_buffer(r, 0, whole));
  OK(rig_submit(r, NULL, 0, NULL));
  OK(rig_run_release(r));
  OK(rig_submission_release(s));

  unsigned char *back = malloc(N);
  assert_non_null(back);
  OK(rig_buffer_read_into(whole, 0, back, N));
  assert_memory_equal(back, pattern, N / 2);           /* the source was never written */
  assert_memory_equal(back + N / 2, pattern, N / 2);   /* both copies put the low half into the high half */
  free(back);
  free(pattern);
  rig_buffer all[] = {whole, lo, hi, far};
  for (int i = 0; i < 4; ++i) OK(rig_buffer_release(all[i]));
  OK(rig_device_release(d));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(readme_program_prints_hello_world_on_every_kind),
      cmocka_unit_test(malloc_and_stack_memory_borrow),
      cmocka_unit_test(wraps_sharing_a_page_share_one_registration),
      cmocka_unit_test(overlapping_copies_are_refused_on_every_device),
  };
  const char *kinds = getenv("RIG_TEST_KINDS");
  return rt_finish(cmocka_run_group_tests_name(kinds ? kinds : "one program", tests, NULL, NULL));
}
