// The process-wide table of host ranges registered with a driver. Every registration goes through it, so
// a range registered twice or overlapping a live one is refused before the driver is called (HIP answers
// success there: docs/mapped.md), and a range whose release failed stays listed: it may still
// be registered with the driver and must not be unmapped.
#pragma once

#include <rig.h>

#include <cstddef>
#include <functional>

namespace rig::mapped {

// Calls `do_register` only if [base, base+length) overlaps no listed range, and lists the range when it
// returns OK. RIG_BUSY (with the overlapping range in the message) otherwise. Holds the table's lock while
// the driver registers, so two overlapping registrations cannot race past the check.
rig_status table_register(const void *base, size_t length, const std::function<rig_status()> &do_register);
// The same, recording `owner` (the registering driver's identity) so that only it may unregister the range.
rig_status table_register(const void *base, size_t length, const void *owner,
                          const std::function<rig_status()> &do_register);

// Calls `do_unregister` for the range listed at `base`; unlists it only when that returns OK.
// RIG_INVALID_ARGUMENT if no range starts at base.
rig_status table_unregister(const void *base, const std::function<rig_status()> &do_unregister);
// The same, and RIG_INVALID_ARGUMENT if the range was registered with another owner (a null owner in
// either call matches any), so one device cannot unregister another's range through its driver.
rig_status table_unregister(const void *base, const void *owner, const std::function<rig_status()> &do_unregister);

// True if any listed range overlaps [base, base+length) (length 0: the byte at base).
bool table_is_registered(const void *base, size_t length);

}  // namespace rig::mapped
