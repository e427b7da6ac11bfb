// A device's turn (docs/ordering-model.md, "The turn") as a lock of one 32-bit word. Every submit takes it,
// so its uncontended cost is on the submit path: std::mutex (glibc's pthread_mutex_lock and unlock, with
// their type dispatch and owner bookkeeping) ran ~57 instructions a submit on memory devices; this takes
// the turn with one compare-and-swap and gives it back with one exchange, the same two locked operations,
// and calls the kernel (futex) only when a thread has to sleep: the three-state mutex of Drepper's
// "Futexes Are Tricky". No system call, allocation or extra locked operation on the uncontended path.
#pragma once

#include <atomic>
#include <cstdint>

namespace rig {

class Turn {
 public:
  Turn() = default;
  Turn(const Turn &) = delete;
  Turn &operator=(const Turn &) = delete;

  // Takes the turn, sleeping while another thread holds it (it may hold it across a driver's hand-over that
  // blocks on a full queue). Not recursive. Acquire: what the previous holder wrote is visible.
  void lock() noexcept {
    uint32_t free = 0;
    if (word_.compare_exchange_strong(free, 1, std::memory_order_acquire, std::memory_order_relaxed)) [[likely]]
      return;
    lock_contended();
  }
  // Gives the turn back, waking one sleeper if any may sleep. Release: pairs with lock's acquire.
  void unlock() noexcept {
    if (word_.exchange(0, std::memory_order_release) == 2) [[unlikely]]
      wake_one();
  }

 private:
  [[gnu::cold, gnu::noinline]] void lock_contended() noexcept;
  [[gnu::cold, gnu::noinline]] void wake_one() noexcept;
  // 0 free, 1 held, 2 held and a thread may be sleeping on it (the next unlock wakes one).
  std::atomic<uint32_t> word_{0};
};

}  // namespace rig
