/* Occupancy of fast memory over time: the placed fast buffers as (live range x address range)
 * rectangles, with the queries placement needs. Used by the heuristic (best fit), the greedy
 * (lowest feasible offset), the packer and the mallocGame (candidate offsets).
 *
 * A "gap" over a time range [start, end] is a maximal free address range [offset, offset+size)
 * below capacity that no placed buffer live at some time in [start, end] occupies.
 *
 * Cost: memory O(max_id + n log T) and O(log T + k) to O(k log T) per query (n placed, T the
 * schedule length, k found), never O(T): a schedule of 2^31 - 1 steps with a few buffers costs
 * a few kilobytes. Results (gaps, fits, and the order of the ids mb_occupancy_conflicts
 * reports) depend only on the sequence of calls, not on how the memory is laid out. */
#ifndef MB_OCCUPANCY_H
#define MB_OCCUPANCY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct mb_occupancy mb_occupancy;

typedef struct mb_gap {
  int64_t offset;
  int64_t size;
} mb_gap;

/* ids are buffer indices in [0, max_id); times in [0, schedule_length). NULL on allocation
 * failure. */
mb_occupancy *mb_occupancy_new(int32_t schedule_length, int64_t capacity, int32_t max_id);
void mb_occupancy_free(mb_occupancy *o);
void mb_occupancy_clear(mb_occupancy *o);
/* Records a rectangle (no overlap check: callers place into gaps). False if id is taken or out
 * of range, size <= 0, offset < 0, or [start, end] is not inside [0, schedule_length). */
bool mb_occupancy_place(mb_occupancy *o, int32_t id, int32_t start, int32_t end, int64_t offset,
                        int64_t size);
/* Removes buffer id's rectangle; false when it is not placed. */
bool mb_occupancy_remove(mb_occupancy *o, int32_t id);
bool mb_occupancy_is_placed(const mb_occupancy *o, int32_t id);
int32_t mb_occupancy_count(const mb_occupancy *o);
/* Queries clip [start, end] to the schedule, [0, schedule_length).
 * The free gaps over [start, end], sorted by offset, written to out (at most max); returns
 * the total number of gaps (may exceed max). */
int32_t mb_occupancy_gaps(const mb_occupancy *o, int32_t start, int32_t end, mb_gap *out,
                          int32_t max);
/* Best fit (XLA style): among gaps over [start, end] that hold `size` bytes at an offset
 * aligned to `alignment`, the smallest gap; lowest offset on ties. The aligned offset inside
 * that gap goes to *offset. False when none fits. */
bool mb_occupancy_best_fit(const mb_occupancy *o, int32_t start, int32_t end, int64_t size,
                           int64_t alignment, int64_t *offset);
/* Lowest aligned offset at which `size` fits over [start, end]; false when none. */
bool mb_occupancy_lowest_fit(const mb_occupancy *o, int32_t start, int32_t end, int64_t size,
                             int64_t alignment, int64_t *offset);
/* Ids of placed buffers live at some time in [start, end] whose address range intersects
 * [offset, offset + size); returns the count (may exceed max). The order is deterministic (a
 * function of the calls made so far) but otherwise unspecified; callers that walk it depend on
 * it staying the same from version to version. */
int32_t mb_occupancy_conflicts(const mb_occupancy *o, int32_t start, int32_t end, int64_t offset,
                               int64_t size, int32_t *out, int32_t max);

#endif
