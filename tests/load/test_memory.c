/* Loads onto memory devices through the shared library: every tensor's bytes equal the file's on every
 * path; a placement over two devices reads each byte once; every failure mid-load (file changed,
 * cancelled, device lost, out of memory, read error) answers its status and hands out nothing half-loaded. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <rig_testing.h>

#include "weights.h"

/* A read error on demand: this executable's pread replaces libc's for librig (the dynamic linker finds the
 * executable's definition first). After `reads_left` more reads, every read fails with EIO. */
static atomic_long reads_left = -1;
ssize_t test_pread64(int fd, void *buf, size_t n, off_t off) __asm__("pread64");
ssize_t test_pread(int fd, void *buf, size_t n, off_t off) __asm__("pread");
static ssize_t real_pread(int fd, void *buf, size_t n, off_t off) {
  /* lseek+read is not atomic, but the test's reads are of one thread or distinct fds' private offsets:
   * use a private descriptor so concurrent readers do not share an offset. */
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  ssize_t got = -1;
  if (fseeko(f, off, SEEK_SET) == 0) got = (ssize_t)fread(buf, 1, n, f);
  fclose(f);
  return got;
}
ssize_t test_pread64(int fd, void *buf, size_t n, off_t off) {
  long left = atomic_load(&reads_left);
  if (left == 0) {
    errno = EIO;
    return -1;
  }
  if (left > 0) atomic_fetch_sub(&reads_left, 1);
  return real_pread(fd, buf, n, off);
}
ssize_t test_pread(int fd, void *buf, size_t n, off_t off) { return test_pread64(fd, buf, n, off); }

static const size_t lengths[] = {1, 70000, 300000, 0, 5000, (1 << 20) + 3, 4096};
#define COUNT (sizeof lengths / sizeof lengths[0])

static rig_load_options options(rig_load_path path) {
  return tw_options(path, 64 << 10, 3); /* tensors span several chunks */
}

#define placement tw_placement

static rig_load_file open_file(const char *path) {
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  return f;
}

/* Every tensor placed on `device` equals the file's bytes. */
static void expect_all_equal(rig_load load, rig_load_file f, const char *path, size_t device) {
  size_t n;
  rig_load_tensor_count(f, &n);
  for (size_t i = 0; i < n; ++i)
    if (!tw_tensor_as_file(load, f, path, i, device)) fail_msg("tensor %zu differs from the file (or its length)", i);
}

/* What the progress callback saw: done never past total, never going back, total at the last call. */
struct seen {
  uint64_t last, total, calls;
  int backwards, past_total;
};
static void record_progress(void *user, uint64_t done, uint64_t total) {
  struct seen *s = user;
  s->backwards |= done < s->last;
  s->past_total |= done > total;
  s->last = done, s->total = total, ++s->calls;
}

