// gfxep Vulkan backend — the portable tiled matrix product, for devices (or element types) without
// cooperative matrices: MatMul/Gemm (-DGEMM) and Conv as an implicit GEMM (-DCONV) with the same
// operands, tap table, split K and epilogue as mm_coop.comp (mm_common.glsl; its loads: mm_load.glsl), in float32
// (-DT_F32) or float16 storage, always float32 arithmetic.
// A workgroup of 256 invocations computes a BM x BN block of y: 64x64 by default, 64x128 with -DWIDE
// (products of many columns, a convolution's pixels: more arithmetic per load), 32x128 with
// -DROWS=32 and 16x256 with -DROWS=16 (products of few rows, a convolution with few output channels,
// which a 64-row block would mostly compute for nothing). The invocations form a TY x TX grid
// (TY = BM / 4); invocation (tx, ty) keeps rows ty + TY i (i < 4) and columns tx + TX j (j < PER_N) in
// registers: 4 x PER_N fused multiply-adds per 4 + PER_N values read from shared memory. Per step of
// 16 along K the operands go global -> registers -> shared
// memory (float32; A stored transposed so that both reads are a broadcast or consecutive words); the
// next step's global loads are issued before this step's products. Tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if !defined(T_F32)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

#include "float_math.glsl"

#define THREADS 256
#define PER_M 4 // rows each invocation keeps
#if defined(ROWS)
#define BM ROWS
#define PER_N 4 // columns each invocation keeps
#elif defined(WIDE)
#define BM 64
#define PER_N 8
#else
#define BM 64
#define PER_N 4
#endif
#define TY (BM / PER_M)   // rows of the invocation grid
#define TX (THREADS / TY) // its columns
#define BN (TX * PER_N)   // 64, 128 wide, 128 for ROWS=32, 256 for ROWS=16
#define BK 16
#define A_LOADS (BM * BK / THREADS) // A elements each invocation loads per step
#define B_LOADS (BK * BN / THREADS) // B elements

layout(local_size_x = THREADS) in;

#include "mm_common.glsl"
#include "mm_load.glsl"

shared float tile_a[BK][BM + 4]; // transposed: [q][row]
shared float tile_b[BK][BN + 4];

void main() {
  Geom g = Geom(pc.geom_addr);
  setup(g);
  const uint t = gl_LocalInvocationID.x, tx = t % TX, ty = t / TX;
  float acc[PER_M][PER_N];
  [[unroll]] for (int i = 0; i < PER_M; i++)
    [[unroll]] for (int j = 0; j < PER_N; j++) acc[i][j] = 0.0;

  const uint slice = gl_WorkGroupID.z % pc.splits, q_begin = slice * pc.k_chunk;
  q_end = min(k, q_begin + pc.k_chunk);
  load_step(q_begin);
  for (uint q0 = q_begin; q0 < q_end; q0 += BK) {
    [[unroll]] for (uint r = 0; r < A_LOADS; r++) tile_a[aq][ai0 + r * (THREADS / BK)] = float(ra[r]);
    [[unroll]] for (uint r = 0; r < B_LOADS; r++) tile_b[bq0 + r * (THREADS / BN)][bj] = float(rb[r]);
    barrier();
    if (q0 + BK < q_end) load_step(q0 + BK);
    [[unroll]] for (uint kk = 0; kk < BK; kk++) {
      float av[PER_M], bv[PER_N];
      [[unroll]] for (int i = 0; i < PER_M; i++) av[i] = tile_a[kk][ty + TY * i];
      [[unroll]] for (int j = 0; j < PER_N; j++) bv[j] = tile_b[kk][tx + TX * j];
      [[unroll]] for (int i = 0; i < PER_M; i++)
        [[unroll]] for (int j = 0; j < PER_N; j++) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  // ---- the epilogue, from registers: consecutive invocations write consecutive columns; a slice of a
  // split K stores its float32 sums for mm_reduce.comp instead
  const uint z = gl_WorkGroupID.z / pc.splits;
#if defined(CONV)
  const uint out_plane = conv_out_plane(g);
#endif
  [[unroll]] for (int j = 0; j < PER_N; j++) {
    const uint c = n0 + tx + TX * j;
    if (c >= n) continue;
#if defined(CONV)
    const uint y_col = (c / out_plane) * uint(g.c_out) * out_plane + c % out_plane;
#endif
    [[unroll]] for (int i = 0; i < PER_M; i++) {
      const uint row = m0 + ty + TY * i;
      if (row >= m) continue;
      if (pc.splits > 1) {
        Partial(pc.scratch_addr).v[((slice * pc.n_z + z) * m + row) * n + c] = acc[i][j];
        continue;
      }
#if defined(CONV)
      const uint co = z * m + row, e = y_col + co * out_plane;
      Out(pc.y_addr).v[e] = conv_finish(g, co, e, acc[i][j]);
#else
      Out(pc.y_addr).v[z * m * n + row * n + c] = gemm_finish(g, row, c, acc[i][j]);
#endif
    }
  }
}
