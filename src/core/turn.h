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
  // blocks on a full queue). Not recursive. Acquire: what the previous holder wrote is visible. A
  // compare-and-swap because two threads may take it at once: only one indivisible read-and-write of the
  // word (or a full fence between a store and a load, as costly) lets exactly one of them win.
  void lock() noexcept {
    uint32_t free = 0;
    if (word_.compare_exchange_strong(free, 1, std::memory_order_acquire, std::memory_order_relaxed)) [[likely]]
      return;
    lock_contended();
  }
  // Gives the turn back, waking one sleeper if any may sleep. Release: pairs with lock's acquire.
  // Why an exchange and not a plain store (issue 14 asked which locked operations a submit can lose): the
  // unlock must read the word in the same indivisible step that frees it. With a load then a store, a
  // thread could mark the word 2 and sleep between them; the store would free the turn without the wake,
  // and that thread would sleep for good. Nor can the store be followed by a check of a separate sleeper
  // count: on x86 the load may pass the store still in the store buffer (store-load reordering), the same
  // lost wake-up, unless a full fence stands between, which costs what the exchange costs.
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
