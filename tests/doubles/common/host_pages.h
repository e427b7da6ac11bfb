// The test doubles' view of the process's host pages (/proc/self/maps): which ranges are mapped writable
// (drivers register other pages only read-only) and which are a file's (a registered file mapping may be
// modelled slower than registered anonymous memory). Shared by the fake libcuda, the fake HIP runtime and
// the mapped tests' registering double.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fake_gpu {

// One line of /proc/self/maps.
struct Mapping {
  uintptr_t begin, end;
  std::string perms, path;
};

// The mappings that overlap [b, e), in address order.
inline std::vector<Mapping> mappings_over(uintptr_t b, uintptr_t e) {
  std::vector<Mapping> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode;
    std::getline(in, path);
    path.erase(0, path.find_first_not_of(' '));
    size_t dash = range.find('-');
    Mapping m{std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16),
              perms, path};
    if (m.end > b && m.begin < e) out.push_back(m);
  }
  return out;
}

// Whether every byte of [b, e) is mapped writable: the drivers register other pages only read-only (CUDA's
// and HIP's read-only registration flag), as the real ones do.
inline bool writable(uintptr_t b, uintptr_t e) {
  uintptr_t covered = b;
  for (const Mapping &m : mappings_over(b, e)) {
    if (m.begin > covered) return false;
    if (m.perms.size() < 2 || m.perms[1] != 'w') return false;
    covered = std::max(covered, m.end);
  }
  return covered >= e;
}

// Whether any byte of [b, e) is a file's page (a mapping with a path, not anonymous memory, the heap or the
// stack): the doubles model a registered file mapping's uploads apart from registered anonymous memory,
// which a driver pins as it pins its own allocations.
inline bool file_backed(uintptr_t b, uintptr_t e) {
  for (const Mapping &m : mappings_over(b, e))
    if (!m.path.empty() && m.path[0] == '/') return true;
  return false;
}

}  // namespace fake_gpu
