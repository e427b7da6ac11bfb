// A fake libamdhip64 over host memory, so the HIP driver's logic (timeline, in-queue waits, loss, memory,
// registration, modules) and mapped registration's verdicts run in CI with no GPU. It exports exactly the
// entry points rig's HIP driver loads (src/drivers/hip/hip.h) plus fakehip_control/fakehip_query
// (fake_hip.h, which also says what it reproduces of the seed's false successes).
//
// Model: each device is a GPU whose memory is host memory; each stream runs its queue of operations on a
// worker thread, in order, so work really runs after the enqueueing call returns (a missing wait shows as
// wrong bytes). A failing launch sets the device's sticky error: from then on nothing of that device runs
// and its calls answer that error.
#include "fake_hip.h"

#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../common/fake_gpu.h"
#include "../common/fake_pool.h"
#include "drivers/hip/hip.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

using namespace rig::hip;

namespace {

using Clock = std::chrono::steady_clock;

// ----- switches and counters ------------------------------------------------------------------------------

struct Switches {
  long long devices = 2, integrated = 0, integrated_query_fails = 0, host_register_supported = 1, memops = 1,
            peer_access = 1, register_refuse = 0, register_refuse_after = 0, false_unregister_713 = 1, unregister_fail = 0,
            registered_upload_ns_per_kib = 0, pinned_upload_ns_per_kib = 0, pageable_upload_ns_per_kib = 0,
            fail_launch_at = 0, launch_delay_us = 0, copy_delay_us = 0, ignore_waits = 0, read_only_pages_need_flag = 0,
            mem_pools = 1, device_memory_limit = 0;
};

#define FAKE_SWITCHES(X)                                                                                      \
  X(devices) X(integrated) X(integrated_query_fails) X(host_register_supported) X(memops) X(peer_access)     \
  X(register_refuse) X(register_refuse_after) X(false_unregister_713) X(unregister_fail) X(registered_upload_ns_per_kib)              \
  X(pinned_upload_ns_per_kib) X(pageable_upload_ns_per_kib) X(fail_launch_at) X(launch_delay_us)             \
  X(copy_delay_us) X(ignore_waits) X(read_only_pages_need_flag) X(mem_pools) X(device_memory_limit)

#define FAKE_COUNTERS(X)                                                                                      \
  X(register_calls) X(registers) X(false_successes) X(unregisters) X(last_register_flags) X(launches)        \
  X(copies) X(wait_values) X(write_values) X(event_waits) X(event_records) X(event_queries) X(live_allocations) X(live_streams) X(live_modules)

struct Counters {
#define FAKE_COUNTER(name) std::atomic<long long> name{0};
  FAKE_COUNTERS(FAKE_COUNTER)
#undef FAKE_COUNTER
};

// A registered range's device address: the host address moved above every user-space address (bit 47), so
// that it never equals the host pointer and a raw host pointer handed to device code is caught.
constexpr uintptr_t kDeviceAlias = uintptr_t{1} << 47;

// ----- objects ---------------------------------------------------------------------------------------------

struct Dev {
  int ordinal = 0;
  std::atomic<int> sticky{0};
  std::set<int> peers;  // ordinals whose memory this device's kernels may use
};

enum class Kind { device, host, registered, shadow };

struct Region {
  uintptr_t begin = 0;
  size_t length = 0;
  Kind kind = Kind::device;
  int owner = -1;      // device memory: the owning device
  unsigned flags = 0;  // registered: the registration flags
  bool file = false;   // registered: a file's pages (registered_upload_ns_per_kib), else anonymous memory
                       // pinned as the runtime's own (pinned_upload_ns_per_kib)
  fake_pool::Pool *pool = nullptr;  // device memory of hipMallocFromPoolAsync's (common/fake_pool.h)
};

using FPool = fake_pool::Pool;

// A registration that answered success but cannot serve: the device reads `shadow` instead of the host's
// pages. Kept apart from the regions, since it may overlap a real registration (registered twice).
struct FalseRegistration {
  uintptr_t begin = 0;
  size_t length = 0;
  char *shadow = nullptr;
  std::string why;
};

struct FEvent {
  Dev *dev = nullptr;
  std::atomic<uint64_t> recorded{0};  // generations: record n completes when done >= n
  std::atomic<uint64_t> done{0};
};

struct Dev;
using FStream = fake_gpu::Stream<Dev>;  // a stream of the owner (common/fake_gpu.h)

struct FFunction {
  std::string name;
  struct FModule *module = nullptr;
};

struct FModule {
  Dev *dev = nullptr;
  std::vector<std::unique_ptr<FFunction>> functions;
};

// Device memory's source: pages of its own (page-aligned, so aligned as the runtime's allocations are),
// never the host heap: a GPU's memory is not on a host page, and the host heap's pages are what programs
// register (a device allocation among them would sit inside a registered range here, where the regions
// must not overlap).
void *heap_obtain(size_t bytes) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
void heap_give_back(void *p, size_t bytes) { munmap(p, bytes); }

struct State {
  std::mutex lock;  // regions, registrations, objects sets, pools
  Switches sw;
  Counters count;
  fake_pool::Pools pools{heap_obtain, heap_give_back, lock};  // device memory within its limit, pools
  std::vector<std::unique_ptr<Dev>> devs;
  std::map<uintptr_t, Region> regions;
  std::vector<FalseRegistration> false_registrations;
  std::map<FStream *, std::shared_ptr<FStream>> streams;
  std::map<FEvent *, std::shared_ptr<FEvent>> events;
  std::set<FModule *> modules;
  long long launches_until_failure = 0;
  bool initialized = false;
};

State &state() {
  static State &s = *new State;  // never destroyed: streams' workers may outlive static destruction
  return s;
}

thread_local int current_device = 0;

Dev *dev_of(int ordinal) {
  auto &s = state();
  while (static_cast<int>(s.devs.size()) <= ordinal) {
    s.devs.push_back(std::make_unique<Dev>());
    s.devs.back()->ordinal = static_cast<int>(s.devs.size()) - 1;
  }
  return s.devs[ordinal].get();
}

Dev *current() {
  std::lock_guard g(state().lock);
  return dev_of(current_device);
}

// The region holding [p, p+n), or null. Caller holds the lock.
Region *find(uintptr_t p, size_t n) {
  auto &s = state();
  auto it = s.regions.upper_bound(p);
  if (it == s.regions.begin()) return nullptr;
  --it;
  Region &r = it->second;
  if (p < r.begin || p - r.begin > r.length) return nullptr;
  if (n <= r.length - (p - r.begin)) return &r;
  // Unified addressing: registrations that touch are one range to the device, so a range spanning
  // adjacent registrations (rig registers only the pages of a wrap not registered yet) is reachable.
  if (r.kind != Kind::registered) return nullptr;
  uintptr_t end = r.begin + r.length;
  for (auto next = std::next(it); end < p + n; ++next) {
    if (next == s.regions.end() || next->first != end || next->second.kind != Kind::registered)
      return nullptr;
    end += next->second.length;
  }
  return &r;
}

// The latest false registration holding [p, p+n) (host addresses), or null. Caller holds the lock.
FalseRegistration *find_false(uintptr_t p, size_t n) {
  auto &v = state().false_registrations;
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    if (p >= it->begin && p - it->begin <= it->length && n <= it->length - (p - it->begin)) return &*it;
  return nullptr;
}

// Where the device reads or writes [a, a+n) given a device address: device memory, pinned memory, a
// registered range's alias, or a false registration's shadow. Null where no such memory holds it. Caller
// holds the lock.
char *device_view(uintptr_t a, size_t n, Region **region = nullptr) {
  if (a >= kDeviceAlias) {
    uintptr_t host = a - kDeviceAlias;
    Region *r = find(host, n);
    if (!r || r->kind != Kind::registered) return nullptr;
    if (region) *region = r;
    return reinterpret_cast<char *>(host);
  }
  Region *r = find(a, n);
  if (!r || r->kind == Kind::registered) return nullptr;  // a registered range's raw host pointer
  if (region) *region = r;
  return reinterpret_cast<char *>(a);
}

// Where a host-to-device copy reads [p, p+n) given a host pointer: through a false registration the device
// sees its shadow; otherwise the host's bytes. Sets the per-KiB cost. Caller holds the lock.
const char *host_source(const void *src, size_t n, long long *ns_per_kib) {
  auto &s = state();
  auto p = reinterpret_cast<uintptr_t>(src);
  if (FalseRegistration *f = find_false(p, n)) {
    *ns_per_kib = s.sw.registered_upload_ns_per_kib;
    return f->shadow + (p - f->begin);
  }
  Region *r = find(p, n);
  if (r && r->kind == Kind::registered)
    *ns_per_kib = r->file ? s.sw.registered_upload_ns_per_kib : s.sw.pinned_upload_ns_per_kib;
  else if (r && r->kind == Kind::host) *ns_per_kib = s.sw.pinned_upload_ns_per_kib;
  else *ns_per_kib = s.sw.pageable_upload_ns_per_kib;
  return static_cast<const char *>(src);
}

// ----- what a registration could really serve -------------------------------------------------------------

using fake_gpu::Mapping;
using fake_gpu::mappings_over;

bool on_tmpfs(const std::string &path) {
  if (path.rfind("/memfd:", 0) == 0 || path.rfind("/dev/shm/", 0) == 0) return true;
  std::string p = path;
  const std::string deleted = " (deleted)";
  if (p.size() > deleted.size() && p.compare(p.size() - deleted.size(), deleted.size(), deleted) == 0)
    p.erase(p.size() - deleted.size());
  struct statfs st;
  return !p.empty() && p[0] == '/' && statfs(p.c_str(), &st) == 0 && st.f_type == 0x01021994;  // TMPFS_MAGIC
}

// Why a registration of [b, e) could not serve (the seed's list), or "" where it can. `unmapped` is set
// where part of the range is not mapped at all (the runtime refuses that). Caller holds the lock.
std::string cannot_serve(uintptr_t b, uintptr_t e, bool *unmapped, bool *readable) {
  *unmapped = false;
  *readable = true;
  auto maps = mappings_over(b, e);
  uintptr_t covered = b;
  std::string why;
  for (const Mapping &m : maps) {
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
    auto &s = state();
    auto it = s.regions.lower_bound(b);
    bool overlaps = it != s.regions.end() && it->first < e && it->second.kind == Kind::registered;
    if (it != s.regions.begin()) {
      auto prev = std::prev(it);
      overlaps |= prev->second.kind == Kind::registered && prev->first + prev->second.length > b;
    }
    for (auto &f : s.false_registrations) overlaps |= f.begin < e && f.begin + f.length > b;
    if (overlaps) why = "a range overlapping a registration";
  }
  return why;
}

// ----- streams -------------------------------------------------------------------------------------------

std::shared_ptr<FStream> get_stream(FStream *st) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto it = s.streams.find(st);
  return it == s.streams.end() ? nullptr : it->second;
}

