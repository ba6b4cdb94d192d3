#include "summary.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "error.h"
#include "result_matrix.h"
#include "stats.h"

static void num(char *out, size_t n, double v, const char *fmt) {
  if (isnan(v))
    snprintf(out, n, "-");
  else
    snprintf(out, n, fmt, v);
}

/* The cases whose heuristic is already at the LP bound, where no solver can win by much. */
static void print_at_bound(FILE *out, int32_t at_bound, int32_t n_cases) {
  if (n_cases == 1) {
    fprintf(out,
            "\nIn this case the heuristic is within %g%% of the LP bound, so no solver can beat "
            "it by more than that.\n",
            100 * MB_AT_BOUND_TOL);
    return;
  }
  fprintf(out,
          "\nIn %d of these %d cases the heuristic is within %g%% of the LP bound, so no solver "
          "can beat it there by\nmore than that; ",
          (int)at_bound, (int)n_cases, 100 * MB_AT_BOUND_TOL);
  int32_t room = n_cases - at_bound;
  if (room == 0)
    fprintf(out, "no case leaves room for a win.\n");
  else if (room == 1)
    fprintf(out, "the other one leaves room for a win.\n");
  else
    fprintf(out, "the other %d leave room for a win.\n", (int)room);
}

void mb_summary_print_caveats(FILE *out, const mb_result_matrix *m, const mb_solver_summary *s) {
  if (m->n_solvers == 0) return;
  int32_t cut = 0;
  for (int32_t c = 0; c < m->n_cases; c++) cut += mb_matrix_case_bound_cut_short(&m->cases[c]);
  if (cut > 0) {
    if (m->n_cases == 1)
      fprintf(out, "\nThe LP bound of this case");
    else
      fprintf(out, "\nIn %d of these %d cases the LP bound", (int)cut, (int)m->n_cases);
    fprintf(out,
            " did not solve in its time limit\n(bound_status 'not solved'): the gap there is to "
            "a weaker bound and overstates the true gap\n('run --bound-budget SEC' gives the LP "
            "longer).\n");
  }
  int32_t no_baseline = 0;
  for (int32_t c = 0; c < m->n_cases; c++) no_baseline += m->cases[c].t_heuristic_ps <= 0;
  if (no_baseline > 0)
    fprintf(out,
            "\nIn %d of these %d cases the heuristic baseline failed (their baselines row's "
            "bound_note says why):\ntheir speedups are unknown, and no solver's row counts them.\n",
            (int)no_baseline, (int)m->n_cases);
  bool any = false;
  for (int32_t i = 0; i < m->n_solvers; i++) {
    if (s[i].n_budget_hit == 0) continue;
    int32_t rows = 0;
    for (int32_t c = 0; c < m->n_cases; c++) rows += mb_matrix_cell_at(m, c, i)->n_seeds;
    if (!any)
      fprintf(out,
              "\nSolves stopped by their wall-clock budget (budget_hit), whose results "
              "depend on the machine's speed:\n");
    /* solver names come from the results file: escaped as in messages (error.h) */
    char name[4 * MB_RES_SOLVER];
    mb_escape_text(name, sizeof name, s[i].solver);
    fprintf(out, "%s%s %d of %d", any ? "; " : "", name, (int)s[i].n_budget_hit, (int)rows);
    any = true;
  }
  if (any) fprintf(out, ".\n");
}

/* The explanation and the per-solver rows over the matrix's (already filtered) cases. */
static void print_table(FILE *out, const mb_result_matrix *m, const mb_solver_summary *s,
                        const char *split) {
  fprintf(out,
          "Times are simulated by the mallocbench cost model; speedup = T_heuristic / T_solver "
          "on the same workload\nand hardware (geometric mean over cases, each case the "
          "geometric mean over seeds); gap = (T_solver - T_bound) / T_bound.\n\n");
  fprintf(out, "%-20s %6s %9s %-16s %9s %5s %5s %6s %7s %6s %9s %10s\n", "solver", "cases",
          "geomean", "95% CI", "max", "wins", "ties", "losses", "sign p", "failed", "mean gap",
          "wall (s)");
  for (int32_t i = 0; i < m->n_solvers && m->n_cases > 0; i++) {
    char g[32], ci[64], mx[32], gap[32], p[32];
    num(g, sizeof g, s[i].geomean_speedup, "%.4fx");
    if (isnan(s[i].geomean_ci_low))
      snprintf(ci, sizeof ci, "-");
    else
      snprintf(ci, sizeof ci, "[%.4f, %.4f]", s[i].geomean_ci_low, s[i].geomean_ci_high);
    num(mx, sizeof mx, s[i].max_speedup, "%.4fx");
    num(gap, sizeof gap, 100.0 * s[i].mean_gap_to_bound, "%.2f%%");
    mb_format_p(p, sizeof p, s[i].sign_p);
    /* solver names come from the results file: escaped as in messages (error.h) */
    mb_diag(out, "%-20s %6d %9s %-16s %9s %5d %5d %6d %7s %6d %9s %10.2f", s[i].solver,
            (int)s[i].n_cases, g, ci, mx, (int)s[i].wins, (int)s[i].ties, (int)s[i].losses, p,
            (int)s[i].n_failed, gap, s[i].total_wall_s);
  }
  if (m->n_solvers > 0 && m->n_cases > 0)
    fprintf(out,
            "\n95%% CI: of the geometric mean over cases (Student t on the log speedups); sign "
            "p: two-sided exact\nsign test of wins against losses (ties dropped), the chance of "
            "counts at least this unequal if a\nsolver were as likely to lose a case as to win "
            "it.\n");
  int32_t at_bound = 0;
  for (int32_t c = 0; c < m->n_cases; c++)
    at_bound += mb_matrix_case_heuristic_at_bound(&m->cases[c]);
  if (at_bound > 0 && m->n_solvers > 0) print_at_bound(out, at_bound, m->n_cases);
  mb_summary_print_caveats(out, m, s);
  if (m->n_solvers == 0)
    fprintf(out, "(no results yet)\n");
  else if (m->n_cases == 0 && split)
    fprintf(out, "(no case of the %s split in this file)\n", split);
}

