/* The XLA-style heuristic (the paper's baseline), after XLA's memory-space assignment:
 * visit buffers by memory-boundedness, place each by best fit over its live range.
 *
 * Memory-boundedness of a buffer = sum of its uses' positive standalone benefits
 * (mb_use_benefits; for op-less workloads the buffer's benefit) / sqrt(size): time saved per
 * square-root byte, so large buffers are not ranked purely by their large absolute savings.
 * Ties: larger size, then longer live range, then lower id.
 *
 * Skipped (never offered fast memory): pinned buffers, buffers larger than the capacity, and
 * buffers whose memory-boundedness is zero. The last are exact to skip: a use saves nothing
 * alone only when its op is compute-bound with every byte slow (t = max(c, m) + o and m only
 * drops), and then no set of fast buffers saves anything on that op either (up to the 1 ps
 * rounding of op times).
 *
 * The mallocGame's heuristic policy reproduces this solver move for move: same order
 * (mb_heuristic_order) and same placement (mb_occupancy_best_fit). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "occupancy.h"
#include "solver.h"

typedef struct ranked {
  double score;
  int64_t size;
  int32_t length;
  int32_t id;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->length != y->length) return x->length > y->length ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

int32_t mb_heuristic_order(const mb_workload *w, const mb_hardware *hw, int32_t *order) {
  mb_time_ps *use_benefit = malloc(sizeof *use_benefit * (size_t)(w->n_uses ? w->n_uses : 1));
  ranked *r = malloc(sizeof *r * (size_t)(w->n_buffers ? w->n_buffers : 1));
  if (!use_benefit || !r) {
    free(use_benefit);
    free(r);
    return -1;
  }
  mb_use_benefits(w, hw, use_benefit);
  int32_t n = 0;
  for (int32_t b = 0; b < w->n_buffers; b++) {
    const mb_buffer *buf = &w->buffers[b];
    if (buf->pinned || buf->size > hw->capacity) continue;
    mb_time_ps benefit = 0;
    if (w->n_ops == 0) {
      benefit = buf->benefit_ps > 0 ? buf->benefit_ps : 0;
    } else {
      for (int32_t u = buf->first_use; u < buf->first_use + buf->n_uses; u++)
        if (use_benefit[u] > 0) benefit += use_benefit[u];
    }
    if (benefit <= 0) continue;
    r[n++] = (ranked){(double)benefit / sqrt((double)buf->size), buf->size,
                      buf->end - buf->start + 1, b};
  }
  qsort(r, (size_t)n, sizeof *r, cmp_ranked);
  for (int32_t i = 0; i < n; i++) order[i] = r[i].id;
  free(use_benefit);
  free(r);
  return n;
}

bool mb_solve_heuristic(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                        mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err) {
  (void)opt;
  (void)rng; /* deterministic by construction */
  if (out->n_buffers != w->n_buffers)
    return mb_fail(err, "heuristic: assignment has %d buffers, workload '%s' has %d",
                   out->n_buffers, w->name, w->n_buffers);
  for (int32_t b = 0; b < w->n_buffers; b++) out->offset[b] = MB_SLOW;
  int32_t *order = malloc(sizeof *order * (size_t)(w->n_buffers ? w->n_buffers : 1));
  mb_occupancy *occ = mb_occupancy_new(w->schedule_length, hw->capacity, w->n_buffers);
  int32_t n = order ? mb_heuristic_order(w, hw, order) : -1;
  if (!occ || n < 0) {
    free(order);
    mb_occupancy_free(occ);
    return mb_fail(err, "heuristic: out of memory for workload '%s' (%d buffers)", w->name,
                   w->n_buffers);
  }
  int32_t placed = 0;
  for (int32_t i = 0; i < n; i++) {
    const mb_buffer *buf = &w->buffers[order[i]];
    int64_t off;
    if (!mb_occupancy_best_fit(occ, buf->start, buf->end, buf->size, hw->alignment, &off)) continue;
    mb_occupancy_place(occ, order[i], buf->start, buf->end, off, buf->size);
    out->offset[order[i]] = off;
    placed++;
  }
  if (stats) {
    stats->iterations = n;
    stats->budget_hit = false;
    snprintf(stats->note, sizeof stats->note, "best fit: %d of %d candidates in fast memory",
             placed, n);
  }
  free(order);
  mb_occupancy_free(occ);
  return true;
}
