/* libFuzzer target: the option-value readers never crash, and what they accept is in range and
 * reads back the same (an integer prints as the text it came from, up to a sign or zeros). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "option_values.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  int64_t i = 0;
  if (mb_parse_int(text, -1000, 1000, &i)) {
    if (i < -1000 || i > 1000) abort();
    int64_t again = 0;
    char printed[32];
    snprintf(printed, sizeof printed, "%" PRId64, i);
    if (!mb_parse_int(printed, -1000, 1000, &again) || again != i) abort();
  }
  uint64_t u = 0;
  if (mb_parse_u64(text, &u) && (text[0] < '0' || text[0] > '9')) abort();
  double d = 0;
  if (mb_parse_number(text, 0, true, 1e6, &d) && !(d > 0 && d <= 1e6)) abort();
  int64_t bytes = 0;
  if (mb_parse_bytes(text, 1, (int64_t)1 << 40, &bytes) && (bytes < 1 || bytes > (int64_t)1 << 40))
    abort();
  free(text);
  return 0;
}
