/* A random-call fuzzer of the C ABI's handles: thousands of calls with live, released, stale, forged and
 * mistyped handles and random sizes. Every call must return a known status with a message on failure and
 * never crash (run under AddressSanitizer in CI). RIG_FUZZ_SEED reproduces a run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rigtest.h"

static uint64_t rng;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

enum { POOL = 16 };
static rig_device devices[POOL];
static rig_buffer buffers[POOL];
static rig_submission subs[POOL];
static rig_run runs[POOL];

static void *any_handle(void) {
  switch (next() % 6) {
    case 0: return devices[next() % POOL];
    case 1: return buffers[next() % POOL];
    case 2: return subs[next() % POOL];
    case 3: return runs[next() % POOL];
    case 4: return (void *)(uintptr_t)next(); /* forged */
    default: return NULL;
  }
}

static void checked(rig_status s, const char *what) {
  if (s > RIG_BUSY) fail_msg("%s returned unknown status %d", what, (int)s);
  if (s != RIG_OK && rig_last_error()[0] == '\0') fail_msg("%s failed (%s) with no message", what, rig_status_name(s));
}

static void random_calls_on_any_handles_never_crash(void **state) {
  (void)state;
  const char *env = getenv("RIG_FUZZ_SEED");
  rng = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) | 1;
  printf("fuzz seed %llu\n", (unsigned long long)rng);
  uint8_t bytes[256] = {0};
  for (int i = 0; i < 20000; ++i) {
    size_t k = next() % POOL;
    size_t n = next() % 3 == 0 ? (size_t)next() : next() % 300;
    switch (next() % 14) {
      case 0:
        if (!devices[k]) checked(rig_memory_device("F", &devices[k]), "memory_device");
        break;
      case 1:
        checked(rig_device_release((rig_device)any_handle()), "device_release");
        break;
      case 2: {
        rig_buffer b = NULL;
        rig_status s = rig_buffer_create((rig_device)any_handle(), n % 4096, RIG_MEMORY_DEVICE, &b);
        checked(s, "buffer_create");
        if (s == RIG_OK) {
          if (buffers[k]) rig_buffer_release(buffers[k]);
          buffers[k] = b;
        }
        break;
      }
      case 3: {
        rig_buffer b = NULL;
        rig_status s = rig_buffer_view((rig_buffer)any_handle(), next() % 64, n, &b);
        checked(s, "buffer_view");
        if (s == RIG_OK) checked(rig_buffer_release(b), "release view");
        break;
      }
      case 4: {
        rig_buffer b = NULL;
        rig_status s = rig_buffer_borrow((rig_device)any_handle(), (rig_buffer)any_handle(), &b);
        checked(s, "buffer_borrow");
        if (s == RIG_OK) checked(rig_buffer_release(b), "release borrow");
        break;
      }
      case 5:
        checked(rig_buffer_read_into((rig_buffer)any_handle(), next() % 64, bytes, n % 256), "read_into");
        break;
      case 6:
        checked(rig_buffer_write_from((rig_buffer)any_handle(), next() % 64, bytes, n % 256), "write_from");
        break;
      case 7:
        checked(rig_buffer_release((rig_buffer)any_handle()), "buffer_release");
        break;
      case 8: {
        rig_part p = {sizeof p};
        p.kind = (rig_part_kind)(1 + next() % 3);
        p.src_slot = (uint32_t)(next() % 3);
        p.dst_slot = (uint32_t)(next() % 3);
        p.length = next() % 2 ? RIG_WHOLE : n;
        p.fn = NULL;
        rig_access a[2] = {(rig_access)(1 + next() % 3), (rig_access)(1 + next() % 3)};
        rig_submission s = NULL;
        rig_status st = rig_submission_make((rig_device)any_handle(), &p, 1, a, 2, &s);
        checked(st, "submission_make");
        if (st == RIG_OK) {
          if (subs[k]) rig_submission_release(subs[k]);
          subs[k] = s;
        }
        break;
      }
      case 9: {
        rig_run r = NULL;
        rig_status s = rig_run_take((rig_submission)any_handle(), &r);
        checked(s, "run_take");
        if (s == RIG_OK) {
          if (runs[k]) rig_run_release(runs[k]);
          runs[k] = r;
        }
        break;
      }
      case 10:
        checked(rig_run_set_buffer((rig_run)any_handle(), (uint32_t)(next() % 3), (rig_buffer)any_handle()), "set_buffer");
        break;
      case 11: {
        rig_point w = next() % 2 ? (rig_point)next() : 0;
        checked(rig_submit((rig_run)any_handle(), &w, next() % 2, NULL), "submit");
        break;
      }
      case 12:
        checked(rig_submission_release((rig_submission)any_handle()), "submission_release");
        break;
      default: {
        uint64_t v;
        checked(rig_device_submitted((rig_device)any_handle(), &v), "submitted");
        checked(rig_wait_point((rig_point)next(), 0), "wait_point");
      }
    }
  }
  for (int k = 0; k < POOL; ++k) {
    rig_run_release(runs[k]);
    rig_submission_release(subs[k]);
    rig_buffer_release(buffers[k]);
    rig_device_release(devices[k]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(random_calls_on_any_handles_never_crash)};
  return cmocka_run_group_tests_name("handles fuzz", tests, NULL, NULL);
}
