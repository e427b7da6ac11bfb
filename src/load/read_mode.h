// Which way of reading a cold file is faster on its file system: O_DIRECT (no page cache: the reads go
// straight to the storage, deep through io_uring) or buffered pread (the kernel's readahead). Neither wins
// everywhere: a local NVMe drive serves O_DIRECT at its rate while readahead trails it; a network or
// overlay file system may do the opposite, or refuse O_DIRECT. So rig_load_io's AUTO does not guess for a
// cold file: it times both on the file at hand, once per file system and process, and keeps the answer.
#pragma once

#include <cstdint>
#include <string>

#include "load/file.h"

namespace rig::load {

// The fraction of [offset, offset+length) of the file resident in the page cache, from mincore over up to
// 128 samples of 8 pages spread evenly over the range. Why sampled: mincore of every page of a large file
// costs a good part of a warm load's time, to choose between two ways of reading where a rough fraction is
// plenty. Why so few: each mincore is a system call whatever its length, paid inside every load; 128
// samples put a fraction of one half within 0.09 (two standard deviations), and a file that close to half
// resident loads about as fast either way (bench/README.md, bench/load).
double resident_fraction(int fd, uint64_t size, uint64_t offset, uint64_t length);

// True where O_DIRECT read the file system of `shard` at least as fast as buffered pread: learned the first
// time by reading two disjoint cold windows of [lo, hi) of the shard (8 MiB past lo) (one each way, `readers` pieces of
// 4 MiB in parallel, as the load's readers would), then answered from the process's cache for every file
// on that file system. A window already in the page cache, a range too short for two windows, or a file
// system that refuses O_DIRECT teaches nothing: the answer is then O_DIRECT except where O_DIRECT was
// refused, and nothing is kept. Appends what it learned or found to `why`. Waits for the two reads (tens of
// milliseconds once per file system); holds the cache's lock only around look-up and store.
bool learned_direct(const Shard &shard, uint64_t lo, uint64_t hi, unsigned readers, std::string *why);

// Forgets what was learned (tests).
void forget_read_modes();

}  // namespace rig::load
