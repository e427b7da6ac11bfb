/* Tensor-parallel slices (rig_load.h): a placement gives each of two devices a slice of a tensor, rows or
 * columns, by the rule form (rig_load_split) and the per-tensor form (rig_load_slice). Every slice equals the
 * file's tensor sliced by hand (the bytes computed here from the file, index by index), and the file's bytes
 * are read once each: counted by rig_load_stats.bytes_read and by this executable's pread, which replaces
 * libc's for librig and records every byte of the weights file read. Bad slices answer RIG_INVALID_ARGUMENT
 * naming the tensor. Run on two memory devices, and on the two GPUs named on the command line (the fake
 * libcuda's cuda:0 and cuda:1: tests/load/meson.build). */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "weights.h"

static rig_device dev[2];
static const char *path;

/* Every byte of the weights file read by pread, counted (reads of other files pass through). */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static ino_t counted_ino;
static dev_t counted_dev;
static unsigned char *reads; /* per byte of the file: how many times read */
static size_t reads_len;
ssize_t test_pread64(int fd, void *buf, size_t n, off_t off) __asm__("pread64");
ssize_t test_pread(int fd, void *buf, size_t n, off_t off) __asm__("pread");
ssize_t test_pread64(int fd, void *buf, size_t n, off_t off) {
  ssize_t got = syscall(SYS_pread64, fd, buf, n, off);
  struct stat st;
  if (got > 0 && reads && fstat(fd, &st) == 0 && st.st_ino == counted_ino && st.st_dev == counted_dev) {
    pthread_mutex_lock(&count_lock);
    for (off_t i = off; i < off + got && (size_t)i < reads_len; ++i)
      if (reads[i] < 255) reads[i]++;
    pthread_mutex_unlock(&count_lock);
  }
  return got;
}
ssize_t test_pread(int fd, void *buf, size_t n, off_t off) { return test_pread64(fd, buf, n, off); }

static void count_reads_of(const char *file) {
  struct stat st;
  assert_int_equal(stat(file, &st), 0);
  pthread_mutex_lock(&count_lock);
  free(reads);
  reads_len = (size_t)st.st_size;
  reads = calloc(reads_len, 1);
  counted_ino = st.st_ino;
  counted_dev = st.st_dev;
  pthread_mutex_unlock(&count_lock);
}

/* Bytes [from, to) of the counted file were each read exactly `times` times. */
static void expect_read(uint64_t from, uint64_t to, int times) {
  for (uint64_t i = from; i < to; ++i)
    if (reads[i] != times) fail_msg("byte %llu of the file was read %d times, not %d", (unsigned long long)i, reads[i], times);
}

/* The file's tensors: BF16 [37, 1000] split by columns, F32 [1001, 33] by rows (501 and 500: not divisible),
 * U8 [3, 5, 7] along its middle dim, an F32 norm [64] no split names (placed whole on both by the rule). */
#define COL 0
#define ROW 1
#define CUBE 2
#define NORM 3
static const char *names[] = {"model.col.w", "model.row.w", "model.cube.w", "model.norm"};
static void write_weights(const char *file) {
  char json[1024];
  snprintf(json, sizeof json,
           "{\"model.col.w\":{\"dtype\":\"BF16\",\"shape\":[37,1000],\"data_offsets\":[0,74000]},"
           "\"model.row.w\":{\"dtype\":\"F32\",\"shape\":[1001,33],\"data_offsets\":[74000,206132]},"
           "\"model.cube.w\":{\"dtype\":\"U8\",\"shape\":[3,5,7],\"data_offsets\":[206132,206237]},"
           "\"model.norm\":{\"dtype\":\"F32\",\"shape\":[64],\"data_offsets\":[206237,206493]}}");
  tw_safetensors_json(file, json, strlen(json), 206493);
}

static size_t index_of(rig_load_file f, int which) {
  size_t i;
  assert_int_equal(rig_load_find(f, names[which], &i), RIG_OK);
  return i;
}

/* The bytes of [start, end) along `dim` of tensor `t`, computed from the file index by index (an outer index
 * at a time, as numpy's t[..., start:end, ...] copied out): `unit` is one index's bytes along the dim. */
