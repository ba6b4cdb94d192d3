/* stats.h: paired differences, their standard error, the exact sign test, Student t quantiles. */
#include <math.h>

#include "rng.h"
#include "stats.h"
#include "support.h"

/* Exact binomial tails worked by hand. */
static void test_sign_test_values(void **state) {
  (void)state;
  assert_float_equal(mb_sign_test(5, 0), 2.0 / 32, 1e-12);
  assert_float_equal(mb_sign_test(0, 5), 2.0 / 32, 1e-12);
  assert_float_equal(mb_sign_test(10, 0), 2.0 / 1024, 1e-12);
  assert_float_equal(mb_sign_test(8, 2), 2.0 * (1 + 10 + 45) / 1024, 1e-12);
  assert_float_equal(mb_sign_test(2, 8), 2.0 * (1 + 10 + 45) / 1024, 1e-12);
  assert_float_equal(mb_sign_test(3, 3), 1, 0); /* both tails overlap: clamped */
  assert_float_equal(mb_sign_test(0, 0), 1, 0); /* nothing moved */
  assert_float_equal(mb_sign_test(1, 0), 1, 0); /* one toss proves nothing */
}

/* Thousands of cases: finite, tiny for a lopsided split, ~1 for an even one. */
static void test_sign_test_large(void **state) {
  (void)state;
  double p = mb_sign_test(600, 400);
  assert_true(isfinite(p));
  assert_true(p > 0 && p < 1e-6);
  assert_float_equal(mb_sign_test(1000, 1000), 1, 0);
  double q = mb_sign_test(1040, 960); /* about 1.8 standard deviations: p ~ 0.08 */
  assert_true(q > 0.05 && q < 0.11);
}

static void test_paired_compare(void **state) {
  (void)state;
  const double before[] = {1, 2, 3, 4}, after[] = {1.5, 2, 2.5, 5};
  mb_paired_stats s = mb_paired_compare(before, after, 4, 1e-9);
  assert_int_equal(s.n, 4);
  assert_float_equal(s.mean, 0.25, 1e-12);
  /* deviations 0.25, -0.25, -0.75, 0.75: variance 1.25 / 3, over sqrt(4) */
  assert_float_equal(s.std_error, sqrt(1.25 / 3) / 2, 1e-12);
  assert_int_equal(s.higher, 2);
  assert_int_equal(s.level, 1);
  assert_int_equal(s.lower, 1);
  assert_float_equal(s.sign_p, 1, 0); /* 2 up, 1 down */
  /* a wider tolerance makes the +-0.5 cases level */
  s = mb_paired_compare(before, after, 4, 0.6);
  assert_int_equal(s.higher, 1);
  assert_int_equal(s.level, 3);
  assert_int_equal(s.lower, 0);
  assert_float_equal(s.mean, 0.25, 1e-12);
}

static void test_paired_degenerate(void **state) {
  (void)state;
  mb_paired_stats s = mb_paired_compare(NULL, NULL, 0, 0);
  assert_int_equal(s.n, 0);
  assert_float_equal(s.mean, 0, 0);
  assert_float_equal(s.std_error, 0, 0);
  assert_float_equal(s.sign_p, 1, 0);
  const double a = 0.1, b = 0.3;
  s = mb_paired_compare(&a, &b, 1, 0);
  assert_float_equal(s.mean, 0.2, 1e-12);
  assert_float_equal(s.std_error, 0, 0); /* one case has no spread */
  assert_int_equal(s.higher, 1);
  /* two cases are the fewest with a spread: differences 0.25 and 0.75, sd sqrt(0.125) */
  const double b2[] = {0, 0}, a2[] = {0.25, 0.75};
  s = mb_paired_compare(b2, a2, 2, 0);
  assert_float_equal(s.std_error, sqrt(0.125) / sqrt(2), 1e-12);
  /* a difference of exactly +-tol is level (exact binary values) */
  s = mb_paired_compare(b2, a2, 2, 0.25);
  assert_int_equal(s.level, 1);
  assert_int_equal(s.higher, 1);
  s = mb_paired_compare(a2, b2, 2, 0.25);
  assert_int_equal(s.level, 1);
  assert_int_equal(s.lower, 1);
}

/* Property, random cases: swapping the two sides negates the mean and swaps up and down, and
 * leaves the standard error and the sign test alone; counts add up to n. */
static void test_paired_swap_property(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 42);
  double x[64], y[64];
  for (int trial = 0; trial < 200; trial++) {
    int32_t n = (int32_t)mb_rng_below(&rng, 64) + 1;
    for (int32_t i = 0; i < n; i++) {
      x[i] = (double)mb_rng_below(&rng, 1000) / 1000;
      y[i] = mb_rng_below(&rng, 4) == 0 ? x[i] : (double)mb_rng_below(&rng, 1000) / 1000;
    }
    mb_paired_stats s = mb_paired_compare(x, y, n, 1e-12);
    mb_paired_stats t = mb_paired_compare(y, x, n, 1e-12);
    assert_int_equal(s.higher + s.level + s.lower, n);
    assert_int_equal(s.higher, t.lower);
    assert_int_equal(s.lower, t.higher);
    assert_float_equal(s.mean, -t.mean, 1e-12);
    assert_float_equal(s.std_error, t.std_error, 1e-12);
    assert_float_equal(s.sign_p, t.sign_p, 1e-12);
    assert_true(s.sign_p > 0 && s.sign_p <= 1);
    assert_true(s.std_error >= 0);
  }
}

