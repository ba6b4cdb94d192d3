/* mallocbench verify FILE: re-checks a results file with nothing but the file and the code.
 *
 * Every stored workload is rebuilt from its tables and its SHA-256 recomputed; every stored
 * assignment (results and heuristic baselines) goes through the validator again; every time,
 * speedup and gap is recomputed with the cost model and compared with the stored number.
 * The LP bound itself is not re-solved (it is an input to the gap, checked for consistency
 * between each row and its baseline). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "commands.h"
#include "cost.h"
#include "error.h"
#include "hardware.h"
#include "results.h"
#include "validator.h"
#include "workload_io.h"

typedef struct cached {
  char key[MB_RES_WORKLOAD];
  mb_workload *w; /* NULL when it could not be rebuilt */
} cached;

typedef struct verifier {
  mb_results *r;
  cached *ws;
  int32_t n_ws, cap_ws;
  int64_t mismatches;
  int64_t max_report;
} verifier;

static void report(verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(verifier *v, const char *fmt, ...) {
  v->mismatches++;
  if (v->mismatches > v->max_report) return;
  /* names from the results file: the line escaped as in messages (error.h) */
  char small[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  char *text = n >= 0 && (size_t)n >= sizeof small ? malloc((size_t)n + 1) : NULL;
  if (text) {
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  mb_diag(stdout, "MISMATCH %s", text ? text : n >= 0 ? small : "");
  free(text);
}

static const mb_workload *workload(verifier *v, const char *key) {
  for (int32_t i = 0; i < v->n_ws; i++)
    if (!strcmp(v->ws[i].key, key)) return v->ws[i].w;
  if (v->n_ws == v->cap_ws) {
    int32_t cap = v->cap_ws ? 2 * v->cap_ws : 16;
    cached *p = realloc(v->ws, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    v->ws = p;
    v->cap_ws = cap;
  }
  cached *c = &v->ws[v->n_ws++];
  snprintf(c->key, sizeof c->key, "%s", key);
  mb_error err = {{0}};
  char sha[MB_RES_SHA], now[65];
  c->w = mb_results_get_workload(v->r, key, sha, &err);
  if (!c->w) {
    report(v, "workload '%s': cannot rebuild it from the file: %s", key, err.message);
  } else if (!mb_workload_sha256_hex(c->w, now)) {
    report(v, "workload '%s': out of memory hashing it", key);
  } else if (strcmp(now, sha)) {
    report(v, "workload '%s': stored sha256 %s, the stored tables hash to %s", key, sha, now);
  }
  return c->w;
}

static bool same_double(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

/* Time of an assignment after validation; -1 when invalid (message in why). */
static mb_time_ps time_of(const mb_workload *w, const mb_hardware *hw, const mb_assignment *a,
                          mb_error *why) {
  if (a->n_buffers != w->n_buffers) {
    mb_fail(why, "%d offsets for %d buffers", (int)a->n_buffers, (int)w->n_buffers);
    return -1;
  }
  if (!mb_validate(w, hw, a, why)) return -1;
  bool *in_fast = calloc(w->n_buffers ? (size_t)w->n_buffers : 1, sizeof *in_fast);
  if (!in_fast) {
    mb_fail(why, "out of memory");
    return -1;
  }
  mb_assignment_fast_flags(a, in_fast);
  mb_time_ps t = mb_program_time(w, hw, in_fast);
  free(in_fast);
  return t;
}

static void check_baseline(verifier *v, int64_t i, const mb_baseline_row *b) {
  const mb_workload *w = workload(v, b->workload);
  if (!w) return;
  mb_hardware hw = mb_baseline_hardware(b);
  mb_time_ps slow = mb_slow_time(w, &hw);
  if (slow != b->t_slow_ps)
    report(v,
           "baselines row %" PRId64 " (%s@%s): t_slow_ps stored %" PRId64 ", recomputed %" PRId64,
           i, b->workload, b->hardware, b->t_slow_ps, slow);
  if (b->t_heuristic_ps < 0) return;
  bool absent = false;
  mb_error err = {{0}};
  mb_assignment *a = mb_results_get_baseline_assignment(v->r, b, &absent, &err);
  if (!a) {
    report(v, "baselines row %" PRId64 " (%s@%s): heuristic assignment: %s", i, b->workload,
           b->hardware, err.message);
    return;
  }
  mb_time_ps t = time_of(w, &hw, a, &err);
  if (t < 0)
    report(v, "baselines row %" PRId64 " (%s@%s): heuristic assignment is invalid: %s", i,
           b->workload, b->hardware, err.message);
  else if (t != b->t_heuristic_ps)
    report(v,
           "baselines row %" PRId64 " (%s@%s): t_heuristic_ps stored %" PRId64
           ", recomputed %" PRId64,
           i, b->workload, b->hardware, b->t_heuristic_ps, t);
  mb_assignment_free(a);
}

/* A stored integer against its recomputation, or (CHECK_WITH) against where it was copied from */
#define CHECK_WITH(field, want, source)                                                            \
  do {                                                                                             \
    if ((int64_t)(row->field) != (int64_t)(want))                                                  \
      report(v, "results row %" PRId64 " (%s): " #field " stored %" PRId64 ", %s %" PRId64, i, id, \
             (int64_t)(row->field), source, (int64_t)(want));                                      \
  } while (0)
#define CHECK_INT(field, want) CHECK_WITH(field, want, "recomputed")
#define CHECK_DBL(field, want)                                                                    \
  do {                                                                                            \
    if (!same_double(row->field, (want)))                                                         \
      report(v, "results row %" PRId64 " (%s): " #field " stored %.17g, recomputed %.17g", i, id, \
             row->field, (double)(want));                                                         \
  } while (0)

static void check_row(verifier *v, int64_t i, const mb_result_row *row, const mb_baseline_row *base,
                      int64_t n_base) {
  char id[MB_RES_WORKLOAD + MB_RES_HARDWARE + MB_RES_SOLVER + 48];
  snprintf(id, sizeof id, "%s@%s %s seed %" PRId64, row->workload, row->hardware, row->solver,
           row->seed);
  const mb_baseline_row *b = NULL;
  for (int64_t k = 0; k < n_base && !b; k++)
    if (!strcmp(base[k].workload, row->workload) && !strcmp(base[k].hardware, row->hardware))
      b = &base[k];
  if (!b) {
    report(v, "results row %" PRId64 " (%s): no baseline row for its workload and hardware", i, id);
    return;
  }
  const mb_workload *w = workload(v, row->workload);
  if (!w) return;
  mb_hardware hw = mb_baseline_hardware(b);
  CHECK_WITH(t_slow_ps, b->t_slow_ps, "its baseline row has");
  CHECK_WITH(t_heuristic_ps, b->t_heuristic_ps, "its baseline row has");
  CHECK_WITH(t_bound_ps, b->t_bound_ps, "its baseline row has");
  CHECK_WITH(capacity, b->capacity, "its baseline row has");
  CHECK_WITH(n_buffers, w->n_buffers, "its stored workload has");
  /* the driver writes three statuses (driver.c): "ok" and "invalid" rows keep the solver's
   * assignment, an "error" row (the solver failed) has none. Anything else could hide a result,
   * e.g. a good assignment stored as a failure. */
  bool is_ok = !strcmp(row->status, "ok"), is_invalid = !strcmp(row->status, "invalid");
  bool is_error = !strcmp(row->status, "error");
  if (!is_ok && !is_invalid && !is_error) {
    report(v, "results row %" PRId64 " (%s): status '%s' is none of ok, invalid and error", i, id,
           row->status);
    return;
  }
  bool absent = false;
  mb_error err = {{0}};
  mb_assignment *a = mb_results_get_assignment(v->r, row, &absent, &err);
  if (!a && (!is_error || !absent)) {
    report(v, "results row %" PRId64 " (%s): assignment: %s", i, id, err.message);
    return;
  }
  if (a && is_error) {
    report(v,
           "results row %" PRId64
           " (%s): stored as error (the solver failed) but has an assignment",
           i, id);
    mb_assignment_free(a);
    return;
  }
  mb_result_row want = *row;
  if (a) {
    mb_time_ps t = time_of(w, &hw, a, &err);
    if (is_ok && t < 0) {
      report(v, "results row %" PRId64 " (%s): stored as ok but the assignment is invalid: %s", i,
             id, err.message);
    } else if (is_invalid && t >= 0) {
      report(v, "results row %" PRId64 " (%s): stored as invalid but the assignment validates", i,
             id);
    } else if (is_invalid) {
      CHECK_INT(valid, 0);
    } else {
      CHECK_INT(valid, 1);
      CHECK_INT(t_solver_ps, t);
      CHECK_INT(n_fast, mb_assignment_n_fast(a));
      int64_t peak = 0, max_addr = 0;
      mb_assignment_usage(w, a, &peak, &max_addr);
      CHECK_INT(fast_bytes, peak);
      want.t_solver_ps = t;
    }
    mb_assignment_free(a);
  } else {
    CHECK_INT(valid, 0);
  }
  mb_result_row_derive(&want);
  CHECK_DBL(t_solver_s, want.t_solver_s);
  CHECK_DBL(speedup_heuristic, want.speedup_heuristic);
  CHECK_DBL(speedup_slow, want.speedup_slow);
  CHECK_DBL(gap_to_bound, want.gap_to_bound);
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench verify FILE\n\n"
          "Re-checks a results file on its own: rebuilds every stored workload from its tables\n"
          "and checks its SHA-256, re-validates every stored assignment, and recomputes every\n"
          "time, speedup and gap with the cost model. Prints each mismatch with its row.\n"
          "Exit status: 0 all consistent, 1 mismatches found, 2 the file cannot be read.\n");
}

int mb_cmd_verify(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  for (int i = 1; i < argc; i++)
    if (argv[i][0] == '-' && argv[i][1]) return mb_unknown_option("verify", argv[i]);
  if (argc != 2) {
    if (argc > 2)
      mb_diag(stderr, "mallocbench verify: one results file only ('%s' is extra)", argv[2]);
    usage(stderr);
    return 2;
  }
  mb_error err = {{0}};
  mb_results *r = mb_results_open(argv[1], false, &err);
  if (!r) {
    mb_diag(stderr, "mallocbench verify: %s", err.message);
    return 2;
  }
  verifier v = {.r = r, .max_report = 100};
  mb_baseline_row *base = NULL;
  mb_result_row *rows = NULL;
  int64_t nb = 0, nr = 0;
  if (!mb_results_read_baselines(r, &base, &nb, &err) ||
      !mb_results_read_rows(r, &rows, &nr, &err)) {
    mb_diag(stderr, "mallocbench verify: %s", err.message);
    free(base);
    mb_results_close(r, NULL);
    return 2;
  }
  for (int64_t i = 0; i < nb; i++) check_baseline(&v, i, &base[i]);
  for (int64_t i = 0; i < nr; i++) check_row(&v, i, &rows[i], base, nb);
  char **keys = NULL;
  int32_t nk = 0;
  if (mb_results_workload_keys(r, &keys, &nk, &err)) {
    for (int32_t i = 0; i < nk; i++) workload(&v, keys[i]); /* workloads without rows too */
    mb_results_free_strings(keys, nk);
  }
  int64_t complete = 0, planned = -1;
  mb_results_get_attr_int(r, "complete", &complete, NULL);
  mb_results_get_attr_int(r, "planned_jobs", &planned, NULL);
  if (v.mismatches > v.max_report)
    printf("... %" PRId64 " more mismatches not shown\n", v.mismatches - v.max_report);
  if (mb_results_torn_rows(r) > 0)
    mb_diag(stdout,
            "note: %" PRId64
            " torn row(s) at the end of a table skipped (a kill during their "
            "write); `mallocbench run --resume %s` writes them again",
            mb_results_torn_rows(r), argv[1]);
  mb_diag(stdout,
          "verify %s: %" PRId64 " result row%s, %" PRId64
          " baseline%s, %d workload%s checked "
          "(times simulated by the mallocbench cost model): %" PRId64 " mismatch%s%s",
          argv[1], nr, nr == 1 ? "" : "s", nb, nb == 1 ? "" : "s", (int)v.n_ws,
          v.n_ws == 1 ? "" : "s", v.mismatches, v.mismatches == 1 ? "" : "es",
          complete ? "" : "; note: the run is incomplete");
  for (int32_t i = 0; i < v.n_ws; i++) mb_workload_free(v.ws[i].w);
  free(v.ws);
  free(base);
  free(rows);
  mb_results_close(r, NULL);
  return v.mismatches ? 1 : 0;
}
