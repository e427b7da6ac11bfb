#include "drivers/vulkan/instance.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/error.h"
#include "core/log.h"

namespace rig::vulkan {

bool env_flag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

bool host_import_turned_off() {
  const char *v = std::getenv("RIG_VULKAN_HOST_IMPORT");
  return v && std::strcmp(v, "0") == 0;
}

namespace {

constexpr const char *kValidationLayer = "VK_LAYER_KHRONOS_validation";

Instance *the_instance = nullptr;  // set once by get(); read after call_once, which orders it

// Every validation warning or error is a defect of rig (or of the program's SPIR-V): print and count it.
VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT types,
                                                const VkDebugUtilsMessengerCallbackDataEXT *data, void *) {
  const bool counted = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT &&
                       (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT |
                                 (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT
                                      ? VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
                                      : 0)));
  if (counted && the_instance) the_instance->count_validation_message();
  say(counted ? RIG_LOG_ERROR : RIG_LOG_DEBUG, "rig vulkan %s: %s", counted ? "VALIDATION" : "debug",
      data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;  // never make the call fail: the count is how the tests see it
}

// Runs at exit when validation is on: a counted message turns the process's status into a failure, so that
// any test binary (the engine's ordering suite included) run with RIG_VULKAN_VALIDATION=1 fails on one.
void validation_exit_check() {
  if (!the_instance) return;
  uint64_t n = the_instance->validation_messages();
  if (n == 0) return;
  say(RIG_LOG_ERROR, "rig vulkan: %llu validation message(s) during this process: failing it",
      static_cast<unsigned long long>(n));
  std::fflush(stderr);
  std::fflush(stdout);
  _exit(3);
}

bool has_layer(const Library &lib, const char *name) {
  uint32_t count = 0;
  if (lib.vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (lib.vkEnumerateInstanceLayerProperties(&count, layers.data()) < 0) return false;
  for (uint32_t i = 0; i < count; ++i)
    if (std::strcmp(layers[i].layerName, name) == 0) return true;
  return false;
}

bool has_instance_extension(const Library &lib, const char *layer, const char *name) {
  uint32_t count = 0;
  if (lib.vkEnumerateInstanceExtensionProperties(layer, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(count);
  if (lib.vkEnumerateInstanceExtensionProperties(layer, &count, exts.data()) < 0) return false;
  for (uint32_t i = 0; i < count; ++i)
    if (std::strcmp(exts[i].extensionName, name) == 0) return true;
  return false;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info() {
  VkDebugUtilsMessengerCreateInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_debug_message;
  return info;
}

}  // namespace

Instance *Instance::get() {
  static std::once_flag once;
  static Instance instance;  // never destroyed before exit: see instance.h
  static rig_status status = RIG_OK;
  static std::string message;
  std::call_once(once, [] {
    status = instance.make();
    if (status == RIG_OK) {
      the_instance = &instance;
    } else {
      message = last_error();
    }
  });
  if (status != RIG_OK) {
    fail(status, "%s", message.c_str());
    return nullptr;
  }
  return the_instance;
}

rig_status Instance::make() {
  if (rig_status s = load_library(&lib_); s != RIG_OK) return s;
  uint32_t version = 0;
  if (lib_.vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_2)
    return fail(RIG_NOT_FOUND, "Vulkan: the loader offers Vulkan %u.%u; rig needs 1.2 (timeline semaphores)",
                VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));

  host_import_ = !host_import_turned_off();
  const bool want_validation = env_flag("RIG_VULKAN_VALIDATION");
  bool sync_validation = false;
  std::vector<const char *> layers, extensions;
  if (want_validation) {
    if (has_layer(lib_, kValidationLayer) &&
        (has_instance_extension(lib_, nullptr, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
         has_instance_extension(lib_, kValidationLayer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME))) {
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      validation_active_ = true;
      // Synchronization validation too: on a CPU driver that runs everything in order, a missing barrier
      // changes no byte, so this is what shows one.
      sync_validation = has_instance_extension(lib_, kValidationLayer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      if (sync_validation) extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    } else {
      say(RIG_LOG_WARNING, "rig vulkan: RIG_VULKAN_VALIDATION is set but %s (with %s) is not installed",
          kValidationLayer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "rig";
  app.pEngineName = "rig";
  app.engineVersion = RIG_VERSION_NUMBER;
  app.apiVersion = version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;

  // Chained so that messages about vkCreateInstance itself are caught too.
  VkDebugUtilsMessengerCreateInfoEXT debug = messenger_info();
  const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  if (sync_validation) debug.pNext = &features;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pNext = validation_active_ ? &debug : nullptr;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  // Counted messages during creation need the_instance; it is set after make() returns, so point it here.
  if (validation_active_) the_instance = this;
  VkResult r = lib_.vkCreateInstance(&info, nullptr, &instance_);
  if (r != VK_SUCCESS) {
    the_instance = nullptr;
    return fail(RIG_NOT_FOUND, "Vulkan: vkCreateInstance failed: %s", result_name(r));
  }
  if (rig_status s = load_instance_functions(lib_, instance_, validation_active_); s != RIG_OK) return s;
  if (validation_active_) {
    debug.pNext = nullptr;
    r = lib_.vkCreateDebugUtilsMessengerEXT(instance_, &debug, nullptr, &messenger_);
    if (r != VK_SUCCESS)
      return fail(RIG_DRIVER, "Vulkan: vkCreateDebugUtilsMessengerEXT failed: %s", result_name(r));
    std::atexit(validation_exit_check);
  }
  return discover();
}

namespace {

// Fills `ext` (its sType set) through `query`, one of the physical device's *2 calls, whose struct (of
// type `type`) carries `ext` in its pNext chain.
template <class Outer, class Ext>
void query_chained(void (*query)(VkPhysicalDevice, Outer *), VkStructureType type, VkPhysicalDevice h, Ext &ext) {
  Outer outer{};
  outer.sType = type;
  outer.pNext = &ext;
  query(h, &outer);
}

// Whether a semaphore of `type` can be exported and imported as `handle` on `h`.
bool semaphore_handle_works(const Library &lib, VkPhysicalDevice h, VkSemaphoreType type,
                            VkExternalSemaphoreHandleTypeFlagBits handle) {
  VkSemaphoreTypeCreateInfo ti{};
  ti.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  ti.semaphoreType = type;
  VkPhysicalDeviceExternalSemaphoreInfo si{};
  si.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
  si.pNext = &ti;
  si.handleType = handle;
  VkExternalSemaphoreProperties ep{};
  ep.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
  lib.vkGetPhysicalDeviceExternalSemaphoreProperties(h, &si, &ep);
  constexpr VkExternalSemaphoreFeatureFlags both =
      VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
  return (ep.externalSemaphoreFeatures & both) == both;
}

}  // namespace

rig_status Instance::discover() {
  uint32_t count = 0;
  VkResult r = lib_.vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  if (r != VK_SUCCESS) return fail(RIG_DRIVER, "Vulkan: vkEnumeratePhysicalDevices failed: %s", result_name(r));
  std::vector<VkPhysicalDevice> handles(count);
  r = lib_.vkEnumeratePhysicalDevices(instance_, &count, handles.data());
  if (r < 0) return fail(RIG_DRIVER, "Vulkan: vkEnumeratePhysicalDevices failed: %s", result_name(r));
  handles.resize(count);

  for (VkPhysicalDevice h : handles) {
    PhysicalDevice pd;
    pd.handle = h;
    lib_.vkGetPhysicalDeviceProperties(h, &pd.properties);
    if (pd.properties.apiVersion < VK_API_VERSION_1_2) continue;

    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    query_chained(lib_.vkGetPhysicalDeviceFeatures2, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, h, f12);
    if (!f12.timelineSemaphore) continue;

    // A compute-only family first: on discrete GPUs it is the asynchronous compute engine, with several
    // queues, so rig devices opened on one GPU can get queues of their own (how many: context.cpp).
    uint32_t nfam = 0;
    lib_.vkGetPhysicalDeviceQueueFamilyProperties(h, &nfam, nullptr);
    std::vector<VkQueueFamilyProperties> fams(nfam);
    lib_.vkGetPhysicalDeviceQueueFamilyProperties(h, &nfam, fams.data());
    int chosen = -1;
    for (uint32_t i = 0; i < nfam && chosen < 0; ++i)
      if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
          fams[i].queueCount > 0)
        chosen = static_cast<int>(i);
    for (uint32_t i = 0; i < nfam && chosen < 0; ++i)
      if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount > 0) chosen = static_cast<int>(i);
    if (chosen < 0) continue;
    pd.queue_family = static_cast<uint32_t>(chosen);
    pd.queue_count = fams[chosen].queueCount;

    lib_.vkGetPhysicalDeviceMemoryProperties(h, &pd.memory);

    uint32_t next = 0;
    if (lib_.vkEnumerateDeviceExtensionProperties(h, nullptr, &next, nullptr) == VK_SUCCESS) {
      std::vector<VkExtensionProperties> exts(next);
      if (lib_.vkEnumerateDeviceExtensionProperties(h, nullptr, &next, exts.data()) >= 0) {
        for (uint32_t i = 0; i < next; ++i) {
          if (std::strcmp(exts[i].extensionName, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) == 0)
            pd.has_host_import = true;
          else if (std::strcmp(exts[i].extensionName, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0)
            pd.has_push_descriptor = true;
          else if (std::strcmp(exts[i].extensionName, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) == 0)
            pd.has_memory_fd = true;
          else if (std::strcmp(exts[i].extensionName, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) == 0)
            pd.has_semaphore_fd = true;
        }
      }
    }
    if (pd.has_host_import) {
      VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp{};
      hp.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
      query_chained(lib_.vkGetPhysicalDeviceProperties2, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, h, hp);
      pd.host_import_alignment = hp.minImportedHostPointerAlignment;
    }
    if (pd.has_memory_fd) {
      // Offered is not enough: rig's buffers (their usage) must both leave and come back as opaque fds.
      VkPhysicalDeviceExternalBufferInfo bi{};
      bi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO;
      bi.usage = kBufferUsage;
      bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
      VkExternalBufferProperties ep{};
      ep.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
      lib_.vkGetPhysicalDeviceExternalBufferProperties(h, &bi, &ep);
      VkExternalMemoryFeatureFlags f = ep.externalMemoryProperties.externalMemoryFeatures;
      constexpr VkExternalMemoryFeatureFlags both =
          VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT;
      pd.has_memory_fd = (f & both) == both;
      pd.memory_fd_dedicated = f & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT;
    }
    if (pd.has_semaphore_fd) {
      // Offered is not enough: the handle type must leave and come back for the semaphore's type.
      pd.has_sync_fd =
          semaphore_handle_works(lib_, h, VK_SEMAPHORE_TYPE_BINARY, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT);
      pd.has_semaphore_fd =
          semaphore_handle_works(lib_, h, VK_SEMAPHORE_TYPE_TIMELINE, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT);
    }
    if (pd.has_push_descriptor) {
      VkPhysicalDevicePushDescriptorPropertiesKHR pp{};
      pp.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR;
      query_chained(lib_.vkGetPhysicalDeviceProperties2, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, h, pp);
      pd.max_push_descriptors = pp.maxPushDescriptors;
    }
    pd.name = "vulkan:" + std::to_string(devices_.size());
    devices_.push_back(std::move(pd));
  }
  return RIG_OK;
}

}  // namespace rig::vulkan
