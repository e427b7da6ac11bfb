#include "capi/handles.h"

#include <mutex>
#include <new>
#include <pthread.h>
#include <thread>

#include "core/error.h"

namespace rig::capi {

std::atomic<Slot *> slot_chunks[kChunks] = {};

namespace {

struct Table {
  std::mutex lock;  // guards growth, the free list and generations (insert and remove, never pin)
  uint32_t used = 0;
  uint32_t free_head = 0;  // slot index + 1; 0 when empty
};

Table &table();

Slot *slot_at(uint32_t index) {
  Slot *chunk = slot_chunks[index / kChunkSlots].load(std::memory_order_acquire);
  return chunk ? &chunk[index % kChunkSlots] : nullptr;
}

// Fork: a parent thread may hold the table's lock (it is held only for a moment, to insert or free a slot):
// it is taken around fork() so that the child, whose other threads are gone, finds it free.
void lock_for_fork() { table().lock.lock(); }
void unlock_after_fork() { table().lock.unlock(); }
// The child also drops every pin: a pin is held by a thread inside a call, and the forking thread is in
// none (fork from inside a callback rig runs is not supported), so each pin the child finds was a parent
// thread's, which the child does not have. Kept, a run's `alone` word would answer RIG_BUSY to the child
// forever and its release would wait forever for the pins to drain.
void unlock_after_fork_in_child() {
  Table &t = table();
  for (uint32_t i = 0; i < t.used; ++i)
    if (Slot *s = slot_at(i)) {
      s->pins.store(0, std::memory_order_relaxed);
      s->alone.store(0, std::memory_order_relaxed);
    }
  t.lock.unlock();
}

Table &table() {
  // Leaked on purpose: handles stay checkable during static destruction.
  static Table *t = [] {
    auto *made = new Table;
    pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork_in_child);
    return made;
  }();
  return *t;
}

uint64_t make_word(Kind kind, uint32_t generation, uint32_t index) {
  return (uint64_t(kind) << 56) | (uint64_t(generation & 0xffffffu) << 32) | uint64_t(index + 1);
}

}  // namespace

const char *kind_name(Kind kind) {
  switch (kind) {
    case Kind::device: return "device";
    case Kind::buffer: return "buffer";
    case Kind::submission: return "submission";
    case Kind::run: return "run";
    case Kind::module: return "module";
    case Kind::verdict: return "verdict";
    case Kind::load_file: return "load file";
    case Kind::load: return "load";
    case Kind::load_pool: return "load pool";
    case Kind::keeper: return "keeper";
    case Kind::attachment: return "attachment";
  }
  return "handle";
}

uint64_t insert(Kind kind, std::shared_ptr<void> object) {
  Table &t = table();
  std::lock_guard g(t.lock);
  uint32_t index;
  if (t.free_head) {
    index = t.free_head - 1;
    t.free_head = slot_at(index)->next_free;
  } else {
    index = t.used;
    if (index / kChunkSlots >= kChunks) {
      fail(RIG_OUT_OF_MEMORY, "handle table full (%u handles)", kChunks * kChunkSlots);
      return 0;
    }
    if (!slot_chunks[index / kChunkSlots].load(std::memory_order_relaxed)) {
      Slot *chunk = new (std::nothrow) Slot[kChunkSlots];
      if (!chunk) {
        fail(RIG_OUT_OF_MEMORY, "handle table: out of memory");
        return 0;
      }
      slot_chunks[index / kChunkSlots].store(chunk, std::memory_order_release);
    }
    ++t.used;
  }
  Slot *s = slot_at(index);
  // Each reuse of a slot gets a new generation, so stale handles of it never match again (until 2^24
  // reuses of one slot).
  s->object = std::move(object);
  uint64_t word = make_word(kind, s->generation, index);
  s->tag.store(word, std::memory_order_release);
  return word;
}

Slot *pin_refused(Refusal why, Slot *pinned, uint64_t word, Kind kind, const char *what) {
  if (pinned) why == Refusal::released_alone ? unpin_alone(pinned) : unpin(pinned);
  switch (why) {
    case Refusal::not_a_handle:
      fail(RIG_INVALID_HANDLE, "%s: %s is not a %s handle", what, word ? "the handle" : "a null handle",
           kind_name(kind));
      break;
    case Refusal::no_such_handle:
      fail(RIG_INVALID_HANDLE, "%s: no such %s handle", what, kind_name(kind));
      break;
    case Refusal::released:
    case Refusal::released_alone:
      fail(RIG_INVALID_HANDLE, "%s: the %s handle was released (or never made)", what, kind_name(kind));
      break;
    case Refusal::busy:
      fail(RIG_BUSY, "%s: the %s is in use by another thread's call (a run is used by one thread at a time)", what,
           kind_name(kind));
      break;
  }
  return nullptr;
}

rig_status remove(uint64_t word, Kind kind, const char *what) {
  Slot *s = pin(word, kind, what);
  if (!s) return RIG_INVALID_HANDLE;
  uint64_t expected = word;
  bool retired = s->tag.compare_exchange_strong(expected, 0, std::memory_order_seq_cst);
  unpin(s);
  if (!retired) return fail(RIG_INVALID_HANDLE, "%s: the %s handle was released (or never made)", what, kind_name(kind));
  // Wait out callers that pinned the slot before it was retired, counted or alone; they hold it for one
  // call. seq_cst loads: the other half of the handshake with pin() and pin_alone() (see pin_alone).
  while (s->pins.load(std::memory_order_seq_cst) != 0 || s->alone.load(std::memory_order_seq_cst) != 0)
    std::this_thread::yield();
  std::shared_ptr<void> object = std::move(s->object);
  Table &t = table();
  {
    std::lock_guard g(t.lock);
    uint32_t index = uint32_t(word & 0xffffffffu) - 1;
    s->generation = (uint32_t(word >> 32) + 1) & 0xffffffu;
    s->next_free = t.free_head;
    t.free_head = index + 1;
  }
  object.reset();  // may wait for devices (a buffer's last release): outside every lock
  return RIG_OK;
}

}  // namespace rig::capi
