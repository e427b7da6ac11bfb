// bench/load: a safetensors file onto one device (and onto a pair), by each of rig_load.h's paths, beside
// peers measured in the same run (issue 12's "Show"). Nothing is asserted: the bench prints GB/s, the
// ratio to the peer that bounds it, and which of the goals each figure meets.
//
// Peers (each moves the same bytes as the load):
//   link        the file's bytes from page-locked memory by the driver's synchronous host-to-device copy
//               (cuMemcpyHtoD through rig's own loaded CUDA: rig_probe_ops_open), in 1 GiB pieces: what
//               the link moves at best; on a memory device, memcpy between two heap buffers
//   pageable    what a plain loader does: pread 64 MiB of the file into malloc'd memory, copy it, repeat
//   O_DIRECT    (cold) the file system's own read rate: 4 threads pread 16 MiB blocks with O_DIRECT
//   host        (warm) the staged path's ceiling here: its readers pread the file into a chunk each, with
//               no device, then again while a thread keeps the link copying (host memory shared by both)
// rig rows: staged (first load, its pinned pool made inside the timing), staged with a pool kept across
// loads, registered (where the verdict is Usable), direct (where it is Not_needed), auto. Every figure is
// end to end: rig_load_open to the devices having finished the copies (rig_device_wait).
// Warm: the file is read once first, so it sits in the page cache. Cold: before each cold run the file is
// evicted with posix_fadvise(DONTNEED) and mincore says how much stayed resident.
//
// usage: bench_load FILE [--device NAME[,NAME]] [--make-gib N | --make-mib N] [--tensor-kib N] [--make-only] [--repeat N]
//                        [--no-cold] [--staged-only] [--threads N] [--chunk-mib N] [--staging-mib N]
//   NAME: cuda:0, hip:0 or memory:NAME. Exits 77 with the reason when a named GPU cannot be opened.
//   --make-*: writes FILE first (and removes it at the end); --make-only: writes it and exits.
//   --staged-only: the link and the staged rows only (a before/after of librig through LD_LIBRARY_PATH).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rig_load.h>

#include "first_compute.h"
#include <rig_mapped.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using clk = std::chrono::steady_clock;
double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }
constexpr size_t MiB = size_t(1) << 20, GiB = size_t(1) << 30;

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "bench_load: %s\n", what);
  std::exit(1);
}

// Resident set size (VmRSS), bytes.
long long rss_bytes() {
  FILE *f = std::fopen("/proc/self/status", "r");
  char line[256];
  long long kb = 0;
  if (!f) return 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmRSS: %lld kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

// ---- the file -------------------------------------------------------------------------------------------

// A safetensors file of about `bytes`: BF16 tensors "model.layers.L.wK" of 64 MiB (smaller for a small
// file, 16 at least), four to a layer, so a placement by layer splits it evenly; or of `tensor_kib` KiB
// (a multiple of 16), as a mixture-of-experts checkpoint's many small expert tensors (one shard of
// Qwen3-30B-A3B holds about a thousand of 3 MiB). Data are xorshift words, distinct everywhere. The header
// is padded with spaces so the data start on a 4 KiB boundary.
void make_file(const char *path, size_t bytes, size_t tensor_kib = 0) {
  size_t tensor = tensor_kib ? tensor_kib / 16 * 16 * 1024
                             : std::clamp<size_t>(bytes / 16 / (64 * 1024) * (64 * 1024), 64 * 1024, 64 * MiB);
  size_t count = std::max<size_t>(1, bytes / tensor);
  std::string h = "{\"__metadata__\":{\"format\":\"pt\",\"made_by\":\"bench_load\"}";
  for (size_t i = 0; i < count; ++i) {
    char row[200];
    std::snprintf(row, sizeof row, ",\"model.layers.%zu.w%zu\":{\"dtype\":\"BF16\",\"shape\":[%zu,8192],"
                  "\"data_offsets\":[%zu,%zu]}", i / 4, i % 4, tensor / 16384, i * tensor, (i + 1) * tensor);
    h += row;
  }
  h += "}";
  while ((8 + h.size()) % 4096) h += ' ';
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die((std::string("create ") + path + ": " + std::strerror(errno)).c_str());
  uint64_t n = h.size();
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(n >> (8 * i));
  bool ok = write(fd, le, 8) == 8 && write(fd, h.data(), h.size()) == static_cast<ssize_t>(h.size());
  std::vector<uint64_t> block(MiB);  // 8 MiB
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t done = 0, total = count * tensor; ok && done < total; done += block.size() * 8) {
    for (auto &w : block) x ^= x << 13, x ^= x >> 7, x ^= x << 17, w = x;
    size_t len = std::min(block.size() * 8, total - done);
    ok = write(fd, block.data(), len) == static_cast<ssize_t>(len);
  }
  if (!ok || fsync(fd) != 0 || close(fd) != 0) die((std::string("write ") + path + ": " + std::strerror(errno)).c_str());
  std::printf("made %s: %zu tensors of %zu MiB, %.3f GB\n", path, count, tensor / MiB, double(8 + h.size() + count * tensor) / 1e9);
}

