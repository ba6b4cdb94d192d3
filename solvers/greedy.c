/* The ILP-free greedy: optimises the true simulated program time (suite/cost.h), not a proxy.
 *
 * 1. Construction: lazy greedy on exact marginal gains. A buffer's gain is the drop in program
 *    time if it moved to fast memory now (mb_cost_delta), ranked per byte x time step it
 *    would occupy. Gains change as other buffers move, because of the max() in the roofline:
 *    once an op is compute-bound, more fast bytes on it save nothing. They only ever shrink
 *    (the saving on an op, min(x, max(0, m0 - c)) in the removed memory time x, is concave),
 *    so a stale heap key is an upper bound: pop, re-evaluate, and take the buffer if it still
 *    beats the next key, else push it back (lazy evaluation, exact for this ordering).
 *    Placement: the lowest feasible offset (mb_occupancy_lowest_fit), which keeps free space
 *    at the top contiguous, where later and longer buffers fit.
 * 2. Start from the better (lower simulated time) of this construction and the heuristic's
 *    assignment; from here on only strict improvements are accepted, so the result is never
 *    worse than the heuristic.
 * 3. Local search, rounds until no move improves or the budget ends:
 *    - fill: slow buffers that now fit at some offset, by gain;
 *    - evict-and-insert: put a slow buffer at an offset where it collides with a few fast
 *      ones, evict those, re-insert the evicted wherever they still fit; keep if the time drops;
 *    - repack: a slow buffer that fits by capacity (live fast bytes + its size <= capacity
 *      over its lifetime) but not by address is admitted by repacking the whole fast set with
 *      the exact packer (solvers/packer.h), each repack and all of them together bounded by
 *      work (packer nodes), not by the clock.
 * Budget: it bounds the local search. Construction and the heuristic start always complete
 * (O(n log n) for bounded live sets), so a tiny budget still returns a full solution.
 * Deterministic for a seed: the seed only breaks ties in the local-search visiting order, and
 * a move limit and the repacks' work limit (besides the wall-clock budget, checked every 256
 * moves, a safety net) bound the search, so runs that converge or stop at a work limit repeat
 * exactly on any machine; stats->budget_hit says when the wall clock cut the search short. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cost.h"
#include "heap.h"
#include "occupancy.h"
#include "packer.h"
#include "range_max.h"
#include "solver.h"
#include "time_intervals.h"

/* MB_GREEDY_DEFAULT_BUDGET_S (solver.h), the local search's wall-clock budget when the caller
 * gives none (both profiles), is large enough that every catalogue entry converges, so that
 * results do not depend on the machine's speed: at 1 s, 12 of the full profile's 255 greedy rows
 * were cut short by the clock. The slowest entry, EfficientNet-B0 training (55,007 moves, 7
 * repacks), takes 13-16 s alone on the 2-core machine (2026-12-03; the same with the build of
 * 2026-11-22 that set a 20 s budget), and hit 20 s when two full runs shared the machine, so
 * the net is 60 s; MiniMalloc's C set packed in 1 MiB takes 4-5 s. */
#define MAX_EVICT 8         /* evict at most this many buffers for one insertion */
#define MAX_OFFSETS 96      /* candidate offsets tried per evict-and-insert */
#define MAX_REPACK_SET 4000 /* larger fast sets are not repacked (packer memory and time) */
#define REPACK_NODES 20000  /* node limit per repack */
/* Work limit of all repacks of one solve, in packer nodes x (buffers repacked)^2: a node was
 * measured to cost about the square of its set's size (EfficientNet-B0 training, ~540 fast
 * buffers: ~200 us per node; MiniMalloc's sets, ~170: ~10 times less). Work limits, not the
 * clock, bound the repacks, so that a solve that ends before its budget repeats exactly on
 * any machine. */
#define REPACK_TOTAL_WORK 10000000000LL

/* Buffer b's live range [start, end] as elementary intervals [cstart[b], cend[b]]
 * (time_intervals.h); the number of intervals goes to *n_intervals. On short schedules
 * (mb_time_steps_dense) the intervals are the steps (no sort; the tree is O(n) already).
 * False on allocation failure. */
