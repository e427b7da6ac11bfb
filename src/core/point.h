// Points inside the engine: the same packing as rig.h's rig_point (device index bits 47..62, value 0..46).
#pragma once

#include <rig.h>

#include <cstdint>

namespace rig {

constexpr uint32_t point_device(uint64_t p) { return static_cast<uint32_t>((p >> RIG_POINT_VALUE_BITS) & 0xffffu); }
constexpr uint64_t point_value(uint64_t p) { return p & RIG_POINT_VALUE_MASK; }
constexpr uint64_t make_point(uint32_t device, uint64_t value) {
  return (static_cast<uint64_t>(device) << RIG_POINT_VALUE_BITS) | value;
}

}  // namespace rig
