/* mallocbench compare A B: whether a second results file reproduces a first, and where not,
 * whether B is faster or slower than A per solver (suite/compare.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "compare.h"
#include "error.h"
#include "results.h"

static int usage(FILE *out, int status) {
  fprintf(out,
          "usage: mallocbench compare A.h5 B.h5 [--split train|test] [--workloads REGEX]\n"
          "                           [--solvers LIST] [--list N]\n\n"
          "Compares two results files, e.g. a rerun with its original, or two agents or solver\n"
          "versions on the same catalogue. Jobs are matched by (workload, hardware, solver, seed)\n"
          "and baselines by (workload, hardware). Lists the provenance that differs, then every\n"
          "job, baseline or stored workload copy that is in one file only or differs in a\n"
          "deterministic field (status, validity, simulated times, fast bytes and buffers, the\n"
          "LP bound, effort counters, budget flags) or in its stored assignment; wall times,\n"
          "notes and timestamps are not compared. Then, per solver, B against A over the cases\n"
          "both solved validly: the geometric mean of T_A / T_B (> 1: B is faster) with its\n"
          "95%% confidence interval, and how many cases B made faster, level or slower, with\n"
          "the exact sign test.\n\n"
          "  --split train|test   only the cases whose workload is in this catalogue split\n"
          "                       (as each file records it; mallocMuZero is judged on test)\n"
          "  --workloads REGEX    only the cases whose workload name matches REGEX (PCRE2,\n"
          "                       unanchored, as run, list and summary --workloads)\n"
          "  --solvers LIST       only the jobs of these solvers (comma-separated), e.g. when\n"
          "                       B reran one solver of A's run\n"
          "  --list N             list at most N differences (default 50; all are counted)\n\n"
          "Exit status: 0 when B reproduces A (provenance may differ), 1 when they differ,\n"
          "2 when a file cannot be read.\n");
  return status;
}

int mb_cmd_compare(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) return usage(stdout, 0);
  const char *files[2] = {NULL, NULL};
  int n_files = 0;
  int64_t max_listed = 50;
  mb_compare_filter filter = {NULL, NULL, NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2)) {
      if (n_files == 2) {
        mb_diag(stderr, "mallocbench compare: two results files expected ('%s' is a third)", a);
        return 2;
      }
      files[n_files++] = a;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    if (!strcmp(o.flag, "--split")) {
      if (!mb_option_split("compare", o.flag, o.value, &filter.split)) return 2;
    } else if (!strcmp(o.flag, "--workloads")) {
      if (!mb_option_text("compare", o.flag, o.value, &filter.workloads)) return 2;
    } else if (!strcmp(o.flag, "--solvers")) {
      if (!mb_option_text("compare", o.flag, o.value, &filter.solvers)) return 2;
    } else if (!strcmp(o.flag, "--list")) {
      if (!mb_option_int("compare", o.flag, o.value, 0, INT32_MAX, &max_listed)) return 2;
    } else {
      return mb_unknown_option("compare", a);
    }
    i = o.last;
  }
  if (n_files != 2) return usage(stderr, 2);
  mb_error err = {{0}};
  mb_results *a = mb_results_open(files[0], false, &err);
  mb_results *b = a ? mb_results_open(files[1], false, &err) : NULL;
  mb_compare_counts counts;
  bool ok = a && b &&
            mb_compare_print(a, files[0], b, files[1], &filter, max_listed, stdout, &counts, &err);
  mb_results_close(a, NULL);
  mb_results_close(b, NULL);
  if (!ok) {
    mb_diag(stderr, "mallocbench compare: %s", err.message);
    return 2;
  }
  return mb_compare_identical(&counts) ? 0 : 1;
}
