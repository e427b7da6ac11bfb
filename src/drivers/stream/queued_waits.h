// A stream device's in-queue waits on other devices not yet known to be safe: for each, the producer's
// timeline slot, the producer's value waited for, and this device's value that waits. A producer lost short
// of a value this device's queue waited for taints every value from the waiting one on
// (StreamDevice::check_producers), so an entry stays until this device's timeline has passed it.
//
// Why a ring of its own and not a vector under a lock (issue 35): every cross-device wait of a submit adds
// an entry, on the submit path, which promises no allocation and no lock but the turn; the vector grew (an
// allocation) while the GPU was far behind, and its lock was two locked operations an edge. Here the one
// writer is the device's turn holder (the hand-over, and the native stream's waits, which hold the turn too)
// and readers are any thread (a host wait's check of its producers): each entry carries a sequence word, set
// to its index + 1 once written, so a reader that finds another number skips an entry the writer has
// dropped and reused meanwhile (only dropped entries are reused). No locked operation, no allocation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace rig::stream {

struct TimelineSlot;

class QueuedWaits {
 public:
  struct Wait {
    TimelineSlot *producer;
    uint64_t producer_value;
    uint64_t value;  // this device's value that waits
  };
  // Entries kept at most: a submit waits in queue for one value per other device, so a full ring is this
  // many waits not yet passed by this device's timeline; the writer then drops what is passed, or waits
  // for the middle one (StreamDevice::make_queued_room).
  static constexpr size_t kCapacity = 2048;

  QueuedWaits() : ring_(new Entry[kCapacity]) {}

  // The writer's calls, holding the device's turn.
  size_t live() const { return tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed); }
  bool full() const { return live() == kCapacity; }
  // The waiting value of the k-th oldest live entry (0: the oldest); k < live().
  uint64_t value_at(size_t k) const {
    return ring_[(head_.load(std::memory_order_relaxed) + k) % kCapacity].value.load(std::memory_order_relaxed);
  }
  uint64_t oldest_value() const { return value_at(0); }
  // Appends `w`; !full().
  void push(const Wait &w) {
    uint64_t i = tail_.load(std::memory_order_relaxed);
    Entry &e = ring_[i % kCapacity];
    // A seqlock's write (Boehm, "Can seqlocks get along with programming language memory models?"): the
    // sequence word cleared before the fields change, set to i + 1 after.
    e.seq.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    e.producer.store(w.producer, std::memory_order_relaxed);
    e.producer_value.store(w.producer_value, std::memory_order_relaxed);
    e.value.store(w.value, std::memory_order_relaxed);
    e.seq.store(i + 1, std::memory_order_release);
    tail_.store(i + 1, std::memory_order_release);
  }
  // Drops entries from the oldest while `settled(wait)` says so, up to the first it does not (this device's
  // values rise along the ring, so what its timeline has passed is a prefix).
  template <class Settled>
  void drop_settled(Settled &&settled) {
    uint64_t h = head_.load(std::memory_order_relaxed), t = tail_.load(std::memory_order_relaxed);
    while (h < t && settled(read_own(h))) ++h;
    head_.store(h, std::memory_order_release);
  }

  // A reader's walk, any thread: f(wait) for each entry live when it started and not dropped before it was
  // read. Never blocks.
  template <class F>
  void for_each(F &&f) const {
    uint64_t t = tail_.load(std::memory_order_acquire);
    for (uint64_t i = head_.load(std::memory_order_acquire); i < t; ++i) {
      const Entry &e = ring_[i % kCapacity];
      uint64_t seq = e.seq.load(std::memory_order_acquire);
      if (seq != i + 1) continue;  // dropped, and written again for a later index
      Wait w{e.producer.load(std::memory_order_relaxed), e.producer_value.load(std::memory_order_relaxed),
             e.value.load(std::memory_order_relaxed)};
      std::atomic_thread_fence(std::memory_order_acquire);
      if (e.seq.load(std::memory_order_relaxed) != seq) continue;  // rewritten while read
      f(w);
    }
  }

 private:
  struct Entry {
    std::atomic<uint64_t> seq{0};  // index + 1 once written; 0 while written
    std::atomic<TimelineSlot *> producer{nullptr};
    std::atomic<uint64_t> producer_value{0};
    std::atomic<uint64_t> value{0};
  };
  Wait read_own(uint64_t i) const {  // the writer's read: no one else writes
    const Entry &e = ring_[i % kCapacity];
    return {e.producer.load(std::memory_order_relaxed), e.producer_value.load(std::memory_order_relaxed),
            e.value.load(std::memory_order_relaxed)};
  }
  std::unique_ptr<Entry[]> ring_;
  std::atomic<uint64_t> head_{0};  // the oldest live entry's index (written by the writer only)
  std::atomic<uint64_t> tail_{0};  // the next entry's index (written by the writer only)
};

}  // namespace rig::stream
