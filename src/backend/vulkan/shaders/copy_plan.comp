// gfxep Vulkan backend — the layout ops' strided copy plan (ir/layout.h): Transpose, Slice, Pad, Tile,
// Expand, and each input of Concat / output of Split.
//
// One source, compiled once per element size (-DELEM_SIZE=1, 2, 4, 8 or 16): elements are moved as
// bits, so every element type is exact; 16-byte elements are the groups of a contiguous last dim
// (ir_copy_plan_simplify), which never write the constant. The plan (box dims, destination strides, source start /
// step / extent / strides, the out-of-range mode and the constant) is read by device address once
// per invocation; each invocation walks the box with a grid stride and 32-bit index arithmetic
// (tensors below 2^32 elements). A box whose rows (its last dim) are long runs in rows (ROWS = RUN,
// 2 to 8, vk_layout.c chooses; 0 = per element): a workgroup takes a span of RUN x 256 elements of one
// row, so the other dims' coordinates are resolved once per RUN elements, and invocation t copies
// elements t, t + 256, ... of the span, so that every store of a subgroup stays contiguous.
#version 460
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#include "copy_plan.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ROWS = 0u;
#define RUN ROWS
#define MAX_RUN 8u

layout(push_constant) uniform Push {
  uvec2 src_addr;
  uvec2 dst_addr;
  uvec2 plan_addr;
} pc;

// c mod n in [0, n) for any sign of c: GLSL leaves % undefined for negative operands (NVIDIA's
// driver and lavapipe differ), so it is only applied to non-negative values here.
int pos_mod(int c, int n) {
  if (c >= 0) return c % n;
  int k = (-c) % n;
  return k == 0 ? 0 : n - k;
}

// ir_resolve_coord (ir/layout.h) in GLSL: a source coordinate outside [0, n) by the plan's mode,
// -1 for the constant. Kept step for step with the C definition, which the other backends share.
int resolve(int c, int n, int mode) {
  if (c >= 0 && c < n) return c;
  if (mode == MODE_EDGE) return c < 0 ? 0 : n - 1;
  if (mode == MODE_REFLECT) {
    if (n == 1) return 0;
    int period = 2 * (n - 1);
    int m = pos_mod(c, period);
    return m < n ? m : period - m;
  }
  if (mode == MODE_WRAP) return pos_mod(c, n);
  return -1;
}

void main() {
  Plan p = Plan(pc.plan_addr);
  Src src = Src(pc.src_addr);
  Dst dst = Dst(pc.dst_addr);
  const int rank = p.rank;
  const int mode = p.mode;
  const int64_t count = p.count;
#if ELEM_SIZE == 16
  const ELEM constant = uvec4(0u); // never written: such plans stay inside the source
#else
  const ELEM constant = ELEM(p.value);
#endif
  // The plan in registers once (the loops over MAX_RANK unroll, so the arrays stay registers): loads
  // through a buffer reference may alias the store, so a compiler reloads them per element otherwise.
  // 32-bit arithmetic: tensors have fewer than 2^32 elements and the plan's coordinates fit in int
  // (vk_layout.c checks); offsets wrap like the 64-bit sums they stand for.
  uint dims[MAX_RANK], dst_strides[MAX_RANK], src_strides[MAX_RANK], div_mul[MAX_RANK], div_shift[MAX_RANK];
  int src_start[MAX_RANK], src_step[MAX_RANK], src_extent[MAX_RANK];
  [[unroll]] for (int k = 0; k < MAX_RANK; k++) {
    const bool used = k < rank;
    dims[k] = used ? uint(p.dims[k]) : 1u;
    dst_strides[k] = used ? uint(p.dst_strides[k]) : 0u;
    src_strides[k] = used ? uint(p.src_strides[k]) : 0u;
    src_start[k] = used ? int(p.src_start[k]) : 0;
    src_step[k] = used ? int(p.src_step[k]) : 0;
    src_extent[k] = used ? int(p.src_extent[k]) : 1;
    div_mul[k] = used ? p.div_mul[k] : 0u;
    div_shift[k] = used ? p.div_shift[k] : 0u;
  }
  const uint dst_offset = uint(p.dst_offset), src_offset = uint(p.src_offset);
  if (ROWS != 0u) {
    const int last = rank - 1;
    // the last dim's plan read once, by a uniform index (the arrays above are indexed by constants only)
    const uint row_len = uint(p.dims[last]), dst_step = uint(p.dst_strides[last]);
    const uint src_stride = uint(p.src_strides[last]);
    const int start = int(p.src_start[last]), step_last = int(p.src_step[last]), extent = int(p.src_extent[last]);
    const uint span = RUN * gl_WorkGroupSize.x;
    const uint chunks = (row_len + span - 1u) / span, items = uint(count / int64_t(row_len)) * chunks;
    for (uint item = gl_WorkGroupID.x; item < items; item += gl_NumWorkGroups.x) {
      const uint row = item / chunks;
      uint rest = row, s = src_offset, d = dst_offset;
      bool outside = false;
      [[unroll]] for (int k = MAX_RANK - 1; k >= 0; k--) {
        if (k >= last) continue;
        const uint q = fast_div(rest, dims[k], div_mul[k], div_shift[k]);
        const uint i = rest - q * dims[k];
        rest = q;
        d += i * dst_strides[k];
        const int c = resolve(src_start[k] + int(i) * src_step[k], src_extent[k], mode);
        if (c < 0) outside = true;
        else s += uint(c) * src_strides[k];
      }
      const uint first = (item - row * chunks) * span + gl_LocalInvocationID.x;
      // every load before the first store: the two buffers may alias as far as the compiler knows,
      // so a load after a store would wait for it, and the RUN loads would go one latency at a time
      // (RUN is a specialization constant: the driver unrolls both loops and keeps v in registers)
      ELEM v[MAX_RUN];
      [[unroll]] for (uint e = 0u; e < RUN; e++) {
        const uint i = first + e * gl_WorkGroupSize.x;
        const int c = outside || i >= row_len ? -1 : resolve(start + int(i) * step_last, extent, mode);
        v[e] = c < 0 ? constant : src.v[s + uint(c) * src_stride];
      }
      [[unroll]] for (uint e = 0u; e < RUN; e++) {
        const uint i = first + e * gl_WorkGroupSize.x;
        if (i < row_len) dst.v[d + i * dst_step] = v[e];
      }
    }
    return;
  }
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x);
  for (int64_t linear = int64_t(gl_GlobalInvocationID.x); linear < count; linear += step) {
    uint rest = uint(linear), s = src_offset, d = dst_offset;
    bool outside = false;
    [[unroll]] for (int k = MAX_RANK - 1; k >= 0; k--) {
      if (k >= rank) continue;
      const uint q = fast_div(rest, dims[k], div_mul[k], div_shift[k]);
      const uint i = rest - q * dims[k];
      rest = q;
      d += i * dst_strides[k];
      const int c = resolve(src_start[k] + int(i) * src_step[k], src_extent[k], mode);
      if (c < 0) outside = true;
      else s += uint(c) * src_strides[k];
    }
    dst.v[d] = outside ? constant : src.v[s];
  }
}
