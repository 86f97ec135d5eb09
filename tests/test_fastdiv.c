/* gfxep — the Vulkan copy-plan kernel's division by a multiplier and shifts (vk_fastdiv.h) against
 * C's `/`: every divisor up to 4096 and around each power of two, large and random divisors, and for
 * each the numerators where a rounding error would show (0, multiples of d and their neighbours, the
 * top of the range) and random ones.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "backend/vulkan/vk_fastdiv.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static size_t checked;

static void check_divisor(uint32_t d) {
  uint32_t mul, shift;
  vk_fastdiv_magic(d, &mul, &shift);
  const uint32_t fixed[] = {0u, 1u, d - 1u, d, d + 1u, 2u * d - 1u, 2u * d, UINT32_MAX, UINT32_MAX - 1u,
                            UINT32_MAX / d * d, UINT32_MAX / d * d - 1u, 0x80000000u, 0x7fffffffu};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    const uint32_t n = fixed[i];
    if (vk_fastdiv_apply(n, d, mul, shift) != n / d) fail_msg("%u / %u: got %u, want %u", n, d, vk_fastdiv_apply(n, d, mul, shift), n / d);
    checked++;
  }
  for (int i = 0; i < 64; i++) {
    const uint32_t n = next_u32();
    if (vk_fastdiv_apply(n, d, mul, shift) != n / d) fail_msg("%u / %u: got %u, want %u", n, d, vk_fastdiv_apply(n, d, mul, shift), n / d);
    checked++;
  }
}

static void test_small_divisors(void** state) {
  (void)state;
  for (uint32_t d = 1; d <= 4096; d++) check_divisor(d);
}

static void test_around_powers_of_two(void** state) {
  (void)state;
  for (int b = 1; b < 32; b++) {
    const uint32_t p = 1u << b;
    check_divisor(p - 1u);
    check_divisor(p);
    check_divisor(p + 1u);
  }
  check_divisor(UINT32_MAX);
  check_divisor(UINT32_MAX - 1u);
}

static void test_random_divisors(void** state) {
  (void)state;
  for (int i = 0; i < 20000; i++) {
    uint32_t d = next_u32() >> (next_u32() % 32); /* every magnitude */
    check_divisor(d ? d : 1u);
  }
  assert_true(checked > 1000000); /* the loops above did run */
}

static void test_every_numerator_for_tensor_dims(void** state) {
  (void)state;
  /* the dims of real layouts (a 1080p frame's, channel counts), every numerator up to 2^21 */
  const uint32_t dims[] = {3, 7, 24, 1080, 1920, 520, 197};
  for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
    uint32_t mul, shift;
    vk_fastdiv_magic(dims[k], &mul, &shift);
    for (uint32_t n = 0; n < (1u << 21); n++)
      if (vk_fastdiv_apply(n, dims[k], mul, shift) != n / dims[k]) fail_msg("%u / %u", n, dims[k]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_divisors),
      cmocka_unit_test(test_around_powers_of_two),
      cmocka_unit_test(test_random_divisors),
      cmocka_unit_test(test_every_numerator_for_tensor_dims),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