bool mb_summary_print(mb_results *r, FILE *out, mb_error *err) {
  return mb_summary_print_filtered(r, NULL, NULL, out, err);
}

bool mb_summary_print_split(mb_results *r, const char *split, FILE *out, mb_error *err) {
  return mb_summary_print_filtered(r, split, NULL, out, err);
}

/* Sets match[c] for the cases whose workload name `regex` matches, with the matcher of run and
 * list --workloads, so the three commands select the same names and word their errors alike. */
static bool match_workloads(const mb_result_matrix *m, const char *regex, bool *match,
                            mb_error *err) {
  return mb_names_select(m->n_cases > 0 ? m->cases[0].workload : NULL, sizeof *m->cases, m->n_cases,
                         regex, "--workloads", match, err);
}

/* The file's distinct workload names, comma-separated, the first few only: a pattern that
 * matches nothing is usually a misremembered name, and the error shows what there is. */
static void list_workloads(const mb_result_matrix *m, char *out, size_t n) {
  enum { SHOWN = 6 };
  int32_t distinct = 0;
  size_t used = 0;
  out[0] = '\0';
  for (int32_t c = 0; c < m->n_cases; c++) {
    bool seen = false;
    for (int32_t d = 0; d < c && !seen; d++)
      seen = !strcmp(m->cases[d].workload, m->cases[c].workload);
    if (seen) continue;
    if (distinct++ < SHOWN && used < n)
      used += (size_t)snprintf(out + used, n - used, "%s%s", distinct > 1 ? ", " : "",
                               m->cases[c].workload);
  }
  if (distinct > SHOWN && used < n) snprintf(out + used, n - used, ", ... %d in all", distinct);
}

/* Why the filters left no case, in err; false. */
static bool fail_empty(const mb_result_matrix *m, const char *path, const char *split,
                       const char *workloads, const bool *match, mb_error *err) {
  if (m->n_cases == 0)
    return mb_fail(err, "%s: --workloads '%s': the file holds no result yet, no case to match",
                   path, workloads);
  int32_t n_match = 0, n_other = 0, n_unknown = 0;
  for (int32_t c = 0; c < m->n_cases; c++) {
    if (!match[c]) continue;
    n_match++;
    if (!m->cases[c].split[0])
      n_unknown++;
    else if (split && strcmp(m->cases[c].split, split))
      n_other++;
  }
  if (n_match == 0) {
    char names[512];
    list_workloads(m, names, sizeof names);
    return mb_fail(err,
                   "%s: --workloads '%s' matches no workload name of the file's %d case(s) "
                   "(workloads: %s)",
                   path, workloads, (int)m->n_cases, names);
  }
  char unknown[64] = "";
  if (n_unknown > 0)
    snprintf(unknown, sizeof unknown, ", %d without split information", (int)n_unknown);
  return mb_fail(err,
                 "%s: --workloads '%s' matches %d case(s), none of them in the %s split (%d in the "
                 "%s split%s)",
                 path, workloads, (int)n_match, split, (int)n_other,
                 strcmp(split, "test") ? "test" : "train", unknown);
}

