/* gfxep demo — per-frame samples and their percentiles. */
#ifndef GFXEP_DEMO_STATS_H
#define GFXEP_DEMO_STATS_H

#include <stddef.h>

typedef struct series {
  const char* name;
  double* v;
  size_t n, cap;
} series;

int series_add(series* s, double value);
/* p in [0, 1]; NAN for an empty series. Sorts a copy. */
double series_percentile(const series* s, double p);
double series_mean(const series* s);
void series_free(series* s);

#endif
