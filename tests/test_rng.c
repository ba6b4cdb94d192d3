/* The deterministic RNG: fixed streams, unbiased ranges, sane distributions, uniform picks. */
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

/* Gamma(k, 1) draws against its first three central moments: E[x] = k, E[(x - k)^2] = k,
 * E[(x - k)^3] = 2k, each within 5 standard errors (estimated from the draws) at shapes below,
 * at and above 1, where Marsaglia and Tsang's constants differ most from their neighbours'. */
static void test_gamma_moments(void **state) {
  (void)state;
  enum { N = 200000 };
  const double shapes[] = {0.3, 1, 2.5, 10, 40};
  mb_rng r;
  mb_rng_seed(&r, 8);
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    double k = shapes[s], expected[3] = {k, k, 2 * k}, sum[3] = {0}, sq[3] = {0};
    for (int i = 0; i < N; i++) {
      double x = mb_rng_gamma(&r, k);
      assert_true(x >= 0 && isfinite(x));
      double y[3] = {x, (x - k) * (x - k), (x - k) * (x - k) * (x - k)};
      for (int m = 0; m < 3; m++) {
        sum[m] += y[m];
        sq[m] += y[m] * y[m];
      }
    }
    for (int m = 0; m < 3; m++) {
      double mean = sum[m] / N, se = sqrt((sq[m] / N - mean * mean) / N);
      if (!(fabs(mean - expected[m]) <= 5 * se))
        fail_msg("Gamma(%g): moment %d is %.5g, expected %.5g (standard error %.2g)", k, m + 1,
                 mean, expected[m], se);
    }
  }
}

/* mb_rng_pick: uniform over the set entries but `except`, the k-th of them for one
 * mb_rng_below over their count, and -1 drawing nothing when there is none. */
static void test_pick(void **state) {
  (void)state;
  const uint8_t mask[8] = {0, 1, 1, 0, 1, 0, 0, 1}; /* 1, 2, 4, 7 */
  mb_rng r, twin;
  mb_rng_seed(&r, 8);
  for (int32_t except = -1; except < 8; except++) {
    int32_t set = 0;
    for (int32_t i = 0; i < 8; i++) set += mask[i] && i != except;
    int counts[8] = {0};
    enum { DRAWS = 40000 };
    for (int i = 0; i < DRAWS; i++) {
      twin = r;
      int32_t got = mb_rng_pick(&r, mask, 8, except);
      assert_true(got >= 0 && got < 8 && mask[got] && got != except);
      int32_t k = (int32_t)mb_rng_below(&twin, (uint64_t)set), nth = -1;
      for (int32_t j = 0; j <= got; j++) nth += mask[j] && j != except;
      assert_int_equal(nth, k);                              /* the k-th set entry */
      assert_int_equal(mb_rng_next(&twin), mb_rng_next(&r)); /* one draw, as mb_rng_below */
      counts[got]++;
    }
    for (int32_t i = 0; i < 8; i++) {
      if (!mask[i] || i == except) continue;
      double share = (double)counts[i] / DRAWS;
      assert_true(fabs(share - 1.0 / set) < 0.02);
    }
  }
  const uint8_t one[3] = {0, 0, 1}, none[3] = {0, 0, 0};
  twin = r;
  assert_int_equal(mb_rng_pick(&r, one, 3, 2), -1);
  assert_int_equal(mb_rng_pick(&r, none, 3, -1), -1);
  assert_int_equal(mb_rng_pick(&r, none, 0, -1), -1);
  assert_int_equal(mb_rng_next(&twin), mb_rng_next(&r)); /* nothing drawn */
  assert_int_equal(mb_rng_pick(&r, one, 3, -1), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_ranges),
      cmocka_unit_test(test_pick),
      cmocka_unit_test(test_gamma_moments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
