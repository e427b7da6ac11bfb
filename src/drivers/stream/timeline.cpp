#include "drivers/stream/timeline.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include "core/error.h"

namespace rig::stream {
namespace {

// Pinned pages cut into timeline words, one pool per family (each pins its pages through its own library).
// Never freed (see TimelineSlot); reachable from a static, so leak checkers stay quiet.
struct SlotPool {
  std::vector<std::unique_ptr<TimelineSlot>> slots;
  uint64_t *page = nullptr;
  DevicePtr page_address = 0;
  size_t used = 0;
};

struct SlotPools {
  std::mutex lock;
  std::map<const Family *, SlotPool> by_family;
};

constexpr size_t kWordsPerPage = 4096 / sizeof(uint64_t);

SlotPools &pools() {
  static SlotPools &p = *new SlotPools;  // never destroyed: other devices' streams may read its words
  return p;
}

}  // namespace

rig_status take_timeline_slot(const Family &family, TimelineSlot **out) {
  auto &pools_ = pools();
  std::lock_guard hold(pools_.lock);
  SlotPool &p = pools_.by_family[&family];
  const Calls &c = family.calls;
  if (!p.page || p.used == kWordsPerPage) {
    void *page = nullptr;
    // PORTABLE: every context may use it; MAPPED: streams can write and wait on it.
    Result r = c.host_alloc(&page, 4096, HOST_ALLOC_PORTABLE | HOST_ALLOC_MAPPED);
    if (r != SUCCESS)
      return fail(status_of(family, r), "%s for timeline words failed: %s", family.names.host_alloc,
                  family.error_name(r));
    DevicePtr address = 0;
    r = c.host_device_pointer(&address, page, 0);
    if (r != SUCCESS) {
      c.host_free(page);
      return fail(status_of(family, r), "%s for timeline words failed: %s", family.names.host_device_pointer,
                  family.error_name(r));
    }
    p.page = static_cast<uint64_t *>(page);
    p.page_address = address;
    p.used = 0;
  }
  auto slot = std::make_unique<TimelineSlot>();
  slot->word = p.page + p.used;
  slot->address = p.page_address + p.used * sizeof(uint64_t);
  __atomic_store_n(slot->word, 0, __ATOMIC_RELAXED);
  ++p.used;
  *out = slot.get();
  p.slots.push_back(std::move(slot));
  return RIG_OK;
}

Timeline::~Timeline() {
  // A wait already enqueued on an event keeps what it captured.
  if (pool_)
    for (size_t i = 0; i < kRing; ++i)
      if (pool_[i].event) calls_.event_destroy(pool_[i].event);
}

rig_status Timeline::window_asked(size_t *window) {
  // Read at every open (rare): a device keeps the window it opened with, so a program or a test may open
  // devices with different windows.
  *window = 0;
  const char *text = std::getenv("RIG_EVENT_WINDOW");
  if (!text || !*text) return RIG_OK;
  char *end = nullptr;
  unsigned long long n = std::strtoull(text, &end, 10);
  if (*end || n < 2 || n > kRing || (n & (n - 1)))
    return fail(RIG_INVALID_ARGUMENT, "RIG_EVENT_WINDOW=%s: the events a timeline records in turn are a power of two from 2 to %zu",
                text, kRing);
  *window = size_t(n);
  return RIG_OK;
}

rig_status Timeline::init() {
  if (memops_) return RIG_OK;
  ring_ = std::make_unique<Entry[]>(kRing);
  pool_ = std::make_unique<Pooled[]>(kRing);
  // Every event now, none on the submit path: a window that doubles takes events already made.
  for (size_t i = 0; i < kRing; ++i) {
    Result r = calls_.event_create(&pool_[i].event, EVENT_DISABLE_TIMING);
    if (r != SUCCESS)
      return fail(status_of(family_, r), "%s failed: %s", family_.names.event_create, family_.error_name(r));
  }
  return RIG_OK;
}

void Timeline::raise(uint64_t value) const {
  uint64_t seen = reached_.load(std::memory_order_relaxed);
  while (seen < value && !reached_.compare_exchange_weak(seen, value, std::memory_order_release)) {
  }
}

Timeline::Proof Timeline::proof_after(uint64_t value, const Entry **entry, uint64_t *mark) const {
  uint64_t last = std::min(marked_.load(std::memory_order_acquire), value + kHeldRun);
  // The first mark after `value` (proof() looked at its own). A mark in between whose entry was reused was
  // seen reached first (make_room), and so was `value`: a later mark found then only makes the answer
  // conservative.
  for (uint64_t m = value + 1; m <= last; ++m) {
    const Entry &e = ring_[m % kRing];
    // Acquire pairs with mark()'s release: an entry that shows `m` was recorded for it.
    if (e.value.load(std::memory_order_acquire) == m) {
      *entry = &e;
      *mark = m;
      return Proof::recorded;
    }
  }
  // None: its proving mark's entry was reused (seen reached: known() says so), or it is held and unmarked.
  return known() >= value ? Proof::reached : Proof::unmarked;
}

bool Timeline::query(uint64_t value) const {
  const Entry *e = nullptr;
  uint64_t m = 0;
  switch (proof(value, &e, &m)) {
    case Proof::reached: return true;
    case Proof::unmarked: return false;
    case Proof::recorded: break;
  }
  // Not ready, or an error: wait() looks at the stream for the error.
  if (calls_.event_query(e->event.load(std::memory_order_relaxed)) != SUCCESS) return false;
  raise(m);
  return true;
}

Result Timeline::make_room(uint64_t value, size_t span, bool widen) {
  // What is to be reused (the ring's entry, span kRing; the window's next event, span window_) last stood for
  // a mark at least span marks back, not yet seen reached. Ask about a later value, half a span on: once it
  // is done, so is that mark, and the next span/2 marks need no question at all. (What is reused stood for
  // a mark, so value >= span.)
  uint64_t ahead = value - span / 2;
  const Entry *e = nullptr;
  uint64_t m = 0;
  Proof p = proof(ahead, &e, &m);
  if (p == Proof::reached) return SUCCESS;
  // The entry's event, or a later record of it (the window reuses an event only once its value is reached):
  // either done means m is.
  Event event = p == Proof::recorded ? e->event.load(std::memory_order_relaxed) : nullptr;
  if (event && calls_.event_query(event) == SUCCESS) {
    raise(m);
    return SUCCESS;
  }
  if (widen && window_ < kRing) {
    // More than half a window in flight: a wider window, not a blocked host. Events past the old window were
    // never recorded (it only grows).
    next_ = window_;
    window_ *= 2;
    return SUCCESS;
  }
  // More than half the ring in flight: the host is far ahead of the GPU, so blocking costs nothing the GPU
  // would not take anyway. Held and not marked, which a run of at most kHeldRun cannot be here, the value
  // half a span back has no event: the window's next event is waited for instead.
  if (!event) {
    event = pool_[next_].event;
    m = pool_[next_].last;
  }
  Result r = calls_.event_synchronize(event);
  if (r == SUCCESS) raise(m);
  return r;
}

Result Timeline::make_rooms(uint64_t value, uint64_t previous) {
  if (reached_.load(std::memory_order_acquire) < previous)
    if (Result r = make_room(value, kRing, false); r != SUCCESS) return r;
  if (reached_.load(std::memory_order_acquire) < pool_[next_].last) return make_room(value, window_, true);
  return SUCCESS;
}

Result Timeline::mark_word(uint64_t value) {
  // DEFAULT flags: the write is fenced after the work before it, so a reader that sees the value sees the
  // work's writes.
  Result r = calls_.write_value64(stream_, slot_->address, value, WRITE_VALUE_FENCED);
  if (r == SUCCESS) marked_.store(value, std::memory_order_release);
  return r;
}

bool Timeline::hold(uint64_t value) {
  if (value - marked_.load(std::memory_order_relaxed) > kHeldRun) return false;
  held_ = value;
  return true;
}

Result Timeline::mark_held() {
  if (held_ <= marked_.load(std::memory_order_relaxed)) return SUCCESS;  // a later mark proves it already
  return mark(held_);
}

Result Timeline::enqueue_wait_word(Stream consumer, bool consumer_memops, uint64_t value) {
  if (consumer_memops) return calls_.wait_value64(consumer, slot_->address, value, WAIT_VALUE_GEQ);
  return ERROR_NOT_SUPPORTED;  // can_wait_in_queue answered no for this pair
}

uint64_t Timeline::known_word() const {
  if (slot_->lost.load(std::memory_order_acquire)) return slot_->frozen.load(std::memory_order_relaxed);
  if (memops_) {
    // Acquire: a host read after this sees the work's writes (the stream fenced them before the word).
    uint64_t w = __atomic_load_n(slot_->word, __ATOMIC_ACQUIRE);
    return w >= kReleasedWord ? slot_->frozen.load(std::memory_order_relaxed) : w;
  }
  return reached_.load(std::memory_order_acquire);
}

uint64_t Timeline::signaled() const {
  uint64_t lo = known();
  if (memops_ || slot_->lost.load(std::memory_order_acquire)) return lo;
  uint64_t hi = marked_.load(std::memory_order_acquire);
  if (lo >= hi) return lo;
  // Stream order: a value's event done means every earlier value's is. So the newest first (the usual
  // answer once work drains), then a binary search between the last seen reached and it.
  if (query(hi)) {
    raise(hi);
    return hi;
  }
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (query(mid))
      lo = mid;
    else
      hi = mid;
  }
  raise(lo);
  return reached_.load(std::memory_order_acquire);
}

