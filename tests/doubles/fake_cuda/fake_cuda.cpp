// A fake libcuda over host memory, so the CUDA driver's logic (timeline, in-queue waits, loss, memory,
// registration, modules) runs in CI with no GPU. It exports exactly the entry points rig's CUDA driver
// loads (src/drivers/cuda/cu.h) plus fakecuda_control/fakecuda_query (fake_cuda.h), and cuLaunchHostFunc
// for the fake libnccl.
//
// Model: each context is a GPU; device memory is host memory (shared memory, so that another process can
// open it through an IPC handle: common/fake_ipc.h); each stream runs its queue of operations on
// a worker thread, in order, so work really runs after the enqueueing call returns (a missing wait shows
// as wrong bytes, especially with launch_delay_us/copy_delay_us). A failing launch sets the context's
// sticky error: from then on nothing of that context runs and its calls answer that error, as on a GPU.
#include "fake_cuda.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
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
#include "drivers/cuda/cu.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

using namespace rig::cu;

namespace {

using Clock = std::chrono::steady_clock;

// ----- switches and counters ------------------------------------------------------------------------------

struct Switches {
  long long devices = 2, integrated = 0, integrated_query_fails = 0, pageable_host_page_tables = 0,
            read_only_supported = 1, host_register_supported = 1, memops = 1, peer_access = 1,
            register_refuse = 0, register_refuse_after = 0, register_wrong_bytes = 0, unregister_fail = 0, registered_upload_ns_per_kib = 0,
            pinned_upload_ns_per_kib = 0, pageable_upload_ns_per_kib = 0, fail_launch_at = 0, launch_delay_us = 0,
            copy_delay_us = 0, ignore_waits = 0, pageable_dma_delay_us = 100, read_only_pages_need_flag = 0,
            mem_pools = 1, device_memory_limit = 0;
};

#define FAKE_SWITCHES(X)                                                                                       \
  X(devices) X(integrated) X(integrated_query_fails) X(pageable_host_page_tables) X(read_only_supported)       \
  X(host_register_supported) X(memops) X(peer_access) X(register_refuse) X(register_refuse_after) X(register_wrong_bytes)             \
  X(unregister_fail) X(registered_upload_ns_per_kib) X(pinned_upload_ns_per_kib)                              \
  X(pageable_upload_ns_per_kib) X(fail_launch_at) X(launch_delay_us) X(copy_delay_us) X(ignore_waits) X(pageable_dma_delay_us) X(read_only_pages_need_flag) \
  X(mem_pools) X(device_memory_limit)

struct Counters {
  std::atomic<long long> register_calls{0}, registers{0}, unregisters{0}, last_register_flags{-1}, launches{0}, copies{0},
      wait_values{0}, write_values{0}, event_waits{0}, event_records{0}, event_queries{0}, event_syncs{0},
      live_allocations{0}, live_streams{0}, live_modules{0}, live_ipc_mappings{0},
      file_uploads{0};  // uploads from a registered file mapping (registered_upload_ns_per_kib's case)
};

// ----- objects ---------------------------------------------------------------------------------------------

struct Ctx;
using FStream = fake_gpu::Stream<Ctx>;  // a stream of the owner (common/fake_gpu.h)

struct Ctx {
  int ordinal = 0;
  FStream *legacy = nullptr;  // the legacy default stream, made at first use, never destroyed
  std::atomic<int> sticky{0};
  int retains = 0;
  std::set<int> peers;  // ordinals whose memory this context may use in kernels
};

enum class Kind { device, host, registered, shadow, ipc };  // ipc: another process's memory, opened

struct Region {
  uintptr_t begin = 0;
  size_t length = 0;
  Kind kind = Kind::device;
  int owner = -1;            // device memory: the owning context's ordinal
  unsigned flags = 0;        // registered: the registration flags
  char *shadow = nullptr;    // registered with register_wrong_bytes: what the device sees instead
  bool file = false;         // registered: a file's pages (registered_upload_ns_per_kib applies), else
                             // anonymous memory, pinned as the driver's own (pinned_upload_ns_per_kib)
  // device memory of cuMemAllocFromPoolAsync's: its stream-ordered pool (common/fake_pool.h)
  fake_pool::Pool *pool = nullptr;
};

using FPool = fake_pool::Pool;

// One cuEventRecord: done once the stream reaches it. Records of one event may complete out of order (the
// event recorded on a slow stream, then on a fast one), and a wait or query concerns the record that was
// the latest when it was made, as in CUDA; so each record is its own object. An interprocess event's
// records are numbered in its shared page, where the other process sees them complete.
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
  Ctx *ctx = nullptr;
  std::mutex lock;
  std::shared_ptr<FRecord> latest;  // null: never recorded (queries answer done, waits pass)
  std::shared_ptr<fake_ipc::EventPage> ipc;  // made with CU_EVENT_INTERPROCESS, or opened from a handle
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
  Ctx *ctx = nullptr;
  std::vector<std::unique_ptr<FFunction>> functions;
};

// Device memory's source: shared memory (the memory section below), so that an IPC handle can name it.
void *arena_obtain(size_t bytes);
void arena_give_back(void *p, size_t bytes);

struct State {
  std::mutex lock;  // regions, registrations, objects sets, pools
  Switches sw;
  Counters count;
  fake_pool::Pools pools{arena_obtain, arena_give_back, lock};  // device memory within its limit, pools
  std::vector<std::unique_ptr<Ctx>> ctxs;
  std::map<uintptr_t, Region> regions;
  // Owners: a destroyed stream or event lives on while something still uses it (a queued operation, a
  // cuCtxSynchronize draining it), as CUDA allows destroying both with work pending.
  std::map<FStream *, std::shared_ptr<FStream>> streams;
  std::map<FEvent *, std::shared_ptr<FEvent>> events;
  std::set<FModule *> modules;
  long long launches_until_failure = 0;  // counts down from fail_launch_at
  bool initialized = false;
};

