// Pinned staging chunks of one device, handed to a load's reader threads one at a time. Made once and kept
// (by a caller's rig_load_pool, or for one load): pinned allocation is slow, reuse is what reaches the link.
// Where the device borrows host memory (CUDA, HIP, memory devices) the chunks are ordinary memory
// registered in pieces (pool.cpp says why); elsewhere they are the device's RIG_MEMORY_PINNED buffers.
#pragma once

#include <rig.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace rig {
class Device;
struct Buffer;
}  // namespace rig

namespace rig::load {

struct Mapping;

class StagingPool {
 public:
  // `count` chunks of `chunk_bytes` pinned bytes on `device`: host memory wrapped on `host` (the host
  // device) and borrowed by `device`, or the device's RIG_MEMORY_PINNED buffers where it borrows none.
  // Only the first piece is made before this returns; a thread of the pool's registers the others, each
  // piece's chunks handed out as it lands (a load's reads start after one piece, not the whole pool: a
  // load's own pool and a caller's alike). Waits for the driver's registrations and allocations, holding
  // no lock. Sets rig's message.
  static rig_status make(Device &device, Device &host, size_t chunk_bytes, size_t count,
                         std::unique_ptr<StagingPool> *out);
  // Stops the pieces still to be made (waits for the one being registered), then releases every chunk.
  ~StagingPool();

  Device &device() const { return *device_; }
  size_t chunk_bytes() const { return chunk_bytes_; }
  // The pinned bytes made so far (all of them once made; fewer where a piece behind was refused).
  size_t bytes() const { return chunk_bytes_ * made_.load(std::memory_order_acquire); }

  // Takes a free chunk, waiting (its own lock only) until one is given back or made, or `halt` is set
  // (then answers false: the load stopped). wake() makes waiters look at their `halt` again.
  bool acquire(const std::atomic<bool> &halt, size_t *slot);
  // Gives a chunk back; `value`: the device's submitted value once the copies reading it were submitted,
  // which last_value() answers until the chunk comes back again. Without: no copy read it this time.
  void give_back(size_t slot, uint64_t value);
  void give_back(size_t slot) { give_back(slot, last_value(slot)); }
  uint64_t last_value(size_t slot) const { return last_value_[slot].load(std::memory_order_acquire); }
  void wake();
  const Buffer &buffer(size_t slot) const { return *slots_[slot]; }

  // A load claims the pool for its run (false: another load holds it).
  bool claim();
  void unclaim();
  bool claimed();

 private:
  Device *device_ = nullptr;  // devices live until the process exits (core/registry.h)
  Device *host_ = nullptr;
  size_t chunk_bytes_ = 0;
  // Memory for a piece of n chunks, mapped and touched (mapped::map_for_registering), not registered;
  // nullptr where the host refuses it. Its one reference is the caller's (drop() unmaps it).
  Mapping *map_piece(size_t n);
  // Registered chunks [first, first + n) over `region` (a map_piece of n; null: answers
  // RIG_OUT_OF_MEMORY), which is the pool's from the call on: the piece's own borrow (its one
  // registration) and each chunk's wrap and borrow; the chunks are handed out once all are made.
  rig_status make_piece(size_t first, size_t n, Mapping *region);
  void make_behind(size_t from, size_t count) noexcept;  // the grower_'s loop
  // Maps and touches a piece of n chunks on toucher_ (pool.cpp says why); take_ahead joins it and hands
  // over what it made (null: none asked for, no thread, or the host refused), which the caller then owns.
  void touch_ahead(size_t n) noexcept;
  Mapping *take_ahead() noexcept;
  void hand_out(size_t first, size_t n);
  struct Piece {
    Mapping *region;
    std::shared_ptr<Buffer> borrow;
  };
  std::vector<Piece> pieces_;  // the maker's, then the grower_'s; read by the destructor after it
  // One per chunk, sized up front: a slot is written before it is handed out. Each slot is its chunk's wrap
  // borrowed by the device, which holds the wrap's allocation (and so its piece's mapping).
  std::vector<std::shared_ptr<Buffer>> slots_;
  std::unique_ptr<std::atomic<uint64_t>[]> last_value_;
  std::atomic<size_t> made_{0};
  std::thread grower_;
  std::thread toucher_;       // touch_ahead's: the next piece's memory, touched while one registers
  Mapping *ahead_ = nullptr;  // what toucher_ made (read after joining it: take_ahead)
  std::atomic<bool> stop_growing_{false};
  std::deque<size_t> free_;  // first in, first out: a chunk given back is reused last, its copy most likely done
  std::mutex mutex_;
  std::condition_variable cv_;
  bool claimed_ = false;
};

// The staging of a staged load, per placement device (`devices`): the caller's pool where `given` has one
// (claimed for the load: RIG_BUSY where another load holds it; RIG_INVALID_ARGUMENT where its chunks are
// under `chunk_bytes`), none where the device reads no chunk (`chunks_of`: chunks per device), else a pool
// made for the load and grown behind (make), its chunks `chunk_bytes` each, as many as its share of
// `budget` holds (at least one, at most its chunks). Appends to `pools` as it goes (a claimed pool is
// there to unclaim, also where a later one fails) and keeps the pools made in `own`. Waits as make does.
rig_status stage(const std::vector<Device *> &devices, Device &host, const std::vector<StagingPool *> &given,
                 const std::vector<size_t> &chunks_of, size_t chunk_bytes, uint64_t budget,
                 std::vector<StagingPool *> *pools, std::vector<std::unique_ptr<StagingPool>> *own);

}  // namespace rig::load
