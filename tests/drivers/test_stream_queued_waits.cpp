// A stream device's ring of in-queue waits (drivers/stream/queued_waits.h): one writer pushes and drops the
// settled prefix; readers on other threads walk it with no lock. Checked here without a library: what a walk
// sees (every live entry once, whole, never a dropped or half-written one), that only a prefix is dropped,
// that the ring wraps, and a reader racing a writer that wraps it many times (the tsan build runs this too).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

// The engine's headers before cmocka's, whose fail() macro would rewrite rig::fail's declaration.
#include "drivers/stream/queued_waits.h"

extern "C" {  // cmocka 1.1's header has no C++ guard of its own
#include "rigtest.h"
}

namespace {

using rig::stream::QueuedWaits;
using rig::stream::TimelineSlot;

// Entries whose three fields agree: value v waits on producer (v % 3) for its value 10 * v.
TimelineSlot *producer_of(uint64_t v) { return reinterpret_cast<TimelineSlot *>(uintptr_t{0x1000} * (v % 3 + 1)); }
QueuedWaits::Wait wait_of(uint64_t v) { return {producer_of(v), 10 * v, v}; }

std::vector<uint64_t> walk(const QueuedWaits &q) {
  std::vector<uint64_t> seen;
  q.for_each([&](const QueuedWaits::Wait &w) {
    assert_ptr_equal(w.producer, producer_of(w.value));
    assert_int_equal(w.producer_value, 10 * w.value);
    seen.push_back(w.value);
  });
  return seen;
}

void test_a_walk_sees_each_live_entry_once_in_order(void **) {
  auto q = std::make_unique<QueuedWaits>();
  assert_true(walk(*q).empty());
  for (uint64_t v = 1; v <= 5; ++v) q->push(wait_of(v));
  assert_int_equal(q->live(), 5);
  assert_int_equal(q->oldest_value(), 1);
  std::vector<uint64_t> want = {1, 2, 3, 4, 5};
  assert_true(walk(*q) == want);
}

void test_only_the_settled_prefix_is_dropped(void **) {
  auto q = std::make_unique<QueuedWaits>();
  for (uint64_t v = 1; v <= 6; ++v) q->push(wait_of(v));
  // 1, 2 settled; 3 not (a producer lost short of it, say); 4 settled: 4 stays behind 3.
  q->drop_settled([](const QueuedWaits::Wait &w) { return w.value != 3; });
  assert_int_equal(q->live(), 4);
  assert_int_equal(q->oldest_value(), 3);
  std::vector<uint64_t> want = {3, 4, 5, 6};
  assert_true(walk(*q) == want);
  q->drop_settled([](const QueuedWaits::Wait &) { return true; });
  assert_int_equal(q->live(), 0);
  assert_true(walk(*q).empty());
}

void test_the_ring_fills_and_wraps(void **) {
  auto q = std::make_unique<QueuedWaits>();
  uint64_t next = 1;
  for (int lap = 0; lap < 3; ++lap) {
    while (!q->full()) q->push(wait_of(next++));
    assert_int_equal(q->live(), QueuedWaits::kCapacity);
    std::vector<uint64_t> seen = walk(*q);
    assert_int_equal(seen.size(), QueuedWaits::kCapacity);
    assert_int_equal(seen.front(), next - QueuedWaits::kCapacity);
    assert_int_equal(seen.back(), next - 1);
    // Half passed: dropped; the rest stay, in order, across the ring's end.
    uint64_t passed = next - QueuedWaits::kCapacity / 2;
    q->drop_settled([&](const QueuedWaits::Wait &w) { return w.value < passed; });
    assert_int_equal(q->live(), QueuedWaits::kCapacity / 2);
    assert_int_equal(q->oldest_value(), passed);
  }
}

void test_a_reader_racing_the_writer_sees_only_whole_live_entries(void **) {
  auto q = std::make_unique<QueuedWaits>();
  std::atomic<bool> done{false}, bad{false};  // bad: what the reader saw was torn or out of order (cmocka's
                                              // asserts belong to the main thread)
  std::atomic<uint64_t> walks{0}, entries{0};
  std::thread reader([&] {
    while (!done.load(std::memory_order_acquire)) {
      uint64_t last = 0;
      q->for_each([&](const QueuedWaits::Wait &w) {
        // Whole (its fields agree) and in order; one dropped while the walk ran may still be seen (it was live
        // when the walk began), never one rewritten for a later index: never a value twice or backwards.
        if (w.producer != producer_of(w.value) || w.producer_value != 10 * w.value || w.value <= last) bad = true;
        last = w.value;
        entries.fetch_add(1, std::memory_order_relaxed);
      });
      walks.fetch_add(1, std::memory_order_relaxed);
    }
  });
  // The writer starts once the reader walks, and goes on until the reader has walked a thousand times
  // through at least 200 rounds (about 100 laps of the ring), or 10 s have passed.
  while (walks.load(std::memory_order_acquire) == 0) std::this_thread::yield();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  uint64_t next = 1, start_walks = walks.load();
  for (int round = 0; round < 200 || (walks.load() - start_walks < 1000 && std::chrono::steady_clock::now() < deadline);
       ++round) {
    for (int i = 0; i < 1000 && !q->full(); ++i) q->push(wait_of(next++));
    uint64_t passed = next - 50;
    q->drop_settled([&](const QueuedWaits::Wait &w) { return w.value < passed; });
  }
  done.store(true, std::memory_order_release);
  reader.join();
  assert_false(bad.load());
  assert_true(entries.load() > 0);  // the walks met the writer's entries, not only an empty ring
  assert_int_equal(q->live(), 50);
  std::fprintf(stderr, "%llu walks saw %llu entries while %llu were pushed\n", (unsigned long long)walks.load(),
               (unsigned long long)entries.load(), (unsigned long long)(next - 1));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_walk_sees_each_live_entry_once_in_order),
      cmocka_unit_test(test_only_the_settled_prefix_is_dropped),
      cmocka_unit_test(test_the_ring_fills_and_wraps),
      cmocka_unit_test(test_a_reader_racing_the_writer_sees_only_whole_live_entries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
