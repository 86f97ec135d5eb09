/* gfxep fuzz targets — what every target shares: the invariant checks, which trap so that libFuzzer
 * keeps the input, and the byte reader that turns the fuzzer's input into decisions. A target
 * defines FUZZ_TARGET (its name, for the messages) before including this.
 */
#ifndef GFXEP_FUZZ_COMMON_H
#define GFXEP_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifndef FUZZ_TARGET
#error "define FUZZ_TARGET before including fuzz_common.h"
#endif

#define FAIL(...)                                                                         \
  do {                                                                                    \
    fprintf(stderr, FUZZ_TARGET ": invariant violated (%s:%d): ", __FILE__, __LINE__);    \
    fprintf(stderr, __VA_ARGS__);                                                         \
    fprintf(stderr, "\n");                                                                \
    __builtin_trap();                                                                     \
  } while (0)
#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) FAIL(__VA_ARGS__); \
  } while (0)

/* ---- the byte reader: past the end every read is 0 ---- */

typedef struct reader {
  const uint8_t* p;
  size_t n, i;
} reader;

static inline uint8_t u8(reader* r) { return r->i < r->n ? r->p[r->i++] : 0; }

/* little-endian */
static inline uint32_t u32(reader* r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)u8(r) << (8 * i);
  return v;
}

static inline uint64_t u64(reader* r) {
  uint64_t lo = u32(r); /* two statements: the order of the reads is defined */
  return lo | (uint64_t)u32(r) << 32;
}

/* 1 with probability about num/256 */
static inline int chance(reader* r, int num) { return u8(r) < num; }

/* an element of a static array */
#define PICK(r, table) ((table)[u8(r) % (sizeof(table) / sizeof((table)[0]))])

#endif
