// A stream device's timeline (CUDA, HIP): the values its stream has reached, waitable by other devices'
// streams and readable by the host. Call names below are CUDA's; HIP's are the same with "hip".
//
// Two ways, chosen per device when it opens (the family decides which is its default):
//  - events (the default): a ring of events, one recorded after each value's work. Another stream waits
//    with cuStreamWaitEvent on the value's own event, so a chain of work across devices costs the very
//    calls a program makes by hand with streams and events: a wait, the work, a record. The host asks
//    the driver (cuEventQuery) only when it must know; the submit path reads what was last seen.
//    The events are recorded in turn from a window of the ring's (RIG_EVENT_WINDOW, a power of two from 2
//    to 1024, 1024 unless set): a small window keeps the few events a GPU that keeps up needs touched again
//    and again, where 1024 in turn touch each once per 1024 records (bench/cuda's (d) and (ds) rows). An
//    event is recorded again only once its value is seen reached: the window's reuse asks about the value
//    half a window back (one query per half window), and where that is not done yet the window doubles
//    instead of blocking, up to the ring.
//  - stream memory operations (CUDA: RIG_CUDA_TIMELINE=memops; HIP: unless RIG_HIP_TIMELINE=events; where the device has them): after each
//    value's work the stream writes the value into a word of pinned, device-mapped host memory
//    (cuStreamWriteValue64, fenced after the work); the host reads the word without a driver call;
//    another stream waits with cuStreamWaitValue64(GEQ). A loss can release other streams' waits (the
//    word is overwritten), which events cannot do; but on one GPU a wait still needs an event (see
//    StreamDevice::hand_over), so a cross-device edge costs four calls instead of three.
//
// Held values (either way): a value with no work of its own, only waits its queue was made to enqueue (a
// native stream's or event's work: rig_stream_point, the imports) gets no mark when it is taken (hold()):
// the stream is in order, so the next mark proves it too. Every question about a value goes through
// proof(), which answers with the mark at or after it. A held value nobody marked since is "not reached"
// until someone needs it; then the device's commit() marks it at the tail (mark_held()), holding the turn,
// as the engine's commit_through does before any wait (core/device.h): one event record fewer per
// rig_stream_point where the next submit comes first (bench/README.md, "Why: the interop edge").
#pragma once

#include <rig.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "drivers/stream/calls.h"

namespace rig::stream {

// What other devices may still read of a timeline after its device is gone. Slots and their words are
// never freed or reused: a stream of another device may still have a queued wait that reads the word.
struct TimelineSlot {
  uint64_t *word = nullptr;      // pinned host memory, written by the stream (memory-operation mode)
  DevicePtr address = 0;         // the word as streams address it (unified addressing: any context)
  // The frozen timeline, published to other devices' waits (set by Timeline::freeze, after `frozen`): not the
  // device's loss, which its engine Device owns, but the value reached at it, readable with no device.
  std::atomic<bool> lost{false};
  std::atomic<uint64_t> frozen{0};  // the last value reached when the device was lost
  char name[32] = {};               // the device's name, for messages of devices that wait on it

  // Lets a device whose queue waits on this timeline look for this device's fault (a sticky error no one
  // has seen yet would otherwise keep the waiting device's stream, and its waits, blocked for good).
  // `probe(owner)` runs under `owner_lock`; the owner clears both before it goes away.
  std::mutex owner_lock;
  void *owner = nullptr;
  void (*probe)(void *owner) = nullptr;
};

// Written into a lost device's word so that streams of other devices waiting on it move on (their
// devices are then lost by StreamDevice::wait, which sees the producer lost). Above every point value.
constexpr uint64_t kReleasedWord = uint64_t{1} << 62;

// A fresh slot with its word set to 0; the calling thread's current context allocates the word's page.
rig_status take_timeline_slot(const Family &family, TimelineSlot **out);

// Aligned to a cache line, with what a hand-over reads of its own timeline (mark) and of a producer's
// (enqueue_wait) in the first: the calls, the stream, the ring and the pool, the values, the slot.
class alignas(64) Timeline {
 public:
  // window: the events mode's first window (a power of two, 2 to kRing; see above), kRing where 0.
  Timeline(const Family &family, Stream stream, TimelineSlot *slot, bool memory_operations, size_t window = 0)
      : calls_(family.calls), stream_(stream), window_(static_cast<uint16_t>(window ? window : kRing)),
        memops_(memory_operations), slot_(slot), family_(family) {}
  ~Timeline();
  Timeline(const Timeline &) = delete;
  Timeline &operator=(const Timeline &) = delete;

