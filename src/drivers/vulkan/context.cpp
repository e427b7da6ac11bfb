#include "drivers/vulkan/context.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "core/error.h"

namespace rig::vulkan {

namespace {

// How many queues a VkDevice gets: RIG_VULKAN_QUEUES (1 to 64; default 2), at most what the family offers.
// The rig devices opened on the GPU take them in turn, so two get queues of their own and a third shares the
// first's. Why not every queue the family offers: a family may offer 8, and a chain alternating between
// two queues of a VkDevice made with 8 ran slower an operation than the same chain on a VkDevice made with
// 2, the driver's calls and the GPU's turnaround both slower (bench/README.md, "Why: Vulkan").
// A program that opens more devices on one GPU and wants each on its own queue asks for more.
rig_status queues_to_create(uint32_t offered, uint32_t *out) {
  constexpr uint32_t kDefault = 2, kMost = 64;
  uint32_t want = kDefault;
  if (const char *v = std::getenv("RIG_VULKAN_QUEUES"); v && *v) {
    char *end = nullptr;
    errno = 0;
    unsigned long n = std::strtoul(v, &end, 10);
    if (errno || *end || n < 1 || n > kMost || !std::isdigit(static_cast<unsigned char>(*v)))
      return fail(RIG_INVALID_ARGUMENT, "Vulkan: RIG_VULKAN_QUEUES=%s is not a count of queues from 1 to %u", v, kMost);
    want = static_cast<uint32_t>(n);
  }
  *out = std::min(want, offered);
  return RIG_OK;
}

}  // namespace

rig_status Context::make(Instance &instance, const PhysicalDevice &physical, std::shared_ptr<Context> *out) {
  uint32_t queue_count = 0;
  if (rig_status s = queues_to_create(physical.queue_count, &queue_count); s != RIG_OK) return s;
  std::shared_ptr<Context> ctx(new Context(instance, physical));
  const Library &lib = instance.lib();

  std::vector<float> priorities(queue_count, 1.0f);
  VkDeviceQueueCreateInfo queue_info{};
  queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue_info.queueFamilyIndex = physical.queue_family;
  queue_info.queueCount = queue_count;
  queue_info.pQueuePriorities = priorities.data();

  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  f12.timelineSemaphore = VK_TRUE;

  // Host import wherever offered, unless turned off: borrows check at the borrow that the memory is not a
  // file mapping, the harm the mapped-registration spec names (host_pages.h).
  std::vector<const char *> extensions;
  ctx->host_import_ = instance.host_import_wanted() && physical.has_host_import;
  if (ctx->host_import_) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  // Push descriptors: a launch writes its slots straight into the command buffer, with no descriptor set
  // to allocate and update per launch (the cost a hand-written program avoids by binding sets made once).
  ctx->push_descriptors_ = physical.has_push_descriptor && physical.max_push_descriptors >= kMaxBindings &&
                           !env_flag("RIG_VULKAN_NO_PUSH_DESCRIPTORS");
  if (ctx->push_descriptors_) extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  // Memory as opaque fds (rig_buffer_export_fd): device buffers are then made exportable.
  ctx->memory_fd_ = physical.has_memory_fd;
  if (ctx->memory_fd_) extensions.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  // Points as semaphore fds (rig_point_export_semaphore_fd): timelines are then made exportable, which is
  // opt-in (RIG_VULKAN_SEMAPHORE_FD=1) until a report is explained: on NVIDIA's driver the validation layer
  // said buffers were destroyed while a command buffer still used them (VUID-vkDestroyBuffer-buffer-00922)
  // in both import tests, which passed their checks of the bytes. The chain costs the same either way
  // (bench/README.md, "Why: Vulkan"). Sync files make a binary semaphore per export and need no exportable timeline.
  ctx->semaphore_fd_ = physical.has_semaphore_fd && env_flag("RIG_VULKAN_SEMAPHORE_FD");
  ctx->sync_fd_ = physical.has_sync_fd;
  const bool semaphore_fds = ctx->semaphore_fd_ || ctx->sync_fd_;
  if (semaphore_fds) extensions.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);

  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &f12;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult r = lib.vkCreateDevice(physical.handle, &info, nullptr, &ctx->device_);
  if (r != VK_SUCCESS) {
    ctx->device_ = VK_NULL_HANDLE;
    return fail(r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? RIG_OUT_OF_MEMORY
                                                                                       : RIG_NOT_FOUND,
                "Vulkan: vkCreateDevice on %s (%s) failed: %s", physical.name.c_str(),
                physical.properties.deviceName, result_name(r));
  }
  if (rig_status s = load_device_functions(lib, ctx->device_, ctx->host_import_, ctx->push_descriptors_,
                                            ctx->memory_fd_, semaphore_fds, &ctx->fn_);
      s != RIG_OK)
    return s;

