/* compare: two runs of the same plan are identical (the driver is deterministic, and compare
 * sees it); each kind of change to a copy of one is found and named (a job's field, its
 * assignment, a stored workload, missing jobs, a root attribute, a budget hit); the per-solver
 * table of B against A equals a computation from the two files' rows; the CLI's exit status says
 * reproduced (0), different (1) or unreadable (2). */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "compare.h"
#include "driver.h"
#include "paths.h"
#include "results.h"
#include "rng.h"
#include "solver.h"
#include "stats.h"
#include "support.h"

typedef struct fixture {
  char *dir;
  char a[1024], b[1024]; /* two runs of the same plan */
  char catalogue[1024];
} fixture;

static const char *CATALOGUE =
    "name kind source args hardware capacity split tags\n"
    "mlp_tiny native datasets/samples/mlp_tiny.wl - tpu-v4i 1048576 train mlp\n"
    "attention_block native datasets/samples/attention_block.wl - tpu-v4i 8388608 test attention\n"
    "conv_block native datasets/samples/conv_block.wl - tpu-v4i 3211264 train conv\n";

/* "x" is the heuristic in one run and the greedy in another: B against A must then show B
 * faster or level on every case. */
static const mb_solver X_HEURISTIC[] = {
    {"x", "the heuristic under another name", mb_solve_heuristic, NULL, false, 0}};
static const mb_solver X_GREEDY[] = {
    {"x", "the greedy under another name", mb_solve_greedy, NULL, false, 0}};
/* a solver whose name extends another's: --solvers greedyx must not select greedy */
static const mb_solver GREEDYX[] = {
    {"greedyx", "the heuristic, named like greedy", mb_solve_heuristic, NULL, false, 0}};

static bool run_plan_in(const char *catalogue, const char *out, int seeds, const char *solvers,
                        const mb_solver *extra) {
  FILE *log = fopen("/dev/null", "w");
  mb_run_config cfg = {.profile = "quick",
                       .workloads = ".",
                       .solvers = solvers,
                       .extra_solvers = extra,
                       .n_extra_solvers = extra ? 1 : 0,
                       .seeds = seeds,
                       .jobs = 2,
                       .budget = 5,
                       .catalogue = catalogue,
                       .out = out,
                       .force = true,
                       .command_line = "test_compare",
                       .log = log ? log : stderr};
  mb_run_stats stats;
  mb_error err;
  bool ok = mb_run(&cfg, &stats, &err);
  if (!ok) fprintf(stderr, "run_plan %s: %s\n", out, err.message);
  if (log) fclose(log);
  return ok;
}

static bool run_plan(const fixture *fx, const char *out, int seeds, const char *solvers,
                     const mb_solver *extra) {
  return run_plan_in(fx->catalogue, out, seeds, solvers, extra);
}

static int teardown(void **state) {
  fixture *fx = *state;
  mb_test_temp_remove(fx->dir);
  free(fx);
  return 0;
}

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  if (!fx || !(fx->dir = mb_test_temp_dir())) {
    free(fx);
    return -1;
  }
  *state = fx;
  snprintf(fx->catalogue, sizeof fx->catalogue, "%s/catalogue.txt", fx->dir);
  snprintf(fx->a, sizeof fx->a, "%s/a.h5", fx->dir);
  snprintf(fx->b, sizeof fx->b, "%s/b.h5", fx->dir);
  FILE *f = fopen(fx->catalogue, "w");
  if (!f) return teardown(state), -1;
  fputs(CATALOGUE, f);
  fclose(f);
  if (!run_plan(fx, fx->a, 2, "heuristic,greedy", NULL) ||
      !run_plan(fx, fx->b, 2, "heuristic,greedy", NULL)) {
    teardown(state);
    return -1;
  }
  return 0;
}

/* Compares two files over the filter's cases; returns the printed text (caller frees) and fills
 * *c, or NULL with err set when the comparison fails. */
static char *compare_filtered(const char *a, const char *b, const mb_compare_filter *filter,
                              mb_compare_counts *c, mb_error *err) {
  mb_results *ra = mb_results_open(a, false, err);
  assert_non_null(ra);
  mb_results *rb = mb_results_open(b, false, err);
  assert_non_null(rb);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  bool ok = mb_compare_print(ra, a, rb, b, filter, 50, out, c, err);
  fclose(out);
  mb_results_close(ra, NULL);
  mb_results_close(rb, NULL);
  if (ok) return text;
  free(text);
  return NULL;
}

