// src/load/read_mode: rig_load_io's AUTO times O_DIRECT against buffered reads on a cold file once per file
// system and keeps the answer. A file written here and evicted from the page cache (fdatasync, then
// POSIX_FADV_DONTNEED) is timed both ways; the second ask answers from the cache with the same choice; a
// file in the page cache, or too short for two windows, teaches nothing and is read with O_DIRECT. Where
// this file system keeps the file resident whatever is asked (tmpfs), or refuses O_DIRECT, nothing can be
// timed: the test says so and skips (77).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "load/file.h"
#include "load/read_mode.h"

namespace {

constexpr uint64_t MiB = uint64_t(1) << 20;
const char *path = "test_read_mode.bin";
int failures = 0;

void expect(bool ok, const char *what, const std::string &why) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: %s (why: %s)\n", what, why.c_str());
  ++failures;
}

bool write_file(uint64_t size) {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::vector<char> block(MiB);
  for (size_t i = 0; i < block.size(); ++i) block[i] = char(i * 131);
  bool ok = true;
  for (uint64_t done = 0; ok && done < size; done += MiB) ok = ::write(fd, block.data(), MiB) == ssize_t(MiB);
  ok = ok && fdatasync(fd) == 0;
  ::close(fd);
  return ok;
}

// Drops the file from the page cache; true if it then is (mostly) not resident.
bool evict(rig::load::Shard &shard) {
  posix_fadvise(shard.fd, 0, 0, POSIX_FADV_DONTNEED);
  return rig::load::resident_fraction(shard.fd, shard.size, 0, shard.size) < 0.05;
}

bool open_shard(rig::load::Shard *shard) {
  shard->fd = ::open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (shard->fd < 0 || fstat(shard->fd, &st) != 0) return false;
  shard->path = path;
  shard->size = uint64_t(st.st_size);
  shard->file_system = uint64_t(st.st_dev);
  return true;
}

}  // namespace

int main() {
  if (!write_file(40 * MiB)) {
    std::perror("writing the test file");
    return 1;
  }
  rig::load::Shard shard;
  if (!open_shard(&shard)) {
    std::perror("opening the test file");
    return 1;
  }
  int probe = ::open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (probe < 0) {
    std::printf("SKIP: this file system refuses O_DIRECT (%s): nothing to time\n", std::strerror(errno));
    ::unlink(path);
    return 77;
  }
  ::close(probe);
  if (!evict(shard)) {
    std::printf("SKIP: this file system keeps the file in the page cache after POSIX_FADV_DONTNEED (tmpfs?)\n");
    ::unlink(path);
    return 77;
  }

  std::string why;
  bool first = rig::load::learned_direct(shard, 0, shard.size, 1, &why);
  expect(why.find("timed on this file system") != std::string::npos && why.find("GB/s") != std::string::npos,
         "a cold file is timed both ways, with the figures in the why", why);
  std::string again;
  evict(shard);
  bool second = rig::load::learned_direct(shard, 0, shard.size, 1, &again);
  expect(second == first && again.find("when timed") != std::string::npos,
         "the second ask on the file system answers what was learned, without timing", again);

  rig::load::forget_read_modes();
  std::string warm;
  std::vector<char> sink(MiB);
  for (uint64_t at = 0; at < shard.size; at += MiB) (void)!pread(shard.fd, sink.data(), MiB, off_t(at));
  expect(rig::load::learned_direct(shard, 0, shard.size, 1, &warm) &&
             warm.find("neither way could be timed cold") != std::string::npos,
         "windows in the page cache teach nothing: O_DIRECT, as before anything is learned", warm);
  std::string short_range;
  evict(shard);
  expect(rig::load::learned_direct(shard, 0, 12 * MiB, 1, &short_range) &&
             short_range.find("too short") != std::string::npos,
         "a range too short for two windows teaches nothing", short_range);
  std::string still;
  rig::load::learned_direct(shard, 0, shard.size, 1, &still);
  expect(still.find("timed on this file system") != std::string::npos, "nothing was kept from the untaught asks",
         still);

  ::unlink(path);
  std::printf("%s (this file system: %s)\n", failures ? "FAILED" : "ok", why.c_str());
  return failures ? 1 : 0;
}
