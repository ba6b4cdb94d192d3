/* PLACEHOLDER: replaced by the module that implements 'generate'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_generate(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench generate: not built yet\n");
  return 2;
}
