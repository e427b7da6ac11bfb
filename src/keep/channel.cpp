#include "keep/channel.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

namespace rig::keep {

Fd &Fd::operator=(Fd &&o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.take();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

constexpr size_t kMaxFds = 4;

// Keeps the descriptors of a received control block; false where it was cut (MSG_CTRUNC) or held more
// than kMaxFds (each one is closed either way: none leaks).
bool take_fds(msghdr &msg, std::vector<Fd> *fds) {
  bool ok = !(msg.msg_flags & MSG_CTRUNC);
  for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds->emplace_back(fd);
    }
  }
  return ok && fds->size() <= kMaxFds;
}

// Reads exactly `n` bytes, collecting descriptors on the way. 1: done; 0: the peer closed; -1: errno.
int read_exact(int socket, uint8_t *p, size_t n, std::vector<Fd> *fds, bool *fds_ok) {
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFds * sizeof(int))];
  while (n) {
    iovec iov{p, n};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t got = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) return 0;
    if (!take_fds(msg, fds)) *fds_ok = false;
    p += got;
    n -= size_t(got);
  }
  return 1;
}

}  // namespace

rig_status send_message(int socket, Type type, const std::vector<uint8_t> &body, int fd) {
  std::vector<uint8_t> bytes = message(type, body);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  size_t at = 0;
  while (at < bytes.size()) {
    iovec iov{bytes.data() + at, bytes.size() - at};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0 && at == 0) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      cmsghdr *c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) return errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN ? RIG_LOST : RIG_DRIVER;
    at += size_t(sent);
  }
  return RIG_OK;
}

rig_status receive_message(int socket, uint32_t max_body, Received *out, std::string *why) {
  Received r;
  bool fds_ok = true;
  uint8_t head[kHeaderBytes];
  int got = read_exact(socket, head, sizeof head, &r.fds, &fds_ok);
  if (got <= 0) {
    *why = got == 0 ? "the peer closed the connection" : std::string("recvmsg: ") + std::strerror(errno);
    return RIG_LOST;
  }
  if (rig_status s = parse_header(head, sizeof head, max_body, &r.header, why)) return s;
  r.body.resize(r.header.length);
  got = read_exact(socket, r.body.data(), r.body.size(), &r.fds, &fds_ok);
  if (got <= 0) {
    *why = got == 0 ? "the peer closed the connection inside a message (truncated)"
                    : std::string("recvmsg: ") + std::strerror(errno);
    return RIG_LOST;
  }
  if (!fds_ok) {
    *why = "more descriptors than a message carries, or cut ones";
    return RIG_INVALID_ARGUMENT;
  }
  *out = std::move(r);
  return RIG_OK;
}

}  // namespace rig::keep
