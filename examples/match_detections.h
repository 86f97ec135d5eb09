/* gfxep — detection lists compared as sets (gfxep-run --detections).
 *
 * A detector's post-processing (score threshold, TopK, non-maximum suppression, a cap on the count)
 * sorts and cuts: two detections whose scores differ in the last bits can swap places, one of two
 * overlapping boxes of near-equal score can be the one kept, and a detection at the tail can fall on
 * either side of the cut. Compared element by element, such lists disagree by a whole box although
 * every detection agrees. Compared as sets, each reference detection must meet a detection of the
 * other list with the same label, its score within score_tol and every box coordinate within box_tol
 * (each plus rtol of the reference value);
 * a detection left over on either side is excused only where post-processing could have cut or
 * swapped it: its score within score_tol of the other list's lowest (the tail), or a detection of the
 * other list, left over as well, with the same label, a score within score_tol, IoU >= 0.5 and a
 * coordinate more than 10 x box_tol away (each list kept a different one of two overlapping boxes;
 * closer, it is one box computed wrongly). Anything else fails. */
#ifndef GFXEP_MATCH_DETECTIONS_H
#define GFXEP_MATCH_DETECTIONS_H

#include <stddef.h>

/* One list: n detections, boxes[4 n] (x1, y1, x2, y2), scores[n], labels[n] (as floats). */
typedef struct detection_list {
  const float *boxes, *scores, *labels;
  size_t n;
} detection_list;

typedef struct detection_match {
  size_t matched;           /* pairs that agree */
  size_t excused_tail;      /* left over at the tail of either list */
  size_t excused_overlap;   /* left over beside an overlapping twin of near-equal score */
  size_t unmatched;         /* left over without an excuse: these fail the comparison */
  double max_box_err;       /* over the matched pairs */
  double max_score_err;
} detection_match;

/* Compares `got` against the reference `ref`: a value agrees within tol + rtol x |reference value|
 * (tol: box_tol for coordinates, score_tol for scores). Returns 0 when the lists agree (unmatched ==
 * 0), 1 when not, -1 when out of memory. */
int match_detections(const detection_list* got, const detection_list* ref, double box_tol, double score_tol,
                     double rtol, detection_match* out);

#endif
