/* PLACEHOLDER: replaced by the module that implements 'pack'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_pack(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench pack: not built yet\n");
  return 2;
}
