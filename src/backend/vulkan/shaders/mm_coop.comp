// gfxep Vulkan backend — float16 matrix products on cooperative matrices (VK_NV_cooperative_matrix,
// 16x16x16 tiles, float32 accumulation), for MatMul/Gemm (-DGEMM) and Conv as an implicit GEMM
// (-DCONV):
//   GEMM: y[b][i][j] = alpha * sum_q A[a_off(b) + i*a_row + q*a_col] * B[b_off(b) + q*b_row + j*b_col]
//                      + beta * C[i*c_row + j*c_col]
//   CONV: per group, A = the weights (c_out_g x c_in_g*k_d*k_h*k_w, row-major), B = the input gathered
//         as columns (im2col, never stored: q = (ci, kz, ky, kx), j = (n, oz, oy, ox)), then Conv's
//         epilogue y = act(acc + bias [+ r]) [+ r]. Row q of B comes from a table made once per shape
//         (vk_nn.c): its input offset and its (dz, dy, dx), so the gather divides nothing.
//
// A workgroup of eight subgroups of 32 computes a BM x 128 block of y: 128x128 (each subgroup 64x32,
// 4x2 tiles), -DSHAPE_MID 64x128 (32x32 each) or -DSHAPE_SMALL 32x128 (32x16 each) for products of few
// rows (convolutions with few output channels). Eight accumulators per subgroup against six tile
// loads per 16-deep step keep the tensor cores fed from shared memory.
//
// Per step of 32 along K the operands go global -> registers -> shared memory, in two stages: the
// next step's global loads are issued before this step's products and land in the other stage after
// them, so one barrier per step suffices and the loads' latency hides behind the products. Shared
// memory is one array of 16-byte vectors (eight float16 each) that the cooperative loads read
// directly, with offsets and strides counted in vectors: the compiler then knows every tile row is
// 16-byte aligned and can fetch each 8x8 piece with one wide shared load per lane (with 32-bit words
// as the array's element, it could only assume 4-byte alignment). Positions are still computed in
// 32-bit words (SMEM_WORD below); rows are padded by 16 bytes, which keeps them off bank conflicts.
// Operands move as 16-byte vectors where the run allows (pc.flags, set by vk_nn.c from the shapes and
// the tensors' addresses): A along K (row-major, K a multiple of 8), B along N (row-major) or along K
// (B transposed, as a Gemm's weights usually are). Otherwise each invocation fetches element pairs:
// the Conv gather, a transposed A, odd sizes.
// The accumulators leave through shared memory one 16-row strip at a time per subgroup, so the
// epilogue and the bounds are per element and the stores run along y's rows.
// The matrix operations are coop_ops.glsl's (-DCOOP_EMULATE: the same kernel without tensor cores).
// -DSHAPE_W64: the 128x128 block on four subgroups of 64x64 (sixteen accumulators each against eight
// tile loads per 16-deep step; 128 invocations, so two workgroups can share a multiprocessor).
// Timing probes, whose results are wrong (GFXEP_VULKAN_COOP_PROBE, vk_nn.c): -DPROBE_NO_GLOBAL leaves
// out the K loop's global loads (each step stores the first step's registers again), -DPROBE_NO_MMA
// its cooperative loads and products; what time remains locates a step's cost.
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

#if defined(SHAPE_SMALL)
#define WG_M 1 // subgroups along the block's rows
#define TM 2   // 16x16 tiles per subgroup along the rows
#define TN 1   // and along the columns
#elif defined(SHAPE_MID)
#define WG_M 2
#define TM 2
#define TN 2
#elif defined(SHAPE_W64)
#define SUBGROUPS 4
#define WG_M 2
#define TM 4
#define TN 4
#else
#define WG_M 2
#define TM 4
#define TN 2
#endif
#if !defined(SUBGROUPS)
#define SUBGROUPS 8
#endif
#define WG_N (SUBGROUPS / WG_M)
#define BM (16 * TM * WG_M)
#define BN (16 * TN * WG_N) // 128 for every shape
#define BK 32
#define THREADS (32 * SUBGROUPS)

// shared memory, in 32-bit words
#define K_ROW (BK / 2 + 4)        // a row of 32 float16 along K, padded: 80 bytes
#define N_ROW (BN / 2 + 4)        // a row of 128 float16 along N, padded: 272 bytes
#define A_TILE (BM * K_ROW)       // A: BM rows along K
#define B_TILE (BN * K_ROW)       // B: BK rows along N (BK * N_ROW words) or, transposed, BN rows along K
#define STAGE (A_TILE + B_TILE)
#define EPI_ROW (16 * TN + 4)     // a subgroup's 16-row strip of float32 accumulators, padded
#define EPI_WARP (16 * EPI_ROW)
#define SMEM (2 * STAGE)

// pc.flags (vk_nn.c's COOP_VEC_*)
#define VEC_A 1u   // A row-major, K a multiple of 8, 16-byte aligned: 16-byte loads along K
#define VEC_B_N 2u // B row-major, N a multiple of 8, 16-byte aligned: 16-byte loads along N
#define VEC_B_K 4u // B transposed (its columns contiguous), K a multiple of 8, aligned: loads along K
#define TAP_MASK 8u // Conv: a 2-D window of at most 32 taps, whose table's top byte is the tap's index

