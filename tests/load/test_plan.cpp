// src/load/plan: make_plan's chunks. A staged load's first chunks per device ramp up (chunk_bytes / 16,
// / 8, / 4, / 2, then whole) so that its first copy waits for a small read, not for a whole chunk read
// while every other reader fills its own; every byte of every tensor is in exactly one piece either way; a
// ramp never goes under 256 KiB (128 KiB chunks have none); each chunk starts on the alignment; a second
// device ramps on its own; no ramp asked, none made.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "load/plan.h"

using rig::load::Chunk;
using rig::load::make_plan;
using rig::load::PlanTensor;

static int failures = 0;
#define CHECK(cond, ...)                          \
  do {                                            \
    if (!(cond)) {                                \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);          \
      std::fputc('\n', stderr);                   \
      ++failures;                                 \
    }                                             \
  } while (0)

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

static PlanTensor tensor(uint64_t offset, uint64_t length, size_t device) {
  PlanTensor t;
  t.extent.offset = offset;
  t.extent.run = length;
  t.device = device;
  return t;
}

// Every tensor's bytes covered once, in order, by the chunks' pieces; each chunk within its room.
static void covers(const std::vector<PlanTensor> &tensors, const std::vector<Chunk> &chunks, uint64_t align) {
  std::vector<uint64_t> next(tensors.size(), 0);
  for (const Chunk &c : chunks) {
    CHECK(c.start % align == 0, "chunk at %llu is off the alignment %llu", (unsigned long long)c.start,
          (unsigned long long)align);
    CHECK(c.end - c.start <= c.room, "chunk [%llu, %llu) past its room %llu", (unsigned long long)c.start,
          (unsigned long long)c.end, (unsigned long long)c.room);
    for (const auto &p : c.pieces) {
      CHECK(p.tensor_offset == next[p.tensor], "tensor %zu: a piece at %llu, expected %llu", p.tensor,
            (unsigned long long)p.tensor_offset, (unsigned long long)next[p.tensor]);
      CHECK(c.start + p.chunk_offset == tensors[p.tensor].extent.offset + p.tensor_offset, "piece misplaced");
      CHECK(c.device == tensors[p.tensor].device, "a chunk mixes devices");
      next[p.tensor] += p.length;
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i)
    CHECK(next[i] == tensors[i].extent.length(), "tensor %zu: %llu of %llu bytes in pieces", i,
          (unsigned long long)next[i], (unsigned long long)tensors[i].extent.length());
}

int main() {
  // One 20 MiB tensor, 4 MiB chunks: 256 KiB, 512 KiB, 1 MiB, 2 MiB, then 4 MiB ones.
  std::vector<PlanTensor> one = {tensor(0, 20 * MiB, 0)};
  auto chunks = make_plan(one, 4 * MiB, 1, 4);
  const uint64_t want[] = {256 * KiB, 512 * KiB, 1 * MiB, 2 * MiB, 4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB};
  CHECK(chunks.size() == 9, "%zu chunks, not 9", chunks.size());
  for (size_t i = 0; i < 8 && i < chunks.size(); ++i)
    CHECK(chunks[i].bytes() == want[i], "chunk %zu holds %llu, not %llu", i, (unsigned long long)chunks[i].bytes(),
          (unsigned long long)want[i]);
  covers(one, chunks, 1);

  // No ramp asked: every chunk whole.
  chunks = make_plan(one, 4 * MiB, 1);
  CHECK(chunks.size() == 5 && chunks[0].bytes() == 4 * MiB, "no ramp: %zu chunks, the first %llu", chunks.size(),
        chunks.empty() ? 0ull : (unsigned long long)chunks[0].bytes());
  covers(one, chunks, 1);

  // 128 KiB chunks: no step would hold 256 KiB, so none.
  chunks = make_plan(one, 128 * KiB, 1, 4);
  CHECK(chunks.size() == 160 && chunks[0].bytes() == 128 * KiB, "128 KiB chunks: %zu, the first %llu",
        chunks.size(), chunks.empty() ? 0ull : (unsigned long long)chunks[0].bytes());
  // 1 MiB chunks: the steps of 256 and 512 KiB only.
  chunks = make_plan(one, 1 * MiB, 1, 4);
  CHECK(chunks.size() >= 3 && chunks[0].bytes() == 256 * KiB && chunks[1].bytes() == 512 * KiB &&
            chunks[2].bytes() == 1 * MiB,
        "1 MiB chunks ramp 256 KiB, 512 KiB, then whole");
  covers(one, chunks, 1);

  // Unaligned tensors, O_DIRECT's alignment, two devices taking turns: each ramps on its own, every byte once.
  std::vector<PlanTensor> mixed;
  uint64_t at = 8 + 123;
  for (size_t i = 0; i < 40; ++i) {
    uint64_t len = (i % 3 == 0) ? 7 * MiB + 17 : (i % 3 == 1) ? 4096 + 3 : 300 * KiB;
    mixed.push_back(tensor(at, len, i < 20 ? 0 : 1));
    at += len;
  }
  chunks = make_plan(mixed, 4 * MiB, 4096, 4);
  covers(mixed, chunks, 4096);
  size_t first_of[2] = {SIZE_MAX, SIZE_MAX};
  for (size_t i = 0; i < chunks.size(); ++i)
    if (first_of[chunks[i].device] == SIZE_MAX) first_of[chunks[i].device] = i;
  for (size_t d = 0; d < 2; ++d)
    CHECK(first_of[d] != SIZE_MAX && chunks[first_of[d]].room == 256 * KiB, "device %zu's first chunk has room %llu",
          d, first_of[d] == SIZE_MAX ? 0ull : (unsigned long long)chunks[first_of[d]].room);

  if (failures) return 1;
  std::puts("make_plan: ramps, coverage, alignment, devices: all hold");
  return 0;
}
