#include "drivers/stream/driver.h"

#include "drivers/stream/device.h"
#include "drivers/stream/gpu.h"

namespace rig::stream {
namespace {

// What the GPU says of itself, its context current: name, framework, model, memory, integrated.
DriverInfo describe(const Family &f, const Gpu &gpu) {
  DriverInfo info;
  char model[256] = {};
  if (f.calls.device_name(model, sizeof model - 1, gpu.device) != SUCCESS) model[0] = 0;
  size_t total = 0;
  if (f.calls.total_memory(&total, gpu.device) != SUCCESS) total = 0;
  int integrated = 0;
  if (f.calls.device_attribute(&integrated, f.attributes.integrated, gpu.device) != SUCCESS)
    integrated = f.integrated_when_unknown;
  info.name = std::string(f.prefix) + ":" + std::to_string(gpu.ordinal);
  info.framework = f.framework;
  info.model = model;
  info.memory_bytes = total;
  info.integrated = integrated;
  return info;
}

}  // namespace

std::vector<std::string> StreamDriver::list() {
  std::vector<std::string> names;
  const Family *f = family_();
  int count = f ? device_count(*f) : -1;
  for (int i = 0; i < count; ++i) names.push_back(std::string(prefix_) + ":" + std::to_string(i));
  return names;
}

rig_status StreamDriver::open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) {
  const Family *f = family_();
  if (!f) return RIG_NOT_FOUND;  // the family's loader set the message (which library, why)
  const Gpu *gpu = nullptr;
  if (rig_status s = gpu_at(*f, ordinal, &gpu); s != RIG_OK) return s;
  Current current(*gpu);
  return StreamDevice::open(*gpu, describe(*f, *gpu), f->memory_operations(*gpu), out);
}

}  // namespace rig::stream
