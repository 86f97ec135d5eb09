#version 450
// gfxep — the demo's animated procedural scene, rendered twice: clean and with Gaussian noise.
//
// Layout (also in tools/vkp/vk_producer.h):
//   set 0, binding 0: float clean[3 * height * width]  written, planar NCHW [1,3,H,W]:
//                     clean[c * H * W + y * W + x], c = 0 R, 1 G, 2 B; y = 0 is the top row
//   set 0, binding 1: float noisy[3 * height * width]  written, same layout
//   push constants (16 bytes): { uint width; uint height; uint frame; float noise_sigma; }
//   local size 16 x 16: dispatch ceil(width / 16) x ceil(height / 16) x 1 workgroups.
//
// clean is in [0, 1]: a gradient sky, a checkerboard floor below the horizon that scrolls towards
// the viewer with perspective-like scaling and fog, and three moving soft-edged shapes (a red disc,
// a green disc, a yellow ring). Time is frame / 60 (seconds at 60 frames per second).
// noisy = clean + noise_sigma * N(0, 1), NOT clamped, where the normal deviate comes from a stateless
// PCG hash of (x, y, frame, channel) through Box-Muller: the same frame gives the same image.

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, set = 0, binding = 0) writeonly buffer Clean { float clean[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Noisy { float noisy[]; };

layout(push_constant) uniform Params {
  uint width;
  uint height;
  uint frame;
  float noise_sigma;
} params;

const float TAU = 6.28318530718;
const float HORIZON = 0.62; // the floor starts this far down the image (0 top, 1 bottom)
const vec3 SKY_TOP = vec3(0.10, 0.22, 0.55);
const vec3 SKY_HORIZON = vec3(0.78, 0.86, 0.95);
const vec3 TILE_LIGHT = vec3(0.86, 0.82, 0.74);
const vec3 TILE_DARK = vec3(0.18, 0.20, 0.26);

// ---- noise: PCG-style integer hash -> two uniforms -> Box-Muller -----------------------------------

uint pcg_hash(uint v) {
  uint state = v * 747796405u + 2891336453u;
  uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

float gaussian(uint x, uint y, uint frame, uint channel) {
  uint h1 = pcg_hash(x + pcg_hash(y + pcg_hash(frame + pcg_hash(channel))));
  uint h2 = pcg_hash(h1 ^ 0x9e3779b9u);
  float u1 = (float(h1 >> 8) + 1.0) * (1.0 / 16777216.0); // (0, 1]: log(u1) is finite
  float u2 = float(h2 >> 8) * (1.0 / 16777216.0);         // [0, 1)
  return sqrt(-2.0 * log(u1)) * cos(TAU * u2);
}

// ---- the scene ---------------------------------------------------------------------------------

// coverage of a disc of radius r at distance d, with an edge about `soft` wide
float disc(float d, float r, float soft) { return 1.0 - smoothstep(r - soft, r + soft, d); }

vec3 background(vec2 p, float v, float t) {
  vec3 sky = mix(SKY_TOP, SKY_HORIZON, smoothstep(0.0, HORIZON, v));
  if (v <= HORIZON) return sky;
  float below = v - HORIZON;             // 0 at the horizon, growing towards the viewer
  float depth = 0.25 / below;            // perspective: rows near the horizon are far away
  vec2 ground = vec2(p.x * depth, depth + 1.5 * t); // the floor scrolls towards the viewer
  float tile = mod(floor(ground.x * 2.0) + floor(ground.y * 2.0), 2.0);
  vec3 floor_color = mix(TILE_DARK, TILE_LIGHT, tile);
  return mix(floor_color, SKY_HORIZON, exp(-12.0 * below)); // fog hides the aliasing far away
}

vec3 scene(vec2 p, float v, float t, float pixel) {
  vec3 color = background(p, v, t);
  float soft = 1.5 * pixel + 0.004;
  vec2 red_center = vec2(0.45 * sin(0.9 * t), 0.30 + 0.12 * cos(1.3 * t));
  vec2 green_center = vec2(0.50 * cos(0.6 * t + 1.0), 0.45 + 0.10 * sin(1.7 * t));
  vec2 ring_center = vec2(0.35 * sin(0.4 * t + 2.0), 0.25 + 0.08 * sin(2.1 * t));
  vec2 q = vec2(p.x, v);
  color = mix(color, vec3(0.95, 0.25, 0.20), disc(distance(q, red_center), 0.12, soft));
  color = mix(color, vec3(0.25, 0.85, 0.35), disc(distance(q, green_center), 0.09, soft));
  color = mix(color, vec3(1.00, 0.85, 0.20), disc(abs(distance(q, ring_center) - 0.15), 0.03, soft));
  return clamp(color, 0.0, 1.0);
}

void main() {
  uint x = gl_GlobalInvocationID.x;
  uint y = gl_GlobalInvocationID.y;
  uint w = params.width;
  uint h = params.height;
  if (x >= w || y >= h) return;
  float pixel = 1.0 / float(h);
  // p.x: centred and in units of the image height (round discs at any aspect ratio); v: 0 top, 1 bottom
  vec2 p = vec2((float(x) + 0.5 - 0.5 * float(w)) * pixel, (float(y) + 0.5) * pixel);
  float t = float(params.frame) / 60.0;
  vec3 color = scene(p, p.y, t, pixel);
  uint plane = w * h;
  uint i = y * w + x;
  for (uint c = 0u; c < 3u; c++) {
    clean[c * plane + i] = color[c];
    noisy[c * plane + i] = color[c] + params.noise_sigma * gaussian(x, y, params.frame, c);
  }
}
