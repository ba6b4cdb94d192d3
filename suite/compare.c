/* mallocbench compare: two results files side by side (compare.h). */
#include "compare.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "stats.h"

/* ratios within this relative distance of 1 are level, as ties are in the summary table */
#define LEVEL_TOLERANCE 1e-9

typedef struct side {
  mb_results *r;
  const char *name;
  mb_result_row *rows;
  int64_t n_rows;
  mb_baseline_row *baselines;
  int64_t n_baselines;
  const mb_result_row **sorted_rows; /* by job key */
  const mb_baseline_row **sorted_baselines;
} side;

typedef struct pair {
  const mb_result_row *a, *b;
} pair;

/* The account being printed: differences are listed one per line up to max_listed, and all
 * counted. */
typedef struct printer {
  FILE *out;
  int64_t listed, max_listed;
} printer;

static void list_line(printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void list_line(printer *p, const char *fmt, ...) {
  if (p->listed++ >= p->max_listed) return;
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  mb_diag(p->out, "%s", text); /* names come from the files: escaped (error.h) */
}

/* The fields of one matched pair that differ, as "name A -> B, ..." */
typedef struct field_diffs {
  char text[1024];
  size_t len;
  int n;
} field_diffs;

static void add_diff(field_diffs *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_diff(field_diffs *d, const char *fmt, ...) {
  d->n++;
  if (d->len + 2 >= sizeof d->text) return;
  if (d->n > 1) d->len += (size_t)snprintf(d->text + d->len, sizeof d->text - d->len, ", ");
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(d->text + d->len, sizeof d->text - d->len, fmt, ap);
  va_end(ap);
  if (k > 0)
    d->len += (size_t)k < sizeof d->text - d->len ? (size_t)k : sizeof d->text - 1 - d->len;
}

static void diff_i64(field_diffs *d, const char *name, int64_t a, int64_t b) {
  if (a != b) add_diff(d, "%s %" PRId64 " -> %" PRId64, name, a, b);
}

static void diff_str(field_diffs *d, const char *name, const char *a, const char *b) {
  if (strcmp(a, b)) add_diff(d, "%s '%s' -> '%s'", name, a, b);
}

/* exact equality: the numbers are read back from the files, not recomputed */
static void diff_dbl(field_diffs *d, const char *name, double a, double b) {
  if (a != b && !(isnan(a) && isnan(b))) add_diff(d, "%s %.17g -> %.17g", name, a, b);
}

static int cmp_job(const mb_result_row *x, const mb_result_row *y) {
  int c = strcmp(x->workload, y->workload);
  if (!c) c = strcmp(x->hardware, y->hardware);
  if (!c) c = strcmp(x->solver, y->solver);
  if (!c) c = (x->seed > y->seed) - (x->seed < y->seed);
  return c;
}

static int cmp_job_ptr(const void *x, const void *y) {
  return cmp_job(*(const mb_result_row *const *)x, *(const mb_result_row *const *)y);
}

static int cmp_case(const mb_baseline_row *x, const mb_baseline_row *y) {
  int c = strcmp(x->workload, y->workload);
  return c ? c : strcmp(x->hardware, y->hardware);
}

static int cmp_case_ptr(const void *x, const void *y) {
  return cmp_case(*(const mb_baseline_row *const *)x, *(const mb_baseline_row *const *)y);
}

/* per solver, then case, then seed: the order of the per-solver table */
static int cmp_pair_by_solver(const void *x, const void *y) {
  const pair *p = x, *q = y;
  int c = strcmp(p->a->solver, q->a->solver);
  return c ? c : cmp_job(p->a, q->a);
}

/* The split this file records for each of its stored workloads (n_keys pairs); an entry is ""
 * when the copy has no split attribute. */
typedef struct splits {
  char **keys;
  char (*split)[MB_RES_SPLIT];
  int32_t n;
} splits;

static const char *split_of(const splits *sp, const char *workload) {
  for (int32_t i = 0; i < sp->n; i++)
    if (!strcmp(sp->keys[i], workload)) return sp->split[i];
  return ""; /* no stored copy */
}

/* keep[i] = keep[i] && the workload at first + i * stride is of split `split` */
static void select_split(const splits *sp, const char *first, size_t stride, int64_t n,
                         const char *split, bool *keep) {
  for (int64_t i = 0; i < n; i++)
    keep[i] = keep[i] && !strcmp(split_of(sp, first + (size_t)i * stride), split);
}

static bool read_splits(const side *s, splits *sp, mb_error *err) {
  memset(sp, 0, sizeof *sp);
  if (!mb_results_workload_keys(s->r, &sp->keys, &sp->n, err)) return false;
  sp->split = calloc((size_t)sp->n + 1, sizeof *sp->split);
  if (!sp->split) return mb_fail(err, "%s: out of memory reading its splits", s->name);
  bool known = false;
  for (int32_t i = 0; i < sp->n; i++) {
    if (!mb_results_get_workload_split(s->r, sp->keys[i], sp->split[i], err)) return false;
    known = known || sp->split[i][0];
  }
  if (!known && sp->n > 0)
    return mb_fail(err,
                   "%s: no split information (the file was written before results recorded each "
                   "workload's catalogue split): cannot compare the cases of one split",
                   s->name);
  return true;
}

/* The next item of a comma-separated list at *p (its length in *len), advancing *p past it;
 * NULL at the end. */
static const char *next_item(const char **p, size_t *len) {
  if (!*p) return NULL;
  const char *item = *p, *comma = strchr(item, ',');
  *len = comma ? (size_t)(comma - item) : strlen(item);
  *p = comma ? comma + 1 : NULL;
  return item;
}

/* Whether `name` is one of the comma-separated `list` */
static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name), len;
  for (const char *item; (item = next_item(&list, &len));)
    if (len == n && !strncmp(item, name, n)) return true;
  return false;
}

