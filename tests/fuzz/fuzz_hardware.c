/* libFuzzer target: the hardware-profile parser must reject garbage without crashing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hardware.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  mb_hardware hw;
  mb_error err;
  mb_hardware_parse(text, "fuzz.txt", &hw, &err);
  free(text);
  return 0;
}
