/* mallocbench plot: the comparison figures from a results file, drawn by gnuplot. */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "commands.h"
#include "error.h"
#include "plot.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench plot FILE [--out DIR] [--format png,pdf,svg]\n"
          "                        [--map-workload NAME] [--map-solver NAME]\n\n"
          "Draws the comparison figures from a results file without rerunning anything:\n"
          "speedup per workload, speedup distribution, gap to the LP bound, wall time against\n"
          "workload size, mallocMuZero training curves (when present) and a memory map\n"
          "(heuristic vs the best solver). gnuplot must be on PATH.\n\n"
          "  --out DIR            output directory (default results/figures)\n"
          "  --format LIST        any of png, pdf, svg (default png,pdf)\n"
          "  --map-workload NAME  workload of the memory map (default: largest gain)\n"
          "  --map-solver NAME    solver drawn beside the heuristic (default: the best)\n");
}

int mb_cmd_plot(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  mb_plot_options opt = {0};
  const char *file = NULL;
  mb_error err;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--out") || !strcmp(a, "--format") || !strcmp(a, "--map-workload") ||
        !strcmp(a, "--map-solver")) {
      if (!value) {
        mb_diag(stderr, "mallocbench plot: %s needs a value", a);
        return 2;
      }
      i++;
      if (!strcmp(a, "--out")) opt.out_dir = value;
      if (!strcmp(a, "--map-workload")) opt.memory_map_workload = value;
      if (!strcmp(a, "--map-solver")) opt.memory_map_solver = value;
      if (!strcmp(a, "--format") && !mb_plot_parse_formats(value, &opt.formats, &err)) {
        mb_diag(stderr, "mallocbench plot: %s", err.message);
        return 2;
      }
    } else if (a[0] == '-') {
      return mb_unknown_option("plot", a);
    } else if (!file) {
      file = a;
    } else {
      mb_diag(stderr, "mallocbench plot: one results file only ('%s' is extra)", a);
      return 2;
    }
  }
  if (!file) {
    usage(stderr);
    return 2;
  }
  double t0 = mb_wall_seconds();
  mb_plot_outputs outputs;
  if (!mb_plot_all(file, &opt, &outputs, &err)) {
    mb_diag(stderr, "mallocbench plot: %s", err.message);
    return 2;
  }
  double wall = mb_wall_seconds() - t0;
  /* one path per line, escaped as diagnostics are: a control byte in --out cannot split a line */
  for (int32_t i = 0; i < outputs.n; i++) mb_diag(stdout, "%s", outputs.paths[i]);
  fprintf(stderr, "mallocbench plot: %d file%s in %.2f s (wall)\n", outputs.n,
          outputs.n == 1 ? "" : "s", wall);
  return 0;
}
