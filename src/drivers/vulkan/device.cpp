// A Vulkan device's life: opening (its timeline semaphore, command pool and ring of batches), closing, loss,
// and its modules. The batches and commits are in batches.cpp, recording in recording.cpp and descriptors.cpp,
// memory in device_memory.cpp, points as descriptors in semaphore_fd.cpp.
#include "drivers/vulkan/device.h"

#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "drivers/common/parts.h"
#include "drivers/vulkan/memory.h"

namespace rig::vulkan {

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
  // Exportable where the driver can (rig_point_export_semaphore_fd): a property of the semaphore only,
  // nothing on the submit path changes.
  VkExportSemaphoreCreateInfo ei{};
  ei.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
  ei.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  if (ctx_->semaphore_fd()) ti.pNext = &ei;
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
    if (open_ && !lost()) (void)commit_locked();
  }
  uint64_t last = committed_.load(std::memory_order_acquire);
  if (last > 0 && !lost()) {
    // Objects of submitted batches may not be destroyed before the batches complete.
    (void)wait_blocking(last);
  }
  sweep_sync_exports(true);
  for (auto &b : ring_) {
    if (!b) continue;
    recycle(*b);
    for (VkDescriptorPool p : b->pools) fn.vkDestroyDescriptorPool(ctx_->device(), p, nullptr);
  }
  ring_.clear();
  if (pool_) fn.vkDestroyCommandPool(ctx_->device(), pool_, nullptr);  // frees the batches' command buffers
  destroy_buffer(*ctx_, patterns_);
  for (const auto &[handle, m] : imports_) destroy_buffer(*ctx_, m);
}

// ---- loss ----------------------------------------------------------------------------------------------

// The engine's Device owns the loss and its reason (it copies the text and keeps the first report); this
// driver keeps no flag of its own and asks lost()/lost_reason(). The Context's flag is another thing: the
// VkDevice's loss, shared by every rig device on it (each reports its own loss when it sees it).
rig_status VulkanDevice::lose(VkResult result, const char *why) {
  if (result == VK_ERROR_DEVICE_LOST) ctx_->set_lost();
  char text[320];
  std::snprintf(text, sizeof text, "%s: %s (%s)", info_.name.c_str(), why, result_name(result));
  if (!lost()) report_loss(text);
  const char *reason = lost_reason();
  return fail(RIG_LOST, "Vulkan: %s is lost: %s", info_.name.c_str(), reason ? reason : text);
}

rig_status VulkanDevice::lost_status() const {
  const char *reason = lost_reason();
  return fail(RIG_LOST, "Vulkan: %s is lost: %s", info_.name.c_str(), reason ? reason : "lost");
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
  bool launch = false;
  if (rig_status s = common::check_gpu_part(part, info_, &launch); s != RIG_OK || !launch) return s;
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

}  // namespace rig::vulkan