/* Compares two files; returns the printed text (caller frees) and fills *c. */
static char *compare(const char *a, const char *b, int64_t max_listed, mb_compare_counts *c) {
  mb_error err;
  mb_results *ra = mb_results_open(a, false, &err);
  assert_non_null(ra);
  mb_results *rb = mb_results_open(b, false, &err);
  assert_non_null(rb);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  bool ok = mb_compare_print(ra, a, rb, b, NULL, max_listed, out, c, &err);
  fclose(out);
  if (!ok) fprintf(stderr, "compare: %s\n", err.message);
  assert_true(ok);
  mb_results_close(ra, NULL);
  mb_results_close(rb, NULL);
  return text;
}

static void copy_file(const char *from, const char *to) {
  size_t n = 0;
  char *bytes = mb_read_file(from, &n);
  assert_non_null(bytes);
  mb_test_write_bytes(to, bytes, n);
  free(bytes);
}

static void read_rows(const char *path, mb_result_row **rows, int64_t *n) {
  mb_error err;
  mb_results *r = mb_results_open(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_read_rows(r, rows, n, &err));
  mb_results_close(r, NULL);
}

/* The per-solver table's line of `solver` with `cases` cases, copied into line[n]. */
static void solver_line(const char *text, const char *solver, int cases, char *line, size_t n) {
  char head[128];
  snprintf(head, sizeof head, "\n%-20s %6d", solver, cases);
  const char *at = strstr(text, head);
  if (!at) fprintf(stderr, "expected '%s' in:\n%s", head + 1, text);
  assert_non_null(at);
  const char *eol = strchr(at + 1, '\n');
  assert_non_null(eol);
  snprintf(line, n, "%.*s", (int)(eol - at - 1), at + 1);
}

static void test_rerun_is_identical(void **state) {
  fixture *fx = *state;
  mb_compare_counts c;
  char *text = compare(fx->a, fx->b, 50, &c);
  assert_true(mb_compare_identical(&c));
  assert_int_equal(c.matched_rows, 3 * 2 * 2); /* 3 workloads x 2 solvers x 2 seeds */
  assert_int_equal(c.matched_baselines, 3);
  assert_int_equal(c.common_workloads, 3);
  assert_int_equal(c.differing_rows + c.differing_assignments + c.rows_only_a + c.rows_only_b, 0);
  assert_non_null(strstr(text, "identical: B reproduces A"));
  /* every case level for both solvers */
  assert_non_null(strstr(text, "0/3/0"));
  assert_null(strstr(text, "DIFF"));
  assert_non_null(
      strstr(text, "differences (A -> B; wall times and notes not compared):\n  none\n"));
  free(text);
}

/* A copy of b with row `index` changed by `edit` (opened writable through the store). */
static void tamper_row(const fixture *fx, const char *copy, int64_t index,
                       void (*edit)(mb_result_row *, mb_results *)) {
  copy_file(fx->b, copy);
  mb_error err;
  mb_results *r = mb_results_open(copy, true, &err);
  assert_non_null(r);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_true(index < n);
  edit(&rows[index], r);
  assert_true(mb_results_write_row(r, index, &rows[index], &err));
  free(rows);
  assert_true(mb_results_close(r, &err));
}

static void slower_by_one(mb_result_row *row, mb_results *r) {
  row->t_solver_ps += 1000;
  row->n_fast -= 1;
}

static void test_changed_field_is_named(void **state) {
  fixture *fx = *state;
  char copy[1100];
  snprintf(copy, sizeof copy, "%s/field.h5", fx->dir);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  read_rows(fx->b, &rows, &n);
  const int64_t k = 5;
  char expect[512];
  snprintf(expect, sizeof expect,
           "DIFF job %s on %s, %s, seed %lld: n_fast %d -> %d, t_solver_ps %lld -> %lld",
           rows[k].workload, rows[k].hardware, rows[k].solver, (long long)rows[k].seed,
           (int)rows[k].n_fast, (int)rows[k].n_fast - 1, (long long)rows[k].t_solver_ps,
           (long long)rows[k].t_solver_ps + 1000);
  tamper_row(fx, copy, k, slower_by_one);
  mb_compare_counts c;
  char *text = compare(fx->a, copy, 50, &c);
  assert_false(mb_compare_identical(&c));
  assert_int_equal(c.differing_rows, 1);
  assert_int_equal(c.differing_assignments, 0);
  if (!strstr(text, expect)) fprintf(stderr, "expected '%s' in:\n%s", expect, text);
  assert_non_null(strstr(text, expect));
  assert_non_null(strstr(text, "different: B does not reproduce A"));
  assert_null(strstr(text, "wall times and notes not compared):\n  none\n"));
  /* the changed case is slower in B for that solver: 0 faster, 2 level, 1 slower */
  char line[512];
  solver_line(text, rows[k].solver, 3, line, sizeof line);
  assert_non_null(strstr(line, "0/2/1"));
  free(text);
  free(rows);
}

