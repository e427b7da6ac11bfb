/* Neighbours on a page: host ranges that share pages (ordinary heap allocations side by side) borrowed by
 * a device, each borrowed and released in any order. Registered with the ordering suite, so it runs over
 * memory devices, the test driver, the fake libcuda, the fake HIP runtime (and the HIP shim), Vulkan on
 * lavapipe, and real GPUs (RIG_REQUIRE=cuda fails where it would skip). Where the device registers host
 * memory, the range table counts the pages the neighbours share and registers only the pages between, so a
 * borrow may span registrations; copies through it are split where they meet. Where the kind is a driver
 * double, its counters show every registration released once. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rigtest.h"

/* How many pairs the stress case borrows at once: RIG_TEST_PAIRS (the suites' dedicated runs ask for
 * 10,000: tests/core, cuda, hip and vulkan meson.build), else a few hundred (every ordering kind runs this
 * file); at most a tenth under a sanitizer, whose every malloc and registration costs far more. */
static size_t pair_count(void) {
  const char *env = getenv("RIG_TEST_PAIRS");
  size_t n = env ? strtoul(env, NULL, 10) : 300;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  if (n > 1000) n = 1000;
#endif
  return n ? n : 1;
}

/* Skips the test where d is a Vulkan device that borrows no host memory (import is opt-in there); any other
 * refusal of a borrow of heap memory fails it. */
