/* Vulkan buffers as memory file descriptors (rig_buffer_export_fd, rig_buffer_import_fd: opaque fds of
 * VK_KHR_external_memory_fd, which lavapipe offers): within one process (a second rig device imports the
 * first's memory), across processes (this program again, forked and exec'd as the peer, the descriptor sent
 * with SCM_RIGHTS), and every bad input. Where a device lacks the extension, the capability query says no and
 * the calls answer RIG_UNSUPPORTED. Points as semaphore descriptors: test_semaphore_fd.c. */
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

static int memory_fd_supported(rig_device d) {
  int yes = -1;
  OK(rig_interop_supported(d, NULL, RIG_INTEROP_MEMORY_FD, &yes));
  return yes;
}

static int open_or_skip(rig_device *d) {
  if (!vk_open(d)) return 0;
  if (memory_fd_supported(*d)) return 1;
  rt_skip("the Vulkan device has no VK_KHR_external_memory_fd for rig's buffers (RIG_INTEROP_MEMORY_FD says no)");
  OK(rig_device_release(*d));
  return 0;
}

/* The peer: imports the descriptor on its own vulkan:0, checks every byte is 0x3c, writes 0x99 over it and
 * says so once the write is reached. Exit status: 0 well, else what failed. */
static int peer(int sock) {
  size_t length = 0;
  int fd = scm_recv_fd(sock, &length);
  if (fd < 0 || length != LENGTH) return 2;
  rig_device d;
  rig_buffer b;
  if (rig_device_open("vulkan:0", &d) != RIG_OK) return 3;
  if (rig_buffer_import_fd(d, fd, length, &b) != RIG_OK) {
    fprintf(stderr, "peer: %s\n", rig_last_error());
    return 4;
  }
  close(fd);
  uint8_t *host = malloc(LENGTH);
  if (rig_buffer_read_into(b, 0, host, LENGTH) != RIG_OK) return 5;
  for (size_t i = 0; i < LENGTH; ++i)
    if (host[i] != 0x3c) return 6;
  free(host);
  rig_point p = rt_fill(d, b, 0x99);
  if (rig_wait_point(p, UINT64_MAX) != RIG_OK) return 7;
  if (write(sock, "x", 1) != 1) return 8;
  if (rig_buffer_release(b) != RIG_OK || rig_device_release(d) != RIG_OK) return 9;
  return 0;
}

/* ----- the tests -------------------------------------------------------------------------------------- */

/* A second rig device imports the first's buffer: each sees the other's writes once they are reached. */
static void memory_fd_round_trip_within_one_process(void **state) {
  (void)state;
  rig_device a, b;
  if (!open_or_skip(&a)) return;
  OK(rig_device_open("vulkan:0", &b));
  rig_buffer x = vk_buffer(a, LENGTH, RIG_MEMORY_DEVICE);
  OK(rig_wait_point(rt_fill(a, x, 0x3c), UINT64_MAX)); /* descriptors order nothing: the write is reached */
  int fd = -1;
  size_t length = 0;
  OK(rig_buffer_export_fd(x, &fd, &length));
  assert_true(fd >= 0);
  assert_int_equal(length, LENGTH);
  rig_buffer y;
  OK(rig_buffer_import_fd(b, fd, length, &y));
  close(fd); /* still ours: rig imported a duplicate */
  assert_int_equal(vk_mismatches(y, LENGTH, 0x3c), 0);
  OK(rig_wait_point(rt_fill(b, y, 0x77), UINT64_MAX));
  assert_int_equal(vk_mismatches(x, LENGTH, 0x77), 0); /* one memory: the exporter's buffer sees the importer's write */
  OK(rig_buffer_release(x)); /* the memory lives on in y */
  assert_int_equal(vk_mismatches(y, LENGTH, 0x77), 0);
  OK(rig_buffer_release(y));
  OK(rig_device_release(b));
  OK(rig_device_release(a));
}