static void failed(mb_result_row *row, mb_results *r) {
  snprintf(row->status, sizeof row->status, "error");
  row->valid = 0;
  row->t_solver_ps = -1;
}

/* A case counts in the table only when every seed of it is comparable: one failed seed in B
 * leaves the whole case out, and the line says so. */
static void test_failed_case_is_left_out(void **state) {
  fixture *fx = *state;
  char copy[1100];
  snprintf(copy, sizeof copy, "%s/failed.h5", fx->dir);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  read_rows(fx->b, &rows, &n);
  const int64_t k = 3;
  tamper_row(fx, copy, k, failed);
  mb_compare_counts c;
  char *text = compare(fx->a, copy, 50, &c);
  assert_int_equal(c.differing_rows, 1);
  assert_non_null(strstr(text, "status 'ok' -> 'error'"));
  char line[512];
  solver_line(text, rows[k].solver, 2, line, sizeof line);
  assert_non_null(strstr(line, "0/2/0"));
  assert_non_null(strstr(line, "(1 case left out"));
  free(text);
  free(rows);
}

/* The fields compare must see, each changed in a way a real difference could take */
static const char *const COMPARED[] = {"status",      "valid",      "capacity",   "n_buffers",
                                       "n_fast",      "fast_bytes", "t_slow_ps",  "t_heuristic_ps",
                                       "t_solver_ps", "t_bound_ps", "iterations", "budget_hit"};
enum { N_COMPARED = sizeof COMPARED / sizeof COMPARED[0] };

static void change_field(mb_result_row *x, int f) {
  switch (f) {
    case 0:
      snprintf(x->status, sizeof x->status, "invalid");
      break;
    case 1:
      x->valid = (int8_t)!x->valid;
      break;
    case 2:
      x->capacity += 64;
      break;
    case 3:
      x->n_buffers += 1;
      break;
    case 4:
      x->n_fast += 1;
      break;
    case 5:
      x->fast_bytes += 1;
      break;
    case 6:
      x->t_slow_ps += 1;
      break;
    case 7:
      x->t_heuristic_ps += 1;
      break;
    case 8:
      x->t_solver_ps += 1;
      break;
    case 9:
      x->t_bound_ps += 1;
      break;
    case 10:
      x->iterations += 1;
      break;
    default:
      x->budget_hit = (int8_t)!x->budget_hit;
      break;
  }
}

/* Property: for each compared field, m random rows of a copy changed in that field are exactly
 * the m rows listed as differing, each naming the field; changes to what is not compared (wall
 * times, notes, derived seconds) leave the copy identical. */
static void test_every_field_random_rows(void **state) {
  fixture *fx = *state;
  char copy[1100];
  snprintf(copy, sizeof copy, "%s/random.h5", fx->dir);
  mb_rng rng;
  mb_rng_seed(&rng, 2026);
  for (int f = 0; f <= N_COMPARED; f++) { /* f == N_COMPARED: the fields not compared */
    copy_file(fx->b, copy);
    mb_error err;
    mb_results *r = mb_results_open(copy, true, &err);
    assert_non_null(r);
    mb_result_row *rows = NULL;
    int64_t n = 0;
    assert_true(mb_results_read_rows(r, &rows, &n, &err));
    bool chosen[64] = {false}, on_budget[64] = {false}; /* on_budget: hit it in A or B */
    assert_true(n <= 64);
    int m = 1 + (int)mb_rng_below(&rng, 3), n_on_budget = 0;
    for (int k = 0; k < m;) {
      int64_t i = (int64_t)mb_rng_below(&rng, (uint64_t)n);
      if (chosen[i]) continue;
      chosen[i] = true;
      k++;
      if (f < N_COMPARED) {
        bool before = rows[i].budget_hit;
        change_field(&rows[i], f);
        on_budget[i] = before || rows[i].budget_hit;
        n_on_budget += on_budget[i];
      } else {
        rows[i].wall_s += 1;
        rows[i].t_solver_s += 1;
        snprintf(rows[i].note, sizeof rows[i].note, "another note");
      }
      assert_true(mb_results_write_row(r, i, &rows[i], &err));
    }
    assert_true(mb_results_close(r, &err));
    mb_compare_counts c;
    char *text = compare(fx->a, copy, 50, &c);
    assert_int_equal(c.differing_rows, f < N_COMPARED ? m : 0);
    /* a row that stopped on its budget in either file is counted and marked as such */
    assert_int_equal(c.differing_budget_hit, n_on_budget);
    if (f == N_COMPARED - 1) assert_int_equal(n_on_budget, m); /* budget_hit itself toggled */
    for (int64_t i = 0; i < n; i++) {
      if (!chosen[i] || f == N_COMPARED) continue;
      char expect[512];
      snprintf(expect, sizeof expect, "DIFF job %s on %s, %s, seed %lld: %s ", rows[i].workload,
               rows[i].hardware, rows[i].solver, (long long)rows[i].seed, COMPARED[f]);
      const char *line = strstr(text, expect);
      if (!line) fprintf(stderr, "expected '%s' in:\n%s", expect, text);
      assert_non_null(line);
      const char *end = strchr(line, '\n'), *mark = strstr(line, "(stopped on its wall-clock");
      assert_true(on_budget[i] ? mark && mark < end : !mark || mark > end);
    }
    free(text);
    free(rows);
  }
}

