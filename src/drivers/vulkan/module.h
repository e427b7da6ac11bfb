// SPIR-V modules, their compute entry points, and the pipelines made from them.
//
// The launch contract on Vulkan (rig.h, rig_part):
//  - the i-th slot a launch names (rig_part.slots[i]) is storage buffer binding i of set 0, bound over
//    exactly the slot's range; a slot whose offset is not a multiple of the device's
//    minStorageBufferOffsetAlignment (a view at an odd offset) is copied into a scratch buffer for the
//    launch and back after it (if writable), so a slot naming the same bytes twice sees two copies; a
//    slot's length must be at most maxStorageBufferRange (refused by rig_submit with
//    RIG_INVALID_ARGUMENT through DriverDevice::check_work, the device untouched); an empty slot binds the first 4
//    bytes of its buffer and must not be touched;
//  - the run's scalars are the push constants from offset 0, zero-padded to the device's push constant
//    size (scalars beyond it cannot be declared by any valid shader and are not passed);
//  - grid is the workgroup count (vkCmdDispatch); block is passed as specialization constants 0, 1, 2
//    (uint32), so a shader declaring layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2)
//    gets block as its workgroup size, and a shader with a fixed local_size ignores block;
//  - shared_bytes must be 0 (workgroup memory is declared in the shader): RIG_UNSUPPORTED otherwise.
#pragma once

#include <rig.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/driver.h"
#include "drivers/vulkan/context.h"

namespace rig::vulkan {

// A compute pipeline. Held by shared pointer by every batch that records it, so it outlives the module
// while work using it may still run.
class Pipeline {
 public:
  Pipeline(std::shared_ptr<Context> ctx, VkPipeline handle, const Layout *layout, uint32_t bindings)
      : ctx_(std::move(ctx)), handle_(handle), layout_(layout), bindings_(bindings) {}
  ~Pipeline();
  Pipeline(const Pipeline &) = delete;
  Pipeline &operator=(const Pipeline &) = delete;

  VkPipeline handle() const { return handle_; }
  const Layout &layout() const { return *layout_; }
  uint32_t bindings() const { return bindings_; }

 private:
  std::shared_ptr<Context> ctx_;
  VkPipeline handle_;
  const Layout *layout_;
  uint32_t bindings_;
};

class Module;

// One GLCompute entry point of a module: what Part::function points to.
class Entry {
 public:
  Entry(Module &module, std::string name) : module_(module), name_(std::move(name)) {}
  Module &module() const { return module_; }
  const std::string &name() const { return name_; }
  // The pipeline for `bindings` slots and workgroup size `block`, made on first use and cached.
  rig_status pipeline(uint32_t bindings, const uint32_t block[3], std::shared_ptr<const Pipeline> *out);

 private:
  struct Key {
    uint32_t bindings;
    std::array<uint32_t, 3> block;
    bool operator==(const Key &) const = default;
  };
  Module &module_;
  std::string name_;
  std::mutex mutex_;
  std::vector<std::pair<Key, std::shared_ptr<const Pipeline>>> cache_;
};

class Module final : public DriverModule {
 public:
  // Checks the SPIR-V's structure, lists its GLCompute entry points and makes the VkShaderModule.
  static rig_status load(std::shared_ptr<Context> ctx, const void *bytes, size_t length,
                         std::unique_ptr<DriverModule> *out);
  ~Module() override;

  rig_status find(const char *name, uintptr_t *function) override;
  // The entry behind a Part::function of this module; null if it is not one of this module's.
  Entry *entry(uintptr_t function) const;
  Context &context() const { return *ctx_; }
  const std::shared_ptr<Context> &shared_context() const { return ctx_; }
  VkShaderModule shader() const { return shader_; }

 private:
  explicit Module(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  std::shared_ptr<Context> ctx_;
  VkShaderModule shader_ = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Entry>> entries_;
};

// The names of the GLCompute entry points of a SPIR-V binary; RIG_INVALID_ARGUMENT (with the reason) where
// the words are not a well-formed SPIR-V instruction stream.
rig_status compute_entry_points(const uint32_t *words, size_t count, std::vector<std::string> *names);

}  // namespace rig::vulkan
