#include "drivers/vulkan/module.h"

#include <cstring>

#include "core/error.h"

namespace rig::vulkan {

namespace {
constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kExecutionModelGLCompute = 5;
}  // namespace

rig_status compute_entry_points(const uint32_t *words, size_t count, std::vector<std::string> *names) {
  if (count < 5) return fail(RIG_INVALID_ARGUMENT, "Vulkan: %zu words is too short for SPIR-V (header is 5)", count);
  if (words[0] != kSpirvMagic)
    return fail(RIG_INVALID_ARGUMENT, "Vulkan: not SPIR-V (magic 0x%08x; little-endian 0x%08x expected)", words[0],
                kSpirvMagic);
  // Walk every instruction so that a truncated or corrupt stream is refused here rather than reaching the
  // driver's compiler.
  for (size_t at = 5; at < count;) {
    uint32_t n = words[at] >> 16, op = words[at] & 0xffff;
    if (n == 0 || n > count - at)
      return fail(RIG_INVALID_ARGUMENT, "Vulkan: SPIR-V instruction at word %zu has a bad word count %u", at, n);
    if (op == kOpEntryPoint && n >= 4 && words[at + 1] == kExecutionModelGLCompute) {
      // The name is a NUL-terminated literal string packed into the words after the model and the id.
      const char *s = reinterpret_cast<const char *>(words + at + 3);
      size_t room = static_cast<size_t>(n - 3) * 4;
      size_t len = strnlen(s, room);
      if (len == room) return fail(RIG_INVALID_ARGUMENT, "Vulkan: SPIR-V entry point name at word %zu is unterminated", at);
      names->emplace_back(s, len);
    }
    at += n;
  }
  return RIG_OK;
}

Pipeline::~Pipeline() { ctx_->fn().vkDestroyPipeline(ctx_->device(), handle_, nullptr); }

rig_status Entry::pipeline(uint32_t bindings, const uint32_t block[3], std::shared_ptr<const Pipeline> *out) {
  Key key{bindings, {block[0], block[1], block[2]}};
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &[k, p] : cache_)
    if (k == key) {
      *out = p;
      return RIG_OK;
    }
  Context &ctx = module_.context();
  const Layout *layout = nullptr;
  if (rig_status s = ctx.layout(bindings, &layout); s != RIG_OK) return s;

  std::array<VkSpecializationMapEntry, 3> map{};
  for (uint32_t i = 0; i < 3; ++i) {
    map[i].constantID = i;
    map[i].offset = i * sizeof(uint32_t);
    map[i].size = sizeof(uint32_t);
  }
  VkSpecializationInfo spec{};
  spec.mapEntryCount = 3;
  spec.pMapEntries = map.data();
  spec.dataSize = sizeof(key.block);
  spec.pData = key.block.data();

  VkComputePipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module_.shader();
  info.stage.pName = name_.c_str();
  info.stage.pSpecializationInfo = &spec;
  info.layout = layout->pipeline;
  VkPipeline handle = VK_NULL_HANDLE;
  VkResult r = ctx.fn().vkCreateComputePipelines(ctx.device(), VK_NULL_HANDLE, 1, &info, nullptr, &handle);
  if (r != VK_SUCCESS)
    return fail(r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? RIG_OUT_OF_MEMORY : RIG_DRIVER,
                "Vulkan: vkCreateComputePipelines for '%s' with %u bindings failed: %s", name_.c_str(), bindings,
                result_name(r));
  auto p = std::make_shared<const Pipeline>(module_.shared_context(), handle, layout, bindings);
  cache_.emplace_back(key, p);
  *out = std::move(p);
  return RIG_OK;
}

rig_status Module::load(std::shared_ptr<Context> ctx, const void *bytes, size_t length,
                        std::unique_ptr<DriverModule> *out) {
  if (!bytes || length == 0) return fail(RIG_INVALID_ARGUMENT, "Vulkan: empty SPIR-V module");
  if (length % 4 != 0)
    return fail(RIG_INVALID_ARGUMENT, "Vulkan: SPIR-V is whole 32-bit words; %zu bytes is not", length);
  // The caller's bytes need not be word-aligned: work on an aligned copy.
  std::vector<uint32_t> words(length / 4);
  std::memcpy(words.data(), bytes, length);
  std::vector<std::string> names;
  if (rig_status s = compute_entry_points(words.data(), words.size(), &names); s != RIG_OK) return s;
  if (names.empty()) return fail(RIG_INVALID_ARGUMENT, "Vulkan: the SPIR-V module has no GLCompute entry point");

  std::unique_ptr<Module> m(new Module(std::move(ctx)));
  VkShaderModuleCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  info.codeSize = length;
  info.pCode = words.data();
  VkResult r = m->ctx_->fn().vkCreateShaderModule(m->ctx_->device(), &info, nullptr, &m->shader_);
  if (r != VK_SUCCESS) {
    m->shader_ = VK_NULL_HANDLE;
    return fail(r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? RIG_OUT_OF_MEMORY : RIG_DRIVER,
                "Vulkan: vkCreateShaderModule failed: %s", result_name(r));
  }
  for (auto &n : names) m->entries_.push_back(std::make_unique<Entry>(*m, std::move(n)));
  *out = std::move(m);
  return RIG_OK;
}

Module::~Module() {
  // Pipelines made from the shader stay alive in batches that still hold them; the shader module itself is
  // not needed by a pipeline once made.
  if (shader_) ctx_->fn().vkDestroyShaderModule(ctx_->device(), shader_, nullptr);
}

rig_status Module::find(const char *name, uintptr_t *function) {
  if (!name) return fail(RIG_INVALID_ARGUMENT, "Vulkan: null function name");
  for (auto &e : entries_)
    if (e->name() == name) {
      *function = reinterpret_cast<uintptr_t>(e.get());
      return RIG_OK;
    }
  return fail(RIG_NOT_FOUND, "Vulkan: the module has no GLCompute entry point '%s'", name);
}

Entry *Module::entry(uintptr_t function) const {
  for (auto &e : entries_)
    if (reinterpret_cast<uintptr_t>(e.get()) == function) return e.get();
  return nullptr;
}

}  // namespace rig::vulkan
