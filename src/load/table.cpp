// Checks every format's table must pass, whichever parser made it.
#include "load/table.h"

#include <algorithm>
#include <unordered_set>

namespace rig::load {

ParseResult bad(std::string message) {
  ParseResult r;
  r.status = RIG_INVALID_ARGUMENT;
  r.message = std::move(message);
  return r;
}

bool valid_utf8(const char *s, size_t n) {
  const auto *p = reinterpret_cast<const unsigned char *>(s);
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i];
    size_t extra;
    uint32_t cp, min;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xe0) == 0xc0) { extra = 1; cp = c & 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { extra = 2; cp = c & 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { extra = 3; cp = c & 0x07; min = 0x10000; }
    else return false;
    if (n - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

bool element_count(const std::vector<uint64_t> &shape, uint64_t *count) {
  uint64_t n = 1;
  for (uint64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return false;
  *count = n;
  return true;
}

void check_table(ParseResult &r, uint64_t file_size) {
  std::unordered_set<std::string> names;
  for (const auto &t : r.tensors) {
    if (t.name.empty()) { r = bad("a tensor has an empty name"); return; }
    if (!valid_utf8(t.name.data(), t.name.size())) { r = bad("a tensor name is not UTF-8"); return; }
    if (t.shape.size() > RIG_LOAD_MAX_DIMS) { r = bad("tensor '" + t.name + "' has more than 8 dimensions"); return; }
    if (!names.insert(t.name).second) { r = bad("tensor '" + t.name + "' appears twice"); return; }
    uint64_t end;
    if (t.offset < r.data_start || __builtin_add_overflow(t.offset, t.length, &end) || end > file_size) {
      r = bad("tensor '" + t.name + "' lies outside the file's data [" + std::to_string(r.data_start) + ", " +
              std::to_string(file_size) + "): bytes [" + std::to_string(t.offset) + ", +" +
              std::to_string(t.length) + ")");
      return;
    }
  }
  std::vector<const TensorEntry *> order;
  for (const auto &t : r.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto *a, auto *b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->length && order[i]->length && order[i - 1]->offset + order[i - 1]->length > order[i]->offset) {
      r = bad("tensors '" + order[i - 1]->name + "' and '" + order[i]->name + "' overlap");
      return;
    }
}

}  // namespace rig::load
