/* mallocbench summary FILE [--split train|test] [--workloads REGEX]: the end-of-run summary
 * table of a stored results file, over every case, one catalogue split's cases, the cases whose
 * workload name matches a pattern (one workload family), or both. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "error.h"
#include "results.h"
#include "summary.h"

static int usage(FILE *out, int status) {
  fprintf(out,
          "usage: mallocbench summary FILE [--split train|test] [--workloads REGEX]\n\n"
          "Prints the summary table of a results file, as `mallocbench run` does at the end:\n"
          "per solver, the geometric-mean speedup over the heuristic with its 95%% confidence\n"
          "interval over the cases, wins/ties/losses with the sign test of wins against\n"
          "losses, the mean gap to the LP bound and the total wall time. Below the table it\n"
          "names what is weaker than the rest: cases whose LP bound did not solve in its time\n"
          "limit (their gaps are overstated) and solves stopped by their wall-clock budget\n"
          "(budget_hit). A file that a run is still writing is locked by HDF5 until the run\n"
          "ends: summarise a copy of it.\n\n"
          "  --split train|test   only the cases whose workload is in this catalogue split\n"
          "                       (mallocMuZero trains on train: judge it on test). Needs a\n"
          "                       file that records each workload's split.\n"
          "  --workloads REGEX    only the cases whose workload name matches REGEX (PCRE2,\n"
          "                       unanchored, as run and list --workloads), e.g. '^minimalloc'\n"
          "                       or '^(at|strassen2|standard)_' for one workload family.\n\n"
          "Both filters may be given: a case must pass both. The header says which applied and\n"
          "how many cases are left. A REGEX that does not compile, or filters that leave no\n"
          "case, are errors (exit 2).\n");
  return status;
}

int mb_cmd_summary(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) return usage(stdout, 0);
  const char *file = NULL, *split = NULL, *workloads = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2)) {
      if (file) {
        mb_diag(stderr, "mallocbench summary: one results file expected, got '%s' and '%s'", file,
                a);
        return 2;
      }
      file = a;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    if (!strcmp(o.flag, "--split")) {
      if (!mb_option_split("summary", o.flag, o.value, &split)) return 2;
    } else if (!strcmp(o.flag, "--workloads")) {
      if (!mb_option_text("summary", o.flag, o.value, &workloads)) return 2;
    } else {
      return mb_unknown_option("summary", a);
    }
    i = o.last;
  }
  if (!file) return usage(stderr, 2);
  mb_error err = {{0}};
  mb_results *r = mb_results_open(file, false, &err);
  if (!r || !mb_summary_print_filtered(r, split, workloads, stdout, &err)) {
    mb_diag(stderr, "mallocbench summary: %s", err.message);
    mb_results_close(r, NULL);
    return 2;
  }
  mb_results_close(r, NULL);
  return 0;
}
