#include "drivers/hip/module.h"

#include <vector>

#include "core/error.h"
#include "drivers/hip/api.h"

namespace rig::hip {

rig_status load_module(const stream::Gpu &gpu, rig_module_format, const void *bytes, size_t length,
                       stream::Module *out) {
  const Api &api = *hip::api();  // loaded: the family that calls this is the loaded Api's
  // hipModuleLoadData takes no length: an ELF code object says its own, but a text image (HIP on NVIDIA
  // takes PTX) must end in a NUL, which rig does not ask of the caller. A copy with one appended serves both.
  std::vector<char> image(static_cast<const char *>(bytes), static_cast<const char *>(bytes) + length);
  image.push_back('\0');
  Error r = api.hipModuleLoadData(out, image.data());
  if (r == SUCCESS) return RIG_OK;
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
      s = stream::status_of(api.family, r);
  }
  return fail(s, "hipModuleLoadData on hip:%u failed: %s", gpu.ordinal, error_name(r));
}

}  // namespace rig::hip