/* Across a fork (and exec): the descriptor travels with SCM_RIGHTS, the other process writes, we read. */
static void memory_fd_across_a_fork_with_scm_rights(void **state) {
  (void)state;
  rig_device a;
  if (!open_or_skip(&a)) return;
  rig_buffer x = vk_buffer(a, LENGTH, RIG_MEMORY_DEVICE);
  OK(rig_wait_point(rt_fill(a, x, 0x3c), UINT64_MAX));
  int fd = -1;
  size_t length = 0;
  OK(rig_buffer_export_fd(x, &fd, &length));
  int sock = -1;
  pid_t pid = scm_spawn_peer("test_vulkan_memory_fd", NULL, &sock);
  assert_true(pid > 0);
  assert_int_equal(scm_send_fd(sock, fd, length), 0);
  close(fd); /* ours: the peer has its own copy of the descriptor */
  char done = 0;
  ssize_t got = read(sock, &done, 1);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (got != 1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("the peer failed (status 0x%x)", status);
  close(sock);
  assert_int_equal(vk_mismatches(x, LENGTH, 0x99), 0); /* the other process's write, in our buffer */
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Each bad input: its status and its words (the driver's own refusal: driver_refusal below). */
static void bad_descriptors_and_buffers_answer_clear_errors(void **state) {
  (void)state;
  rig_device a, mem;
  if (!open_or_skip(&a)) return;
  rig_buffer x = vk_buffer(a, LENGTH, RIG_MEMORY_DEVICE), got = NULL, view, pinned;
  int fd = -1;
  size_t length = 0;
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_fd(a, -1, LENGTH, &got));
  int p[2];
  assert_int_equal(pipe(p), 0);
  close(p[1]);
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_fd(a, p[1], LENGTH, &got)); /* closed */
  assert_non_null(strstr(rig_last_error(), "not open"));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_fd(a, p[0], LENGTH, &got)); /* a pipe: never memory */
  assert_non_null(strstr(rig_last_error(), "pipe"));
  OK(rig_buffer_export_fd(x, &fd, &length));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_fd(a, fd, 0, &got));
  close(fd);
  assert_null(got);
  OK(rig_buffer_view(x, 4, 64, &view));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_export_fd(view, &fd, &length));
  assert_non_null(strstr(rig_last_error(), "view"));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_export_fd(x, NULL, &length));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_export_fd(x, &fd, NULL));
  pinned = vk_buffer(a, 64, RIG_MEMORY_PINNED);
  STATUS(RIG_UNSUPPORTED, rig_buffer_export_fd(pinned, &fd, &length));
  assert_non_null(strstr(rig_last_error(), "host-visible"));
  /* devices without memory descriptors: memory devices (and CUDA, HIP) */
  OK(rig_memory_device("fd-mem", &mem));
  int yes = -1;
  OK(rig_interop_supported(mem, NULL, RIG_INTEROP_MEMORY_FD, &yes));
  assert_int_equal(yes, 0);
  rig_buffer mb = rt_create(mem, 64);
  STATUS(RIG_UNSUPPORTED, rig_buffer_export_fd(mb, &fd, &length));
  STATUS(RIG_UNSUPPORTED, rig_buffer_import_fd(mem, p[0], 64, &got));
  /* Vulkan has no CUDA IPC handles */
  OK(rig_interop_supported(a, NULL, RIG_INTEROP_IPC_MEMORY, &yes));
  assert_int_equal(yes, 0);
  rig_ipc_handle h;
  STATUS(RIG_UNSUPPORTED, rig_buffer_export_ipc(x, &h));
  close(p[0]);
  OK(rig_buffer_release(mb));
  OK(rig_device_release(mem));
  OK(rig_buffer_release(pinned));
  OK(rig_buffer_release(view));
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* A descriptor of a file that is no memory of the driver's: the driver refuses it (RIG_INVALID_ARGUMENT with
 * its words) and the descriptor stays the caller's. Run without the validation layer, which reports the
 * driver's error result itself as a message (meson's vulkan_memory_fd_refusal). 0 when it holds, 77 without
 * the extension (1 under RIG_REQUIRE=vulkan), else 1. */
static int driver_refusal(void) {
  rig_device a;
  if (rig_device_open("vulkan:0", &a) != RIG_OK || !memory_fd_supported(a)) {
    fprintf(stderr, "SKIP driver_refusal: no Vulkan device with memory descriptors\n");
    return rt_required("vulkan") ? 1 : 77;
  }
  int f = memfd_create("not-vulkan-memory", MFD_CLOEXEC); /* a file, but no memory of the driver's */
  if (f < 0) return 1;
  rig_buffer got = NULL;
  rig_status s = rig_buffer_import_fd(a, f, LENGTH, &got);
  const char *why = rig_last_error();
  /* lavapipe answers VK_ERROR_INVALID_EXTERNAL_HANDLE; NVIDIA's driver VK_ERROR_OUT_OF_DEVICE_MEMORY
   * (2026-12-01, H200): either way a refusal with the driver's words, nothing assigned, the fd the caller's */
  int ok = ((s == RIG_INVALID_ARGUMENT && strstr(why, "VK_ERROR_INVALID_EXTERNAL_HANDLE")) ||
            (s == RIG_OUT_OF_MEMORY && strstr(why, "VK_ERROR_OUT_OF_DEVICE_MEMORY"))) &&
           strstr(why, "not an opaque memory descriptor") && !got && fcntl(f, F_GETFD) >= 0;
  printf("import of an empty memfd: %s: %s; the descriptor still open: %s\n", rig_status_name(s), why,
         fcntl(f, F_GETFD) >= 0 ? "yes" : "no");
  close(f);
  rig_device_release(a);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "peer")) return peer(atoi(argv[2]));
  if (argc == 2 && !strcmp(argv[1], "refusal")) return driver_refusal();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(memory_fd_round_trip_within_one_process),
      cmocka_unit_test(memory_fd_across_a_fork_with_scm_rights),
      cmocka_unit_test(bad_descriptors_and_buffers_answer_clear_errors),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, vk_validation_teardown));
}
