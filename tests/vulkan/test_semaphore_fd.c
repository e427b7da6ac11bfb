/* Points of Vulkan devices as semaphore descriptors (rig_point_export_semaphore_fd / _import_semaphore_fd:
 * a timeline semaphore's opaque fd with a value; rig_point_export_sync_fd / _import_sync_fd: sync files).
 * Where the device has them (NVIDIA's driver): a second rig device imports a point and its queue waits for
 * it, within one process and across a fork (this program again as the peer, the descriptors sent with
 * SCM_RIGHTS), shown by a copy submitted before the exporter's writes that still sees the last of them; an
 * import of a value not yet reached times out; bad descriptors answer clear errors. Where it has not
 * (lavapipe), those skip with the reason, and the mode `unsupported` checks the capability query says no
 * and every call answers RIG_UNSUPPORTED with the reason (meson's vulkan_semaphore_fd_unsupported).
 * RIG_REQUIRE=vulkan,semaphore_fd (and sync_fd) turns a device without them into a failure. In CI the
 * same tests run over lavapipe through semfd_shim.c (RIG_TEST_SEMFD_FAKE=1), which fakes the extension in
 * one process on one queue: there the imports are of values already submitted (a future one would hold
 * the one queue for ever) and the fork skips. */
#define _GNU_SOURCE
#include <rig_interop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scm_rights.h"
#include "vk_common.h"

#define LENGTH 65536u
#define SHORT_NS 20000000ull /* 20 ms: long enough for a queue that is not held to pass its wait */

/* Over semfd_shim.c: one process, one queue (above). */
static int faked(void) {
  const char *f = getenv("RIG_TEST_SEMFD_FAKE");
  return f && *f && strcmp(f, "0") != 0;
}

static int supported(rig_device d, rig_interop_kind kind) {
  int yes = -1;
  OK(rig_interop_supported(d, NULL, kind, &yes));
  return yes;
}

/* Opens vulkan:0 with `kind` (and memory descriptors: the copies read the exporter's memory through one),
 * or skips with the reason (a failure where RIG_REQUIRE names `required`). */
static int open_or_skip(rig_device *d, rig_interop_kind kind, const char *required) {
  if (!vk_open(d)) return 0;
  if (supported(*d, kind) && supported(*d, RIG_INTEROP_MEMORY_FD)) return 1;
  char why[200];
  snprintf(why, sizeof why, "vulkan:0 has no %s (or no memory descriptors): RIG_INTEROP_%s says no",
           kind == RIG_INTEROP_SYNC_FD ? "sync files" : "timeline semaphore descriptors",
           kind == RIG_INTEROP_SYNC_FD ? "SYNC_FD" : "SEMAPHORE_FD");
  if (rt_required(required)) fail_msg("RIG_REQUIRE names %s but %s", required, why);
  rt_skip(why);
  OK(rig_device_release(*d));
  return 0;
}

/* The importer's half of a gated copy: on its own device, the exporter's memory (descriptor mem_fd) and
 * the exporter's timeline at `value` (descriptor sem_fd) come in; the import's point is not reached yet
 * (the exporter has not written), and a copy of the memory into *y is submitted behind it. */
typedef struct importer {
  rig_device d;
  rig_buffer x, y;
  rig_point copied;
} importer;

static int import_and_copy(importer *im, int mem_fd, int sem_fd, uint64_t value, int gated) {
  rig_point gate;
  if (rig_buffer_import_fd(im->d, mem_fd, LENGTH, &im->x) != RIG_OK) return 10;
  if (rig_point_import_semaphore_fd(im->d, sem_fd, value, &gate) != RIG_OK) return 11;
  if (fcntl(sem_fd, F_GETFD) < 0) return 12; /* still the caller's: rig imported a duplicate */
  if (gated && rig_wait_point(gate, SHORT_NS) != RIG_TIMEOUT) return 13; /* the exporter is short of `value` */
  if (rig_buffer_create(im->d, LENGTH, RIG_MEMORY_DEVICE, &im->y) != RIG_OK) return 14;
  im->copied = rt_copy(im->d, im->x, im->y); /* behind the gate: rule 1 on the importer's queue */
  if (gated && rig_wait_point(im->copied, SHORT_NS) != RIG_TIMEOUT) return 15;
  return 0;
}