/* Drops the rows and baselines whose workload (or solver) the filter leaves out, compacting
 * the arrays. */
static bool filter_side(side *s, const mb_compare_filter *f, mb_error *err) {
  if (!f || (!f->workloads && !f->split && !f->solvers)) return true;
  bool *keep_rows = malloc(sizeof *keep_rows * (size_t)(s->n_rows + 1));
  bool *keep_base = malloc(sizeof *keep_base * (size_t)(s->n_baselines + 1));
  splits sp = {0};
  bool ok = keep_rows && keep_base;
  if (!ok) mb_fail(err, "%s: out of memory selecting its cases", s->name);
  /* the tables hold fewer than 2^31 rows: run plans are far smaller */
  const char *row_names = s->n_rows > 0 ? s->rows[0].workload : NULL;
  const char *base_names = s->n_baselines > 0 ? s->baselines[0].workload : NULL;
  ok = ok &&
       mb_names_select(row_names, sizeof *s->rows, (int32_t)s->n_rows, f->workloads, "--workloads",
                       keep_rows, err) &&
       mb_names_select(base_names, sizeof *s->baselines, (int32_t)s->n_baselines, f->workloads,
                       "--workloads", keep_base, err);
  if (ok && f->split && read_splits(s, &sp, err)) {
    select_split(&sp, row_names, sizeof *s->rows, s->n_rows, f->split, keep_rows);
    select_split(&sp, base_names, sizeof *s->baselines, s->n_baselines, f->split, keep_base);
  } else if (f->split) {
    ok = false;
  }
  if (ok) {
    int64_t k = 0;
    for (int64_t i = 0; i < s->n_rows; i++)
      if (keep_rows[i] && (!f->solvers || in_list(f->solvers, s->rows[i].solver)))
        s->rows[k++] = s->rows[i];
    s->n_rows = k;
    k = 0;
    for (int64_t i = 0; i < s->n_baselines; i++)
      if (keep_base[i]) s->baselines[k++] = s->baselines[i];
    s->n_baselines = k;
  }
  mb_results_free_strings(sp.keys, sp.n);
  free(sp.split);
  free(keep_rows);
  free(keep_base);
  return ok;
}

