// Splitting one long pass over memory (a comparison, a copy) across threads. Why by hand: one core reads
// or copies several times slower than the host's memory serves several cores, so the probe's 64 MiB
// comparisons and its staged copies (memcpy into page-locked memory, best of 7) were most of its wall time
// (bench/README.md, "Why: mapped registration and the probe"). The probe is not on any submit path: starting a few
// threads per pass (tens of microseconds) is cheap beside the pass.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace rig::mapped {

// Calls part(offset, length) over [0, n) in pieces of whole `unit`s, one piece per thread (at most 8, at
// most one per 4 MiB), the calling thread taking the first; returns once every piece is done. A short
// pass runs inline.
template <class Part>
void split_pass(size_t n, size_t unit, Part part) {
  constexpr size_t min_piece = size_t(4) << 20;
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  size_t threads = std::min<size_t>({8, cores, std::max<size_t>(1, n / min_piece)});
  if (threads <= 1) return part(size_t(0), n);
  size_t piece = (n / threads + unit - 1) / unit * unit;
  std::vector<std::thread> others;
  for (size_t off = piece; off < n; off += piece)
    others.emplace_back([=] { part(off, std::min(piece, n - off)); });
  part(size_t(0), std::min(piece, n));
  for (auto &t : others) t.join();
}

}  // namespace rig::mapped