std::shared_ptr<FEvent> get_event(FEvent *e) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto it = s.events.find(e);
  return it == s.events.end() ? nullptr : it->second;
}

using fake_gpu::poll_until;
using fake_gpu::spend;
using Launch = fake_gpu::Launch<Dev>;

// ----- kernels -------------------------------------------------------------------------------------------

// The bytes a kernel may touch at device address [a, a+n): its device's memory, a peer's with peer access
// enabled, pinned or registered host memory through its device address. Sets the sticky error (illegal
// address) otherwise, a raw host pointer of a registered range included.
char *kernel_view(Dev *dev, uint64_t a, size_t n, bool write) {
  auto &s = state();
  std::lock_guard g(s.lock);
  Region *r = nullptr;
  char *p = device_view(a, n, &r);
  bool ok = p != nullptr;
  if (ok && r->kind == Kind::device && r->owner != dev->ordinal &&
      (r->pool ? !r->pool->reaches(dev->ordinal) : !dev->peers.count(r->owner)))  // peer access misses pools
    ok = false;
  if (ok && write && r->kind == Kind::registered && (r->flags & HOST_REGISTER_READ_ONLY)) ok = false;
  if (!ok) {
    dev->sticky.store(ERROR_ILLEGAL_ADDRESS, std::memory_order_release);
    return nullptr;
  }
  return p;
}

