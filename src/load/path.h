// Which path a load takes onto a device, decided by the device's verdict: the static table first
// (mapped/static_table.h), then, where it asks for the self-test, the probe (mapped/device_probe.h) on a
// scratch mapping of the file, cached.
#pragma once

#include <rig_load.h>

#include <string>
#include <vector>

#include "load/file.h"

namespace rig {
class Device;
}

namespace rig::load {

// What the verdict allows on one device.
struct Allowed {
  bool direct = false;      // Not_needed: the device reads the mapping itself
  bool registered = false;  // Usable (probe)
  std::string verdict;      // the verdict in words, for messages and stats
};

// The static verdict alone (probe == false), or with the cached probe where the static table defers to it.
// The cache: in this process's memory (src/load/path.cpp), keyed by the file's file system (st_dev) and the
// device's framework, name and model; only cacheable verdicts (Usable, Refused (Wrong_bytes)) enter it.
// Waits for the probe (a driver's registration and copies); holds the cache's lock only to look up/insert.
rig_status allowed_on(Device &device, const File &file, bool probe, Allowed *out);

// The path a load takes onto `devices` (placement order) and why, in words for rig_load_stats.
struct Route {
  rig_load_path path = RIG_LOAD_PATH_STAGED;
  bool kept = false;  // every device reads the file's kept registration (File::keep_on)
  std::string why;
};

// The load's path as `asked` (RIG_LOAD_PATH_AUTO decides): the file's kept registration where every device
// has one, else from every device's verdict (allowed_on, probing only where the registered path is asked
// for). RIG_UNSUPPORTED saying which verdicts refuse an asked path; RIG_INVALID_ARGUMENT for an unknown
// one. Waits for a probe as allowed_on does.
rig_status choose_path(const std::vector<Device *> &devices, File &file, rig_load_path asked, Route *out);

// The route of a load that gathers slices along a later dim: the staged path, whatever `asked` (a window's
// copy of each run would be one small copy per row; staging gathers them into one). RIG_INVALID_ARGUMENT for
// an unknown path. Waits for nothing.
rig_status gather_route(rig_load_path asked, Route *out);

// The O_DIRECT descriptors (one per shard) a staged load reads stream bytes [lo, hi) through, or none for
// buffered reads: where `io` asks for it, or, for RIG_LOAD_IO_AUTO, where under half of the range is in the
// page cache and O_DIRECT reads this file system at least as fast as buffered pread (read_mode.h: timed
// with `readers` parallel reads once per file system). Appends the choice to `why`. Never fails: a file
// system that refuses O_DIRECT is read buffered, and says so. Waits for the timing reads where it makes them.
std::vector<int> open_direct(const File &file, rig_load_io io, uint64_t lo, uint64_t hi, unsigned readers,
                             std::string *why);

// Forgets every cached verdict (tests).
void forget_probes();

}  // namespace rig::load
