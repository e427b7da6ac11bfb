// The range table: every host range rig registers with a driver (cuMemHostRegister, hipHostRegister) is
// listed here, one table for the whole process, owned by the engine. Drivers only make the raw call
// (HostRegistration::register_range / unregister_range); callers never call those themselves, they ask
// this table, so a page is never registered twice with a driver.
//
// Contract:
//  - Two kinds of entries. A counted entry (acquire/release) is a whole-page range shared by every use of
//    the same driver family ("CUDA", "HIP": their registrations are PORTABLE, so one serves every device
//    of the family); it is unregistered when its count drops to zero. Borrows of host memory and the
//    loader use counted entries. An exclusive entry (register_exclusive) is the caller's own range, owned
//    by one device, refused if it shares a page with any entry; mapped registration (rig_host_register,
//    the self-test probe) uses it, because the probe must see the driver register exactly its window.
//  - Pages: counted entries cover the pages enclosing [host, host+length); so a wrap of any alignment
//    registers, and wraps within the pages of one entry share its registration. A range partly inside
//    entries (neighbours on a page: two heap allocations, a struct and its payload) counts those entries and
//    registers only the pages between them, each run of them as a new entry: entries are never merged or
//    replaced, since work through them may still be running. Such a range spans several registrations,
//    and a device copies through one registration at a time (the CUDA driver refuses a copy whose host
//    range spans two), so acquire says where the registrations meet inside the range (its seams) and the
//    driver splits each copy there, in the same hand-over (drivers/stream/prepared.cpp).
//  - A release the driver refuses leaves the entry listed (the pages may still be registered: never unmap
//    them): is_registered stays true; a counted entry left so is counted again by the next acquire and its
//    release is retried at the next release that brings it to zero.
//  - Holds the table's one lock while the driver registers or unregisters, so two overlapping
//    registrations cannot race past the check. Never on the submit path.
#pragma once

#include <rig.h>

#include <cstddef>
#include <vector>

namespace rig {

class Device;

namespace range_table {

// The host's page size (sysconf), the unit of counted entries.
size_t page_size() noexcept;

// Where registrations meet inside a range acquired: offsets from its start, ascending, none at 0.
using Seams = std::vector<size_t>;

// Counts one use of the pages enclosing [host, host+length) (length > 0) for `device`'s driver family:
// entries of that family on them are counted; the pages between them are registered through `device`'s
// driver (read-only flag where read_only and the device supports it) as new entries. `seams` (nullable)
// receives where the range crosses from one entry to the next. RIG_UNMAPPABLE where an entry on them is
// read-only and read_only is false; RIG_BUSY (naming the entry) where a page is in an exclusive entry or
// another family's; RIG_UNSUPPORTED where the driver registers no host memory; the driver's status where it
// refuses (nothing is left counted or registered then). Blocks on the table's lock and the driver's
// registration.
rig_status acquire(Device &device, const void *host, size_t length, bool read_only, Seams *seams = nullptr);
// Gives back one use counted by acquire(device, host, length, ...): entries brought to zero are
// unregistered through the driver that registered them. RIG_OK, the first failing unregister's status
// (the entry stays listed), or RIG_INVALID_ARGUMENT where the pages are not counted for device's family.
rig_status release(Device &device, const void *host, size_t length);

// Registers exactly [host, host+length) through `device`'s driver (read-only flag where read_only and the
// device supports it) as an exclusive entry owned by `device`. RIG_BUSY (naming the entry) where any
// page of it is in a listed entry; RIG_INVALID_ARGUMENT for a null, empty or wrapping range;
// RIG_UNSUPPORTED where the driver registers no host memory; the driver's status where it refuses.
rig_status register_exclusive(Device &device, void *host, size_t length, bool read_only);
// Unregisters the exclusive entry starting at `host` through `device`'s driver; unlisted only when the
// driver says OK. RIG_INVALID_ARGUMENT where no exclusive entry starts at host or another device owns it.
rig_status unregister_exclusive(Device &device, void *host);

// True if any listed entry (either kind, any device) overlaps [host, host+length) (length 0: the byte at
// host). A pure read under the table's lock.
bool is_registered(const void *host, size_t length);

}  // namespace range_table
}  // namespace rig