/* A copy of `from` with root attributes set (key, value pairs, NULL-terminated). */
static void copy_with_attrs(const char *from, const char *copy, const char *const *kv) {
  copy_file(from, copy);
  mb_error err;
  mb_results *r = mb_results_open(copy, true, &err);
  assert_non_null(r);
  for (int i = 0; kv[i]; i += 2) assert_true(mb_results_set_attr_string(r, kv[i], kv[i + 1], &err));
  assert_true(mb_results_close(r, &err));
}

/* Provenance: each root attribute that differs, or that one file alone has, is one line with
 * both values, shown from 16 bytes before the first difference when that is past byte 24, and
 * cut to fit; the jobs stay identical. */
static void test_provenance_lines(void **state) {
  fixture *fx = *state;
  char pa[1100], pb[1100];
  snprintf(pa, sizeof pa, "%s/prov-a.h5", fx->dir);
  snprintf(pb, sizeof pb, "%s/prov-b.h5", fx->dir);
  char long_a[101], long_b[101];
  memset(long_a, 'x', 100);
  memset(long_b, 'x', 100);
  long_a[100] = long_b[100] = '\0';
  long_a[0] = 'a';
  long_b[0] = 'b';
  /* 84 bytes differing at byte 30: shown from byte 14, which leaves 70, more than fit */
  char tail_a[85], tail_b[85];
  for (int i = 0; i < 84; i++) tail_a[i] = tail_b[i] = (char)('a' + i % 26);
  tail_a[84] = tail_b[84] = '\0';
  tail_a[30] = 'A';
  tail_b[30] = 'B';
  const char *const in_a[] = {"zz_at24",   "012345678901234567890123A",
                              "zz_at25",   "0123456789012345678901234A",
                              "zz_late",   "abcdefghijklmnopqrstuvwxyz0123456789-from-a",
                              "zz_long",   long_a,
                              "zz_only_a", "kept",
                              "zz_same",   "same",
                              "zz_tail",   tail_a,
                              NULL};
  const char *const in_b[] = {"zz_at24",   "012345678901234567890123B",
                              "zz_at25",   "0123456789012345678901234B",
                              "zz_late",   "abcdefghijklmnopqrstuvwxyz0123456789-from-b",
                              "zz_long",   long_b,
                              "zz_only_b", "new",
                              "zz_same",   "same",
                              "zz_tail",   tail_b,
                              NULL};
  copy_with_attrs(fx->a, pa, in_a);
  copy_with_attrs(fx->b, pb, in_b);
  mb_compare_counts c;
  char *text = compare(pa, pb, 50, &c);
  assert_true(mb_compare_identical(&c)); /* provenance alone differs */
  assert_int_equal(c.differing_attrs, 7);
  /* the first difference at byte 24: shown whole; at 25: from byte 9; at 42: from byte 26 */
  const char *expect[] = {"\n  zz_at24: 012345678901234567890123A -> 012345678901234567890123B\n",
                          "\n  zz_at25: ...9012345678901234A -> ...9012345678901234B\n",
                          "\n  zz_late: ...0123456789-from-a -> ...0123456789-from-b\n",
                          "\n  zz_only_a: kept -> (absent)\n",
                          "\n  zz_only_b: (absent) -> new\n",
                          NULL};
  for (int i = 0; expect[i]; i++) {
    if (!strstr(text, expect[i])) fprintf(stderr, "expected '%s' in:\n%s", expect[i], text);
    assert_non_null(strstr(text, expect[i]));
  }
  /* 100 bytes cut to 65 and "..." (each value's buffer holds 71) */
  char want[200];
  snprintf(want, sizeof want, "\n  zz_long: a%.64s... -> b%.64s...\n", long_a + 1, long_b + 1);
  assert_non_null(strstr(text, want));
  snprintf(want, sizeof want, "\n  zz_tail: ...%.65s... -> ...%.65s...\n", tail_a + 14,
           tail_b + 14);
  if (!strstr(text, want)) fprintf(stderr, "expected '%s' in:\n%s", want, text);
  assert_non_null(strstr(text, want));
  assert_null(strstr(text, "zz_same"));
  assert_null(strstr(text, "A -> B; start and end times not compared):\n  none\n"));
  free(text);
  /* the same file against itself: no provenance line */
  text = compare(pa, pa, 50, &c);
  assert_int_equal(c.differing_attrs, 0);
  assert_non_null(strstr(text, "A -> B; start and end times not compared):\n  none\n"));
  free(text);
}

