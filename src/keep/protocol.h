// The keeper's wire format (docs/keep.md): what a keeper and the processes that attach say to each other
// over a UNIX stream socket, as bytes. Pure functions of bytes, no rig state and no I/O, so the fuzz
// harness (fuzz/fuzz_keep.cpp) builds this file alone. Every parse checks each length against the bytes
// it has before it reads them, and answers RIG_INVALID_ARGUMENT with words for anything else.
#pragma once

#include <rig.h>
#include <rig_interop.h>
#include <rig_load.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rig::keep {

// Every message: a 12-byte header (little-endian) then `length` bytes of body. A peer of another version
// is answered with an error naming both versions, then closed: versions never mix on one connection.
inline constexpr uint32_t kMagic = 0x4b474952;  // "RIGK"
// 2: a tensor of kind ipc names its region (arena) and its offset in it.
inline constexpr uint16_t kVersion = 2;
inline constexpr size_t kHeaderBytes = 12;
// A request's body is a few indices: anything longer is hostile. A table may name many tensors.
inline constexpr uint32_t kMaxRequestBody = 1u << 20;
inline constexpr uint32_t kMaxReplyBody = 64u << 20;
inline constexpr size_t kMaxName = 4096;

enum class Type : uint16_t {
  // requests (client to keeper)
  list = 1,    // empty body: the keeper answers table
  attach = 2,  // u32 device position, u32 count, count x u32 tensor index (count 0xffffffff: every tensor)
  detach = 3,  // empty body: the keeper drops what this connection holds (the version attached)
  bye = 4,     // empty body: the keeper closes the connection
  // replies (keeper to client)
  table = 0x81,   // u64 generation, u32 device count, per device (u16 length, name), u32 tensor count, per
                  // tensor (u16 name length, name, u32 dtype, u32 ggml type, u32 rank, rank x u64 shape,
                  // u64 length)
  tensor = 0x82,  // u32 index, u32 device position, u64 length, u32 memory kind, u32 flags, then for
                  // kind ipc: u32 region, u64 offset, 128 bytes of the region's rig_ipc_handle and 128 of
                  // the point's (all zeros: nothing to wait for); for kind fd: u32 region, u64 offset, u64
                  // the region's length. A descriptor (kinds memfd and fd) travels as SCM_RIGHTS data
                  // beside the header
  error = 0xff,   // u32 rig_status, u32 length, message bytes
};

enum class MemoryKind : uint32_t {
  memfd = 1,  // a sealed memfd (memory devices), sent once the copy into it is reached
  ipc = 2,    // CUDA/HIP IPC handles of the region holding the tensor (one of the keeper's arenas, or a
              // buffer of the tensor's own) and of the point after which it holds the file's bytes
  fd = 3,     // the opaque memory fd of the region holding the tensor (Vulkan), sent once the copy into the
              // tensor is reached; every message of a region carries its fd again, a client imports one
};
inline constexpr uint32_t kFlagWritable = 1;  // the keeper lets clients write the tensor

struct Header {
  uint16_t version = kVersion;
  Type type = Type::error;
  uint32_t length = 0;
};

// The header of `bytes` (kHeaderBytes of them): the magic, the version (a mismatch answers RIG_UNSUPPORTED
// naming both), a known type and a body no longer than `max_body`.
rig_status parse_header(const uint8_t *bytes, size_t n, uint32_t max_body, Header *out, std::string *why);
// `type`'s header followed by `body`.
std::vector<uint8_t> message(Type type, const std::vector<uint8_t> &body);

struct Request {
  Type type = Type::list;
  uint32_t device = 0;
  bool all = false;               // attach: every tensor
  std::vector<uint32_t> tensors;  // attach: the indices asked for
};
inline constexpr uint32_t kAllTensors = 0xffffffffu;
// A request's body after its header (a request type, else RIG_INVALID_ARGUMENT). Indices are checked
// against `tensor_count` and `device_count`: an unknown tensor or device answers RIG_NOT_FOUND naming it.
rig_status parse_request(const Header &h, const uint8_t *body, size_t n, size_t tensor_count, size_t device_count,
                         Request *out, std::string *why);
std::vector<uint8_t> encode_attach(uint32_t device, const std::vector<uint32_t> *tensors);

struct TableTensor {
  std::string name;
  rig_dtype dtype = RIG_DTYPE_U8;
  uint32_t ggml_type = 0;
  std::vector<uint64_t> shape;
  uint64_t length = 0;
};
struct Table {
  uint64_t generation = 0;  // which load of the checkpoint (1, then one more per reload)
  std::vector<std::string> devices;
  std::vector<TableTensor> tensors;
};
std::vector<uint8_t> encode_table(const Table &t);
rig_status parse_table(const uint8_t *body, size_t n, Table *out, std::string *why);

struct TensorReply {
  uint32_t index = 0;
  uint32_t device = 0;
  uint64_t length = 0;
  MemoryKind kind = MemoryKind::memfd;
  uint32_t flags = 0;
  // kinds ipc and fd: the tensor's bytes are [offset, offset + length) of region `arena` of its device,
  // whose handle is `memory` (ipc) or the descriptor beside the message, of `region_length` bytes (fd): the
  // same in every message naming that region, so a client imports it once.
  uint32_t arena = 0;
  uint64_t offset = 0;
  uint64_t region_length = 0;  // kind fd
  rig_ipc_handle memory{}, point{};
};
std::vector<uint8_t> encode_tensor(const TensorReply &t);
rig_status parse_tensor(const uint8_t *body, size_t n, TensorReply *out, std::string *why);

std::vector<uint8_t> encode_error(rig_status status, const std::string &message);
rig_status parse_error(const uint8_t *body, size_t n, rig_status *status, std::string *message, std::string *why);

}  // namespace rig::keep
