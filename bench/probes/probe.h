// What the CUDA probes under bench/probes/ share (measurements built with nvcc on the GPU machine, not part
// of rig): a runtime (CK) or driver (CU) call that fails ends the probe with its place and CUDA's words, and
// a clock.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

#define CU(x)                                                                 \
  do {                                                                        \
    CUresult r_ = (x);                                                        \
    if (r_ != CUDA_SUCCESS) {                                                 \
      const char *n_ = "?";                                                   \
      cuGetErrorName(r_, &n_);                                                \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, n_); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

using clk = std::chrono::steady_clock;

// Seconds since t.
inline double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

// Calls one(i) once for every i < n in each of `rounds` rounds, in an order shuffled afresh each round
// (a fixed seed), so that no way measured always follows the same other one.
template <class F>
void shuffled_rounds(size_t n, int rounds, F one) {
  std::mt19937 rng(7);
  std::vector<size_t> order(n);
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) one(i);
  }
}
