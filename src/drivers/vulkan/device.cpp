#include "drivers/vulkan/device.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "drivers/vulkan/memory.h"

namespace rig::vulkan {

namespace {

constexpr uint32_t kPoolSets = 64;                    // descriptor sets per descriptor pool
constexpr uint32_t kPoolDescriptors = kPoolSets * 8;  // storage-buffer descriptors per descriptor pool
constexpr uint64_t kSliceNs = 1'000'000;              // interruptible waits look at interrupts every 1 ms
constexpr uint64_t kBlockingSliceNs = 100'000'000;    // uninterruptible waits look for loss every 0.1 s
constexpr VkPipelineStageFlags kWorkStages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
constexpr size_t kRing = kMaxBatchesInFlight + 1;  // batches in flight plus the open one

// signaled_ caches the semaphore. Raised with release, read with acquire: a thread that finds a value in
// the cache and skips the semaphore must still see the work's writes, which only the raising thread's
// vkWaitSemaphores or vkGetSemaphoreCounterValue made visible (a relaxed cache let a host read on another
// thread race with lavapipe's copy: ThreadSanitizer in the model test over memory+vulkan).
void raise_to(std::atomic<uint64_t> &word, uint64_t value) {
  uint64_t seen = word.load(std::memory_order_relaxed);
  while (seen < value && !word.compare_exchange_weak(seen, value, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

}  // namespace

// ---- opening and closing ------------------------------------------------------------------------------

VulkanDevice::VulkanDevice(std::shared_ptr<Context> ctx, std::string name)
    : ctx_(std::move(ctx)), queue_(ctx_->next_queue()), staging_(*ctx_, queue_) {
  const PhysicalDevice &pd = ctx_->physical();
  info_.name = std::move(name);
  info_.framework = "Vulkan";
  info_.model = pd.properties.deviceName;
  switch (pd.properties.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      info_.kind = RIG_DEVICE_CPU;
      info_.integrated = 1;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      info_.kind = RIG_DEVICE_GPU;
      info_.integrated = 1;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      info_.kind = RIG_DEVICE_GPU;
      info_.integrated = 0;
      break;
    default:
      info_.kind = RIG_DEVICE_GPU;
      info_.integrated = -1;
  }
  for (uint32_t i = 0; i < pd.memory.memoryHeapCount; ++i)
    if (pd.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) info_.memory_bytes += pd.memory.memoryHeaps[i].size;
  info_.runs_host_kernels = false;
  info_.commits_at_hand_over = false;  // work is held in an open command buffer until commit()
}

rig_status VulkanDevice::open(std::shared_ptr<Context> ctx, std::string name, std::unique_ptr<DriverDevice> *out) {
  std::unique_ptr<VulkanDevice> d(new VulkanDevice(std::move(ctx), std::move(name)));
  if (rig_status s = d->init(); s != RIG_OK) return s;
  *out = std::move(d);
  return RIG_OK;
}

rig_status VulkanDevice::init() {
  const DeviceFunctions &fn = ctx_->fn();
  VkSemaphoreTypeCreateInfo ti{};
  ti.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  ti.initialValue = 0;
  VkSemaphoreCreateInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  si.pNext = &ti;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  VkResult r = fn.vkCreateSemaphore(ctx_->device(), &si, nullptr, &semaphore);
  if (r != VK_SUCCESS) return fail(RIG_DRIVER, "Vulkan: vkCreateSemaphore (timeline) failed: %s", result_name(r));
  timeline_ = std::make_shared<Timeline>(ctx_, semaphore);

  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = ctx_->physical().queue_family;
  r = fn.vkCreateCommandPool(ctx_->device(), &pi, nullptr, &pool_);
  if (r != VK_SUCCESS) {
    pool_ = VK_NULL_HANDLE;
    return fail(RIG_DRIVER, "Vulkan: vkCreateCommandPool failed: %s", result_name(r));
  }
  ring_.resize(kRing);

  // Pattern b (bytes 4b..4b+3) holds four bytes of value b: the source of unaligned fill heads and tails.
  if (rig_status s = make_buffer(*ctx_, 256 * 4, BufferKind::host, &patterns_); s != RIG_OK) return s;
  auto *p = static_cast<uint8_t *>(patterns_.host);
  for (unsigned b = 0; b < 256; ++b) std::memset(p + 4 * b, static_cast<int>(b), 4);
  return RIG_OK;
}

VulkanDevice::~VulkanDevice() {
  const DeviceFunctions &fn = ctx_->fn();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The engine waited for every value before releasing; commit anything still held all the same, so that
    // no command buffer is destroyed while recorded but unsubmitted work refers to buffers.
    if (open_ && !lost_.load(std::memory_order_acquire)) (void)commit_locked();
  }
  uint64_t last = committed_.load(std::memory_order_acquire);
  if (last > 0 && !lost_.load(std::memory_order_acquire)) {
    VkSemaphore sem = timeline_->semaphore();
    VkSemaphoreWaitInfo wi{};
    wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem;
    wi.pValues = &last;
    // Objects of submitted batches may not be destroyed before the batches complete.
    while (fn.vkWaitSemaphores(ctx_->device(), &wi, kBlockingSliceNs) == VK_TIMEOUT && !ctx_->lost()) {
    }
  }
  for (auto &b : ring_) {
    if (!b) continue;
    recycle(*b);
    for (VkDescriptorPool p : b->pools) fn.vkDestroyDescriptorPool(ctx_->device(), p, nullptr);
  }
  ring_.clear();
  if (pool_) fn.vkDestroyCommandPool(ctx_->device(), pool_, nullptr);  // frees the batches' command buffers
  destroy_buffer(*ctx_, patterns_);
  for (const Memory &m : imports_) destroy_buffer(*ctx_, m);
}

// ---- loss ----------------------------------------------------------------------------------------------

rig_status VulkanDevice::lose(VkResult result, const char *why) {
  if (result == VK_ERROR_DEVICE_LOST) ctx_->set_lost();
  if (!lost_.load(std::memory_order_acquire)) {
    static std::mutex once;  // losses are rare: one lock for all devices keeps lost_why_ written once
    std::lock_guard<std::mutex> lock(once);
    if (!lost_.load(std::memory_order_relaxed)) {
      lost_why_ = info_.name + ": " + why + " (" + result_name(result) + ")";
      lost_.store(true, std::memory_order_release);
      mark_lost();
      report_loss(lost_why_.c_str());
    }
  }
  return fail(RIG_LOST, "Vulkan: %s is lost: %s", info_.name.c_str(), lost_why_.c_str());
}

rig_status VulkanDevice::lost_status() const {
  return fail(RIG_LOST, "Vulkan: %s is lost: %s", info_.name.c_str(), lost_why_.c_str());
}

// ---- memory --------------------------------------------------------------------------------------------

rig_status VulkanDevice::allocate(size_t length, rig_memory kind, Memory *out) {
  switch (kind) {
    case RIG_MEMORY_DEVICE:
      return make_buffer(*ctx_, length, BufferKind::device, out);
    case RIG_MEMORY_PINNED:
      return make_buffer(*ctx_, length, BufferKind::host, out);
    case RIG_MEMORY_MAPPED:
      return make_buffer(*ctx_, length, BufferKind::device_host, out);
    default:
      break;
  }
  return fail(RIG_INVALID_ARGUMENT, "Vulkan: unknown memory kind %d", static_cast<int>(kind));
}

void VulkanDevice::free(const Memory &memory) noexcept { destroy_buffer(*ctx_, memory); }

rig_status VulkanDevice::map_host(void *host, size_t length, bool read_only, Memory *out) {
  if (!ctx_->host_import()) {
    if (!env_flag("RIG_VULKAN_HOST_IMPORT"))
      return fail(RIG_UNMAPPABLE,
                  "Vulkan: %s borrows no host memory (importing host memory is opt-in: RIG_VULKAN_HOST_IMPORT=1)",
                  info_.name.c_str());
    return fail(RIG_UNMAPPABLE, "Vulkan: %s does not offer VK_EXT_external_memory_host (or it was not enabled "
                "when the first Vulkan device was opened)", info_.name.c_str());
  }
  if (read_only)
    return fail(RIG_UNMAPPABLE, "Vulkan: read-only host memory is never imported: an import cannot be made "
                "read-only, so a device write would fault");
  Memory m;
  if (rig_status s = import_host(*ctx_, host, length, &m); s != RIG_OK) return s;
  std::lock_guard<std::mutex> lock(imports_mutex_);
  imports_.push_back(m);
  *out = m;
  return RIG_OK;
}

rig_status VulkanDevice::map_peer(DriverDevice &owner, const Memory &memory, Memory *out) {
  auto *peer = dynamic_cast<VulkanDevice *>(&owner);
  if (!peer || &peer->context() != ctx_.get())
    return fail(RIG_UNMAPPABLE, "Vulkan: %s maps only memory of rig devices on the same Vulkan device, not %s's",
                info_.name.c_str(), owner.info().name.c_str());
  *out = memory;  // the same VkBuffer serves every rig device of one VkDevice
  return RIG_OK;
}

void VulkanDevice::unmap(const Memory &mapping) noexcept {
  std::lock_guard<std::mutex> lock(imports_mutex_);
  for (auto it = imports_.begin(); it != imports_.end(); ++it)
    if (it->handle == mapping.handle) {
      destroy_buffer(*ctx_, *it);
      imports_.erase(it);
      return;
    }
  // A peer mapping: the owner's buffer, nothing of ours to release.
}

rig_status VulkanDevice::copy_to_host(const Memory &memory, size_t offset, void *dst, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {
    std::memcpy(dst, static_cast<const char *>(memory.host) + offset, length);
    return RIG_OK;
  }
  if (lost_.load(std::memory_order_acquire)) return lost_status();
  return staging_.download(*this, memory, offset, dst, length);
}

rig_status VulkanDevice::copy_from_host(const Memory &memory, size_t offset, const void *src, size_t length) {
  if (length == 0) return RIG_OK;
  if (memory.host) {
    std::memcpy(static_cast<char *>(memory.host) + offset, src, length);
    return RIG_OK;
  }
  if (lost_.load(std::memory_order_acquire)) return lost_status();
  return staging_.upload(*this, memory, offset, src, length);
}

// ---- code ----------------------------------------------------------------------------------------------

rig_status VulkanDevice::load_module(rig_module_format format, const void *bytes, size_t length,
                                     std::unique_ptr<DriverModule> *out) {
  if (format != RIG_MODULE_SPIRV)
    return fail(RIG_UNSUPPORTED, "Vulkan: %s loads SPIR-V modules only (format %d)", info_.name.c_str(),
                static_cast<int>(format));
  return Module::load(ctx_, bytes, length, out);
}

rig_status VulkanDevice::check_part(const Part &part) {
  switch (part.kind) {
    case RIG_PART_COPY:
    case RIG_PART_FILL:
      return RIG_OK;
    case RIG_PART_HOST_KERNEL:
      return fail(RIG_UNSUPPORTED, "Vulkan: %s runs no host kernels", info_.name.c_str());
    case RIG_PART_LAUNCH:
      break;
    default:
      return fail(RIG_UNSUPPORTED, "Vulkan: unknown part kind %d", static_cast<int>(part.kind));
  }
  auto *module = dynamic_cast<Module *>(part.module);
  Entry *entry = module ? module->entry(part.function) : nullptr;
  if (!entry) return fail(RIG_INVALID_ARGUMENT, "Vulkan: the launch's function is not of a Vulkan module");
  if (&module->context() != ctx_.get())
    return fail(RIG_INVALID_ARGUMENT, "Vulkan: the launch's module was loaded on another Vulkan device than %s",
                info_.name.c_str());
  if (part.shared_bytes != 0)
    return fail(RIG_UNSUPPORTED, "Vulkan: shared_bytes must be 0 (workgroup memory is declared in the shader)");
  const VkPhysicalDeviceLimits &lim = ctx_->limits();
  uint64_t invocations = 1;
  for (int i = 0; i < 3; ++i) {
    if (part.grid[i] > lim.maxComputeWorkGroupCount[i])
      return fail(RIG_INVALID_ARGUMENT, "Vulkan: grid[%d] = %u exceeds %s's maxComputeWorkGroupCount %u", i,
                  part.grid[i], info_.name.c_str(), lim.maxComputeWorkGroupCount[i]);
    uint32_t b = part.block[i] ? part.block[i] : 1;
    if (b > lim.maxComputeWorkGroupSize[i])
      return fail(RIG_INVALID_ARGUMENT, "Vulkan: block[%d] = %u exceeds %s's maxComputeWorkGroupSize %u", i, b,
                  info_.name.c_str(), lim.maxComputeWorkGroupSize[i]);
    invocations *= b;
  }
  if (invocations > lim.maxComputeWorkGroupInvocations)
    return fail(RIG_INVALID_ARGUMENT, "Vulkan: a block of %llu invocations exceeds %s's limit %u",
                static_cast<unsigned long long>(invocations), info_.name.c_str(), lim.maxComputeWorkGroupInvocations);
  if (part.slots.size() > ctx_->max_bindings())
    return fail(RIG_UNSUPPORTED, "Vulkan: a launch binds %zu slots; %s allows at most %u", part.slots.size(),
                info_.name.c_str(), ctx_->max_bindings());
  // Make the pipeline now, off the submit path, so that a shader the driver refuses fails here.
  uint32_t block[3] = {part.block[0] ? part.block[0] : 1, part.block[1] ? part.block[1] : 1,
                       part.block[2] ? part.block[2] : 1};
  std::shared_ptr<const Pipeline> pipeline;
  return entry->pipeline(static_cast<uint32_t>(part.slots.size()), block, &pipeline);
}

// ---- timeline ------------------------------------------------------------------------------------------

bool VulkanDevice::can_wait_in_queue(const DriverDevice &producer) const {
  auto *p = dynamic_cast<const VulkanDevice *>(&producer);
  return p && &p->context() == ctx_.get();
}

uint64_t VulkanDevice::signaled() const {
  uint64_t v = 0;
  VkResult r = ctx_->fn().vkGetSemaphoreCounterValue(ctx_->device(), timeline_->semaphore(), &v);
  if (r == VK_SUCCESS) raise_to(signaled_, v);
  // On failure (a lost device) the last value read stands: a pure read reports no loss; a wait will.
  return signaled_.load(std::memory_order_acquire);
}

rig_status VulkanDevice::wait(uint64_t value, Deadline deadline) {
  if (value <= signaled_.load(std::memory_order_acquire)) return RIG_OK;
  if (lost_.load(std::memory_order_acquire)) return lost_status();
  if (value > committed_.load(std::memory_order_acquire)) {
    // The engine commits before it waits; commit here as well so that no wait can ever wait on held work.
    std::lock_guard<std::mutex> lock(mutex_);
    if (value > handed_.load(std::memory_order_relaxed))
      return fail(RIG_INVALID_ARGUMENT, "Vulkan: wait for value %llu of %s, beyond the %llu handed over",
                  static_cast<unsigned long long>(value), info_.name.c_str(),
                  static_cast<unsigned long long>(handed_.load(std::memory_order_relaxed)));
    if (value > committed_.load(std::memory_order_relaxed))
      if (rig_status s = commit_locked(); s != RIG_OK) return s;
  }
  const uint64_t target = signal_covering(value);
  VkSemaphore sem = timeline_->semaphore();
  VkSemaphoreWaitInfo wi{};
  wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wi.semaphoreCount = 1;
  wi.pSemaphores = &sem;
  wi.pValues = &target;
  for (;;) {
    uint64_t slice = kSliceNs;
    if (!deadline.is_forever()) {
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.at - Clock::now()).count();
      slice = left <= 0 ? 0 : std::min<uint64_t>(slice, static_cast<uint64_t>(left));
    }
    VkResult r = ctx_->fn().vkWaitSemaphores(ctx_->device(), &wi, slice);
    if (r == VK_SUCCESS) {
      raise_to(signaled_, target);
      return RIG_OK;
    }
    if (r != VK_TIMEOUT) return lose(r, "vkWaitSemaphores failed");
    if (ctx_->lost()) return lose(VK_ERROR_DEVICE_LOST, "its VkDevice was lost (seen by another rig device)");
    if (interrupted())
      return fail(RIG_INTERRUPTED, "Vulkan: the wait for value %llu of %s was interrupted",
                  static_cast<unsigned long long>(value), info_.name.c_str());
    if (deadline.passed())
      return fail(RIG_TIMEOUT, "Vulkan: %s did not reach value %llu before the deadline", info_.name.c_str(),
                  static_cast<unsigned long long>(value));
  }
}

uint64_t VulkanDevice::signal_covering(uint64_t value) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < in_flight_; ++i) {
    const Batch &b = *ring_[(first_ + i) % kRing];
    if (b.last_value >= value) return b.last_value;
  }
  return value;
}

