/* PLACEHOLDER: replaced by the module that implements 'report'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_report(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench report: not built yet\n");
  return 2;
}
