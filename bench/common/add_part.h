/* The benches' one kernel part: rig_add_u32 (tests/cuda/kernels.ptx, bench's kernels_ptx.h) adding a scalar to
 * `words` 32-bit words of slot 0 in place, 256 threads a block. Its scalars are {words, addend}, set on the
 * run. C and C++ (bench/cuda, bench/core's chain_count, bench/footprint's chain_a). */
#pragma once

#include <rig.h>
#include <stdint.h>
#include <string.h>

static const uint32_t bench_add_slots[2] = {0, 0}; /* the kernel's two pointers both name slot 0 */

static inline rig_part bench_add_part(rig_module module, uint32_t words) {
  rig_part p;
  memset(&p, 0, sizeof p);
  p.size = sizeof p;
  p.kind = RIG_PART_LAUNCH;
  p.module = module;
  p.function = "rig_add_u32";
  p.grid[0] = (words + 255) / 256;
  p.grid[1] = p.grid[2] = 1;
  p.block[0] = 256;
  p.block[1] = p.block[2] = 1;
  p.slots = bench_add_slots;
  p.slot_count = 2;
  return p;
}
