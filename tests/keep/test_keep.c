/* rig_keep.h on memory devices: a keeper in this process (or a child, where it must die) serves a small
 * safetensors file over a UNIX socket; clients attach in this process or in children run from this
 * binary (`test_keep client SOCKET` / `test_keep keeper FILE SOCKET`), so a kill hits a real process. */
#include <rig.h>
#include <rig_keep.h>
#include <rig_load.h>

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <dirent.h>
#include <glob.h>
#include <unistd.h>

#include <cmocka.h>

#include "keep_test.h"
#include "weights.h"

#define OK(call) assert_int_equal((call), RIG_OK)
#define STATUS(want, call) assert_int_equal((call), (want))

enum { TENSORS = 5 };
static const size_t lengths[TENSORS] = {4096, 100, 0, 65536 + 7, 3000};

static const char *checkpoint(void) {
  const char *path = tw_path("keep.safetensors");
  tw_safetensors_u8(path, lengths, TENSORS);
  return path;
}

static void log_line(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "keeper: %s\n", line);
}

static rig_keep_options options(void) {
  rig_keep_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.log = log_line;
  return o;
}

/* The keeper's device stays open while it serves (released by stop below). */
static rig_device keeper_device;

static rig_keeper keep(const char *file, const char *socket, const rig_keep_options *o) {
  OK(rig_memory_device("keeper", &keeper_device));
  rig_keeper k;
  OK(rig_keep_start(file, &keeper_device, 1, socket, o, &k));
  return k;
}

static rig_status stop(rig_keeper k, uint64_t timeout_ns) {
  rig_status s = rig_keep_stop(k, timeout_ns);
  OK(rig_device_release(keeper_device));
  return s;
}

/* A memory device of this process's, which clients attach on. */
static rig_device client_device(void) {
  rig_device d;
  OK(rig_memory_device("client", &d));
  return d;
}

/* Every tensor of the attachment equals the file's bytes; its info names the table's entry. */
static void verify_all(rig_attachment a, const char *file) {
  size_t count = 0;
  OK(rig_attachment_count(a, &count));
  assert_int_equal(count, TENSORS);
  for (size_t i = 0; i < count; ++i) {
    rig_keep_tensor t;
    memset(&t, 0, sizeof t);
    t.size = sizeof t;
    rig_buffer b;
    rig_status s = rig_attachment_get(a, i, &t, &b);
    if (s != RIG_OK) fprintf(stderr, "attachment_get %zu: %s\n", i, rig_last_error());
    OK(s);
    assert_int_equal(t.length, lengths[i]);
    assert_int_equal(t.rank, 1);
    assert_int_equal(t.dtype, RIG_DTYPE_U8);
    size_t length = 99;
    OK(rig_buffer_length(b, &length));
    assert_int_equal(length, lengths[i]);
    assert_true(tw_same_as_file(b, file, kt_offset(file, i), lengths[i]));
    size_t found = 99;
    OK(rig_attachment_find(a, t.name, &found));
    assert_int_equal(found, i);
    OK(rig_buffer_release(b));
  }
}

/* A fresh attach on `mine`: every byte the file's (verify_all), then it lets go. */
static void attach_and_verify(const char *sock, rig_device mine, const char *file) {
  rig_attachment a;
  OK(rig_attach(sock, mine, &a));
  verify_all(a, file);
  OK(rig_attachment_release(a));
}

/* The end of a test whose keeper serves in this process: it stops once its clients let go, then the
 * client device and the checkpoint go. */
static void stop_and_remove(rig_keeper k, rig_device mine, const char *file) {
  OK(stop(k, UINT64_MAX));
  OK(rig_device_release(mine));
  unlink(file);
}

/* Waits (polling, bounded) until the keeper serves `want` clients; 1 if it did. */
static int clients_reach(rig_keeper k, size_t want) {
  for (int i = 0; i < 5000; ++i) {
    size_t n = 99;
    OK(rig_keep_client_count(k, &n));
    if (n == want) return 1;
    usleep(1000);
  }
  return 0;
}

