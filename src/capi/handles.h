// Generation-checked handles. A handle is a word (kind, generation, slot), never a pointer rig follows, so
// a null, released, stale or forged handle is answered RIG_INVALID_HANDLE instead of a crash.
//
// Slots live in chunks that are never freed (stable addresses). Using a handle pins its slot: the pin is
// taken, then the tag re-checked; release retires the tag first and then waits for the pins to drain
// before dropping the object, so an object is never destroyed under a caller that saw a live tag.
// A run's calls (one at a time: RIG_BUSY) pin it alone instead, by taking the slot's `alone` word, given
// back with a plain store (pin_alone).
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace rig::capi {

enum class Kind : uint8_t { device = 1, buffer, submission, run, module, verdict, load_file, load, load_pool, keeper,
                          attachment };

const char *kind_name(Kind kind);

struct Slot {
  std::atomic<uint64_t> tag{0};  // the live handle's word, 0 when free
  std::atomic<uint32_t> pins{0};
  std::atomic<uint32_t> alone{0};  // 1 while a call pins the slot alone (pin_alone), else 0
  std::shared_ptr<void> object;
  uint32_t next_free = 0;   // free-list link (slot index + 1) while the slot is free
  uint32_t generation = 0;  // the generation the slot's next handle gets
};

// Stores `object` and returns its handle word (0 on out of memory, with the error set).
uint64_t insert(Kind kind, std::shared_ptr<void> object);

inline constexpr uint32_t kChunkSlots = 4096;
inline constexpr uint32_t kChunks = 1024;  // 4 Mi live handles at most
// The table's chunks of slots, filled by insert (under the table's lock) and never freed. A global of constant
// initialization, not a member of the table behind a function-local static: the check below is inline in
// every C entry and reads it with no guard and no call (issue 14, "cheaper C entries").
extern std::atomic<Slot *> slot_chunks[kChunks];

// Why a pin failed, for pin_refused's message.
enum class Refusal : uint8_t { not_a_handle, no_such_handle, released, released_alone, busy };
// Sets the message for a refused pin (unpinning `pinned` where the refusal took a pin: unpin_alone for
// released_alone, else unpin) and returns null.
// Cold and out of line, so the inline check stays a handful of instructions.
[[gnu::cold, gnu::noinline]] Slot *pin_refused(Refusal why, Slot *pinned, uint64_t word, Kind kind, const char *what);

inline void unpin(Slot *slot) { slot->pins.fetch_sub(1, std::memory_order_release); }

// The slot a handle `word` of `kind` names, not yet pinned: null (with the error set) for a null, forged or
// mistyped handle, or one of a slot never made. Never blocks.
[[gnu::always_inline]] inline Slot *slot_named(uint64_t word, Kind kind, const char *what) {
  uint32_t index = uint32_t(word) - 1;  // word 0 and index 0 wrap to past the table
  if (Kind(word >> 56) != kind) [[unlikely]]
    return pin_refused(Refusal::not_a_handle, nullptr, word, kind, what);
  if (index >= kChunks * kChunkSlots) [[unlikely]]
    return pin_refused(uint32_t(word) == 0 ? Refusal::not_a_handle : Refusal::no_such_handle, nullptr, word, kind,
                       what);
  Slot *chunk = slot_chunks[index / kChunkSlots].load(std::memory_order_acquire);
  if (!chunk) [[unlikely]]
    return pin_refused(Refusal::no_such_handle, nullptr, word, kind, what);
  return &chunk[index % kChunkSlots];
}

// The slot of a live handle of `kind`, pinned; null (with the error set) for a null, forged, stale or
// released handle. Never blocks.
[[gnu::always_inline]] inline Slot *pin(uint64_t word, Kind kind, const char *what) {
  Slot *s = slot_named(word, kind, what);
  if (!s) [[unlikely]]
    return nullptr;
  // seq_cst on both sides of the pin/retire handshake: release must see our pin or we must see its retire.
  s->pins.fetch_add(1, std::memory_order_seq_cst);
  if (s->tag.load(std::memory_order_seq_cst) != word) [[unlikely]]
    return pin_refused(Refusal::released, s, word, kind, what);
  return s;
}
// pin() for a call that must be the handle's only one in progress (a run's submit and setters): null with
// RIG_BUSY where another call holds the handle alone. *why is the failure's status (RIG_INVALID_HANDLE or
// RIG_BUSY). Never blocks. Give it back with unpin_alone.
//
// One locked operation where a counted pin and unpin take two. The `alone` word is taken with a
// compare-and-swap 0 -> 1, and only the caller that took it writes it again, so it is given back with a
// plain release store (a `mov` on x86, where the counted unpin is a `lock sub`): no other writer's change
// can be lost between. Why the store needs no stronger order: what the call did to the object must be
// visible to the next call that takes the word (release here, the next CAS's acquire) and to remove(),
// which waits for the word to read 0 with a seq_cst load (acquire included) before it drops the object.
// Why a call never uses an object that remove() drops (the store-buffering pattern, as for counted pins):
// the CAS and the tag load here are seq_cst, as are remove()'s retire of the tag and its loads of the word.
// In the single total order of those four, if our tag load read the live word it comes before the retire,
// so our CAS does too, and remove()'s later load of the word reads our 1 or the release store of 0 that
// ended our call (then everything the call did happens before the drop). Which call gets RIG_BUSY: the
// CAS is one total order on the word, so of two overlapping calls exactly the later one fails it.
[[gnu::always_inline]] inline Slot *pin_alone(uint64_t word, Kind kind, const char *what, rig_status *why) {
  *why = RIG_INVALID_HANDLE;
  Slot *s = slot_named(word, kind, what);
  if (!s) [[unlikely]]
    return nullptr;
  uint32_t free = 0;
  if (!s->alone.compare_exchange_strong(free, 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      [[unlikely]] {
    // Held: by a call on this handle (RIG_BUSY), or for a moment by a caller with a stale handle of the
    // slot, which finds the tag changed and gives it back (then RIG_BUSY is a spurious refusal, as with a
    // stale counted pin). A released handle says so rather than busy.
    if (s->tag.load(std::memory_order_seq_cst) != word) return pin_refused(Refusal::released, nullptr, word, kind, what);
    *why = RIG_BUSY;
    return pin_refused(Refusal::busy, nullptr, word, kind, what);
  }
  if (s->tag.load(std::memory_order_seq_cst) != word) [[unlikely]]
    return pin_refused(Refusal::released_alone, s, word, kind, what);
  return s;
}
// Gives back pin_alone's pin. Release: see pin_alone.
inline void unpin_alone(Slot *slot) { slot->alone.store(0, std::memory_order_release); }
// Retires the handle and drops its reference; RIG_INVALID_HANDLE if it is not live.
rig_status remove(uint64_t word, Kind kind, const char *what);

// A pinned handle's object for the length of one call; Alone: pinned by pin_alone (a run's calls).
template <class T, bool Alone = false>
class Pinned {
 public:
  Pinned() = default;
  Pinned(uint64_t word, Kind kind, const char *what) requires(!Alone) : slot_(pin(word, kind, what)) {}
  Pinned(uint64_t word, Kind kind, const char *what, rig_status *why) requires Alone
      : slot_(pin_alone(word, kind, what, why)) {}
  Pinned(const Pinned &) = delete;
  Pinned &operator=(const Pinned &) = delete;
  Pinned(Pinned &&o) noexcept : slot_(std::exchange(o.slot_, nullptr)) {}
  ~Pinned() {
    if (slot_) Alone ? unpin_alone(slot_) : unpin(slot_);
  }
  explicit operator bool() const { return slot_ != nullptr; }
  T *get() const { return static_cast<T *>(slot_->object.get()); }
  T *operator->() const { return get(); }
  T &operator*() const { return *get(); }
  // A reference that outlives the call (a run keeping its buffers).
  std::shared_ptr<T> share() const { return std::static_pointer_cast<T>(slot_->object); }

 private:
  Slot *slot_ = nullptr;
};
// A run's handle pinned alone (pin_alone): RIG_BUSY while another call on it is in progress.
template <class T>
using PinnedAlone = Pinned<T, true>;

template <class H>
uint64_t word_of(H handle) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
}
template <class H>
H handle_of(uint64_t word) {
  return reinterpret_cast<H>(static_cast<uintptr_t>(word));
}

}  // namespace rig::capi