// Reads [offset, offset+len) of fd into buf, all of it; false on an error or a short file.
bool pread_all(int fd, void *buf, size_t len, uint64_t offset) {
  auto *p = static_cast<char *>(buf);
  while (len) {
    ssize_t r = pread(fd, p, len, static_cast<off_t>(offset));
    if (r <= 0) return false;
    p += r, len -= size_t(r), offset += uint64_t(r);
  }
  return true;
}

// Evicts the file from the page cache and answers the fraction still resident (mincore), -1 if unknown.
double evict(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  struct stat st;
  fstat(fd, &st);
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  double resident = -1;
  size_t size = size_t(st.st_size);
  void *map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map != MAP_FAILED) {
    size_t pages = (size + 4095) / 4096, in = 0;
    std::vector<unsigned char> v(pages);
    if (mincore(map, size, v.data()) == 0) {
      for (unsigned char c : v) in += c & 1;
      resident = double(in) / double(pages);
    }
    munmap(map, size);
  }
  close(fd);
  return resident;
}

// ---- peers: a device's synchronous host-to-device copy --------------------------------------------------

// Copies host memory to one device and waits for it: the driver's copy (rig_probe_ops over the device)
// for a GPU, memcpy for a memory device (which has no driver copy to call).
struct Uploader {
  rig_probe_ops ops{};
  bool open = false;
  std::vector<char> heap;  // the memory device's "device" side
  size_t cap = 0;
  std::string why;

  bool start(rig_device dev, size_t bytes) {
    cap = bytes;
    rig_device_info info{};
    info.size = sizeof info;
    if (rig_device_get_info(dev, &info) == RIG_OK && info.kind != RIG_DEVICE_GPU) {
      heap.resize(bytes);
      return true;
    }
    rig_status s = rig_probe_ops_open(dev, bytes, &ops);
    if (s != RIG_OK) {
      why = std::string(rig_status_name(s)) + ": " + rig_last_error();
      return false;
    }
    open = true;
    return true;
  }
  bool pinned(size_t len, void **p) {
    if (!open) return (*p = std::malloc(len)) != nullptr;
    return ops.alloc_host(ops.user, len, p) == RIG_OK;
  }
  void unpin(void *p, size_t len) {
    if (!open) std::free(p);
    else ops.free_host(ops.user, p, len);
  }
  bool upload(const void *p, size_t len) {
    if (!open) return std::memcpy(heap.data(), p, len), true;
    return ops.upload(ops.user, p, len) == RIG_OK;
  }
  ~Uploader() {
    if (open) rig_probe_ops_close(&ops);
  }
};

// ---- rows -----------------------------------------------------------------------------------------------

struct Row {
  std::string name;
  double gbps = 0;   // 0: not measured (see note)
  double seconds = 0;
  double bound = 0;  // the peer this row is a fraction of (GB/s), 0 for none
  std::string note;
};
void print_row(const Row &r) {
  char ratio[32] = "";
  if (r.gbps > 0 && r.bound > 0) std::snprintf(ratio, sizeof ratio, "%.3f", r.gbps / r.bound);
  if (r.gbps > 0)
    std::printf("  %-46s %8.2f GB/s %8.3f s  %6s  %s\n", r.name.c_str(), r.gbps, r.seconds, ratio, r.note.c_str());
  else
    std::printf("  %-46s %8s      %8s    %6s  %s\n", r.name.c_str(), "n/a", "", "", r.note.c_str());
  std::fflush(stdout);
}

// Best of `n` runs of f(), each answering seconds (<0: failed, the note says why).
Row best_of(const std::string &name, int n, uint64_t bytes, double bound, const std::function<double(std::string *)> &f) {
  Row r{name, 0, 1e30, bound, ""};
  for (int i = 0; i < n; ++i) {
    std::string note;
    double s = f(&note);
    if (s < 0) return Row{name, 0, 0, bound, note};
    if (s < r.seconds) r.seconds = s, r.note = note;
  }
  r.gbps = double(bytes) / r.seconds / 1e9;
  return r;
}

// The link: the file's first `bytes` in page-locked memory (up to 1 GiB, copied repeatedly for more), to
// every device at once, one thread each. Seconds, or -1.
struct Link {
  std::vector<std::unique_ptr<Uploader>> up;
  std::vector<void *> host;
  size_t piece = 0;
  std::string why;
  bool make(const std::vector<rig_device> &devs, int fd, size_t bytes) {
    piece = std::min(bytes, GiB);
    for (rig_device d : devs) {
      up.push_back(std::make_unique<Uploader>());
      void *p = nullptr;
      if (!up.back()->start(d, piece)) return why = up.back()->why, false;
      if (!up.back()->pinned(piece, &p)) return why = "page-locked allocation failed", false;
      host.push_back(p);
      if (!pread_all(fd, p, piece, 0)) return why = "pread failed", false;
    }
    return true;
  }
  double run(size_t bytes_each, size_t devices) {
    std::atomic<bool> ok{true};
    auto t = clk::now();
    std::vector<std::thread> th;
    for (size_t d = 0; d < devices; ++d)
      th.emplace_back([&, d] {
        for (size_t done = 0; done < bytes_each; done += piece)
          if (!up[d]->upload(host[d], std::min(piece, bytes_each - done))) ok = false;
      });
    for (auto &x : th) x.join();
    return ok ? since(t) : -1;
  }
  ~Link() {
    for (size_t i = 0; i < host.size(); ++i) up[i]->unpin(host[i], piece);
  }
};

