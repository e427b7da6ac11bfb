// The fake stream library's memory (fake_stream.h): where a device address or a host pointer leads (device
// memory, pinned memory, registrations, false registrations and their shadows), what a registration could
// really serve, and device memory's arena.
#pragma once

#include "state.h"

namespace fake_stream {

// ----- addresses -----------------------------------------------------------------------------------------

// The region holding [p, p+n) (whole range), or null. Caller holds the lock.
inline Region *find(uintptr_t p, size_t n) {
  auto &s = state();
  auto it = s.regions.upper_bound(p);
  if (it == s.regions.begin()) return nullptr;
  --it;
  Region &r = it->second;
  if (p < r.begin || p - r.begin > r.length) return nullptr;
  if (n <= r.length - (p - r.begin)) return &r;
  // Unified addressing: registrations that touch are one range to the device, so a range spanning
  // adjacent registrations (rig registers only the pages of a wrap not registered yet) is reachable.
  if (r.kind != Kind::registered || r.shadow) return nullptr;
  uintptr_t end = r.begin + r.length;
  for (auto next = std::next(it); end < p + n; ++next) {
    if (next == s.regions.end() || next->first != end || next->second.kind != Kind::registered || next->second.shadow)
      return nullptr;
    end += next->second.length;
  }
  return &r;
}

// The latest false registration holding [p, p+n) (host addresses), or null. Caller holds the lock.
inline FalseRegistration *find_false(uintptr_t p, size_t n) {
  auto &v = state().false_registrations;
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    if (p >= it->begin && p - it->begin <= it->length && n <= it->length - (p - it->begin)) return &*it;
  return nullptr;
}

// Where the device reads or writes [a, a+n) given a device address: device memory, pinned memory, a
// registered range (at its alias where the face moves it; a registration with wrong bytes: its shadow).
// Null where no such memory holds it. Caller holds the lock.
inline char *device_view(uintptr_t a, size_t n, Region **region = nullptr) {
  uintptr_t alias = face().registered_alias;
  Region *r = nullptr;
  uintptr_t host = a;
  if (alias && a >= alias) {
    host = a - alias;
    r = find(host, n);
    if (!r || r->kind != Kind::registered) return nullptr;
  } else {
    r = find(a, n);
    if (!r || (alias && r->kind == Kind::registered)) return nullptr;  // a registered range's raw host pointer
  }
  if (region) *region = r;
  if (r->kind == Kind::registered && r->shadow) return r->shadow + (host - r->begin);
  return reinterpret_cast<char *>(host);
}

// Whether a copy engine's range [a, a+n) (a device address) spans two registrations: a copy reaches host
// memory through one registration, and the driver refuses one that spans two (kernels reach adjacent
// registrations as one range: find). Caller holds the lock.
inline bool spans_registrations(uintptr_t a, size_t n) {
  uintptr_t alias = face().registered_alias;
  if (alias && a < alias) return false;
  uintptr_t p = alias ? a - alias : a;
  Region *r = find(p, n);
  return r && r->kind == Kind::registered && n > r->length - (p - r->begin);
}

// A host range's device address (registered or pinned memory), as the host-device-pointer call answers.
// Caller holds the lock.
inline uintptr_t device_address_of(const Region &r, uintptr_t host) {
  if (r.shadow) return reinterpret_cast<uintptr_t>(r.shadow) + (host - r.begin);
  return r.kind == Kind::registered ? host + face().registered_alias : host;
}

// ----- what a registration could really serve (Face::false_registrations) ------------------------------

inline bool on_tmpfs(const std::string &path) {
  if (path.rfind("/memfd:", 0) == 0 || path.rfind("/dev/shm/", 0) == 0) return true;
  std::string p = path;
  const std::string deleted = " (deleted)";
  if (p.size() > deleted.size() && p.compare(p.size() - deleted.size(), deleted.size(), deleted) == 0)
    p.erase(p.size() - deleted.size());
  struct statfs st;
  return !p.empty() && p[0] == '/' && statfs(p.c_str(), &st) == 0 && st.f_type == 0x01021994;  // TMPFS_MAGIC
}

// Whether [b, e) overlaps a registration (or memory the library allocated, which counts as registered).
// Caller holds the lock.
inline bool overlaps_registration(uintptr_t b, uintptr_t e, bool registered_only) {
  auto &s = state();
  auto counts = [&](const Region &r) { return registered_only ? r.kind == Kind::registered : r.kind != Kind::shadow; };
  auto it = s.regions.lower_bound(b);
  if (it != s.regions.end() && it->first < e && counts(it->second)) return true;
  if (it != s.regions.begin()) {
    auto prev = std::prev(it);
    if (counts(prev->second) && prev->first + prev->second.length > b) return true;
  }
  return false;
}

// Why a registration of [b, e) could not serve (the seed's list), or "" where it can. `unmapped` is set
// where part of the range is not mapped at all (the library refuses that). Caller holds the lock.
inline std::string cannot_serve(uintptr_t b, uintptr_t e, bool *unmapped, bool *readable) {
  *unmapped = false;
  *readable = true;
  uintptr_t covered = b;
  std::string why;
  for (const fake_gpu::Mapping &m : fake_gpu::mappings_over(b, e)) {
    if (m.begin > covered) break;
    covered = std::max(covered, m.end);
    if (m.perms.size() >= 1 && m.perms[0] != 'r') {
      *readable = false;
      why = "a PROT_NONE mapping";
    } else if (why.empty() && on_tmpfs(m.path)) {
      why = "a file on tmpfs (" + m.path + ")";
    }
  }
  if (covered < e) *unmapped = true;
  if (why.empty()) {
    bool overlaps = overlaps_registration(b, e, true);
    for (auto &f : state().false_registrations) overlaps |= f.begin < e && f.begin + f.length > b;
    if (overlaps) why = "a range overlapping a registration";
  }
  return why;
}

// ----- memory --------------------------------------------------------------------------------------------

// Counts a new region of the library's memory. Caller holds the lock.
inline void add_region(const Region &r) {
  state().regions[r.begin] = r;
  ++state().count.live_allocations;
}

// Frees a region of `kind` made by the library (device memory or pinned host memory). Takes the lock.
inline Result free_region(uintptr_t p, Kind kind) {
  Region r;
  {
    std::lock_guard g(state().lock);
    auto it = state().regions.find(p);
    if (it == state().regions.end() || it->second.kind != kind) return ERROR_INVALID_VALUE;
    r = it->second;
    state().regions.erase(it);
    --state().count.live_allocations;
  }
  if (kind == Kind::device)
    state().memory.release(p, r.length);
  else
    std::free(reinterpret_cast<void *>(p));
  return SUCCESS;
}

// Where an upload reads [src, src+n) and what it costs a KiB: through a false registration the device sees
// its shadow (and a registration with wrong bytes, its own); otherwise the host's bytes. `pageable` is set
// for memory neither pinned nor registered. Caller holds the lock.
inline const char *upload_source(const void *src, size_t n, long long *ns_per_kib, bool *pageable) {
  auto &s = state();
  auto p = reinterpret_cast<uintptr_t>(src);
  *pageable = false;
  if (FalseRegistration *f = find_false(p, n)) {
    *ns_per_kib = s.sw.registered_upload_ns_per_kib;
    return f->shadow + (p - f->begin);
  }
  Region *r = find(p, n);
  if (r && r->kind == Kind::registered) {
    *ns_per_kib = r->file ? s.sw.registered_upload_ns_per_kib : s.sw.pinned_upload_ns_per_kib;
    if (r->file) ++s.count.file_uploads;
    if (r->shadow) return r->shadow + (p - r->begin);
  } else if (r && r->kind == Kind::host) {
    *ns_per_kib = s.sw.pinned_upload_ns_per_kib;
  } else {
    *ns_per_kib = s.sw.pageable_upload_ns_per_kib;
    *pageable = true;
  }
  return static_cast<const char *>(src);
}

// ----- device memory and interprocess handles (common/fake_ipc.h) ---------------------------------------

// Device memory: a shared-memory arena of its own, never the process's heap or any host page (on a GPU,
// device memory and host memory never share an address: a registration of host pages must not overlap an
// allocation), and shared so that an IPC handle can name it to another process.
inline fake_ipc::Arena &arena() {
  static fake_ipc::Arena &a = *new fake_ipc::Arena;  // never destroyed: streams may touch memory at exit
  return a;
}
inline void *arena_obtain(size_t bytes) { return arena().allocate(bytes); }
inline void arena_give_back(void *p, size_t bytes) { arena().release(p, bytes); }

// The library's answer to a handle it cannot open: bytes that name nothing of the fake's are invalid
// values; a handle of this process, a context's mistake; what an exited or closing exporter named, gone.
inline Result refused(fake_ipc::Refusal why) {
  switch (why) {
    case fake_ipc::Refusal::same_process: return ERROR_INVALID_CONTEXT;
    case fake_ipc::Refusal::gone: return ERROR_INVALID_HANDLE;
    default: return ERROR_INVALID_VALUE;
  }
}

}  // namespace fake_stream
