#include "runtime_chain.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bench {
namespace {

struct Dim3 {  // the runtime's dim3, passed by value
  unsigned x, y, z;
};
constexpr int kSuccess = 0;
constexpr int kPeerAccessAlreadyEnabled = 704;
constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDisableTiming = 2;
constexpr int kMemcpyDeviceToDevice = 3;

}  // namespace

// The runtime's entry points this row calls (its C ABI; no SDK header needed).
struct RuntimeChain::Api {
  void *library = nullptr;
  int (*cudaSetDevice)(int);
  int (*cudaStreamCreateWithFlags)(void **, unsigned);
  int (*cudaEventCreateWithFlags)(void **, unsigned);
  int (*cudaMalloc)(void **, size_t);
  int (*cudaFree)(void *);
  int (*cudaMemcpyAsync)(void *, const void *, size_t, int, void *);
  int (*cudaStreamWaitEvent)(void *, void *, unsigned);
  int (*cudaEventRecord)(void *, void *);
  int (*cudaStreamSynchronize)(void *);
  int (*cudaStreamDestroy)(void *);
  int (*cudaEventDestroy)(void *);
  int (*cudaDeviceEnablePeerAccess)(int, unsigned);
  const char *(*cudaGetErrorString)(int);
  int (*cudaLaunchKernel)(const void *, Dim3, Dim3, void **, size_t, void *);
  // CUDA 12 on: PTX loaded by the runtime itself (null where older).
  int (*cudaLibraryLoadData)(void **, const void *, void *, void *, unsigned, void *, void *, unsigned);
  int (*cudaLibraryGetKernel)(void **, void *, const char *);
  int (*cudaLibraryUnload)(void *);
};

