/* AlphaTensor matrix-multiplication traces: the 4x4 block algorithm of a rank-R factorization
 * (U, V, W; format in datasets/CATALOGUE.md) on N x N matrices, blocks of N/4. */
#ifndef MB_ALPHATENSOR_H
#define MB_ALPHATENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "workload.h"

#define MB_ALPHATENSOR_VERSION 1

typedef struct mb_factorization {
  int32_t rank; /* number of rank-one terms */
  int32_t *u;   /* 16 x rank, row-major: u[s * rank + r] */
  int32_t *v;
  int32_t *w;
} mb_factorization;

void mb_factorization_free(mb_factorization *f);
bool mb_factorization_load(const char *path, mb_factorization *out, mb_error *err);
bool mb_factorization_parse(const char *text, const char *path, mb_factorization *out,
                            mb_error *err);
/* Built in: "standard" (rank 64) and "strassen_squared" (rank 49, Kronecker product of
 * Strassen's 2x2 rank-7 algorithm with itself). */
bool mb_factorization_builtin(const char *name, mb_factorization *out, mb_error *err);
/* True when the factors decompose the 4x4x4 matrix-multiplication tensor exactly. */
bool mb_factorization_check(const mb_factorization *f, mb_error *err);
/* dtype: "bf16", "f16", "f32". */
mb_workload *mb_alphatensor_trace(const mb_factorization *f, const char *name, int64_t n,
                                  const char *dtype, mb_error *err);

#endif