  // Creates the event ring (events mode). Current context set by the caller.
  rig_status init();
  // RIG_EVENT_WINDOW as a device opens: the events mode's first window, 0 (the ring's) where unset; a value
  // that is not a power of two from 2 to kRing is refused with a message (RIG_INVALID_ARGUMENT).
  static rig_status window_asked(size_t *window);
  static constexpr size_t kRing = 1024;  // events in flight before mark() makes room
  bool memory_operations() const { return memops_; }
  TimelineSlot *slot() const { return slot_; }

  // Enqueues "value reached" after the work already on the stream. Called holding the device's turn,
  // values in order. Events mode: one record; when the ring is about to reuse an entry not yet seen
  // reached, first one query, or a blocking cuEventSynchronize while kRing/2 values are still in flight
  // (the queue is full: it blocks holding the turn, as a full queue does).
  // Inline (below), as are enqueue_wait, known and known_reached: the hand-over calls each once an edge,
  // and a call and its frame cost the path more instructions than their bodies (bench/README.md, "Why: the
  // submit path"); what is rare is out of line (make_rooms, the memory-operation mode, a question).
  [[gnu::hot]] inline Result mark(uint64_t value);
  // Takes `value` (the next after the last marked or held) without a mark: the next mark (mark() of a later
  // value, or mark_held()) proves it. False where the run of held values since the last mark would pass
  // kHeldRun (proof() looks that far ahead): the caller marks it instead. Called holding the turn; no call.
  bool hold(uint64_t value);
  // Marks the newest held value if no mark proves it yet (the device's commit()): one record (or write) at
  // the stream's tail, after which every held value is proved. Called holding the turn; SUCCESS with no
  // call where nothing is held unmarked.
  Result mark_held();
  // Whether a held value waits for a mark (mark_held() would record). Holding the turn.
  bool holding() const { return held_ > marked_.load(std::memory_order_relaxed); }

  // Enqueues on `consumer` a wait for `value` of this timeline (marked, or held and marked since; a held
  // value not marked yet answers ERROR_NOT_READY and enqueues nothing). Events mode: on the event of the
  // mark that proves it (proof()). Against this device's concurrent mark(): if the entry is recorded again
  // between the check and the wait, the wait captures the later record, which was handed over before this
  // wait: a longer wait, never a cycle.
  [[gnu::hot]] inline Result enqueue_wait(Stream consumer, bool consumer_memops, uint64_t value);

  // The last value reached. Never blocks on the device; events mode asks the driver (at most about
  // log2(kRing) + 1 queries). After freeze(), the value reached at the loss.
  uint64_t signaled() const;
  // Whether `value` is reached: events mode asks about the event of its proof only (one query at most). A
  // held value not marked since answers false (its device's commit() marks it).
  bool reached(uint64_t value) const;
  // The last value known reached without a driver call (events mode: what queries last saw).
  [[gnu::hot]] inline uint64_t known() const;
  // The word known() reads in events mode (DriverInfo::known_signal: the engine reads it itself), null in the
  // memory-operation mode, whose word the stream writes. After a loss known() answers the frozen value
  // instead; the engine asks the device's loss after the word (core/device.h). A value the word shows was
  // seen done; one a later freeze counts as lost (reached_cap: work that ran after a wait let go without its
  // value) was shown the same way before the freeze found it, so reading the word adds no new window.
  const std::atomic<uint64_t> *known_signal() const { return memops_ ? nullptr : &reached_; }
  // The submit path's question. Events mode: from known(), and one query only for a value older than the
  // newest marked (likely done; a yes then spares later submits the question), never for the newest,
  // which a chain across devices names on every submit and which is rarely done yet.
  [[gnu::hot]] inline bool known_reached(uint64_t value) const;

