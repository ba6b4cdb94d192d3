/* The results of a run as a matrix: cases (workload x hardware) by solvers, each cell the
 * aggregate over seeds. Figures and reports read results through this one view, so a number
 * in a figure and the same number in a table are computed once, the same way.
 *
 * Aggregation over seeds: speedups by geometric mean, gaps and wall times by arithmetic mean;
 * a cell counts as present only when every seed's row is "ok" and valid.
 *
 * Splits: each case carries its workload's catalogue split (train/test, from the stored
 * workload copy), so that mallocMuZero, trained on the train split, is judged on the test
 * split: the summaries can be restricted to one split's cases. */
#ifndef MB_RESULT_MATRIX_H
#define MB_RESULT_MATRIX_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "results.h"

typedef struct mb_matrix_cell {
  bool present; /* at least one ok+valid row, no failed one, and a speedup: the case's
                   heuristic baseline is known */
  int32_t n_seeds;
  int32_t n_failed;         /* rows of this cell that are not ok or not valid */
  int32_t n_budget_hit;     /* ok rows whose solver stopped on its wall-clock budget */
  double speedup_heuristic; /* geometric mean over seeds */
  double speedup_slow;      /* geometric mean over seeds */
  double gap_to_bound;      /* mean over seeds; NaN without a bound */
  double wall_s;            /* mean over seeds */
  double t_solver_s;        /* mean over seeds */
  int64_t first_row;        /* index (into the rows) of the cell's lowest-seed row */
} mb_matrix_cell;

typedef struct mb_matrix_case {
  char workload[MB_RES_WORKLOAD];
  char hardware[MB_RES_HARDWARE];
  char label[MB_RES_WORKLOAD + MB_RES_HARDWARE]; /* "workload", or "workload@hw" when the
                                                    workload ran on several profiles */
  int32_t n_buffers;
  int64_t capacity;
  int64_t t_slow_ps;
  int64_t t_heuristic_ps;
  int64_t t_bound_ps;               /* -1 when unavailable */
  char bound_status[MB_RES_STATUS]; /* the baseline's LP status ("ok"; "not solved": cut short
                                       by its time limit, a weaker bound); "" without one */
  char split[MB_RES_SPLIT];         /* the workload's catalogue split; "" when the file has none */
} mb_matrix_case;

typedef struct mb_result_matrix {
  int32_t n_cases;
  int32_t n_solvers;
  mb_matrix_case *cases;          /* in first-appearance (plan) order */
  char (*solvers)[MB_RES_SOLVER]; /* in first-appearance order */
  mb_matrix_cell *cells;          /* n_cases x n_solvers, row-major */
  mb_result_row *rows;            /* the raw rows, as read */
  int64_t n_rows;
} mb_result_matrix;

/* Builds the matrix from an open results file (splits from the stored workload copies; a case
 * whose workload has no copy or no split gets ""). */
mb_result_matrix *mb_result_matrix_load(mb_results *r, mb_error *err);
void mb_result_matrix_free(mb_result_matrix *m);
mb_matrix_cell *mb_matrix_cell_at(const mb_result_matrix *m, int32_t c, int32_t s);
/* Index of a solver by name, or -1. */
int32_t mb_matrix_solver_index(const mb_result_matrix *m, const char *solver);

/* Per-solver summary over the cases where the solver's cell is present: speedups are over the
 * heuristic baseline stored in every row, so a case counts even when the heuristic was not
 * among the run's solvers, and not when its baseline failed. */
typedef struct mb_solver_summary {
  char solver[MB_RES_SOLVER];
  int32_t n_cases;                        /* cases with a present cell */
  int32_t n_failed;                       /* rows that were not ok/valid */
  int32_t n_budget_hit;                   /* ok rows stopped by the wall-clock budget */
  double geomean_speedup;                 /* over the heuristic */
  double geomean_ci_low, geomean_ci_high; /* its 95% confidence interval over the cases
                                           * (stats.h); NaN with fewer than 2 cases */
  double max_speedup;
  int32_t wins, ties, losses; /* vs heuristic; tie when |speedup - 1| <= 1e-9 */
  double sign_p;              /* two-sided exact sign test of wins against losses (stats.h) */
  double mean_gap_to_bound;   /* over cases with a bound; NaN when none */
  double total_wall_s;
} mb_solver_summary;

/* out has m->n_solvers entries, in the matrix's solver order. */
void mb_result_matrix_summarise(const mb_result_matrix *m, mb_solver_summary *out);
/* The same over the cases of one split only (cases whose split is exactly `split`); failed rows
 * and wall time are counted over those cases too. A NULL split means every case. */
void mb_result_matrix_summarise_split(const mb_result_matrix *m, const char *split,
                                      mb_solver_summary *out);
/* Cases whose split is exactly `split` ("" counts the cases without split information). */
int32_t mb_result_matrix_count_split(const mb_result_matrix *m, const char *split);
/* Whether the heuristic is already within MB_AT_BOUND_TOL (relative) of the case's LP bound:
 * no solver can beat it there by more, so such a case is a tie or a loss for everyone (the
 * summary says how many there are, to read wins against the cases that leave room). False
 * without a bound. */
#define MB_AT_BOUND_TOL 1e-5
bool mb_matrix_case_heuristic_at_bound(const mb_matrix_case *c);
/* Whether the case's LP bound did not solve (bound_status "not solved": its time limit or
 * numerical trouble): the bound is then the stopped simplex's weak-duality bound, at worst the
 * trivial one, valid but weaker, so gaps to it overstate the true gap. */
bool mb_matrix_case_bound_cut_short(const mb_matrix_case *c);

#endif