/* The importer's check once the exporter wrote: the copy saw the last write. 0 well. */
static int copied_last_write(importer *im, uint8_t want) {
  if (rig_wait_point(im->copied, UINT64_MAX) != RIG_OK) return 20;
  if (vk_mismatches(im->y, LENGTH, want) != 0) return 21;
  if (rig_buffer_release(im->y) != RIG_OK || rig_buffer_release(im->x) != RIG_OK) return 22;
  return 0;
}

/* The exporter: a buffer written once and reached, its memory descriptor, and its device's timeline as a
 * descriptor with the value three writes ahead (the writes come later: exporter_writes). */
typedef struct exporter {
  rig_device d;
  rig_buffer x;
  int mem_fd, sem_fd;
  uint64_t gate;
} exporter;

static void exporter_open(exporter *ex) {
  ex->x = vk_buffer(ex->d, LENGTH, RIG_MEMORY_DEVICE);
  rig_point first = rt_fill(ex->d, ex->x, 0x11);
  OK(rig_wait_point(first, UINT64_MAX));
  size_t length = 0;
  OK(rig_buffer_export_fd(ex->x, &ex->mem_fd, &length));
  uint64_t value = 0;
  OK(rig_point_export_semaphore_fd(first, &ex->sem_fd, &value));
  assert_true(ex->sem_fd >= 0);
  assert_int_equal(value, rt_submitted(ex->d)); /* a reached point: its own value */
  ex->gate = value + 3;
}

/* Three writes, the last one 0x5a, reaching the gate value; waited for (which commits them). */
static void exporter_writes(exporter *ex) {
  rt_fill(ex->d, ex->x, 0x22);
  rt_fill(ex->d, ex->x, 0x33);
  rig_point last = rt_fill(ex->d, ex->x, 0x5a);
  assert_int_equal(rt_submitted(ex->d), ex->gate);
  if (faked()) { /* submitted for the import that follows, not waited for: exported, so committed */
    int fd = -1;
    uint64_t value = 0;
    OK(rig_point_export_semaphore_fd(last, &fd, &value));
    assert_int_equal(value, ex->gate);
    close(fd);
    return;
  }
  OK(rig_wait_point(last, UINT64_MAX));
}

static void exporter_close(exporter *ex) {
  close(ex->mem_fd);
  close(ex->sem_fd);
  OK(rig_buffer_release(ex->x));
}

/* The peer process: receives the memory and the semaphore descriptors, imports them on its own vulkan:0,
 * says it is ready, and checks its copy saw the exporter's last write. Exit status 0 well, else the step. */
static int peer(int sock) {
  size_t length = 0, value = 0;
  int mem_fd = scm_recv_fd(sock, &length);
  int sem_fd = scm_recv_fd(sock, &value);
  if (mem_fd < 0 || sem_fd < 0 || length != LENGTH) return 2;
  importer im = {0};
  if (rig_device_open("vulkan:0", &im.d) != RIG_OK) return 3;
  int s = import_and_copy(&im, mem_fd, sem_fd, value, 1);
  if (s) {
    fprintf(stderr, "peer: step %d: %s\n", s, rig_last_error());
    return s;
  }
  close(mem_fd);
  close(sem_fd);
  if (write(sock, "r", 1) != 1) return 4;
  s = copied_last_write(&im, 0x5a);
  if (s) return s;
  return rig_device_release(im.d) == RIG_OK ? 0 : 5;
}

/* ----- the tests -------------------------------------------------------------------------------------- */

/* A second rig device on the same GPU imports the first's timeline at a value three writes ahead: a copy
 * submitted behind the import waits in the importer's queue and sees the last of the writes. (A value not
 * yet submitted is a test's choice, not what an export gives: it needs the two devices on two VkQueues,
 * which consecutive opens get where the GPU's compute family has several, as NVIDIA's has.) */
