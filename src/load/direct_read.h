// Reads of an O_DIRECT descriptor through io_uring (liburing): a staging chunk is split into pieces that
// are all in flight at once, so one reader thread keeps the storage's queue deep where pread on an
// O_DIRECT descriptor waits for each read in turn. One reader per thread (a ring is not shared). Where
// io_uring cannot be set up (a kernel without it, a seccomp filter or a container that refuses
// io_uring_setup) the reader says so and reads with pread instead.
#pragma once

#include <rig.h>

#include <liburing.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace rig::load {

// What O_DIRECT asks of a read's offset, length and memory.
inline constexpr uint64_t direct_align = 4096;

class DirectRead {
 public:
  // `piece`: bytes a read asks for (a multiple of 4096); `depth`: reads in flight at most.
  DirectRead(int fd, size_t piece = size_t(1) << 20, unsigned depth = 16);
  ~DirectRead();
  DirectRead(const DirectRead &) = delete;
  DirectRead &operator=(const DirectRead &) = delete;

  // True where reads go through io_uring; otherwise why_not() says why not.
  bool uring() const { return ok_; }
  const std::string &why_not() const { return why_not_; }

  // Reads [offset, offset+length) into dst (both aligned as O_DIRECT asks); *got is the bytes read before
  // the file's end. RIG_DRIVER with errno's words on a read error (rig's message set).
  rig_status read(uint64_t offset, void *dst, size_t length, size_t *got);

 private:
  rig_status read_uring(uint64_t offset, void *dst, size_t length, size_t *got);

  int fd_;
  size_t piece_;
  unsigned depth_;
  bool ok_ = false;
  std::string why_not_;
  io_uring ring_{};
};

}  // namespace rig::load
