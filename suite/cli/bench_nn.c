/* PLACEHOLDER: replaced by the module that implements 'bench nn'. */
#include <stdio.h>

#include "commands.h"

int mb_bench_nn(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench bench nn: not built yet\n");
  return 2;
}
