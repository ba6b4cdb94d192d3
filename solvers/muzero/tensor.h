/* Dense float32 matrices for mallocMuZero's small neural-network library.
 *
 * A tensor is a row-major rows x cols matrix; rows is the batch, cols the features. Storage
 * has a capacity fixed when the tensor is created, and reshaping within it never allocates:
 * the networks size their activation caches once for the largest batch and then run any
 * batch up to it without touching the allocator (search calls the networks at batch 1
 * thousands of times per move).
 *
 * Matrix products go through CBLAS (OpenBLAS's cblas_sgemm, and cblas_sgemv for one row where
 * a tape asks for it), never hand-written loops.
 *
 * Determinism. Everything in this library is single-threaded C with a fixed summation order,
 * except sgemm, whose blocking and kernel come from OpenBLAS. The guarantee is therefore:
 * the same inputs (and seed), the same OpenBLAS build on the same CPU kernel
 * (mb_blas_describe) and the same BLAS thread count give bit-identical results. Different
 * thread counts do not: on this machine (OpenBLAS 0.3.21, Cooperlake kernel) a 600-256-256
 * residual MLP at batch 512 gives outputs and gradients that differ in the last bits between
 * 1 and 2 threads, because sgemm then partitions and blocks the products differently. The library
 * never changes the thread count behind the caller's back; a program that wants the
 * guarantee across runs calls mb_blas_set_threads() once at start (the mallocbench CLI
 * uses 1 thread for the networks: its batches are small and its 2 cores run other work).
 * Kernels matter more than bits: training is chaotic, and the same 42,000-update command
 * trained a different agent on the Cooperlake kernel than on Haswell. OpenBLAS reads its kernel
 * (OPENBLAS_CORETYPE) when the library loads, before main, so the program cannot choose it;
 * scripts/pinned-blas.sh sets it for the scripts that train. The networks' batch-1 forward may
 * also go through sgemv (nn.h, mb_nn_tape_use_gemv: the solvers play that way, training never
 * does), which is deterministic in the same sense and differs from sgemm's in the last bits. */
#ifndef MB_TENSOR_H
#define MB_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

typedef struct mb_tensor {
  int32_t rows;     /* batch */
  int32_t cols;     /* features */
  int64_t capacity; /* floats allocated; rows * cols <= capacity */
  float *data;      /* row-major; element (r, c) at data[r * cols + c] */
} mb_tensor;

/* Allocates a zeroed rows x cols tensor (capacity rows * cols). rows, cols >= 1. */
bool mb_tensor_init(mb_tensor *t, int32_t rows, int32_t cols, mb_error *err);
/* Frees storage; t becomes empty (safe on a zero-initialised or already freed tensor). */
void mb_tensor_free(mb_tensor *t);
/* Changes the shape within the capacity (contents unspecified); false when it does not fit. */
bool mb_tensor_reshape(mb_tensor *t, int32_t rows, int32_t cols, mb_error *err);
static inline int64_t mb_tensor_size(const mb_tensor *t) { return (int64_t)t->rows * t->cols; }
static inline float *mb_tensor_row(const mb_tensor *t, int32_t r) {
  return t->data + (int64_t)r * t->cols;
}

void mb_tensor_zero(mb_tensor *t);
void mb_tensor_fill(mb_tensor *t, float v);
/* dst takes src's shape (within dst's capacity) and contents. */
bool mb_tensor_copy(mb_tensor *dst, const mb_tensor *src, mb_error *err);
/* t *= s elementwise. */
void mb_tensor_scale(mb_tensor *t, float s);
/* y += a * x; shapes must match (false otherwise). */
bool mb_tensor_axpy(mb_tensor *y, float a, const mb_tensor *x, mb_error *err);
/* Sum of squares in double (for global gradient norms). */
double mb_tensor_sumsq(const mb_tensor *t);
/* True when both have the same shape and bit-identical contents. */
bool mb_tensor_equal(const mb_tensor *a, const mb_tensor *b);

/* Column blocks, for concatenating a latent with an action encoding and splitting the
 * gradient back: dst[:, col0 : col0 + src.cols] = src (rows must match). */
bool mb_tensor_set_cols(mb_tensor *dst, int32_t col0, const mb_tensor *src, mb_error *err);
/* dst (reshaped to src.rows x ncols) = src[:, col0 : col0 + ncols]. */
bool mb_tensor_get_cols(mb_tensor *dst, const mb_tensor *src, int32_t col0, int32_t ncols,
                        mb_error *err);
/* dst[r, col0 : col0 + n] = one_hot(action[r], n) for every row r; action[r] in [0, n). */
bool mb_tensor_set_onehot(mb_tensor *dst, int32_t col0, int32_t n, const int32_t *action,
                          mb_error *err);

/* C = alpha * op(A) * op(B) + beta * C through cblas_sgemm; op transposes when the flag is
 * set. Shapes are checked against C (false with a message naming the mismatch). */
bool mb_gemm(bool trans_a, bool trans_b, float alpha, const mb_tensor *a, const mb_tensor *b,
             float beta, mb_tensor *c, mb_error *err);

/* OpenBLAS's thread count (process-wide: it is the library's state, not ours). */
void mb_blas_set_threads(int n);
int mb_blas_threads(void);
/* "OpenBLAS <config>, core <name>" into out (size n): the kernel determinism depends on. */
void mb_blas_describe(char *out, int n);

#endif