static void every_tensor_equals_the_file_on_every_path(void **state) {
  (void)state;
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device a;
  rig_memory_device("A", &a);
  rig_load_file f = open_file(path);
  struct {
    rig_load_path path;
    rig_load_io io;
    int verify;
    rig_load_path taken;
  } cases[] = {
      {RIG_LOAD_PATH_STAGED, RIG_LOAD_IO_BUFFERED, 0, RIG_LOAD_PATH_STAGED},
      {RIG_LOAD_PATH_STAGED, RIG_LOAD_IO_DIRECT, 0, RIG_LOAD_PATH_STAGED},
      {RIG_LOAD_PATH_STAGED, RIG_LOAD_IO_AUTO, 1, RIG_LOAD_PATH_STAGED},
      {RIG_LOAD_PATH_DIRECT, RIG_LOAD_IO_AUTO, 1, RIG_LOAD_PATH_DIRECT},
      {RIG_LOAD_PATH_AUTO, RIG_LOAD_IO_AUTO, 0, RIG_LOAD_PATH_DIRECT}, /* memory devices: Not_needed */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    rig_load_options o = options(cases[c].path);
    o.io = cases[c].io;
    o.verify = cases[c].verify;
    struct seen seen = {0, 0, 0, 0, 0};
    o.progress = record_progress;
    o.progress_user = &seen;
    rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
    rig_load load;
    assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
    assert_int_equal(rig_load_wait(load), RIG_OK);
    expect_all_equal(load, f, path, 0);
    /* the direct path's windows cover whole pages: their bytes must not push done past total */
    assert_true(seen.calls > 0);
    assert_false(seen.backwards);
    assert_false(seen.past_total);
    assert_int_equal(seen.last, seen.total);
    rig_load_stats st;
    memset(&st, 0, sizeof st);
    st.size = sizeof st;
    assert_int_equal(rig_load_get_stats(load, &st), RIG_OK);
    assert_int_equal(st.path, cases[c].taken);
    assert_non_null(st.why);
    size_t total = 0;
    for (size_t i = 0; i < COUNT; ++i) total += lengths[i];
    assert_int_equal(st.bytes_total, total);
    assert_int_equal(st.bytes_copied, total);
    assert_true(st.bytes_read >= total);
    /* the phases: buffers were made and copies submitted on every path; only staging reads the file */
    assert_true(st.alloc_seconds > 0 && st.submit_seconds > 0);
    assert_true((st.path == RIG_LOAD_PATH_STAGED) == (st.read_seconds > 0));
    /* a caller built before the phases were appended passes the shorter size and gets only its fields */
    rig_load_stats old;
    memset(&old, 0x5a, sizeof old);
    old.size = offsetof(rig_load_stats, read_seconds);
    assert_int_equal(rig_load_get_stats(load, &old), RIG_OK);
    assert_int_equal(old.bytes_total, total);
    unsigned char untouched[sizeof(double)];
    memset(untouched, 0x5a, sizeof untouched);
    assert_memory_equal(&old.read_seconds, untouched, sizeof untouched);
    old.size = offsetof(rig_load_stats, staging_bytes);
    assert_int_equal(rig_load_get_stats(load, &old), RIG_INVALID_ARGUMENT);
    assert_int_equal(rig_load_release(load), RIG_OK);
    assert_int_equal(rig_load_release(load), RIG_INVALID_HANDLE);
  }
  /* a selection: only tensors 5 and 1; others are not in the load */
  size_t pick[] = {5, 1};
  rig_load_options o = options(RIG_LOAD_PATH_STAGED);
  rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
  rig_load load;
  assert_int_equal(rig_load_start(f, pick, 2, &p, &o, &load), RIG_OK);
  rig_buffer b;
  assert_int_equal(rig_load_buffer(load, 5, 0, &b), RIG_OK);
  rig_buffer_release(b);
  assert_int_equal(rig_load_buffer(load, 2, 0, &b), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_buffer(load, 5, 1, &b), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  rig_load_release(load);
  rig_load_file_release(f);
  rig_device_release(a);
  unlink(path);
}

static void two_devices_read_each_byte_once_and_copy_device_to_device(void **state) {
  (void)state;
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device d[2];
  rig_memory_device("A", &d[0]);
  rig_memory_device("B", &d[1]);
  rig_load_file f = open_file(path);
  size_t total = 0;
  for (size_t i = 0; i < COUNT; ++i) total += lengths[i];
  for (int path_kind = 0; path_kind < 2; ++path_kind) {
    rig_load_options o = options(path_kind ? RIG_LOAD_PATH_DIRECT : RIG_LOAD_PATH_STAGED);
    rig_load_placement p = placement(d, 2, RIG_LOAD_RULE_EACH, NULL);
    rig_load load;
    assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
    assert_int_equal(rig_load_wait(load), RIG_OK);
    expect_all_equal(load, f, path, 0);
    expect_all_equal(load, f, path, 1);
    rig_load_stats st = tw_stats(load);
    if (path_kind == 0) assert_int_equal(st.bytes_read, total); /* each byte read once */
    assert_int_equal(st.bytes_copied, 2 * total);
    rig_load_release(load);
  }
  /* by layer: layers 0..6 split in two blocks; masks: each tensor where its bit says */
  rig_load_options o = options(RIG_LOAD_PATH_STAGED);
  rig_load_placement p = placement(d, 2, RIG_LOAD_RULE_BY_LAYER, NULL);
  rig_load load;
  rig_buffer b;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  assert_int_equal(rig_load_buffer(load, 0, 0, &b), RIG_OK);
  rig_buffer_release(b);
  assert_int_equal(rig_load_buffer(load, 0, 1, &b), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_buffer(load, 6, 1, &b), RIG_OK);
  rig_buffer_release(b);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  rig_load_stats st = tw_stats(load);
  assert_int_equal(st.bytes_read, total);
  assert_int_equal(st.bytes_copied, total);
  rig_load_release(load);
  uint64_t masks[COUNT] = {1, 2, 3, 1, 2, 3, 2};
  p = placement(d, 2, RIG_LOAD_RULE_MASKS, masks);
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  for (size_t i = 0; i < COUNT; ++i)
    for (size_t dev = 0; dev < 2; ++dev)
      assert_int_equal(rig_load_buffer(load, i, dev, &b) == RIG_OK, (int)(masks[i] >> dev & 1)),
          (masks[i] >> dev & 1) ? rig_buffer_release(b) : RIG_OK;
  rig_load_release(load);
  rig_load_file_release(f);
  rig_device_release(d[0]);
  rig_device_release(d[1]);
  unlink(path);
}

static void bad_placements_and_options_are_refused_before_any_read(void **state) {
  (void)state;
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device a;
  rig_memory_device("A", &a);
  rig_device twice[2] = {a, a};
  rig_load_file f = open_file(path);
  rig_load_options o = options(RIG_LOAD_PATH_STAGED);
  rig_load load = NULL;
  rig_load_placement p = placement(&a, 0, RIG_LOAD_RULE_EACH, NULL);
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_INVALID_ARGUMENT);
  p = placement(twice, 2, RIG_LOAD_RULE_EACH, NULL);
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_INVALID_ARGUMENT);
  p = placement(&a, 1, RIG_LOAD_RULE_MASKS, NULL);
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_INVALID_ARGUMENT);
  uint64_t masks[COUNT] = {1, 1, 1, 1, 1, 1, 2};
  p = placement(&a, 1, RIG_LOAD_RULE_MASKS, masks);
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_INVALID_ARGUMENT);
  p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
  size_t bad_index[] = {COUNT}, dup[] = {1, 1};
  assert_int_equal(rig_load_start(f, bad_index, 1, &p, &o, &load), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_start(f, dup, 2, &p, &o, &load), RIG_INVALID_ARGUMENT);
  o.path = (rig_load_path)77;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_INVALID_ARGUMENT);
  o = options(RIG_LOAD_PATH_REGISTERED); /* memory devices need no registration: Not_needed, not Usable */
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_UNSUPPORTED);
  assert_non_null(strstr(rig_last_error(), "Not_needed"));
  assert_null(load);
  rig_device_release(a);
  o = options(RIG_LOAD_PATH_STAGED);
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_INVALID_HANDLE); /* a released device */
  assert_int_equal(rig_load_start(NULL, NULL, 0, &p, &o, &load), RIG_INVALID_HANDLE);
  rig_load_file_release(f);
  unlink(path);
}

