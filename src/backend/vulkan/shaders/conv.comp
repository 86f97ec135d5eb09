// gfxep Vulkan backend — Conv (1-D as 2-D of height 1, 2-D, and 3-D: the 2-D window over a depth; grouped,
// depthwise, strided, dilated) with its
// fused epilogue: y = act(conv(x, w) + bias [+ r]) [+ r] (ir_conv_residual). Direct: one output
// element per invocation, float32 accumulation, tensors below 2^32 elements; -DT_F16 loads and stores float16. The portable
// path; implicit-GEMM kernels on cooperative matrices are the fast path's job.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
#if defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
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
#include "elem_convert.glsl"

#include "float_math.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, w_addr, bias_addr, res_addr, y_addr, geom_addr;
} pc;

// ir_conv_residual's codes (ir/graph.h)
#define RES_NONE 0
#define RES_ADD_THEN_ACT 1
#define RES_ACT_THEN_ADD 2

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t count;  // output elements
  int n, c_in, c_out, group;
  int in_h, in_w, k_h, k_w;
  int out_h, out_w, stride_h, stride_w;
  int dil_h, dil_w, pad_top, pad_left;
  int activation, residual, has_bias, pad0;
  float alpha, beta;
  // the depth of a 3-D convolution (1, 1, 1, 1, 1, 0 for 2-D): input, kernel, output, stride,
  // dilation, front pad
  int in_d, k_d, out_d, stride_d, dil_d, pad_front;
};
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };

void main() {
  Geom g = Geom(pc.geom_addr);
  In x = In(pc.x_addr);
  In w = In(pc.w_addr);
  // the geometry in registers once: loads through a buffer reference may alias the output store, so a
  // compiler reloads them in every iteration otherwise
  const int64_t count = g.count;
  const int c_in = g.c_in, c_out = g.c_out, group = g.group;
  const int in_h = g.in_h, in_w = g.in_w, k_h = g.k_h, k_w = g.k_w;
  const int out_h = g.out_h, out_w = g.out_w, stride_h = g.stride_h, stride_w = g.stride_w;
  const int dil_h = g.dil_h, dil_w = g.dil_w, pad_top = g.pad_top, pad_left = g.pad_left;
  const int activation = g.activation, residual = g.residual, has_bias = g.has_bias;
  const float alpha = g.alpha, beta = g.beta;
  const int in_d = g.in_d, k_d = g.k_d, out_d = g.out_d, stride_d = g.stride_d, dil_d = g.dil_d;
  const int pad_front = g.pad_front;
  const bool undilated = dil_h == 1 && dil_w == 1 && dil_d == 1;
  const int c_in_g = c_in / group, c_out_g = c_out / group;
  const uint plane = uint(in_h) * uint(in_w), k_plane = uint(k_h) * uint(k_w);
  const uint volume = uint(in_d) * plane, k_volume = uint(k_d) * k_plane;
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x);
  for (int64_t e = int64_t(gl_GlobalInvocationID.x); e < count; e += step) {
    // every tensor has fewer than 2^32 elements (node_prepare checks): 32-bit offsets from here on
    uint r = uint(e);
    const int ox = int(r % uint(out_w)); r /= uint(out_w);
    const int oy = int(r % uint(out_h)); r /= uint(out_h);
    const int oz = int(r % uint(out_d)); r /= uint(out_d);
    const int co = int(r % uint(c_out)); r /= uint(c_out);
    const uint nb = r;
    const int grp = co / c_out_g;
    // the kernel window clipped to the input once, instead of a test per tap; without dilation (a
    // uniform branch) with no division
    const int iy0 = oy * stride_h - pad_top, ix0 = ox * stride_w - pad_left, iz0 = oz * stride_d - pad_front;
    int ky_lo, ky_hi, kx_lo, kx_hi, kz_lo, kz_hi;
    if (undilated) {
      ky_lo = max(0, -iy0), ky_hi = min(k_h, in_h - iy0);
      kx_lo = max(0, -ix0), kx_hi = min(k_w, in_w - ix0);
      kz_lo = max(0, -iz0), kz_hi = min(k_d, in_d - iz0);
    } else {
      ky_lo = iy0 >= 0 ? 0 : (-iy0 + dil_h - 1) / dil_h;
      ky_hi = min(k_h, (in_h - iy0 + dil_h - 1) / dil_h);
      kx_lo = ix0 >= 0 ? 0 : (-ix0 + dil_w - 1) / dil_w;
      kx_hi = min(k_w, (in_w - ix0 + dil_w - 1) / dil_w);
      kz_lo = iz0 >= 0 ? 0 : (-iz0 + dil_d - 1) / dil_d;
      kz_hi = min(k_d, (in_d - iz0 + dil_d - 1) / dil_d);
    }
    float acc = 0.0;
    uint x_volume = (nb * uint(c_in) + uint(grp * c_in_g)) * volume;
    uint w_volume = uint(co) * uint(c_in_g) * k_volume;
    for (int ci = 0; ci < c_in_g; ci++, x_volume += volume, w_volume += k_volume) {
      for (int kz = kz_lo; kz < kz_hi; kz++) {
        const uint x_plane = x_volume + uint(iz0 + kz * dil_d) * plane;
        const uint w_plane = w_volume + uint(kz) * k_plane;
        for (int ky = ky_lo; ky < ky_hi; ky++) {
          const uint x_row = x_plane + uint(iy0 + ky * dil_h) * uint(in_w);
          const uint w_row = w_plane + uint(ky * k_w);
          for (int kx = kx_lo; kx < kx_hi; kx++)
            acc += elem_to_f(x.v[x_row + uint(ix0 + kx * dil_w)]) * elem_to_f(w.v[w_row + uint(kx)]);
        }
      }
    }
    if (has_bias != 0) acc += elem_to_f(In(pc.bias_addr).v[co]);
    if (residual == RES_ADD_THEN_ACT) acc += elem_to_f(In(pc.res_addr).v[uint(e)]);
    acc = activation_f(activation, acc, alpha, beta);
    if (residual == RES_ACT_THEN_ADD) acc += elem_to_f(In(pc.res_addr).v[uint(e)]);
    Out(pc.y_addr).v[uint(e)] = f_to_elem(acc);
  }
}
