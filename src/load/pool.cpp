#include "load/pool.h"

#include <sys/mman.h>

#include <memory>

#include "core/error.h"
#include "load/mapping.h"
#include "mapped/host_map.h"

namespace rig::load {

// Why registered ordinary memory: on an H200 the driver makes pinned memory (cuMemHostAlloc) at about
// 2.4 GB/s, so a first load paid ~0.17 s for its 256 MiB pool, a third of an 8 GiB load at the link's
// rate; registering an anonymous mapping (cuMemHostRegister) pins it several times faster. The region is
// borrowed once as a whole (one driver registration, a counted entry of the range table); each chunk is
// then wrapped and borrowed on its own, inside that entry (no driver call), so that each chunk is an
// allocation whose stamps carry only its own copies and a reader waits for its chunk alone (rule 6).
// The mapping goes with the last wrap's release (load/mapping.h), after every copy that reads it.
rig_status StagingPool::make_registered(size_t count) {
  size_t length = chunk_bytes_ * count;
  void *base = mapped::map_for_registering(length);
  if (!base) return fail(RIG_OUT_OF_MEMORY, "staging: mmap of %zu bytes failed", length);
  region_ = new Mapping();
  region_->base = base;
  region_->length = length;
  // wrap: one reference for the region's own wrap, one per chunk's; region_'s first stays with the pool
  auto wrap = [&](void *at, size_t bytes, rig_buffer *out) {
    region_->refs.fetch_add(1, std::memory_order_relaxed);
    rig_status s = rig_buffer_wrap(at, bytes, RIG_ACCESS_READ_WRITE, drop_mapping, region_, out);
    if (s != RIG_OK) region_->drop();
    return s;
  };
  rig_buffer whole = nullptr;
  rig_status s = wrap(base, length, &whole);
  if (s == RIG_OK) s = rig_buffer_borrow(device_, whole, &region_borrow_);
  if (whole) rig_buffer_release(whole);  // the borrow keeps the allocation (and so the registration)
  for (size_t i = 0; s == RIG_OK && i < count; ++i) {
    rig_buffer w = nullptr, b = nullptr;
    s = wrap(static_cast<char *>(base) + i * chunk_bytes_, chunk_bytes_, &w);
    if (s == RIG_OK) s = rig_buffer_borrow(device_, w, &b);
    if (w) wraps_.push_back(w);
    if (b) slots_.push_back(b);
  }
  return s;
}

rig_status StagingPool::make(rig_device device, size_t chunk_bytes, size_t count, std::unique_ptr<StagingPool> *out) {
  auto p = std::make_unique<StagingPool>();
  p->device_ = device;
  p->chunk_bytes_ = chunk_bytes;
  rig_status s = count ? p->make_registered(count) : RIG_OK;
  if (s == RIG_OK) {
    p->last_value_.reset(new std::atomic<uint64_t>[count]());
    for (size_t i = 0; i < count; ++i) p->free_.push_back(i);
    *out = std::move(p);
    return RIG_OK;
  }
  if (s != RIG_UNSUPPORTED && s != RIG_UNMAPPABLE)
    return fail(s, "staging of %zu chunks of %zu bytes: %s", count, chunk_bytes, rig_last_error());
  // A device that borrows no host memory (Vulkan without its opt-in): its own pinned buffers.
  p = std::make_unique<StagingPool>();
  p->device_ = device;
  p->chunk_bytes_ = chunk_bytes;
  for (size_t i = 0; i < count; ++i) {
    rig_buffer b;
    rig_status s = rig_buffer_create(device, chunk_bytes, RIG_MEMORY_PINNED, &b);
    if (s != RIG_OK) return fail(s, "staging chunk %zu of %zu bytes: %s", i, chunk_bytes, rig_last_error());
    p->slots_.push_back(b);
    p->free_.push_back(i);
  }
  p->last_value_.reset(new std::atomic<uint64_t>[count]());
  *out = std::move(p);
  return RIG_OK;
}

StagingPool::~StagingPool() {
  // None of these waits: each allocation's memory returns, and the region is unmapped after the last, once
  // the copies that read it are reached.
  for (rig_buffer b : slots_) rig_buffer_release(b);
  for (rig_buffer w : wraps_) rig_buffer_release(w);
  if (region_borrow_) rig_buffer_release(region_borrow_);
  if (region_) region_->drop();
}

bool StagingPool::acquire(const std::atomic<bool> &halt, size_t *slot) {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return !free_.empty() || halt.load(std::memory_order_acquire); });
  if (halt.load(std::memory_order_acquire)) return false;
  *slot = free_.front();
  free_.pop_front();
  return true;
}

void StagingPool::wake() {
  { std::lock_guard lock(mutex_); }  // a waiter is either before its predicate or asleep: never between
  cv_.notify_all();
}

void StagingPool::give_back(size_t slot, uint64_t value) {
  last_value_[slot].store(value, std::memory_order_release);
  {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
  }
  cv_.notify_one();
}

bool StagingPool::claim() {
  std::lock_guard lock(mutex_);
  if (claimed_) return false;
  claimed_ = true;
  return true;
}
void StagingPool::unclaim() {
  std::lock_guard lock(mutex_);
  claimed_ = false;
}
bool StagingPool::claimed() {
  std::lock_guard lock(mutex_);
  return claimed_;
}

}  // namespace rig::load
