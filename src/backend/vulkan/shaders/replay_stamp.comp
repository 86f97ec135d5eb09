// gfxep Vulkan backend — the end of a self-stamping replay (vk_stamps.c): files the replay's two
// timestamps, which vkCmdCopyQueryPoolResults left in `results`, into the ring entry the replay count
// picks, then advances the count. A recorded command buffer can only name fixed queries and offsets;
// this one invocation is what lets each replay land in its own entry with no host call.
//
// 64-bit values are kept as uvec2 (low, high) so that no shaderInt64 is needed. The entry is written
// as a sequence lock the host reads without waiting: `started`, then the figures, then `done`.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x = 1) in;

layout(push_constant) uniform Push {
  uvec2 results_addr; // two 64-bit timestamps: the replay's begin and end
  uvec2 counter_addr; // replays ended so far (64-bit)
  uvec2 ring_addr;    // `capacity` entries
  uint capacity;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Results { uvec2 t[2]; };
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer Counter { uvec2 n; };
struct Entry {
  uvec2 started; // replay + 1 of the replay writing or last written here
  uvec2 begin_ticks;
  uvec2 end_ticks;
  uvec2 done;    // replay + 1 once its figures are complete
};
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer Ring { Entry e[]; };

// a + 1 on (low, high)
uvec2 next(uvec2 a) { return a.x == 0xffffffffu ? uvec2(0u, a.y + 1u) : uvec2(a.x + 1u, a.y); }

// a mod c for a 64-bit a and a 32-bit c, without 64-bit types: (high * 2^32 + low) mod c
uint mod64(uvec2 a, uint c) {
  uint r = a.y % c;
  for (int b = 31; b >= 0; b--) {
    // r < c <= 2^32 - 1; doubling r may overflow 32 bits: compare before subtracting
    uint bit = (a.x >> uint(b)) & 1u;
    bool over = r >= 0x80000000u;
    r = (r << 1) | bit;
    if (over || r >= c) r -= c;
  }
  return r;
}

void main() {
  Counter counter = Counter(pc.counter_addr);
  Ring ring = Ring(pc.ring_addr);
  Results res = Results(pc.results_addr);
  uvec2 replay = counter.n;
  uvec2 mark = next(replay);
  uint i = mod64(replay, pc.capacity);
  ring.e[i].started = mark;
  memoryBarrierBuffer();
  ring.e[i].begin_ticks = res.t[0];
  ring.e[i].end_ticks = res.t[1];
  memoryBarrierBuffer();
  ring.e[i].done = mark;
  counter.n = mark;
}