  // Loss: remembers the value reached now (at most `cap`) and releases every stream waiting on this
  // timeline's word (memory-operation mode). Only the first call freezes (its cap holds) and returns true;
  // a later or concurrent one returns false at once. Takes no lock.
  bool freeze(uint64_t cap = UINT64_MAX);
  // Whether any timeline of any family in the process was ever frozen (a device lost). False lets a device
  // skip looking through its in-queue waits for a lost producer (StreamDevice::check_producers): a host
  // wait then reads one word, not every wait its queue still keeps (up to 2048). Acquire: a freeze whose
  // count is seen has its slot's `lost` seen too.
  static bool any_frozen() { return frozen_count_.load(std::memory_order_acquire) != 0; }

 private:
  // Held values in a row (hold()) before a mark is asked for: bounds how far proof() looks ahead.
  static constexpr uint64_t kHeldRun = 16;

  // Events mode. ring_[value % kRing] is where a value's mark is found: the event recorded for it, and the
  // value. Only mark() (holding the turn) stores entries. An entry's event and value share a cache line: a
  // wait or a mark reads both. The event is stored before the value (release): a reader that sees the value
  // sees that event or a later record's, a longer wait, never a shorter one.
  struct Entry {
    std::atomic<Event> event{nullptr};
    std::atomic<uint64_t> value{0};  // the value of the mark the event was recorded for (0: none)
  };
  // The events themselves, recorded in turn from pool_[0, window_): each with the value it was last
  // recorded for. Read and written holding the turn only (mark()).
  struct Pooled {
    Event event = nullptr;
    uint64_t last = 0;
  };
  // What proves a value reached (events mode): proof() is the one place a value is mapped to an event.
  enum class Proof {
    reached,   // known() shows it: nothing to ask or wait for
    recorded,  // *entry holds the record of mark *mark >= value (the value's own; for a held value the
               // next mark's), *mark <= marked_
    unmarked,  // held, and no mark since: nothing to wait on yet (commit() marks it first)
  };
  // A held value's proof is the first mark after it, at most kHeldRun on (hold()'s bound), so at most
  // kHeldRun + 1 entries are read; a value marked itself reads one. An entry recorded again for a later
  // value no longer proves its old one, but mark() reuses an entry only once its value is seen reached
  // (make_room), so known() then shows `value` reached. Likewise an entry's event recorded again for a
  // later value from the window (make_room too): its old value was seen reached first, and a wait or a
  // query on the event then answers for the later record, which is later on the same stream: longer,
  // never wrong. Never calls the driver.
  // Inline where the value is its own mark (every submit's value, so every cross-device wait of a chain):
  // one load, where the call and the loop cost every edge instructions of their own (bench/README.md,
  // "Why: the interop edge").
  Proof proof(uint64_t value, const Entry **entry, uint64_t *mark) const {
    const Entry &e = ring_[value % kRing];
    // Acquire pairs with mark()'s release: an entry that shows `value` was recorded for it.
    if (e.value.load(std::memory_order_acquire) == value) {
      *entry = &e;
      *mark = value;
      return Proof::recorded;
    }
    return proof_after(value, entry, mark);
  }
  // proof() for a value not marked itself: held, or its entry recorded again since.
  [[gnu::cold]] Proof proof_after(uint64_t value, const Entry **entry, uint64_t *mark) const;
  // Events mode: whether value's work is done, asking about the event of its proof (false for a held value
  // not marked yet). Recorded again between proof() and the query, the later record answers, which is true
  // only where `value` is done too. Lock-free: entries are atomics, the driver's calls are thread-safe.
  // Raises reached_ to the proving mark when done.
  bool query(uint64_t value) const;
  void raise(uint64_t value) const;
  // reached() and known_reached(): known(), else one query of the event of value's proof (not where that
  // is the newest mark, unless `ask_newest`).
  bool reached_asking(uint64_t value, bool ask_newest) const;
  // The memory-operation mode's mark, enqueue_wait and known(): out of line, off the events' path.
  Result mark_word(uint64_t value);
  Result enqueue_wait_word(Stream consumer, bool consumer_memops, uint64_t value);
  uint64_t known_word() const;
  // mark() is about to reuse what stood for a mark `span` marks back (the ring's entry, span kRing; the
  // window's next event, span window_), not seen reached: asks about the value span/2 back (one query);
  // where it is not done, doubles the window (`widen`, below the ring: the next event is then one never
  // recorded), else blocks on it (cuEventSynchronize, holding the turn, as a full queue blocks). Holding the
  // turn; a failed call's result is returned.
  [[gnu::cold]] Result make_room(uint64_t value, size_t span, bool widen);
  // mark()'s cold path: make_room for the entry where its `previous` value is not seen reached, then for the
  // window's next event where its value is not.
  [[gnu::cold]] Result make_rooms(uint64_t value, uint64_t previous);

