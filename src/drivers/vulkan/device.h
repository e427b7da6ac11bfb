// A rig device on Vulkan: one queue, a timeline semaphore as its timeline, and command buffers that hold
// handed-over work until it is committed.
//
// Timeline and commits (docs/ordering-model.md, "Commits"):
//  - hand_over records value v's parts into the open command buffer (a *batch*); nothing reaches the queue.
//    A run whose buffers are set has its parts recorded once into a command buffer of its own (Replay,
//    recorded.cpp): its hand-over puts that command buffer in the open batch, recording nothing.
//  - commit() ends the batch and submits it with one signal of the timeline semaphore to the batch's last
//    value. The engine commits before every wait for one of our values (a host wait, or a wait placed in
//    another device's queue), and this driver also commits by itself once kCommitEvery values are held,
//    so held work never waits longer than kCommitEvery values for a commit.
//  - signaled() is vkGetSemaphoreCounterValue: a pure read, it commits nothing.
//  - wait(v) is vkWaitSemaphores in slices of at most 1 ms, checking rig::interrupted() and the deadline.
//  - Device order (rule 1): the device always uses the same VkQueue and records a full memory barrier
//    before every part, whose first scope is all earlier work submitted to that queue.
//  - In-queue waits: a producer on the same VkDevice (another rig device on this physical device) is
//    waited for by the batch's submit, on the producer's timeline semaphore. Producers elsewhere (other
//    physical devices, memory devices, CUDA) are waited for on the host by the engine.
//  - Host visibility: a batch that writes host-visible memory ends with a barrier to the host stage, so
//    that after a wait the host sees its writes. (Device memory is read by staged copies, which begin
//    with a barrier of their own.)
//
// Memory: RIG_MEMORY_DEVICE is device-local and not host-addressable (host reads and writes are staged);
// RIG_MEMORY_PINNED is host-visible, coherent host memory (Memory.host set, so export and memory-device
// borrows work); RIG_MEMORY_MAPPED is device-local and host-visible where the device has such memory
// (ReBAR, integrated, lavapipe), else PINNED.
//
// Borrows: map_peer works between rig devices on the same VkDevice (the same VkBuffer). map_host imports
// host memory of any alignment where the device offers VK_EXT_external_memory_host (unless
// RIG_VULKAN_HOST_IMPORT=0): each borrow imports its enclosing pages as a buffer of its own (memory.h), so
// neighbours on a page each have one, and copies and launches use one buffer a borrow (no seams). Refused
// with the reason: file mappings (the kernel hazard: host_pages.h) and pages the process cannot write
// borrowed writable (an import cannot say read-only).
//
// Fills: vkCmdFillBuffer fills the 4-byte-aligned middle; unaligned head and tail bytes (at most 3 each)
// are copied from a small pattern buffer (256 values x 4 bytes), so fills take any offset and length.
#pragma once

#include <rig.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/driver.h"
#include "drivers/vulkan/context.h"
#include "drivers/vulkan/module.h"
#include "drivers/vulkan/staging.h"

