#version 450
// y[i] = (y[i] ^ x[i]) + i * k for i < n: reads binding 0, reads and writes binding 1. The result depends on
// which writes to x and y it sees, so a missing order shows up element by element.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) buffer Y { uint y[]; };
layout(push_constant) uniform Scalars { uint k; uint n; } s;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < s.n) y[i] = (y[i] ^ x[i]) + i * s.k;
}
