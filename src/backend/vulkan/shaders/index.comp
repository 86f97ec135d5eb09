// gfxep Vulkan backend — GatherElements, GatherND, ScatterElements and ScatterND (vk_index.c), as
// ref_index.c computes them over the IR's geometry (ir/ops_index.h), 32-bit offsets (tensors below
// 2^32 elements).
//
// KIND (a specialization constant) picks the kernel: 0 GatherElements (one invocation per index
// entry), 1 GatherND (per output element), 2 ScatterElements (per line along the axis, its updates
// in index order: the only updates that can meet on one element, so no atomics and the reference's
// order), 3 ScatterND with reduction none (per update element; duplicate tuples are undefined in
// ONNX), 4 ScatterND with a reduction (per slice element, the tuples in order). RED is the
// reduction (ir_scatter_reduction); IDX64 whether indices are int64 (read as two 32-bit words: no
// shaderInt64 needed for them).
//
// -DELEM_SIZE=1, 2, 4 or 8: elements move as bits (gathers and reduction none, any element type);
// -DT_F32, -DT_F16, -DT_BF16, -DT_I32, -DT_I64: the reductions, in float (float16 and bfloat16 too,
// rounded to their type at each store) or in wrapping integer arithmetic.
//
// An index outside [-dim, dim) cannot be reported from a shader: a gather writes zeros for it, a
// scatter skips its update; nothing is read or written outside a tensor.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#if defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#define WIDE float
#define ALIGN 2
#elif defined(T_F32)
#define ELEM float
#define WIDE float
#define ALIGN 4
#elif defined(T_BF16)
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#define WIDE float
#define ALIGN 2
// bfloat16 as bits: widened exactly, narrowed to nearest even (NaN stays a quiet NaN), as the
// other backends' conversions do
#define LOAD(x) uintBitsToFloat(uint(x) << 16)
#define STORE(x) uint16_t(bf16_bits(x))
uint bf16_bits(float f) {
  const uint b = floatBitsToUint(f);
  if (isnan(f)) return (b >> 16) | 0x40u;
  return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
}
#elif defined(T_I32)
#define ELEM int
#define WIDE int
#define ALIGN 4
#elif defined(T_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define ELEM int64_t
#define WIDE int64_t
#define ALIGN 8
#elif ELEM_SIZE == 1
#extension GL_EXT_shader_8bit_storage : require
#define ELEM uint8_t
#define WIDE uint
#define ALIGN 1
#define MOVE
#elif ELEM_SIZE == 2
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#define WIDE uint
#define ALIGN 2
#define MOVE
#elif ELEM_SIZE == 4
#define ELEM uint
#define WIDE uint
#define ALIGN 4
#define MOVE
#else
#define ELEM uvec2
#define WIDE uvec2
#define ALIGN 8
#define MOVE
#endif

#ifndef LOAD
#define LOAD(x) WIDE(x)
#define STORE(x) ELEM(x)
#endif

#define MAX_RANK 8
#define RED_ADD 1
#define RED_MUL 2
#define RED_MAX 3
#define RED_MIN 4

layout(local_size_x = 256) in;
layout(constant_id = 0) const int KIND = 0;
layout(constant_id = 1) const int RED = 0;
layout(constant_id = 2) const int IDX64 = 0;

layout(push_constant) uniform Push {
  uvec2 data_addr, idx_addr, upd_addr, out_addr, geom_addr;
} pc;

// vk_index.c's index_geom_gpu
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Geom {
  uint count; // invocations' work items
  uint rank, axis, axis_dim;
  uint idx_dims[MAX_RANK], idx_strides[MAX_RANK], data_strides[MAX_RANK];
  uint n, slice, data_batch_stride, m;
  uint nd_dims[MAX_RANK], nd_strides[MAX_RANK];
};
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Idx32 { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Idx64 { uvec2 v[]; }; // (low, high)
layout(buffer_reference, std430, buffer_reference_align = ALIGN) readonly buffer Src { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ALIGN) buffer Dst { ELEM v[]; };

// Index entry j resolved against n (below 2^31), or false outside [-n, n).
bool resolve(uint j, uint n, out uint k) {
  k = 0u;
  if (IDX64 != 0) {
    const uvec2 w = Idx64(pc.idx_addr).v[j];
    if (w.y == 0u && w.x < n) { k = w.x; return true; }
    if (n > 0u && w.y == 0xffffffffu && w.x >= 0u - n) { k = w.x + n; return true; }
    return false;
  }
  int v = Idx32(pc.idx_addr).v[j];
  if (v < 0) v += int(n);
  if (v < 0 || uint(v) >= n) return false;
  k = uint(v);
  return true;
}

// the data offset of GatherElements/ScatterElements index entry e
bool elements_offset(Geom g, uint e, out uint off) {
  off = 0u;
  uint k;
  if (!resolve(e, g.axis_dim, k)) return false;
  uint rest = e;
  for (int d = int(g.rank) - 1; d >= 0; d--) {
    const uint c = rest % g.idx_dims[d];
    rest /= g.idx_dims[d];
    off += (uint(d) == g.axis ? k : c) * g.data_strides[d];
  }
  return true;
}

// the data offset of the slice GatherND/ScatterND tuple t selects
bool nd_offset(Geom g, uint t, out uint off) {
  off = t / g.n * g.data_batch_stride;
  for (uint i = 0u; i < g.m; i++) {
    uint k;
    if (!resolve(t * g.m + i, g.nd_dims[i], k)) return false;
    off += k * g.nd_strides[i];
  }
  return true;
}

void apply(uint at, uint from) {
#if defined(MOVE)
  Dst(pc.out_addr).v[at] = ELEM(WIDE(Src(pc.upd_addr).v[from]));
#else
  const WIDE cur = LOAD(Dst(pc.out_addr).v[at]), v = LOAD(Src(pc.upd_addr).v[from]);
  WIDE r = v;
  if (RED == RED_ADD) r = cur + v;
  if (RED == RED_MUL) r = cur * v;
  if (RED == RED_MAX) r = cur < v ? v : cur;
  if (RED == RED_MIN) r = v < cur ? v : cur;
  Dst(pc.out_addr).v[at] = STORE(r);
#endif
}

void main() {
  Geom g = Geom(pc.geom_addr);
  const uint count = g.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint w = gl_GlobalInvocationID.x; w < count; w = count - w > step ? w + step : count) {
    uint off;
    if (KIND == 0) {
#if defined(MOVE)
      const WIDE v = elements_offset(g, w, off) ? WIDE(Src(pc.data_addr).v[off]) : WIDE(0);
      Dst(pc.out_addr).v[w] = ELEM(v);
#endif
    } else if (KIND == 1) {
#if defined(MOVE)
      const WIDE v = nd_offset(g, w / g.slice, off) ? WIDE(Src(pc.data_addr).v[off + w % g.slice]) : WIDE(0);
      Dst(pc.out_addr).v[w] = ELEM(v);
#endif
    } else if (KIND == 2) {
      const uint len = g.idx_dims[g.axis], inner = g.idx_strides[g.axis];
      const uint first = w / inner * len * inner + w % inner;
      for (uint j = 0u; j < len; j++) {
        const uint e = first + j * inner;
        if (elements_offset(g, e, off)) apply(off, e);
      }
    } else if (KIND == 3) {
      if (nd_offset(g, w / g.slice, off)) apply(off + w % g.slice, w);
    } else {
      const uint b = w / g.slice, s = w % g.slice;
      for (uint t = b * g.n; t < (b + 1u) * g.n; t++)
        if (nd_offset(g, t, off)) apply(off + s, t * g.slice + s);
    }
  }
}
