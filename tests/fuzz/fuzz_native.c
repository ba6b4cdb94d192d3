/* libFuzzer target for the native workload reader. Any input must either be rejected with a
 * message or read into a workload that survives the round trip: write -> read gives an equal
 * workload and the same canonical text. Seed corpus: datasets/samples/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mb_error err;
  mb_error_clear(&err);
  mb_workload *w = mb_workload_read_text((const char *)data, size, "fuzz.wl", &err);
  if (!w) {
    if (!err.message[0] || strncmp(err.message, "fuzz.wl", 7)) abort(); /* must say where */
    return 0;
  }
  size_t len;
  char *text = mb_workload_to_text(w, &len);
  if (!text) abort();
  mb_workload *back = mb_workload_read_text(text, len, "canonical.wl", &err);
  if (!back || !mb_workload_equal(w, back, NULL, 0)) abort();
  size_t len2;
  char *text2 = mb_workload_to_text(back, &len2);
  if (!text2 || len2 != len || memcmp(text, text2, len)) abort();
  free(text);
  free(text2);
  mb_workload_free(back);
  mb_workload_free(w);
  return 0;
}
