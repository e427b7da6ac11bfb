// Why a process's first staged load is slower than its later ones (issue 12: `rig load --repeat 3` gave
// 33.6, then 47.2 and 46.4 GB/s, its readers' pread 2.46 s summed against 1.5 s, in some machine calls
// only). A measurement, not part of rig: on the GPU machine,
//   nvcc -O2 -o /tmp/flp scripts/gpu/first_load_probe.cu && /tmp/flp FILE [readers] [chunk_mib] [slots]
// FILE should be warm. It replays the staged path's shape without rig: `readers` threads pread the file a
// chunk at a time into a ring of `slots` chunks of ordinary memory (huge pages asked, touched first, as
// rig's pool), and one copier thread sends each filled chunk to one device buffer in file order, a
// chunk's slot coming back once its copy's event is reached. Each pass prints its GB/s and the readers'
// pread seconds summed, so a slow first pass can be pinned on what is new in it:
//   reads only, a fresh unregistered ring      (is a process's first pread pass slow by itself?)
//   reads only, the same ring once registered  (does registration slow the CPU's writes?)
//   pipeline, a fresh registered ring, fresh device buffer, then the same ring and buffer again
//   pipeline, another fresh ring (the buffer kept), then a fresh buffer (the ring kept)
#include "probe.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

constexpr size_t MiB = size_t(1) << 20;

static size_t file_size, chunk, slots;
static int fd;
static unsigned readers;

static char *fresh_ring() {
  size_t len = chunk * slots;
  void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::exit(1);
  madvise(p, len, MADV_HUGEPAGE);
  std::memset(p, 0, len);
  return static_cast<char *>(p);
}

static void pread_all(char *dst, size_t len, size_t at) {
  while (len) {
    ssize_t n = pread(fd, dst, len, off_t(at));
    if (n <= 0) {
      std::perror("pread");
      std::exit(1);
    }
    dst += n, len -= size_t(n), at += size_t(n);
  }
}

struct Pass {
  double seconds, read_s, wait_s;
};

// One pass over the file. dst null: reads only (chunk i into slot i % slots, no waiting).
static Pass pass(char *ring, char *dst, cudaStream_t stream, std::vector<cudaEvent_t> &ev) {
  size_t n = (file_size + chunk - 1) / chunk;
  std::atomic<size_t> next{0};
  std::vector<std::atomic<int>> filled(n);
  std::vector<std::atomic<long>> recorded(slots);  // the chunk whose copy the slot's event follows, or -1
  for (auto &r : recorded) r.store(-1);
  std::atomic<long long> read_ns{0}, wait_ns{0};
  auto t0 = clk::now();
  auto reader = [&] {
    if (dst) CK(cudaSetDevice(0));
    long long rn = 0, wn = 0;
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      size_t s = i % slots, len = std::min(chunk, file_size - i * chunk);
      auto w = clk::now();
      if (dst && i >= slots) {  // the slot's previous chunk copied: recorded, then its event reached
        while (recorded[s].load(std::memory_order_acquire) != long(i - slots)) __builtin_ia32_pause();
        while (cudaEventQuery(ev[s]) == cudaErrorNotReady) __builtin_ia32_pause();
      }
      auto r = clk::now();
      pread_all(ring + s * chunk, len, i * chunk);
      auto e = clk::now();
      wn += std::chrono::duration_cast<std::chrono::nanoseconds>(r - w).count();
      rn += std::chrono::duration_cast<std::chrono::nanoseconds>(e - r).count();
      filled[i].store(1, std::memory_order_release);
    }
    read_ns += rn, wait_ns += wn;
  };
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < readers; ++t) ts.emplace_back(reader);
  if (dst) {
    for (size_t i = 0; i < n; ++i) {
      while (!filled[i].load(std::memory_order_acquire)) __builtin_ia32_pause();
      size_t s = i % slots, len = std::min(chunk, file_size - i * chunk);
      CK(cudaMemcpyAsync(dst + i * chunk, ring + s * chunk, len, cudaMemcpyHostToDevice, stream));
      CK(cudaEventRecord(ev[s], stream));
      recorded[s].store(long(i), std::memory_order_release);
    }
    CK(cudaStreamSynchronize(stream));
  }
  for (auto &t : ts) t.join();
  return {since(t0), read_ns * 1e-9, wait_ns * 1e-9};
}

static void show(const char *what, const Pass &p) {
  std::printf("%-58s %7.2f GB/s %7.3f s  pread %6.3f s  slot wait %6.3f s\n", what, file_size / p.seconds / 1e9,
              p.seconds, p.read_s, p.wait_s);
  std::fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [readers] [chunk_mib] [slots]\n", argv[0]);
    return 2;
  }
  fd = open(argv[1], O_RDONLY);
  if (fd < 0) return std::perror(argv[1]), 1;
  file_size = size_t(lseek(fd, 0, SEEK_END));
  readers = argc > 2 ? unsigned(std::atoi(argv[2])) : 12;
  chunk = (argc > 3 ? size_t(std::atoi(argv[3])) : 4) * MiB;
  slots = argc > 4 ? size_t(std::atoi(argv[4])) : 16;
  std::printf("file %.2f GiB, %u readers, %zu MiB chunks, %zu slots (%zu MiB ring)\n", file_size / double(1 << 30),
              readers, chunk / MiB, slots, chunk * slots / MiB);
  auto t = clk::now();
  CK(cudaFree(nullptr));
  std::printf("CUDA started in %.1f ms\n", since(t) * 1e3);
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> ev(slots);
  for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  size_t ring_len = chunk * slots;

  char *u = fresh_ring();
  show("reads only, fresh unregistered ring, pass 1", pass(u, nullptr, stream, ev));
  show("reads only, same ring, pass 2", pass(u, nullptr, stream, ev));
  t = clk::now();
  CK(cudaHostRegister(u, ring_len, cudaHostRegisterDefault));
  std::printf("registered the ring in %.1f ms\n", since(t) * 1e3);
  show("reads only, the ring registered, pass 1", pass(u, nullptr, stream, ev));
  show("reads only, the ring registered, pass 2", pass(u, nullptr, stream, ev));

  char *dst = nullptr;
  t = clk::now();
  CK(cudaMalloc(&dst, file_size));
  std::printf("device buffer of %zu MiB in %.1f ms\n", file_size / MiB, since(t) * 1e3);
  char *g = fresh_ring();
  CK(cudaHostRegister(g, ring_len, cudaHostRegisterDefault));
  show("pipeline, fresh registered ring, fresh device buffer", pass(g, dst, stream, ev));
  show("pipeline, same ring, same buffer, pass 2", pass(g, dst, stream, ev));
  show("pipeline, same ring, same buffer, pass 3", pass(g, dst, stream, ev));
  show("pipeline, the first ring (registered, reads only so far)", pass(u, dst, stream, ev));
  show("pipeline, the first ring, pass 2", pass(u, dst, stream, ev));
  char *g2 = fresh_ring();
  CK(cudaHostRegister(g2, ring_len, cudaHostRegisterDefault));
  show("pipeline, another fresh registered ring, same buffer", pass(g2, dst, stream, ev));
  show("pipeline, that ring, pass 2", pass(g2, dst, stream, ev));
  CK(cudaFree(dst));
  CK(cudaMalloc(&dst, file_size));
  show("pipeline, that ring, a fresh device buffer", pass(g2, dst, stream, ev));
  show("pipeline, that ring, that buffer, pass 2", pass(g2, dst, stream, ev));
  return 0;
}