void read_env() {
  auto &sw = state().sw;
  auto get = [](const char *name, long long &field) {
    std::string key = "FAKEHIP_";
    for (const char *c = name; *c; ++c) key += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    if (const char *v = std::getenv(key.c_str())) field = std::atoll(v);
  };
#define FAKE_GET(name) get(#name, sw.name);
  FAKE_SWITCHES(FAKE_GET)
#undef FAKE_GET
  state().launches_until_failure = sw.fail_launch_at;
}

Error sticky_or(Dev *d, Error r) {
  int s = d ? d->sticky.load(std::memory_order_acquire) : 0;
  return s ? s : r;
}

bool valid_device(int d) { return d >= 0 && d < state().sw.devices; }

}  // namespace

// ----- control -------------------------------------------------------------------------------------------

EXPORT int fakehip_control(const char *name, long long value) {
  auto &s = state();
  std::lock_guard g(s.lock);
  std::string n = name ? name : "";
  if (n == "reset") {
    s.sw = Switches{};
    read_env();  // the environment's switches are the defaults a test run asked for (FAKEHIP_MEMOPS=0, ...)
    s.launches_until_failure = s.sw.fail_launch_at;
    for (auto &d : s.devs) d->sticky.store(0);
#define FAKE_ZERO(name) s.count.name = 0;
    FAKE_COUNTERS(FAKE_ZERO)
#undef FAKE_ZERO
    s.count.last_register_flags = -1;
    return 0;
  }
#define FAKE_SET(field)                                          \
  if (n == #field) {                                             \
    s.sw.field = value;                                          \
    if (n == "fail_launch_at") s.launches_until_failure = value; \
    return 0;                                                    \
  }
  FAKE_SWITCHES(FAKE_SET)
#undef FAKE_SET
  return -1;
}

