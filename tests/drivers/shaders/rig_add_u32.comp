#version 450
// kernels.ptx's rig_add_u32 for Vulkan: out[i] = in[i] + k for i < n (slots: in, out; scalars: n, k). In and
// out may be one buffer: each invocation reads its element before writing it.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer In { uint x[]; };
layout(set = 0, binding = 1) buffer Out { uint o[]; };
layout(push_constant) uniform Scalars { uint n; uint k; } s;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < s.n) o[i] = x[i] + s.k;
}
