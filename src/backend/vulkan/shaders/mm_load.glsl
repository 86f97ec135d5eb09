// gfxep Vulkan backend — how mm_tiled.comp fetches its operands: one invocation's
// share of each K step of A and B, global -> registers, the Conv's B gathered through its tap table.
// Include after mm_common.glsl with BM, BN, BK, THREADS, A_LOADS and B_LOADS defined.

// Per invocation (private), set once by setup(): the operands, the sizes, and where this invocation
// loads. A: column aq of rows ai0 + 4r (consecutive invocations, consecutive K: coalesced); B: column
// bj of rows bq0 + 2r (consecutive invocations, consecutive columns).
In a, b;
uint m, n, k, q_end, m0, n0, a_base;
uint aq, ai0, bj, bq0, col;
bool col_ok;
ELEM ra[A_LOADS], rb[B_LOADS]; // the next step's operands, on their way to shared memory
#if defined(CONV)
Geom geom;
uint grp, in_d, in_h, in_w, x_pixel; // x_pixel: the input offset of tap (0, 0, 0) of channel 0 for this column
int iz0, iy0, ix0;
bool pointwise; // Geom's pointwise: every tap inside the input, no table needed
#else
uint batch, b_base, a_row, a_col, b_row, b_col;
#endif

void setup(Geom g) {
  const uint t = gl_LocalInvocationID.x;
  m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  aq = t % BK, ai0 = t / BK;
  bj = t % BN, bq0 = t / BN;
  col = n0 + bj;
#if defined(CONV)
  a = In(pc.w_addr);
  b = In(pc.x_addr);
  m = uint(g.m), n = uint(g.n), k = uint(g.k);
  grp = gl_WorkGroupID.z / pc.splits;
  a_base = grp * m * k; // this group's weights: m rows of k
  geom = g;
  in_d = uint(g.in_d), in_h = uint(g.in_h), in_w = uint(g.in_w);
  pointwise = g.pointwise != 0;
  col_ok = col < n;
  const ConvColumn cc = conv_column(g, grp, col_ok ? col : 0u);
  iz0 = cc.iz0, iy0 = cc.iy0, ix0 = cc.ix0, x_pixel = cc.x_pixel;
#else
  a = In(pc.a_addr);
  b = In(pc.b_addr);
  m = uint(g.m), n = uint(g.n), k = uint(g.k);
  batch = gl_WorkGroupID.z / pc.splits;
  a_base = uint(g.offsets[2 * batch]), b_base = uint(g.offsets[2 * batch + 1]);
  a_row = uint(g.a_row), a_col = uint(g.a_col), b_row = uint(g.b_row), b_col = uint(g.b_col);
  col_ok = col < n;
#endif
}

#if defined(CONV)
uint a_index(uint row, uint q) { return a_base + row * k + q; }
// B's element (q, col): the input under tap (kz, ky, kx) of channel ci for this output pixel; 0 in the padding
ELEM b_value(uint q) {
  if (pointwise) return b.v[x_pixel + q * in_d * in_h * in_w]; // a uniform branch: no table read, no bounds
  const uvec2 tap = geom.taps[q]; // the same q for a whole subgroup: one broadcast load
  const int iz = iz0 + int(tap.y >> 24), iy = iy0 + int((tap.y >> 12) & 0xfffu), ix = ix0 + int(tap.y & 0xfffu);
  if (uint(iy) >= in_h || uint(ix) >= in_w || uint(iz) >= in_d) return ELEM(0.0); // negative wraps to large
  return b.v[x_pixel + tap.x];
}
#else
uint a_index(uint row, uint q) { return a_base + row * a_row + q * a_col; }
ELEM b_value(uint q) { return b.v[b_base + q * b_row + col * b_col]; }
#endif

// global -> registers for the step at q0
void load_step(uint q0) {
  const uint qa = q0 + aq;
  [[unroll]] for (uint r = 0; r < A_LOADS; r++) {
    const uint row = m0 + ai0 + r * (THREADS / BK);
    ra[r] = row < m && qa < q_end ? a.v[a_index(row, qa)] : ELEM(0.0);
  }
  [[unroll]] for (uint r = 0; r < B_LOADS; r++) {
    const uint q = q0 + bq0 + r * (THREADS / BN);
    rb[r] = col_ok && q < q_end ? b_value(q) : ELEM(0.0);
  }
}

