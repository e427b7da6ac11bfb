#include "mapped/compare.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "mapped/parallel.h"

namespace rig::mapped {

namespace {

// The first difference in [0, n), by 4 KiB blocks: memcmp per block is vectorised; the byte loop only runs
// inside the differing block.
size_t first_difference_in(const unsigned char *p, const unsigned char *q, size_t n) {
  size_t off = 0;
  while (off < n) {
    size_t len = n - off < 4096 ? n - off : 4096;
    if (std::memcmp(p + off, q + off, len) != 0) {
      for (size_t i = off; i < off + len; ++i)
        if (p[i] != q[i]) return i;
    }
    off += len;
  }
  return n;
}

}  // namespace

size_t first_difference(const void *a, const void *b, size_t n) {
  auto *p = static_cast<const unsigned char *>(a);
  auto *q = static_cast<const unsigned char *>(b);
  // Pieces on several threads (mapped/parallel.h); the earliest piece's difference is the answer.
  std::atomic<size_t> first{n};
  split_pass(n, 4096, [&](size_t off, size_t len) {
    size_t d = first_difference_in(p + off, q + off, len);
    if (d == len) return;
    size_t at = off + d, seen = first.load(std::memory_order_relaxed);
    while (at < seen && !first.compare_exchange_weak(seen, at, std::memory_order_relaxed)) {
    }
  });
  return first.load(std::memory_order_relaxed);
}

namespace {

// True if every 4 KiB page of [map, map+n) can be read; else *bad is the first unreadable byte. One byte
// per page through process_vm_readv on our own pid: the kernel answers EFAULT for a page it cannot read
// (PROT_NONE, past the end of the file) where a plain load would raise SIGSEGV or SIGBUS. A page costs a
// page-table walk, so 64 MiB is checked in well under a millisecond once resident.
bool readable(const void *map, size_t n, size_t *bad) {
  constexpr size_t page = 4096;
  constexpr size_t batch = 1024;  // IOV_MAX on Linux
  auto base = reinterpret_cast<uintptr_t>(map);
  uintptr_t first = base & ~(page - 1);
  uintptr_t last = (base + n - 1) & ~(page - 1);
  unsigned char sink[batch];
  iovec local{sink, 0};
  iovec remote[batch];
  pid_t self = getpid();
  for (uintptr_t p = first; p <= last;) {
    size_t k = 0;
    for (; k < batch && p + k * page <= last; ++k) {
      uintptr_t at = p + k * page;
      remote[k].iov_base = reinterpret_cast<void *>(at < base ? base : at);
      remote[k].iov_len = 1;
    }
    local.iov_len = k;
    ssize_t got = process_vm_readv(self, &local, 1, remote, k, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == ENOSYS || errno == EPERM)) return true;  // cannot check here: trust the caller
    if (got < static_cast<ssize_t>(k)) {
      size_t i = got < 0 ? 0 : static_cast<size_t>(got);
      *bad = reinterpret_cast<uintptr_t>(remote[i].iov_base) - base;
      return false;
    }
    p += k * page;
  }
  return true;
}

}  // namespace

Compared compare_mapping(const void *map, const void *ref, size_t n, size_t *at) {
  if (n == 0) return Compared::equal;
  // One call to fill the page tables of a fresh mapping instead of a fault per page as the comparison
  // reads it (Linux 5.14's MADV_POPULATE_READ). Best effort: where it is refused (an older kernel, a
  // page that cannot be read) readable() below finds what the comparison must not touch.
#ifdef MADV_POPULATE_READ
  {
    auto base = reinterpret_cast<uintptr_t>(map) & ~uintptr_t{4095};
    (void)madvise(reinterpret_cast<void *>(base), reinterpret_cast<uintptr_t>(map) + n - base, MADV_POPULATE_READ);
  }
#endif
  if (!readable(map, n, at)) return Compared::unreadable;
  size_t d = first_difference(map, ref, n);
  if (d == n) return Compared::equal;
  *at = d;
  return Compared::differ;
}

}  // namespace rig::mapped
