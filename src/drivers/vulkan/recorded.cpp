// Recorded hand-overs on Vulkan (issue 14): a ready run's parts recorded once into a command buffer of its
// own, with the same barriers and commands a hand-over records (recording.cpp, descriptors.cpp), and that
// command buffer put in the open batch at every submit of the run. A repeated submit then costs the batch's
// bookkeeping and, at commit, the queue submit; none of vkBeginCommandBuffer, the barrier, the copy or
// dispatch and its descriptor set, nor vkEndCommandBuffer (where a driver is slow, each costs as much as
// the submit: bench/README.md, "Why: Vulkan").
//
// Why it is correct to run one command buffer many times:
//  - Order: the command buffer begins with the full barrier before each part, whose first scope is all
//    work submitted to the queue before it (rule 1), as for work recorded into the batch; a batch keeps its
//    command buffers in hand-over order, so work recorded after a replay goes to the next batch.
//  - Simultaneous use: a run submitted again before its last submit completed is pending twice; the
//    command buffer is recorded with VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT, and the queue runs the
//    two one after the other (the barrier), so the scratch buffers it may hold are never used at once.
//  - Host visibility: a run that writes host-visible memory ends with the barrier to the host that a
//    batch's own command buffer ends with.
//  - Lifetime: the engine drops the record before the run's bindings or scalars change (core/submission.h);
//    the batches that run the command buffer keep the Replay until they are reached (recycle), and memory
//    is freed only after its every use is reached (core/allocation.cpp), as for a batch's own commands.
#include <new>

#include "drivers/vulkan/device.h"
#include "drivers/vulkan/memory.h"

namespace rig::vulkan {

std::atomic<bool> testing::record_ahead{true};

namespace {

class VulkanRecord final : public RecordedWork {
 public:
  VulkanRecord(VulkanDevice &device, std::shared_ptr<const Replay> replay)
      : device_(device), replay_(std::move(replay)) {}
  rig_status hand_over(uint64_t value, std::span<const QueueWait> waits) override {
    return device_.hand_over_replay(replay_, value, waits);
  }

 private:
  VulkanDevice &device_;  // never freed before the process exits (core/device.h), so it outlives the run
  std::shared_ptr<const Replay> replay_;
};

}  // namespace

Replay::~Replay() {
  const DeviceFunctions &fn = ctx->fn();
  for (VkDescriptorPool p : batch.pools) fn.vkDestroyDescriptorPool(ctx->device(), p, nullptr);
  for (const Memory &m : batch.scratch) destroy_buffer(*ctx, m);
  if (pool) fn.vkDestroyCommandPool(ctx->device(), pool, nullptr);  // frees the command buffer
}

std::unique_ptr<RecordedWork> VulkanDevice::record(const Work &work) {
  if (lost() || !testing::record_ahead.load(std::memory_order_relaxed)) return nullptr;
  try {
    auto replay = std::make_shared<Replay>(ctx_);
    const DeviceFunctions &fn = ctx_->fn();
    VkCommandPoolCreateInfo pi{};
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.queueFamilyIndex = ctx_->physical().queue_family;
    if (fn.vkCreateCommandPool(ctx_->device(), &pi, nullptr, &replay->pool) != VK_SUCCESS) return nullptr;
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = replay->pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    Batch &b = replay->batch;
    if (fn.vkAllocateCommandBuffers(ctx_->device(), &ai, &b.commands) != VK_SUCCESS) return nullptr;
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    if (fn.vkBeginCommandBuffer(b.commands, &bi) != VK_SUCCESS) return nullptr;
    b.ahead = true;
    for (const Part &part : work.parts)
      if (record_part(b, part, work) != RIG_OK) return nullptr;  // the pool's destruction frees what was made
    if (b.writes_host_visible) barrier(b.commands, true);
    if (fn.vkEndCommandBuffer(b.commands) != VK_SUCCESS) return nullptr;
    return std::make_unique<VulkanRecord>(*this, std::move(replay));
  } catch (const std::bad_alloc &) {
    return nullptr;  // the general hand-over records the same commands at each submit
  }
}

}  // namespace rig::vulkan
