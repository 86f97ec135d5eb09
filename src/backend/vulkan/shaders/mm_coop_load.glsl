// gfxep Vulkan backend — how mm_coop.comp fetches its operands and finishes its outputs: one
// invocation's share of each K step of A and B (global -> registers -> shared memory), as 16-byte
// vectors where pc.flags allows, else as element pairs; the Conv's B gathered through its tap table;
// the epilogue per output element. Include after mm_common.glsl, coop_ops.glsl and smem, with BM,
// BN, BK, THREADS, K_ROW, N_ROW, A_TILE, A_VLOADS, A_REGS and B_REGS defined.

// Per invocation (private), set once by setup(): the operands and sizes, and the next step's words.
In a, b;
uint m, n, k, q_end, m0, n0, a_base;
uint ra[A_REGS], rb[B_REGS];
#if defined(CONV)
Geom geom;
uint grp, in_d, in_h, in_w;
bool pointwise; // Geom's pointwise: every tap inside the input, no table needed
// the pair path's two columns (2 p and 2 p + 1 of the block, p = t % 64): whether each is inside N,
// the input offset of its tap (0, 0, 0) of channel 0, and that tap's position (negative in the padding)
bool c_ok[2];
uint x_pixel[2];
int iz0[2], iy0[2], ix0[2];
// with TAP_MASK (a 2-D window of at most 32 taps): bit w set where tap w of the window (ky * k_w + kx)
// lands inside the input for the column, so the gather tests one bit instead of three bounds
uint tap_mask[2];
uint y_col; // the epilogue's column: its output offset without the channel
#if defined(CHANNELS_LAST)
// -DCHANNELS_LAST (vk_nn.c, GFXEP_VULKAN_COOP_NHWC): b is a channels-last copy of the input and a the
// weights reordered to (c_out, ky, kx, c_in), so K runs (tap, channel) with the channel fastest, and
// B moves as 16-byte vectors along K, eight channels of one tap at one pixel (the copies' channels,
// Geom's c_in, padded with zeros to a multiple of 8; one group, a 2-D window of at most 32 taps). Vector r of a step covers column t / 4 + r THREADS / 4
// of the block: its tap (0, 0) of channel 0 in the copy, and its mask of the taps inside the input.
uint cl_pixel[B_VLOADS], cl_mask[B_VLOADS];
#endif
#else
uint batch, b_base, a_row, a_col, b_row, b_col;
#endif

void setup(Geom g) {
  m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  m = uint(g.m), n = uint(g.n), k = uint(g.k);
#if defined(CONV)
  a = In(pc.w_addr);
  b = In(pc.x_addr);
  grp = gl_WorkGroupID.z / pc.splits;
  a_base = grp * m * k; // this group's weights: m rows of k
  geom = g;
  in_d = uint(g.in_d), in_h = uint(g.in_h), in_w = uint(g.in_w);
  pointwise = g.pointwise != 0;
#if defined(CHANNELS_LAST)
  [[unroll]] for (uint r = 0; r < B_VLOADS; r++) {
    const uint col = n0 + (gl_LocalInvocationID.x + r * THREADS) / 4u;
    cl_pixel[r] = 0u, cl_mask[r] = 0u;
    if (col >= n) continue;
    const ConvColumn cc = conv_column(g, 0u, col);
    const uint nb = col / conv_out_plane(g);
    cl_pixel[r] = ((nb * in_h + uint(cc.iy0)) * in_w + uint(cc.ix0)) * uint(g.c_in);
    uint x_ok = 0u;
    for (int kx = 0; kx < g.k_w; kx++)
      if (uint(cc.ix0 + kx * g.dil_w) < in_w) x_ok |= 1u << kx;
    for (int ky = 0; ky < g.k_h; ky++)
      if (uint(cc.iy0 + ky * g.dil_h) < in_h) cl_mask[r] |= x_ok << (ky * g.k_w);
  }
#else
  [[unroll]] for (uint c = 0; c < 2u; c++) {
    const uint col = n0 + 2u * (gl_LocalInvocationID.x % 64u) + c;
    c_ok[c] = col < n;
    const ConvColumn cc = conv_column(g, grp, c_ok[c] ? col : 0u);
    iz0[c] = cc.iz0, iy0[c] = cc.iy0, ix0[c] = cc.ix0, x_pixel[c] = cc.x_pixel;
    tap_mask[c] = 0u;
    if ((pc.flags & TAP_MASK) != 0u && c_ok[c]) {
      uint x_ok = 0u; // bit kx: column kx of the window inside the input
      for (int kx = 0; kx < g.k_w; kx++)
        if (uint(ix0[c] + kx * g.dil_w) < in_w) x_ok |= 1u << kx;
      for (int ky = 0; ky < g.k_h; ky++)
        if (uint(iy0[c] + ky * g.dil_h) < in_h) tap_mask[c] |= x_ok << (ky * g.k_w);
    }
  }
#endif
#else
  a = In(pc.a_addr);
  b = In(pc.b_addr);
  batch = gl_WorkGroupID.z / pc.splits;
  a_base = uint(g.offsets[2 * batch]), b_base = uint(g.offsets[2 * batch + 1]);
  a_row = uint(g.a_row), a_col = uint(g.a_col), b_row = uint(g.b_row), b_col = uint(g.b_col);
#endif
}

