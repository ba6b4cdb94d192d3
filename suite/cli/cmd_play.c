/* PLACEHOLDER: replaced by the module that implements 'play'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_play(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench play: not built yet\n");
  return 2;
}
