/* Small weights files written by the tests themselves, and checks of loaded bytes against the file. */
#ifndef RIG_TEST_WEIGHTS_H
#define RIG_TEST_WEIGHTS_H

#include <rig.h>
#include <rig_load.h>

#include <stddef.h>
#include <stdint.h>

/* A unique scratch path under the build directory ("NAME.PID.N"); static storage, one per call kind. */
const char *tw_path(const char *name);
/* Writes a safetensors file: 8-byte length, `json` as the header, then data_len pattern bytes. */
void tw_safetensors_json(const char *path, const char *json, uint64_t header_len, size_t data_len);
/* A well-formed safetensors file of `count` U8 tensors "model.layers.I.w" of lengths[i] bytes, packed. */
void tw_safetensors_u8(const char *path, const size_t *lengths, size_t count);
/* The pattern byte at file offset `at` (what every writer puts in data regions). */
uint8_t tw_byte(uint64_t at);
/* 1 if buffer bytes [0, length) equal the file's bytes [offset, offset+length) (read with the host). */
int tw_same_as_file(rig_buffer buffer, const char *path, uint64_t offset, uint64_t length);
/* 1 if tensor `index` of `file`, as placed on placement device `device` by `load`, has the tensor's length
 * and equals the file's bytes at `path`; 0 otherwise (rig_load_buffer failed, or a byte differs). */
int tw_tensor_as_file(rig_load load, rig_load_file file, const char *path, size_t index, size_t device);
/* The stats of a finished load (the struct's size set, every field rig's). */
rig_load_stats tw_stats(rig_load load);
/* Load options with the size set: `path`, buffered reads, `chunk` bytes for chunks and windows, `threads`;
 * everything else rig's default. */
rig_load_options tw_options(rig_load_path path, size_t chunk, uint32_t threads);
/* A placement of every selected tensor by `rule` over devices[0, n) (masks for RIG_LOAD_RULE_MASKS). */
rig_load_placement tw_placement(rig_device *devices, size_t n, rig_load_rule rule, const uint64_t *masks);
/* Appends raw bytes to a file. */
void tw_append(const char *path, const void *bytes, size_t n);

/* GGUF writing: a byte builder. */
typedef struct tw_bytes {
  unsigned char *data;
  size_t length, capacity;
} tw_bytes;
void tw_put(tw_bytes *b, const void *p, size_t n);
void tw_u32(tw_bytes *b, uint32_t v);
void tw_u64(tw_bytes *b, uint64_t v);
void tw_str(tw_bytes *b, const char *s, size_t n);
/* Pads to `align` with zeroes, then `data_len` pattern bytes (pattern of the absolute offset). */
void tw_data(tw_bytes *b, size_t align, size_t data_len);
void tw_write(const char *path, const tw_bytes *b);

#endif
