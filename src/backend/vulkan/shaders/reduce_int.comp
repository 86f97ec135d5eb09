// gfxep Vulkan backend — ReduceSum / ReduceMax / ReduceMin / ReduceProd of int32 (-DT_I32) or int64
// (-DT_I64) tensors (vk_reduce.c). One workgroup per output element, as reduce.comp: its invocations
// stride over the reduced elements and combine through shared memory. The arithmetic is int64 and
// wraps, so an int32 sum or product is the int64 one truncated (the same value modulo 2^32, as the
// reference's wrapping int32 arithmetic gives); an empty Max / Min is the type's lowest / highest
// value, an empty Sum 0 and an empty Prod 1. The Geom block is vk_reduce.c's reduce_geom_gpu.
// Tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#define GROUP 256
#define MAX_RANK 8
layout(local_size_x = GROUP) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, scale_addr, bias_addr, y_addr, geom_addr;
} pc;

#if defined(T_I32)
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer In { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Out { int v[]; };
const int64_t LOWEST = -2147483648l, HIGHEST = 2147483647l;
void store_y(int64_t i, int64_t v) { Out(pc.y_addr).v[uint(i)] = int(v); }
#else
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer In { int64_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Out { int64_t v[]; };
const int64_t HIGHEST = 9223372036854775807l, LOWEST = -HIGHEST - 1l;
void store_y(int64_t i, int64_t v) { Out(pc.y_addr).v[uint(i)] = v; }
#endif
int64_t load_x(int64_t i) { return int64_t(In(pc.x_addr).v[uint(i)]); }

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Geom {
  int64_t out_count, reduce_count;
  int kind, n_kept, n_red, pad0;
  int64_t kept_dims[MAX_RANK], kept_strides[MAX_RANK];
  int64_t red_dims[MAX_RANK], red_strides[MAX_RANK];
};

// ir_reduce_kind's codes (ir/graph.h)
#define R_SUM 0
#define R_MAX 2
#define R_MIN 3
#define R_PROD 9

int64_t combine2(int64_t a, int64_t b, int kind) {
  return kind == R_MAX ? max(a, b) : kind == R_MIN ? min(a, b) : kind == R_PROD ? a * b : a + b;
}

shared int64_t red[GROUP];

// v combined over the workgroup; every invocation gets the result. Called in uniform control flow.
int64_t group_combine(int64_t v, int kind) {
  const uint t = gl_LocalInvocationID.x;
  red[t] = v;
  barrier();
  for (uint s = GROUP / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = combine2(red[t], red[t + s], kind);
    barrier();
  }
  const int64_t r = red[0];
  barrier();
  return r;
}

int64_t offset_of(int64_t linear, int n, bool kept, Geom g) {
  int64_t off = 0;
  for (int d = n - 1; d >= 0; d--) {
    const int64_t dim = kept ? g.kept_dims[d] : g.red_dims[d];
    off += (linear % dim) * (kept ? g.kept_strides[d] : g.red_strides[d]);
    linear /= dim;
  }
  return off;
}

void main() {
  Geom g = Geom(pc.geom_addr);
  const int kind = g.kind;
  const int64_t identity = kind == R_MAX ? LOWEST : kind == R_MIN ? HIGHEST : kind == R_PROD ? 1l : 0l;
  for (int64_t o = int64_t(gl_WorkGroupID.x); o < g.out_count; o += int64_t(gl_NumWorkGroups.x)) {
    const int64_t base = offset_of(o, g.n_kept, true, g);
    int64_t acc = identity;
    for (int64_t r = int64_t(gl_LocalInvocationID.x); r < g.reduce_count; r += GROUP)
      acc = combine2(acc, load_x(base + offset_of(r, g.n_red, false, g)), kind);
    acc = group_combine(acc, kind);
    if (gl_LocalInvocationID.x == 0) store_y(o, acc);
  }
}
