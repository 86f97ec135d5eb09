/* gfxep Vulkan backend — division of 32-bit unsigned integers by a divisor fixed per kernel launch,
 * as a multiply-high, an add and shifts (Granlund and Montgomery, "Division by invariant integers
 * using multiplication", 1994). A GPU has no integer divider: n / d by a divisor known only at run
 * time costs some twenty instructions, which bound the copy-plan kernel (four divisions per element).
 * The host computes each divisor's multiplier and shift once; copy_plan.comp's fast_div() is
 * vk_fastdiv_apply() below, step for step, which the unit test checks against `/`. */
#ifndef GFXEP_VK_FASTDIV_H
#define GFXEP_VK_FASTDIV_H

#include <stdint.h>

/* For d >= 1: with l = ceil(log2 d), mul = floor(2^32 (2^l - d) / d) + 1 and shift = l - 1; d = 1
 * takes neither (the quotient is n). */
static inline void vk_fastdiv_magic(uint32_t d, uint32_t* mul, uint32_t* shift) {
  *mul = 0;
  *shift = 0;
  if (d <= 1) return;
  uint32_t l = 0;
  while (l < 32 && ((uint64_t)1 << l) < d) l++;
  *mul = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << l) - d)) / d + 1);
  *shift = l - 1;
}

/* n / d for every n < 2^32. */
static inline uint32_t vk_fastdiv_apply(uint32_t n, uint32_t d, uint32_t mul, uint32_t shift) {
  if (d == 1) return n;
  const uint32_t t = (uint32_t)(((uint64_t)n * mul) >> 32);
  return (t + ((n - t) >> 1)) >> shift;
}

#endif
