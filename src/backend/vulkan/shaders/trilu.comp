// gfxep Vulkan backend — Trilu (vk_index.c): the upper (on or above diagonal k) or lower (on or
// below it) triangle of each matrix of the last two dims, zeros elsewhere, as ref_index.c's
// ref_run_trilu. One source per element size (-DELEM_SIZE=1, 2, 4 or 8; elements move as bits,
// 8-byte ones as uvec2, so any element type is exact). rows and cols are below 2^31 and k is
// clamped to +-(2^31 - 1) on the host, which keeps col - row and the comparison in int exact.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#if ELEM_SIZE == 1
#extension GL_EXT_shader_8bit_storage : require
#define ELEM uint8_t
#define WIDE uint
#elif ELEM_SIZE == 2
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#define WIDE uint
#elif ELEM_SIZE == 4
#define ELEM uint
#define WIDE uint
#else
#define ELEM uvec2
#define WIDE uvec2
#endif

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, y_addr;
  uint count, rows, cols, upper;
  int k;
} pc;

layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_SIZE) writeonly buffer Out { ELEM v[]; };

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    const int col = int(e % pc.cols), row = int(e / pc.cols % pc.rows);
    const bool keep = pc.upper != 0u ? col - row >= pc.k : col - row <= pc.k;
    Out(pc.y_addr).v[e] = keep ? In(pc.x_addr).v[e] : ELEM(WIDE(0));
  }
}
