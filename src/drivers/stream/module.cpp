#include "drivers/stream/module.h"

#include "core/error.h"

namespace rig::stream {

rig_status StreamModule::load(const Gpu &gpu, rig_module_format format, const void *bytes, size_t length,
                              std::unique_ptr<DriverModule> *out) {
  const Family &family = *gpu.family;
  if (format != family.formats[0] && format != family.formats[1])
    return fail(RIG_UNSUPPORTED, "%s:%u loads %s, not format %d", family.prefix, gpu.ordinal, family.formats_named,
                static_cast<int>(format));
  if (!bytes || length == 0) return fail(RIG_INVALID_ARGUMENT, "empty module");
  Current current(gpu);
  Module module = nullptr;
  if (rig_status s = family.load_module(gpu, format, bytes, length, &module); s != RIG_OK) return s;
  out->reset(new StreamModule(gpu, module));
  return RIG_OK;
}

StreamModule::~StreamModule() {
  // The engine drops a module once no submission holds it, but work launched from it may still run:
  // unloading under a running kernel is undefined, so the context's work finishes first. After a loss on
  // this GPU that work may never finish: the module is then kept, like a lost device's memory.
  if (gpu_.had_loss.load(std::memory_order_acquire)) return;
  Current current(gpu_);
  const Calls &calls = gpu_.family->calls;
  if (calls.synchronize_context() != SUCCESS) return;
  calls.module_unload(module_);
}

rig_status StreamModule::find(const char *name, uintptr_t *function) {
  if (!name) return fail(RIG_INVALID_ARGUMENT, "null function name");
  const Family &family = *gpu_.family;
  Function f = nullptr;
  Current current(gpu_);
  Result r = family.calls.module_function(&f, module_, name);
  if (r == ERROR_NOT_FOUND) return fail(RIG_NOT_FOUND, "no kernel named \"%s\" in the module", name);
  if (r != SUCCESS)
    return fail(status_of(family, r), "%s(\"%s\") failed: %s", family.names.module_function, name,
                family.error_name(r));
  *function = reinterpret_cast<uintptr_t>(f);
  return RIG_OK;
}

}  // namespace rig::stream
