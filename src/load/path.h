// Which path a load takes onto a device, decided by the device's verdict: rig_static_verdict first, then,
// where the static table asks for the self-test, rig_probe on a scratch mapping of the file, cached.
#pragma once

#include <rig_load.h>
#include <rig_mapped.h>

#include <string>

#include "load/file.h"

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
rig_status allowed_on(rig_device device, const File &file, bool probe, Allowed *out);

// Forgets every cached verdict (tests).
void forget_probes();

}  // namespace rig::load
