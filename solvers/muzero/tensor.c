#include "tensor.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool mb_tensor_init(mb_tensor *t, int32_t rows, int32_t cols, mb_error *err) {
  memset(t, 0, sizeof *t);
  if (rows < 1 || cols < 1)
    return mb_fail(err, "tensor: shape %dx%d: both dimensions must be >= 1", rows, cols);
  int64_t n = (int64_t)rows * cols;
  if (n > ((int64_t)1 << 40) / (int64_t)sizeof(float))
    return mb_fail(err, "tensor: shape %dx%d: too large", rows, cols);
  t->data = calloc((size_t)n, sizeof(float));
  if (!t->data) return mb_fail(err, "tensor: shape %dx%d: out of memory", rows, cols);
  t->rows = rows;
  t->cols = cols;
  t->capacity = n;
  return true;
}

void mb_tensor_free(mb_tensor *t) {
  free(t->data);
  memset(t, 0, sizeof *t);
}

bool mb_tensor_reshape(mb_tensor *t, int32_t rows, int32_t cols, mb_error *err) {
  if (rows < 1 || cols < 1 || (int64_t)rows * cols > t->capacity)
    return mb_fail(err, "tensor: shape %dx%d does not fit capacity %lld", rows, cols,
                   (long long)t->capacity);
  t->rows = rows;
  t->cols = cols;
  return true;
}

void mb_tensor_zero(mb_tensor *t) {
  if (t->data) memset(t->data, 0, (size_t)mb_tensor_size(t) * sizeof(float));
}

void mb_tensor_fill(mb_tensor *t, float v) {
  int64_t n = mb_tensor_size(t);
  for (int64_t i = 0; i < n; i++) t->data[i] = v;
}

bool mb_tensor_copy(mb_tensor *dst, const mb_tensor *src, mb_error *err) {
  if (dst == src) return true;
  if (!mb_tensor_reshape(dst, src->rows, src->cols, err)) return mb_fail_prefix(err, "tensor copy");
  memcpy(dst->data, src->data, (size_t)mb_tensor_size(src) * sizeof(float));
  return true;
}

void mb_tensor_scale(mb_tensor *t, float s) {
  int64_t n = mb_tensor_size(t);
  for (int64_t i = 0; i < n; i++) t->data[i] *= s;
}

bool mb_tensor_axpy(mb_tensor *y, float a, const mb_tensor *x, mb_error *err) {
  if (y->rows != x->rows || y->cols != x->cols)
    return mb_fail(err, "tensor axpy: shape %dx%d += %dx%d", y->rows, y->cols, x->rows, x->cols);
  int64_t n = mb_tensor_size(y);
  for (int64_t i = 0; i < n; i++) y->data[i] += a * x->data[i];
  return true;
}

double mb_tensor_sumsq(const mb_tensor *t) {
  double s = 0;
  int64_t n = mb_tensor_size(t);
  for (int64_t i = 0; i < n; i++) s += (double)t->data[i] * t->data[i];
  return s;
}

bool mb_tensor_equal(const mb_tensor *a, const mb_tensor *b) {
  return a->rows == b->rows && a->cols == b->cols &&
         !memcmp(a->data, b->data, (size_t)mb_tensor_size(a) * sizeof(float));
}

bool mb_tensor_set_cols(mb_tensor *dst, int32_t col0, const mb_tensor *src, mb_error *err) {
  if (src->rows != dst->rows || col0 < 0 || col0 > dst->cols - src->cols)
    return mb_fail(err, "tensor set_cols: %dx%d at column %d of %dx%d", src->rows, src->cols, col0,
                   dst->rows, dst->cols);
  for (int32_t r = 0; r < dst->rows; r++)
    memcpy(mb_tensor_row(dst, r) + col0, mb_tensor_row(src, r), (size_t)src->cols * sizeof(float));
  return true;
}

bool mb_tensor_get_cols(mb_tensor *dst, const mb_tensor *src, int32_t col0, int32_t ncols,
                        mb_error *err) {
  if (ncols < 1 || col0 < 0 || col0 > src->cols - ncols)
    return mb_fail(err, "tensor get_cols: columns [%d, %d) of %dx%d", col0, col0 + ncols, src->rows,
                   src->cols);
  if (!mb_tensor_reshape(dst, src->rows, ncols, err)) return mb_fail_prefix(err, "get_cols");
  for (int32_t r = 0; r < src->rows; r++)
    memcpy(mb_tensor_row(dst, r), mb_tensor_row(src, r) + col0, (size_t)ncols * sizeof(float));
  return true;
}

bool mb_tensor_set_onehot(mb_tensor *dst, int32_t col0, int32_t n, const int32_t *action,
                          mb_error *err) {
  if (n < 1 || col0 < 0 || col0 > dst->cols - n)
    return mb_fail(err, "tensor set_onehot: columns [%d, %d) of %dx%d", col0, col0 + n, dst->rows,
                   dst->cols);
  for (int32_t r = 0; r < dst->rows; r++)
    if (action[r] < 0 || action[r] >= n)
      return mb_fail(err, "tensor set_onehot: row %d: action %d outside [0, %d)", r, action[r], n);
  for (int32_t r = 0; r < dst->rows; r++) {
    float *p = mb_tensor_row(dst, r) + col0;
    memset(p, 0, (size_t)n * sizeof(float));
    p[action[r]] = 1.0f;
  }
  return true;
}

bool mb_gemm(bool trans_a, bool trans_b, float alpha, const mb_tensor *a, const mb_tensor *b,
             float beta, mb_tensor *c, mb_error *err) {
  int32_t m = trans_a ? a->cols : a->rows, ka = trans_a ? a->rows : a->cols;
  int32_t kb = trans_b ? b->cols : b->rows, n = trans_b ? b->rows : b->cols;
  if (ka != kb || c->rows != m || c->cols != n)
    return mb_fail(err, "gemm: op(A) %dx%d times op(B) %dx%d into C %dx%d", m, ka, kb, n, c->rows,
                   c->cols);
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, ka, alpha, a->data, a->cols, b->data,
              b->cols, beta, c->data, c->cols);
  return true;
}

void mb_blas_set_threads(int n) { openblas_set_num_threads(n < 1 ? 1 : n); }

int mb_blas_threads(void) { return openblas_get_num_threads(); }

void mb_blas_describe(char *out, int n) {
  const char *cfg = openblas_get_config(), *core = openblas_get_corename();
  /* the config string starts with "OpenBLAS <version>" */
  snprintf(out, (size_t)n, "%s, core %s", cfg ? cfg : "OpenBLAS ?", core ? core : "?");
}
