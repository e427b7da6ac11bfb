// Generation-checked handles. A handle is a word (kind, generation, slot), never a pointer rig follows, so
// a null, released, stale or forged handle is answered RIG_INVALID_HANDLE instead of a crash.
//
// Slots live in chunks that are never freed (stable addresses). Using a handle pins its slot: the pin is
// taken, then the tag re-checked; release retires the tag first and then waits for the pins to drain
// before dropping the object, so an object is never destroyed under a caller that saw a live tag.
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace rig::capi {

enum class Kind : uint8_t { device = 1, buffer, submission, run, module, verdict, load_file, load, load_pool };

const char *kind_name(Kind kind);

struct Slot {
  std::atomic<uint64_t> tag{0};  // the live handle's word, 0 when free
  std::atomic<uint32_t> pins{0};
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
enum class Refusal : uint8_t { not_a_handle, no_such_handle, released, busy };
// Sets the message for a refused pin (unpinning `pinned` where the refusal took a pin) and returns null.
// Cold and out of line, so the inline check stays a handful of instructions.
[[gnu::cold, gnu::noinline]] Slot *pin_refused(Refusal why, Slot *pinned, uint64_t word, Kind kind, const char *what);

inline void unpin(Slot *slot) { slot->pins.fetch_sub(1, std::memory_order_release); }

// Pins the slot of a live handle `word` of `kind`; *before is the number of pins other callers held at that
// moment. Null (with the error set) for a null, forged, stale or released handle. Never blocks.
[[gnu::always_inline]] inline Slot *pin_counted(uint64_t word, Kind kind, const char *what, uint32_t *before) {
  uint32_t index = uint32_t(word) - 1;  // word 0 and index 0 wrap to past the table
  if (Kind(word >> 56) != kind) [[unlikely]]
    return pin_refused(Refusal::not_a_handle, nullptr, word, kind, what);
  if (index >= kChunks * kChunkSlots) [[unlikely]]
    return pin_refused(uint32_t(word) == 0 ? Refusal::not_a_handle : Refusal::no_such_handle, nullptr, word, kind,
                       what);
  Slot *chunk = slot_chunks[index / kChunkSlots].load(std::memory_order_acquire);
  if (!chunk) [[unlikely]]
    return pin_refused(Refusal::no_such_handle, nullptr, word, kind, what);
  Slot *s = &chunk[index % kChunkSlots];
  // seq_cst on both sides of the pin/retire handshake: release must see our pin or we must see its retire.
  *before = s->pins.fetch_add(1, std::memory_order_seq_cst);
  if (s->tag.load(std::memory_order_seq_cst) != word) [[unlikely]]
    return pin_refused(Refusal::released, s, word, kind, what);
  return s;
}

// The slot of a live handle of `kind`, pinned; null (with the error set) otherwise. Never blocks.
[[gnu::always_inline]] inline Slot *pin(uint64_t word, Kind kind, const char *what) {
  uint32_t before = 0;  // set by a successful pin; initialized for the compiler (read only then)
  return pin_counted(word, kind, what, &before);
}
// pin() for a call that must be the handle's only one in progress (a run's submit and setters): null with
// RIG_BUSY where another call holds a pin. It reads the count the pin's own fetch_add returns, so it costs
// nothing over pin(). *why is the failure's status (RIG_INVALID_HANDLE or RIG_BUSY).
// The pins are the calls in progress on this handle: a run's calls exclude each other, since the
// fetch_add is one total order, of two overlapping calls exactly the later one sees the other's pin.
[[gnu::always_inline]] inline Slot *pin_alone(uint64_t word, Kind kind, const char *what, rig_status *why) {
  uint32_t before = 0;  // set by a successful pin; initialized for the compiler (read only then)
  Slot *s = pin_counted(word, kind, what, &before);
  *why = RIG_INVALID_HANDLE;
  if (s && before != 0) [[unlikely]] {
    *why = RIG_BUSY;
    return pin_refused(Refusal::busy, s, word, kind, what);
  }
  return s;
}
// Retires the handle and drops its reference; RIG_INVALID_HANDLE if it is not live.
rig_status remove(uint64_t word, Kind kind, const char *what);

// A pinned handle's object for the length of one call.
template <class T>
class Pinned {
 public:
  Pinned() = default;
  Pinned(uint64_t word, Kind kind, const char *what) : slot_(pin(word, kind, what)) {}
  // Pinned alone: see pin_alone.
  Pinned(uint64_t word, Kind kind, const char *what, rig_status *why) : slot_(pin_alone(word, kind, what, why)) {}
  Pinned(const Pinned &) = delete;
  Pinned &operator=(const Pinned &) = delete;
  Pinned(Pinned &&o) noexcept : slot_(std::exchange(o.slot_, nullptr)) {}
  ~Pinned() {
    if (slot_) unpin(slot_);
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

template <class H>
uint64_t word_of(H handle) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
}
template <class H>
H handle_of(uint64_t word) {
  return reinterpret_cast<H>(static_cast<uintptr_t>(word));
}

}  // namespace rig::capi
