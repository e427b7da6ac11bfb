// Observation for rig's own Vulkan tests (tests/vulkan link the internal archive): hidden symbols, not part
// of librig's ABI.
#include <cstdint>
#include <memory>

#include "drivers/vulkan/context.h"

#include "drivers/vulkan/device.h"
#include "drivers/vulkan/instance.h"

extern "C" {

// 1 where the validation layer is active (RIG_VULKAN_VALIDATION=1 and the layer installed), 0 where it is
// not, -1 where Vulkan could not be loaded. *messages: validation warnings and errors counted so far.
[[gnu::visibility("hidden")]] int vulkan_testing_validation(uint64_t *messages) {
  rig::vulkan::Instance *instance = rig::vulkan::Instance::get();
  if (!instance) {
    *messages = 0;
    return -1;
  }
  *messages = instance->validation_messages();
  return instance->validation_active() ? 1 : 0;
}

// The driver's commit bound k: it commits by itself once this many values are held.
[[gnu::visibility("hidden")]] uint64_t vulkan_testing_commit_every(void) { return rig::vulkan::kCommitEvery; }

// Whether runs whose buffers are set from now on are recorded ahead into command buffers of their own (1,
// the default) or recorded into the open batch at each hand-over (0). Runs already set keep what they have.
[[gnu::visibility("hidden")]] void vulkan_testing_record_ahead(int on) {
  rig::vulkan::testing::record_ahead.store(on != 0, std::memory_order_relaxed);
}

// Host-memory imports attempted through VK_EXT_external_memory_host so far (0 where Vulkan did not load).
[[gnu::visibility("hidden")]] uint64_t vulkan_testing_imports(void) {
  rig::vulkan::Instance *instance = rig::vulkan::Instance::get();
  return instance ? instance->host_imports() : 0;
}

// Makes one deliberate validation error (a zero-sized VkBuffer, VUID-VkBufferCreateInfo-size-00912, on a
// VkDevice of its own) and returns how many messages it added to the count; the count is then put back,
// so that the process's exit check sees only the real ones. -1 where Vulkan or a device is missing. This
// is how the tests prove that the messenger counts at all.
[[gnu::visibility("hidden")]] int64_t vulkan_testing_provoke_validation(void) {
  rig::vulkan::Instance *instance = rig::vulkan::Instance::get();
  if (!instance || instance->devices().empty()) return -1;
  std::shared_ptr<rig::vulkan::Context> ctx;
  if (rig::vulkan::Context::make(*instance, instance->devices()[0], &ctx) != RIG_OK) return -1;
  const uint64_t before = instance->validation_messages();
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = 0;  // invalid: must be greater than 0
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  if (ctx->fn().vkCreateBuffer(ctx->device(), &bi, nullptr, &buffer) == VK_SUCCESS && buffer)
    ctx->fn().vkDestroyBuffer(ctx->device(), buffer, nullptr);
  const uint64_t added = instance->validation_messages() - before;
  instance->forgive_validation_messages(added);
  return static_cast<int64_t>(added);
}

}  // extern "C"
