/* Checkpoints, not files: a sharded safetensors checkpoint (its index, or the directory holding it) and a
 * split GGUF set open as one table and load byte for byte equal to the same tensors in one file, on every
 * path memory devices take; a shard missing, a tensor in two shards, an index and its shards that disagree
 * answer a status naming the file; metadata reads back. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rig_testing.h>

#include "weights.h"

/* Twelve tensors, three a shard, of lengths that cross chunk boundaries. */
#define TENSORS 12
#define SHARDS 4
static const size_t lengths[TENSORS] = {1, 70000, 300000, 0, 5000, (1 << 20) + 3, 4096, 17, 200000, 8, 65536, 131071};

/* Writes tensors [first, first+n) as a safetensors file (names "t.NN", U8), with `meta` as __metadata__. */
static void write_safetensors(const char *path, size_t first, size_t n, const char *meta) {
  char json[4096];
  size_t at = 0, off = 0;
  at += (size_t)snprintf(json + at, sizeof json - at, "{\"__metadata__\":%s", meta);
  for (size_t i = first; i < first + n; ++i) {
    at += (size_t)snprintf(json + at, sizeof json - at, ",\"t.%02zu\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}",
                           i, lengths[i], off, off + lengths[i]);
    off += lengths[i];
  }
  snprintf(json + at, sizeof json - at, "}");
  /* each tensor's bytes a function of the tensor, not of where it lies: equal in any file that holds it */
  tw_bytes b = {0};
  uint64_t header = strlen(json);
  tw_u64(&b, header);
  tw_put(&b, json, header);
  for (size_t i = first; i < first + n; ++i)
    for (size_t j = 0; j < lengths[i]; ++j) {
      uint8_t c = tw_byte(i * 1000003u + j);
      tw_put(&b, &c, 1);
    }
  tw_write(path, &b);
  free(b.data);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* A checkpoint directory: shards model-0000K-of-00004.safetensors and model.safetensors.index.json, whose
 * weight_map is `extra` plus every tensor but `leave_out` (a name, or null). */
static const char *write_checkpoint(const char *extra, const char *leave_out) {
  const char *dir = tw_path("ckpt");
  mkdir(dir, 0755);
  char path[600], map[4096];
  size_t at = (size_t)snprintf(map, sizeof map, "{\"metadata\":{\"total_size\":123,\"note\":\"sharded\"},\"weight_map\":{%s", extra);
  for (int s = 0; s < SHARDS; ++s) {
    snprintf(path, sizeof path, "%s/model-%05d-of-%05d.safetensors", dir, s + 1, SHARDS);
    write_safetensors(path, (size_t)s * 3, 3, s == 0 ? "{\"format\":\"pt\",\"note\":\"shard\"}" : "{}");
    for (int i = s * 3; i < s * 3 + 3; ++i) {
      char name[16];
      snprintf(name, sizeof name, "t.%02d", i);
      if (leave_out && strcmp(name, leave_out) == 0) continue;
      at += (size_t)snprintf(map + at, sizeof map - at, "%s\"%s\":\"model-%05d-of-%05d.safetensors\"",
                             at && map[at - 1] == '{' ? "" : ",", name, s + 1, SHARDS);
    }
  }
  snprintf(map + at, sizeof map - at, "}}");
  snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
  write_text(path, map);
  return dir;
}

/* Removes a directory the test wrote and the files in it. */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char path[1024];
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

static const char *index_of(const char *dir) {
  static char path[600];
  snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
  return path;
}

/* Tensor `i` of a load as host bytes (malloc'd). */
static unsigned char *loaded(rig_load load, size_t i, size_t length) {
  rig_buffer b;
  assert_int_equal(rig_load_buffer(load, i, 0, &b), RIG_OK);
  unsigned char *bytes = malloc(length + 1);
  assert_int_equal(rig_buffer_read_into(b, 0, bytes, length), RIG_OK);
  rig_buffer_release(b);
  return bytes;
}

/* Bytes [offset, offset+length) of the file at `path`. */
static unsigned char *file_bytes(const char *path, uint64_t offset, size_t length) {
  unsigned char *bytes = malloc(length + 1);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, (long)offset, SEEK_SET), 0);
  assert_int_equal(fread(bytes, 1, length, f), length);
  fclose(f);
  return bytes;
}

