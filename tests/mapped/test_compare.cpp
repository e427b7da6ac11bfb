// The probe's comparisons over memory split across threads (src/mapped/parallel.h): the first difference
// is the earliest one whichever piece finds it, at any offset (piece edges, the last byte, a short tail),
// and a mapping page that cannot be read is reported as unreadable, never touched.
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "mapped/compare.h"

using rig::mapped::Compared;
using rig::mapped::compare_mapping;
using rig::mapped::first_difference;

static void the_earliest_difference_wins_at_every_offset(void **) {
  const size_t n = (size_t(64) << 20) + 12345;  // several pieces and a tail that is not a whole page
  std::vector<unsigned char> a(n), b(n);
  for (size_t i = 0; i < n; ++i) a[i] = b[i] = static_cast<unsigned char>(i * 131 + 7);
  assert_int_equal(first_difference(a.data(), b.data(), n), n);
  const size_t offsets[] = {0, 4095, 4096, (size_t(8) << 20) - 1, size_t(8) << 20, size_t(33) << 20, n - 1};
  for (size_t at : offsets) {
    b[at] ^= 0x5a;
    assert_int_equal(first_difference(a.data(), b.data(), n), at);
    b[n - 1] ^= 0x01;  // a later difference in another piece does not hide the earlier one
    if (at != n - 1) assert_int_equal(first_difference(a.data(), b.data(), n), at);
    b[n - 1] ^= 0x01;
    b[at] ^= 0x5a;
  }
  assert_int_equal(first_difference(a.data(), b.data(), 0), 0);
}

static void an_unreadable_page_is_reported_not_touched(void **) {
  const size_t page = 4096, n = 16 << 20;
  auto *map = static_cast<unsigned char *>(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  assert_true(map != MAP_FAILED);
  std::vector<unsigned char> ref(n, 0);
  size_t at = 0;
  assert_true(compare_mapping(map, ref.data(), n, &at) == Compared::equal);
  map[(9 << 20) + 3] = 1;
  assert_true(compare_mapping(map, ref.data(), n, &at) == Compared::differ);
  assert_int_equal(at, (9 << 20) + 3);
  assert_int_equal(mprotect(map + (12 << 20), page, PROT_NONE), 0);
  assert_true(compare_mapping(map, ref.data(), n, &at) == Compared::unreadable);
  assert_int_equal(at, size_t(12) << 20);
  munmap(map, n);
}

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(the_earliest_difference_wins_at_every_offset),
      cmocka_unit_test(an_unreadable_page_is_reported_not_touched),
  };
  return cmocka_run_group_tests_name("mapped compare", tests, nullptr, nullptr);
}
