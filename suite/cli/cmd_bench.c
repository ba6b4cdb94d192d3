#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "error.h"

static const struct {
  const char *name;
  const char *summary;
  mb_command_fn run;
} TARGETS[] = {
    {"core", "parse, cost-model and validator time per buffer, 10^3..10^6 buffers", mb_bench_core},
    {"solvers", "heuristic, greedy and bound time on random workloads and the catalogue",
     mb_bench_solvers},
    {"nn", "MLP forward/backward GFLOP/s next to CBLAS sgemm", mb_bench_nn},
    {"game", "mallocGame steps and snapshot/restore per second", mb_bench_game},
    {"muzero", "mallocMuZero simulations and training steps per second", mb_bench_muzero},
};

int mb_cmd_bench(int argc, char **argv) {
  int n = (int)(sizeof TARGETS / sizeof TARGETS[0]);
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    FILE *out = argc < 2 ? stderr : stdout;
    fprintf(out,
            "usage: mallocbench bench TARGET [OPTIONS]\n\n"
            "Measures in one run and prints ratios side by side (the machine is noisy).\n"
            "Targets:\n");
    for (int i = 0; i < n; i++) fprintf(out, "  %-8s %s\n", TARGETS[i].name, TARGETS[i].summary);
    return argc < 2 ? 2 : 0;
  }
  for (int i = 0; i < n; i++)
    if (!strcmp(argv[1], TARGETS[i].name)) return TARGETS[i].run(argc - 1, argv + 1);
  mb_diag(stderr, "mallocbench bench: unknown target '%s'", argv[1]);
  return 2;
}
