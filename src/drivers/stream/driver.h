// A stream family's entry in rig's registry: lists the family's GPUs as prefix:N and opens each as a
// StreamDevice. The family is loaded on first use (`family()` answers null, with the reason set, where its
// library does not load).
#pragma once

#include <rig.h>

#include <memory>
#include <string>
#include <vector>

#include "core/driver.h"
#include "drivers/stream/calls.h"

namespace rig::stream {

class StreamDriver final : public Driver {
 public:
  StreamDriver(const char *prefix, const Family *(*family)()) : prefix_(prefix), family_(family) {}
  const char *prefix() const override { return prefix_; }
  // "prefix:0" .. as many as the family counts; empty where its library does not load.
  std::vector<std::string> list() override;
  // A new StreamDevice on GPU `ordinal` (its context retained on first use). RIG_NOT_FOUND with a message
  // where the library does not load or has no such GPU.
  rig_status open(unsigned ordinal, std::unique_ptr<DriverDevice> *out) override;

 private:
  const char *prefix_;
  const Family *(*family_)();
};

// The registry's entry for the family that `api` loads (an Api holding its Family as `family`), made on
// first use and kept for the process: what cuda_driver() and hip_driver() answer.
template <class Api, const Api *(*api)()>
Driver *driver_of(const char *prefix) {
  static StreamDriver driver(prefix, [] {
    const Api *a = api();
    return a ? &a->family : nullptr;
  });
  return &driver;
}

}  // namespace rig::stream
