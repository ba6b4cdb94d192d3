/* The printed summary (suite/summary.h) of small results files written here row by row, compared
 * whole with text put together by hand: the file line (rows, planned jobs, cases, an incomplete
 * run), the explanation, each solver's row (cases, geomean and its interval, max, wins/ties/losses,
 * sign p, failed rows, mean gap, wall time), the footnotes on cases at the LP bound (one case, or
 * some of several), bounds cut short, failed baselines and budget hits; a split's header and an
 * empty file's; the list of workload names when --workloads matches none (the first six, then
 * the count, cut to its buffer); and the account of failed rows (one line per solver and
 * status). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result_matrix.h"
#include "results.h"
#include "summary.h"
#include "support.h"
#include "workload.h"

static mb_results *create(const char *path) {
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  return r;
}

/* Closes a file being written and reopens it for reading. */
static mb_results *reopen(mb_results *r, const char *path) {
  mb_error err = {{0}};
  if (!mb_results_close(r, &err)) fail_msg("%s", err.message);
  r = mb_results_open(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  return r;
}

/* mb_summary_print_filtered's output; NULL with err set when it fails (having printed nothing). */
static char *summary_text(mb_results *r, const char *split, const char *workloads, mb_error *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  bool ok = mb_summary_print_filtered(r, split, workloads, out, err);
  fclose(out);
  if (ok) return text;
  if (len != 0) fail_msg("failed summary printed:\n%s", text);
  free(text);
  return NULL;
}

/* Appends printf-formatted text to buf (a test's expected output; fails when it does not fit). */
static void add(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t n, const char *fmt, ...) {
  size_t used = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + used, n - used, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= n - used) fail_msg("expected text longer than %zu bytes", n);
}

static const char *EXPLANATION =
    "Times are simulated by the mallocbench cost model; speedup = T_heuristic / T_solver on the "
    "same workload\nand hardware (geometric mean over cases, each case the geometric mean over "
    "seeds); gap = (T_solver - T_bound) / T_bound.\n\n";
static const char *CI_NOTE =
    "\n95% CI: of the geometric mean over cases (Student t on the log speedups); sign p: "
    "two-sided exact\nsign test of wins against losses (ties dropped), the chance of counts at "
    "least this unequal if a\nsolver were as likely to lose a case as to win it.\n";
static const char *CUT_SHORT =
    " did not solve in its time limit\n(bound_status 'not solved'): the gap there is to a weaker "
    "bound and overstates the true gap\n('run --bound-budget SEC' gives the LP longer).\n";

/* The table's head and one solver's row, in summary.c's layout (the row's numbers as text). */
static void add_head(char *buf, size_t n) {
  add(buf, n, "%s", EXPLANATION);
  add(buf, n, "%-20s %6s %9s %-16s %9s %5s %5s %6s %7s %6s %9s %10s\n", "solver", "cases",
      "geomean", "95% CI", "max", "wins", "ties", "losses", "sign p", "failed", "mean gap",
      "wall (s)");
}
static void add_row_text(char *buf, size_t n, const char *solver, int cases, const char *geomean,
                         const char *ci, const char *max, int wins, int ties, int losses,
                         const char *p, int failed, const char *gap, double wall) {
  add(buf, n, "%-20s %6d %9s %-16s %9s %5d %5d %6d %7s %6d %9s %10.2f\n", solver, cases, geomean,
      ci, max, wins, ties, losses, p, failed, gap, wall);
}

/* Three cases by two solvers, with planned_jobs and complete set (a finished run):
 *   case a@hw1: heuristic 800000, bound 300000 "not solved" (cut short)
 *     greedy seed 0: 400000 (speedup 2, gap 1/3, wall 1); seed 1: 500000 (1.6, gap 2/3, wall 3,
 *     budget hit); packer seed 0: 800000 (speedup 1, gap 5/3, wall 0.5)
 *   case b@hw1: heuristic 1000000, no bound
 *     greedy seed 1: 250000 (speedup 4, wall 2); seed 0: 500000 (2, wall 4);
 *     packer seed 0: "error" (wall 7)
 *   case a@hw2: heuristic 600000 = its bound ("ok"): at the bound
 *     greedy seed 0: 750000 (speedup 0.8, gap 0.25, wall 1);
 *     packer seed 0: 600000 (speedup 1, gap 0, wall 1, budget hit) */
