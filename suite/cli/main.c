/* mallocbench: one program, git-style subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "error.h"
#include "isolated.h"
#include "results.h"
#include "tensor.h"
#include "version.h"

static const mb_command COMMANDS[] = {
    {"show", "print a workload's statistics, or describe an agent checkpoint", mb_cmd_show},
    {"check", "validate an assignment and print its simulated time", mb_cmd_check},
    {"import", "import an HLO text dump or a buffer CSV into the native format", mb_cmd_import},
    {"generate", "generate an AlphaTensor trace, a model-zoo workload or a packing instance",
     mb_cmd_generate},
    {"list", "list the catalogue with each workload's statistics", mb_cmd_list},
    {"add", "validate and add a workload to the catalogue", mb_cmd_add},
    {"solve", "solve one workload with one solver", mb_cmd_solve},
    {"pack", "fit every buffer of a CSV within a capacity (allocation problem)", mb_cmd_pack},
    {"run", "run the benchmark: workloads x solvers x seeds x hardware", mb_cmd_run},
    {"verify", "re-validate and recompute every result in a results file", mb_cmd_verify},
    {"export", "export a results file to CSV", mb_cmd_export},
    {"summary", "print the summary table of a results file", mb_cmd_summary},
    {"compare", "compare two results files: reproduced or not, and B against A", mb_cmd_compare},
    {"plot", "draw the comparison figures from a results file (gnuplot)", mb_cmd_plot},
    {"report", "write the Markdown report and LaTeX tables from a results file", mb_cmd_report},
    {"play", "play mallocGame episodes with a simple policy", mb_cmd_play},
    {"train", "train a mallocMuZero agent", mb_cmd_train},
    {"bench", "performance benchmarks (core, solvers, nn, game, muzero)", mb_cmd_bench},
};
static const int N_COMMANDS = (int)(sizeof COMMANDS / sizeof COMMANDS[0]);

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench [--version] [--help] COMMAND [ARGS]\n\n"
          "A benchmark suite for the memory mapping problem of ML compilers.\n"
          "All times are simulated by mallocbench's roofline cost model unless marked wall.\n\n"
          "Commands:\n");
  for (int i = 0; i < N_COMMANDS; i++)
    fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
  fprintf(
      out,
      "\nRun 'mallocbench COMMAND --help' for a command's options.\n"
      "External data is found through --data DIR or MALLOCBENCH_DATA (default ../shared/data).\n");
}

/* The commands that read results files (and agent checkpoints), and nothing else of HDF5. */
static bool reads_results(const char *command) {
  static const char *const readers[] = {"summary", "compare", "verify", "export",
                                        "report",  "plot",    "show"};
  for (size_t i = 0; i < sizeof readers / sizeof *readers; i++)
    if (!strcmp(command, readers[i])) return true;
  return false;
}

/* Runs a command that reads results files. When one of its arguments is an HDF5 file that no
 * seal vouches for, libhdf5 parses it unchecked, and damaged metadata can crash the library;
 * mb_results_open reads such a file first in a child, which catches most crashes but not those
 * that depend on what the process read before. So the command itself then runs in a child, and
 * a crash ends with an error naming the file (exit 2), not a core dump. */
static int run_reader(const mb_command *c, int argc, char **argv) {
  const char *unchecked = NULL;
  for (int i = 1; i < argc && !unchecked; i++)
    if (argv[i][0] != '-' && mb_results_unchecked(argv[i])) unchecked = argv[i];
  if (!unchecked) return c->run(argc, argv);
  mb_error err = {{0}};
  int status = mb_supervise(&err);
  if (status == MB_SUPERVISED_CHILD) return c->run(argc, argv);
  if (status >= 0) return status;
  mb_results_fail_crashed(&err, unchecked);
  mb_diag(stderr, "mallocbench %s: %s", c->name, err.message);
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    mb_print_version(stdout);
    return 0;
  }
  /* One BLAS thread for every command (bench nn sets its own): mallocMuZero's results must not
   * depend on the machine's core count (OpenBLAS's products differ in the last bits between
   * thread counts, which can flip a search's choice), its batches are small, and `run --jobs`
   * already keeps the cores busy; OpenBLAS's own threads only spin against the workers. */
  mb_blas_set_threads(1);
  for (int i = 0; i < N_COMMANDS; i++)
    if (!strcmp(argv[1], COMMANDS[i].name))
      return reads_results(COMMANDS[i].name) ? run_reader(&COMMANDS[i], argc - 1, argv + 1)
                                             : COMMANDS[i].run(argc - 1, argv + 1);
  mb_diag(stderr, "mallocbench: '%s' is not a command; see 'mallocbench --help'", argv[1]);
  return 2;
}

int mb_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
  return 0;
}

char *mb_command_line(int argc, char **argv) {
  /* worst case per argument: a space, two quotes and 4 bytes ('\'') per character */
  size_t n = sizeof "mallocbench";
  for (int i = 0; i < argc; i++) n += 4 * strlen(argv[i]) + 3;
  char *s = malloc(n);
  if (!s) return NULL;
  strcpy(s, "mallocbench");
  for (int i = 0; i < argc; i++) {
    strcat(s, " ");
    bool quote = argv[i][0] == '\0' || strpbrk(argv[i], " \t'\"$\\|&;()<>*?[]{}") != NULL;
    if (!quote) {
      strcat(s, argv[i]);
      continue;
    }
    char *p = s + strlen(s);
    *p++ = '\'';
    for (const char *q = argv[i]; *q; q++) {
      if (*q == '\'') {
        memcpy(p, "'\\''", 4);
        p += 4;
      } else {
        *p++ = *q;
      }
    }
    *p++ = '\'';
    *p = '\0';
  }
  return s;
}
