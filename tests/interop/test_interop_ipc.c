/* rig_interop.h across processes (CUDA and HIP IPC handles) on a stream backend: every bad input of the
 * import, export and close calls, and the cases only another process can make (an exporter that exited, an
 * export closed before it was opened, a point of another process never reached, a mapping closed once its
 * last use is reached, memory of another GPU reached as a peer). The other process is this program again (fork + exec of /proc/self/exe with a role),
 * talking over a UNIX socket pair; the round trip itself is ipc_pair.c's, which meson runs as a test too.
 * Where the backend's library has no IPC calls (the fake HIP runtime), the calls must answer RIG_UNSUPPORTED
 * and the capability query no; the cross-process cases then skip, saying so. */
#define _GNU_SOURCE
#include <rig_interop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_test.h"
#include "native.h"
#include "scm_rights.h"

#define N 1024u /* uint32 elements */

/* ----- the socket between the two processes -------------------------------------------------------- */

static void send_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = write(fd, c, n);
    if (k <= 0) {
      perror("ipc test: write");
      exit(2);
    }
    c += k;
    n -= (size_t)k;
  }
}

/* 0 once n bytes are read; -1 where the other side closed first. */
static int recv_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n) {
    ssize_t k = read(fd, c, n);
    if (k <= 0) return -1;
    c += k;
    n -= (size_t)k;
  }
  return 0;
}

static void send_byte(int fd) { send_all(fd, "x", 1); }
static void recv_byte(int fd) {
  char x;
  if (recv_all(fd, &x, 1) != 0) exit(3);
}

/* Starts this program as the peer of `role`; *sock is our end of the pair. */
static pid_t spawn(const char *role, int *sock) {
  pid_t pid = scm_spawn_peer("test_interop_ipc", role, sock);
  assert_true(pid > 0);
  return pid;
}

static void expect_exit_0(pid_t pid) {
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("the peer ended with status 0x%x", status);
}

static void expect_message(const char *part) {
  const char *m = rig_last_error();
  if (!m || !strstr(m, part)) fail_msg("message \"%s\" does not say \"%s\"", m ? m : "(null)", part);
}

/* ----- the peer's roles (the other process) --------------------------------------------------------- */

static int peer_check(rig_status s, const char *what) {
  if (s == RIG_OK) return 0;
  fprintf(stderr, "peer: %s: %s\n", what, rig_last_error());
  exit(4);
}
#define P(call) peer_check((call), #call)

/* Exports a written buffer and its write's point, then exits at once: what they name goes with it. */
static int peer_export_and_exit(int sock) {
  rig_device d;
  P(rig_device_open(gt_name(0), &d));
  rig_module m = gt_kernels(d);
  rig_buffer b;
  P(rig_buffer_create(d, N * 4, RIG_MEMORY_DEVICE, &b));
  rig_point written = gt_fill_u32(d, m, b, N, 5);
  rig_ipc_handle h[2];
  P(rig_buffer_export_ipc(b, &h[0]));
  P(rig_point_export_ipc(written, &h[1]));
  P(rig_wait_point(written, UINT64_MAX));
  send_all(sock, h, sizeof h);
  _exit(0); /* no release: the process ends */
}

/* Sends an export it closed already, and the export of a point that waits, in this process's queue, for a
 * host word the peer sets only when told: the importer's wait for it times out until then. */
static int peer_closed_and_blocked(int sock) {
  rig_device d;
  P(rig_device_open(gt_name(0), &d));
  const native_api *api = native();
  if (!api) return 5;
  void *word_host = NULL, *s = NULL;
  uint64_t word_device = 0;
  if (api->use_gpu(0) || api->stream_create(&s) || api->host_alloc(&word_host, &word_device, 8)) return 6;
  *(volatile uint64_t *)word_host = 0;
  rig_point p = 0;
  P(rig_stream_point(d, s, &p)); /* the stream has no work yet: reached soon */
  rig_ipc_handle h[2];
  P(rig_point_export_ipc(p, &h[0]));
  P(rig_point_export_ipc_close(&h[0]));
  if (api->wait_word(s, word_device, 1)) return 7;
  rig_point blocked = 0;
  P(rig_stream_point(d, s, &blocked));
  P(rig_point_export_ipc(blocked, &h[1]));
  send_all(sock, h, sizeof h);
  recv_byte(sock);
  __atomic_store_n((uint64_t *)word_host, 1, __ATOMIC_RELEASE);
  P(rig_wait_point(blocked, UINT64_MAX));
  recv_byte(sock); /* the importer's point that followed our export is reached: now the export may go */
  P(rig_point_export_ipc_close(&h[1]));
  P(rig_device_release(d));
  return 0;
}