rig_status VulkanDevice::commit() {
  std::lock_guard<std::mutex> lock(mutex_);
  return commit_locked();
}

rig_status VulkanDevice::commit_locked() {
  if (!open_) return RIG_OK;  // nothing held
  if (lost_.load(std::memory_order_acquire)) return lost_status();
  Batch &b = *open_;
  const DeviceFunctions &fn = ctx_->fn();
  if (b.writes_host_visible) barrier(b.commands, true);
  VkResult r = fn.vkEndCommandBuffer(b.commands);
  if (r != VK_SUCCESS) return lose(r, "vkEndCommandBuffer failed");

  const uint32_t waits = static_cast<uint32_t>(b.wait_timelines.size());
  // Semaphore handles and stages for the submit; the waits are few (one per other rig device of this
  // VkDevice at most), so a fixed array serves, with the batch's own storage beyond it.
  std::array<VkSemaphore, 16> sems_small;
  std::array<VkPipelineStageFlags, 16> stages_small;
  std::vector<VkSemaphore> sems_big;
  std::vector<VkPipelineStageFlags> stages_big;
  VkSemaphore *sems = sems_small.data();
  VkPipelineStageFlags *stages = stages_small.data();
  if (waits > sems_small.size()) {
    sems_big.resize(waits);
    stages_big.resize(waits);
    sems = sems_big.data();
    stages = stages_big.data();
  }
  for (uint32_t i = 0; i < waits; ++i) {
    sems[i] = b.wait_timelines[i]->semaphore();
    stages[i] = kWorkStages;
  }
  VkSemaphore signal = timeline_->semaphore();
  VkTimelineSemaphoreSubmitInfo ti{};
  ti.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  ti.waitSemaphoreValueCount = waits;
  ti.pWaitSemaphoreValues = b.wait_values.data();
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &b.last_value;
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.pNext = &ti;
  si.waitSemaphoreCount = waits;
  si.pWaitSemaphores = sems;
  si.pWaitDstStageMask = stages;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &b.commands;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &signal;
  {
    std::lock_guard<std::mutex> lock(queue_.submit);
    r = fn.vkQueueSubmit(queue_.handle, 1, &si, VK_NULL_HANDLE);
  }
  if (r != VK_SUCCESS) return lose(r, "vkQueueSubmit failed");
  b.recording = false;
  open_ = nullptr;
  ++in_flight_;
  committed_.store(b.last_value, std::memory_order_release);
  return RIG_OK;
}

