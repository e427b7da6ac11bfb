#include "drivers/hip/module.h"

#include <vector>

#include "core/error.h"

namespace rig::hip {

rig_status HipModule::load(const Api &api, const Gpu &gpu, rig_module_format format, const void *bytes,
                           size_t length, std::unique_ptr<DriverModule> *out) {
  if (format != RIG_MODULE_HIP_CODE_OBJECT)
    return fail(RIG_UNSUPPORTED, "hip:%d loads HIP code objects (RIG_MODULE_HIP_CODE_OBJECT), not format %d",
                gpu.ordinal, static_cast<int>(format));
  if (!bytes || length == 0) return fail(RIG_INVALID_ARGUMENT, "empty module");
  // hipModuleLoadData takes no length: an ELF code object says its own, but a text image (HIP on NVIDIA
  // takes PTX) must end in a NUL, which rig does not ask of the caller. A copy with one appended serves both.
  std::vector<char> image(static_cast<const char *>(bytes), static_cast<const char *>(bytes) + length);
  image.push_back('\0');
  CurrentDevice current(api, gpu.ordinal);
  Module module = nullptr;
  Error r = api.hipModuleLoadData(&module, image.data());
  if (r != SUCCESS) {
    rig_status s;
    switch (r) {
      case ERROR_INVALID_IMAGE:
      case ERROR_INVALID_KERNEL_FILE:
      case ERROR_INVALID_VALUE:
        s = RIG_INVALID_ARGUMENT;
        break;
      case ERROR_NO_BINARY_FOR_GPU:
      case ERROR_SHARED_OBJECT_INIT_FAILED:
        s = RIG_UNSUPPORTED;
        break;
      default:
        s = status_of(r);
    }
    return fail(s, "hipModuleLoadData on hip:%d failed: %s", gpu.ordinal, error_name(r));
  }
  out->reset(new HipModule(api, gpu, module));
  return RIG_OK;
}

HipModule::~HipModule() {
  // The engine drops a module once no submission holds it, but work launched from it may still run:
  // unloading under a running kernel is undefined, so the device's work finishes first. After a loss on
  // this GPU that work may never finish: the module is then kept, like a lost device's memory.
  if (gpu_.had_loss.load(std::memory_order_acquire)) return;
  CurrentDevice current(api_, gpu_.ordinal);
  if (api_.hipDeviceSynchronize() != SUCCESS) return;
  api_.hipModuleUnload(module_);
}

rig_status HipModule::find(const char *name, uintptr_t *function) {
  if (!name) return fail(RIG_INVALID_ARGUMENT, "null function name");
  Function f = nullptr;
  CurrentDevice current(api_, gpu_.ordinal);
  Error r = api_.hipModuleGetFunction(&f, module_, name);
  if (r == ERROR_NOT_FOUND) return fail(RIG_NOT_FOUND, "no kernel named \"%s\" in the module", name);
  if (r != SUCCESS) return fail(status_of(r), "hipModuleGetFunction(\"%s\") failed: %s", name, error_name(r));
  *function = reinterpret_cast<uintptr_t>(f);
  return RIG_OK;
}

}  // namespace rig::hip