EXPORT long long fakehip_query(const char *name) {
  auto &s = state();
  std::lock_guard g(s.lock);
  std::string n = name ? name : "";
#define FAKE_COUNT(field) \
  if (n == #field) return s.count.field.load();
#define FAKE_POOL_COUNT(field) \
  if (n == #field) return s.pools.memory.count.field.load();
  FAKE_COUNTERS(FAKE_COUNT)
  FAKE_POOL_COUNTERS(FAKE_POOL_COUNT)
#undef FAKE_COUNT
#undef FAKE_POOL_COUNT
  if (n == "sticky") return dev_of(0)->sticky.load();
  if (n == "sticky1") return dev_of(1)->sticky.load();
#define FAKE_SWITCH(field) \
  if (n == #field) return s.sw.field;
  FAKE_SWITCHES(FAKE_SWITCH)
#undef FAKE_SWITCH
  return -1;
}

// ----- initialisation, errors, devices -------------------------------------------------------------------

EXPORT Error hipInit(unsigned flags) {
  if (flags != 0) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  if (!s.initialized) {
    read_env();
    s.count.last_register_flags = -1;
    s.initialized = true;
  }
  return SUCCESS;
}

EXPORT Error hipDriverGetVersion(int *version) {
  if (!version) return ERROR_INVALID_VALUE;
  *version = 70224;  // as ROCm 7.2.4 would report it: the runtime the seed measured
  return SUCCESS;
}

EXPORT const char *hipGetErrorName(Error error) {
  static const std::map<int, const char *> names = {
      {0, "hipSuccess"}, {1, "hipErrorInvalidValue"}, {2, "hipErrorOutOfMemory"},
      {3, "hipErrorNotInitialized"}, {100, "hipErrorNoDevice"}, {101, "hipErrorInvalidDevice"},
      {200, "hipErrorInvalidImage"}, {209, "hipErrorNoBinaryForGpu"}, {217, "hipErrorPeerAccessUnsupported"},
      {218, "hipErrorInvalidKernelFile"}, {400, "hipErrorInvalidHandle"}, {500, "hipErrorNotFound"},
      {600, "hipErrorNotReady"}, {700, "hipErrorIllegalAddress"}, {704, "hipErrorPeerAccessAlreadyEnabled"},
      {712, "hipErrorHostMemoryAlreadyRegistered"}, {713, "hipErrorHostMemoryNotRegistered"},
      {719, "hipErrorLaunchFailure"}, {801, "hipErrorNotSupported"}, {999, "hipErrorUnknown"}};
  auto it = names.find(error);
  return it == names.end() ? "hipErrorUnknown" : it->second;  // what HIP answers for codes it does not know
}

EXPORT Error hipGetDeviceCount(int *count) {
  if (!count) return ERROR_INVALID_VALUE;
  *count = static_cast<int>(state().sw.devices);
  return SUCCESS;
}

EXPORT Error hipGetDevice(int *device) {
  if (!device) return ERROR_INVALID_VALUE;
  *device = current_device;
  return SUCCESS;
}

EXPORT Error hipSetDevice(int device) {
  if (!valid_device(device)) return ERROR_INVALID_DEVICE;
  current_device = device;
  return SUCCESS;
}

EXPORT Error hipDeviceGetName(char *name, int length, int device) {
  if (!name || length <= 0 || !valid_device(device)) return ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(length), "Fake HIP Device %d", device);
  return SUCCESS;
}

EXPORT Error hipDeviceTotalMem(size_t *bytes, int device) {
  if (!bytes || !valid_device(device)) return ERROR_INVALID_VALUE;
  *bytes = size_t{24} << 30;
  return SUCCESS;
}

EXPORT Error hipDeviceGetAttribute(int *value, int attribute, int device) {
  if (!value || !valid_device(device)) return ERROR_INVALID_VALUE;
  const Switches &sw = state().sw;
  switch (attribute) {
    case ATTR_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case ATTR_MAX_BLOCK_DIM_X: case ATTR_MAX_BLOCK_DIM_Y: case ATTR_MAX_BLOCK_DIM_Z: *value = 1024; break;
    case ATTR_MAX_GRID_DIM_X: case ATTR_MAX_GRID_DIM_Y: case ATTR_MAX_GRID_DIM_Z: *value = 2147483647; break;
    case ATTR_MAX_SHARED_MEMORY_PER_BLOCK: *value = 65536; break;
    case ATTR_INTEGRATED:
      if (sw.integrated_query_fails) return ERROR_INVALID_VALUE;
      *value = static_cast<int>(sw.integrated);
      break;
    case ATTR_HOST_REGISTER_SUPPORTED:
      if (sw.host_register_supported < 0) return ERROR_INVALID_VALUE;
      *value = static_cast<int>(sw.host_register_supported);
      break;
    case ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: *value = 0; break;
    case ATTR_CAN_USE_STREAM_WAIT_VALUE: *value = static_cast<int>(sw.memops); break;
    default: *value = 0;
  }
  return SUCCESS;
}

EXPORT Error hipDeviceCanAccessPeer(int *can, int device, int peer) {
  if (!can || !valid_device(device) || !valid_device(peer)) return ERROR_INVALID_DEVICE;
  *can = device != peer && state().sw.peer_access ? 1 : 0;
  return SUCCESS;
}

EXPORT Error hipDeviceEnablePeerAccess(int peer, unsigned flags) {
  if (flags != 0 || !valid_device(peer)) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  Dev *d = dev_of(current_device);
  if (peer == current_device || !s.sw.peer_access) return ERROR_PEER_ACCESS_UNSUPPORTED;
  if (d->peers.count(peer)) return ERROR_PEER_ACCESS_ALREADY_ENABLED;
  d->peers.insert(peer);
  return SUCCESS;
}

EXPORT Error hipDeviceSynchronize(void) {
  Dev *d = current();
  std::vector<std::shared_ptr<FStream>> mine;
  {
    auto &s = state();
    std::lock_guard g(s.lock);
    for (auto &[raw, st] : s.streams)
      if (st->owner == d) mine.push_back(st);
  }
  for (auto &st : mine) st->drain();  // without the state lock: kernels running in workers take it
  return sticky_or(d, SUCCESS);
}

// ----- streams and events --------------------------------------------------------------------------------

EXPORT Error hipStreamCreateWithFlags(FStream **stream, unsigned flags) {
  (void)flags;
  if (!stream) return ERROR_INVALID_VALUE;
  Dev *d = current();
  if (int e = d->sticky.load()) return e;
  auto st = std::make_shared<FStream>(d);
  auto &s = state();
  std::lock_guard g(s.lock);
  s.streams[st.get()] = st;
  ++s.count.live_streams;
  *stream = st.get();
  return SUCCESS;
}

EXPORT Error hipStreamDestroy(FStream *stream) {
  std::shared_ptr<FStream> st;
  auto &s = state();
  {
    std::lock_guard g(s.lock);
    auto it = s.streams.find(stream);
    if (it == s.streams.end()) return ERROR_INVALID_HANDLE;
    st = std::move(it->second);
    s.streams.erase(it);
    --s.count.live_streams;
  }
  st.reset();  // the last owner finishes queued work and joins the worker
  return SUCCESS;
}

EXPORT Error hipStreamQuery(FStream *stream) {
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load(std::memory_order_acquire)) return e;
  return st->idle() ? SUCCESS : ERROR_NOT_READY;
}

EXPORT Error hipStreamSynchronize(FStream *stream) {
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  st->drain();
  return sticky_or(st->owner, SUCCESS);
}

EXPORT Error hipEventCreateWithFlags(FEvent **event, unsigned flags) {
  (void)flags;
  if (!event) return ERROR_INVALID_VALUE;
  auto e = std::make_shared<FEvent>();
  e->dev = current();
  auto &s = state();
  std::lock_guard g(s.lock);
  s.events[e.get()] = e;
  *event = e.get();
  return SUCCESS;
}

EXPORT Error hipEventDestroy(FEvent *event) {
  auto &s = state();
  std::lock_guard g(s.lock);
  return s.events.erase(event) ? SUCCESS : ERROR_INVALID_HANDLE;  // queued operations hold their own reference
}

EXPORT Error hipEventRecord(FEvent *event, FStream *stream) {
  auto ev = get_event(event);
  auto st = get_stream(stream);
  if (!ev || !st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  ++state().count.event_records;
  ev->dev = st->owner;
  uint64_t gen = ev->recorded.fetch_add(1, std::memory_order_acq_rel) + 1;
  st->push([ev, gen] {
    uint64_t d = ev->done.load(std::memory_order_relaxed);
    while (d < gen && !ev->done.compare_exchange_weak(d, gen, std::memory_order_release)) {
    }
  });
  return SUCCESS;
}

EXPORT Error hipEventQuery(FEvent *event) {
  auto ev = get_event(event);
  if (!ev) return ERROR_INVALID_HANDLE;
  ++state().count.event_queries;
  if (int e = ev->dev->sticky.load(std::memory_order_acquire)) return e;
  return ev->done.load(std::memory_order_acquire) >= ev->recorded.load(std::memory_order_acquire) ? SUCCESS
                                                                                                   : ERROR_NOT_READY;
}

EXPORT Error hipEventSynchronize(FEvent *event) {
  auto ev = get_event(event);
  if (!ev) return ERROR_INVALID_HANDLE;
  uint64_t want = ev->recorded.load(std::memory_order_acquire);
  while (ev->done.load(std::memory_order_acquire) < want) {
    if (int e = ev->dev->sticky.load(std::memory_order_acquire)) return e;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return SUCCESS;
}

EXPORT Error hipStreamWaitEvent(FStream *stream, FEvent *event, unsigned flags) {
  (void)flags;
  auto ev = get_event(event);
  auto st = get_stream(stream);
  if (!ev || !st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  uint64_t gen = ev->recorded.load(std::memory_order_acquire);  // the latest record, as HIP captures it
  ++state().count.event_waits;
  if (state().sw.ignore_waits) return SUCCESS;  // the broken runtime a mutation check runs against
  FStream *raw = st.get();
  st->push([raw, ev, gen] { poll_until(raw, [&] { return ev->done.load(std::memory_order_acquire) >= gen; }); });
  return SUCCESS;
}

// The word a stream memory operation addresses (a device address of pinned or registered host memory).
static uint64_t *word_at(void *ptr) {
  std::lock_guard g(state().lock);
  return reinterpret_cast<uint64_t *>(device_view(reinterpret_cast<uintptr_t>(ptr), 8));
}

EXPORT Error hipStreamWriteValue64(FStream *stream, void *ptr, uint64_t value, unsigned flags) {
  (void)flags;
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  uint64_t *word = word_at(ptr);
  if (!word) return ERROR_INVALID_VALUE;
  ++state().count.write_values;
  st->push([word, value] { __atomic_store_n(word, value, __ATOMIC_RELEASE); });
  return SUCCESS;
}

EXPORT Error hipStreamWaitValue64(FStream *stream, void *ptr, uint64_t value, unsigned flags, uint64_t mask) {
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (flags != WAIT_VALUE_GEQ || mask != ~uint64_t{0}) return ERROR_INVALID_VALUE;  // rig uses GTE only
  if (int e = st->owner->sticky.load()) return e;
  uint64_t *word = word_at(ptr);
  if (!word) return ERROR_INVALID_VALUE;
  ++state().count.wait_values;
  if (state().sw.ignore_waits) return SUCCESS;
  FStream *raw = st.get();
  st->push([raw, word, value] {
    poll_until(raw, [&] { return static_cast<int64_t>(__atomic_load_n(word, __ATOMIC_ACQUIRE) - value) >= 0; });
  });
  return SUCCESS;
}

// ----- memory --------------------------------------------------------------------------------------------

EXPORT Error hipMalloc(void **ptr, size_t bytes) {
  if (!ptr) return ERROR_INVALID_VALUE;
  if (bytes == 0) {
    *ptr = nullptr;
    return SUCCESS;
  }
  Dev *d = current();
  if (int e = d->sticky.load()) return e;
  void *p = state().pools.memory.allocate(bytes, state().sw.device_memory_limit);
  if (!p) return ERROR_OUT_OF_MEMORY;
  std::lock_guard g(state().lock);
  state().regions[reinterpret_cast<uintptr_t>(p)] = {reinterpret_cast<uintptr_t>(p), bytes, Kind::device,
                                                     d->ordinal, 0};
  ++state().count.live_allocations;
  *ptr = p;
  return SUCCESS;
}

static Error free_region(void *ptr, Kind kind) {
  if (!ptr) return SUCCESS;
  size_t length = 0;
  {
    std::lock_guard g(state().lock);
    auto it = state().regions.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == state().regions.end() || it->second.kind != kind) return ERROR_INVALID_VALUE;
    if (it->second.pool) return ERROR_INVALID_VALUE;  // hipFreeAsync's to free
    length = it->second.length;
    state().regions.erase(it);
    --state().count.live_allocations;
  }
  if (kind == Kind::device)
    state().pools.memory.release(reinterpret_cast<uintptr_t>(ptr), length);
  else
    std::free(ptr);
  return SUCCESS;
}

EXPORT Error hipFree(void *ptr) { return free_region(ptr, Kind::device); }

// ----- stream-ordered pools (the model is common/fake_pool.h's; these check handles and keep regions) -----

FAKE_POOL_CALLS(Error, hipMemPoolCreate, hipMemPoolDestroy, hipMemPoolSetAttribute, hipMemPoolTrimTo, hipMemPoolSetAccess)

EXPORT Error hipMallocFromPoolAsync(void **ptr, size_t bytes, FPool *pool, FStream *stream) {
  if (!ptr || bytes == 0 || !pool) return ERROR_INVALID_VALUE;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  std::lock_guard g(state().lock);
  uintptr_t p = 0;
  if (Error r = state().pools.allocate(pool, bytes, st.get(), state().sw.device_memory_limit, &p))
    return r;
  Region r{p, bytes, Kind::device, pool->ordinal, 0};
  r.pool = pool;
  state().regions[p] = r;
  ++state().count.live_allocations;
  *ptr = reinterpret_cast<void *>(p);
  return SUCCESS;
}

// The pointer is gone at once; the memory is the pool's, or the runtime's, as fake_pool::Pools::free_async says.
EXPORT Error hipFreeAsync(void *ptr, FStream *stream) {
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  std::lock_guard g(state().lock);
  auto it = state().regions.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == state().regions.end() || it->second.kind != Kind::device) return ERROR_INVALID_VALUE;
  Region r = it->second;
  state().regions.erase(it);
  --state().count.live_allocations;
  state().pools.free_async(r.pool, r.begin, r.length, st.get());
  return SUCCESS;
}

EXPORT Error hipHostMalloc(void **ptr, size_t bytes, unsigned flags) {
  if (!ptr || bytes == 0) return ERROR_INVALID_VALUE;
  void *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) return ERROR_OUT_OF_MEMORY;
  std::lock_guard g(state().lock);
  state().regions[reinterpret_cast<uintptr_t>(p)] = {reinterpret_cast<uintptr_t>(p), bytes, Kind::host, -1, flags};
  ++state().count.live_allocations;
  *ptr = p;
  return SUCCESS;
}

EXPORT Error hipHostFree(void *ptr) { return free_region(ptr, Kind::host); }

EXPORT Error hipHostGetDevicePointer(void **device, void *host, unsigned flags) {
  if (!device || flags != 0) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  auto p = reinterpret_cast<uintptr_t>(host);
  if (FalseRegistration *f = find_false(p, 1)) {  // the device reaches the shadow, not the host's pages
    *device = f->shadow + (p - f->begin);
    return SUCCESS;
  }
  Region *r = find(p, 1);
  if (!r || (r->kind != Kind::host && r->kind != Kind::registered)) return ERROR_INVALID_VALUE;
  *device = reinterpret_cast<void *>(r->kind == Kind::registered ? p + kDeviceAlias : p);
  return SUCCESS;
}

EXPORT Error hipHostRegister(void *ptr, size_t bytes, unsigned flags) {
  if (!ptr || bytes == 0) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  ++s.count.register_calls;
  s.count.last_register_flags = flags;
  if (s.sw.register_refuse) return static_cast<Error>(s.sw.register_refuse);
  if (fake_gpu::refuse_register_now(s.sw.register_refuse_after)) return ERROR_OUT_OF_MEMORY;
  auto p = reinterpret_cast<uintptr_t>(ptr);
  bool unmapped = false, readable = true;
  std::string why = cannot_serve(p, p + bytes, &unmapped, &readable);
  if (unmapped) return ERROR_INVALID_VALUE;
  // Where asked: readable pages the process cannot write register only with hipHostRegisterReadOnly.
  if (s.sw.read_only_pages_need_flag && readable && !(flags & HOST_REGISTER_READ_ONLY) &&
      !fake_gpu::writable(p, p + bytes))
    return ERROR_INVALID_VALUE;
  ++s.count.registers;
  if (!why.empty()) {
    // Success, as the runtime answers; but the device will read other bytes than the host's.
    FalseRegistration f{p, bytes, static_cast<char *>(std::malloc(bytes)), why};
    if (!f.shadow) return ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < bytes; ++i)
      f.shadow[i] = readable ? static_cast<char>(~static_cast<const char *>(ptr)[i]) : 0;
    s.regions[reinterpret_cast<uintptr_t>(f.shadow)] = {reinterpret_cast<uintptr_t>(f.shadow), bytes, Kind::shadow,
                                                        -1, flags};
    s.false_registrations.push_back(f);
    ++s.count.false_successes;
    return SUCCESS;
  }
  s.regions[p] = {p, bytes, Kind::registered, -1, flags, fake_gpu::file_backed(p, p + bytes)};
  return SUCCESS;
}

