// The safetensors header: an 8-byte little-endian length, then that many bytes of JSON, parsed with
// nlohmann-json (Debian nlohmann-json3-dev), never by hand. Tensor offsets are relative to the data,
// which starts right after the header.
#include <nlohmann/json.hpp>

#include <cstring>

#include "load/table.h"

namespace rig::load {
namespace {

struct Dtype {
  const char *name;
  rig_dtype dtype;
  uint64_t bytes;
};
constexpr Dtype dtypes[] = {
    {"BOOL", RIG_DTYPE_BOOL, 1},        {"U8", RIG_DTYPE_U8, 1},     {"I8", RIG_DTYPE_I8, 1},
    {"F8_E4M3", RIG_DTYPE_F8_E4M3, 1}, {"F8_E5M2", RIG_DTYPE_F8_E5M2, 1},
    {"U16", RIG_DTYPE_U16, 2},          {"I16", RIG_DTYPE_I16, 2},   {"F16", RIG_DTYPE_F16, 2},
    {"BF16", RIG_DTYPE_BF16, 2},        {"U32", RIG_DTYPE_U32, 4},   {"I32", RIG_DTYPE_I32, 4},
    {"F32", RIG_DTYPE_F32, 4},          {"U64", RIG_DTYPE_U64, 8},   {"I64", RIG_DTYPE_I64, 8},
    {"F64", RIG_DTYPE_F64, 8},
};

uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

ParseResult parse_safetensors(const uint8_t *bytes, size_t avail, uint64_t file_size) {
  if (file_size < 8) return bad("truncated: a safetensors file starts with an 8-byte header length, the file has " +
                                std::to_string(file_size) + " bytes");
  if (avail < 8) { ParseResult r; r.need_bytes = 8; return r; }
  uint64_t n = le64(bytes);
  if (n > safetensors_header_limit)
    return bad("header length " + std::to_string(n) + " is over safetensors' limit of 100000000 bytes");
  if (n > file_size - 8)
    return bad("header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(file_size) +
               " bytes)");
  if (avail < 8 + n) { ParseResult r; r.need_bytes = 8 + n; return r; }

  ParseResult r;
  r.data_start = 8 + n;
  nlohmann::json header = nlohmann::json::parse(bytes + 8, bytes + 8 + n, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return bad("the header is not valid JSON (or holds a string that is not UTF-8)");
  if (!header.is_object()) return bad("the header is not a JSON object");
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    const auto &v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) return bad("__metadata__ is not an object");
      continue;
    }
    if (!v.is_object()) return bad("tensor '" + name + "' is not an object");
    auto dt = v.find("dtype"), sh = v.find("shape"), off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) return bad("tensor '" + name + "' has no dtype string");
    if (sh == v.end() || !sh->is_array()) return bad("tensor '" + name + "' has no shape array");
    if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      return bad("tensor '" + name + "' has no data_offsets pair of unsigned integers");
    TensorEntry t;
    t.name = name;
    t.dtype_name = dt->get<std::string>();
    const Dtype *d = nullptr;
    for (const auto &e : dtypes)
      if (t.dtype_name == e.name) d = &e;
    if (!d) return bad("tensor '" + name + "' has an unknown dtype '" + t.dtype_name + "'");
    t.dtype = d->dtype;
    if (sh->size() > RIG_LOAD_MAX_DIMS) return bad("tensor '" + name + "' has more than 8 dimensions");
    for (const auto &x : *sh) {
      if (!x.is_number_unsigned()) return bad("tensor '" + name + "' has a shape entry that is not an unsigned integer");
      t.shape.push_back(x.get<uint64_t>());
    }
    uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    if (end < begin) return bad("tensor '" + name + "' has data_offsets that end before they begin");
    t.length = end - begin;
    if (__builtin_add_overflow(begin, r.data_start, &t.offset))
      return bad("tensor '" + name + "' lies outside the file's data");
    uint64_t count, want;
    if (!element_count(t.shape, &count) || __builtin_mul_overflow(count, d->bytes, &want))
      return bad("tensor '" + name + "' has a shape whose size overflows");
    if (want != t.length)
      return bad("tensor '" + name + "': dtype " + t.dtype_name + " and shape make " + std::to_string(want) +
                 " bytes, its byte range holds " + std::to_string(t.length));
    r.tensors.push_back(std::move(t));
  }
  check_table(r, file_size);
  return r;
}

}  // namespace rig::load
