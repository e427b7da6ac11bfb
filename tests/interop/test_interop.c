/* rig_interop.h on a stream backend (CUDA or HIP: gpu_test.h's backend), with native streams and events made
 * by the test as a program's own code would (native.h): a native stream ordered after rig's work and rig's
 * work after it, points as events and back, a point never signaled, handles of the wrong kind, memory made
 * elsewhere, host descriptors, DLPack, and a loss behind a native wait. Each test's name states its promise. */
#define _GNU_SOURCE
#include <dlpack/dlpack.h>
#include <poll.h>
#include <rig_interop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_test.h"
#include "native.h"

#define N 4096u /* uint32 elements */
#define SLOW_NS 30000000ull /* a rig_delay long enough that work not waiting for it reads stale bytes */

static const native_api *api;

static void *new_stream(unsigned gpu) {
  void *s = NULL;
  assert_int_equal(api->use_gpu((int)gpu), 0);
  assert_int_equal(api->stream_create(&s), 0);
  return s;
}

static uint64_t address_of(rig_buffer b) {
  uint64_t a = 0;
  OK(rig_buffer_device_address(b, &a));
  return a;
}

static void expect_all(rig_buffer b, uint32_t want) {
  uint32_t *host = malloc(N * 4);
  OK(rig_buffer_read_into(b, 0, host, N * 4));
  for (uint32_t i = 0; i < N; ++i)
    if (host[i] != want) fail_msg("element %u is %u, want %u", i, host[i], want);
  free(host);
}

/* rig fills x after a slow kernel; a native stream told to wait for that point copies x into y; a point
 * taken from the native stream, stamped on y as its write, orders rig's host read of y after the copy. */
