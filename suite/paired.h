/* Paired comparison of two measurements of the same cases (e.g. one agent's return on each
 * workload with and without search): is the difference more than case-to-case noise?
 * Reports the mean difference with its standard error, how many cases went up, stayed level or
 * went down, and the two-sided exact sign test on those counts, which assumes nothing about how
 * the differences are distributed. */
#ifndef MB_PAIRED_H
#define MB_PAIRED_H

#include <stddef.h>
#include <stdint.h>

typedef struct mb_paired_stats {
  int32_t n;        /* cases compared */
  double mean;      /* mean of after[i] - before[i] */
  double std_error; /* sample standard deviation of the differences / sqrt(n); 0 when n < 2 */
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

#endif