static bool compress_times(const mb_workload *w, int32_t *cstart, int32_t *cend,
                           int32_t *n_intervals) {
  for (int32_t b = 0; b < w->n_buffers; b++) {
    cstart[b] = w->buffers[b].start;
    cend[b] = w->buffers[b].end;
  }
  int32_t n = w->schedule_length;
  if (!mb_time_steps_dense(w->schedule_length, w->n_buffers))
    n = mb_time_intervals(cstart, cend, w->n_buffers);
  *n_intervals = n > 0 ? n : 1;
  return n >= 0;
}

/* ---- the solver's state ---- */
typedef struct greedy {
  const mb_workload *w;
  const mb_hardware *hw;
  mb_cost_state cs;
  mb_occupancy *occ;
  mb_range_max *live;     /* fast bytes live in each elementary interval (compress_times) */
  int32_t *cstart, *cend; /* per buffer: live range in elementary intervals */
  int64_t *offset;        /* per buffer, MB_SLOW when slow */
  bool *candidate;        /* may go fast: not pinned, fits the capacity, positive benefit */
  int32_t *ids;           /* scratch: conflicts and lists, n_buffers entries */
  int32_t *ids2;
  int64_t *offs; /* scratch offsets, n_buffers entries */
  int64_t moves, max_moves;
  int64_t repack_work_left; /* of REPACK_TOTAL_WORK */
  double deadline;
  bool out_of_time;
  int64_t n_fill, n_swap, n_repack;
} greedy;

static void g_place(greedy *g, int32_t b, int64_t off) {
  const mb_buffer *buf = &g->w->buffers[b];
  mb_occupancy_place(g->occ, b, buf->start, buf->end, off, buf->size);
  mb_cost_move(&g->cs, b, true);
  mb_range_max_add(g->live, g->cstart[b], g->cend[b], buf->size);
  g->offset[b] = off;
}

static void g_remove(greedy *g, int32_t b) {
  const mb_buffer *buf = &g->w->buffers[b];
  mb_occupancy_remove(g->occ, b);
  mb_cost_move(&g->cs, b, false);
  mb_range_max_add(g->live, g->cstart[b], g->cend[b], -buf->size);
  g->offset[b] = MB_SLOW;
}

static void g_clear(greedy *g) {
  for (int32_t b = 0; b < g->w->n_buffers; b++)
    if (g->offset[b] != MB_SLOW) g_remove(g, b);
}

/* Counts a move; true when the search must stop (move limit or wall clock). */
static bool tick(greedy *g) {
  g->moves++;
  if ((g->moves & 255) == 0 && mb_wall_seconds() > g->deadline) g->out_of_time = true;
  return g->out_of_time || g->moves >= g->max_moves;
}

static double density(const mb_buffer *buf, mb_time_ps gain) {
  return (double)gain / ((double)buf->size * (double)(buf->end - buf->start + 1));
}

/* ---- 1. lazy greedy construction ---- */
typedef struct heap_item {
  double key;
  int32_t id;
} heap_item;

/* Max-heap on key, ties by id. */
static bool heap_less(heap_item a, heap_item b) {
  if (a.key != b.key) return a.key > b.key;
  return a.id < b.id;
}
MB_HEAP_DEFINE(item_heap, heap_item, heap_less);

static bool construct(greedy *g, const mb_time_ps *benefit) {
  const mb_workload *w = g->w;
  heap_item *h = malloc(sizeof *h * (size_t)(w->n_buffers ? w->n_buffers : 1));
  if (!h) return false;
  int32_t n = 0;
  for (int32_t b = 0; b < w->n_buffers; b++)
    if (g->candidate[b]) item_heap_push(h, &n, (heap_item){density(&w->buffers[b], benefit[b]), b});
  while (n > 0) {
    heap_item top = item_heap_pop(h, &n);
    const mb_buffer *buf = &w->buffers[top.id];
    mb_time_ps gain = -mb_cost_delta(&g->cs, top.id, true);
    if (gain <= 0) continue;
    double key = density(buf, gain);
    if (n > 0 && key < h[0].key) { /* stale: re-queue with its true key */
      item_heap_push(h, &n, (heap_item){key, top.id});
      continue;
    }
    int64_t off;
    if (mb_occupancy_lowest_fit(g->occ, buf->start, buf->end, buf->size, g->hw->alignment, &off))
      g_place(g, top.id, off);
  }
  free(h);
  return true;
}

