#include "drivers/stream/driver.h"

#include "drivers/stream/device.h"
#include "drivers/stream/gpu.h"

namespace rig::stream {

std::vector<std::string> StreamDriver::list() {
  std::vector<std::string> names;
  const Family *f = family_();
  int count = f ? f->device_count() : -1;
  for (int i = 0; i < count; ++i) names.push_back(std::string(prefix_) + ":" + std::to_string(i));
  return names;
}

rig_status StreamDriver::open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) {
  const Family *f = family_();
  if (!f) return RIG_NOT_FOUND;  // the family's loader set the message (which library, why)
  const Gpu *gpu = nullptr;
  if (rig_status s = gpu_at(*f, ordinal, &gpu); s != RIG_OK) return s;
  Current current(*gpu);
  DriverInfo info;
  f->describe(*gpu, &info);
  return StreamDevice::open(*gpu, std::move(info), f->memory_operations(*gpu), out);
}

}  // namespace rig::stream
