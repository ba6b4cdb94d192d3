/* PLACEHOLDER: replaced by the module that implements 'list'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_list(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench list: not built yet\n");
  return 2;
}
