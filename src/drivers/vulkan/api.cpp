// Loading the Vulkan loader (drivers/common/library.h). The handle is never closed: the instance made from it
// lives until the process exits (see instance.cpp), and layers may keep threads running in it until then.
#include "drivers/vulkan/api.h"

#include "core/error.h"
#include "drivers/common/library.h"

namespace rig::vulkan {

rig_status load_library(Library *out) {
  // Never closed, like every driver library (drivers/common/library.h), even where it proves too old: one
  // failed load per process, and layers may keep threads running in it.
  common::Library loader = common::open_library("RIG_VULKAN_LIBRARY", "libvulkan.so.1", "the Vulkan loader");
  if (!loader.handle) return fail(RIG_NOT_FOUND, "Vulkan: %s", loader.why.c_str());
  const char *path = loader.file.c_str();
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  if (!common::resolve(loader, "vkGetInstanceProcAddr", gipa))
    return fail(RIG_NOT_FOUND, "Vulkan: %s has no vkGetInstanceProcAddr", path);
  Library lib;
  lib.handle = loader.handle;
  lib.vkGetInstanceProcAddr = gipa;
#define RIG_VK_LOAD_GLOBAL(name) lib.name = reinterpret_cast<PFN_##name>(gipa(VK_NULL_HANDLE, #name));
  RIG_VK_GLOBAL_FUNCTIONS(RIG_VK_LOAD_GLOBAL)
#undef RIG_VK_LOAD_GLOBAL
  // vkEnumerateInstanceVersion is absent from 1.0 loaders; rig needs 1.2 (timeline semaphores).
  if (!lib.vkCreateInstance || !lib.vkEnumerateInstanceVersion || !lib.vkEnumerateInstanceLayerProperties ||
      !lib.vkEnumerateInstanceExtensionProperties) {
    return fail(RIG_NOT_FOUND, "Vulkan: %s is a loader older than Vulkan 1.1", path);
  }
  *out = lib;
  return RIG_OK;
}

namespace {

// Loads functions through `get` (vkGetInstanceProcAddr, vkGetDeviceProcAddr) of `owner` into `table`.
template <class Table, class Get, class Owner>
struct Loader {
  Table &table;
  Get get;
  Owner owner;
  const char *what;  // "the instance": names the owner where a function is missing
  // Loads `name` into `field`: RIG_NOT_FOUND where the owner lacks it.
  template <class F>
  rig_status operator()(F &field, const char *name) const {
    field = reinterpret_cast<F>(get(owner, name));
    return field ? RIG_OK : fail(RIG_NOT_FOUND, "Vulkan: %s has no %s", what, name);
  }
};

}  // namespace

// For a list of functions (api.h): loads each into the table of the Loader `load` in scope.
#define RIG_VK_LOAD(name) \
  if (rig_status s = load(load.table.name, #name); s != RIG_OK) return s;

rig_status load_instance_functions(Library &lib, VkInstance instance, bool debug_utils) {
  Loader<Library, PFN_vkGetInstanceProcAddr, VkInstance> load{lib, lib.vkGetInstanceProcAddr, instance, "the instance"};
  RIG_VK_INSTANCE_FUNCTIONS(RIG_VK_LOAD)
  if (debug_utils) {
    RIG_VK_DEBUG_FUNCTIONS(RIG_VK_LOAD)
  }
  return RIG_OK;
}

rig_status load_device_functions(const Library &lib, VkDevice device, bool host_import, bool push_descriptor,
                                 bool memory_fd, bool semaphore_fd, DeviceFunctions *out) {
  DeviceFunctions table;
  Loader<DeviceFunctions, PFN_vkGetDeviceProcAddr, VkDevice> load{table, lib.vkGetDeviceProcAddr, device, "the device"};
  RIG_VK_DEVICE_FUNCTIONS(RIG_VK_LOAD)
  if (host_import) {
    RIG_VK_HOST_IMPORT_FUNCTIONS(RIG_VK_LOAD)
  }
  if (push_descriptor) {
    RIG_VK_PUSH_DESCRIPTOR_FUNCTIONS(RIG_VK_LOAD)
  }
  if (memory_fd) {
    RIG_VK_MEMORY_FD_FUNCTIONS(RIG_VK_LOAD)
  }
  if (semaphore_fd) {
    RIG_VK_SEMAPHORE_FD_FUNCTIONS(RIG_VK_LOAD)
  }
  *out = table;
  return RIG_OK;
}
#undef RIG_VK_LOAD

const char *result_name(VkResult result) {
  switch (result) {
#define RIG_VK_CASE(r) \
  case r:              \
    return #r;
    RIG_VK_CASE(VK_SUCCESS)
    RIG_VK_CASE(VK_NOT_READY)
    RIG_VK_CASE(VK_TIMEOUT)
    RIG_VK_CASE(VK_INCOMPLETE)
    RIG_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    RIG_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    RIG_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    RIG_VK_CASE(VK_ERROR_DEVICE_LOST)
    RIG_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    RIG_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    RIG_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    RIG_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    RIG_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    RIG_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    RIG_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    RIG_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    RIG_VK_CASE(VK_ERROR_UNKNOWN)
    RIG_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    RIG_VK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    RIG_VK_CASE(VK_ERROR_FRAGMENTATION)
    RIG_VK_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    RIG_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef RIG_VK_CASE
    default:
      return "VkResult(unknown)";
  }
}

}  // namespace rig::vulkan
