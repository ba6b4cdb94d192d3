/* libFuzzer target: the catalogue parser must reject garbage without crashing. */
#include <stdint.h>

#include "catalogue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mb_error err;
  mb_catalogue *c = mb_catalogue_parse((const char *)data, size, "fuzz.txt", &err);
  mb_catalogue_free(c);
  return 0;
}
