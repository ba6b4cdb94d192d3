/* The few statistics the suite's comparisons need, so that a reader can tell a difference from
 * case-to-case noise:
 *   - a paired comparison of two measurements of the same cases (e.g. one agent's return on
 *     each workload with and without search): the mean difference with its standard error, how
 *     many cases went up, stayed level or went down, and the two-sided exact sign test on those
 *     counts, which assumes nothing about how the differences are distributed;
 *   - a confidence interval for a geometric mean (e.g. of speedups over cases), from the
 *     Student t distribution of the mean of the logarithms. */
#ifndef MB_STATS_H
#define MB_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct mb_paired_stats {
  int32_t n;                    /* cases compared */
  double mean;                  /* mean of after[i] - before[i] */
  double std_error;             /* sample standard deviation of the differences / sqrt(n); 0
                                 * when n < 2 */
  int32_t higher, level, lower; /* cases with after - before > tol, within +-tol, < -tol */
  double sign_p; /* two-sided exact sign test of higher against lower (level cases dropped):
                  * the probability of a split at least this uneven if up and down were equally
                  * likely; 1 when no case moved */
} mb_paired_stats;

/* Compares after[i] with before[i] for i < n (n >= 0; tol >= 0). */
mb_paired_stats mb_paired_compare(const double *before, const double *after, int32_t n, double tol);

/* Two-sided exact sign test: the probability that a fair coin tossed up + down times gives a
 * split at least as uneven as up : down (1 when up + down == 0). */
double mb_sign_test(int32_t up, int32_t down);

/* p written for a table: "0.0123", or "3e-07" below 0.001, so that small values keep a digit. */
void mb_format_p(char *out, size_t n, double p);

/* The 97.5% quantile of Student's t with df >= 1 degrees of freedom (two-sided 95%): a table to
 * the 4th decimal up to 30, beyond it a Cornish-Fisher expansion within 2e-6. NaN for df < 1. */
double mb_student_t_975(int32_t df);

/* 95% confidence interval of the geometric mean of x[0..n) (every x > 0): exp(mean(log x) -+
 * t * sd(log x) / sqrt(n)). NaN bounds when n < 2 or an x is not positive. */
void mb_geomean_ci95(const double *x, int32_t n, double *low, double *high);

#endif
