/* Model zoo: generates workloads of ML models from small spec files (datasets/models/NAME.spec):
 * a library of layers, each emitting forward ops and, for training, backward ops and an Adam
 * update, scheduled as a compiler would (forward, loss, backward in reverse, updates). */
#ifndef MB_MODEL_ZOO_H
#define MB_MODEL_ZOO_H

#include <stddef.h>

#include "error.h"
#include "workload.h"

/* Bumped whenever generated workloads change: part of the cache key. */
#define MB_MODEL_ZOO_VERSION 1

/* The source text of a workload generated from the spec file at spec_path, into out[n]:
 * "model zoo vN: PATH" (the catalogue writes it again with the path as the catalogue names it). */
void mb_model_source(char *out, size_t n, const char *spec_path);

mb_workload *mb_model_generate_text(const char *text, size_t len, const char *path, mb_error *err);
mb_workload *mb_model_generate_file(const char *spec_path, mb_error *err);

#endif