static rig_load load_all(rig_load_file f, rig_device d, const rig_load_options *o) {
  rig_load_placement p = tw_placement(&d, 1, RIG_LOAD_RULE_EACH, NULL);
  rig_load load;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, o, &load), RIG_OK);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  return load;
}

static rig_load_tensor tensor(rig_load_file f, size_t i) {
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  assert_int_equal(rig_load_tensor_get(f, i, &t), RIG_OK);
  return t;
}

static void a_four_shard_checkpoint_loads_equal_to_one_file_on_every_path(void **state) {
  (void)state;
  const char *one = tw_path("one.safetensors");
  write_safetensors(one, 0, TENSORS, "{}");
  const char *dir = write_checkpoint("", NULL);
  rig_device d;
  rig_memory_device("A", &d);
  rig_load_file single, by_index, by_dir;
  assert_int_equal(rig_load_open(one, RIG_LOAD_FORMAT_AUTO, &single), RIG_OK);
  assert_int_equal(rig_load_open(index_of(dir), RIG_LOAD_FORMAT_AUTO, &by_index), RIG_OK);
  assert_int_equal(rig_load_open(dir, RIG_LOAD_FORMAT_AUTO, &by_dir), RIG_OK);
  size_t n1, n2, n3, shards;
  rig_load_tensor_count(single, &n1);
  rig_load_tensor_count(by_index, &n2);
  rig_load_tensor_count(by_dir, &n3);
  assert_int_equal(n1, TENSORS);
  assert_int_equal(n2, TENSORS);
  assert_int_equal(n3, TENSORS);
  assert_int_equal(rig_load_shard_count(by_index, &shards), RIG_OK);
  assert_int_equal(shards, SHARDS);
  /* one table: each tensor knows its shard, and its offset is in that shard's file */
  for (size_t i = 0; i < TENSORS; ++i) {
    rig_load_tensor a = tensor(single, i), b = tensor(by_index, i);
    assert_string_equal(a.name, b.name);
    assert_int_equal(a.length, b.length);
    assert_int_equal(a.shard, 0);
    assert_int_equal(b.shard, i / 3);
    const char *shard_path;
    uint64_t shard_bytes;
    assert_int_equal(rig_load_shard_get(by_index, b.shard, &shard_path, &shard_bytes), RIG_OK);
    assert_true(b.offset + b.length <= shard_bytes);
  }
  struct { rig_load_path path; rig_load_io io; } paths[] = {
      {RIG_LOAD_PATH_STAGED, RIG_LOAD_IO_BUFFERED}, {RIG_LOAD_PATH_STAGED, RIG_LOAD_IO_DIRECT},
      {RIG_LOAD_PATH_DIRECT, RIG_LOAD_IO_BUFFERED}, {RIG_LOAD_PATH_AUTO, RIG_LOAD_IO_AUTO}};
  for (size_t k = 0; k < sizeof paths / sizeof paths[0]; ++k) {
    rig_load_options o = tw_options(paths[k].path, 64 << 10, 3);
    o.io = paths[k].io;
    rig_load a = load_all(single, d, &o), b = load_all(by_index, d, &o);
    rig_load_stats st = tw_stats(b);
    if (paths[k].path == RIG_LOAD_PATH_STAGED) assert_int_equal(st.bytes_read >= st.bytes_total, 1);
    /* O_DIRECT through each shard's descriptor, where the file system takes it */
    if (paths[k].io == RIG_LOAD_IO_DIRECT && !strstr(st.why, "refused O_DIRECT")) assert_int_equal(st.direct_io, 1);
    for (size_t i = 0; i < TENSORS; ++i) {
      rig_load_tensor t = tensor(by_index, i);
      const char *shard_path;
      assert_int_equal(rig_load_shard_get(by_index, t.shard, &shard_path, NULL), RIG_OK);
      unsigned char *x = loaded(a, i, t.length), *y = loaded(b, i, t.length), *z = file_bytes(shard_path, t.offset, t.length);
      if (memcmp(x, y, t.length) || memcmp(y, z, t.length))
        fail_msg("path %zu: tensor %s differs between the sharded checkpoint and the single file", k, t.name);
      free(x), free(y), free(z);
    }
    rig_load_release(a);
    rig_load_release(b);
  }
  rig_load_file_release(single);
  rig_load_file_release(by_index);
  rig_load_file_release(by_dir);
  rig_device_release(d);
  unlink(one);
  remove_dir(dir);
}

