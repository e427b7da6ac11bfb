// Pinned staging chunks of one device, handed to a load's reader threads one at a time. Made once and kept
// (by a caller's rig_load_pool, or for one load): pinned allocation is slow, reuse is what reaches the link.
// Where the device borrows host memory (CUDA, HIP, memory devices) the chunks are ordinary memory
// registered once (pool.cpp says why); elsewhere they are the device's RIG_MEMORY_PINNED buffers.
#pragma once

#include <rig.h>

#include <atomic>
#include <memory>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

namespace rig::load {

class StagingPool {
 public:
  // `count` chunks of `chunk_bytes` pinned bytes on `device` (RIG_MEMORY_PINNED). Sets rig's message.
  // `defer`: on a device whose staging is registered host memory (CUDA, HIP, memory devices), only maps the
  // memory; registering it is left to finish(), which a load calls on its own thread while its readers
  // fill the chunks through unregistered_host() (elsewhere `defer` changes nothing).
  static rig_status make(rig_device device, size_t chunk_bytes, size_t count, std::unique_ptr<StagingPool> *out,
                         bool defer = false);
  ~StagingPool();

  // Registers a deferred pool's memory (nothing for any other pool): every chunk's buffer() exists after it.
  // First waits (the pool's lock, released while asleep) up to 5 ms until readers have filled `fills` chunks
  // through unregistered_host() (filled()), at most every chunk, or `halt` is set: their writes are the pages'
  // first touch, so the registration pins pages that exist. Then calls the driver, holding no lock of the pool's.
  // Sets rig's message.
  rig_status finish(const std::atomic<bool> &halt, size_t fills);
  // A reader filled a chunk through unregistered_host(): counts towards finish()'s wait.
  void filled();

  rig_device device() const { return device_; }
  size_t chunk_bytes() const { return chunk_bytes_; }
  size_t bytes() const { return chunk_bytes_ * count_; }
  // A chunk's host memory while the pool waits for finish() (null after, and for any other pool): no copy
  // can read a chunk before its buffer exists, so a reader may fill it at once, with nothing to wait for.
  void *unregistered_host(size_t slot) const { return pending_.load(std::memory_order_acquire) ? host(slot) : nullptr; }

  // Takes a free chunk, waiting (its own lock only) until one is given back or `halt` is set (then
  // answers false: the load stopped). wake() makes waiters look at their `halt` again.
  bool acquire(const std::atomic<bool> &halt, size_t *slot);
  // Gives a chunk back; `value`: the device's submitted value once the copies reading it were submitted,
  // which last_value() answers until the chunk comes back again. Without: no copy read it this time.
  void give_back(size_t slot, uint64_t value);
  void give_back(size_t slot) { give_back(slot, last_value(slot)); }
  uint64_t last_value(size_t slot) const { return last_value_[slot].load(std::memory_order_acquire); }
  void wake();
  rig_buffer buffer(size_t slot) const { return slots_[slot]; }

  // A load claims the pool for its run (false: another load holds it).
  bool claim();
  void unclaim();
  bool claimed();

 private:
  rig_device device_ = nullptr;
  size_t chunk_bytes_ = 0;
  // Registered chunks: the memory mapped (map_region), then the region's own borrow (its one registration)
  // and every chunk's wrap and borrow (register_region).
  rig_status map_region(bool touch);
  rig_status register_region();
  void *host(size_t slot) const { return static_cast<char *>(base_) + slot * chunk_bytes_; }
  size_t count_ = 0;
  void *base_ = nullptr;
  std::atomic<bool> pending_{false};  // mapped, registering left to finish() (readers read it meanwhile)
  size_t first_fills_ = 0;             // filled(), under mutex_
  struct Mapping *region_ = nullptr;
  rig_buffer region_borrow_ = nullptr;
  std::vector<rig_buffer> wraps_;
  std::vector<rig_buffer> slots_;
  std::unique_ptr<std::atomic<uint64_t>[]> last_value_;
  std::deque<size_t> free_;  // first in, first out: a chunk given back is reused last, its copy most likely done
  std::mutex mutex_;
  std::condition_variable cv_;
  bool claimed_ = false;
};

}  // namespace rig::load