#define A_VLOADS ((BM * BK / 8 + THREADS - 1) / THREADS) // 16-byte loads of A per invocation and step
#define A_PAIR_ROWS (THREADS / 16)                        // rows of A one pass of element pairs covers
#define A_REGS (4 * A_VLOADS)                             // words (>= BM / A_PAIR_ROWS, the pair path's)
#define B_VLOADS (BK * BN / 8 / THREADS)                  // 16-byte loads of B per invocation and step
#define B_PAIR_ROWS (THREADS / 64)                        // K rows of B one pass of pairs covers
#define B_REGS (4 * B_VLOADS)                             // words: the vector loads, or BK / B_PAIR_ROWS pairs

layout(local_size_x = THREADS) in;

#include "mm_common.glsl"

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer InVec { uvec4 v[]; };

shared uvec4 smem[SMEM / 4];
// word w of smem (32 bits: two float16, or one float32 of the epilogue)
#define SMEM_WORD(w) smem[(w) >> 2][(w) & 3u]

#include "coop_ops.glsl"

#include "mm_coop_load.glsl"

void main() {
  Geom g = Geom(pc.geom_addr);
  setup(g);
  FRAG_ACC acc[TM][TN];
  [[unroll]] for (int i = 0; i < TM; i++)
    [[unroll]] for (int j = 0; j < TN; j++) acc[i][j] = ACC_ZERO;
  const uint warp = WARP_ID;
  const uint wm = (warp / WG_N) * (16 * TM), wn = (warp % WG_N) * (16 * TN);
#if defined(CHANNELS_LAST)
  const bool b_kmajor = true; // B's vectors run along K (mm_coop_load.glsl)
#else
  const bool b_kmajor = (pc.flags & VEC_B_K) != 0u;
#endif

  const uint slice = gl_WorkGroupID.z % pc.splits, q_begin = slice * pc.k_chunk;
  q_end = min(k, q_begin + pc.k_chunk);
  load_step(q_begin);
  store_step(0u);
  barrier();
  uint stage = 0u;
  for (uint q0 = q_begin; q0 < q_end; q0 += BK) {
    const bool more = q0 + BK < q_end;
#if !defined(PROBE_NO_GLOBAL)
    if (more) load_step(q0 + BK);
#endif
    const uint a_at = stage * STAGE, b_at = a_at + A_TILE;
#if !defined(PROBE_NO_MMA)
    [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
      FRAG_A fa[TM];
      FRAG_B fb[TN];
      [[unroll]] for (int i = 0; i < TM; i++) LOAD_A(fa[i], a_at + (wm + 16 * i) * K_ROW + kk / 2, K_ROW);
      if (b_kmajor) {
        [[unroll]] for (int j = 0; j < TN; j++) LOAD_B_T(fb[j], b_at + (wn + 16 * j) * K_ROW + kk / 2, K_ROW);
      } else {
        [[unroll]] for (int j = 0; j < TN; j++) LOAD_B(fb[j], b_at + kk * N_ROW + (wn + 16 * j) / 2, N_ROW);
      }
      [[unroll]] for (int i = 0; i < TM; i++)
        [[unroll]] for (int j = 0; j < TN; j++) MUL_ADD(fa[i], fb[j], acc[i][j]);
    }
#endif
    stage ^= 1u;
    if (more) store_step(stage * STAGE);
    barrier();
  }

  // ---- the epilogue, one 16-row strip of the subgroup's tiles at a time through its own corner of
  // shared memory (the stages are free after the loop's last barrier). Lane l takes column l % (16 TN)
  // of the strip's rows: consecutive lanes, consecutive columns of y.
  const uint lane = LANE_ID, epi = warp * EPI_WARP;
#if 16 * TN > 32
  // a strip wider than the subgroup (SHAPE_W64: 64 columns): lane l takes columns l, l + 32, ... of
  // all 16 rows
  [[unroll]] for (int i = 0; i < TM; i++) {
    [[unroll]] for (int j = 0; j < TN; j++) STORE_C(acc[i][j], epi + 16 * j, EPI_ROW);
    STRIP_SYNC();
    [[unroll]] for (uint h = 0; h < 16u * TN / 32u; h++) {
      const uint c_local = lane + 32u * h, col = n0 + wn + c_local;
      epilogue_setup(col);
      if (col < n)
        for (uint r = 0; r < 16u; r++) {
          const uint row = m0 + wm + 16 * i + r;
          if (row >= m) break;
          finish(row, col, uintBitsToFloat(SMEM_WORD(epi + r * EPI_ROW + c_local)));
        }
    }
    STRIP_SYNC(); // the strip is read before the next one overwrites it
  }
#else
  const uint c_local = lane % (16u * TN), r_first = lane / (16u * TN), r_step = 32u / (16u * TN);
  const uint col = n0 + wn + c_local; // a lane past n still joins the strips' stores and barriers
  epilogue_setup(col);
  [[unroll]] for (int i = 0; i < TM; i++) {
    [[unroll]] for (int j = 0; j < TN; j++) STORE_C(acc[i][j], epi + 16 * j, EPI_ROW);
    STRIP_SYNC();
    if (col < n)
      for (uint r = r_first; r < 16u; r += r_step) {
        const uint row = m0 + wm + 16 * i + r;
        if (row >= m) break;
        finish(row, col, uintBitsToFloat(SMEM_WORD(epi + r * EPI_ROW + c_local)));
      }
    STRIP_SYNC(); // the strip is read before the next one overwrites it
  }
#endif
}