static bool load_side(side *s, const mb_compare_filter *filter, mb_error *err) {
  if (!mb_results_read_rows(s->r, &s->rows, &s->n_rows, err) ||
      !mb_results_read_baselines(s->r, &s->baselines, &s->n_baselines, err) ||
      !filter_side(s, filter, err))
    return false;
  s->sorted_rows = malloc(sizeof *s->sorted_rows * (size_t)(s->n_rows + 1));
  s->sorted_baselines = malloc(sizeof *s->sorted_baselines * (size_t)(s->n_baselines + 1));
  if (!s->sorted_rows || !s->sorted_baselines)
    return mb_fail(err, "%s: out of memory comparing its rows", s->name);
  for (int64_t i = 0; i < s->n_rows; i++) s->sorted_rows[i] = &s->rows[i];
  for (int64_t i = 0; i < s->n_baselines; i++) s->sorted_baselines[i] = &s->baselines[i];
  qsort(s->sorted_rows, (size_t)s->n_rows, sizeof *s->sorted_rows, cmp_job_ptr);
  qsort(s->sorted_baselines, (size_t)s->n_baselines, sizeof *s->sorted_baselines, cmp_case_ptr);
  return true;
}

static void free_side(side *s) {
  free(s->rows);
  free(s->baselines);
  free(s->sorted_rows);
  free(s->sorted_baselines);
}

/* Adds "assignment: N of M offsets" to d when the two stored assignments differ (one absent
 * and the other not counts as differing; both absent, e.g. two failed solves, as equal), and
 * frees both. *differs tells. */
static void diff_offsets(mb_assignment *x, bool x_absent, mb_assignment *y, bool y_absent,
                         field_diffs *d, bool *differs) {
  *differs = false;
  if (x_absent || y_absent) {
    *differs = x_absent != y_absent;
    if (*differs)
      add_diff(d, "assignment %s -> %s", x_absent ? "none" : "stored",
               y_absent ? "none" : "stored");
  } else if (x->n_buffers != y->n_buffers) {
    *differs = true;
    add_diff(d, "assignment of %d -> %d buffers", (int)x->n_buffers, (int)y->n_buffers);
  } else {
    int32_t n = 0;
    for (int32_t i = 0; i < x->n_buffers; i++) n += x->offset[i] != y->offset[i];
    *differs = n > 0;
    if (n) add_diff(d, "assignment: %d of %d offsets", (int)n, (int)x->n_buffers);
  }
  mb_assignment_free(x);
  mb_assignment_free(y);
}

static bool compare_row_assignments(const side *A, const side *B, const pair *p, field_diffs *d,
                                    bool *differs, mb_error *err) {
  bool xa = false, ya = false;
  mb_assignment *x = mb_results_get_assignment(A->r, p->a, &xa, err);
  if (!x && !xa) return false;
  mb_assignment *y = mb_results_get_assignment(B->r, p->b, &ya, err);
  if (!y && !ya) {
    mb_assignment_free(x);
    return false;
  }
  diff_offsets(x, xa, y, ya, d, differs);
  return true;
}

static bool compare_jobs(const side *A, const side *B, printer *p, pair **pairs, int64_t *n_pairs,
                         mb_compare_counts *c, mb_error *err) {
  *pairs = malloc(sizeof **pairs * (size_t)(A->n_rows + 1));
  if (!*pairs) return mb_fail(err, "%s: out of memory comparing its rows", A->name);
  int64_t i = 0, j = 0;
  while (i < A->n_rows || j < B->n_rows) {
    const mb_result_row *x = i < A->n_rows ? A->sorted_rows[i] : NULL;
    const mb_result_row *y = j < B->n_rows ? B->sorted_rows[j] : NULL;
    int order = !x ? 1 : !y ? -1 : cmp_job(x, y);
    const mb_result_row *only = order < 0 ? x : order > 0 ? y : NULL;
    if (only) {
      list_line(p, "ONLY %s: job %s on %s, %s, seed %" PRId64, order < 0 ? "A" : "B",
                only->workload, only->hardware, only->solver, only->seed);
      if (order < 0) {
        c->rows_only_a++;
        i++;
      } else {
        c->rows_only_b++;
        j++;
      }
      continue;
    }
    pair pr = {x, y};
    (*pairs)[(*n_pairs)++] = pr;
    c->matched_rows++;
    i++;
    j++;
    field_diffs d = {.len = 0};
    diff_str(&d, "status", x->status, y->status);
    diff_i64(&d, "valid", x->valid, y->valid);
    diff_i64(&d, "capacity", x->capacity, y->capacity);
    diff_i64(&d, "n_buffers", x->n_buffers, y->n_buffers);
    diff_i64(&d, "n_fast", x->n_fast, y->n_fast);
    diff_i64(&d, "fast_bytes", x->fast_bytes, y->fast_bytes);
    diff_i64(&d, "t_slow_ps", x->t_slow_ps, y->t_slow_ps);
    diff_i64(&d, "t_heuristic_ps", x->t_heuristic_ps, y->t_heuristic_ps);
    diff_i64(&d, "t_solver_ps", x->t_solver_ps, y->t_solver_ps);
    diff_i64(&d, "t_bound_ps", x->t_bound_ps, y->t_bound_ps);
    diff_i64(&d, "iterations", x->iterations, y->iterations);
    diff_i64(&d, "budget_hit", x->budget_hit, y->budget_hit);
    bool fields = d.n > 0, offsets = false;
    if (!compare_row_assignments(A, B, &pr, &d, &offsets, err)) return false;
    c->differing_assignments += offsets;
    if (!fields && !offsets) continue;
    c->differing_rows++;
    bool budget = x->budget_hit || y->budget_hit;
    c->differing_budget_hit += budget;
    list_line(p, "DIFF job %s on %s, %s, seed %" PRId64 ": %s%s", x->workload, x->hardware,
              x->solver, x->seed, d.text,
              budget ? " (stopped on its wall-clock budget: depends on the machine's speed)" : "");
  }
  return true;
}