/* The exported buffer's words in the offset case: distinct. */
static uint32_t word_at(size_t i) { return (uint32_t)(i * 2654435761u) ^ 0xa5a5a5a5u; }

/* Exports a buffer and keeps it until told; the importer counts its mappings meanwhile. `at_offset`: the
 * buffer is written with word_at's words and what travels is a view of its words [256, 512) (a loaded
 * tensor, a part of its arena, travels so too: the allocation's handle and the buffer's offset in it). */
static int peer_export_and_wait(int sock, int at_offset) {
  rig_device d;
  P(rig_device_open(gt_name(0), &d));
  rig_buffer b, view = NULL;
  P(rig_buffer_create(d, N * 4, RIG_MEMORY_DEVICE, &b));
  if (at_offset) {
    static uint32_t words[N];
    for (size_t i = 0; i < N; ++i) words[i] = word_at(i);
    P(rig_buffer_write_from(b, 0, words, sizeof words));
    P(rig_buffer_view(b, 256 * 4, 256 * 4, &view));
  }
  rig_ipc_handle h;
  P(rig_buffer_export_ipc(view ? view : b, &h));
  send_all(sock, &h, sizeof h);
  recv_byte(sock);
  if (view) P(rig_buffer_release(view));
  P(rig_buffer_release(b));
  P(rig_device_release(d));
  return 0;
}

static int peer(const char *role, int sock) {
  if (!strcmp(role, "export-and-exit")) return peer_export_and_exit(sock);
  if (!strcmp(role, "closed-and-blocked")) return peer_closed_and_blocked(sock);
  if (!strcmp(role, "export-and-wait")) return peer_export_and_wait(sock, 0);
  if (!strcmp(role, "export-view")) return peer_export_and_wait(sock, 1);
  fprintf(stderr, "peer: unknown role %s\n", role);
  return 2;
}

/* ----- the tests ------------------------------------------------------------------------------------- */

static int ipc_supported(rig_device d) {
  int memory = -1, event = -1;
  OK(rig_interop_supported(d, NULL, RIG_INTEROP_IPC_MEMORY, &memory));
  OK(rig_interop_supported(d, NULL, RIG_INTEROP_IPC_EVENT, &event));
  assert_int_equal(memory, event); /* both libraries (fake and real) have all of them or none */
  return memory;
}

/* Opens the backend's first GPU for a cross-process case; where its library has no IPC calls, skips the
 * case, saying so (0, nothing left open). */
static int open_cross_process(rig_device *d) {
  if (!gt_open(gt_name(0), d)) return 0;
  if (ipc_supported(*d)) return 1;
  rt_skip("the backend's library has no interprocess calls (RIG_INTEROP_IPC_* say no)");
  OK(rig_device_release(*d));
  return 0;
}

/* The capability query says which; a library without the calls answers RIG_UNSUPPORTED naming them. Memory
 * devices have no handles to share. */
