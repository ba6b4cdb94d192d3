/* PLACEHOLDER: replaced by the module that implements 'import'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_import(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench import: not built yet\n");
  return 2;
}
