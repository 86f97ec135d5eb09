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
  // the depth of a 3-D ConvTranspose (1, 1, 1, 1, 1, 0 for 2-D): input, kernel, output, stride,
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
  const int activation = g.activation, has_bias = g.has_bias;
  const float alpha = g.alpha, beta = g.beta;
  const int in_d = g.in_d, k_d = g.k_d, out_d = g.out_d, stride_d = g.stride_d, dil_d = g.dil_d;
  const int pad_front = g.pad_front;
  const int c_in_g = c_in / group, c_out_g = c_out / group;
  const uint in_plane = uint(in_h) * uint(in_w), k_plane = uint(k_h) * uint(k_w);
  const uint in_volume = uint(in_d) * in_plane, k_volume = uint(k_d) * k_plane;
  const uint w_channel = uint(c_out_g) * k_volume; // w's step from one input channel to the next
  const int64_t step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x);
  for (int64_t e = int64_t(gl_GlobalInvocationID.x); e < count; e += step) {
    // every tensor has fewer than 2^32 elements (vk_nn.c checks): 32-bit offsets from here on
    uint r = uint(e);
    const int ox = int(r % uint(out_w)); r /= uint(out_w);
    const int oy = int(r % uint(out_h)); r /= uint(out_h);
    const int oz = int(r % uint(out_d)); r /= uint(out_d);
    const int co = int(r % uint(c_out)); r /= uint(c_out);
    const uint nb = r;
    const int grp = co / c_out_g, cog = co % c_out_g;
    const uint x_base = (nb * uint(c_in) + uint(grp * c_in_g)) * in_volume;
    const uint w_base = (uint(grp * c_in_g) * uint(c_out_g) + uint(cog)) * k_volume;
    float acc = 0.0;
    // the taps that reach this output are found once, then summed over the input channels
    for (int kz = 0; kz < k_d; kz++) {
      const int td = oz + pad_front - kz * dil_d;
      if (td < 0 || td % stride_d != 0) continue;
      const int iz = td / stride_d;
      if (iz >= in_d) continue;
      for (int ky = 0; ky < k_h; ky++) {
        const int th = oy + pad_top - ky * dil_h;
        if (th < 0 || th % stride_h != 0) continue;
        const int iy = th / stride_h;
        if (iy >= in_h) continue;
        for (int kx = 0; kx < k_w; kx++) {
          const int tw = ox + pad_left - kx * dil_w;
          if (tw < 0 || tw % stride_w != 0) continue;
          const int ix = tw / stride_w;
          if (ix >= in_w) continue;
          uint xi = x_base + uint(iz) * in_plane + uint(iy) * uint(in_w) + uint(ix);
          uint wi = w_base + uint(kz) * k_plane + uint(ky * k_w + kx);
          for (int cg = 0; cg < c_in_g; cg++, xi += in_volume, wi += w_channel)
            acc += elem_to_f(x.v[xi]) * elem_to_f(w.v[wi]);
        }
      }
    }
    if (has_bias != 0) acc += elem_to_f(In(pc.bias_addr).v[co]);
    Out(pc.y_addr).v[uint(e)] = f_to_elem(activation_f(activation, acc, alpha, beta));
  }
}