static void attach_verify_every_byte_read_only(void **state) {
  (void)state;
  const char *file = checkpoint();
  const char *sock = tw_path("keep.sock");
  rig_keep_options o = options();
  rig_keeper k = keep(file, sock, &o);
  struct stat st;
  assert_int_equal(stat(sock, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  rig_device mine = client_device();
  rig_attachment a;
  OK(rig_attach(sock, mine, &a));
  verify_all(a, file);
  /* read-only: the keeper's memfd is every client's */
  rig_buffer b;
  OK(rig_attachment_get(a, 0, NULL, &b));
  unsigned char x = 1;
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_write_from(b, 0, &x, 1));
  OK(rig_buffer_release(b));
  STATUS(RIG_INVALID_ARGUMENT, rig_attachment_get(a, TENSORS, NULL, &b));
  size_t index;
  STATUS(RIG_NOT_FOUND, rig_attachment_find(a, "no such tensor", &index));
  assert_true(clients_reach(k, 1));
  OK(rig_attachment_release(a));
  assert_true(clients_reach(k, 0));
  OK(rig_keep_wait_loaded(k));
  OK(stop(k, UINT64_MAX));
  assert_int_equal(stat(sock, &st), -1); /* the socket file goes with the keeper */
  STATUS(RIG_NOT_FOUND, rig_attach(sock, mine, &a));
  OK(rig_device_release(mine));
  unlink(file);
}

/* Attach during the load: the keeper holds the last tensor back until the client consumed tensor 0.
 * The order is read from the log both sides write, never from a clock. */
static struct {
  pthread_mutex_t mutex;
  pthread_cond_t cv;
  int open;
  char log[64][32];
  int lines;
} gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {{0}}, 0};

static void note(const char *format, ...) {
  va_list args;
  va_start(args, format);
  pthread_mutex_lock(&gate.mutex);
  vsnprintf(gate.log[gate.lines++], 32, format, args);
  pthread_mutex_unlock(&gate.mutex);
  va_end(args);
}

static void hold_last(void *user, size_t index) {
  (void)user;
  if (index == TENSORS - 1) {
    pthread_mutex_lock(&gate.mutex);
    while (!gate.open) pthread_cond_wait(&gate.cv, &gate.mutex);
    pthread_mutex_unlock(&gate.mutex);
  }
  note("publish %zu", index);
}

static int line_of(const char *text) {
  for (int i = 0; i < gate.lines; ++i)
    if (strcmp(gate.log[i], text) == 0) return i;
  return -1;
}

static void attach_during_load_tensor0_before_last_lands(void **state) {
  (void)state;
  const char *file = checkpoint();
  const char *sock = tw_path("keep.sock");
  rig_keep_options o = options();
  o.before_publish = hold_last;
  rig_keeper k = keep(file, sock, &o);
  rig_device mine = client_device();
  rig_attachment a;
  OK(rig_attach(sock, mine, &a));
  rig_buffer first;
  OK(rig_attachment_get(a, 0, NULL, &first));
  assert_true(tw_same_as_file(first, file, kt_offset(file, 0), lengths[0]));
  note("consumed 0");
  pthread_mutex_lock(&gate.mutex);
  gate.open = 1;
  pthread_cond_broadcast(&gate.cv);
  pthread_mutex_unlock(&gate.mutex);
  verify_all(a, file);
  int consumed = line_of("consumed 0"), last = line_of("publish 4");
  assert_true(consumed >= 0 && last >= 0);
  assert_true(consumed < last);
  assert_true(line_of("publish 0") < consumed);
  OK(rig_buffer_release(first));
  OK(rig_attachment_release(a));
  stop_and_remove(k, mine, file);
}

/* Runs this binary again as `role ARGS...` with its stdout on a pipe; *out reads it. */
static pid_t spawn(const char *role, const char *a1, const char *a2, int *out) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(p[1], 1);
    execl("/proc/self/exe", "test_keep", role, a1, a2, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  *out = p[0];
  kt_child = pid;
  return pid;
}

static void killed_client_lets_go(void **state) {
  (void)state;
  const char *file = checkpoint();
  const char *sock = tw_path("keep.sock");
  rig_keep_options o = options();
  rig_keeper k = keep(file, sock, &o);
  int out;
  pid_t pid = spawn("client", sock, file, &out);
  assert_int_equal(kt_read_byte(out), 'y'); /* it attached and verified tensor 0 */
  assert_true(clients_reach(k, 1));
  assert_int_equal(pid, kt_child);
  kt_kill_child(NULL);
  close(out);
  assert_true(clients_reach(k, 0)); /* the keeper saw the socket close */
  /* and still serves */
  rig_device mine = client_device();
  attach_and_verify(sock, mine, file);
  stop_and_remove(k, mine, file);
}

