// gfxep Vulkan backend — a plain copy (or zero fill) between device addresses, used where a copy is
// recorded into a partition that is replayed later (vk_graph.c): a vkCmdCopyBuffer names VkBuffer
// handles, which need not outlive the addresses the replay is keyed by; this shader names addresses
// only.
//
// Compiled once per unit (-DUNIT=4: 32-bit words, for 4-byte aligned addresses and sizes; -DUNIT=1:
// bytes, needs storageBuffer8BitAccess). Each invocation moves units with a grid stride.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#if UNIT == 1
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#define ELEM uint8_t
#define ZERO uint8_t(0)
#else
#define ELEM uint
#define ZERO 0u
#endif

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 src_addr; // ignored when zero_fill is set
  uvec2 dst_addr;
  uint count;     // units
  uint zero_fill;
} pc;

layout(buffer_reference, std430, buffer_reference_align = UNIT) readonly buffer Src { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = UNIT) writeonly buffer Dst { ELEM v[]; };

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  Dst dst = Dst(pc.dst_addr);
  if (pc.zero_fill != 0u) {
    for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) dst.v[i] = ZERO;
    return;
  }
  Src src = Src(pc.src_addr);
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) dst.v[i] = src.v[i];
}
