/* Unit tests of time_intervals: elementary intervals keep every overlap and order between live
 * ranges, number them densely from 0, and cost nothing per time step. */
#include <stdbool.h>
#include <stdint.h>

#include "rng.h"
#include "support.h"
#include "time_intervals.h"

static void test_empty(void **state) {
  (void)state;
  assert_int_equal(mb_time_intervals(NULL, NULL, 0), 0);
}

/* Hand case: [0, 9], [5, 5], [10, 2^31 - 1] cut time at 0, 5, 6, 10 and 2^31 (computed without
 * overflow): intervals [0,5) [5,6) [6,10) [10,2^31). */
static void test_hand_case(void **state) {
  (void)state;
  int32_t first[3] = {0, 5, 10}, last[3] = {9, 5, INT32_MAX};
  assert_int_equal(mb_time_intervals(first, last, 3), 4);
  assert_int_equal(first[0], 0);
  assert_int_equal(last[0], 2);
  assert_int_equal(first[1], 1);
  assert_int_equal(last[1], 1);
  assert_int_equal(first[2], 3);
  assert_int_equal(last[2], 3);
}

/* Random ranges, some far apart in time: every pair overlaps in intervals exactly when it
 * overlaps in time, starts and ends keep their order, every interval index is used, and the
 * count is the number of distinct cuts minus one. */
static void test_random_ranges(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 31);
  for (int round = 0; round < 300; round++) {
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 40);
    int32_t s[40], e[40], first[40], last[40];
    int64_t scale = round % 3 == 0 ? 40000000 : 1; /* up to 2.04e9: near 2^31 one round in three */
    for (int32_t i = 0; i < n; i++) {
      int64_t a = mb_rng_range(&rng, 0, 40), b = a + mb_rng_range(&rng, 0, 10);
      s[i] = first[i] = (int32_t)(a * scale);
      e[i] = last[i] = (int32_t)(b * scale + scale - 1);
    }
    int32_t count = mb_time_intervals(first, last, n);
    int32_t distinct = 0;
    for (int32_t i = 0; i < 2 * n; i++) { /* distinct cuts, counted the slow way */
      int64_t c = i < n ? s[i] : (int64_t)e[i - n] + 1;
      bool seen = false;
      for (int32_t j = 0; j < i; j++) seen = seen || c == (j < n ? s[j] : (int64_t)e[j - n] + 1);
      distinct += !seen;
    }
    assert_int_equal(count, distinct - 1);
    bool used[80] = {false};
    for (int32_t i = 0; i < n; i++) {
      assert_true(0 <= first[i] && first[i] <= last[i] && last[i] < count);
      for (int32_t k = first[i]; k <= last[i]; k++) used[k] = true;
      for (int32_t j = 0; j < n; j++) {
        bool time_overlap = s[i] <= e[j] && s[j] <= e[i];
        bool interval_overlap = first[i] <= last[j] && first[j] <= last[i];
        assert_int_equal(time_overlap, interval_overlap);
        assert_int_equal(s[i] < s[j], first[i] < first[j]);
        assert_int_equal(e[i] < e[j], last[i] < last[j]);
      }
    }
    for (int32_t k = 0; k < count; k++)
      if (!used[k]) /* a gap no range covers is still an interval between two cuts */
        for (int32_t i = 0; i < n; i++) assert_false(first[i] <= k && k <= last[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_hand_case),
      cmocka_unit_test(test_random_ranges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