// The plain loader: for each 64 MiB of the file, pread into pageable memory, copy to the device. Devices
// split the file in contiguous parts, one thread each. Seconds, or -1.
double pageable(const std::vector<std::unique_ptr<Uploader>> &up, const char *path, size_t bytes, int flags) {
  int fd = open(path, O_RDONLY | flags);
  if (fd < 0) return -1;
  std::atomic<bool> ok{true};
  size_t n = up.size(), part = (bytes / n + 4095) / 4096 * 4096;
  auto t = clk::now();
  std::vector<std::thread> th;
  for (size_t d = 0; d < n; ++d)
    th.emplace_back([&, d] {
      std::vector<char> buf(64 * MiB);
      size_t end = std::min(bytes, (d + 1) * part);
      for (size_t at = d * part; at < end; at += buf.size()) {
        size_t len = std::min(buf.size(), end - at);
        if (!pread_all(fd, buf.data(), len, at) || !up[d]->upload(buf.data(), len)) ok = false;
      }
    });
  for (auto &x : th) x.join();
  double s = since(t);
  close(fd);
  return ok ? s : -1;
}

// The file system's O_DIRECT read rate: 4 threads, 16 MiB blocks, into aligned memory. Seconds, or -1.
double odirect_read(const char *path, size_t bytes) {
  int fd = open(path, O_RDONLY | O_DIRECT);
  if (fd < 0) return -1;
  constexpr size_t block = 16 * MiB;
  std::atomic<size_t> next{0};
  std::atomic<bool> ok{true};
  auto t = clk::now();
  std::vector<std::thread> th;
  for (int k = 0; k < 4; ++k)
    th.emplace_back([&] {
      void *buf = nullptr;
      if (posix_memalign(&buf, 4096, block)) return void(ok = false);
      for (size_t at; (at = next.fetch_add(block)) < bytes;) {
        size_t len = std::min(block, (bytes - at + 4095) / 4096 * 4096);
        ssize_t r = pread(fd, buf, len, static_cast<off_t>(at));
        if (r < 0) ok = false;
      }
      std::free(buf);
    });
  for (auto &x : th) x.join();
  double s = since(t);
  close(fd);
  return ok ? s : -1;
}

// The staged path's ceiling on this host, with no device: `threads` readers pread the warm file chunk by
// chunk, each into one `chunk`-byte buffer of its own (reused, as a staging chunk is). Where `link` is
// given, a thread keeps the link copying pinned memory to the device the whole time, as a staged load's
// copies do: what the readers get then is what host memory leaves them beside the device's reads.
// Seconds of the reads, or -1; *link_gbps is what the link moved meanwhile.
double host_read(int fd, size_t bytes, unsigned threads, size_t chunk, Link *link, double *link_gbps) {
  std::atomic<size_t> next{0};
  std::atomic<bool> ok{true}, done{false};
  std::atomic<size_t> uploaded{0};
  std::thread copier;
  auto t0 = clk::now();
  if (link)
    copier = std::thread([&] {
      while (!done.load(std::memory_order_relaxed)) {
        size_t len = std::min(link->piece, 64 * MiB);
        if (!link->up[0]->upload(link->host[0], len)) return void(ok = false);
        uploaded += len;
      }
    });
  if (link) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the link busy before the reads start
  auto t = clk::now();
  std::vector<std::thread> th;
  for (unsigned k = 0; k < threads; ++k)
    th.emplace_back([&] {
      void *buf = nullptr;
      if (posix_memalign(&buf, 2 * MiB, chunk)) return void(ok = false);
      madvise(buf, chunk, MADV_HUGEPAGE);  // as the staging pool's
      for (size_t at; (at = next.fetch_add(chunk)) < bytes;)
        if (!pread_all(fd, buf, std::min(chunk, bytes - at), at)) ok = false;
      std::free(buf);
    });
  for (auto &x : th) x.join();
  double s = since(t);
  done = true;
  if (copier.joinable()) copier.join();
  if (link_gbps) *link_gbps = link ? double(uploaded.load()) / since(t0) / 1e9 : 0;
  return ok ? s : -1;
}

