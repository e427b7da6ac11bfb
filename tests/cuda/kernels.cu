// The tests' and benchmarks' kernels. kernels.ptx is this file compiled by
//   nvcc -ptx -arch=compute_80 -o kernels.ptx kernels.cu
// and shipped as text, so the tests need no nvcc. The fake libcuda runs host functions of the same names
// and meaning (tests/doubles/fake_cuda). Parameters follow rig_part's launch convention: each slot's
// device address, then the run's scalars as one struct.
struct Scalars32 {
  unsigned n;  // elements
  unsigned k;  // the step's constant
};

// out[i] = in[i] + k
extern "C" __global__ void rig_add_u32(const unsigned *in, unsigned *out, Scalars32 s) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) out[i] = in[i] + s.k;
}

// out[i] = in[i] * 31 + k + i: steps applied out of order give other numbers, so a chain of these checks
// the order of the whole chain on every element.
extern "C" __global__ void rig_chain_step(const unsigned *in, unsigned *out, Scalars32 s) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) out[i] = in[i] * 31u + s.k + i;
}

// out[i] = k
extern "C" __global__ void rig_fill_u32(unsigned *out, Scalars32 s) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) out[i] = s.k;
}

// Busy for `ns` nanoseconds of the GPU's global timer: slow work that a missing wait would overtake.
extern "C" __global__ void rig_delay(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// Stores to `where` (the tests pass an address no allocation holds): an illegal-address fault, which
// makes the context's error sticky, as a real bug would.
extern "C" __global__ void rig_fault(unsigned long long where) {
  *reinterpret_cast<volatile unsigned *>(where) = 1u;
}
