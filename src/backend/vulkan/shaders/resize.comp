// gfxep Vulkan backend — the resampling family (vk_resize.c): Resize / Upsample (-DKIND_RESIZE,
// -DT_F16 for float16, -DT_BF16 for bfloat16) and DepthToSpace / SpaceToDepth (-DKIND_SPACE_DEPTH,
// -DELEM_SIZE=1, 2, 4, 8).
//
// Resize: the coordinate mapping is NOT redone here. vk_resize.c evaluates the IR's definitions
// (ir_resize_source_coord, ir_resize_outside, ir_resize_nearest_index, ir_resize_linear_taps,
// ir_resize_cubic_taps of src/ir/resize_geom.h) on the host, once per output row and per output
// column, into a tap table (by address): per entry TAPS input indices and weights, index -1 for a
// coordinate outside the input (tf_crop_and_resize: the extrapolation value). Rows come first
// (h.out entries), then columns. An output element is then sum_r wy[r] * sum_c wx[c] * x[iy[r], ix[c]],
// in the reference's order (ref_resize.c, sample_linear / sample_cubic) but in float32; nearest is
// one tap of weight 1, an exact copy. TAPS (1, 2 or 4) is a specialization constant. -DGENERAL: the
// general geometry (a leading dim resizes), each dim an axis of its own (below).
//
// DepthToSpace / SpaceToDepth: ir_space_depth_source (src/ir/resize_geom.h) mirrored below in
// 32-bit arithmetic; elements move as bits of their size.
//
// Both: tensors below 2^32 elements (refused at node_prepare otherwise), 32-bit indices.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x = 256) in;

#if defined(KIND_RESIZE)
#if defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
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

#extension GL_GOOGLE_include_directive : require
#include "elem_convert.glsl"

layout(constant_id = 0) const int TAPS = 1;

layout(push_constant) uniform Push {
  uvec2 x_addr, y_addr, taps_addr;
  uint count, out_h, out_w, in_h, in_w;
  float extrapolation;
} pc;

struct Tap {
  ivec4 idx; // input indices along the axis; idx.x < 0: outside the input
  vec4 w;    // their weights
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Taps { Tap t[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };

#if defined(GENERAL)
// The general geometry (some dim before the last two resizes: a volume's depth, channels): every dim
// is an axis with its own taps. The table starts with a header: the rank, the extrapolation value and
// per axis its output and input sizes, its tap count (1 for a dim kept as it is or nearest, 2 linear,
// 4 cubic) and its first entry (one entry per output index). An output element sums, over every
// combination of its axes' taps (the last dim fastest, as ref_resize.c's sample_general), the product
// of their weights times the input element; float32 where the reference sums in double.
#define MAX_RANK 8
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer General {
  int rank;
  uint pad0, pad1;
  float extrapolation;
  uvec4 axes[MAX_RANK]; // out, in, taps, first entry
  Tap t[];
};

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  General g = General(pc.taps_addr);
  In x = In(pc.x_addr);
  const int rank = g.rank;
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    Tap t[MAX_RANK];
    int pick[MAX_RANK];
    bool outside = false;
    uint rest = e;
    for (int k = rank - 1; k >= 0; k--) {
      const uvec4 a = g.axes[k];
      t[k] = g.t[a.w + rest % a.x];
      rest /= a.x;
      pick[k] = 0;
      outside = outside || t[k].idx.x < 0;
    }
    float v = 0.0;
    if (outside) {
      v = g.extrapolation;
    } else {
      for (;;) { // an odometer over the taps, the last dim fastest
        uint offset = 0u;
        float weight = 1.0;
        for (int k = 0; k < rank; k++) {
          offset = offset * g.axes[k].y + uint(t[k].idx[pick[k]]);
          weight *= t[k].w[pick[k]];
        }
        v += weight * elem_to_f(x.v[offset]);
        int k = rank - 1;
        while (k >= 0) {
          pick[k]++;
          if (pick[k] < int(g.axes[k].z)) break;
          pick[k] = 0;
          k--;
        }
        if (k < 0) break;
      }
    }
    Out(pc.y_addr).v[e] = f_to_elem(v);
  }
}
#else
void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  Taps taps = Taps(pc.taps_addr);
  In x = In(pc.x_addr);
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    const uint ox = e % pc.out_w;
    const uint rest = e / pc.out_w;
    const uint oy = rest % pc.out_h;
    const uint plane = rest / pc.out_h;
    const Tap ty = taps.t[oy];
    const Tap tx = taps.t[pc.out_h + ox];
    float v;
    if (ty.idx.x < 0 || tx.idx.x < 0) {
      v = pc.extrapolation;
    } else {
      const uint base = plane * pc.in_h * pc.in_w;
      v = 0.0;
      for (int r = 0; r < TAPS; r++) {
        const uint row_base = base + uint(ty.idx[r]) * pc.in_w;
        float row = 0.0;
        for (int c = 0; c < TAPS; c++) row += tx.w[c] * elem_to_f(x.v[row_base + uint(tx.idx[c])]);
        v += ty.w[r] * row;
      }
    }
    Out(pc.y_addr).v[e] = f_to_elem(v);
  }
}
#endif // GENERAL

#else // KIND_SPACE_DEPTH

#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
// 1- and 2-byte elements are widened to uint between load and store (storage access only)
#if ELEM_SIZE == 1
#define ELEM uint8_t
#define WIDE uint
#elif ELEM_SIZE == 2
#define ELEM uint16_t
#define WIDE uint
#elif ELEM_SIZE == 4
#define ELEM uint
#define WIDE uint
#else
#define ELEM uvec2
#define WIDE uvec2
#endif

layout(push_constant) uniform Push {
  uvec2 x_addr, y_addr;
  uint count, to_space, crd, b, out_c, out_h, out_w;
} pc;

layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) writeonly buffer Out { ELEM v[]; };

// ir_space_depth_source (src/ir/resize_geom.h), step for step: the input element output element i
// copies, for the output shape [N, out_c, out_h, out_w].
uint space_depth_source(uint i) {
  const uint b = pc.b, out_c = pc.out_c, out_h = pc.out_h, out_w = pc.out_w;
  const uint w_o = i % out_w;
  uint rest = i / out_w;
  const uint h_o = rest % out_h;
  rest /= out_h;
  const uint c_o = rest % out_c;
  const uint n = rest / out_c;
  if (pc.to_space != 0u) {
    const uint in_c = out_c * b * b, in_h = out_h / b, in_w = out_w / b;
    const uint bi = h_o % b, bj = w_o % b;
    // DCR: the block offset is the outer part of the channel index, CRD: the inner part
    const uint c = pc.crd != 0u ? c_o * b * b + bi * b + bj : (bi * b + bj) * out_c + c_o;
    return ((n * in_c + c) * in_h + h_o / b) * in_w + w_o / b;
  }
  const uint in_c = out_c / (b * b), in_h = out_h * b, in_w = out_w * b;
  const uint block = c_o / in_c, c = c_o % in_c;
  return ((n * in_c + c) * in_h + h_o * b + block / b) * in_w + w_o * b + block % b;
}

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count)
    Out(pc.y_addr).v[e] = ELEM(WIDE(In(pc.x_addr).v[space_depth_source(e)]));
}
#endif