bool mb_summary_print_filtered(mb_results *r, const char *split, const char *workloads, FILE *out,
                               mb_error *err) {
  if (split && !mb_catalogue_split_known(split))
    return mb_fail(err, "split '%s': expected train or test", split);
  mb_result_matrix *m = mb_result_matrix_load(r, err);
  if (!m) return false;
  int32_t n_unknown = mb_result_matrix_count_split(m, "");
  if (split && m->n_cases > 0 && n_unknown == m->n_cases) {
    mb_result_matrix_free(m);
    return mb_fail(err,
                   "%s: no split information (the file was written before results recorded "
                   "each workload's catalogue split): cannot restrict the summary to the %s "
                   "split; rerun the benchmark, or use mallocbench summary without --split",
                   mb_results_path(r), split);
  }
  /* the kept cases, as a matrix of their own (a view: rows and solver names are m's), so the
   * per-solver numbers come from the one summarising function whatever the filters */
  size_t n_alloc = m->n_cases ? (size_t)m->n_cases : 1;
  bool *keep = calloc(n_alloc, sizeof *keep);
  mb_result_matrix view = *m;
  view.cases = calloc(n_alloc, sizeof *view.cases);
  view.cells = calloc(n_alloc * (m->n_solvers ? (size_t)m->n_solvers : 1), sizeof *view.cells);
  mb_solver_summary *s = calloc(m->n_solvers ? (size_t)m->n_solvers : 1, sizeof *s);
  bool ok = keep && view.cases && view.cells && s;
  if (!ok) mb_fail(err, "out of memory");
  if (ok && workloads)
    ok = match_workloads(m, workloads, keep, err);
  else
    for (int32_t c = 0; ok && c < m->n_cases; c++) keep[c] = true;
  view.n_cases = 0;
  for (int32_t c = 0; ok && c < m->n_cases; c++) {
    if (!keep[c] || (split && strcmp(m->cases[c].split, split))) continue;
    view.cases[view.n_cases] = m->cases[c];
    if (m->n_solvers > 0)
      memcpy(mb_matrix_cell_at(&view, view.n_cases, 0), mb_matrix_cell_at(m, c, 0),
             (size_t)m->n_solvers * sizeof *view.cells);
    view.n_cases++;
  }
  if (ok && workloads && view.n_cases == 0)
    ok = fail_empty(m, mb_results_path(r), split, workloads, keep, err);
  else if (ok && split && view.n_cases == 0 && m->n_cases > 0)
    ok = mb_fail(err,
                 "%s: --split %s: none of the file's %d case(s) is in the %s split (%d without "
                 "split information)",
                 mb_results_path(r), split, (int)m->n_cases, split, (int)n_unknown);
  if (ok) {
    mb_result_matrix_summarise_split(&view, NULL, s);
    int64_t planned = -1, complete = 0;
    mb_results_get_attr_int(r, "planned_jobs", &planned, NULL);
    mb_results_get_attr_int(r, "complete", &complete, NULL);
    /* the path and the pattern escaped as in messages (error.h) */
    char of_planned[64] = "";
    if (planned >= 0)
      snprintf(of_planned, sizeof of_planned, " of %" PRId64 " planned jobs", planned);
    mb_diag(out, "%s: %" PRId64 " result rows%s, %d workload x hardware case(s)%s",
            mb_results_path(r), m->n_rows, of_planned, (int)m->n_cases,
            complete ? "" : " -- INCOMPLETE run (resume it with mallocbench run --resume FILE)");
    if (split || workloads) {
      char unknown[64] = "";
      if (split && n_unknown > 0)
        snprintf(unknown, sizeof unknown, " (%d without split information)", (int)n_unknown);
      mb_diag(
          out, "%s%s%s%s%s%s: %d of %d cases%s%s", split ? split : "", split ? " split" : "",
          split && workloads ? ", " : "", workloads ? "workloads matching '" : "",
          workloads ? workloads : "", workloads ? "'" : "", (int)view.n_cases, (int)m->n_cases,
          unknown,
          split && !strcmp(split, "test") ? "; workloads mallocMuZero never saw in training" : "");
    }
    print_table(out, &view, s, split);
  }
  free(s);
  free(view.cells);
  free(view.cases);
  free(keep);
  mb_result_matrix_free(m);
  return ok;
}

bool mb_summary_print_failures(mb_results *r, const char *prefix, FILE *out, mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t n = 0;
  if (!mb_results_read_rows(r, &rows, &n, err)) return false;
  for (int64_t i = 0; i < n; i++) {
    if (!strcmp(rows[i].status, "ok")) continue;
    bool seen = false;
    for (int64_t k = 0; k < i && !seen; k++)
      seen = !strcmp(rows[k].solver, rows[i].solver) && !strcmp(rows[k].status, rows[i].status);
    if (seen) continue;
    int64_t count = 0;
    for (int64_t k = i; k < n; k++)
      count += !strcmp(rows[k].solver, rows[i].solver) && !strcmp(rows[k].status, rows[i].status);
    mb_diag(out, "%s: %s: %" PRId64 " row(s) '%s', first (%s): %s", prefix, rows[i].solver, count,
            rows[i].status, rows[i].workload, rows[i].note);
  }
  free(rows);
  return true;
}