State &state() {
  static State &s = *new State;  // never destroyed: streams' workers may outlive static destruction
  return s;
}

thread_local Ctx *current = nullptr;

Ctx *ctx_of(int ordinal) {
  auto &s = state();
  while (static_cast<int>(s.ctxs.size()) <= ordinal) {
    s.ctxs.push_back(std::make_unique<Ctx>());
    s.ctxs.back()->ordinal = static_cast<int>(s.ctxs.size()) - 1;
  }
  return s.ctxs[ordinal].get();
}

// The region holding [p, p+n) (whole range), or null. Caller holds the lock.
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
  if (r.kind != Kind::registered || r.shadow) return nullptr;
  uintptr_t end = r.begin + r.length;
  for (auto next = std::next(it); end < p + n; ++next) {
    if (next == s.regions.end() || next->first != end || next->second.kind != Kind::registered || next->second.shadow)
      return nullptr;
    end += next->second.length;
  }
  return &r;
}

// Where the device reads or writes [p, p+n): registered-with-wrong-bytes host ranges map to their
// shadow. Null where no region holds it. Caller holds the lock.
char *device_view(uintptr_t p, size_t n) {
  Region *r = find(p, n);
  if (!r) return nullptr;
  if (r->kind == Kind::registered && r->shadow) return r->shadow + (p - r->begin);
  return reinterpret_cast<char *>(p);
}

// ----- streams -------------------------------------------------------------------------------------------

// The context's legacy stream: where the synchronous copies run, ordered among themselves but not with
// non-blocking streams (rig's), as in CUDA.
FStream *legacy_of(Ctx *c) {
  std::lock_guard g(state().lock);
  if (!c->legacy) c->legacy = new FStream(c);
  return c->legacy;
}

Result sticky_or(Ctx *c, Result r) {
  int s = c ? c->sticky.load(std::memory_order_acquire) : 0;
  return s ? s : r;
}

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
using Launch = fake_gpu::Launch<Ctx>;

// ----- kernels -------------------------------------------------------------------------------------------

// Checks that a kernel may touch [p, p+n) from its context (its device's memory, a peer's with peer access
// enabled, mapped host memory) and returns where the bytes are; sets the sticky error (illegal address)
// otherwise.
char *kernel_view(Ctx *ctx, uint64_t p, size_t n, bool write) {
  auto &s = state();
  std::lock_guard g(s.lock);
  Region *r = find(p, n);
  bool ok = r != nullptr;
  if (ok && (r->kind == Kind::device || r->kind == Kind::ipc) && r->owner != ctx->ordinal &&
      (r->pool ? !r->pool->reaches(ctx->ordinal) : !ctx->peers.count(r->owner)))
    ok = false;
  if (ok && write && r->kind == Kind::registered && (r->flags & HOST_REGISTER_READ_ONLY)) ok = false;
  if (!ok) {
    ctx->sticky.store(ERROR_ILLEGAL_ADDRESS, std::memory_order_release);
    return nullptr;
  }
  if (r->kind == Kind::registered && r->shadow) return r->shadow + (p - r->begin);
  return reinterpret_cast<char *>(p);
}

void read_env() {
  auto &sw = state().sw;
  auto get = [](const char *name, long long &field) {
    std::string key = "FAKECUDA_";
    for (const char *c = name; *c; ++c) key += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    if (const char *v = std::getenv(key.c_str())) field = std::atoll(v);
  };
#define FAKE_GET(name) get(#name, sw.name);
  FAKE_SWITCHES(FAKE_GET)
#undef FAKE_GET
  state().launches_until_failure = sw.fail_launch_at;
}

}  // namespace

// ----- control -------------------------------------------------------------------------------------------

EXPORT int fakecuda_control(const char *name, long long value) {
  auto &s = state();
  std::lock_guard g(s.lock);
  std::string n = name ? name : "";
  if (n == "reset") {
    s.sw = Switches{};
    read_env();  // the environment's FAKECUDA_* stay in force: they are how a test run is configured
    s.launches_until_failure = 0;
    for (auto &c : s.ctxs) c->sticky.store(0);
    s.count.register_calls = 0;
    s.count.registers = 0;
    s.count.unregisters = 0;
    s.count.last_register_flags = -1;
    s.count.launches = 0;
    s.count.copies = 0;
    s.count.wait_values = 0;
    s.count.write_values = 0;
    s.count.event_waits = 0;
    s.count.event_records = 0;
    s.count.event_queries = 0;
    s.count.event_syncs = 0;
    return 0;
  }
#define FAKE_SET(field)            \
  if (n == #field) {               \
    s.sw.field = value;            \
    if (n == "fail_launch_at") s.launches_until_failure = value; \
    return 0;                      \
  }
  FAKE_SWITCHES(FAKE_SET)
#undef FAKE_SET
  return -1;
}

