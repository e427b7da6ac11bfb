#include "core/range_table.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/error.h"

namespace rig::range_table {
namespace {

struct Entry {
  uintptr_t end;               // exclusive: exactly the caller's range; counted: whole pages
  HostRegistration *driver;    // registered through it, unregistered through it (devices live for good)
  const Device *owner;         // exclusive entries: the one device that may unregister; counted: null
  std::string family;          // counted entries: the framework whose devices share it
  bool read_only;              // registered with the driver's read-only flag
  unsigned count;              // counted entries: uses; 0 while a failed release keeps it listed
};

uintptr_t page_down(uintptr_t a) { return a / page_size() * page_size(); }
uintptr_t page_up(uintptr_t a) {
  uintptr_t down = page_down(a);
  return down == a ? a : down + page_size();  // 0 where it wraps: callers refuse wrapping ranges first
}

struct Table {
  std::mutex lock;
  std::map<uintptr_t, Entry> entries;  // begin -> entry; the entries' pages are disjoint

  // The first entry whose pages reach past page_down(b), in begin order; with `until` the caller walks
  // while it->first < e. Entries' pages are disjoint, so at most the one before lower_bound(b) starts
  // before b and still overlaps.
  std::map<uintptr_t, Entry>::iterator first_touching(uintptr_t b) {
    auto it = entries.lower_bound(b);
    if (it != entries.begin()) {
      auto prev = std::prev(it);
      if (page_up(prev->second.end) > page_down(b)) return prev;
    }
    return it;
  }
  // Whether entry `it` shares a page with [b, e).
  static bool shares_page(std::map<uintptr_t, Entry>::const_iterator it, uintptr_t b, uintptr_t e) {
    return page_down(it->first) < page_up(e) && page_up(it->second.end) > page_down(b);
  }
};

// Leaked on purpose: a range left registered by a failed release stays listed through static destruction,
// and releases may run at exit.
Table &table() {
  static Table *t = new Table;
  return *t;
}

rig_status driver_of(Device &device, const char *what, HostRegistration **out) {
  HostRegistration *hr = device.driver().host_registration();
  if (!hr)
    return fail(RIG_UNSUPPORTED, "%s: the %s driver of %s registers no host memory", what,
                device.info().framework.c_str(), device.info().name.c_str());
  *out = hr;
  return RIG_OK;
}

// The read-only flag only where the device supports it: where it does not (attribute 113 reported 0 on a
// B300) registering with it fails (801); a PROT_READ mapping then fails to register with the driver's words.
bool flag_for(HostRegistration &hr, bool read_only) { return read_only && hr.read_only_supported() == 1; }

rig_status busy(uintptr_t b, uintptr_t e, const std::map<uintptr_t, Entry>::value_type &entry) {
  const Entry &n = entry.second;
  return fail(RIG_BUSY, "register: [%p, %p) overlaps the registered range [%p, %p) (%s)",
              reinterpret_cast<void *>(b), reinterpret_cast<void *>(e), reinterpret_cast<void *>(entry.first),
              reinterpret_cast<void *>(n.end),
              n.owner ? "registered through rig_host_register or the probe"
                      : ("shared by borrows of " + n.family + " devices").c_str());
}

bool wraps(const void *host, size_t length) {
  auto b = reinterpret_cast<uintptr_t>(host);
  return b + length < b || page_up(b + length) < b + length;
}

}  // namespace

size_t page_size() noexcept {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

rig_status acquire(Device &device, const void *host, size_t length, bool read_only, Seams *seams) {
  if (!host || length == 0 || wraps(host, length))
    return fail(RIG_INVALID_ARGUMENT, "register: null, empty or wrapping range [%p, +%zu)", host, length);
  HostRegistration *hr = nullptr;
  if (rig_status s = driver_of(device, "borrow", &hr)) return s;
  const std::string &family = device.info().framework;
  auto h = reinterpret_cast<uintptr_t>(host);
  uintptr_t b = page_down(h);
  uintptr_t e = page_up(h + length);
  auto &t = table();
  std::lock_guard g(t.lock);

  // Pages already registered for the family are shared; the pages between them are registered as new
  // entries. An entry is never replaced by a merged one (work through it may still be running), so a
  // range may span several entries: its seams say where, and the driver splits each copy there (a copy
  // whose host range spans two registrations is refused by the CUDA driver). Everything is checked before
  // anything is registered, so a refusal changes nothing.
  std::vector<std::pair<uintptr_t, uintptr_t>> gaps;  // [begin, end) pages to register, in order
  std::vector<uintptr_t> cuts;                         // where a registration begins inside (h, h + length)
  uintptr_t at = b;
  for (auto it = t.first_touching(b); it != t.entries.end() && it->first < e; ++it) {
    const Entry &n = it->second;
    if (n.owner || n.family != family) return busy(b, e, *it);
    if (n.read_only && !read_only)
      return fail(RIG_UNMAPPABLE,
                  "[%p, %p) shares pages with [%p, %p), registered read-only for a read-only wrap; a writable "
                  "wrap cannot use them",
                  reinterpret_cast<void *>(b), reinterpret_cast<void *>(e), reinterpret_cast<void *>(it->first),
                  reinterpret_cast<void *>(n.end));
    if (it->first > at) gaps.emplace_back(at, it->first);
    if (it->first > h) cuts.push_back(it->first);
    at = n.end;
    if (at < h + length && at > h) cuts.push_back(at);
  }
  if (at < e) gaps.emplace_back(at, e);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  if (seams) {
    seams->clear();
    for (uintptr_t c : cuts) seams->push_back(c - h);
  }

  // Each gap as one new entry, listed before the driver is called, so that running out of memory for a
  // node happens before a registration exists that the table would not know. A gap the driver refuses
  // takes back the gaps this call registered (nothing has used them yet).
  bool flag = flag_for(*hr, read_only);
  std::vector<std::map<uintptr_t, Entry>::iterator> made;
  made.reserve(gaps.size());
  for (auto [gb, ge] : gaps) {
    auto listed = t.entries.emplace(gb, Entry{ge, hr, nullptr, family, flag, 1}).first;
    rig_status s = hr->register_range(reinterpret_cast<void *>(gb), ge - gb, flag);
    if (s != RIG_OK) {
      t.entries.erase(listed);
      std::string why = last_error();
      for (auto m : made)
        if (hr->unregister_range(reinterpret_cast<void *>(m->first)) == RIG_OK) t.entries.erase(m);
        else m->second.count = 0;  // left listed, as a failed release leaves it
      return fail(s, "%s", why.c_str());
    }
    made.push_back(listed);
  }
  // The entries that were there already count this use too.
  for (auto it = t.first_touching(b); it != t.entries.end() && it->first < e; ++it)
    if (std::find(made.begin(), made.end(), it) == made.end()) ++it->second.count;
  return RIG_OK;
}

rig_status release(Device &device, const void *host, size_t length) {
  if (!host || length == 0 || wraps(host, length))
    return fail(RIG_INVALID_ARGUMENT, "release: null, empty or wrapping range [%p, +%zu)", host, length);
  const std::string &family = device.info().framework;
  uintptr_t b = page_down(reinterpret_cast<uintptr_t>(host));
  uintptr_t e = page_up(reinterpret_cast<uintptr_t>(host) + length);
  auto &t = table();
  std::lock_guard g(t.lock);
  // Every page was counted by acquire: check all before giving any back, so a wrong release changes nothing.
  uintptr_t at = b;
  for (auto it = t.first_touching(b); it != t.entries.end() && it->first < e; ++it) {
    if (it->second.owner || it->second.family != family || it->second.count == 0 || it->first > at) break;
    at = it->second.end;
  }
  if (at < e)
    return fail(RIG_INVALID_ARGUMENT, "release: the pages [%p, %p) are not counted for %s devices",
                reinterpret_cast<void *>(b), reinterpret_cast<void *>(e), family.c_str());
  rig_status result = RIG_OK;
  for (auto it = t.first_touching(b); it != t.entries.end() && it->first < e;) {
    if (--it->second.count > 0) {
      ++it;
      continue;
    }
    rig_status s = it->second.driver->unregister_range(reinterpret_cast<void *>(it->first));
    if (s == RIG_OK) {
      it = t.entries.erase(it);
      continue;
    }
    if (result == RIG_OK) result = s;  // stays listed at 0; the message is the driver's
    ++it;
  }
  return result;
}

rig_status register_exclusive(Device &device, void *host, size_t length, bool read_only) {
  if (!host || length == 0 || wraps(host, length))
    return fail(RIG_INVALID_ARGUMENT, "register: null, empty or wrapping range [%p, +%zu)", host, length);
  HostRegistration *hr = nullptr;
  if (rig_status s = driver_of(device, "register", &hr)) return s;
  auto b = reinterpret_cast<uintptr_t>(host);
  uintptr_t e = b + length;
  auto &t = table();
  std::lock_guard g(t.lock);
  // A shared page counts as an overlap: the driver pins whole pages and refuses (CUDA) or silently accepts
  // (HIP) a page registered twice.
  auto it = t.first_touching(b);
  if (it != t.entries.end() && Table::shares_page(it, b, e)) return busy(b, e, *it);
  bool flag = flag_for(*hr, read_only);
  auto listed = t.entries.emplace(b, Entry{e, hr, &device, {}, flag, 1}).first;
  rig_status s = hr->register_range(host, length, flag);
  if (s != RIG_OK) t.entries.erase(listed);
  return s;
}

rig_status unregister_exclusive(Device &device, void *host) {
  auto b = reinterpret_cast<uintptr_t>(host);
  auto &t = table();
  std::lock_guard g(t.lock);
  auto it = t.entries.find(b);
  if (it == t.entries.end() || !it->second.owner)
    return fail(RIG_INVALID_ARGUMENT, "unregister: no range registered through rig_host_register starts at %p", host);
  if (it->second.owner != &device)
    return fail(RIG_INVALID_ARGUMENT, "unregister: the range at %p was registered through another device", host);
  rig_status s = it->second.driver->unregister_range(host);
  if (s == RIG_OK) t.entries.erase(it);
  return s;
}

bool is_registered(const void *host, size_t length) {
  auto b = reinterpret_cast<uintptr_t>(host);
  uintptr_t e = b + (length ? length : 1);
  if (e < b) e = UINTPTR_MAX;  // a range past the end of the address space: overlap up to the end
  auto &t = table();
  std::lock_guard g(t.lock);
  auto it = t.entries.lower_bound(b);
  if (it != t.entries.end() && it->first < e) return true;
  return it != t.entries.begin() && std::prev(it)->second.end > b;
}

}  // namespace rig::range_table