static bool compare_baselines(const side *A, const side *B, printer *p, mb_compare_counts *c,
                              mb_error *err) {
  int64_t i = 0, j = 0;
  while (i < A->n_baselines || j < B->n_baselines) {
    const mb_baseline_row *x = i < A->n_baselines ? A->sorted_baselines[i] : NULL;
    const mb_baseline_row *y = j < B->n_baselines ? B->sorted_baselines[j] : NULL;
    int order = !x ? 1 : !y ? -1 : cmp_case(x, y);
    if (order) {
      const mb_baseline_row *only = order < 0 ? x : y;
      list_line(p, "ONLY %s: baseline %s on %s", order < 0 ? "A" : "B", only->workload,
                only->hardware);
      if (order < 0) {
        c->baselines_only_a++;
        i++;
      } else {
        c->baselines_only_b++;
        j++;
      }
      continue;
    }
    c->matched_baselines++;
    i++;
    j++;
    field_diffs d = {.len = 0};
    diff_str(&d, "profile_sha256", x->profile_sha256, y->profile_sha256);
    diff_i64(&d, "capacity", x->capacity, y->capacity);
    diff_i64(&d, "alignment", x->alignment, y->alignment);
    diff_dbl(&d, "slow_bandwidth", x->slow_bandwidth, y->slow_bandwidth);
    diff_dbl(&d, "fast_bandwidth", x->fast_bandwidth, y->fast_bandwidth);
    diff_dbl(&d, "peak_flops", x->peak_flops, y->peak_flops);
    diff_dbl(&d, "op_overhead_s", x->op_overhead_s, y->op_overhead_s);
    diff_i64(&d, "t_slow_ps", x->t_slow_ps, y->t_slow_ps);
    diff_i64(&d, "t_heuristic_ps", x->t_heuristic_ps, y->t_heuristic_ps);
    diff_i64(&d, "t_bound_ps", x->t_bound_ps, y->t_bound_ps);
    diff_str(&d, "bound_status", x->bound_status, y->bound_status);
    bool fields = d.n > 0, offsets = false, xa = false, ya = false;
    mb_assignment *ax = mb_results_get_baseline_assignment(A->r, x, &xa, err);
    if (!ax && !xa) return false;
    mb_assignment *ay = mb_results_get_baseline_assignment(B->r, y, &ya, err);
    if (!ay && !ya) {
      mb_assignment_free(ax);
      return false;
    }
    diff_offsets(ax, xa, ay, ya, &d, &offsets);
    c->differing_assignments += offsets;
    if (!fields && !offsets) continue;
    c->differing_baselines++;
    list_line(p, "DIFF baseline %s on %s: %s", x->workload, x->hardware, d.text);
  }
  return true;
}

/* Whether the side has a (selected) baseline of the workload: the copies compared are those of
 * the cases compared. */