namespace rig::vulkan {

namespace testing {
// Whether record() records runs ahead (true, the default): rig's Vulkan tests turn it off to make runs
// that are recorded at each hand-over, and so mix both kinds in one batch (vulkan_testing_record_ahead).
extern std::atomic<bool> record_ahead;
}  // namespace testing

// The driver commits by itself once this many values are held (the model's k: docs/ordering-model.md, Commits).
constexpr uint64_t kCommitEvery = 8;
// Batches submitted and not yet reached, at most; a hand-over beyond it waits for the oldest to complete.
constexpr size_t kMaxBatchesInFlight = 64;
// Completed batches are recycled once this many are in flight (one semaphore read per round, not per
// hand-over).
constexpr size_t kRecycleAt = 16;
// The ring of batches: those in flight plus the open one.
constexpr size_t kRing = kMaxBatchesInFlight + 1;
// The stages work runs in (copies, fills, launches): what barriers and in-queue waits cover.
constexpr VkPipelineStageFlags kWorkStages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;

// A device's timeline semaphore. Shared by pointer with every batch of another device that waits on it,
// so the semaphore outlives those waits even when its device is released first. Also a semaphore imported
// from a descriptor (semaphore_fd.cpp), which the batch waiting on it keeps the same way.
class Timeline {
 public:
  Timeline(std::shared_ptr<Context> ctx, VkSemaphore semaphore) : ctx_(std::move(ctx)), semaphore_(semaphore) {}
  ~Timeline() { ctx_->fn().vkDestroySemaphore(ctx_->device(), semaphore_, nullptr); }
  Timeline(const Timeline &) = delete;
  Timeline &operator=(const Timeline &) = delete;
  VkSemaphore semaphore() const { return semaphore_; }

 private:
  std::shared_ptr<Context> ctx_;
  VkSemaphore semaphore_;
};

struct Replay;

// Held (then submitted) work: the command buffers one submit runs, in order, and what must live until they
// complete. A batch's own command buffer (`commands`) takes the work it records at hand-over; a recorded
// run's command buffer (Replay) is put in the sequence as it is. The own one is begun at most once a batch,
// at its first recorded hand-over, so work recorded after a replay starts the next batch (batches.cpp).
struct Batch {
  VkCommandBuffer commands = VK_NULL_HANDLE;
  uint64_t last_value = 0;  // the timeline value its submit signals
  bool recording = false;   // `commands` is begun and not ended
  bool own_used = false;    // `commands` was begun for this batch (it is in `sequence`)
  bool ahead = false;       // a Replay's: recorded ahead, so a failure refuses the record and loses nothing
  bool writes_host_visible = false;  // `commands` writes memory the host addresses: ends with a barrier to the host
  std::vector<VkCommandBuffer> sequence;                // what the submit runs, in order
  std::vector<std::shared_ptr<const Replay>> replays;  // the recorded runs in `sequence`, kept until reached
  // In-queue waits: the producers' timelines and the highest value of each.
  std::vector<std::shared_ptr<Timeline>> wait_timelines;
  std::vector<uint64_t> wait_values;
  std::vector<std::shared_ptr<const Pipeline>> pipelines;
  std::vector<VkDescriptorPool> pools;  // descriptor sets of its launches; reset when the batch is reused
  size_t pool_cursor = 0;
  std::vector<Memory> scratch;  // temporary buffers (overlapping copies), freed when the batch is reused
};

// A ready run's work recorded once (recorded.cpp), when its buffers or scalars are set, into a command
// buffer of its own pool with simultaneous use: each hand-over of the run puts that command buffer in the
// open batch, so a repeated submit records nothing (no vkBeginCommandBuffer, barrier, copy or dispatch, no
// descriptor set: issue 14's recorded hand-overs). Its `batch` holds the command buffer and what it refers
// to (pipelines, descriptor pools, scratch buffers, which in-order replays use one at a time). Shared with
// every batch that runs it, so it is destroyed only once the run dropped it and those batches are reached.
struct Replay {
  explicit Replay(std::shared_ptr<Context> context) : ctx(std::move(context)) {}
  ~Replay();
  Replay(const Replay &) = delete;
  Replay &operator=(const Replay &) = delete;
  std::shared_ptr<Context> ctx;
  VkCommandPool pool = VK_NULL_HANDLE;  // its own: recording and freeing it take no lock of the device's
  Batch batch;
};

class VulkanDevice final : public DriverDevice, public MemoryFds, public SemaphoreFds {
 public:
  static rig_status open(std::shared_ptr<Context> ctx, std::string name, std::unique_ptr<DriverDevice> *out);
  ~VulkanDevice() override;

  // DriverDevice: memory and code (core/driver.h).
  RIG_DRIVER_DEVICE_OVERRIDES