static unsigned char *expected_slice(const rig_load_tensor *t, uint32_t dim, uint64_t start, uint64_t end,
                                     uint64_t unit, size_t *length) {
  uint64_t outer = 1;
  for (uint32_t d = 0; d < dim; ++d) outer *= t->shape[d];
  *length = (size_t)(outer * (end - start) * unit);
  unsigned char *want = malloc(*length + 1), *p = want;
  for (uint64_t o = 0; o < outer; ++o)
    for (uint64_t i = start; i < end; ++i)
      for (uint64_t k = 0; k < unit; ++k)
        *p++ = tw_byte(t->offset + (o * t->shape[dim] + i) * unit + k);
  return want;
}

/* One index's bytes along `dim` of `t` (elements after it times the element's bytes). */
static uint64_t unit_of(const rig_load_tensor *t, uint32_t dim) {
  uint64_t elements = 1;
  for (uint32_t d = 0; d < t->rank; ++d) elements *= t->shape[d];
  uint64_t unit = t->length / elements;
  for (uint32_t d = dim + 1; d < t->rank; ++d) unit *= t->shape[d];
  return unit;
}

/* Tensor `index`'s part on `device` is the slice rig_load_slice_get names, equals [start, end) along `dim`
 * computed by hand, and the buffer's length is the slice's. */
static void expect_slice(rig_load load, rig_load_file f, size_t index, size_t device, uint32_t dim,
                         uint64_t start, uint64_t end) {
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  assert_int_equal(rig_load_tensor_get(f, index, &t), RIG_OK);
  rig_load_slice s;
  assert_int_equal(rig_load_slice_get(load, index, device, &s), RIG_OK);
  assert_int_equal(s.tensor, index);
  assert_int_equal(s.device, device);
  assert_int_equal(s.dim, dim);
  assert_int_equal(s.start, start);
  assert_int_equal(s.end, end);
  size_t length, got_length = 0;
  unsigned char *want = expected_slice(&t, dim, start, end, unit_of(&t, dim), &length);
  rig_buffer b;
  assert_int_equal(rig_load_buffer(load, index, device, &b), RIG_OK);
  assert_int_equal(rig_buffer_length(b, &got_length), RIG_OK);
  assert_int_equal(got_length, length);
  unsigned char *got = malloc(length + 1);
  assert_int_equal(rig_buffer_read_into(b, 0, got, length), RIG_OK);
  if (memcmp(got, want, length) != 0)
    fail_msg("tensor %zu on device %zu differs from [%llu, %llu) along dim %u of the file's", index, device,
             (unsigned long long)start, (unsigned long long)end, dim);
  free(got);
  free(want);
  rig_buffer_release(b);
}

static rig_load_placement two(rig_load_rule rule) { return tw_placement(dev, 2, rule, NULL); }

static rig_status start_wait(rig_load_file f, const rig_load_placement *p, rig_load_path path_kind, rig_load *load) {
  rig_load_options o = tw_options(path_kind, 64 << 10, 2);
  rig_status s = rig_load_start(f, NULL, 0, p, &o, load);
  if (s != RIG_OK) return s;
  s = rig_load_wait(*load);
  if (s != RIG_OK) {
    fprintf(stderr, "the load: %s\n", rig_last_error());
    rig_load_release(*load);
  }
  return s;
}

/* The rule form: columns, rows (not divisible: 501 and 500, as numpy.array_split cuts) and a middle dim, each
 * part equal to the file's slice; the unnamed norm whole on both. The file's data is read exactly once: the
 * columns gathered in staging chunk by chunk, never a byte outside a slice, never twice. */
