/* libFuzzer target: the assignment CSV reader must reject garbage without crashing, for a
 * small fixed workload (names x, y, z). */
#include <stdint.h>

#include "assignment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mb_workload_builder *b = mb_builder_new("fuzz", "fuzz");
  mb_builder_add_op(b, "op", "add", 0);
  mb_builder_add_buffer(b, "x", 16, 0, 0, false);
  mb_builder_add_buffer(b, "y", 16, 0, 0, false);
  mb_builder_add_buffer(b, "z", 16, 0, 0, false);
  mb_workload *w = mb_builder_finish(b, NULL);
  if (!w) return 0;
  mb_error err;
  mb_assignment_free(mb_assignment_parse_csv((const char *)data, size, "fuzz.csv", w, &err));
  mb_workload_free(w);
  return 0;
}
