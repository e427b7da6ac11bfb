#version 450
// kernels.ptx's rig_fill_u32 for Vulkan: out[i] = k for i < n (slots: out; scalars: n, k).
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer Out { uint o[]; };
layout(push_constant) uniform Scalars { uint n; uint k; } s;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < s.n) o[i] = s.k;
}