static void native_stream_follows_rig_point_and_rig_follows_native_stream(void **state) {
  (void)state;
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  rig_module m = gt_kernels(a);
  rig_buffer x = rt_create(a, N * 4), y = rt_create(a, N * 4);
  OK(rig_buffer_write_from(y, 0, (uint32_t[N]){0}, N * 4));
  gt_delay(a, m, SLOW_NS);
  rig_point filled = gt_fill_u32(a, m, x, N, 7);
  void *s = new_stream(0);
  OK(rig_stream_wait_point(a, s, filled));
  assert_int_equal(api->copy_async(address_of(y), address_of(x), N * 4, s), 0);
  rig_point copied = 0;
  rig_point before = rt_submitted(a);
  OK(rig_stream_point(a, s, &copied));
  assert_int_equal(rig_point_value(copied), before + 1); /* the next value of a */
  OK(rig_buffer_stamp(y, copied, RIG_ACCESS_WRITE));
  rig_point last = 0;
  OK(rig_buffer_last_write(y, &last));
  assert_int_equal(last, copied);
  expect_all(y, 7); /* rule 5 through the stamp: waits for the native copy */
  /* rig's next write of x follows the native read (rule 4 through a read stamp) */
  OK(rig_buffer_stamp(x, copied, RIG_ACCESS_READ));
  gt_fill_u32(a, m, x, N, 8);
  expect_all(x, 8);
  expect_all(y, 7);
  api->stream_destroy(s);
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

/* The same across GPUs: the native stream is on GPU 1, rig's point on GPU 0. */
static void native_stream_of_another_gpu_waits_for_rig_point(void **state) {
  (void)state;
  if (gt_gpu_count() < 2) {
    rt_skip("needs two GPUs");
    return;
  }
  rig_device a, b;
  if (!gt_open(gt_name(0), &a) || !gt_open(gt_name(1), &b)) return;
  rig_module m = gt_kernels(a);
  rig_buffer x = rt_create(a, N * 4), y = rt_create(b, N * 4);
  gt_delay(a, m, SLOW_NS);
  rig_point filled = gt_fill_u32(a, m, x, N, 11);
  void *s = new_stream(1);
  OK(rig_stream_wait_point(b, s, filled));
  /* the copy reads GPU 0's memory from GPU 1's stream: borrow x on b for its address there (peer access) */
  rig_buffer x_b = rt_borrow(b, x);
  assert_int_equal(api->copy_async(address_of(y), address_of(x_b), N * 4, s), 0);
  rig_point copied = 0;
  OK(rig_stream_point(b, s, &copied));
  OK(rig_buffer_stamp(y, copied, RIG_ACCESS_WRITE));
  expect_all(y, 11);
  api->stream_destroy(s);
  OK(rig_buffer_release(x_b));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* A point exported as an event completes with the point; the event imported back is a point of the
 * importing device reached once the event is. */
static void exported_event_completes_with_point_and_imports_back(void **state) {
  (void)state;
  rig_device a, b;
  if (!gt_open(gt_name(0), &a) || !gt_open(gt_name(0), &b)) return;
  rig_module m = gt_kernels(a);
  rig_buffer x = rt_create(a, N * 4);
  gt_delay(a, m, SLOW_NS);
  rig_point filled = gt_fill_u32(a, m, x, N, 5);
  void *event = NULL;
  OK(rig_point_export_event(filled, &event));
  assert_non_null(event);
  rig_point imported = 0;
  OK(rig_point_import_event(b, event, &imported));
  rig_device_info info = {sizeof info};
  OK(rig_device_get_info(b, &info));
  assert_int_equal(rig_point_device_index(imported), info.index); /* a value of the importing device */
  api->event_destroy(event); /* the caller's, destroyable at once: the queued wait keeps its record */
  OK(rig_wait_point(imported, UINT64_MAX));
  uint64_t signaled = 0;
  OK(rig_device_signaled(a, &signaled));
  assert_true(signaled >= rig_point_value(filled)); /* b's point came no earlier than a's */
  /* a point already reached exports an event complete at once */
  OK(rig_point_export_event(filled, &event));
  assert_int_equal(api->event_query(event), 0);
  api->event_destroy(event);
  expect_all(x, 5);
  OK(rig_buffer_release(x));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* An event whose record never completes (its stream waits on a host word no one writes) leaves the imported
 * point unreached: rig's wait answers RIG_TIMEOUT, then OK once the word is written. */
static void imported_event_never_signaled_times_out_then_completes(void **state) {
  (void)state;
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  void *s = new_stream(0);
  void *host = NULL;
  uint64_t word = 0;
  assert_int_equal(api->host_alloc(&host, &word, 64), 0);
  memset(host, 0, 64);
  int r = api->wait_word(s, word, 1);
  if (r == 801) { /* the device has no stream memory operations: nothing here can gate a stream for ever */
    rt_skip("the native stream cannot wait on a host word (801) on this device");
    api->stream_destroy(s);
    OK(rig_device_release(a));
    return;
  }
  assert_int_equal(r, 0);
  void *event = NULL;
  assert_int_equal(api->event_create(&event), 0);
  assert_int_equal(api->event_record(event, s), 0);
  rig_point p = 0;
  OK(rig_point_import_event(a, event, &p));
  STATUS(RIG_TIMEOUT, rig_wait_point(p, 20000000));
  /* a descriptor for it is not readable yet */
  int fd = -1;
  OK(rig_point_fd(p, &fd));
  struct pollfd pfd = {fd, POLLIN, 0};
  assert_int_equal(poll(&pfd, 1, 0), 0);
  __atomic_store_n((uint64_t *)host, 1, __ATOMIC_RELEASE);
  OK(rig_wait_point(p, UINT64_MAX));
  assert_int_equal(poll(&pfd, 1, 5000), 1);
  uint64_t count = 0;
  assert_int_equal(read(fd, &count, 8), 8);
  assert_int_equal(count, 1);
  close(fd);
  api->event_destroy(event);
  api->stream_destroy(s);
  OK(rig_device_release(a));
}

/* A stream passed as an event, an event passed as a stream, a destroyed stream: RIG_INVALID_ARGUMENT with
 * the driver's words, nothing assigned, the device not lost. */
static void handles_of_the_wrong_kind_answer_invalid_argument(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* a real driver may crash on a handle of the wrong kind (undefined in its API) */
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  rig_module m = gt_kernels(a);
  rig_point slow = gt_delay(a, m, SLOW_NS);
  void *s = new_stream(0);
  void *event = NULL;
  assert_int_equal(api->event_create(&event), 0);
  uint64_t before = rt_submitted(a);
  rig_point p = 0;
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_event(a, s, &p));
  assert_non_null(strstr(rig_last_error(), api->hip ? "hip" : "cu"));
  STATUS(RIG_INVALID_ARGUMENT, rig_stream_point(a, event, &p));
  STATUS(RIG_INVALID_ARGUMENT, rig_stream_wait_point(a, event, slow));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_import_event(a, NULL, &p));
  api->stream_destroy(s);
  STATUS(RIG_INVALID_ARGUMENT, rig_stream_point(a, s, &p));
  assert_int_equal(rt_submitted(a), before);
  const char *why = "";
  OK(rig_device_lost_reason(a, &why));
  assert_null(why);
  /* bad points and handles */
  STATUS(RIG_NOT_FOUND, rig_stream_wait_point(a, NULL, rig_point_make(65000, 1)));
  STATUS(RIG_INVALID_ARGUMENT, rig_stream_wait_point(a, NULL, rig_point_make(rig_point_device_index(slow), 1000000)));
  STATUS(RIG_INVALID_HANDLE, rig_stream_point(NULL, NULL, &p));
  STATUS(RIG_INVALID_ARGUMENT, rig_stream_point(a, NULL, NULL));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_event(0, &event));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_export_event(slow, NULL));
  int fd = 0;
  STATUS(RIG_NOT_FOUND, rig_point_fd(rig_point_make(65000, 1), &fd));
  STATUS(RIG_INVALID_ARGUMENT, rig_point_fd(slow, NULL));
  api->event_destroy(event);
  OK(rig_wait_point(slow, UINT64_MAX));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

