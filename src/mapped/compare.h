// Comparing a mapping with a reference without trusting that the mapping can be read. A PROT_NONE mapping
// or a file truncated under its mapping would kill the caller with SIGSEGV or SIGBUS on a plain memcmp;
// the probe must answer Inconclusive instead.
#pragma once

#include <cstddef>

namespace rig::mapped {

enum class Compared { equal, differ, unreadable };

// Compares map[0, n) with ref[0, n) (ref must be readable), after checking that every page of the map can
// be read. On differ or unreadable, *at is the first offending byte (for unreadable, the first byte of
// the first page the kernel could not read). A mapping whose protection changes during the call is the
// caller's race.
Compared compare_mapping(const void *map, const void *ref, size_t n, size_t *at);

// The first offset where a and b differ, or n.
size_t first_difference(const void *a, const void *b, size_t n);

}  // namespace rig::mapped
