/* PLACEHOLDER: replaced by the module that implements 'bench solvers'. */
#include <stdio.h>

#include "commands.h"

int mb_bench_solvers(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench bench solvers: not built yet\n");
  return 2;
}