/* ---- 3. local search ---- */

/* Slow candidates with a positive gain now, best density first (ties: a seeded shuffle). */
typedef struct ranked {
  double key;
  uint64_t tie;
  int32_t id;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  if (x->tie != y->tie) return x->tie < y->tie ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

static int32_t slow_by_gain(greedy *g, ranked *r, mb_rng *rng) {
  int32_t n = 0;
  for (int32_t b = 0; b < g->w->n_buffers; b++) {
    if (!g->candidate[b] || g->offset[b] != MB_SLOW) continue;
    mb_time_ps gain = -mb_cost_delta(&g->cs, b, true);
    if (gain > 0) r[n++] = (ranked){density(&g->w->buffers[b], gain), mb_rng_next(rng), b};
  }
  qsort(r, (size_t)n, sizeof *r, cmp_ranked);
  return n;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Tries b at `off`, evicting what collides and re-inserting the evicted where they fit.
 * Keeps the move and returns true when the program time drops; else undoes it exactly. */
static bool try_evict_insert(greedy *g, int32_t b, int64_t off) {
  const mb_workload *w = g->w;
  const mb_buffer *buf = &w->buffers[b];
  int32_t k =
      mb_occupancy_conflicts(g->occ, buf->start, buf->end, off, buf->size, g->ids2, MAX_EVICT + 1);
  if (k > MAX_EVICT) return false;
  int32_t evicted[MAX_EVICT];
  int64_t old_off[MAX_EVICT], new_off[MAX_EVICT];
  mb_time_ps before = g->cs.total;
  for (int32_t i = 0; i < k; i++) {
    evicted[i] = g->ids2[i];
    old_off[i] = g->offset[evicted[i]];
  }
  for (int32_t i = 0; i < k; i++) g_remove(g, evicted[i]);
  g_place(g, b, off);
  for (int32_t i = 0; i < k; i++) {
    const mb_buffer *e = &w->buffers[evicted[i]];
    new_off[i] = MB_SLOW;
    if (mb_occupancy_lowest_fit(g->occ, e->start, e->end, e->size, g->hw->alignment, &new_off[i]))
      g_place(g, evicted[i], new_off[i]);
    else
      new_off[i] = MB_SLOW;
  }
  if (g->cs.total < before) return true;
  for (int32_t i = 0; i < k; i++)
    if (new_off[i] != MB_SLOW) g_remove(g, evicted[i]);
  g_remove(g, b);
  for (int32_t i = 0; i < k; i++) g_place(g, evicted[i], old_off[i]);
  return false;
}

/* Candidate offsets for b: 0 and the (aligned) bottoms and tops of the fast buffers live
 * during b's lifetime: where b would sit flush against a neighbour. */
static int32_t evict_offsets(greedy *g, int32_t b, int64_t *offs) {
  const mb_buffer *buf = &g->w->buffers[b];
  const int64_t a = g->hw->alignment, cap = g->hw->capacity;
  int32_t k = mb_occupancy_conflicts(g->occ, buf->start, buf->end, 0, cap, g->ids, g->w->n_buffers);
  if (k > g->w->n_buffers) k = g->w->n_buffers;
  int32_t n = 0;
  offs[n++] = 0;
  for (int32_t i = 0; i < k && n + 2 <= 2 * MAX_OFFSETS; i++) {
    int64_t lo = g->offset[g->ids[i]], hi = lo + g->w->buffers[g->ids[i]].size;
    int64_t cands[2] = {(lo + a - 1) / a * a, (hi + a - 1) / a * a};
    for (int j = 0; j < 2; j++)
      if (cands[j] + buf->size <= cap) offs[n++] = cands[j];
  }
  qsort(offs, (size_t)n, sizeof *offs, cmp_i64);
  int32_t u = 0;
  for (int32_t i = 0; i < n; i++)
    if (u == 0 || offs[u - 1] != offs[i]) offs[u++] = offs[i];
  return u > MAX_OFFSETS ? MAX_OFFSETS : u;
}

/* Repacks the fast set plus b with the exact packer; adopts the packing when it succeeds. */
static bool try_repack(greedy *g, int32_t b, double budget_s, bool *failed_alloc) {
  const mb_workload *w = g->w;
  const mb_buffer *buf = &w->buffers[b];
  if (g->repack_work_left <= 0) return false;
  if (mb_range_max_get(g->live, g->cstart[b], g->cend[b]) + buf->size > g->hw->capacity)
    return false; /* does not fit by capacity: no packing can admit it */
  int32_t n = 0;
  for (int32_t i = 0; i < w->n_buffers; i++)
    if (g->offset[i] != MB_SLOW) g->ids[n++] = i;
  if (n + 1 > MAX_REPACK_SET) return false;
  g->ids[n++] = b;
  mb_pack_item *items = malloc(sizeof *items * (size_t)n);
  if (!items) {
    *failed_alloc = true;
    return false;
  }
  for (int32_t i = 0; i < n; i++) {
    const mb_buffer *x = &w->buffers[g->ids[i]];
    items[i] = (mb_pack_item){x->start, x->end, x->size};
  }
  int64_t per_node = (int64_t)n * n;
  int64_t nodes = g->repack_work_left / per_node;
  if (nodes > REPACK_NODES) nodes = REPACK_NODES;
  if (nodes < 1) nodes = 1;
  mb_pack_options po = {g->hw->capacity, g->hw->alignment, budget_s, nodes};
  mb_pack_result res;
  mb_error perr;
  bool ok = mb_pack(items, n, &po, g->offs, &res, &perr);
  g->repack_work_left -= (ok ? res.nodes : nodes) * per_node;
  ok = ok && res.status == MB_PACK_SOLVED;
  free(items);
  if (!ok) return false;
  /* Adopt: the set is unchanged but for b, so only offsets move; b's gain is positive. */
  for (int32_t i = 0; i < n - 1; i++) g_remove(g, g->ids[i]);
  for (int32_t i = 0; i < n; i++) g_place(g, g->ids[i], g->offs[i]);
  return true;
}

static bool local_search(greedy *g, mb_rng *rng, bool *failed_alloc) {
  const mb_workload *w = g->w;
  ranked *r = malloc(sizeof *r * (size_t)(w->n_buffers ? w->n_buffers : 1));
  int64_t *offs = malloc(sizeof *offs * 2 * MAX_OFFSETS);
  if (!r || !offs) {
    free(r);
    free(offs);
    *failed_alloc = true;
    return false;
  }
  bool improved = true, stop = false;
  while (improved && !stop) {
    improved = false;
    /* Fill. */
    int32_t n = slow_by_gain(g, r, rng);
    for (int32_t i = 0; i < n && !stop; i++) {
      const mb_buffer *buf = &w->buffers[r[i].id];
      int64_t off;
      stop = tick(g);
      if (-mb_cost_delta(&g->cs, r[i].id, true) <= 0) continue;
      if (mb_occupancy_lowest_fit(g->occ, buf->start, buf->end, buf->size, g->hw->alignment,
                                  &off)) {
        g_place(g, r[i].id, off);
        g->n_fill++;
        improved = true;
      }
    }
    /* Evict and insert. */
    n = slow_by_gain(g, r, rng);
    for (int32_t i = 0; i < n && !stop; i++) {
      int32_t b = r[i].id;
      int32_t m = evict_offsets(g, b, offs);
      for (int32_t j = 0; j < m && !stop; j++) {
        stop = tick(g);
        if (try_evict_insert(g, b, offs[j])) {
          g->n_swap++;
          improved = true;
          break;
        }
      }
    }
    /* Repack to admit buffers that fit by capacity but not by address. */
    n = slow_by_gain(g, r, rng);
    for (int32_t i = 0; i < n && !stop; i++) {
      stop = tick(g);
      double left = g->deadline - mb_wall_seconds();
      if (left <= 0) break;
      /* the node limit bounds a repack; the clock only as a safety net (a wall-clock slice
       * that binds first would make the result depend on the machine's speed) */
      if (try_repack(g, r[i].id, left, failed_alloc)) {
        g->n_repack++;
        improved = true;
      }
      if (*failed_alloc) stop = true;
    }
  }
  free(r);
  free(offs);
  return !*failed_alloc;
}

static void greedy_free(greedy *g) {
  mb_cost_state_free(&g->cs);
  mb_occupancy_free(g->occ);
  mb_range_max_free(g->live);
  free(g->cstart);
  free(g->cend);
  free(g->offset);
  free(g->candidate);
  free(g->ids);
  free(g->ids2);
  free(g->offs);
}

bool mb_solve_greedy(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                     mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err) {
  double t0 = mb_wall_seconds();
  if (out->n_buffers != w->n_buffers)
    return mb_fail(err, "greedy: assignment has %d buffers, workload '%s' has %d", out->n_buffers,
                   w->name, w->n_buffers);
  greedy g;
  memset(&g, 0, sizeof g);
  g.w = w;
  g.hw = hw;
  size_t nb = (size_t)(w->n_buffers ? w->n_buffers : 1);
  mb_time_ps *benefit = malloc(sizeof *benefit * nb);
  mb_assignment *heur = mb_assignment_new(w->n_buffers);
  int32_t n_intervals = 0;
  bool ok =
      benefit && heur && mb_cost_state_init(&g.cs, w, hw) &&
      (g.occ = mb_occupancy_new(w->schedule_length, hw->capacity, w->n_buffers)) &&
      (g.cstart = malloc(sizeof *g.cstart * nb)) && (g.cend = malloc(sizeof *g.cend * nb)) &&
      compress_times(w, g.cstart, g.cend, &n_intervals) &&
      (g.live = mb_range_max_new(n_intervals)) && (g.offset = malloc(sizeof *g.offset * nb)) &&
      (g.candidate = malloc(sizeof *g.candidate * nb)) && (g.ids = malloc(sizeof *g.ids * nb)) &&
      (g.ids2 = malloc(sizeof *g.ids2 * nb)) && (g.offs = malloc(sizeof *g.offs * nb));
  if (!ok) {
    free(benefit);
    mb_assignment_free(heur);
    greedy_free(&g);
    return mb_fail(err, "greedy: out of memory for workload '%s' (%d buffers)", w->name,
                   w->n_buffers);
  }
  double budget = opt && opt->budget_seconds > 0 ? opt->budget_seconds : MB_GREEDY_DEFAULT_BUDGET_S;
  g.deadline = t0 + budget;
  g.max_moves = 1000 + 200 * (int64_t)w->n_buffers;
  g.repack_work_left = REPACK_TOTAL_WORK;
  mb_standalone_benefits(w, hw, benefit);
  int32_t n_cand = 0;
  for (int32_t b = 0; b < w->n_buffers; b++) {
    g.offset[b] = MB_SLOW;
    const mb_buffer *buf = &w->buffers[b];
    g.candidate[b] = !buf->pinned && buf->size <= hw->capacity && benefit[b] > 0;
    n_cand += g.candidate[b];
  }

  /* 1. Construction. */
  ok = construct(&g, benefit);
  if (!ok) mb_fail(err, "greedy: out of memory in construction on workload '%s'", w->name);
  double t_construct = mb_wall_seconds() - t0;
  int32_t constructed = 0;
  for (int32_t b = 0; b < w->n_buffers; b++) constructed += g.offset[b] != MB_SLOW;
  mb_time_ps t_greedy = g.cs.total;

  /* 2. The heuristic's assignment, if better, is the starting point. */
  mb_solver_stats hstats;
  memset(&hstats, 0, sizeof hstats);
  bool from_heuristic = false;
  if (ok) ok = mb_solve_heuristic(w, hw, opt, rng, heur, &hstats, err); /* sets err */
  mb_solver_stats_free(&hstats);
  bool *in_fast = ok ? malloc(sizeof *in_fast * nb) : NULL;
  if (ok && !in_fast) ok = mb_fail(err, "greedy: out of memory for workload '%s'", w->name);
  if (ok) {
    mb_assignment_fast_flags(heur, in_fast);
    if (mb_program_time(w, hw, in_fast) < t_greedy) {
      from_heuristic = true;
      g_clear(&g);
      for (int32_t b = 0; b < w->n_buffers; b++)
        if (heur->offset[b] != MB_SLOW) g_place(&g, b, heur->offset[b]);
    }
  }
  free(in_fast);

  /* 3. Local search. */
  bool failed_alloc = false;
  if (ok && !local_search(&g, rng, &failed_alloc))
    ok = mb_fail(err, "greedy: out of memory in local search on workload '%s'", w->name);
  if (ok) {
    memcpy(out->offset, g.offset, sizeof *out->offset * (size_t)w->n_buffers);
    if (stats) {
      stats->iterations = g.moves;
      stats->budget_hit = g.out_of_time;
      snprintf(stats->note, sizeof stats->note,
               "construct %d/%d fast in %.3f s; start %s; local search: %lld fills, %lld swaps, "
               "%lld repacks, %lld moves%s",
               constructed, n_cand, t_construct, from_heuristic ? "heuristic" : "greedy",
               (long long)g.n_fill, (long long)g.n_swap, (long long)g.n_repack, (long long)g.moves,
               g.out_of_time            ? " (budget hit)"
               : g.moves >= g.max_moves ? " (move limit)"
                                        : "");
    }
  }
  free(benefit);
  mb_assignment_free(heur);
  greedy_free(&g);
  return ok;
}

bool mb_greedy_construct(const mb_workload *w, const mb_hardware *hw, mb_assignment *out,
                         mb_error *err) {
  if (out->n_buffers != w->n_buffers)
    return mb_fail(err, "greedy: assignment has %d buffers, workload '%s' has %d", out->n_buffers,
                   w->name, w->n_buffers);
  greedy g;
  memset(&g, 0, sizeof g);
  g.w = w;
  g.hw = hw;
  size_t nb = (size_t)(w->n_buffers ? w->n_buffers : 1);
  mb_time_ps *benefit = malloc(sizeof *benefit * nb);
  int32_t n_intervals = 0;
  bool ok = benefit && mb_cost_state_init(&g.cs, w, hw) &&
            (g.occ = mb_occupancy_new(w->schedule_length, hw->capacity, w->n_buffers)) &&
            (g.cstart = malloc(sizeof *g.cstart * nb)) && (g.cend = malloc(sizeof *g.cend * nb)) &&
            compress_times(w, g.cstart, g.cend, &n_intervals) &&
            (g.live = mb_range_max_new(n_intervals)) &&
            (g.offset = malloc(sizeof *g.offset * nb)) &&
            (g.candidate = malloc(sizeof *g.candidate * nb));
  if (ok) {
    mb_standalone_benefits(w, hw, benefit);
    for (int32_t b = 0; b < w->n_buffers; b++) {
      const mb_buffer *buf = &w->buffers[b];
      g.offset[b] = MB_SLOW;
      g.candidate[b] = !buf->pinned && buf->size <= hw->capacity && benefit[b] > 0;
    }
    ok = construct(&g, benefit);
  }
  if (ok) memcpy(out->offset, g.offset, sizeof *out->offset * (size_t)w->n_buffers);
  free(benefit);
  greedy_free(&g);
  return ok ? true : mb_fail(err, "greedy: out of memory for workload '%s'", w->name);
}
