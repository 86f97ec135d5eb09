// gfxep Vulkan backend — RoiAlign (vk_roi_align.c), NCHW, as the reference (ref_resize.c's
// roi_align_one) with the box, sample positions and taps of src/ir/resize_geom.h: positions in
// float32, every product and sum `precise` (never fused into an fma, which would move a position
// and, through ceil, a sample count), divisions correctly rounded (div_rn.glsl). The samples' mean
// sums in float, as the CUDA kernel does (the reference sums in double).
//
// One invocation per output element (region, channel, ph, pw). With an adaptive sample grid
// (sampling_ratio 0) a region may hold far more samples than the plane has pixels: only the samples
// within a pixel of the plane, a window found by bisection (positions grow with the sample index),
// are visited; the others count as 0, which leaves a sum as it is and joins a maximum as one 0. So
// an invocation's walk is bounded by the plane's size, which vk_roi_align.c checks against CPU
// implementations' loop limit. A batch index outside [0, N) gives 0 (the reference fails the run),
// so nothing is read outside X. -DT_F16: float16 X, rois and Y as 16-bit words, converted bit by
// bit. Tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

#include "div_rn.glsl"
#include "half_bits.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, rois_addr, batch_addr, y_addr;
  uint count, n, c, h, w, out_h, out_w, sampling_ratio, mode_max, half_pixel;
  float spatial_scale;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 2) buffer B16 { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer B32 { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer B64 { uvec2 v[]; };

float load_f(uvec2 a, uint i) {
#ifdef T_F16
  return uintBitsToFloat(f16_to_f32_bits(uint(B16(a).v[i])));
#else
  return uintBitsToFloat(B32(a).v[i]);
#endif
}

void store_f(uint i, float v) {
#ifdef T_F16
  B16(pc.y_addr).v[i] = uint16_t(f32_to_f16_bits(floatBitsToUint(v)));
#else
  B32(pc.y_addr).v[i] = floatBitsToUint(v);
#endif
}

bool is_nan(float v) { return (floatBitsToUint(v) & 0x7fffffffu) > 0x7f800000u; }

// C's fmaxf: a NaN operand gives the other one
float fmax_c(float a, float b) { return is_nan(a) ? b : is_nan(b) ? a : (a > b ? a : b); }

float fmul(float a, float b) {
  precise float r = a * b;
  return r;
}

// ir_roi_align_box: start and bin along one dim from its two edges (already scaled), the grid count
struct Edge {
  float start, bin;
  int grid;
};

Edge edge(float lo, float hi, uint out_n) {
  const float offset = pc.half_pixel != 0u ? 0.5 : 0.0;
  Edge e;
  precise float start = fmul(lo, pc.spatial_scale) - offset;
  precise float size = (fmul(hi, pc.spatial_scale) - offset) - start;
  if (pc.half_pixel == 0u) size = size > 1.0 ? size : 1.0;
  e.start = start;
  e.bin = div_rn(size, float(out_n));
  // (a region over 2^30 samples wide is clamped, which only moves a mean's divisor)
  e.grid = pc.sampling_ratio > 0u ? int(pc.sampling_ratio) : int(min(ceil(div_rn(size, float(out_n))), 1073741824.0));
  return e;
}

// ir_roi_align_coord
float coord(Edge e, uint p, int i) {
  precise float a = e.start + fmul(float(p), e.bin);
  precise float r = a + div_rn(fmul(float(i) + 0.5, e.bin), float(e.grid));
  return r;
}

// The first sample index in [0, grid) whose position exceeds `limit` (strictly, or reaches it);
// positions do not decrease with the index where bin >= 0.
int first_past(Edge e, uint p, float limit, bool strict) {
  int lo = 0, hi = e.grid;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const float v = coord(e, p, mid);
    if (strict ? v > limit : v >= limit) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// The samples along one dim within a pixel of a plane of `size` ([-1, size]): all of them with a
// fixed grid (bounded by sampling_ratio), a bisected window with an adaptive one.
ivec2 window(Edge e, uint p, uint size) {
  if (pc.sampling_ratio > 0u || e.grid <= 0 || !(e.bin >= 0.0)) return ivec2(0, max(e.grid, 0));
  return ivec2(first_past(e, p, -1.0, false), first_past(e, p, float(size), true));
}

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    const uint pw = e % pc.out_w, ph = e / pc.out_w % pc.out_h, ch = e / (pc.out_w * pc.out_h) % pc.c;
    const uint r = e / (pc.out_w * pc.out_h * pc.c);
    const uvec2 batch = B64(pc.batch_addr).v[r];
    if (batch.y != 0u || batch.x >= pc.n) {
      store_f(e, 0.0);
      continue;
    }
    const Edge ey = edge(load_f(pc.rois_addr, r * 4u + 1u), load_f(pc.rois_addr, r * 4u + 3u), pc.out_h);
    const Edge ex = edge(load_f(pc.rois_addr, r * 4u), load_f(pc.rois_addr, r * 4u + 2u), pc.out_w);
    const uint plane = (batch.x * pc.c + ch) * pc.h * pc.w;
    const ivec2 wy = window(ey, ph, pc.h), wx = window(ex, pw, pc.w);
    float acc = 0.0;
    bool first = true;
    for (int iy = wy.x; iy < wy.y; iy++) {
      float y = coord(ey, ph, iy);
      for (int ix = wx.x; ix < wx.y; ix++) {
        float x = coord(ex, pw, ix);
        float v0 = 0.0, v1 = 0.0, v2 = 0.0, v3 = 0.0;
        // ir_roi_align_taps
        if (!(y < -1.0 || y > float(pc.h) || x < -1.0 || x > float(pc.w))) {
          float yy = y <= 0.0 ? 0.0 : y, xx = x <= 0.0 ? 0.0 : x;
          uint y_low = uint(yy), x_low = uint(xx), y_high, x_high;
          if (y_low >= pc.h - 1u) {
            y_high = y_low = pc.h - 1u;
            yy = float(y_low);
          } else {
            y_high = y_low + 1u;
          }
          if (x_low >= pc.w - 1u) {
            x_high = x_low = pc.w - 1u;
            xx = float(x_low);
          } else {
            x_high = x_low + 1u;
          }
          precise float ly = yy - float(y_low), lx = xx - float(x_low), hy = 1.0 - ly, hx = 1.0 - lx;
          v0 = fmul(fmul(hy, hx), load_f(pc.x_addr, plane + y_low * pc.w + x_low));
          v1 = fmul(fmul(hy, lx), load_f(pc.x_addr, plane + y_low * pc.w + x_high));
          v2 = fmul(fmul(ly, hx), load_f(pc.x_addr, plane + y_high * pc.w + x_low));
          v3 = fmul(fmul(ly, lx), load_f(pc.x_addr, plane + y_high * pc.w + x_high));
        }
        if (pc.mode_max != 0u) {
          const float m = fmax_c(fmax_c(fmax_c(v0, v1), v2), v3);
          acc = first || m > acc ? m : acc;
          first = false;
        } else {
          precise float s = ((v0 + v1) + v2) + v3;
          precise float a = acc + s;
          acc = a;
        }
      }
    }
    if (pc.mode_max != 0u) {
      const bool skipped = wy.y - wy.x < max(ey.grid, 0) || wx.y - wx.x < max(ex.grid, 0);
      if (skipped) acc = first || 0.0 > acc ? 0.0 : acc; // the skipped samples' 0
    } else {
      // grid_h * grid_w as the C code's int64 product converted to float: one rounding
      precise float samples = float(ey.grid) * float(ex.grid);
      acc = div_rn(acc, ey.grid * ex.grid > 1 || samples > 1.0 ? samples : 1.0);
    }
    store_f(e, acc);
  }
}