EXPORT Error hipHostUnregister(void *ptr) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto p = reinterpret_cast<uintptr_t>(ptr);
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
  if (it == s.regions.end() || it->second.kind != Kind::registered) return ERROR_HOST_MEMORY_NOT_REGISTERED;
  if (s.sw.unregister_fail) {
    if (s.sw.unregister_fail == 1) s.sw.unregister_fail = 0;
    return ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  s.regions.erase(it);
  ++s.count.unregisters;
  return SUCCESS;
}

EXPORT Error hipMemcpyHtoD(void *dst, const void *src, size_t bytes) {
  Dev *d = current();
  if (int e = d->sticky.load()) return e;
  if (bytes == 0) return SUCCESS;
  long long ns_per_kib = 0;
  char *to;
  const char *from;
  {
    std::lock_guard g(state().lock);
    to = device_view(reinterpret_cast<uintptr_t>(dst), bytes);
    if (!to) return ERROR_INVALID_VALUE;
    from = host_source(src, bytes, &ns_per_kib);
  }
  std::memmove(to, from, bytes);
  spend(ns_per_kib * static_cast<long long>(bytes) / 1024);
  return SUCCESS;
}

EXPORT Error hipMemcpyDtoH(void *dst, void *src, size_t bytes) {
  Dev *d = current();
  if (int e = d->sticky.load()) return e;
  if (bytes == 0) return SUCCESS;
  const char *from;
  {
    std::lock_guard g(state().lock);
    from = device_view(reinterpret_cast<uintptr_t>(src), bytes);
    if (!from) return ERROR_INVALID_VALUE;
  }
  std::memmove(dst, from, bytes);
  return SUCCESS;
}

