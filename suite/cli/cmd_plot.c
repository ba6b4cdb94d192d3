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
    if (a[0] != '-') {
      if (file) {
        mb_diag(stderr, "mallocbench plot: one results file only ('%s' is extra)", a);
        return 2;
      }
      file = a;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *flag = o.flag, *v = o.value;
    if (!strcmp(flag, "--out")) {
      if (!mb_option_path("plot", flag, v, &opt.out_dir)) return 2;
    } else if (!strcmp(flag, "--map-workload")) {
      if (!mb_option_text("plot", flag, v, &opt.memory_map_workload)) return 2;
    } else if (!strcmp(flag, "--map-solver")) {
      if (!mb_option_text("plot", flag, v, &opt.memory_map_solver)) return 2;
    } else if (!strcmp(flag, "--format")) {
      if (!mb_option_text("plot", flag, v, &v)) return 2;
      if (!mb_plot_parse_formats(v, &opt.formats, &err)) {
        mb_diag(stderr, "mallocbench plot: %s", err.message);
        return 2;
      }
    } else {
      return mb_unknown_option("plot", a);
    }
    i = o.last;
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
