#include "summary.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "result_matrix.h"

static void num(char *out, size_t n, double v, const char *fmt) {
  if (isnan(v))
    snprintf(out, n, "-");
  else
    snprintf(out, n, fmt, v);
}

bool mb_summary_print(mb_results *r, FILE *out, mb_error *err) {
  return mb_summary_print_split(r, NULL, out, err);
}

bool mb_summary_print_split(mb_results *r, const char *split, FILE *out, mb_error *err) {
  if (split && strcmp(split, "train") && strcmp(split, "test"))
    return mb_fail(err, "split '%s': expected train or test", split);
  mb_result_matrix *m = mb_result_matrix_load(r, err);
  if (!m) return false;
  int32_t n_split = split ? mb_result_matrix_count_split(m, split) : m->n_cases;
  int32_t n_unknown = mb_result_matrix_count_split(m, "");
  if (split && m->n_cases > 0 && n_unknown == m->n_cases) {
    mb_result_matrix_free(m);
    return mb_fail(err,
                   "%s: no split information (the file was written before results recorded "
                   "each workload's catalogue split): cannot restrict the summary to the %s "
                   "split; rerun the benchmark, or use mallocbench summary without --split",
                   mb_results_path(r), split);
  }
  int64_t planned = -1, complete = 0;
  mb_results_get_attr_int(r, "planned_jobs", &planned, NULL);
  mb_results_get_attr_int(r, "complete", &complete, NULL);
  fprintf(out, "%s: %" PRId64 " result rows", mb_results_path(r), m->n_rows);
  if (planned >= 0) fprintf(out, " of %" PRId64 " planned jobs", planned);
  fprintf(out, ", %d workload x hardware case(s)%s\n", (int)m->n_cases,
          complete ? "" : " -- INCOMPLETE run (resume it with mallocbench run --resume FILE)");
  if (split) {
    fprintf(out, "%s split: %d of %d cases", split, (int)n_split, (int)m->n_cases);
    if (n_unknown > 0) fprintf(out, " (%d without split information)", (int)n_unknown);
    fprintf(out, "%s\n",
            !strcmp(split, "test") ? "; workloads mallocMuZero never saw in training" : "");
  }
  fprintf(out,
          "Times are simulated by the mallocbench cost model; speedup = T_heuristic / T_solver "
          "on the same workload\nand hardware (geometric mean over cases, each case the "
          "geometric mean over seeds); gap = (T_solver - T_bound) / T_bound.\n\n");
  mb_solver_summary *s = calloc(m->n_solvers ? (size_t)m->n_solvers : 1, sizeof *s);
  if (!s) {
    mb_result_matrix_free(m);
    return mb_fail(err, "out of memory");
  }
  mb_result_matrix_summarise_split(m, split, s);
  fprintf(out, "%-20s %6s %9s %9s %5s %5s %6s %6s %9s %10s\n", "solver", "cases", "geomean", "max",
          "wins", "ties", "losses", "failed", "mean gap", "wall (s)");
  for (int32_t i = 0; i < m->n_solvers && n_split > 0; i++) {
    char g[32], mx[32], gap[32];
    num(g, sizeof g, s[i].geomean_speedup, "%.4fx");
    num(mx, sizeof mx, s[i].max_speedup, "%.4fx");
    num(gap, sizeof gap, 100.0 * s[i].mean_gap_to_bound, "%.2f%%");
    fprintf(out, "%-20s %6d %9s %9s %5d %5d %6d %6d %9s %10.2f\n", s[i].solver, (int)s[i].n_cases,
            g, mx, (int)s[i].wins, (int)s[i].ties, (int)s[i].losses, (int)s[i].n_failed, gap,
            s[i].total_wall_s);
  }
  if (m->n_solvers == 0)
    fprintf(out, "(no results yet)\n");
  else if (n_split == 0)
    fprintf(out, "(no case of the %s split in this file)\n", split);
  free(s);
  mb_result_matrix_free(m);
  return true;
}
