/* The end-of-run summary table, printed by `mallocbench run` when it finishes and by
 * `mallocbench summary FILE [--split train|test] [--workloads REGEX]` from a stored file: per
 * solver, the geometric-mean speedup over the heuristic, wins/ties/losses against it, the mean
 * gap to the LP bound and the total wall time. The numbers come from the result matrix
 * (suite/result_matrix.h), the same view the figures and reports use, so the table and the
 * paper never disagree. The split form exists because mallocMuZero trains on the catalogue's
 * train split: its quality is read on the test split's cases alone. The workloads form exists
 * because it is judged per workload family too (the MiniMalloc sets, the AlphaTensor traces, the
 * real HLO modules), which the catalogue's names encode. */
#ifndef MB_SUMMARY_H
#define MB_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "result_matrix.h"
#include "results.h"

/* Prints the file's state (complete or how many jobs are stored), then the table. */
bool mb_summary_print(mb_results *r, FILE *out, mb_error *err);
/* The same over the cases of one catalogue split ("train" or "test"; NULL: every case, as
 * mb_summary_print), saying so in the header ("test split: 46 of 85 cases"). False with err
 * naming the file when it holds no split information (written before splits were stored). */
bool mb_summary_print_split(mb_results *r, const char *split, FILE *out, mb_error *err);
/* The same over the cases that pass both filters (each may be NULL: no filter): `split` as
 * above, and `workloads`, a PCRE2 pattern matched unanchored against each case's stored workload
 * name by the matcher of `mallocbench run/list --workloads` (mb_names_select), so the three
 * select the same names. The header says which filters applied ("test split, workloads matching
 * '^minimalloc': 6 of 46 cases"). False, printing nothing, when the pattern does not compile
 * (err: the PCRE2 message and column), matches no case's workload, or matches only cases outside
 * the split (err names the file and the filter that left nothing). */
bool mb_summary_print_filtered(mb_results *r, const char *split, const char *workloads, FILE *out,
                               mb_error *err);

/* What makes some numbers of a table over m's cases weaker than the rest, as plain text after
 * it: LP bounds cut short by their time limit (those gaps are overstated) and, per solver, solves
 * stopped by their wall-clock budget (they depend on the machine's speed). Nothing when neither
 * happened. Printed by the summary and in REPORT.md under its table; s: m's summaries. */
void mb_summary_print_caveats(FILE *out, const mb_result_matrix *m, const mb_solver_summary *s);

/* The account of a run's failed solves: one line per solver and non-ok status (invalid, error),
 * "PREFIX: SOLVER: N row(s) 'STATUS', first (WORKLOAD): NOTE" in row order, so that a failure
 * common to every solve is said once, not once per row. Nothing when every row is ok. */
bool mb_summary_print_failures(mb_results *r, const char *prefix, FILE *out, mb_error *err);

#endif