/* rig_load_open answers `status` with a message holding `words`. */
static void refused(const char *path, rig_status status, const char *words) {
  rig_load_file f;
  rig_status s = rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f);
  if (s != status || !strstr(rig_last_error(), words))
    fail_msg("%s: status %d, message '%s'; wanted %d and '%s'", path, (int)s, rig_last_error(), (int)status, words);
}

static void a_checkpoint_that_disagrees_with_its_index_is_refused_naming_the_file(void **state) {
  (void)state;
  char path[700];
  const char *dir = write_checkpoint("", NULL);
  snprintf(path, sizeof path, "%s/model-00003-of-00004.safetensors", dir);
  unlink(path);
  refused(index_of(dir), RIG_NOT_FOUND, "model-00003-of-00004.safetensors");
  remove_dir(dir);
  dir = write_checkpoint("\"ghost\":\"model-00002-of-00004.safetensors\"", NULL);
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "'ghost'");
  remove_dir(dir);
  dir = write_checkpoint("", "t.07");
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "does not name");
  refused(dir, RIG_INVALID_ARGUMENT, "t.07");
  remove_dir(dir);
  dir = write_checkpoint("", NULL);  /* a tensor in two shards */
  snprintf(path, sizeof path, "%s/model-00002-of-00004.safetensors", dir);
  write_safetensors(path, 2, 4, "{}");  /* t.02 is shard 1's too */
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "appears in both");
  remove_dir(dir);
  dir = write_checkpoint("\"up\":\"../x.safetensors\"", NULL);
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "not a file beside the index");
  remove_dir(dir);
  dir = write_checkpoint("", NULL);
  write_text(index_of(dir), "[1, 2]");
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "not a JSON object");
  write_text(index_of(dir), "{\"weight_map\": {\"t.00\": 3}}");
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "other than a file name");
  write_text(index_of(dir), "{\"weight_map\": ");
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "not valid JSON");
  remove_dir(dir);
}

/* Every file a checkpoint opens is checked as a regular file before anything waits on it: a shard, the
 * index, the file a directory holds; a FIFO there is refused at once (with no writer, an open that waited
 * would never return), saying what it is. The directory itself is a checkpoint's place, not refused. */
static void a_fifo_in_a_checkpoint_is_refused_before_anything_blocks(void **state) {
  (void)state;
  char path[700];
  const char *dir = write_checkpoint("", NULL);
  snprintf(path, sizeof path, "%s/model-00002-of-00004.safetensors", dir);
  unlink(path);
  assert_int_equal(mkfifo(path, 0600), 0);
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "is a FIFO");
  refused(dir, RIG_INVALID_ARGUMENT, "model-00002-of-00004.safetensors");
  remove_dir(dir);
  dir = write_checkpoint("", NULL);
  unlink(index_of(dir));
  assert_int_equal(mkfifo(index_of(dir), 0600), 0);
  refused(index_of(dir), RIG_INVALID_ARGUMENT, "is a FIFO");
  refused(dir, RIG_INVALID_ARGUMENT, "is a FIFO");
  remove_dir(dir);
  dir = tw_path("ckpt");
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  refused(dir, RIG_INVALID_ARGUMENT, "is a FIFO");
  remove_dir(dir);
}

