#version 450
// x[i] = x[i] * a + b for i < n (uint arithmetic, wrapping). Workgroup size from rig's block
// (specialization constant 0), so a launch's grid is ceil(n / block.x).
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform Scalars { uint a; uint b; uint n; } s;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < s.n) x[i] = x[i] * s.a + s.b;
}