static mb_results *write_three_cases(const char *path) {
  mb_results *r = create(path);
  mb_error err = {{0}};
  assert_true(mb_results_set_attr_int(r, "planned_jobs", 8, &err));
  assert_true(mb_results_set_attr_int(r, "complete", 1, &err));
  mb_test_append_baseline(r, "a", "hw1", 800000, 300000, "not solved");
  mb_test_append_baseline(r, "b", "hw1", 1000000, -1, "error");
  mb_test_append_baseline(r, "a", "hw2", 600000, 600000, "ok");
  mb_test_append_row(r, 0, "a", "hw1", "greedy", 0, "ok", 800000, 400000, 300000, 1.0, 0, "");
  mb_test_append_row(r, 1, "a", "hw1", "greedy", 1, "ok", 800000, 500000, 300000, 3.0, 1, "");
  mb_test_append_row(r, 2, "a", "hw1", "packer", 0, "ok", 800000, 800000, 300000, 0.5, 0, "");
  mb_test_append_row(r, 3, "b", "hw1", "greedy", 1, "ok", 1000000, 250000, -1, 2.0, 0, "");
  mb_test_append_row(r, 4, "b", "hw1", "greedy", 0, "ok", 1000000, 500000, -1, 4.0, 0, "");
  mb_test_append_row(r, 5, "b", "hw1", "packer", 0, "error", 1000000, -1, -1, 7.0, 0, "crashed");
  mb_test_append_row(r, 6, "a", "hw2", "greedy", 0, "ok", 600000, 750000, 600000, 1.0, 0, "");
  mb_test_append_row(r, 7, "a", "hw2", "packer", 0, "ok", 600000, 600000, 600000, 1.0, 1, "");
  return reopen(r, path);
}