static void a_split_rule_gives_each_device_its_part_read_once(void **state) {
  (void)state;
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load_split splits[] = {{"*.col.w", 1}, {"model.row.?", 0}, {"*cube*", 1}};
  rig_load_placement p = two(RIG_LOAD_RULE_EACH);
  p.splits = splits;
  p.split_count = 3;
  count_reads_of(path);
  rig_load load;
  assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_AUTO, &load), RIG_OK);
  rig_load_stats st = tw_stats(load);
  assert_int_equal(st.path, RIG_LOAD_PATH_STAGED); /* columns are gathered: staged whatever the verdict */
  assert_non_null(strstr(st.why, "gathered"));
  const uint64_t data = 206493;
  assert_int_equal(st.bytes_total, data);
  assert_int_equal(st.bytes_read, data);
  assert_int_equal(st.bytes_copied, data + 256); /* the norm: once more, device to device */
  struct stat file;
  assert_int_equal(stat(path, &file), 0);
  expect_read((uint64_t)file.st_size - data, (uint64_t)file.st_size, 1);
  expect_slice(load, f, index_of(f, COL), 0, 1, 0, 500);
  expect_slice(load, f, index_of(f, COL), 1, 1, 500, 1000);
  expect_slice(load, f, index_of(f, ROW), 0, 0, 0, 501);
  expect_slice(load, f, index_of(f, ROW), 1, 0, 501, 1001);
  expect_slice(load, f, index_of(f, CUBE), 0, 1, 0, 3);
  expect_slice(load, f, index_of(f, CUBE), 1, 1, 3, 5);
  expect_slice(load, f, index_of(f, NORM), 0, 0, 0, 64); /* whole: [0, shape[0]) */
  expect_slice(load, f, index_of(f, NORM), 1, 0, 0, 64);
  rig_load_release(load);
  rig_load_file_release(f);
}

/* Rows only: one range per part, so every path takes them: the staged path reads exactly the rows; the
 * windows (direct on memory devices, registered where the GPU's verdict allows it) copy each part's range. */
static void row_slices_load_on_every_path(void **state) {
  (void)state;
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load_split splits[] = {{"model.row.w", 0}, {"model.col.w", 0}};
  rig_load_path paths[] = {RIG_LOAD_PATH_STAGED, RIG_LOAD_PATH_AUTO, RIG_LOAD_PATH_DIRECT, RIG_LOAD_PATH_REGISTERED};
  int windows = 0;
  for (size_t k = 0; k < 4; ++k) {
    rig_load_placement p = two(RIG_LOAD_RULE_EACH);
    p.splits = splits;
    p.split_count = 2;
    rig_load load;
    rig_status s = start_wait(f, &p, paths[k], &load);
    if (s == RIG_UNSUPPORTED) continue; /* the devices' verdict refuses that path (rig_last_error says which) */
    assert_int_equal(s, RIG_OK);
    rig_load_stats st = tw_stats(load);
    windows += st.path != RIG_LOAD_PATH_STAGED;
    if (st.path == RIG_LOAD_PATH_STAGED) assert_int_equal(st.bytes_read, st.bytes_total);
    expect_slice(load, f, index_of(f, ROW), 0, 0, 0, 501);
    expect_slice(load, f, index_of(f, ROW), 1, 0, 501, 1001);
    expect_slice(load, f, index_of(f, COL), 0, 0, 0, 19);
    expect_slice(load, f, index_of(f, COL), 1, 0, 19, 37);
    rig_load_release(load);
  }
  assert_true(windows > 0); /* memory devices read the mapping (direct); the fake's GPUs register it (its probe: Usable) */
  rig_load_file_release(f);
}

/* The per-tensor form: the cube's columns of its last dim [0, 4) on device 0, its rows [1, 3) on device 1
 * (different dims, overlapping bytes: each read for its own slice); the columns' tensor split by the rule
 * alongside; tensors neither names go by the rule (masks: the norm on device 1 only). */
static void per_tensor_slices_with_their_own_dims(void **state) {
  (void)state;
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  size_t cube = index_of(f, CUBE), norm = index_of(f, NORM), col = index_of(f, COL), row = index_of(f, ROW);
  size_t selected[] = {cube, norm, col};
  uint64_t masks[] = {0, 2, 0}; /* sliced tensors' masks are not read */
  rig_load_slice slices[] = {{cube, 0, 2, 0, 4}, {cube, 1, 0, 1, 3}};
  rig_load_split splits[] = {{"model.col.w", 1}};
  rig_load_placement p = tw_placement(dev, 2, RIG_LOAD_RULE_MASKS, masks);
  p.slices = slices;
  p.slice_count = 2;
  p.splits = splits;
  p.split_count = 1;
  rig_load_options o = tw_options(RIG_LOAD_PATH_STAGED, 64 << 10, 2);
  count_reads_of(path);
  rig_load load;
  assert_int_equal(rig_load_start(f, selected, 3, &p, &o, &load), RIG_OK);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  rig_load_stats st = tw_stats(load);
  assert_int_equal(st.bytes_total, 3 * 5 * 4 + 2 * 5 * 7 + 256 + 74000);
  assert_int_equal(st.bytes_read, st.bytes_total);
  expect_slice(load, f, cube, 0, 2, 0, 4);
  expect_slice(load, f, cube, 1, 0, 1, 3);
  expect_slice(load, f, norm, 1, 0, 0, 64);
  expect_slice(load, f, col, 0, 1, 0, 500);
  expect_slice(load, f, col, 1, 1, 500, 1000);
  rig_buffer b;
  rig_load_slice s;
  assert_int_equal(rig_load_buffer(load, norm, 0, &b), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_slice_get(load, norm, 0, &s), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_buffer(load, row, 0, &b), RIG_INVALID_ARGUMENT); /* not selected */
  assert_int_equal(rig_load_slice_get(load, row, 0, &s), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_slice_get(load, cube, 0, NULL), RIG_INVALID_ARGUMENT);
  rig_load_release(load);
  assert_int_equal(rig_load_slice_get(load, cube, 0, &s), RIG_INVALID_HANDLE); /* released */
  rig_load_file_release(f);
}

