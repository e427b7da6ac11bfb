/* rig_keep.h on a GPU, RIG_KEEP_DEVICE (cuda:0 by default: the fake libcuda's, or an H200's; vulkan:0 on
 * lavapipe): a keeper in a child process (this binary run again as `keeper FILE SOCKET DELAY_US MODE`)
 * serves each tensor as a part of one of its arenas, one IPC memory handle (CUDA) or memory fd (Vulkan) per
 * arena, with the IPC handle of the point after its copy where that point is not reached yet (CUDA; a
 * Vulkan keeper sends a tensor once its copy is in); this process attaches on its own device of the same
 * name. In mode "hold" the keeper holds the last tensor back until told (a byte on its stdin), so tensor
 * 0's consumer runs while the last tensor has not landed, by construction rather than by a clock: were its
 * consumer to wait for the whole load, the test would never end. On the fake libcuda its copies take
 * DELAY_US each (copy_delay_us, in the keeper only), so that tensor 0's point is still ahead when it is
 * sent: the consumer's copy must wait for it in queue, else it reads the arena's bytes before they land.
 * In mode "loaded" the keeper says it is ready only once every tensor is in. */
#include <rig.h>
#include <rig_interop.h>
#include <rig_keep.h>
#include <rig_load.h>

#include <dlfcn.h>
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
/* The device the keeper and this process open: RIG_KEEP_DEVICE, else cuda:0. */
static const char *device_name(void) {
  const char *d = getenv("RIG_KEEP_DEVICE");
  return d && *d ? d : "cuda:0";
}
static const size_t lengths[TENSORS] = {4096, 0, 65536 + 7, 3000};

/* The child: a keeper on device_name() whose last tensor waits for a byte on stdin. */
static void hold_last(void *user, size_t index) {
  (void)user;
  if (index == TENSORS - 1) kt_read_byte(0);
}

