// gfxep Vulkan backend — float16 matrix products on cooperative matrices (VK_NV_cooperative_matrix,
// 16x16x16 tiles, float32 accumulation), for MatMul/Gemm (-DGEMM) and Conv as an implicit GEMM
// (-DCONV):
//   GEMM: y[b][i][j] = alpha * sum_q A[a_off(b) + i*a_row + q*a_col] * B[b_off(b) + q*b_row + j*b_col]
//                      + beta * C[i*c_row + j*c_col]
//   CONV: per group, A = the weights (c_out_g x c_in_g*k_h*k_w, row-major), B = the input gathered as
//         columns (im2col, never stored: q = (ci, ky, kx), j = (n, oy, ox)), then Conv's epilogue
//         y = act(acc + bias [+ r]) [+ r]. Row q of B comes from a table made once per shape (vk_nn.c):
//         its input offset and its (ky*dil_h, kx*dil_w), so the gather divides nothing.
// A workgroup of four subgroups of 32 computes a BM x BN block of y (64x64, or 32x128 with -DNARROW
// for products of few rows, such as convolutions with few output channels), each subgroup 32x32
// (2x2 tiles).
// Per step of 32 along K the operands go global -> registers -> shared memory (float16, rows padded
// to keep the cooperative loads 16-byte aligned and off shared-memory bank conflicts); the next
// step's global loads are issued before this step's products, so their latency hides behind them.
// The accumulators leave through shared memory, so the epilogue and the bounds are per element.
// The matrix operations are coop_ops.glsl's (-DCOOP_EMULATE: the same kernel without tensor cores).
// Every tensor has fewer than 2^32 elements (vk_nn.c checks): 32-bit offsets.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#if !defined(COOP_EMULATE)
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

#include "float_math.glsl"

#if defined(NARROW)
#define BM 32
#define BN 128
#else
#define BM 64
#define BN 64
#endif
#define WARPS_N (BN / 32) // subgroups along a row of the block
#define BK 32
#define A_STRIDE (BK + 8) // float16 elements per row of tile_a (80 bytes)
#define B_STRIDE (BN + 8) // float16 elements per row of tile_b (144 bytes)
#define C_STRIDE (BN + 4) // float32 elements per row of tile_c (272 bytes)
#define THREADS 128
#define A_LOADS (BM * BK / THREADS) // A elements each invocation loads per step
#define B_LOADS (BK * BN / THREADS) // B elements

layout(local_size_x = THREADS) in;

#include "mm_common.glsl"

shared float16_t tile_a[BM * A_STRIDE];
shared float16_t tile_b[BK * B_STRIDE];
shared float tile_c[BM * C_STRIDE];

#include "coop_ops.glsl"

#include "mm_load.glsl"

void main() {
  Geom g = Geom(pc.geom_addr);
  setup(g);
  FRAG_ACC acc[2][2];
  [[unroll]] for (int i = 0; i < 2; i++)
    [[unroll]] for (int j = 0; j < 2; j++) acc[i][j] = ACC_ZERO;
  const uint warp = WARP_ID;
  const uint wm = (warp / WARPS_N) * 32, wn = (warp % WARPS_N) * 32;

  const uint slice = gl_WorkGroupID.z % pc.splits, q_begin = slice * pc.k_chunk;
  q_end = min(k, q_begin + pc.k_chunk);
  load_step(q_begin);
  for (uint q0 = q_begin; q0 < q_end; q0 += BK) {
    [[unroll]] for (uint r = 0; r < A_LOADS; r++) tile_a[(ai0 + r * (THREADS / BK)) * A_STRIDE + aq] = ra[r];
    [[unroll]] for (uint r = 0; r < B_LOADS; r++) tile_b[(bq0 + r * (THREADS / BN)) * B_STRIDE + bj] = rb[r];
    barrier();
    if (q0 + BK < q_end) load_step(q0 + BK);
    [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
      FRAG_A fa[2];
      FRAG_B fb[2];
      [[unroll]] for (int i = 0; i < 2; i++) LOAD_A(fa[i], (wm + 16 * i) * A_STRIDE + kk);
      [[unroll]] for (int j = 0; j < 2; j++) LOAD_B(fb[j], kk * B_STRIDE + wn + 16 * j);
      [[unroll]] for (int i = 0; i < 2; i++)
        [[unroll]] for (int j = 0; j < 2; j++) MUL_ADD(fa[i], fb[j], acc[i][j]);
    }
    barrier();
  }
  [[unroll]] for (int i = 0; i < 2; i++)
    [[unroll]] for (int j = 0; j < 2; j++)
      STORE_C(acc[i][j], (wm + 16 * i) * C_STRIDE + wn + 16 * j);
  barrier();

  // ---- the epilogue: thread t writes column bj of rows bq0 + 2r (consecutive threads, consecutive
  // columns: coalesced stores along y's rows); a slice of a split K stores its float32 sums instead
  if (!col_ok) return;
  const uint rows = BM / (THREADS / BN);
  if (pc.splits > 1) {
    const uint z = gl_WorkGroupID.z / pc.splits;
    Partial part = Partial(pc.scratch_addr);
    for (uint r = 0; r < rows; r++) {
      const uint i = bq0 + r * (THREADS / BN), row = m0 + i;
      if (row >= m) break;
      part.v[((slice * pc.n_z + z) * m + row) * n + col] = tile_c[i * C_STRIDE + bj];
    }
    return;
  }
#if defined(CONV)
  const uint out_plane = conv_out_plane(g);
  const uint y_col = (col / out_plane) * uint(g.c_out) * out_plane + col % out_plane;
  for (uint r = 0; r < rows; r++) {
    const uint i = bq0 + r * (THREADS / BN), row = m0 + i;
    if (row >= m) break;
    const uint co = grp * m + row, e = y_col + co * out_plane;
    Out(pc.y_addr).v[e] = conv_finish(g, co, e, tile_c[i * C_STRIDE + bj]);
  }
#else
  for (uint r = 0; r < rows; r++) {
    const uint i = bq0 + r * (THREADS / BN), row = m0 + i;
    if (row >= m) break;
    Out(pc.y_addr).v[batch * m * n + row * n + col] = gemm_finish(g, row, col, tile_c[i * C_STRIDE + bj]);
  }
#endif
}
