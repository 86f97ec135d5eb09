// gfxep Vulkan backend — what mm_coop.comp (float16 products on cooperative matrices) and
// mm_reduce.comp (the sum of its split-K slices) share: the operands, the push constants, each
// product's Geom block, and the epilogue that turns a float32 sum into an output element.
// Define CONV or GEMM before including, and T_F32 for float32 operands (float16 otherwise).

#if defined(T_F32)
#define ELEM float
#define ELEM_ALIGN 4
#else
#define ELEM float16_t
#define ELEM_ALIGN 2
#endif
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Partial { float v[]; };

// Split-K (vk_nn.c's coop_push): with splits > 1, workgroup z = product * splits + slice, slice s
// sums K from s * k_chunk, and writes its float32 block to scratch[((s * n_z + product) * m + row) *
// n + col]; mm_reduce.comp then adds the slices and finishes. n_z: the products (groups or batch).
// flags: mm_coop.comp's vector loads (VEC_A, VEC_B_N, VEC_B_K), which the other kernels ignore.
#define SPLIT_PUSH uvec2 scratch_addr; uint splits, k_chunk, n_z, flags;

#if defined(CONV)
layout(push_constant) uniform Push {
  uvec2 x_addr, w_addr, bias_addr, res_addr, y_addr, geom_addr;
  SPLIT_PUSH
} pc;

// ir_conv_residual's codes (ir/graph.h)
#define RES_ADD_THEN_ACT 1
#define RES_ACT_THEN_ADD 2

// vk_nn.c's conv_coop_geom_gpu
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int m, n, k, c_in;          // M = c_out per group, N = batch * out_d * out_h * out_w, K = c_in_g * k_d * k_h * k_w
  int c_in_g, c_out, in_h, in_w;
  int k_h, k_w, out_h, out_w;
  int stride_h, stride_w, dil_h, dil_w;
  int pad_top, pad_left, activation, residual;
  int has_bias, pointwise; // pointwise: a 1x1 window and no padding, so row q of B is input channel q
  float alpha, beta;
  int in_d, out_d, stride_d, pad_front; // a 3-D convolution's depth (2-D: 1, 1, 1, 0)
  // per row q of B, tap (kz, ky, kx) of channel ci: its offset from the column's tap (0, 0, 0) of
  // channel 0, and (dz << 24 | dy << 12 | dx) for the bounds test, with dz = kz * dil_d and so on
  // (mm_coop.comp with TAP_MASK, a 2-D window of at most 32 taps: dz is 0, and the top byte holds the
  // tap's index in the window instead)
  uvec2 taps[];
};

// the output elements of one (batch, channel) plane
uint conv_out_plane(Geom g) { return uint(g.out_d) * uint(g.out_h) * uint(g.out_w); }

// Column col of group grp's gathered input (an output pixel, col < n): the position of its tap
// (0, 0, 0) in the input (negative in the padding) and that tap's offset for channel 0. Unsigned
// arithmetic wraps, so a negative position still adds up to in-bounds taps.
struct ConvColumn {
  int iz0, iy0, ix0;
  uint x_pixel;
};
ConvColumn conv_column(Geom g, uint grp, uint col) {
  const uint out_hw = uint(g.out_h) * uint(g.out_w), out_plane = uint(g.out_d) * out_hw;
  const uint nb = col / out_plane, pix = col % out_plane, pix_hw = pix % out_hw;
  ConvColumn c;
  c.iz0 = int(pix / out_hw) * g.stride_d - g.pad_front;
  c.iy0 = int(pix_hw / uint(g.out_w)) * g.stride_h - g.pad_top;
  c.ix0 = int(pix_hw % uint(g.out_w)) * g.stride_w - g.pad_left;
  c.x_pixel = (nb * uint(g.c_in) + grp * uint(g.c_in_g)) * uint(g.in_d) * uint(g.in_h) * uint(g.in_w) +
              (uint(c.iz0) * uint(g.in_h) + uint(c.iy0)) * uint(g.in_w) + uint(c.ix0);
  return c;
}
#else
layout(push_constant) uniform Push {
  uvec2 a_addr, b_addr, c_addr, y_addr, geom_addr;
  SPLIT_PUSH
} pc;

// vk_nn.c's gemm_geom_gpu, followed by the offset table of the batch
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t m, n, k;
  int64_t a_row, a_col, b_row, b_col, c_row, c_col;
  float alpha, beta;
  int has_c, pad0;
  int64_t offsets[];
};
#endif

#if defined(CONV)
// output element e of channel co: act(acc + bias [+ r]) [+ r]
ELEM conv_finish(Geom g, uint co, uint e, float v) {
  if (g.has_bias != 0) v += float(In(pc.bias_addr).v[co]);
  if (g.residual == RES_ADD_THEN_ACT) v += float(In(pc.res_addr).v[e]);
  v = activation_f(g.activation, v, g.alpha, g.beta);
  if (g.residual == RES_ACT_THEN_ADD) v += float(In(pc.res_addr).v[e]);
  return ELEM(v);
}
#else
// alpha * acc + beta * C[row][col] (beta = 0 ignores C: 0 * inf would be NaN)
ELEM gemm_finish(Geom g, uint row, uint col, float v) {
  v *= g.alpha;
  if (g.has_c != 0 && g.beta != 0.0) v += g.beta * float(In(pc.c_addr).v[row * uint(g.c_row) + col * uint(g.c_col)]);
  return ELEM(v);
}
#endif