// A copy engine reaches host memory through one registration: a registered range's alias spanning two is
// refused, as the CUDA driver refuses it (kernels reach adjacent registrations as one range: find). Caller
// holds the lock.
static bool spans_registrations(uintptr_t a, size_t n) {
  if (a < kDeviceAlias) return false;
  uintptr_t p = a - kDeviceAlias;
  Region *r = find(p, n);
  return r && r->kind == Kind::registered && n > r->length - (p - r->begin);
}

EXPORT Error hipMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, FStream *stream) {
  if (kind != MEMCPY_DEFAULT) return ERROR_INVALID_VALUE;  // rig passes device addresses, direction inferred
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  char *to;
  const char *from;
  {
    std::lock_guard g(state().lock);
    to = device_view(reinterpret_cast<uintptr_t>(dst), bytes);
    from = device_view(reinterpret_cast<uintptr_t>(src), bytes);
    if (!to || !from) return ERROR_INVALID_VALUE;
    if (spans_registrations(reinterpret_cast<uintptr_t>(dst), bytes) ||
        spans_registrations(reinterpret_cast<uintptr_t>(src), bytes))
      return ERROR_INVALID_VALUE;
  }
  ++state().count.copies;
  long long delay = state().sw.copy_delay_us;
  st->push([to, from, bytes, delay] {
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    std::memmove(to, from, bytes);
  });
  return SUCCESS;
}