static void test_format_p(void **state) {
  (void)state;
  char buf[32];
  mb_format_p(buf, sizeof buf, 0.0125);
  assert_string_equal(buf, "0.0125");
  mb_format_p(buf, sizeof buf, 1);
  assert_string_equal(buf, "1.0000");
  mb_format_p(buf, sizeof buf, 0.001); /* the switch is below 0.001 */
  assert_string_equal(buf, "0.0010");
  mb_format_p(buf, sizeof buf, 2.6e-10); /* not "0.0000" */
  assert_string_equal(buf, "3e-10");
}

/* Student t quantiles against published values (4 decimals) in the table, and beyond it against
 * values to 9 decimals (R's qt(0.975, df)): the expansion's error is 1.7e-6 at df 31 and falls
 * with df, so a wrong coefficient in any of its terms shows. */
static void test_student_t(void **state) {
  (void)state;
  assert_true(isnan(mb_student_t_975(0)));
  assert_float_equal(mb_student_t_975(1), 12.7062, 1e-4);
  assert_float_equal(mb_student_t_975(10), 2.2281, 1e-4);
  assert_float_equal(mb_student_t_975(30), 2.0423, 1e-12); /* the table's last entry */
  assert_float_equal(mb_student_t_975(31), 2.039513446, 2.5e-6);
  assert_float_equal(mb_student_t_975(40), 2.021075390, 1e-6);
  assert_float_equal(mb_student_t_975(45), 2.014103389, 1e-6);
  assert_float_equal(mb_student_t_975(60), 2.000297822, 2.5e-7);
  assert_float_equal(mb_student_t_975(120), 1.979930405, 2.5e-8);
  assert_float_equal(mb_student_t_975(1000000), 1.9600, 1e-4);
  for (int32_t df = 1; df < 200; df++) /* decreasing towards the normal quantile */
    assert_true(mb_student_t_975(df + 1) < mb_student_t_975(df));
}

static void test_geomean_ci(void **state) {
  (void)state;
  double lo, hi;
  const double same[] = {1.25, 1.25, 1.25};
  mb_geomean_ci95(same, 3, &lo, &hi); /* no spread: the interval is the point */
  assert_float_equal(lo, 1.25, 1e-12);
  assert_float_equal(hi, 1.25, 1e-12);
  /* two cases: logs ln 2 and ln 8, mean ln 4, standard error ln 2, t(1) = 12.7062 */
  const double two[] = {2, 8};
  mb_geomean_ci95(two, 2, &lo, &hi);
  assert_float_equal(log(lo), log(4) - 12.7062 * log(2), 1e-3);
  assert_float_equal(log(hi), log(4) + 12.7062 * log(2), 1e-3);
  /* three: logs 0, ln 2, 2 ln 2, mean ln 2, sd ln 2 (n - 1 in the variance), t(2) = 4.3027 */
  const double three[] = {1, 2, 4};
  mb_geomean_ci95(three, 3, &lo, &hi);
  assert_float_equal(log(hi), log(2) + 4.3027 * log(2) / sqrt(3), 1e-9);
  assert_float_equal(log(lo), log(2) - 4.3027 * log(2) / sqrt(3), 1e-9);
  const double one[] = {1.1}, bad[] = {1.1, 0};
  mb_geomean_ci95(one, 1, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
  mb_geomean_ci95(bad, 2, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
}

/* Property, random speedups: the interval holds the geometric mean, is symmetric around it in
 * log space, and narrows when the same cases are seen four times over. */
static void test_geomean_ci_property(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  double x[256];
  for (int trial = 0; trial < 100; trial++) {
    int32_t n = (int32_t)mb_rng_below(&rng, 60) + 2;
    double log_sum = 0;
    for (int32_t i = 0; i < n; i++) {
      x[i] = 0.9 + (double)mb_rng_below(&rng, 4000) / 10000; /* 0.9 .. 1.3 */
      log_sum += log(x[i]);
      for (int k = 1; k < 4; k++) x[i + k * n] = x[i];
    }
    double g = exp(log_sum / n), lo, hi, lo4, hi4;
    mb_geomean_ci95(x, n, &lo, &hi);
    assert_true(lo <= g + 1e-12 && g <= hi + 1e-12);
    assert_float_equal(lo * hi, g * g, 1e-9);
    mb_geomean_ci95(x, 4 * n, &lo4, &hi4); /* x[0..4n) is x[0..n) four times */
    assert_true(hi4 - lo4 <= hi - lo + 1e-12);
    assert_float_equal(lo4 * hi4, g * g, 1e-9);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_sign_test_values),
                                     cmocka_unit_test(test_sign_test_large),
                                     cmocka_unit_test(test_paired_compare),
                                     cmocka_unit_test(test_paired_degenerate),
                                     cmocka_unit_test(test_paired_swap_property),
                                     cmocka_unit_test(test_format_p),
                                     cmocka_unit_test(test_student_t),
                                     cmocka_unit_test(test_geomean_ci),
                                     cmocka_unit_test(test_geomean_ci_property)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
