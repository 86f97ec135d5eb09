/* gfxep CUDA backend — the warp-level tensor-core product the hand-written kernels share
 * (cuda_attention_tiled.cu, cuda_conv_narrow.cu): mma.sync.m16n8k16 on float16 or bfloat16 with
 * float32 accumulators, compute capability 8.0 and later; and m16n8k8 on TF32 (cuda_conv_tf32x3.cu,
 * at the end).
 *
 * The register layout is PTX's documented one. With lane's group g = lane / 4 and t = lane % 4:
 *   A (16x16, row-major): a[0] = A[g][2t, 2t+1], a[1] = A[g+8][2t, 2t+1], a[2] = A[g][2t+8, 2t+9],
 *                         a[3] = A[g+8][2t+8, 2t+9]
 *   B (16x8, column-major): b0 = B[2t, 2t+1][g], b1 = B[2t+8, 2t+9][g]
 *   C (16x8, float32): c[0], c[1] = C[g][2t, 2t+1]; c[2], c[3] = C[g+8][2t, 2t+1]
 * each register holding two 16-bit elements, the first (lower column or row) in the low half.
 *
 * Device code for older architectures compiles to nothing: the host chooses these kernels only on
 * devices of compute capability 8.0 or later. */
#ifndef GFXEP_BACKEND_CUDA_MMA_CUH
#define GFXEP_BACKEND_CUDA_MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GFX_CUDA_MMA 1
#endif

template <typename T>
struct cuda_mma_traits;

template <>
struct cuda_mma_traits<__half> {
  /* c += a b: a 16x16 (row), b 16x8 (col), c 16x8 float32 */
  static __device__ __forceinline__ void mma(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
#ifdef GFX_CUDA_MMA
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    (void)c, (void)a, (void)b0, (void)b1;
#endif
  }
  /* two floats rounded into one register, lo in the low half (the lower column or row) */
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
};

template <>
struct cuda_mma_traits<__nv_bfloat16> {
  static __device__ __forceinline__ void mma(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
#ifdef GFX_CUDA_MMA
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    (void)c, (void)a, (void)b0, (void)b1;
#endif
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
};

/* c += a b on TF32 operands (each register one 32-bit value whose low 13 mantissa bits are ignored):
 * mma.sync.m16n8k8, a 16x8 (row), b 8x8 (col), c 16x8 float32. The register layout, with g = lane / 4
 * and t = lane % 4: a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]; b0 = B[t][g],
 * b1 = B[t+4][g]; c as above (cuda_conv_tf32x3.cu). */
__device__ __forceinline__ void cuda_mma_tf32(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
#ifdef GFX_CUDA_MMA
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  (void)c, (void)a, (void)b0, (void)b1;
#endif
}

/* d = a b, the same product started from zero accumulators (no registers zeroed for it). */
__device__ __forceinline__ void cuda_mma_tf32_from_zero(float* d, const uint32_t* a, uint32_t b0, uint32_t b1) {
#ifdef GFX_CUDA_MMA
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%10,%10,%10,%10};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
#else
  d[0] = d[1] = d[2] = d[3] = 0.0f;
  (void)a, (void)b0, (void)b1;
#endif
}

#endif
