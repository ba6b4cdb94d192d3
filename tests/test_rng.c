/* The deterministic RNG: fixed streams, unbiased ranges, sane distributions. */
#include <math.h>

#include "rng.h"
#include "support.h"

static void test_deterministic(void **state) {
  (void)state;
  mb_rng a, b;
  mb_rng_seed(&a, 123);
  mb_rng_seed(&b, 123);
  for (int i = 0; i < 1000; i++) assert_int_equal(mb_rng_next(&a), mb_rng_next(&b));
  mb_rng_seed(&b, 124);
  assert_true(mb_rng_next(&a) != mb_rng_next(&b));
  mb_rng c = mb_rng_split(&a, 1), d = mb_rng_split(&a, 1), e = mb_rng_split(&a, 2);
  assert_int_equal(mb_rng_next(&c), mb_rng_next(&d));
  assert_true(mb_rng_next(&c) != mb_rng_next(&e));
}

static void test_ranges(void **state) {
  (void)state;
  mb_rng r;
  mb_rng_seed(&r, 5);
  int counts[7] = {0};
  for (int i = 0; i < 70000; i++) {
    int64_t v = mb_rng_range(&r, -3, 3);
    assert_true(v >= -3 && v <= 3);
    counts[v + 3]++;
  }
  for (int i = 0; i < 7; i++) assert_true(counts[i] > 9000 && counts[i] < 11000);
  double sum = 0, sq = 0;
  for (int i = 0; i < 100000; i++) {
    double u = mb_rng_uniform(&r);
    assert_true(u >= 0 && u < 1);
    double n = mb_rng_normal(&r);
    sum += n;
    sq += n * n;
  }
  assert_true(fabs(sum / 1e5) < 0.02);
  assert_true(fabs(sq / 1e5 - 1) < 0.03);
  double g = 0;
  for (int i = 0; i < 100000; i++) g += mb_rng_gamma(&r, 0.3);
  assert_true(fabs(g / 1e5 - 0.3) < 0.02); /* E[Gamma(k,1)] = k */
  double gum = 0;
  for (int i = 0; i < 100000; i++) gum += mb_rng_gumbel(&r);
  assert_true(fabs(gum / 1e5 - 0.5772) < 0.02); /* Euler-Mascheroni */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_ranges),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
