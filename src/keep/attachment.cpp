#include "keep/attachment.h"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/allocation.h"
#include "core/error.h"
#include "core/submit.h"
#include "interop/operations.h"
#include "keep/shared_memory.h"

namespace rig::keep {
namespace {

rig_status connect_to(const std::string &path, Fd *out) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return fail(RIG_INVALID_ARGUMENT, "attach: the socket path has %zu bytes (1..%zu)", path.size(),
                sizeof addr.sun_path - 1);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  Fd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s) return fail(RIG_DRIVER, "attach: socket: %s", std::strerror(errno));
  if (::connect(s.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    int e = errno;
    if (e == EACCES || e == EPERM)
      return fail(RIG_UNSUPPORTED, "attach: %s: %s (the keeper's socket mode does not let this user connect)",
                  path.c_str(), std::strerror(e));
    return fail(RIG_NOT_FOUND, "attach: no keeper listens at %s: %s", path.c_str(), std::strerror(e));
  }
  *out = std::move(s);
  return RIG_OK;
}

// An error message of the keeper's as this side's failure.
rig_status keeper_error(const Received &m) {
  rig_status status;
  std::string text, why;
  if (parse_error(m.body.data(), m.body.size(), &status, &text, &why)) return fail(RIG_INVALID_ARGUMENT, "attach: %s", why.c_str());
  return fail(status, "attach: the keeper says: %s", text.c_str());
}

}  // namespace

namespace {

// A point handle of zero bytes: the keeper had nothing to wait for (an empty tensor).
bool no_point(const rig_ipc_handle &h) {
  for (uint8_t b : h.bytes)
    if (b) return false;
  return true;
}

// Keeps the imported buffer (its mapping, closed at its end) alive under a read-only allocation.
void drop_imported(void *user) { delete static_cast<std::shared_ptr<Buffer> *>(user); }

}  // namespace

// Region `t.arena`'s memory, imported at the first tensor that names it and kept for the attachment's
// life: one cuIpcOpenMemHandle per region (a keeper's arena holds many tensors), not one per tensor, whose
// cost grew with the tensor count (bench/README.md, bench/keep); for a Vulkan keeper, one import of the
// region's memory fd (`fd`, beside the message). Later messages carry the same handle or descriptor again;
// it is not imported twice. Read-only unless the keeper allows writes: CUDA maps IPC memory writable, so
// rig refuses the writes itself (a read-only allocation over the same memory, of which the tensors are
// then parts). Called holding mutex_.
rig_status Attachment::import_region(const TensorReply &t, int fd, bool writable,
                                      std::shared_ptr<Allocation> *out) {
  auto found = regions_.find(t.arena);
  if (found != regions_.end()) {
    if (found->second.writable != writable)
      return fail(RIG_INVALID_ARGUMENT, "attach: the keeper sent region %u both writable and read-only (a hostile "
                  "or broken keeper)", t.arena);
    *out = found->second.whole;
    return RIG_OK;
  }
  std::shared_ptr<Buffer> imported;
  rig_status s = t.kind == MemoryKind::fd ? interop::import_memory_fd(*device_, fd, t.region_length, &imported)
                                          : interop::import_memory_ipc(*device_, t.memory, &imported);
  if (s != RIG_OK) return s;
  std::shared_ptr<Allocation> whole = imported->allocation;
  if (!writable) {
    auto keep = std::make_unique<std::shared_ptr<Buffer>>(imported);
    whole = std::make_shared<Allocation>(*device_, imported->allocation->base(), imported->length, true, false);
    whole->on_release(drop_imported, keep.release());
  }
  regions_[t.arena] = {whole, writable};
  *out = std::move(whole);
  return RIG_OK;
}

// The tensor as a part of its imported region (stamps of its own), with the keeper's copy point in them as
// the last write: the client's work on it waits in queue for that copy, and for nothing of the other
// tensors of its region. A point of zeros (and every tensor of a memory fd): the copy was reached when the
// keeper sent it, no event to open. Called holding mutex_.
rig_status Attachment::import_part(const TensorReply &t, int fd, bool writable, std::shared_ptr<Buffer> *out) {
  std::shared_ptr<Allocation> whole;
  if (rig_status s = import_region(t, fd, writable, &whole)) return s;
  if (!in_range(whole->length(), t.offset, t.length))
    return fail(RIG_INVALID_ARGUMENT, "attach: tensor %u lies at bytes [%llu, +%llu) of the keeper's region %u, "
                "which has %zu (a hostile or broken keeper)", t.index, static_cast<unsigned long long>(t.offset),
                static_cast<unsigned long long>(t.length), t.arena, whole->length());
  uint64_t point = 0;
  if (t.kind == MemoryKind::ipc && !no_point(t.point))
    if (rig_status s = interop::import_point_ipc(*device_, t.point, &point)) return s;
  std::shared_ptr<Buffer> part;
  if (rig_status s = buffer_part(whole, t.offset, t.length, &part)) return s;
  if (point) raise_outside(*part, *device_, point, true);
  *out = std::move(part);
  return RIG_OK;
}