static void move_first_fast_buffer_to_slow(mb_result_row *row, mb_results *r) {
  mb_error err;
  bool absent = false;
  mb_assignment *a = mb_results_get_assignment(r, row, &absent, &err);
  assert_non_null(a);
  int32_t i = 0;
  while (i < a->n_buffers && a->offset[i] == MB_SLOW) i++;
  assert_true(i < a->n_buffers);
  a->offset[i] = MB_SLOW;
  assert_true(mb_results_put_assignment(r, row, a, &err));
  mb_assignment_free(a);
}

static void test_changed_assignment_is_found(void **state) {
  fixture *fx = *state;
  char copy[1100];
  snprintf(copy, sizeof copy, "%s/assignment.h5", fx->dir);
  tamper_row(fx, copy, 2, move_first_fast_buffer_to_slow);
  mb_compare_counts c;
  char *text = compare(fx->a, copy, 50, &c);
  assert_false(mb_compare_identical(&c));
  assert_int_equal(c.differing_rows, 1);
  assert_int_equal(c.differing_assignments, 1);
  assert_non_null(strstr(text, "assignment: 1 of "));
  free(text);
}

static void test_changed_workload_copy_is_found(void **state) {
  fixture *fx = *state;
  char copy[1100];
  snprintf(copy, sizeof copy, "%s/workload.h5", fx->dir);
  copy_file(fx->b, copy);
  mb_error err;
  mb_results *r = mb_results_open(copy, true, &err);
  assert_non_null(r);
  char sha[MB_RES_SHA];
  mb_workload *w = mb_results_get_workload(r, "conv_block", sha, &err);
  assert_non_null(w);
  assert_int_equal(strlen(sha), 64);
  /* the same tables under another SHA-256: what a changed workload file would leave */
  sha[0] = sha[0] == '0' ? '1' : '0';
  assert_true(mb_results_put_workload(r, "conv_block", w, sha, &err));
  mb_workload_free(w);
  assert_true(mb_results_close(r, &err));
  mb_compare_counts c;
  char *text = compare(fx->a, copy, 50, &c);
  assert_false(mb_compare_identical(&c));
  assert_int_equal(c.common_workloads, 3);
  assert_int_equal(c.differing_workloads, 1);
  assert_non_null(strstr(text, "DIFF workload conv_block: stored copies differ"));
  free(text);
}

/* The same plan on a catalogue that gives conv_block half the fast memory: its baseline differs
 * (named field by field), and its jobs are left out of the table, being another problem. */
static void test_other_capacity(void **state) {
  fixture *fx = *state;
  char catalogue[1100], other[1100];
  snprintf(catalogue, sizeof catalogue, "%s/half.txt", fx->dir);
  snprintf(other, sizeof other, "%s/half.h5", fx->dir);
  char *text = mb_read_file(fx->catalogue, NULL);
  assert_non_null(text);
  char *at = strstr(text, " 3211264 ");
  assert_non_null(at);
  memcpy(at, " 1605632 ", 9);
  mb_test_write_bytes(catalogue, text, strlen(text));
  free(text);
  assert_true(run_plan_in(catalogue, other, 2, "heuristic,greedy", NULL));
  mb_compare_counts c;
  text = compare(fx->a, other, 50, &c);
  assert_false(mb_compare_identical(&c));
  assert_int_equal(c.differing_baselines, 1);
  assert_int_equal(c.differing_workloads, 0); /* the same workload, other hardware */
  assert_int_equal(c.differing_rows, 4);      /* conv_block: 2 solvers x 2 seeds */
  assert_non_null(strstr(text, "DIFF baseline conv_block on tpu-v4i: capacity 3211264 -> 1605632"));
  char line[512];
  solver_line(text, "heuristic", 2, line, sizeof line);
  assert_non_null(strstr(line, "0/2/0"));
  assert_non_null(strstr(line, "(1 case left out"));
  free(text);
}

