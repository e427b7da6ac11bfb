// The fake stream library's state (fake_stream.h): its switches and counters, its objects (GPUs, regions of
// memory, false registrations, events, modules) and the one lock over them, and the double's control and
// query calls.
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

#include "../common/fake_device_memory.h"
#include "../common/fake_gpu.h"
#include "../common/fake_ipc.h"
#include "drivers/stream/calls.h"
#include "face.h"

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
  X(pageable_dma_delay_us, 100) X(read_only_pages_need_flag, 0) X(device_memory_limit, 0)                    \
  X(stream_calls_need_context, 0)

struct Switches {
#define FAKE_SWITCH_FIELD(name, initial) long long name = initial;
  FAKE_SWITCHES(FAKE_SWITCH_FIELD)
#undef FAKE_SWITCH_FIELD
};

// Counters of calls, zeroed by the reset switch; the live ones (and device_bytes, fake_device_memory.h) are
// state and stay.
#define FAKE_CALL_COUNTERS(X)                                                                                 \
  X(register_calls) X(registers) X(false_successes) X(unregisters) X(launches) X(copies) X(wait_values)        \
  X(write_values) X(event_waits) X(event_records) X(event_queries) X(event_syncs)
#define FAKE_LIVE_COUNTERS(X) X(live_allocations) X(live_streams) X(live_modules) X(live_ipc_mappings) X(file_uploads)

// One counter per entry point of the stream table (drivers/stream/calls.h), by the table's field name:
// `query("calls:copy_async")` is how often cuMemcpyAsync (hipMemcpyAsync) was entered, whatever it answered.
// What rig's submit path costs in driver calls is read from these (tests/cuda/test_cuda_floor.cpp).
enum class Entry {
#define FAKE_ENTRY_NAME(A, field, ...) field,
  RIG_STREAM_CALLS(FAKE_ENTRY_NAME, _) RIG_STREAM_OPTIONAL_CALLS(FAKE_ENTRY_NAME, _)
#undef FAKE_ENTRY_NAME
  count
};
inline constexpr const char *kEntryNames[] = {
#define FAKE_ENTRY_STRING(A, field, ...) #field,
    RIG_STREAM_CALLS(FAKE_ENTRY_STRING, _) RIG_STREAM_OPTIONAL_CALLS(FAKE_ENTRY_STRING, _)
#undef FAKE_ENTRY_STRING
};

