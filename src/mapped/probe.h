// The self-test (seed: probe_with): two disjoint windows of a mapping registered, copied to the device and
// back, compared with an independent read of the file, timed against a staged copy, and released.
#pragma once

#include <rig_mapped.h>

#include <cstddef>
#include <functional>
#include <string>

#include "mapped/verdict.h"

namespace rig::mapped {

// 64 KiB: the largest page size in use, so that the two windows never share a page.
inline constexpr size_t window_unit = 64 * 1024;
// Each side of the speed test keeps its best of this many runs.
inline constexpr int timed_runs = 7;
// Tries of a release the probe makes in its cleanup (after the checked release, if it reached it).
inline constexpr int cleanup_tries = 2;

struct ProbeOptions {
  double min_relative_speed = 0.8;
  std::function<void(const std::string &)> log;  // may be empty
};

// The window length for a region of `length` bytes: half of it, rounded down to window_unit.
inline size_t window_length(size_t length) { return (length / 2) / window_unit * window_unit; }

// Runs the self-test over `ops` (fields already checked non-null by the caller). Returns OK with *out set,
// or the OUT_OF_MEMORY / INTERRUPTED a callback returned (after everything was released or tried), or
// OUT_OF_MEMORY if rig itself ran out. Never throws.
rig_status probe_with(const rig_probe_ops &ops, const void *map, const void *reference, size_t length,
                      const ProbeOptions &options, Verdict *out) noexcept;

}  // namespace rig::mapped