static int run_keeper(const char *file, const char *sock, const char *delay_us, const char *mode) {
  rig_device d;
  rig_keeper k;
  rig_keep_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  int hold = strcmp(mode, "hold") == 0;
  if (hold) o.before_publish = hold_last;
  setenv("FAKECUDA_COPY_DELAY_US", delay_us, 1); /* read at cuInit: this process's copies only */
  if (rig_device_open(device_name(), &d) || rig_keep_start(file, &d, 1, sock, &o, &k) ||
      (!hold && rig_keep_wait_loaded(k))) {
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

static child spawn_keeper(const char *file, const char *sock, const char *delay_us, const char *mode) {
  int to[2], from[2];
  assert_int_equal(pipe(to), 0);
  assert_int_equal(pipe(from), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    execl("/proc/self/exe", "test_keep_gpu", "keeper", file, sock, delay_us, mode, (char *)NULL);
    _exit(127);
  }
  kt_child = pid;
  close(to[0]);
  close(from[1]);
  assert_int_equal(kt_read_byte(from[0]), 'y');
  return (child){pid, to[1], from[0]};
}

/* A counter of the fake libcuda this process loaded (fake_cuda.h: "calls:ipc_open_memory" counts
 * cuIpcOpenMemHandle): the same file rig loaded, so its state is rig's. -1 on a real driver, which counts
 * nothing: there the tests check the bytes and the ordering, not the calls. */
static long long fake_count(const char *name) {
  if (strncmp(device_name(), "cuda", 4) != 0) return -1;
  const char *path = getenv("RIG_CUDA_LIBRARY");
  void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  long long (*query)(const char *) = lib ? (long long (*)(const char *))dlsym(lib, "fakecuda_query") : NULL;
  if (!query && path && strstr(path, "fakecuda")) fail_msg("no fakecuda_query in %s", path);
  return query ? query(name) : -1;
}

/* `now - before` equals `want`, where the fake counts; nothing to check on a real driver. */
static void counted(long long before, const char *name, long long want) {
  if (before < 0) return;
  assert_int_equal(fake_count(name) - before, want);
}

static void ended(child c) {
  kt_kill_child(NULL);
  close(c.in);
  close(c.out);
}

static void attach_during_load_consumer_of_tensor0_runs_first(void **state) {
  (void)state;
  const char *file = tw_path("keep-gpu.safetensors");
  const char *sock = tw_path("keep-gpu.sock");
  tw_safetensors_u8(file, lengths, TENSORS);
  child c = spawn_keeper(file, sock, "500000", "hold");
  rig_device gpu;
  OK(rig_device_open(device_name(), &gpu));
  rig_attachment a;
  OK(rig_attach(sock, gpu, &a));
  /* tensor 0 with its copy's point, sent while that copy (500 ms in the keeper) still runs: the point's
   * event opened here, and a device copy out of tensor 0 waits in queue for it */
  long long events = fake_count("calls:ipc_open_event");
  rig_buffer t0, out = rt_create(gpu, lengths[0]);
  OK(rig_attachment_get(a, 0, NULL, &t0));
  counted(events, "calls:ipc_open_event", 1);
  rig_point carried = 0;
  OK(rig_buffer_last_write(t0, &carried));
  /* the fake's copy takes 500 ms, so the point is ahead and carried; a real GPU's 4 KiB copy is often done
   * before the keeper sends it, and a Vulkan keeper sends it done: then there is nothing to carry (the
   * bytes below hold either way) */
  if (events >= 0) assert_true(carried != 0);
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

/* Many small tensors, attached once the keeper loaded them all: one IPC memory open for their arena, not one
 * per tensor, and no event opened (every copy was reached when its tensor was sent), where the fake counts;
 * every tensor's bytes the file's on every device. */
static void many_tensors_one_import_per_arena(void **state) {
  (void)state;
  enum { MANY = 300 };
  size_t many[MANY];
  for (size_t i = 0; i < MANY; ++i) many[i] = 1 + (i * 37) % 1000;
  const char *file = tw_path("keep-gpu-many.safetensors");
  const char *sock = tw_path("keep-gpu-many.sock");
  tw_safetensors_u8(file, many, MANY);
  child c = spawn_keeper(file, sock, "0", "loaded");
  rig_device gpu;
  OK(rig_device_open(device_name(), &gpu));
  long long opens = fake_count("calls:ipc_open_memory"), events = fake_count("calls:ipc_open_event");
  rig_attachment a;
  OK(rig_attach(sock, gpu, &a));
  size_t count = 0;
  OK(rig_attachment_count(a, &count));
  assert_int_equal(count, MANY);
  for (size_t i = 0; i < MANY; ++i) {
    rig_keep_tensor t;
    memset(&t, 0, sizeof t);
    t.size = sizeof t;
    rig_buffer b;
    OK(rig_attachment_get(a, i, &t, &b));
    size_t length = 0;
    OK(rig_buffer_length(b, &length));
    assert_int_equal(length, t.length);
    assert_true(tw_same_as_file(b, file, kt_offset(file, i), t.length));
    OK(rig_buffer_release(b));
  }
  counted(opens, "calls:ipc_open_memory", 1);
  counted(events, "calls:ipc_open_event", 0);
  OK(rig_attachment_release(a));
  /* a memory device finds nothing here, and is told which device holds the tensors */
  rig_device host;
  OK(rig_memory_device("attach", &host));
  rig_attachment none;
  STATUS(RIG_NOT_FOUND, rig_attach(sock, host, &none));
  if (!strstr(rig_last_error(), device_name())) fail_msg("the message names no %s: %s", device_name(), rig_last_error());
  OK(rig_device_release(host));
  ended(c);
  OK(rig_device_release(gpu));
  unlink(sock);
  unlink(file);
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "keeper") == 0) return run_keeper(argv[2], argv[3], argv[4], argv[5]);
  signal(SIGPIPE, SIG_IGN);
  rig_device probe;
  char backend[32];
  snprintf(backend, sizeof backend, "%.*s", (int)strcspn(device_name(), ":"), device_name());
  if (rig_device_open(device_name(), &probe) != RIG_OK) {
    int required = rt_required(backend);
    fprintf(stderr, "%s: no %s (%s)\n", required ? "FAIL (RIG_REQUIRE names it)" : "SKIP", device_name(),
            rig_last_error());
    return required ? 1 : 77;
  }
  rig_device_release(probe);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(attach_during_load_consumer_of_tensor0_runs_first, kt_kill_child),
      cmocka_unit_test_teardown(many_tensors_one_import_per_arena, kt_kill_child),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
