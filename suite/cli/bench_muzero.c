/* PLACEHOLDER: replaced by the module that implements 'bench muzero'. */
#include <stdio.h>

#include "commands.h"

int mb_bench_muzero(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench bench muzero: not built yet\n");
  return 2;
}