// The staged path's other ceiling: the copies alone. `total` bytes as rig submits of `chunk`-byte copies
// from one registered 64 MiB staging region (an anonymous mapping, wrapped and borrowed) into one device
// buffer, back to back on the device's queue, as the loader's copier submits them; timed to the device's
// last value. Seconds, or -1 with *note saying why.
double rig_copies(rig_device dev, size_t total, size_t chunk, std::string *note) {
  const size_t region = 64 * MiB;
  void *host = mmap(nullptr, region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (host == MAP_FAILED) return *note = "mmap failed", -1;
  madvise(host, region, MADV_HUGEPAGE);
  std::memset(host, 1, region);
  rig_buffer wrap = nullptr, staging = nullptr, dst = nullptr;
  rig_submission copy = nullptr;
  rig_part part{};
  part.size = sizeof part;
  part.kind = RIG_PART_COPY;
  part.src_slot = 0;
  part.dst_slot = 1;
  part.length = RIG_WHOLE;
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_status s = rig_buffer_wrap(host, region, RIG_ACCESS_READ_WRITE, nullptr, nullptr, &wrap);
  if (!s) s = rig_buffer_borrow(dev, wrap, &staging);
  if (!s) s = rig_buffer_create(dev, region, RIG_MEMORY_DEVICE, &dst);
  if (!s) s = rig_submission_make(dev, &part, 1, access, 2, &copy);
  auto one = [&](size_t off, size_t len) {
    rig_buffer from = nullptr, to = nullptr;
    rig_run run = nullptr;
    rig_status r = rig_buffer_view(staging, off, len, &from);
    if (!r) r = rig_buffer_view(dst, off, len, &to);
    if (!r) r = rig_run_take(copy, &run);
    if (!r) r = rig_run_set_buffer(run, 0, from);
    if (!r) r = rig_run_set_buffer(run, 1, to);
    if (!r) r = rig_submit(run, nullptr, 0, nullptr);
    if (run) rig_run_release(run);
    if (to) rig_buffer_release(to);
    if (from) rig_buffer_release(from);
    return r;
  };
  uint64_t v = 0;
  double seconds = -1;
  if (!s) s = one(0, chunk);  // warm: the first copy of the process pays for its setup
  if (!s) s = rig_device_submitted(dev, &v);
  if (!s) s = rig_device_wait(dev, v, UINT64_MAX);
  auto t = clk::now();
  for (size_t done = 0; !s && done < total; done += chunk) s = one(done % (region / chunk * chunk), std::min(chunk, total - done));
  if (!s) s = rig_device_submitted(dev, &v);
  if (!s) s = rig_device_wait(dev, v, UINT64_MAX);
  if (!s) seconds = since(t);
  else *note = std::string(rig_status_name(s)) + ": " + rig_last_error();
  if (copy) rig_submission_release(copy);
  if (dst) rig_buffer_release(dst);
  if (staging) rig_buffer_release(staging);
  if (wrap) rig_buffer_release(wrap);
  rig_device_wait(dev, v, UINT64_MAX);  // the mapping goes only after the copies that read it
  munmap(host, region);
  return seconds;
}

// One rig load of the whole file onto `devs` by `rule`, end to end (open to the devices finished).
// Answers seconds (or -1 with the status in *note) and, in *note, the path, why, time to the first tensor,
// pinned staging and resident-set growth; *copied is the bytes the devices received.
// `open`: a file opened (and perhaps kept registered) outside the timing; null: opened inside it.
double rig_row(const char *path, const std::vector<rig_device> &devs, rig_load_rule rule, rig_load_options o,
               std::string *note, uint64_t *copied = nullptr, long long *rss_growth = nullptr,
               rig_load_file open = nullptr) {
  long long rss0 = rss_bytes();
  auto t = clk::now();
  rig_load_file file = open;
  rig_load load = nullptr;
  rig_load_placement p{};
  p.size = sizeof p;
  p.devices = devs.data();
  p.device_count = devs.size();
  p.rule = rule;
  rig_status s = open ? RIG_OK : rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &file);
  double opened = since(t);
  if (!s) s = rig_load_start(file, nullptr, 0, &p, &o, &load);
  double started = since(t);
  if (!s) s = rig_load_wait(load);
  double submitted = since(t);
  for (size_t d = 0; !s && d < devs.size(); ++d) {
    uint64_t v = 0;
    if (!(s = rig_device_submitted(devs[d], &v)) && v) s = rig_device_wait(devs[d], v, UINT64_MAX);
  }
  double secs = since(t);
  if (s) *note = std::string(rig_status_name(s)) + ": " + rig_last_error();
  rig_load_stats st{};
  st.size = sizeof st;
  if (!s && rig_load_get_stats(load, &st) == RIG_OK) {
    char b[512];
    // Where the fixed time goes: opened, started (rig_load_start returned), the first tensor handed out,
    // the last copy submitted (rig_load_wait returned), the copies done; each from the row's start. The
    // first tensor's time counts from rig_load_start's call (rig_load.h), made right after the open.
    std::snprintf(b, sizeof b,
                  "%s%s; ms: open %.2f, start %.2f, first tensor %.2f, submitted %.2f, done %.2f; staging %zu MiB; "
                  "rss +%lld MiB (%s)",
                  rig_load_path_name(st.path), st.direct_io ? "+O_DIRECT" : "", opened * 1e3, started * 1e3,
                  opened * 1e3 + st.first_tensor_seconds * 1e3, submitted * 1e3, secs * 1e3, st.staging_bytes / MiB,
                  (rss_bytes() - rss0) / (long long)MiB, st.why ? st.why : "");
    *note = b;
    if (copied) *copied = st.bytes_copied;
    if (rss_growth) *rss_growth = rss_bytes() - rss0;
  }
  if (load) rig_load_release(load);
  if (file && !open) rig_load_file_release(file);
  return s ? -1 : secs;
}

