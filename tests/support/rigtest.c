#include "rigtest.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_driver.h"

static const char *message(void);

void rt_ok(rig_status s, const char *call, const char *file, int line) {
  if (s == RIG_OK) return;
  fail_msg("%s:%d: %s returned %s: %s", file, line, call, rig_status_name(s), message());
}

/* A helper that releases handles after a failed call keeps the failure's message here, since each rig
 * call starts with a fresh message. */
static __thread char saved_message[512]; /* per thread, as rig_last_error is */

static const char *message(void) { return saved_message[0] ? saved_message : rig_last_error(); }

void rt_status(rig_status want, rig_status got, const char *call, const char *file, int line) {
  if (got != want)
    fail_msg("%s:%d: %s returned %s (%s), want %s", file, line, call, rig_status_name(got), message(),
             rig_status_name(want));
  if (want != RIG_OK && message()[0] == '\0') fail_msg("%s:%d: %s gave no message", file, line, call);
  saved_message[0] = '\0';
}

static rig_status submit_parts(rig_device d, const rig_part *parts, size_t np, const rig_buffer *buffers,
                               const rig_access *access, size_t n, const rig_point *waits, size_t wc,
                               rig_point *point) {
  rig_submission sub;
  rig_run run;
  rig_status s = rig_submission_make(d, parts, np, access, n, &sub);
  if (s != RIG_OK) return s;
  s = rig_run_take(sub, &run);
  for (size_t i = 0; s == RIG_OK && i < n; ++i) s = rig_run_set_buffer(run, (uint32_t)i, buffers[i]);
  if (s == RIG_OK) s = rig_submit(run, waits, wc, point);
  snprintf(saved_message, sizeof saved_message, "%s", s == RIG_OK ? "" : rig_last_error());
  rig_run_release(run);
  rig_submission_release(sub);
  return s;
}

rig_part rt_copy_part(void) {
  rig_part p = {sizeof p};
  p.kind = RIG_PART_COPY;
  p.src_slot = 0;
  p.dst_slot = 1;
  p.length = RIG_WHOLE;
  return p;
}

rig_part rt_fill_part(uint8_t byte) {
  rig_part p = {sizeof p};
  p.kind = RIG_PART_FILL;
  p.dst_slot = 0;
  p.length = RIG_WHOLE;
  p.byte = byte;
  return p;
}

rig_run rt_run(rig_device d, const rig_part *parts, size_t part_count, const rig_buffer *buffers,
               const rig_access *access, size_t n) {
  rig_submission sub;
  rig_run run;
  OK(rig_submission_make(d, parts, part_count, access, n, &sub));
  OK(rig_run_take(sub, &run));
  OK(rig_submission_release(sub));
  for (size_t i = 0; i < n; ++i) OK(rig_run_set_buffer(run, (uint32_t)i, buffers[i]));
  return run;
}

