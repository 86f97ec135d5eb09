// gfxep Vulkan backend — the cooperative-matrix operations of mm_coop.comp, in one place, so that
// the same kernel compiles for the tensor cores (VK_NV_cooperative_matrix: 16x16x16 tiles of float16
// with float32 accumulators at subgroup scope) or, with -DCOOP_EMULATE, for any device: plain
// arithmetic on the shared-memory tiles with the same tile shapes, the same ownership (32 invocations
// act as one subgroup) and float32 sums of exact float16 products. The emulation is how CI, on a
// device without cooperative matrices (lavapipe), runs everything of mm_coop.comp around the matrix
// operations: the loads and their bounds, the tap gather, split K and the epilogues.
// Include after tile_a, tile_b and tile_c (and A_STRIDE, B_STRIDE, C_STRIDE) are declared. Fragments
// of A come from tile_a and of B from tile_b only; offsets and strides count elements.
#if defined(COOP_EMULATE)

#define WARP_ID (gl_LocalInvocationIndex / 32u)
#define LANE (gl_LocalInvocationIndex % 32u)
// A or B: which 16x16 tile of tile_a / tile_b (its first element); read when multiplied
struct CoopTile {
  uint off;
};
// an accumulator: this invocation's 8 of the 256 float32 elements, element e = LANE + 32 r (row e / 16)
struct CoopAcc {
  float v[8];
};
#define FRAG_A CoopTile
#define FRAG_B CoopTile
#define FRAG_ACC CoopAcc

CoopAcc coop_zero() {
  CoopAcc c;
  [[unroll]] for (uint r = 0; r < 8; r++) c.v[r] = 0.0;
  return c;
}

CoopAcc coop_mul_add(CoopTile a, CoopTile b, CoopAcc c) {
  [[unroll]] for (uint r = 0; r < 8; r++) {
    const uint e = LANE + 32u * r, row = e / 16u, col = e % 16u;
    float s = c.v[r];
    for (uint q = 0; q < 16u; q++)
      s += float(tile_a[a.off + row * A_STRIDE + q]) * float(tile_b[b.off + q * B_STRIDE + col]);
    c.v[r] = s;
  }
  return c;
}

void coop_store(CoopAcc c, uint off) {
  [[unroll]] for (uint r = 0; r < 8; r++) {
    const uint e = LANE + 32u * r;
    tile_c[off + (e / 16u) * C_STRIDE + e % 16u] = c.v[r];
  }
}

#define ACC_ZERO coop_zero()
#define LOAD_A(f, offset) f.off = (offset)
#define LOAD_B(f, offset) f.off = (offset)
#define MUL_ADD(a, b, c) c = coop_mul_add(a, b, c)
#define STORE_C(c, offset) coop_store(c, offset)

#else

#define WARP_ID gl_SubgroupID
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FRAG_B FRAG_A
#define FRAG_ACC fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define ACC_ZERO FRAG_ACC(0.0)
#define LOAD_A(f, offset) coopMatLoadNV(f, tile_a, offset, A_STRIDE, false)
#define LOAD_B(f, offset) coopMatLoadNV(f, tile_b, offset, B_STRIDE, false)
#define MUL_ADD(a, b, c) c = coopMatMulAddNV(a, b, c)
#define STORE_C(c, offset) coopMatStoreNV(c, tile_c, offset, C_STRIDE, false)

#endif