static void test_missing_jobs_are_listed(void **state) {
  fixture *fx = *state;
  char one_seed[1100];
  snprintf(one_seed, sizeof one_seed, "%s/one_seed.h5", fx->dir);
  assert_true(run_plan(fx, one_seed, 1, "heuristic,greedy", NULL));
  mb_compare_counts c;
  char *text = compare(fx->a, one_seed, 2, &c);
  assert_false(mb_compare_identical(&c));
  assert_int_equal(c.rows_only_a, 6); /* seed 1 of 3 workloads x 2 solvers */
  assert_int_equal(c.rows_only_b, 0);
  assert_int_equal(c.matched_rows, 6);
  assert_int_equal(c.differing_rows, 0);
  assert_non_null(strstr(text, "ONLY A: job "));
  assert_non_null(strstr(text, ", seed 1\n"));
  assert_null(strstr(text, ", seed 0\n"));
  assert_non_null(strstr(text, "(4 more not listed)")); /* --list 2 of 6 */
  /* the seed-0 rows alone still make the table: every case level */
  assert_non_null(strstr(text, "0/3/0"));
  free(text);
  /* and the other way round */
  text = compare(one_seed, fx->a, 50, &c);
  assert_int_equal(c.rows_only_b, 6);
  assert_int_equal(c.rows_only_a, 0);
  free(text);
}

/* A run of two of the three workloads: the third's baseline and jobs are only in A. */
static void test_missing_workload(void **state) {
  fixture *fx = *state;
  char two[1100];
  snprintf(two, sizeof two, "%s/two.h5", fx->dir);
  FILE *log = fopen("/dev/null", "w");
  mb_run_config cfg = {.profile = "quick",
                       .workloads = "^(mlp|conv)",
                       .solvers = "heuristic,greedy",
                       .seeds = 2,
                       .jobs = 2,
                       .budget = 5,
                       .catalogue = fx->catalogue,
                       .out = two,
                       .force = true,
                       .command_line = "test_compare",
                       .log = log ? log : stderr};
  mb_run_stats stats;
  mb_error err;
  assert_true(mb_run(&cfg, &stats, &err));
  if (log) fclose(log);
  mb_compare_counts c;
  char *text = compare(fx->a, two, 50, &c);
  assert_int_equal(c.baselines_only_a, 1);
  assert_int_equal(c.rows_only_a, 4);
  assert_int_equal(c.common_workloads, 2);
  assert_non_null(strstr(text, "ONLY A: baseline attention_block on tpu-v4i\n"));
  free(text);
  text = compare(two, fx->a, 50, &c);
  assert_int_equal(c.baselines_only_b, 1);
  assert_non_null(strstr(text, "ONLY B: baseline attention_block on tpu-v4i\n"));
  free(text);
}

