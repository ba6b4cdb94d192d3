/* The LP upper bound on the achievable saving (see bound.h).
 *
 * Why it bounds every solver. Let S be the fast set of any valid assignment. On op o with
 * compute time c and all-slow memory time m0, moving buffer b's bytes to fast memory removes
 * d_b >= 0 of memory time (bytes x (1/slow_bw - 1/fast_bw)), so the op's time is
 * max(c, m0 - sum_{b in S} d_b) + overhead and its saving is f(sum_{b in S} d_b) with
 *     f(x) = max(c, m0) - max(c, m0 - x) = min(x, max(0, m0 - c))      (x >= 0).
 * f is concave with f(0) = 0, hence subadditive: f(x + y) <= f(x) + f(y). (Concave and
 * f(0) = 0 give f(tx) >= t f(x) for t in [0,1]; apply it to x = (x/(x+y))(x+y) and to y and
 * add.) So the saving of S on o is at most the sum of its members' standalone savings on o,
 * and summing over ops, saving(S) <= sum_{b in S} benefit_b: the roofline max() can only make
 * a set save less than the sum of its parts, never more. A valid S keeps the aligned bytes
 * live at every time t under the aligned capacity (the fast buffers live at t occupy disjoint
 * aligned address ranges inside [0, capacity); "Alignment" below), so the indicator vector of
 * S is feasible for the LP and saving(S) <= LP optimum. By weak duality every y >= 0 (one
 * entry per constraint) gives
 *     LP optimum <= sum_t r(C) y_t + sum_b max(0, benefit_b - r(size_b) sum_{t live} y_t),
 * (the first sum over each row's upper bound times its y: r(C) for a capacity row, |C| - 1 for
 * a cut, below; the rows are scaled by 1/r(C)), which this module evaluates from GLPK's row
 * duals itself, so the reported number is a bound
 * even if the simplex stopped early or is slightly off numerically.
 * Integer picoseconds: each op time is rounded once (|error| <= 0.5 ps), so a set's rounded
 * saving on an op exceeds the sum of its members' rounded standalone savings by at most
 * 1 ps + 1 ps per member use; the bound adds n_uses + n_ops ps to cover it (op-less workloads
 * are additive by definition and get no slack).
 *
 * Alignment: every fast offset is a multiple of the alignment A, so the fast buffers live at
 * t, sorted by offset, each start at or after the previous one's end rounded up to A: each
 * occupies its size rounded up to A, r(size), and the last ends inside the capacity C, so
 *     sum over the fast buffers live at t of r(size_b) <= r(C)
 * (the rounded sizes of the buffers below the last one sum to at most its offset off, a
 * multiple of A, and off + r(size) = r(off + size) <= r(C)). The rows use r(size) and r(C): a valid
 * S is still feasible, and the LP no longer counts bytes that alignment wastes. (For A = 1 they are
 * the plain byte constraints.)
 *
 * Cover cuts: let R be one capacity row's set of candidates (buffers live together at one time)
 * and C a subset of R whose aligned sizes sum to more than r(C) (a cover). No valid S holds all
 * of C, since their aligned bytes would exceed the aligned capacity at that time, so
 * sum_{b in C} x_b <= |C| - 1 for the indicator of every valid S. The extension E adds the
 * buffers of R at least as large as C's largest: any |C| of E are at least as large, one for
 * one, as C's, so they do not fit either, and sum_{b in E} x_b <= |C| - 1 holds too. Added as
 * rows with upper bound |C| - 1, they keep every valid S feasible, so the weak-duality bound
 * above, taken over all rows, still bounds every solver; sizes are compared as integers, so a
 * cut never rests on rounding. The separation is the classic greedy one: the row's candidates
 * sorted by (1 - x_b) / size_b at the current solution x, taken until they exceed the capacity.
 *
 * Constraints: the set live at time t is contained in the set live at the latest buffer start
 * s <= t (every buffer live at t started at or before s and ends at or after t >= s), so start
 * times suffice; a start time whose live set is contained in the next start time's (no live
 * buffer ends in between) is dropped too, as is any whose bytes fit anyway. What remains are
 * the maximal sets of buffers live together, found by one sweep with a heap of end times. */
#include "bound.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cost.h"
#include "heap.h"

const char *mb_bound_status_name(mb_bound_status s) {
  return s == MB_BOUND_SOLVED ? "solved" : "not solved";
}

typedef struct by_start {
  int32_t start, id;
} by_start;