static void capabilities_and_unsupported_devices(void **state) {
  (void)state;
  rig_device d, mem;
  if (!gt_open(gt_name(0), &d)) return;
  OK(rig_memory_device("ipc-mem", &mem));
  int yes = -1;
  OK(rig_interop_supported(mem, NULL, RIG_INTEROP_IPC_MEMORY, &yes));
  assert_int_equal(yes, 0);
  OK(rig_interop_supported(mem, NULL, RIG_INTEROP_IPC_EVENT, &yes));
  assert_int_equal(yes, 0);
  rig_buffer mb;
  OK(rig_buffer_create(mem, 64, RIG_MEMORY_DEVICE, &mb));
  rig_ipc_handle h;
  STATUS(RIG_UNSUPPORTED, rig_buffer_export_ipc(mb, &h));
  rig_point mp = rt_fill(mem, mb, 1);
  STATUS(RIG_UNSUPPORTED, rig_point_export_ipc(mp, &h));
  rig_point out = 0;
  memset(&h, 0, sizeof h);
  STATUS(RIG_UNSUPPORTED, rig_point_import_ipc(mem, &h, &out));
  STATUS(RIG_UNSUPPORTED, rig_buffer_import_ipc(mem, &h, &mb));
  if (!ipc_supported(d)) {
    rig_module m = gt_kernels(d);
    rig_buffer b = rt_create(d, 64);
    STATUS(RIG_UNSUPPORTED, rig_buffer_export_ipc(b, &h));
    expect_message("no interprocess memory calls");
    rig_point p = gt_fill_u32(d, m, b, 16, 1);
    STATUS(RIG_UNSUPPORTED, rig_point_export_ipc(p, &h));
    expect_message("no interprocess event calls");
    STATUS(RIG_UNSUPPORTED, rig_point_import_ipc(d, &h, &out));
    STATUS(RIG_UNSUPPORTED, rig_buffer_import_ipc(d, &h, &b));
    OK(rig_buffer_release(b));
    OK(rig_module_release(m));
  }
  OK(rig_buffer_release(mb));
  OK(rig_device_release(mem));
  OK(rig_device_release(d));
}

/* Bytes that are no handle, a handle of the other kind, a handle of this very process, a null handle, the
 * point 0, host memory, closing what is not an open export of ours: each its status and its words. */
static void bad_handles_answer_clear_errors(void **state) {
  (void)state;
  rig_device d;
  if (!open_cross_process(&d)) return;
  rig_module m = gt_kernels(d);
  rig_buffer b = rt_create(d, N * 4);
  rig_point p = gt_fill_u32(d, m, b, N, 1);
  rig_ipc_handle mem_h, point_h, garbage;
  OK(rig_buffer_export_ipc(b, &mem_h));
  OK(rig_point_export_ipc(p, &point_h));
  for (size_t i = 0; i < sizeof garbage.bytes; ++i) garbage.bytes[i] = (uint8_t)(i * 37 + 11);
  rig_buffer got = NULL;
  rig_point gp = 0;
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_ipc(d, &garbage, &got));
  expect_message("no rig interprocess handle");
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_ipc(d, &garbage, &gp));
  expect_message("no rig interprocess handle");
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_ipc_close(&garbage));
  /* the other kind */
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_ipc(d, &point_h, &got));
  expect_message("a point's, not a buffer's");
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_ipc(d, &mem_h, &gp));
  expect_message("a buffer's, not a point's");
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_ipc_close(&mem_h));
  /* this process's own */
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_ipc(d, &mem_h, &got));
  expect_message("exported by this process");
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_ipc(d, &point_h, &gp));
  expect_message("exported by this process");
  assert_null(got);
  assert_int_equal(gp, 0);
  /* null, the point 0, a point not yet submitted, host memory */
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_ipc(d, NULL, &got));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_ipc(d, NULL, &gp));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_ipc_close(NULL));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_export_ipc(b, NULL));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_ipc(0, &garbage));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_ipc(p + 1000, &garbage));
  rig_buffer pinned;
  OK(rig_buffer_create(d, 64, RIG_MEMORY_PINNED, &pinned));
  STATUS(RIG_UNSUPPORTED, rig_buffer_export_ipc(pinned, &garbage));
  expect_message("host memory");
  /* a close, then a second close of the same export */
  OK(rig_point_export_ipc_close(&point_h));
  STATUS(RIG_NOT_FOUND, rig_point_export_ipc_close(&point_h));
  expect_message("closed already");
  OK(rig_buffer_release(pinned));
  OK(rig_buffer_release(b));
  OK(rig_module_release(m));
  OK(rig_device_release(d));
}