  // DriverWork: parts and the timeline (core/driver_work.h).
  rig_status check_part(const Part &part) override;

  // MemoryFds (core/memory_fd.h): device memory as opaque fds (device_memory.cpp).
  MemoryFds *memory_fds() override { return this; }
  bool can_memory_fd() const override { return ctx_->memory_fd(); }
  rig_status export_memory_fd(const Memory &memory, int *fd) override;
  rig_status import_memory_fd(int fd, size_t length, Memory *out) override;

  // SemaphoreFds (core/semaphore_fd.h): points as semaphore fds and sync files (semaphore_fd.cpp).
  SemaphoreFds *semaphore_fds() override { return this; }
  bool can_semaphore_fd() const override { return ctx_->semaphore_fd(); }
  bool can_sync_fd() const override { return ctx_->sync_fd(); }
  rig_status export_semaphore_fd(uint64_t value, int *fd, uint64_t *wait_value) override;
  rig_status export_sync_fd(uint64_t value, int *fd) override;
  rig_status queue_wait_semaphore_fd(int fd, uint64_t fd_value) override;
  rig_status queue_wait_sync_fd(int fd) override;

  bool can_wait_in_queue(const DriverDevice &producer) const override;
  rig_status hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) override;
  // The run's work recorded into a Replay (recorded.cpp); null where it cannot be (out of memory, a pipeline
  // that fails): the engine then hands the work over each time, which records it then. Takes no lock of the
  // device's; never on the submit path.
  std::unique_ptr<RecordedWork> record(const Work &work) override;
  // hand_over for a recorded run: its command buffer joins the open batch after `waits`. Same contract.
  rig_status hand_over_replay(const std::shared_ptr<const Replay> &replay, uint64_t value,
                              std::span<const QueueWait> waits);
  rig_status commit() override;
  uint64_t signaled() const override;
  // From the last value read from the semaphore (signaled_), asking nothing: the submit path asks this for
  // every point it collects, and vkGetSemaphoreCounterValue there was one driver call a submit the same
  // submit written by hand does not make (bench/README.md, "Why: Vulkan"). A value reached since the last read
  // answers no: its consumer then waits for it in its queue, where it is already signaled.
  bool known_reached(uint64_t value) const override { return value <= signaled_.load(std::memory_order_acquire); }
  rig_status wait(uint64_t value, Deadline deadline) override;

  // The value the timeline semaphore will take that first covers `value`: the end of the committed batch
  // holding it (the semaphore is signaled only at batch ends), or `value` once that batch is recycled
  // (reached). Waiting on it is the same wait as on `value`; waiting on exact signal values keeps
  // validation layers that track only exact values (1.3.239, Debian 12) from reporting a false timeout.
  uint64_t signal_covering(uint64_t value) const;

  Context &context() const { return *ctx_; }
  const std::shared_ptr<Timeline> &timeline() const { return timeline_; }
  // Marks the VkDevice lost (for a device-lost result) and reports the loss to the engine, which owns it
  // (its first report wins); returns the RIG_LOST failure with the engine's reason. Takes no lock of ours.
  rig_status lose(VkResult result, const char *why);
  // The status for a Vulkan failure: loss for VK_ERROR_DEVICE_LOST, else `status` with the message.
  rig_status lost_status() const;

 private:
  VulkanDevice(std::shared_ptr<Context> ctx, std::string name);
  rig_status init();

  // One vkWaitSemaphores on the timeline for `value`, of at most `timeout_ns`: its result.
  VkResult wait_semaphore(uint64_t value, uint64_t timeout_ns) const;
  // Waits for `value` uninterruptibly (closing, a full queue), in slices that look for the VkDevice's loss:
  // VK_SUCCESS, VK_TIMEOUT where the VkDevice was lost, or the wait's failure. Blocks; may hold mutex_.
  VkResult wait_blocking(uint64_t value) const;

