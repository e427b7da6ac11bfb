// src/load/direct_read: O_DIRECT reads through io_uring split into pieces in flight at once. A file whose
// size is not a multiple of a piece (nor of 4096) is read whole, past its end, from an offset, and with a
// descriptor that is not open; every byte is compared with the file's. Where this machine refuses
// io_uring the reader falls back to pread and says why: the test says which one it checked.
#include <fcntl.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
extern "C" {
#include <cmocka.h>
}

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "load/direct_read.h"

namespace {

const size_t kSize = 5 * 1024 * 1024 + 123;
std::string path = "test_direct_read.bin";

unsigned char byte_at(size_t i) { return static_cast<unsigned char>((i * 2654435761u) >> 13); }

void *aligned(size_t n) {
  void *p = nullptr;
  return posix_memalign(&p, 4096, n) == 0 ? p : nullptr;
}

void whole_file_past_its_end_and_from_an_offset(void **) {
  int fd = open(path.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) fd = open(path.c_str(), O_RDONLY);  // a file system without O_DIRECT: the reads are the same
  assert_true(fd >= 0);
  rig::load::DirectRead r(fd, 64 * 1024, 4);
  std::printf("reads through %s\n", r.uring() ? "io_uring" : ("pread: " + r.why_not()).c_str());
  size_t rounded = (kSize + 4095) / 4096 * 4096 + 3 * 4096;  // asks past the end
  auto *buf = static_cast<unsigned char *>(aligned(rounded));
  assert_non_null(buf);
  size_t got = 0;
  assert_int_equal(r.read(0, buf, rounded, &got), RIG_OK);
  assert_int_equal(got, kSize);
  for (size_t i = 0; i < kSize; ++i)
    if (buf[i] != byte_at(i)) fail_msg("byte %zu differs", i);
  // from an aligned offset inside the file, a length of several pieces
  std::memset(buf, 0, rounded);
  assert_int_equal(r.read(1 << 20, buf, 2 << 20, &got), RIG_OK);
  assert_int_equal(got, size_t(2) << 20);
  for (size_t i = 0; i < got; ++i)
    if (buf[i] != byte_at((1 << 20) + i)) fail_msg("byte %zu differs", (1 << 20) + i);
  // past the end: nothing
  assert_int_equal(r.read(8 << 20, buf, 4096, &got), RIG_OK);
  assert_int_equal(got, 0);
  free(buf);
  close(fd);
}

void a_descriptor_that_is_not_open_answers_driver(void **) {
  // not a closed descriptor's number: the ring made next could take that very number and a read of a ring
  // waits forever
  rig::load::DirectRead r(-1, 64 * 1024, 4);
  auto *buf = static_cast<unsigned char *>(aligned(1 << 20));
  size_t got = 0;
  assert_int_equal(r.read(0, buf, 1 << 20, &got), RIG_DRIVER);
  assert_non_null(std::strstr(rig_last_error(), "Bad file descriptor"));
  free(buf);
}

}  // namespace

int main() {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) return 1;
  std::vector<unsigned char> bytes(kSize);
  for (size_t i = 0; i < kSize; ++i) bytes[i] = byte_at(i);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(whole_file_past_its_end_and_from_an_offset),
      cmocka_unit_test(a_descriptor_that_is_not_open_answers_driver),
  };
  int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
  std::remove(path.c_str());
  return failed;
}