namespace {

void *open_runtime(std::string *tried) {
  const char *chosen = std::getenv("RIG_BENCH_CUDART");
  const char *names[] = {chosen,
                         "libcudart.so.13",
                         "libcudart.so.12",
                         "libcudart.so",
                         "/usr/local/cuda/lib64/libcudart.so.13",
                         "/usr/local/cuda/lib64/libcudart.so.12",
                         "/usr/local/cuda/lib64/libcudart.so"};
  for (const char *name : names) {
    if (!name || !*name) continue;
    if (void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
    *tried += tried->empty() ? "" : ", ";
    *tried += name;
    if (name == chosen) return nullptr;  // what the environment names, or nothing
  }
  return nullptr;
}

template <class F>
bool resolve(void *library, const char *name, F *&field) {
  field = reinterpret_cast<F *>(dlsym(library, name));
  return field != nullptr;
}

}  // namespace

bool RuntimeChain::load(const char *ptx, const char *function) {
  std::string tried;
  void *h = open_runtime(&tried);
  if (!h) {
    why_ = "no CUDA runtime (tried " + tried + ")";
    return false;
  }
  api_ = new Api;
  Api &a = *api_;
  a.library = h;
  bool ok = resolve(h, "cudaSetDevice", a.cudaSetDevice) &&
            resolve(h, "cudaStreamCreateWithFlags", a.cudaStreamCreateWithFlags) &&
            resolve(h, "cudaEventCreateWithFlags", a.cudaEventCreateWithFlags) && resolve(h, "cudaMalloc", a.cudaMalloc) &&
            resolve(h, "cudaFree", a.cudaFree) && resolve(h, "cudaMemcpyAsync", a.cudaMemcpyAsync) &&
            resolve(h, "cudaStreamWaitEvent", a.cudaStreamWaitEvent) && resolve(h, "cudaEventRecord", a.cudaEventRecord) &&
            resolve(h, "cudaStreamSynchronize", a.cudaStreamSynchronize) &&
            resolve(h, "cudaStreamDestroy", a.cudaStreamDestroy) && resolve(h, "cudaEventDestroy", a.cudaEventDestroy) &&
            resolve(h, "cudaDeviceEnablePeerAccess", a.cudaDeviceEnablePeerAccess) &&
            resolve(h, "cudaGetErrorString", a.cudaGetErrorString) && resolve(h, "cudaLaunchKernel", a.cudaLaunchKernel);
  if (!ok) {
    why_ = "the CUDA runtime lacks an entry point this row calls";
    return false;
  }
  if (resolve(h, "cudaLibraryLoadData", a.cudaLibraryLoadData) &&
      resolve(h, "cudaLibraryGetKernel", a.cudaLibraryGetKernel) && resolve(h, "cudaLibraryUnload", a.cudaLibraryUnload) &&
      a.cudaLibraryLoadData(&library_, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0) == kSuccess &&
      a.cudaLibraryGetKernel(&kernel_, library_, function) != kSuccess)
    kernel_ = nullptr;
  return true;
}

RuntimeChain::RuntimeChain(unsigned g0, unsigned g1, const char *ptx, const char *function) {
  gpu_[0] = static_cast<int>(g0);
  gpu_[1] = static_cast<int>(g1);
  if (!load(ptx, function)) return;
  Api &a = *api_;
  for (int d = 0; d < 2; ++d) {
    int r = a.cudaSetDevice(gpu_[d]);
    if (r == kSuccess) r = a.cudaStreamCreateWithFlags(&stream_[d], kStreamNonBlocking);
    if (r == kSuccess) r = a.cudaEventCreateWithFlags(&event_[d], kEventDisableTiming);
    if (r != kSuccess) {
      why_ = std::string("the CUDA runtime could not make a stream and an event: ") + a.cudaGetErrorString(r);
      return;
    }
    if (d == 1 && g1 != g0) {
      r = a.cudaDeviceEnablePeerAccess(gpu_[0], 0);
      if (r != kSuccess && r != kPeerAccessAlreadyEnabled) {
        why_ = std::string("cudaDeviceEnablePeerAccess: ") + a.cudaGetErrorString(r);
        return;
      }
    }
  }
  if (a.cudaSetDevice(gpu_[0]) != kSuccess || a.cudaMalloc(&x_, 4096) != kSuccess || a.cudaMalloc(&y_, 4096) != kSuccess) {
    why_ = "cudaMalloc failed";
    return;
  }
  // One trial launch of the library's kernel handle: where this runtime cannot launch it, the kernel chain
  // goes without this row rather than the bench stopping.
  if (kernel_) {
    void *addr[2] = {x_, x_};
    unsigned scalars[2] = {1024, 1};
    void *params[3] = {&addr[0], &addr[1], scalars};
    if (a.cudaLaunchKernel(kernel_, Dim3{4, 1, 1}, Dim3{256, 1, 1}, params, 0, stream_[0]) != kSuccess ||
        a.cudaStreamSynchronize(stream_[0]) != kSuccess)
      kernel_ = nullptr;
  }
}

RuntimeChain::~RuntimeChain() {
  if (!api_) return;
  Api &a = *api_;
  for (int d = 0; d < 2; ++d) {
    a.cudaSetDevice(gpu_[d]);
    if (stream_[d]) {
      a.cudaStreamSynchronize(stream_[d]);
      a.cudaStreamDestroy(stream_[d]);
    }
    if (event_[d]) a.cudaEventDestroy(event_[d]);
  }
  a.cudaSetDevice(gpu_[0]);
  if (x_) a.cudaFree(x_);
  if (y_) a.cudaFree(y_);
  if (library_) a.cudaLibraryUnload(library_);
  delete api_;  // the runtime library stays loaded: the driver's threads outlive this row
}

void RuntimeChain::check(int error, const char *what) const {
  if (error == kSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, api_->cudaGetErrorString(error));
  std::exit(1);
}

void RuntimeChain::op(bool kernels, int i) {
  const Api &a = *api_;
  int d = i % 2;
  if (gpu_[0] != gpu_[1]) check(a.cudaSetDevice(gpu_[d]), "cudaSetDevice");
  if (i) check(a.cudaStreamWaitEvent(stream_[d], event_[1 - d], 0), "cudaStreamWaitEvent");
  if (kernels) {
    void *addr[2] = {x_, x_};
    unsigned scalars[2] = {1024, 1};
    void *params[3] = {&addr[0], &addr[1], scalars};
    check(a.cudaLaunchKernel(kernel_, Dim3{4, 1, 1}, Dim3{256, 1, 1}, params, 0, stream_[d]), "cudaLaunchKernel");
  } else {
    check(i % 2 ? a.cudaMemcpyAsync(x_, y_, 4096, kMemcpyDeviceToDevice, stream_[d])
                : a.cudaMemcpyAsync(y_, x_, 4096, kMemcpyDeviceToDevice, stream_[d]),
          "cudaMemcpyAsync");
  }
  check(a.cudaEventRecord(event_[d], stream_[d]), "cudaEventRecord");
}

void RuntimeChain::finish() {
  for (int d = 0; d < 2; ++d) check(api_->cudaStreamSynchronize(stream_[d]), "cudaStreamSynchronize");
}

}  // namespace bench
