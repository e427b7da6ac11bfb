#include "load/read_mode.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/deadline.h"
#include "load/direct_read.h"

namespace rig::load {
namespace {

constexpr uint64_t piece = uint64_t(4) << 20;  // one reader's read: the staged path's default chunk
constexpr unsigned most_pieces = 16;            // a window is at most 64 MiB, however many readers
// The windows start this far into the range: reading the header read ahead of it, so the range's first
// megabytes are often in the page cache while the rest is not.
constexpr uint64_t past_header = uint64_t(8) << 20;

std::mutex learned_mutex;
std::map<uint64_t, bool> learned;  // st_dev -> O_DIRECT was at least as fast

struct FreeAligned {
  void operator()(void *p) const { std::free(p); }
};

// Seconds to read `pieces` pieces of [at, ...) in parallel: through one io_uring reader per thread on the
// O_DIRECT descriptor `direct`, or with pread on the buffered one; negative where a read failed.
double timed_window(int fd, bool direct, uint64_t at, unsigned pieces) {
  std::unique_ptr<void, FreeAligned> memory;
  void *raw = nullptr;
  if (posix_memalign(&raw, direct_align, size_t(piece) * pieces) != 0) return -1;
  memory.reset(raw);
  std::vector<std::thread> readers;
  std::vector<char> ok(pieces, 0);
  uint64_t t0 = steady_ns();
  for (unsigned k = 0; k < pieces; ++k)
    readers.emplace_back([&, k] {
      char *dst = static_cast<char *>(memory.get()) + size_t(piece) * k;
      uint64_t offset = at + piece * k;
      if (direct) {
        DirectRead reader(fd);
        size_t got = 0;
        ok[k] = reader.read(offset, dst, piece, &got) == RIG_OK && got == piece;
      } else {
        ok[k] = pread(fd, dst, piece, off_t(offset)) == ssize_t(piece);
      }
    });
  for (auto &t : readers) t.join();
  double seconds = double(steady_ns() - t0) * 1e-9;
  return std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; }) ? seconds : -1;
}

// What a file system that read no windows answers: O_DIRECT, the rule before anything was learned, unless
// the file system refuses it.
bool untaught(int direct_fd, const char *reason, std::string *why) {
  *why += reason;
  return direct_fd >= 0;
}

}  // namespace

double resident_fraction(int fd, uint64_t size, uint64_t offset, uint64_t length) {
  if (length == 0 || size == 0) return 1.0;
  void *map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return 1.0;
  constexpr uint64_t samples = 128, run = 8;
  uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t first = offset / page, last = (offset + length + page - 1) / page, pages = last - first;
  uint64_t step = pages <= samples * run ? run : pages / samples;
  unsigned char vec[run];
  size_t in = 0, seen = 0;
  for (uint64_t p = first; p < last; p += step) {
    uint64_t n = std::min(run, last - p);
    if (mincore(static_cast<char *>(map) + p * page, n * page, vec) != 0) break;
    for (uint64_t k = 0; k < n; ++k) in += vec[k] & 1;
    seen += n;
  }
  munmap(map, size);
  return seen ? double(in) / double(seen) : 1.0;
}

bool learned_direct(const Shard &shard, uint64_t lo, uint64_t hi, unsigned readers, std::string *why) {
  {
    std::lock_guard lock(learned_mutex);
    if (auto it = learned.find(shard.file_system); it != learned.end()) {
      *why += it->second ? "; O_DIRECT reads (under half the file is in the page cache; O_DIRECT was the faster "
                           "on this file system when timed)"
                         : "; buffered reads (under half the file is in the page cache; buffered was the faster "
                           "on this file system when timed)";
      return it->second;
    }
  }
  int direct_fd = ::open(shard.path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } closer{direct_fd};
  if (direct_fd < 0) return untaught(direct_fd, "; buffered reads (the file system refused O_DIRECT)", why);
  unsigned pieces = std::clamp(readers, 1u, most_pieces);
  uint64_t window = piece * pieces;
  uint64_t start = (std::max(lo, shard.base) - shard.base + past_header + direct_align - 1) / direct_align * direct_align;
  uint64_t end = std::min(hi - shard.base, shard.size);
  if (hi <= shard.base || end < start + 2 * window)
    return untaught(direct_fd, "; O_DIRECT reads (under half the file is in the page cache; too short to time both ways)",
                    why);
  if (resident_fraction(shard.fd, shard.size, start, 2 * window) > 0.05)
    return untaught(direct_fd, "; O_DIRECT reads (under half the file is in the page cache; its first windows are, so "
                               "neither way could be timed cold)", why);
  double direct = timed_window(direct_fd, true, start, pieces);
  double buffered = timed_window(shard.fd, false, start + window, pieces);
  if (direct <= 0 || buffered <= 0)
    return untaught(direct_fd, "; O_DIRECT reads (under half the file is in the page cache; a timing read failed)", why);
  bool faster = direct <= buffered;
  {
    std::lock_guard lock(learned_mutex);
    learned[shard.file_system] = faster;
  }
  char words[256];
  std::snprintf(words, sizeof words,
                "; %s reads (under half the file is in the page cache; timed on this file system: O_DIRECT %.2f GB/s, "
                "buffered %.2f GB/s over %u MiB each)",
                faster ? "O_DIRECT" : "buffered", double(window) / direct * 1e-9, double(window) / buffered * 1e-9,
                unsigned(window >> 20));
  *why += words;
  return faster;
}

void forget_read_modes() {
  std::lock_guard lock(learned_mutex);
  learned.clear();
}

}  // namespace rig::load
