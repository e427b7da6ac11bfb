// An allocation: one backing region, its stamps, and the mappings other devices made of it by borrowing.
// Every buffer over it (the original, views, borrows) holds it; the last one to go returns the memory, after
// every use of it is reached (rule 6).
//
// A part is an allocation over [start, start + length) of another's memory with stamps of its own: many
// tensors made with one driver allocation (the loader: a few large allocations cost the driver far less
// than one per tensor, bench/README.md, "Why: the loader") while work on each follows only the writes into
// it. Its buffers address the whole's memory at offsets from `start`; borrows use the whole's mappings; the
// whole's memory returns once every part is gone (each part waits for its own uses first, rule 6).
#pragma once

#include <rig.h>

#include <atomic>
#include <list>
#include <mutex>
#include <vector>

#include "core/device.h"
#include "core/driver.h"
#include "core/stamps.h"

namespace rig {

class Allocation {
 public:
  // Memory `base` of `owner` (the host for wraps); `owned`: the owner's driver frees it at the end.
  Allocation(Device &owner, const Memory &base, size_t length, bool read_only, bool owned);
  // Wrapped caller memory: `release` (nullable) is called at the end instead of a free.
  Allocation(Device &host, void *data, size_t length, bool read_only, rig_release_fn release, void *user);
  // Memory made elsewhere (rig_buffer_wrap_device): `release` (nullable) is called at the end, set before
  // the allocation is shared; the memory is never freed by rig.
  void on_release(rig_release_fn release, void *user) {
    release_ = release;
    release_user_ = user;
  }
  // A part of `length` bytes of `whole` (not itself a part): see above. Where it begins is its buffers' to
  // say (their offsets in the whole's base memory: buffer_part), and the caller's to check inside whole.
  Allocation(std::shared_ptr<Allocation> whole, size_t length);
  Allocation(const Allocation &) = delete;
  Allocation &operator=(const Allocation &) = delete;
  ~Allocation();

  Device &owner() const { return owner_; }
  const Memory &base() const { return base_; }
  size_t length() const { return length_; }
  bool is_part() const { return whole_ != nullptr; }
  bool read_only() const { return read_only_; }
  Stamps &stamps() { return stamps_; }

  // The memory `device` uses for this allocation: the base for its owner, else the device's mapping,
  // made at the first borrow (map_host or map_peer; a part's is its whole's). RIG_UNMAPPABLE where the
  // device cannot map it.
  rig_status memory_for(Device &device, const Memory **out);

  // Waits (host, no lock) until every device's use is reached (rule 6). Returns LOST if a use can never be.
  rig_status wait_all_uses();
  // Waits for the last write (rule 5).
  rig_status wait_last_write();

 private:
  struct Mapping {
    Device *device;
    Memory memory;
    bool counted;  // holds a use of its pages in the range table (host memory on a registering driver)
    std::vector<size_t> seams;  // where its registrations meet (memory.seams points here)
  };

  // Host memory onto `device`: the enclosing pages counted in the range table where its driver registers
  // host memory, then the driver's mapping. Called holding lock_.
  rig_status map_host_onto(Device &device, Mapping *out);

  Device &owner_;
  Memory base_;
  size_t length_;
  bool read_only_;
  bool owned_;
  rig_release_fn release_ = nullptr;
  void *release_user_ = nullptr;
  Stamps stamps_;
  std::mutex lock_;              // guards mappings_ (borrow only, never the submit path)
  std::list<Mapping> mappings_;  // a list: buffers keep pointers to their Memory
  std::shared_ptr<Allocation> whole_;  // a part's whole (declared last: dropped after the part's own end)
};

// Waits on the host for a stamp's point (0: nothing). OK, TIMEOUT, INTERRUPTED, LOST.
rig_status wait_stamp(uint64_t point, Deadline deadline);

}  // namespace rig
