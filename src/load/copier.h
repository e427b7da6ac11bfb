// One device's copies for a load, through core (core/submit.h): one run of one COPY (slot 0 read, slot 1
// written, whole buffers) made once per device and rebound to two views for each copy. The views are the
// copier's own buffers, rewritten for each copy: a copy inserts no handle and allocates nothing, and
// rebinds the run once (Run::rebind) rather than once per slot.
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
  // A copier of `device` (its COPY submission and run). The submission's status where the device runs no
  // work (the host). Never blocks.
  static rig_status make(Device &device, std::unique_ptr<Copier> *out);
  ~Copier();

  // Submits the copy of `length` bytes from `src` at `src_offset` to `dst` at `dst_offset`, both buffers
  // of this copier's device. Statuses: core's submit (RIG_LOST for a lost or released device), or
  // RIG_INVALID_ARGUMENT for a range outside its buffer. Blocks for the device's turn and whatever the submit
  // waits for (core/submit.h), holding no lock of the loader's. One thread at a time: the run is one.
  rig_status copy(const Buffer &src, uint64_t src_offset, const Buffer &dst, uint64_t dst_offset, uint64_t length);

 private:
  Copier() = default;
  std::unique_ptr<Run> run_;
  // The two views bound to the run's slots. Each holds its allocation only while its copy is submitted:
  // the buffers it views hold theirs, and dropping the last reference waits for the copies (rule 6), which
  // belongs to whoever releases them.
  std::array<std::shared_ptr<Buffer>, 2> views_;
};

}  // namespace rig::load
