#include "stats.h"

#include <math.h>
#include <stdio.h>

double mb_sign_test(int32_t up, int32_t down) {
  int32_t m = up + down, k = up < down ? up : down;
  if (m <= 0) return 1;
  /* P(X <= k) for X ~ Binomial(m, 1/2), each term in log space (m may be in the thousands);
   * log C(m, i) summed up term by term rather than by lgamma, which writes a global (signgam) */
  double tail = 0, log_choose = 0, log_half_m = m * log(0.5);
  for (int32_t i = 0; i <= k; i++) {
    tail += exp(log_choose + log_half_m);
    log_choose += log((double)(m - i)) - log((double)(i + 1));
  }
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

double mb_student_t_975(int32_t df) {
  static const double table[31] = {NAN,    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646,
                                   2.3060, 2.2622,  2.2281, 2.2010, 2.1788, 2.1604, 2.1448, 2.1314,
                                   2.1199, 2.1098,  2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687,
                                   2.0639, 2.0595,  2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df < 1) return NAN;
  if (df <= 30) return table[df];
  /* Cornish-Fisher: t = z + g1(z) / df + g2(z) / df^2 + ..., z the normal quantile */
  const double z = 1.959963985, v = df;
  return z + (z * z * z + z) / (4 * v) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v) +
         (3 * pow(z, 7) + 19 * pow(z, 5) + 17 * z * z * z - 15 * z) / (384 * v * v * v);
}

void mb_geomean_ci95(const double *x, int32_t n, double *low, double *high) {
  *low = *high = NAN;
  if (n < 2) return;
  double sum = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!(x[i] > 0)) return;
    sum += log(x[i]);
  }
  double mean = sum / n, ss = 0;
  for (int32_t i = 0; i < n; i++) ss += (log(x[i]) - mean) * (log(x[i]) - mean);
  double half = mb_student_t_975(n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n);
  *low = exp(mean - half);
  *high = exp(mean + half);
}
