// Deadlines and interrupts for waits. A wait in rig checks both at least every slice (1 ms), so
// rig_interrupt_waits() and timeouts are seen promptly whatever the driver.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rig {

using Clock = std::chrono::steady_clock;

// Nanoseconds on Clock, for elapsed times (the loader's stats and trace, the probe's phases).
inline uint64_t steady_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

// One pause of a spin-wait: lets the sibling hyperthread run and keeps the loop from flooding the memory bus.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

struct Deadline {
  Clock::time_point at = Clock::time_point::max();

  static Deadline forever() { return {}; }
  // timeout_ns as the C API takes it: UINT64_MAX is forever, 0 only checks.
  static Deadline after_ns(uint64_t timeout_ns) {
    if (timeout_ns == UINT64_MAX) return {};
    auto now = Clock::now();
    auto room = Clock::time_point::max() - now;
    auto want = std::chrono::nanoseconds(timeout_ns);
    if (want >= room) return {};
    return {now + std::chrono::duration_cast<Clock::duration>(want)};
  }
  bool is_forever() const { return at == Clock::time_point::max(); }
  bool passed() const { return !is_forever() && Clock::now() >= at; }
};

// Set by rig_interrupt_waits; relaxed suffices: a wait only needs to see it eventually (next slice).
extern std::atomic<bool> interrupt_waits;
inline bool interrupted() { return interrupt_waits.load(std::memory_order_relaxed); }

}  // namespace rig
