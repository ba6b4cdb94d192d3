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
 * s_o(S) <= sum_{b in S} e_{b,o} (e_{b,o}: b's saving on o alone): the roofline max() can only
 * make a set save less than the sum of its parts, never more. f is also nondecreasing, so
 * s_o(S) <= cap_o, the saving with every use of o that may be fast (not pinned, not larger
 * than the capacity) fast. The LP's objective is therefore sum_o s_o with
 *     s_o <= sum_b e_{b,o} x_b  and  0 <= s_o <= cap_o;
 * where sum_b e_{b,o} <= cap_o the second never binds and s_o is substituted, so that such an
 * op's savings simply add to its buffers' coefficients (benefit_b when no op is capped, the LP
 * of earlier versions); a capped op keeps its column and row. (The capped ops are where
 * compute-bound convolutions and matmuls stop saving: on ssd_mobilenet_tf-edge they were the
 * whole 9% gap between the sum of standalone benefits and every solver.) A valid S keeps the
 * aligned bytes live at every time t under the aligned capacity (the fast buffers live at t
 * occupy disjoint aligned address ranges inside [0, capacity); "Alignment" below), so the
 * indicator vector of S with s_o = s_o(S) is feasible for the LP and saving(S) <= LP optimum.
 * By weak duality every y >= 0 (one entry per row) gives, with u_j a column's upper bound
 * (1 for a buffer, cap_o for an op) and c_j its objective coefficient,
 *     LP optimum <= sum_r ub_r y_r + sum_j u_j max(0, c_j - (A^T y)_j),
 * (ub_r: r(C) for a capacity row, 0 for an op's row, |C| - 1 for a cut, below; the capacity
 * rows are scaled by 1/r(C)), which this module evaluates from GLPK's row duals itself, so the
 * reported number is a bound even if the simplex stopped early or is slightly off numerically.
 * Integer picoseconds: each op time is rounded once (|error| <= 0.5 ps), so a set's rounded
 * saving on an op exceeds the sum of its members' rounded standalone savings by at most
 * 1 ps + 1 ps per member use; the bound adds n_uses + n_ops ps to cover it (op-less workloads
 * are additive by definition and get no slack). cap_o needs none: rounding to the nearest ps
 * is monotone, so no set's rounded op time is below that of all possible uses fast.
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

/* The LP's columns: first the candidate buffers (not pinned, fit the capacity, positive
 * benefit), numbered from 1 in col (0: fixed at 0), listed in order by start time; then one
 * per capped op (its saving, in units of scale). obj and the ops' upper bounds are in units
 * of scale. */
typedef struct lp_columns {
  const mb_time_ps *benefit;
  int32_t *col;     /* buffer -> column */
  int32_t *buffer;  /* column -> buffer (1..n_vars) */
  int64_t *size;    /* column -> aligned bytes (1..n_vars) */
  int64_t capacity; /* aligned */
  int32_t n_vars;   /* buffer columns */
  int32_t n_capped; /* op columns, n_vars + 1 .. n_vars + n_capped */
  double *obj;      /* column -> objective coefficient (1..n_vars + n_capped) */
  double *upper;    /* column -> upper bound (1 for a buffer) */
  double trivial;   /* the LP's optimum without capacity rows (in ps): every buffer fast */
  double scale;     /* ps per objective unit: the largest coefficient or op cap */
} lp_columns;

/* x rounded up to a multiple of align (>= 1). */
static int64_t round_up(int64_t x, int64_t align) { return (x + align - 1) / align * align; }

static void choose_columns(const mb_workload *w, const mb_hardware *hw, lp_columns *c,
                           by_start *order) {
  const int64_t align = hw->alignment > 0 ? hw->alignment : 1;
  c->capacity = round_up(hw->capacity, align);
  c->n_vars = 0;
  for (int32_t b = 0; b < w->n_buffers; b++) {
    const mb_buffer *buf = &w->buffers[b];
    c->col[b] = 0;
    if (buf->pinned || buf->size > hw->capacity || c->benefit[b] <= 0) continue;
    c->col[b] = ++c->n_vars;
    c->buffer[c->n_vars] = b;
    c->size[c->n_vars] = round_up(buf->size, align);
    order[c->n_vars - 1] = (by_start){buf->start, b};
  }
  qsort(order, (size_t)c->n_vars, sizeof *order, cmp_start);
}

/* The objective (see the comment at the top). An op whose candidates' standalone savings on it
 * (use_benefit) sum to more than its cap, what it saves with every use that may be fast
 * (neither pinned nor larger than the capacity) fast, gets a column s_o in [0, cap] and a row
 * s_o - sum of those savings x_b <= 0, appended to t (row numbers from first_row); every other
 * op's savings go to its candidates' coefficients. An op-less workload's coefficients are the
 * benefits. Fills obj, upper, n_capped, trivial and scale; false when out of memory. */
static bool build_objective(const mb_workload *w, const mb_hardware *hw,
                            const mb_time_ps *use_benefit, int32_t first_row, lp_columns *c,
                            triplets *t) {
  const size_t first_entry = t->n + 1;
  c->n_capped = 0;
  c->trivial = 0;
  for (int32_t j = 1; j <= c->n_vars; j++) {
    c->obj[j] = w->n_ops == 0 ? (double)c->benefit[c->buffer[j]] : 0;
    c->upper[j] = 1;
  }
  for (int32_t o = 0; o < w->n_ops; o++) {
    int64_t may_be_fast = 0;
    double sum = 0;
    for (int32_t k = w->op_use_start[o]; k < w->op_use_start[o + 1]; k++) {
      const mb_use *u = &w->uses[w->op_uses[k]];
      const mb_buffer *buf = &w->buffers[u->buffer];
      if (!buf->pinned && buf->size <= hw->capacity)
        may_be_fast += u->bytes_read + u->bytes_written;
      if (c->col[u->buffer]) sum += (double)use_benefit[w->op_uses[k]];
    }
    /* below zero only when the fast memory is the slower one; no set then saves on o */
    const double cap =
        fmax(0.0, (double)(mb_op_time(w, hw, o, 0) - mb_op_time(w, hw, o, may_be_fast)));
    const bool capped = sum > cap;
    const int32_t s_col = c->n_vars + c->n_capped + 1, row = first_row + c->n_capped;
    if (capped) {
      c->n_capped++;
      c->obj[s_col] = 1;
      c->upper[s_col] = cap;
      c->trivial += cap;
      if (!trip_push(t, row, s_col, 1.0)) return false;
    }
    for (int32_t k = w->op_use_start[o]; k < w->op_use_start[o + 1]; k++) {
      const int32_t col = c->col[w->uses[w->op_uses[k]].buffer];
      const double saving = (double)use_benefit[w->op_uses[k]];
      if (!col || saving <= 0) continue;
      if (!capped)
        c->obj[col] += saving;
      else if (!trip_push(t, row, col, -saving))
        return false;
    }
  }
  c->scale = 0;
  for (int32_t j = 1; j <= c->n_vars + c->n_capped; j++) {
    if (j <= c->n_vars) c->trivial += c->obj[j];
    double largest = j <= c->n_vars ? c->obj[j] : c->upper[j];
    if (largest > c->scale) c->scale = largest;
  }
  if (c->scale <= 0) c->scale = 1;
  /* in units of scale: a buffer's coefficient and its savings in op rows, an op column's bound */
  for (int32_t j = 1; j <= c->n_vars + c->n_capped; j++) {
    if (j <= c->n_vars)
      c->obj[j] /= c->scale;
    else
      c->upper[j] /= c->scale;
  }
  for (size_t k = first_entry; k <= t->n; k++)
    if (t->ja[k] <= c->n_vars) t->ar[k] /= c->scale;
  return true;
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

/* The weak-duality bound, in units of scale, of any y >= 0, here y = max(0, row duals) of
 * whatever state the simplex stopped in: sum_r ub_r y_r + sum_j u_j max(0, c_j - (A^T y)_j), over
 * every row of t (capacity rows, op rows and cuts alike) and every column j (bounds [0, u_j]).
 * reduced is scratch of n_vars + n_capped + 1 zeros. */
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
  for (int32_t j = 1; j <= c->n_vars + c->n_capped; j++) {
    double rc_j = c->obj[j] - reduced[j];
    if (rc_j > 0) dual += c->upper[j] * rc_j;
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

/* Solves the LP (objective in units of scale) until the deadline (wall seconds, 0: none),
 * then tightens it with up to cover_rounds rounds of cover cuts, and lowers *saving to the best
 * weak-duality bound of all the solves (dual_certificate), which is valid whatever state the
 * simplex stopped in. *solved tells whether every solve reached its optimum before the deadline
 * (then the answer is the same on every machine); *n_cuts counts the cuts added. False when out
 * of memory. */
static bool solve_dual_bound(const lp_columns *c, triplets *t, int32_t n_rows, size_t n_cap_entries,
                             double deadline, int cover_rounds, double *saving, bool *solved,
                             int32_t *n_cuts) {
  const int32_t n_cols = c->n_vars + c->n_capped;
  glp_prob *lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_cols(lp, n_cols);
  for (int32_t j = 1; j <= n_cols; j++) {
    glp_set_col_bnds(lp, j, GLP_DB, 0.0, c->upper[j]);
    glp_set_obj_coef(lp, j, c->obj[j]);
  }
  /* the capacity rows (<= 1, scaled), then the capped ops' rows (<= 0); the cuts follow */
  glp_add_rows(lp, n_rows + c->n_capped);
  for (int32_t r = 1; r <= n_rows + c->n_capped; r++)
    glp_set_row_bnds(lp, r, GLP_UP, 0.0, r <= n_rows ? 1.0 : 0.0);
  glp_load_matrix(lp, (int)t->n, t->ia, t->ja, t->ar);
  double *reduced = calloc((size_t)n_cols + 1, sizeof *reduced);
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
      double bound = dual_certificate(lp, c, t, reduced) * c->scale * (1 + 1e-9) + 1;
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
  size_t n_cols = (size_t)w->n_buffers + (size_t)w->n_ops + 1; /* at most */
  mb_time_ps *benefit = malloc(sizeof *benefit * nb);
  mb_time_ps *use_benefit = malloc(sizeof *use_benefit * (size_t)(w->n_uses ? w->n_uses : 1));
  lp_columns c = {.benefit = benefit,
                  .col = malloc(sizeof *c.col * nb),
                  .buffer = malloc(sizeof *c.buffer * (nb + 1)),
                  .size = malloc(sizeof *c.size * (nb + 1)),
                  .obj = malloc(sizeof *c.obj * n_cols),
                  .upper = malloc(sizeof *c.upper * n_cols)};
  by_start *order = malloc(sizeof *order * nb);
  int32_t *ends = malloc(sizeof *ends * nb);
  int32_t *active = malloc(sizeof *active * nb);
  triplets t = {0};
  bool ok = false;
  if (!benefit || !use_benefit || !c.col || !c.buffer || !c.size || !c.obj || !c.upper || !order ||
      !ends || !active) {
    mb_fail(err, "bound: out of memory for workload '%s'", w->name);
    goto done;
  }
  mb_standalone_benefits(w, hw, benefit);
  mb_use_benefits(w, hw, use_benefit);
  out->slow_ps = mb_slow_time(w, hw);
  const mb_time_ps slack = w->n_ops > 0 ? (mb_time_ps)w->n_uses + w->n_ops : 0;
  choose_columns(w, hw, &c, order);
  out->n_vars = c.n_vars;
  int32_t n_rows = add_capacity_rows(w, &c, order, ends, active, &t);
  const size_t n_cap_entries = t.n; /* the capped ops' rows follow, then the cuts */
  if (n_rows < 0 || !build_objective(w, hw, use_benefit, n_rows + 1, &c, &t)) {
    mb_fail(err, "bound: out of memory building the LP for workload '%s'", w->name);
    goto done;
  }
  out->n_constraints = n_rows;
  out->n_capped_ops = c.n_capped;

  double saving = c.trivial; /* the LP's optimum when no capacity row binds */
  out->status = MB_BOUND_SOLVED;
  if (c.n_vars > 0 && n_rows > 0) {
    bool solved = false;
    if (!solve_dual_bound(&c, &t, n_rows, n_cap_entries, budget_s > 0 ? t0 + budget_s : 0,
                          cover_rounds, &saving, &solved, &out->n_cuts)) {
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
  free(use_benefit);
  free(c.col);
  free(c.buffer);
  free(c.size);
  free(c.obj);
  free(c.upper);
  free(order);
  free(ends);
  free(active);
  out->seconds = mb_wall_seconds() - t0;
  return ok;
}
