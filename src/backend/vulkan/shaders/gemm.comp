// gfxep Vulkan backend — MatMul and Gemm as one batched, strided matrix product:
//   y[b][i][j] = alpha * sum_q A[a_off(b) + i*a_row + q*a_col] * B[b_off(b) + q*b_row + j*b_col]
//                + beta * C[i*c_row + j*c_col]                       (Gemm's C, when present)
// Transposes are strides; MatMul's broadcast batch dims are a table of (a, b) matrix offsets per
// output matrix, made once per shape signature. 16x16 tiles through shared memory, float32
// accumulation; -DT_F16 loads and stores float16, -DT_BF16 bfloat16. A portable path: cooperative-matrix kernels are
// the fast path's job.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
#if defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#define ELEM_ALIGN 2
#elif defined(T_BF16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define ELEM uint16_t
#define ELEM_ALIGN 2
#else
#define ELEM float
#define ELEM_ALIGN 4
#endif
#include "elem_convert.glsl"

#define TILE 16
layout(local_size_x = TILE, local_size_y = TILE) in;

layout(push_constant) uniform Push {
  uvec2 a_addr, b_addr, c_addr, y_addr, geom_addr;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t m, n, k;
  int64_t a_row, a_col, b_row, b_col, c_row, c_col;
  float alpha, beta;
  int has_c, pad0;
  int64_t offsets[]; // per output matrix: a's element offset, b's element offset
};
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };

shared float tile_a[TILE][TILE];
shared float tile_b[TILE][TILE];

void main() {
  Geom g = Geom(pc.geom_addr);
  In a = In(pc.a_addr);
  In b = In(pc.b_addr);
  const int64_t m = g.m, n = g.n, k = g.k;
  const int64_t batch = int64_t(gl_WorkGroupID.z);
  const int64_t a0 = g.offsets[uint(2 * batch)], b0 = g.offsets[uint(2 * batch + 1)];
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const int64_t row = int64_t(gl_WorkGroupID.y) * TILE + ty;
  const int64_t col = int64_t(gl_WorkGroupID.x) * TILE + tx;
  float acc = 0.0;
  for (int64_t q0 = 0; q0 < k; q0 += TILE) {
    const int64_t qa = q0 + tx, qb = q0 + ty;
    tile_a[ty][tx] = row < m && qa < k ? elem_to_f(a.v[uint(a0 + row * g.a_row + qa * g.a_col)]) : 0.0;
    tile_b[ty][tx] = qb < k && col < n ? elem_to_f(b.v[uint(b0 + qb * g.b_row + col * g.b_col)]) : 0.0;
    barrier();
    for (int q = 0; q < TILE; q++) acc += tile_a[ty][q] * tile_b[q][tx];
    barrier();
  }
  if (row >= m || col >= n) return;
  float v = g.alpha * acc;
  // beta = 0 ignores C entirely, as ONNX Runtime does (0 * inf would be NaN)
  if (g.has_c != 0 && g.beta != 0.0) v += g.beta * elem_to_f(In(pc.c_addr).v[uint(row * g.c_row + col * g.c_col)]);
  Out(pc.y_addr).v[uint(batch * m * n + row * n + col)] = f_to_elem(v);
}