/* The exporter exited: its memory is gone, and the driver's refusal says so (the H200's driver and the
 * fake); its event likewise on the fake, while CUDA leaves opening an exited exporter's event undefined
 * (the H200's driver opened one, 2026-12-01). */
static void handles_of_an_exited_exporter_are_refused(void **state) {
  (void)state;
  rig_device d;
  if (!open_cross_process(&d)) return;
  int sock;
  pid_t pid = spawn("export-and-exit", &sock);
  rig_ipc_handle h[2];
  assert_int_equal(recv_all(sock, h, sizeof h), 0);
  expect_exit_0(pid);
  close(sock);
  rig_buffer b = NULL;
  rig_point p = 0;
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_import_ipc(d, &h[0], &b));
  expect_message("exited");
  assert_null(b);
  if (gt_fake()) {
    STATUS(RIG_INVALID_ARGUMENT, rig_point_import_ipc(d, &h[1], &p));
    expect_message("exited");
    assert_int_equal(p, 0);
  } else {
    fprintf(stderr, "note: the exited exporter's event is checked on the fake only (undefined in CUDA)\n");
  }
  OK(rig_device_release(d)); /* nothing was assigned: the device's timeline is whole */
}

/* An export closed before it was opened is refused (on the fake); a point of another process whose work waits for ever
 * leaves rig's wait at RIG_TIMEOUT until that work completes, then OK. */
static void closed_export_refused_and_unreached_point_times_out(void **state) {
  (void)state;
  rig_device d;
  if (!open_cross_process(&d)) return;
  int sock;
  pid_t pid = spawn("closed-and-blocked", &sock);
  rig_ipc_handle h[2];
  assert_int_equal(recv_all(sock, h, sizeof h), 0);
  rig_point p = 0;
  if (gt_fake()) { /* CUDA leaves opening an event its exporter destroyed undefined; the fake refuses it */
    STATUS(RIG_INVALID_ARGUMENT, rig_point_import_ipc(d, &h[0], &p));
    expect_message("closed");
  } else {
    fprintf(stderr, "note: the closed export's refusal is checked on the fake only (undefined in CUDA)\n");
  }
  OK(rig_point_import_ipc(d, &h[1], &p));
  STATUS(RIG_TIMEOUT, rig_wait_point(p, 50000000ull));
  send_byte(sock); /* the peer releases its stream */
  OK(rig_wait_point(p, 10000000000ull));
  send_byte(sock); /* our point that followed its export is reached: it may close the export */
  expect_exit_0(pid);
  close(sock);
  OK(rig_device_release(d));
}

/* An imported buffer's mapping is closed (cuIpcCloseMemHandle) once its last buffer is released and its
 * last use reached, not before. */
static void imported_mapping_closes_after_its_last_use(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* counts the fake's mappings */
  rig_device d;
  if (!open_cross_process(&d)) return;
  int sock;
  pid_t pid = spawn("export-and-wait", &sock);
  rig_ipc_handle h;
  assert_int_equal(recv_all(sock, &h, sizeof h), 0);
  long long before = gt_query("live_ipc_mappings");
  rig_buffer b, view;
  OK(rig_buffer_import_ipc(d, &h, &b));
  assert_int_equal(gt_query("live_ipc_mappings"), before + 1);
  OK(rig_buffer_view(b, 0, 64, &view));
  OK(rig_buffer_release(b));
  assert_int_equal(gt_query("live_ipc_mappings"), before + 1); /* the view holds it */
  rig_module m = gt_kernels(d);
  gt_delay(d, m, 30000000ull);
  rig_point filled = gt_fill_u32(d, m, view, 16, 3);
  OK(rig_buffer_release(view));
  /* closed once the fill is reached (rule 6): a close before would fault the fill, losing the device */
  for (int i = 0; i < 10000 && gt_query("live_ipc_mappings") != before; ++i) usleep(1000);
  assert_int_equal(gt_query("live_ipc_mappings"), before);
  OK(rig_wait_point(filled, 0));
  send_byte(sock);
  expect_exit_0(pid);
  close(sock);
  OK(rig_module_release(m));
  OK(rig_device_release(d));
}

