/* libFuzzer target: the MiniMalloc CSV importer must reject malformed rows with a
 * file:line:column message, never crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csv_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* not NUL-terminated on purpose: the importer must respect len */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  memcpy(text, data, size);
  mb_error err;
  mb_workload *w = mb_csv_import_text(text, size, "fuzz.1024.csv", &err);
  /* stats walk every time step: skip schedules longer than real ones (MiniMalloc's are 2^20) */
  if (w && w->schedule_length <= (1 << 22)) {
    mb_workload_stats st;
    mb_workload_stats_compute(w, &st);
  }
  mb_workload_free(w);
  free(text);
  return 0;
}
