// One device's copies for a load, through core (core/submit.h): runs of one COPY (slot 0 read, slot 1
// written, whole buffers) made once per device and rebound to two views for each copy. The views are the
// copier's own buffers, rewritten for each copy: a copy inserts no handle and allocates nothing, and
// rebinds its run once (Run::rebind) rather than once per slot.
//
// Why batches: on an H200, 1341 copies of 3 MiB submitted one run a copy moved 0.955 of what 64 MiB copies
// of the same bytes moved, and 0.997 in batches of 16 through one rig_submit_many (one turn, one mark for
// the batch, CUDA's batched copy: bench/README.md, bench/load: copy_batches.py). A loader's copies are
// independent of each other, so it adds them and submits them kBatch at a time.
#pragma once

#include <rig.h>

#include <array>
#include <cstdint>
#include <memory>

namespace rig {
class Device;
class Run;
struct Buffer;
}  // namespace rig

namespace rig::load {

class Copier {
 public:
  static constexpr size_t kBatch = 16;

  // A copier of `device` (its COPY submission and runs). The submission's status where the device runs no
  // work (the host). Never blocks.
  static rig_status make(Device &device, std::unique_ptr<Copier> *out);
  ~Copier();

  // Adds the copy of `length` bytes from `src` at `src_offset` to `dst` at `dst_offset`, both buffers of
  // this copier's device, to the batch, which is submitted once it holds kBatch copies (flush's statuses
  // then); RIG_INVALID_ARGUMENT for a range outside its buffer. A copy is submitted only by a flush: nothing
  // may be handed out, or its source reused, before one. The batch holds both buffers' allocations until.
  rig_status add(const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset, uint64_t length);
  // Submits the copies added since the last flush (rig_submit_many: core's statuses, RIG_LOST for a lost or
  // released device); nothing where none were. Blocks for the device's turn and whatever the submit waits
  // for (core/submit.h), holding no lock of the loader's. One thread at a time: the runs are the copier's.
  rig_status flush();
  // add, then flush: one copy submitted now.
  rig_status copy(const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset, uint64_t length);
  size_t pending() const { return count_; }

 private:
  Copier() = default;
  std::array<std::unique_ptr<Run>, kBatch> runs_;
  std::array<Run *, kBatch> batch_{};  // runs_' pointers, as submit_many takes them
  // Each run's two views. Each holds its allocation only until its copy is submitted: the buffers it views
  // hold theirs, and dropping the last reference waits for the copies (rule 6), which belongs to whoever
  // releases them.
  std::array<std::array<std::shared_ptr<Buffer>, 2>, kBatch> views_;
  size_t count_ = 0;  // copies added, not yet submitted
};

}  // namespace rig::load