static bool has_case(const side *s, const char *workload) {
  for (int64_t i = 0; i < s->n_baselines; i++)
    if (!strcmp(s->baselines[i].workload, workload)) return true;
  return false;
}

static bool compare_workloads(const side *A, const side *B, printer *p, mb_compare_counts *c,
                              mb_error *err) {
  char **ka = NULL, **kb = NULL;
  int32_t na = 0, nb = 0;
  bool ok = mb_results_workload_keys(A->r, &ka, &na, err) &&
            mb_results_workload_keys(B->r, &kb, &nb, err);
  for (int32_t i = 0; ok && i < na; i++) {
    int32_t j = 0;
    while (j < nb && strcmp(ka[i], kb[j])) j++;
    /* only in A: its baselines and jobs are listed as such; outside the filter: not compared */
    if (j == nb || !(has_case(A, ka[i]) || has_case(B, ka[i]))) continue;
    char sa[MB_RES_SHA], sb[MB_RES_SHA];
    ok = mb_results_get_workload_sha256(A->r, ka[i], sa, err) &&
         mb_results_get_workload_sha256(B->r, kb[j], sb, err);
    if (!ok) break;
    c->common_workloads++;
    if (!strcmp(sa, sb)) continue;
    c->differing_workloads++;
    list_line(p, "DIFF workload %s: stored copies differ (SHA-256 %.12s -> %.12s)", ka[i], sa, sb);
  }
  mb_results_free_strings(ka, na);
  mb_results_free_strings(kb, nb);
  return ok;
}

/* A value as one short line, from `from` bytes in ("..." before it when from > 0), cut to fit
 * (long values, such as command lines and lists of hashes, usually differ near their end). */
static void short_value(char *out, size_t n, const char *v, size_t from) {
  const char *lead = from > 0 ? "..." : "";
  v += from;
  if (strlen(v) + strlen(lead) < n)
    snprintf(out, n, "%s%s", lead, v);
  else
    snprintf(out, n, "%s%.*s...", lead, (int)(n - 7), v);
}

/* Where to start showing two values so that the first difference is in view. */
static size_t shown_from(const char *x, const char *y) {
  size_t d = 0;
  while (x[d] && x[d] == y[d]) d++;
  return d > 24 ? d - 16 : 0;
}

static const char *attr_value(char **keys, char **values, int32_t n, const char *key) {
  for (int32_t i = 0; i < n; i++)
    if (!strcmp(keys[i], key)) return values[i];
  return NULL;
}

/* Lists the root attributes whose values differ or that only one file has, except the run's
 * start and end times (always different). */
static bool compare_provenance(const side *A, const side *B, printer *p, mb_compare_counts *c,
                               mb_error *err) {
  char **ka = NULL, **va = NULL, **kb = NULL, **vb = NULL;
  int32_t na = 0, nb = 0;
  bool ok = mb_results_list_attrs(A->r, &ka, &va, &na, err);
  if (ok && !mb_results_list_attrs(B->r, &kb, &vb, &nb, err)) {
    ok = false;
  }
  for (int32_t pass = 0; ok && pass < 2; pass++) {
    /* pass 0: A's keys (differing or only in A); pass 1: keys only in B */
    char **keys = pass ? kb : ka;
    int32_t n = pass ? nb : na;
    for (int32_t i = 0; i < n; i++) {
      const char *key = keys[i];
      if (!strcmp(key, "start_time") || !strcmp(key, "end_time")) continue;
      const char *x = attr_value(ka, va, na, key), *y = attr_value(kb, vb, nb, key);
      if (pass == 1 && x) continue;
      if (x && y && !strcmp(x, y)) continue;
      c->differing_attrs++;
      char sx[72], sy[72];
      size_t from = x && y ? shown_from(x, y) : 0;
      short_value(sx, sizeof sx, x ? x : "(absent)", from);
      short_value(sy, sizeof sy, y ? y : "(absent)", from);
      mb_diag(p->out, "  %s: %s -> %s", key, sx, sy);
    }
  }
  /* Two trainings that end in the same networks write checkpoint files that differ (wall
   * times): say so where the file hashes differ and the networks' digests do not. */
  const char *fa = ok ? attr_value(ka, va, na, "agent_sha256") : NULL;
  const char *fb = ok ? attr_value(kb, vb, nb, "agent_sha256") : NULL;
  const char *da = ok ? attr_value(ka, va, na, "agent_networks_sha256") : NULL;
  const char *db = ok ? attr_value(kb, vb, nb, "agent_networks_sha256") : NULL;
  const char *pa = ok ? attr_value(ka, va, na, "plan_sha256") : NULL;
  const char *pb = ok ? attr_value(kb, vb, nb, "plan_sha256") : NULL;
  if (fa && fb && strcmp(fa, fb) && da && db && da[0] && !strcmp(da, db))
    mb_diag(p->out,
            "  (the two agent files hold the same networks: agent_networks_sha256 %.12s in "
            "both; the files differ in what does not decide play, such as wall times%s)",
            da,
            pa && pb && strcmp(pa, pb) ? "; plan_sha256 hashes the file, so it differs too" : "");
  mb_results_free_strings(ka, na);
  mb_results_free_strings(va, na);
  mb_results_free_strings(kb, nb);
  mb_results_free_strings(vb, nb);
  return ok;
}

