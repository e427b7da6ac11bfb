#include "drivers/cuda/module.h"

#include <cstring>
#include <string>

#include "core/error.h"
#include "drivers/cuda/api.h"

namespace rig::cuda {

rig_status load_module(const stream::Gpu &gpu, rig_module_format format, const void *bytes, size_t length,
                       stream::Module *out) {
  const Api &api = *cuda::api();  // loaded: the family that calls this is the loaded Api's
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
  cu::Result r = api.cuModuleLoadDataEx(out, image, 2, options, values);
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
        s = stream::status_of(api.family, r);
    }
    return fail(s, "cuModuleLoadDataEx on cuda:%u failed: %s%s%s", gpu.ordinal, error_name(r),
                log[0] ? ": " : "", log);
  }
  return RIG_OK;
}

}  // namespace rig::cuda
