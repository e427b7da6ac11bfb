// File-to-GPU load, host to device GB/s, every path in one run beside the figures measured on an H200 (docs/mapped.md,
// bench/README.md) (never asserted: a benchmark reports, the reader judges):
//   pageable mapping   the file's shared read-only mapping copied as it is
//   pageable malloc    the file read into malloc'd memory, then copied
//   pinned             from page-locked memory (rig's alloc_host): the link's limit
//   registered         the mapping registered read-only, then copied; with and without registration time
//   staged             a pipeline: T threads memcpy 32 MiB chunks of the mapping into pinned buffers while
//                      one thread copies them to the device (best of T = 1, 4, 8)
//   probe              rig_probe's own wall time for a 64 MiB region (goal: under 50 ms)
// All copies go through rig's device-backed probe ops (rig_probe_ops_open), i.e. the library's own driver
// calls; each copy lands at offset 0 of one device buffer of the file's size.
//
// usage: bench_mapped_load FILE [--device NAME] [--make-gib N]   (--make-gib writes FILE first)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rig.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using clk = std::chrono::steady_clock;
double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

[[noreturn]] void die(const char *what, rig_status s) {
  std::fprintf(stderr, "bench_mapped_load: %s: %s: %s\n", what, rig_status_name(s), rig_last_error());
  std::exit(1);
}
void check(rig_status s, const char *what) {
  if (s != RIG_OK) die(what, s);
}

void make_file(const char *path, size_t gib) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::perror(path);
    std::exit(1);
  }
  std::vector<uint64_t> block(1 << 20);  // 8 MiB of xorshift words: distinct everywhere
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t done = 0; done < (gib << 30); done += block.size() * 8) {
    for (auto &w : block) x ^= x << 13, x ^= x >> 7, x ^= x << 17, w = x;
    if (write(fd, block.data(), block.size() * 8) != static_cast<ssize_t>(block.size() * 8)) {
      std::perror("write");
      std::exit(1);
    }
  }
  close(fd);
}

struct Row {
  std::string path;
  double gbps;
  double notes;  // the H200 figure measured before (docs/mapped.md), 0 if none
  std::string detail;
};

// Best of n runs of f(), each moving `bytes`.
template <class F>
double best_gbps(size_t bytes, int n, F f) {
  double best = 1e30;
  for (int i = 0; i < n; ++i) {
    auto t = clk::now();
    f();
    best = std::min(best, since(t));
  }
  return static_cast<double>(bytes) / best / 1e9;
}

// The staged pipeline: `threads` copy threads fill pinned chunks; this thread uploads them as they come.
double staged(const rig_probe_ops &ops, const char *map, size_t size, int threads, size_t chunk) {
  struct Buf {
    void *p = nullptr;
    size_t len = 0;
  };
  std::vector<Buf> bufs(static_cast<size_t>(threads) * 2);
  for (auto &b : bufs) check(ops.alloc_host(ops.user, chunk, &b.p), "alloc_host (staging)");
  std::mutex m;
  std::condition_variable cv;
  std::deque<size_t> full, empty;
  for (size_t i = 0; i < bufs.size(); ++i) empty.push_back(i);
  size_t chunks = (size + chunk - 1) / chunk;
  std::atomic<size_t> next{0};
  auto t = clk::now();
  std::vector<std::thread> copiers;
  for (int k = 0; k < threads; ++k)
    copiers.emplace_back([&] {
      for (;;) {
        size_t j = next.fetch_add(1, std::memory_order_relaxed);  // relaxed: only hands out indices
        if (j >= chunks) return;
        size_t b;
        {
          std::unique_lock g(m);
          cv.wait(g, [&] { return !empty.empty(); });
          b = empty.front();
          empty.pop_front();
        }
        size_t len = std::min(chunk, size - j * chunk);
        std::memcpy(bufs[b].p, map + j * chunk, len);
        bufs[b].len = len;
        {
          std::lock_guard g(m);
          full.push_back(b);
        }
        cv.notify_all();
      }
    });
  for (size_t done = 0; done < chunks; ++done) {
    size_t b;
    {
      std::unique_lock g(m);
      cv.wait(g, [&] { return !full.empty(); });
      b = full.front();
      full.pop_front();
    }
    check(ops.upload(ops.user, bufs[b].p, bufs[b].len), "upload (staged)");
    {
      std::lock_guard g(m);
      empty.push_back(b);
    }
    cv.notify_all();
  }
  double s = since(t);
  for (auto &c : copiers) c.join();
  for (auto &b : bufs) ops.free_host(ops.user, b.p, chunk);
  return static_cast<double>(size) / s / 1e9;
}

}  // namespace

