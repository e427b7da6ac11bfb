// What the fake libcuda and the fake HIP runtime share: a stream (a worker thread running queued operations
// in order), a busy wait, and the builtin kernels the tests launch by name. Each double instantiates them
// with its own `Owner`, the context (CUDA) or device (HIP) its streams and launches belong to: it has a
// `std::atomic<int> sticky` (0, or the error after which nothing of it runs), and the double defines
// `char *kernel_view(Owner *, uint64_t address, size_t n, bool write)` before instantiating the kernels: the
// bytes a kernel may touch there, or null with the sticky error set.
#pragma once

#include <algorithm>
#include <cctype>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "drivers/stream/calls.h"
#include "host_pages.h"

namespace fake_gpu {

using Clock = std::chrono::steady_clock;

inline void spend(long long ns) {  // a busy wait: sleeps are too coarse for per-KiB costs
  if (ns <= 0) return;
  auto until = Clock::now() + std::chrono::nanoseconds(ns);
  if (ns > 200000) std::this_thread::sleep_for(std::chrono::nanoseconds(ns - 100000));
  while (Clock::now() < until) {
  }
}

// The register_refuse_after switch of both fakes, under the fake's lock: `left` > 0 registrations still
// succeed (each counts one down), then every one is refused (-1); 0: off. True: refuse this one.
inline bool refuse_register_now(long long &left) {
  if (left < 0) return true;
  if (left > 0 && --left == 0) left = -1;
  return false;
}

// ----- streams -------------------------------------------------------------------------------------------

template <class Owner>
struct Stream {
  Owner *owner;
  std::mutex lock;
  std::condition_variable changed;
  std::deque<std::function<void()>> ops;
  bool running = false;
  bool stopping = false;
  std::thread worker;

  explicit Stream(Owner *o) : owner(o) { worker = std::thread([this] { run(); }); }

  void push(std::function<void()> op) {
    {
      std::lock_guard g(lock);
      ops.push_back(std::move(op));
    }
    changed.notify_all();
  }

  void run() {
    std::unique_lock g(lock);
    for (;;) {
      changed.wait(g, [&] { return stopping || !ops.empty(); });
      if (ops.empty()) return;  // stopping, drained
      auto op = std::move(ops.front());
      ops.pop_front();
      running = true;
      g.unlock();
      // After a sticky error nothing of the owner runs (its work is gone, as on a GPU).
      if (owner->sticky.load(std::memory_order_acquire) == 0) op();
      g.lock();
      running = false;
      changed.notify_all();
    }
  }

  bool idle() {
    std::lock_guard g(lock);
    return ops.empty() && !running;
  }

  void drain() {
    std::unique_lock g(lock);
    changed.wait(g, [&] { return ops.empty() && !running; });
  }

