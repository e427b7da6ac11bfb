/* A stand-in for libvulkan.so.1 that loses the device on demand, for test_loss, and counts calls, for
 * test_calls (loaded through RIG_VULKAN_LIBRARY). It opens the real loader and forwards every entry point,
 * except that once "lost" vkQueueSubmit, vkWaitSemaphores, vkGetSemaphoreCounterValue and vkWaitForFences
 * answer VK_ERROR_DEVICE_LOST, as a driver does after a GPU fault. The loss starts at the Nth vkQueueSubmit
 * (RIG_VKSHIM_LOSE_AT_SUBMIT=N, which is lost itself) or when the test calls rig_vkshim_lose(). */
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <stdatomic.h>

#include "shim_common.h"

static PFN_vkGetDeviceProcAddr real_gdpa;
static PFN_vkQueueSubmit real_submit;
static PFN_vkWaitSemaphores real_wait;
static PFN_vkGetSemaphoreCounterValue real_counter;
static PFN_vkWaitForFences real_fences;
static PFN_vkBeginCommandBuffer real_begin;
static atomic_int lost;
static atomic_long submits;
static atomic_long counter_reads; /* vkGetSemaphoreCounterValue calls */
static atomic_long begins;        /* vkBeginCommandBuffer calls */

__attribute__((visibility("default"))) void rig_vkshim_lose(void) { atomic_store(&lost, 1); }
/* Ends the loss for devices made afterwards (rig makes a new VkDevice once the lost one's devices are gone). */
__attribute__((visibility("default"))) void rig_vkshim_reset(void) { atomic_store(&lost, 0); }
__attribute__((visibility("default"))) long rig_vkshim_submits(void) { return atomic_load(&submits); }
__attribute__((visibility("default"))) long rig_vkshim_counter_reads(void) { return atomic_load(&counter_reads); }
__attribute__((visibility("default"))) long rig_vkshim_begins(void) { return atomic_load(&begins); }

static VKAPI_ATTR VkResult VKAPI_CALL shim_submit(VkQueue q, uint32_t n, const VkSubmitInfo *s, VkFence f) {
  long count = atomic_fetch_add(&submits, 1) + 1;
  const char *at = getenv("RIG_VKSHIM_LOSE_AT_SUBMIT");
  if (at && *at && count >= atol(at)) atomic_store(&lost, 1);
  if (atomic_load(&lost)) return VK_ERROR_DEVICE_LOST;
  return real_submit(q, n, s, f);
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_wait(VkDevice d, const VkSemaphoreWaitInfo *w, uint64_t timeout) {
  if (atomic_load(&lost)) return VK_ERROR_DEVICE_LOST;
  VkResult r = real_wait(d, w, timeout);
  return atomic_load(&lost) ? VK_ERROR_DEVICE_LOST : r;
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_counter(VkDevice d, VkSemaphore s, uint64_t *v) {
  atomic_fetch_add(&counter_reads, 1);
  if (atomic_load(&lost)) return VK_ERROR_DEVICE_LOST;
  return real_counter(d, s, v);
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_begin(VkCommandBuffer c, const VkCommandBufferBeginInfo *info) {
  atomic_fetch_add(&begins, 1);
  return real_begin(c, info);
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_fences(VkDevice d, uint32_t n, const VkFence *f, VkBool32 all,
                                                   uint64_t timeout) {
  if (atomic_load(&lost)) return VK_ERROR_DEVICE_LOST;
  return real_fences(d, n, f, all, timeout);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL shim_gdpa(VkDevice d, const char *name) {
  PFN_vkVoidFunction f = real_gdpa(d, name);
  if (!f) return f;
  SHIM_SWAP(vkQueueSubmit, real_submit, shim_submit);
  SHIM_SWAP(vkWaitSemaphores, real_wait, shim_wait);
  SHIM_SWAP(vkGetSemaphoreCounterValue, real_counter, shim_counter);
  SHIM_SWAP(vkWaitForFences, real_fences, shim_fences);
  SHIM_SWAP(vkBeginCommandBuffer, real_begin, shim_begin);
  return f;
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vkGetInstanceProcAddr(VkInstance instance, const char *name) {
  PFN_vkVoidFunction f = shim_instance_entry(instance, name, (PFN_vkVoidFunction)vkGetInstanceProcAddr);
  if (!f) return f;
  SHIM_SWAP(vkGetDeviceProcAddr, real_gdpa, shim_gdpa);
  return f;
}