/* A progress callback that does one thing at its first call, once `go` is set by the test. */
typedef struct trigger {
  atomic_int go, fired;
  int action; /* 0 append to the file, 1 cancel, 2 lose device */
  const char *path;
  volatile int cancel;
  rig_device lose;
} trigger;

static void on_progress(void *user, uint64_t done, uint64_t total) {
  (void)done;
  (void)total;
  trigger *t = user;
  if (atomic_exchange(&t->fired, 1)) return;
  while (!atomic_load(&t->go)) usleep(1000);
  if (t->action == 0) tw_append(t->path, "x", 1);
  if (t->action == 1) __atomic_store_n(&t->cancel, 1, __ATOMIC_RELAXED); /* read by the load's readers */
  if (t->action == 2) rig_testing_lose_device(t->lose, "lost in the test");
}

/* Starts a load with the trigger; takes tensor 0's buffer (handed out before the trigger fires), then lets
 * it fire; expects `status` from the load, from rig_load_buffer of the last tensor, and tensor 0 intact. */
static void fail_midway(int action, rig_status status, const char *words) {
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device d[2];
  rig_memory_device("A", &d[0]);
  rig_memory_device("B", &d[1]);
  rig_load_file f = open_file(path);
  trigger t = {0};
  t.action = action;
  t.path = path;
  t.lose = d[1];
  rig_load_options o = options(RIG_LOAD_PATH_STAGED);
  o.threads = 1;
  o.progress = on_progress;
  o.progress_user = &t;
  o.cancel = &t.cancel;
  uint64_t masks[COUNT] = {1, 2, 2, 2, 2, 2, 2};
  rig_load_placement p = placement(d, 2, RIG_LOAD_RULE_MASKS, masks);
  rig_load load;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  rig_buffer first, b = NULL;
  assert_int_equal(rig_load_buffer(load, 0, 0, &first), RIG_OK);
  atomic_store(&t.go, 1);
  assert_int_equal(rig_load_wait(load), status);
  if (!strstr(rig_last_error(), words)) fail_msg("'%s' does not say '%s'", rig_last_error(), words);
  assert_int_equal(rig_load_buffer(load, COUNT - 1, 1, &b), status);
  assert_null(b);
  rig_load_tensor t0;
  memset(&t0, 0, sizeof t0);
  t0.size = sizeof t0;
  rig_load_tensor_get(f, 0, &t0);
  assert_true(tw_same_as_file(first, path, t0.offset, t0.length)); /* handed out before: intact */
  rig_buffer_release(first);
  assert_int_equal(rig_load_release(load), RIG_OK);
  rig_load_file_release(f);
  rig_device_release(d[0]);
  rig_device_release(d[1]);
  unlink(path);
}

