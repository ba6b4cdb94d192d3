/* PLACEHOLDER: replaced by the module that implements 'export'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_export(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench export: not built yet\n");
  return 2;
}
