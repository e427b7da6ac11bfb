// The safetensors header: an 8-byte little-endian length, then that many bytes of JSON, parsed with
// nlohmann-json (Debian nlohmann-json3-dev), never by hand. Tensor offsets are relative to the data,
// which starts right after the header.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>

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

// The header's tensors, taken from nlohmann-json's SAX events as they come: no document tree is built.
// Why not nlohmann::json::parse: its tree of std::map nodes and strings made reading the header of a file of
// many tensors (the shape of a mixture-of-experts shard) cost markedly more instructions, before the first
// tensor could load, than taking the events, which leaves mostly the lexer's work (bench/README.md,
// bench/load: the safetensors header). Each tensor's fields are kept as they arrive and checked at the end
// of its object, in the order and with the words the tree's checks had.
class Header : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit Header(uint64_t data_start) : data_start_(data_start) {}
  std::vector<TensorEntry> tensors;
  std::map<std::string, std::string> metadata;  // __metadata__'s strings (the last of a repeated key)
  std::string error;  // a refusal of the content (parse errors leave it empty)

  bool null() override { return scalar(Kind::other); }
  bool boolean(bool) override { return scalar(Kind::other); }
  bool number_integer(number_integer_t) override { return scalar(Kind::other); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(Kind::unsigned_number, v); }
  bool number_float(number_float_t, const string_t &) override { return scalar(Kind::other); }
  bool binary(binary_t &) override { return scalar(Kind::other); }
  bool string(string_t &v) override {
    if (!skip_ && depth_ == 2 && in_metadata_) {
      metadata[meta_key_] = std::move(v);
      return true;
    }
    if (!skip_ && depth_ == 2 && field_ == Field::dtype) {
      t_.dtype_string = true;
      t_.dtype = std::move(v);
      return true;
    }
    return scalar(Kind::other);
  }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool key(string_t &k) override {
    if (skip_) return true;
    if (depth_ == 1) {
      name_ = std::move(k);
      return true;
    }
    if (in_metadata_) {
      meta_key_ = std::move(k);
      return true;
    }
    field_ = k == "dtype" ? Field::dtype : k == "shape" ? Field::shape : k == "data_offsets" ? Field::offsets : Field::other;
    // a repeated field: the last one counts, as in a JSON object read into a map
    if (field_ == Field::shape) t_.shape = {};
    if (field_ == Field::offsets) t_.offsets = {};
    if (field_ == Field::dtype) t_.dtype_string = false;
    return true;
  }
  bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &) override { return false; }

 private:
  enum class Kind { unsigned_number, other };
  enum class Field { dtype, shape, offsets, other };
  struct List {  // a shape or data_offsets array as read
    bool array = false, all_unsigned = true;
    size_t count = 0;
    uint64_t values[RIG_LOAD_MAX_DIMS + 1];
  };
  struct Fields {  // one tensor's object as read
    bool dtype_string = false;
    std::string dtype;
    List shape, offsets;
  };

  bool refuse(std::string why) {
    error = std::move(why);
    return false;
  }
  // A value inside a skipped one, or a scalar: where it stands decides what it means.
  bool scalar(Kind kind, uint64_t v = 0) {
    if (skip_) return true;
    if (depth_ == 0) return refuse("the header is not a JSON object");
    if (depth_ == 1) return name_ == "__metadata__" ? refuse("__metadata__ is not an object")
                                                   : refuse("tensor '" + name_ + "' is not an object");
    if (depth_ == 3 && list_) {  // an entry of shape or data_offsets
      if (kind != Kind::unsigned_number) list_->all_unsigned = false;
      else if (list_->count < std::size(list_->values)) list_->values[list_->count] = v;
      ++list_->count;
    }
    // depth 2: dtype not a string, or a field rig does not read; either is decided at the object's end
    return true;
  }
  bool open(bool object) {
    if (skip_) {
      ++skip_;
      return true;
    }
    if (depth_ == 0) {
      if (!object) return refuse("the header is not a JSON object");
    } else if (depth_ == 1) {
      if (name_ == "__metadata__") {
        if (!object) return refuse("__metadata__ is not an object");
        in_metadata_ = true;  // its strings are read; any other value is the file's own business
        ++depth_;
        return true;
      }
      if (!object) return refuse("tensor '" + name_ + "' is not an object");
      t_ = Fields{};
    } else if (in_metadata_) {
      skip_ = 1;  // a metadata value that is an object or array: not a string, not read
      return true;
    } else if (depth_ == 2 && !object && (field_ == Field::shape || field_ == Field::offsets)) {
      list_ = field_ == Field::shape ? &t_.shape : &t_.offsets;
      list_->array = true;
    } else if (depth_ == 3 && list_) {  // an array or object as an entry
      list_->all_unsigned = false;
      ++list_->count;
      skip_ = 1;
      return true;
    } else {
      skip_ = 1;  // a field rig does not read, or dtype as an object or array
      return true;
    }
    ++depth_;
    return true;
  }
  bool close() {
    if (skip_) {
      --skip_;
      return true;
    }
    --depth_;
    if (depth_ == 2) list_ = nullptr;
    if (depth_ == 1 && in_metadata_) {
      in_metadata_ = false;
      return true;
    }
    if (depth_ == 1) return finish();
    return true;
  }
  // The end of tensor name_'s object: its checks, then its entry.
  bool finish() {
    const std::string &name = name_;
    if (!t_.dtype_string) return refuse("tensor '" + name + "' has no dtype string");
    if (!t_.shape.array) return refuse("tensor '" + name + "' has no shape array");
    const List &off = t_.offsets;
    if (!off.array || off.count != 2 || !off.all_unsigned)
      return refuse("tensor '" + name + "' has no data_offsets pair of unsigned integers");
    const Dtype *d = nullptr;
    for (const auto &e : dtypes)
      if (t_.dtype == e.name) d = &e;
    if (!d) return refuse("tensor '" + name + "' has an unknown dtype '" + t_.dtype + "'");
    if (t_.shape.count > RIG_LOAD_MAX_DIMS) return refuse("tensor '" + name + "' has more than 8 dimensions");
    if (!t_.shape.all_unsigned)
      return refuse("tensor '" + name + "' has a shape entry that is not an unsigned integer");
    TensorEntry t;
    t.name = name;
    t.dtype_name = std::move(t_.dtype);
    t.dtype = d->dtype;
    t.shape.assign(t_.shape.values, t_.shape.values + t_.shape.count);
    uint64_t begin = off.values[0], end = off.values[1];
    if (end < begin) return refuse("tensor '" + name + "' has data_offsets that end before they begin");
    t.length = end - begin;
    if (__builtin_add_overflow(begin, data_start_, &t.offset))
      return refuse("tensor '" + name + "' lies outside the file's data");
    uint64_t count, want;
    if (!element_count(t.shape, &count) || __builtin_mul_overflow(count, d->bytes, &want))
      return refuse("tensor '" + name + "' has a shape whose size overflows");
    if (want != t.length)
      return refuse("tensor '" + name + "': dtype " + t.dtype_name + " and shape make " + std::to_string(want) +
                    " bytes, its byte range holds " + std::to_string(t.length));
    tensors.push_back(std::move(t));
    return true;
  }

  uint64_t data_start_;
  int depth_ = 0;        // 1: in the header's object, 2: in a tensor's, 3: in its shape or data_offsets
  size_t skip_ = 0;      // > 0: inside a value nobody reads, this many levels deep
  std::string name_;     // the header's key being read
  Field field_ = Field::other;
  Fields t_;
  List *list_ = nullptr;  // the array being read at depth 3
  bool in_metadata_ = false;  // depth 2 is __metadata__'s object
  std::string meta_key_;
};

