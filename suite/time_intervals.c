#include "time_intervals.h"

#include <stdlib.h>

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Index of the first of the sorted v[0..n) that is >= t. */
static int32_t lower_bound(const int64_t *v, int32_t n, int64_t t) {
  int32_t lo = 0, hi = n;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (v[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int32_t mb_time_intervals(int32_t *first, int32_t *last, int32_t n) {
  if (n <= 0) return 0;
  /* cuts in 64 bits: last[i] + 1 may be 2^31 */
  int64_t *cut = malloc(sizeof *cut * 2 * (size_t)n);
  if (!cut) return -1;
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++) {
    cut[m++] = first[i];
    cut[m++] = (int64_t)last[i] + 1;
  }
  qsort(cut, (size_t)m, sizeof *cut, cmp_i64);
  int32_t u = 0;
  for (int32_t i = 0; i < m; i++)
    if (u == 0 || cut[u - 1] != cut[i]) cut[u++] = cut[i];
  for (int32_t i = 0; i < n; i++) {
    int32_t a = lower_bound(cut, u, first[i]);
    last[i] = lower_bound(cut, u, (int64_t)last[i] + 1) - 1;
    first[i] = a;
  }
  free(cut);
  return u - 1; /* >= 1: every range adds two distinct cuts */
}
