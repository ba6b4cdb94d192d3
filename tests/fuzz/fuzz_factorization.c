/* libFuzzer target: the AlphaTensor factorization parser and the exactness check must reject
 * garbage without crashing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alphatensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  mb_factorization f;
  mb_error err;
  if (mb_factorization_parse(text, "fuzz.txt", &f, &err)) {
    mb_factorization_check(&f, &err);
    mb_factorization_free(&f);
  }
  free(text);
  return 0;
}