/* Whether a matched pair is one case both files solved validly with the same time base */
static bool comparable(const pair *q) {
  const mb_result_row *x = q->a, *y = q->b;
  return !strcmp(x->status, "ok") && !strcmp(y->status, "ok") && x->valid == 1 && y->valid == 1 &&
         x->t_solver_ps > 0 && y->t_solver_ps > 0 && x->t_slow_ps == y->t_slow_ps &&
         x->capacity == y->capacity && x->n_buffers == y->n_buffers;
}

/* Whether row i is its solver's first in s (solvers are named in the order of their rows). */
static bool first_of_its_solver(const side *s, int64_t i) {
  for (int64_t k = 0; k < i; k++)
    if (!strcmp(s->rows[k].solver, s->rows[i].solver)) return false;
  return true;
}

/* One line of the per-solver table: B against A over the pairs [s, e) of one solver, sorted
 * by case and seed. ratios: scratch for e - s values. */
static void print_solver_line(FILE *out, const pair *pairs, int64_t s, int64_t e, double *ratios) {
  int32_t n = 0, faster = 0, level = 0, slower = 0, excluded = 0;
  double log_sum = 0;
  for (int64_t k = s; k < e;) {
    /* one case: the seeds of the same workload and hardware */
    int64_t m = k;
    double case_log = 0;
    int32_t seeds = 0, bad = 0;
    while (m < e && !strcmp(pairs[m].a->workload, pairs[k].a->workload) &&
           !strcmp(pairs[m].a->hardware, pairs[k].a->hardware)) {
      if (comparable(&pairs[m])) {
        case_log += log((double)pairs[m].a->t_solver_ps / (double)pairs[m].b->t_solver_ps);
        seeds++;
      } else {
        bad++;
      }
      m++;
    }
    k = m;
    if (bad > 0 || seeds == 0) { /* a case counts only when every matched seed does */
      excluded++;
      continue;
    }
    double ratio = exp(case_log / seeds);
    ratios[n++] = ratio;
    log_sum += log(ratio);
    if (ratio > 1 + LEVEL_TOLERANCE)
      faster++;
    else if (ratio < 1 - LEVEL_TOLERANCE)
      slower++;
    else
      level++;
  }
  char solver[64], gm[24] = "-", ci[40] = "-", counts[40], p_text[16] = "-";
  mb_escape_text(solver, sizeof solver, pairs[s].a->solver);
  snprintf(counts, sizeof counts, "%d/%d/%d", (int)faster, (int)level, (int)slower);
  double lo = NAN, hi = NAN;
  mb_geomean_ci95(ratios, n, &lo, &hi);
  if (!isnan(lo)) snprintf(ci, sizeof ci, "[%.4f, %.4f]", lo, hi);
  if (n > 0) {
    snprintf(gm, sizeof gm, "%.4f", exp(log_sum / n));
    mb_format_p(p_text, sizeof p_text, mb_sign_test(faster, slower));
  }
  fprintf(out, "%-20s %6d %16s %20s %22s %8s", solver, (int)n, gm, ci, counts, p_text);
  if (excluded)
    fprintf(out, "  (%d case%s left out: failed, invalid, or another workload or fast memory)",
            (int)excluded, excluded == 1 ? "" : "s");
  fputc('\n', out);
}

