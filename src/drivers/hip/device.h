// One rig device over a HIP GPU: its own non-blocking stream and timeline on the GPU. Opening "hip:0" twice
// gives two such devices, ordered against each other only by rig (stamps and waits). The shape is the CUDA
// driver's (drivers/cuda/device.h); HIP has no explicit contexts, so each call makes the GPU current on the
// calling thread for its duration (CurrentDevice) instead.
//
// Commits: HIP runs work as soon as it is enqueued, so every value is committed at hand-over and commit()
// only reports a loss.
// Loss: a sticky error (a kernel fault, a launch failure, an HSA runtime failure) or any failure to enqueue
// handed-over work loses the device; its timeline freezes and later waits past the frozen value answer
// RIG_LOST. Work of other devices that waited on it in their queues is lost with it.
#pragma once

#include <rig.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/driver.h"
#include "drivers/hip/api.h"
#include "drivers/hip/gpu.h"
#include "drivers/hip/timeline.h"

namespace rig::hip {

// What Memory::handle says about memory this driver made or mapped (passed back to free() and unmap()).
enum class MemoryTag : uintptr_t {
  none = 0,          // length 0: nothing allocated
  device = 1,        // hipMalloc
  pinned = 2,        // hipHostMalloc, host-addressable and device-mapped
  host_mapping = 3,  // host memory registered with hipHostRegister (map_host)
  peer_mapping = 4,  // another device's memory used in place (map_peer)
};

class HipDevice final : public DriverDevice, public HostRegistration {
 public:
  // Opens a device on `gpu` with its own stream and timeline; RIG_* with a message on failure.
  static rig_status open(const Api &api, const Gpu &gpu, std::unique_ptr<DriverDevice> *out);
  ~HipDevice() override;

  const DriverInfo &info() const override { return info_; }

  rig_status allocate(size_t length, rig_memory kind, Memory *out) override;
  void free(const Memory &memory) noexcept override;
  rig_status map_host(void *host, size_t length, bool read_only, Memory *out) override;
  rig_status map_peer(DriverDevice &owner, const Memory &memory, Memory *out) override;
  void unmap(const Memory &mapping) noexcept override;
  rig_status copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) override;
  rig_status copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) override;

  rig_status load_module(rig_module_format format, const void *bytes, size_t length,
                         std::unique_ptr<DriverModule> *out) override;
  rig_status check_part(const Part &part) override;

  bool can_wait_in_queue(const DriverDevice &producer) const override;
  rig_status hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) override;
  rig_status commit() override;
  uint64_t signaled() const override { return timeline_->signaled(); }
  rig_status wait(uint64_t value, Deadline deadline) override;

  HostRegistration *host_registration() override { return this; }

  // HostRegistration (mapped registration's view of this driver).
  // The raw attribute: -1 where the query failed (the static table then answers Refused Integrated_gpu,
  // not cacheable: HIP counts a failed query as integrated).
  int integrated() override { return attribute(ATTR_INTEGRATED); }
  int pageable_uses_host_page_tables() override { return attribute(ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES); }
  // HIP has the flag (hipHostRegisterReadOnly) but no attribute saying a device honours it: the runtime
  // answers the registration itself, and the self-test checks what it serves.
  int read_only_supported() override { return 1; }
  rig_status register_range(void *host, size_t length, bool read_only) override;
  rig_status unregister_range(void *host) override;
  rig_status alloc_pinned(size_t length, void **out) override;
  rig_status free_pinned(void *host) override;
  rig_status upload(const void *host, const Memory &device, size_t offset, size_t length) override;
  rig_status download(const Memory &device, size_t offset, void *host, size_t length) override;

  const Gpu &gpu() const { return gpu_; }

 private:
  HipDevice(const Api &api, const Gpu &gpu) : api_(api), gpu_(gpu) {}

  // The device attribute, or -1 where the query fails.
  int attribute(int which) const;
  // Loses the device (once): freezes the timeline (at most at `reached_cap`: values from a tainted one on
  // count as lost even where the stream ran them), tells the engine. Returns RIG_LOST with `why` set.
  rig_status lose(const char *why, uint64_t reached_cap = UINT64_MAX) noexcept;
  // A failed runtime call: loses the device where the error is sticky (or `always_lose`), else RIG_DRIVER or
  // RIG_OUT_OF_MEMORY; the message names the call and the runtime's error.
  rig_status fault(const char *call, Error result, bool always_lose);
  // The stream's sticky error, if any (hipStreamQuery): loses the device and answers RIG_LOST.
  rig_status check_stream();
  // RIG_LOST if a device whose value this device's queue waits for was lost before reaching it. With
  // `probe`, first asks each such device not known lost to look for its own fault.
  rig_status check_producers(uint64_t up_to, bool probe);
  Error enqueue_part(const Part &part, const Work &work);

  const Api &api_;
  const Gpu &gpu_;
  DriverInfo info_;
  Stream stream_ = nullptr;
  std::unique_ptr<Timeline> timeline_;
  int limits_[8] = {};  // block x/y/z, grid x/y/z, threads per block, shared bytes

  // Launch argument storage reused by every hand-over (called holding the turn): no allocation per submit
  // once it has grown to the largest launch.
  std::vector<void *> launch_addresses_;
  std::vector<void *> launch_params_;

  // In-queue waits on other devices not yet known to be safe: (their slot, value they wait for, our value
  // that waits). Pruned as our timeline passes them.
  struct QueuedWait {
    TimelineSlot *producer;
    uint64_t producer_value;
    uint64_t value;
  };
  std::mutex queued_lock_;
  std::vector<QueuedWait> queued_;

  std::mutex loss_lock_;
  bool loss_reported_ = false;
  std::string lost_why_;
};

}  // namespace rig::hip
