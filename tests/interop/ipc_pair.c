/* Two processes share a buffer and its points through rig (docs/interop.md, "Across processes"), by CUDA or
 * HIP IPC handles, or (Vulkan) by a memory descriptor, on one GPU or on two GPUs of the host:
 *   A makes a buffer on DEVICE_A and writes it with a rig submit, then sends the buffer's handle and the
 *     write's point over a UNIX socket to B;
 *   B imports both on DEVICE_B (the exporter's GPU, or another: CUDA maps the bytes there through peer
 *     access), copies the bytes out with a submit of its own (ordered after A's write by the imported
 *     point, stamped as the buffer's last write), checks every byte, and sends back its copy's point;
 *   A imports that point, stamps it as a read of its buffer, and overwrites the buffer: rig's rule 4 makes
 *     the overwrite wait, in A's queue, for B's copy. A checks the overwrite landed and closes its export.
 * CUDA IPC handles are bytes: they travel as they are. A Vulkan device's buffer travels as a memory
 * descriptor with SCM_RIGHTS; its points cannot (rig has no semaphore descriptors yet), so each side waits
 * on the host for its own work before it tells the other: A for its write, B for its copy.
 * Usage: ipc_pair [DEVICE_A [DEVICE_B]] (default cuda:0, B on A's device; `ipc_pair cuda:0 cuda:1` is the
 * pair; vulkan:0 takes the descriptor way). Exits 0 when every byte checked out; 77 where a device does not
 * open or cannot share across processes (1 instead under RIG_REQUIRE naming its backend); 2 on bad
 * arguments; 1 on failure. B is A's child by fork(), before either uses rig: each process has a rig of its
 * own. */
#define _GNU_SOURCE
#include <rig.h>
#include <rig_interop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device_names.h"
#include "scm_rights.h"

#define LENGTH (1u << 20)
#define FIRST 0x5a  /* A's write: the first half */
#define SECOND 0xc3 /* ... and the second */

static const char *who = "A";

