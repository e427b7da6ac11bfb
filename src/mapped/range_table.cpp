#include "mapped/range_table.h"

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

#include "core/error.h"

namespace rig::mapped {
namespace {

struct Range {
  uintptr_t end;
  const void *owner;
};

struct Table {
  std::mutex lock;
  std::map<uintptr_t, Range> ranges;  // begin -> (end, owner), disjoint

  // The listed range overlapping [b, e), or end().
  std::map<uintptr_t, Range>::iterator overlap(uintptr_t b, uintptr_t e) {
    auto it = ranges.lower_bound(b);
    if (it != ranges.end() && it->first < e) return it;
    if (it != ranges.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > b) return prev;
    }
    return ranges.end();
  }
};

// Leaked on purpose: a range left registered by a failed release stays listed through static destruction.
Table &table() {
  static Table *t = new Table;
  return *t;
}

}  // namespace

rig_status table_register(const void *base, size_t length, const std::function<rig_status()> &do_register) {
  return table_register(base, length, nullptr, do_register);
}

rig_status table_register(const void *base, size_t length, const void *owner,
                          const std::function<rig_status()> &do_register) {
  auto b = reinterpret_cast<uintptr_t>(base);
  if (!base || length == 0 || b + length < b)
    return fail(RIG_INVALID_ARGUMENT, "register: null, empty or wrapping range [%p, +%zu)", base, length);
  auto &t = table();
  std::lock_guard g(t.lock);
  auto it = t.overlap(b, b + length);
  if (it != t.ranges.end())
    return fail(RIG_BUSY, "register: [%p, +%zu) overlaps the registered range [%p, %p)", base, length,
                reinterpret_cast<void *>(it->first), reinterpret_cast<void *>(it->second.end));
  // Listed before the driver is called, so that running out of memory for the node happens before a
  // registration exists that the table would not know; unlisted again if the driver refuses. Nobody sees
  // the entry meanwhile: every reader takes the lock.
  auto listed = t.ranges.emplace(b, Range{b + length, owner}).first;
  rig_status s = do_register();
  if (s != RIG_OK) t.ranges.erase(listed);
  return s;
}

rig_status table_unregister(const void *base, const std::function<rig_status()> &do_unregister) {
  return table_unregister(base, nullptr, do_unregister);
}

rig_status table_unregister(const void *base, const void *owner, const std::function<rig_status()> &do_unregister) {
  auto b = reinterpret_cast<uintptr_t>(base);
  auto &t = table();
  std::lock_guard g(t.lock);
  auto it = t.ranges.find(b);
  if (it == t.ranges.end()) return fail(RIG_INVALID_ARGUMENT, "unregister: no registered range starts at %p", base);
  if (owner && it->second.owner && it->second.owner != owner)
    return fail(RIG_INVALID_ARGUMENT, "unregister: the range at %p was registered through another device", base);
  rig_status s = do_unregister();
  if (s == RIG_OK) t.ranges.erase(it);
  return s;
}

bool table_is_registered(const void *base, size_t length) {
  auto b = reinterpret_cast<uintptr_t>(base);
  auto &t = table();
  std::lock_guard g(t.lock);
  uintptr_t e = b + (length ? length : 1);
  if (e < b) e = UINTPTR_MAX;  // a range past the end of the address space: overlap up to the end
  return t.overlap(b, e) != t.ranges.end();
}

}  // namespace rig::mapped
