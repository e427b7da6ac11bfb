#include "load/direct_read.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "load/file.h"

namespace rig::load {
namespace {

// liburing maps and unmaps its rings with system calls of its own, not libc's mmap and munmap, so a
// ThreadSanitizer build never sees a ring's pages go away: a reader thread whose new ring the kernel maps
// where a finished reader's ring was looks to it like a second thread on the first one's memory (CI's tsan
// step, 2026-12-04: a race reported between two readers' io_uring_cq_advance and the CQ walk). The kernel
// orders the unmap before the map that reuses the address; this counter says the same in the language's
// terms (a release before every unmap, an acquire after every map), for one atomic add per ring.
std::atomic<uint64_t> rings_unmapped{0};

}  // namespace

DirectRead::DirectRead(int fd, size_t piece, unsigned depth) : fd_(fd), piece_(piece), depth_(depth) {
  int r = io_uring_queue_init(depth_, &ring_, 0);
  ok_ = r == 0;
  if (ok_)
    (void)rings_unmapped.load(std::memory_order_acquire);
  else
    why_not_ = std::string("io_uring_queue_init: ") + strerror(-r);
}

DirectRead::~DirectRead() {
  if (!ok_) return;
  rings_unmapped.fetch_add(1, std::memory_order_release);
  io_uring_queue_exit(&ring_);
}

rig_status DirectRead::read(uint64_t offset, void *dst, size_t length, size_t *got) {
  if (!ok_) return read_fully(fd_, offset, dst, length, got);
  return read_uring(offset, dst, length, got);
}

rig_status DirectRead::read_uring(uint64_t offset, void *dst, size_t length, size_t *got) {
  // One entry per piece: where it starts, how much it asks for, how much came back. A short read is asked
  // again for its rest; a read that returns 0 marks the file's end.
  struct Piece {
    uint64_t at;
    size_t want, done = 0;
    bool end = false;
  };
  std::vector<Piece> pieces;
  for (size_t at = 0; at < length; at += piece_) pieces.push_back(Piece{offset + at, std::min(piece_, length - at)});
  size_t next = 0, in_flight = 0;
  std::vector<size_t> pending;  // pieces to (re)submit: a short read's rest goes back here
  auto queue = [&](size_t i) {
    io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
    Piece &p = pieces[i];
    char *into = static_cast<char *>(dst) + (p.at - offset) + p.done;
    io_uring_prep_read(sqe, fd_, into, unsigned(p.want - p.done), p.at + p.done);
    io_uring_sqe_set_data64(sqe, i);
    ++in_flight;
  };
  int error = 0;
  while (!error && (next < pieces.size() || !pending.empty() || in_flight)) {
    while (in_flight < depth_ && !pending.empty()) queue(pending.back()), pending.pop_back();
    while (in_flight < depth_ && next < pieces.size()) queue(next++);
    int r = io_uring_submit_and_wait(&ring_, 1);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {  // the last two: reap, then submit again
      error = -r;
      break;
    }
    io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      --in_flight;
      Piece &p = pieces[size_t(io_uring_cqe_get_data64(cqe))];
      int res = cqe->res;
      if (res == -EINTR || res == -EAGAIN) {
        pending.push_back(size_t(&p - pieces.data()));
      } else if (res < 0) {
        error = error ? error : -res;
      } else if (res == 0) {
        p.end = true;
      } else {
        p.done += size_t(res);
        if (p.done < p.want) pending.push_back(size_t(&p - pieces.data()));
      }
    }
    io_uring_cq_advance(&ring_, seen);
  }
  // Drain what is still in flight before the buffer can be reused (an error stops the queueing only):
  // submitting again also hands the kernel any entry the failed submit left, so every one completes.
  while (in_flight) {
    int r = io_uring_submit_and_wait(&ring_, 1);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) break;
    io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) ++seen;
    io_uring_cq_advance(&ring_, seen);
    in_flight -= seen;
  }
  if (error)
    return fail(RIG_DRIVER, "reading the file at offset %llu (io_uring, O_DIRECT): %s", (unsigned long long)offset,
                strerror(error));
  size_t total = 0;
  for (const Piece &p : pieces) {
    total += p.done;
    if (p.done < p.want) break;  // the file ends in this piece
  }
  *got = total;
  return RIG_OK;
}

}  // namespace rig::load
