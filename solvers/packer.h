/* The exact packer: place ALL of a set of buffers (time interval x size) within a capacity, or
 * prove that no placement exists, within a budget. This is the allocation problem that
 * MiniMalloc (Moffitt, ASPLOS 2023) solves; mallocbench uses it for `mallocbench pack` and
 * inside the greedy solver, which repacks its chosen set of fast buffers to admit more.
 *
 * Search space: canonical placements. Given an order, each buffer goes at the lowest aligned
 * offset on top of everything already placed that overlaps it in time. Every feasible
 * placement, pushed down as far as it goes, is produced by placing its buffers in increasing
 * offset order, so it suffices to search orders whose offsets never decrease (ties broken by a
 * static rank): the search is complete. Pruning, in the spirit of MiniMalloc's paper:
 *  - section inference: in every stretch of time, the unplaced bytes live there must fit
 *    between the capacity and max(that stretch's floor, the current offset), where the floor
 *    is also raised to the lowest offset any unplaced buffer there can still take;
 *  - dominance: a buffer is not placed at or above the top another unplaced buffer would have
 *    at its own lowest offset (that one fits below, and an earlier branch put it there);
 *  - interchangeable buffers (same interval and size) are tried once per node;
 *  - states proven dead (placed set, floors, offset threshold) are remembered.
 * Static orders: section pressure (most bytes live at once over the buffer's lifetime), size,
 * area, lifetime in a few combinations, tried in turn with a doubling node limit, because each
 * order is fast on some instances and slow on others. All descending, then index. */
#ifndef MB_PACKER_H
#define MB_PACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

typedef struct mb_pack_item {
  int32_t start, end; /* inclusive live range */
  int64_t size;       /* bytes, > 0 */
} mb_pack_item;

typedef enum mb_pack_status {
  MB_PACK_SOLVED = 0,     /* every item placed: offsets filled in */
  MB_PACK_INFEASIBLE = 1, /* proven: no placement fits under the capacity */
  MB_PACK_BUDGET = 2,     /* neither within the budget */
} mb_pack_status;

/* The largest capacity and item size the packers take (2 EiB): offsets plus sizes plus an
 * alignment then fit in int64 without overflow. */
#define MB_PACK_MAX_BYTES (INT64_C(1) << 61)

typedef struct mb_pack_options {
  int64_t capacity;
  int64_t alignment;     /* >= 1; every offset is a multiple of it */
  double budget_seconds; /* wall clock (<= 0: no time limit) */
  int64_t max_nodes;     /* search nodes (<= 0: no limit); a node limit makes runs repeatable */
} mb_pack_options;

typedef struct mb_pack_result {
  mb_pack_status status;
  int64_t nodes;  /* search nodes visited */
  double seconds; /* wall clock */
  int64_t height; /* solved: highest offset + size used */
} mb_pack_result;

/* Fills offsets[n] when the status is SOLVED. Returns false only for bad input (an item with
 * size <= 0 or end < start, bad options: message names the item and field) or when memory
 * runs out; infeasible and out-of-budget are results, not errors. */
bool mb_pack(const mb_pack_item *items, int32_t n, const mb_pack_options *opt, int64_t *offsets,
             mb_pack_result *res, mb_error *err);

/* Plain best fit for comparison: items by decreasing size (then longer lifetime, then index),
 * each in the smallest free gap over its lifetime (mb_occupancy_best_fit). With capacity
 * `capacity` it reports how many items are left out (offsets[i] = -1 for them); its
 * unbounded variant reports the height best fit reaches when nothing is left out. */
bool mb_pack_best_fit(const mb_pack_item *items, int32_t n, int64_t capacity, int64_t alignment,
                      int64_t *offsets, int32_t *left_out, int64_t *unbounded_height,
                      mb_error *err);

const char *mb_pack_status_name(mb_pack_status s);

#endif