/* A file written before splits were recorded cannot be compared by split, and says why. */
static void test_split_without_record(void **state) {
  fixture *fx = *state;
  char old[1100];
  snprintf(old, sizeof old, "%s/nosplit.h5", fx->dir);
  copy_file(fx->b, old);
  mb_error err;
  assert_true(mb_results_unseal(old, &err)); /* changed below by the raw HDF5 API */
  hid_t f = H5Fopen(old, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  const char *groups[] = {"/workloads/mlp_tiny", "/workloads/attention_block",
                          "/workloads/conv_block"};
  for (int i = 0; i < 3; i++) {
    hid_t g = H5Gopen2(f, groups[i], H5P_DEFAULT);
    assert_true(g >= 0);
    assert_true(H5Adelete(g, "split") >= 0);
    H5Gclose(g);
  }
  H5Fclose(f);
  mb_compare_counts c;
  mb_compare_filter test_split = {.split = "test"};
  assert_null(compare_filtered(fx->a, old, &test_split, &c, &err));
  assert_non_null(strstr(err.message, "nosplit.h5: no split information"));
  char *text = compare_filtered(fx->a, old, NULL, &c, &err); /* without --split: fine */
  assert_non_null(text);
  assert_true(mb_compare_identical(&c));
  free(text);
}

/* The table's geometric mean equals the one computed from the rows: per case the geometric mean
 * over seeds of T_A / T_B, then over cases. */
static void test_solver_table_matches_rows(void **state) {
  fixture *fx = *state;
  char xa[1100], xb[1100];
  snprintf(xa, sizeof xa, "%s/x_heuristic.h5", fx->dir);
  snprintf(xb, sizeof xb, "%s/x_greedy.h5", fx->dir);
  assert_true(run_plan(fx, xa, 2, "x", X_HEURISTIC));
  assert_true(run_plan(fx, xb, 2, "x", X_GREEDY));
  mb_result_row *ra = NULL, *rb = NULL;
  int64_t na = 0, nb = 0;
  read_rows(xa, &ra, &na);
  read_rows(xb, &rb, &nb);
  assert_int_equal(na, 6);
  assert_int_equal(nb, 6);
  double log_sum = 0, ratios[3];
  int faster = 0, level = 0;
  for (int64_t i = 0; i < na; i += 2) { /* plan order: a workload's two seeds are adjacent */
    assert_string_equal(ra[i].workload, rb[i].workload);
    assert_string_equal(ra[i + 1].workload, rb[i + 1].workload);
    double case_log = 0.5 * (log((double)ra[i].t_solver_ps / (double)rb[i].t_solver_ps) +
                             log((double)ra[i + 1].t_solver_ps / (double)rb[i + 1].t_solver_ps));
    log_sum += case_log;
    ratios[i / 2] = exp(case_log);
    if (exp(case_log) > 1 + 1e-9)
      faster++;
    else
      level++;
  }
  assert_true(faster >= 1); /* the greedy improves on the heuristic somewhere */
  mb_compare_counts c;
  char *text = compare(xa, xb, 50, &c);
  assert_false(mb_compare_identical(&c)); /* other assignments */
  char expect[256];
  snprintf(expect, sizeof expect, "%-20s %6d %16.4f", "x", 3, exp(log_sum / 3));
  if (!strstr(text, expect)) fprintf(stderr, "expected '%s' in:\n%s", expect, text);
  assert_non_null(strstr(text, expect));
  double lo, hi;
  mb_geomean_ci95(ratios, 3, &lo, &hi);
  snprintf(expect, sizeof expect, "[%.4f, %.4f]", lo, hi);
  assert_non_null(strstr(text, expect));
  char counts[32];
  snprintf(counts, sizeof counts, " %d/%d/0 ", faster, level);
  assert_non_null(strstr(text, counts));
  free(text);
  free(ra);
  free(rb);
}

/* --split and --workloads select cases in both files; a difference outside them is not seen. */
static void test_filters(void **state) {
  fixture *fx = *state;
  char copy[1100];
  snprintf(copy, sizeof copy, "%s/filtered.h5", fx->dir);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  read_rows(fx->b, &rows, &n);
  int64_t k = 0; /* a conv_block row (train split) */
  while (k < n && strcmp(rows[k].workload, "conv_block")) k++;
  assert_true(k < n);
  const char *changed = !strcmp(rows[k].solver, "greedy") ? "greedy" : "heuristic";
  const char *unchanged = !strcmp(changed, "greedy") ? "heuristic" : "greedy";
  free(rows);
  tamper_row(fx, copy, k, slower_by_one);
  mb_compare_counts c;
  mb_error err;
  mb_compare_filter test_split = {.split = "test"}, conv = {.workloads = "^conv"};
  char *text = compare_filtered(fx->a, copy, &test_split, &c, &err);
  assert_non_null(text);
  assert_true(mb_compare_identical(&c)); /* attention_block only */
  assert_int_equal(c.matched_rows, 4);
  assert_int_equal(c.matched_baselines, 1);
  assert_int_equal(c.common_workloads, 1);
  assert_non_null(strstr(text, "cases compared: the test split's\n"));
  free(text);
  text = compare_filtered(fx->a, copy, &conv, &c, &err);
  assert_non_null(text);
  assert_false(mb_compare_identical(&c));
  assert_int_equal(c.matched_rows, 4);
  assert_int_equal(c.differing_rows, 1);
  assert_non_null(strstr(text, "cases compared: workloads matching ^conv\n"));
  free(text);
  mb_compare_filter one = {.solvers = changed}, other_solver = {.solvers = unchanged},
                    misspelt = {.solvers = "greedy,heuristc"};
  text = compare_filtered(fx->a, copy, &one, &c, &err);
  assert_non_null(text);
  assert_int_equal(c.matched_rows, 6); /* 3 workloads x 2 seeds */
  assert_int_equal(c.differing_rows, 1);
  assert_int_equal(c.matched_baselines, 3);
  free(text);
  text = compare_filtered(fx->a, copy, &other_solver, &c, &err);
  assert_non_null(text);
  assert_true(mb_compare_identical(&c));
  assert_int_equal(c.matched_rows, 6);
  char expect[128];
  snprintf(expect, sizeof expect, "cases compared: solvers %s\n", unchanged);
  assert_non_null(strstr(text, expect));
  free(text);
  char prefixed[1100];
  snprintf(prefixed, sizeof prefixed, "%s/greedyx.h5", fx->dir);
  assert_true(run_plan(fx, prefixed, 2, "greedy,greedyx", GREEDYX));
  mb_compare_filter x_only = {.solvers = "greedyx"};
  text = compare_filtered(prefixed, prefixed, &x_only, &c, &err);
  assert_non_null(text);
  assert_int_equal(c.matched_rows, 6);
  free(text);
  /* a listed solver that one file alone has is compared: its jobs are that file's only */
  text = compare_filtered(fx->a, prefixed, &x_only, &c, &err);
  assert_non_null(text);
  assert_int_equal(c.rows_only_b, 6);
  free(text);
  text = compare_filtered(prefixed, fx->a, &x_only, &c, &err);
  assert_non_null(text);
  assert_int_equal(c.rows_only_a, 6);
  free(text);
  /* a's solvers are heuristic and greedy: each file has one the other lacks, named */
  text = compare_filtered(fx->a, prefixed, NULL, &c, &err);
  assert_non_null(text);
  assert_non_null(strstr(text, "\nsolvers only in A: heuristic (--solvers compares"));
  assert_non_null(strstr(text, "\nsolvers only in B: greedyx (--solvers compares"));
  free(text);
  assert_null(compare_filtered(fx->a, copy, &misspelt, &c, &err));
  assert_non_null(strstr(err.message, "--solvers: no job of solver 'heuristc' in "));
  /* nothing left, a bad pattern, an unknown split: errors */
  mb_compare_filter none = {.workloads = "^conv", .split = "test"}, bad = {.workloads = "("},
                    other = {.split = "valid"};
  assert_null(compare_filtered(fx->a, copy, &none, &c, &err));
  assert_non_null(strstr(
      err.message, "no case passes the filters (the test split's, workloads matching ^conv)"));
  assert_null(compare_filtered(fx->a, copy, &bad, &c, &err));
  assert_non_null(strstr(err.message, "--workloads '(': column"));
  assert_null(compare_filtered(fx->a, copy, &other, &c, &err));
  assert_non_null(strstr(err.message, "split 'valid': expected train or test"));
}

static int cli(const fixture *fx, const char *args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s compare %s >'%s/cli.out' 2>'%s/cli.err'", MB_TEST_BINARY, args,
           fx->dir, fx->dir);
  int rc = system(cmd);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static char *cli_text(const fixture *fx, const char *stream) {
  char path[1100];
  snprintf(path, sizeof path, "%s/cli.%s", fx->dir, stream);
  char *text = mb_read_file(path, NULL);
  assert_non_null(text);
  return text;
}

static void test_cli_exit_status(void **state) {
  fixture *fx = *state;
  char args[3000], copy[1100];
  snprintf(args, sizeof args, "'%s' '%s'", fx->a, fx->b);
  assert_int_equal(cli(fx, args), 0);
  snprintf(copy, sizeof copy, "%s/cli_field.h5", fx->dir);
  tamper_row(fx, copy, 0, slower_by_one);
  snprintf(args, sizeof args, "'%s' '%s' --list 0", fx->a, copy);
  assert_int_equal(cli(fx, args), 1);
  char *out = cli_text(fx, "out");
  assert_non_null(strstr(out, "(1 more not listed)"));
  assert_null(strstr(out, "DIFF job"));
  free(out);
  /* unreadable: a missing file, named in the message */
  snprintf(args, sizeof args, "'%s' '%s/missing.h5'", fx->a, fx->dir);
  assert_int_equal(cli(fx, args), 2);
  char *err = cli_text(fx, "err");
  assert_non_null(strstr(err, "missing.h5"));
  free(err);
  /* usage errors */
  snprintf(args, sizeof args, "'%s'", fx->a);
  assert_int_equal(cli(fx, args), 2);
  snprintf(args, sizeof args, "'%s' '%s' '%s'", fx->a, fx->b, fx->a);
  assert_int_equal(cli(fx, args), 2);
  snprintf(args, sizeof args, "'%s' '%s' --list -1", fx->a, fx->b);
  assert_int_equal(cli(fx, args), 2);
  snprintf(args, sizeof args, "'%s' '%s' --split bogus", fx->a, fx->b);
  assert_int_equal(cli(fx, args), 2);
  snprintf(args, sizeof args, "'%s' '%s' --workloads '('", fx->a, fx->b);
  assert_int_equal(cli(fx, args), 2);
  snprintf(args, sizeof args, "'%s' '%s' --bogus", fx->a, fx->b);
  assert_int_equal(cli(fx, args), 2);
  assert_int_equal(cli(fx, "--help"), 0);
  out = cli_text(fx, "out");
  assert_non_null(strstr(out, "usage: mallocbench compare A.h5 B.h5"));
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rerun_is_identical),
      cmocka_unit_test(test_changed_field_is_named),
      cmocka_unit_test(test_failed_case_is_left_out),
      cmocka_unit_test(test_every_field_random_rows),
      cmocka_unit_test(test_provenance_lines),
      cmocka_unit_test(test_changed_assignment_is_found),
      cmocka_unit_test(test_changed_workload_copy_is_found),
      cmocka_unit_test(test_other_capacity),
      cmocka_unit_test(test_missing_jobs_are_listed),
      cmocka_unit_test(test_missing_workload),
      cmocka_unit_test(test_split_without_record),
      cmocka_unit_test(test_solver_table_matches_rows),
      cmocka_unit_test(test_filters),
      cmocka_unit_test(test_cli_exit_status),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