static void killed_keeper_answers_lost(void **state) {
  (void)state;
  const char *file = checkpoint();
  const char *sock = tw_path("keep.sock");
  int out;
  pid_t pid = spawn("keeper", file, sock, &out);
  assert_int_equal(kt_read_byte(out), 'y'); /* listening and loaded */
  rig_device mine = client_device();
  rig_attachment a;
  OK(rig_attach(sock, mine, &a));
  rig_buffer first;
  OK(rig_attachment_get(a, 0, NULL, &first));
  assert_int_equal(pid, kt_child);
  kt_kill_child(NULL);
  close(out);
  rig_buffer again;
  STATUS(RIG_LOST, rig_attachment_get(a, 0, NULL, &again));
  assert_non_null(strstr(rig_last_error(), "keeper"));
  STATUS(RIG_LOST, rig_attachment_get(a, TENSORS - 1, NULL, &again));
  /* memfd memory outlives its keeper: what was received still holds the file's bytes, never freed memory */
  assert_true(tw_same_as_file(first, file, kt_offset(file, 0), lengths[0]));
  OK(rig_buffer_release(first));
  OK(rig_attachment_release(a));
  OK(rig_device_release(mine));
  unlink(sock);
  unlink(file);
}

static void refused_uid_gets_a_message_allowed_gid_attaches(void **state) {
  (void)state;
  const char *file = checkpoint();
  const char *sock = tw_path("keep.sock");
  rig_keep_options o = options();
  o.has_uid = 1;
  o.uid = (uint32_t)geteuid() + 1; /* a uid this process is not */
  rig_keeper k = keep(file, sock, &o);
  rig_device mine = client_device();
  rig_attachment a;
  STATUS(RIG_UNSUPPORTED, rig_attach(sock, mine, &a));
  assert_non_null(strstr(rig_last_error(), "refused"));
  assert_true(clients_reach(k, 0));
  OK(stop(k, UINT64_MAX));
  /* the same uid refused, but the allowed gid is this process's */
  o.has_gid = 1;
  o.gid = (uint32_t)getegid();
  k = keep(file, sock, &o);
  attach_and_verify(sock, mine, file);
  OK(stop(k, UINT64_MAX));
  /* another user, where this test may become one: the 0600 socket refuses the connection itself */
  if (geteuid() == 0) {
    o = options();
    k = keep(file, sock, &o);
    int out;
    pid_t pid = spawn("nobody", sock, file, &out);
    assert_int_equal(kt_read_byte(out), 'r');
    int status;
    waitpid(pid, &status, 0);
    kt_child = -1;
    close(out);
    OK(stop(k, UINT64_MAX));
  }
  OK(rig_device_release(mine));
  unlink(file);
}

/* Raw bytes at the keeper's socket. */
static int connect_raw(const char *path) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  strcpy(addr.sun_path, path);
  assert_int_equal(connect(s, (struct sockaddr *)&addr, sizeof addr), 0);
  return s;
}

/* The keeper protocol's version (src/keep/protocol.h's kVersion): 2 since tensors name their arena. */
enum { PROTOCOL = 2 };

static void header(unsigned char *h, uint16_t version, uint16_t type, uint32_t length) {
  uint32_t magic = 0x4b474952;
  memcpy(h, &magic, 4);
  memcpy(h + 4, &version, 2);
  memcpy(h + 6, &type, 2);
  memcpy(h + 8, &length, 4);
}

/* Reads one reply's header and body; its type, and the error status where it is an error. */
static int reply(int s, uint32_t *status) {
  unsigned char h[12];
  if (recv(s, h, 12, MSG_WAITALL) != 12) return -1;
  uint16_t type;
  uint32_t length;
  memcpy(&type, h + 6, 2);
  memcpy(&length, h + 8, 4);
  unsigned char *body = malloc(length + 1);
  if (length && recv(s, body, length, MSG_WAITALL) != (ssize_t)length) type = 0;
  if (type == 0xff && status) memcpy(status, body, 4);
  free(body);
  return type;
}

