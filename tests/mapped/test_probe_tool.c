/* `rig probe` (tools/probe) run in-process with its output captured: the verdict lines, the deadline that
 * answers Inconclusive instead of hanging, a PROT_NONE mapping and a range registered first, and usage
 * errors. Cases over cuda:0 need the fake libcuda (RIG_CUDA_LIBRARY); they skip without it. */
#include <rig.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "commands.h"

static char file[64];
static char out[16384];

/* Runs rig_tool_probe with args (NULL-terminated), capturing stdout into `out`. Returns its exit status. */
static int run(const char *first, ...) {
  char *argv[32];
  int argc = 0;
  argv[argc++] = "probe";
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *)) argv[argc++] = (char *)a;
  va_end(ap);
  argv[argc] = NULL;
  fflush(stdout);
  char cap[] = "/tmp/rig-probe-out-XXXXXX";
  int fd = mkstemp(cap);
  assert_true(fd >= 0);
  unlink(cap);
  int saved = dup(1);
  dup2(fd, 1);
  int rc = rig_tool_probe(argc, argv);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  ssize_t n = pread(fd, out, sizeof out - 1, 0);
  out[n > 0 ? n : 0] = 0;
  close(fd);
  print_message("%s", out);
  return rc;
}

/* 1 when RIG_CUDA_LIBRARY is the fake libcuda (it exports its control surface). */
static int fake(void) {
  const char *l = getenv("RIG_CUDA_LIBRARY");
  if (!l || !*l) return 0;
  void *h = dlopen(l, RTLD_LAZY | RTLD_LOCAL);
  int yes = h && dlsym(h, "fakecuda_control");
  if (h) dlclose(h);
  return yes;
}

static void memory_device_not_needed(void **state) {
  (void)state;
  assert_int_equal(run(file, "--device", "memory:A", NULL), 0); /* the name `rig devices` prints */
  assert_non_null(strstr(out, "verdict   Not_needed"));
  assert_non_null(strstr(out, "static    Not_needed"));
}

static void usable_prints_both_speeds(void **state) {
  (void)state;
  if (!fake()) skip();
  assert_int_equal(run(file, "--device", "cuda:0", NULL), 0);
  assert_non_null(strstr(out, "static    Self_test_required"));
  assert_non_null(strstr(out, "verdict   Usable"));
  assert_non_null(strstr(out, "speeds    registered "));
  assert_non_null(strstr(out, "cacheable yes"));
  assert_int_equal(run(file, "--json", NULL), 0); /* default device: cuda:0 before vulkan */
  assert_non_null(strstr(out, "\"kind\": \"Usable\""));
  assert_non_null(strstr(out, "\"device\": \"cuda:0\""));
}

/* The child never answers (registered uploads take minutes on the fake): Inconclusive within the
 * deadline, the child killed. */
static void deadline_answers_inconclusive(void **state) {
  (void)state;
  if (!fake()) skip();
  setenv("FAKECUDA_REGISTERED_UPLOAD_NS_PER_KIB", "100000000", 1);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  int rc = run(file, "--device", "cuda:0", "--deadline", "1.5", NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  unsetenv("FAKECUDA_REGISTERED_UPLOAD_NS_PER_KIB");
  double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
  assert_int_equal(rc, 5); /* Inconclusive's exit status */
  assert_non_null(strstr(out, "verdict   Inconclusive: no answer within 1.5 s"));
  assert_true(s >= 1.4 && s < 8);
}

static void prot_none_is_inconclusive(void **state) {
  (void)state;
  if (!fake()) skip();
  assert_int_equal(run(file, "--device", "cuda:0", "--map", "none", NULL), 5);
  assert_non_null(strstr(out, "verdict   Inconclusive: the mapping cannot be read"));
}

static void range_registered_first_is_inconclusive(void **state) {
  (void)state;
  if (!fake()) skip();
  assert_int_equal(run(file, "--device=cuda:0", "--register-first", NULL), 5);
  assert_non_null(strstr(out, "verdict   Inconclusive"));
  assert_non_null(strstr(out, "overlaps"));
}

static void usage_errors(void **state) {
  (void)state;
  assert_int_equal(run(NULL), 2);
  assert_int_equal(run(file, "--offset", "100", NULL), 2);          /* not a page multiple */
  assert_int_equal(run(file, "--length", "100G", NULL), 2);         /* past the end */
  assert_int_equal(run(file, "--deadline", "-1", NULL), 2);
  assert_int_equal(run(file, "--bogus", NULL), 2);
  assert_int_equal(run(file, "--map", "weird", NULL), 2);
  assert_int_equal(run("/nonexistent/file", NULL), 1);
  assert_int_equal(run(file, "--device", "nosuch:7", NULL), 1);     /* no verdict: device not opened */
  assert_non_null(strstr(out, "error"));
  assert_int_equal(run(file, "--device", "memory", NULL), 1);       /* memory devices are memory:NAME */
  assert_int_equal(run(file, "--length", "0", NULL), 2);
  assert_int_equal(run(file, "--json=yes", NULL), 2);               /* a flag takes no value */
  assert_int_equal(run(file, file, NULL), 2);                       /* one FILE */
  assert_int_equal(run("--help", NULL), 0);                         /* to stdout */
  assert_non_null(strstr(out, "usage: rig probe"));
}

/* What cannot be probed is said in its own terms before any device is opened: no verdict, exit 1. */
static void directory_and_empty_file(void **state) {
  (void)state;
  char dir[] = "/tmp/rig-probe-dir-XXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_int_equal(run(dir, "--device", "memory:A", NULL), 1);
  assert_null(strstr(out, "verdict"));
  char empty[64];
  snprintf(empty, sizeof empty, "%s/empty", dir);
  int fd = open(empty, O_CREAT | O_WRONLY, 0600);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(run(empty, "--device", "memory:A", NULL), 1);
  assert_null(strstr(out, "verdict"));
  unlink(empty);
  rmdir(dir);
}

int main(void) {
  snprintf(file, sizeof file, "/tmp/rig-probe-file-XXXXXX");
  int fd = mkstemp(file);
  if (fd < 0) return 1;
  static char block[1 << 16];
  uint32_t x = 99;
  for (int i = 0; i < 64; ++i) { /* 4 MiB of distinct bytes */
    for (size_t j = 0; j < sizeof block; ++j) {
      x = x * 1664525u + 1013904223u;
      block[j] = (char)(x >> 24);
    }
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block) return 1;
  }
  close(fd);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(memory_device_not_needed),
      cmocka_unit_test(usable_prints_both_speeds),
      cmocka_unit_test(deadline_answers_inconclusive),
      cmocka_unit_test(prot_none_is_inconclusive),
      cmocka_unit_test(range_registered_first_is_inconclusive),
      cmocka_unit_test(usage_errors),
      cmocka_unit_test(directory_and_empty_file),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  unlink(file);
  return failed;
}
