#include "drivers/cuda/module.h"

#include <cstring>
#include <string>

#include "core/error.h"

namespace rig::cuda {

rig_status CudaModule::load(const Api &api, const Gpu &gpu, rig_module_format format, const void *bytes,
                            size_t length, std::unique_ptr<DriverModule> *out) {
  if (format != RIG_MODULE_PTX && format != RIG_MODULE_CUBIN)
    return fail(RIG_UNSUPPORTED, "cuda:%u loads PTX, cubin or fatbin modules, not format %d", gpu.ordinal,
                static_cast<int>(format));
  if (!bytes || length == 0) return fail(RIG_INVALID_ARGUMENT, "empty module");
  std::string text;  // PTX must reach the driver NUL-terminated; rig accepts it without the NUL
  const void *image = bytes;
  if (format == RIG_MODULE_PTX) {
    text.assign(static_cast<const char *>(bytes), strnlen(static_cast<const char *>(bytes), length));
    image = text.c_str();
  } else if (length < 16) {
    return fail(RIG_INVALID_ARGUMENT, "a cubin or fatbin of %zu bytes is too short", length);
  }
  char log[4096] = {};
  int options[] = {cu::JIT_ERROR_LOG_BUFFER, cu::JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(static_cast<uintptr_t>(sizeof log))};
  CurrentContext current(api, gpu.context);
  cu::Module module = nullptr;
  cu::Result r = api.cuModuleLoadDataEx(&module, image, 2, options, values);
  if (r != cu::SUCCESS) {
    log[sizeof log - 1] = 0;
    rig_status s = RIG_DRIVER;
    switch (r) {
      case cu::ERROR_INVALID_PTX:
      case cu::ERROR_INVALID_IMAGE:
      case cu::ERROR_INVALID_VALUE:
        s = RIG_INVALID_ARGUMENT;
        break;
      case cu::ERROR_NO_BINARY_FOR_GPU:
      case cu::ERROR_UNSUPPORTED_PTX_VERSION:
        s = RIG_UNSUPPORTED;
        break;
      default:
        s = status_of(r);
    }
    return fail(s, "cuModuleLoadDataEx on cuda:%u failed: %s%s%s", gpu.ordinal, error_name(r),
                log[0] ? ": " : "", log);
  }
  out->reset(new CudaModule(api, gpu, module));
  return RIG_OK;
}

CudaModule::~CudaModule() {
  // The engine drops a module once no submission holds it, but work launched from it may still run:
  // unloading under a running kernel is undefined, so the context's work finishes first. After a loss on
  // this GPU that work may never finish: the module is then kept, like a lost device's memory.
  if (gpu_.had_loss.load(std::memory_order_acquire)) return;
  CurrentContext current(api_, gpu_.context);
  if (api_.cuCtxSynchronize() != cu::SUCCESS) return;
  api_.cuModuleUnload(module_);
}

rig_status CudaModule::find(const char *name, uintptr_t *function) {
  if (!name) return fail(RIG_INVALID_ARGUMENT, "null function name");
  cu::Function f = nullptr;
  CurrentContext current(api_, gpu_.context);
  cu::Result r = api_.cuModuleGetFunction(&f, module_, name);
  if (r == cu::ERROR_NOT_FOUND) return fail(RIG_NOT_FOUND, "no kernel named \"%s\" in the module", name);
  if (r != cu::SUCCESS) return fail(status_of(r), "cuModuleGetFunction(\"%s\") failed: %s", name, error_name(r));
  *function = reinterpret_cast<uintptr_t>(f);
  return RIG_OK;
}

}  // namespace rig::cuda
