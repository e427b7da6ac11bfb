/* A stand-in for libvulkan.so.1 (loaded through RIG_VULKAN_LIBRARY) that gives a driver without
 * VK_KHR_external_semaphore_fd (lavapipe) opaque fds of timeline semaphores within one process, so that CI
 * runs rig's real import and export path (test_semaphore_fd.c) before a GPU does. It forwards every entry
 * point to the real loader (RIG_VKSHIM_REAL, default libvulkan.so.1), except:
 *  - the extension is listed for every physical device (and VK_EXT_external_memory_host is not, where
 *    RIG_TEST_HIDE_HOST_IMPORT=1: a device without host import), and timeline semaphores are said to export and
 *    import as opaque fds (sync files stay the driver's answer: no);
 *  - vkCreateDevice does not pass the extension on, vkCreateSemaphore drops VkExportSemaphoreCreateInfo;
 *  - vkGetSemaphoreFdKHR gives a memfd holding the semaphore and this process's id; vkImportSemaphoreFdKHR
 *    makes the imported semaphore an alias of that one (another process's, or a file that is no such memfd,
 *    is VK_ERROR_INVALID_EXTERNAL_HANDLE, the fd left open) and closes the fd;
 *  - vkQueueSubmit waits on the aliased semaphore where it is asked to wait on an alias.
 * lavapipe has one queue, which a wait for a value not yet submitted would hold for ever (the exporter's
 * work queues behind it), and the aliases do not cross processes: test_semaphore_fd.c knows it runs here
 * (RIG_TEST_SEMFD_FAKE=1) and imports only values submitted, in one process. */
#define _GNU_SOURCE
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim_common.h"

#define MAGIC 0x7269672d73656d66ull /* "rig-semf" */
#define MAX_ALIASES 256
#define MAX_WAITS 64

static PFN_vkGetDeviceProcAddr real_gdpa;
static PFN_vkEnumerateDeviceExtensionProperties real_enum;
static PFN_vkGetPhysicalDeviceExternalSemaphoreProperties real_props;
static PFN_vkCreateDevice real_create_device;
static PFN_vkCreateSemaphore real_create;
static PFN_vkDestroySemaphore real_destroy;
static PFN_vkQueueSubmit real_submit;