/* Device memory made by the program (cuMemAlloc, hipMalloc) as a rig buffer: rig's work writes it, its
 * release function runs once the last buffer and the last DLPack tensor over it are gone, never earlier. */
static int released;
static void on_release(void *user) { *(int *)user += 1; }

static void wrapped_device_memory_takes_part_and_outlives_its_dlpack_tensor(void **state) {
  (void)state;
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  rig_module m = gt_kernels(a);
  assert_int_equal(api->use_gpu(0), 0);
  uint64_t mem = 0;
  assert_int_equal(api->mem_alloc(&mem, N * 4), 0);
  rig_buffer w;
  released = 0;
  OK(rig_buffer_wrap_device(a, mem, N * 4, on_release, &released, &w));
  assert_int_equal(address_of(w), mem);
  gt_delay(a, m, SLOW_NS);
  gt_fill_u32(a, m, w, N, 3);
  expect_all(w, 3);
  DLManagedTensor *t = NULL;
  OK(rig_buffer_to_dlpack(w, kDLUInt, 32, 1, &t));
  assert_int_equal(t->dl_tensor.device.device_type, api->hip ? kDLROCM : kDLCUDA);
  assert_int_equal(t->dl_tensor.device.device_id, 0);
  assert_int_equal(t->dl_tensor.ndim, 1);
  assert_int_equal(t->dl_tensor.shape[0], N);
  assert_int_equal((uint64_t)(uintptr_t)t->dl_tensor.data, mem);
  int32_t type = 0, id = -1;
  OK(rig_buffer_dlpack_device(w, &type, &id));
  assert_int_equal(type, t->dl_tensor.device.device_type);
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_to_dlpack(w, kDLUInt, 12, 1, &t));
  rig_buffer odd;
  OK(rig_buffer_view(w, 0, 6, &odd));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_to_dlpack(odd, kDLUInt, 32, 1, &t));
  OK(rig_buffer_release(odd));
  OK(rig_buffer_release(w));
  assert_int_equal(released, 0); /* the tensor keeps the allocation */
  t->deleter(t);
  assert_int_equal(released, 1);
  assert_int_equal(api->mem_free(mem), 0);
  /* bad input */
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_wrap_device(a, 0, 16, NULL, NULL, &w));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_wrap_device(a, UINT64_MAX - 4, 16, NULL, NULL, &w));
  STATUS(RIG_INVALID_ARGUMENT, rig_buffer_wrap_device(a, mem, 16, NULL, NULL, NULL));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

