// src/load/copier: one device's copies through one run rebound per copy (Run::rebind) and core's submit.
// Copies at several offsets move exactly their bytes; a copy allocates nothing once the run exists
// (counted by a malloc hook, plain builds only); a copy outside its buffers is refused and the next one
// still lands; and a copy keeps no allocation alive after it is submitted, so the buffers' holders alone
// decide when each goes (a wrap's release callback runs at its last handle's release). Copies added to a
// batch are submitted kBatch at a time (or by a flush), one value each, and land as copies one by one do;
// nothing added and not flushed is submitted.
#include <rig.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "capi/handles.h"
#include "core/buffer.h"
#include "core/device.h"
#include "core/registry.h"
#include "load/copier.h"

// Last: cmocka's fail() macro would rename std::basic_ios::fail in the C++ headers above.
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
extern "C" {
#include <cmocka.h>
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOOKED 0
#else
#define HOOKED 1
// Counting malloc: glibc's own entry points do the work; the counter is all this adds.
extern "C" void *__libc_malloc(size_t);
extern "C" void *__libc_calloc(size_t, size_t);
extern "C" void *__libc_realloc(void *, size_t);
static std::atomic<bool> counting;
static std::atomic<long> allocations;
extern "C" void *malloc(size_t n) {
  if (counting) ++allocations;
  return __libc_malloc(n);
}
extern "C" void *calloc(size_t a, size_t b) {
  if (counting) ++allocations;
  return __libc_calloc(a, b);
}
extern "C" void *realloc(void *p, size_t n) {
  if (counting) ++allocations;
  return __libc_realloc(p, n);
}
#endif

namespace {

rig::Device &device_of(rig_device d) {
  rig_device_info info{};
  info.size = sizeof info;
  assert_int_equal(rig_device_get_info(d, &info), RIG_OK);
  rig::Device *device = rig::device_at(info.index);
  assert_non_null(device);
  return *device;
}

std::shared_ptr<rig::Buffer> buffer_of(rig_buffer b) {
  rig::capi::Pinned<rig::Buffer> p(rig::capi::word_of(b), rig::capi::Kind::buffer, "test");
  assert_true(static_cast<bool>(p));
  return p.share();
}

rig_buffer created(rig_device d, size_t n) {
  rig_buffer b = nullptr;
  assert_int_equal(rig_buffer_create(d, n, RIG_MEMORY_DEVICE, &b), RIG_OK);
  return b;
}

std::vector<unsigned char> bytes_of(rig_buffer b, size_t n) {
  std::vector<unsigned char> out(n);
  assert_int_equal(rig_buffer_read_into(b, 0, out.data(), n), RIG_OK);
  return out;
}

void copies_move_their_bytes_and_allocate_nothing(void **) {
  rig_device d;
  assert_int_equal(rig_memory_device("copier", &d), RIG_OK);
  const size_t n = 64 * 1024;
  rig_buffer src = created(d, n), dst = created(d, n);
  std::vector<unsigned char> file(n), want(n, 0);
  for (size_t i = 0; i < n; ++i) file[i] = static_cast<unsigned char>(i * 131 + 7);
  assert_int_equal(rig_buffer_write_from(src, 0, file.data(), n), RIG_OK);
  assert_int_equal(rig_buffer_write_from(dst, 0, want.data(), n), RIG_OK);
  auto s = buffer_of(src), t = buffer_of(dst);
  std::unique_ptr<rig::load::Copier> copier;
  assert_int_equal(rig::load::Copier::make(device_of(d), &copier), RIG_OK);
  // Pieces as a chunk's: a source offset in the chunk, a destination offset in the tensor.
  struct Piece { size_t from, to, length; } pieces[] = {{0, 4096, 100}, {100, 0, 4096}, {8192, 30000, 20000}, {50000, 60000, 5536}};
  assert_int_equal(copier->copy(*s, 0, *t, 0, 1), RIG_OK);  // the run's first binding, outside the count
  want[0] = file[0];
#if HOOKED
  allocations = 0;
  counting = 1;
#endif
  for (const Piece &p : pieces) assert_int_equal(copier->copy(*s, p.from, *t, p.to, p.length), RIG_OK);
#if HOOKED
  counting = 0;
  std::printf("allocations over %zu copies: %ld\n", sizeof pieces / sizeof pieces[0], allocations.load());
  assert_int_equal(allocations.load(), 0);
#else
  std::printf("SKIP the allocation count: a sanitizer owns malloc here; the bytes are checked\n");
#endif
  for (const Piece &p : pieces) std::memcpy(want.data() + p.to, file.data() + p.from, p.length);
  assert_true(bytes_of(dst, n) == want);
  copier.reset();
  s.reset();
  t.reset();
  rig_buffer_release(src);
  rig_buffer_release(dst);
  rig_device_release(d);
}

void a_copy_outside_its_buffers_is_refused_and_the_next_lands(void **) {
  rig_device d;
  assert_int_equal(rig_memory_device("copier-range", &d), RIG_OK);
  rig_buffer src = created(d, 4096), dst = created(d, 4096);
  unsigned char ones[4096];
  std::memset(ones, 1, sizeof ones);
  assert_int_equal(rig_buffer_write_from(src, 0, ones, sizeof ones), RIG_OK);
  auto s = buffer_of(src), t = buffer_of(dst);
  std::unique_ptr<rig::load::Copier> copier;
  assert_int_equal(rig::load::Copier::make(device_of(d), &copier), RIG_OK);
  assert_int_equal(copier->copy(*s, 4000, *t, 0, 200), RIG_INVALID_ARGUMENT);
  assert_int_equal(copier->copy(*s, 0, *t, 4095, 2), RIG_INVALID_ARGUMENT);
  assert_int_equal(copier->copy(*s, 0, *t, 0, 4096), RIG_OK);
  assert_true(bytes_of(dst, 4096) == std::vector<unsigned char>(ones, ones + 4096));
  copier.reset();
  s.reset();
  t.reset();
  rig_buffer_release(src);
  rig_buffer_release(dst);
  rig_device_release(d);
}

int released;
void count_release(void *) { ++released; }

void a_copy_keeps_no_allocation_alive(void **) {
  rig_device d;
  assert_int_equal(rig_memory_device("copier-alive", &d), RIG_OK);
  static unsigned char host[8192];
  rig_buffer wrap, borrowed, dst = created(d, 8192);
  assert_int_equal(rig_buffer_wrap(host, sizeof host, RIG_ACCESS_READ, count_release, nullptr, &wrap), RIG_OK);
  assert_int_equal(rig_buffer_borrow(d, wrap, &borrowed), RIG_OK);
  std::unique_ptr<rig::load::Copier> copier;
  assert_int_equal(rig::load::Copier::make(device_of(d), &copier), RIG_OK);
  {
    auto s = buffer_of(borrowed), t = buffer_of(dst);
    assert_int_equal(copier->copy(*s, 0, *t, 0, sizeof host), RIG_OK);
  }
  released = 0;
  rig_buffer_release(borrowed);
  rig_buffer_release(wrap);
  assert_int_equal(released, 1);  // the copier, alive, holds nothing of it
  copier.reset();
  rig_buffer_release(dst);
  rig_device_release(d);
}

void added_copies_go_a_batch_at_a_time_and_land(void **) {
  rig_device d;
  assert_int_equal(rig_memory_device("copier-batch", &d), RIG_OK);
  const size_t piece = 1024, count = 2 * rig::load::Copier::kBatch + 3;
  const size_t n = piece * count;
  rig_buffer src = created(d, n), dst = created(d, n);
  std::vector<unsigned char> file(n), zero(n, 0);
  for (size_t i = 0; i < n; ++i) file[i] = static_cast<unsigned char>(i * 37 + 11);
  assert_int_equal(rig_buffer_write_from(src, 0, file.data(), n), RIG_OK);
  assert_int_equal(rig_buffer_write_from(dst, 0, zero.data(), n), RIG_OK);
  auto s = buffer_of(src), t = buffer_of(dst);
  std::unique_ptr<rig::load::Copier> copier;
  assert_int_equal(rig::load::Copier::make(device_of(d), &copier), RIG_OK);
  uint64_t before = 0, after = 0;
  assert_int_equal(rig_device_submitted(d, &before), RIG_OK);
  // pieces in reverse, each to its mirror place: every copy its own range
  for (size_t i = 0; i < count; ++i) {
    size_t k = count - 1 - i;
    assert_int_equal(copier->add(*s, k * piece, *t, (count - 1 - k) * piece, piece), RIG_OK);
    assert_int_equal(copier->pending(), (i + 1) % rig::load::Copier::kBatch);
  }
  assert_int_equal(rig_device_submitted(d, &after), RIG_OK);
  assert_int_equal(after - before, 2 * rig::load::Copier::kBatch);  // two full batches, three held
  assert_int_equal(copier->flush(), RIG_OK);
  assert_int_equal(copier->pending(), 0);
  assert_int_equal(copier->flush(), RIG_OK);  // nothing added: nothing submitted
  assert_int_equal(rig_device_submitted(d, &after), RIG_OK);
  assert_int_equal(after - before, count);  // one value a copy
  std::vector<unsigned char> want(n);
  for (size_t k = 0; k < count; ++k) std::memcpy(want.data() + (count - 1 - k) * piece, file.data() + k * piece, piece);
  assert_true(bytes_of(dst, n) == want);
  copier.reset();
  s.reset();
  t.reset();
  rig_buffer_release(src);
  rig_buffer_release(dst);
  rig_device_release(d);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(copies_move_their_bytes_and_allocate_nothing),
      cmocka_unit_test(a_copy_outside_its_buffers_is_refused_and_the_next_lands),
      cmocka_unit_test(a_copy_keeps_no_allocation_alive),
      cmocka_unit_test(added_copies_go_a_batch_at_a_time_and_land),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
