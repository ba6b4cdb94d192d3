/* The result matrix (suite/result_matrix.h) of small results files written here row by row, every
 * number checked against arithmetic done by hand: the cases and solvers in first-appearance order,
 * labels ("workload@hw" only for a workload on several profiles), each case's LP status from its
 * baseline row, each cell's seeds, failures, budget hits, geometric-mean speedups, mean gap (per
 * cell: NaN where the case has no bound), mean times and lowest-seed row, and the per-solver
 * summary (cases, wins/ties/losses, max and geomean speedup, mean gap, failed rows, total wall
 * time). Also the two per-case predicates at their edges: the heuristic within MB_AT_BOUND_TOL of
 * the bound (inclusive), and a bound cut short by its time limit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result_matrix.h"
#include "results.h"
#include "support.h"

static bool near(double got, double want) { return fabs(got - want) <= 1e-12 * fabs(want); }

#define assert_near(got, want)                                               \
  do {                                                                       \
    double g_ = (got), w_ = (want);                                          \
    if (!near(g_, w_)) fail_msg("%s = %.17g, expected %.17g", #got, g_, w_); \
  } while (0)

/* Three cases by two solvers (the rows below, in plan order):
 *   case 0 a@hw1: heuristic 800000, bound 300000 "not solved"
 *     greedy seed 0: 400000 (speedup 2, gap 1/3, wall 1)
 *     greedy seed 1: 500000 (speedup 1.6, gap 2/3, wall 3, budget hit)
 *     packer seed 0: 800000 (speedup 1, gap 5/3, wall 0.5)
 *   case 1 b@hw1: heuristic 1000000, no bound (-1, "error")
 *     greedy seed 1: 250000 (speedup 4, wall 2)
 *     greedy seed 0: 500000 (speedup 2, wall 4)      -- the lower seed comes second
 *     packer seed 0: "error", not valid (wall 7)     -- the cell has no ok row
 *   case 2 a@hw2: heuristic 600000, bound 600000 "ok" (the heuristic is at the bound)
 *     greedy seed 0: 750000 (speedup 0.8, gap 0.25, wall 1)
 *     packer seed 0: 600000 (speedup 1, gap 0, wall 1)
 * and a baseline row of a pair without result rows (a run killed before its jobs). */
static mb_results *write_matrix_file(const char *path) {
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  mb_test_append_baseline(r, "a", "hw1", 800000, 300000, "not solved");
  mb_test_append_baseline(r, "b", "hw1", 1000000, -1, "error");
  mb_test_append_baseline(r, "a", "hw2", 600000, 600000, "ok");
  mb_test_append_baseline(r, "zzz", "hw1", 500000, 400000, "not solved");
  mb_test_append_row(r, 0, "a", "hw1", "greedy", 0, "ok", 800000, 400000, 300000, 1.0, 0, "");
  mb_test_append_row(r, 1, "a", "hw1", "greedy", 1, "ok", 800000, 500000, 300000, 3.0, 1, "");
  mb_test_append_row(r, 2, "a", "hw1", "packer", 0, "ok", 800000, 800000, 300000, 0.5, 0, "");
  mb_test_append_row(r, 3, "b", "hw1", "greedy", 1, "ok", 1000000, 250000, -1, 2.0, 0, "");
  mb_test_append_row(r, 4, "b", "hw1", "greedy", 0, "ok", 1000000, 500000, -1, 4.0, 0, "");
  mb_test_append_row(r, 5, "b", "hw1", "packer", 0, "error", 1000000, -1, -1, 7.0, 0, "");
  mb_test_append_row(r, 6, "a", "hw2", "greedy", 0, "ok", 600000, 750000, 600000, 1.0, 0, "");
  mb_test_append_row(r, 7, "a", "hw2", "packer", 0, "ok", 600000, 600000, 600000, 1.0, 0, "");
  return r;
}