  // A sync file's binary semaphore and the fence of the submit that signals it (semaphore_fd.cpp).
  struct SyncExport {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
  };
  // Destroys the sync exports whose submits completed; `closing`: waits for every one first.
  void sweep_sync_exports(bool closing);
  // A new semaphore over descriptor `fd` (a timeline's opaque fd, or a sync file imported temporarily):
  // on success it owns fd; the driver's refusal as RIG_INVALID_ARGUMENT.
  rig_status import_semaphore(int fd, bool sync, std::shared_ptr<Timeline> *out);
  // Imports `fd` and makes the open batch wait for it (at `fd_value` for a timeline). Takes mutex_.
  rig_status queue_wait_imported(int fd, bool sync, uint64_t fd_value);

  // All below run holding mutex_ (batches.cpp, recording.cpp, descriptors.cpp).
  rig_status open_batch(Batch **out);
  // Makes the batch wait in queue for `timeline` to reach `value` (one wait per semaphore, the highest).
  static void add_wait(Batch &batch, const std::shared_ptr<Timeline> &timeline, uint64_t value);
  void recycle(Batch &batch);
  rig_status commit_locked();
  // hand_over and hand_over_replay: the producers' waits, then `work` recorded into the batch's own command
  // buffer, or `replay`'s command buffer put in its sequence (exactly one of them).
  rig_status hand_over_to_batch(const Work *work, const std::shared_ptr<const Replay> *replay, uint64_t value,
                                std::span<const QueueWait> waits);
  // The batch's own command buffer, begun if it is not; RIG_OK with *out null where it was begun and ended
  // for this batch already (a replay follows it: the work goes to the next batch).
  rig_status own_commands(Batch &batch, VkCommandBuffer *out);
  // Ends the batch's own command buffer if it is recording, after a barrier to the host if it wrote
  // host-visible memory.
  rig_status end_own(Batch &batch);
  // A recording failure: loses the device for a batch's hand-over; for a Replay's (recorded ahead) only
  // refuses the record, quietly, since the engine then hands the work over each time.
  rig_status spoil(const Batch &batch, VkResult result, const char *why);
  rig_status check_work(const Work &work) const override;
  rig_status record_part(Batch &batch, const Part &part, const Work &work);
  rig_status record_copy(Batch &batch, const Part &part, const Work &work);
  rig_status record_fill(Batch &batch, const Part &part, const Work &work);
  rig_status record_launch(Batch &batch, const Part &part, const Work &work);
  rig_status descriptor_set(Batch &batch, const Layout &layout, uint32_t bindings, VkDescriptorSet *out);
  void barrier(VkCommandBuffer commands, bool to_host) const;

  std::shared_ptr<Context> ctx_;
  Queue &queue_;
  std::shared_ptr<Timeline> timeline_;
  Memory patterns_;  // 256 x 4 bytes, pattern b = four bytes of value b (host-visible, written once)
  Staging staging_;

  mutable std::mutex mutex_;  // recording state; hand_over and commit also hold the engine's turn
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Batch>> ring_;  // kMaxBatchesInFlight + 1 slots, made on demand
  size_t first_ = 0;     // oldest submitted batch not yet recycled
  size_t in_flight_ = 0; // submitted batches from first_ on
  Batch *open_ = nullptr;

  std::atomic<uint64_t> handed_{0};            // last value handed over
  std::atomic<uint64_t> committed_{0};         // last value submitted to the queue
  mutable std::atomic<uint64_t> signaled_{0};  // last value read from the semaphore (a floor)

  std::mutex imports_mutex_;
  std::unordered_map<uintptr_t, Memory> imports_;  // host memory imported by map_host, by VkBuffer; unmap frees

  std::mutex sync_exports_mutex_;
  std::vector<SyncExport> sync_exports_;  // submitted, destroyed once their fences are signaled
};

}  // namespace rig::vulkan