static void a_file_changed_during_the_load_fails_it(void **state) {
  (void)state;
  fail_midway(0, RIG_INVALID_ARGUMENT, "changed");
}
/* A file that shrinks while a load reads it: the load answers RIG_INVALID_ARGUMENT naming the file, and the
 * process never dies of SIGBUS (the direct path's windows are one mapping of the file, which a memory device's
 * copy reads: rig guards it; the staged path reads with pread). The progress callback, on the load's thread
 * between two windows or chunks, cuts the file, so the next window reads past its new end: without the guard
 * this test dies of SIGBUS. */
typedef struct shrinker {
  const char *path;
  off_t to;
  atomic_int fired, failed;
} shrinker;
static void shrink_on_progress(void *user, uint64_t done, uint64_t total) {
  (void)done;
  (void)total;
  shrinker *s = user;
  if (atomic_exchange(&s->fired, 1)) return;
  if (truncate(s->path, s->to) != 0) atomic_store(&s->failed, 1);
}
static const size_t shrinking[] = {200000, 300000, 400000, 500000};
static void expect_shrunk(rig_status s, const char *path, const char *when) {
  if (s != RIG_INVALID_ARGUMENT || !strstr(rig_last_error(), path))
    fail_msg("%s: got %s '%s', want RIG_INVALID_ARGUMENT naming %s", when, rig_status_name(s), rig_last_error(), path);
}
static void a_file_shrinking_under_a_load_fails_it_never_with_a_signal(void **state) {
  (void)state;
  rig_device a;
  rig_memory_device("A", &a);
  rig_load_path paths[] = {RIG_LOAD_PATH_DIRECT, RIG_LOAD_PATH_STAGED};
  /* cut to nothing, inside the header, inside the second window (off a page), just before the last byte */
  off_t cuts[] = {0, 40, 100000 + 17, -1};
  for (size_t k = 0; k < 2; ++k)
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; ++c) {
      const char *path = tw_path("shrinking");
      tw_safetensors_u8(path, shrinking, 4);
      rig_load_file f = open_file(path);
      rig_load_tensor last;
      memset(&last, 0, sizeof last);
      last.size = sizeof last;
      assert_int_equal(rig_load_tensor_get(f, 3, &last), RIG_OK);
      shrinker sh = {path, cuts[c] >= 0 ? cuts[c] : (off_t)(last.offset + last.length - 1)};
      rig_load_options o = options(paths[k]);
      o.threads = 1;
      o.progress = shrink_on_progress;
      o.progress_user = &sh;
      rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
      rig_load load;
      assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
      char when[96];
      snprintf(when, sizeof when, "path %d, cut to %lld", (int)paths[k], (long long)sh.to);
      expect_shrunk(rig_load_wait(load), path, when);
      assert_true(atomic_load(&sh.fired));
      assert_false(atomic_load(&sh.failed));
      rig_buffer b = NULL;
      assert_int_equal(rig_load_buffer(load, 3, 0, &b), RIG_INVALID_ARGUMENT); /* nothing half-loaded */
      assert_null(b);
      assert_int_equal(rig_load_release(load), RIG_OK);
      rig_load_file_release(f);
      unlink(path);
    }
  rig_device_release(a);
}

