/* mallocbench summary FILE: the end-of-run summary table of a stored results file. */
#include <stdio.h>

#include "commands.h"
#include "results.h"
#include "summary.h"

int mb_cmd_summary(int argc, char **argv) {
  if (mb_wants_help(argc, argv) || argc != 2) {
    FILE *out = argc == 2 ? stdout : stderr;
    fprintf(out,
            "usage: mallocbench summary FILE\n\n"
            "Prints the summary table of a results file, as `mallocbench run` does at the end:\n"
            "per solver, the geometric-mean speedup over the heuristic, wins/ties/losses, the\n"
            "mean gap to the LP bound and the total wall time.\n");
    return argc == 2 ? 0 : 2;
  }
  mb_error err = {{0}};
  mb_results *r = mb_results_open(argv[1], false, &err);
  if (!r || !mb_summary_print(r, stdout, &err)) {
    fprintf(stderr, "mallocbench summary: %s\n", err.message);
    mb_results_close(r, NULL);
    return 2;
  }
  mb_results_close(r, NULL);
  return 0;
}
