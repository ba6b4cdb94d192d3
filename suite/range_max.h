/* An array of n int64 entries, all 0 at first, with two operations in O(log n): add a value to
 * every entry of an index range, and the largest entry of an index range (a segment tree with
 * lazy addition). The greedy keeps in one the fast bytes live in each elementary time interval
 * (time_intervals.h), to see whether a buffer fits by capacity over its lifetime. */
#ifndef MB_RANGE_MAX_H
#define MB_RANGE_MAX_H

#include <stdint.h>

typedef struct mb_range_max mb_range_max;

/* n entries (n < 1 counts as 1), all 0; NULL on allocation failure. Memory O(n). */
mb_range_max *mb_range_max_new(int32_t n);
void mb_range_max_free(mb_range_max *t);
int32_t mb_range_max_size(const mb_range_max *t);
/* Adds v to the entries first..last (inclusive), clipped to [0, n); nothing when the clipped
 * range is empty. The caller keeps the sums within int64. */
void mb_range_max_add(mb_range_max *t, int32_t first, int32_t last, int64_t v);
/* The largest of the entries first..last (inclusive), clipped to [0, n); INT64_MIN when the
 * clipped range is empty. */
int64_t mb_range_max_get(const mb_range_max *t, int32_t first, int32_t last);

#endif
