// Interprocess handles for the fakes, over memory that really is shared between processes: device memory
// comes from one memfd per process (an arena mapped MAP_SHARED), and each interprocess event is a page of
// a memfd of its own. A handle names the exporter's descriptor (pid, fd, inode); the importer opens it
// through /proc/<pid>/fd and maps the bytes, so an exporter that exited, or closed what the handle names,
// makes the open fail as the real driver's does, and bytes that name nothing are refused.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

namespace fake_ipc {

constexpr size_t kPage = 4096;
inline size_t pages(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// A fake's 64-byte handle (CUipcMemHandle's size).
struct Handle {
  char tag[16];  // what it names: "fake-ipc-memory", "fake-ipc-event"
  int32_t pid;
  int32_t fd;
  uint64_t inode;   // the descriptor's file: a number reused for another file is not it
  uint64_t offset;  // within that file
  uint64_t length;
  int32_t device;  // memory: the exporter's GPU (the fake's ordinal), where the bytes stay; -1 for events
  char unused[12];
};
static_assert(sizeof(Handle) == 64);

inline uint64_t inode_of(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

inline Handle describe(const char *tag, int fd, uint64_t offset, uint64_t length, int32_t device = -1) {
  Handle h{};
  h.device = device;
  std::memcpy(h.tag, tag, std::min(std::strlen(tag), sizeof h.tag - 1));  // zero-padded: h is zeroed
  h.pid = static_cast<int32_t>(getpid());
  h.fd = fd;
  h.inode = inode_of(fd);
  h.offset = offset;
  h.length = length;
  return h;
}

enum class Refusal { none, malformed, same_process, gone };

// Maps the bytes a handle of `tag` names, from the exporting process; null with the reason otherwise.
inline void *open(const void *bytes, const char *tag, Handle *out, Refusal *why) {
  std::memcpy(out, bytes, sizeof *out);
  if (std::strncmp(out->tag, tag, sizeof out->tag) != 0 || out->length == 0 || out->offset % kPage) {
    *why = Refusal::malformed;
    return nullptr;
  }
  if (out->pid == getpid()) {
    *why = Refusal::same_process;
    return nullptr;
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", out->pid, out->fd);
  int fd = ::open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0 || inode_of(fd) != out->inode) {
    if (fd >= 0) close(fd);
    *why = Refusal::gone;
    return nullptr;
  }
  void *p = mmap(nullptr, pages(out->length), PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(out->offset));
  close(fd);  // the mapping keeps the file
  if (p == MAP_FAILED) {
    *why = Refusal::gone;
    return nullptr;
  }
  *why = Refusal::none;
  return p;
}

// The process's device memory: one memfd, reserved once (sparse: pages exist once touched), handed out in
// whole pages first-fit and given back with a punched hole.
class Arena {
 public:
  static constexpr size_t kSize = size_t{256} << 30;

  void *allocate(size_t length) {
    std::lock_guard hold(lock_);
    if (!ready()) return nullptr;
    size_t n = pages(length);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < n) continue;
      size_t at = it->first, left = it->second - n;
      free_.erase(it);
      if (left) free_[at + n] = left;
      return base_ + at;
    }
    return nullptr;
  }

  void release(void *p, size_t length) {
    std::lock_guard hold(lock_);
    size_t at = static_cast<char *>(p) - base_, n = pages(length);
    fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at), static_cast<off_t>(n));
    auto next = free_.lower_bound(at);
    if (next != free_.end() && next->first == at + n) {
      n += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == at) {
        prev->second += n;
        return;
      }
    }
    free_[at] = n;
  }

  int fd() const { return fd_; }
  uint64_t offset_of(const void *p) const { return static_cast<const char *>(p) - base_; }

 private:
  bool ready() {
    if (base_) return true;
    // FAKE_DEVICE_ARENA_GIB: a smaller reservation, for tools that cannot map kSize (valgrind's address space
    // ends near 128 GiB, so callgrind of a program on the fakes needs it: bench/README.md).
    size_t size = kSize;
    if (const char *gib = std::getenv("FAKE_DEVICE_ARENA_GIB"); gib && std::atoll(gib) > 0)
      size = static_cast<size_t>(std::atoll(gib)) << 30;
    fd_ = memfd_create("fake-device-memory", MFD_CLOEXEC);
    if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(size)) != 0) return false;
    void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
    if (p == MAP_FAILED) return false;
    base_ = static_cast<char *>(p);
    free_[0] = size;
    return true;
  }

  std::mutex lock_;
  int fd_ = -1;
  char *base_ = nullptr;
  std::map<size_t, size_t> free_;  // offset -> length, whole pages
};

// An interprocess event's shared words: the latest record's number and the highest number completed
// (records of one event complete in order on one stream; across streams the fake keeps the highest).
struct EventWords {
  std::atomic<uint64_t> latest;
  std::atomic<uint64_t> completed;
};

// A descriptor closed with its owner: the exporter's event holds its page's memfd while it lives (not the
// page's mappings, which queued records keep), so that destroying the event makes later opens fail.
struct OwnedFd {
  int fd = -1;
  OwnedFd() = default;
  OwnedFd(const OwnedFd &) = delete;
  OwnedFd &operator=(const OwnedFd &) = delete;
  ~OwnedFd() {
    if (fd >= 0) close(fd);
  }
};

// The page of one interprocess event, mapped: made by the exporter or opened by an importer.
class EventPage {
 public:
  // A new page of this process and, in *fd, its memfd (the caller's to close); null where the system refuses.
  static EventPage *make(int *fd_out) {
    int fd = memfd_create("fake-ipc-event", MFD_CLOEXEC);
    if (fd < 0) return nullptr;
    if (ftruncate(fd, kPage) != 0) {
      close(fd);
      return nullptr;
    }
    void *p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      close(fd);
      return nullptr;
    }
    *fd_out = fd;
    return new EventPage(p);
  }
  // Another process's page (fake_ipc::open's mapping of it).
  static EventPage *adopt(void *mapped) { return new EventPage(mapped); }
  ~EventPage() { munmap(words_, kPage); }
  EventWords *words() const { return words_; }

 private:
  explicit EventPage(void *p) : words_(static_cast<EventWords *>(p)) {}
  EventWords *words_;
};

// Marks record `n` of the event complete: the highest number completed only grows.
inline void complete(EventWords *w, uint64_t n) {
  uint64_t seen = w->completed.load(std::memory_order_relaxed);
  while (seen < n && !w->completed.compare_exchange_weak(seen, n, std::memory_order_release)) {
  }
}

}  // namespace fake_ipc
