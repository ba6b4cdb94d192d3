/* PLACEHOLDER: replaced by the module that implements 'train'. */
#include <stdio.h>

#include "commands.h"

int mb_cmd_train(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "mallocbench train: not built yet\n");
  return 2;
}
