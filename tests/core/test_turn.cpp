// A device's turn (src/core/turn.h): mutual exclusion with its acquire/release ordering under four threads
// (a plain counter, which ThreadSanitizer checks too), and a thread that has to sleep is woken by the
// holder's unlock and not before it.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "core/turn.h"

namespace {

int failures = 0;
void expect(bool ok, const char *what) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: %s\n", what);
  ++failures;
}

void exclusive_under_four_threads() {
  rig::Turn turn;
  long counter = 0;  // plain: only the turn orders the threads' increments
  constexpr int kThreads = 4, kRounds = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard g(turn);
        long seen = counter;
        if (i % 1024 == 0) std::this_thread::yield();  // a holder that is descheduled: others must sleep
        counter = seen + 1;
      }
    });
  for (auto &t : threads) t.join();
  expect(counter == long(kThreads) * kRounds, "every increment under the turn is kept");
}

void sleeper_woken_by_unlock() {
  rig::Turn turn;
  std::atomic<bool> released{false}, taken{false}, taken_before_release{false};
  turn.lock();
  std::thread waiter([&] {
    turn.lock();
    taken_before_release = !released.load();
    taken = true;
    turn.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the waiter is asleep in the kernel by now
  expect(!taken.load(), "a waiter does not take a held turn");
  released = true;
  turn.unlock();
  waiter.join();
  expect(taken.load() && !taken_before_release.load(), "the waiter takes the turn after, and only after, the unlock");
  // Free again, uncontended: the word went back to 0 whatever the waiter left.
  turn.lock();
  turn.unlock();
}

}  // namespace

int main() {
  exclusive_under_four_threads();
  sleeper_woken_by_unlock();
  if (failures) return 1;
  std::puts("turn: exclusive under 4 threads x 100000; a sleeping waiter woken by the unlock");
  return 0;
}
