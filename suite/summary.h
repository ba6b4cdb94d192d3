/* The end-of-run summary table, printed by `mallocbench run` when it finishes and by
 * `mallocbench summary FILE` from a stored file: per solver, the geometric-mean speedup over
 * the heuristic, wins/ties/losses against it, the mean gap to the LP bound and the total wall
 * time. The numbers come from the result matrix (suite/result_matrix.h), the same view the
 * figures and reports use, so the table and the paper never disagree. */
#ifndef MB_SUMMARY_H
#define MB_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "results.h"

/* Prints the file's state (complete or how many jobs are stored), then the table. */
bool mb_summary_print(mb_results *r, FILE *out, mb_error *err);

#endif
