#include "result_matrix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static bool row_ok(const mb_result_row *row) { return !strcmp(row->status, "ok") && row->valid; }

static int32_t find_case(const mb_result_matrix *m, const char *workload, const char *hardware) {
  for (int32_t c = m->n_cases - 1; c >= 0; c--)
    if (!strcmp(m->cases[c].workload, workload) && !strcmp(m->cases[c].hardware, hardware))
      return c;
  return -1;
}

int32_t mb_matrix_solver_index(const mb_result_matrix *m, const char *solver) {
  for (int32_t s = 0; s < m->n_solvers; s++)
    if (!strcmp(m->solvers[s], solver)) return s;
  return -1;
}

mb_matrix_cell *mb_matrix_cell_at(const mb_result_matrix *m, int32_t c, int32_t s) {
  return &m->cells[(size_t)c * (size_t)m->n_solvers + (size_t)s];
}

void mb_result_matrix_free(mb_result_matrix *m) {
  if (!m) return;
  free(m->cases);
  free(m->solvers);
  free(m->cells);
  free(m->rows);
  free(m);
}

mb_result_matrix *mb_result_matrix_load(mb_results *r, mb_error *err) {
  mb_result_matrix *m = calloc(1, sizeof *m);
  if (!m) {
    mb_fail(err, "out of memory");
    return NULL;
  }
  if (!mb_results_read_rows(r, &m->rows, &m->n_rows, err)) {
    free(m);
    return NULL;
  }
  size_t cap = (size_t)(m->n_rows > 0 ? m->n_rows : 1);
  m->cases = calloc(cap, sizeof *m->cases);
  m->solvers = calloc(cap, sizeof *m->solvers);
  if (!m->cases || !m->solvers) goto oom;
  /* cases and solvers in first-appearance order (the plan's order) */
  for (int64_t i = 0; i < m->n_rows; i++) {
    const mb_result_row *row = &m->rows[i];
    if (find_case(m, row->workload, row->hardware) < 0) {
      mb_matrix_case *c = &m->cases[m->n_cases++];
      memcpy(c->workload, row->workload, sizeof c->workload);
      memcpy(c->hardware, row->hardware, sizeof c->hardware);
      c->n_buffers = row->n_buffers;
      c->capacity = row->capacity;
      c->t_slow_ps = row->t_slow_ps;
      c->t_heuristic_ps = row->t_heuristic_ps;
      c->t_bound_ps = row->t_bound_ps;
    }
    if (mb_matrix_solver_index(m, row->solver) < 0)
      memcpy(m->solvers[m->n_solvers++], row->solver, MB_RES_SOLVER);
  }
  /* the split of each case's workload (a workload on several profiles: one split) */
  for (int32_t c = 0; c < m->n_cases; c++) {
    mb_matrix_case *k = &m->cases[c];
    if (!mb_results_has_workload(r, k->workload)) continue;
    if (!mb_results_get_workload_split(r, k->workload, k->split, err)) {
      mb_result_matrix_free(m);
      return NULL;
    }
  }
  /* each case's LP status, from its baseline row */
  mb_baseline_row *base = NULL;
  int64_t n_base = 0;
  if (!mb_results_read_baselines(r, &base, &n_base, err)) {
    mb_result_matrix_free(m);
    return NULL;
  }
  for (int64_t b = 0; b < n_base; b++) {
    int32_t c = find_case(m, base[b].workload, base[b].hardware);
    if (c >= 0) memcpy(m->cases[c].bound_status, base[b].bound_status, MB_RES_STATUS);
  }
  free(base);
  /* label a case "workload@hw" only when its workload ran on several hardware profiles */
  for (int32_t c = 0; c < m->n_cases; c++) {
    mb_matrix_case *k = &m->cases[c];
    bool shared = false;
    for (int32_t o = 0; o < m->n_cases && !shared; o++)
      shared = o != c && !strcmp(m->cases[o].workload, k->workload);
    if (shared)
      snprintf(k->label, sizeof k->label, "%s@%s", k->workload, k->hardware);
    else
      snprintf(k->label, sizeof k->label, "%s", k->workload);
  }
  m->cells =
      calloc((size_t)(m->n_cases ? m->n_cases : 1) * (size_t)(m->n_solvers ? m->n_solvers : 1),
             sizeof *m->cells);
  if (!m->cells) goto oom;
  /* accumulate: log-speedups, gaps, walls */
  int32_t *n_gap =
      calloc((size_t)(m->n_cases ? m->n_cases : 1) * (size_t)(m->n_solvers ? m->n_solvers : 1),
             sizeof *n_gap);
  if (!n_gap) goto oom;
  for (int64_t i = 0; i < m->n_rows; i++) {
    const mb_result_row *row = &m->rows[i];
    int32_t c = find_case(m, row->workload, row->hardware);
    int32_t s = mb_matrix_solver_index(m, row->solver);
    mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
    if (cell->n_seeds == 0 && cell->n_failed == 0) cell->first_row = i;
    if (!row_ok(row)) {
      cell->n_failed++;
      continue;
    }
    if (m->rows[cell->first_row].seed > row->seed) cell->first_row = i;
    cell->n_seeds++;
    cell->n_budget_hit += row->budget_hit != 0;
    cell->speedup_heuristic += log(row->speedup_heuristic);
    cell->speedup_slow += log(row->speedup_slow);
    cell->wall_s += row->wall_s;
    cell->t_solver_s += row->t_solver_s;
    if (!isnan(row->gap_to_bound)) {
      cell->gap_to_bound += row->gap_to_bound;
      n_gap[(size_t)c * (size_t)m->n_solvers + (size_t)s]++;
    }
  }
  for (int32_t c = 0; c < m->n_cases; c++)
    for (int32_t s = 0; s < m->n_solvers; s++) {
      mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      int32_t ng = n_gap[(size_t)c * (size_t)m->n_solvers + (size_t)s];
      if (cell->n_seeds > 0) {
        cell->speedup_heuristic = exp(cell->speedup_heuristic / cell->n_seeds);
        cell->speedup_slow = exp(cell->speedup_slow / cell->n_seeds);
        cell->wall_s /= cell->n_seeds;
        cell->t_solver_s /= cell->n_seeds;
      } else {
        cell->speedup_heuristic = cell->speedup_slow = NAN;
      }
      cell->gap_to_bound = ng > 0 ? cell->gap_to_bound / ng : NAN;
      /* a case whose heuristic baseline failed has no speedup (NaN): not present, so that it
       * is neither a loss nor a NaN in the geomean (the summary's caveats count such cases) */
      cell->present = cell->n_seeds > 0 && cell->n_failed == 0 && !isnan(cell->speedup_heuristic);
    }
  free(n_gap);
  return m;
oom:
  mb_fail(err, "out of memory");
  mb_result_matrix_free(m);
  return NULL;
}

