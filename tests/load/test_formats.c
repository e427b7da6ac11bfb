/* Opening weights files: the tensor tables of safetensors, GGUF and raw ranges, and every bad header
 * answered with RIG_INVALID_ARGUMENT and words, never a crash. Through the shared library. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "weights.h"

static rig_load_tensor info_of(rig_load_file f, size_t i) {
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  assert_int_equal(rig_load_tensor_get(f, i, &t), RIG_OK);
  return t;
}

/* Opens a safetensors file made of `json` (its true length) and data_len bytes; expects `status` and,
 * on failure, `words` in the message. */
static void expect_st(const char *json, size_t data_len, rig_status status, const char *words) {
  const char *p = tw_path("st");
  tw_safetensors_json(p, json, strlen(json), data_len);
  rig_load_file f = NULL;
  rig_status s = rig_load_open(p, RIG_LOAD_FORMAT_AUTO, &f);
  if (s != status || (words && !strstr(rig_last_error(), words)))
    fail_msg("%s: got %s '%s', want %s '%s'", json, rig_status_name(s), rig_last_error(), rig_status_name(status), words);
  if (s == RIG_OK) rig_load_file_release(f);
  else assert_null(f);
  unlink(p);
}

static void safetensors_table_lists_names_dtypes_shapes_and_absolute_ranges(void **state) {
  (void)state;
  const char *json = "{\"__metadata__\":{\"a\":\"b\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                     "\"b\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[24,32]},"
                     "\"e\":{\"dtype\":\"I64\",\"shape\":[0,5],\"data_offsets\":[32,32]}}";
  const char *p = tw_path("st");
  tw_safetensors_json(p, json, strlen(json), 32);
  rig_load_file f;
  assert_int_equal(rig_load_open(p, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  size_t n, i;
  assert_int_equal(rig_load_tensor_count(f, &n), RIG_OK);
  assert_int_equal(n, 3);
  rig_load_format fmt;
  assert_int_equal(rig_load_file_format(f, &fmt), RIG_OK);
  assert_int_equal(fmt, RIG_LOAD_FORMAT_SAFETENSORS);
  /* the table is in name order, whatever the header's */
  assert_string_equal(info_of(f, 0).name, "b");
  assert_string_equal(info_of(f, 1).name, "e");
  assert_string_equal(info_of(f, 2).name, "w");
  assert_int_equal(rig_load_find(f, "w", &i), RIG_OK);
  rig_load_tensor t = info_of(f, i);
  assert_string_equal(t.name, "w");
  assert_string_equal(t.dtype_name, "F32");
  assert_int_equal(t.dtype, RIG_DTYPE_F32);
  assert_int_equal(t.rank, 2);
  assert_int_equal(t.shape[0], 2);
  assert_int_equal(t.shape[1], 3);
  assert_int_equal(t.offset, 8 + strlen(json));
  assert_int_equal(t.length, 24);
  assert_int_equal(rig_load_find(f, "b", &i), RIG_OK);
  assert_int_equal(info_of(f, i).offset, 8 + strlen(json) + 24);
  assert_int_equal(rig_load_find(f, "nope", &i), RIG_NOT_FOUND);
  assert_int_equal(rig_load_tensor_get(f, 3, &t), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_file_release(f), RIG_OK);
  assert_int_equal(rig_load_file_release(f), RIG_INVALID_HANDLE);
  assert_int_equal(rig_load_tensor_count(f, &n), RIG_INVALID_HANDLE);
  unlink(p);
}

static void safetensors_bad_headers_answer_invalid_argument_with_words(void **state) {
  (void)state;
  expect_st("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, RIG_OK, NULL);
  /* overlapping, outside the data, dtype and shape against the range, end before begin */
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[4,12]}}",
            16, RIG_INVALID_ARGUMENT, "overlap");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[1000],\"data_offsets\":[0,1000]}}", 16, RIG_INVALID_ARGUMENT, "outside");
  expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 16, RIG_INVALID_ARGUMENT, "12 bytes");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[8,0]}}", 16, RIG_INVALID_ARGUMENT, "before");
  expect_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 16, RIG_INVALID_ARGUMENT, "overflow");
  expect_st("{\"a\":{\"dtype\":\"Q9\",\"shape\":[1],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "unknown dtype");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 16, RIG_INVALID_ARGUMENT, "data_offsets");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "shape");
  expect_st("[1,2]", 16, RIG_INVALID_ARGUMENT, "not a JSON object");
  expect_st("{\"a\":", 16, RIG_INVALID_ARGUMENT, "not valid JSON");
  /* read as events (no document tree): fields rig does not read are skipped however deep, a repeated field
   * counts once (the last), a repeated name is refused, and each misplaced kind of value is named */
  expect_st("{\"a\":{\"dtype\":\"U8\",\"x\":{\"y\":[1,{\"z\":[]}]},\"shape\":[1],\"data_offsets\":[0,1]},"
            "\"__metadata__\":{\"k\":{\"deep\":[[[]]]}}}", 1, RIG_OK, NULL);
  expect_st("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"U8\",\"shape\":[2],\"shape\":[1],\"data_offsets\":[0,1]}}", 1, RIG_OK, NULL);
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
            "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 16, RIG_INVALID_ARGUMENT, "twice");
  expect_st("{\"a\":{\"dtype\":{\"v\":\"U8\"},\"shape\":[1],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "dtype");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":{},\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "shape array");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[[1]],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "shape entry");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[1.0],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "shape entry");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "8 dimensions");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", 16, RIG_INVALID_ARGUMENT, "data_offsets");
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,[1]]}}", 16, RIG_INVALID_ARGUMENT, "data_offsets");
  expect_st("{\"a\":[1]}", 16, RIG_INVALID_ARGUMENT, "'a' is not an object");
  expect_st("{\"a\":7}", 16, RIG_INVALID_ARGUMENT, "'a' is not an object");
  expect_st("{\"__metadata__\":\"x\"}", 16, RIG_INVALID_ARGUMENT, "__metadata__");
  expect_st("{\"__metadata__\":[]}", 16, RIG_INVALID_ARGUMENT, "__metadata__");
  expect_st("5", 16, RIG_INVALID_ARGUMENT, "not a JSON object");
  expect_st("{}  x", 16, RIG_INVALID_ARGUMENT, "not valid JSON");
  /* nested 200000 deep where nobody reads: skipped without recursion, and refused where it is not closed */
  size_t depth = 200000, at = 0;
  char *deep = malloc(2 * depth + 64);
  assert_non_null(deep);
  at += (size_t)sprintf(deep, "{\"__metadata__\":{\"k\":");
  memset(deep + at, '[', depth);
  at += depth;
  memset(deep + at, ']', depth);
  at += depth;
  strcpy(deep + at, "}}");
  expect_st(deep, 0, RIG_OK, NULL);
  deep[at - 1] = ' ';
  expect_st(deep, 16, RIG_INVALID_ARGUMENT, "not valid JSON");
  free(deep);
  /* a name that is not UTF-8 (0xff never appears in UTF-8; an overlong '/' and a lone surrogate) */
  expect_st("{\"a\xff\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "UTF-8");
  expect_st("{\"a\xc0\xaf\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "UTF-8");
  expect_st("{\"a\xed\xa0\x80\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 16, RIG_INVALID_ARGUMENT, "UTF-8");
}

/* The format asks the data to be covered exactly (the reference implementation's validate): a hole between
 * tensors, a gap before the first and bytes after the last are refused, each with its offsets in the data. */
static void safetensors_data_not_covered_exactly_is_refused_with_the_offsets(void **state) {
  (void)state;
  /* covered exactly, in any order of the header, with empty tensors at the ends and between */
  expect_st("{\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]},"
            "\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
            "\"e0\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]},"
            "\"e4\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,4]},"
            "\"e8\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[8,8]}}", 8, RIG_OK, NULL);
  expect_st("{\"__metadata__\":{\"a\":\"b\"}}", 0, RIG_OK, NULL);
  /* a hole between two tensors: bytes [4, 6) of the data */
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
            "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[6,8]}}", 8, RIG_INVALID_ARGUMENT,
            "a hole in the data: bytes [4, 6)");
  /* a gap before the first tensor: bytes [0, 3) */
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[5],\"data_offsets\":[3,8]}}", 8, RIG_INVALID_ARGUMENT,
            "the data begins with a gap: bytes [0, 3)");
  /* an empty tensor out in a gap does not close it */
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]},"
            "\"e\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]}}", 8, RIG_INVALID_ARGUMENT,
            "gap: bytes [0, 2)");
  /* bytes after the last tensor: the data ends at 8 of 11 */
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}", 11, RIG_INVALID_ARGUMENT,
            "bytes after the last tensor: the data ends at 8 but the file holds 11");
  expect_st("{}", 1, RIG_INVALID_ARGUMENT, "the data ends at 0 but the file holds 1");
  /* an empty tensor inside another's bytes */
  expect_st("{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},"
            "\"e\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[3,3]}}", 8, RIG_INVALID_ARGUMENT,
            "'e' begins at 3 of the data, inside the tensor before it, which ends at 8");
}