static void test_cases_and_solvers(void **state) {
  (void)state;
  char *path = mb_test_temp_path("cases.h5");
  mb_results *r = write_matrix_file(path);
  mb_error err = {{0}};
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  if (!m) fail_msg("%s", err.message);
  assert_int_equal(m->n_rows, 8);
  assert_int_equal(m->n_cases, 3);
  assert_int_equal(m->n_solvers, 2);
  assert_string_equal(m->solvers[0], "greedy");
  assert_string_equal(m->solvers[1], "packer");
  assert_int_equal(mb_matrix_solver_index(m, "greedy"), 0);
  assert_int_equal(mb_matrix_solver_index(m, "packer"), 1);
  assert_int_equal(mb_matrix_solver_index(m, "nosuch"), -1);
  assert_int_equal(mb_matrix_solver_index(m, ""), -1); /* no solver has the empty name */
  const char *workload[3] = {"a", "b", "a"}, *hardware[3] = {"hw1", "hw1", "hw2"};
  /* "a" ran on two profiles, so its cases carry the hardware; "b" on one */
  const char *label[3] = {"a@hw1", "b", "a@hw2"};
  const char *status[3] = {"not solved", "error", "ok"};
  const int64_t t_heuristic[3] = {800000, 1000000, 600000}, t_bound[3] = {300000, -1, 600000};
  /* cut short: a bound (> 0) whose LP did not solve, case 0 alone; at the bound: case 2 alone
   * (600000 - 600000 = 0 <= 1e-5 * 600000; case 0: 500000 > 3) */
  const bool cut_short[3] = {true, false, false}, at_bound[3] = {false, false, true};
  for (int c = 0; c < 3; c++) {
    const mb_matrix_case *k = &m->cases[c];
    assert_string_equal(k->workload, workload[c]);
    assert_string_equal(k->hardware, hardware[c]);
    assert_string_equal(k->label, label[c]);
    assert_string_equal(k->bound_status, status[c]);
    assert_string_equal(k->split, ""); /* no stored workload copies */
    assert_int_equal(k->n_buffers, 3);
    assert_int_equal(k->capacity, 1 << 20);
    assert_int_equal(k->t_slow_ps, MB_TEST_T_SLOW);
    assert_int_equal(k->t_heuristic_ps, t_heuristic[c]);
    assert_int_equal(k->t_bound_ps, t_bound[c]);
    assert_int_equal(mb_matrix_case_bound_cut_short(k), cut_short[c]);
    assert_int_equal(mb_matrix_case_heuristic_at_bound(k), at_bound[c]);
  }
  /* every case lacks split information; none is in a split */
  assert_int_equal(mb_result_matrix_count_split(m, ""), 3);
  assert_int_equal(mb_result_matrix_count_split(m, "train"), 0);
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

static void test_cells(void **state) {
  (void)state;
  char *path = mb_test_temp_path("cells.h5");
  mb_results *r = write_matrix_file(path);
  mb_error err = {{0}};
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  if (!m) fail_msg("%s", err.message);
  assert_int_equal(m->n_cases, 3);
  assert_int_equal(m->n_solvers, 2);
  /* case 0, greedy: seeds 0 and 1; speedups sqrt(2 * 1.6), slow sqrt(2.5 * 2) = sqrt(5); gap
   * (1/3 + 2/3) / 2 = 0.5; wall (1 + 3) / 2 = 2; solver time (4e-7 + 5e-7) / 2; the lowest
   * seed is row 0 */
  const mb_matrix_cell *c = mb_matrix_cell_at(m, 0, 0);
  assert_true(c->present);
  assert_int_equal(c->n_seeds, 2);
  assert_int_equal(c->n_failed, 0);
  assert_int_equal(c->n_budget_hit, 1);
  assert_near(c->speedup_heuristic, sqrt(3.2));
  assert_near(c->speedup_slow, sqrt(5.0));
  assert_near(c->gap_to_bound, 0.5);
  assert_near(c->wall_s, 2.0);
  assert_near(c->t_solver_s, 4.5e-7);
  assert_int_equal(c->first_row, 0);
  /* case 0, packer: one seed, a tie; gap (800000 - 300000) / 300000 = 5/3; row 2 */
  c = mb_matrix_cell_at(m, 0, 1);
  assert_true(c->present);
  assert_int_equal(c->n_seeds, 1);
  assert_near(c->speedup_heuristic, 1.0);
  assert_near(c->speedup_slow, 1.25);
  assert_near(c->gap_to_bound, 5.0 / 3.0);
  assert_near(c->wall_s, 0.5);
  assert_int_equal(c->first_row, 2);
  /* case 1, greedy: speedups sqrt(4 * 2), slow sqrt(4 * 2); no bound, no gap; the lowest seed
   * is the second row, row 4 */
  c = mb_matrix_cell_at(m, 1, 0);
  assert_true(c->present);
  assert_int_equal(c->n_seeds, 2);
  assert_near(c->speedup_heuristic, sqrt(8.0));
  assert_near(c->speedup_slow, sqrt(8.0));
  assert_true(isnan(c->gap_to_bound));
  assert_near(c->wall_s, 3.0);
  assert_near(c->t_solver_s, 3.75e-7);
  assert_int_equal(c->first_row, 4);
  /* case 1, packer: the failed row alone: no seed, no speedup, no gap, no time */
  c = mb_matrix_cell_at(m, 1, 1);
  assert_false(c->present);
  assert_int_equal(c->n_seeds, 0);
  assert_int_equal(c->n_failed, 1);
  assert_true(isnan(c->speedup_heuristic));
  assert_true(isnan(c->speedup_slow));
  assert_true(isnan(c->gap_to_bound));
  assert_true(c->wall_s == 0);
  assert_true(c->t_solver_s == 0);
  assert_int_equal(c->first_row, 5);
  /* case 2: greedy 600000 / 750000 = 0.8, gap 150000 / 600000 = 0.25, row 6; packer a tie at
   * the bound, gap 0, row 7 */
  c = mb_matrix_cell_at(m, 2, 0);
  assert_true(c->present);
  assert_near(c->speedup_heuristic, 0.8);
  assert_near(c->gap_to_bound, 0.25);
  assert_int_equal(c->first_row, 6);
  c = mb_matrix_cell_at(m, 2, 1);
  assert_true(c->present);
  assert_near(c->speedup_heuristic, 1.0);
  assert_true(c->gap_to_bound == 0);
  assert_int_equal(c->first_row, 7);
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

static void test_summary(void **state) {
  (void)state;
  char *path = mb_test_temp_path("summary.h5");
  mb_results *r = write_matrix_file(path);
  mb_error err = {{0}};
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  if (!m) fail_msg("%s", err.message);
  mb_solver_summary s[2];
  mb_result_matrix_summarise(m, s);
  /* greedy: case speedups sqrt(3.2), sqrt(8), 0.8: two wins and a loss; the largest is the
   * second case's; geomean cbrt(sqrt(3.2 * 8) * 0.8); gaps 0.5 and 0.25 (case 1 has none);
   * wall 1 + 3 + 2 + 4 + 1 = 11; sign test of 2 wins, 1 loss: 2 * (1 + 3) / 8 = 1 */
  assert_string_equal(s[0].solver, "greedy");
  assert_int_equal(s[0].n_cases, 3);
  assert_int_equal(s[0].n_failed, 0);
  assert_int_equal(s[0].n_budget_hit, 1);
  assert_int_equal(s[0].wins, 2);
  assert_int_equal(s[0].ties, 0);
  assert_int_equal(s[0].losses, 1);
  assert_near(s[0].max_speedup, sqrt(8.0));
  assert_near(s[0].geomean_speedup, cbrt(sqrt(25.6) * 0.8));
  assert_true(s[0].geomean_ci_low < s[0].geomean_speedup);
  assert_true(s[0].geomean_speedup < s[0].geomean_ci_high);
  assert_near(s[0].mean_gap_to_bound, 0.375);
  assert_near(s[0].total_wall_s, 11.0);
  assert_near(s[0].sign_p, 1.0);
  /* packer: two present cases, both ties (speedup 1); the failed row counts as failed, its
   * case not at all; gaps 5/3 and 0; wall of the ok rows 0.5 + 1 */
  assert_string_equal(s[1].solver, "packer");
  assert_int_equal(s[1].n_cases, 2);
  assert_int_equal(s[1].n_failed, 1);
  assert_int_equal(s[1].n_budget_hit, 0);
  assert_int_equal(s[1].wins, 0);
  assert_int_equal(s[1].ties, 2);
  assert_int_equal(s[1].losses, 0);
  assert_near(s[1].max_speedup, 1.0);
  assert_near(s[1].geomean_speedup, 1.0);
  assert_near(s[1].mean_gap_to_bound, 5.0 / 6.0);
  assert_near(s[1].total_wall_s, 1.5);
  assert_near(s[1].sign_p, 1.0);
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* A file where every row is a case and a solver of its own (so the arrays sized by the rows are
 * full): "x" and "y" each once, by different solvers. */
static void test_one_row_per_case(void **state) {
  (void)state;
  char *path = mb_test_temp_path("full.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  mb_test_append_row(r, 0, "x", "hw1", "s1", 0, "ok", 800000, 400000, 400000, 1.0, 0, "");
  mb_test_append_row(r, 1, "y", "hw1", "s2", 0, "ok", 900000, 1000000, -1, 2.0, 0, "");
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  if (!m) fail_msg("%s", err.message);
  assert_int_equal(m->n_cases, 2);
  assert_int_equal(m->n_solvers, 2);
  assert_string_equal(m->cases[0].label, "x");
  assert_string_equal(m->cases[1].label, "y");
  assert_string_equal(m->cases[0].bound_status, ""); /* no baseline rows */
  assert_false(mb_matrix_case_bound_cut_short(&m->cases[0]));
  assert_int_equal(mb_matrix_solver_index(m, "s2"), 1);
  assert_int_equal(mb_matrix_solver_index(m, "s3"), -1);
  assert_int_equal(mb_result_matrix_count_split(m, ""), 2);
  /* x by s1: 800000 / 400000 = 2, gap 0; y by s2: 0.9, no gap; the other cells are empty */
  assert_true(mb_matrix_cell_at(m, 0, 0)->present);
  assert_near(mb_matrix_cell_at(m, 0, 0)->speedup_heuristic, 2.0);
  assert_false(mb_matrix_cell_at(m, 0, 1)->present);
  assert_int_equal(mb_matrix_cell_at(m, 0, 1)->n_seeds, 0);
  assert_false(mb_matrix_cell_at(m, 1, 0)->present);
  assert_near(mb_matrix_cell_at(m, 1, 1)->speedup_heuristic, 0.9);
  assert_int_equal(mb_matrix_cell_at(m, 1, 1)->first_row, 1);
  mb_solver_summary s[2];
  mb_result_matrix_summarise(m, s);
  assert_int_equal(s[0].n_cases, 1);
  assert_int_equal(s[0].wins, 1);
  assert_near(s[0].mean_gap_to_bound, 0.0);
  assert_int_equal(s[1].n_cases, 1);
  assert_int_equal(s[1].losses, 1);
  assert_true(isnan(s[1].mean_gap_to_bound));
  assert_true(isnan(s[1].geomean_ci_low)); /* one case: no interval */
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* The predicates on cases made by hand, at their edges. */
static void test_case_predicates(void **state) {
  (void)state;
  mb_matrix_case k;
  memset(&k, 0, sizeof k);
  /* within MB_AT_BOUND_TOL, inclusive: 1e-5 * 100000 is exactly 1 (in binary too), so a
   * heuristic 1 ps above a bound of 100000 ps is at it and one 2 ps above is not */
  k.t_bound_ps = 100000;
  k.t_heuristic_ps = 100001;
  assert_true(mb_matrix_case_heuristic_at_bound(&k));
  k.t_heuristic_ps = 100002;
  assert_false(mb_matrix_case_heuristic_at_bound(&k));
  k.t_heuristic_ps = 100000;
  assert_true(mb_matrix_case_heuristic_at_bound(&k));
  /* no bound (-1, or 0 ps, which rows treat as none: mb_result_row_derive gives no gap to it):
   * never at it, even with a failed heuristic (-1) */
  k.t_heuristic_ps = -1;
  k.t_bound_ps = -1;
  assert_false(mb_matrix_case_heuristic_at_bound(&k));
  k.t_bound_ps = 0;
  assert_false(mb_matrix_case_heuristic_at_bound(&k));
  /* cut short: a bound whose LP status is neither "ok" nor unknown ("": no baseline row) */
  k.t_heuristic_ps = 800000;
  k.t_bound_ps = 300000;
  snprintf(k.bound_status, sizeof k.bound_status, "not solved");
  assert_true(mb_matrix_case_bound_cut_short(&k));
  snprintf(k.bound_status, sizeof k.bound_status, "ok");
  assert_false(mb_matrix_case_bound_cut_short(&k));
  k.bound_status[0] = '\0';
  assert_false(mb_matrix_case_bound_cut_short(&k));
  /* without a bound (-1 or 0 ps) no gap is stated, so none is overstated */
  snprintf(k.bound_status, sizeof k.bound_status, "not solved");
  k.t_bound_ps = 0;
  assert_false(mb_matrix_case_bound_cut_short(&k));
  k.t_bound_ps = -1;
  assert_false(mb_matrix_case_bound_cut_short(&k));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cases_and_solvers), cmocka_unit_test(test_cells),
      cmocka_unit_test(test_summary),           cmocka_unit_test(test_one_row_per_case),
      cmocka_unit_test(test_case_predicates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
