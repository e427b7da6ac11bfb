#include "load/guarded_mapping.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>

namespace rig::load {
namespace {

// The guarded ranges, read by the handler on any thread: a fixed table of atomics, since a signal handler
// may take no lock and allocate nothing. begin is 0 for a free slot, 1 for one claimed without a range
// (being made or unmade), else the mapping's base; a range is made end first and begin last (release),
// unmade begin first, so a handler that reads the same begin before and after end has a whole range.
// fault: the first address a guarded read found missing, plus one (0: none).
struct Slot {
  std::atomic<uintptr_t> begin{0}, end{0}, fault{0};
};
constexpr size_t slot_count = 4096;
Slot slots[slot_count];

// The handler rig's replaced, which it chains to: written under `installing` before rig's goes in, read by
// rig's handler (a foreign SIGBUS landing while install() rewrites it is the one case it could read torn).
struct sigaction replaced;
bool installed = false;  // rig's handler was put in place once
uintptr_t page_mask;
std::mutex installing;

// The slot whose range holds `at`, or null.
Slot *guarding(uintptr_t at) {
  for (Slot &s : slots) {
    uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (begin <= 1) continue;
    uintptr_t end = s.end.load(std::memory_order_acquire);
    if (s.begin.load(std::memory_order_acquire) == begin && at >= begin && at < end) return &s;
  }
  return nullptr;
}

Slot *slot_of(void *base) {
  for (Slot &s : slots)
    if (s.begin.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(base)) return &s;
  return nullptr;
}

// Only async-signal-safe work here: atomics, mmap (a system call, like the ones POSIX lists), sigaction and
// raise. errno is the interrupted code's and is kept.
void on_sigbus(int sig, siginfo_t *info, void *context) {
  int saved = errno;
  uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  Slot *slot = info->si_code > 0 ? guarding(at) : nullptr;
  if (slot) {
    uintptr_t none = 0;  // the first fault is the one the load names
    slot->fault.compare_exchange_strong(none, at + 1, std::memory_order_relaxed);
    // A zeroed page in place of the one the file no longer holds; the faulting read runs again and reads it.
    void *page = reinterpret_cast<void *>(at & page_mask);
    if (mmap(page, ~page_mask + 1, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      errno = saved;
      return;
    }
  }
  // Not ours: the handler rig replaced decides, as if rig had never installed one.
  if (replaced.sa_flags & SA_SIGINFO) {
    replaced.sa_sigaction(sig, info, context);
  } else if (replaced.sa_handler != SIG_DFL && replaced.sa_handler != SIG_IGN) {
    replaced.sa_handler(sig);
  } else {
    // The default (a fault cannot be ignored): die of the signal, as without rig. Pending while this
    // handler runs, it is delivered on return.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGBUS, &dfl, nullptr);
    raise(SIGBUS);
  }
  errno = saved;
}

// Puts rig's handler in place where SIGBUS has none of the program's own: where it has the default, or the
// handler rig replaced before (a test harness that sets its handler for each test and restores the default
// after it, as cmocka does, leaves rig's out between them). A handler of the program's that came after
// rig's stays: the program took SIGBUS over (guarded_mapping.h). Under installing, briefly.
void install() {
  std::lock_guard lock(installing);
  if (!page_mask) page_mask = ~(uintptr_t(sysconf(_SC_PAGESIZE)) - 1);
  struct sigaction now {};
  if (sigaction(SIGBUS, nullptr, &now) != 0) return;
  bool ours = (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_sigbus;
  bool same_as_replaced = (now.sa_flags & SA_SIGINFO) == (replaced.sa_flags & SA_SIGINFO) &&
                          ((now.sa_flags & SA_SIGINFO) ? now.sa_sigaction == replaced.sa_sigaction
                                                      : now.sa_handler == replaced.sa_handler);
  if (ours || (installed && !same_as_replaced && now.sa_handler != SIG_DFL)) return;
  struct sigaction guard {};
  guard.sa_sigaction = on_sigbus;
  guard.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&guard.sa_mask);
  replaced = now;
  sigaction(SIGBUS, &guard, nullptr);
  installed = true;
}

}  // namespace

void *map_guarded(int fd, size_t length) {
  install();
  Slot *slot = nullptr;
  for (Slot &s : slots) {
    uintptr_t free = 0;
    if (s.begin.compare_exchange_strong(free, uintptr_t(1), std::memory_order_relaxed)) {  // 1: claimed, no range yet
      slot = &s;
      break;
    }
  }
  if (!slot) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  void *base = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int e = errno;
    slot->begin.store(0, std::memory_order_relaxed);
    errno = e;
    return MAP_FAILED;
  }
  slot->fault.store(0, std::memory_order_relaxed);
  slot->end.store(reinterpret_cast<uintptr_t>(base) + length, std::memory_order_relaxed);
  slot->begin.store(reinterpret_cast<uintptr_t>(base), std::memory_order_release);  // the range, whole
  return base;
}

bool guarded_fault(void *base, uint64_t *offset) {
  Slot *s = slot_of(base);
  uintptr_t at = s ? s->fault.load(std::memory_order_relaxed) : 0;
  if (at) *offset = at - 1 - reinterpret_cast<uintptr_t>(base);
  return at != 0;
}

void unmap_guarded(void *base, size_t length) {
  if (Slot *s = slot_of(base)) {
    s->begin.store(1, std::memory_order_release);  // no range: the handler looks no further
    s->end.store(0, std::memory_order_relaxed);
    s->begin.store(0, std::memory_order_release);  // free
  }
  munmap(base, length);
}

}  // namespace rig::load