EXPORT long long fakecuda_query(const char *name) {
  auto &s = state();
  std::lock_guard g(s.lock);
  std::string n = name ? name : "";
#define FAKE_COUNT(field) \
  if (n == #field) return s.count.field.load();
  FAKE_COUNT(register_calls) FAKE_COUNT(registers) FAKE_COUNT(unregisters) FAKE_COUNT(last_register_flags) FAKE_COUNT(launches)
  FAKE_COUNT(copies) FAKE_COUNT(wait_values) FAKE_COUNT(write_values) FAKE_COUNT(event_waits)
  FAKE_COUNT(event_records) FAKE_COUNT(event_queries) FAKE_COUNT(event_syncs)
  FAKE_COUNT(live_allocations) FAKE_COUNT(live_streams) FAKE_COUNT(live_modules) FAKE_COUNT(live_ipc_mappings)
  FAKE_COUNT(file_uploads)
#undef FAKE_COUNT
#define FAKE_POOL_COUNT(field) \
  if (n == #field) return s.pools.memory.count.field.load();
  FAKE_POOL_COUNTERS(FAKE_POOL_COUNT)
#undef FAKE_POOL_COUNT
  if (n == "sticky") return ctx_of(0)->sticky.load();
  if (n == "sticky1") return ctx_of(1)->sticky.load();
#define FAKE_SWITCH(field) \
  if (n == #field) return s.sw.field;
  FAKE_SWITCHES(FAKE_SWITCH)
#undef FAKE_SWITCH
  return -1;
}

// ----- initialisation, errors, devices -------------------------------------------------------------------

EXPORT Result cuInit(unsigned flags) {
  if (flags != 0) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  if (!s.initialized) {
    read_env();
    s.initialized = true;
  }
  return SUCCESS;
}

EXPORT Result cuDriverGetVersion(int *version) {
  if (!version) return ERROR_INVALID_VALUE;
  *version = 13000;
  return SUCCESS;
}

EXPORT Result cuGetErrorName(Result error, const char **name) {
  static const std::map<int, const char *> &names = *new std::map<int, const char *>{
      {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
      {3, "CUDA_ERROR_NOT_INITIALIZED"}, {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
      {200, "CUDA_ERROR_INVALID_IMAGE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
      {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"}, {218, "CUDA_ERROR_INVALID_PTX"},
      {400, "CUDA_ERROR_INVALID_HANDLE"}, {500, "CUDA_ERROR_NOT_FOUND"}, {600, "CUDA_ERROR_NOT_READY"},
      {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
      {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"}, {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
      {719, "CUDA_ERROR_LAUNCH_FAILED"}, {800, "CUDA_ERROR_NOT_PERMITTED"}, {801, "CUDA_ERROR_NOT_SUPPORTED"},
      {999, "CUDA_ERROR_UNKNOWN"}};
  if (!name) return ERROR_INVALID_VALUE;
  auto it = names.find(error);
  if (it == names.end()) {
    *name = nullptr;
    return ERROR_INVALID_VALUE;
  }
  *name = it->second;
  return SUCCESS;
}

EXPORT Result cuGetErrorString(Result error, const char **text) { return cuGetErrorName(error, text); }

static bool valid_device(Device d) { return d >= 0 && d < state().sw.devices; }

EXPORT Result cuDeviceGetCount(int *count) {
  if (!count) return ERROR_INVALID_VALUE;
  *count = static_cast<int>(state().sw.devices);
  return SUCCESS;
}

EXPORT Result cuDeviceGet(Device *device, int ordinal) {
  if (!device || !valid_device(ordinal)) return ERROR_INVALID_DEVICE;
  *device = ordinal;
  return SUCCESS;
}

EXPORT Result cuDeviceGetName(char *name, int length, Device device) {
  if (!name || length <= 0 || !valid_device(device)) return ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(length), "Fake CUDA Device %d", device);
  return SUCCESS;
}

EXPORT Result cuDeviceTotalMem_v2(size_t *bytes, Device device) {
  if (!bytes || !valid_device(device)) return ERROR_INVALID_VALUE;
  *bytes = size_t{16} << 30;
  return SUCCESS;
}

EXPORT Result cuDeviceGetAttribute(int *value, int attribute, Device device) {
  if (!value || !valid_device(device)) return ERROR_INVALID_VALUE;
  const Switches &sw = state().sw;
  switch (attribute) {
    case ATTR_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case ATTR_MAX_BLOCK_DIM_X: case ATTR_MAX_BLOCK_DIM_Y: *value = 1024; break;
    case ATTR_MAX_BLOCK_DIM_Z: *value = 64; break;
    case ATTR_MAX_GRID_DIM_X: *value = 2147483647; break;
    case ATTR_MAX_GRID_DIM_Y: case ATTR_MAX_GRID_DIM_Z: *value = 65535; break;
    case ATTR_MAX_SHARED_MEMORY_PER_BLOCK: *value = 49152; break;
    case ATTR_INTEGRATED:
      if (sw.integrated_query_fails) return ERROR_INVALID_VALUE;
      *value = static_cast<int>(sw.integrated);
      break;
    case ATTR_CAN_MAP_HOST_MEMORY: case ATTR_UNIFIED_ADDRESSING: *value = 1; break;
    case ATTR_HOST_REGISTER_SUPPORTED: *value = static_cast<int>(sw.host_register_supported); break;
    case ATTR_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: *value = static_cast<int>(sw.pageable_host_page_tables); break;
    case ATTR_READ_ONLY_HOST_REGISTER_SUPPORTED: *value = static_cast<int>(sw.read_only_supported); break;
    case ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS: *value = static_cast<int>(sw.memops); break;
    default: *value = 0;
  }
  return SUCCESS;
}

EXPORT Result cuDeviceCanAccessPeer(int *can, Device device, Device peer) {
  if (!can || !valid_device(device) || !valid_device(peer)) return ERROR_INVALID_DEVICE;
  *can = device != peer && state().sw.peer_access ? 1 : 0;
  return SUCCESS;
}

// ----- contexts ------------------------------------------------------------------------------------------

EXPORT Result cuDevicePrimaryCtxRetain(Context *context, Device device) {
  if (!context || !valid_device(device)) return ERROR_INVALID_DEVICE;
  auto &s = state();
  std::lock_guard g(s.lock);
  Ctx *c = ctx_of(device);
  ++c->retains;
  *context = reinterpret_cast<Context>(c);
  return SUCCESS;
}

EXPORT Result cuDevicePrimaryCtxRelease_v2(Device device) {
  if (!valid_device(device)) return ERROR_INVALID_DEVICE;
  auto &s = state();
  std::lock_guard g(s.lock);
  Ctx *c = ctx_of(device);
  if (c->retains == 0) return ERROR_INVALID_CONTEXT;
  --c->retains;
  return SUCCESS;
}

EXPORT Result cuCtxGetCurrent(Context *context) {
  if (!context) return ERROR_INVALID_VALUE;
  *context = reinterpret_cast<Context>(current);
  return SUCCESS;
}

EXPORT Result cuCtxSetCurrent(Context context) {
  current = reinterpret_cast<Ctx *>(context);
  return SUCCESS;
}

EXPORT Result cuCtxSynchronize(void) {
  if (!current) return ERROR_INVALID_CONTEXT;
  std::vector<std::shared_ptr<FStream>> mine;
  {
    auto &s = state();
    std::lock_guard g(s.lock);
    for (auto &[raw, st] : s.streams)
      if (st->owner == current) mine.push_back(st);
  }
  for (auto &st : mine) st->drain();  // without the state lock: kernels running in workers take it
  legacy_of(current)->drain();
  return sticky_or(current, SUCCESS);
}

EXPORT Result cuCtxEnablePeerAccess(Context peer, unsigned flags) {
  if (!current) return ERROR_INVALID_CONTEXT;
  if (flags != 0 || !peer) return ERROR_INVALID_VALUE;
  auto &s = state();
  std::lock_guard g(s.lock);
  Ctx *p = reinterpret_cast<Ctx *>(peer);
  if (p == current || !s.sw.peer_access) return ERROR_PEER_ACCESS_UNSUPPORTED;
  if (current->peers.count(p->ordinal)) return ERROR_PEER_ACCESS_ALREADY_ENABLED;
  current->peers.insert(p->ordinal);
  return SUCCESS;
}

// ----- streams and events --------------------------------------------------------------------------------

EXPORT Result cuStreamCreate(FStream **stream, unsigned flags) {
  (void)flags;
  if (!stream) return ERROR_INVALID_VALUE;
  if (!current) return ERROR_INVALID_CONTEXT;
  if (int e = current->sticky.load()) return e;
  auto st = std::make_shared<FStream>(current);
  auto &s = state();
  std::lock_guard g(s.lock);
  s.streams[st.get()] = st;
  ++s.count.live_streams;
  *stream = st.get();
  return SUCCESS;
}

EXPORT Result cuStreamDestroy_v2(FStream *stream) {
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
  st.reset();  // the last owner finishes queued work and joins the worker (waits that cannot be met give up)
  return SUCCESS;
}

EXPORT Result cuStreamQuery(FStream *stream) {
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load(std::memory_order_acquire)) return e;
  return st->idle() ? SUCCESS : ERROR_NOT_READY;
}

EXPORT Result cuStreamSynchronize(FStream *stream) {
  if (!stream) {  // the legacy stream
    if (!current) return ERROR_INVALID_CONTEXT;
    legacy_of(current)->drain();
    return sticky_or(current, SUCCESS);
  }
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  st->drain();
  return sticky_or(st->owner, SUCCESS);
}

EXPORT Result cuEventCreate(FEvent **event, unsigned flags) {
  if (!event) return ERROR_INVALID_VALUE;
  if (!current) return ERROR_INVALID_CONTEXT;
  auto e = std::make_shared<FEvent>();
  e->ctx = current;
  if (flags & EVENT_INTERPROCESS) {
    if (!(flags & EVENT_DISABLE_TIMING)) return ERROR_INVALID_VALUE;  // CUDA's rule for interprocess events
    e->ipc.reset(fake_ipc::EventPage::make(&e->exported.fd));
    if (!e->ipc) return ERROR_OUT_OF_MEMORY;
  }
  auto &s = state();
  std::lock_guard g(s.lock);
  s.events[e.get()] = e;
  *event = e.get();
  return SUCCESS;
}

EXPORT Result cuEventDestroy_v2(FEvent *event) {
  auto &s = state();
  std::lock_guard g(s.lock);
  // Operations already queued hold their own reference.
  return s.events.erase(event) ? SUCCESS : ERROR_INVALID_HANDLE;
}

EXPORT Result cuEventRecord(FEvent *event, FStream *stream) {
  auto ev = get_event(event);
  auto st = get_stream(stream);
  if (!ev || !st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  ++state().count.event_records;
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

EXPORT Result cuEventQuery(FEvent *event) {
  auto ev = get_event(event);
  if (!ev) return ERROR_INVALID_HANDLE;
  ++state().count.event_queries;
  if (int e = ev->ctx->sticky.load(std::memory_order_acquire)) return e;
  auto rec = ev->current();
  return !rec || rec->ready() ? SUCCESS : ERROR_NOT_READY;
}

EXPORT Result cuEventSynchronize(FEvent *event) {
  auto ev = get_event(event);
  if (!ev) return ERROR_INVALID_HANDLE;
  ++state().count.event_syncs;
  auto rec = ev->current();
  while (rec && !rec->ready()) {
    if (int e = ev->ctx->sticky.load(std::memory_order_acquire)) return e;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return SUCCESS;
}

EXPORT Result cuStreamWaitEvent(FStream *stream, FEvent *event, unsigned flags) {
  (void)flags;
  auto ev = get_event(event);
  auto st = get_stream(stream);
  if (!ev || !st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  auto rec = ev->current();  // the latest record, as CUDA captures it
  ++state().count.event_waits;
  if (state().sw.ignore_waits) return SUCCESS;  // a broken driver: proves the tests see a missing wait
  FStream *raw = st.get();  // the worker runs this op, so the stream outlives it
  st->push([raw, rec] {
    poll_until(raw, [&] { return !rec || rec->ready(); });
  });
  return SUCCESS;
}

// Not one of rig's entry points: the fake libnccl (tests/doubles/fake_nccl) runs its collectives' work on
// the caller's streams through it, as NCCL's kernels run there. Skipped after a sticky error, as all work.
EXPORT Result cuLaunchHostFunc(FStream *stream, void (*fn)(void *), void *data) {
  if (!fn) return ERROR_INVALID_VALUE;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  st->push([fn, data] { fn(data); });
  return SUCCESS;
}

EXPORT Result cuStreamWriteValue64_v2(FStream *stream, DevicePtr addr, uint64_t value, unsigned flags) {
  (void)flags;
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  {
    std::lock_guard g(state().lock);
    if (!find(addr, 8)) return ERROR_INVALID_VALUE;
  }
  ++state().count.write_values;
  auto *word = reinterpret_cast<uint64_t *>(addr);
  st->push([word, value] { __atomic_store_n(word, value, __ATOMIC_RELEASE); });
  return SUCCESS;
}

EXPORT Result cuStreamWaitValue64_v2(FStream *stream, DevicePtr addr, uint64_t value, unsigned flags) {
  if (!state().sw.memops) return ERROR_NOT_SUPPORTED;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (flags != WAIT_VALUE_GEQ) return ERROR_INVALID_VALUE;  // rig uses GEQ only
  if (int e = st->owner->sticky.load()) return e;
  {
    std::lock_guard g(state().lock);
    if (!find(addr, 8)) return ERROR_INVALID_VALUE;
  }
  ++state().count.wait_values;
  if (state().sw.ignore_waits) return SUCCESS;  // a broken driver: proves the tests see a missing wait
  auto *word = reinterpret_cast<uint64_t *>(addr);
  FStream *raw = st.get();
  st->push([raw, word, value] {
    poll_until(raw, [&] {
      return static_cast<int64_t>(__atomic_load_n(word, __ATOMIC_ACQUIRE) - value) >= 0;
    });
  });
  return SUCCESS;
}

// ----- memory --------------------------------------------------------------------------------------------

// Device memory: shared memory, so that cuIpcGetMemHandle can name it to another process.
fake_ipc::Arena &device_memory() {
  static fake_ipc::Arena &a = *new fake_ipc::Arena;  // never destroyed: streams may touch memory at exit
  return a;
}

namespace {
void *arena_obtain(size_t bytes) { return device_memory().allocate(bytes); }
void arena_give_back(void *p, size_t bytes) { device_memory().release(p, bytes); }
}  // namespace

static void add_region(const Region &r) {
  state().regions[r.begin] = r;
  ++state().count.live_allocations;
}

// Device memory within device_memory_limit (common/fake_pool.h), or null where it runs out.
static void *device_bytes(size_t bytes) {
  return state().pools.memory.allocate(bytes, state().sw.device_memory_limit);
}

static void release_device_bytes(uintptr_t p, size_t bytes) { state().pools.memory.release(p, bytes); }

EXPORT Result cuMemAlloc_v2(DevicePtr *ptr, size_t bytes) {
  if (!ptr || bytes == 0) return ERROR_INVALID_VALUE;
  if (!current) return ERROR_INVALID_CONTEXT;
  if (int e = current->sticky.load()) return e;
  void *p = device_bytes(bytes);
  if (!p) return ERROR_OUT_OF_MEMORY;
  std::lock_guard g(state().lock);
  add_region({reinterpret_cast<uintptr_t>(p), bytes, Kind::device, current->ordinal, 0, nullptr});
  *ptr = reinterpret_cast<uintptr_t>(p);
  return SUCCESS;
}

static Result free_region(uintptr_t p, Kind kind) {
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
    release_device_bytes(p, r.length);
  else
    std::free(reinterpret_cast<void *>(p));
  return SUCCESS;
}

EXPORT Result cuMemFree_v2(DevicePtr ptr) {
  {
    std::lock_guard g(state().lock);
    auto it = state().regions.find(ptr);
    if (it != state().regions.end() && it->second.pool) return ERROR_INVALID_VALUE;  // cuMemFreeAsync's to free
  }
  return free_region(ptr, Kind::device);
}

// ----- stream-ordered pools ------------------------------------------------------------------------------

// The model is common/fake_pool.h's; these check the handles and keep the regions.
FAKE_POOL_CALLS(Result, cuMemPoolCreate, cuMemPoolDestroy, cuMemPoolSetAttribute, cuMemPoolTrimTo, cuMemPoolSetAccess)

EXPORT Result cuMemAllocFromPoolAsync(DevicePtr *ptr, size_t bytes, FPool *pool, FStream *stream) {
  if (!ptr || bytes == 0 || !pool) return ERROR_INVALID_VALUE;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  std::lock_guard g(state().lock);
  uintptr_t p = 0;
  if (Result r = state().pools.allocate(pool, bytes, st.get(), state().sw.device_memory_limit, &p))
    return r;
  Region r{p, bytes, Kind::device, pool->ordinal, 0, nullptr};
  r.pool = pool;
  add_region(r);
  *ptr = p;
  return SUCCESS;
}

// The pointer is gone at once; the memory is the pool's, or the driver's, as fake_pool::Pools::free_async says.
EXPORT Result cuMemFreeAsync(DevicePtr ptr, FStream *stream) {
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  std::lock_guard g(state().lock);
  auto it = state().regions.find(ptr);
  if (it == state().regions.end() || it->second.kind != Kind::device) return ERROR_INVALID_VALUE;
  Region r = it->second;
  state().regions.erase(it);
  --state().count.live_allocations;
  state().pools.free_async(r.pool, r.begin, r.length, st.get());
  return SUCCESS;
}

EXPORT Result cuMemHostAlloc(void **ptr, size_t bytes, unsigned flags) {
  (void)flags;
  if (!ptr || bytes == 0) return ERROR_INVALID_VALUE;
  if (!current) return ERROR_INVALID_CONTEXT;
  void *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) return ERROR_OUT_OF_MEMORY;
  std::lock_guard g(state().lock);
  add_region({reinterpret_cast<uintptr_t>(p), bytes, Kind::host, -1, flags, nullptr});
  *ptr = p;
  return SUCCESS;
}

EXPORT Result cuMemFreeHost(void *ptr) { return free_region(reinterpret_cast<uintptr_t>(ptr), Kind::host); }

EXPORT Result cuMemHostGetDevicePointer_v2(DevicePtr *dptr, void *host, unsigned flags) {
  if (!dptr || flags != 0) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  auto p = reinterpret_cast<uintptr_t>(host);
  Region *r = find(p, 1);
  if (!r || (r->kind != Kind::host && r->kind != Kind::registered)) return ERROR_INVALID_VALUE;
  *dptr = r->shadow ? reinterpret_cast<uintptr_t>(r->shadow) + (p - r->begin) : p;
  return SUCCESS;
}

EXPORT Result cuMemHostRegister_v2(void *ptr, size_t bytes, unsigned flags) {
  if (!ptr || bytes == 0) return ERROR_INVALID_VALUE;
  if (!current) return ERROR_INVALID_CONTEXT;
  auto &s = state();
  std::lock_guard g(s.lock);
  ++s.count.register_calls;
  s.count.last_register_flags = flags;
  if (s.sw.register_refuse) return static_cast<Result>(s.sw.register_refuse);
  if (fake_gpu::refuse_register_now(s.sw.register_refuse_after)) return ERROR_OUT_OF_MEMORY;
  if ((flags & HOST_REGISTER_READ_ONLY) && !s.sw.read_only_supported) return ERROR_NOT_SUPPORTED;
  auto p = reinterpret_cast<uintptr_t>(ptr);
  // As the driver, where asked: pages the process cannot write register only with the read-only flag.
  if (s.sw.read_only_pages_need_flag && !(flags & HOST_REGISTER_READ_ONLY) && !fake_gpu::writable(p, p + bytes))
    return ERROR_INVALID_VALUE;
  // Any overlap with a registration (or with memory the driver allocated) is "already registered".
  auto it = s.regions.lower_bound(p);
  if (it != s.regions.end() && it->first < p + bytes && it->second.kind != Kind::shadow)
    return ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  if (it != s.regions.begin()) {
    auto prev = std::prev(it);
    if (prev->second.kind != Kind::shadow && prev->first + prev->second.length > p)
      return ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  }
  Region r{p, bytes, Kind::registered, -1, flags, nullptr, fake_gpu::file_backed(p, p + bytes)};
  if (s.sw.register_wrong_bytes) {
    // The device sees other bytes than the host wrote: the complement of what was there at registration.
    r.shadow = static_cast<char *>(std::malloc(bytes));
    if (!r.shadow) return ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < bytes; ++i) r.shadow[i] = static_cast<char>(~static_cast<const char *>(ptr)[i]);
    s.regions[reinterpret_cast<uintptr_t>(r.shadow)] = {reinterpret_cast<uintptr_t>(r.shadow), bytes, Kind::shadow,
                                                        -1, flags, nullptr};
  }
  s.regions[p] = r;
  ++s.count.registers;
  return SUCCESS;
}

EXPORT Result cuMemHostUnregister(void *ptr) {
  auto &s = state();
  std::lock_guard g(s.lock);
  auto p = reinterpret_cast<uintptr_t>(ptr);
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

EXPORT Result cuMemcpyHtoD_v2(DevicePtr dst, const void *src, size_t bytes) {
  if (!current) return ERROR_INVALID_CONTEXT;
  if (int e = current->sticky.load()) return e;
  if (bytes == 0) return SUCCESS;
  auto &s = state();
  const char *from = static_cast<const char *>(src);
  long long ns_per_kib = 0;
  bool pageable = false;
  char *to;
  {
    std::lock_guard g(s.lock);
    to = device_view(dst, bytes);
    if (!to) return ERROR_INVALID_VALUE;
    Region *r = find(reinterpret_cast<uintptr_t>(src), bytes);
    if (r && r->kind == Kind::registered) {
      ns_per_kib = r->file ? s.sw.registered_upload_ns_per_kib : s.sw.pinned_upload_ns_per_kib;
      if (r->file) ++s.count.file_uploads;
      if (r->shadow) from = r->shadow + (reinterpret_cast<uintptr_t>(src) - r->begin);
    } else if (r && r->kind == Kind::host) {
      ns_per_kib = s.sw.pinned_upload_ns_per_kib;
    } else {
      ns_per_kib = s.sw.pageable_upload_ns_per_kib;
      pageable = true;
    }
  }
  FStream *legacy = legacy_of(current);
  if (pageable) {
    // CUDA returns once pageable bytes are staged, before the DMA lands: the copy finishes later on the
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

EXPORT Result cuMemcpyDtoH_v2(void *dst, DevicePtr src, size_t bytes) {
  if (!current) return ERROR_INVALID_CONTEXT;
  if (int e = current->sticky.load()) return e;
  if (bytes == 0) return SUCCESS;
  const char *from;
  {
    std::lock_guard g(state().lock);
    from = device_view(src, bytes);
    if (!from) return ERROR_INVALID_VALUE;
  }
  legacy_of(current)->drain();  // ordered after earlier copies on the legacy stream
  std::memmove(dst, from, bytes);
  return SUCCESS;
}

// A copy engine reaches host memory through one registration: a range that spans two is refused, as the
// driver refuses it (kernels reach adjacent registrations as one range: find). Caller holds the lock.
static bool spans_registrations(uintptr_t p, size_t n) {
  Region *r = find(p, n);
  return r && r->kind == Kind::registered && n > r->length - (p - r->begin);
}

EXPORT Result cuMemcpyAsync(DevicePtr dst, DevicePtr src, size_t bytes, FStream *stream) {
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  char *to;
  const char *from;
  {
    std::lock_guard g(state().lock);
    to = device_view(dst, bytes);
    from = device_view(src, bytes);
    if (!to || !from) return ERROR_INVALID_VALUE;
    if (spans_registrations(dst, bytes) || spans_registrations(src, bytes)) return ERROR_INVALID_VALUE;
  }
  ++state().count.copies;
  long long delay = state().sw.copy_delay_us;
  st->push([to, from, bytes, delay] {
    if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    std::memmove(to, from, bytes);
  });
  return SUCCESS;
}

EXPORT Result cuMemsetD8Async(DevicePtr dst, unsigned char value, size_t count, FStream *stream) {
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  char *to;
  {
    std::lock_guard g(state().lock);
    to = device_view(dst, count);
    if (!to) return ERROR_INVALID_VALUE;
  }
  st->push([to, value, count] { std::memset(to, value, count); });
  return SUCCESS;
}

// ----- interprocess handles (common/fake_ipc.h) ----------------------------------------------------------

// The driver's answer to a handle it cannot open: bytes that name nothing of the fake's are invalid values;
// a handle of this process, a context's mistake; what an exited or closing exporter named, gone.
static Result refused(fake_ipc::Refusal why) {
  switch (why) {
    case fake_ipc::Refusal::same_process: return ERROR_INVALID_CONTEXT;
    case fake_ipc::Refusal::gone: return ERROR_INVALID_HANDLE;
    default: return ERROR_INVALID_VALUE;
  }
}

EXPORT Result cuIpcGetMemHandle(IpcHandle *handle, DevicePtr ptr) {
  if (!current) return ERROR_INVALID_CONTEXT;
  if (!handle) return ERROR_INVALID_VALUE;
  std::lock_guard g(state().lock);
  auto it = state().regions.find(ptr);  // the base of an allocation of cuMemAlloc's, as CUDA requires
  if (it == state().regions.end() || it->second.kind != Kind::device) return ERROR_INVALID_VALUE;
  if (it->second.pool) return ERROR_INVALID_VALUE;  // a pool made without an exportable handle type
  void *p = reinterpret_cast<void *>(ptr);
  auto h = fake_ipc::describe("fake-ipc-memory", device_memory().fd(), device_memory().offset_of(p), it->second.length,
                              it->second.owner);
  std::memcpy(handle, &h, sizeof h);
  return SUCCESS;
}

EXPORT Result cuIpcOpenMemHandle_v2(DevicePtr *ptr, IpcHandle handle, unsigned flags) {
  if (!ptr || flags > IPC_MEM_LAZY_ENABLE_PEER_ACCESS) return ERROR_INVALID_VALUE;
  if (!current) return ERROR_INVALID_CONTEXT;
  if (int e = current->sticky.load()) return e;
  fake_ipc::Handle h;
  fake_ipc::Refusal why;
  void *p = fake_ipc::open(&handle, "fake-ipc-memory", &h, &why);
  if (!p) return refused(why);
  std::lock_guard g(state().lock);
  // The bytes stay on the exporter's GPU. Opened from another GPU of the host, kernels reach them through
  // peer access, which the lazy flag enables as cuCtxEnablePeerAccess would (CUDA's rule); without the flag
  // only where it was enabled already. Where the two GPUs cannot be peers, the open fails.
  int owner = h.device >= 0 ? h.device : current->ordinal;
  if (owner != current->ordinal) {
    if (!state().sw.peer_access) {
      munmap(p, fake_ipc::pages(h.length));
      return ERROR_PEER_ACCESS_UNSUPPORTED;
    }
    if (flags & IPC_MEM_LAZY_ENABLE_PEER_ACCESS) current->peers.insert(owner);
  }
  state().regions[reinterpret_cast<uintptr_t>(p)] = {reinterpret_cast<uintptr_t>(p), h.length, Kind::ipc, owner, 0,
                                                     nullptr};
  ++state().count.live_ipc_mappings;
  *ptr = reinterpret_cast<uintptr_t>(p);
  return SUCCESS;
}

EXPORT Result cuIpcCloseMemHandle(DevicePtr ptr) {
  Region r;
  {
    std::lock_guard g(state().lock);
    auto it = state().regions.find(ptr);
    if (it == state().regions.end() || it->second.kind != Kind::ipc) return ERROR_INVALID_VALUE;
    r = it->second;
    state().regions.erase(it);
    --state().count.live_ipc_mappings;
  }
  munmap(reinterpret_cast<void *>(ptr), fake_ipc::pages(r.length));
  return SUCCESS;
}

EXPORT Result cuIpcGetEventHandle(IpcHandle *handle, FEvent *event) {
  if (!current) return ERROR_INVALID_CONTEXT;  // as the H200's driver answers
  auto ev = get_event(event);
  if (!ev || !handle) return ERROR_INVALID_HANDLE;
  if (!ev->ipc || ev->opened) return ERROR_INVALID_VALUE;  // made without CU_EVENT_INTERPROCESS
  auto h = fake_ipc::describe("fake-ipc-event", ev->exported.fd, 0, fake_ipc::kPage);
  std::memcpy(handle, &h, sizeof h);
  return SUCCESS;
}

EXPORT Result cuIpcOpenEventHandle(FEvent **event, IpcHandle handle) {
  if (!event) return ERROR_INVALID_VALUE;
  if (!current) return ERROR_INVALID_CONTEXT;
  fake_ipc::Handle h;
  fake_ipc::Refusal why;
  void *p = fake_ipc::open(&handle, "fake-ipc-event", &h, &why);
  if (!p) return refused(why);
  auto e = std::make_shared<FEvent>();
  e->ctx = current;
  e->ipc.reset(fake_ipc::EventPage::adopt(p));
  e->opened = true;
  std::lock_guard g(state().lock);
  state().events[e.get()] = e;
  *event = e.get();
  return SUCCESS;
}

// ----- modules and launches ------------------------------------------------------------------------------

EXPORT Result cuModuleLoadDataEx(FModule **module, const void *image, unsigned count, int *options, void **values) {
  if (!module || !image) return ERROR_INVALID_VALUE;
  if (!current) return ERROR_INVALID_CONTEXT;
  char *log = nullptr;
  size_t log_size = 0;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == JIT_ERROR_LOG_BUFFER) log = static_cast<char *>(values[i]);
    if (options[i] == JIT_ERROR_LOG_BUFFER_SIZE_BYTES) log_size = reinterpret_cast<uintptr_t>(values[i]);
  }
  auto say = [&](const char *text) {
    if (log && log_size) std::snprintf(log, log_size, "%s", text);
  };
  const auto *bytes = static_cast<const unsigned char *>(image);
  if ((bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F') ||
      (bytes[0] == 0x50 && bytes[1] == 0xED && bytes[2] == 0x55 && bytes[3] == 0xBA))
    return ERROR_NO_BINARY_FOR_GPU;
  std::string text(static_cast<const char *>(image));
  if (text.find("fakecuda:invalid") != std::string::npos) {
    say("ptxas fatal: fakecuda was asked to reject this text");
    return ERROR_INVALID_PTX;
  }
  auto m = std::make_unique<FModule>();
  m->ctx = current;
  for (std::string &name : fake_gpu::entry_names(text)) {
    auto f = std::make_unique<FFunction>();
    f->name = std::move(name);
    f->module = m.get();
    m->functions.push_back(std::move(f));
  }
  if (m->functions.empty()) {
    say("fakecuda: no .entry in the module text");
    return ERROR_INVALID_PTX;
  }
  auto &s = state();
  std::lock_guard g(s.lock);
  s.modules.insert(m.get());
  ++s.count.live_modules;
  *module = m.release();
  return SUCCESS;
}

EXPORT Result cuModuleUnload(FModule *module) {
  auto &s = state();
  {
    std::lock_guard g(s.lock);
    if (!s.modules.erase(module)) return ERROR_INVALID_HANDLE;
    --s.count.live_modules;
  }
  delete module;
  return SUCCESS;
}

EXPORT Result cuModuleGetFunction(FFunction **function, FModule *module, const char *name) {
  if (!function || !name) return ERROR_INVALID_VALUE;
  {
    std::lock_guard g(state().lock);
    if (!state().modules.count(module)) return ERROR_INVALID_HANDLE;
  }
  for (auto &f : module->functions)
    if (f->name == name && fake_gpu::builtin<Ctx>(f->name)) {
      *function = f.get();
      return SUCCESS;
    }
  return ERROR_NOT_FOUND;
}

EXPORT Result cuLaunchKernel(FFunction *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shared, FStream *stream, void **params, void **extra) {
  if (!f || extra) return ERROR_INVALID_VALUE;
  auto st = get_stream(stream);
  if (!st) return ERROR_INVALID_HANDLE;
  if (int e = st->owner->sticky.load()) return e;
  {
    std::lock_guard g(state().lock);
    if (!state().modules.count(f->module)) return ERROR_INVALID_HANDLE;
  }
  if (f->module->ctx != st->owner) return ERROR_INVALID_HANDLE;  // a function of another context
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 || shared > 49152) return ERROR_INVALID_VALUE;
  const fake_gpu::Builtin<Ctx> *b = fake_gpu::builtin<Ctx>(f->name);
  Launch l{st->owner, {gx, gy, gz}, {bx, by, bz}, {}};
  for (size_t i = 0; i < b->sizes.size(); ++i) {
    if (!params || !params[i]) return ERROR_INVALID_VALUE;
    const char *p = static_cast<const char *>(params[i]);
    l.params.emplace_back(p, p + b->sizes[i]);  // the driver copies parameters at launch
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
      l.owner->sticky.store(ERROR_LAUNCH_FAILED, std::memory_order_release);
      return;
    }
    b->run(l);
  });
  return SUCCESS;
}
