/* Two results files side by side (`mallocbench compare A B`), for the two questions a
 * researcher asks of a second run:
 *   - Did it reproduce the first? Every job is matched by (workload, hardware, solver, seed) and
 *     every baseline by (workload, hardware); their deterministic fields (status, validity,
 *     simulated times, fast bytes and buffers, the LP bound, effort counters, budget flags) and
 *     their stored assignments must be equal, and the stored copies of each workload must have the
 *     same SHA-256. Wall times, notes (which quote wall times) and timestamps are not compared.
 *   - If not, is B better or worse, and is that more than noise? Per solver, over the cases
 *     (workload x hardware) both files solved validly on the same workload: the geometric mean of
 *     T_A / T_B (B's speedup over A; seeds of a case averaged geometrically first) with its 95%
 *     confidence interval, and how many cases B made faster, left level or made slower, with the
 *     exact sign test (stats.h). This is how two agents, budgets or versions of a solver are
 *     compared on the same catalogue.
 * The root attributes (provenance) that differ are named, since they usually say why. */
#ifndef MB_COMPARE_H
#define MB_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "results.h"

/* What a comparison found, for the exit status and for tests. */
typedef struct mb_compare_counts {
  int64_t matched_rows; /* result rows present in both files */
  int64_t rows_only_a, rows_only_b;
  int64_t differing_rows;        /* matched rows with a deterministic field that differs */
  int64_t differing_budget_hit;  /* of those, rows stopped on their wall-clock budget in A or B */
  int64_t differing_assignments; /* matched rows (results and baselines) whose offsets differ */
  int64_t matched_baselines;
  int64_t baselines_only_a, baselines_only_b;
  int64_t differing_baselines;
  int32_t common_workloads;    /* workload copies stored in both files */
  int32_t differing_workloads; /* of those, with different SHA-256 */
  int32_t differing_attrs;     /* root attributes that differ, other than start/end times */
} mb_compare_counts;

/* Which jobs to compare (each NULL: all): those of the workloads whose name matches the PCRE2
 * pattern `workloads` (unanchored, as `run`, `list` and `summary --workloads`), of catalogue
 * split `split` ("train" or "test"; as each file records its workloads' splits), and of the
 * solvers in the comma-separated list `solvers` (baselines are kept: every solver has them). */
typedef struct mb_compare_filter {
  const char *workloads;
  const char *split;
  const char *solvers;
} mb_compare_filter;

/* Whether B reproduces A: the same jobs and baselines, every deterministic field, assignment and
 * workload copy equal (provenance may differ: another commit or machine can reproduce a run). */
bool mb_compare_identical(const mb_compare_counts *c);

/* Compares the files a and b (named name_a and name_b in the text) over the cases that pass
 * filter (NULL: all) and prints the account to out: the provenance that differs, each
 * difference (the first max_listed of them, one line each, naming the job and the fields with
 * both values), the counts, and the per-solver table of B against A. False with err set when a
 * file cannot be read, the pattern does not compile, the split is unknown, or a file records no
 * split while one is asked for, or a listed solver has no job in either file. */
bool mb_compare_print(mb_results *a, const char *name_a, mb_results *b, const char *name_b,
                      const mb_compare_filter *filter, int64_t max_listed, FILE *out,
                      mb_compare_counts *counts, mb_error *err);

#endif
