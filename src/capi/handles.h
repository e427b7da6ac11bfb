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
// The slot of a live handle of `kind`, pinned; null (with the error set) otherwise.
[[gnu::hot]] Slot *pin(uint64_t word, Kind kind, const char *what);
// pin() for a call that must be the handle's only one in progress (a run's submit and setters): null with
// RIG_BUSY where another call holds a pin. It reads the count the pin's own fetch_add returns, so it costs
// nothing over pin(). *why is the failure's status (RIG_INVALID_HANDLE or RIG_BUSY).
[[gnu::hot]] Slot *pin_alone(uint64_t word, Kind kind, const char *what, rig_status *why);
inline void unpin(Slot *slot) { slot->pins.fetch_sub(1, std::memory_order_release); }
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
