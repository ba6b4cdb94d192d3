/* mallocbench report: Markdown report and LaTeX tables from a results file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "commands.h"
#include "error.h"
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
    if (!strcmp(a, "--format") || !strcmp(a, "--md") || !strcmp(a, "--tex-dir") ||
        !strcmp(a, "--figures")) {
      if (i + 1 >= argc) {
        mb_diag(stderr, "mallocbench report: %s needs a value", a);
        return 2;
      }
      const char *v = argv[++i];
      if (!strcmp(a, "--md")) opt.markdown_path = v;
      if (!strcmp(a, "--tex-dir")) opt.tex_dir = v;
      if (!strcmp(a, "--figures")) opt.figures_dir = v;
      if (!strcmp(a, "--format") && !mb_report_parse_formats(v, &opt.formats, &err)) {
        mb_diag(stderr, "mallocbench report: %s", err.message);
        return 2;
      }
    } else if (a[0] == '-') {
      return mb_unknown_option("report", a);
    } else if (!file) {
      file = a;
    } else {
      mb_diag(stderr, "mallocbench report: one results file only ('%s' is extra)", a);
      return 2;
    }
  }
  if (!file) {
    usage(stderr);
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