/* Every bad slice is refused by rig_load_start with RIG_INVALID_ARGUMENT, its message naming the tensor. */
static void bad_slices_are_refused_naming_the_tensor(void **state) {
  (void)state;
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  size_t cube = index_of(f, CUBE);
  struct {
    rig_load_slice slice;
    const char *words;
  } per_tensor[] = {
      {{cube, 0, 0, 2, 2}, "model.cube.w"},   /* start >= end */
      {{cube, 0, 0, 2, 1}, "model.cube.w"},   /* start > end */
      {{cube, 0, 1, 0, 6}, "model.cube.w"},   /* end past the dim (5) */
      {{cube, 0, 3, 0, 1}, "model.cube.w"},   /* dim past the rank (3) */
      {{cube, 2, 0, 0, 1}, "placement device 2"},
      {{99, 0, 0, 0, 1}, "tensor 99"},
  };
  rig_load load;
  for (size_t i = 0; i < sizeof per_tensor / sizeof per_tensor[0]; ++i) {
    rig_load_placement p = two(RIG_LOAD_RULE_EACH);
    p.slices = &per_tensor[i].slice;
    p.slice_count = 1;
    assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_STAGED, &load), RIG_INVALID_ARGUMENT);
    if (!strstr(rig_last_error(), per_tensor[i].words))
      fail_msg("case %zu: '%s' does not name '%s'", i, rig_last_error(), per_tensor[i].words);
  }
  rig_load_slice twice[] = {{cube, 1, 0, 0, 1}, {cube, 1, 0, 1, 2}};
  rig_load_placement p = two(RIG_LOAD_RULE_EACH);
  p.slices = twice;
  p.slice_count = 2;
  assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_STAGED, &load), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "second slice"));
  struct {
    rig_load_split split;
    const char *words;
  } rules[] = {
      {{"model.norm", 1}, "model.norm"},  /* dim past the rank */
      {{"*cube*", 7}, "model.cube.w"},
  };
  for (size_t i = 0; i < 2; ++i) {
    p = two(RIG_LOAD_RULE_EACH);
    p.splits = &rules[i].split;
    p.split_count = 1;
    assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_STAGED, &load), RIG_INVALID_ARGUMENT);
    assert_non_null(strstr(rig_last_error(), rules[i].words));
  }
  p = two(RIG_LOAD_RULE_EACH);
  p.slices = NULL;
  p.slice_count = 1;
  assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_STAGED, &load), RIG_INVALID_ARGUMENT);
  /* A caller built before the slices passes the placement's first size: it slices nothing. */
  rig_load_split all[] = {{"*", 0}};
  p = two(RIG_LOAD_RULE_EACH);
  p.size = offsetof(rig_load_placement, splits);
  p.splits = all;
  p.split_count = 1;
  assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_STAGED, &load), RIG_OK);
  assert_true(tw_tensor_as_file(load, f, path, cube, 1));
  rig_load_release(load);
  rig_load_file_release(f);
  /* A dim shorter than the devices: a one-byte range cannot be split over two. */
  rig_load_range one = {"one.byte", 0, 1};
  assert_int_equal(rig_load_open_raw(path, &one, 1, &f), RIG_OK);
  p = two(RIG_LOAD_RULE_EACH);
  p.splits = all;
  p.split_count = 1;
  assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_STAGED, &load), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "one.byte"));
  rig_load_file_release(f);
}

