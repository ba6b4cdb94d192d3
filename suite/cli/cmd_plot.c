/* PLACEHOLDER: replaced by the module that implements 'plot'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_plot(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench plot: not built yet\n");
  return 2;
}