void VulkanDevice::recycle(Batch &b) {
  const DeviceFunctions &fn = ctx_->fn();
  b.wait_timelines.clear();
  b.wait_values.clear();
  b.pipelines.clear();
  for (size_t i = 0; i <= b.pool_cursor && i < b.pools.size(); ++i)  // the pools the batch used
    fn.vkResetDescriptorPool(ctx_->device(), b.pools[i], 0);
  b.pool_cursor = 0;
  for (const Memory &m : b.scratch) destroy_buffer(*ctx_, m);
  b.scratch.clear();
  b.last_value = 0;
  b.recording = false;
  b.writes_host_visible = false;
}

rig_status VulkanDevice::open_batch(Batch **out) {
  if (open_) {
    *out = open_;
    return RIG_OK;
  }
  const DeviceFunctions &fn = ctx_->fn();
  // Recycle the batches the timeline has passed.
  if (in_flight_ >= kRecycleAt) {
    uint64_t done = signaled();
    while (in_flight_ > 0 && ring_[first_]->last_value <= done) {
      recycle(*ring_[first_]);
      first_ = (first_ + 1) % kRing;
      --in_flight_;
    }
  }
  if (in_flight_ == kMaxBatchesInFlight) {
    // A full queue: wait (uninterruptibly: the engine holds the turn and a value is being handed over) for
    // the oldest batch, which only waits for committed work and so completes.
    Batch &oldest = *ring_[first_];
    VkSemaphore sem = timeline_->semaphore();
    VkSemaphoreWaitInfo wi{};
    wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem;
    wi.pValues = &oldest.last_value;
    for (;;) {
      VkResult r = fn.vkWaitSemaphores(ctx_->device(), &wi, kBlockingSliceNs);
      if (r == VK_SUCCESS) break;
      if (r != VK_TIMEOUT) return lose(r, "vkWaitSemaphores (full queue) failed");
      if (ctx_->lost()) return lose(VK_ERROR_DEVICE_LOST, "its VkDevice was lost (seen by another rig device)");
    }
    raise_to(signaled_, oldest.last_value);
    recycle(oldest);
    first_ = (first_ + 1) % kRing;
    --in_flight_;
  }
  auto &slot = ring_[(first_ + in_flight_) % kRing];
  if (!slot) {
    auto b = std::make_unique<Batch>();
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkResult r = fn.vkAllocateCommandBuffers(ctx_->device(), &ai, &b->commands);
    if (r != VK_SUCCESS) return lose(r, "vkAllocateCommandBuffers failed");
    slot = std::move(b);
  }
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = fn.vkBeginCommandBuffer(slot->commands, &bi);  // implicitly resets it (pool allows it)
  if (r != VK_SUCCESS) return lose(r, "vkBeginCommandBuffer failed");
  slot->recording = true;
  open_ = slot.get();
  *out = open_;
  return RIG_OK;
}

