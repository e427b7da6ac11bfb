/* rig_keep.h on the fake libcuda's cuda:0: a keeper in a child process (this binary run again as `keeper
 * FILE SOCKET`) serves each tensor as IPC handles of its memory and of the point after its copy; this
 * process attaches on its own cuda:0. The keeper holds the last tensor back until told (a byte on its
 * stdin), so tensor 0's consumer runs while the last tensor has not landed, by construction rather than
 * by a clock: were its consumer to wait for the whole load, the test would never end. */
#include <rig.h>
#include <rig_interop.h>
#include <rig_keep.h>
#include <rig_load.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "keep_test.h"
#include "rigtest.h"
#include "weights.h"


enum { TENSORS = 4 };
static const size_t lengths[TENSORS] = {4096, 0, 65536 + 7, 3000};

/* The child: a keeper on cuda:0 whose last tensor waits for a byte on stdin. */
static void hold_last(void *user, size_t index) {
  (void)user;
  if (index == TENSORS - 1) kt_read_byte(0);
}

static int run_keeper(const char *file, const char *sock) {
  rig_device d;
  rig_keeper k;
  rig_keep_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.before_publish = hold_last;
  if (rig_device_open("cuda:0", &d) || rig_keep_start(file, &d, 1, sock, &o, &k)) {
    fprintf(stderr, "keeper: %s\n", rig_last_error());
    return 1;
  }
  if (write(1, "y", 1) != 1) return 1;
  pause(); /* killed here, serving */
  return 0;
}

typedef struct child {
  pid_t pid;
  int in, out;
} child;

static child spawn_keeper(const char *file, const char *sock) {
  int to[2], from[2];
  assert_int_equal(pipe(to), 0);
  assert_int_equal(pipe(from), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    execl("/proc/self/exe", "test_keep_cuda", "keeper", file, sock, (char *)NULL);
    _exit(127);
  }
  kt_child = pid;
  close(to[0]);
  close(from[1]);
  assert_int_equal(kt_read_byte(from[0]), 'y');
  return (child){pid, to[1], from[0]};
}

static void ended(child c) {
  kt_kill_child(NULL);
  close(c.in);
  close(c.out);
}

static void ipc_attach_during_load_consumer_of_tensor0_runs_first(void **state) {
  (void)state;
  const char *file = tw_path("keep-cuda.safetensors");
  const char *sock = tw_path("keep-cuda.sock");
  tw_safetensors_u8(file, lengths, TENSORS);
  child c = spawn_keeper(file, sock);
  rig_device gpu;
  OK(rig_device_open("cuda:0", &gpu));
  rig_attachment a;
  OK(rig_attach(sock, gpu, &a));
  /* tensor 0 with its copy's point: a device copy out of it waits in queue for that copy */
  rig_buffer t0, out = rt_create(gpu, lengths[0]);
  OK(rig_attachment_get(a, 0, NULL, &t0));
  rig_point carried = 0;
  OK(rig_buffer_last_write(t0, &carried));
  assert_true(carried != 0);
  rt_copy(gpu, t0, out);
  assert_true(tw_same_as_file(out, file, kt_offset(file, 0), lengths[0]));
  /* consumed, and the keeper has not published the last tensor: it waits for this byte */
  assert_int_equal(write(c.in, "g", 1), 1);
  for (size_t i = 0; i < TENSORS; ++i) {
    rig_keep_tensor t;
    memset(&t, 0, sizeof t);
    t.size = sizeof t;
    rig_buffer b;
    OK(rig_attachment_get(a, i, &t, &b));
    assert_int_equal(t.length, lengths[i]);
    assert_int_equal(t.writable, 0);
    size_t length = 99;
    OK(rig_buffer_length(b, &length));
    assert_int_equal(length, lengths[i]);
    assert_true(tw_same_as_file(b, file, kt_offset(file, i), lengths[i]));
    OK(rig_buffer_release(b));
  }
  /* read-only: rig refuses writes into the keeper's memory, from the host and from the device */
  unsigned char x = 1;
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_write_from(t0, 0, &x, 1));
  rig_point p;
  STATUS(RIG_INVALID_ARGUMENT, rt_try_copy(gpu, out, t0, NULL, 0, &p));
  OK(rig_buffer_release(out));
  /* the keeper dies: the attachment answers RIG_LOST */
  ended(c);
  rig_buffer again;
  STATUS(RIG_LOST, rig_attachment_get(a, 0, NULL, &again));
  OK(rig_buffer_release(t0));
  OK(rig_attachment_release(a));
  OK(rig_device_release(gpu));
  unlink(sock);
  unlink(file);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "keeper") == 0) return run_keeper(argv[2], argv[3]);
  signal(SIGPIPE, SIG_IGN);
  rig_device probe;
  if (rig_device_open("cuda:0", &probe) != RIG_OK) {
    fprintf(stderr, "%s: no cuda:0 (%s)\n", rt_required("cuda") ? "FAIL (RIG_REQUIRE names cuda)" : "SKIP",
            rig_last_error());
    return rt_required("cuda") ? 1 : 77;
  }
  rig_device_release(probe);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(ipc_attach_during_load_consumer_of_tensor0_runs_first, kt_kill_child),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
