// One fake GPU library over host memory, for the stream table (src/drivers/stream/calls.h): every call of
// the table implemented once, as fake_<field> with the table's signature, and exported by each double under
// its library's names (fake_cuda.cpp: CUDA's, which are the table's; fake_hip.cpp: HIP's, renamed, with an
// adapter where HIP's signature differs), the way the real drivers share one table. The double's Face
// (face.h) says what differs between the libraries. Included by exactly one file of each double: the calls'
// symbols are aliased in that file, which needs their definitions in the same translation unit.
//
// Model: each GPU is one context (CUDA's primary context, HIP's device); device memory is host memory; each
// stream runs its queue of operations on a worker thread, in order, so work really runs after the enqueueing
// call returns (a missing wait shows as wrong bytes, especially with launch_delay_us/copy_delay_us). A
// failing launch sets the GPU's sticky error: from then on nothing of that GPU runs and its calls answer
// that error, as on a GPU. The switches and counters are listed once, in fake_cuda.h and fake_hip.h.
#pragma once

#include <sys/mman.h>
#include <sys/statfs.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../common/fake_gpu.h"
#include "../common/fake_ipc.h"
#include "../common/fake_pool.h"
#include "drivers/stream/calls.h"
#include "face.h"

// The table's types and values by their own names (this header is a double's whole implementation).
using namespace rig::stream::types;
using namespace rig::stream::values;

// The table's calls, once: fake_init, fake_mem_alloc, ... with the table's signatures (a definition below
// that strays from them fails to compile). Hidden: each double exports them under its own names.
#define FAKE_STREAM_DECLARE(A, field, params, ...) \
  extern "C" __attribute__((visibility("hidden"))) rig::stream::Result fake_##field params;
RIG_STREAM_CALLS(FAKE_STREAM_DECLARE, _)
RIG_STREAM_OPTIONAL_CALLS(FAKE_STREAM_DECLARE, _)
#undef FAKE_STREAM_DECLARE

