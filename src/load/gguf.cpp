// GGUF (versions 2 and 3), parsed by hand: GGUF is a binary format (little-endian integers and
// length-prefixed strings) with no maintained parser library in Debian 12, so this reader is the one place
// where rig reads a format itself. Every read is bounds-checked against the bytes given and the file size.
//   magic "GGUF", u32 version, u64 tensor_count, u64 kv_count,
//   kv_count x { string key, u32 type, value },  tensor_count x { string name, u32 n_dims, u64 ne[n_dims],
//   u32 ggml_type, u64 offset }, padding to general.alignment (default 32), then the data.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "load/table.h"

namespace rig::load {
namespace {

struct GgmlType {
  uint32_t id;
  const char *name;
  uint64_t block, bytes;  // elements per block, bytes per block
  rig_dtype dtype;
};
// ggml's type numbers (ggml.h's enum ggml_type); quantized types are blocks of elements.
constexpr GgmlType ggml_types[] = {
    {0, "F32", 1, 4, RIG_DTYPE_F32},       {1, "F16", 1, 2, RIG_DTYPE_F16},
    {2, "Q4_0", 32, 18, RIG_DTYPE_GGML},   {3, "Q4_1", 32, 20, RIG_DTYPE_GGML},
    {6, "Q5_0", 32, 22, RIG_DTYPE_GGML},   {7, "Q5_1", 32, 24, RIG_DTYPE_GGML},
    {8, "Q8_0", 32, 34, RIG_DTYPE_GGML},   {9, "Q8_1", 32, 36, RIG_DTYPE_GGML},
    {10, "Q2_K", 256, 84, RIG_DTYPE_GGML}, {11, "Q3_K", 256, 110, RIG_DTYPE_GGML},
    {12, "Q4_K", 256, 144, RIG_DTYPE_GGML}, {13, "Q5_K", 256, 176, RIG_DTYPE_GGML},
    {14, "Q6_K", 256, 210, RIG_DTYPE_GGML}, {15, "Q8_K", 256, 292, RIG_DTYPE_GGML},
    {24, "I8", 1, 1, RIG_DTYPE_I8},        {25, "I16", 1, 2, RIG_DTYPE_I16},
    {26, "I32", 1, 4, RIG_DTYPE_I32},      {27, "I64", 1, 8, RIG_DTYPE_I64},
    {28, "F64", 1, 8, RIG_DTYPE_F64},      {30, "BF16", 1, 2, RIG_DTYPE_BF16},
};

enum : uint32_t { U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 };

// A cursor over the bytes given; `more` is set when a read ran past them but not past the file.
struct Reader {
  const uint8_t *p;
  uint64_t avail, file_size, at = 0;
  bool more = false, past_end = false;
  bool take(uint64_t n, const uint8_t **out) {
    uint64_t end;
    if (__builtin_add_overflow(at, n, &end) || end > file_size) { past_end = true; return false; }
    if (end > avail) { more = true; return false; }
    *out = p + at;
    at = end;
    return true;
  }
  template <class T>
  bool num(T *v) {
    const uint8_t *b;
    if (!take(sizeof(T), &b)) return false;
    std::memcpy(v, b, sizeof(T));  // GGUF is little-endian, as every host rig runs on
    return true;
  }
  bool str(std::string *s) {
    uint64_t n;
    const uint8_t *b;
    if (!num(&n) || !take(n, &b)) return false;
    s->assign(reinterpret_cast<const char *>(b), n);
    return true;
  }
  bool skip_value(uint32_t type, int depth) {
    static constexpr uint64_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type > F64) return false;
    if (type == STRING) { std::string s; return str(&s); }
    if (type == ARRAY) {
      uint32_t inner;
      uint64_t count;
      if (depth > 2 || !num(&inner) || !num(&count) || inner > F64) return false;
      if (inner != STRING && inner != ARRAY) {  // fixed-size items: one bounds check
        uint64_t n;
        const uint8_t *b;
        if (__builtin_mul_overflow(count, sizes[inner], &n)) { past_end = true; return false; }
        return take(n, &b);
      }
      for (uint64_t i = 0; i < count; ++i)
        if (!skip_value(inner, depth + 1)) return false;
      return true;
    }
    const uint8_t *b;
    return take(sizes[type], &b);
  }
  // A scalar of `type` (not STRING or ARRAY) as JSON: numbers in decimal, bools as true/false.
  bool scalar(uint32_t type, nlohmann::json *out) {
    switch (type) {
      case U8: { uint8_t v; if (!num(&v)) return false; *out = v; return true; }
      case I8: { int8_t v; if (!num(&v)) return false; *out = v; return true; }
      case U16: { uint16_t v; if (!num(&v)) return false; *out = v; return true; }
      case I16: { int16_t v; if (!num(&v)) return false; *out = v; return true; }
      case U32: { uint32_t v; if (!num(&v)) return false; *out = v; return true; }
      case I32: { int32_t v; if (!num(&v)) return false; *out = v; return true; }
      case U64: { uint64_t v; if (!num(&v)) return false; *out = v; return true; }
      case I64: { int64_t v; if (!num(&v)) return false; *out = v; return true; }
      case F32: {  // as the float's shortest decimal (1e-05), not its double's (9.999999747378752e-06)
        float v;
        if (!num(&v)) return false;
        char text[32];
        auto end = std::to_chars(text, text + sizeof text - 1, v).ptr;
        *end = 0;
        *out = std::strtod(text, nullptr);
        return true;
      }
      case F64: { double v; if (!num(&v)) return false; *out = v; return true; }
      default: { uint8_t v; if (!num(&v)) return false; *out = v != 0; return true; }  // BOOL
    }
  }
  // A key's value as text (Metadata's form, load/table.h): a string as it is, a scalar as JSON, an array of
  // at most 64 scalars or strings as JSON, a longer or nested one as its count.
  bool value_text(uint32_t type, std::string *out) {
    if (type > F64) return false;
    if (type == STRING) return str(out);
    nlohmann::json j;
    if (type != ARRAY) {
      if (!scalar(type, &j)) return false;
      *out = j.dump();
      return true;
    }
    uint32_t inner;
    uint64_t count;
    uint64_t at0 = at;
    if (!num(&inner) || !num(&count) || inner > F64) return false;
    static const char *names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
    if (count > 64 || inner == ARRAY) {
      at = at0;
      if (!skip_value(ARRAY, 0)) return false;
      *out = "array of " + std::to_string(count) + " " + names[inner];
      return true;
    }
    j = nlohmann::json::array();
    for (uint64_t i = 0; i < count; ++i) {
      nlohmann::json item;
      if (inner == STRING) {
        std::string v;
        if (!str(&v)) return false;
        item = std::move(v);
      } else if (!scalar(inner, &item)) {
        return false;
      }
      j.push_back(std::move(item));
    }
    *out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return true;
  }
};

// A split key's value (any integer type), or 0 where the text is not a count.
uint64_t count_of(const std::string &text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoull(text);
}

}  // namespace

