// gfxep Vulkan backend — float16 matrix products on cooperative matrices (VK_NV_cooperative_matrix,
// 16x16x16 tiles, float32 accumulation), for MatMul/Gemm (-DGEMM) and Conv as an implicit GEMM
// (-DCONV):
//   GEMM: y[b][i][j] = alpha * sum_q A[a_off(b) + i*a_row + q*a_col] * B[b_off(b) + q*b_row + j*b_col]
//                      + beta * C[i*c_row + j*c_col]
//   CONV: per group, A = the weights (c_out_g x c_in_g*k_h*k_w, row-major), B = the input gathered as
//         columns (im2col, never stored: q = (ci, ky, kx), j = (n, oy, ox)), then Conv's epilogue
//         y = act(acc + bias [+ r]) [+ r]. Row q of B comes from a table made once per shape (vk_nn.c):
//         its input offset and its (ky*dil_h, kx*dil_w), so the gather divides nothing.
// A workgroup of subgroups of 32 computes a BM x BN block of y, each subgroup a WM x WN part of it in
// 16x16 tiles: 64x64 blocks of 4 subgroups of 32x32 (the default); -DNARROW 32x128 (4 of 32x32), for
// products of few rows such as convolutions with few output channels; -DWIDE 64x128 (8 of 32x32) and
// -DBIG 128x128 (8 of 64x32), which load fewer operands per output, for products large enough to
// fill the GPU with them.
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
#define WARPS_M 1
#define WARPS_N 4
#elif defined(WIDE)
#define BM 64
#define BN 128
#define WARPS_M 2
#define WARPS_N 4
#elif defined(BIG)
#define BM 128
#define BN 128
#define WARPS_M 2
#define WARPS_N 4
#else
#define BM 64
#define BN 64
#define WARPS_M 2
#define WARPS_N 2
#endif
#define THREADS (32 * WARPS_M * WARPS_N)
#define TM (BM / WARPS_M / 16) // 16x16 tiles per subgroup, down and across
#define TN (BN / WARPS_N / 16)
#define BK 32
#define A_STRIDE (BK + 8) // float16 elements per row of tile_a (80 bytes)
#define B_STRIDE (BN + 8) // float16 elements per row of tile_b
#define C_STRIDE (BN + 4) // float32 elements per row of tile_c
// the accumulators leave through tile_c C_ROWS rows at a time (the larger blocks' whole block would
// not fit in shared memory beside the operands; 128x128 blocks take 27 KiB in all, within the 32 KiB
// that some devices offer)
#if BM > 64
#define C_ROWS 16
#elif BN > 64
#define C_ROWS 32
#else
#define C_ROWS BM
#endif
#define A_LOADS (BM * BK / THREADS) // A elements each invocation loads per step
#define B_LOADS (BK * BN / THREADS) // B elements

layout(local_size_x = THREADS) in;

#include "mm_common.glsl"

shared float16_t tile_a[BM * A_STRIDE];
shared float16_t tile_b[BK * B_STRIDE];
shared float tile_c[C_ROWS * C_STRIDE];

#include "coop_ops.glsl"

#include "mm_load.glsl"

void main() {
  Geom g = Geom(pc.geom_addr);
  setup(g);
  FRAG_ACC acc[TM][TN];
  TILE_LOOP for (int i = 0; i < TM; i++)
    TILE_LOOP for (int j = 0; j < TN; j++) acc[i][j] = ACC_ZERO;
  const uint warp = WARP_ID;
  const uint wm = (warp / WARPS_N) * (16 * TM), wn = (warp % WARPS_N) * (16 * TN);

  const uint slice = gl_WorkGroupID.z % pc.splits, q_begin = slice * pc.k_chunk;
  q_end = min(k, q_begin + pc.k_chunk);
  load_step(q_begin);
  for (uint q0 = q_begin; q0 < q_end; q0 += BK) {
    [[unroll]] for (uint r = 0; r < A_LOADS; r++) tile_a[(ai0 + r * (THREADS / BK)) * A_STRIDE + aq] = ra[r];
    [[unroll]] for (uint r = 0; r < B_LOADS; r++) tile_b[(bq0 + r * (THREADS / BN)) * B_STRIDE + bj] = rb[r];
    barrier();
    if (q0 + BK < q_end) load_step(q0 + BK);
    TILE_LOOP for (uint kk = 0; kk < BK; kk += 16) {
      FRAG_A fa[TM];
      FRAG_B fb[TN];
      TILE_LOOP for (int i = 0; i < TM; i++) LOAD_A(fa[i], (wm + 16 * i) * A_STRIDE + kk);
      TILE_LOOP for (int j = 0; j < TN; j++) LOAD_B(fb[j], kk * B_STRIDE + wn + 16 * j);
      TILE_LOOP for (int i = 0; i < TM; i++)
        TILE_LOOP for (int j = 0; j < TN; j++) MUL_ADD(fa[i], fb[j], acc[i][j]);
    }
    barrier();
  }

  // ---- the epilogue, C_ROWS rows of the block at a time: the subgroups holding them store their
  // tiles to tile_c, then thread t writes column bj of rows bq0 + (THREADS / BN) r (consecutive threads,
  // consecutive columns: coalesced stores along y's rows); a slice of a split K stores its float32 sums
  // for mm_reduce.comp instead. Every invocation runs the loop: it holds barriers.
  const uint z = gl_WorkGroupID.z / pc.splits;
#if defined(CONV)
  const uint out_plane = conv_out_plane(g);
  const uint y_col = (col / out_plane) * uint(g.c_out) * out_plane + col % out_plane;
#endif
  [[unroll]] for (uint c0 = 0; c0 < BM; c0 += C_ROWS) {
    TILE_LOOP for (int i = 0; i < TM; i++) {
      const uint tile_row = wm + 16 * i; // the same for the whole subgroup
      if (tile_row < c0 || tile_row >= c0 + C_ROWS) continue;
      TILE_LOOP for (int j = 0; j < TN; j++) STORE_C(acc[i][j], (tile_row - c0) * C_STRIDE + wn + 16 * j);
    }
    barrier();
    if (col_ok) {
      [[unroll]] for (uint r = 0; r < C_ROWS / (THREADS / BN); r++) {
        const uint i = bq0 + r * (THREADS / BN), row = m0 + c0 + i;
        if (row >= m) break;
        const float v = tile_c[i * C_STRIDE + bj];
        if (pc.splits > 1) {
          Partial(pc.scratch_addr).v[((slice * pc.n_z + z) * m + row) * n + col] = v;
          continue;
        }
#if defined(CONV)
        const uint co = z * m + row, e = y_col + co * out_plane;
        Out(pc.y_addr).v[e] = conv_finish(g, co, e, v);
#else
        Out(pc.y_addr).v[z * m * n + row * n + col] = gemm_finish(g, row, col, v);
#endif
      }
    }
    barrier();
  }
}
