/* gfxep — gfxep-run's comparison of detection lists as sets (examples/match_detections.c): what it
 * lets through (near-tied detections in another order, a cut at the tail, each list keeping a
 * different one of two overlapping boxes) and what it must catch (a moved box, a wrong label, a score
 * off, a duplicate that suppression should have removed, a missing detection, NaN).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "match_detections.h"

#define MAX_DET 8
typedef struct dets {
  float boxes[4 * MAX_DET], scores[MAX_DET], labels[MAX_DET];
  size_t n;
} dets;

static void add(dets* d, float x1, float y1, float x2, float y2, float score, float label) {
  const size_t i = d->n++;
  d->boxes[4 * i] = x1;
  d->boxes[4 * i + 1] = y1;
  d->boxes[4 * i + 2] = x2;
  d->boxes[4 * i + 3] = y2;
  d->scores[i] = score;
  d->labels[i] = label;
}

static detection_list list_of(const dets* d) {
  return (detection_list){.boxes = d->boxes, .scores = d->scores, .labels = d->labels, .n = d->n};
}

/* three detections sorted by score, as a detector returns them */
static dets reference(void) {
  dets d = {.n = 0};
  add(&d, 10, 10, 50, 60, 0.90f, 1);
  add(&d, 100, 20, 140, 90, 0.60f, 3);
  add(&d, 200, 200, 260, 280, 0.30f, 1);
  return d;
}

static int compare(const dets* got, const dets* ref, detection_match* m) {
  const detection_list g = list_of(got), r = list_of(ref);
  return match_detections(&g, &r, 0.05, 0.01, 0.0, m);
}

static void test_identical_lists_match(void** state) {
  (void)state;
  const dets ref = reference();
  detection_match m;
  assert_int_equal(compare(&ref, &ref, &m), 0);
  assert_int_equal(m.matched, 3);
  assert_int_equal(m.unmatched, 0);
  assert_true(m.max_box_err == 0.0);
}

static void test_near_tie_in_another_order_matches(void** state) {
  (void)state;
  dets ref = {.n = 0}, got = {.n = 0};
  add(&ref, 10, 10, 50, 60, 0.500f, 1);
  add(&ref, 300, 10, 350, 60, 0.499f, 2);
  add(&got, 300.01f, 10, 350, 60, 0.5001f, 2); /* the scores cross: the order flips */
  add(&got, 10, 10, 50.02f, 60, 0.4995f, 1);
  detection_match m;
  assert_int_equal(compare(&got, &ref, &m), 0);
  assert_int_equal(m.matched, 2);
  assert_true(m.max_box_err > 0.019 && m.max_box_err < 0.021);
}

static void test_moved_box_fails(void** state) {
  (void)state;
  const dets ref = reference();
  dets got = ref;
  got.boxes[4 * 1 + 2] += 0.2f; /* x2 of the second detection, four times the tolerance */
  detection_match m;
  assert_int_equal(compare(&got, &ref, &m), 1);
  assert_int_equal(m.matched, 2);
  assert_int_equal(m.unmatched, 2); /* the reference's detection and the moved one */
}

static void test_wrong_label_or_score_fails(void** state) {
  (void)state;
  const dets ref = reference();
  dets got = ref;
  got.labels[0] = 2;
  detection_match m;
  assert_int_equal(compare(&got, &ref, &m), 1);
  got = ref;
  got.scores[1] = 0.65f; /* off by 0.05, five times the tolerance */
  assert_int_equal(compare(&got, &ref, &m), 1);
}

static void test_cut_at_the_tail_is_excused(void** state) {
  (void)state;
  dets ref = reference(), got = reference();
  add(&got, 400, 400, 420, 430, 0.305f, 4); /* just above the cut the reference made */
  detection_match m;
  assert_int_equal(compare(&got, &ref, &m), 0);
  assert_int_equal(m.excused_tail, 1);
  /* the same detection with a score far above the tail is a real extra */
  got.scores[3] = 0.7f;
  assert_int_equal(compare(&got, &ref, &m), 1);
  (void)ref;
}

static void test_missing_detection_fails(void** state) {
  (void)state;
  const dets ref = reference();
  dets got = ref;
  got.n = 2;
  got.boxes[4] = 200, got.boxes[5] = 200, got.boxes[6] = 260, got.boxes[7] = 280; /* keep the tail one */
  got.scores[1] = 0.30f, got.labels[1] = 1;
  detection_match m;
  assert_int_equal(compare(&got, &ref, &m), 1); /* the 0.60 one is gone, far above the tail */
  assert_int_equal(m.unmatched, 1);
}

static void test_other_of_two_overlapping_boxes_is_excused(void** state) {
  (void)state;
  dets ref = reference(), got = reference();
  /* the reference kept box A of an object, gfxep its twin B (IoU about 0.82, near-equal score) */
  add(&ref, 500, 500, 600, 600, 0.450f, 5);
  add(&got, 505, 500, 605, 600, 0.452f, 5);
  detection_match m;
  assert_int_equal(compare(&got, &ref, &m), 0);
  assert_int_equal(m.excused_overlap, 2);
  assert_int_equal(m.matched, 3);
}

static void test_duplicate_left_by_suppression_fails(void** state) {
  (void)state;
  dets ref = reference(), got = reference();
  add(&ref, 500, 500, 600, 600, 0.450f, 5);
  add(&got, 500, 500, 600, 600, 0.450f, 5);
  add(&got, 505, 500, 605, 600, 0.452f, 5); /* both kept: its twin found its own match */
  detection_match m;
  assert_int_equal(compare(&got, &ref, &m), 1);
  assert_int_equal(m.unmatched, 1);
}

static void test_nan_fails(void** state) {
  (void)state;
  const dets ref = reference();
  dets got = ref;
  got.boxes[0] = NAN;
  detection_match m;
  assert_int_equal(compare(&got, &ref, &m), 1);
  got = ref;
  got.scores[0] = NAN;
  assert_int_equal(compare(&got, &ref, &m), 1);
}

static void test_empty_lists(void** state) {
  (void)state;
  const dets none = {.n = 0}, ref = reference();
  detection_match m;
  assert_int_equal(compare(&none, &none, &m), 0);
  assert_int_equal(compare(&none, &ref, &m), 1);
  assert_int_equal(m.unmatched, 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identical_lists_match),
      cmocka_unit_test(test_near_tie_in_another_order_matches),
      cmocka_unit_test(test_moved_box_fails),
      cmocka_unit_test(test_wrong_label_or_score_fails),
      cmocka_unit_test(test_cut_at_the_tail_is_excused),
      cmocka_unit_test(test_missing_detection_fails),
      cmocka_unit_test(test_other_of_two_overlapping_boxes_is_excused),
      cmocka_unit_test(test_duplicate_left_by_suppression_fails),
      cmocka_unit_test(test_nan_fails),
      cmocka_unit_test(test_empty_lists),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
