// Anonymous memory made to be registered with a driver at once (the probe's staging buffer, the loader's
// staging pool). Why huge pages and a first touch on several threads: registering pins every page, and
// pinning pages never touched first makes the kernel zero them on the registering thread (about 6 ms of an
// 8 ms 64 MiB pool on an H200 host); 2 MiB pages pin 512 times fewer entries than 4 KiB ones.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstring>

#include "mapped/parallel.h"

namespace rig::mapped {

// A private anonymous mapping of `length` bytes, on huge pages where the kernel gives them (a hint) and
// touched on several threads; nullptr where mmap refuses. munmap it.
inline void *map_for_registering(size_t length) {
  void *p = length ? mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
  if (p == MAP_FAILED) return nullptr;
  madvise(p, length, MADV_HUGEPAGE);
  split_pass(length, 4096, [p](size_t off, size_t len) { std::memset(static_cast<char *>(p) + off, 0, len); });
  return p;
}

}  // namespace rig::mapped
