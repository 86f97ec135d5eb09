// gfxep Vulkan backend — the second half of a split-K product of mm_coop.comp: one output element per
// invocation (grid-stride), the float32 sums of its K slices added in slice order, then the product's
// epilogue (Conv: bias, residual, activation; MatMul/Gemm: alpha, beta * C) into float16.
// -DCONV or -DGEMM, as mm_coop.comp. Tensors below 2^32 elements (vk_nn.c checks).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_GOOGLE_include_directive : require

#include "float_math.glsl"
#include "mm_common.glsl"

layout(local_size_x = 256) in;

void main() {
  Geom g = Geom(pc.geom_addr);
  const uint m = uint(g.m), n = uint(g.n);
  const uint count = pc.n_z * m * n; // every element of every product (group or batch matrix)
  Partial part = Partial(pc.scratch_addr);
  for (uint e = gl_GlobalInvocationID.x; e < count; e += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    float v = 0.0;
    for (uint s = 0; s < pc.splits; s++) v += part.v[s * count + e];
    const uint z = e / (m * n), row = (e / n) % m, col = e % n;
#if defined(CONV)
    const uint out_plane = conv_out_plane(g);
    const uint co = z * m + row, y = ((col / out_plane) * uint(g.c_out) + co) * out_plane + col % out_plane;
    Out(pc.y_addr).v[y] = conv_finish(g, co, y, v);
#else
    Out(pc.y_addr).v[e] = gemm_finish(g, row, col, v); // y is [batch][m][n] like the slices
#endif
  }
}