  for (uint32_t i = 0; i < queue_count; ++i) {
    auto q = std::make_unique<Queue>();
    ctx->fn_.vkGetDeviceQueue(ctx->device_, physical.queue_family, i, &q->handle);
    ctx->queues_.push_back(std::move(q));
  }

  const VkPhysicalDeviceLimits &lim = physical.properties.limits;
  ctx->push_bytes_ = std::min<uint32_t>(lim.maxPushConstantsSize, 4096) & ~3u;
  ctx->max_bindings_ = std::min({kMaxBindings, lim.maxPerStageDescriptorStorageBuffers,
                                 lim.maxDescriptorSetStorageBuffers, lim.maxPerStageResources});
  *out = std::move(ctx);
  return RIG_OK;
}

Context::~Context() {
  if (device_ == VK_NULL_HANDLE) return;
  for (Layout &l : layouts_) {
    if (l.pipeline) fn_.vkDestroyPipelineLayout(device_, l.pipeline, nullptr);
    if (l.set) fn_.vkDestroyDescriptorSetLayout(device_, l.set, nullptr);
  }
  // Every rig device on this context waited for its work before it went (device.cpp), and every object
  // holding the context (pipelines, timelines) is gone, so the device is idle here.
  fn_.vkDestroyDevice(device_, nullptr);
}

Queue &Context::next_queue() {
  // relaxed: only spreads devices over queues; any interleaving is correct.
  uint32_t i = next_queue_.fetch_add(1, std::memory_order_relaxed);
  return *queues_[i % queues_.size()];
}

rig_status Context::layout(uint32_t bindings, const Layout **out) {
  if (bindings > max_bindings_)
    return fail(RIG_UNSUPPORTED, "Vulkan: a launch binds %u slots; %s allows at most %u", bindings,
                physical_.name.c_str(), max_bindings_);
  std::lock_guard<std::mutex> lock(layouts_mutex_);
  Layout &l = layouts_[bindings];
  if (l.pipeline) {
    *out = &l;
    return RIG_OK;
  }
  std::array<VkDescriptorSetLayoutBinding, kMaxBindings> b{};
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo si{};
  si.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  si.flags = push_descriptors_ ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
  si.bindingCount = bindings;
  si.pBindings = b.data();
  VkDescriptorSetLayout set = VK_NULL_HANDLE;
  VkResult r = fn_.vkCreateDescriptorSetLayout(device_, &si, nullptr, &set);
  if (r != VK_SUCCESS) return fail(RIG_DRIVER, "Vulkan: vkCreateDescriptorSetLayout failed: %s", result_name(r));

  VkPushConstantRange range{};
  range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  range.offset = 0;
  range.size = push_bytes_;
  VkPipelineLayoutCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pi.setLayoutCount = 1;
  pi.pSetLayouts = &set;
  pi.pushConstantRangeCount = push_bytes_ ? 1 : 0;
  pi.pPushConstantRanges = &range;
  VkPipelineLayout pipeline = VK_NULL_HANDLE;
  r = fn_.vkCreatePipelineLayout(device_, &pi, nullptr, &pipeline);
  if (r != VK_SUCCESS) {
    fn_.vkDestroyDescriptorSetLayout(device_, set, nullptr);
    return fail(RIG_DRIVER, "Vulkan: vkCreatePipelineLayout failed: %s", result_name(r));
  }
  l.set = set;
  l.pipeline = pipeline;
  *out = &l;
  return RIG_OK;
}

int Context::memory_type(uint32_t bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                         VkMemoryPropertyFlags avoided) const {
  const VkPhysicalDeviceMemoryProperties &m = physical_.memory;
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = m.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    // Protected and lazily allocated memory cannot back rig's buffers.
    if (f & (VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT)) continue;
    int score = ((f & preferred) == preferred ? 2 : 0) + ((f & avoided) == 0 ? 1 : 0);
    if (score > best_score) {
      best = static_cast<int>(i);
      best_score = score;
    }
  }
  return best;
}

void Context::set_lost() { lost_.store(true, std::memory_order_release); }

}  // namespace rig::vulkan
