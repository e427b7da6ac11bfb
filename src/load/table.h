// The tensor table of a weights file, as the format parsers produce it, and the checks every format
// shares (names, dtypes against byte ranges, ranges inside the data and not overlapping). No rig state:
// the parsers are pure functions of bytes so that the fuzz harnesses (fuzz/) build them alone.
#pragma once

#include <rig_load.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rig::load {

struct TensorEntry {
  std::string name;
  std::string dtype_name;  // the file's own word ("BF16", "Q4_K")
  rig_dtype dtype = RIG_DTYPE_U8;
  uint32_t ggml_type = 0;
  std::vector<uint64_t> shape;  // outermost first
  uint64_t offset = 0;          // absolute in the file; once opened, in the checkpoint's stream (file.h)
  uint64_t length = 0;
  uint32_t shard = 0;           // the file of a checkpoint that holds it (file.h)
};

// A file's own key/values: safetensors' __metadata__ strings, GGUF's key/values as text (numbers in
// decimal, strings as they are, arrays as JSON up to 64 items, else as their count).
using Metadata = std::vector<std::pair<std::string, std::string>>;

// A parser's answer: OK with the table, a failure with words, or "needs the first need_bytes bytes of the
// file" when the header runs past the bytes it was given but not past the file.
struct ParseResult {
  rig_status status = RIG_OK;
  std::string message;
  uint64_t need_bytes = 0;
  uint64_t data_start = 0;  // where the tensor data begins (after the header)
  std::vector<TensorEntry> tensors;
  Metadata metadata;
  // GGUF split sets (llama.cpp's gguf-split): split.no, split.count, split.tensors.count; 0 when absent.
  uint64_t split_no = 0, split_count = 0, split_tensors = 0;
};

ParseResult bad(std::string message);

// 1 if [s, s+n) is well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool valid_utf8(const char *s, size_t n);

// Shared checks over a parsed table: names non-empty, UTF-8, unique; each range inside
// [data_start, file_size); no two ranges overlapping; `length` equals elements times the element size
// (computed by the parser into expected_length, overflow reported). Fills r.status/message on failure.
void check_table(ParseResult &r, uint64_t file_size);

// Elements of a shape, false on overflow.
bool element_count(const std::vector<uint64_t> &shape, uint64_t *count);

// The safetensors header: 8-byte little-endian length N, then N bytes of JSON (nlohmann-json parses it).
// Limit: N <= 100,000,000 (the safetensors reference implementation's limit).
constexpr uint64_t safetensors_header_limit = 100000000;
ParseResult parse_safetensors(const uint8_t *bytes, size_t avail, uint64_t file_size);

// GGUF (v2, v3): parsed by hand, which is acceptable only because GGUF is a binary format with no
// maintained Debian parser (ggml's gguf reader is not packaged as a library in Debian 12).
// Limit: the header (metadata and tensor infos) within the first 256 MiB of the file.
constexpr uint64_t gguf_header_limit = uint64_t(256) << 20;
ParseResult parse_gguf(const uint8_t *bytes, size_t avail, uint64_t file_size);

// Elements per block of ggml type `type` (32 for Q4_0, 256 for Q4_K, 1 for F16 and the other plain types; 1
// for a type rig does not know, which no opened table holds). Pure.
uint64_t ggml_block_elements(uint32_t type);

}  // namespace rig::load