static int cmp_start(const void *a, const void *b) {
  const by_start *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Min-heap of end times. */
static bool end_less(int32_t a, int32_t b) { return a < b; }
MB_HEAP_DEFINE(end_heap, int32_t, end_less);

/* Growable triplet arrays for the constraint matrix (GLPK wants 1-based ia/ja/ar). */
typedef struct triplets {
  int *ia, *ja;
  double *ar;
  size_t n, cap;
} triplets;

static bool trip_push(triplets *t, int row, int col, double v) {
  if (t->n + 2 > t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 4096;
    int *a = realloc(t->ia, sizeof *a * cap);
    if (a) t->ia = a;
    int *b = realloc(t->ja, sizeof *b * cap);
    if (b) t->ja = b;
    double *c = realloc(t->ar, sizeof *c * cap);
    if (c) t->ar = c;
    if (!a || !b || !c) return false;
    t->cap = cap;
  }
  t->n++; /* index 0 unused */
  t->ia[t->n] = row;
  t->ja[t->n] = col;
  t->ar[t->n] = v;
  return true;
}

/* The LP's columns: the candidate buffers (not pinned, fit the capacity, positive benefit),
 * numbered from 1 in col (0: fixed at 0), listed in order by start time. */
typedef struct lp_columns {
  const mb_time_ps *benefit;
  int32_t *col;     /* buffer -> column */
  int32_t *buffer;  /* column -> buffer (1..n_vars) */
  int64_t *size;    /* column -> aligned bytes (1..n_vars) */
  int64_t capacity; /* aligned */
  int32_t n_vars;
  double trivial, max_benefit; /* sum and largest of the candidates' benefits */
} lp_columns;

/* x rounded up to a multiple of align (>= 1). */
static int64_t round_up(int64_t x, int64_t align) { return (x + align - 1) / align * align; }

static void choose_columns(const mb_workload *w, const mb_hardware *hw, lp_columns *c,
                           by_start *order) {
  const int64_t align = hw->alignment > 0 ? hw->alignment : 1;
  c->capacity = round_up(hw->capacity, align);
  c->n_vars = 0;
  c->trivial = c->max_benefit = 0;
  for (int32_t b = 0; b < w->n_buffers; b++) {
    const mb_buffer *buf = &w->buffers[b];
    c->col[b] = 0;
    if (buf->pinned || buf->size > hw->capacity || c->benefit[b] <= 0) continue;
    c->col[b] = ++c->n_vars;
    c->buffer[c->n_vars] = b;
    c->size[c->n_vars] = round_up(buf->size, align);
    c->trivial += (double)c->benefit[b];
    if ((double)c->benefit[b] > c->max_benefit) c->max_benefit = (double)c->benefit[b];
    order[c->n_vars - 1] = (by_start){buf->start, b};
  }
  qsort(order, (size_t)c->n_vars, sizeof *order, cmp_start);
}

/* The rows, in aligned bytes (see the comment at the top) and scaled by 1/capacity: one per
 * maximal set of candidates live together whose aligned bytes exceed the aligned capacity,
 * found by a sweep over start times (ends and active are scratch). The number of rows, or -1
 * when out of memory. */
static int32_t add_capacity_rows(const mb_workload *w, const lp_columns *c, const by_start *order,
                                 int32_t *ends, int32_t *active, triplets *t) {
  const int32_t n_order = c->n_vars;
  int32_t n_heap = 0, n_active = 0, n_rows = 0;
  const double cap = (double)c->capacity;
  for (int32_t i = 0; i < n_order;) {
    int32_t s = order[i].start;
    for (; i < n_order && order[i].start == s; i++) {
      active[n_active++] = order[i].id;
      end_heap_push(ends, &n_heap, w->buffers[order[i].id].end);
    }
    while (n_heap > 0 && ends[0] < s) end_heap_pop(ends, &n_heap);
    bool last = i == n_order;
    if (!last && ends[0] >= order[i].start) continue; /* contained in the next start's set */
    int32_t k = 0;
    int64_t bytes = 0;
    for (int32_t j = 0; j < n_active; j++) {
      if (w->buffers[active[j]].end < s) continue;
      active[k++] = active[j];
      bytes += c->size[c->col[active[j]]];
    }
    n_active = k;
    if (bytes <= c->capacity) continue;
    n_rows++;
    for (int32_t j = 0; j < n_active; j++) {
      int32_t col = c->col[active[j]];
      if (!trip_push(t, n_rows, col, (double)c->size[col] / cap)) return -1;
    }
  }
  return n_rows;
}

/* The weak-duality bound, in units of max_benefit, of any y >= 0, here y = max(0, row duals) of
 * whatever state the simplex stopped in: sum_r ub_r y_r + sum_b max(0, c_b - (A^T y)_b), over
 * every row of t (capacity rows and cuts alike). reduced is scratch of n_vars + 1 zeros. */
static double dual_certificate(glp_prob *lp, const lp_columns *c, const triplets *t,
                               double *reduced) {
  double dual = 0;
  const int n_rows = glp_get_num_rows(lp);
  for (int r = 1; r <= n_rows; r++) {
    double y = glp_get_row_dual(lp, r);
    if (y > 0) dual += glp_get_row_ub(lp, r) * y;
  }
  for (size_t k = 1; k <= t->n; k++) {
    double y = glp_get_row_dual(lp, t->ia[k]);
    if (y > 0) reduced[t->ja[k]] += t->ar[k] * y;
  }
  for (int32_t j = 1; j <= c->n_vars; j++) {
    double rc_j = (double)c->benefit[c->buffer[j]] / c->max_benefit - reduced[j];
    if (rc_j > 0) dual += rc_j;
    reduced[j] = 0;
  }
  return dual;
}

/* A candidate of one capacity row, for the cover separation. */
typedef struct cover_item {
  int32_t col;
  int64_t size; /* aligned bytes */
  double x;     /* its value in the current LP solution */
} cover_item;

/* Most promising first: the least of the (1 - x) the cut gives up per byte it covers. */
static int cmp_cover_item(const void *a, const void *b) {
  const cover_item *p = a, *q = b;
  double kp = (1 - p->x) * (double)q->size, kq = (1 - q->x) * (double)p->size;
  if (kp != kq) return kp < kq ? -1 : 1;
  return (p->col > q->col) - (p->col < q->col);
}

/* One round of cover cuts (see the comment at the top): for each capacity row of t (its first
 * n_cap_entries entries), the cover of the items with the least (1 - x) per byte and its extension,
 * added as a row (and to t) when the current solution violates it. The number of cuts added, or -1
 * when out of memory. items and cut_cols are scratch of n_vars + 1. */
static int32_t add_cover_cuts(glp_prob *lp, const lp_columns *c, triplets *t, size_t n_cap_entries,
                              cover_item *items, int *cut_cols) {
  int32_t added = 0;
  for (size_t k = 1; k <= n_cap_entries;) {
    const int row = t->ia[k];
    int32_t n = 0;
    for (; k <= n_cap_entries && t->ia[k] == row; k++) {
      int32_t j = t->ja[k];
      items[n++] = (cover_item){j, c->size[j], glp_get_col_prim(lp, j)};
    }
    qsort(items, (size_t)n, sizeof *items, cmp_cover_item);
    int64_t bytes = 0, largest = 0;
    int32_t m = 0;
    for (; m < n && bytes <= c->capacity; m++) {
      bytes += items[m].size;
      if (items[m].size > largest) largest = items[m].size;
    }
    if (bytes <= c->capacity) continue; /* not a cover: the row's candidates all fit */
    int n_cut = 0;
    double lhs = 0;
    for (int32_t i = 0; i < n; i++) {
      if (i >= m && items[i].size < largest) continue;
      cut_cols[++n_cut] = items[i].col;
      lhs += items[i].x;
    }
    if (lhs <= (double)(m - 1) + 1e-6) continue;
    int r = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, r, GLP_UP, 0.0, (double)(m - 1));
    for (int i = 1; i <= n_cut; i++)
      if (!trip_push(t, r, cut_cols[i], 1.0)) return -1;
    glp_set_mat_row(lp, r, n_cut, cut_cols, t->ar + t->n - n_cut);
    added++;
  }
  return added;
}

