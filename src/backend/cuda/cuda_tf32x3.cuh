/* gfxep CUDA backend — float32 products on TF32 tensor cores in float32's accuracy, shared by the
 * float32 convolution kernels (cuda_conv_tf32x3.cu).
 *
 * A TF32 operand keeps 11 of a float's 24 significant bits. Split each operand into a TF32 head and a
 * TF32 tail (v = head + tail, the tail the rounding error of the head, itself rounded) and
 * a·b = a_head·b_head + a_head·b_tail + a_tail·b_head + a_tail·b_tail; the last term is below
 * float32's own rounding of the product (2^-22 of it) and is dropped. Three tensor-core products per
 * product, summed in float32.
 *
 * mma.sync.m16n8k8 .tf32 register layout (PTX), with lane's group g = lane / 4 and t = lane % 4:
 *   A (16x8, row-major): a[0] = A[g][t], a[1] = A[g+8][t], a[2] = A[g][t+4], a[3] = A[g+8][t+4]
 *   B (8x8, column-major): b0 = B[t][g], b1 = B[t+4][g]
 *   C (16x8, float32): c[0], c[1] = C[g][2t, 2t+1]; c[2], c[3] = C[g+8][2t, 2t+1]
 * Device code for older architectures compiles to nothing: the host chooses these kernels only on
 * devices of compute capability 8.0 or later. */
#ifndef GFXEP_BACKEND_CUDA_TF32X3_CUH
#define GFXEP_BACKEND_CUDA_TF32X3_CUH

#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GFX_TF32_MMA 1
#endif

__device__ __forceinline__ uint32_t cuda_to_tf32(float f) {
#ifdef GFX_TF32_MMA
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(f));
  return r;
#else
  return __float_as_uint(f);
#endif
}

/* v = head + tail, both TF32: v rounded, and what that rounding left, rounded. */
__device__ __forceinline__ void cuda_tf32_split(float v, uint32_t& head, uint32_t& tail) {
  head = cuda_to_tf32(v);
  tail = cuda_to_tf32(v - __uint_as_float(head));
}

/* c += a b: a 16x8 (row), b 8x8 (col), TF32 operands, float32 sums. */
__device__ __forceinline__ void cuda_mma_tf32(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
#ifdef GFX_TF32_MMA
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  (void)c, (void)a, (void)b0, (void)b1;
#endif
}

/* c += a b in float32's accuracy from split operands: the small cross terms first, while the sum is
 * still small, then the heads' product. */
__device__ __forceinline__ void cuda_mma_tf32x3(float* c, const uint32_t* a_head, const uint32_t* a_tail,
                                                uint32_t b_head0, uint32_t b_head1, uint32_t b_tail0,
                                                uint32_t b_tail1) {
  cuda_mma_tf32(c, a_tail, b_head0, b_head1);
  cuda_mma_tf32(c, a_head, b_tail0, b_tail1);
  cuda_mma_tf32(c, a_head, b_head0, b_head1);
}

#endif
