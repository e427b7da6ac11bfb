// Row (br) of the chain benchmark: (b) written against the CUDA runtime (libcudart: cudaStreamWaitEvent,
// cudaEventRecord, cudaMemcpyAsync, cudaLaunchKernel), the program issue 4 names as the peer. The runtime is
// loaded at run time where the machine has it (RIG_BENCH_CUDART names the file, else the usual sonames and
// /usr/local/cuda); without it the row is left out and the bench says why. Row (b) makes the driver's calls
// directly, one layer less, and stays the stricter peer.
#pragma once

#include <string>

namespace bench {

class RuntimeChain {
 public:
  // Two streams, one on each of GPUs g0 and g1 (the same GPU twice for one), 4 KiB buffers x and y on g0, and
  // the kernel `function` of `ptx` where the runtime can load PTX (cudaLibraryLoadData, CUDA 12 on).
  RuntimeChain(unsigned g0, unsigned g1, const char *ptx, const char *function);
  ~RuntimeChain();
  RuntimeChain(const RuntimeChain &) = delete;
  RuntimeChain &operator=(const RuntimeChain &) = delete;

  bool ready() const { return why_.empty(); }
  bool has_kernels() const { return kernel_ != nullptr; }
  const std::string &why() const { return why_; }

  // Operation i, on stream i % 2: wait for the other stream's event, a copy (x to y, then back) or the
  // kernel in place, record this stream's event. Across two GPUs cudaSetDevice first, as a program does.
  void op(bool kernels, int i);
  void finish();

 private:
  struct Api;
  bool load(const char *ptx, const char *function);
  void check(int error, const char *what) const;

  Api *api_ = nullptr;
  int gpu_[2] = {0, 0};
  void *stream_[2] = {}, *event_[2] = {};
  void *x_ = nullptr, *y_ = nullptr;
  void *library_ = nullptr, *kernel_ = nullptr;
  std::string why_;
};

}  // namespace bench
