#include "mapped/compare.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rig::mapped {

size_t first_difference(const void *a, const void *b, size_t n) {
  auto *p = static_cast<const unsigned char *>(a);
  auto *q = static_cast<const unsigned char *>(b);
  // memcmp per 4 KiB block first: it is vectorised; the byte loop only runs inside the differing block.
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

Compared compare_mapping(const void *map, const void *ref, size_t n, size_t *at) {
  // process_vm_readv on our own pid reads through the kernel, which answers EFAULT for pages that cannot
  // be read instead of raising a signal. Chunks stay in cache for the memcmp that follows.
  constexpr size_t chunk = 256 * 1024;
  std::vector<unsigned char> buf(n < chunk ? n : chunk);
  auto *m = static_cast<const unsigned char *>(map);
  auto *r = static_cast<const unsigned char *>(ref);
  pid_t self = getpid();
  size_t off = 0;
  while (off < n) {
    size_t len = n - off < chunk ? n - off : chunk;
    iovec local{buf.data(), len};
    iovec remote{const_cast<unsigned char *>(m + off), len};
    ssize_t got = process_vm_readv(self, &local, 1, &remote, 1, 0);
    if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
      // No process_vm_readv here (old kernel, seccomp): compare in place, trusting the mapping.
      size_t d = first_difference(m + off, r + off, n - off);
      if (d == n - off) return Compared::equal;
      *at = off + d;
      return Compared::differ;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      *at = off;
      return Compared::unreadable;
    }
    size_t d = first_difference(buf.data(), r + off, static_cast<size_t>(got));
    if (d < static_cast<size_t>(got)) {
      *at = off + d;
      return Compared::differ;
    }
    off += static_cast<size_t>(got);
  }
  return Compared::equal;
}

}  // namespace rig::mapped