/* A GGUF Q4_0 tensor (32 elements a block of 18 bytes; shape [4, 64]: two blocks a row) splits along its
 * rows' elements only at whole blocks: [0, 32) and [32, 64) load as each row's first and second block;
 * [0, 16) is refused naming the tensor and its type. */
static void quantized_tensors_split_only_at_whole_blocks(void **state) {
  (void)state;
  tw_bytes b = {0};
  tw_put(&b, "GGUF", 4);
  tw_u32(&b, 3);
  tw_u64(&b, 1);
  tw_u64(&b, 0);
  tw_str(&b, "blk.0.q", 7);
  tw_u32(&b, 2);
  tw_u64(&b, 64);
  tw_u64(&b, 4);
  tw_u32(&b, 2); /* Q4_0 */
  tw_u64(&b, 0);
  tw_data(&b, 32, 4 * 2 * 18);
  const char *q = tw_path("slices.gguf");
  tw_write(q, &b);
  free(b.data);
  rig_load_file f;
  assert_int_equal(rig_load_open(q, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load_split split = {"blk.*", 1};
  rig_load_placement p = two(RIG_LOAD_RULE_EACH);
  p.splits = &split;
  p.split_count = 1;
  rig_load load;
  assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_AUTO, &load), RIG_OK);
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  assert_int_equal(rig_load_tensor_get(f, 0, &t), RIG_OK);
  for (size_t d = 0; d < 2; ++d) {
    rig_buffer buf;
    assert_int_equal(rig_load_buffer(load, 0, d, &buf), RIG_OK);
    unsigned char got[4 * 18];
    size_t length = 0;
    assert_int_equal(rig_buffer_length(buf, &length), RIG_OK);
    assert_int_equal(length, sizeof got);
    assert_int_equal(rig_buffer_read_into(buf, 0, got, sizeof got), RIG_OK);
    for (size_t row = 0; row < 4; ++row)
      for (size_t k = 0; k < 18; ++k)
        assert_int_equal(got[row * 18 + k], tw_byte(t.offset + row * 36 + d * 18 + k));
    rig_buffer_release(buf);
  }
  rig_load_release(load);
  rig_load_slice half_block = {0, 0, 1, 0, 16};
  p = two(RIG_LOAD_RULE_EACH);
  p.slices = &half_block;
  p.slice_count = 1;
  assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_STAGED, &load), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "blk.0.q"));
  assert_non_null(strstr(rig_last_error(), "Q4_0"));
  rig_load_slice rows = {0, 0, 0, 1, 3}; /* along dim 0: whole rows, any count */
  p.slices = &rows;
  assert_int_equal(start_wait(f, &p, RIG_LOAD_PATH_STAGED, &load), RIG_OK);
  rig_buffer buf;
  assert_int_equal(rig_load_buffer(load, 0, 0, &buf), RIG_OK);
  assert_true(tw_same_as_file(buf, q, t.offset + 36, 72));
  rig_buffer_release(buf);
  rig_load_release(load);
  rig_load_file_release(f);
  unlink(q);
}

int main(int argc, char **argv) {
  for (int i = 0; i < 2; ++i) {
    rig_status s = argc > 2 ? rig_device_open(argv[1 + i], &dev[i]) : rig_memory_device(i ? "B" : "A", &dev[i]);
    if (s != RIG_OK) {
      fprintf(stderr, "device %s did not open: %s\n", argc > 2 ? argv[1 + i] : "memory", rig_last_error());
      return 1;
    }
  }
  path = tw_path("slices");
  write_weights(path);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_split_rule_gives_each_device_its_part_read_once),
      cmocka_unit_test(row_slices_load_on_every_path),
      cmocka_unit_test(per_tensor_slices_with_their_own_dims),
      cmocka_unit_test(bad_slices_are_refused_naming_the_tensor),
      cmocka_unit_test(quantized_tensors_split_only_at_whole_blocks),
  };
  int failed = cmocka_run_group_tests_name(argc > 2 ? argv[1] : "memory devices", tests, NULL, NULL);
  rig_device_release(dev[0]);
  rig_device_release(dev[1]);
  unlink(path);
  free(reads);
  return failed;
}