static void test_table_by_hand(void **state) {
  (void)state;
  char *path = mb_test_temp_path("three.h5");
  mb_results *r = write_three_cases(path);
  mb_error err = {{0}};
  char *text = summary_text(r, NULL, NULL, &err);
  if (!text) fail_msg("%s", err.message);
  /* greedy: case speedups sqrt(2 * 1.6), sqrt(4 * 2), 0.8 (two wins, a loss); geomean the cube
   * root of their product; interval exp(mean -+ t * sd / sqrt(3)) of their logs with t = 4.3027
   * (Student t, 2 degrees of freedom, 97.5%); sign p of 2 : 1 is 2 * (1 + 3) / 8 = 1; gaps 0.5
   * and 0.25 (b has no bound): 37.50%; wall 1 + 3 + 2 + 4 + 1 = 11 */
  double l[3] = {log(sqrt(3.2)), log(sqrt(8.0)), log(0.8)};
  double mean = (l[0] + l[1] + l[2]) / 3, ss = 0;
  for (int i = 0; i < 3; i++) ss += (l[i] - mean) * (l[i] - mean);
  double half = 4.3027 * sqrt(ss / 2) / sqrt(3.0);
  char geomean[32], ci[64], max[32];
  snprintf(geomean, sizeof geomean, "%.4fx", exp(mean));
  snprintf(ci, sizeof ci, "[%.4f, %.4f]", exp(mean - half), exp(mean + half));
  snprintf(max, sizeof max, "%.4fx", sqrt(8.0));
  char want[8192] = "";
  add(want, sizeof want, "%s: 8 result rows of 8 planned jobs, 3 workload x hardware case(s)\n",
      path);
  add_head(want, sizeof want);
  add_row_text(want, sizeof want, "greedy", 3, geomean, ci, max, 2, 0, 1, "1.0000", 0, "37.50%",
               11.0);
  /* packer: a and a@hw2, both ties (speedup 1, an interval of width 0); b failed; gaps 5/3 and
   * 0: 83.33%; wall of its ok rows 0.5 + 1 */
  add_row_text(want, sizeof want, "packer", 2, "1.0000x", "[1.0000, 1.0000]", "1.0000x", 0, 2, 0,
               "1.0000", 1, "83.33%", 1.5);
  add(want, sizeof want, "%s", CI_NOTE);
  /* a@hw2 alone at its bound */
  add(want, sizeof want,
      "\nIn 1 of these 3 cases the heuristic is within 0.001%% of the LP bound, so no solver can "
      "beat it there by\nmore than that; the other 2 leave room for a win.\n");
  /* a@hw1's bound was cut short */
  add(want, sizeof want, "\nIn 1 of these 3 cases the LP bound%s", CUT_SHORT);
  /* budget hits among the ok rows: greedy 1 of its 5, packer 1 of its 2 */
  add(want, sizeof want,
      "\nSolves stopped by their wall-clock budget (budget_hit), whose results depend on the "
      "machine's speed:\ngreedy 1 of 5; packer 1 of 2.\n");
  assert_string_equal(text, want);
  free(text);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* One case: the footnotes speak of "this case". Its heuristic is 3 ps above a bound of 600000
 * ps (within 1e-5 * 600000 = 6) that did not solve; the file has no planned_jobs and no complete
 * flag (a run killed early). */
static void test_one_case(void **state) {
  (void)state;
  char *path = mb_test_temp_path("one.h5");
  mb_results *r = create(path);
  mb_test_append_baseline(r, "solo", "hw1", 600003, 600000, "not solved");
  mb_test_append_row(r, 0, "solo", "hw1", "greedy", 0, "ok", 600003, 600003, 600000, 0.25, 0, "");
  r = reopen(r, path);
  mb_error err = {{0}};
  char *text = summary_text(r, NULL, NULL, &err);
  if (!text) fail_msg("%s", err.message);
  char want[8192] = "";
  add(want, sizeof want,
      "%s: 1 result rows, 1 workload x hardware case(s) -- INCOMPLETE run (resume it with "
      "mallocbench run --resume FILE)\n",
      path);
  add_head(want, sizeof want);
  /* speedup 1: a tie; one case, no interval; gap 3 / 600000 = 0.0005%: "0.00%" */
  add_row_text(want, sizeof want, "greedy", 1, "1.0000x", "-", "1.0000x", 0, 1, 0, "1.0000", 0,
               "0.00%", 0.25);
  add(want, sizeof want, "%s", CI_NOTE);
  add(want, sizeof want,
      "\nIn this case the heuristic is within 0.001%% of the LP bound, so no solver can beat it by "
      "more than that.\n");
  add(want, sizeof want, "\nThe LP bound of this case%s", CUT_SHORT);
  assert_string_equal(text, want);
  free(text);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* Cases without a heuristic baseline (it failed: -1; or took 0 ps, which gives no speedup either:
 * mb_result_row_derive) are counted in the caveats. */
static void test_caveats_without_baseline(void **state) {
  (void)state;
  char *path = mb_test_temp_path("nobase.h5");
  mb_results *r = create(path);
  mb_test_append_row(r, 0, "fine", "hw1", "greedy", 0, "ok", 800000, 400000, -1, 1.0, 0, "");
  mb_test_append_row(r, 1, "failed", "hw1", "greedy", 0, "ok", -1, 400000, -1, 1.0, 0, "");
  mb_test_append_row(r, 2, "zero", "hw1", "greedy", 0, "ok", 0, 400000, -1, 1.0, 0, "");
  r = reopen(r, path);
  mb_error err = {{0}};
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  if (!m) fail_msg("%s", err.message);
  mb_solver_summary s;
  mb_result_matrix_summarise(m, &s);
  assert_int_equal(s.n_cases, 1); /* "fine" alone has a speedup */
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  mb_summary_print_caveats(out, m, &s);
  fclose(out);
  assert_string_equal(text,
                      "\nIn 2 of these 3 cases the heuristic baseline failed (their baselines "
                      "row's bound_note says why):\ntheir speedups are unknown, and no solver's "
                      "row counts them.\n");
  free(text);
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* A tiny workload for the stored copies that carry the splits. */
static mb_workload *tiny_workload(void) {
  mb_workload_builder *b = mb_builder_new("tiny", "test_summary: hand-built");
  int32_t o = mb_builder_add_op(b, "op", "add", 1e3);
  int32_t x = mb_builder_add_buffer(b, "x", 4096, 0, 0, false);
  mb_builder_add_use(b, x, o, 4096, 0);
  mb_error err = {{0}};
  mb_workload *w = mb_builder_finish(b, &err);
  if (!w) fail_msg("builder: %s", err.message);
  return w;
}

/* A split's table: the header says so, and the "(no case of the ... split)" line belongs to an
 * empty table alone. An empty file (planned_jobs 0) summarised by split reads as having no
 * results yet, not as lacking split information. */
static void test_split_headers(void **state) {
  (void)state;
  char *path = mb_test_temp_path("split.h5");
  mb_results *r = write_three_cases(path);
  mb_results_close(r, NULL);
  mb_error err = {{0}};
  r = mb_results_open(path, true, &err);
  if (!r) fail_msg("%s", err.message);
  mb_workload *w = tiny_workload();
  assert_true(mb_results_put_workload(r, "a", w, "", &err));
  assert_true(mb_results_put_workload(r, "b", w, "", &err));
  assert_true(mb_results_set_workload_split(r, "a", "train", &err));
  assert_true(mb_results_set_workload_split(r, "b", "test", &err));
  mb_workload_free(w);
  r = reopen(r, path);
  char *text = summary_text(r, "train", NULL, &err);
  if (!text) fail_msg("%s", err.message);
  if (!strstr(text, "\ntrain split: 2 of 3 cases\nTimes are")) fail_msg("header:\n%s", text);
  assert_null(strstr(text, "(no case of the"));
  /* the train split: a@hw1 and a@hw2; greedy's speedups sqrt(3.2) and 0.8, a win and a loss */
  char row[128], geomean[32];
  snprintf(geomean, sizeof geomean, "%.4fx", sqrt(sqrt(3.2) * 0.8));
  snprintf(row, sizeof row, "\n%-20s %6d %9s ", "greedy", 2, geomean);
  if (!strstr(text, row)) fail_msg("no '%s' in:\n%s", row + 1, text);
  free(text);
  text = summary_text(r, "test", NULL, &err);
  if (!text) fail_msg("%s", err.message);
  if (!strstr(text, "\ntest split: 1 of 3 cases; workloads mallocMuZero never saw in training\n"))
    fail_msg("header:\n%s", text);
  assert_null(strstr(text, "(no case of the"));
  free(text);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);

  path = mb_test_temp_path("empty.h5");
  r = create(path);
  assert_true(mb_results_set_attr_int(r, "planned_jobs", 0, &err));
  assert_true(mb_results_set_attr_int(r, "complete", 1, &err));
  r = reopen(r, path);
  text = summary_text(r, "test", NULL, &err);
  if (!text) fail_msg("%s", err.message);
  char want[4096] = "";
  add(want, sizeof want, "%s: 0 result rows of 0 planned jobs, 0 workload x hardware case(s)\n",
      path);
  add(want, sizeof want,
      "test split: 0 of 0 cases; workloads mallocMuZero never saw in training\n");
  add_head(want, sizeof want);
  add(want, sizeof want, "(no results yet)\n");
  assert_string_equal(text, want);
  free(text);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* --workloads matching none: the message lists the file's distinct workload names in order, the
 * first six, then how many there are. */
static void test_unmatched_workloads_listed(void **state) {
  (void)state;
  const char *names[7] = {"w1", "w2", "w3", "w4", "w5", "w6", "w7"};
  for (int n = 3; n <= 7; n++) {
    char *path = mb_test_temp_path("list.h5");
    mb_results *r = create(path);
    for (int i = 0; i < n; i++)
      mb_test_append_row(r, i, names[i], "hw1", "greedy", 0, "ok", 800000, 400000, -1, 1.0, 0, "");
    /* w1 on a second profile: one name, listed once; and a second solver's row (more rows
     * than cases) */
    mb_test_append_row(r, n, "w1", "hw2", "greedy", 0, "ok", 800000, 400000, -1, 1.0, 0, "");
    mb_test_append_row(r, n + 1, "w2", "hw1", "packer", 0, "ok", 800000, 400000, -1, 1.0, 0, "");
    r = reopen(r, path);
    mb_error err = {{0}};
    assert_null(summary_text(r, NULL, "^zzz", &err));
    char list[128] = "";
    for (int i = 0; i < n && i < 6; i++) add(list, sizeof list, "%s%s", i ? ", " : "", names[i]);
    if (n > 6) add(list, sizeof list, ", ... %d in all", n);
    char want[2048] = "";
    add(want, sizeof want,
        "%s: --workloads '^zzz' matches no workload name of the file's %d case(s) (workloads: "
        "%s)",
        path, n + 1, list);
    assert_string_equal(err.message, want);
    mb_results_close(r, NULL);
    mb_test_temp_remove(path);
  }
}

/* Long names: the list is cut at its buffer (511 bytes of text), never written past it. */
static void test_unmatched_long_names(void **state) {
  (void)state;
  /* names whose list runs past the buffer in the fifth name (4 * 120 + 3 * 2 =
   * 486 bytes, then 122 more), or whose six names fit with 6 bytes to spare for ", ... 7 in all"
   * (5 * 82 + 85 + 5 * 2 = 505) */
  const int lengths[2][7] = {{120, 120, 120, 120, 120, 120, 120}, {82, 82, 82, 82, 82, 85, 10}};
  for (int k = 0; k < 2; k++) {
    char *path = mb_test_temp_path("long.h5");
    mb_results *r = create(path);
    char full[2048] = "";
    for (int i = 0; i < 7; i++) {
      char name[MB_RES_WORKLOAD];
      memset(name, 'a' + i, (size_t)lengths[k][i]);
      name[lengths[k][i]] = '\0';
      mb_test_append_row(r, i, name, "hw1", "greedy", 0, "ok", 800000, 400000, -1, 1.0, 0, "");
      if (i < 6) add(full, sizeof full, "%s%s", i ? ", " : "", name);
    }
    add(full, sizeof full, ", ... 7 in all");
    assert_true(strlen(full) > 511);
    full[511] = '\0';
    r = reopen(r, path);
    mb_error err = {{0}};
    assert_null(summary_text(r, NULL, "^zzz", &err));
    char want[2048] = "";
    add(want, sizeof want,
        "%s: --workloads '^zzz' matches no workload name of the file's 7 case(s) (workloads: %s)",
        path, full);
    assert_string_equal(err.message, want);
    mb_results_close(r, NULL);
    mb_test_temp_remove(path);
  }
}

/* The account of failed rows: per solver and status, in order of first appearance, the count,
 * the first row's workload and its note; nothing for ok rows. */
static void test_failures(void **state) {
  (void)state;
  char *path = mb_test_temp_path("failures.h5");
  mb_results *r = create(path);
  mb_test_append_row(r, 0, "a", "hw1", "greedy", 0, "ok", 800000, 400000, -1, 1.0, 0, "");
  mb_test_append_row(r, 1, "a", "hw1", "packer", 0, "error", 800000, -1, -1, 1.0, 0,
                     "out of memory");
  mb_test_append_row(r, 2, "b", "hw1", "greedy", 0, "invalid", 800000, 400000, -1, 1.0, 0,
                     "overlap 1");
  mb_test_append_row(r, 3, "b", "hw1", "packer", 0, "error", 800000, -1, -1, 1.0, 0, "timeout");
  mb_test_append_row(r, 4, "c", "hw1", "greedy", 0, "error", 800000, -1, -1, 1.0, 0, "crash");
  mb_test_append_row(r, 5, "c", "hw1", "packer", 0, "invalid", 800000, 400000, -1, 1.0, 0,
                     "overlap 2");
  mb_test_append_row(r, 6, "d", "hw1", "greedy", 0, "invalid", 800000, 400000, -1, 1.0, 0,
                     "overlap 3");
  mb_test_append_row(r, 7, "d", "hw1", "packer", 0, "ok", 800000, 400000, -1, 1.0, 0, "");
  r = reopen(r, path);
  mb_error err = {{0}};
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_true(mb_summary_print_failures(r, "P", out, &err));
  fclose(out);
  assert_string_equal(text,
                      "P: packer: 2 row(s) 'error', first (a): out of memory\n"
                      "P: greedy: 2 row(s) 'invalid', first (b): overlap 1\n"
                      "P: greedy: 1 row(s) 'error', first (c): crash\n"
                      "P: packer: 1 row(s) 'invalid', first (c): overlap 2\n");
  free(text);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
  /* every row ok: nothing */
  path = mb_test_temp_path("allok.h5");
  r = create(path);
  mb_test_append_row(r, 0, "a", "hw1", "greedy", 0, "ok", 800000, 400000, -1, 1.0, 0, "");
  r = reopen(r, path);
  text = NULL;
  out = open_memstream(&text, &len);
  assert_true(mb_summary_print_failures(r, "P", out, &err));
  fclose(out);
  assert_string_equal(text, "");
  free(text);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_by_hand),
      cmocka_unit_test(test_one_case),
      cmocka_unit_test(test_caveats_without_baseline),
      cmocka_unit_test(test_split_headers),
      cmocka_unit_test(test_unmatched_workloads_listed),
      cmocka_unit_test(test_unmatched_long_names),
      cmocka_unit_test(test_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
