// gfxep Vulkan backend — Range (vk_index.c): y[i] = start + i * delta with start and delta read at
// parse time, as ref_index.c's ref_run_range. -DT_F32: in float (one fma, so one rounding where the
// device fuses it; the reference rounds the double result once), -DT_I32 and -DT_I64: wrapping
// integer arithmetic. Below 2^31 elements (the parse limit).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#if defined(T_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define ELEM int64_t
#define ALIGN 8
#elif defined(T_I32)
#define ELEM int
#define ALIGN 4
#else
#define ELEM float
#define ALIGN 4
#endif

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 y_addr;
  uvec2 start, delta; // the bits of a float (low word), an int or an int64 (low, high)
  uint count;
} pc;

layout(buffer_reference, std430, buffer_reference_align = ALIGN) writeonly buffer Out { ELEM v[]; };

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < count; i = count - i > step ? i + step : count) {
#if defined(T_I64)
    const uint64_t s = pack64(pc.start), d = pack64(pc.delta);
    Out(pc.y_addr).v[i] = int64_t(s + uint64_t(i) * d);
#elif defined(T_I32)
    Out(pc.y_addr).v[i] = int(pc.start.x + i * pc.delta.x);
#else
    Out(pc.y_addr).v[i] = fma(float(i), uintBitsToFloat(pc.delta.x), uintBitsToFloat(pc.start.x));
#endif
  }
}