EXPORT Error hipMemsetD8Async(void *dst, unsigned char value, size_t count, FStream *stream) {
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  char *to;
  {
    std::lock_guard g(state().lock);
    to = device_view(reinterpret_cast<uintptr_t>(dst), count);
    if (!to) return ERROR_INVALID_VALUE;
  }
  st->push([to, value, count] { std::memset(to, value, count); });
  return SUCCESS;
}

// ----- modules and launches ------------------------------------------------------------------------------

EXPORT Error hipModuleLoadData(FModule **module, const void *image) {
  if (!module || !image) return ERROR_INVALID_VALUE;
  const auto *bytes = static_cast<const unsigned char *>(image);
  if (bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F') return ERROR_NO_BINARY_FOR_GPU;
  std::string text(static_cast<const char *>(image));
  if (text.find("fakehip:invalid") != std::string::npos) return ERROR_INVALID_KERNEL_FILE;
  auto m = std::make_unique<FModule>();
  m->dev = current();
  for (std::string &name : fake_gpu::entry_names(text)) {
    auto f = std::make_unique<FFunction>();
    f->name = std::move(name);
    f->module = m.get();
    m->functions.push_back(std::move(f));
  }
  if (m->functions.empty()) return ERROR_INVALID_KERNEL_FILE;
  auto &s = state();
  std::lock_guard g(s.lock);
  s.modules.insert(m.get());
  ++s.count.live_modules;
  *module = m.release();
  return SUCCESS;
}

EXPORT Error hipModuleUnload(FModule *module) {
  auto &s = state();
  {
    std::lock_guard g(s.lock);
    if (!s.modules.erase(module)) return ERROR_INVALID_HANDLE;
    --s.count.live_modules;
  }
  delete module;
  return SUCCESS;
}

EXPORT Error hipModuleGetFunction(FFunction **function, FModule *module, const char *name) {
  if (!function || !name) return ERROR_INVALID_VALUE;
  {
    std::lock_guard g(state().lock);
    if (!state().modules.count(module)) return ERROR_INVALID_HANDLE;
  }
  for (auto &f : module->functions)
    if (f->name == name && fake_gpu::builtin<Dev>(f->name)) {
      *function = f.get();
      return SUCCESS;
    }
  return ERROR_NOT_FOUND;
}

EXPORT Error hipModuleLaunchKernel(FFunction *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared, FStream *stream, void **params, void **extra) {
  if (!f || extra) return ERROR_INVALID_VALUE;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  {
    std::lock_guard g(state().lock);
    if (!state().modules.count(f->module)) return ERROR_INVALID_HANDLE;
  }
  if (f->module->dev != st->owner) return ERROR_INVALID_HANDLE;  // a function loaded on another device
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 || shared > 65536) return ERROR_INVALID_VALUE;
  const fake_gpu::Builtin<Dev> *b = fake_gpu::builtin<Dev>(f->name);
  Launch l{st->owner, {}, {}, {}};
  for (size_t i = 0; i < b->sizes.size(); ++i) {
    if (!params || !params[i]) return ERROR_INVALID_VALUE;
    const char *p = static_cast<const char *>(params[i]);
    l.params.emplace_back(p, p + b->sizes[i]);  // the runtime copies parameters at launch
  }
  bool fails = false;
  {
    std::lock_guard g(state().lock);
    auto &left = state().launches_until_failure;
    if (left > 0 && --left == 0) fails = true;
  }
  ++state().count.launches;
  long long delay = state().sw.launch_delay_us;
  st->push([l = std::move(l), b, fails, delay] {
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    if (fails) {
      l.owner->sticky.store(ERROR_LAUNCH_FAILURE, std::memory_order_release);
      return;
    }
    b->run(l);
  });
  return SUCCESS;
}
