// rig_status's names and meanings, from one list (libuv's UV_ERRNO_MAP): rig_status_name gives the name,
// and a failure whose path set no message of its own says the meaning (capi/api.h, entry). rig.h keeps the
// enum itself, the public manual; the list names each of its members, checked below, so the two cannot
// drift apart.
#pragma once

#include <rig.h>

namespace rig {

#define RIG_STATUS_MAP(X)                                                                          \
  X(OK, "no failure")                                                                              \
  X(INVALID_ARGUMENT, "a size, range, slot, access, value or pointer is wrong")                    \
  X(INVALID_HANDLE, "a null, released, stale or forged handle, or a handle of the wrong type")     \
  X(UNSUPPORTED, "the device or its driver cannot do this")                                        \
  X(UNMAPPABLE, "the device cannot map this memory")                                               \
  X(OUT_OF_MEMORY, "host or device memory exhausted")                                              \
  X(LOST, "the device, or a device the work waits for, is lost")                                   \
  X(TIMEOUT, "the wait's timeout passed; nothing changed")                                         \
  X(INTERRUPTED, "the wait was interrupted; nothing changed")                                      \
  X(DRIVER, "a driver call failed without losing the device")                                      \
  X(NOT_FOUND, "no such device, driver or kernel")                                                 \
  X(BUSY, "the resource is in use")

namespace status_detail {
#define RIG_STATUS_COUNT_ONE(name, meaning) +1
inline constexpr int kCount = 0 RIG_STATUS_MAP(RIG_STATUS_COUNT_ONE);
#undef RIG_STATUS_COUNT_ONE
// Every member of rig.h's enum is listed: the values run 0..RIG_BUSY with no gap.
static_assert(kCount == RIG_BUSY + 1, "RIG_STATUS_MAP lists every rig_status");
}  // namespace status_detail

// "RIG_LOST"; "RIG_UNKNOWN_STATUS" for a value not in the list. Never blocks.
inline const char *status_name(rig_status s) {
  switch (s) {
#define RIG_STATUS_NAME(name, meaning) \
  case RIG_##name:                     \
    return "RIG_" #name;
    RIG_STATUS_MAP(RIG_STATUS_NAME)
#undef RIG_STATUS_NAME
    default:
      return "RIG_UNKNOWN_STATUS";
  }
}

// What the status means, in words ("host or device memory exhausted"); "unknown status" for a value not in
// the list. Never blocks.
inline const char *status_meaning(rig_status s) {
  switch (s) {
#define RIG_STATUS_MEANING(name, meaning) \
  case RIG_##name:                        \
    return meaning;
    RIG_STATUS_MAP(RIG_STATUS_MEANING)
#undef RIG_STATUS_MEANING
    default:
      return "unknown status";
  }
}

}  // namespace rig
