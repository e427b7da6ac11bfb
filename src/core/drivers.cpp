// The drivers compiled in. Each driver's directory defines its accessor; a weak declaration keeps the
// engine linkable while a driver is absent from the build.
#include <vector>

#include "core/driver.h"

namespace rig {

[[gnu::weak]] Driver *cuda_driver();
[[gnu::weak]] Driver *hip_driver();
[[gnu::weak]] Driver *vulkan_driver();

std::span<Driver *const> drivers() {
  static const std::vector<Driver *> list = [] {
    std::vector<Driver *> v;
    for (auto get : {cuda_driver, hip_driver, vulkan_driver})
      if (get)
        if (Driver *d = get()) v.push_back(d);
    return v;
  }();
  return list;
}

}  // namespace rig