/* The capability query, and points of memory devices: a native stream never waits for them. */
static void capabilities_per_device_and_memory_device_points(void **state) {
  (void)state;
  rig_device a, mem;
  if (!gt_open(gt_name(0), &a)) return;
  OK(rig_memory_device("interop-mem", &mem));
  int yes = -1;
  OK(rig_interop_supported(a, a, RIG_INTEROP_STREAM_WAIT, &yes));
  assert_int_equal(yes, 1);
  OK(rig_interop_supported(a, mem, RIG_INTEROP_STREAM_WAIT, &yes));
  assert_int_equal(yes, 1);
  OK(rig_interop_supported(a, NULL, RIG_INTEROP_STREAM_POINT, &yes));
  assert_int_equal(yes, 1);
  OK(rig_interop_supported(mem, NULL, RIG_INTEROP_STREAM_POINT, &yes));
  assert_int_equal(yes, 0);
  OK(rig_interop_supported(a, mem, RIG_INTEROP_EXPORT_EVENT, &yes));
  assert_int_equal(yes, 0);
  OK(rig_interop_supported(mem, a, RIG_INTEROP_EXPORT_EVENT, &yes));
  assert_int_equal(yes, 1);
  OK(rig_interop_supported(mem, NULL, RIG_INTEROP_HOST_FD, &yes));
  assert_int_equal(yes, 1);
  OK(rig_interop_supported(mem, NULL, RIG_INTEROP_DLPACK, &yes));
  assert_int_equal(yes, 1);
  /* semaphore descriptors and sync files are Vulkan's: CUDA, HIP and memory devices say no and refuse */
  for (rig_interop_kind k = RIG_INTEROP_SEMAPHORE_FD; k <= RIG_INTEROP_SYNC_FD; ++k) {
    OK(rig_interop_supported(a, NULL, k, &yes));
    assert_int_equal(yes, 0);
    OK(rig_interop_supported(mem, NULL, k, &yes));
    assert_int_equal(yes, 0);
  }
  rig_point none = 0;
  STATUS(RIG_UNSUPPORTED, rig_point_import_sync_fd(a, -1, &none));
  STATUS(RIG_UNSUPPORTED, rig_point_import_semaphore_fd(mem, -1, 1, &none));
  assert_int_equal(none, 0);
  STATUS(RIG_INVALID_ARGUMENT, rig_interop_supported(a, NULL, (rig_interop_kind)99, &yes));
  STATUS(RIG_INVALID_HANDLE, rig_interop_supported(NULL, NULL, RIG_INTEROP_HOST_FD, &yes));
  /* a memory device's point: reached at its submit, nothing enqueued */
  rig_buffer h = rt_create(mem, 64);
  rig_point p = rt_fill(mem, h, 1);
  void *s = new_stream(0);
  OK(rig_stream_wait_point(a, s, p));
  OK(rig_stream_wait_point(a, s, 0));
  rig_point q = 0;
  STATUS(RIG_UNSUPPORTED, rig_stream_wait_point(mem, s, p));
  STATUS(RIG_UNSUPPORTED, rig_stream_point(mem, s, &q));
  STATUS(RIG_UNSUPPORTED, rig_point_export_event(p, &s));
  api->stream_destroy(s);
  OK(rig_buffer_release(h));
  OK(rig_device_release(mem));
  OK(rig_device_release(a));
}

/* A descriptor the caller closed before its point was reached is never written: rig signals its own
 * duplicate, so a pipe that took the closed number stays empty. */
