#include "mapped/range_table.h"

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

#include "core/error.h"

namespace rig::mapped {
namespace {

struct Table {
  std::mutex lock;
  std::map<uintptr_t, uintptr_t> ranges;  // begin -> end, disjoint

  // The listed range overlapping [b, e), or end().
  std::map<uintptr_t, uintptr_t>::iterator overlap(uintptr_t b, uintptr_t e) {
    auto it = ranges.lower_bound(b);
    if (it != ranges.end() && it->first < e) return it;
    if (it != ranges.begin()) {
      auto prev = std::prev(it);
      if (prev->second > b) return prev;
    }
    return ranges.end();
  }
};

Table &table() {
  static Table t;
  return t;
}

}  // namespace

rig_status table_register(const void *base, size_t length, const std::function<rig_status()> &do_register) {
  auto b = reinterpret_cast<uintptr_t>(base);
  if (length == 0 || b + length < b) return fail(RIG_INVALID_ARGUMENT, "register: empty or wrapping range");
  auto &t = table();
  std::lock_guard g(t.lock);
  auto it = t.overlap(b, b + length);
  if (it != t.ranges.end())
    return fail(RIG_BUSY, "register: [%p, +%zu) overlaps the registered range [%p, %p)", base, length,
                reinterpret_cast<void *>(it->first), reinterpret_cast<void *>(it->second));
  rig_status s = do_register();
  if (s == RIG_OK) t.ranges.emplace(b, b + length);
  return s;
}

rig_status table_unregister(const void *base, const std::function<rig_status()> &do_unregister) {
  auto b = reinterpret_cast<uintptr_t>(base);
  auto &t = table();
  std::lock_guard g(t.lock);
  auto it = t.ranges.find(b);
  if (it == t.ranges.end()) return fail(RIG_INVALID_ARGUMENT, "unregister: no registered range starts at %p", base);
  rig_status s = do_unregister();
  if (s == RIG_OK) t.ranges.erase(it);
  return s;
}

bool table_is_registered(const void *base, size_t length) {
  auto b = reinterpret_cast<uintptr_t>(base);
  auto &t = table();
  std::lock_guard g(t.lock);
  return t.overlap(b, b + (length ? length : 1)) != t.ranges.end();
}

}  // namespace rig::mapped