static void hostile_requests_answered_or_dropped(void **state) {
  (void)state;
  const char *file = checkpoint();
  const char *sock = tw_path("keep.sock");
  rig_keep_options o = options();
  rig_keeper k = keep(file, sock, &o);
  unsigned char m[64];
  uint32_t status = 0;
  /* another version: an error naming it, then the connection closes */
  int s = connect_raw(sock);
  header(m, 9, 1, 0);
  assert_int_equal(send(s, m, 12, 0), 12);
  assert_int_equal(reply(s, &status), 0xff);
  assert_int_equal(status, RIG_UNSUPPORTED);
  assert_int_equal(reply(s, NULL), -1);
  close(s);
  /* version 1's client (a memory handle per tensor) is refused the same way */
  s = connect_raw(sock);
  header(m, 1, 1, 0);
  assert_int_equal(send(s, m, 12, 0), 12);
  assert_int_equal(reply(s, &status), 0xff);
  assert_int_equal(status, RIG_UNSUPPORTED);
  assert_int_equal(reply(s, NULL), -1);
  close(s);
  /* a body past the limit: refused before any of it is read */
  s = connect_raw(sock);
  header(m, PROTOCOL, 2, 0x7fffffff);
  assert_int_equal(send(s, m, 12, 0), 12);
  assert_int_equal(reply(s, &status), 0xff);
  assert_int_equal(status, RIG_INVALID_ARGUMENT);
  close(s);
  /* an unknown tensor: answered, and the connection serves on */
  s = connect_raw(sock);
  header(m, PROTOCOL, 2, 12);
  uint32_t body[3] = {0, 1, 77};
  memcpy(m + 12, body, 12);
  assert_int_equal(send(s, m, 24, 0), 24);
  assert_int_equal(reply(s, &status), 0xff);
  assert_int_equal(status, RIG_NOT_FOUND);
  header(m, PROTOCOL, 1, 0);
  assert_int_equal(send(s, m, 12, 0), 12);
  assert_int_equal(reply(s, NULL), 0x81);
  close(s);
  /* truncated: a header promising 12 bytes, 4 sent, then gone */
  s = connect_raw(sock);
  header(m, PROTOCOL, 2, 12);
  assert_int_equal(send(s, m, 16, 0), 16);
  close(s);
  /* a flood of attaches for every tensor, never read, then gone */
  s = connect_raw(sock);
  for (int i = 0; i < 200; ++i) {
    header(m, PROTOCOL, 2, 8);
    uint32_t all[2] = {0, 0xffffffffu};
    memcpy(m + 12, all, 8);
    if (send(s, m, 20, MSG_DONTWAIT | MSG_NOSIGNAL) != 20) break;
  }
  close(s);
  /* garbage */
  s = connect_raw(sock);
  assert_int_equal(send(s, "GET / HTTP/1.1\r\n\r\n", 18, 0), 18);
  assert_int_equal(reply(s, &status), 0xff);
  close(s);
  /* the keeper and its other clients are unharmed */
  assert_true(clients_reach(k, 0));
  rig_device mine = client_device();
  attach_and_verify(sock, mine, file);
  stop_and_remove(k, mine, file);
}

static void most_clients_busy_and_stop_cuts_off(void **state) {
  (void)state;
  const char *file = checkpoint();
  const char *sock = tw_path("keep.sock");
  rig_keep_options o = options();
  o.max_clients = 1;
  rig_keeper k = keep(file, sock, &o);
  rig_device mine = client_device();
  rig_attachment a, b;
  OK(rig_attach(sock, mine, &a));
  assert_true(clients_reach(k, 1));
  STATUS(RIG_BUSY, rig_attach(sock, mine, &b));
  rig_buffer first;
  OK(rig_attachment_get(a, 0, NULL, &first));
  STATUS(RIG_TIMEOUT, stop(k, 1000000)); /* a client that never lets go is cut off */
  rig_buffer again;
  STATUS(RIG_LOST, rig_attachment_get(a, 1, NULL, &again));
  assert_true(tw_same_as_file(first, file, kt_offset(file, 0), lengths[0]));
  OK(rig_buffer_release(first));
  OK(rig_attachment_release(a));
  STATUS(RIG_INVALID_HANDLE, rig_keep_client_count(k, &(size_t){0}));
  OK(rig_device_release(mine));
  unlink(file);
}