/* A view exported at an offset imports as its own bytes, not its allocation's first ones. */
static void a_view_at_an_offset_imports_its_own_bytes(void **state) {
  (void)state;
  rig_device d;
  if (!open_cross_process(&d)) return;
  int sock;
  pid_t pid = spawn("export-view", &sock);
  rig_ipc_handle h;
  assert_int_equal(recv_all(sock, &h, sizeof h), 0);
  rig_buffer b;
  OK(rig_buffer_import_ipc(d, &h, &b));
  size_t length = 0;
  OK(rig_buffer_length(b, &length));
  assert_int_equal(length, 256 * 4);
  static uint32_t got[256];
  OK(rig_buffer_read_into(b, 0, got, sizeof got));
  for (size_t i = 0; i < 256; ++i)
    if (got[i] != word_at(256 + i)) fail_msg("word %zu of the view: %08x, want %08x", i, got[i], word_at(256 + i));
  OK(rig_buffer_release(b));
  send_byte(sock);
  expect_exit_0(pid);
  close(sock);
  OK(rig_device_release(d));
}

/* Memory another process exported on GPU 0, imported on GPU 1 (ipc_pair cuda:0 cuda:1's case): the bytes
 * stay on GPU 0, and GPU 1's kernels reach them as a peer, which rig's open asks for lazily (on the fake, a
 * kernel of GPU 1 without it faults). Where the two GPUs cannot be peers (the fake's peer_access 0), the
 * open answers RIG_UNSUPPORTED saying so. */
static void memory_of_another_gpu_is_reached_as_a_peer(void **state) {
  (void)state;
  if (gt_gpu_count() < 2) {
    rt_skip("needs two GPUs");
    return;
  }
  rig_device d;
  if (!gt_open(gt_name(1), &d)) return;
  if (!ipc_supported(d)) {
    rt_skip("the backend's library has no interprocess calls (RIG_INTEROP_IPC_* say no)");
    OK(rig_device_release(d));
    return;
  }
  int sock;
  pid_t pid = spawn("export-and-wait", &sock); /* exports a buffer of GPU 0 */
  rig_ipc_handle h;
  assert_int_equal(recv_all(sock, &h, sizeof h), 0);
  rig_buffer shared, mine;
  OK(rig_buffer_import_ipc(d, &h, &shared));
  rig_module m = gt_kernels(d);
  mine = rt_create(d, N * 4);
  gt_fill_u32(d, m, shared, N, 41);                 /* GPU 1's kernel writes GPU 0's bytes */
  gt_step(d, m, "rig_add_u32", shared, mine, N, 1); /* ... and reads them */
  uint32_t host[N];
  OK(rig_buffer_read_into(mine, 0, host, sizeof host));
  size_t bad = 0;
  for (uint32_t i = 0; i < N; ++i) bad += host[i] != 42;
  assert_int_equal(bad, 0);
  OK(rig_buffer_release(shared));
  if (gt_fake()) {
    gt_set("peer_access", 0);
    rig_buffer refused = NULL;
    STATUS(RIG_UNSUPPORTED, rig_buffer_import_ipc(d, &h, &refused));
    expect_message("cannot reach as a peer");
    assert_null(refused);
    gt_set("peer_access", 1);
  }
  OK(rig_buffer_release(mine));
  OK(rig_module_release(m));
  OK(rig_device_release(d));
  send_byte(sock);
  expect_exit_0(pid);
  close(sock);
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "peer")) return peer(argv[2], atoi(argv[3]));
  if (!gt_available()) return 77; /* skipped, with the reason printed */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(capabilities_and_unsupported_devices),
      cmocka_unit_test(bad_handles_answer_clear_errors),
      cmocka_unit_test(handles_of_an_exited_exporter_are_refused),
      cmocka_unit_test(closed_export_refused_and_unreached_point_times_out),
      cmocka_unit_test(imported_mapping_closes_after_its_last_use),
      cmocka_unit_test(a_view_at_an_offset_imports_its_own_bytes),
      cmocka_unit_test(memory_of_another_gpu_is_reached_as_a_peer),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
