// gfxep Vulkan backend — Conv (1-D as 2-D of height 1, grouped, depthwise, strided, dilated) with its
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
#else
#define ELEM float
#define ELEM_ALIGN 4
#endif

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
    const int grp = co / c_out_g;
    float acc = 0.0;
    for (int ci = 0; ci < c_in_g; ci++) {
      const int64_t x_plane = (nb * g.c_in + int64_t(grp * c_in_g + ci)) * int64_t(g.in_h) * int64_t(g.in_w);
      const int64_t w_plane = (int64_t(co) * c_in_g + ci) * int64_t(g.k_h) * int64_t(g.k_w);
      for (int ky = 0; ky < g.k_h; ky++) {
        const int iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
        if (iy < 0 || iy >= g.in_h) continue;
        for (int kx = 0; kx < g.k_w; kx++) {
          const int ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
          if (ix < 0 || ix >= g.in_w) continue;
          acc += float(x.v[uint(x_plane + int64_t(iy) * g.in_w + ix)]) * float(w.v[uint(w_plane + ky * g.k_w + kx)]);
        }
      }
    }
    if (g.has_bias != 0) acc += float(In(pc.bias_addr).v[co]);
    if (g.residual == RES_ADD_THEN_ACT) acc += float(In(pc.res_addr).v[uint(e)]);
    acc = activation_f(g.activation, acc, g.alpha, g.beta);
    if (g.residual == RES_ACT_THEN_ADD) acc += float(In(pc.res_addr).v[uint(e)]);
    Out(pc.y_addr).v[uint(e)] = ELEM(acc);
  }
}