static void die(const char *what, rig_status s) {
  fprintf(stderr, "ipc_pair %s: %s: %s: %s\n", who, what, rig_status_name(s), rig_last_error());
  exit(1);
}
#define CHECK(call)                              \
  do {                                           \
    rig_status s_ = (call);                      \
    if (s_ != RIG_OK) die(#call, s_);            \
  } while (0)

static void send_all(int fd, const void *p, size_t n) {
  for (const char *c = p; n;) {
    ssize_t k = write(fd, c, n);
    if (k <= 0) die("write to the socket", RIG_DRIVER);
    c += k, n -= (size_t)k;
  }
}

static void recv_all(int fd, void *p, size_t n) {
  for (char *c = p; n;) {
    ssize_t k = read(fd, c, n);
    if (k <= 0) {
      fprintf(stderr, "ipc_pair %s: the other process closed the socket\n", who);
      exit(1);
    }
    c += k, n -= (size_t)k;
  }
}

/* One submit of `count` parts on `d` over `buffers` (slot i: buffers[i], access[i]); its point. */
static rig_point submit(rig_device d, const rig_part *parts, size_t count, rig_buffer *buffers,
                        const rig_access *access, size_t slots) {
  rig_submission sub;
  rig_run run;
  rig_point p = 0;
  CHECK(rig_submission_make(d, parts, count, access, slots, &sub));
  CHECK(rig_run_take(sub, &run));
  for (uint32_t i = 0; i < slots; ++i) CHECK(rig_run_set_buffer(run, i, buffers[i]));
  CHECK(rig_submit(run, NULL, 0, &p));
  CHECK(rig_run_release(run));
  CHECK(rig_submission_release(sub));
  return p;
}

static rig_part fill(size_t offset, size_t length, uint8_t byte) {
  rig_part p = {sizeof p};
  p.kind = RIG_PART_FILL;
  p.dst_offset = offset;
  p.length = length;
  p.byte = byte;
  return p;
}

/* The number of bytes of [0, LENGTH) of `b` that are not `first` in the first half and `second` in the
 * second (host reads wait for the buffer's last write: rule 5). */
static size_t mismatches(rig_buffer b, uint8_t first, uint8_t second) {
  uint8_t *host = malloc(LENGTH);
  if (!host) die("malloc", RIG_OUT_OF_MEMORY);
  CHECK(rig_buffer_read_into(b, 0, host, LENGTH));
  size_t bad = 0;
  for (size_t i = 0; i < LENGTH; ++i) bad += host[i] != (i < LENGTH / 2 ? first : second);
  free(host);
  return bad;
}

/* B's side of the buffer A shares: by IPC handles (the write's point with it), or by a descriptor (the
 * write reached already). */
static rig_buffer import_shared(rig_device d, int sock, int by_fd) {
  rig_buffer shared;
  if (by_fd) {
    size_t length = 0;
    int fd = scm_recv_fd(sock, &length);
    if (fd < 0) die("receiving the descriptor", RIG_DRIVER);
    CHECK(rig_buffer_import_fd(d, fd, length, &shared));
    close(fd); /* rig imported a duplicate */
    return shared;
  }
  rig_ipc_handle h[2];
  rig_point written;
  recv_all(sock, h, sizeof h);
  CHECK(rig_buffer_import_ipc(d, &h[0], &shared));
  CHECK(rig_point_import_ipc(d, &h[1], &written));
  /* A's write, as the imported buffer's last write: every later use of it in this process follows it */
  CHECK(rig_buffer_stamp(shared, written, RIG_ACCESS_WRITE));
  return shared;
}

/* Whether `name` opens and can import the way A shares (IPC handles, or a descriptor): says so to A ('y' or
 * 'n', after printing why not), which decides whether the run is skipped. */
static int open_b(const char *name, int sock, int by_fd, rig_device *d) {
  int memory = 0, event = 0, fd = 0;
  rig_status s = rig_device_open(name, d);
  if (s == RIG_OK) {
    CHECK(rig_interop_supported(*d, NULL, RIG_INTEROP_IPC_MEMORY, &memory));
    CHECK(rig_interop_supported(*d, NULL, RIG_INTEROP_IPC_EVENT, &event));
    CHECK(rig_interop_supported(*d, NULL, RIG_INTEROP_MEMORY_FD, &fd));
  }
  int ok = s == RIG_OK && (by_fd ? fd : memory && event);
  if (!ok) {
    fprintf(stderr, "ipc_pair B: %s %s\n", name,
            s != RIG_OK ? rig_last_error() : by_fd ? "cannot import a memory descriptor" : "cannot import IPC handles");
    if (s == RIG_OK) CHECK(rig_device_release(*d));
  }
  send_all(sock, ok ? "y" : "n", 1);
  return ok;
}

static int process_b(const char *name, int sock, int by_fd) {
  who = "B";
  rig_device d;
  if (!open_b(name, sock, by_fd, &d)) return 0; /* A skips the run, or fails it under RIG_REQUIRE */
  rig_buffer mine, shared = import_shared(d, sock, by_fd);
  CHECK(rig_buffer_create(d, LENGTH, RIG_MEMORY_DEVICE, &mine));
  rig_part copy = {sizeof copy};
  copy.kind = RIG_PART_COPY;
  copy.src_slot = 0;
  copy.dst_slot = 1;
  copy.length = RIG_WHOLE;
  rig_buffer slots[2] = {shared, mine};
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_point copied = submit(d, &copy, 1, slots, access, 2);
  size_t bad = mismatches(mine, FIRST, SECOND); /* waits for the copy (rule 5), so its read is done */
  printf("ipc_pair B: imported %u bytes on %s, %zu mismatching after the copy\n", LENGTH, name, bad);
  rig_ipc_handle back;
  if (!by_fd) {
    CHECK(rig_point_export_ipc(copied, &back));
    send_all(sock, &back, sizeof back);
  }
  send_all(sock, &bad, sizeof bad);
  char done;
  recv_all(sock, &done, 1); /* A's overwrite, which followed our copy, is reached */
  if (!by_fd) CHECK(rig_point_export_ipc_close(&back));
  CHECK(rig_buffer_release(shared));
  CHECK(rig_buffer_release(mine));
  CHECK(rig_device_release(d));
  return bad != 0;
}

static int required(const char *backend) {
  const char *req = getenv("RIG_REQUIRE");
  return req && strncmp(req, backend, strlen(backend)) == 0;
}

/* A's end of a run that cannot happen here: B is told (or has told us) and waited for; skipped, or failed
 * under RIG_REQUIRE naming the backend. */
static int skip(int sock, pid_t pid, int tell_b, const char *backend) {
  if (tell_b) send_all(sock, "n", 1);
  waitpid(pid, NULL, 0);
  return required(backend) ? 1 : 77;
}

int main(int argc, char **argv) {
  char *texts[2] = {argc > 1 ? argv[1] : "cuda:0", argc > 2 ? argv[2] : argc > 1 ? argv[1] : "cuda:0"};
  device_name names[2];
  if (argc > 3 || !device_names_parse("ipc_pair", texts, 2, NULL, 0, names)) {
    fprintf(stderr, "usage: ipc_pair [DEVICE_A [DEVICE_B]] (BACKEND:N, both of one backend; B defaults to A's)\n");
    return 2;
  }
  const char *name = texts[0];
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair", RIG_DRIVER);
  pid_t pid = fork();
  if (pid < 0) die("fork", RIG_DRIVER);
  if (pid == 0) {
    close(sv[0]);
    char way;
    recv_all(sv[1], &way, 1); /* A checked how the device shares: IPC handles, a descriptor, or not at all */
    if (way != 'h' && way != 'f') _exit(0);
    _exit(process_b(texts[1], sv[1], way == 'f'));
  }
  close(sv[1]);
  int sock = sv[0];
  rig_device d;
  rig_status s = rig_device_open(name, &d);
  int yes = 0, event = 0, by_fd = 0;
  if (s == RIG_OK) {
    CHECK(rig_interop_supported(d, NULL, RIG_INTEROP_IPC_MEMORY, &yes));
    CHECK(rig_interop_supported(d, NULL, RIG_INTEROP_IPC_EVENT, &event));
    CHECK(rig_interop_supported(d, NULL, RIG_INTEROP_MEMORY_FD, &by_fd));
  }
  if (s != RIG_OK || !((yes && event) || by_fd)) {
    fprintf(stderr, "SKIP ipc_pair: %s %s\n", name,
            s != RIG_OK ? rig_last_error() : "cannot share buffers and points across processes");
    if (s == RIG_OK) CHECK(rig_device_release(d));
    return skip(sock, pid, 1, names[0].backend);
  }
  by_fd = by_fd && !(yes && event);
  send_all(sock, by_fd ? "f" : "h", 1);
  char b_ready;
  recv_all(sock, &b_ready, 1);
  if (b_ready != 'y') { /* B said why */
    fprintf(stderr, "SKIP ipc_pair: B's device %s cannot take part\n", texts[1]);
    CHECK(rig_device_release(d));
    return skip(sock, pid, 0, names[0].backend);
  }
  rig_buffer b;
  CHECK(rig_buffer_create(d, LENGTH, RIG_MEMORY_DEVICE, &b));
  rig_part halves[2] = {fill(0, LENGTH / 2, FIRST), fill(LENGTH / 2, LENGTH / 2, SECOND)};
  rig_access w = RIG_ACCESS_WRITE;
  rig_point written = submit(d, halves, 2, &b, &w, 1);
  rig_ipc_handle h[2], back;
  size_t bad_in_b = 0;
  if (by_fd) {
    CHECK(rig_wait_point(written, UINT64_MAX)); /* a descriptor orders nothing: B reads once it is reached */
    int fd;
    size_t length;
    CHECK(rig_buffer_export_fd(b, &fd, &length));
    if (scm_send_fd(sock, fd, length) != 0) die("sending the descriptor", RIG_DRIVER);
    close(fd);
  } else {
    CHECK(rig_buffer_export_ipc(b, &h[0]));
    CHECK(rig_point_export_ipc(written, &h[1]));
    send_all(sock, h, sizeof h);
    recv_all(sock, &back, sizeof back);
  }
  recv_all(sock, &bad_in_b, sizeof bad_in_b); /* B's copy is done (by_fd), or its point is in `back` */
  if (!by_fd) {
    rig_point copied;
    CHECK(rig_point_import_ipc(d, &back, &copied));
    /* B's copy read the buffer: as a read in the stamps, rig's overwrite waits for it in A's queue */
    CHECK(rig_buffer_stamp(b, copied, RIG_ACCESS_READ));
  }
  rig_part zero = fill(0, LENGTH, 0);
  rig_point overwritten = submit(d, &zero, 1, &b, &w, 1);
  CHECK(rig_wait_point(overwritten, UINT64_MAX));
  if (!by_fd) CHECK(rig_point_export_ipc_close(&h[1])); /* B's point, which followed it, is reached */
  size_t bad_after = mismatches(b, 0, 0);
  send_all(sock, "d", 1);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(rig_buffer_release(b));
  CHECK(rig_device_release(d));
  int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && bad_in_b == 0 && bad_after == 0;
  printf("ipc_pair A on %s, B on %s: B %s (%zu mismatching bytes), the overwrite after B's copy: %zu "
         "mismatching; %s\n", texts[0], texts[1],
         WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ended well" : "failed", bad_in_b, bad_after,
         ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
