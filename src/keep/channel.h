// One end of a keeper's connection: whole messages (keep/protocol.h) over a UNIX stream socket, with the
// descriptors that travel beside them (SCM_RIGHTS). Both the keeper and the attaching side use it.
#pragma once

#include <rig.h>

#include <cstdint>
#include <string>
#include <vector>

#include "keep/protocol.h"

namespace rig::keep {

// A descriptor owned by whoever holds it: closed at the end unless taken.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd &&o) noexcept : fd_(o.take()) {}
  Fd &operator=(Fd &&o) noexcept;
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd();
  int get() const { return fd_; }
  int take() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

struct Received {
  Header header;
  std::vector<uint8_t> body;
  std::vector<Fd> fds;  // what came with the message's bytes (closed with it unless taken)
};

// Sends one message and `fd` (-1: none) beside its first byte. Blocks until the socket took every byte
// (or the peer is gone: RIG_LOST), holding no lock; never raises SIGPIPE.
rig_status send_message(int socket, Type type, const std::vector<uint8_t> &body, int fd = -1);
// Receives one whole message whose body is at most `max_body` bytes. Blocks until it is in, holding no
// lock. RIG_LOST where the peer closed (between messages or within one: a truncated message),
// parse_header's statuses for a bad header (the connection is then out of step: close it). Descriptors
// sent beside a message are kept with it, at most 4; more, or cut ones, answer RIG_INVALID_ARGUMENT.
rig_status receive_message(int socket, uint32_t max_body, Received *out, std::string *why);

}  // namespace rig::keep