/* Solves the LP (objective scaled by 1/max_benefit) until the deadline (wall seconds, 0: none),
 * then tightens it with up to cover_rounds rounds of cover cuts, and lowers *saving to the best
 * weak-duality bound of all the solves (dual_certificate), which is valid whatever state the
 * simplex stopped in. *solved tells whether every solve reached its optimum before the deadline
 * (then the answer is the same on every machine); *n_cuts counts the cuts added. False when out
 * of memory. */
static bool solve_dual_bound(const lp_columns *c, triplets *t, int32_t n_rows, double deadline,
                             int cover_rounds, double *saving, bool *solved, int32_t *n_cuts) {
  glp_prob *lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_cols(lp, c->n_vars);
  for (int32_t j = 1; j <= c->n_vars; j++) {
    glp_set_col_bnds(lp, j, GLP_DB, 0.0, 1.0);
    glp_set_obj_coef(lp, j, (double)c->benefit[c->buffer[j]] / c->max_benefit);
  }
  glp_add_rows(lp, n_rows);
  for (int32_t r = 1; r <= n_rows; r++) glp_set_row_bnds(lp, r, GLP_UP, 0.0, 1.0);
  glp_load_matrix(lp, (int)t->n, t->ia, t->ja, t->ar);
  const size_t n_cap_entries = t->n; /* the cuts' entries follow */
  double *reduced = calloc((size_t)c->n_vars + 1, sizeof *reduced);
  cover_item *items = malloc(sizeof *items * ((size_t)c->n_vars + 1));
  int *cut_cols = malloc(sizeof *cut_cols * ((size_t)c->n_vars + 1));
  bool ok = reduced && items && cut_cols;
  *solved = true; /* until a solve stops short: the answer then depends on the machine */
  *n_cuts = 0;
  for (int round = 0; ok && round <= cover_rounds; round++) {
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    /* After a round of cuts the previous optimal basis is still dual feasible: the dual
     * simplex re-solves from it (twice as fast on the slowest catalogue case) */
    if (round > 0) parm.meth = GLP_DUALP;
    if (deadline > 0) {
      double left_ms = (deadline - mb_wall_seconds()) * 1000.0;
      if (round > 0 && left_ms < 1) {
        *solved = false;
        break;
      }
      parm.tm_lim = left_ms < 1 ? 1 : left_ms > 2e9 ? 2000000000 : (int)left_ms;
    }
    int rc = glp_simplex(lp, &parm);
    bool optimal = rc == 0 && glp_get_status(lp) == GLP_OPT;
    if (!optimal) *solved = false;
    if (rc == 0 || rc == GLP_ETMLIM || rc == GLP_EITLIM) {
      /* A relative 1e-9 pad covers floating-point error in the certificate's sum. */
      double bound = dual_certificate(lp, c, t, reduced) * c->max_benefit * (1 + 1e-9) + 1;
      if (bound < *saving) *saving = bound;
    }
    if (!optimal || round == cover_rounds) break;
    int32_t added = add_cover_cuts(lp, c, t, n_cap_entries, items, cut_cols);
    if (added < 0) ok = false;
    if (added <= 0) break;
    *n_cuts += added;
  }
  free(reduced);
  free(items);
  free(cut_cols);
  glp_delete_prob(lp);
  return ok;
}

