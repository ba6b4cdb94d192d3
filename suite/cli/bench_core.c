/* PLACEHOLDER: replaced by the module that implements 'bench core'. */
#include <stdio.h>

#include "commands.h"

int mb_bench_core(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench bench core: not built yet\n");
  return 2;
}
