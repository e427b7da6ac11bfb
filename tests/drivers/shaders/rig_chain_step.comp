#version 450
// kernels.ptx's rig_chain_step for Vulkan: out[i] = in[i] * 31 + k + i for i < n (slots: in, out; scalars:
// n, k), order-dependent. In and out may be one buffer: each invocation reads its element before writing it.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer In { uint x[]; };
layout(set = 0, binding = 1) buffer Out { uint o[]; };
layout(push_constant) uniform Scalars { uint n; uint k; } s;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < s.n) o[i] = x[i] * 31u + s.k + i;
}
