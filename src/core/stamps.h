// An allocation's stamps: the point of its last write and one last-use word per device that has a buffer
// over it. Words are added when a device first gets a buffer over the allocation (create, borrow), never on
// the submit path, and live in chunks that are never moved, so a submit reads and raises them with plain
// atomics and no lock. Each word holds points of one device only, its owner (only the owner raises it, with
// its own points), and the owner is kept beside the word: a submit that checks a use finds the device
// without decoding the point and looking it up (core/submit.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/point.h"

namespace rig {

class Device;

class Stamps {
 public:
  static constexpr int kChunk = 8;

  Stamps() = default;
  Stamps(const Stamps &) = delete;
  Stamps &operator=(const Stamps &) = delete;
  ~Stamps();

  uint64_t last_write() const {
    // acquire: a point read here names a value whose device already counts it submitted (submit stores
    // `submitted` before raising stamps with release).
    return last_write_.load(std::memory_order_acquire);
  }

  // The use word of `device` (its owner), made on first request. Not on the submit path (takes a lock).
  std::atomic<uint64_t> *use_word(const Device &device);

  // Calls f(point) for every device's last use (0 words skipped). The plain loop over the words (the full
  // collect's): every_owned_use's two words at hand, inlined there too, made the full path's loop over many
  // slots slower (bench/core's 24-buffer rows).
  template <class F>
  void for_each_use(F &&f) const {
    every_owned_use_after(0, [&](uint64_t p, const Device &) {
      f(p);
      return true;
    });
  }
  // Whether pred(point, owner) holds for every device's last use (0 words skipped), owner the device the
  // point is of; stops at the first that fails. The first kAtHand words are read without the count and with
  // no loop (an allocation of one or two devices, the common one, asks nothing more): a word is 0 until it is
  // counted and then raised by its owner, so an uncounted word is skipped as a 0 word is, and a counted one
  // read before its count is no different from one counted a moment after the call.
  template <class P>
  bool every_owned_use(P &&pred) const {
    static_assert(kAtHand == 2);  // one by one: the compiler keeps a loop of two as a loop
    if (!use_passes(first_.uses[0], pred) || !use_passes(first_.uses[1], pred)) return false;
    if (first_.used.load(std::memory_order_acquire) > kAtHand) [[unlikely]]
      return every_owned_use_after(kAtHand, pred);
    return true;
  }

  // Raises a device's use word to `point` (a value of that device). Only that device raises its word, and
  // only holding its turn, so a load and a release store suffice (a CAS a buffer cost more:
  // bench/README.md, "Why: the submit path").
  static void raise_use(std::atomic<uint64_t> *word, uint64_t point) {
    if (word->load(std::memory_order_relaxed) < point) [[likely]]  // equal only for a second slot on the word
      word->store(point, std::memory_order_release);
  }

  // raise_use from a thread that does not hold the device's turn (rig_buffer_stamp of a read): a CAS to the
  // maximum. A submit of the device that raises the word meanwhile (raise_use, holding the turn) stores its
  // own new value, above every point submitted before it, so the word never goes down. Never blocks.
  static void raise_use_unturned(std::atomic<uint64_t> *word, uint64_t point) {
    uint64_t seen = word->load(std::memory_order_relaxed);
    while (seen < point && !word->compare_exchange_weak(seen, point, std::memory_order_release,
                                                         std::memory_order_relaxed)) {
    }
  }

  // Makes `point` the last write; called holding the writer's turn, so one device's writes arrive in order.
  // Two devices writing one allocation at once are unordered by the program's own fault (Domains).
  void raise_write(uint64_t point) {
    last_write_.store(point, std::memory_order_release);
  }

 private:
  // A word and its owner side by side: a submit reads both for every use, so a 2-device allocation's uses
  // are 32 bytes of one or two cache lines. The owner is set before `used` counts the word (release).
  struct Use {
    std::atomic<uint64_t> word{0};
    const Device *owner = nullptr;
  };
  struct Chunk {
    std::atomic<int> used{0};
    std::atomic<Chunk *> next{nullptr};
    Use uses[kChunk];
  };

  static constexpr int kAtHand = 2;  // every_owned_use's words read without a loop or the count
  static_assert(kAtHand <= kChunk);

  template <class P>
  static bool use_passes(const Use &use, P &&pred) {
    uint64_t p = use.word.load(std::memory_order_acquire);
    return !p || pred(p, *use.owner);  // acquire: a raised word's owner, set before it was counted, is seen
  }
  // every_owned_use from the first chunk's word `from` on.
  template <class P>
  bool every_owned_use_after(int from, P &&pred) const {
    for (const Chunk *c = &first_; c; c = c->next.load(std::memory_order_acquire), from = 0) {
      int n = c->used.load(std::memory_order_acquire);
      for (int i = from; i < n; ++i)
        if (!use_passes(c->uses[i], pred)) return false;
    }
    return true;
  }

  // What a submit reads of an allocation of one or two devices is 56 bytes in a row: the last write, the
  // first chunk's count and link, and its first kAtHand words with their owners. Not aligned to a cache
  // line: tried, it put the 64 allocations of bench/core's widest read into a quarter of the L1 sets, and
  // that submit was slower (bench/README.md, "Why: the submit path").
  std::atomic<uint64_t> last_write_{0};
  Chunk first_;
  std::mutex grow_;                                                  // guards owners_ and appending words
  std::vector<std::pair<const Device *, std::atomic<uint64_t> *>> owners_;  // device -> its word
  std::vector<std::unique_ptr<Chunk>> more_;                          // chunks after the first
};

}  // namespace rig