rig_status VulkanDevice::check_work(const Work &work) const {
  const VkPhysicalDeviceLimits &lim = ctx_->limits();
  for (const Part &part : work.parts) {
    if (part.kind != RIG_PART_LAUNCH) continue;
    for (uint32_t slot : part.slots) {
      if (slot >= work.slots.size() || !work.slots[slot].memory)
        return fail(RIG_INVALID_ARGUMENT, "Vulkan: launch slot %u is not bound", slot);
      const Binding &b = work.slots[slot];
      if (b.length > lim.maxStorageBufferRange)
        return fail(RIG_INVALID_ARGUMENT, "Vulkan: launch slot %u is %zu bytes; %s binds at most %u", slot, b.length,
                    info_.name.c_str(), lim.maxStorageBufferRange);
    }
  }
  return RIG_OK;
}

rig_status VulkanDevice::hand_over(const Work &work, uint64_t value, std::span<const QueueWait> waits) {
  // The producers' exact signal values, asked before taking our own lock: a producer's lock is never
  // taken while ours is held, so two devices waiting on each other from two threads cannot deadlock.
  std::array<uint64_t, 16> covering_small;
  std::vector<uint64_t> covering_big;  // only with more than 16 producers (never in practice)
  uint64_t *covering = covering_small.data();
  if (waits.size() > covering_small.size()) {
    covering_big.resize(waits.size());
    covering = covering_big.data();
  }
  for (size_t i = 0; i < waits.size(); ++i) {
    auto *p = dynamic_cast<VulkanDevice *>(waits[i].producer);
    if (!p) continue;  // refused below
    // The engine commits a producer before it waits on it; should a value still be held, commit it here
    // (the producer's own lock makes this safe without its turn), since a queue must never wait on held work.
    if (p->committed_.load(std::memory_order_acquire) < waits[i].value) (void)p->commit();
    covering[i] = p->signal_covering(waits[i].value);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (lost_.load(std::memory_order_acquire)) return lost_status();
  if (ctx_->lost()) return lose(VK_ERROR_DEVICE_LOST, "its VkDevice was lost (seen by another rig device)");
  // Bindings the device cannot take never get here: the engine refuses such a run at rig_submit through
  // check_work, computed when its buffers were set. What is left to refuse is refused before recording.
  for (const QueueWait &w : waits)
    if (!w.producer || !can_wait_in_queue(*w.producer))
      return fail(RIG_INVALID_ARGUMENT, "Vulkan: %s cannot wait in its queue for %s", info_.name.c_str(),
                  w.producer ? w.producer->info().name.c_str() : "(null)");

  Batch *b = nullptr;
  if (rig_status s = open_batch(&b); s != RIG_OK) return s;
  for (size_t w = 0; w < waits.size(); ++w) {
    const auto &t = static_cast<const VulkanDevice *>(waits[w].producer)->timeline();
    size_t i = 0;
    while (i < b->wait_timelines.size() && b->wait_timelines[i] != t) ++i;
    if (i == b->wait_timelines.size()) {
      b->wait_timelines.push_back(t);
      b->wait_values.push_back(covering[w]);
    } else if (b->wait_values[i] < covering[w]) {
      b->wait_values[i] = covering[w];
    }
  }
  for (const Part &part : work.parts)
    if (rig_status s = record(*b, part, work); s != RIG_OK) return s;
  b->last_value = value;
  handed_.store(value, std::memory_order_relaxed);
  if (value - committed_.load(std::memory_order_relaxed) >= kCommitEvery) return commit_locked();
  return RIG_OK;
}

// ---- recording -----------------------------------------------------------------------------------------

void VulkanDevice::barrier(VkCommandBuffer commands, bool to_host) const {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = to_host ? VK_ACCESS_HOST_READ_BIT
                             : VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                                   VK_ACCESS_SHADER_WRITE_BIT;
  ctx_->fn().vkCmdPipelineBarrier(commands, kWorkStages, to_host ? VkPipelineStageFlags{VK_PIPELINE_STAGE_HOST_BIT} : kWorkStages, 0, 1,
                                  &mb, 0, nullptr, 0, nullptr);
}

rig_status VulkanDevice::record(Batch &batch, const Part &part, const Work &work) {
  // A full barrier before every part: parts run in order (and the first one after all earlier work on this
  // queue, which is rule 1 across batches).
  barrier(batch.commands, false);
  switch (part.kind) {
    case RIG_PART_COPY:
      batch.writes_host_visible |= work.slots[part.dst_slot].memory->host != nullptr;
      return record_copy(batch, part, work);
    case RIG_PART_FILL:
      batch.writes_host_visible |= work.slots[part.dst_slot].memory->host != nullptr;
      return record_fill(batch, part, work);
    case RIG_PART_LAUNCH:
      for (uint32_t slot : part.slots)
        if (work.slots[slot].access & RIG_ACCESS_WRITE)
          batch.writes_host_visible |= work.slots[slot].memory->host != nullptr;
      return record_launch(batch, part, work);
    default:
      return lose(VK_ERROR_UNKNOWN, "a part the device cannot run reached hand_over");
  }
}

rig_status VulkanDevice::record_copy(Batch &batch, const Part &part, const Work &work) {
  const Binding &s = work.slots[part.src_slot];
  const Binding &d = work.slots[part.dst_slot];
  size_t length = part.length == RIG_WHOLE ? s.length - part.src_offset : part.length;
  if (length == 0) return RIG_OK;
  VkBuffer sb = buffer_of(*s.memory), db = buffer_of(*d.memory);
  VkDeviceSize so = s.offset + part.src_offset, dof = d.offset + part.dst_offset;
  const DeviceFunctions &fn = ctx_->fn();
  if (sb == db && so < dof + length && dof < so + length) {
    if (so == dof) return RIG_OK;
    // Overlapping ranges of one buffer (two views of one allocation): vkCmdCopyBuffer forbids it, so copy
    // through a scratch buffer freed when the batch is reused, which gives memmove's result.
    Memory scratch;
    if (rig_status st = make_buffer(*ctx_, length, BufferKind::device, &scratch); st != RIG_OK)
      return lose(VK_ERROR_OUT_OF_DEVICE_MEMORY, "no memory for an overlapping copy's scratch buffer");
    batch.scratch.push_back(scratch);
    VkBufferCopy in{so, 0, length}, back{0, dof, length};
    fn.vkCmdCopyBuffer(batch.commands, sb, buffer_of(scratch), 1, &in);
    barrier(batch.commands, false);
    fn.vkCmdCopyBuffer(batch.commands, buffer_of(scratch), db, 1, &back);
    return RIG_OK;
  }
  VkBufferCopy region{so, dof, length};
  fn.vkCmdCopyBuffer(batch.commands, sb, db, 1, &region);
  return RIG_OK;
}

rig_status VulkanDevice::record_fill(Batch &batch, const Part &part, const Work &work) {
  const Binding &d = work.slots[part.dst_slot];
  size_t length = part.length == RIG_WHOLE ? d.length - part.dst_offset : part.length;
  if (length == 0) return RIG_OK;
  VkBuffer db = buffer_of(*d.memory);
  VkDeviceSize at = d.offset + part.dst_offset;
  const DeviceFunctions &fn = ctx_->fn();
  // vkCmdFillBuffer needs a 4-byte aligned offset and size: fill the aligned middle with it and copy the
  // unaligned head and tail (at most 3 bytes each) from the pattern of `byte`.
  VkDeviceSize head = std::min<VkDeviceSize>((4 - at % 4) % 4, length);
  VkDeviceSize middle = (length - head) & ~static_cast<VkDeviceSize>(3);
  VkDeviceSize tail = length - head - middle;
  VkDeviceSize pattern = 4 * static_cast<VkDeviceSize>(part.byte);
  if (head) {
    VkBufferCopy r{pattern, at, head};
    fn.vkCmdCopyBuffer(batch.commands, buffer_of(patterns_), db, 1, &r);
  }
  if (middle) fn.vkCmdFillBuffer(batch.commands, db, at + head, middle, 0x01010101u * part.byte);
  if (tail) {
    VkBufferCopy r{pattern, at + head + middle, tail};
    fn.vkCmdCopyBuffer(batch.commands, buffer_of(patterns_), db, 1, &r);
  }
  return RIG_OK;
}

rig_status VulkanDevice::descriptor_set(Batch &batch, const Layout &layout, uint32_t bindings, VkDescriptorSet *out) {
  const DeviceFunctions &fn = ctx_->fn();
  for (;;) {
    if (batch.pool_cursor == batch.pools.size()) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kPoolDescriptors};
      VkDescriptorPoolCreateInfo pi{};
      pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      pi.maxSets = kPoolSets;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      VkResult r = fn.vkCreateDescriptorPool(ctx_->device(), &pi, nullptr, &pool);
      if (r != VK_SUCCESS) return lose(r, "vkCreateDescriptorPool failed");
      batch.pools.push_back(pool);
    }
    VkDescriptorSetAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorPool = batch.pools[batch.pool_cursor];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout.set;
    VkResult r = fn.vkAllocateDescriptorSets(ctx_->device(), &ai, out);
    if (r == VK_SUCCESS) return RIG_OK;
    if ((r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) || bindings > kPoolDescriptors)
      return lose(r, "vkAllocateDescriptorSets failed");
    ++batch.pool_cursor;  // this pool is full: the next one (made above if need be)
  }
}

