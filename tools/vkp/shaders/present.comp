#version 450
// gfxep — the demo's side-by-side view: left image | right image as packed RGBA8.
//
// Layout (also in tools/vkp/vk_producer.h):
//   set 0, binding 0: float left[3 * height * width]   read, planar NCHW [1,3,H,W] (the noisy input)
//   set 0, binding 1: float right[3 * height * width]  read, same layout (the model's output)
//   set 0, binding 2: uint rgba[height * 2 * width]    written, row-major [H][2W], one pixel per uint:
//                     R in bits 0-7, G 8-15, B 16-23, A (always 255) 24-31, i.e. bytes R,G,B,A in
//                     memory on a little-endian host. Columns 0..W-1 show left, W..2W-1 right.
//   push constants (8 bytes): { uint width; uint height; }
//   local size 16 x 16: dispatch ceil(2 * width / 16) x ceil(height / 16) x 1 workgroups.
//
// Each channel is clamped to [0, 1] (NaN -> 0) and converted linearly, no gamma:
// byte = floor(v * 255 + 0.5), so 0.5 -> 128, 0.25 -> 64, 1.0 -> 255. Columns W-1 and W (the two
// pixels at the seam) are a dark divider, RGB (32, 32, 32), packed 0xFF202020.

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, set = 0, binding = 0) readonly buffer Left { float left[]; };
layout(std430, set = 0, binding = 1) readonly buffer Right { float right[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Rgba { uint rgba[]; };

layout(push_constant) uniform Params {
  uint width;
  uint height;
} params;

const uint DIVIDER = 0xFF202020u;

uint to_byte(float v) {
  float c = isnan(v) ? 0.0 : clamp(v, 0.0, 1.0);
  return uint(floor(c * 255.0 + 0.5));
}

void main() {
  uint ox = gl_GlobalInvocationID.x; // column in the [H][2W] output
  uint y = gl_GlobalInvocationID.y;
  uint w = params.width;
  uint h = params.height;
  if (ox >= 2u * w || y >= h) return;
  uint out_index = y * 2u * w + ox;
  if (ox == w - 1u || ox == w) {
    rgba[out_index] = DIVIDER;
    return;
  }
  bool is_left = ox < w;
  uint i = y * w + (is_left ? ox : ox - w);
  uint plane = w * h;
  vec3 color = is_left ? vec3(left[i], left[i + plane], left[i + 2u * plane])
                       : vec3(right[i], right[i + plane], right[i + 2u * plane]);
  rgba[out_index] = to_byte(color.r) | (to_byte(color.g) << 8) | (to_byte(color.b) << 16) | 0xFF000000u;
}