/* The per-solver table, solvers in A's plan order (the order of its rows). */
static void print_solver_table(FILE *out, const side *A, pair *pairs, int64_t n_pairs) {
  qsort(pairs, (size_t)n_pairs, sizeof *pairs, cmp_pair_by_solver);
  double *ratios = malloc(sizeof *ratios * (size_t)(n_pairs + 1));
  if (!ratios) {
    fprintf(out, "(out of memory for the per-solver table)\n");
    return;
  }
  fprintf(
      out,
      "\nB against A per solver, over the cases (workload x hardware) both solved validly with\n"
      "the same workload and hardware; T_A / T_B > 1: B is faster (seeds of a case by\n"
      "geometric mean):\n"
      "%-20s %6s %16s %20s %22s %8s\n",
      "solver", "cases", "T_A/T_B geomean", "95% CI", "B faster/level/slower", "sign p");
  for (int64_t i = 0; i < A->n_rows; i++) {
    if (!first_of_its_solver(A, i)) continue;
    const char *solver = A->rows[i].solver;
    int64_t s = 0;
    while (s < n_pairs && strcmp(pairs[s].a->solver, solver)) s++;
    if (s == n_pairs) continue;
    int64_t e = s;
    while (e < n_pairs && !strcmp(pairs[e].a->solver, solver)) e++;
    print_solver_line(out, pairs, s, e, ratios);
  }
  free(ratios);
}

static bool has_solver(const side *s, const char *solver) {
  for (int64_t i = 0; i < s->n_rows; i++)
    if (!strcmp(s->rows[i].solver, solver)) return true;
  return false;
}

/* "solvers only in A: x, y (...)": a run of fewer solvers than the other, whose jobs are then
 * all listed as only in one file; --solvers compares the common ones alone. */
static void print_solvers_missing(FILE *out, const side *s, const side *other, const char *label) {
  int n = 0;
  for (int64_t i = 0; i < s->n_rows; i++) {
    const char *solver = s->rows[i].solver;
    if (!first_of_its_solver(s, i) || has_solver(other, solver)) continue;
    char name[4 * MB_RES_SOLVER];
    mb_escape_text(name, sizeof name, solver);
    if (n++ == 0)
      fprintf(out, "solvers only in %s: %s", label, name);
    else
      fprintf(out, ", %s", name);
  }
  if (n) fprintf(out, " (--solvers compares the others alone)\n");
}

/* Every solver the filter lists has a job in A or B (a misspelt name would compare nothing). */
static bool solvers_present(const side *A, const side *B, const mb_compare_filter *f,
                            mb_error *err) {
  if (!f || !f->solvers) return true;
  size_t len;
  for (const char *list = f->solvers, *item; (item = next_item(&list, &len));) {
    char solver[MB_RES_SOLVER];
    snprintf(solver, sizeof solver, "%.*s", (int)len, item);
    if (len >= sizeof solver || !(has_solver(A, solver) || has_solver(B, solver)))
      return mb_fail(err,
                     "--solvers: no job of solver '%.*s' in %s or %s (after the other filters)",
                     (int)len, item, A->name, B->name);
  }
  return true;
}

/* "the test split's, workloads matching RE, solvers S" (what the filter keeps), "" for none */
static void describe_filter(char *out, size_t n, const mb_compare_filter *f) {
  out[0] = '\0';
  if (!f) return;
  size_t len = 0;
  const char *sep = "";
  if (f->split) {
    len += (size_t)snprintf(out + len, n - len, "the %s split's", f->split);
    sep = ", ";
  }
  if (f->workloads && len < n) {
    len += (size_t)snprintf(out + len, n - len, "%sworkloads matching %s", sep, f->workloads);
    sep = ", ";
  }
  if (f->solvers && len < n) snprintf(out + len, n - len, "%ssolvers %s", sep, f->solvers);
}

bool mb_compare_identical(const mb_compare_counts *c) {
  return c->rows_only_a == 0 && c->rows_only_b == 0 && c->differing_rows == 0 &&
         c->differing_assignments == 0 && c->baselines_only_a == 0 && c->baselines_only_b == 0 &&
         c->differing_baselines == 0 && c->differing_workloads == 0;
}

