/* libFuzzer target: the HLO text importer (parser and workload construction) must reject
 * malformed text with a message, never crash, leak or run in more than linear time. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mb_hlo_options opt;
  mb_hlo_options_default(&opt);
  /* the first byte picks the options so that every rule path is explored */
  if (size > 0) {
    opt.fusion = data[0] & 1;
    opt.pin_parameters = data[0] & 2;
    opt.pin_outputs = data[0] & 4;
  }
  /* not NUL-terminated on purpose: the importer must respect len */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  memcpy(text, data, size);
  mb_hlo_report rep;
  mb_error err;
  mb_workload *w = mb_hlo_import_text(text, size, "fuzz.hlo", &opt, &rep, &err);
  if (w) {
    mb_workload_stats st;
    mb_workload_stats_compute(w, &st);
  }
  mb_workload_free(w);
  free(text);
  return 0;
}
