/* PLACEHOLDER: replaced by the module that implements 'verify'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_verify(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench verify: not built yet\n");
  return 2;
}