/* The same from another thread, at whatever moment it lands, a few times over on each path: every load ends
 * loaded (the cut came after it) or refused naming the file; none dies. */
static void *cut_soon(void *arg) {
  shrinker *s = arg;
  usleep(200 + (useconds_t)(rand() % 3000));
  if (truncate(s->path, s->to) != 0) atomic_store(&s->failed, 1);
  return NULL;
}
static void a_file_cut_by_another_thread_mid_load_never_kills_the_process(void **state) {
  (void)state;
  rig_device a;
  rig_memory_device("A", &a);
  size_t big[] = {4 << 20, 4 << 20, 4 << 20, 4 << 20};
  int refused = 0;
  for (int round = 0; round < 16; ++round) {
    const char *path = tw_path("cut");
    tw_safetensors_u8(path, big, 4);
    rig_load_file f = open_file(path);
    shrinker sh = {path, (off_t)(round % 2 ? 5 << 20 : 4096)};
    rig_load_options o = options(round % 4 < 2 ? RIG_LOAD_PATH_DIRECT : RIG_LOAD_PATH_STAGED);
    rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
    rig_load load;
    assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
    pthread_t cutter;
    assert_int_equal(pthread_create(&cutter, NULL, cut_soon, &sh), 0);
    rig_status s = rig_load_wait(load);
    pthread_join(cutter, NULL);
    assert_false(atomic_load(&sh.failed));
    if (s != RIG_OK) {
      expect_shrunk(s, path, "cut by another thread");
      ++refused;
    }
    assert_int_equal(rig_load_release(load), RIG_OK);
    rig_load_file_release(f);
    unlink(path);
  }
  print_message("%d of 16 loads were cut while they ran\n", refused);
  rig_device_release(a);
}

static void a_cancelled_load_answers_interrupted_and_hands_out_nothing_more(void **state) {
  (void)state;
  fail_midway(1, RIG_INTERRUPTED, "cancelled");
}
static void a_device_lost_midway_fails_the_load_and_other_devices_buffers_stay(void **state) {
  (void)state;
  fail_midway(2, RIG_LOST, "lost in the test");
}

static void device_memory_running_out_halfway_releases_everything(void **state) {
  (void)state;
  /* A sparse file: tensor 0 of 4 KiB, then a 1 TiB tensor no host can allocate. */
  const char *path = tw_path("sparse");
  char json[256];
  snprintf(json, sizeof json,
           "{\"a\":{\"dtype\":\"U8\",\"shape\":[4096],\"data_offsets\":[0,4096]},"
           "\"b\":{\"dtype\":\"U8\",\"shape\":[1099511627776],\"data_offsets\":[4096,1099511631872]}}");
  tw_safetensors_json(path, json, strlen(json), 4096);
  if (truncate(path, (off_t)(8 + strlen(json) + 4096 + (1ull << 40))) != 0) {
    skip(); /* a file system without sparse files of that size: visible as skipped */
  }
  rig_device a;
  rig_memory_device("A", &a);
  rig_load_file f = open_file(path);
  rig_load_options o = options(RIG_LOAD_PATH_STAGED);
  o.chunk_bytes = 8 << 20;
  o.threads = 1;
  rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
  rig_load load;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  assert_int_equal(rig_load_wait(load), RIG_OUT_OF_MEMORY);
  rig_buffer b = NULL;
  assert_int_equal(rig_load_buffer(load, 1, 0, &b), RIG_OUT_OF_MEMORY);
  assert_int_equal(rig_load_buffer(load, 0, 0, &b), RIG_OUT_OF_MEMORY); /* nothing handed out after */
  assert_null(b);
  rig_load_release(load);
  rig_load_file_release(f);
  rig_device_release(a);
  unlink(path);
}

static void a_read_error_fails_the_load_with_the_systems_words(void **state) {
  (void)state;
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device a;
  rig_memory_device("A", &a);
  rig_load_file f = open_file(path);
  rig_load_options o = options(RIG_LOAD_PATH_STAGED);
  o.threads = 2;
  rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
  rig_load load;
  atomic_store(&reads_left, 3);
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  rig_status s = rig_load_wait(load);
  atomic_store(&reads_left, -1);
  assert_int_equal(s, RIG_DRIVER);
  assert_non_null(strstr(rig_last_error(), "Input/output error"));
  rig_buffer b = NULL;
  assert_int_equal(rig_load_buffer(load, COUNT - 1, 0, &b), RIG_DRIVER);
  rig_load_release(load);
  rig_load_file_release(f);
  rig_device_release(a);
  unlink(path);
}