/* imported -> exported semaphore */
static struct { VkSemaphore imported, exported; } aliases[MAX_ALIASES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct payload { uint64_t magic; uint64_t pid; uint64_t semaphore; };

static VkSemaphore aliased(VkSemaphore s) {
  for (int i = 0; i < MAX_ALIASES; ++i)
    if (aliases[i].imported == s && s != VK_NULL_HANDLE) return aliases[i].exported;
  return VK_NULL_HANDLE;
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_enum(VkPhysicalDevice p, const char *layer, uint32_t *n,
                                                VkExtensionProperties *out) {
  if (layer) return real_enum(p, layer, n, out);
  /* The driver's list, less VK_EXT_external_memory_host where RIG_TEST_HIDE_HOST_IMPORT=1, plus ours. */
  uint32_t real_n = 0;
  VkResult r = real_enum(p, NULL, &real_n, NULL);
  if (r != VK_SUCCESS) return r;
  VkExtensionProperties *all = calloc(real_n + 1, sizeof *all);
  if (!all) return VK_ERROR_OUT_OF_HOST_MEMORY;
  r = real_enum(p, NULL, &real_n, all);
  if (r != VK_SUCCESS) {
    free(all);
    return r;
  }
  const char *hide = getenv("RIG_TEST_HIDE_HOST_IMPORT");
  uint32_t kept = 0;
  for (uint32_t i = 0; i < real_n; ++i)
    if (!(hide && strcmp(hide, "1") == 0 && strcmp(all[i].extensionName, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) == 0))
      all[kept++] = all[i];
  memset(&all[kept], 0, sizeof all[kept]);
  strcpy(all[kept].extensionName, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  all[kept].specVersion = 1;
  ++kept;
  if (!out) {
    *n = kept;
    free(all);
    return VK_SUCCESS;
  }
  uint32_t given = *n < kept ? *n : kept;
  memcpy(out, all, given * sizeof *all);
  free(all);
  *n = given;
  return given < kept ? VK_INCOMPLETE : VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL shim_props(VkPhysicalDevice p, const VkPhysicalDeviceExternalSemaphoreInfo *info,
                                             VkExternalSemaphoreProperties *out) {
  real_props(p, info, out);
  const VkSemaphoreTypeCreateInfo *t = info->pNext;
  if (info->handleType == VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT && t &&
      t->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO && t->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE) {
    out->exportFromImportedHandleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    out->compatibleHandleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    out->externalSemaphoreFeatures =
        VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
  }
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_create_device(VkPhysicalDevice p, const VkDeviceCreateInfo *info,
                                                         const VkAllocationCallbacks *a, VkDevice *out) {
  const char *names[64];
  VkDeviceCreateInfo mine = *info;
  mine.enabledExtensionCount = 0;
  for (uint32_t i = 0; i < info->enabledExtensionCount && i < 64; ++i)
    if (strcmp(info->ppEnabledExtensionNames[i], VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) != 0)
      names[mine.enabledExtensionCount++] = info->ppEnabledExtensionNames[i];
  mine.ppEnabledExtensionNames = names;
  return real_create_device(p, &mine, a, out);
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_create(VkDevice d, const VkSemaphoreCreateInfo *info,
                                                  const VkAllocationCallbacks *a, VkSemaphore *out) {
  /* rig's chain: the type, then (where exportable) the export info, which the driver has no handle for */
  VkSemaphoreCreateInfo mine = *info;
  VkSemaphoreTypeCreateInfo type;
  const VkSemaphoreTypeCreateInfo *t = info->pNext;
  if (t && t->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO) {
    type = *t;
    type.pNext = NULL;
    mine.pNext = &type;
  } else if (t && t->sType == VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO) {
    mine.pNext = NULL;
  }
  return real_create(d, &mine, a, out);
}

static VKAPI_ATTR void VKAPI_CALL shim_destroy(VkDevice d, VkSemaphore s, const VkAllocationCallbacks *a) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_ALIASES; ++i)
    if (aliases[i].imported == s) aliases[i].imported = aliases[i].exported = VK_NULL_HANDLE;
  pthread_mutex_unlock(&lock);
  real_destroy(d, s, a);
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_get_fd(VkDevice d, const VkSemaphoreGetFdInfoKHR *info, int *fd) {
  (void)d;
  if (info->handleType != VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT) return VK_ERROR_UNKNOWN;
  struct payload p = {MAGIC, (uint64_t)getpid(), (uint64_t)info->semaphore};
  int f = memfd_create("rig-semfd-shim", MFD_CLOEXEC);
  if (f < 0) return VK_ERROR_TOO_MANY_OBJECTS;
  if (pwrite(f, &p, sizeof p, 0) != (ssize_t)sizeof p) {
    close(f);
    return VK_ERROR_OUT_OF_HOST_MEMORY;
  }
  *fd = f;
  return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_import(VkDevice d, const VkImportSemaphoreFdInfoKHR *info) {
  (void)d;
  struct payload p;
  if (info->handleType != VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT ||
      pread(info->fd, &p, sizeof p, 0) != (ssize_t)sizeof p || p.magic != MAGIC || p.pid != (uint64_t)getpid())
    return VK_ERROR_INVALID_EXTERNAL_HANDLE;
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < MAX_ALIASES && aliases[i].imported != VK_NULL_HANDLE) ++i;
  if (i < MAX_ALIASES) {
    aliases[i].imported = info->semaphore;
    aliases[i].exported = (VkSemaphore)p.semaphore;
  }
  pthread_mutex_unlock(&lock);
  if (i == MAX_ALIASES) return VK_ERROR_TOO_MANY_OBJECTS;
  close(info->fd); /* a successful import owns it (Vulkan's rule) */
  return VK_SUCCESS;
}

static VKAPI_ATTR VkResult VKAPI_CALL shim_submit(VkQueue q, uint32_t n, const VkSubmitInfo *s, VkFence f) {
  VkSubmitInfo subs[8];
  VkTimelineSemaphoreSubmitInfo tis[8];
  VkSemaphore sems[8][MAX_WAITS];
  VkPipelineStageFlags stages[8][MAX_WAITS];
  uint64_t values[8][MAX_WAITS];
  if (n > 8) return real_submit(q, n, s, f);
  pthread_mutex_lock(&lock);
  for (uint32_t i = 0; i < n; ++i) {
    subs[i] = s[i];
    const VkTimelineSemaphoreSubmitInfo *ti = s[i].pNext;
    int timeline = ti && ti->sType == VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    if (timeline) {
      tis[i] = *ti;
      subs[i].pNext = &tis[i];
    }
    uint32_t kept = 0;
    for (uint32_t w = 0; w < s[i].waitSemaphoreCount && w < MAX_WAITS; ++w) {
      VkSemaphore sem = s[i].pWaitSemaphores[w], real = aliased(sem);
      sems[i][kept] = real != VK_NULL_HANDLE ? real : sem;
      stages[i][kept] = s[i].pWaitDstStageMask[w];
      values[i][kept] = timeline && ti->pWaitSemaphoreValues ? ti->pWaitSemaphoreValues[w] : 0;
      ++kept;
    }
    subs[i].waitSemaphoreCount = kept;
    subs[i].pWaitSemaphores = sems[i];
    subs[i].pWaitDstStageMask = stages[i];
    if (timeline) {
      tis[i].waitSemaphoreValueCount = kept;
      tis[i].pWaitSemaphoreValues = values[i];
    }
  }
  pthread_mutex_unlock(&lock);
  return real_submit(q, n, subs, f);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL shim_gdpa(VkDevice d, const char *name) {
  if (strcmp(name, "vkGetSemaphoreFdKHR") == 0) return (PFN_vkVoidFunction)shim_get_fd;
  if (strcmp(name, "vkImportSemaphoreFdKHR") == 0) return (PFN_vkVoidFunction)shim_import;
  PFN_vkVoidFunction f = real_gdpa(d, name);
  if (!f) return f;
  SHIM_SWAP(vkQueueSubmit, real_submit, shim_submit);
  SHIM_SWAP(vkCreateSemaphore, real_create, shim_create);
  SHIM_SWAP(vkDestroySemaphore, real_destroy, shim_destroy);
  return f;
}

__attribute__((visibility("default"))) VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
vkGetInstanceProcAddr(VkInstance instance, const char *name) {
  PFN_vkVoidFunction f = shim_instance_entry(instance, name, (PFN_vkVoidFunction)vkGetInstanceProcAddr);
  if (!f) return f;
  SHIM_SWAP(vkGetDeviceProcAddr, real_gdpa, shim_gdpa);
  SHIM_SWAP(vkEnumerateDeviceExtensionProperties, real_enum, shim_enum);
  SHIM_SWAP(vkGetPhysicalDeviceExternalSemaphoreProperties, real_props, shim_props);
  SHIM_SWAP(vkCreateDevice, real_create_device, shim_create_device);
  return f;
}
