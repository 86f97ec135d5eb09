// gfxep Vulkan backend — GridSample (vk_resize.c): -DT_F16 for a float16 input and output, -DG_F16 for
// a float16 grid (float32 otherwise; the two are independent).
//
// One invocation per output pixel (n, oy, ox), grid-stride, neighbouring invocations on neighbouring
// x: it reads its grid point once, finds its taps and weights, then walks every channel with them.
// The taps follow src/ir/grid_sample_geom.h line by line (the definition the reference and CUDA
// backends share, and ONNX Runtime's CPU arithmetic): the location denormalized in float (precise:
// no contraction, so a nearest-mode tie rounds as on the CPU) and clamped to +-2^22; nearest rounds
// halves to even; linear and cubic (Keys, a = -0.75) take floor-based taps; padding applies to each
// tap (zeros: index -1 reads 0; border: clamped; reflection: mirrored about the borders until
// inside); out = sum_r wy[r] * sum_c wx[c] * pixel, in that order, in float32.
// MODE (0 nearest, 1 linear, 2 cubic) is a specialization constant. Tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#if defined(T_F16) || defined(G_F16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#if defined(T_F16)
#define ELEM float16_t
#define ELEM_ALIGN 2
#else
#define ELEM float
#define ELEM_ALIGN 4
#endif
#if defined(G_F16)
#define GRID_ELEM float16_t
#define GRID_ALIGN 2
#else
#define GRID_ELEM float
#define GRID_ALIGN 4
#endif

layout(local_size_x = 256) in;

layout(constant_id = 0) const int MODE = 1;
const int TAPS = MODE == 0 ? 1 : (MODE == 1 ? 2 : 4);
const float LIMIT = 4194304.0; // 2^22

layout(push_constant) uniform Push {
  uvec2 x_addr, grid_addr, y_addr;
  uint count;  // n * out_h * out_w
  uint pixels; // out_h * out_w
  uint channels, in_h, in_w;
  uint padding; // 0 zeros, 1 border, 2 reflection
  uint align_corners;
} pc;

layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = GRID_ALIGN) readonly buffer Grid { GRID_ELEM v[]; };

float denormalize(float v, uint len) {
  precise float c;
  if (pc.align_corners != 0u)
    c = (v + 1.0) / 2.0 * float(len - 1u);
  else
    c = ((v + 1.0) * float(len) - 1.0) / 2.0;
  if (!(c >= -LIMIT)) return -LIMIT;
  return c > LIMIT ? LIMIT : c;
}

// ir_grid_reflect: whole numbers in, whole numbers out for these borders
float mirror(float v, float lo, float hi) {
  precise float range = hi - lo;
  if (v < lo) {
    precise float d = lo - v;
    const int k = int(d / range);
    precise float r = d - float(k) * range;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (v > hi) {
    precise float d = v - hi;
    const int k = int(d / range);
    precise float r = d - float(k) * range;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return v;
}

// ir_grid_tap: the index tap i reads along an axis of len pixels, -1 for a zero
int tap(int i, uint len) {
  const int n = int(len);
  if (i >= 0 && i < n) return i;
  if (pc.padding == 0u) return -1;
  if (pc.padding == 1u) return i < 0 ? 0 : n - 1;
  const float lo = pc.align_corners != 0u ? 0.0 : -0.5;
  const float hi = pc.align_corners != 0u ? float(n - 1) : float(n) - 0.5;
  if (!(hi > lo)) return 0;
  return clamp(int(mirror(float(i), lo, hi)), 0, n - 1);
}

// ir_grid_cubic_weights
void cubic_weights(float t, out float w[4]) {
  const float a = -0.75;
  t = abs(t);
  precise float t1 = t + 1.0, s = 1.0 - t, s1 = 2.0 - t;
  w[0] = ((a * t1 - 5.0 * a) * t1 + 8.0 * a) * t1 - 4.0 * a;
  w[1] = ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  w[2] = ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0;
  w[3] = ((a * s1 - 5.0 * a) * s1 + 8.0 * a) * s1 - 4.0 * a;
}

// ir_grid_axis_taps
void axis_taps(float c, uint len, out int idx[4], out float w[4]) {
  idx = int[4](-1, -1, -1, -1);
  w = float[4](0.0, 0.0, 0.0, 0.0);
  if (MODE == 0) {
    idx[0] = tap(int(roundEven(c)), len);
    w[0] = 1.0;
    return;
  }
  const float f = floor(c);
  const int first = int(f);
  if (MODE == 1) {
    idx[0] = tap(first, len);
    idx[1] = tap(first + 1, len);
    w[0] = float(first + 1) - c;
    w[1] = c - f;
    return;
  }
  for (int k = 0; k < 4; k++) idx[k] = tap(first - 1 + k, len);
  precise float t = (c - float(first - 1)) - 1.0;
  cubic_weights(t, w);
}

void main() {
  In x = In(pc.x_addr);
  Grid grid = Grid(pc.grid_addr);
  const uint count = pc.count, plane = pc.in_h * pc.in_w;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    const uint n = e / pc.pixels, p = e - n * pc.pixels;
    const float gx = float(grid.v[2u * e]), gy = float(grid.v[2u * e + 1u]);
    int ix[4], iy[4];
    float wx[4], wy[4];
    axis_taps(denormalize(gx, pc.in_w), pc.in_w, ix, wx);
    axis_taps(denormalize(gy, pc.in_h), pc.in_h, iy, wy);
    uint src = n * pc.channels * plane;
    uint dst = n * pc.channels * pc.pixels + p;
    for (uint ch = 0u; ch < pc.channels; ch++, src += plane, dst += pc.pixels) {
      float v = 0.0;
      for (int r = 0; r < TAPS; r++) {
        float row = 0.0;
        for (int c = 0; c < TAPS; c++) {
          const float px = iy[r] < 0 || ix[c] < 0 ? 0.0 : float(x.v[src + uint(iy[r]) * pc.in_w + uint(ix[c])]);
          row += wx[c] * px;
        }
        v += wy[r] * row;
      }
      Out(pc.y_addr).v[dst] = ELEM(v);
    }
  }
}