rig_status Attachment::attach(const std::string &socket_path, Device &device, std::unique_ptr<Attachment> *out) {
  std::unique_ptr<Attachment> a(new Attachment);
  a->device_ = &device;
  if (rig_status s = connect_to(socket_path, &a->socket_)) return s;
  // A send that fails is not the answer: a keeper that refused this process closed its end after its
  // error message, which is still there to read.
  send_message(a->socket_.get(), Type::list, {});
  Received m;
  std::string why;
  if (rig_status s = receive_message(a->socket_.get(), kMaxReplyBody, &m, &why))
    return fail(s, "attach: %s", why.c_str());
  if (m.header.type == Type::error) return keeper_error(m);
  if (m.header.type != Type::table) return fail(RIG_INVALID_ARGUMENT, "attach: the keeper answered no table");
  if (rig_status s = parse_table(m.body.data(), m.body.size(), &a->table_, &why))
    return fail(s, "attach: %s", why.c_str());
  // A memory device takes the keeper's first memory device's tensors (memfds are any process's); a GPU
  // takes those of the keeper's device of its own name (its IPC memory is that GPU's).
  bool memory = device.kind() == RIG_DEVICE_MEMORY, found = false;
  for (size_t d = 0; d < a->table_.devices.size() && !found; ++d)
    if (memory ? a->table_.devices[d].rfind("memory:", 0) == 0 : a->table_.devices[d] == device.info().name) {
      a->position_ = uint32_t(d);
      found = true;
    }
  if (!found) {
    std::string held;  // where it does hold them, so that the caller knows which device to attach with
    for (const std::string &d : a->table_.devices) held += (held.empty() ? "" : ", ") + d;
    return fail(RIG_NOT_FOUND, "attach: the keeper holds no tensors on %s: it holds them on %s (attach with one of "
                "those)", memory ? "a memory device" : device.info().name.c_str(), held.c_str());
  }
  a->received_.resize(a->table_.tensors.size());
  a->writable_.resize(a->table_.tensors.size());
  if (send_message(a->socket_.get(), Type::attach, encode_attach(a->position_, nullptr)) != RIG_OK)
    return fail(RIG_LOST, "attach: the keeper at %s closed the connection", socket_path.c_str());
  *out = std::move(a);
  return RIG_OK;
}

Attachment::~Attachment() {
  if (socket_) send_message(socket_.get(), Type::bye, {});
}

rig_status Attachment::check_keeper() {
  if (failed_ != RIG_OK) return fail(failed_, "%s", message_.c_str());
  // The keeper's end closed (it stopped or died): POLLRDHUP says so even with its last bytes unread.
  pollfd p{socket_.get(), POLLRDHUP, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
    failed_ = RIG_LOST;
    message_ = "attach: the keeper closed the connection (it stopped or died): buffers received stay mapped "
               "with the bytes they held, but no keeper stands behind them";
    return fail(failed_, "%s", message_.c_str());
  }
  return RIG_OK;
}

rig_status Attachment::receive_one() {
  Received m;
  std::string why;
  rig_status s = receive_message(socket_.get(), kMaxReplyBody, &m, &why);
  if (s == RIG_OK && m.header.type == Type::error) s = keeper_error(m);
  else if (s == RIG_OK && m.header.type != Type::tensor) s = fail(RIG_INVALID_ARGUMENT, "attach: an unexpected message");
  else if (s != RIG_OK) s = fail(s, "attach: %s", why.c_str());
  TensorReply t;
  if (s == RIG_OK && (s = parse_tensor(m.body.data(), m.body.size(), &t, &why)) != RIG_OK)
    fail(s, "attach: %s", why.c_str());
  // A memory device takes memfds, a GPU IPC handles or memory fds; a descriptor comes with memfd and fd.
  bool memfd = t.kind == MemoryKind::memfd, with_fd = memfd || t.kind == MemoryKind::fd;
  if (s == RIG_OK && (t.index >= received_.size() || t.device != position_ || memfd != (device_->kind() == RIG_DEVICE_MEMORY) ||
                      m.fds.size() != (with_fd ? 1u : 0u) || t.length != table_.tensors[t.index].length))
    s = fail(RIG_INVALID_ARGUMENT, "attach: tensor %u's message disagrees with the table", t.index);
  std::shared_ptr<Buffer> b;
  bool writable = t.flags & kFlagWritable;
  if (s == RIG_OK)
    s = memfd ? map_shared_memory(*device_, m.fds[0].get(), t.length, writable, &b)
              : import_part(t, with_fd ? m.fds[0].get() : -1, writable, &b);
  if (s != RIG_OK) {
    // Out of step or refused: every later get answers the same.
    failed_ = s;
    message_ = last_error();
    return s;
  }
  received_[t.index] = std::move(b);
  writable_[t.index] = writable;
  return RIG_OK;
}

rig_status Attachment::get(size_t index, std::shared_ptr<Buffer> *out, bool *writable) {
  if (index >= table_.tensors.size())
    return fail(RIG_INVALID_ARGUMENT, "attachment_get: index %zu, the keeper serves %zu tensors", index,
                table_.tensors.size());
  std::lock_guard<std::mutex> lock(mutex_);
  if (rig_status s = check_keeper()) return s;
  while (!received_[index])
    if (rig_status s = failed_ ? fail(failed_, "%s", message_.c_str()) : receive_one()) return s;
  *out = received_[index];
  *writable = writable_[index];
  return RIG_OK;
}

bool Attachment::writable(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  return index < writable_.size() && writable_[index];
}

}  // namespace rig::keep