rig_status VulkanDevice::record_launch(Batch &batch, const Part &part, const Work &work) {
  auto *module = dynamic_cast<Module *>(part.module);
  Entry *entry = module ? module->entry(part.function) : nullptr;
  if (!entry) return lose(VK_ERROR_UNKNOWN, "a launch of a function that is not of a Vulkan module");
  const uint32_t n = static_cast<uint32_t>(part.slots.size());
  uint32_t block[3] = {part.block[0] ? part.block[0] : 1, part.block[1] ? part.block[1] : 1,
                       part.block[2] ? part.block[2] : 1};
  std::shared_ptr<const Pipeline> pipeline;
  if (rig_status s = entry->pipeline(n, block, &pipeline); s != RIG_OK)
    return lose(VK_ERROR_UNKNOWN, "a launch's pipeline could not be made");
  const DeviceFunctions &fn = ctx_->fn();
  const Layout &layout = pipeline->layout();
  // Slots that start off the device's storage-buffer alignment (views at odd offsets) are copied into
  // scratch buffers for the launch, and copied back after it where the launch may write them.
  const VkDeviceSize align = ctx_->limits().minStorageBufferOffsetAlignment;
  std::array<VkBuffer, Context::kMaxBindings> staged{};
  bool any_staged = false;
  for (uint32_t i = 0; i < n; ++i) {
    const Binding &b = work.slots[part.slots[i]];
    if (b.length == 0 || b.offset % align == 0) continue;
    Memory scratch;
    if (make_buffer(*ctx_, b.length, BufferKind::device, &scratch) != RIG_OK)
      return lose(VK_ERROR_OUT_OF_DEVICE_MEMORY, "no memory for a scratch copy of an unaligned launch slot");
    batch.scratch.push_back(scratch);
    staged[i] = buffer_of(scratch);
    VkBufferCopy in{b.offset, 0, b.length};
    fn.vkCmdCopyBuffer(batch.commands, buffer_of(*b.memory), staged[i], 1, &in);
    any_staged = true;
  }
  if (any_staged) barrier(batch.commands, false);
  if (n > 0) {
    std::array<VkDescriptorBufferInfo, Context::kMaxBindings> infos{};
    for (uint32_t i = 0; i < n; ++i) {
      const Binding &b = work.slots[part.slots[i]];
      infos[i].buffer = buffer_of(*b.memory);
      if (staged[i]) {
        infos[i].buffer = staged[i];
        infos[i].offset = 0;
        infos[i].range = b.length;
      } else if (b.length > 0) {
        infos[i].offset = b.offset;
        infos[i].range = b.length;
      } else {
        infos[i].offset = 0;  // an empty slot: a range cannot be empty (module.h says the shader must not touch it)
        infos[i].range = 4;
      }
    }
    VkWriteDescriptorSet w{};
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstBinding = 0;
    w.descriptorCount = n;  // consecutive bindings 0..n-1, all storage buffers of one descriptor each
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = infos.data();
    if (ctx_->push_descriptors()) {
      fn.vkCmdPushDescriptorSetKHR(batch.commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout.pipeline, 0, 1, &w);
    } else {
      VkDescriptorSet set = VK_NULL_HANDLE;
      if (rig_status s = descriptor_set(batch, layout, n, &set); s != RIG_OK) return s;
      w.dstSet = set;
      fn.vkUpdateDescriptorSets(ctx_->device(), 1, &w, 0, nullptr);
      fn.vkCmdBindDescriptorSets(batch.commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout.pipeline, 0, 1, &set, 0,
                                 nullptr);
    }
  }
  fn.vkCmdBindPipeline(batch.commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline->handle());
  if (uint32_t push = ctx_->push_bytes()) {
    // The whole range every time, zero-padded: a shader's push block then never reads unset bytes.
    alignas(16) std::array<std::byte, 4096> bytes;
    size_t given = std::min<size_t>(work.scalars.size(), push);
    if (given) std::memcpy(bytes.data(), work.scalars.data(), given);
    std::memset(bytes.data() + given, 0, push - given);
    fn.vkCmdPushConstants(batch.commands, layout.pipeline, VK_SHADER_STAGE_COMPUTE_BIT, 0, push, bytes.data());
  }
  fn.vkCmdDispatch(batch.commands, part.grid[0], part.grid[1], part.grid[2]);
  batch.pipelines.push_back(std::move(pipeline));
  if (any_staged) {
    barrier(batch.commands, false);
    for (uint32_t i = 0; i < n; ++i) {
      const Binding &b = work.slots[part.slots[i]];
      if (!staged[i] || !(b.access & RIG_ACCESS_WRITE)) continue;
      VkBufferCopy back{0, b.offset, b.length};
      fn.vkCmdCopyBuffer(batch.commands, staged[i], buffer_of(*b.memory), 1, &back);
    }
  }
  return RIG_OK;
}

}  // namespace rig::vulkan