rig_run rt_copy_run(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_part p = rt_copy_part();
  rig_buffer b[2] = {src, dst};
  rig_access a[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  return rt_run(d, &p, 1, b, a, 2);
}

rig_run rt_fill_run(rig_device d, rig_buffer dst, uint8_t byte) {
  rig_part p = rt_fill_part(byte);
  rig_access w = RIG_ACCESS_WRITE;
  return rt_run(d, &p, 1, &dst, &w, 1);
}

rig_status rt_try_copy(rig_device d, rig_buffer src, rig_buffer dst, const rig_point *waits, size_t wc,
                       rig_point *point) {
  rig_part p = rt_copy_part();
  rig_buffer b[2] = {src, dst};
  rig_access a[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  return submit_parts(d, &p, 1, b, a, 2, waits, wc, point);
}

rig_point rt_copy(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_point p = 0;
  OK(rt_try_copy(d, src, dst, NULL, 0, &p));
  return p;
}

rig_point rt_fill(rig_device d, rig_buffer dst, uint8_t byte) {
  rig_part p = rt_fill_part(byte);
  rig_access a = RIG_ACCESS_WRITE;
  rig_point pt = 0;
  OK(submit_parts(d, &p, 1, &dst, &a, 1, NULL, 0, &pt));
  return pt;
}

rig_point rt_kernel(rig_device d, rig_host_kernel_fn fn, void *user, const rig_buffer *buffers,
                    const rig_access *access, size_t n, const rig_point *waits, size_t wc) {
  rig_part p = {sizeof p};
  p.kind = RIG_PART_HOST_KERNEL;
  p.fn = fn;
  p.user = user;
  rig_point pt = 0;
  OK(submit_parts(d, &p, 1, buffers, access, n, waits, wc, &pt));
  return pt;
}

rig_buffer rt_borrow(rig_device d, rig_buffer b) {
  rig_buffer out = NULL;
  OK(rig_buffer_borrow(d, b, &out));
  return out;
}

rig_buffer rt_borrow_or_skip(rig_device d, rig_buffer b) {
  rig_buffer out = NULL;
  rig_status s = rig_buffer_borrow(d, b, &out);
  if (s == RIG_UNMAPPABLE) {
    char why[600];
    snprintf(why, sizeof why, "this program needs a borrow the device cannot make: %s", rig_last_error());
    rt_skip(why);
  }
  OK(s);
  return out;
}

rig_buffer rt_create(rig_device d, size_t n) {
  rig_buffer out = NULL;
  OK(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &out));
  return out;
}

rig_buffer rt_create_shared(rig_device d, size_t n) {
  rig_buffer out = NULL;
  OK(rig_buffer_create(d, n, RIG_MEMORY_MAPPED, &out));
  return out;
}

uint64_t rt_submitted(rig_device d) {
  uint64_t v = 0;
  OK(rig_device_submitted(d, &v));
  return v;
}

uint64_t rt_signaled(rig_device d) {
  uint64_t v = 0;
  OK(rig_device_signaled(d, &v));
  return v;
}

static char kinds_text[256];
static const char *kinds[16];
static size_t kinds_n;

static void parse_kinds(void) {
  if (kinds_n) return;
  const char *env = getenv("RIG_TEST_KINDS");
  snprintf(kinds_text, sizeof kinds_text, "%s", env && *env ? env : "memory+test");
  for (char *t = strtok(kinds_text, "+, "); t && kinds_n < 16; t = strtok(NULL, "+, ")) kinds[kinds_n++] = t;
}

size_t rt_kind_count(void) {
  parse_kinds();
  return kinds_n;
}

const char *rt_kind(size_t i) {
  parse_kinds();
  return kinds[i % kinds_n];
}

int rt_required(const char *backend) {
  const char *req = getenv("RIG_REQUIRE");
  if (!req) return 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", req);
  for (char *t = strtok(buf, "+, "); t; t = strtok(NULL, "+, "))
    if (strcmp(t, backend) == 0) return 1;
  return 0;
}

static int skipped;

void rt_skip(const char *why) {
  fprintf(stderr, "SKIP: %s\n", why);
  ++skipped;
  skip();
}

int rt_finish(int failures) {
  if (failures) return failures;
  if (skipped) fprintf(stderr, "%d test(s) skipped: reporting the program as skipped, not passed\n", skipped);
  return skipped ? 77 : 0;
}

int rt_open_kind(size_t i, const char *name, rig_device *out) {
  const char *k = rt_kind(i);
  rig_status s;
  if (strcmp(k, "memory") == 0) {
    s = rig_memory_device(name, out);
  } else if (strcmp(k, "test") == 0) {
    s = tdrv_open(name, out);
  } else {
    /* CUDA and HIP devices take the machine's GPUs in turn (the kind's first device on GPU 0, its second
     * on GPU 1, ...), so that on a machine with several the suite's waits and peer borrows cross GPUs as
     * well. Vulkan devices stay on device 0: rig borrows memory only between devices of one VkDevice. */
    const char *names[64];
    size_t listed = 0, gpus = 0, prefix = strlen(k);
    int spread = strcmp(k, "cuda") == 0 || strcmp(k, "hip") == 0;
    if (spread && rig_device_list(names, 64, &listed) == RIG_OK)
      for (size_t j = 0; j < listed && j < 64; ++j)
        if (strncmp(names[j], k, prefix) == 0 && names[j][prefix] == ':') ++gpus;
    size_t nth = i / rt_kind_count();
    char dev[64];
    snprintf(dev, sizeof dev, "%s:%zu", k, gpus ? nth % gpus : 0);
    s = rig_device_open(dev, out);
    if (s != RIG_OK && rt_required(k)) fail_msg("RIG_REQUIRE names %s but %s did not open: %s", k, dev, rig_last_error());
  }
  if (s == RIG_OK) return 1;
  if (rt_required(k)) fail_msg("RIG_REQUIRE names %s but it did not open: %s", k, rig_last_error());
  char why[600];
  snprintf(why, sizeof why, "no %s device: %s", k, rig_last_error());
  rt_skip(why);
  return 0;
}

int rt_is_test_driver(rig_device d) {
  rig_device_info info = {sizeof info};
  OK(rig_device_get_info(d, &info));
  return strcmp(info.framework, "test") == 0;
}

rt_query_fn rt_double_query(void) {
  static const char *where[][2] = {{"RIG_CUDA_LIBRARY", "fakecuda_query"},
                                   {"RIG_HIP_LIBRARY", "fakehip_query"},
                                   {"HIPSHIM_CUDA_LIBRARY", "fakecuda_query"}};
  for (size_t i = 0; i < sizeof where / sizeof where[0]; ++i) {
    const char *path = getenv(where[i][0]);
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    rt_query_fn f = lib ? (rt_query_fn)dlsym(lib, where[i][1]) : NULL;
    if (f) return f;
  }
  return NULL;
}
