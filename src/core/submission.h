// Submissions (parts + slot accesses, checked once) and runs (a submission with a buffer table). The
// checks that depend on the buffers happen when a buffer is set, so a submit only reads prepared bindings.
#pragma once

#include <rig.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/driver.h"

namespace rig {

struct Module {
  Device *device = nullptr;
  std::unique_ptr<DriverModule> driver_module;
};

struct Submission {
  Device *device = nullptr;
  std::vector<Part> parts;
  std::vector<rig_access> access;                 // per slot
  std::vector<std::shared_ptr<Module>> modules;   // kept alive while the submission lives
};

// A submission of `device`: its parts (each a whole rig_part of today's size: the C face reads the
// caller's, capi/sized.h) checked against the slots' access and the device. Waits for nothing.
rig_status submission_make(Device &device, const rig_part *parts, size_t part_count, const rig_access *access,
                           size_t slot_count, std::vector<std::shared_ptr<Module>> modules,
                           std::shared_ptr<Submission> *out);

// Aligned to a cache line, with what a submit reads of a run in its first (the device, the record, the
// stamping, readiness, the inline copy's first field): after a driver call each line is a miss.
class alignas(64) Run {
 public:
  explicit Run(std::shared_ptr<Submission> submission);
  // The record first: it points into the bindings and scalars (declared after it, so destroyed before it).
  ~Run() { recorded_.reset(); }
  Run(const Run &) = delete;
  Run &operator=(const Run &) = delete;

  const Submission &submission() const { return *submission_; }
  rig_status set_buffer(uint32_t slot, std::shared_ptr<Buffer> buffer);
  // Binds buffers[i] to slot i for every slot at once (set_buffer's checks), resolves once and records no
  // hand-over. For a run rebound before each of its submits (the loader's copier): set_buffer resolves and
  // asks the driver for a record after each slot, and a record costs an allocation that serves one submit
  // here, while the driver's own hand-over prepares the same calls in place. Never blocks.
  rig_status rebind(std::span<const std::shared_ptr<Buffer>> buffers);
  rig_status set_scalars(const void *bytes, size_t length);

  // Ready to submit: every slot set and every part's range inside its buffers. Inline: on every submit.
  rig_status check_ready() const { return ready_ ? RIG_OK : not_ready(); }
  const std::vector<std::shared_ptr<Buffer>> &buffers() const { return buffers_; }
  Work work() const { return {parts_, bindings_, scalars_}; }

  // What a submit reads and raises for each slot, kept flat as buffers are set: a submit then follows no
  // Buffer or Allocation pointer, each a likely cache miss after a driver's calls. Valid once ready.
  struct Stamping {
    Stamps *stamps;
    std::atomic<uint64_t> *use;  // the submitting device's last-use word of the allocation
    rig_access access;
  };
  std::span<const Stamping> stamping() const { return stamping_; }
  Device &device() const { return *device_; }

  // A run of one host copy on a device that runs work inline (Device::runs_inline): decided when its
  // buffers are set, so a submit hands it over with a memmove instead of the driver call. Valid once ready.
  struct InlineCopy {
    void *dst;
    const void *src;
    size_t length;
    // stamping() again, kept in the run itself where it has at most kNear slots (every lone copy's submission
    // but one that declares slots the copy does not use), and laid out by what a submit does with each slot:
    // a submit then finds the stamps' addresses one dependent load sooner than through stamping()'s vector,
    // on the chain of loads (handle, slot, run, stamps, point, device) that the submit's path waits for before
    // it takes the turn, and tests no slot's access. Each array is filled from the front, null after its last.
    static constexpr size_t kNear = 2;
    bool near;                           // false: the run has more slots than kNear (then read stamping())
    Stamps *read[kNear];                 // slots read: rule 3 asks their last write
    Stamps *written[kNear];              // slots written: rule 4 asks their uses; their last write is raised
    std::atomic<uint64_t> *use[kNear];   // every slot's use word of the run's device, raised
  };
  // The run's inline copy, or null where the driver hands the work over.
  const InlineCopy *inline_copy() const { return inline_copy_.dst ? &inline_copy_ : nullptr; }
  // The driver's hand-over of this run prepared ahead (DriverWork::record), or null where the driver made
  // none (the engine then hands over work()). Made once the run is ready, dropped before its bindings or
  // scalars change: a record points into them. Valid once ready.
  RecordedWork *recorded() const { return recorded_.get(); }

 private:
  [[gnu::cold]] rig_status not_ready() const;
  // Recomputes parts_ (RIG_WHOLE lengths) and the readiness message; records the hand-over if `recorded`.
  void resolve(bool recorded = true);
  rig_status check_buffer(uint32_t slot, const Buffer &buffer) const;
  void bind(uint32_t slot, std::shared_ptr<Buffer> buffer);
  // Asks the driver for the recorded hand-over of a ready run (no inline copy); none while not ready.
  void record();
  // Whether copy part `p` of `length` bytes reads and writes shared bytes of one allocation.
  bool copy_overlaps(const Part &p, size_t length) const;

  // The first line (see the class's comment).
  Device *device_;                          // submission_->device, one pointer nearer (see Stamping)
  std::unique_ptr<RecordedWork> recorded_;  // reset first by the destructor and before what it points into
  std::vector<Stamping> stamping_;          // per slot, set with buffers_
  bool ready_ = false;                      // not_ready_ is empty: check_ready's answer without the string
  InlineCopy inline_copy_{};                // dst null: none (see inline_copy)
  // The rest.
  std::shared_ptr<Submission> submission_;
  std::vector<std::shared_ptr<Buffer>> buffers_;
  std::vector<Binding> bindings_;
  std::vector<Part> parts_;
  std::vector<std::byte> scalars_;
  std::string not_ready_;  // empty when ready
};

// The submit algorithm is core/submit.h's submit() (docs/ordering-model.md, "What a submit does").

}  // namespace rig