rig_load_options options(rig_load_path path, rig_load_io io, uint32_t threads, size_t chunk) {
  rig_load_options o{};
  o.size = sizeof o;
  o.path = path;
  o.io = io;
  o.threads = threads;
  o.chunk_bytes = chunk;
  return o;
}

void goal(const char *what, double got, double want) {
  if (got <= 0) std::printf("  goal %-58s not measured\n", what);
  else std::printf("  goal %-58s %s (%.3f, want >= %.2f)\n", what, got >= want ? "met   " : "MISSED", got, want);
}

}  // namespace

int main(int argc, char **argv) {
  const char *file = nullptr;
  std::string device_list = "cuda:0";
  size_t make = 0, tensor_kib = 0, chunk = 0, staging = RIG_LOAD_DEFAULT_STAGING_BYTES;
  uint32_t threads = 0;
  int repeat = 3;
  bool make_only = false, cold = true, staged_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--device" && v) device_list = v, ++i;
    else if (a == "--make-gib" && v) make = std::strtoull(v, nullptr, 10) * GiB, ++i;
    else if (a == "--make-mib" && v) make = std::strtoull(v, nullptr, 10) * MiB, ++i;
    else if (a == "--tensor-kib" && v) tensor_kib = std::max<size_t>(16, std::strtoull(v, nullptr, 10)), ++i;
    else if (a == "--make-only") make_only = true;
    else if (a == "--no-cold") cold = false;
    else if (a == "--staged-only") staged_only = true;
    else if (a == "--repeat" && v) repeat = std::max(1, std::atoi(v)), ++i;
    else if (a == "--threads" && v) threads = uint32_t(std::atoi(v)), ++i;
    else if (a == "--chunk-mib" && v) chunk = std::strtoull(v, nullptr, 10) * MiB, ++i;
    else if (a == "--staging-mib" && v) staging = std::max<size_t>(1, std::strtoull(v, nullptr, 10)) * MiB, ++i;
    else if (a[0] != '-' && !file) file = argv[i];
    else {
      std::fprintf(stderr, "usage: bench_load FILE [--device NAME[,NAME]] [--make-gib N | --make-mib N] [--tensor-kib N]\n"
                           "                  [--make-only]\n"
                           "                  [--repeat N] [--no-cold] [--staged-only] [--threads N] [--chunk-mib N] [--staging-mib N]\n");
      return 2;
    }
  }
  if (!file) return std::fprintf(stderr, "bench_load: no FILE (--help for usage)\n"), 2;
  if (make_only) {
    if (!make) return std::fprintf(stderr, "bench_load: --make-only needs --make-gib or --make-mib\n"), 2;
    make_file(file, make, tensor_kib);
    return 0;
  }

  // Devices first: without the GPU there is nothing to measure, and no file is written.
  std::vector<rig_device> devs;
  std::vector<std::string> names;
  for (size_t at = 0; at <= device_list.size();) {
    size_t end = std::min(device_list.find(',', at), device_list.size());
    std::string name = device_list.substr(at, end - at);
    at = end + 1;
    if (name.empty()) continue;
    rig_device d = nullptr;
    bool memory = name.rfind("memory:", 0) == 0;
    rig_status s = memory ? rig_memory_device(name.c_str() + 7, &d) : rig_device_open(name.c_str(), &d);
    if (s != RIG_OK) {
      std::printf("SKIP bench_load: device %s cannot be opened (%s: %s)\n", name.c_str(), rig_status_name(s),
                  rig_last_error());
      return 77;
    }
    devs.push_back(d);
    names.push_back(name);
  }
  if (devs.empty()) return std::fprintf(stderr, "bench_load: no device named\n"), 2;
  if (make) make_file(file, make, tensor_kib);

  int fd = open(file, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) die((std::string(file) + ": " + std::strerror(errno)).c_str());
  size_t size = size_t(st.st_size);
  rig_load_file probe_file = nullptr;
  uint64_t tensor_bytes = 0;
  size_t tensors = 0;
  if (rig_status s = rig_load_open(file, RIG_LOAD_FORMAT_AUTO, &probe_file))
    die((std::string(file) + ": " + rig_status_name(s) + ": " + rig_last_error()).c_str());
  rig_load_tensor_count(probe_file, &tensors);
  for (size_t i = 0; i < tensors; ++i) {
    rig_load_tensor t{};
    t.size = sizeof t;
    if (rig_load_tensor_get(probe_file, i, &t) == RIG_OK) tensor_bytes += t.length;
  }
  rig_load_file_release(probe_file);
  std::printf("bench_load: %s, %.3f GB (%zu tensors, %.3f GB of tensor data); devices %s; best of %d warm\n", file,
              double(size) / 1e9, tensors, double(tensor_bytes) / 1e9, device_list.c_str(), repeat);
  for (size_t d = 0; d < devs.size(); ++d) {
    rig_device_info info{};
    info.size = sizeof info;
    if (rig_device_get_info(devs[d], &info) == RIG_OK)
      std::printf("  %s: %s (%s)\n", names[d].c_str(), info.model && *info.model ? info.model : info.name,
                  info.framework);
  }

  // Warm: into the page cache, timed (the page cache's own read rate, for the record).
  {
    auto t = clk::now();
    std::vector<char> buf(64 * MiB);
    for (size_t at = 0; at < size; at += buf.size())
      if (!pread_all(fd, buf.data(), std::min(buf.size(), size - at), at)) die("pread of the file failed");
    std::printf("  read into the page cache once: %.2f GB/s (first read)\n", double(size) / since(t) / 1e9);
  }

  std::vector<rig_device> one{devs[0]};
  Link link1;
  double link_gbps = 0;
  std::printf("\n== one device, warm (%s): row, GB/s, seconds, fraction of the link, notes\n", names[0].c_str());
  if (link1.make(one, fd, tensor_bytes)) {
    Row r = best_of("link: pinned host-to-device copy", repeat, tensor_bytes, 0,
                    [&](std::string *) { return link1.run(tensor_bytes, 1); });
    r.note = "the bound for every row below";
    print_row(r);
    link_gbps = r.gbps;
  } else {
    print_row(Row{"link: pinned host-to-device copy", 0, 0, 0, link1.why});
  }
  // The first load comes before every row that frees device memory (the copies' rows below, the later
  // loads): memory allocated within a second or two of a free is written up to 10% slower on an H200
  // (bench/probes/dst_probe.cu, bench/README.md), which a process's first load never meets.
  auto staged = options(RIG_LOAD_PATH_STAGED, RIG_LOAD_IO_AUTO, threads, chunk);
  staged.staging_bytes = staging;
  long long first_rss = 0;
  Row first = best_of("rig staged, first load (pool made inside)", 1, tensor_bytes, link_gbps, [&](std::string *n) {
    return rig_row(file, one, RIG_LOAD_RULE_EACH, staged, n, nullptr, &first_rss);
  });
  print_row(first);
  std::vector<std::unique_ptr<Uploader>> up1;
  up1.push_back(std::make_unique<Uploader>());
  Row pageable_row{"pageable: pread 64 MiB + copy", 0, 0, 0, up1[0]->why};
  if (staged_only)  // --staged-only: the link and the staged rows, for a before/after of the library
    pageable_row.note = "left out (--staged-only)";
  else if (up1[0]->start(devs[0], 64 * MiB))
    pageable_row = best_of(pageable_row.name, repeat, size, link_gbps,
                           [&](std::string *) { return pageable(up1, file, size, 0); });
  else
    pageable_row.note = up1[0]->why;
  print_row(pageable_row);

  // What host memory allows the staged path on this machine: the readers alone, then beside the link.
  if (!staged_only) {
    unsigned readers = threads ? threads
                               : std::clamp(std::thread::hardware_concurrency() * 3 / 4, 1u, unsigned(RIG_LOAD_DEFAULT_THREADS_MAX));
    for (size_t c : {size_t(RIG_LOAD_DEFAULT_CHUNK_BYTES), size_t(1 * MiB)}) {
      std::string name = "host: " + std::to_string(readers) + " readers pread, " + std::to_string(c / MiB) + " MiB chunks";
      print_row(best_of(name, repeat, size, link_gbps, [&](std::string *n) {
        *n = "no device: the staged path's ceiling";
        return host_read(fd, size, readers, c, nullptr, nullptr);
      }));
      if (link_gbps <= 0) continue;
      double moved = 0;
      Row r = best_of(name + ", link busy", repeat, size, link_gbps, [&](std::string *n) {
        double s = host_read(fd, size, readers, c, &link1, &moved);
        char b[96];
        std::snprintf(b, sizeof b, "the link moved %.2f GB/s meanwhile", moved);
        *n = b;
        return s;
      });
      print_row(r);
    }
  }
  // What the device's queue takes in the staged path's copies, with no reading at all.
  for (size_t c : {size_t(chunk ? chunk : RIG_LOAD_DEFAULT_CHUNK_BYTES), size_t(16 * MiB)}) {
    if (staged_only) break;
    std::string name = "copies alone: rig submits of " + std::to_string(c / MiB) + " MiB";
    print_row(best_of(name, repeat, tensor_bytes, link_gbps, [&](std::string *n) {
      double sec = rig_copies(devs[0], tensor_bytes, c, n);
      if (sec >= 0) *n = "from a registered region to one device buffer: the staged path's copy ceiling";
      return sec;
    }));
  }
  // A pool kept across loads, made outside the timing (what a process that loads more than once does).
  Row kept{"rig staged, pool kept (later loads)", 0, 0, link_gbps, ""};
  {
    rig_load_pool pool = nullptr;
    size_t c = chunk ? chunk : RIG_LOAD_DEFAULT_CHUNK_BYTES;
    auto t = clk::now();
    rig_status s = rig_load_pool_create(devs[0], staging, c, &pool);
    double make_s = since(t);
    if (s == RIG_OK) {
      auto o = staged;
      o.pools = &pool;
      o.pool_count = 1;
      kept = best_of(kept.name, repeat, tensor_bytes, link_gbps,
                     [&](std::string *n) { return rig_row(file, one, RIG_LOAD_RULE_EACH, o, n); });
      kept.note += "; pool of " + std::to_string(staging / MiB) + " MiB made in " +
                   std::to_string(int(make_s * 1e3)) + " ms";
      rig_load_pool_release(pool);
    } else {
      kept.note = std::string("pool: ") + rig_status_name(s) + ": " + rig_last_error();
    }
  }
  print_row(kept);
  if (staged_only) {
    goal("first load in a process >= 0.9 of the link", link_gbps > 0 ? first.gbps / link_gbps : 0, 0.9);
    goal("a later load (pool kept) >= 0.95 of the link", link_gbps > 0 ? kept.gbps / link_gbps : 0, 0.95);
    close(fd);
    for (rig_device d : devs) rig_device_release(d);
    if (make) unlink(file);
    return 0;
  }
  auto registered = options(RIG_LOAD_PATH_REGISTERED, RIG_LOAD_IO_AUTO, threads, chunk);
  print_row(best_of("rig registered (windows, re-registered)", repeat, tensor_bytes, link_gbps,
                    [&](std::string *n) { return rig_row(file, one, RIG_LOAD_RULE_EACH, registered, n); }));
  auto direct = options(RIG_LOAD_PATH_DIRECT, RIG_LOAD_IO_AUTO, threads, chunk);
  print_row(best_of("rig direct (no registration)", repeat, tensor_bytes, link_gbps,
                    [&](std::string *n) { return rig_row(file, one, RIG_LOAD_RULE_EACH, direct, n); }));
  // A reload from a registration kept across loads (rig_load_file_keep_registered), made outside the
  // timing: what a process that reloads one file pays after the first time.
  Row reload{"rig reload, registration kept", 0, 0, link_gbps, ""};
  {
    rig_load_file kf = nullptr;
    auto t = clk::now();
    rig_status s = rig_load_open(file, RIG_LOAD_FORMAT_AUTO, &kf);
    if (!s) s = rig_load_file_keep_registered(kf, one[0]);
    double keep_s = since(t);
    if (!s) {
      reload = best_of(reload.name, repeat, tensor_bytes, link_gbps, [&](std::string *n) {
        return rig_row(file, one, RIG_LOAD_RULE_EACH, registered, n, nullptr, nullptr, kf);
      });
      reload.note += "; whole file registered once in " + std::to_string(int(keep_s * 1e3)) + " ms";
    } else {
      reload.note = std::string("keep: ") + rig_status_name(s) + ": " + rig_last_error();
    }
    if (kf) rig_load_file_release(kf);
  }
  print_row(reload);
  auto automatic = options(RIG_LOAD_PATH_AUTO, RIG_LOAD_IO_AUTO, threads, chunk);
  Row autorow = best_of("rig auto", repeat, tensor_bytes, link_gbps,
                        [&](std::string *n) { return rig_row(file, one, RIG_LOAD_RULE_EACH, automatic, n); });
  print_row(autorow);
  // Compute on the first tensor while the last is in flight: a GPU's kernel, so CUDA and HIP devices only.
  FirstCompute fc;
  bool gpu = names[0].rfind("cuda", 0) == 0 || names[0].rfind("hip", 0) == 0;
  if (gpu && first_compute(file, one[0], &fc))
    std::printf("  %-44s kernel on tensor 0 done %.1f ms after the start (handed out %.2f ms), last tensor landed "
                "%.1f ms; output %s\n", "compute on the first tensor (auto)", fc.kernel_done_s * 1e3,
                fc.handed_out_s * 1e3, fc.last_landed_s * 1e3, fc.correct ? "equals the file's + 1" : "WRONG");
  else
    std::printf("  %-44s %s\n", "compute on the first tensor (auto)",
                gpu ? fc.why : "left out: the kernel is PTX (CUDA, HIP devices)");
  std::printf("  goals (issue 12), against the link measured above:\n");
  goal("first load in a process >= 0.9 of the link", link_gbps > 0 ? first.gbps / link_gbps : 0, 0.9);
  goal("a later load (pool kept) >= 0.95 of the link", link_gbps > 0 ? kept.gbps / link_gbps : 0, 0.95);
  goal("a reload of a registration kept >= 0.97 of the link", link_gbps > 0 ? reload.gbps / link_gbps : 0, 0.97);
  if (gpu && fc.last_landed_s > 0)
    std::printf("  goal %-58s %s (%.1f of %.1f ms, output %s)\n", "compute on the first tensor done before the last lands",
                fc.correct && fc.kernel_done_s < fc.last_landed_s / 2 ? "met   " : "MISSED", fc.kernel_done_s * 1e3,
                fc.last_landed_s * 1e3, fc.correct ? "right" : "wrong");
  goal("first load >= 9x the pageable loader", pageable_row.gbps > 0 ? first.gbps / pageable_row.gbps : 0, 9.0);
  // host memory: the resident set may grow by the staging budget (RIG_LOAD_DEFAULT_STAGING_BYTES unless given) plus 5%
  if (first.gbps > 0)
    std::printf("  goal %-58s %s (%lld MiB, want <= %.0f MiB)\n", "first load's resident-set growth <= staging + 5%",
                double(first_rss) <= 1.05 * double(staging) ? "met   " : "MISSED",
                first_rss / (long long)MiB, 1.05 * double(staging / MiB));

  if (cold) {
    std::printf("\n== one device, cold (evicted with posix_fadvise DONTNEED before each row)\n");
    double io_gbps = 0;
    auto cold_row = [&](const std::string &name, double bound, const std::function<double(std::string *)> &f,
                        uint64_t bytes) {
      double resident = evict(file);
      std::string note;
      double s = f(&note);
      char res[64];
      std::snprintf(res, sizeof res, " [%.0f%% resident before]", resident * 100);
      Row r{name, s > 0 ? double(bytes) / s / 1e9 : 0, s, bound, note + res};
      if (resident > 0.1) r.note += " NOT COLD";
      print_row(r);
      return r;
    };
    Row io = cold_row("O_DIRECT read, 4 threads x 16 MiB", 0, [&](std::string *) { return odirect_read(file, size); }, size);
    io.note += " (the bound for the rows below)";
    io_gbps = io.gbps;
    cold_row("pageable: pread 64 MiB + copy", io_gbps, [&](std::string *) { return pageable(up1, file, size, 0); }, size);
    Row ca = cold_row("rig auto", io_gbps,
                      [&](std::string *n) { return rig_row(file, one, RIG_LOAD_RULE_EACH, automatic, n); }, tensor_bytes);
    auto staged_direct = options(RIG_LOAD_PATH_STAGED, RIG_LOAD_IO_DIRECT, threads, chunk);
    cold_row("rig staged, O_DIRECT reads", io_gbps,
             [&](std::string *n) { return rig_row(file, one, RIG_LOAD_RULE_EACH, staged_direct, n); }, tensor_bytes);
    std::printf("  goals (issue 12), against the O_DIRECT read rate measured above:\n");
    goal("cold auto load >= 0.9 of the file system's read rate", io_gbps > 0 ? ca.gbps / io_gbps : 0, 0.9);
    // the warm rows after this one would pay the disk: bring the file back
    pageable(up1, file, size, 0);
  }

  if (devs.size() >= 2) {
    std::printf("\n== %zu devices, warm (%s)\n", devs.size(), device_list.c_str());
    Link link;
    double agg = 0;
    if (link.make(devs, fd, tensor_bytes / devs.size())) {
      Row r = best_of("link: pinned copies to each at once", repeat, tensor_bytes, 0,
                      [&](std::string *) { return link.run(tensor_bytes / devs.size(), devs.size()); });
      r.note = "each device gets 1/" + std::to_string(devs.size()) + " of the bytes";
      print_row(r);
      agg = r.gbps;
    } else {
      print_row(Row{"link: pinned copies to each at once", 0, 0, 0, link.why});
    }
    std::vector<std::unique_ptr<Uploader>> ups;
    bool ok = true;
    for (rig_device d : devs) {
      ups.push_back(std::make_unique<Uploader>());
      ok = ok && ups.back()->start(d, 64 * MiB);
    }
    if (ok)
      print_row(best_of("pageable: each its part, pread + copy", repeat, size, agg,
                        [&](std::string *) { return pageable(ups, file, size, 0); }));
    Row pair = best_of("rig auto, by layer", repeat, tensor_bytes, agg,
                       [&](std::string *n) { return rig_row(file, devs, RIG_LOAD_RULE_BY_LAYER, automatic, n); });
    print_row(pair);
    print_row(best_of("rig staged, by layer", repeat, tensor_bytes, agg,
                      [&](std::string *n) { return rig_row(file, devs, RIG_LOAD_RULE_BY_LAYER, staged, n); }));
    uint64_t copied = 0;
    Row each = best_of("rig auto, every tensor on each (peer copies)", repeat, tensor_bytes, 0,
                       [&](std::string *n) { return rig_row(file, devs, RIG_LOAD_RULE_EACH, automatic, n, &copied); });
    if (each.gbps > 0 && copied) {
      each.gbps = double(copied) / each.seconds / 1e9;
      each.note = "GB/s of bytes delivered (" + std::to_string(copied / MiB) + " MiB); " + each.note;
    }
    print_row(each);
    std::printf("  goals (issue 12):\n");
    goal("pair aggregate (auto, by layer) >= 1.8x one device (auto)", autorow.gbps > 0 ? pair.gbps / autorow.gbps : 0, 1.8);
  }
  close(fd);
  for (rig_device d : devs) rig_device_release(d);
  if (make) unlink(file);  // a file this run made is this run's to remove (--make-only keeps it)
  return 0;
}
