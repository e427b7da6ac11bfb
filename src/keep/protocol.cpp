#include "keep/protocol.h"

#include <cstring>

namespace rig::keep {
namespace {

// Bytes appended little-endian (every host rig builds for is; the format names the order anyway).
class Writer {
 public:
  void u16(uint16_t v) { put(&v, 2); }
  void u32(uint32_t v) { put(&v, 4); }
  void u64(uint64_t v) { put(&v, 8); }
  void put(const void *p, size_t n) {
    auto *b = static_cast<const uint8_t *>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  std::vector<uint8_t> bytes;
};

// A cursor over a body that never reads past its end: each read answers false once the bytes run out.
class Reader {
 public:
  Reader(const uint8_t *p, size_t n) : p_(p), n_(n) {}
  bool u16(uint16_t *v) { return get(v, 2); }
  bool u32(uint32_t *v) { return get(v, 4); }
  bool u64(uint64_t *v) { return get(v, 8); }
  bool get(void *out, size_t n) {
    if (n > n_ - at_) return false;
    if (n) std::memcpy(out, p_ + at_, n);
    at_ += n;
    return true;
  }
  bool text(size_t n, std::string *out) {
    if (n > n_ - at_) return false;
    out->assign(reinterpret_cast<const char *>(p_ + at_), n);
    at_ += n;
    return true;
  }
  size_t left() const { return n_ - at_; }

 private:
  const uint8_t *p_;
  size_t n_, at_ = 0;
};

rig_status bad(std::string *why, const std::string &what) {
  *why = what;
  return RIG_INVALID_ARGUMENT;
}

bool known(uint16_t t) {
  switch (Type(t)) {
    case Type::list: case Type::attach: case Type::detach: case Type::bye:
    case Type::table: case Type::tensor: case Type::error:
      return true;
  }
  return false;
}

bool is_request(Type t) { return uint16_t(t) < 0x80; }

// A name is UTF-8 text without NUL (the C face hands names out as C strings).
bool valid_name(const std::string &s) {
  if (s.empty() || s.size() > kMaxName) return false;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!len || c == 0 || len > s.size() - i) return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += len;
  }
  return true;
}

bool read_name(Reader &r, std::string *out) {
  uint16_t len;
  return r.u16(&len) && r.text(len, out) && valid_name(*out);
}

void write_name(Writer &w, const std::string &s) {
  w.u16(uint16_t(s.size()));
  w.put(s.data(), s.size());
}

}  // namespace

rig_status parse_header(const uint8_t *bytes, size_t n, uint32_t max_body, Header *out, std::string *why) {
  Reader r(bytes, n);
  uint32_t magic;
  uint16_t version, type;
  Header h;
  if (!r.u32(&magic) || !r.u16(&version) || !r.u16(&type) || !r.u32(&h.length))
    return bad(why, "a header of " + std::to_string(n) + " bytes, short of " + std::to_string(kHeaderBytes));
  if (magic != kMagic) return bad(why, "not a rig keeper message (bad magic)");
  if (version != kVersion) {
    *why = "protocol version " + std::to_string(version) + ", this side speaks " + std::to_string(kVersion);
    return RIG_UNSUPPORTED;
  }
  if (!known(type)) return bad(why, "unknown message type " + std::to_string(type));
  if (h.length > max_body)
    return bad(why, "a body of " + std::to_string(h.length) + " bytes, over the limit of " + std::to_string(max_body));
  h.version = version;
  h.type = Type(type);
  *out = h;
  return RIG_OK;
}

std::vector<uint8_t> message(Type type, const std::vector<uint8_t> &body) {
  Writer w;
  w.u32(kMagic);
  w.u16(kVersion);
  w.u16(uint16_t(type));
  w.u32(uint32_t(body.size()));
  w.put(body.data(), body.size());
  return std::move(w.bytes);
}

rig_status parse_request(const Header &h, const uint8_t *body, size_t n, size_t tensor_count, size_t device_count,
                         Request *out, std::string *why) {
  if (!is_request(h.type)) return bad(why, "a reply where a request was expected");
  Request q;
  q.type = h.type;
  Reader r(body, n);
  if (h.type == Type::attach) {
    uint32_t count;
    if (!r.u32(&q.device) || !r.u32(&count)) return bad(why, "attach: a body too short for its device and count");
    if (q.device >= device_count)
      return *why = "attach: device " + std::to_string(q.device) + ", the keeper has " + std::to_string(device_count),
             RIG_NOT_FOUND;
    q.all = count == kAllTensors;
    if (!q.all) {
      if (count > r.left() / 4) return bad(why, "attach: " + std::to_string(count) + " indices in a shorter body");
      q.tensors.resize(count);
      for (uint32_t &i : q.tensors) {
        r.u32(&i);
        if (i >= tensor_count)
          return *why = "attach: no tensor " + std::to_string(i) + " (the checkpoint has " +
                        std::to_string(tensor_count) + ")",
                 RIG_NOT_FOUND;
      }
    }
  }
  if (r.left()) return bad(why, std::to_string(r.left()) + " bytes past the request's end");
  *out = std::move(q);
  return RIG_OK;
}

std::vector<uint8_t> encode_attach(uint32_t device, const std::vector<uint32_t> *tensors) {
  Writer w;
  w.u32(device);
  w.u32(tensors ? uint32_t(tensors->size()) : kAllTensors);
  if (tensors)
    for (uint32_t i : *tensors) w.u32(i);
  return std::move(w.bytes);
}