static void imported_point_orders_a_copy_within_one_process(void **state) {
  (void)state;
  exporter ex = {0};
  if (!open_or_skip(&ex.d, RIG_INTEROP_SEMAPHORE_FD, "semaphore_fd")) return;
  exporter_open(&ex);
  importer im = {0};
  OK(rig_device_open("vulkan:0", &im.d));
  if (faked()) exporter_writes(&ex); /* one queue: the gate value submitted first (not reached yet) */
  int s = import_and_copy(&im, ex.mem_fd, ex.sem_fd, ex.gate, !faked());
  if (s) fail_msg("import step %d: %s", s, rig_last_error());
  if (!faked()) exporter_writes(&ex);
  assert_int_equal(copied_last_write(&im, 0x5a), 0);
  OK(rig_device_release(im.d));
  exporter_close(&ex);
  OK(rig_device_release(ex.d));
}

/* The same across a fork and exec: the descriptors go over a UNIX socket with SCM_RIGHTS; the other
 * process's queue waits for this one's writes. */
static void imported_point_orders_a_copy_across_a_fork(void **state) {
  (void)state;
  exporter ex = {0};
  if (!open_or_skip(&ex.d, RIG_INTEROP_SEMAPHORE_FD, "semaphore_fd")) return;
  exporter_open(&ex);
  int sock = -1;
  pid_t pid = scm_spawn_peer("test_vulkan_semaphore_fd", NULL, &sock);
  assert_true(pid > 0);
  assert_int_equal(scm_send_fd(sock, ex.mem_fd, LENGTH), 0);
  assert_int_equal(scm_send_fd(sock, ex.sem_fd, (size_t)ex.gate), 0);
  char ready = 0;
  ssize_t got = read(sock, &ready, 1); /* the peer's copy is submitted behind its import */
  if (got == 1) exporter_writes(&ex);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  close(sock);
  if (got != 1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("the peer failed (status 0x%x; exit code = the step, see its stderr)", status);
  exporter_close(&ex);
  OK(rig_device_release(ex.d));
}

/* A point as a sync file, imported on a second device: its copy follows the exporter's write. A sync file
 * of a point already reached is signaled. */
static void sync_file_round_trip(void **state) {
  (void)state;
  rig_device a, b;
  if (!open_or_skip(&a, RIG_INTEROP_SYNC_FD, "sync_fd")) return;
  OK(rig_device_open("vulkan:0", &b));
  rig_buffer x = vk_buffer(a, LENGTH, RIG_MEMORY_DEVICE), xb, y = vk_buffer(b, LENGTH, RIG_MEMORY_DEVICE);
  OK(rig_wait_point(rt_fill(a, x, 0x11), UINT64_MAX));
  int mem_fd = -1, sync_fd = -1;
  size_t length = 0;
  OK(rig_buffer_export_fd(x, &mem_fd, &length));
  OK(rig_buffer_import_fd(b, mem_fd, length, &xb));
  close(mem_fd);
  rig_point written = rt_fill(a, x, 0x6b); /* not waited for: the importer's queue waits */
  OK(rig_point_export_sync_fd(written, &sync_fd));
  rig_point gate;
  OK(rig_point_import_sync_fd(b, sync_fd, &gate));
  /* -1 where the fill was reached already (the driver's choice); else still ours */
  assert_true(sync_fd == -1 || fcntl(sync_fd, F_GETFD) >= 0);
  if (sync_fd >= 0) close(sync_fd);
  rig_point copied = rt_copy(b, xb, y);
  OK(rig_wait_point(copied, UINT64_MAX));
  assert_int_equal(vk_mismatches(y, LENGTH, 0x6b), 0);
  OK(rig_point_export_sync_fd(written, &sync_fd)); /* reached: a signaled sync file, or -1 */
  OK(rig_point_import_sync_fd(b, sync_fd, &gate));
  if (sync_fd >= 0) close(sync_fd);
  OK(rig_wait_point(gate, 5000000000ull));
  OK(rig_point_import_sync_fd(b, -1, &gate)); /* -1: signaled already, Vulkan's convention */
  OK(rig_wait_point(gate, 5000000000ull));
  OK(rig_buffer_release(y));
  OK(rig_buffer_release(xb));
  OK(rig_buffer_release(x));
  OK(rig_device_release(b));
  OK(rig_device_release(a));
}

/* Each bad input: its status and its words (the driver's own refusal of a garbage descriptor: refusal). */
static void bad_points_and_descriptors_answer_clear_errors(void **state) {
  (void)state;
  rig_device a, mem;
  if (!open_or_skip(&a, RIG_INTEROP_SEMAPHORE_FD, "semaphore_fd")) return;
  rig_buffer x = vk_buffer(a, 64, RIG_MEMORY_DEVICE);
  rig_point got = 0, p = rt_fill(a, x, 0);
  int fd = -1;
  uint64_t value = 0;
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_semaphore_fd(a, -1, 1, &got));
  int pp[2];
  assert_int_equal(pipe(pp), 0);
  close(pp[1]);
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_semaphore_fd(a, pp[1], 1, &got)); /* closed */
  assert_non_null(strstr(rig_last_error(), "not open"));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_semaphore_fd(a, pp[0], 1, &got)); /* a pipe */
  assert_non_null(strstr(rig_last_error(), "pipe"));
  assert_int_equal(got, 0);
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_semaphore_fd(0, &fd, &value));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_semaphore_fd(p + 1000, &fd, &value)); /* past submitted */
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_semaphore_fd(p, NULL, &value));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_semaphore_fd(p, &fd, NULL));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_semaphore_fd(a, pp[0], 1, NULL));
  /* devices without semaphore descriptors: memory devices (and CUDA, HIP) */
  OK(rig_memory_device("sem-mem", &mem));
  assert_int_equal(supported(mem, RIG_INTEROP_SEMAPHORE_FD), 0);
  assert_int_equal(supported(mem, RIG_INTEROP_SYNC_FD), 0);
  rig_buffer mb = rt_create(mem, 64);
  rig_point mp = rt_fill(mem, mb, 1);
  STATUS(RIG_UNSUPPORTED, rig_point_export_semaphore_fd(mp, &fd, &value));
  STATUS(RIG_UNSUPPORTED, rig_point_export_sync_fd(mp, &fd));
  STATUS(RIG_UNSUPPORTED, rig_point_import_semaphore_fd(mem, pp[0], 1, &got));
  STATUS(RIG_UNSUPPORTED, rig_point_import_sync_fd(mem, pp[0], &got));
  close(pp[0]);
  OK(rig_wait_point(p, UINT64_MAX));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(mb));
  OK(rig_device_release(mem));
  OK(rig_device_release(a));
}