bool mb_bound_lp(const mb_workload *w, const mb_hardware *hw, double budget_s, mb_bound_result *out,
                 mb_error *err) {
  return mb_bound_lp_cuts(w, hw, budget_s, MB_BOUND_COVER_ROUNDS, out, err);
}

bool mb_bound_lp_cuts(const mb_workload *w, const mb_hardware *hw, double budget_s,
                      int cover_rounds, mb_bound_result *out, mb_error *err) {
  double t0 = mb_wall_seconds();
  memset(out, 0, sizeof *out);
  if (hw->capacity <= 0)
    return mb_fail(err, "bound: hardware '%s': capacity %lld <= 0", hw->name,
                   (long long)hw->capacity);
  size_t nb = (size_t)(w->n_buffers ? w->n_buffers : 1);
  mb_time_ps *benefit = malloc(sizeof *benefit * nb);
  lp_columns c = {.benefit = benefit,
                  .col = malloc(sizeof *c.col * nb),
                  .buffer = malloc(sizeof *c.buffer * (nb + 1)),
                  .size = malloc(sizeof *c.size * (nb + 1))};
  by_start *order = malloc(sizeof *order * nb);
  int32_t *ends = malloc(sizeof *ends * nb);
  int32_t *active = malloc(sizeof *active * nb);
  triplets t = {0};
  bool ok = false;
  if (!benefit || !c.col || !c.buffer || !c.size || !order || !ends || !active) {
    mb_fail(err, "bound: out of memory for workload '%s'", w->name);
    goto done;
  }
  mb_standalone_benefits(w, hw, benefit);
  out->slow_ps = mb_slow_time(w, hw);
  const mb_time_ps slack = w->n_ops > 0 ? (mb_time_ps)w->n_uses + w->n_ops : 0;
  choose_columns(w, hw, &c, order);
  out->n_vars = c.n_vars;
  int32_t n_rows = add_capacity_rows(w, &c, order, ends, active, &t);
  if (n_rows < 0) {
    mb_fail(err, "bound: out of memory building the LP for workload '%s'", w->name);
    goto done;
  }
  out->n_constraints = n_rows;

  double saving = c.trivial;
  out->status = MB_BOUND_SOLVED;
  if (c.n_vars > 0 && n_rows > 0) {
    bool solved = false;
    if (!solve_dual_bound(&c, &t, n_rows, budget_s > 0 ? t0 + budget_s : 0, cover_rounds, &saving,
                          &solved, &out->n_cuts)) {
      mb_fail(err, "bound: out of memory for workload '%s'", w->name);
      goto done;
    }
    if (!solved) out->status = MB_BOUND_NOT_SOLVED;
  }
  out->saving_ps = (mb_time_ps)ceil(saving) + slack;
  if (out->saving_ps > out->slow_ps && w->n_ops > 0) out->saving_ps = out->slow_ps;
  out->bound_ps = out->slow_ps - out->saving_ps;
  ok = true;
done:
  free(t.ia);
  free(t.ja);
  free(t.ar);
  free(benefit);
  free(c.col);
  free(c.buffer);
  free(c.size);
  free(order);
  free(ends);
  free(active);
  out->seconds = mb_wall_seconds() - t0;
  return ok;
}