static void bad_arguments_answered(void **state) {
  (void)state;
  const char *file = checkpoint();
  rig_device mine = client_device();
  rig_keeper k;
  STATUS(RIG_INVALID_ARGUMENT, rig_keep_start(file, &mine, 0, "x.sock", NULL, &k));
  STATUS(RIG_INVALID_ARGUMENT, rig_keep_start(file, &mine, 1, NULL, NULL, &k));
  char longpath[200];
  memset(longpath, 'a', sizeof longpath - 1);
  longpath[sizeof longpath - 1] = 0;
  STATUS(RIG_INVALID_ARGUMENT, rig_keep_start(file, &mine, 1, longpath, NULL, &k));
  STATUS(RIG_NOT_FOUND, rig_keep_start("no-such-file.safetensors", &mine, 1, "x.sock", NULL, &k));
  rig_device twice[2] = {mine, mine};
  STATUS(RIG_INVALID_ARGUMENT, rig_keep_start(file, twice, 2, "x.sock", NULL, &k));
  /* a path taken: RIG_BUSY, and the first keeper keeps it */
  const char *sock = tw_path("keep.sock");
  k = keep(file, sock, NULL);
  rig_keeper k2;
  STATUS(RIG_BUSY, rig_keep_start(file, &mine, 1, sock, NULL, &k2));
  /* the socket is bound beside its path and linked there once it listens: no staged name is left */
  char staged[600];
  snprintf(staged, sizeof staged, "%s.*", sock);
  glob_t g;
  assert_int_equal(glob(staged, 0, NULL, &g), GLOB_NOMATCH);
  globfree(&g);
  OK(stop(k, UINT64_MAX));
  /* a path with no room beside it for a staged name is bound in place, and serves */
  char tight[108];
  memset(tight, 't', sizeof tight - 1);
  tight[sizeof tight - 1] = 0;
  k = keep(file, tight, NULL);
  rig_attachment in_place;
  OK(rig_attach(tight, mine, &in_place));
  OK(rig_attachment_release(in_place));
  OK(stop(k, UINT64_MAX));
  assert_int_equal(access(tight, F_OK), -1);
  STATUS(RIG_INVALID_HANDLE, rig_keep_stop(k, 0));
  rig_attachment a;
  STATUS(RIG_INVALID_HANDLE, rig_attachment_release(a = NULL));
  OK(rig_device_release(mine));
  unlink(file);
}

/* A reload serves the file as it is now to new attaches; a connection attached before keeps its
 * generation, tensors not yet received included. */
static void reload_new_attaches_get_the_new_file_old_keep_theirs(void **state) {
  (void)state;
  const char *file = checkpoint();
  char old_copy[512];
  snprintf(old_copy, sizeof old_copy, "%s.v1", file);
  tw_safetensors_u8(old_copy, lengths, TENSORS);
  rig_keep_options o = options();
  const char *sock = tw_path("keep.sock");
  rig_keeper k = keep(file, sock, &o);
  rig_device mine = client_device();
  rig_attachment before;
  OK(rig_attach(sock, mine, &before));
  rig_buffer b0;
  OK(rig_attachment_get(before, 0, NULL, &b0));
  OK(rig_keep_wait_loaded(k));
  /* the file changes (a new header shifts every tensor's bytes): nothing happens until asked */
  static const size_t changed[TENSORS] = {4096, 100, 0, 65536 + 7, 3001};
  char next[512];
  snprintf(next, sizeof next, "%s.v2", file);
  tw_safetensors_u8(next, changed, TENSORS);
  assert_int_equal(rename(next, file), 0);
  rig_attachment during;
  OK(rig_attach(sock, mine, &during));
  rig_keep_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  OK(rig_attachment_get(during, 4, &t, NULL));
  assert_int_equal(t.length, 3000); /* still the first generation */
  OK(rig_attachment_release(during));
  OK(rig_keep_reload(k));
  rig_attachment after;
  OK(rig_attach(sock, mine, &after));
  rig_buffer b;
  OK(rig_attachment_get(after, 4, &t, &b));
  assert_int_equal(t.length, 3001);
  assert_true(tw_same_as_file(b, file, kt_offset(file, 4), 3001));
  OK(rig_buffer_release(b));
  /* the connection from before still gets the first generation, received before or not */
  assert_true(tw_same_as_file(b0, old_copy, kt_offset(old_copy, 0), lengths[0]));
  OK(rig_attachment_get(before, 4, &t, &b));
  assert_int_equal(t.length, 3000);
  assert_true(tw_same_as_file(b, old_copy, kt_offset(old_copy, 4), 3000));
  OK(rig_buffer_release(b));
  OK(rig_buffer_release(b0));
  OK(rig_attachment_release(before));
  OK(rig_attachment_release(after));
  stop_and_remove(k, mine, file);
  unlink(old_copy);
}

