// gfxep Vulkan backend — ConvTranspose (1-D as 2-D of height 1, grouped, strided, dilated, padded)
// with its fused epilogue y = act(convT(x, w) + bias) (vk_nn.c). Direct, gathered: one output
// element per invocation sums every input pixel whose scatter lands on it, as conv_transpose_sum in
// src/backend/ref/ref_nn.c does (ih * stride + kh * dilation = oh + pad_begin), in float32;
// -DT_F16 loads and stores float16. W is [c_in, c_out / group, kH, kW]; the geometry is
// ir_conv_transpose_geometry's (src/ir/ops_nn.h), computed on the host. Tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
#if defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#define ELEM_ALIGN 2
#else
#define ELEM float
#define ELEM_ALIGN 4
#endif

#include "float_math.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, w_addr, bias_addr, y_addr, geom_addr;
} pc;

// conv_t_geom_gpu of vk_nn.c
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t count;  // output elements
  int n, c_in, c_out, group;
  int in_h, in_w, k_h, k_w;
  int out_h, out_w, stride_h, stride_w;
  int dil_h, dil_w, pad_top, pad_left;
  int activation, has_bias;
  float alpha, beta;
};
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };

void main() {
  Geom g = Geom(pc.geom_addr);
  In x = In(pc.x_addr);
  In w = In(pc.w_addr);
  const int64_t count = g.count;
  const int c_in_g = g.c_in / g.group, c_out_g = g.c_out / g.group;
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x);
  for (int64_t e = int64_t(gl_GlobalInvocationID.x); e < count; e += step) {
    int64_t r = e;
    const int ox = int(r % g.out_w); r /= g.out_w;
    const int oy = int(r % g.out_h); r /= g.out_h;
    const int co = int(r % g.c_out); r /= g.c_out;
    const int64_t nb = r;
    const int grp = co / c_out_g, cog = co % c_out_g;
    float acc = 0.0;
    for (int cg = 0; cg < c_in_g; cg++) {
      const int ci = grp * c_in_g + cg;
      const int64_t x_plane = (nb * g.c_in + ci) * int64_t(g.in_h) * int64_t(g.in_w);
      const int64_t w_plane = (int64_t(ci) * c_out_g + cog) * int64_t(g.k_h) * int64_t(g.k_w);
      for (int ky = 0; ky < g.k_h; ky++) {
        const int th = oy + g.pad_top - ky * g.dil_h;
        if (th < 0 || th % g.stride_h != 0) continue;
        const int iy = th / g.stride_h;
        if (iy >= g.in_h) continue;
        for (int kx = 0; kx < g.k_w; kx++) {
          const int tw = ox + g.pad_left - kx * g.dil_w;
          if (tw < 0 || tw % g.stride_w != 0) continue;
          const int ix = tw / g.stride_w;
          if (ix >= g.in_w) continue;
          acc += float(x.v[uint(x_plane + int64_t(iy) * g.in_w + ix)]) * float(w.v[uint(w_plane + ky * g.k_w + kx)]);
        }
      }
    }
    if (g.has_bias != 0) acc += float(In(pc.bias_addr).v[co]);
    Out(pc.y_addr).v[uint(e)] = ELEM(activation_f(g.activation, acc, g.alpha, g.beta));
  }
}
