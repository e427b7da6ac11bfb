// A Vulkan device's timeline: values handed over into the open batch (a command buffer), batches committed
// with one signal of the timeline semaphore, recycled once reached; host waits on the semaphore.
#include "drivers/vulkan/device.h"

#include <cstring>

#include <algorithm>
#include <array>
#include <chrono>

#include "core/error.h"
#include "drivers/vulkan/memory.h"

namespace rig::vulkan {

namespace {

constexpr uint64_t kSliceNs = 1'000'000;            // interruptible waits look at interrupts every 1 ms
constexpr uint64_t kBlockingSliceNs = 100'000'000;  // uninterruptible waits look for loss every 0.1 s

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

VkResult VulkanDevice::wait_semaphore(uint64_t value, uint64_t timeout_ns) const {
  VkSemaphore sem = timeline_->semaphore();
  VkSemaphoreWaitInfo wi{};
  wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wi.semaphoreCount = 1;
  wi.pSemaphores = &sem;
  wi.pValues = &value;
  return ctx_->fn().vkWaitSemaphores(ctx_->device(), &wi, timeout_ns);
}

VkResult VulkanDevice::wait_blocking(uint64_t value) const {
  for (;;) {
    VkResult r = wait_semaphore(value, kBlockingSliceNs);
    if (r != VK_TIMEOUT || ctx_->lost()) return r;
  }
}

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
  if (lost()) return lost_status();
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
  for (;;) {
    uint64_t slice = kSliceNs;
    if (!deadline.is_forever()) {
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.at - Clock::now()).count();
      slice = left <= 0 ? 0 : std::min<uint64_t>(slice, static_cast<uint64_t>(left));
    }
    VkResult r = wait_semaphore(target, slice);
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
  // Nothing held; or a batch an import's wait opened (semaphore_fd.cpp) whose value is not handed over yet
  // (the importer holds the turn and hands it over next): it is committed with that value.
  if (!open_ || open_->last_value == 0) return RIG_OK;
  if (lost()) return lost_status();
  Batch &b = *open_;
  const DeviceFunctions &fn = ctx_->fn();
  if (rig_status s = end_own(b); s != RIG_OK) return s;

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
  si.commandBufferCount = static_cast<uint32_t>(b.sequence.size());  // none for a batch of waits alone
  si.pCommandBuffers = b.sequence.data();
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &signal;
  VkResult r;
  {
    std::lock_guard<std::mutex> lock(queue_.submit);
    r = fn.vkQueueSubmit(queue_.handle, 1, &si, VK_NULL_HANDLE);
  }
  if (r != VK_SUCCESS) return lose(r, "vkQueueSubmit failed");
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
  b.sequence.clear();
  b.replays.clear();  // a replay whose run dropped it is destroyed here, its command buffer reached
  b.last_value = 0;
  b.recording = false;
  b.own_used = false;
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
    VkResult r = wait_blocking(oldest.last_value);
    if (r == VK_TIMEOUT) return lose(VK_ERROR_DEVICE_LOST, "its VkDevice was lost (seen by another rig device)");
    if (r != VK_SUCCESS) return lose(r, "vkWaitSemaphores (full queue) failed");
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
  open_ = slot.get();
  *out = open_;
  return RIG_OK;
}

rig_status VulkanDevice::own_commands(Batch &b, VkCommandBuffer *out) {
  *out = VK_NULL_HANDLE;
  if (b.recording) {
    *out = b.commands;
    return RIG_OK;
  }
  if (b.own_used) return RIG_OK;  // ended before a replay: what follows it goes to the next batch
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = ctx_->fn().vkBeginCommandBuffer(b.commands, &bi);  // implicitly resets it (pool allows it)
  if (r != VK_SUCCESS) return lose(r, "vkBeginCommandBuffer failed");
  b.recording = true;
  b.own_used = true;
  b.sequence.push_back(b.commands);
  *out = b.commands;
  return RIG_OK;
}

rig_status VulkanDevice::end_own(Batch &b) {
  if (!b.recording) return RIG_OK;
  if (b.writes_host_visible) barrier(b.commands, true);
  b.recording = false;
  VkResult r = ctx_->fn().vkEndCommandBuffer(b.commands);
  if (r != VK_SUCCESS) return lose(r, "vkEndCommandBuffer failed");
  return RIG_OK;
}

void VulkanDevice::add_wait(Batch &b, const std::shared_ptr<Timeline> &t, uint64_t value) {
  size_t i = 0;
  while (i < b.wait_timelines.size() && b.wait_timelines[i] != t) ++i;
  if (i == b.wait_timelines.size()) {
    b.wait_timelines.push_back(t);
    b.wait_values.push_back(value);
  } else if (b.wait_values[i] < value) {
    b.wait_values[i] = value;
  }
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
  return hand_over_to_batch(&work, nullptr, value, waits);
}

rig_status VulkanDevice::hand_over_replay(const std::shared_ptr<const Replay> &replay, uint64_t value,
                                          std::span<const QueueWait> waits) {
  return hand_over_to_batch(nullptr, &replay, value, waits);
}

rig_status VulkanDevice::hand_over_to_batch(const Work *work, const std::shared_ptr<const Replay> *replay,
                                            uint64_t value, std::span<const QueueWait> waits) {
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
  if (lost()) return lost_status();
  if (ctx_->lost()) return lose(VK_ERROR_DEVICE_LOST, "its VkDevice was lost (seen by another rig device)");
  // Bindings the device cannot take never get here: the engine refuses such a run at rig_submit through
  // check_work, computed when its buffers were set. What is left to refuse is refused before recording.
  for (const QueueWait &w : waits)
    if (!w.producer || !can_wait_in_queue(*w.producer))
      return fail(RIG_INVALID_ARGUMENT, "Vulkan: %s cannot wait in its queue for %s", info_.name.c_str(),
                  w.producer ? w.producer->info().name.c_str() : "(null)");

  Batch *b = nullptr;
  if (rig_status s = open_batch(&b); s != RIG_OK) return s;
  VkCommandBuffer own = VK_NULL_HANDLE;
  if (replay) {
    if (rig_status s = end_own(*b); s != RIG_OK) return s;
  } else if (!work->parts.empty()) {  // work with no parts (an empty submit) records nothing
    if (rig_status s = own_commands(*b, &own); s != RIG_OK) return s;
    if (!own) {
      // The own command buffer ran before a replay in this batch: this work must follow the replay, so
      // the batch is submitted and the work opens the next one (a commit any driver may make early).
      if (rig_status s = commit_locked(); s != RIG_OK) return s;
      if (rig_status s = open_batch(&b); s != RIG_OK) return s;
      if (rig_status s = own_commands(*b, &own); s != RIG_OK) return s;
    }
  }
  for (size_t w = 0; w < waits.size(); ++w)
    add_wait(*b, static_cast<const VulkanDevice *>(waits[w].producer)->timeline(), covering[w]);
  if (work) {
    for (const Part &part : work->parts)
      if (rig_status s = record_part(*b, part, *work); s != RIG_OK) return s;
  } else {
    b->sequence.push_back((*replay)->batch.commands);
    // Kept once however often the batch runs it (a run submitted k times with nothing between): one
    // reference keeps it alive, and each further copy would cost two atomic counts.
    if (b->replays.empty() || b->replays.back() != *replay) b->replays.push_back(*replay);
  }
  b->last_value = value;
  handed_.store(value, std::memory_order_relaxed);
  if (value - committed_.load(std::memory_order_relaxed) >= kCommitEvery) return commit_locked();
  return RIG_OK;
}

}  // namespace rig::vulkan