static int borrows_host_memory_or_skip(rig_device d) {
  static char probe[100];
  rig_buffer w, on_d;
  OK(rig_buffer_wrap(probe + 1, 50, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  rig_status s = rig_buffer_borrow(d, w, &on_d);
  if (s == RIG_OK) {
    OK(rig_buffer_release(on_d));
    OK(rig_buffer_release(w));
    return 1;
  }
  char why[600];
  snprintf(why, sizeof why, "%s", rig_last_error());
  OK(rig_buffer_release(w));
  if (s != RIG_UNMAPPABLE || !strstr(why, "Vulkan")) fail_msg("borrow of heap memory: %s: %s", rig_status_name(s), why);
  rt_skip(why);
  return 0;
}


static long long registered_now(void) {
  rt_query_fn q = rt_double_query();
  return q ? q("registers") - q("unregisters") : -1;
}

static unsigned next_random(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}

/* A submitted copy of the whole of src into dst on d. */
static void copy(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_run r = rt_copy_run(d, src, dst);
  OK(rig_submit(r, NULL, 0, NULL));
  OK(rig_run_release(r));
}

/* One neighbouring pair: a source and a destination malloc'd one after the other (so they share a page
 * more often than not), both wrapped and borrowed onto the device, the source copied into device memory
 * and from there into the destination. */
typedef struct pair {
  unsigned char *src, *dst;
  size_t n;
  rig_buffer wrap_src, wrap_dst, on_src, on_dst, x;
} pair;

static void pair_make(rig_device d, pair *p, unsigned *seed) {
  p->n = 24 + next_random(seed) % (3000 - 24 + 1);
  p->src = malloc(p->n);
  p->dst = malloc(p->n);
  assert_non_null(p->src);
  assert_non_null(p->dst);
  for (size_t i = 0; i < p->n; ++i) p->src[i] = (unsigned char)next_random(seed);
  memset(p->dst, 0, p->n);
  OK(rig_buffer_wrap(p->src, p->n, RIG_ACCESS_READ, NULL, NULL, &p->wrap_src));
  OK(rig_buffer_wrap(p->dst, p->n, RIG_ACCESS_READ_WRITE, NULL, NULL, &p->wrap_dst));
  p->on_src = rt_borrow(d, p->wrap_src);
  p->on_dst = rt_borrow(d, p->wrap_dst);
  p->x = rt_create(d, p->n);
  copy(d, p->on_src, p->x);  /* to the device */
  copy(d, p->x, p->on_dst);  /* and back */
}

static void pair_check_and_release(pair *p) {
  unsigned char *back = malloc(p->n);
  assert_non_null(back);
  OK(rig_buffer_read_into(p->wrap_dst, 0, back, p->n));  /* follows the copy back (rule 5) */
  assert_memory_equal(back, p->src, p->n);
  free(back);
  rig_buffer all[] = {p->on_src, p->on_dst, p->wrap_src, p->wrap_dst, p->x};
  for (int i = 0; i < 5; ++i) OK(rig_buffer_release(all[i]));
  free(p->src);
  free(p->dst);
}

/* Neighbouring heap pairs (10,000 in the dedicated runs) borrowed at once by each of the suite's devices,
 * copied to the device and back: every byte arrives; released in a random order, every registration is
 * given back once. */
static void neighbouring_heap_pairs_borrow_copy_and_release_in_any_order(void **state) {
  (void)state;
  rig_device devs[2];
  if (!rt_open_kind(0, "A", &devs[0]) || !rt_open_kind(1, "B", &devs[1])) return;
  if (!borrows_host_memory_or_skip(devs[0]) || !borrows_host_memory_or_skip(devs[1])) return;
  const size_t n = pair_count();
  pair *pairs = calloc(n, sizeof *pairs);
  size_t *order = calloc(n, sizeof *order);
  assert_non_null(pairs);
  assert_non_null(order);
  for (int k = 0; k < 2; ++k) {
    unsigned seed = 36u + (unsigned)k;
    long long before = registered_now();
    for (size_t i = 0; i < n; ++i) pair_make(devs[k], &pairs[i], &seed);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    for (size_t i = n - 1; i > 0; --i) {
      size_t j = next_random(&seed) % (i + 1), t = order[i];
      order[i] = order[j], order[j] = t;
    }
    for (size_t i = 0; i < n; ++i) pair_check_and_release(&pairs[order[i]]);
    if (before >= 0) assert_int_equal(registered_now(), before);  /* every page given back once */
  }
  free(order);
  free(pairs);
  OK(rig_device_release(devs[0]));
  OK(rig_device_release(devs[1]));
}

/* Four neighbouring allocations (two sources, two destinations, 24 to 3,000 bytes each), borrowed, each
 * source copied into device memory and back into a destination, three hundred times: every copy runs and
 * the device is never lost (the fake HIP case of issue 36). */
static void four_neighbours_copy_through_device_memory(void **state) {
  (void)state;
  rig_device d;
  if (!rt_open_kind(0, "A", &d) || !borrows_host_memory_or_skip(d)) return;
  unsigned seed = 4;
  for (int round = 0; round < 300; ++round) {
    pair p[2];
    for (int i = 0; i < 2; ++i) pair_make(d, &p[i], &seed);
    for (int i = 0; i < 2; ++i) pair_check_and_release(&p[1 - i]);
  }
  OK(rig_device_release(d));
}

/* A wrap over four pages borrowed after two small wraps on its second and fourth pages: it counts their
 * registrations and registers its first and third pages, so it spans four registrations; a copy from it
 * into device memory and back into another such wrap (its own neighbours at other pages) is split at every
 * place they meet, and every byte arrives. Where a double counts, exactly the gaps were registered. */
static void a_wrap_over_registered_pages_spans_them(void **state) {
  (void)state;
  rig_device d;
  if (!rt_open_kind(0, "A", &d) || !borrows_host_memory_or_skip(d)) return;
  size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 4 * page - 100;
  unsigned char *mem[2];
  rig_buffer small[2][2], on_small[2][2], big[2], on_big[2];
  long long before = registered_now();
  for (int k = 0; k < 2; ++k) {
    mem[k] = aligned_alloc(page, 4 * page);
    assert_non_null(mem[k]);
    unsigned seed = 7u + (unsigned)k;
    for (size_t i = 0; i < 4 * page; ++i) mem[k][i] = k ? 0 : (unsigned char)next_random(&seed);
    for (int s = 0; s < 2; ++s) {  /* on pages 1 and 3 (k = 1: pages 2 and 3, so the gaps differ) */
      size_t at = (k ? 2 + (size_t)s : 1 + 2 * (size_t)s) * page + 40;
      OK(rig_buffer_wrap(mem[k] + at, 64, RIG_ACCESS_READ, NULL, NULL, &small[k][s]));
      on_small[k][s] = rt_borrow(d, small[k][s]);
    }
    OK(rig_buffer_wrap(mem[k] + 50, n, k ? RIG_ACCESS_READ_WRITE : RIG_ACCESS_READ, NULL, NULL, &big[k]));
    on_big[k] = rt_borrow(d, big[k]);
  }
  /* Source: small pages 1, 3 and gaps 0, 2; destination: small pages 2, 3 and gap 0-1. */
  if (before >= 0) assert_int_equal(registered_now() - before, 2 + 2 + 2 + 1);
  rig_buffer x = rt_create(d, n);
  copy(d, on_big[0], x);
  copy(d, x, on_big[1]);
  unsigned char *back = malloc(n);
  assert_non_null(back);
  OK(rig_buffer_read_into(big[1], 0, back, n));
  assert_memory_equal(back, mem[0] + 50, n);
  free(back);
  OK(rig_buffer_release(x));
  for (int k = 0; k < 2; ++k) {
    OK(rig_buffer_release(on_big[k]));
    OK(rig_buffer_release(big[k]));
    for (int s = 0; s < 2; ++s) {
      OK(rig_buffer_release(on_small[k][s]));
      OK(rig_buffer_release(small[k][s]));
    }
  }
  if (before >= 0) assert_int_equal(registered_now(), before);
  free(mem[0]);
  free(mem[1]);
  OK(rig_device_release(d));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(four_neighbours_copy_through_device_memory),
      cmocka_unit_test(a_wrap_over_registered_pages_spans_them),
      cmocka_unit_test(neighbouring_heap_pairs_borrow_copy_and_release_in_any_order),
  };
  const char *kinds = getenv("RIG_TEST_KINDS");
  return rt_finish(cmocka_run_group_tests_name(kinds ? kinds : "neighbours", tests, NULL, NULL));
}
