/* PLACEHOLDER: replaced by the module that implements 'summary'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_summary(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench summary: not built yet\n");
  return 2;
}