  ~Stream() {
    {
      std::lock_guard g(lock);
      stopping = true;
    }
    changed.notify_all();
    worker.join();
  }
};

// Polls `ready` until true, the owner's sticky error, or the stream stopping (a wait that can never be
// met must not keep the stream's destruction from returning).
template <class Owner>
void poll_until(Stream<Owner> *st, const std::function<bool()> &ready) {
  while (!ready()) {
    if (st->owner->sticky.load(std::memory_order_acquire)) return;
    {
      std::lock_guard g(st->lock);
      if (st->stopping) return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// ----- modules -------------------------------------------------------------------------------------------

// The kernel names a module's text declares (PTX's `.entry name`, which the tests' modules use for both
// doubles), in order.
inline std::vector<std::string> entry_names(const std::string &text) {
  std::vector<std::string> names;
  for (size_t at = text.find(".entry"); at != std::string::npos; at = text.find(".entry", at + 6)) {
    size_t b = at + 6;
    while (b < text.size() && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
    size_t e = b;
    while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
    if (e > b) names.push_back(text.substr(b, e - b));
  }
  return names;
}

// ----- kernels -------------------------------------------------------------------------------------------

// A launch as the stream runs it: its owner, its shape and a copy of each parameter's bytes.
template <class Owner>
struct Launch {
  Owner *owner;
  unsigned grid[3], block[3];
  std::vector<std::vector<char>> params;
};

template <class Owner>
uint64_t param_u64(const Launch<Owner> &l, size_t i) {
  uint64_t v = 0;
  std::memcpy(&v, l.params[i].data(), std::min<size_t>(8, l.params[i].size()));
  return v;
}

struct Scalars32 {
  uint32_t n, k;
};

template <class Owner>
Scalars32 scalars32(const Launch<Owner> &l, size_t i) {
  Scalars32 s{};
  std::memcpy(&s, l.params[i].data(), std::min(sizeof s, l.params[i].size()));
  return s;
}

template <class Owner>
struct Builtin {
  const char *name;
  std::vector<size_t> sizes;  // parameter sizes, for copying kernelParams at launch
  void (*run)(const Launch<Owner> &);
};

// The shape of the element-wise kernels (params: in, out, {n, k}): out[i] = step(in[i], k, i) for i < n.
// Each element is read before it is written, so in and out may be one buffer, as on a GPU where each
// thread owns one i.
template <class Owner, class Step>
void map_u32(const Launch<Owner> &l, Step step) {
  Scalars32 s = scalars32(l, 2);
  auto *in = reinterpret_cast<uint32_t *>(kernel_view(l.owner, param_u64(l, 0), s.n * 4ull, false));
  auto *out = reinterpret_cast<uint32_t *>(kernel_view(l.owner, param_u64(l, 1), s.n * 4ull, true));
  if (!in || !out) return;
  for (uint32_t i = 0; i < s.n; ++i) out[i] = step(in[i], s.k, i);
}

// out[i] = in[i] + k for i < n
template <class Owner>
void k_add_u32(const Launch<Owner> &l) {
  map_u32(l, [](uint32_t x, uint32_t k, uint32_t) { return x + k; });
}

// out[i] = in[i] * 31 + k + i: order-dependent (steps applied in another order give other numbers)
template <class Owner>
void k_chain_step(const Launch<Owner> &l) {
  map_u32(l, [](uint32_t x, uint32_t k, uint32_t i) { return x * 31u + k + i; });
}

// out[i] = k for i < n
template <class Owner>
void k_fill_u32(const Launch<Owner> &l) {
  Scalars32 s = scalars32(l, 1);
  auto *out = reinterpret_cast<uint32_t *>(kernel_view(l.owner, param_u64(l, 0), s.n * 4ull, true));
  if (!out) return;
  for (uint32_t i = 0; i < s.n; ++i) out[i] = s.k;
}

// Busy for ns nanoseconds (scalars: one u64)
template <class Owner>
void k_delay(const Launch<Owner> &l) { spend(static_cast<long long>(param_u64(l, 0))); }

// Writes through a null pointer: an illegal address, as a faulting kernel on a GPU
template <class Owner>
void k_fault(const Launch<Owner> &l) {
  l.owner->sticky.store(rig::stream::ERROR_ILLEGAL_ADDRESS, std::memory_order_release);
}

// The builtin kernel of that name (what the tests' modules name), or null.
template <class Owner>
const Builtin<Owner> *builtin(const std::string &name) {
  // Never destroyed: stream workers may still run kernels while the process exits (a failed test).
  static const std::vector<Builtin<Owner>> &b = *new std::vector<Builtin<Owner>>{
      {"rig_add_u32", {8, 8, 8}, k_add_u32<Owner>},
      {"rig_chain_step", {8, 8, 8}, k_chain_step<Owner>},
      {"rig_fill_u32", {8, 8}, k_fill_u32<Owner>},
      {"rig_delay", {8}, k_delay<Owner>},
      {"rig_fault", {8}, k_fault<Owner>},
  };
  for (const auto &x : b)
    if (name == x.name) return &x;
  return nullptr;
}

}  // namespace fake_gpu