/* A load released by one thread while others wait on it and take its buffers: each of them returns (OK,
 * INTERRUPTED, or INVALID_HANDLE once the handle is gone), nothing is freed under them (ASan, TSan). */
struct racer {
  rig_load load;
  rig_status waited, took;
};
static void *race_wait(void *arg) {
  struct racer *r = arg;
  r->waited = rig_load_wait(r->load);
  rig_buffer b;
  r->took = rig_load_buffer(r->load, 3, 0, &b);
  if (r->took == RIG_OK) rig_buffer_release(b);
  return NULL;
}
static int ended(rig_status s) { return s == RIG_OK || s == RIG_INTERRUPTED || s == RIG_INVALID_HANDLE; }
static void releasing_a_load_others_wait_on_is_safe(void **state) {
  (void)state;
  const char *path = tw_path("weights-race");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device a;
  rig_memory_device("race", &a);
  rig_load_file f = open_file(path);
  for (int round = 0; round < 20; ++round) {
    rig_load_options o = options(RIG_LOAD_PATH_STAGED);
    rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
    struct racer r[3];
    pthread_t t[3];
    rig_load load;
    assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
    for (int i = 0; i < 3; ++i) {
      r[i].load = load;
      assert_int_equal(pthread_create(&t[i], NULL, race_wait, &r[i]), 0);
    }
    if (round % 2) usleep(100);
    assert_int_equal(rig_load_release(load), RIG_OK);
    for (int i = 0; i < 3; ++i) {
      pthread_join(t[i], NULL);
      assert_true(ended(r[i].waited));
      assert_true(ended(r[i].took));
    }
    assert_int_equal(rig_load_wait(load), RIG_INVALID_HANDLE);
  }
  rig_load_file_release(f);
  assert_int_equal(rig_load_tensor_count(f, &(size_t){0}), RIG_INVALID_HANDLE);
  rig_device_release(a);
  unlink(path);
}

static void a_kept_pool_serves_later_loads_and_is_refused_to_two_at_once(void **state) {
  (void)state;
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device a;
  rig_memory_device("A", &a);
  rig_load_file f = open_file(path);
  rig_load_pool pool;
  assert_int_equal(rig_load_pool_create(a, 4 << 20, 1 << 20, &pool), RIG_OK);
  rig_load_options o = options(RIG_LOAD_PATH_STAGED);
  o.pools = &pool;
  o.pool_count = 1;
  rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
  for (int r = 0; r < 2; ++r) {
    rig_load load;
    assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
    assert_int_equal(rig_load_wait(load), RIG_OK);
    expect_all_equal(load, f, path, 0);
    rig_load_stats st = tw_stats(load);
    /* the pool grows behind its first piece: a load that ends early counts only the pieces made by then */
    assert_true(st.staging_bytes >= 1 << 20 && st.staging_bytes <= 4 << 20 && st.staging_bytes % (1 << 20) == 0);
    rig_load_release(load);
  }
  /* held by a running load: a second load and a release are refused */
  trigger t = {0};
  t.action = 3;
  o.progress = on_progress;
  o.progress_user = &t;
  rig_load load, other;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &other), RIG_BUSY);
  assert_int_equal(rig_load_pool_release(pool), RIG_BUSY);
  atomic_store(&t.go, 1);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  rig_load_release(load);
  assert_int_equal(rig_load_pool_release(pool), RIG_OK);
  assert_int_equal(rig_load_pool_release(pool), RIG_INVALID_HANDLE);
  rig_load_file_release(f);
  rig_device_release(a);
  unlink(path);
}

/* A kept pool grows behind its first piece: released while its thread still registers the rest (64 MiB in
 * 64 KiB chunks, four pieces), and released while a load that started at once still runs through it, it
 * stops its growth and goes without a leak or a wait past one piece (the sanitizer and valgrind steps hold
 * the leak; the loads hold the bytes). */
