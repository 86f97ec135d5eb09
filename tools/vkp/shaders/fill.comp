#version 450
// gfxep — vk_producer's fill shader: data[offset_floats + i] = base + step * ((i mod 1024) - 512)
// for i in [0, count). The host mirror is vkp_fill_value() in tools/vkp/vk_producer.h; keep them equal.
// A grid-stride loop lets one dispatch cover buffers larger than maxComputeWorkGroupCount[0] * 256.

layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) writeonly buffer Data { float data[]; };

layout(push_constant) uniform Params {
  uint count;
  float base;
  float step;
  uint offset_floats;
} params;

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < params.count; i += stride) {
    data[params.offset_floats + i] = params.base + params.step * (float(i % 1024u) - 512.0);
  }
}
