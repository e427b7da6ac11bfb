#include "drivers/vulkan/host_pages.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <unistd.h>
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace rig::vulkan {

std::string host_pages_refusal(const void *host, size_t length, bool read_only) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(host), end = begin + length;
  FILE *maps = std::fopen("/proc/self/maps", "re");
  if (!maps) return "the process's mappings (/proc/self/maps) cannot be read, so a file mapping cannot be told apart";
  // Mappings are listed in ascending order: walk those that meet the range and check each covers on from the
  // last, so a hole (unmapped pages) is found too.
  uintptr_t covered = begin;
  std::vector<std::pair<uintptr_t, uintptr_t>> copy_on_write;  // private file pages, made the process's own
  char line[4096], why[512] = "";
  while (covered < end && std::fgets(line, sizeof line, maps)) {
    uintptr_t lo = 0, hi = 0;
    char perms[8] = "";
    unsigned long long inode = 0;
    int path_at = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %*s %*s %llu %n", &lo, &hi, perms, &inode, &path_at) < 4)
      continue;
    if (hi <= covered) continue;
    if (lo > covered) break;  // a hole: the pages at `covered` are not mapped
    char *path = line + path_at;
    path[std::strcspn(path, "\n")] = '\0';
    const bool file = inode != 0 || (path[0] != '\0' && path[0] != '[');
    // A private writable mapping of a file (a program's globals) is the process's copy-on-write memory:
    // once written, its pages are anonymous. A shared or read-only one holds the file's own pages.
    const bool private_copy = file && perms[1] == 'w' && perms[3] == 'p';
    if (file && !private_copy) {
      std::snprintf(why, sizeof why, "it lies in a file mapping (%s): a device holding a file's pages is the "
                    "kernel hazard mapped registration refuses (docs/mapped.md); copy the bytes into anonymous "
                    "memory (malloc) first", path[0] ? path : "an unnamed file");
      break;
    }
    if (perms[0] != 'r' || (!read_only && perms[1] != 'w')) {
      std::snprintf(why, sizeof why, "its pages are %s (%.4s), and a %s borrow needs them %s", perms[0] != 'r' ?
                    "not readable" : "read-only", perms, read_only ? "read-only" : "writable",
                    read_only ? "readable" : "writable");
      break;
    }
    if (private_copy) copy_on_write.emplace_back(std::max(lo, begin), std::min(hi, end));
    covered = hi;
  }
  std::fclose(maps);
  if (why[0]) return why;
  if (covered < end) return "part of it is not mapped in this process";
  // Pages of a private file mapping not yet written are still the file's: write each once, atomically and
  // with its own value (a concurrent write of the caller's is neither lost nor changed), so the import holds
  // the process's copy and never the file's page.
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (auto [lo, hi] : copy_on_write)
    for (uintptr_t at = lo; at < hi; at = (at & ~(page - 1)) + page)
      __atomic_fetch_or(reinterpret_cast<unsigned char *>(at), static_cast<unsigned char>(0), __ATOMIC_RELAXED);
  return "";
}

}  // namespace rig::vulkan
