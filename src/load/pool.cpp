#include "load/pool.h"

#include <sys/mman.h>

#include <chrono>
#include <memory>
#include <string_view>

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
rig_status StagingPool::map_region(bool touch) {
  size_t length = chunk_bytes_ * count_;
  base_ = mapped::map_for_registering(length, touch);
  if (!base_) return fail(RIG_OUT_OF_MEMORY, "staging: mmap of %zu bytes failed", length);
  region_ = new Mapping();
  region_->base = base_;
  region_->length = length;
  return RIG_OK;
}

rig_status StagingPool::register_region() {
  // wrap: one reference for the region's own wrap, one per chunk's; region_'s first stays with the pool
  auto wrap = [&](void *at, size_t bytes, rig_buffer *out) {
    region_->refs.fetch_add(1, std::memory_order_relaxed);
    rig_status s = rig_buffer_wrap(at, bytes, RIG_ACCESS_READ_WRITE, drop_mapping, region_, out);
    if (s != RIG_OK) region_->drop();
    return s;
  };
  rig_buffer whole = nullptr;
  rig_status s = wrap(base_, chunk_bytes_ * count_, &whole);
  if (s == RIG_OK) s = rig_buffer_borrow(device_, whole, &region_borrow_);
  if (whole) rig_buffer_release(whole);  // the borrow keeps the allocation (and so the registration)
  for (size_t i = 0; s == RIG_OK && i < count_; ++i) {
    rig_buffer w = nullptr, b = nullptr;
    s = wrap(host(i), chunk_bytes_, &w);
    if (s == RIG_OK) s = rig_buffer_borrow(device_, w, &b);
    if (w) wraps_.push_back(w);
    if (b) slots_.push_back(b);
  }
  return s;
}

namespace {

// Devices whose staging is registered host memory, where making it can wait: the load's readers fill the
// mapped chunks meanwhile, and their writes are the pages' first touch. Why: touching and registering 64 MiB
// was the 5-7 ms a first load spent making its pool before its first read (an H200, 2026-12-01; touching
// alone about 4 of them), which its readers pay in parallel as they fill their chunks.
bool registers_host_memory(rig_device device) {
  rig_device_info info{};
  info.size = sizeof info;
  if (rig_device_get_info(device, &info) != RIG_OK || !info.framework) return false;
  std::string_view f = info.framework;
  return f == "CUDA" || f == "HIP" || f == "memory";
}

}  // namespace

rig_status StagingPool::make(rig_device device, size_t chunk_bytes, size_t count, std::unique_ptr<StagingPool> *out,
                             bool defer) {
  auto p = std::make_unique<StagingPool>();
  p->device_ = device;
  p->chunk_bytes_ = chunk_bytes;
  p->count_ = count;
  bool deferred = count && defer && registers_host_memory(device);
  rig_status s = count ? p->map_region(!deferred) : RIG_OK;
  if (s == RIG_OK && count) {
    if (deferred) p->pending_.store(true, std::memory_order_relaxed);
    else s = p->register_region();
  }
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
  p->count_ = count;
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

void StagingPool::filled() {
  {
    std::lock_guard lock(mutex_);
    ++first_fills_;
  }
  cv_.notify_all();
}

rig_status StagingPool::finish(const std::atomic<bool> &halt, size_t fills) {
  if (!pending_.load(std::memory_order_relaxed)) return RIG_OK;  // only the load's own thread calls it
  {
    // At most 5 ms: the fills make the registration cheaper, they are not what makes it right. With several
    // devices the readers may all wait for another device's chunks, whose copies wait for this registration.
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::milliseconds(5),
                 [&] { return first_fills_ >= std::min(fills, count_) || halt.load(std::memory_order_acquire); });
  }
  // Pages no reader wrote (a load of fewer chunks than the pool holds, one that stopped, one whose readers
  // wait elsewhere) are touched by the registration itself.
  rig_status s = register_region();
  // After the registration (or its failure): a reader that still saw the pool pending fills its chunk
  // through host memory, which the chunk's buffer then covers; one that sees it done exports the buffer.
  pending_.store(false, std::memory_order_release);
  if (s)
    return fail(s, "staging of %zu chunks of %zu bytes: registering: %s", count_, chunk_bytes_, rig_last_error());
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
