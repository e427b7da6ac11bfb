// The Vulkan entry points rig uses, loaded at run time: libvulkan.so.1 (or $RIG_VULKAN_LIBRARY) is opened
// with dlopen and every function comes from vkGetInstanceProcAddr / vkGetDeviceProcAddr. Only the header's
// types are used (VK_NO_PROTOTYPES), so librig neither links against nor needs the Vulkan loader to build.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <rig.h>

#include <string>

namespace rig::vulkan {

// Functions reached before an instance exists.
#define RIG_VK_GLOBAL_FUNCTIONS(X)          \
  X(vkCreateInstance)                       \
  X(vkEnumerateInstanceVersion)             \
  X(vkEnumerateInstanceLayerProperties)     \
  X(vkEnumerateInstanceExtensionProperties)

// Functions of the instance and its physical devices.
#define RIG_VK_INSTANCE_FUNCTIONS(X)           \
  X(vkDestroyInstance)                         \
  X(vkEnumeratePhysicalDevices)                \
  X(vkGetPhysicalDeviceProperties)             \
  X(vkGetPhysicalDeviceProperties2)            \
  X(vkGetPhysicalDeviceFeatures2)              \
  X(vkGetPhysicalDeviceQueueFamilyProperties)  \
  X(vkGetPhysicalDeviceMemoryProperties)       \
  X(vkEnumerateDeviceExtensionProperties)      \
  X(vkCreateDevice)                            \
  X(vkGetPhysicalDeviceExternalBufferProperties) \
  X(vkGetPhysicalDeviceExternalSemaphoreProperties) \
  X(vkGetDeviceProcAddr)

// Debug utils, present only when the instance enabled VK_EXT_debug_utils (RIG_VULKAN_VALIDATION=1).
#define RIG_VK_DEBUG_FUNCTIONS(X)    \
  X(vkCreateDebugUtilsMessengerEXT)  \
  X(vkDestroyDebugUtilsMessengerEXT)

// Functions of a VkDevice, loaded per device through vkGetDeviceProcAddr (no loader trampoline).
#define RIG_VK_DEVICE_FUNCTIONS(X)      \
  X(vkDestroyDevice)                    \
  X(vkGetDeviceQueue)                   \
  X(vkQueueSubmit)                      \
  X(vkCreateSemaphore)                  \
  X(vkDestroySemaphore)                 \
  X(vkGetSemaphoreCounterValue)         \
  X(vkWaitSemaphores)                   \
  X(vkCreateFence)                      \
  X(vkDestroyFence)                     \
  X(vkResetFences)                      \
  X(vkWaitForFences)                    \
  X(vkCreateCommandPool)                \
  X(vkDestroyCommandPool)               \
  X(vkAllocateCommandBuffers)           \
  X(vkFreeCommandBuffers)               \
  X(vkBeginCommandBuffer)               \
  X(vkEndCommandBuffer)                 \
  X(vkResetCommandBuffer)               \
  X(vkCreateBuffer)                     \
  X(vkDestroyBuffer)                    \
  X(vkGetBufferMemoryRequirements)      \
  X(vkAllocateMemory)                   \
  X(vkFreeMemory)                       \
  X(vkBindBufferMemory)                 \
  X(vkMapMemory)                        \
  X(vkUnmapMemory)                      \
  X(vkCreateShaderModule)               \
  X(vkDestroyShaderModule)              \
  X(vkCreateComputePipelines)           \
  X(vkDestroyPipeline)                  \
  X(vkCreatePipelineLayout)             \
  X(vkDestroyPipelineLayout)            \
  X(vkCreateDescriptorSetLayout)        \
  X(vkDestroyDescriptorSetLayout)       \
  X(vkCreateDescriptorPool)             \
  X(vkDestroyDescriptorPool)            \
  X(vkResetDescriptorPool)              \
  X(vkAllocateDescriptorSets)           \
  X(vkUpdateDescriptorSets)             \
  X(vkCmdPipelineBarrier)               \
  X(vkCmdCopyBuffer)                    \
  X(vkCmdFillBuffer)                    \
  X(vkCmdBindPipeline)                  \
  X(vkCmdBindDescriptorSets)            \
  X(vkCmdPushConstants)                 \
  X(vkCmdDispatch)

// VK_EXT_external_memory_host, loaded only where the device enabled it (offered, and not RIG_VULKAN_HOST_IMPORT=0).
#define RIG_VK_HOST_IMPORT_FUNCTIONS(X) X(vkGetMemoryHostPointerPropertiesEXT)
// VK_KHR_push_descriptor, loaded only where the device enabled it.
#define RIG_VK_PUSH_DESCRIPTOR_FUNCTIONS(X) X(vkCmdPushDescriptorSetKHR)
// VK_KHR_external_memory_fd, loaded only where the device enabled it.
#define RIG_VK_MEMORY_FD_FUNCTIONS(X) X(vkGetMemoryFdKHR)
// VK_KHR_external_semaphore_fd, loaded only where the device enabled it.
#define RIG_VK_SEMAPHORE_FD_FUNCTIONS(X) X(vkGetSemaphoreFdKHR) X(vkImportSemaphoreFdKHR)

#define RIG_VK_MEMBER(name) PFN_##name name = nullptr;

// The loaded library: global and instance-level functions. One per process (see instance.h).
struct Library {
  void *handle = nullptr;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  RIG_VK_GLOBAL_FUNCTIONS(RIG_VK_MEMBER)
  RIG_VK_INSTANCE_FUNCTIONS(RIG_VK_MEMBER)
  RIG_VK_DEBUG_FUNCTIONS(RIG_VK_MEMBER)
};

// A VkDevice's functions.
struct DeviceFunctions {
  RIG_VK_DEVICE_FUNCTIONS(RIG_VK_MEMBER)
  RIG_VK_HOST_IMPORT_FUNCTIONS(RIG_VK_MEMBER)
  RIG_VK_PUSH_DESCRIPTOR_FUNCTIONS(RIG_VK_MEMBER)
  RIG_VK_MEMORY_FD_FUNCTIONS(RIG_VK_MEMBER)
  RIG_VK_SEMAPHORE_FD_FUNCTIONS(RIG_VK_MEMBER)
};

// The usage of every buffer rig makes: storage, copy source and destination.
constexpr VkBufferUsageFlags kBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// Opens the library and its global functions. RIG_NOT_FOUND with the dlerror text where it cannot.
rig_status load_library(Library *out);
// Loads the instance-level functions (debug utils only when `debug_utils`). RIG_NOT_FOUND if one is missing.
rig_status load_instance_functions(Library &lib, VkInstance instance, bool debug_utils);
// Loads a device's functions (extension ones only where enabled). RIG_NOT_FOUND if one is missing.
rig_status load_device_functions(const Library &lib, VkDevice device, bool host_import, bool push_descriptor,
                                 bool memory_fd, bool semaphore_fd, DeviceFunctions *out);

// "VK_ERROR_DEVICE_LOST" for a VkResult, for messages.
const char *result_name(VkResult result);

}  // namespace rig::vulkan