/* A device without semaphore descriptors (lavapipe): the query says no for both kinds and every call
 * answers RIG_UNSUPPORTED naming the extension, nothing assigned. 0 when it holds, 77 where the device has
 * them (the tests above run there) or no Vulkan device opens (1 under RIG_REQUIRE=vulkan), else 1. */
static int unsupported(void) {
  rig_device a;
  if (rig_device_open("vulkan:0", &a) != RIG_OK) {
    fprintf(stderr, "SKIP unsupported: no Vulkan device: %s\n", rig_last_error());
    return rt_required("vulkan") ? 1 : 77;
  }
  int yes_sem = supported(a, RIG_INTEROP_SEMAPHORE_FD), yes_sync = supported(a, RIG_INTEROP_SYNC_FD);
  if (yes_sem && yes_sync) {
    fprintf(stderr, "SKIP unsupported: vulkan:0 has semaphore descriptors and sync files (tested by the others)\n");
    rig_device_release(a);
    return 77;
  }
  int bad = 0;
  rig_buffer x = vk_buffer(a, 64, RIG_MEMORY_DEVICE);
  rig_point p = rt_fill(a, x, 7);
  int fd = -1, pp[2];
  uint64_t value = 0;
  rig_point got = 0;
  if (pipe(pp) != 0) return 1;
#define EXPECT_UNSUPPORTED(call)                                                                          \
  do {                                                                                                    \
    rig_status st = (call);                                                                               \
    int named = strstr(rig_last_error(), "VK_KHR_external_semaphore_fd") != NULL;                        \
    printf("%s: %s: %s\n", #call, rig_status_name(st), rig_last_error());                                 \
    if (st != RIG_UNSUPPORTED || !named || fd != -1 || got != 0) bad = 1;                                 \
  } while (0)
  if (!yes_sem) {
    EXPECT_UNSUPPORTED(rig_point_export_semaphore_fd(p, &fd, &value));
    EXPECT_UNSUPPORTED(rig_point_import_semaphore_fd(a, pp[0], 1, &got));
  }
  if (!yes_sync) {
    EXPECT_UNSUPPORTED(rig_point_export_sync_fd(p, &fd));
    EXPECT_UNSUPPORTED(rig_point_import_sync_fd(a, pp[0], &got));
  }
#undef EXPECT_UNSUPPORTED
  printf("RIG_INTEROP_SEMAPHORE_FD: %d, RIG_INTEROP_SYNC_FD: %d\n", yes_sem, yes_sync);
  close(pp[0]);
  close(pp[1]);
  if (rig_wait_point(p, UINT64_MAX) != RIG_OK || rig_buffer_release(x) != RIG_OK || rig_device_release(a) != RIG_OK)
    return 1;
  return bad;
}

/* A descriptor of a file that is no semaphore of the driver's: the driver refuses it (RIG_INVALID_ARGUMENT
 * with its words), nothing assigned, the descriptor still the caller's. Run without the validation layer,
 * which reports the driver's error result itself (meson's vulkan_semaphore_fd_refusal). 0 when it holds, 77
 * without semaphore descriptors (1 under RIG_REQUIRE=semaphore_fd), else 1. */
static int driver_refusal(void) {
  rig_device a;
  if (rig_device_open("vulkan:0", &a) != RIG_OK || !supported(a, RIG_INTEROP_SEMAPHORE_FD)) {
    fprintf(stderr, "SKIP driver_refusal: no Vulkan device with semaphore descriptors\n");
    return rt_required("semaphore_fd") ? 1 : 77;
  }
  int f = memfd_create("not-a-semaphore", MFD_CLOEXEC);
  if (f < 0) return 1;
  rig_point got = 0;
  rig_status s = rig_point_import_semaphore_fd(a, f, 1, &got);
  const char *why = rig_last_error();
  int ok = s == RIG_INVALID_ARGUMENT && strstr(why, "refused") && !got && fcntl(f, F_GETFD) >= 0;
  printf("import of an empty memfd as a semaphore: %s: %s; the descriptor still open: %s\n",
         rig_status_name(s), why, fcntl(f, F_GETFD) >= 0 ? "yes" : "no");
  if (supported(a, RIG_INTEROP_SYNC_FD)) {
    s = rig_point_import_sync_fd(a, f, &got);
    why = rig_last_error();
    ok = ok && s == RIG_INVALID_ARGUMENT && strstr(why, "refused") && !got && fcntl(f, F_GETFD) >= 0;
    printf("import of an empty memfd as a sync file: %s: %s\n", rig_status_name(s), why);
  }
  close(f);
  rig_device_release(a);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "peer")) return peer(atoi(argv[2]));
  if (argc == 2 && !strcmp(argv[1], "refusal")) return driver_refusal();
  if (argc == 2 && !strcmp(argv[1], "unsupported")) return unsupported();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(imported_point_orders_a_copy_within_one_process),
      cmocka_unit_test(imported_point_orders_a_copy_across_a_fork),
      cmocka_unit_test(sync_file_round_trip),
      cmocka_unit_test(bad_points_and_descriptors_answer_clear_errors),
  };
  /* Over the fake, only what it gives (one process, no sync files), so that its run passes or fails. */
  const struct CMUnitTest fake_tests[] = {
      cmocka_unit_test(imported_point_orders_a_copy_within_one_process),
      cmocka_unit_test(bad_points_and_descriptors_answer_clear_errors),
  };
  if (faked()) return rt_finish(cmocka_run_group_tests(fake_tests, NULL, vk_validation_teardown));
  return rt_finish(cmocka_run_group_tests(tests, NULL, vk_validation_teardown));
}
