/* PLACEHOLDER: replaced by the module that implements 'add'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_add(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench add: not built yet\n");
  return 2;
}
