// The static verdict: decided from a device's framework name and kind alone, before anything is
// registered or copied. The rows and why each is what it is are in static_table.cpp.
#pragma once

#include <rig_mapped.h>

#include <functional>
#include <optional>
#include <string_view>

#include "mapped/verdict.h"

namespace rig::mapped {

// Answers a fact about the device: 1 yes, 0 no, -1 could not be read.
using FactQuery = std::function<int(rig_device_fact)>;

// The decided verdict, or nullopt when only the self-test can answer. `fact` is asked only by the rows
// that need it (CUDA, HIP), and never before Vulkan is refused.
std::optional<Verdict> static_verdict(std::string_view framework, rig_device_kind kind, const FactQuery &fact);

// True if `name` is `family` or a variant of it ("CUDA/PTX" of "CUDA"), ignoring ASCII case.
bool is_of(std::string_view name, std::string_view family);

}  // namespace rig::mapped
