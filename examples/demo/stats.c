#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int series_add(series* s, double value) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 256;
    double* v = realloc(s->v, cap * sizeof *v);
    if (!v) return -1;
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = value;
  return 0;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

double series_percentile(const series* s, double p) {
  if (!s->n) return NAN;
  double* c = malloc(s->n * sizeof *c);
  if (!c) return NAN;
  memcpy(c, s->v, s->n * sizeof *c);
  qsort(c, s->n, sizeof *c, cmp);
  double r = c[(size_t)(p * (double)(s->n - 1) + 0.5)];
  free(c);
  return r;
}

double series_mean(const series* s) {
  double sum = 0;
  for (size_t i = 0; i < s->n; i++) sum += s->v[i];
  return s->n ? sum / (double)s->n : NAN;
}

void series_free(series* s) {
  free(s->v);
  s->v = NULL;
  s->n = s->cap = 0;
}
