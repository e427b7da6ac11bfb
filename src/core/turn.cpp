#include "core/turn.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rig {

// The futex is the atomic's own word.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free);

void Turn::lock_contended() noexcept {
  // Marks the turn "a thread may sleep" (2) before sleeping, so the holder's unlock wakes one; a thread
  // that finds it free (the exchange returned 0) holds it, still marked 2: one spare wake at worst. The
  // kernel sleeps only while the word is still 2 (no lost wake-up); a signal or spurious return loops.
  while (word_.exchange(2, std::memory_order_acquire) != 0)
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word_), FUTEX_WAIT_PRIVATE, 2u, nullptr, nullptr, 0);
}

void Turn::wake_one() noexcept {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace rig
