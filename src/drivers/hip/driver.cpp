// The HIP driver's entry in rig's registry: prefix "hip", devices "hip:N", each a stream device
// (drivers/stream) over HIP's table, described by HIP's attributes.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/driver.h"
#include "core/error.h"
#include "drivers/hip/api.h"
#include "drivers/hip/gpu.h"
#include "drivers/stream/device.h"

namespace rig {
namespace hip {
namespace {

// Stream memory operations unless the runtime lacks them, the device says it cannot wait on a value, or
// RIG_HIP_TIMELINE=events asks for events (how the tests cover both ways on one machine).
bool use_memory_operations(const Api &api, DeviceId device) {
  const char *forced = std::getenv("RIG_HIP_TIMELINE");
  if (forced && std::strcmp(forced, "events") == 0) return false;
  if (!api.hipStreamWriteValue64 || !api.hipStreamWaitValue64) return false;
  int can = 0;
  if (api.hipDeviceGetAttribute(&can, ATTR_CAN_USE_STREAM_WAIT_VALUE, device) != SUCCESS) return false;
  return can == 1;
}

// What a HIP GPU says of itself: name, model, memory, integrated. HIP counts a failed integrated query as
// integrated (seed-mapped-registration.txt): so does the device's info.
DriverInfo describe(const Api &api, const stream::Gpu &gpu) {
  DriverInfo info;
  char model[256] = {};
  if (api.hipDeviceGetName(model, sizeof model - 1, gpu.device) != SUCCESS) model[0] = 0;
  size_t total = 0;
  if (api.hipDeviceTotalMem(&total, gpu.device) != SUCCESS) total = 0;
  int integrated = 0;
  if (api.hipDeviceGetAttribute(&integrated, ATTR_INTEGRATED, gpu.device) != SUCCESS) integrated = 1;
  info.name = "hip:" + std::to_string(gpu.ordinal);
  info.framework = "HIP";
  info.model = model;
  info.memory_bytes = total;
  info.integrated = integrated;
  return info;
}

class HipDriver final : public Driver {
 public:
  const char *prefix() const override { return "hip"; }

  std::vector<std::string> list() override {
    std::vector<std::string> names;
    const Api *a = api();
    int count = 0;
    if (!a || a->hipGetDeviceCount(&count) != SUCCESS) return names;
    for (int i = 0; i < count; ++i) names.push_back("hip:" + std::to_string(i));
    return names;
  }

  rig_status open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) override {
    const Api *a = api();
    if (!a) return RIG_NOT_FOUND;  // api() set the message (which library, why)
    const stream::Gpu *gpu = nullptr;
    if (rig_status s = gpu_at(*a, ordinal, &gpu); s != RIG_OK) return s;
    stream::Current current(*gpu);
    return stream::StreamDevice::open(*gpu, describe(*a, *gpu), use_memory_operations(*a, gpu->device), out);
  }
};

}  // namespace
}  // namespace hip

// Declared weak by src/core/drivers.cpp, so the engine builds without this directory.
Driver *hip_driver() {
  static hip::HipDriver driver;
  return &driver;
}

}  // namespace rig