uint64_t ggml_block_elements(uint32_t type) {
  for (const auto &g : ggml_types)
    if (g.id == type) return g.block;
  return 1;
}

ParseResult parse_gguf(const uint8_t *bytes, size_t avail, uint64_t file_size) {
  Reader rd{bytes, std::min<uint64_t>(avail, std::min(file_size, gguf_header_limit)), file_size};
  auto stop = [&](const std::string &what) {
    if (rd.more) {
      ParseResult r;
      if (avail >= gguf_header_limit) return bad("the GGUF header is over rig's limit of 256 MiB (at " + what + ")");
      r.need_bytes = std::min<uint64_t>({file_size, std::max<uint64_t>(uint64_t(avail) * 2, 1 << 20), gguf_header_limit});
      return r;
    }
    if (rd.past_end) return bad("truncated: the file ends inside the GGUF header (at " + what + ")");
    return bad("malformed GGUF header at " + what);
  };
  const uint8_t *magic;
  uint32_t version;
  uint64_t tensor_count, kv_count;
  if (!rd.take(4, &magic)) return stop("the magic");
  if (std::memcmp(magic, "GGUF", 4) != 0) return bad("not a GGUF file (no GGUF magic)");
  if (!rd.num(&version) || !rd.num(&tensor_count) || !rd.num(&kv_count)) return stop("the counts");
  if (version != 2 && version != 3) return bad("GGUF version " + std::to_string(version) + " is not 2 or 3");
  // Each key-value takes at least 12 bytes and each tensor info at least 28: counts past that are lies.
  if (kv_count > file_size / 12 || tensor_count > file_size / 28)
    return bad("GGUF counts (" + std::to_string(tensor_count) + " tensors, " + std::to_string(kv_count) +
               " keys) cannot fit in the file");
  uint64_t alignment = 32;
  Metadata metadata;
  uint64_t split_no = 0, split_count = 0, split_tensors = 0;
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key;
    uint32_t type;
    if (!rd.str(&key) || !rd.num(&type)) return stop("key " + std::to_string(i));
    if (!valid_utf8(key.data(), key.size())) return bad("GGUF key " + std::to_string(i) + " is not UTF-8");
    if (key == "general.alignment") {
      uint32_t a;
      if (type != U32) return bad("general.alignment is not a u32");
      if (!rd.num(&a)) return stop("general.alignment");
      if (a == 0 || (a & (a - 1)) != 0) return bad("general.alignment " + std::to_string(a) + " is not a power of two");
      alignment = a;
      metadata.emplace_back(key, std::to_string(a));
      continue;
    }
    if (type > F64) return bad("GGUF key '" + key + "' has unknown value type " + std::to_string(type));
    std::string text;
    if (!rd.value_text(type, &text)) return stop("the value of '" + key + "'");
    if (key == "split.no") split_no = count_of(text);
    if (key == "split.count") split_count = count_of(text);
    if (key == "split.tensors.count") split_tensors = count_of(text);
    metadata.emplace_back(std::move(key), std::move(text));
  }
  ParseResult r;
  r.metadata = std::move(metadata);
  r.split_no = split_no, r.split_count = split_count, r.split_tensors = split_tensors;
  std::vector<uint64_t> relative;
  for (uint64_t i = 0; i < tensor_count; ++i) {
    TensorEntry t;
    uint32_t dims, type;
    uint64_t offset;
    if (!rd.str(&t.name) || !rd.num(&dims)) return stop("tensor info " + std::to_string(i));
    if (dims > 4) return bad("tensor '" + t.name + "' has " + std::to_string(dims) + " dimensions (GGUF allows 4)");
    std::vector<uint64_t> ne(dims);
    for (auto &n : ne)
      if (!rd.num(&n)) return stop("tensor info " + std::to_string(i));
    if (!rd.num(&type) || !rd.num(&offset)) return stop("tensor info " + std::to_string(i));
    if (!valid_utf8(t.name.data(), t.name.size())) return bad("tensor name " + std::to_string(i) + " is not UTF-8");
    const GgmlType *g = nullptr;
    for (const auto &e : ggml_types)
      if (e.id == type) g = &e;
    if (!g) return bad("tensor '" + t.name + "' has a ggml type (" + std::to_string(type) + ") rig does not know");
    t.shape.assign(ne.rbegin(), ne.rend());  // ne[0] is the innermost dimension
    t.dtype = g->dtype;
    t.dtype_name = g->name;
    t.ggml_type = g->id;
    uint64_t count;
    if (!element_count(ne, &count)) return bad("tensor '" + t.name + "' has a shape whose size overflows");
    if ((dims ? ne[0] : 1) % g->block != 0)
      return bad("tensor '" + t.name + "': its rows are not whole " + g->name + " blocks");
    if (__builtin_mul_overflow(count / g->block, g->bytes, &t.length))
      return bad("tensor '" + t.name + "' has a shape whose size overflows");
    if (offset % alignment != 0) return bad("tensor '" + t.name + "' is not aligned to general.alignment");
    relative.push_back(offset);
    r.tensors.push_back(std::move(t));
  }
  uint64_t start = (rd.at + alignment - 1) / alignment * alignment;
  if (start > file_size) return bad("truncated: the file ends before its GGUF data starts");
  r.data_start = start;
  for (size_t i = 0; i < r.tensors.size(); ++i)
    if (__builtin_add_overflow(relative[i], start, &r.tensors[i].offset))
      return bad("tensor '" + r.tensors[i].name + "' lies outside the file's data");
  check_table(r, file_size);
  return r;
}

}  // namespace rig::load
