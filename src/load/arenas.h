// A load's device memory on one device in a few driver allocations, each tensor a part of one with stamps
// of its own (core/allocation.h), where one allocation per tensor was. Why: a driver's allocation costs
// about the same whatever its size, so a few large ones cost a fraction of many small ones, and a file of
// many tensors spent most of its load's fixed time making them one by one (bench/README.md, bench/load:
// the arenas).
//
// Tensors are laid out in the order given (file order), each at a kAlign-aligned start, into arenas of at
// most `limit` bytes (rig_load_options' arena_bytes; a tensor larger has one of its own). An arena of more
// than kPage bytes is allocated in whole kPages (at most 2 MiB more than its tensors): CUDA's IPC open of an
// arena that is not a whole number of large pages costs another process milliseconds, of one that is, a
// small fraction of that (bench/README.md, bench/keep: attach_sizes.py). An arena is made when its first
// tensor is, so memory grows as the load goes; its memory returns once every tensor made in it is released.
#pragma once

#include <rig.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace rig {
class Allocation;
class Device;
struct Buffer;
}  // namespace rig

namespace rig::load {

class Arenas {
 public:
  static constexpr uint64_t kAlign = 256;  // cuMemAlloc's own alignment; every dtype's and vector load's
  static constexpr uint64_t kPage = 2 << 20;  // a GPU's large page (CUDA's allocation granularity)

  // Lays out the tensors `lengths[i]` of positions `order[i]` (positions index the load's selection; a
  // length of 0 gets no part) in arenas of memory kind `memory` (RIG_MEMORY_DEVICE, or kMemoryDeviceReused
  // for a device loaded again: core/driver_memory.h).
  Arenas(size_t positions, const std::vector<size_t> &order, const std::vector<uint64_t> &lengths, uint64_t limit,
         rig_memory memory);
  ~Arenas();

  // A buffer for the tensor at `position` on `device`: a part of its arena, made first where it is not yet.
  // RIG_UNSUPPORTED (no message) where the tensor has no part or its arena could not be made (the driver
  // refused: out of memory, or past its largest allocation): the caller then makes the tensor a buffer of its own,
  // which says why where it fails too. Else the status of making the part. Blocks for the driver's
  // allocation, holding this object's lock (the load's other threads make no arena of this device meanwhile).
  rig_status make(Device &device, size_t position, std::shared_ptr<Buffer> *out);
  // The arenas' memory kind: a tensor made whole instead takes the same.
  rig_memory memory() const { return memory_; }
  // How many arenas the layout has (made or not), and where the tensor at `position` lies in one: false
  // where it has no part. The layout is fixed at construction: no lock.
  size_t count() const { return arenas_.size(); }
  bool place(size_t position, size_t *arena, uint64_t *start) const;
  // Arena `index`'s allocation: null until make() made it, or where its making failed. The keeper exports
  // it whole (keep/version.cpp), so that its tensors leave as one handle and offsets in it.
  std::shared_ptr<Allocation> whole(size_t index);

 private:
  struct Arena {
    uint64_t length = 0;
    std::shared_ptr<Allocation> whole;
    bool refused = false;  // its making failed: its tensors are made whole
  };
  struct Place {
    size_t arena = SIZE_MAX;  // SIZE_MAX: no part
    uint64_t start = 0, length = 0;
  };
  rig_memory memory_;
  std::mutex lock_;
  std::vector<Arena> arenas_;
  std::vector<Place> places_;  // per position
};

}  // namespace rig::load