static void closed_descriptor_is_never_written(void **state) {
  (void)state;
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  rig_module m = gt_kernels(a);
  rig_point slow = gt_delay(a, m, SLOW_NS);
  int fd = -1;
  OK(rig_point_fd(slow, &fd));
  close(fd);
  int pipe_fds[2];
  assert_int_equal(pipe(pipe_fds), 0);
  OK(rig_wait_point(slow, UINT64_MAX));
  usleep(20000);
  struct pollfd pfd = {pipe_fds[0], POLLIN, 0};
  assert_int_equal(poll(&pfd, 1, 0), 0);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  /* the point 0 and reached points: readable at once */
  OK(rig_point_fd(0, &fd));
  pfd.fd = fd;
  assert_int_equal(poll(&pfd, 1, 0), 1);
  close(fd);
  OK(rig_point_fd(slow, &fd));
  pfd.fd = fd;
  assert_int_equal(poll(&pfd, 1, 0), 1);
  close(fd);
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

/* GPU 0 faults after a native stream of GPU 1 was told to wait for its point: rig's wait for a point taken
 * from that stream answers RIG_LOST (naming the lost device), instead of waiting for ever. */
static void device_lost_behind_a_native_wait_is_reported_on_rigs_side(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* faults a GPU on purpose */
  if (gt_gpu_count() < 2) {
    rt_skip("needs two GPUs");
    return;
  }
  rig_device a, b;
  if (!gt_open(gt_name(0), &a) || !gt_open(gt_name(1), &b)) return;
  rig_module m = gt_kernels(a);
  gt_delay(a, m, SLOW_NS * 3);
  rig_point faulted = gt_fault(a, m);
  void *s = new_stream(1);
  OK(rig_stream_wait_point(b, s, faulted));
  rig_point after = 0;
  OK(rig_stream_point(b, s, &after));
  STATUS(RIG_LOST, rig_wait_point(after, 10000000000ull));
  const char *why = NULL;
  OK(rig_device_lost_reason(b, &why));
  assert_non_null(why);
  assert_non_null(strstr(why, gt_name(0)));
  /* the lost producer's points: refused at once */
  STATUS(RIG_LOST, rig_stream_wait_point(b, s, faulted));
  api->stream_destroy(s);
  OK(rig_module_release(m));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
  gt_set("reset", 1);
}

/* The same on one GPU: the native stream waits for its own device's point, which is lost. The wait is not
 * carried into the stream point (StreamWaits::carried: a device's loss loses its later values anyway), and
 * the stream point still answers RIG_LOST, never waiting for ever. */
static void device_lost_behind_a_wait_for_its_own_point_loses_the_stream_point(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* faults a GPU on purpose */
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  rig_module m = gt_kernels(a);
  gt_delay(a, m, SLOW_NS * 3);
  rig_point faulted = gt_fault(a, m);
  void *s = new_stream(0);
  OK(rig_stream_wait_point(a, s, faulted));
  rig_point after = 0;
  rig_status taken = rig_stream_point(a, s, &after); /* RIG_LOST where the fault was seen already */
  if (taken == RIG_OK) STATUS(RIG_LOST, rig_wait_point(after, 10000000000ull));
  else assert_int_equal(taken, RIG_LOST);
  const char *why = NULL;
  OK(rig_device_lost_reason(a, &why));
  assert_non_null(why);
  api->stream_destroy(s);
  OK(rig_module_release(m));
  OK(rig_device_release(a));
  gt_set("reset", 1);
}

/* ----- held points: a point with no work of its own (rig_stream_point, the imports) gets no mark of its own
 * on rig's stream; the next mark proves it, or, where something needs it first, a mark made then. ----- */

/* The fake's calls that mark a value on rig's stream or record an edge: events recorded (a mark in events
 * mode, an edge on a native stream in both), words written (a mark in memory-operation mode). */
typedef struct marks {
  long long records, writes, waits;
} marks;
static marks counted(void) {
  marks m = {gt_query("event_records"), gt_query("write_values"), gt_query("event_waits")};
  return m;
}

/* A native stream on `gpu` held shut until *host is set to 1 (it waits on the pinned word); 0 with the test
 * skipped where the device has no stream memory operations. */
static int gated_stream(unsigned gpu, void **stream, uint64_t **host) {
  *stream = new_stream(gpu);
  void *h = NULL;
  uint64_t word = 0;
  assert_int_equal(api->host_alloc(&h, &word, 64), 0);
  memset(h, 0, 64);
  int r = api->wait_word(*stream, word, 1);
  if (r == 801) {
    rt_skip("the native stream cannot wait on a host word (801) on this device");
    api->stream_destroy(*stream);
    return 0;
  }
  assert_int_equal(r, 0);
  *host = (uint64_t *)h;
  return 1;
}

/* rig_stream_point makes two calls, the hand row's two (a record on the native stream, rig's stream waiting
 * on it): no mark of its own. A host wait with no later submit marks it then, once; a later submit's own
 * mark proves the next one with no call at all. */
static void stream_point_marks_nothing_of_its_own(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* counts the fake's calls */
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  rig_module m = gt_kernels(a);
  rig_buffer x = rt_create(a, N * 4), y = rt_create(a, N * 4), z = rt_create(a, N * 4);
  rig_point filled = gt_fill_u32(a, m, x, N, 3);
  void *s = new_stream(0);
  OK(rig_stream_wait_point(a, s, filled));
  assert_int_equal(api->copy_async(address_of(y), address_of(x), N * 4, s), 0);
  marks before = counted();
  rig_point copied = 0;
  OK(rig_stream_point(a, s, &copied));
  marks after = counted();
  assert_int_equal(after.records, before.records + 1); /* the edge on the native stream, no mark */
  assert_int_equal(after.writes, before.writes);
  assert_int_equal(after.waits, before.waits + 1);
  /* nothing follows: the host wait marks it now, once */
  OK(rig_wait_point(copied, UINT64_MAX));
  marks waited = counted();
  assert_int_equal(waited.records + waited.writes, after.records + after.writes + 1);
  OK(rig_wait_point(copied, UINT64_MAX));
  assert_int_equal(counted().records + counted().writes, waited.records + waited.writes);
  OK(rig_buffer_stamp(y, copied, RIG_ACCESS_WRITE));
  expect_all(y, 3);
  /* a submit after it: its own mark proves the point, and waiting for the point marks nothing more */
  assert_int_equal(api->copy_async(address_of(y), address_of(x), N * 4, s), 0);
  rig_point again = 0;
  OK(rig_stream_point(a, s, &again));
  marks held = counted();
  rig_point next = gt_fill_u32(a, m, z, N, 4);
  assert_int_equal(rig_point_value(next), rig_point_value(again) + 1);
  marks submitted = counted();
  assert_int_equal(submitted.records + submitted.writes, held.records + held.writes + 1); /* the fill's mark */
  OK(rig_wait_point(again, UINT64_MAX));
  assert_int_equal(counted().records + counted().writes, submitted.records + submitted.writes);
  OK(rig_wait_point(next, UINT64_MAX));
  expect_all(z, 4);
  api->stream_destroy(s);
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_buffer_release(z));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

/* A point from a native stream held shut, never followed by a submit: every use of it still orders after
 * the native work. A host wait times out, then succeeds; its event, its descriptor, another GPU's native
 * stream and another device's work (an in-queue wait, rule 3) all complete only once the stream opens. */
static void held_point_serves_every_use_with_no_submit_after_it(void **state) {
  (void)state;
  unsigned other = gt_gpu_count() > 1 ? 1 : 0;
  rig_device a, b;
  if (!gt_open(gt_name(0), &a) || !gt_open(gt_name(other), &b)) return;
  rig_module m = gt_kernels(a), mb = gt_kernels(b);
  rig_buffer x = rt_create(a, N * 4), y = rt_create(a, N * 4);
  rig_buffer w = rt_create(b, N * 4), z = rt_create(b, N * 4);
  OK(rig_buffer_write_from(y, 0, (uint32_t[N]){0}, N * 4));
  rig_point filled = gt_fill_u32(a, m, x, N, 9);
  void *s = NULL;
  uint64_t *gate = NULL;
  if (!gated_stream(0, &s, &gate)) return;
  OK(rig_stream_wait_point(a, s, filled));
  assert_int_equal(api->copy_async(address_of(y), address_of(x), N * 4, s), 0);
  rig_point p = 0;
  OK(rig_stream_point(a, s, &p));
  OK(rig_buffer_stamp(y, p, RIG_ACCESS_WRITE));
  marks held = counted();
  /* the host: a wait marks it (once, on the fake) and times out behind the gate */
  STATUS(RIG_TIMEOUT, rig_wait_point(p, 20000000));
  if (gt_fake()) {
    marks waited = counted();
    assert_int_equal(waited.records + waited.writes, held.records + held.writes + 1);
  }
  /* its event and its descriptor: not complete behind the gate */
  void *event = NULL;
  OK(rig_point_export_event(p, &event));
  assert_int_equal(api->event_query(event), 600);
  int fd = -1;
  OK(rig_point_fd(p, &fd));
  struct pollfd pfd = {fd, POLLIN, 0};
  assert_int_equal(poll(&pfd, 1, 0), 0);
  /* another GPU's native stream copies y after it; another device's work reads y after it (rule 3) */
  rig_buffer y_b = rt_borrow(b, y);
  void *s2 = new_stream(other);
  OK(rig_stream_wait_point(b, s2, p));
  assert_int_equal(api->copy_async(address_of(w), address_of(y_b), N * 4, s2), 0);
  rig_point copied = 0;
  OK(rig_stream_point(b, s2, &copied));
  OK(rig_buffer_stamp(w, copied, RIG_ACCESS_WRITE));
  rig_point stepped = gt_step(b, mb, "rig_add_u32", y_b, z, N, 1);
  STATUS(RIG_TIMEOUT, rig_wait_point(stepped, 20000000));
  assert_int_equal(api->event_query(event), 600);
  __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
  OK(rig_wait_point(p, UINT64_MAX));
  OK(rig_wait_point(stepped, UINT64_MAX));
  assert_int_equal(api->event_synchronize(event), 0);
  assert_int_equal(poll(&pfd, 1, 5000), 1);
  close(fd);
  api->event_destroy(event);
  expect_all(y, 9);
  expect_all(w, 9);
  expect_all(z, 10);
  api->stream_destroy(s);
  api->stream_destroy(s2);
  OK(rig_buffer_release(y_b));
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_buffer_release(w));
  OK(rig_buffer_release(z));
  OK(rig_module_release(m));
  OK(rig_module_release(mb));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
}

