#include "paired.h"

#include <math.h>
#include <stdio.h>

double mb_sign_test(int32_t up, int32_t down) {
  int32_t m = up + down, k = up < down ? up : down;
  if (m <= 0) return 1;
  /* P(X <= k) for X ~ Binomial(m, 1/2), each term in log space (m may be in the thousands) */
  double tail = 0;
  for (int32_t i = 0; i <= k; i++)
    tail += exp(lgamma(m + 1.0) - lgamma(i + 1.0) - lgamma(m - i + 1.0) - m * log(2.0));
  double p = 2 * tail; /* symmetric: both tails */
  return p > 1 ? 1 : p;
}

mb_paired_stats mb_paired_compare(const double *before, const double *after, int32_t n,
                                  double tol) {
  mb_paired_stats s = {.n = n > 0 ? n : 0, .sign_p = 1};
  if (s.n == 0) return s;
  double sum = 0;
  for (int32_t i = 0; i < s.n; i++) {
    double d = after[i] - before[i];
    sum += d;
    if (d > tol)
      s.higher++;
    else if (d < -tol)
      s.lower++;
    else
      s.level++;
  }
  s.mean = sum / s.n;
  if (s.n >= 2) {
    double ss = 0; /* two passes: the differences are small and their mean may be tiny */
    for (int32_t i = 0; i < s.n; i++) {
      double e = after[i] - before[i] - s.mean;
      ss += e * e;
    }
    s.std_error = sqrt(ss / (s.n - 1)) / sqrt((double)s.n);
  }
  s.sign_p = mb_sign_test(s.higher, s.lower);
  return s;
}

void mb_format_p(char *out, size_t n, double p) {
  snprintf(out, n, p < 0.001 ? "%.0e" : "%.4f", p);
}
