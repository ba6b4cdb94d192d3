/* libFuzzer target: the model-spec parser and generator must reject garbage without crashing
 * (and without runaway allocation: specs with huge dimensions are refused by the parser). */
#include <stdint.h>
#include <stdlib.h>

#include "model_zoo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mb_error err;
  mb_workload *w = mb_model_generate_text((const char *)data, size, "fuzz.spec", &err);
  mb_workload_free(w);
  return 0;
}
