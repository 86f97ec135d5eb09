// gfxep Vulkan backend — BatchNormalization, inference (vk_misc.c): per channel c (dim 1),
// y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c], as ref_run_batchnorm
// (src/backend/ref/ref_elementwise.c) in float32 arithmetic; -DT_F16 loads and stores float16,
// -DT_BF16 bfloat16.
// x is seen as [N, C, inner]; 32-bit indices (tensors below 2^32 elements).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
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

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, scale_addr, bias_addr, mean_addr, var_addr, y_addr;
  uint count, inner, channels;
  float epsilon;
} pc;

layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer Out { ELEM v[]; };

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < count; i = count - i > step ? i + step : count) {
    const uint c = i / pc.inner % pc.channels;
    const float x = elem_to_f(In(pc.x_addr).v[i]);
    const float scale = elem_to_f(In(pc.scale_addr).v[c]), bias = elem_to_f(In(pc.bias_addr).v[c]);
    const float mean = elem_to_f(In(pc.mean_addr).v[c]), var = elem_to_f(In(pc.var_addr).v[c]);
    Out(pc.y_addr).v[i] = f_to_elem((x - mean) / sqrt(var + pc.epsilon) * scale + bias);
  }
}
