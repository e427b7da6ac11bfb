// Observation for rig's own Vulkan tests (tests/vulkan link the internal archive): hidden symbols, not part
// of librig's ABI.
#include <cstdint>

#include "drivers/vulkan/device.h"
#include "drivers/vulkan/instance.h"

extern "C" {

// 1 where the validation layer is active (RIG_VULKAN_VALIDATION=1 and the layer installed), 0 where it is
// not, -1 where Vulkan could not be loaded. *messages: validation warnings and errors counted so far.
[[gnu::visibility("hidden")]] int rig_vulkan_testing_validation(uint64_t *messages) {
  rig::vulkan::Instance *instance = rig::vulkan::Instance::get();
  if (!instance) {
    *messages = 0;
    return -1;
  }
  *messages = instance->validation_messages();
  return instance->validation_active() ? 1 : 0;
}

// The driver's commit bound k: it commits by itself once this many values are held.
[[gnu::visibility("hidden")]] uint64_t rig_vulkan_testing_commit_every(void) { return rig::vulkan::kCommitEvery; }

// Host-memory imports attempted through VK_EXT_external_memory_host so far (0 where Vulkan did not load).
[[gnu::visibility("hidden")]] uint64_t rig_vulkan_testing_imports(void) {
  rig::vulkan::Instance *instance = rig::vulkan::Instance::get();
  return instance ? instance->host_imports() : 0;
}

}  // extern "C"
