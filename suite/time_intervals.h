/* Elementary time intervals: the live ranges of n buffers cut the time axis at every start and
 * every end + 1, and between two consecutive cuts no buffer starts or ends. Indexing a
 * per-time structure (a segment tree, a list per section of time) by these intervals instead
 * of by time step makes it cost O(n) whatever the schedule length (op-less workloads may have
 * 2^31 - 2 steps), and keeps every overlap and every order between the ranges. Used by the
 * greedy (its tree of live fast bytes) and the packer (its sections). */
#ifndef MB_TIME_INTERVALS_H
#define MB_TIME_INTERVALS_H

#include <stdbool.h>
#include <stdint.h>

/* The one rule for choosing between the two ways each time-indexed structure has: an entry
 * per time step (a counting sort, a per-step array, a tree laid out over every step), or an
 * entry per live range (a sort, elementary intervals, nodes made on demand). Per step while
 * the schedule has at most 4 steps per range (plus 64): that measured faster there and costs
 * a few entries per range; beyond, memory and time would follow the schedule, which may be
 * 2^31 - 2 steps long. Both ways give the same results. */
static inline bool mb_time_steps_dense(int64_t steps, int64_t ranges) {
  return steps <= 4 * ranges + 64;
}

/* Replaces each inclusive live range [first[i], last[i]] of times (first[i] <= last[i]) by the
 * inclusive range of elementary intervals it covers, numbered from 0 in time order. Returns
 * the number of intervals (0 when n == 0), or -1 when memory runs out, the arrays then left
 * as they were. O(n log n) time, O(n) memory. */
int32_t mb_time_intervals(int32_t *first, int32_t *last, int32_t n);

#endif