struct Counters {
  std::atomic<long long> entries[static_cast<int>(Entry::count)] = {};  // zeroed by reset, as the calls'
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

inline void *arena_obtain(size_t bytes);  // device memory's source (below)
inline void arena_give_back(void *p, size_t bytes);

struct State {
  std::mutex lock;  // regions, registrations, objects sets
  Switches sw;
  Counters count;
  fake_device_memory::DeviceMemory memory{arena_obtain, arena_give_back};  // device memory within its limit
  std::vector<std::unique_ptr<Gpu>> gpus;
  std::map<uintptr_t, Region> regions;
  std::vector<FalseRegistration> false_registrations;
  // Owners: a destroyed stream or event lives on while something still uses it (a queued operation, a
  // synchronisation draining it), as both libraries allow destroying them with work pending.
  std::map<FStream *, std::shared_ptr<FStream>> streams;
  std::map<FEvent *, std::shared_ptr<FEvent>> events;
  std::set<FModule *> modules;
  // Graphs (calls_graphs.h): a stream being captured and the operations captured so far; graphs and
  // executable graphs alive, each its operations in stream order.
  std::map<FStream *, std::vector<std::function<void()>>> capturing;
  std::map<void *, std::vector<std::function<void()>>> graphs, graph_execs;
  long long launches_until_failure = 0;  // counts down from fail_launch_at
  bool initialized = false;
};

inline State &state() {
  static State &s = *new State;  // never destroyed: streams' workers may outlive static destruction
  return s;
}

// FAKECUDA_DISTURB_KIB (FAKEHIP_DISTURB_KIB): a real driver's call is microseconds of its own work over its
// own memory, which pushes the caller's lines out of the nearest caches and its pages out of the first-level
// TLB (issue 35: rig's own time per operation moved threefold between hosts while the hand-written
// program's did not). The fake's calls touch almost nothing, so a submit's cost for what it touches never
// shows on it. With the variable set, every entry reads and writes one line on each page of that much
// memory of the double's own, a different line of each page at each call, like a driver walking its
// tables. Read once, at the first entry, and not a switch: entries read it with no lock, and the switches
// change under the state's lock (a reset rewrites them all). Relaxed atomic loads and stores, not a locked
// add: entries come from several threads, and a driver's own walk is plain loads and stores.
// FAKECUDA_DISTURB_HUGE set too puts that memory on transparent huge pages (madvise): the same lines, few
// pages, so the caches' misses show without the TLB's (bench/README.md, "A driver's footprint on the fake").
struct Disturbance {
  long long pages = 0;
  char *memory = nullptr;
  Disturbance() {
    std::string key = std::string(face().env_prefix) + "DISTURB_KIB";
    if (const char *v = std::getenv(key.c_str()); v && std::atoll(v) > 0) {
      pages = (std::atoll(v) + 3) / 4;
      size_t bytes = ((static_cast<size_t>(pages) << 12) + (2u << 20) - 1) & ~((2ull << 20) - 1);
      memory = static_cast<char *>(std::aligned_alloc(2u << 20, bytes));
      if (std::getenv((std::string(face().env_prefix) + "DISTURB_HUGE").c_str()))
        madvise(memory, bytes, MADV_HUGEPAGE);
    }
  }
  void touch() const {
    static std::atomic<unsigned> turn{0};
    unsigned line = turn.fetch_add(1, std::memory_order_relaxed);
    for (long long page = 0; page < pages; ++page) {
      char *at = memory + (page << 12) + (((page + line) & 63) << 6);
      __atomic_store_n(at, static_cast<char>(__atomic_load_n(at, __ATOMIC_RELAXED) + 1), __ATOMIC_RELAXED);
    }
  }
};

// Every entry point of the table counts itself first (calls_*.h; HIP's own adapters in fake_hip.cpp).
inline void entered(Entry e) {
  state().count.entries[static_cast<int>(e)].fetch_add(1, std::memory_order_relaxed);
  static const Disturbance disturbance;
  if (disturbance.memory) [[unlikely]]
    disturbance.touch();
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

inline Result sticky_or(Gpu *g, Result r) {
  int s = g ? g->sticky.load(std::memory_order_acquire) : 0;
  return s ? s : r;
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
    for (auto &e : s.count.entries) e = 0;
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
  FAKE_CALL_COUNTERS(FAKE_COUNT)
  FAKE_LIVE_COUNTERS(FAKE_COUNT)
  FAKE_COUNT(last_register_flags)
#undef FAKE_COUNT
  if (n == "device_bytes") return s.memory.device_bytes.load();
  if (n == "ops_pending") {  // work enqueued on the streams and not yet run: a test waits for it unseen by rig
    long long pending = 0;
    for (auto &[raw, st] : s.streams) {
      std::lock_guard g2(st->lock);  // order: the state's lock, then a stream's (push and run take only theirs)
      pending += static_cast<long long>(st->ops.size()) + st->running;
    }
    return pending;
  }
  if (n.rfind("calls:", 0) == 0)
    for (int i = 0; i < static_cast<int>(Entry::count); ++i)
      if (n.compare(6, std::string::npos, kEntryNames[i]) == 0) return s.count.entries[i].load();
  if (n == "sticky") return gpu_of(0)->sticky.load();
  if (n == "sticky1") return gpu_of(1)->sticky.load();
#define FAKE_SWITCH(field, initial) \
  if (n == #field) return s.sw.field;
  FAKE_SWITCHES(FAKE_SWITCH)
#undef FAKE_SWITCH
  return -1;
}

}  // namespace fake_stream