static void print_header(FILE *out, const char *label, const side *s) {
  char *profile = mb_results_has_attr(s->r, "run_profile")
                      ? mb_results_get_attr_string(s->r, "run_profile", NULL)
                      : NULL;
  char *commit = mb_results_has_attr(s->r, "git_commit")
                     ? mb_results_get_attr_string(s->r, "git_commit", NULL)
                     : NULL;
  mb_diag(out, "%s = %s: %" PRId64 " jobs, %" PRId64 " baselines (profile %s, commit %.12s)", label,
          s->name, s->n_rows, s->n_baselines, profile && profile[0] ? profile : "?",
          commit && commit[0] ? commit : "?");
  free(profile);
  free(commit);
}

bool mb_compare_print(mb_results *a, const char *name_a, mb_results *b, const char *name_b,
                      const mb_compare_filter *filter, int64_t max_listed, FILE *out,
                      mb_compare_counts *counts, mb_error *err) {
  memset(counts, 0, sizeof *counts);
  side A = {.r = a, .name = name_a}, B = {.r = b, .name = name_b};
  printer p = {.out = out, .max_listed = max_listed};
  pair *pairs = NULL;
  int64_t n_pairs = 0;
  if (filter && filter->split && !mb_catalogue_split_known(filter->split))
    return mb_fail(err, "split '%s': expected train or test", filter->split);
  bool ok = load_side(&A, filter, err) && load_side(&B, filter, err);
  ok = ok && solvers_present(&A, &B, filter, err);
  char selected[512];
  describe_filter(selected, sizeof selected, filter);
  if (ok && selected[0] && A.n_baselines + A.n_rows == 0 && B.n_baselines + B.n_rows == 0)
    ok = mb_fail(err, "%s, %s: no case passes the filters (%s)", name_a, name_b, selected);
  if (ok) {
    if (selected[0]) mb_diag(out, "cases compared: %s", selected);
    print_header(out, "A", &A);
    print_header(out, "B", &B);
    fprintf(out, "provenance that differs (A -> B; start and end times not compared):\n");
  }
  ok = ok && compare_provenance(&A, &B, &p, counts, err);
  if (ok && counts->differing_attrs == 0) fprintf(out, "  none\n");
  if (ok) fprintf(out, "differences (A -> B; wall times and notes not compared):\n");
  ok = ok && compare_workloads(&A, &B, &p, counts, err) &&
       compare_baselines(&A, &B, &p, counts, err) &&
       compare_jobs(&A, &B, &p, &pairs, &n_pairs, counts, err);
  if (ok) {
    if (p.listed == 0) fprintf(out, "  none\n");
    if (p.listed > p.max_listed)
      fprintf(out, "  (%" PRId64 " more not listed)\n", p.listed - p.max_listed);
    const mb_compare_counts *c = counts;
    fprintf(out,
            "workload copies: %d in both, %d with a different SHA-256\n"
            "baselines: %" PRId64 " matched (%" PRId64 " differ), %" PRId64 " only in A, %" PRId64
            " only in B\n"
            "jobs: %" PRId64 " matched (%" PRId64 " differ, %" PRId64
            " of them stopped on their wall-clock budget), %" PRId64 " only in A, %" PRId64
            " only in B\n"
            "assignments that differ: %" PRId64 "\n",
            (int)c->common_workloads, (int)c->differing_workloads, c->matched_baselines,
            c->differing_baselines, c->baselines_only_a, c->baselines_only_b, c->matched_rows,
            c->differing_rows, c->differing_budget_hit, c->rows_only_a, c->rows_only_b,
            c->differing_assignments);
    print_solvers_missing(out, &A, &B, "A");
    print_solvers_missing(out, &B, &A, "B");
    if (n_pairs > 0) print_solver_table(out, &A, pairs, n_pairs);
    fprintf(out, "\n%s\n",
            mb_compare_identical(c)
                ? "identical: B reproduces A (every job, baseline, assignment and workload copy)"
                : "different: B does not reproduce A (see above)");
  }
  free(pairs);
  free_side(&A);
  free_side(&B);
  return ok;
}