// Exports fake_<field> as the library's `symbol` (a string: "cuMemAlloc_v2", "hipMalloc"), with the
// table's signature.
#define FAKE_STREAM_EXPORT_AS(field, params, symbol)                                                      \
  extern "C" __attribute__((visibility("default"), alias("fake_" #field), copy(fake_##field))) rig::stream::Result \
      fake_export_##field params __asm__(symbol);

namespace fake_stream {

using namespace rig::stream::types;
using namespace rig::stream::values;
using Clock = std::chrono::steady_clock;

// ----- switches and counters ------------------------------------------------------------------------------

#define FAKE_SWITCHES(X)                                                                                      \
  X(devices, 2) X(integrated, 0) X(integrated_query_fails, 0) X(pageable_host_page_tables, 0)                 \
  X(read_only_supported, 1) X(host_register_supported, 1) X(memops, 1) X(peer_access, 1) X(register_refuse, 0) \
  X(register_refuse_after, 0) X(register_wrong_bytes, 0) X(false_unregister_713, 1) X(unregister_fail, 0)      \
  X(registered_upload_ns_per_kib, 0) X(pinned_upload_ns_per_kib, 0) X(pageable_upload_ns_per_kib, 0)          \
  X(fail_launch_at, 0) X(launch_delay_us, 0) X(copy_delay_us, 0) X(ignore_waits, 0)                          \
  X(pageable_dma_delay_us, 100) X(read_only_pages_need_flag, 0) X(mem_pools, 1) X(device_memory_limit, 0)

struct Switches {
#define FAKE_SWITCH_FIELD(name, initial) long long name = initial;
  FAKE_SWITCHES(FAKE_SWITCH_FIELD)
#undef FAKE_SWITCH_FIELD
};

// Counters of calls, zeroed by the reset switch; the live ones (and the pools', fake_pool.h) are state and
// stay.
#define FAKE_CALL_COUNTERS(X)                                                                                 \
  X(register_calls) X(registers) X(false_successes) X(unregisters) X(launches) X(copies) X(wait_values)        \
  X(write_values) X(event_waits) X(event_records) X(event_queries) X(event_syncs)
#define FAKE_LIVE_COUNTERS(X) X(live_allocations) X(live_streams) X(live_modules) X(live_ipc_mappings) X(file_uploads)

struct Counters {
#define FAKE_COUNTER_FIELD(name) std::atomic<long long> name{0};
  FAKE_CALL_COUNTERS(FAKE_COUNTER_FIELD)
  FAKE_LIVE_COUNTERS(FAKE_COUNTER_FIELD)
#undef FAKE_COUNTER_FIELD
  std::atomic<long long> last_register_flags{-1};
};

// ----- objects ---------------------------------------------------------------------------------------------

struct Gpu;
using FStream = fake_gpu::Stream<Gpu>;  // a stream of the GPU (common/fake_gpu.h)

struct Gpu {
  int ordinal = 0;
  FStream *legacy = nullptr;  // the legacy default stream, made at first use, never destroyed
  std::atomic<int> sticky{0};
  int retains = 0;
  std::set<int> peers;  // ordinals whose memory this GPU's kernels may use
};

enum class Kind { device, host, registered, shadow, ipc };  // ipc: another process's memory, opened

struct Region {
  uintptr_t begin = 0;
  size_t length = 0;
  Kind kind = Kind::device;
  int owner = -1;          // device memory: the owning GPU's ordinal
  unsigned flags = 0;      // registered: the registration flags
  char *shadow = nullptr;  // registered with register_wrong_bytes: what the device sees instead
  bool file = false;       // registered: a file's pages (registered_upload_ns_per_kib applies), else anonymous
                           // memory, pinned as the library's own (pinned_upload_ns_per_kib)
  fake_pool::Pool *pool = nullptr;  // device memory from a stream-ordered pool (common/fake_pool.h)
};

// A registration that answered success but cannot serve (Face::false_registrations): the device reads
// `shadow` instead of the host's pages. Kept apart from the regions, since it may overlap a real
// registration (registered twice).
struct FalseRegistration {
  uintptr_t begin = 0;
  size_t length = 0;
  char *shadow = nullptr;
  std::string why;
};

// One event record: done once the stream reaches it. Records of one event may complete out of order (the
// event recorded on a slow stream, then on a fast one), and a wait or query concerns the record that was
// the latest when it was made; so each record is its own object. An interprocess event's records are
// numbered in its shared page, where the other process sees them complete.
struct FRecord {
  std::atomic<bool> done{false};
  std::shared_ptr<fake_ipc::EventPage> page;  // interprocess: done once the page's completed reaches `number`
  uint64_t number = 0;
  bool ready() const {
    if (page) return page->words()->completed.load(std::memory_order_acquire) >= number;
    return done.load(std::memory_order_acquire);
  }
};

struct FEvent {
  std::atomic<Gpu *> gpu{nullptr};  // made on, then the GPU of the stream it was last recorded on
  std::mutex lock;
  std::shared_ptr<FRecord> latest;  // null: never recorded (queries answer done, waits pass)
  std::shared_ptr<fake_ipc::EventPage> ipc;  // made interprocess, or opened from a handle
  fake_ipc::OwnedFd exported;                // made here: the page's memfd, closed with the event
  bool opened = false;                       // opened: the latest record is the page's, whoever recorded it
  std::shared_ptr<FRecord> current() {
    if (ipc && opened) {
      uint64_t n = ipc->words()->latest.load(std::memory_order_acquire);
      if (n == 0) return nullptr;  // never recorded
      auto r = std::make_shared<FRecord>();
      r->page = ipc;
      r->number = n;
      return r;
    }
    std::lock_guard g(lock);
    return latest;
  }
};

struct FFunction {
  std::string name;
  struct FModule *module = nullptr;
};

struct FModule {
  Gpu *gpu = nullptr;
  std::vector<std::unique_ptr<FFunction>> functions;
};

using FPool = fake_pool::Pool;

inline void *arena_obtain(size_t bytes);  // device memory's source (below)
inline void arena_give_back(void *p, size_t bytes);

struct State {
  std::mutex lock;  // regions, registrations, objects sets, pools
  Switches sw;
  Counters count;
  fake_pool::Pools pools{arena_obtain, arena_give_back, lock};  // device memory within its limit, pools
  std::vector<std::unique_ptr<Gpu>> gpus;
  std::map<uintptr_t, Region> regions;
  std::vector<FalseRegistration> false_registrations;
  // Owners: a destroyed stream or event lives on while something still uses it (a queued operation, a
  // synchronisation draining it), as both libraries allow destroying them with work pending.
  std::map<FStream *, std::shared_ptr<FStream>> streams;
  std::map<FEvent *, std::shared_ptr<FEvent>> events;
  std::set<FModule *> modules;
  long long launches_until_failure = 0;  // counts down from fail_launch_at
  bool initialized = false;
};

inline State &state() {
  static State &s = *new State;  // never destroyed: streams' workers may outlive static destruction
  return s;
}

// The GPU of `ordinal`, made at first use. Caller holds the lock.
inline Gpu *gpu_of(int ordinal) {
  auto &s = state();
  while (static_cast<int>(s.gpus.size()) <= ordinal) {
    s.gpus.push_back(std::make_unique<Gpu>());
    s.gpus.back()->ordinal = static_cast<int>(s.gpus.size()) - 1;
  }
  return s.gpus[ordinal].get();
}

inline thread_local Gpu *current_gpu = nullptr;

// The calling thread's GPU: the one it made current, else device 0 where the face says so, else null.
inline Gpu *current() {
  if (current_gpu || !face().device_zero_current) return current_gpu;
  std::lock_guard g(state().lock);
  return gpu_of(0);
}

inline bool valid_device(int d) { return d >= 0 && d < state().sw.devices; }

inline Context handle(Gpu *g) { return reinterpret_cast<Context>(g); }
inline Gpu *gpu(Context c) { return reinterpret_cast<Gpu *>(c); }
inline FStream *stream(Stream s) { return reinterpret_cast<FStream *>(s); }
inline FEvent *event(Event e) { return reinterpret_cast<FEvent *>(e); }
inline FModule *module(Module m) { return reinterpret_cast<FModule *>(m); }
inline FPool *pool(MemPool p) { return reinterpret_cast<FPool *>(p); }

inline Result sticky_or(Gpu *g, Result r) {
  int s = g ? g->sticky.load(std::memory_order_acquire) : 0;
  return s ? s : r;
}

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

// A host range's device address (registered or pinned memory), as the host-device-pointer call answers.
// Caller holds the lock.
inline uintptr_t device_address_of(const Region &r, uintptr_t host) {
  if (r.shadow) return reinterpret_cast<uintptr_t>(r.shadow) + (host - r.begin);
  return r.kind == Kind::registered ? host + face().registered_alias : host;
}

// ----- streams and events --------------------------------------------------------------------------------

// The GPU's legacy stream: where the synchronous copies run, ordered among themselves but not with
// non-blocking streams (rig's), as in CUDA.
inline FStream *legacy_of(Gpu *g) {
  std::lock_guard l(state().lock);
  if (!g->legacy) g->legacy = new FStream(g);
  return g->legacy;
}

inline std::shared_ptr<FStream> get_stream(Stream st) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto it = s.streams.find(stream(st));
  return it == s.streams.end() ? nullptr : it->second;
}

inline std::shared_ptr<FEvent> get_event(Event e) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto it = s.events.find(event(e));
  return it == s.events.end() ? nullptr : it->second;
}

using fake_gpu::poll_until;
using fake_gpu::spend;

// ----- kernels -------------------------------------------------------------------------------------------

// The bytes a kernel of `g` may touch at device address [a, a+n): its GPU's memory, a peer's with peer
// access enabled (a pool's only through its access list), pinned or registered host memory through its
// device address. Sets the sticky error (illegal address) otherwise.
inline char *kernel_view(Gpu *g, uint64_t a, size_t n, bool write) {
  auto &s = state();
  std::lock_guard l(s.lock);
  Region *r = nullptr;
  char *p = device_view(a, n, &r);
  bool ok = p != nullptr;
  if (ok && (r->kind == Kind::device || r->kind == Kind::ipc) && r->owner != g->ordinal &&
      (r->pool ? !r->pool->reaches(g->ordinal) : !g->peers.count(r->owner)))
    ok = false;
  if (ok && write && r->kind == Kind::registered && (r->flags & HOST_REGISTER_READ_ONLY)) ok = false;
  if (!ok) {
    g->sticky.store(ERROR_ILLEGAL_ADDRESS, std::memory_order_release);
    return nullptr;
  }
  return p;
}

using Launch = fake_gpu::Launch<Gpu>;

// A module of `gpu` binding every `.entry NAME` of `text` (fake_gpu.h's builtins), or null where the text
// names none. The faces check the image's format first, each with its library's errors.
inline std::unique_ptr<FModule> module_from_text(Gpu *g, const std::string &text) {
  auto m = std::make_unique<FModule>();
  m->gpu = g;
  for (std::string &name : fake_gpu::entry_names(text)) {
    auto f = std::make_unique<FFunction>();
    f->name = std::move(name);
    f->module = m.get();
    m->functions.push_back(std::move(f));
  }
  return m->functions.empty() ? nullptr : std::move(m);
}

// Hands a loaded module out as the library's handle and counts it.
inline Result keep_module(std::unique_ptr<FModule> m, Module *out) {
  auto &s = state();
  std::lock_guard g(s.lock);
  s.modules.insert(m.get());
  ++s.count.live_modules;
  *out = reinterpret_cast<Module>(m.release());
  return SUCCESS;
}

// ----- control -------------------------------------------------------------------------------------------

inline void read_env() {
  auto &sw = state().sw;
  auto get = [](const char *name, long long &field) {
    std::string key = face().env_prefix;
    for (const char *c = name; *c; ++c) key += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    if (const char *v = std::getenv(key.c_str())) field = std::atoll(v);
  };
#define FAKE_GET(name, initial) get(#name, sw.name);
  FAKE_SWITCHES(FAKE_GET)
#undef FAKE_GET
  state().launches_until_failure = sw.fail_launch_at;
}

// The double's control call (fakecuda_control, fakehip_control): sets switch `name`, or "reset".
inline int control(const char *name, long long value) {
  auto &s = state();
  std::lock_guard g(s.lock);
  std::string n = name ? name : "";
  if (n == "reset") {
    s.sw = Switches{};
    read_env();  // the environment's switches stay in force: they are how a test run is configured
    for (auto &gpu : s.gpus) gpu->sticky.store(0);
#define FAKE_ZERO(name) s.count.name = 0;
    FAKE_CALL_COUNTERS(FAKE_ZERO)
#undef FAKE_ZERO
    s.count.last_register_flags = -1;
    return 0;
  }
#define FAKE_SET(field, initial)                                 \
  if (n == #field) {                                             \
    s.sw.field = value;                                          \
    if (n == "fail_launch_at") s.launches_until_failure = value; \
    return 0;                                                    \
  }
  FAKE_SWITCHES(FAKE_SET)
#undef FAKE_SET
  return -1;
}

// The double's query call (fakecuda_query, fakehip_query): a counter or switch, -1 for an unknown name.
inline long long query(const char *name) {
  auto &s = state();
  std::lock_guard g(s.lock);
  std::string n = name ? name : "";
#define FAKE_COUNT(field) \
  if (n == #field) return s.count.field.load();
#define FAKE_POOL_COUNT(field) \
  if (n == #field) return s.pools.memory.count.field.load();
  FAKE_CALL_COUNTERS(FAKE_COUNT)
  FAKE_LIVE_COUNTERS(FAKE_COUNT)
  FAKE_COUNT(last_register_flags)
  FAKE_POOL_COUNTERS(FAKE_POOL_COUNT)
#undef FAKE_COUNT
#undef FAKE_POOL_COUNT
  if (n == "sticky") return gpu_of(0)->sticky.load();
  if (n == "sticky1") return gpu_of(1)->sticky.load();
#define FAKE_SWITCH(field, initial) \
  if (n == #field) return s.sw.field;
  FAKE_SWITCHES(FAKE_SWITCH)
#undef FAKE_SWITCH
  return -1;
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
    if (it->second.pool) return ERROR_INVALID_VALUE;  // the stream-ordered free's to free
    r = it->second;
    state().regions.erase(it);
    --state().count.live_allocations;
  }
  if (kind == Kind::device)
    state().pools.memory.release(p, r.length);
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

// ----- the table's calls ---------------------------------------------------------------------------------

using namespace fake_stream;

// The library and its GPUs.

extern "C" Result fake_init(unsigned flags) {
  if (flags != 0) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  if (!s.initialized) {
    read_env();
    s.initialized = true;
  }
  return SUCCESS;
}

extern "C" Result fake_driver_version(int *version) {
  if (!version) return ERROR_INVALID_VALUE;
  *version = face().driver_version;
  return SUCCESS;
}

extern "C" Result fake_device_count(int *count) {
  if (!count) return ERROR_INVALID_VALUE;
  *count = static_cast<int>(state().sw.devices);
  return SUCCESS;
}

extern "C" Result fake_device_name(char *name, int length, int device) {
  if (!name || length <= 0 || !valid_device(device)) return ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(length), face().device_name, device);
  return SUCCESS;
}

extern "C" Result fake_total_memory(size_t *bytes, int device) {
  if (!bytes || !valid_device(device)) return ERROR_INVALID_VALUE;
  *bytes = face().total_memory;
  return SUCCESS;
}

extern "C" Result fake_device_attribute(int *value, int attribute, int device) {
  if (!value || !valid_device(device) || attribute < 0) return ERROR_INVALID_VALUE;
  const Switches &sw = state().sw;
  const AttributeNumbers &a = face().attributes;
  const Limits &l = face().limits;
  *value = 0;  // what the fakes do not model
  for (int i = 0; i < 3; ++i) {
    if (attribute == a.max_block[i]) *value = l.max_block[i];
    if (attribute == a.max_grid[i]) *value = l.max_grid[i];
  }
  if (attribute == a.max_threads_per_block) *value = 1024;
  if (attribute == a.max_shared_per_block) *value = l.max_shared_per_block;
  if (attribute == a.can_map_host_memory || attribute == a.unified_addressing) *value = 1;
  if (attribute == a.pageable_uses_host_page_tables) *value = static_cast<int>(sw.pageable_host_page_tables);
  if (attribute == a.read_only_host_register) *value = static_cast<int>(sw.read_only_supported);
  if (attribute == a.stream_memory_operations) *value = static_cast<int>(sw.memops);
  if (attribute == a.integrated) {
    if (sw.integrated_query_fails) return ERROR_INVALID_VALUE;
    *value = static_cast<int>(sw.integrated);
  }
  if (attribute == a.host_register_supported) {
    if (sw.host_register_supported < 0) return ERROR_INVALID_VALUE;  // a library older than the attribute
    *value = static_cast<int>(sw.host_register_supported);
  }
  return SUCCESS;
}

extern "C" Result fake_can_access_peer(int *can, int device, int peer) {
  if (!can || !valid_device(device) || !valid_device(peer)) return ERROR_INVALID_DEVICE;
  *can = device != peer && state().sw.peer_access ? 1 : 0;
  return SUCCESS;
}

// Contexts: a GPU is current on a thread.

extern "C" Result fake_get_current(Context *context) {
  if (!context) return ERROR_INVALID_VALUE;
  *context = handle(current());
  return SUCCESS;
}

extern "C" Result fake_set_current(Context context) {
  current_gpu = gpu(context);
  return SUCCESS;
}

extern "C" Result fake_synchronize_context(void) {
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  std::vector<std::shared_ptr<FStream>> mine;
  FStream *legacy = nullptr;
  {
    auto &s = state();
    std::lock_guard g(s.lock);
    for (auto &[raw, st] : s.streams)
      if (st->owner == cur) mine.push_back(st);
    legacy = cur->legacy;
  }
  for (auto &st : mine) st->drain();  // without the state lock: kernels running in workers take it
  if (legacy) legacy->drain();
  return sticky_or(cur, SUCCESS);
}

extern "C" Result fake_enable_peer_access(Context peer, unsigned flags) {
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (flags != 0 || !peer) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  Gpu *p = gpu(peer);
  if (p == cur || !s.sw.peer_access) return ERROR_PEER_ACCESS_UNSUPPORTED;
  if (cur->peers.count(p->ordinal)) return ERROR_PEER_ACCESS_ALREADY_ENABLED;
  cur->peers.insert(p->ordinal);
  return SUCCESS;
}

// Streams and events.

extern "C" Result fake_stream_create(Stream *out, unsigned flags) {
  (void)flags;
  if (!out) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  auto st = std::make_shared<FStream>(cur);
  auto &s = state();
  std::lock_guard g(s.lock);
  s.streams[st.get()] = st;
  ++s.count.live_streams;
  *out = reinterpret_cast<Stream>(st.get());
  return SUCCESS;
}

extern "C" Result fake_stream_destroy(Stream st_handle) {
  std::shared_ptr<FStream> st;
  auto &s = state();
  {
    std::lock_guard g(s.lock);
    auto it = s.streams.find(stream(st_handle));
    if (it == s.streams.end()) return ERROR_INVALID_HANDLE;
    st = std::move(it->second);
    s.streams.erase(it);
    --s.count.live_streams;
  }
  st.reset();  // the last owner finishes queued work and joins the worker (waits that cannot be met give up)
  return SUCCESS;
}

extern "C" Result fake_stream_query(Stream st_handle) {
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load(std::memory_order_acquire)) return e;
  return st->idle() ? SUCCESS : ERROR_NOT_READY;
}

extern "C" Result fake_stream_synchronize(Stream st_handle) {
  if (!st_handle) {  // the legacy stream
    Gpu *cur = current();
    if (!cur) return ERROR_INVALID_CONTEXT;
    legacy_of(cur)->drain();
    return sticky_or(cur, SUCCESS);
  }
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  st->drain();
  return sticky_or(st->owner, SUCCESS);
}

extern "C" Result fake_event_create(Event *out, unsigned flags) {
  if (!out) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  auto e = std::make_shared<FEvent>();
  e->gpu = cur;
  if (flags & EVENT_INTERPROCESS) {
    if (!(flags & EVENT_DISABLE_TIMING)) return ERROR_INVALID_VALUE;  // the rule for interprocess events
    e->ipc.reset(fake_ipc::EventPage::make(&e->exported.fd));
    if (!e->ipc) return ERROR_OUT_OF_MEMORY;
  }
  auto &s = state();
  std::lock_guard g(s.lock);
  s.events[e.get()] = e;
  *out = reinterpret_cast<Event>(e.get());
  return SUCCESS;
}

extern "C" Result fake_event_destroy(Event e) {
  auto &s = state();
  std::lock_guard g(s.lock);
  return s.events.erase(event(e)) ? SUCCESS : ERROR_INVALID_HANDLE;  // queued operations hold their own reference
}

extern "C" Result fake_event_record(Event e, Stream st_handle) {
  auto ev = get_event(e);
  auto st = get_stream(st_handle);
  if (!ev || !st) return ERROR_INVALID_HANDLE;
  if (int err = st->owner->sticky.load()) return err;
  ++state().count.event_records;
  ev->gpu = st->owner;
  auto rec = std::make_shared<FRecord>();
  if (ev->ipc) {
    rec->page = ev->ipc;
    rec->number = ev->ipc->words()->latest.fetch_add(1, std::memory_order_acq_rel) + 1;
  }
  {
    std::lock_guard g(ev->lock);
    ev->latest = rec;
  }
  st->push([rec] {
    rec->done.store(true, std::memory_order_release);
    if (rec->page) fake_ipc::complete(rec->page->words(), rec->number);
  });
  return SUCCESS;
}

extern "C" Result fake_event_query(Event e) {
  auto ev = get_event(e);
  if (!ev) return ERROR_INVALID_HANDLE;
  ++state().count.event_queries;
  if (int err = ev->gpu.load()->sticky.load(std::memory_order_acquire)) return err;
  auto rec = ev->current();
  return !rec || rec->ready() ? SUCCESS : ERROR_NOT_READY;
}

extern "C" Result fake_event_synchronize(Event e) {
  auto ev = get_event(e);
  if (!ev) return ERROR_INVALID_HANDLE;
  ++state().count.event_syncs;
  auto rec = ev->current();
  while (rec && !rec->ready()) {
    if (int err = ev->gpu.load()->sticky.load(std::memory_order_acquire)) return err;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return SUCCESS;
}

extern "C" Result fake_stream_wait_event(Stream st_handle, Event e, unsigned flags) {
  (void)flags;
  auto ev = get_event(e);
  auto st = get_stream(st_handle);
  if (!ev || !st) return ERROR_INVALID_HANDLE;
  if (int err = st->owner->sticky.load()) return err;
  auto rec = ev->current();  // the latest record, as the libraries capture it
  ++state().count.event_waits;
  if (state().sw.ignore_waits) return SUCCESS;  // a broken driver: proves the tests see a missing wait
  FStream *raw = st.get();  // the worker runs this op, so the stream outlives it
  st->push([raw, rec] { poll_until(raw, [&] { return !rec || rec->ready(); }); });
  return SUCCESS;
}

// The word a stream memory operation addresses (a device address of pinned or registered host memory), or
// null.
static uint64_t *word_at(DevicePtr address) {
  std::lock_guard g(state().lock);
  return reinterpret_cast<uint64_t *>(device_view(address, 8));
}

extern "C" Result fake_write_value64(Stream st_handle, DevicePtr address, uint64_t value, unsigned flags) {
  (void)flags;
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  uint64_t *word = word_at(address);
  if (!word) return ERROR_INVALID_VALUE;
  ++state().count.write_values;
  st->push([word, value] { __atomic_store_n(word, value, __ATOMIC_RELEASE); });
  return SUCCESS;
}

extern "C" Result fake_wait_value64(Stream st_handle, DevicePtr address, uint64_t value, unsigned flags) {
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (flags != WAIT_VALUE_GEQ) return ERROR_INVALID_VALUE;  // rig uses GEQ only
  if (int e = st->owner->sticky.load()) return e;
  uint64_t *word = word_at(address);
  if (!word) return ERROR_INVALID_VALUE;
  ++state().count.wait_values;
  if (state().sw.ignore_waits) return SUCCESS;  // a broken driver: proves the tests see a missing wait
  FStream *raw = st.get();
  st->push([raw, word, value] {
    poll_until(raw, [&] { return static_cast<int64_t>(__atomic_load_n(word, __ATOMIC_ACQUIRE) - value) >= 0; });
  });
  return SUCCESS;
}

// Memory.

extern "C" Result fake_mem_alloc(DevicePtr *address, size_t bytes) {
  if (!address || bytes == 0) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  void *p = state().pools.memory.allocate(bytes, state().sw.device_memory_limit);
  if (!p) return ERROR_OUT_OF_MEMORY;
  std::lock_guard g(state().lock);
  add_region({reinterpret_cast<uintptr_t>(p), bytes, Kind::device, cur->ordinal});
  *address = reinterpret_cast<uintptr_t>(p);
  return SUCCESS;
}

extern "C" Result fake_mem_free(DevicePtr address) { return free_region(address, Kind::device); }

extern "C" Result fake_host_alloc(void **host, size_t bytes, unsigned flags) {
  if (!host || bytes == 0) return ERROR_INVALID_VALUE;
  if (!current()) return ERROR_INVALID_CONTEXT;
  void *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) return ERROR_OUT_OF_MEMORY;
  std::lock_guard g(state().lock);
  add_region({reinterpret_cast<uintptr_t>(p), bytes, Kind::host, -1, flags});
  *host = p;
  return SUCCESS;
}

extern "C" Result fake_host_free(void *host) {
  return host ? free_region(reinterpret_cast<uintptr_t>(host), Kind::host) : SUCCESS;  // nothing to free
}

extern "C" Result fake_host_device_pointer(DevicePtr *address, void *host, unsigned flags) {
  if (!address || flags != 0) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  auto p = reinterpret_cast<uintptr_t>(host);
  if (FalseRegistration *f = find_false(p, 1)) {  // the device reaches the shadow, not the host's pages
    *address = reinterpret_cast<uintptr_t>(f->shadow) + (p - f->begin);
    return SUCCESS;
  }
  Region *r = find(p, 1);
  if (!r || (r->kind != Kind::host && r->kind != Kind::registered)) return ERROR_INVALID_VALUE;
  *address = device_address_of(*r, p);
  return SUCCESS;
}

// A registration the library answers with success but which cannot serve: the device reads `shadow` (zeros
// for unreadable pages, else the complement of the host's bytes now). Caller holds the lock.
static Result register_falsely(uintptr_t p, size_t bytes, unsigned flags, bool readable, std::string why) {
  auto &s = state();
  FalseRegistration f{p, bytes, static_cast<char *>(std::malloc(bytes)), std::move(why)};
  if (!f.shadow) return ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < bytes; ++i)
    f.shadow[i] = readable ? static_cast<char>(~reinterpret_cast<const char *>(p)[i]) : 0;
  s.regions[reinterpret_cast<uintptr_t>(f.shadow)] = {reinterpret_cast<uintptr_t>(f.shadow), bytes, Kind::shadow, -1,
                                                      flags};
  s.false_registrations.push_back(std::move(f));
  ++s.count.false_successes;
  return SUCCESS;
}

extern "C" Result fake_host_register(void *host, size_t bytes, unsigned flags) {
  if (!host || bytes == 0) return ERROR_INVALID_VALUE;
  if (!current()) return ERROR_INVALID_CONTEXT;
  auto &s = state();
  std::lock_guard g(s.lock);
  ++s.count.register_calls;
  s.count.last_register_flags = flags;
  if (s.sw.register_refuse) return static_cast<Result>(s.sw.register_refuse);
  if (fake_gpu::refuse_register_now(s.sw.register_refuse_after)) return ERROR_OUT_OF_MEMORY;
  if ((flags & HOST_REGISTER_READ_ONLY) && !s.sw.read_only_supported) return ERROR_NOT_SUPPORTED;
  auto p = reinterpret_cast<uintptr_t>(host);
  bool unmapped = false, readable = true;
  std::string why;
  if (face().false_registrations) {
    why = cannot_serve(p, p + bytes, &unmapped, &readable);
    if (unmapped) return ERROR_INVALID_VALUE;
  }
  // Where asked, as the drivers do: readable pages the process cannot write register only with the
  // read-only flag.
  if (s.sw.read_only_pages_need_flag && readable && !(flags & HOST_REGISTER_READ_ONLY) &&
      !fake_gpu::writable(p, p + bytes))
    return ERROR_INVALID_VALUE;
  // Any overlap with a registration (or with memory the library allocated) is "already registered", where
  // the library tells (CUDA).
  if (!face().false_registrations && overlaps_registration(p, p + bytes, false))
    return ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  ++s.count.registers;
  if (!why.empty()) return register_falsely(p, bytes, flags, readable, why);
  Region r{p, bytes, Kind::registered, -1, flags, nullptr, fake_gpu::file_backed(p, p + bytes)};
  if (s.sw.register_wrong_bytes) {
    // The device sees other bytes than the host wrote: the complement of what was there at registration.
    r.shadow = static_cast<char *>(std::malloc(bytes));
    if (!r.shadow) return ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < bytes; ++i) r.shadow[i] = static_cast<char>(~static_cast<const char *>(host)[i]);
    s.regions[reinterpret_cast<uintptr_t>(r.shadow)] = {reinterpret_cast<uintptr_t>(r.shadow), bytes, Kind::shadow,
                                                        -1, flags};
  }
  s.regions[p] = r;
  return SUCCESS;
}

extern "C" Result fake_host_unregister(void *host) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto p = reinterpret_cast<uintptr_t>(host);
  // The latest registration starting at p: a false one if any (it was made after the real one it overlaps).
  auto &fv = s.false_registrations;
  for (auto it = fv.rbegin(); it != fv.rend(); ++it) {
    if (it->begin != p) continue;
    if (s.sw.false_unregister_713) return ERROR_HOST_MEMORY_NOT_REGISTERED;
    s.regions.erase(reinterpret_cast<uintptr_t>(it->shadow));
    std::free(it->shadow);
    fv.erase(std::next(it).base());
    ++s.count.unregisters;
    return SUCCESS;
  }
  auto it = s.regions.find(p);
  if (it == s.regions.end() || it->second.kind != Kind::registered) {
    Region *inside = find(p, 1);
    return inside && inside->kind == Kind::registered ? ERROR_INVALID_VALUE : ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  if (s.sw.unregister_fail) {
    if (s.sw.unregister_fail == 1) s.sw.unregister_fail = 0;
    return ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  if (char *shadow = it->second.shadow) {
    s.regions.erase(reinterpret_cast<uintptr_t>(shadow));
    std::free(shadow);
  }
  s.regions.erase(p);
  ++s.count.unregisters;
  return SUCCESS;
}

extern "C" Result fake_copy_to_device(DevicePtr dst, const void *src, size_t bytes) {
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  if (bytes == 0) return SUCCESS;
  auto &s = state();
  long long ns_per_kib = 0;
  bool pageable = false;
  char *to;
  const char *from;
  {
    std::lock_guard g(s.lock);
    to = device_view(dst, bytes);
    if (!to) return ERROR_INVALID_VALUE;
    from = upload_source(src, bytes, &ns_per_kib, &pageable);
  }
  if (!face().pageable_uploads_land_later) {
    std::memmove(to, from, bytes);
    spend(ns_per_kib * static_cast<long long>(bytes) / 1024);
    return SUCCESS;
  }
  FStream *legacy = legacy_of(cur);
  if (pageable) {
    // The call returns once pageable bytes are staged, before the DMA lands: the copy finishes later on the
    // legacy stream, so work on a non-blocking stream that does not wait for it reads the old bytes.
    auto staged = std::make_shared<std::vector<char>>(from, from + bytes);
    long long delay = s.sw.pageable_dma_delay_us;
    legacy->push([to, staged, delay] {
      if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
      std::memmove(to, staged->data(), staged->size());
    });
    spend(ns_per_kib * static_cast<long long>(bytes) / 1024);
    return SUCCESS;
  }
  legacy->drain();  // pinned and registered sources: synchronous, after earlier legacy-stream copies
  std::memmove(to, from, bytes);
  spend(ns_per_kib * static_cast<long long>(bytes) / 1024);
  return SUCCESS;
}

extern "C" Result fake_copy_to_host(void *dst, DevicePtr src, size_t bytes) {
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  if (bytes == 0) return SUCCESS;
  const char *from;
  FStream *legacy = nullptr;
  {
    std::lock_guard g(state().lock);
    from = device_view(src, bytes);
    if (!from) return ERROR_INVALID_VALUE;
    legacy = cur->legacy;
  }
  if (legacy) legacy->drain();  // ordered after earlier copies on the legacy stream
  std::memmove(dst, from, bytes);
  return SUCCESS;
}

extern "C" Result fake_copy_async(DevicePtr dst, DevicePtr src, size_t bytes, Stream st_handle) {
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  char *to;
  const char *from;
  {
    std::lock_guard g(state().lock);
    to = device_view(dst, bytes);
    from = device_view(src, bytes);
    if (!to || !from) return ERROR_INVALID_VALUE;
  }
  ++state().count.copies;
  long long delay = state().sw.copy_delay_us;
  st->push([to, from, bytes, delay] {
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    std::memmove(to, from, bytes);
  });
  return SUCCESS;
}

extern "C" Result fake_fill_async(DevicePtr dst, unsigned char value, size_t bytes, Stream st_handle) {
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  char *to;
  {
    std::lock_guard g(state().lock);
    to = device_view(dst, bytes);
    if (!to) return ERROR_INVALID_VALUE;
  }
  st->push([to, value, bytes] { std::memset(to, value, bytes); });
  return SUCCESS;
}

// Stream-ordered pools: the model is common/fake_pool.h's; these check the handles and keep the regions.

extern "C" Result fake_mem_pool_create(MemPool *out, const MemPoolProps *props) {
  return state().pools.create(reinterpret_cast<FPool **>(out), props, state().sw.mem_pools, state().sw.devices);
}

extern "C" Result fake_mem_pool_destroy(MemPool p) { return state().pools.destroy(pool(p)); }

extern "C" Result fake_mem_pool_set_attribute(MemPool p, int attribute, void *value) {
  return state().pools.set_attribute(pool(p), attribute, value);
}

extern "C" Result fake_mem_pool_trim(MemPool p, size_t keep) { return state().pools.trim_to(pool(p), keep); }

extern "C" Result fake_mem_pool_set_access(MemPool p, const MemAccessDesc *access, size_t count) {
  return state().pools.set_access(pool(p), access, count, state().sw.devices, state().sw.peer_access);
}

extern "C" Result fake_mem_alloc_from_pool(DevicePtr *address, size_t bytes, MemPool p, Stream st_handle) {
  if (!address || bytes == 0 || !p) return ERROR_INVALID_VALUE;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  std::lock_guard g(state().lock);
  uintptr_t at = 0;
  if (Result r = state().pools.allocate(pool(p), bytes, st.get(), state().sw.device_memory_limit, &at)) return r;
  Region r{at, bytes, Kind::device, pool(p)->ordinal};
  r.pool = pool(p);
  add_region(r);
  *address = at;
  return SUCCESS;
}

// The pointer is gone at once; the memory is the pool's, or the library's, as fake_pool::Pools::free_async
// says.
extern "C" Result fake_mem_free_async(DevicePtr address, Stream st_handle) {
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  std::lock_guard g(state().lock);
  auto it = state().regions.find(address);
  if (it == state().regions.end() || it->second.kind != Kind::device) return ERROR_INVALID_VALUE;
  Region r = it->second;
  state().regions.erase(it);
  --state().count.live_allocations;
  state().pools.free_async(r.pool, r.begin, r.length, st.get());
  return SUCCESS;
}

// Interprocess handles (common/fake_ipc.h): device memory must come from the arena (fake_stream::arena).

extern "C" Result fake_ipc_get_memory(IpcHandle *out, DevicePtr address) {
  if (!current()) return ERROR_INVALID_CONTEXT;
  if (!out) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  auto it = state().regions.find(address);  // the base of a plain allocation, as the libraries require
  if (it == state().regions.end() || it->second.kind != Kind::device) return ERROR_INVALID_VALUE;
  if (it->second.pool) return ERROR_INVALID_VALUE;  // a pool made without an exportable handle type
  void *p = reinterpret_cast<void *>(address);
  auto h = fake_ipc::describe("fake-ipc-memory", arena().fd(), arena().offset_of(p), it->second.length,
                              it->second.owner);
  std::memcpy(out, &h, sizeof h);
  return SUCCESS;
}

extern "C" Result fake_ipc_open_memory(DevicePtr *address, IpcHandle handle, unsigned flags) {
  constexpr unsigned lazy_peer_access = 0x1;  // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
  if (!address || flags > lazy_peer_access) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  if (int e = cur->sticky.load()) return e;
  fake_ipc::Handle h;
  fake_ipc::Refusal why;
  void *p = fake_ipc::open(&handle, "fake-ipc-memory", &h, &why);
  if (!p) return refused(why);
  std::lock_guard g(state().lock);
  // The bytes stay on the exporter's GPU. Opened from another GPU of the host, kernels reach them through
  // peer access, which the lazy flag enables as enabling peer access would; without the flag only where it
  // was enabled already. Where the two GPUs cannot be peers, the open fails.
  int owner = h.device >= 0 ? h.device : cur->ordinal;
  if (owner != cur->ordinal) {
    if (!state().sw.peer_access) {
      munmap(p, fake_ipc::pages(h.length));
      return ERROR_PEER_ACCESS_UNSUPPORTED;
    }
    if (flags & lazy_peer_access) cur->peers.insert(owner);
  }
  state().regions[reinterpret_cast<uintptr_t>(p)] = {reinterpret_cast<uintptr_t>(p), h.length, Kind::ipc, owner};
  ++state().count.live_ipc_mappings;
  *address = reinterpret_cast<uintptr_t>(p);
  return SUCCESS;
}

extern "C" Result fake_ipc_close_memory(DevicePtr address) {
  Region r;
  {
    std::lock_guard g(state().lock);
    auto it = state().regions.find(address);
    if (it == state().regions.end() || it->second.kind != Kind::ipc) return ERROR_INVALID_VALUE;
    r = it->second;
    state().regions.erase(it);
    --state().count.live_ipc_mappings;
  }
  munmap(reinterpret_cast<void *>(address), fake_ipc::pages(r.length));
  return SUCCESS;
}

extern "C" Result fake_ipc_get_event(IpcHandle *out, Event e) {
  if (!current()) return ERROR_INVALID_CONTEXT;  // as the H200's driver answers
  auto ev = get_event(e);
  if (!ev || !out) return ERROR_INVALID_HANDLE;
  if (!ev->ipc || ev->opened) return ERROR_INVALID_VALUE;  // made without the interprocess flag
  auto h = fake_ipc::describe("fake-ipc-event", ev->exported.fd, 0, fake_ipc::kPage);
  std::memcpy(out, &h, sizeof h);
  return SUCCESS;
}

extern "C" Result fake_ipc_open_event(Event *out, IpcHandle handle) {
  if (!out) return ERROR_INVALID_VALUE;
  Gpu *cur = current();
  if (!cur) return ERROR_INVALID_CONTEXT;
  fake_ipc::Handle h;
  fake_ipc::Refusal why;
  void *p = fake_ipc::open(&handle, "fake-ipc-event", &h, &why);
  if (!p) return refused(why);
  auto e = std::make_shared<FEvent>();
  e->gpu = cur;
  e->ipc.reset(fake_ipc::EventPage::adopt(p));
  e->opened = true;
  std::lock_guard g(state().lock);
  state().events[e.get()] = e;
  *out = reinterpret_cast<Event>(e.get());
  return SUCCESS;
}

// Modules and launches (loading is each face's: its formats, options and errors).

extern "C" Result fake_module_unload(Module m) {
  auto &s = state();
  {
    std::lock_guard g(s.lock);
    if (!s.modules.erase(module(m))) return ERROR_INVALID_HANDLE;
    --s.count.live_modules;
  }
  delete module(m);
  return SUCCESS;
}

extern "C" Result fake_module_function(Function *out, Module m, const char *name) {
  if (!out || !name) return ERROR_INVALID_VALUE;
  {
    std::lock_guard g(state().lock);
    if (!state().modules.count(module(m))) return ERROR_INVALID_HANDLE;
  }
  for (auto &f : module(m)->functions)
    if (f->name == name && fake_gpu::builtin<Gpu>(f->name)) {
      *out = reinterpret_cast<Function>(f.get());
      return SUCCESS;
    }
  return ERROR_NOT_FOUND;
}

extern "C" Result fake_launch(Function fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared, Stream st_handle, void **params, void **extra) {
  auto *f = reinterpret_cast<FFunction *>(fn);
  if (!f || extra) return ERROR_INVALID_VALUE;
  auto st = get_stream(st_handle);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  {
    std::lock_guard g(state().lock);
    if (!state().modules.count(f->module)) return ERROR_INVALID_HANDLE;
  }
  if (f->module->gpu != st->owner) return ERROR_INVALID_HANDLE;  // a function loaded on another GPU
  const Limits &l = face().limits;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 ||
      shared > static_cast<unsigned>(l.max_shared_per_block))
    return ERROR_INVALID_VALUE;
  const fake_gpu::Builtin<Gpu> *b = fake_gpu::builtin<Gpu>(f->name);
  Launch launch{st->owner, {gx, gy, gz}, {bx, by, bz}, {}};
  for (size_t i = 0; i < b->sizes.size(); ++i) {
    if (!params || !params[i]) return ERROR_INVALID_VALUE;
    const char *p = static_cast<const char *>(params[i]);
    launch.params.emplace_back(p, p + b->sizes[i]);  // the library copies parameters at launch
  }
  bool fails = false;
  {
    std::lock_guard g(state().lock);
    auto &left = state().launches_until_failure;
    if (left > 0 && --left == 0) fails = true;
  }
  ++state().count.launches;
  long long delay = state().sw.launch_delay_us;
  st->push([launch = std::move(launch), b, fails, delay] {
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    if (fails) {
      launch.owner->sticky.store(ERROR_LAUNCH_FAILED, std::memory_order_release);
      return;
    }
    b->run(launch);
  });
  return SUCCESS;
}