/* Points taken in a row with no submit between: held up to the timeline's run (16), then one is marked, so
 * a proof is never far; each waits and exports. On the fake: 40 points cost 40 edges and 3 marks (two for
 * the runs, one for the last point's wait). */
static void long_run_of_stream_points_marks_a_few(void **state) {
  (void)state;
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  void *s = new_stream(0);
  rig_point p[40];
  marks before = counted();
  for (int i = 0; i < 40; ++i) OK(rig_stream_point(a, s, &p[i]));
  for (int i = 1; i < 40; ++i) assert_int_equal(rig_point_value(p[i]), rig_point_value(p[i - 1]) + 1);
  OK(rig_wait_point(p[0], UINT64_MAX)); /* proved by the run's mark: no call */
  OK(rig_wait_point(p[39], UINT64_MAX)); /* held: marked now */
  if (gt_fake()) {
    marks after = counted();
    assert_int_equal(after.records + after.writes, before.records + before.writes + 40 + 3);
  }
  for (int i = 0; i < 40; i += 13) {
    void *event = NULL;
    OK(rig_point_export_event(p[i], &event));
    assert_int_equal(api->event_query(event), 0); /* reached: complete at once */
    api->event_destroy(event);
  }
  api->stream_destroy(s);
  OK(rig_device_release(a));
}