bool Timeline::reached_asking(uint64_t value, bool ask_newest) const {
  if (known() >= value) return true;
  if (memops_ || slot_->lost.load(std::memory_order_acquire)) return false;
  // The newest mark's value, or a held one past it: its proof would be the newest mark, never asked about
  // here; answered without reading the ring (an interop edge's wait point names the newest on every edge).
  if (!ask_newest && value >= marked_.load(std::memory_order_acquire)) return false;
  const Entry *e = nullptr;
  uint64_t m = 0;
  Proof p = proof(value, &e, &m);
  if (p != Proof::recorded) return p == Proof::reached;
  if (!ask_newest && m == marked_.load(std::memory_order_acquire)) return false;
  if (calls_.event_query(e->event.load(std::memory_order_relaxed)) != SUCCESS) return false;
  raise(m);
  return true;
}

bool Timeline::reached(uint64_t value) const { return reached_asking(value, true); }

std::atomic<uint64_t> Timeline::frozen_count_{0};

bool Timeline::freeze(uint64_t cap) {
  if (freezing_.exchange(true, std::memory_order_acq_rel)) return false;
  uint64_t at = std::min(signaled(), cap);
  slot_->frozen.store(at, std::memory_order_relaxed);
  slot_->lost.store(true, std::memory_order_release);
  frozen_count_.fetch_add(1, std::memory_order_release);  // after `lost`: any_frozen() true shows it
  // Streams of other devices waiting on this word would wait forever: let them go. Their devices see
  // this one lost and are lost with it.
  if (memops_) __atomic_store_n(slot_->word, kReleasedWord, __ATOMIC_RELEASE);
  return true;
}

}  // namespace rig::stream