static void a_kept_pool_growing_behind_is_used_and_released_midway(void **state) {
  (void)state;
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device a;
  rig_memory_device("A", &a);
  rig_load_file f = open_file(path);
  for (int round = 0; round < 8; ++round) {
    rig_load_pool pool;
    assert_int_equal(rig_load_pool_create(a, 64 << 20, 64 << 10, &pool), RIG_OK);
    if (round % 2) { /* a load at once, on whatever pieces have landed */
      rig_load_options o = options(RIG_LOAD_PATH_STAGED);
      o.pools = &pool;
      o.pool_count = 1;
      rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
      rig_load load;
      assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
      assert_int_equal(rig_load_wait(load), RIG_OK);
      expect_all_equal(load, f, path, 0);
      rig_load_stats st = tw_stats(load);
      assert_true(st.staging_bytes >= 16 << 20 && st.staging_bytes <= 64 << 20);
      rig_load_release(load);
    }
    assert_int_equal(rig_load_pool_release(pool), RIG_OK);
  }
  rig_load_file_release(f);
  rig_device_release(a);
  unlink(path);
}

/* A load that stops midway hands every staging chunk back to a kept pool: the chunks its readers had
 * filled but the copier had not submitted yet too. Small chunks and four readers leave several filled and
 * unsubmitted when the cancel comes; the next loads through the same pool still find every chunk (a chunk
 * lost would leave them waiting for it). */
static void a_stopped_load_gives_a_kept_pool_back_every_chunk(void **state) {
  (void)state;
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, COUNT);
  rig_device a;
  rig_memory_device("A", &a);
  rig_load_file f = open_file(path);
  rig_load_pool pool;
  assert_int_equal(rig_load_pool_create(a, 8 * (64 << 10), 64 << 10, &pool), RIG_OK);
  rig_load_placement p = placement(&a, 1, RIG_LOAD_RULE_EACH, NULL);
  for (int round = 0; round < 3; ++round) {
    trigger t = {0};
    t.action = 1;
    rig_load_options o = options(RIG_LOAD_PATH_STAGED);
    o.pools = &pool;
    o.pool_count = 1;
    o.threads = 4;
    o.chunk_bytes = 64 << 10;
    o.progress = on_progress;
    o.progress_user = &t;
    o.cancel = &t.cancel;
    rig_load load;
    assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
    usleep(20000); /* the readers fill what the pool has while the copier is held in the callback */
    atomic_store(&t.go, 1);
    assert_int_equal(rig_load_wait(load), RIG_INTERRUPTED);
    rig_load_release(load);
    rig_load_options whole = options(RIG_LOAD_PATH_STAGED);
    whole.pools = &pool;
    whole.pool_count = 1;
    whole.threads = 4;
    whole.chunk_bytes = 64 << 10;
    assert_int_equal(rig_load_start(f, NULL, 0, &p, &whole, &load), RIG_OK);
    assert_int_equal(rig_load_wait(load), RIG_OK);
    expect_all_equal(load, f, path, 0);
    rig_load_release(load);
  }
  assert_int_equal(rig_load_pool_release(pool), RIG_OK);
  rig_load_file_release(f);
  rig_device_release(a);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_tensor_equals_the_file_on_every_path),
      cmocka_unit_test(two_devices_read_each_byte_once_and_copy_device_to_device),
      cmocka_unit_test(bad_placements_and_options_are_refused_before_any_read),
      cmocka_unit_test(a_file_changed_during_the_load_fails_it),
      cmocka_unit_test(a_file_shrinking_under_a_load_fails_it_never_with_a_signal),
      cmocka_unit_test(a_file_cut_by_another_thread_mid_load_never_kills_the_process),
      cmocka_unit_test(a_cancelled_load_answers_interrupted_and_hands_out_nothing_more),
      cmocka_unit_test(a_stopped_load_gives_a_kept_pool_back_every_chunk),
      cmocka_unit_test(a_kept_pool_growing_behind_is_used_and_released_midway),
      cmocka_unit_test(a_device_lost_midway_fails_the_load_and_other_devices_buffers_stay),
      cmocka_unit_test(device_memory_running_out_halfway_releases_everything),
      cmocka_unit_test(a_read_error_fails_the_load_with_the_systems_words),
      cmocka_unit_test(a_kept_pool_serves_later_loads_and_is_refused_to_two_at_once),
      cmocka_unit_test(releasing_a_load_others_wait_on_is_safe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
