// The stream device's prepared calls (drivers/stream/prepared.h), which both its recorded and its general
// hand-over enqueue: every address resolved from the bindings, zero-length copies and fills dropped, a
// launch's parameter block pointing at its slots' addresses and at the work's scalars; and the storage the
// general hand-over reuses, prepared again for a larger and then a smaller work, describes only the last
// one. No library is loaded: the calls are read, not made.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

// The engine's headers before cmocka's, whose fail() macro would rewrite rig::fail's declaration.
#include "drivers/stream/prepared.h"

extern "C" {  // cmocka 1.1's header has no C++ guard of its own
#include "rigtest.h"
}

namespace {

using rig::Binding;
using rig::Memory;
using rig::Part;
using rig::stream::DevicePtr;
using rig::stream::Prepared;
using rig::stream::PreparedCall;

Part copy(uint32_t src, uint32_t dst, size_t src_offset, size_t dst_offset, size_t length) {
  Part p;
  p.kind = RIG_PART_COPY;
  p.src_slot = src, p.dst_slot = dst, p.src_offset = src_offset, p.dst_offset = dst_offset, p.length = length;
  return p;
}

Part launch(uintptr_t function, std::vector<uint32_t> slots) {
  Part p;
  p.kind = RIG_PART_LAUNCH;
  p.function = function;
  p.grid[0] = 3, p.block[0] = 64, p.shared_bytes = 16;
  p.slots = std::move(slots);
  return p;
}

// The address the launch parameter `i` of `call` points at (a slot's device address).
DevicePtr argument(const PreparedCall &call, size_t i) { return *static_cast<DevicePtr *>(call.params[i]); }

void parts_become_resolved_calls(void **) {
  Memory a{nullptr, 0x10000, 0, 0, 4096}, b{nullptr, 0x20000, 0, 0, 4096};
  Binding slots[3] = {{&a, 256, 1024, RIG_ACCESS_READ}, {&b, 512, 2048, RIG_ACCESS_WRITE},
                      {&a, 0, 4096, RIG_ACCESS_READ_WRITE}};
  Part fill;
  fill.kind = RIG_PART_FILL;
  fill.dst_slot = 1, fill.dst_offset = 8, fill.length = 100, fill.byte = 7;
  Part empty_fill = fill;
  empty_fill.length = 0;
  std::vector<Part> parts = {copy(0, 1, 16, 32, 64), copy(0, 1, 0, 0, 0), fill, empty_fill,
                             launch(0xf00d, {2, 0}), launch(0xbeef, {1})};
  const std::byte scalars[8] = {};
  Prepared prepared;
  prepared.prepare({parts, slots, scalars});
  auto calls = prepared.calls();
  assert_int_equal(calls.size(), 4);  // the zero-length copy and fill enqueue nothing

  assert_int_equal(calls[0].kind, RIG_PART_COPY);
  assert_int_equal(calls[0].src, 0x10000 + 256 + 16);
  assert_int_equal(calls[0].dst, 0x20000 + 512 + 32);
  assert_int_equal(calls[0].length, 64);

  assert_int_equal(calls[1].kind, RIG_PART_FILL);
  assert_int_equal(calls[1].dst, 0x20000 + 512 + 8);
  assert_int_equal(calls[1].length, 100);
  assert_int_equal(calls[1].byte, 7);

  assert_int_equal(calls[2].kind, RIG_PART_LAUNCH);
  assert_int_equal(reinterpret_cast<uintptr_t>(calls[2].function), 0xf00d);
  assert_int_equal(calls[2].grid[0], 3);
  assert_int_equal(calls[2].block[0], 64);
  assert_int_equal(calls[2].shared_bytes, 16);
  assert_int_equal(argument(calls[2], 0), 0x10000);        // slot 2: a from 0
  assert_int_equal(argument(calls[2], 1), 0x10000 + 256);  // slot 0
  assert_ptr_equal(calls[2].params[2], scalars);           // the scalars are the last parameter, in place

  assert_int_equal(argument(calls[3], 0), 0x20000 + 512);  // the second launch has a block of its own
  assert_ptr_equal(calls[3].params[1], scalars);
  assert_ptr_not_equal(calls[3].params, calls[2].params);
}

void storage_prepared_again_describes_only_the_last_work(void **) {
  Memory a{nullptr, 0x10000, 0, 0, 1 << 20};
  std::vector<Binding> slots;
  for (size_t i = 0; i < 16; ++i) slots.push_back({&a, i * 4096, 4096, RIG_ACCESS_READ_WRITE});
  Prepared prepared;
  // A small launch, then a larger one (its blocks grow), then a copy and a launch with no scalars.
  std::vector<Part> small = {launch(1, {0})};
  std::vector<Part> large = {launch(2, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}), launch(3, {15})};
  std::vector<Part> last = {copy(3, 4, 0, 0, 4096), launch(4, {5, 6})};
  const std::byte scalars[4] = {};
  prepared.prepare({small, slots, scalars});
  assert_int_equal(prepared.calls().size(), 1);
  prepared.prepare({large, slots, scalars});
  auto calls = prepared.calls();
  assert_int_equal(calls.size(), 2);
  for (size_t i = 0; i < 16; ++i) assert_int_equal(argument(calls[0], i), 0x10000 + i * 4096);
  assert_ptr_equal(calls[0].params[16], scalars);
  assert_int_equal(argument(calls[1], 0), 0x10000 + 15 * 4096);
  prepared.prepare({last, slots, {}});
  calls = prepared.calls();
  assert_int_equal(calls.size(), 2);
  assert_int_equal(calls[0].kind, RIG_PART_COPY);
  assert_int_equal(calls[0].src, 0x10000 + 3 * 4096);
  assert_int_equal(calls[0].dst, 0x10000 + 4 * 4096);
  assert_int_equal(reinterpret_cast<uintptr_t>(calls[1].function), 4);
  assert_int_equal(argument(calls[1], 0), 0x10000 + 5 * 4096);
  assert_int_equal(argument(calls[1], 1), 0x10000 + 6 * 4096);
  // A launch with no slots and no scalars: no parameters at all, so the driver is given null.
  std::vector<Part> none = {launch(5, {})};
  prepared.prepare({none, slots, {}});
  assert_null(prepared.calls()[0].params);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parts_become_resolved_calls),
      cmocka_unit_test(storage_prepared_again_describes_only_the_last_work),
  };
  return cmocka_run_group_tests_name("stream prepared calls", tests, nullptr, nullptr);
}