/* The bench's edge (a kernel, a native stream waiting for it, the native copy, a point from the stream and
 * its stamps) with the GPU far behind: rig asks the driver nothing, however many edges are pending (the
 * stream's carried waits were once asked about one by one on every edge: hundreds of queries an edge). */
static void edges_ask_the_driver_nothing_while_the_gpu_is_behind(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* slows the fake's GPU and counts its calls */
  rig_device a;
  if (!gt_open(gt_name(0), &a)) return;
  rig_module m = gt_kernels(a);
  rig_buffer x = rt_create(a, N * 4), y = rt_create(a, N * 4);
  gt_fill_u32(a, m, x, N, 0);
  void *s = new_stream(0);
  gt_set("launch_delay_us", 500);
  long long queries = gt_query("event_queries");
  rig_point last = 0;
  for (int i = 0; i < 64; ++i) {
    rig_point written = gt_step(a, m, "rig_add_u32", x, x, N, 1);
    OK(rig_stream_wait_point(a, s, written));
    assert_int_equal(api->copy_async(address_of(y), address_of(x), N * 4, s), 0);
    OK(rig_stream_point(a, s, &last));
    OK(rig_buffer_stamp(x, last, RIG_ACCESS_READ));
    OK(rig_buffer_stamp(y, last, RIG_ACCESS_WRITE));
  }
  assert_int_equal(gt_query("event_queries"), queries);
  gt_set("launch_delay_us", 0);
  OK(rig_wait_point(last, UINT64_MAX));
  expect_all(y, 64);
  api->stream_destroy(s);
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(y));
  OK(rig_module_release(m));
  OK(rig_device_release(a));
}

