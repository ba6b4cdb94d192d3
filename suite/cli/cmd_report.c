/* mallocbench report: Markdown report and LaTeX tables from a results file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "commands.h"
#include "error.h"
#include "paths.h"
#include "report.h"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: mallocbench report FILE [--format md,tex] [--md PATH] [--tex-dir DIR]\n"
      "                          [--figures DIR]\n\n"
      "Writes the Markdown report (summary per solver, AlphaTensor table, figures, per-workload\n"
      "table, provenance) and the paper's LaTeX tables from a results file, without rerunning.\n\n"
      "  --format LIST   md, tex or both (default md,tex)\n"
      "  --md PATH       Markdown report (default results/REPORT.md)\n"
      "  --tex-dir DIR   LaTeX tables (default paper/generated)\n"
      "  --figures DIR   figures to link from the report (default results/figures)\n");
}

int mb_cmd_report(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  mb_report_options opt = {0};
  const char *file = NULL;
  mb_error err;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-') {
      if (file) {
        mb_diag(stderr, "mallocbench report: one results file only ('%s' is extra)", a);
        return 2;
      }
      file = a;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *flag = o.flag, *v = o.value;
    if (!strcmp(flag, "--md")) {
      if (!mb_option_path("report", flag, v, &opt.markdown_path)) return 2;
    } else if (!strcmp(flag, "--tex-dir")) {
      if (!mb_option_path("report", flag, v, &opt.tex_dir)) return 2;
    } else if (!strcmp(flag, "--figures")) {
      if (!mb_option_path("report", flag, v, &opt.figures_dir)) return 2;
    } else if (!strcmp(flag, "--format")) {
      if (!mb_option_text("report", flag, v, &v)) return 2;
      if (!mb_report_parse_formats(v, &opt.formats, &err)) {
        mb_diag(stderr, "mallocbench report: %s", err.message);
        return 2;
      }
    } else {
      return mb_unknown_option("report", a);
    }
    i = o.last;
  }
  if (!file) {
    usage(stderr);
    return 2;
  }
  if (!mb_path_check_distinct(opt.markdown_path, file, "the results FILE", &err)) {
    mb_diag(stderr, "mallocbench report: --md %s", err.message);
    return 2;
  }
  char *command = mb_command_line(argc, argv); /* NULL (out of memory): the default line */
  opt.command = command;
  double t0 = mb_wall_seconds();
  mb_report_outputs *outputs = malloc(sizeof *outputs); /* 64 KiB: not on the stack */
  bool ok = outputs ? mb_report_write(file, &opt, outputs, &err) : mb_fail(&err, "out of memory");
  free(command);
  if (!ok) {
    free(outputs);
    mb_diag(stderr, "mallocbench report: %s", err.message);
    return 2;
  }
  double wall = mb_wall_seconds() - t0;
  /* one path per line, escaped as diagnostics are (as plot lists its figures) */
  for (int32_t i = 0; i < outputs->n; i++) mb_diag(stdout, "%s", outputs->paths[i]);
  fprintf(stderr, "mallocbench report: %d %s in %.2f s (wall)\n", outputs->n,
          outputs->n == 1 ? "file" : "files", wall);
  free(outputs);
  return 0;
}
