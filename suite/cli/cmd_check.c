/* PLACEHOLDER: replaced by the module that implements 'check'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_check(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench check: not built yet\n");
  return 2;
}