/* GGUF: a split set of three, each file's split.* keys, F32 tensors. */
static void kv_u16(tw_bytes *b, const char *key, uint16_t v) {
  tw_str(b, key, strlen(key));
  tw_u32(b, 2);
  tw_put(b, &v, 2);
}
static void write_split(const char *path, unsigned no, unsigned count, unsigned first, unsigned n) {
  tw_bytes b = {0};
  tw_put(&b, "GGUF", 4);
  tw_u32(&b, 3);
  tw_u64(&b, n);
  tw_u64(&b, no == 0 ? 7 : 3);
  kv_u16(&b, "split.no", (uint16_t)no);
  kv_u16(&b, "split.count", (uint16_t)count);
  tw_str(&b, "split.tensors.count", 19);
  tw_u32(&b, 5);
  tw_u32(&b, 5);
  if (no == 0) {
    tw_str(&b, "general.name", 12);
    tw_u32(&b, 8);
    tw_str(&b, "tiny", 4);
    tw_str(&b, "tiny.dims", 9);  /* an array of 3 u32 */
    tw_u32(&b, 9);
    tw_u32(&b, 4);
    tw_u64(&b, 3);
    tw_u32(&b, 1), tw_u32(&b, 2), tw_u32(&b, 3);
    tw_str(&b, "tiny.vocab", 10);  /* an array of 100 u8: its count */
    tw_u32(&b, 9);
    tw_u32(&b, 0);
    tw_u64(&b, 100);
    for (int i = 0; i < 100; ++i) tw_put(&b, "x", 1);
    float eps = 1e-5f;  /* a float: as its shortest decimal */
    tw_str(&b, "tiny.eps", 8);
    tw_u32(&b, 6);
    tw_put(&b, &eps, 4);
  }
  uint64_t off = 0;
  for (unsigned i = first; i < first + n; ++i) {
    char name[16];
    snprintf(name, sizeof name, "g.%u", i);
    tw_str(&b, name, strlen(name));
    tw_u32(&b, 1);
    tw_u64(&b, 64 * (i + 1));  /* F32 elements */
    tw_u32(&b, 0);
    tw_u64(&b, off);
    off += 256 * (i + 1);  /* multiples of 32: aligned */
  }
  tw_data(&b, 32, (size_t)off);
  tw_write(path, &b);
  free(b.data);
}

