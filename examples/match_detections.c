/* gfxep — detection lists compared as sets (see match_detections.h). */
#include "match_detections.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int within(double got, double ref, double tol, double rtol) {
  return fabs(got - ref) <= tol + rtol * fabs(ref); /* false for NaN */
}

/* The largest coordinate difference of two boxes when every coordinate is within tolerance, else -1. */
static double box_error(const float* got, const float* ref, double tol, double rtol) {
  double worst = 0;
  for (int c = 0; c < 4; c++) {
    if (!within(got[c], ref[c], tol, rtol)) return -1;
    if (fabs((double)got[c] - ref[c]) > worst) worst = fabs((double)got[c] - ref[c]);
  }
  return worst;
}

static double iou(const float* a, const float* b) {
  const double w = fmin(a[2], b[2]) - fmax(a[0], b[0]), h = fmin(a[3], b[3]) - fmax(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const double inter = w * h;
  const double area_a = ((double)a[2] - a[0]) * ((double)a[3] - a[1]), area_b = ((double)b[2] - b[0]) * ((double)b[3] - b[1]);
  return inter / (area_a + area_b - inter);
}

/* Whether two boxes are two predictions rather than one computed twice: some coordinate differs by
 * more than ten times the tolerance (a box merely off by more than the tolerance must fail). */
static int distinct(const float* a, const float* b, double box_tol) {
  for (int c = 0; c < 4; c++)
    if (fabs((double)a[c] - b[c]) > 10 * box_tol) return 1;
  return 0;
}

/* Counts detection i of `list`, left over, as excused (at the other list's tail, or beside an
 * overlapping twin of near-equal score there that is left over too: the two lists kept different
 * boxes of one object) or unmatched. A twin that found its own match does not excuse it: that would
 * pass a duplicate that suppression should have removed. */
static void leftover(const detection_list* list, size_t i, const detection_list* other, const uint8_t* other_matched,
                     double box_tol, double score_tol, double rtol, detection_match* m) {
  const float score = list->scores[i];
  if (other->n) {
    float lowest = other->scores[0];
    for (size_t k = 1; k < other->n; k++)
      if (other->scores[k] < lowest) lowest = other->scores[k];
    if (score <= lowest + score_tol + rtol * fabs(lowest)) {
      m->excused_tail++;
      return;
    }
  }
  for (size_t k = 0; k < other->n; k++)
    if (!other_matched[k] && other->labels[k] == list->labels[i] && within(other->scores[k], score, score_tol, rtol) &&
        iou(&other->boxes[4 * k], &list->boxes[4 * i]) >= 0.5 &&
        distinct(&other->boxes[4 * k], &list->boxes[4 * i], box_tol)) {
      m->excused_overlap++;
      return;
    }
  m->unmatched++;
}

int match_detections(const detection_list* got, const detection_list* ref, double box_tol, double score_tol,
                     double rtol, detection_match* out) {
  memset(out, 0, sizeof *out);
  uint8_t* used = calloc(got->n + 1, 1);
  uint8_t* met = calloc(ref->n + 1, 1);
  if (!used || !met) {
    free(used);
    free(met);
    return -1;
  }
  /* each reference detection, in the reference's order (by score), takes the closest free one */
  for (size_t i = 0; i < ref->n; i++) {
    size_t best = got->n;
    double best_err = INFINITY;
    for (size_t j = 0; j < got->n; j++) {
      if (used[j] || got->labels[j] != ref->labels[i] || !within(got->scores[j], ref->scores[i], score_tol, rtol))
        continue;
      const double e = box_error(&got->boxes[4 * j], &ref->boxes[4 * i], box_tol, rtol);
      if (e >= 0 && e < best_err) {
        best = j;
        best_err = e;
      }
    }
    if (best == got->n) continue;
    used[best] = met[i] = 1;
    out->matched++;
    if (best_err > out->max_box_err) out->max_box_err = best_err;
    const double se = fabs((double)got->scores[best] - ref->scores[i]);
    if (se > out->max_score_err) out->max_score_err = se;
  }
  for (size_t i = 0; i < ref->n; i++)
    if (!met[i]) leftover(ref, i, got, used, box_tol, score_tol, rtol, out);
  for (size_t j = 0; j < got->n; j++)
    if (!used[j]) leftover(got, j, ref, met, box_tol, score_tol, rtol, out);
  free(used);
  free(met);
  return out->unmatched ? 1 : 0;
}
