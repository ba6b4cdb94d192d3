/* PLACEHOLDER: replaced by the module that implements 'show'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_show(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench show: not built yet\n");
  return 2;
}