// The format asks the tensors to cover the data exactly: taken in offset order, each begins where the one
// before ended, the first at the data's start, the last at the file's end (the reference implementation's
// validate refuses a hole or a leading gap as InvalidOffset and bytes after the last as an incomplete
// buffer). Why refuse what could be skipped: a writer that leaves bytes nobody names wrote something else
// than it meant, and a reader that skips them hides it. Runs after check_table, so no two ranges overlap.
void check_covered(ParseResult &r, uint64_t file_size) {
  std::vector<const TensorEntry *> order;
  for (const auto &t : r.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto *a, auto *b) {
    return a->offset != b->offset ? a->offset < b->offset : a->length < b->length;
  });
  auto relative = [&](uint64_t at) { return std::to_string(at - r.data_start); };
  uint64_t end = r.data_start;
  for (const TensorEntry *t : order) {
    if (t->offset < end) {  // only an empty tensor can begin inside another (check_table saw the rest)
      r = bad("tensor '" + t->name + "' begins at " + relative(t->offset) +
              " of the data, inside the tensor before it, which ends at " + relative(end));
      return;
    }
    if (t->offset != end) {
      r = bad(end == r.data_start
                  ? "the data begins with a gap: bytes [0, " + relative(t->offset) + ") of the data before tensor '" +
                        t->name + "' belong to no tensor"
                  : "a hole in the data: bytes [" + relative(end) + ", " + relative(t->offset) +
                        ") of the data between tensors belong to no tensor (before '" + t->name + "')");
      return;
    }
    end = t->offset + t->length;
  }
  if (end != file_size)
    r = bad("bytes after the last tensor: the data ends at " + relative(end) + " but the file holds " +
            relative(file_size) + " bytes of data (the data's offsets are relative to byte " +
            std::to_string(r.data_start) + ")");
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
  Header header(r.data_start);
  if (!nlohmann::json::sax_parse(bytes + 8, bytes + 8 + n, &header)) {
    if (!header.error.empty()) return bad(std::move(header.error));
    return bad("the header is not valid JSON (or holds a string that is not UTF-8)");
  }
  // By name, the order the table had when the header was read into a map: a file's indices stay as they were.
  r.tensors = std::move(header.tensors);
  r.metadata.assign(header.metadata.begin(), header.metadata.end());
  std::sort(r.tensors.begin(), r.tensors.end(), [](const TensorEntry &a, const TensorEntry &b) { return a.name < b.name; });
  check_table(r, file_size);
  if (r.status == RIG_OK) check_covered(r, file_size);
  return r;
}

}  // namespace rig::load