/* A device lost while a held point was never marked: the point counts as unreached at the loss, so every
 * use answers RIG_LOST at once (no mark is made on a lost device, nothing waits for ever). */
static void device_lost_with_a_held_point_answers_lost(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* faults a GPU on purpose */
  unsigned other = gt_gpu_count() > 1 ? 1 : 0;
  rig_device a, b;
  if (!gt_open(gt_name(0), &a) || !gt_open(gt_name(other), &b)) return;
  rig_module m = gt_kernels(a);
  gt_delay(a, m, SLOW_NS * 3);
  rig_point faulted = gt_fault(a, m);
  void *s = new_stream(0);
  marks before = counted();
  rig_point p = 0;
  OK(rig_stream_point(a, s, &p)); /* handed over before the fault runs */
  STATUS(RIG_LOST, rig_wait_point(faulted, 10000000000ull));
  marks lost = counted();
  assert_int_equal(lost.records, before.records + 1); /* the edge only: p was never marked */
  assert_int_equal(lost.writes, before.writes);
  STATUS(RIG_LOST, rig_wait_point(p, 0));
  STATUS(RIG_LOST, rig_wait_point(p, UINT64_MAX));
  void *event = NULL;
  STATUS(RIG_LOST, rig_point_export_event(p, &event));
  if (other) {
    void *s2 = new_stream(other);
    STATUS(RIG_LOST, rig_stream_wait_point(b, s2, p));
    api->stream_destroy(s2);
  } else {
    /* One GPU: it is the faulted one, where a new stream answers the sticky fault; a stream made before it
     * asks rig for the point, which answers the loss without touching the stream. */
    STATUS(RIG_LOST, rig_stream_wait_point(b, s, p));
  }
  int fd = -1;
  OK(rig_point_fd(p, &fd)); /* settled (never to be reached): readable */
  struct pollfd pfd = {fd, POLLIN, 0};
  assert_int_equal(poll(&pfd, 1, 5000), 1);
  close(fd);
  api->stream_destroy(s);
  OK(rig_module_release(m));
  OK(rig_device_release(a));
  OK(rig_device_release(b));
  gt_set("reset", 1);
}

int main(void) {
  int not_ready = native_ready(&api);
  if (not_ready) return not_ready;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(native_stream_follows_rig_point_and_rig_follows_native_stream),
      cmocka_unit_test(native_stream_of_another_gpu_waits_for_rig_point),
      cmocka_unit_test(exported_event_completes_with_point_and_imports_back),
      cmocka_unit_test(imported_event_never_signaled_times_out_then_completes),
      cmocka_unit_test(handles_of_the_wrong_kind_answer_invalid_argument),
      cmocka_unit_test(wrapped_device_memory_takes_part_and_outlives_its_dlpack_tensor),
      cmocka_unit_test(capabilities_per_device_and_memory_device_points),
      cmocka_unit_test(closed_descriptor_is_never_written),
      cmocka_unit_test(device_lost_behind_a_native_wait_is_reported_on_rigs_side),
      cmocka_unit_test(device_lost_behind_a_wait_for_its_own_point_loses_the_stream_point),
      cmocka_unit_test(stream_point_marks_nothing_of_its_own),
      cmocka_unit_test(held_point_serves_every_use_with_no_submit_after_it),
      cmocka_unit_test(long_run_of_stream_points_marks_a_few),
      cmocka_unit_test(edges_ask_the_driver_nothing_while_the_gpu_is_behind),
      cmocka_unit_test(device_lost_with_a_held_point_answers_lost),
  };
  return rt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