int32_t mb_result_matrix_count_split(const mb_result_matrix *m, const char *split) {
  int32_t n = 0;
  for (int32_t c = 0; c < m->n_cases; c++) n += !strcmp(m->cases[c].split, split);
  return n;
}

bool mb_matrix_case_heuristic_at_bound(const mb_matrix_case *c) {
  return c->t_bound_ps > 0 &&
         (double)(c->t_heuristic_ps - c->t_bound_ps) <= MB_AT_BOUND_TOL * (double)c->t_bound_ps;
}

bool mb_matrix_case_bound_cut_short(const mb_matrix_case *c) {
  return c->t_bound_ps > 0 && c->bound_status[0] && strcmp(c->bound_status, "ok") != 0;
}

void mb_result_matrix_summarise(const mb_result_matrix *m, mb_solver_summary *out) {
  mb_result_matrix_summarise_split(m, NULL, out);
}

void mb_result_matrix_summarise_split(const mb_result_matrix *m, const char *split,
                                      mb_solver_summary *out) {
  /* one solver's per-case speedups, for the interval (NULL if out of memory: no interval) */
  double *speedups = malloc((size_t)(m->n_cases > 0 ? m->n_cases : 1) * sizeof *speedups);
  for (int32_t s = 0; s < m->n_solvers; s++) {
    mb_solver_summary *sum = &out[s];
    memset(sum, 0, sizeof *sum);
    memcpy(sum->solver, m->solvers[s], sizeof sum->solver);
    double log_sum = 0;
    double gap_sum = 0;
    int32_t n_gap = 0;
    sum->max_speedup = NAN;
    for (int32_t c = 0; c < m->n_cases; c++) {
      if (split && strcmp(m->cases[c].split, split)) continue;
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      sum->n_failed += cell->n_failed;
      sum->n_budget_hit += cell->n_budget_hit;
      sum->total_wall_s += cell->wall_s * cell->n_seeds;
      if (!cell->present) continue;
      /* speedups are relative to the heuristic baseline stored in every row, so a case
       * counts even when the heuristic itself was not among the run's solvers */
      double sp = cell->speedup_heuristic;
      if (speedups) speedups[sum->n_cases] = sp;
      sum->n_cases++;
      log_sum += log(sp);
      if (isnan(sum->max_speedup) || sp > sum->max_speedup) sum->max_speedup = sp;
      if (fabs(sp - 1.0) <= 1e-9)
        sum->ties++;
      else if (sp > 1.0)
        sum->wins++;
      else
        sum->losses++;
      if (!isnan(cell->gap_to_bound)) {
        gap_sum += cell->gap_to_bound;
        n_gap++;
      }
    }
    sum->geomean_speedup = sum->n_cases ? exp(log_sum / sum->n_cases) : NAN;
    sum->geomean_ci_low = sum->geomean_ci_high = NAN;
    if (speedups)
      mb_geomean_ci95(speedups, sum->n_cases, &sum->geomean_ci_low, &sum->geomean_ci_high);
    sum->sign_p = mb_sign_test(sum->wins, sum->losses);
    sum->mean_gap_to_bound = n_gap ? gap_sum / n_gap : NAN;
  }
  free(speedups);
}
