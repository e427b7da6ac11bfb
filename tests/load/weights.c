#include "weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *tw_path(const char *name) {
  static char paths[8][512];
  static int next;
  static int counter;
  char *p = paths[next++ % 8];
  snprintf(p, 512, "%s.%d.%d", name, (int)getpid(), counter++);
  return p;
}

uint8_t tw_byte(uint64_t at) {
  uint64_t x = at * 0x9e3779b97f4a7c15ull;
  return (uint8_t)(x >> 56 ^ x >> 29);
}

static void write_all(FILE *f, const void *p, size_t n) {
  if (n && fwrite(p, 1, n, f) != n) abort();
}

static void pattern_to(FILE *f, uint64_t from, size_t n) {
  unsigned char buf[4096];
  while (n) {
    size_t k = n < sizeof buf ? n : sizeof buf;
    for (size_t i = 0; i < k; ++i) buf[i] = tw_byte(from + i);
    write_all(f, buf, k);
    from += k;
    n -= k;
  }
}

void tw_safetensors_json(const char *path, const char *json, uint64_t header_len, size_t data_len) {
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = (unsigned char)(header_len >> (8 * i));
  write_all(f, le, 8);
  write_all(f, json, strlen(json));
  pattern_to(f, 8 + strlen(json), data_len);
  fclose(f);
}

void tw_safetensors_u8(const char *path, const size_t *lengths, size_t count) {
  size_t cap = 64 + count * 128, at = 0, off = 0;
  char *json = malloc(cap);
  at += (size_t)snprintf(json + at, cap - at, "{\"__metadata__\":{\"format\":\"pt\"}");
  for (size_t i = 0; i < count; ++i) {
    at += (size_t)snprintf(json + at, cap - at, ",\"model.layers.%zu.w\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}", i,
                           lengths[i], off, off + lengths[i]);
    off += lengths[i];
  }
  at += (size_t)snprintf(json + at, cap - at, "}");
  tw_safetensors_json(path, json, strlen(json), off);
  free(json);
}

int tw_same_as_file(rig_buffer buffer, const char *path, uint64_t offset, uint64_t length) {
  unsigned char *want = malloc(length + 1), *got = malloc(length + 1);
  FILE *f = fopen(path, "rb");
  int same = f && fseek(f, (long)offset, SEEK_SET) == 0 && fread(want, 1, length, f) == length &&
             rig_buffer_read_into(buffer, 0, got, length) == RIG_OK && memcmp(want, got, length) == 0;
  if (f) fclose(f);
  free(want);
  free(got);
  return same;
}

int tw_tensor_as_file(rig_load load, rig_load_file file, const char *path, size_t index, size_t device) {
  rig_load_tensor t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  rig_buffer b;
  if (rig_load_tensor_get(file, index, &t) != RIG_OK || rig_load_buffer(load, index, device, &b) != RIG_OK) return 0;
  size_t length = 0;
  int same = rig_buffer_length(b, &length) == RIG_OK && length == t.length &&
             tw_same_as_file(b, path, t.offset, t.length);
  rig_buffer_release(b);
  return same;
}

rig_load_stats tw_stats(rig_load load) {
  rig_load_stats st;
  memset(&st, 0, sizeof st);
  st.size = sizeof st;
  rig_load_get_stats(load, &st);
  return st;
}

void tw_append(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "ab");
  if (!f) abort();
  write_all(f, bytes, n);
  fclose(f);
}

void tw_put(tw_bytes *b, const void *p, size_t n) {
  if (b->length + n > b->capacity) {
    b->capacity = (b->length + n) * 2 + 64;
    b->data = realloc(b->data, b->capacity);
  }
  memcpy(b->data + b->length, p, n);
  b->length += n;
}
void tw_u32(tw_bytes *b, uint32_t v) { tw_put(b, &v, 4); }
void tw_u64(tw_bytes *b, uint64_t v) { tw_put(b, &v, 8); }
void tw_str(tw_bytes *b, const char *s, size_t n) {
  tw_u64(b, n);
  tw_put(b, s, n);
}
void tw_data(tw_bytes *b, size_t align, size_t data_len) {
  static const unsigned char zero[64];
  while (b->length % align) tw_put(b, zero, 1);
  for (size_t i = 0; i < data_len; ++i) {
    unsigned char c = tw_byte(b->length);
    tw_put(b, &c, 1);
  }
}
void tw_write(const char *path, const tw_bytes *b) {
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  write_all(f, b->data, b->length);
  fclose(f);
}

rig_load_options tw_options(rig_load_path path, size_t chunk, uint32_t threads) {
  rig_load_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.path = path;
  o.io = RIG_LOAD_IO_BUFFERED;
  o.chunk_bytes = chunk;
  o.window_bytes = chunk;
  o.threads = threads;
  return o;
}

rig_load_placement tw_placement(rig_device *devices, size_t n, rig_load_rule rule, const uint64_t *masks) {
  rig_load_placement p;
  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.devices = devices;
  p.device_count = n;
  p.rule = rule;
  p.masks = masks;
  return p;
}