#if defined(CONV)
uint a_index(uint row, uint q) { return a_base + row * k + q; }
// B's element (q, column c of the pair): the input under tap (kz, ky, kx) of channel ci; 0 in the padding
float16_t b_value(uint q, uint c) {
  if (!c_ok[c] || q >= q_end) return float16_t(0.0);
  if (pointwise) return b.v[x_pixel[c] + q * in_d * in_h * in_w]; // a uniform branch: no table, no bounds
  const uvec2 tap = geom.taps[q]; // the same q for 64 invocations: a broadcast load
  if ((pc.flags & TAP_MASK) != 0u) // a uniform branch; the table's top byte holds the tap's index w
    return ((tap_mask[c] >> (tap.y >> 24)) & 1u) != 0u ? b.v[x_pixel[c] + tap.x] : float16_t(0.0);
  const int iz = iz0[c] + int(tap.y >> 24), iy = iy0[c] + int((tap.y >> 12) & 0xfffu), ix = ix0[c] + int(tap.y & 0xfffu);
  if (uint(iy) >= in_h || uint(ix) >= in_w || uint(iz) >= in_d) return float16_t(0.0); // negative wraps to large
  return b.v[x_pixel[c] + tap.x];
}
#else
uint a_index(uint row, uint q) { return a_base + row * a_row + q * a_col; }
uint b_index(uint q, uint col) { return b_base + q * b_row + col * b_col; }
float16_t b_value(uint q, uint c) {
  const uint col = n0 + 2u * (gl_LocalInvocationID.x % 64u) + c;
  return col < n && q < q_end ? b.v[b_index(q, col)] : float16_t(0.0);
}
#endif

float16_t a_value(uint row, uint q) { return row < m && q < q_end ? a.v[a_index(row, q)] : float16_t(0.0); }

// global -> registers for the step at q0
void load_step(uint q0) {
  const uint t = gl_LocalInvocationID.x;
  if ((pc.flags & VEC_A) != 0u) {
    // 16-byte vector idx: row idx / 4, K from q0 + 8 (idx % 4)
    [[unroll]] for (uint r = 0; r < A_VLOADS; r++) {
      const uint idx = t + r * THREADS, row = m0 + idx / 4u, q = q0 + (idx % 4u) * 8u;
      uvec4 v = uvec4(0);
      if (idx < BM * BK / 8 && row < m && q < q_end) v = InVec(a).v[a_index(row, q) / 8u];
      ra[4 * r] = v.x, ra[4 * r + 1] = v.y, ra[4 * r + 2] = v.z, ra[4 * r + 3] = v.w;
    }
  } else {
    // pair r: row t / 16 + A_PAIR_ROWS r, K from q0 + 2 (t % 16)
    [[unroll]] for (uint r = 0; r < BM / A_PAIR_ROWS; r++) {
      const uint row = m0 + t / 16u + A_PAIR_ROWS * r, q = q0 + (t % 16u) * 2u;
      ra[r] = packFloat2x16(f16vec2(a_value(row, q), a_value(row, q + 1u)));
    }
  }
#if !defined(CONV)
  if ((pc.flags & (VEC_B_N | VEC_B_K)) != 0u) {
    // vector idx: along N, K row q0 + idx / 16 and columns from n0 + 8 (idx % 16); along K (B
    // transposed), column n0 + idx / 4 and K from q0 + 8 (idx % 4)
    const bool along_k = (pc.flags & VEC_B_K) != 0u;
    [[unroll]] for (uint r = 0; r < B_VLOADS; r++) {
      const uint idx = t + r * THREADS;
      const uint q = q0 + (along_k ? (idx % 4u) * 8u : idx / 16u), col = n0 + (along_k ? idx / 4u : (idx % 16u) * 8u);
      uvec4 v = uvec4(0);
      if (col < n && q < q_end) v = InVec(b).v[b_index(q, col) / 8u];
      rb[4 * r] = v.x, rb[4 * r + 1] = v.y, rb[4 * r + 2] = v.z, rb[4 * r + 3] = v.w;
    }
    return;
  }
#endif
#if defined(CHANNELS_LAST)
  { // vector r: column t / 4 + r THREADS / 4, K from q0 + 8 (t % 4): eight channels of one tap, or zeros
    const uint q = q0 + (t % 4u) * 8u;
    const bool q_ok = q < q_end;
    const uvec2 tap = q_ok ? geom.taps[q] : uvec2(0u); // (its offset in the copy, its index << 24)
    [[unroll]] for (uint r = 0; r < B_VLOADS; r++) {
      uvec4 v = uvec4(0);
      if (q_ok && ((cl_mask[r] >> (tap.y >> 24)) & 1u) != 0u) v = InVec(b).v[(cl_pixel[r] + tap.x) / 8u];
      rb[4 * r] = v.x, rb[4 * r + 1] = v.y, rb[4 * r + 2] = v.z, rb[4 * r + 3] = v.w;
    }
    return;
  }
#endif
  // pair r: K row q0 + t / 64 + B_PAIR_ROWS r, columns 2 (t % 64) and 2 (t % 64) + 1
  [[unroll]] for (uint r = 0; r < BK / B_PAIR_ROWS; r++) {
    const uint q = q0 + t / 64u + B_PAIR_ROWS * r;
    rb[r] = packFloat2x16(f16vec2(b_value(q, 0u), b_value(q, 1u)));
  }
}

