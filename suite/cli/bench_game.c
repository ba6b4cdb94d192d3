/* PLACEHOLDER: replaced by the module that implements 'bench game'. */
#include <stdio.h>

#include "commands.h"

int mb_bench_game(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench bench game: not built yet\n");
  return 2;
}