int main(int argc, char **argv) {
  const char *file = nullptr;
  std::string device = "cuda:0";
  size_t make_gib = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = argv[++i];
    else if (a == "--make-gib" && i + 1 < argc) make_gib = std::strtoull(argv[++i], nullptr, 10);
    else file = argv[i];
  }
  if (!file) {
    std::fprintf(stderr, "usage: bench_mapped_load FILE [--device NAME] [--make-gib N]\n");
    return 2;
  }
  if (make_gib) make_file(file, make_gib);
  int fd = open(file, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    std::perror(file);
    return 1;
  }
  size_t size = static_cast<size_t>(st.st_size) & ~static_cast<size_t>(4095);
  auto *map = static_cast<char *>(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0));
  if (map == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  // The pageable copy of the file, read with pread: this also brings every page into the page cache, so
  // no path below pays the disk.
  std::vector<char> pageable(size);
  for (size_t done = 0; done < size;) {
    ssize_t r = pread(fd, pageable.data() + done, size - done, static_cast<off_t>(done));
    if (r <= 0) {
      std::perror("pread");
      return 1;
    }
    done += static_cast<size_t>(r);
  }
  rig_device dev;
  check(rig_device_open(device.c_str(), &dev), "open device");
  rig_device_info info{};
  info.size = sizeof info;
  check(rig_device_get_info(dev, &info), "device info");
  rig_probe_ops ops;
  auto t_open = clk::now();
  check(rig_probe_ops_open(dev, size, &ops), "probe ops");
  double open_s = since(t_open);
  std::vector<Row> rows;
  char d[160];

  rows.push_back({"pageable mapping", best_gbps(size, 3, [&] { check(ops.upload(ops.user, map, size), "upload"); }), 8.8, ""});
  rows.push_back({"pageable malloc",
                  best_gbps(size, 3, [&] { check(ops.upload(ops.user, pageable.data(), size), "upload"); }), 8.8, ""});

  void *pinned = nullptr;
  auto t_pin = clk::now();
  check(ops.alloc_host(ops.user, size, &pinned), "alloc_host (pinned)");
  double pin_alloc_s = since(t_pin);
  std::memcpy(pinned, pageable.data(), size);
  std::snprintf(d, sizeof d, "cuMemHostAlloc of the buffer took %.3f s", pin_alloc_s);
  rows.push_back({"pinned (link limit)", best_gbps(size, 3, [&] { check(ops.upload(ops.user, pinned, size), "upload"); }),
                  55.5, d});
  check(ops.free_host(ops.user, pinned, size), "free_host");

  auto t_reg = clk::now();
  check(ops.register_host(ops.user, map, size), "register");
  double reg_s = since(t_reg);
  auto t_first = clk::now();
  check(ops.upload(ops.user, map, size), "upload (registered)");
  double first_s = since(t_first);
  double reg_best = best_gbps(size, 3, [&] { check(ops.upload(ops.user, map, size), "upload"); });
  auto t_unreg = clk::now();
  check(ops.unregister_host(ops.user, map, size), "unregister");
  double unreg_s = since(t_unreg);
  std::snprintf(d, sizeof d, "registration %.3f s (%.1f GB/s pinning rate; notes: 46.7, 0.092 s), unregistration %.3f s",
                reg_s, static_cast<double>(size) / reg_s / 1e9, unreg_s);
  rows.push_back({"registered mapping", reg_best, 55.5, d});
  rows.push_back({"registered incl. registration", static_cast<double>(size) / (reg_s + first_s) / 1e9, 0,
                  "register + first copy"});

  double best_staged = 0;
  int best_t = 0;
  std::string each;
  for (int t : {1, 4, 8}) {
    double g = staged(ops, map, size, t, 32u << 20);
    std::snprintf(d, sizeof d, "%s%d thr %.1f", each.empty() ? "" : ", ", t, g);
    each += d;
    if (g > best_staged) best_staged = g, best_t = t;
  }
  std::snprintf(d, sizeof d, "best %d threads, 32 MiB chunks (%s GB/s)", best_t, each.c_str());
  rows.push_back({"staged pipeline", best_staged, 36.7, d});
  check(rig_probe_ops_close(&ops), "close ops");

  // The probe's own wall time on a 64 MiB region (a fresh region: the table holds nothing over it).
  size_t region = std::min<size_t>(size, 64u << 20);
  std::vector<double> probe_s;
  std::string verdict, phases;
  rig_probe_options popt{};
  popt.size = sizeof popt;
  popt.log = [](void *user, const char *m) {
    if (std::strncmp(m, "phases", 6) == 0) *static_cast<std::string *>(user) = m;
  };
  popt.log_user = &phases;
  for (int i = 0; i < 5; ++i) {
    rig_verdict v;
    auto t = clk::now();
    check(rig_probe(dev, map, pageable.data(), region, &popt, &v), "probe");
    probe_s.push_back(since(t));
    const char *text;
    rig_verdict_to_string(v, &text);
    verdict = text;
    rig_verdict_release(v);
  }
  std::sort(probe_s.begin(), probe_s.end());

  std::printf("device %s (%s), file %s, %.2f GiB in page cache; device buffer opened in %.3f s\n", info.name, info.model,
              file, static_cast<double>(size) / (1 << 30), open_s);
  std::printf("%-32s %9s %12s  %s\n", "path (host to device)", "GB/s", "notes GB/s", "detail");
  for (auto &r : rows) {
    char n[16] = "-";
    if (r.notes > 0) std::snprintf(n, sizeof n, "%.1f", r.notes);
    std::printf("%-32s %9.2f %12s  %s\n", r.path.c_str(), r.gbps, n, r.detail.c_str());
  }
  std::printf("ratio registered / staged: %.2f (notes, 4 GiB: about 1.5)\n", rows[3].gbps / best_staged);
  std::printf("probe of a %zu MiB region: best %.1f ms, median %.1f ms, worst %.1f ms (goal: under 50 ms)\n",
              region >> 20, probe_s.front() * 1e3, probe_s[probe_s.size() / 2] * 1e3, probe_s.back() * 1e3);
  std::printf("probe verdict: %s\nprobe %s (last run; the rest is opening the ops' device buffer)\n", verdict.c_str(),
              phases.c_str());
  std::printf("JSON {\"size\": %zu", size);
  for (auto &r : rows) std::printf(", \"%s\": %.3f", r.path.c_str(), r.gbps);
  std::printf(", \"probe_ms_best\": %.2f, \"probe_ms_median\": %.2f}\n", probe_s.front() * 1e3,
              probe_s[probe_s.size() / 2] * 1e3);
  rig_device_release(dev);
  munmap(map, size);
  close(fd);
  return 0;
}
