// Issue 35's driver-call table, held: every entry point of the stream table that rig calls per chained
// operation (a copy, or a kernel launch, reading what the operation before it wrote on the other device),
// counted by the fake libcuda's per-entry counters, against the budget below. The budget is what the
// hand-written program of bench/cuda makes, (b), plus what rig's promise to leave the caller's context
// alone costs (the context query, and a switch and a switch back where another context is current):
// bench/README.md's table. Any other call, or one more of these, per operation fails the test. On the fake's
// counters, or on a real GPU through the counting interposer (tests/doubles/count_cuda), on the event timeline (CUDA's default; HIP's with RIG_HIP_TIMELINE=events,
// as tests/hip runs this same source: HIP's context is its current device, hipSetDevice).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "drivers/stream/calls.h"

extern "C" {  // cmocka 1.1's header has no C++ guard of its own
#include "gpu_test.h"
}

namespace {

using rig::stream::Context;

constexpr int kOps = 2048;  // two rings of events: the ring's reuse is counted too
constexpr int kBytes = 4096;

const char *const kEntries[] = {
#define ENTRY_NAME(A, field, ...) #field,
    RIG_STREAM_CALLS(ENTRY_NAME, _) RIG_STREAM_OPTIONAL_CALLS(ENTRY_NAME, _)
#undef ENTRY_NAME
};
constexpr int kEntryCount = sizeof kEntries / sizeof *kEntries;

long long entered(const char *field) { return gt_query(("calls:" + std::string(field)).c_str()); }

// What the calling thread has current while the chain is submitted: none (CUDA; HIP always has a current
// device, so there the second GPU's), or the first GPU's.
enum class Caller { no_context, first_gpu_current };

bool hip() { return std::strcmp(gt()->prefix, "hip") == 0; }

// Whether the library refuses a call naming a stream without the stream's context current, which rig
// answers by making it current (stream/gpu.h, CurrentWhenAsked) and remembering it for the GPU (each device
// keeps a copy, so one open before learns at its own first refusal, within the budget's rounding): never on the
// fake unless its switch stream_calls_need_context says so; unknown on a real driver (CUDA documents the
// stream's context as the one used, and the H200's driver takes such calls: bench/README.md).
enum class Library { takes_stream_context, asks_for_context, unknown };

// The budget of `field` for kOps chained operations. `switches`: operations submitted while another
// context (or none) is current on the thread.
long long budget(const char *field, bool launches, long long switches, Library library) {
  auto is = [&](const char *name) { return std::strcmp(field, name) == 0; };
  bool asks = library != Library::takes_stream_context;
  // (b): the wait for the other device's last value, the operation, the record of its own value; where the
  // library asks for the context, the one refused call that taught rig so (whichever of the three it was).
  if (is("stream_wait_event") || is("event_record") || is(launches ? "launch" : "copy_async"))
    return kOps + (asks && switches ? 1 : 0);
  // No context query and no switch: every call of a hand-over names rig's stream. Where the library asks
  // for the context: Current's query on each operation, and a switch and a switch back where the caller's
  // context is not the device's.
  if (is("get_current")) return asks && switches ? kOps : 0;
  if (is("set_current")) return asks ? 2 * switches : 0;
  // The event ring's reuse: a query per half ring at most, or a wait where the GPU is far behind.
  if (is("event_query") || is("event_synchronize")) return 2 * (kOps / 512 + 1);
  return 0;
}

void make_current(unsigned ordinal) {
  if (hip()) {
    auto set_device = reinterpret_cast<int (*)(int)>(gt_symbol("hipSetDevice"));
    assert_non_null(set_device);
    assert_int_equal(set_device(static_cast<int>(ordinal)), 0);
    return;
  }
  using DeviceGet = int (*)(int *, int);
  using Retain = int (*)(Context *, int);
  using SetCurrent = int (*)(Context);
  auto device_get = reinterpret_cast<DeviceGet>(gt_symbol("cuDeviceGet"));
  auto retain = reinterpret_cast<Retain>(gt_symbol("cuDevicePrimaryCtxRetain"));
  auto set_current = reinterpret_cast<SetCurrent>(gt_symbol("cuCtxSetCurrent"));
  assert_non_null(device_get);
  assert_non_null(retain);
  assert_non_null(set_current);
  int device = 0;
  Context context = nullptr;
  assert_int_equal(device_get(&device, static_cast<int>(ordinal)), 0);
  assert_int_equal(retain(&context, device), 0);
  assert_int_equal(set_current(context), 0);
}

// Back to what a thread starts with: no context (CUDA), device 0 (HIP).
void clear_current() {
  if (hip()) return make_current(0);
  auto set_current = reinterpret_cast<int (*)(Context)>(gt_symbol("cuCtxSetCurrent"));
  assert_int_equal(set_current(nullptr), 0);
}

// kOps chained operations alternating between devices n0 and n1 (x on n0, borrowed by n1): copies x->y,
// y->x, or launches of rig_add_u32 in place on x, each the other device's last operation's reader.
// What the thread has current: CUDA's context, HIP's device (as a pointer-sized number).
Context now_current() {
  if (hip()) {
    auto get_device = reinterpret_cast<int (*)(int *)>(gt_symbol("hipGetDevice"));
    int device = -1;
    assert_int_equal(get_device(&device), 0);
    return reinterpret_cast<Context>(static_cast<intptr_t>(device + 1));
  }
  auto get_current = reinterpret_cast<int (*)(Context *)>(gt_symbol("cuCtxGetCurrent"));
  Context context = nullptr;
  assert_int_equal(get_current(&context), 0);
  return context;
}

void chain(const char *n0, const char *n1, bool launches, Caller caller, Library library) {
  // The fake's counters, or the counting interposer's over a real driver (tests/doubles/count_cuda).
  if (entered("copy_async") < 0) {
    std::fprintf(stderr, "SKIP %s: needs per-entry counters: the fake, or RIG_CUDA_LIBRARY=libcountcuda.so\n", __func__);
    skip();
  }
  if (std::strcmp(n0, n1) != 0 && gt_gpu_count() < 2) {  // one GPU: a skip, unless RIG_REQUIRE names prefix2
    std::string two = std::string(gt()->prefix) + "2";
    if (rt_required(two.c_str())) fail_msg("RIG_REQUIRE names %s but there is one GPU", two.c_str());
    std::fprintf(stderr, "SKIP %s: needs two %s GPUs\n", __func__, gt()->framework);
    skip();
  }
  rig_device dev[2];
  if (!gt_open(n0, &dev[0]) || !gt_open(n1, &dev[1])) return;
  rig_buffer x[2], y[2];
  OK(rig_buffer_create(dev[0], kBytes, RIG_MEMORY_DEVICE, &x[0]));
  OK(rig_buffer_create(dev[0], kBytes, RIG_MEMORY_DEVICE, &y[0]));
  x[1] = rt_borrow(dev[1], x[0]);
  y[1] = rt_borrow(dev[1], y[0]);
  static uint32_t start[kBytes / 4], got[kBytes / 4], want[kBytes / 4];
  for (int i = 0; i < kBytes / 4; ++i) start[i] = static_cast<uint32_t>(i * 7 + 3);
  OK(rig_buffer_write_from(x[0], 0, start, kBytes));

  rig_module module[2] = {nullptr, nullptr};
  rig_run run[2][2];  // [device][parity]
  for (int d = 0; d < 2; ++d) {
    if (launches) {
      module[d] = gt_kernels(dev[d]);
      rig_access access[1] = {RIG_ACCESS_READ_WRITE};
      uint32_t slots[2] = {0, 0};
      uint32_t scalars[2] = {kBytes / 4, 1};
      for (int p = 0; p < 2; ++p) {
        run[d][p] = gt_launch_run(dev[d], module[d], "rig_add_u32", &x[d], access, 1, slots, 2, kBytes / 4 / 256);
        OK(rig_run_set_scalars(run[d][p], scalars, sizeof scalars));
      }
    } else {
      run[d][0] = rt_copy_run(dev[d], x[d], y[d]);
      run[d][1] = rt_copy_run(dev[d], y[d], x[d]);
    }
  }

  // The caller's thread as it is while the chain is submitted (rig leaves it so: Current restores it).
  if (caller == Caller::first_gpu_current) make_current(0);
  if (caller == Caller::no_context && hip()) make_current(1);
  Context callers = now_current();
  rig_point last = 0;
  OK(rig_submit(run[0][0], nullptr, 0, &last));  // the chain's first operation waits for nothing
  long long before[kEntryCount];
  for (int e = 0; e < kEntryCount; ++e) before[e] = entered(kEntries[e]);
  long long cycles_before = gt_query("cycles:all");  // the interposer's timing (RIGCOUNT_TIME=1), else 0 or -1
  for (int i = 1; i <= kOps; ++i) OK(rig_submit(run[i % 2][i % 2], nullptr, 0, &last));
  long long n[kEntryCount];
  for (int e = 0; e < kEntryCount; ++e) n[e] = entered(kEntries[e]) - before[e];
  // Under the timed interposer every call went through its trampoline (and so the counts and bytes below
  // are checked through it): the time inside the driver grew.
  const char *timed = std::getenv("RIGCOUNT_TIME");
  if (timed && std::strcmp(timed, "1") == 0) assert_true(gt_query("cycles:all") > cycles_before && cycles_before >= 0);
  // rig left the caller's context as it was (read outside the counts: these queries are the test's own).
  assert_ptr_equal(now_current(), callers);
  clear_current();

  bool one_gpu = std::strcmp(n0, n1) == 0;
  // Operations made while the caller's context is not the device's: every one with none current; with the
  // first GPU's current, those on the second GPU.
  long long switches = caller == Caller::no_context ? kOps : one_gpu ? 0 : kOps / 2;
  std::fprintf(stderr, "%s/%s, %s, caller %s%s: driver calls per operation (budget)\n", n0, n1,
               launches ? "launches" : "4 KiB copies",
               caller == Caller::no_context ? (hip() ? "with hip:1 current" : "with no context")
                                            : "with the first GPU's context current",
               library == Library::asks_for_context ? " (a library that asks for the context)" : "");
  bool over = false;
  for (int e = 0; e < kEntryCount; ++e) {
    long long b = budget(kEntries[e], launches, switches, library);
    if (n[e] || b)
      std::fprintf(stderr, "  %-20s %.4f (%.4f)%s\n", kEntries[e], double(n[e]) / kOps, double(b) / kOps,
                   n[e] > b ? "  OVER" : "");
    over |= n[e] > b;
  }
  assert_false(over);
  // And every operation reached the driver: the budget is not met by leaving work out.
  for (int e = 0; e < kEntryCount; ++e)
    if (std::strcmp(kEntries[e], launches ? "launch" : "copy_async") == 0) assert_int_equal(n[e], kOps);

  OK(rig_wait_point(last, UINT64_MAX));
  if (launches) {
    for (int i = 0; i < kBytes / 4; ++i) want[i] = start[i] + kOps + 1;
    OK(rig_buffer_read_into(x[0], 0, got, kBytes));
  } else {
    std::memcpy(want, start, kBytes);  // kOps + 1 copies, the last (odd count) x->y
    OK(rig_buffer_read_into(y[0], 0, got, kBytes));
  }
  assert_memory_equal(got, want, kBytes);

  for (int d = 0; d < 2; ++d)
    for (int p = 0; p < 2; ++p) OK(rig_run_release(run[d][p]));
  for (int d = 1; d >= 0; --d) {
    OK(rig_buffer_release(x[d]));
    OK(rig_buffer_release(y[d]));
    gt_release_kernels(module[d]);
  }
  OK(rig_device_release(dev[1]));
  OK(rig_device_release(dev[0]));
}

// The library as it is: the fake takes a call naming a stream in the stream's context; a real driver's
// answer is what these tests find out (a refusal costs the calls budget() allows for it).
Library as_it_is() { return gt_fake() ? Library::takes_stream_context : Library::unknown; }

void test_copies_on_one_gpu_with_its_context_current(void **) {
  // With the device's context current not even a library that asks for it refuses a call: exact.
  chain(gt_name(0), gt_name(0), false, Caller::first_gpu_current, Library::takes_stream_context);
}
void test_launches_on_one_gpu_with_its_context_current(void **) {
  chain(gt_name(0), gt_name(0), true, Caller::first_gpu_current, Library::takes_stream_context);
}
void test_copies_on_one_gpu_with_another_context_or_none(void **) {
  chain(gt_name(0), gt_name(0), false, Caller::no_context, as_it_is());
}
void test_launches_on_one_gpu_with_another_context_or_none(void **) {
  chain(gt_name(0), gt_name(0), true, Caller::no_context, as_it_is());
}
void test_copies_across_two_gpus(void **) {
  chain(gt_name(0), gt_name(1), false, Caller::first_gpu_current, as_it_is());
}
void test_launches_across_two_gpus(void **) {
  chain(gt_name(0), gt_name(1), true, Caller::first_gpu_current, as_it_is());
}
// A library that refuses a call naming a stream without its context current (the fake's switch): rig makes
// the context current and makes the call again, once, then for every later hand-over on that GPU (the GPU
// remembers it for the process: so this test runs last).
void test_a_library_that_asks_for_the_context_is_given_it(void **) {
  GT_FAKE_ONLY();
  gt_set("stream_calls_need_context", 1);
  chain(gt_name(0), gt_name(0), false, Caller::no_context, Library::asks_for_context);
  chain(gt_name(0), gt_name(0), true, Caller::no_context, Library::asks_for_context);
  gt_set("stream_calls_need_context", 0);
}

// A batch (rig_submit_many) of kBatch runs on one GPU, its context current: every entry counted for the whole
// batch. What it is: copies from 16 sources into 16 destinations (independent: CUDA takes them as one
// cuMemcpyBatchAsync; HIP, where rig loads none, one hipMemcpyAsync each), 16 copies each reading what the
// one before wrote (a chain: CUDA runs a batch's copies in no order, so each is its own call, in stream
// order), or 16 launches adding 1 in place. The turn, the context query and the mark are the batch's, once.
// The same 16 launches, or the 16 independent copies, a third time: CUDA captured them into a graph the
// second time and launches it now (HIP, where rig loads no graph calls, makes the 16 calls again).
enum class Batch { independent_copies, chained_copies, launches, launches_again, copies_again };
constexpr int kBatch = 16;

void batch(Batch what) {
  // The fake's counters, or the counting interposer's over a real driver, as chain() takes them.
  if (entered("copy_async") < 0) {
    std::fprintf(stderr, "SKIP %s: needs per-entry counters: the fake, or RIG_CUDA_LIBRARY=libcountcuda.so\n", __func__);
    skip();
  }
  if (gt_fake()) gt_set("reset", 0);
  rig_device dev;
  if (!gt_open(gt_name(0), &dev)) return;
  bool again = what == Batch::launches_again || what == Batch::copies_again;
  bool launches = what == Batch::launches || what == Batch::launches_again;
  bool independent = what == Batch::independent_copies || what == Batch::copies_again;
  rig_buffer buf[kBatch + 1], dst[kBatch];
  static uint32_t start[kBatch + 1][kBytes / 4], got[kBytes / 4];
  for (int b = 0; b <= kBatch; ++b) {
    OK(rig_buffer_create(dev, kBytes, RIG_MEMORY_DEVICE, &buf[b]));
    for (int i = 0; i < kBytes / 4; ++i) start[b][i] = static_cast<uint32_t>(b * 1000003 + i * 7 + 3);
    OK(rig_buffer_write_from(buf[b], 0, start[b], kBytes));
    if (b < kBatch) OK(rig_buffer_create(dev, kBytes, RIG_MEMORY_DEVICE, &dst[b]));
  }
  rig_module module = launches ? gt_kernels(dev) : nullptr;
  rig_run runs[kBatch];
  for (int b = 0; b < kBatch; ++b) {
    if (independent) runs[b] = rt_copy_run(dev, buf[b], dst[b]);
    if (what == Batch::chained_copies) runs[b] = rt_copy_run(dev, buf[b], buf[b + 1]);  // reads run b-1's write
    if (launches) {
      rig_access access[1] = {RIG_ACCESS_READ_WRITE};
      uint32_t slots[2] = {0, 0};
      uint32_t scalars[2] = {kBytes / 4, 1};
      runs[b] = gt_launch_run(dev, module, "rig_add_u32", &buf[0], access, 1, slots, 2, kBytes / 4 / 256);
      OK(rig_run_set_scalars(runs[b], scalars, sizeof scalars));
    }
  }
  make_current(0);
  rig_point points[kBatch];
  for (int seen = 0; again && seen < 2; ++seen) OK(rig_submit_many(runs, kBatch, nullptr, 0, points));
  // New sources before the graph's launch: the destinations show the replay copied what is there now.
  for (int b = 0; what == Batch::copies_again && b < kBatch; ++b) {
    for (int i = 0; i < kBytes / 4; ++i) start[b][i] ^= 0x5a5a5a5au;
    OK(rig_buffer_write_from(buf[b], 0, start[b], kBytes));
  }
  Context callers = now_current();
  long long before[kEntryCount];
  for (int e = 0; e < kEntryCount; ++e) before[e] = entered(kEntries[e]);
  OK(rig_submit_many(runs, kBatch, nullptr, 0, points));
  long long n[kEntryCount];
  for (int e = 0; e < kEntryCount; ++e) n[e] = entered(kEntries[e]) - before[e];
  // rig left the caller's context as it was (read outside the counts: these queries are the test's own).
  assert_ptr_equal(now_current(), callers);
  clear_current();

  // The budget of the whole batch: one context query, one mark, and the work's calls.
  bool graph = again && !hip();
  bool batched = independent && !hip() && !graph;
  auto budget_of = [&](const char *field) -> long long {
    auto is = [&](const char *name) { return std::strcmp(field, name) == 0; };
    if (is("get_current") || is("event_record")) return 1;
    if (is("copy_batch")) return batched ? 1 : 0;
    if (is("copy_async")) return launches || batched || graph ? 0 : kBatch;
    if (is("launch")) return launches && !graph ? kBatch : 0;
    if (is("graph_launch")) return graph ? 1 : 0;
    return 0;
  };
  static const char *const kWhat[] = {"16 independent copies", "16 chained copies", "16 launches",
                                      "16 launches submitted twice before", "16 independent copies submitted twice before"};
  std::fprintf(stderr, "%s, a batch of %s: driver calls per batch (budget)\n", gt_name(0), kWhat[static_cast<int>(what)]);
  bool off = false;
  for (int e = 0; e < kEntryCount; ++e) {
    long long b = budget_of(kEntries[e]);
    if (n[e] || b) std::fprintf(stderr, "  %-20s %lld (%lld)%s\n", kEntries[e], n[e], b, n[e] != b ? "  OFF" : "");
    off |= n[e] != b;
  }
  assert_false(off);  // exact: fewer would mean work left out, more a call the batch should have saved

  // A run whose scalars change is recorded again: its batch is a new one, never the old graph replayed (run
  // 0 now adds 2, so the bytes show which).
  if (what == Batch::launches_again) {
    uint32_t twice[2] = {kBytes / 4, 2};
    OK(rig_run_set_scalars(runs[0], twice, sizeof twice));
    OK(rig_submit_many(runs, kBatch, nullptr, 0, points));
  }
  // The points: consecutive values, in order.
  for (int b = 1; b < kBatch; ++b) assert_int_equal(rig_point_value(points[b]), rig_point_value(points[0]) + b);
  OK(rig_wait_point(points[kBatch - 1], UINT64_MAX));
  for (int b = 0; b < kBatch; ++b) {
    const uint32_t *want = start[b];
    if (launches && b) break;
    if (launches) {
      static uint32_t added[kBytes / 4];
      for (int i = 0; i < kBytes / 4; ++i) added[i] = start[0][i] + (again ? 4 * kBatch + 1 : kBatch);
      want = added;
    }
    if (what == Batch::chained_copies) want = start[0];  // every buffer holds the chain's first bytes
    rig_buffer of = independent ? dst[b] : launches ? buf[0] : buf[b + 1];
    OK(rig_buffer_read_into(of, 0, got, kBytes));
    assert_memory_equal(got, want, kBytes);
  }
  for (int b = 0; b < kBatch; ++b) {
    OK(rig_run_release(runs[b]));
    OK(rig_buffer_release(dst[b]));
  }
  for (int b = 0; b <= kBatch; ++b) OK(rig_buffer_release(buf[b]));
  gt_release_kernels(module);
  OK(rig_device_release(dev));
}

void test_a_batch_of_16_independent_copies_is_one_copy_batch(void **) { batch(Batch::independent_copies); }
void test_a_batch_of_16_chained_copies_keeps_them_in_stream_order(void **) { batch(Batch::chained_copies); }
void test_a_batch_of_16_launches_makes_16_launches_and_one_mark(void **) { batch(Batch::launches); }
void test_a_batch_of_16_launches_seen_twice_is_one_graph_launch(void **) { batch(Batch::launches_again); }
void test_a_batch_of_16_copies_seen_twice_is_one_graph_launch(void **) { batch(Batch::copies_again); }

}  // namespace

int main() {
  if (!gt_available()) return 77;
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_copies_on_one_gpu_with_its_context_current),
      cmocka_unit_test(test_launches_on_one_gpu_with_its_context_current),
      cmocka_unit_test(test_copies_on_one_gpu_with_another_context_or_none),
      cmocka_unit_test(test_launches_on_one_gpu_with_another_context_or_none),
      cmocka_unit_test(test_copies_across_two_gpus),
      cmocka_unit_test(test_launches_across_two_gpus),
      cmocka_unit_test(test_a_batch_of_16_independent_copies_is_one_copy_batch),
      cmocka_unit_test(test_a_batch_of_16_chained_copies_keeps_them_in_stream_order),
      cmocka_unit_test(test_a_batch_of_16_launches_makes_16_launches_and_one_mark),
      cmocka_unit_test(test_a_batch_of_16_launches_seen_twice_is_one_graph_launch),
      cmocka_unit_test(test_a_batch_of_16_copies_seen_twice_is_one_graph_launch),
      cmocka_unit_test(test_a_library_that_asks_for_the_context_is_given_it),  // last: see the test
  };
  return rt_finish(cmocka_run_group_tests(tests, nullptr, nullptr));
}
