// The drivers compiled in, every one registered alike: memory devices as GPUs. Each driver's directory
// defines its accessor; a weak declaration keeps the engine linkable while a driver is absent from the build.
#include <cstdlib>
#include <vector>

#include "core/driver.h"
#include "core/error.h"

namespace rig {

[[gnu::weak]] Driver *memory_driver();
[[gnu::weak]] Driver *cuda_driver();
[[gnu::weak]] Driver *hip_driver();
[[gnu::weak]] Driver *vulkan_driver();

std::span<Driver *const> drivers() {
  static const std::vector<Driver *> list = [] {
    std::vector<Driver *> v;
    for (auto get : {memory_driver, cuda_driver, hip_driver, vulkan_driver})
      if (get)
        if (Driver *d = get()) v.push_back(d);
    return v;
  }();
  return list;
}

rig_status Driver::open_named(const std::string &name, std::unique_ptr<DriverDevice> *out) {
  // Digits only: strtoul alone would take a sign or leading blanks ("cuda:-1", "cuda: 0").
  bool digits = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
  char *end = nullptr;
  unsigned long ordinal = digits ? std::strtoul(name.c_str(), &end, 10) : 0;
  if (!digits || *end || ordinal > 0xffffffffu)
    return fail(RIG_INVALID_ARGUMENT, "device_open: \"%s:%s\" is not DRIVER:N (cuda:0, hip:0, vulkan:0)", prefix(),
                name.c_str());
  return open(static_cast<unsigned>(ordinal), out);
}

rig_status Driver::open_host(std::unique_ptr<DriverDevice> *) {
  return fail(RIG_UNSUPPORTED, "host: the %s driver makes no host device", prefix());
}

}  // namespace rig