// registers -> the stage at word `at` of smem (a multiple of 4), in the places load_step's mappings give;
// the 16-byte vectors as one store each
void store_step(uint at) {
  const uint t = gl_LocalInvocationID.x;
  if ((pc.flags & VEC_A) != 0u) {
    [[unroll]] for (uint r = 0; r < A_VLOADS; r++) {
      const uint idx = t + r * THREADS, w = at + (idx / 4u) * K_ROW + (idx % 4u) * 4u;
      if (idx < BM * BK / 8) smem[w / 4u] = uvec4(ra[4 * r], ra[4 * r + 1], ra[4 * r + 2], ra[4 * r + 3]);
    }
  } else {
    [[unroll]] for (uint r = 0; r < BM / A_PAIR_ROWS; r++) SMEM_WORD(at + (t / 16u + A_PAIR_ROWS * r) * K_ROW + t % 16u) = ra[r];
  }
  const uint bt = at + A_TILE;
#if !defined(CONV)
  if ((pc.flags & (VEC_B_N | VEC_B_K)) != 0u) {
    const bool along_k = (pc.flags & VEC_B_K) != 0u;
    [[unroll]] for (uint r = 0; r < B_VLOADS; r++) {
      const uint idx = t + r * THREADS;
      const uint w = bt + (along_k ? (idx / 4u) * K_ROW + (idx % 4u) * 4u : (idx / 16u) * N_ROW + (idx % 16u) * 4u);
      smem[w / 4u] = uvec4(rb[4 * r], rb[4 * r + 1], rb[4 * r + 2], rb[4 * r + 3]);
    }
    return;
  }
#endif
#if defined(CHANNELS_LAST)
  [[unroll]] for (uint r = 0; r < B_VLOADS; r++) { // K-major, as a transposed B
    const uint idx = t + r * THREADS, w = bt + (idx / 4u) * K_ROW + (idx % 4u) * 4u;
    smem[w / 4u] = uvec4(rb[4 * r], rb[4 * r + 1], rb[4 * r + 2], rb[4 * r + 3]);
  }
  return;
#endif
  [[unroll]] for (uint r = 0; r < BK / B_PAIR_ROWS; r++) SMEM_WORD(bt + (t / 64u + B_PAIR_ROWS * r) * N_ROW + t % 64u) = rb[r];
}

// the epilogue's per-column part, once per invocation
void epilogue_setup(uint col) {
#if defined(CONV)
  const uint out_plane = conv_out_plane(geom);
  y_col = col < n ? (col / out_plane) * uint(geom.c_out) * out_plane + col % out_plane : 0u;
#endif
}

// y's element (row, col) from its float32 sum v; a slice of a split K stores v for mm_reduce.comp
void finish(uint row, uint col, float v) {
  if (pc.splits > 1u) {
    const uint slice = gl_WorkGroupID.z % pc.splits, z = gl_WorkGroupID.z / pc.splits;
    Partial(pc.scratch_addr).v[((slice * pc.n_z + z) * m + row) * n + col] = v;
    return;
  }
#if defined(CONV)
  const uint co = grp * m + row, e = y_col + co * conv_out_plane(geom);
  Out(pc.y_addr).v[e] = conv_finish(geom, co, e, v);
#else
  Out(pc.y_addr).v[batch * m * n + row * n + col] = gemm_finish(Geom(pc.geom_addr), row, col, v);
#endif
}
