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
  static rig_status make(rig_device device, size_t chunk_bytes, size_t count, std::unique_ptr<StagingPool> *out);
  ~StagingPool();

  rig_device device() const { return device_; }
  size_t chunk_bytes() const { return chunk_bytes_; }
  size_t bytes() const { return chunk_bytes_ * slots_.size(); }

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
  // Registered chunks: the region's own borrow (its one registration) and every chunk's wrap and borrow.
  rig_status make_registered(size_t count);
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
