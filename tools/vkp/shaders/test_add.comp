#version 450
// gfxep — vk_producer's test shader for the generic dispatch API (tests/test_vk_producer.c):
// sum[i] = a[i] + b[i] for i in [0, count).
//   set 0, binding 0: float a[]    (read)
//   set 0, binding 1: float b[]    (read)
//   set 0, binding 2: float sum[]  (written)
//   push constants:   { uint count; }  (4 bytes)
// Dispatch ceil(count / 64) x 1 x 1 workgroups.

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Sum { float sum[]; };

layout(push_constant) uniform Params {
  uint count;
} params;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < params.count) sum[i] = a[i] + b[i];
}
