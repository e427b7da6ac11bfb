// The host side of a driver device's wait (DriverDevice::wait), shared by the drivers whose timeline the host
// reads without a driver call (CUDA, HIP): spin briefly, since most chain steps finish within tens of
// microseconds, then look for faults and sleep a growing slice, never past the deadline and never more than
// 1 ms (core/deadline.h's bound for seeing an interrupt). No lock is held: the caller holds none.
#pragma once

#include <rig.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "core/deadline.h"
#include "core/error.h"

namespace rig::stream {

// Waits until reached() or a failure. The callables:
//   reached()       -> bool        the timeline shows the value (a pure read)
//   lost()          -> rig_status  RIG_OK, or the loss already known (the device or its timeline lost)
//   check_faults()  -> rig_status  RIG_OK, or the loss found by asking the driver (called only between
//                                  sleeps: it costs driver calls)
//   signaled()      -> uint64_t    for the timeout's message
// Returns RIG_OK, RIG_TIMEOUT, RIG_INTERRUPTED (message set, naming `device` and `value`) or what lost() or
// check_faults() returned.
template <class Reached, class Lost, class CheckFaults, class Signaled>
rig_status host_wait(const char *device, uint64_t value, Deadline deadline, Reached reached, Lost lost,
                     CheckFaults check_faults, Signaled signaled) {
  using namespace std::chrono;
  auto spin_until = Clock::now() + microseconds(50);
  auto slice = microseconds(5);
  for (;;) {
    if (reached()) return RIG_OK;
    if (rig_status s = lost(); s != RIG_OK) return s;
    if (interrupted())
      return fail(RIG_INTERRUPTED, "wait for %s value %llu interrupted", device,
                  static_cast<unsigned long long>(value));
    if (deadline.passed())
      return fail(RIG_TIMEOUT, "%s did not reach value %llu in time (reached %llu)", device,
                  static_cast<unsigned long long>(value), static_cast<unsigned long long>(signaled()));
    if (Clock::now() < spin_until) {
      for (int i = 0; i < 32; ++i) cpu_relax();
      continue;
    }
    if (rig_status s = check_faults(); s != RIG_OK) return s;
    auto nap = slice;
    if (!deadline.is_forever()) {
      auto left = duration_cast<microseconds>(deadline.at - Clock::now());
      if (left < nap) nap = std::max(left, microseconds(0));
    }
    std::this_thread::sleep_for(nap);
    slice = std::min(slice * 2, microseconds(1000));
  }
}

}  // namespace rig::stream
