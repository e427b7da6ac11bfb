#include "drivers/hip/timeline.h"

#include <algorithm>
#include <memory>

#include "core/error.h"

namespace rig::hip {
namespace {

// Pinned pages cut into timeline words. Never freed (see TimelineSlot); reachable from a static.
struct SlotPool {
  std::mutex lock;
  std::vector<std::unique_ptr<TimelineSlot>> slots;
  uint64_t *page = nullptr;
  char *page_address = nullptr;
  size_t used = 0;
};

constexpr size_t kWordsPerPage = 4096 / sizeof(uint64_t);

SlotPool &pool() {
  static SlotPool &p = *new SlotPool;  // never destroyed: other devices' streams may read its words
  return p;
}

}  // namespace

rig_status take_timeline_slot(const Api &api, TimelineSlot **out) {
  auto &p = pool();
  std::lock_guard hold(p.lock);
  if (!p.page || p.used == kWordsPerPage) {
    void *page = nullptr;
    // PORTABLE: every device may use it; MAPPED: streams can write and wait on it.
    Error r = api.hipHostMalloc(&page, 4096, HOST_MALLOC_PORTABLE | HOST_MALLOC_MAPPED);
    if (r != SUCCESS) return fail(status_of(r), "hipHostMalloc for timeline words failed: %s", error_name(r));
    void *address = nullptr;
    r = api.hipHostGetDevicePointer(&address, page, 0);
    if (r != SUCCESS) {
      api.hipHostFree(page);
      return fail(status_of(r), "hipHostGetDevicePointer for timeline words failed: %s", error_name(r));
    }
    p.page = static_cast<uint64_t *>(page);
    p.page_address = static_cast<char *>(address);
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
  for (Event e : ring_)
    if (e) api_.hipEventDestroy(e);  // a wait already enqueued on it keeps what it captured
}

rig_status Timeline::init() {
  if (memops_) return RIG_OK;
  ring_.assign(kRing, nullptr);
  ring_value_.assign(kRing, 0);
  for (auto &e : ring_) {
    Error r = api_.hipEventCreateWithFlags(&e, EVENT_DISABLE_TIMING);
    if (r != SUCCESS) {
      e = nullptr;
      return fail(status_of(r), "hipEventCreateWithFlags failed: %s", error_name(r));
    }
  }
  return RIG_OK;
}

Error Timeline::mark(uint64_t value) {
  if (memops_) {
    // The write follows the stream's earlier work, so a reader that sees the value sees the work's writes.
    Error r = api_.hipStreamWriteValue64(stream_, slot_->address, value, 0);
    if (r == SUCCESS) marked_.store(value, std::memory_order_release);
    return r;
  }
  size_t i = value % kRing;
  uint64_t previous;
  {
    std::lock_guard hold(ring_lock_);
    previous = ring_value_[i];
  }
  // The entry last stood for value-kRing: signaled() must have seen it reached before the entry is recorded
  // again, or it would read the new record's state as the old value's.
  if (previous && reached_.load(std::memory_order_acquire) < previous) {
    Error r = api_.hipEventSynchronize(ring_[i]);
    if (r != SUCCESS) return r;
    uint64_t seen = reached_.load(std::memory_order_relaxed);
    while (seen < previous && !reached_.compare_exchange_weak(seen, previous, std::memory_order_release)) {
    }
  }
  std::lock_guard hold(ring_lock_);
  Error r = api_.hipEventRecord(ring_[i], stream_);
  if (r != SUCCESS) return r;
  ring_value_[i] = value;
  marked_.store(value, std::memory_order_release);
  return SUCCESS;
}

Error Timeline::enqueue_wait(Stream consumer, bool consumer_memops, uint64_t value) {
  if (memops_ && consumer_memops)
    return api_.hipStreamWaitValue64(consumer, slot_->address, value, STREAM_WAIT_VALUE_GTE, ~uint64_t{0});
  if (memops_) return ERROR_NOT_SUPPORTED;  // can_wait_in_queue answered no for this pair
  std::lock_guard hold(ring_lock_);
  size_t i = value % kRing;
  // Recorded again for a later value: that needed `value` reached first, so there is nothing to wait for.
  if (ring_value_[i] != value) return SUCCESS;
  return api_.hipStreamWaitEvent(consumer, ring_[i], 0);
}

uint64_t Timeline::signaled() const {
  if (slot_->lost.load(std::memory_order_acquire)) return slot_->frozen.load(std::memory_order_relaxed);
  if (memops_) {
    // Acquire: a host read after this sees the work's writes (the stream ordered them before the word).
    uint64_t w = __atomic_load_n(slot_->word, __ATOMIC_ACQUIRE);
    if (w >= kReleasedWord) return slot_->frozen.load(std::memory_order_relaxed);
    return w;
  }
  uint64_t seen = reached_.load(std::memory_order_acquire);
  uint64_t top = marked_.load(std::memory_order_acquire);
  uint64_t v = seen;
  {
    std::lock_guard hold(ring_lock_);
    while (v < top) {
      size_t i = (v + 1) % kRing;
      if (ring_value_[i] != v + 1) break;                 // recorded again since: mark() settles it
      if (api_.hipEventQuery(ring_[i]) != SUCCESS) break;  // not ready, or an error wait() reports
      ++v;
    }
  }
  while (seen < v && !reached_.compare_exchange_weak(seen, v, std::memory_order_release)) {
  }
  return reached_.load(std::memory_order_acquire);
}

void Timeline::freeze(uint64_t cap) {
  if (slot_->lost.load(std::memory_order_acquire)) return;
  uint64_t at = std::min(signaled(), cap);
  slot_->frozen.store(at, std::memory_order_relaxed);
  slot_->lost.store(true, std::memory_order_release);
  // Streams of other devices waiting on this word would wait forever: let them go. Their devices see this
  // one lost and are lost with it.
  if (memops_) __atomic_store_n(slot_->word, kReleasedWord, __ATOMIC_RELEASE);
}

}  // namespace rig::hip
