/* PLACEHOLDER: replaced by the module that implements 'solve'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_solve(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench solve: not built yet\n");
  return 2;
}
