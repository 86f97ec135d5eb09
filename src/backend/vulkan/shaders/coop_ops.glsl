// gfxep Vulkan backend — the cooperative-matrix operations of mm_coop.comp, in one place, so that
// the same kernel compiles for the tensor cores (VK_NV_cooperative_matrix: 16x16x16 tiles of float16
// with float32 accumulators at subgroup scope) or, with -DCOOP_EMULATE, for any device: plain
// arithmetic on the shared-memory tiles with the same tile shapes, the same ownership (32 invocations
// act as one subgroup) and float32 sums of exact float16 products. The emulation is how CI, on a
// device without cooperative matrices (lavapipe), runs everything of mm_coop.comp around the matrix
// operations: the loads and their bounds, the tap gather, split K and the epilogues.
// Include after `shared uvec4 smem[]` and SMEM_WORD (its 32-bit words, two float16 each, the lower
// half first). Offsets and strides count words, multiples of 4 (whole vectors): a tile row of 16
// float16 is 8 words; accumulators are stored one float32 per word.
#if defined(COOP_EMULATE)

#define WARP_ID (gl_LocalInvocationIndex / 32u)
#define LANE_ID (gl_LocalInvocationIndex % 32u)
// A or B: where its 16x16 tile starts in smem, the words between rows (columns, col_major), read
// when multiplied
struct CoopTile {
  uint off, stride;
  bool col_major;
};
// an accumulator: this invocation's 8 of the 256 float32 elements, element e = LANE_ID + 32 r (row e / 16)
struct CoopAcc {
  float v[8];
};
#define FRAG_A CoopTile
#define FRAG_B CoopTile
#define FRAG_ACC CoopAcc

// element (r, c) of a tile stored by rows (or by columns)
float coop_at(CoopTile t, uint r, uint c) {
  const uint along = t.col_major ? c : r, across = t.col_major ? r : c;
  const vec2 pair = unpackHalf2x16(SMEM_WORD(t.off + along * t.stride + across / 2u));
  return (across & 1u) != 0u ? pair.y : pair.x;
}

CoopAcc coop_zero() {
  CoopAcc c;
  [[unroll]] for (uint r = 0; r < 8; r++) c.v[r] = 0.0;
  return c;
}

// Not unrolled: a software device compiles the kernel at its first dispatch, and with the eight
// elements unrolled into every product that compile took lavapipe over a minute.
CoopAcc coop_mul_add(CoopTile a, CoopTile b, CoopAcc c) {
  [[dont_unroll]] for (uint r = 0; r < 8; r++) {
    const uint e = LANE_ID + 32u * r, row = e / 16u, col = e % 16u;
    float s = c.v[r];
    for (uint q = 0; q < 16u; q++) s += coop_at(a, row, q) * coop_at(b, q, col);
    c.v[r] = s;
  }
  return c;
}

void coop_store(CoopAcc c, uint off, uint stride) {
  [[unroll]] for (uint r = 0; r < 8; r++) {
    const uint e = LANE_ID + 32u * r;
    SMEM_WORD(off + (e / 16u) * stride + e % 16u) = floatBitsToUint(c.v[r]);
  }
}

#define ACC_ZERO coop_zero()
#define LOAD_A(f, offset, stride) f = CoopTile(offset, stride, false)
#define LOAD_B(f, offset, stride) f = CoopTile(offset, stride, false)
#define LOAD_B_T(f, offset, stride) f = CoopTile(offset, stride, true)
#define MUL_ADD(a, b, c) c = coop_mul_add(a, b, c)
#define STORE_C(c, offset, stride) coop_store(c, offset, stride)
// a subgroup's stored strip, visible to all its invocations: the device's subgroups may be narrower
// than the 32 invocations that act as one here, so the whole workgroup waits
#define STRIP_SYNC() barrier()

#else

#define WARP_ID gl_SubgroupID
#define LANE_ID gl_SubgroupInvocationID
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FRAG_B FRAG_A
#define FRAG_ACC fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define ACC_ZERO FRAG_ACC(0.0)
// the callers count words; the loads and stores count elements of smem (16-byte vectors)
#define LOAD_A(f, offset, stride) coopMatLoadNV(f, smem, (offset) / 4u, (stride) / 4u, false)
#define LOAD_B(f, offset, stride) coopMatLoadNV(f, smem, (offset) / 4u, (stride) / 4u, false)
#define LOAD_B_T(f, offset, stride) coopMatLoadNV(f, smem, (offset) / 4u, (stride) / 4u, true)
#define MUL_ADD(a, b, c) c = coopMatMulAddNV(a, b, c)
#define STORE_C(c, offset, stride) coopMatStoreNV(c, smem, (offset) / 4u, (stride) / 4u, false)
#define STRIP_SYNC() \
  subgroupMemoryBarrierShared(); \
  subgroupBarrier()

#endif