std::vector<uint8_t> encode_table(const Table &t) {
  Writer w;
  w.u64(t.generation);
  w.u32(uint32_t(t.devices.size()));
  for (const std::string &d : t.devices) write_name(w, d);
  w.u32(uint32_t(t.tensors.size()));
  for (const TableTensor &x : t.tensors) {
    write_name(w, x.name);
    w.u32(uint32_t(x.dtype));
    w.u32(x.ggml_type);
    w.u32(uint32_t(x.shape.size()));
    for (uint64_t s : x.shape) w.u64(s);
    w.u64(x.length);
  }
  return std::move(w.bytes);
}

rig_status parse_table(const uint8_t *body, size_t n, Table *out, std::string *why) {
  Reader r(body, n);
  Table t;
  uint32_t devices, tensors;
  if (!r.u64(&t.generation) || !r.u32(&devices)) return bad(why, "table: too short for its counts");
  // Each entry takes at least 3 bytes: a count past what the body could hold is refused before any
  // allocation it would make.
  if (devices == 0 || devices > r.left() / 3) return bad(why, "table: " + std::to_string(devices) + " devices");
  t.devices.resize(devices);
  for (std::string &d : t.devices)
    if (!read_name(r, &d)) return bad(why, "table: a device name runs past the body or is not UTF-8");
  if (!r.u32(&tensors) || tensors > r.left() / 23) return bad(why, "table: a tensor count past the body");
  t.tensors.resize(tensors);
  for (TableTensor &x : t.tensors) {
    uint32_t dtype, rank;
    if (!read_name(r, &x.name)) return bad(why, "table: a tensor name runs past the body or is not UTF-8");
    if (!r.u32(&dtype) || !r.u32(&x.ggml_type) || !r.u32(&rank))
      return bad(why, "table: tensor '" + x.name + "' is cut short");
    if (dtype < RIG_DTYPE_U8 || dtype > RIG_DTYPE_GGML)
      return bad(why, "table: tensor '" + x.name + "' has dtype " + std::to_string(dtype));
    if (rank > RIG_LOAD_MAX_DIMS) return bad(why, "table: tensor '" + x.name + "' has rank " + std::to_string(rank));
    x.dtype = rig_dtype(dtype);
    x.shape.resize(rank);
    for (uint64_t &s : x.shape)
      if (!r.u64(&s)) return bad(why, "table: tensor '" + x.name + "' is cut short");
    if (!r.u64(&x.length)) return bad(why, "table: tensor '" + x.name + "' is cut short");
  }
  if (r.left()) return bad(why, "table: " + std::to_string(r.left()) + " bytes past its end");
  *out = std::move(t);
  return RIG_OK;
}

std::vector<uint8_t> encode_tensor(const TensorReply &t) {
  Writer w;
  w.u32(t.index);
  w.u32(t.device);
  w.u64(t.length);
  w.u32(uint32_t(t.kind));
  w.u32(t.flags);
  if (t.kind == MemoryKind::ipc) {
    w.u32(t.arena);
    w.u64(t.offset);
    w.put(t.memory.bytes, RIG_IPC_HANDLE_SIZE);
    w.put(t.point.bytes, RIG_IPC_HANDLE_SIZE);
  } else if (t.kind == MemoryKind::fd) {
    w.u32(t.arena);
    w.u64(t.offset);
    w.u64(t.region_length);
  }
  return std::move(w.bytes);
}

rig_status parse_tensor(const uint8_t *body, size_t n, TensorReply *out, std::string *why) {
  Reader r(body, n);
  TensorReply t;
  uint32_t kind;
  if (!r.u32(&t.index) || !r.u32(&t.device) || !r.u64(&t.length) || !r.u32(&kind) || !r.u32(&t.flags))
    return bad(why, "tensor: too short");
  if (kind != uint32_t(MemoryKind::memfd) && kind != uint32_t(MemoryKind::ipc) && kind != uint32_t(MemoryKind::fd))
    return bad(why, "tensor: unknown memory kind " + std::to_string(kind));
  t.kind = MemoryKind(kind);
  if (t.kind == MemoryKind::ipc && (!r.u32(&t.arena) || !r.u64(&t.offset) ||
                                    !r.get(t.memory.bytes, RIG_IPC_HANDLE_SIZE) ||
                                    !r.get(t.point.bytes, RIG_IPC_HANDLE_SIZE)))
    return bad(why, "tensor: its region, offset or IPC handles are cut short");
  if (t.kind == MemoryKind::fd && (!r.u32(&t.arena) || !r.u64(&t.offset) || !r.u64(&t.region_length)))
    return bad(why, "tensor: its region, offset or region length are cut short");
  // The range's end must be a number: whether it lies inside the region is the importer's to check.
  if (t.offset + t.length < t.offset) return bad(why, "tensor: its range wraps past 2^64");
  if (t.flags & ~kFlagWritable) return bad(why, "tensor: unknown flags " + std::to_string(t.flags));
  if (r.left()) return bad(why, "tensor: " + std::to_string(r.left()) + " bytes past its end");
  *out = t;
  return RIG_OK;
}

std::vector<uint8_t> encode_error(rig_status status, const std::string &text) {
  Writer w;
  w.u32(uint32_t(status));
  std::string m = text.substr(0, 4096);
  w.u32(uint32_t(m.size()));
  w.put(m.data(), m.size());
  return std::move(w.bytes);
}

rig_status parse_error(const uint8_t *body, size_t n, rig_status *status, std::string *text, std::string *why) {
  Reader r(body, n);
  uint32_t s, len;
  if (!r.u32(&s) || !r.u32(&len) || len > 4096 || !r.text(len, text) || r.left())
    return bad(why, "error: a malformed error message");
  // Only failures travel: an OK here, or a status no rig has, is the peer's mistake.
  if (s == RIG_OK || s > 0xffff) return bad(why, "error: status " + std::to_string(s) + " is no failure");
  *status = rig_status(s);
  return RIG_OK;
}

}  // namespace rig::keep