static void safetensors_lengths_truncation_and_limits(void **state) {
  (void)state;
  const char *p = tw_path("st");
  rig_load_file f = NULL;
  /* truncated: fewer than 8 bytes; empty */
  tw_append(p, "abc", 3);
  assert_int_equal(rig_load_open(p, RIG_LOAD_FORMAT_SAFETENSORS, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "truncated"));
  unlink(p);
  tw_append(p, "", 0);
  assert_int_equal(rig_load_open(p, RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
  unlink(p);
  /* a header length past the end of the file */
  tw_safetensors_json(p, "{}", 1000, 10);
  assert_int_equal(rig_load_open(p, RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "past the end"));
  unlink(p);
  /* over the format's limit (100,000,000), and the all-ones length */
  tw_safetensors_json(p, "{}", 100000001, 10);
  assert_int_equal(rig_load_open(p, RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "limit"));
  unlink(p);
  tw_safetensors_json(p, "{}", UINT64_MAX, 10);
  assert_int_equal(rig_load_open(p, RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
  unlink(p);
  /* a header over 1 MiB, past the first read of 64 KiB: read in more than one step */
  size_t n = 3 << 20;
  char *json = malloc(n + 64);
  memset(json, ' ', n);
  const char *lit = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}";
  memcpy(json, lit, strlen(lit));
  strcpy(json + n - 2, "}");
  tw_safetensors_json(p, json, strlen(json), 4);
  assert_int_equal(rig_load_open(p, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load_file_release(f);
  free(json);
  unlink(p);
  assert_int_equal(rig_load_open("/nonexistent/weights", RIG_LOAD_FORMAT_AUTO, &f), RIG_NOT_FOUND);
  assert_int_equal(rig_load_open("/", RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_open(NULL, RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
}

/* A FIFO, a UNIX socket and a device node are refused before anything waits on them (the open is
 * O_NONBLOCK and checked with fstat): what rig load, rig info and every binding open goes through here. */
static void special_files_are_refused_before_anything_blocks(void **state) {
  (void)state;
  const char *fifo = tw_path("fifo");
  unlink(fifo);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  rig_load_file f = NULL;
  /* with no writer, an open that waited would never return: the test's timeout would say so */
  assert_int_equal(rig_load_open(fifo, RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "is a FIFO"));
  assert_null(f);
  rig_load_range r = {"a", 0, 1};
  assert_int_equal(rig_load_open_raw(fifo, &r, 1, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "is a FIFO"));
  unlink(fifo);

  const char *sock = tw_path("sock");
  unlink(sock);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  assert_true(s >= 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  assert_true(strlen(sock) < sizeof addr.sun_path);
  strcpy(addr.sun_path, sock);
  assert_int_equal(bind(s, (struct sockaddr *)&addr, sizeof addr), 0);
  assert_int_equal(rig_load_open(sock, RIG_LOAD_FORMAT_SAFETENSORS, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "is a socket"));
  close(s);
  unlink(sock);

  const char *nodes[] = {"/dev/null", "/dev/zero"};
  for (size_t i = 0; i < 2; ++i) {
    assert_int_equal(rig_load_open(nodes[i], RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
    assert_non_null(strstr(rig_last_error(), "is a character device"));
  }
  /* a directory is a checkpoint's place for rig_load_open (this one holds none); never a raw file */
  assert_int_equal(rig_load_open("/", RIG_LOAD_FORMAT_AUTO, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "holds no checkpoint"));
  assert_int_equal(rig_load_open_raw("/", &r, 1, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "is a directory"));
  assert_null(f);
}

/* A GGUF v3 file: keys (alignment 64, a string, an array of u32, an array of strings), then `tensors`. */
typedef struct gguf_tensor {
  const char *name;
  size_t name_len;
  uint32_t dims; /* up to 5: the dimension-count case writes one past GGUF's limit of 4 */
  uint64_t ne[5];
  uint32_t type;
  uint64_t offset;
} gguf_tensor;

static tw_bytes gguf(const gguf_tensor *ts, size_t count, size_t data_len) {
  tw_bytes b = {0};
  tw_put(&b, "GGUF", 4);
  tw_u32(&b, 3);
  tw_u64(&b, count);
  tw_u64(&b, 4);
  tw_str(&b, "general.alignment", 17); tw_u32(&b, 4); tw_u32(&b, 64);
  tw_str(&b, "general.name", 12); tw_u32(&b, 8); tw_str(&b, "test", 4);
  tw_str(&b, "ids", 3); tw_u32(&b, 9); tw_u32(&b, 4); tw_u64(&b, 3); tw_u32(&b, 1); tw_u32(&b, 2); tw_u32(&b, 3);
  tw_str(&b, "words", 5); tw_u32(&b, 9); tw_u32(&b, 8); tw_u64(&b, 2); tw_str(&b, "a", 1); tw_str(&b, "bc", 2);
  for (size_t i = 0; i < count; ++i) {
    tw_str(&b, ts[i].name, ts[i].name_len ? ts[i].name_len : strlen(ts[i].name));
    tw_u32(&b, ts[i].dims);
    for (uint32_t d = 0; d < ts[i].dims; ++d) tw_u64(&b, ts[i].ne[d]);
    tw_u32(&b, ts[i].type);
    tw_u64(&b, ts[i].offset);
  }
  tw_data(&b, 64, data_len);
  return b;
}

static rig_status open_gguf(const tw_bytes *b, size_t cut, rig_load_file *f) {
  const char *p = tw_path("gguf");
  tw_bytes c = *b;
  if (cut) c.length = cut;
  tw_write(p, &c);
  rig_status s = rig_load_open(p, RIG_LOAD_FORMAT_AUTO, f);
  unlink(p);
  return s;
}

static void gguf_table_has_ggml_types_shapes_reversed_and_aligned_data(void **state) {
  (void)state;
  gguf_tensor ts[] = {{"tok.w", 0, 2, {4, 2}, 0, 0}, {"blk.0.q", 0, 1, {64}, 8, 64}};
  tw_bytes b = gguf(ts, 2, 64 + 68);
  rig_load_file f;
  assert_int_equal(open_gguf(&b, 0, &f), RIG_OK);
  size_t n;
  rig_load_tensor_count(f, &n);
  assert_int_equal(n, 2);
  rig_load_tensor t = info_of(f, 0);
  assert_string_equal(t.dtype_name, "F32");
  assert_int_equal(t.rank, 2);
  assert_int_equal(t.shape[0], 2); /* ne reversed: outermost first */
  assert_int_equal(t.shape[1], 4);
  assert_int_equal(t.length, 32);
  assert_int_equal(t.offset % 64, 0);
  rig_load_tensor q = info_of(f, 1);
  assert_string_equal(q.dtype_name, "Q8_0");
  assert_int_equal(q.dtype, RIG_DTYPE_GGML);
  assert_int_equal(q.ggml_type, 8);
  assert_int_equal(q.length, 68); /* two blocks of 34 bytes */
  assert_int_equal(q.offset, t.offset + 64);
  rig_load_format fmt;
  rig_load_file_format(f, &fmt);
  assert_int_equal(fmt, RIG_LOAD_FORMAT_GGUF);
  rig_load_file_release(f);
  /* every cut of the file inside its header or data answers INVALID_ARGUMENT */
  for (size_t cut = 1; cut < b.length; cut += 7) {
    rig_status s = open_gguf(&b, cut, &f);
    if (s == RIG_OK) fail_msg("cut at %zu opened", cut);
    assert_int_equal(s, RIG_INVALID_ARGUMENT);
  }
  free(b.data);
}

static void gguf_bad_headers_answer_invalid_argument_with_words(void **state) {
  (void)state;
  struct {
    gguf_tensor t[2];
    size_t count, data;
    const char *words;
  } cases[] = {
      {{{"a", 0, 1, {16}, 0, 0}, {"b", 0, 1, {16}, 0, 0}}, 2, 128, "overlap"},
      {{{"a", 0, 1, {16}, 0, 0}, {"b", 0, 1, {16}, 0, 4096}}, 2, 128, "outside"},
      {{{"a\xff", 2, 1, {16}, 0, 0}}, 1, 64, "UTF-8"},
      {{{"a", 0, 1, {16}, 99, 0}}, 1, 64, "ggml type"},
      {{{"a", 0, 1, {31}, 8, 0}}, 1, 64, "blocks"},
      {{{"a", 0, 5, {1, 1, 1, 1, 1}, 0, 0}}, 1, 64, "dimensions"},
      {{{"a", 0, 1, {16}, 0, 8}}, 1, 128, "aligned"},
      {{{"a", 0, 2, {UINT64_MAX, 4}, 0, 0}}, 1, 64, "overflow"},
      {{{"", 0, 1, {16}, 0, 0}}, 1, 64, "empty name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    tw_bytes b = gguf(cases[i].t, cases[i].count, cases[i].data);
    rig_load_file f;
    rig_status s = open_gguf(&b, 0, &f);
    if (s != RIG_INVALID_ARGUMENT || !strstr(rig_last_error(), cases[i].words))
      fail_msg("case %zu: %s '%s', want '%s'", i, rig_status_name(s), rig_last_error(), cases[i].words);
    free(b.data);
  }
  /* counts that cannot fit, a version rig does not read, a string length past the end */
  tw_bytes b = {0};
  tw_put(&b, "GGUF", 4); tw_u32(&b, 3); tw_u64(&b, UINT64_MAX); tw_u64(&b, 0);
  rig_load_file f;
  assert_int_equal(open_gguf(&b, 0, &f), RIG_INVALID_ARGUMENT);
  b.length = 4; tw_u32(&b, 1); tw_u64(&b, 0); tw_u64(&b, 0);
  assert_int_equal(open_gguf(&b, 0, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "version"));
  b.length = 4; tw_u32(&b, 3); tw_u64(&b, 0); tw_u64(&b, 1); tw_u64(&b, UINT64_MAX - 2);
  assert_int_equal(open_gguf(&b, 0, &f), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "truncated"));
  free(b.data);
}

static void raw_ranges_are_u8_tensors_checked_against_the_file(void **state) {
  (void)state;
  const char *p = tw_path("raw");
  tw_safetensors_json(p, "", 0, 1000); /* 8 zero bytes then 1000 pattern bytes */
  rig_load_range good[] = {{"head", 0, 8}, {"body", 8, 1000}};
  rig_load_file f;
  assert_int_equal(rig_load_open_raw(p, good, 2, &f), RIG_OK);
  assert_int_equal(info_of(f, 1).length, 1000);
  assert_int_equal(info_of(f, 1).dtype, RIG_DTYPE_U8);
  rig_load_file_release(f);
  rig_load_range overlap[] = {{"a", 0, 16}, {"b", 8, 16}};
  assert_int_equal(rig_load_open_raw(p, overlap, 2, &f), RIG_INVALID_ARGUMENT);
  rig_load_range outside[] = {{"a", 1000, 16}};
  assert_int_equal(rig_load_open_raw(p, outside, 1, &f), RIG_INVALID_ARGUMENT);
  rig_load_range wrap[] = {{"a", UINT64_MAX - 4, 16}};
  assert_int_equal(rig_load_open_raw(p, wrap, 1, &f), RIG_INVALID_ARGUMENT);
  rig_load_range twice[] = {{"a", 0, 4}, {"a", 4, 4}};
  assert_int_equal(rig_load_open_raw(p, twice, 2, &f), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_load_open_raw(p, NULL, 1, &f), RIG_INVALID_ARGUMENT);
  unlink(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(safetensors_table_lists_names_dtypes_shapes_and_absolute_ranges),
      cmocka_unit_test(safetensors_bad_headers_answer_invalid_argument_with_words),
      cmocka_unit_test(safetensors_data_not_covered_exactly_is_refused_with_the_offsets),
      cmocka_unit_test(safetensors_lengths_truncation_and_limits),
      cmocka_unit_test(gguf_table_has_ggml_types_shapes_reversed_and_aligned_data),
      cmocka_unit_test(gguf_bad_headers_answer_invalid_argument_with_words),
      cmocka_unit_test(raw_ranges_are_u8_tensors_checked_against_the_file),
      cmocka_unit_test(special_files_are_refused_before_anything_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