static void a_split_gguf_set_opens_from_its_first_file_and_loads_each_shard(void **state) {
  (void)state;
  const char *dir = tw_path("split");
  mkdir(dir, 0755);
  char path[3][700];
  unsigned first[] = {0, 2, 3}, count[] = {2, 1, 2};
  for (unsigned k = 0; k < 3; ++k) {
    snprintf(path[k], sizeof path[k], "%s/tiny-%05u-of-00003.gguf", dir, k + 1);
    write_split(path[k], k, 3, first[k], count[k]);
  }
  rig_load_file f;
  assert_int_equal(rig_load_open(path[0], RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  size_t n, shards;
  rig_load_tensor_count(f, &n);
  rig_load_shard_count(f, &shards);
  assert_int_equal(n, 5);
  assert_int_equal(shards, 3);
  rig_device d;
  rig_memory_device("A", &d);
  rig_load_options o = tw_options(RIG_LOAD_PATH_STAGED, 64 << 10, 2);
  rig_load load = load_all(f, d, &o);
  for (size_t i = 0; i < n; ++i) {
    rig_load_tensor t = tensor(f, i);
    char name[32];
    snprintf(name, sizeof name, "g.%zu", i);
    assert_string_equal(t.name, name);
    assert_int_equal(t.shard, i < 2 ? 0 : i < 3 ? 1 : 2);
    unsigned char *x = loaded(load, i, t.length), *y = file_bytes(path[t.shard], t.offset, t.length);
    assert_memory_equal(x, y, t.length);
    free(x), free(y);
  }
  rig_load_release(load);
  /* GGUF's key/values as text, the first file's */
  size_t m;
  assert_int_equal(rig_load_metadata_count(f, &m), RIG_OK);
  assert_int_equal(m, 7);
  const char *want[][2] = {{"split.no", "0"}, {"split.count", "3"}, {"split.tensors.count", "5"},
                           {"general.name", "tiny"}, {"tiny.dims", "[1,2,3]"}, {"tiny.vocab", "array of 100 u8"},
                           {"tiny.eps", "1e-05"}};
  for (size_t i = 0; i < m; ++i) {
    const char *key, *value;
    assert_int_equal(rig_load_metadata_get(f, i, &key, &value), RIG_OK);
    assert_string_equal(key, want[i][0]);
    assert_string_equal(value, want[i][1]);
  }
  assert_int_equal(rig_load_metadata_get(f, m, NULL, NULL), RIG_INVALID_ARGUMENT);
  rig_load_file_release(f);
  refused(path[1], RIG_INVALID_ARGUMENT, "open the first of its set");
  assert_int_equal(rig_load_open(dir, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);  /* the directory: its first file */
  rig_load_file_release(f);
  unlink(path[2]);
  refused(path[0], RIG_NOT_FOUND, "tiny-00003-of-00003.gguf");
  rig_device_release(d);
  remove_dir(dir);
}

static void metadata_reads_back_from_a_file_and_from_an_index(void **state) {
  (void)state;
  const char *one = tw_path("meta.safetensors");
  write_safetensors(one, 0, 2, "{\"format\":\"pt\",\"b\":\"x\",\"skipped\":{\"deep\":[1]},\"n\":3}");
  rig_load_file f;
  assert_int_equal(rig_load_open(one, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  size_t m;
  const char *key, *value;
  assert_int_equal(rig_load_metadata_count(f, &m), RIG_OK);
  assert_int_equal(m, 2);  /* strings only, by key */
  rig_load_metadata_get(f, 0, &key, &value);
  assert_string_equal(key, "b");
  assert_string_equal(value, "x");
  rig_load_metadata_get(f, 1, &key, &value);
  assert_string_equal(key, "format");
  assert_string_equal(value, "pt");
  rig_load_file_release(f);
  /* an index: its own metadata (by key, numbers as JSON), then the first shard's keys not already there */
  const char *dir = write_checkpoint("", NULL);
  assert_int_equal(rig_load_open(dir, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  assert_int_equal(rig_load_metadata_count(f, &m), RIG_OK);
  assert_int_equal(m, 3);
  const char *want[][2] = {{"note", "sharded"}, {"total_size", "123"}, {"format", "pt"}};
  for (size_t i = 0; i < m; ++i) {
    assert_int_equal(rig_load_metadata_get(f, i, &key, &value), RIG_OK);
    assert_string_equal(key, want[i][0]);
    assert_string_equal(value, want[i][1]);
  }
  rig_load_file_release(f);
  unlink(one);
  remove_dir(dir);
}

/* A caller built before rig_load_tensor.shard passes the smaller size: served, nothing written past it. */
static void an_older_callers_tensor_struct_is_served_without_the_shard(void **state) {
  (void)state;
  const char *one = tw_path("old.safetensors");
  write_safetensors(one, 0, 2, "{}");
  rig_load_file f;
  assert_int_equal(rig_load_open(one, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load_tensor t;
  memset(&t, 0xab, sizeof t);
  t.size = offsetof(rig_load_tensor, shard);
  assert_int_equal(rig_load_tensor_get(f, 1, &t), RIG_OK);
  assert_int_equal(t.length, lengths[1]);
  unsigned char *tail = (unsigned char *)&t + offsetof(rig_load_tensor, shard);
  for (size_t i = 0; i < sizeof t - offsetof(rig_load_tensor, shard); ++i) assert_int_equal(tail[i], 0xab);
  rig_load_file_release(f);
  unlink(one);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_four_shard_checkpoint_loads_equal_to_one_file_on_every_path),
      cmocka_unit_test(a_checkpoint_that_disagrees_with_its_index_is_refused_naming_the_file),
      cmocka_unit_test(a_fifo_in_a_checkpoint_is_refused_before_anything_blocks),
      cmocka_unit_test(a_split_gguf_set_opens_from_its_first_file_and_loads_each_shard),
      cmocka_unit_test(metadata_reads_back_from_a_file_and_from_an_index),
      cmocka_unit_test(an_older_callers_tensor_struct_is_served_without_the_shard),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
