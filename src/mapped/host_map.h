// Anonymous memory made to be registered with a driver at once (the probe's staging buffer, the loader's
// staging pool). Why huge pages and a first touch on several threads: registering pins every page, and
// pinning pages never touched first makes the kernel zero them on the registering thread, where they cost
// the most; 2 MiB pages pin 512 times fewer entries than 4 KiB ones. The touch writes one byte a 4 KiB page,
// not every byte: the kernel zeroes each page it gives anyway, so a memset only wrote the zeroes twice
// (bench/probes/staging_probe.cu; its figures in bench/README.md, "Why: mapped registration and the probe").
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstring>

#include "mapped/parallel.h"

namespace rig::mapped {

// A private anonymous mapping of `length` bytes, on huge pages where the kernel gives them (a hint) and
// touched on several threads (every page made, all zero); nullptr where mmap refuses. munmap it.
inline void *map_for_registering(size_t length) {
  void *p = length ? mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
  if (p == MAP_FAILED) return nullptr;
  madvise(p, length, MADV_HUGEPAGE);
  split_pass(length, 4096, [p](size_t off, size_t len) {
    for (size_t i = 0; i < len; i += 4096) static_cast<volatile char *>(p)[off + i] = 0;
  });
  return p;
}

}  // namespace rig::mapped
