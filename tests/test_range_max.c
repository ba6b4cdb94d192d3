/* Unit tests of range_max: range add and range max agree with a plain array, over random
 * operations on sizes from 1 to past a power of two, with ranges clipped at both ends. */
#include <stdbool.h>
#include <stdint.h>

#include "range_max.h"
#include "rng.h"
#include "support.h"

static int64_t naive_max(const int64_t *a, int32_t n, int32_t first, int32_t last) {
  int64_t m = INT64_MIN;
  for (int32_t i = first < 0 ? 0 : first; i <= last && i < n; i++)
    if (a[i] > m) m = a[i];
  return m;
}

static void test_new_sizes(void **state) {
  (void)state;
  int32_t sizes[] = {-5, 0, 1, 7};
  int32_t expected[] = {1, 1, 1, 7};
  for (int i = 0; i < 4; i++) {
    mb_range_max *t = mb_range_max_new(sizes[i]);
    assert_non_null(t);
    assert_int_equal(mb_range_max_size(t), expected[i]);
    assert_int_equal(mb_range_max_get(t, 0, expected[i] - 1), 0); /* all 0 at first */
    mb_range_max_free(t);
  }
  mb_range_max_free(NULL);
}

/* By hand: adds over [1, 3] and [3, 4] meet at 3 only. */
static void test_hand_case(void **state) {
  (void)state;
  mb_range_max *t = mb_range_max_new(6);
  mb_range_max_add(t, 1, 3, 5);
  mb_range_max_add(t, 3, 4, 2);
  assert_int_equal(mb_range_max_get(t, 0, 0), 0);
  assert_int_equal(mb_range_max_get(t, 0, 2), 5);
  assert_int_equal(mb_range_max_get(t, 3, 3), 7);
  assert_int_equal(mb_range_max_get(t, 4, 5), 2);
  assert_int_equal(mb_range_max_get(t, 0, 5), 7);
  mb_range_max_add(t, 3, 3, -7); /* removing takes the max back down */
  assert_int_equal(mb_range_max_get(t, 0, 5), 5);
  assert_int_equal(mb_range_max_get(t, 3, 5), 2);
  mb_range_max_free(t);
}

/* Ranges past either end are clipped; an empty range adds nothing and has no max. */
static void test_clipping(void **state) {
  (void)state;
  mb_range_max *t = mb_range_max_new(4);
  mb_range_max_add(t, -3, 0, 9);
  mb_range_max_add(t, 3, 100, 4);
  mb_range_max_add(t, 2, 1, 50);   /* empty */
  mb_range_max_add(t, 4, 9, 50);   /* past the end */
  mb_range_max_add(t, -9, -1, 50); /* before the start */
  assert_int_equal(mb_range_max_get(t, 0, 0), 9);
  assert_int_equal(mb_range_max_get(t, 1, 2), 0);
  assert_int_equal(mb_range_max_get(t, 3, 3), 4);
  assert_int_equal(mb_range_max_get(t, -100, 100), 9);
  assert_int_equal(mb_range_max_get(t, 1, 100), 4);
  assert_true(mb_range_max_get(t, 2, 1) == INT64_MIN);
  assert_true(mb_range_max_get(t, 4, 7) == INT64_MIN);
  assert_true(mb_range_max_get(t, -5, -1) == INT64_MIN);
  mb_range_max_free(t);
}

/* Random adds (positive and negative, as the greedy's place and remove) and queries against a
 * plain array, checked after every add on a random range and on every single entry. */
static void test_random_against_array(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  for (int round = 0; round < 200; round++) {
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 70);
    int64_t a[70] = {0};
    mb_range_max *t = mb_range_max_new(n);
    assert_non_null(t);
    for (int op = 0; op < 60; op++) {
      int32_t first = (int32_t)mb_rng_range(&rng, -2, n + 1);
      int32_t last = (int32_t)mb_rng_range(&rng, first - 1, n + 2);
      int64_t v = mb_rng_range(&rng, -1000, 1000);
      mb_range_max_add(t, first, last, v);
      for (int32_t i = first < 0 ? 0 : first; i <= last && i < n; i++) a[i] += v;
      int32_t qf = (int32_t)mb_rng_range(&rng, -2, n + 1);
      int32_t ql = (int32_t)mb_rng_range(&rng, qf - 1, n + 2);
      assert_true(mb_range_max_get(t, qf, ql) == naive_max(a, n, qf, ql));
    }
    for (int32_t i = 0; i < n; i++) assert_true(mb_range_max_get(t, i, i) == a[i]);
    mb_range_max_free(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_new_sizes),
      cmocka_unit_test(test_hand_case),
      cmocka_unit_test(test_clipping),
      cmocka_unit_test(test_random_against_array),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
