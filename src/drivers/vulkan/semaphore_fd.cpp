// A Vulkan device's points as semaphore descriptors (SemaphoreFds, core/semaphore_fd.h;
// VK_KHR_external_semaphore_fd): the device's own timeline semaphore leaves as an opaque fd (it is made
// exportable where the driver can, device.cpp), a point leaves as a sync file signaled by an empty submit
// that waits for it, and imported semaphores become in-queue waits of the open batch, which keeps them
// alive until it is recycled (so the importer owns what it imported, and nothing is added to commit()).
#include "drivers/vulkan/device.h"

#include "core/error.h"

namespace rig::vulkan {

namespace {

constexpr uint64_t kSyncSweepSliceNs = 100'000'000;  // closing waits for sync exports in slices that look for loss

}  // namespace

rig_status VulkanDevice::export_semaphore_fd(uint64_t value, int *fd, uint64_t *wait_value) {
  if (lost()) return lost_status();
  VkSemaphoreGetFdInfoKHR gi{};
  gi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
  gi.semaphore = timeline_->semaphore();
  gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkResult r = ctx_->fn().vkGetSemaphoreFdKHR(ctx_->device(), &gi, fd);
  if (r != VK_SUCCESS)
    return fail(r == VK_ERROR_OUT_OF_HOST_MEMORY ? RIG_OUT_OF_MEMORY : RIG_DRIVER,
                "Vulkan: vkGetSemaphoreFdKHR (timeline of %s) failed: %s", info_.name.c_str(), result_name(r));
  // The exact value a batch end signals: importers under validation layers that track only exact values
  // (see signal_covering) then see no false timeout.
  *wait_value = signal_covering(value);
  return RIG_OK;
}

rig_status VulkanDevice::export_sync_fd(uint64_t value, int *fd) {
  if (lost()) return lost_status();
  const DeviceFunctions &fn = ctx_->fn();
  sweep_sync_exports(false);
  VkExportSemaphoreCreateInfo ei{};
  ei.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
  ei.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT;
  VkSemaphoreCreateInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  si.pNext = &ei;
  SyncExport e;
  VkResult r = fn.vkCreateSemaphore(ctx_->device(), &si, nullptr, &e.semaphore);
  if (r != VK_SUCCESS) return fail(RIG_DRIVER, "Vulkan: vkCreateSemaphore (sync file) failed: %s", result_name(r));
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  r = fn.vkCreateFence(ctx_->device(), &fi, nullptr, &e.fence);
  if (r != VK_SUCCESS) {
    fn.vkDestroySemaphore(ctx_->device(), e.semaphore, nullptr);
    return fail(RIG_DRIVER, "Vulkan: vkCreateFence (sync file) failed: %s", result_name(r));
  }
  // An empty submit that waits for the value on our timeline and signals the binary semaphore: the sync
  // file is that signal. Its fence says when the semaphore may be destroyed (never before the submit
  // completes, Vulkan's rule), which a later export or closing checks.
  const uint64_t covering = signal_covering(value);
  VkSemaphore timeline = timeline_->semaphore();
  const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  const uint64_t ignored = 0;  // the binary semaphore's value
  VkTimelineSemaphoreSubmitInfo ti{};
  ti.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  ti.waitSemaphoreValueCount = 1;
  ti.pWaitSemaphoreValues = &covering;
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &ignored;
  VkSubmitInfo sub{};
  sub.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  sub.pNext = &ti;
  sub.waitSemaphoreCount = 1;
  sub.pWaitSemaphores = &timeline;
  sub.pWaitDstStageMask = &stage;
  sub.signalSemaphoreCount = 1;
  sub.pSignalSemaphores = &e.semaphore;
  {
    std::lock_guard<std::mutex> lock(queue_.submit);
    r = fn.vkQueueSubmit(queue_.handle, 1, &sub, e.fence);
  }
  if (r == VK_SUCCESS) {
    VkSemaphoreGetFdInfoKHR gi{};
    gi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
    gi.semaphore = e.semaphore;
    gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT;
    r = fn.vkGetSemaphoreFdKHR(ctx_->device(), &gi, fd);
    std::lock_guard<std::mutex> lock(sync_exports_mutex_);
    sync_exports_.push_back(e);  // submitted: destroyed once its fence is signaled
    if (r == VK_SUCCESS) return RIG_OK;
    return fail(RIG_DRIVER, "Vulkan: vkGetSemaphoreFdKHR (sync file of %s) failed: %s", info_.name.c_str(),
                result_name(r));
  }
  fn.vkDestroyFence(ctx_->device(), e.fence, nullptr);
  fn.vkDestroySemaphore(ctx_->device(), e.semaphore, nullptr);
  return lose(r, "vkQueueSubmit (sync file) failed");
}

void VulkanDevice::sweep_sync_exports(bool closing) {
  const DeviceFunctions &fn = ctx_->fn();
  std::lock_guard<std::mutex> lock(sync_exports_mutex_);
  std::erase_if(sync_exports_, [&](const SyncExport &e) {
    VkResult r = fn.vkWaitForFences(ctx_->device(), 1, &e.fence, VK_TRUE, 0);
    // Closing waits for each submit (it waits only for committed values), unless the VkDevice is lost.
    while (closing && r == VK_TIMEOUT && !ctx_->lost())
      r = fn.vkWaitForFences(ctx_->device(), 1, &e.fence, VK_TRUE, kSyncSweepSliceNs);
    if (r == VK_TIMEOUT && !closing) return false;
    fn.vkDestroyFence(ctx_->device(), e.fence, nullptr);
    fn.vkDestroySemaphore(ctx_->device(), e.semaphore, nullptr);
    return true;
  });
}

rig_status VulkanDevice::import_semaphore(int fd, bool sync, std::shared_ptr<Timeline> *out) {
  const DeviceFunctions &fn = ctx_->fn();
  VkSemaphoreTypeCreateInfo ti{};
  ti.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  ti.semaphoreType = sync ? VK_SEMAPHORE_TYPE_BINARY : VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  si.pNext = &ti;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  VkResult r = fn.vkCreateSemaphore(ctx_->device(), &si, nullptr, &semaphore);
  if (r != VK_SUCCESS) return fail(RIG_DRIVER, "Vulkan: vkCreateSemaphore (import) failed: %s", result_name(r));
  VkImportSemaphoreFdInfoKHR ii{};
  ii.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR;
  ii.semaphore = semaphore;
  // A sync file can only be imported temporarily (Vulkan's rule): the one wait consumes it.
  ii.flags = sync ? VK_SEMAPHORE_IMPORT_TEMPORARY_BIT : 0;
  ii.handleType =
      sync ? VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT : VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  ii.fd = fd;
  r = fn.vkImportSemaphoreFdKHR(ctx_->device(), &ii);
  if (r != VK_SUCCESS) {
    fn.vkDestroySemaphore(ctx_->device(), semaphore, nullptr);
    return fail(RIG_INVALID_ARGUMENT, "Vulkan: %s refused the descriptor as %s: %s", info_.name.c_str(),
                sync ? "a sync file" : "a timeline semaphore's opaque fd", result_name(r));
  }
  *out = std::make_shared<Timeline>(ctx_, semaphore);
  return RIG_OK;
}

rig_status VulkanDevice::queue_wait_imported(int fd, bool sync, uint64_t fd_value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (lost()) return lost_status();
  // The batch first: once the import succeeds the driver owns fd, so nothing may fail after it.
  Batch *b = nullptr;
  if (rig_status s = open_batch(&b); s != RIG_OK) return s;
  std::shared_ptr<Timeline> imported;
  if (rig_status s = import_semaphore(fd, sync, &imported); s != RIG_OK) return s;
  add_wait(*b, imported, fd_value);  // the batch keeps the semaphore until it is recycled
  return RIG_OK;
}

rig_status VulkanDevice::queue_wait_semaphore_fd(int fd, uint64_t fd_value) {
  return queue_wait_imported(fd, false, fd_value);
}

rig_status VulkanDevice::queue_wait_sync_fd(int fd) { return queue_wait_imported(fd, true, 0); }

}  // namespace rig::vulkan