  // The first line (see the class's comment), 64 bytes.
  const Calls &calls_;
  Stream stream_;
  std::unique_ptr<Entry[]> ring_;
  std::unique_ptr<Pooled[]> pool_;             // kRing events, created by init()
  mutable std::atomic<uint64_t> reached_{0};   // highest value seen done
  std::atomic<uint64_t> marked_{0};            // highest value recorded
  static_assert(kRing <= UINT16_MAX);
  uint16_t window_;    // events recorded in turn now: a power of two, at most kRing (turn only)
  uint16_t next_ = 0;  // the pool's next event to record, below window_ (turn only)
  bool memops_;
  TimelineSlot *slot_;
  // The rest.
  const Family &family_;
  uint64_t held_ = 0;  // highest value taken by hold(); read and written holding the turn only
  // freeze() once: the timeline's own bookkeeping of its frozen value, not the device's loss (the engine's
  // Device owns that); slot_->lost publishes the frozen value to other devices once it is stored.
  std::atomic<bool> freezing_{false};
  static std::atomic<uint64_t> frozen_count_;  // timelines frozen so far, every family's (any_frozen)
};

Result Timeline::mark(uint64_t value) {
  if (memops_) return mark_word(value);
  size_t i = value % kRing;
  // Only mark() stores entries and records the pool's events, holding the device's turn, which orders it
  // after the previous mark(). The entry and the event to use again must both stand for values seen
  // reached (0, never used, is): one comparison where both are, the usual case.
  uint64_t previous = ring_[i].value.load(std::memory_order_relaxed);
  if (reached_.load(std::memory_order_acquire) < std::max(previous, pool_[next_].last)) [[unlikely]]
    if (Result r = make_rooms(value, previous); r != SUCCESS) return r;
  // The pool's entry is read and written before the record's call, while its line is still near, and not
  // touched after it (the driver's call pushes rig's lines out: bench/README.md, "Caches or pages"). A
  // failed record loses the device (the hand-over's contract) and a lost timeline marks nothing again, so
  // `last` is never read for a record that failed.
  Pooled &p = pool_[next_];
  Event event = p.event;
  p.last = value;
  next_ = static_cast<uint16_t>((next_ + 1) & (window_ - 1));
  Result r = calls_.event_record(event, stream_);
  if (r != SUCCESS) return r;
  ring_[i].event.store(event, std::memory_order_relaxed);
  ring_[i].value.store(value, std::memory_order_release);
  marked_.store(value, std::memory_order_release);
  return SUCCESS;
}

Result Timeline::enqueue_wait(Stream consumer, bool consumer_memops, uint64_t value) {
  if (memops_) return enqueue_wait_word(consumer, consumer_memops, value);
  const Entry *e = nullptr;
  uint64_t m = 0;
  switch (proof(value, &e, &m)) {
    case Proof::reached: return SUCCESS;           // nothing to wait for
    case Proof::unmarked: return ERROR_NOT_READY;  // held, not committed: the caller broke the contract
    case Proof::recorded: break;
  }
  return calls_.stream_wait_event(consumer, e->event.load(std::memory_order_relaxed), 0);
}

uint64_t Timeline::known() const {
  if (memops_ || slot_->lost.load(std::memory_order_acquire)) [[unlikely]]
    return known_word();
  return reached_.load(std::memory_order_acquire);
}

bool Timeline::known_reached(uint64_t value) const {
  if (known() >= value) return true;
  // The newest mark's value, or a held one past it, is never asked about here (reached_asking).
  if (memops_ || value >= marked_.load(std::memory_order_acquire)) return false;
  return reached_asking(value, false);
}

}  // namespace rig::stream
