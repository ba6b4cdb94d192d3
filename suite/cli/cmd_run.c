/* PLACEHOLDER: replaced by the module that implements 'run'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_run(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench run: not built yet\n");
  return 2;
}