/* Entries of a /proc/self directory (descriptors, threads). */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

/* 1000 attaches, each taking a tensor and letting go: the keeper ends with the descriptors it began with
 * (no connection, memfd or mapping left behind) and, once stopped, the threads. */
static void thousand_attach_cycles_leave_nothing_behind(void **state) {
  (void)state;
  const char *file = checkpoint();
  const char *sock = tw_path("keep.sock");
  rig_device mine = client_device();
  rig_keep_options o = options();
  o.log = NULL;
  int threads = entries("/proc/self/task");
  rig_keeper k = keep(file, sock, &o);
  OK(rig_keep_wait_loaded(k));
  int fds = entries("/proc/self/fd");
  for (int i = 0; i < 1000; ++i) {
    rig_attachment a;
    rig_buffer b;
    OK(rig_attach(sock, mine, &a));
    OK(rig_attachment_get(a, (size_t)i % TENSORS, NULL, &b));
    OK(rig_buffer_release(b));
    OK(rig_attachment_release(a));
  }
  assert_true(clients_reach(k, 0));
  assert_int_equal(entries("/proc/self/fd"), fds);
  OK(stop(k, UINT64_MAX));
  assert_int_equal(entries("/proc/self/task"), threads);
  OK(rig_device_release(mine));
  unlink(file);
}

/* Children. */
static int run_client(const char *sock, const char *file) {
  rig_device d;
  rig_attachment a;
  rig_buffer b;
  if (rig_memory_device("child", &d) || rig_attach(sock, d, &a) || rig_attachment_get(a, 0, NULL, &b)) return 1;
  if (!tw_same_as_file(b, file, kt_offset(file, 0), lengths[0])) return 1;
  if (write(1, "y", 1) != 1) return 1;
  pause(); /* killed here, holding its attachment */
  return 0;
}

static int run_keeper(const char *file, const char *sock) {
  rig_keep_options o = options();
  rig_keeper k = keep(file, sock, &o);
  if (rig_keep_wait_loaded(k) != RIG_OK || write(1, "y", 1) != 1) return 1;
  pause(); /* killed here, serving */
  return 0;
}

static int run_nobody(const char *sock) {
  if (setgid(65534) != 0 || setuid(65534) != 0) return 1;
  rig_device d;
  rig_attachment a;
  if (rig_memory_device("child", &d)) return 1;
  rig_status s = rig_attach(sock, d, &a);
  return write(1, s == RIG_UNSUPPORTED ? "r" : "n", 1) == 1 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "client") == 0) return run_client(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "keeper") == 0) return run_keeper(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "nobody") == 0) return run_nobody(argv[2]);
  signal(SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(attach_verify_every_byte_read_only, kt_kill_child),
      cmocka_unit_test_teardown(attach_during_load_tensor0_before_last_lands, kt_kill_child),
      cmocka_unit_test_teardown(killed_client_lets_go, kt_kill_child),
      cmocka_unit_test_teardown(killed_keeper_answers_lost, kt_kill_child),
      cmocka_unit_test_teardown(refused_uid_gets_a_message_allowed_gid_attaches, kt_kill_child),
      cmocka_unit_test_teardown(hostile_requests_answered_or_dropped, kt_kill_child),
      cmocka_unit_test_teardown(most_clients_busy_and_stop_cuts_off, kt_kill_child),
      cmocka_unit_test_teardown(bad_arguments_answered, kt_kill_child),
      cmocka_unit_test_teardown(reload_new_attaches_get_the_new_file_old_keep_theirs, kt_kill_child),
      cmocka_unit_test_teardown(thousand_attach_cycles_leave_nothing_behind, kt_kill_child),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
