/* AlphaTensor factorizations and block-algorithm traces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alphatensor.h"
#include "paths.h"
#include "support.h"

static bool load_data(const char *rel, mb_factorization *f) {
  char path[4096];
  mb_path_join(path, sizeof path, mb_test_data_dir(), rel);
  mb_error err;
  FILE *probe = fopen(path, "r");
  if (!probe) return false;
  fclose(probe);
  bool ok = mb_factorization_load(path, f, &err);
  if (!ok) fail_msg("%s", err.message);
  return ok;
}

static int32_t count_ops(const mb_workload *w, const char *kind) {
  int32_t n = 0;
  for (int32_t i = 0; i < w->n_ops; i++) n += !strcmp(w->ops[i].kind, kind);
  return n;
}

static void test_standard_counts_and_flops(void **state) {
  (void)state;
  mb_factorization f;
  mb_error err;
  assert_true(mb_factorization_builtin("standard", &f, &err));
  assert_int_equal(f.rank, 64);
  assert_true(mb_factorization_check(&f, &err));
  const int64_t n = 8192, nb = n / 4;
  mb_workload *w = mb_alphatensor_trace(&f, "std", n, "bf16", &err);
  if (!w) fail_msg("%s", err.message);
  /* Every L and R is a single block (aliases); each C block takes 4 products, the first of
   * which initialises it by alias: 64 dots + 16 * 3 accumulations. */
  assert_int_equal(count_ops(w, "dot"), 64);
  assert_int_equal(w->n_ops, 64 + 48);
  assert_int_equal(w->n_buffers, 32 + 64 + 48);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  assert_int_equal(st.n_pinned, 32 + 16);
  double want = 64.0 * 2.0 * (double)(nb * nb * nb) + 48.0 * (double)(nb * nb);
  assert_true(st.total_flops == want);
  int64_t block = nb * nb * 2;
  for (int32_t i = 0; i < w->n_buffers; i++) assert_int_equal(w->buffers[i].size, block);
  for (int32_t o = 0; o < w->n_ops; o++) {
    int64_t rd = 0, wr = 0;
    for (int32_t k = w->op_use_start[o]; k < w->op_use_start[o + 1]; k++) {
      rd += w->uses[w->op_uses[k]].bytes_read;
      wr += w->uses[w->op_uses[k]].bytes_written;
    }
    assert_int_equal(rd, 2 * block); /* dot: L and R; accumulate: C_v-1 and M */
    assert_int_equal(wr, block);
    if (!strcmp(w->ops[o].kind, "dot"))
      assert_true(w->ops[o].flops == 2.0 * nb * nb * nb);
    else
      assert_true(w->ops[o].flops == (double)(nb * nb));
  }
  /* Inputs live from time 0; outputs to the end. */
  int32_t a00 = mb_workload_find_buffer(w, "A00");
  assert_true(a00 >= 0 && w->buffers[a00].pinned && w->buffers[a00].start == 0);
  int32_t c33 = mb_workload_find_buffer(w, "C33_v4");
  assert_true(c33 >= 0 && w->buffers[c33].pinned && w->buffers[c33].end == w->n_ops - 1);
  mb_workload_free(w);
  mb_factorization_free(&f);
}

/* An independent count of what the trace rules (alphatensor.c, top comment) imply. */
static void expected_counts(const mb_factorization *f, int64_t nb, int32_t *ops, double *flops) {
  const int32_t R = f->rank;
  double e = (double)nb * (double)nb;
  int contributions[16] = {0};
  *ops = 0;
  *flops = 0;
  for (int32_t r = 0; r < R; r++) {
    for (int side = 0; side < 2; side++) {
      const int32_t *x = side ? f->v : f->u;
      int nnz = 0, plus1 = 0, minus1 = 0, other = 0;
      for (int s = 0; s < 16; s++) {
        int32_t c = x[s * R + r];
        nnz += c != 0;
        plus1 += c == 1;
        minus1 += c == -1;
        other += c != 0 && c != 1 && c != -1;
      }
      if (nnz == 1 && plus1 == 1) continue;
      *ops += 1;
      *flops += e * (nnz - 1 + other + (minus1 == nnz ? 1 : 0));
    }
    *ops += 1;
    *flops += 2.0 * (double)nb * e;
    for (int i = 0; i < 4; i++)
      for (int k = 0; k < 4; k++) {
        int32_t c = f->w[(4 * k + i) * R + r];
        if (!c) continue;
        if (contributions[4 * i + k]++ == 0) {
          if (c != 1) *ops += 1, *flops += e;
        } else {
          *ops += 1;
          *flops += e * (c == 1 || c == -1 ? 1 : 2);
        }
      }
  }
}

static void check_trace(const mb_factorization *f, const char *label) {
  mb_error err;
  const int64_t n = 4096, nb = n / 4;
  mb_workload *w = mb_alphatensor_trace(f, label, n, "f32", &err);
  if (!w) fail_msg("%s: %s", label, err.message);
  int32_t ops;
  double flops;
  expected_counts(f, nb, &ops, &flops);
  assert_int_equal(w->n_ops, ops);
  assert_int_equal(count_ops(w, "dot"), f->rank);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  assert_true(st.total_flops == flops);
  /* SSA: every non-input buffer is written exactly once, by the op at its start. */
  for (int32_t b = 0; b < w->n_buffers; b++) {
    const mb_buffer *buf = &w->buffers[b];
    assert_int_equal(buf->size, nb * nb * 4);
    int writes = 0;
    for (int32_t u = buf->first_use; u < buf->first_use + buf->n_uses; u++)
      if (w->uses[u].bytes_written) {
        writes++;
        assert_int_equal(w->uses[u].op, buf->start);
      }
    bool input = buf->name[0] == 'A' || buf->name[0] == 'B';
    assert_int_equal(writes, input ? 0 : 1);
  }
  assert_int_equal(st.n_pinned, 48);
  mb_workload_free(w);
}

typedef struct term {
  int32_t c[48];
} term;

static int cmp_term(const void *a, const void *b) {
  return memcmp(((const term *)a)->c, ((const term *)b)->c, sizeof(((const term *)a)->c));
}

static term *terms_of(const mb_factorization *f) {
  term *t = calloc((size_t)f->rank, sizeof *t);
  for (int32_t r = 0; r < f->rank; r++)
    for (int s = 0; s < 16; s++) {
      t[r].c[s] = f->u[s * f->rank + r];
      t[r].c[16 + s] = f->v[s * f->rank + r];
      t[r].c[32 + s] = f->w[s * f->rank + r];
    }
  qsort(t, (size_t)f->rank, sizeof *t, cmp_term);
  return t;
}

static void test_strassen_squared_equals_deepmind(void **state) {
  (void)state;
  mb_factorization mine, theirs;
  mb_error err;
  assert_true(mb_factorization_builtin("strassen_squared", &mine, &err));
  assert_int_equal(mine.rank, 49);
  assert_true(mb_factorization_check(&mine, &err));
  if (!load_data("alphatensor/strassen_squared.txt", &theirs)) {
    mb_factorization_free(&mine);
    skip();
  }
  assert_int_equal(theirs.rank, 49);
  term *a = terms_of(&mine), *b = terms_of(&theirs);
  for (int r = 0; r < 49; r++) assert_memory_equal(a[r].c, b[r].c, sizeof a[r].c);
  free(a);
  free(b);
  check_trace(&mine, "strassen_squared");
  mb_factorization_free(&mine);
  mb_factorization_free(&theirs);
}

static void test_all_factorizations_decompose(void **state) {
  (void)state;
  const char *files[] = {"alphatensor/tpu_v2_8192_bf16.txt", "alphatensor/gpu_v100_8192_f32.txt",
                         "alphatensor/strassen_squared.txt"};
  int found = 0;
  for (int i = 0; i < 3; i++) {
    mb_factorization f;
    mb_error err;
    if (!load_data(files[i], &f)) continue;
    found++;
    assert_int_equal(f.rank, 49);
    if (!mb_factorization_check(&f, &err)) fail_msg("%s: %s", files[i], err.message);
    check_trace(&f, files[i]);
    /* One wrong coefficient breaks the decomposition, and the trace refuses it. */
    f.w[5 * f.rank + 3] += 1;
    assert_false(mb_factorization_check(&f, &err));
    assert_non_null(strstr(err.message, "not a decomposition"));
    assert_null(mb_alphatensor_trace(&f, "bad", 4096, "bf16", &err));
    mb_factorization_free(&f);
  }
  if (!found) skip();
}

static void expect_parse_error(const char *text, const char *needle) {
  mb_factorization f;
  mb_error err;
  mb_error_clear(&err);
  if (mb_factorization_parse(text, "f.txt", &f, &err))
    fail_msg("parsed, expected an error containing '%s'", needle);
  if (!strstr(err.message, needle)) fail_msg("'%s' lacks '%s'", err.message, needle);
  assert_null(f.u);
}

/* Builds the text of the standard factorization with an edit hook. */
static char *standard_text(int drop_row, const char *bad_token) {
  mb_factorization f;
  mb_error err;
  mb_factorization_builtin("standard", &f, &err);
  size_t cap = 64 * 1024, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n, "# test\n");
  const int32_t *m[3] = {f.u, f.v, f.w};
  int row = 0;
  for (int x = 0; x < 3; x++) {
    n += (size_t)snprintf(t + n, cap - n, "%c\n", "UVW"[x]);
    for (int s = 0; s < 16; s++, row++) {
      if (row == drop_row) continue;
      for (int r = 0; r < 64; r++) {
        if (bad_token && row == 20 && r == 7)
          n += (size_t)snprintf(t + n, cap - n, "%s ", bad_token);
        else
          n += (size_t)snprintf(t + n, cap - n, "%d ", m[x][s * 64 + r]);
      }
      n += (size_t)snprintf(t + n, cap - n, "\n");
    }
  }
  mb_factorization_free(&f);
  return t;
}

static void test_parse_errors(void **state) {
  (void)state;
  char *good = standard_text(-1, NULL);
  mb_factorization f;
  mb_error err;
  assert_true(mb_factorization_parse(good, "f.txt", &f, &err));
  assert_int_equal(f.rank, 64);
  assert_true(mb_factorization_check(&f, &err));
  mb_factorization_free(&f);
  /* blanks around a block header are not part of it */
  char *v = strstr(good, "\nV\n");
  assert_non_null(v);
  size_t spaced_len = strlen(good) + 8;
  char *spaced = malloc(spaced_len);
  assert_non_null(spaced);
  snprintf(spaced, spaced_len, "%.*s\n  V \t%s", (int)(v - good), good, v + 2);
  assert_true(mb_factorization_parse(spaced, "f.txt", &f, &err));
  assert_int_equal(f.rank, 64);
  mb_factorization_free(&f);
  free(spaced);
  free(good);
  /* Row 20 = V row 4, on line 1 + 1 + 16 + 1 + 5 = 24. */
  char *bad = standard_text(-1, "x7");
  expect_parse_error(bad, "f.txt:24: column 8: 'x7' is not an integer");
  free(bad);
  bad = standard_text(-1, "1 1");
  expect_parse_error(bad, "f.txt:24:");
  free(bad);
  bad = standard_text(3, NULL); /* U has 15 rows: the V header comes too early */
  expect_parse_error(bad, "f.txt:18: block U has 15 rows");
  free(bad);
  bad = standard_text(47, NULL); /* W has 15 rows at end of file */
  expect_parse_error(bad, "block W (from line 36) has 15 rows");
  free(bad);
  expect_parse_error("1 0 1\n", "f.txt:1: expected block header 'U'");
  expect_parse_error("U\n1 0\nW\n", "f.txt:3: block U has 1 rows");
  expect_parse_error("# only a comment\n", "no block 'U'");
  expect_parse_error("U\n99999999 1\n", "f.txt:2: column 1: coefficient 99999999 out of range");
  expect_parse_error("", "no block 'U'");
  /* Missing file: names the path. */
  assert_false(mb_factorization_load("/nonexistent/f.txt", &f, &err));
  assert_non_null(strstr(err.message, "/nonexistent/f.txt"));
}

/* Appends `n` lines `row` to the text in t (capacity cap). */
static void append_rows(char *t, size_t cap, int n, const char *row) {
  for (int i = 0; i < n; i++) {
    size_t len = strlen(t);
    assert_true((size_t)snprintf(t + len, cap - len, "%s\n", row) < cap - len);
  }
}

/* The refusals test_parse_errors leaves out, each with its full message: an over-long token,
 * too many columns, a short row, headers out of order, a 17th row, a file that stops after U or
 * V, and a NUL byte in a loaded file. */
static void test_more_parse_errors(void **state) {
  (void)state;
  /* a token of 32 characters or more is cut to 20 in the message */
  expect_parse_error("U\n1 0 -0000000000000000000000000000001\n",
                     "f.txt:2: column 3: '-0000000000000000000...' is not an integer");
  expect_parse_error("U\n123456789012345678901234567890123456789\n",
                     "f.txt:2: column 1: '12345678901234567890...' is not an integer");
  /* the first U row sets the rank, at most 4096 */
  size_t cap = 16384;
  char *t = malloc(cap);
  assert_non_null(t);
  snprintf(t, cap, "U\n");
  for (int i = 0; i < 4097; i++) strcat(t, "0 ");
  expect_parse_error(t, "f.txt:2: more than 4096 columns: not a 4x4 factorization");
  snprintf(t, cap, "U\n"); /* 4096 columns are allowed: the parse goes on to the next rows */
  for (int i = 0; i < 4096; i++) strcat(t, "0 ");
  expect_parse_error(t, "f.txt:2: block U (from line 1) has 1 rows, expected 16");
  /* a later row with fewer integers than the first (rows count from 1, as in "has 15 rows") */
  expect_parse_error("U\n1 0\n1\n",
                     "f.txt:3: block U row 2: 1 integers, expected 2 (the rank set by the first U "
                     "row)");
  /* headers out of order */
  expect_parse_error("V\n1\n", "f.txt:1: unexpected block header 'V', expected 'U'");
  snprintf(t, cap, "# c\nU\n");
  append_rows(t, cap, 16, "1");
  append_rows(t, cap, 1, "W");
  expect_parse_error(t, "f.txt:19: unexpected block header 'W', expected 'V'");
  snprintf(t, cap, "U\n");
  append_rows(t, cap, 16, "1");
  append_rows(t, cap, 1, "V");
  append_rows(t, cap, 16, "1");
  append_rows(t, cap, 1, "U");
  expect_parse_error(t, "f.txt:35: unexpected block header 'U', expected 'W'");
  char *full = standard_text(-1, NULL); /* 52 lines: a comment, then U, V and W */
  char *extra = malloc(strlen(full) + 64);
  assert_non_null(extra);
  sprintf(extra, "%sU\n", full);
  expect_parse_error(extra,
                     "f.txt:53: unexpected block header 'U', expected end of file after "
                     "block W");
  /* a 17th row */
  snprintf(t, cap, "U\n");
  append_rows(t, cap, 17, "1");
  expect_parse_error(t, "f.txt:18: block U has more than 16 rows");
  sprintf(extra, "%s0\n", full);
  expect_parse_error(extra, "f.txt:53: block W has more than 16 rows");
  /* the file stops after a complete U or V */
  snprintf(t, cap, "U\n");
  append_rows(t, cap, 16, "1");
  expect_parse_error(t, "f.txt:17: file ends after block U; expected blocks U, V and W");
  append_rows(t, cap, 1, "V");
  append_rows(t, cap, 16, "1");
  expect_parse_error(t, "f.txt:34: file ends after block V; expected blocks U, V and W");
  free(extra);
  free(full);
  free(t);
  /* a NUL byte in a file: refused by the loader, naming the file */
  char *path = mb_test_temp_path("nul.txt");
  static const char nul[] = "U\n1\0 2\n";
  mb_test_write_bytes(path, nul, sizeof nul - 1);
  mb_factorization f;
  mb_error err;
  mb_error_clear(&err);
  assert_false(mb_factorization_load(path, &f, &err));
  char want[4200];
  snprintf(want, sizeof want, "%s:2: NUL byte: not a text file", path);
  assert_string_equal(err.message, want);
  assert_null(f.u);
  mb_test_temp_remove(path);
}

static void test_trace_argument_errors(void **state) {
  (void)state;
  mb_factorization f;
  mb_error err;
  assert_true(mb_factorization_builtin("standard", &f, &err));
  assert_null(mb_alphatensor_trace(&f, "t", 8190, "bf16", &err));
  assert_non_null(strstr(err.message, "multiple of 4"));
  assert_null(mb_alphatensor_trace(&f, "t", 0, "bf16", &err));
  assert_null(mb_alphatensor_trace(&f, "t", (1 << 20) + 4, "bf16", &err));
  assert_non_null(strstr(err.message, "n = 1048580: must be a multiple of 4 in [4, 1048576]"));
  mb_workload *largest = mb_alphatensor_trace(&f, "t", 1 << 20, "bf16", &err);
  assert_non_null(largest);
  assert_int_equal(largest->buffers[0].size, (int64_t)1 << 37); /* (2^18)^2 elements, 2 B each */
  mb_workload_free(largest);
  assert_null(mb_alphatensor_trace(&f, "t", 8192, "int8", &err));
  assert_non_null(strstr(err.message, "dtype 'int8'"));
  /* dtype scales bytes, not FLOPs */
  mb_workload *a = mb_alphatensor_trace(&f, "t", 64, "bf16", &err);
  mb_workload *b = mb_alphatensor_trace(&f, "t", 64, "f32", &err);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(b->buffers[0].size, 2 * a->buffers[0].size);
  assert_int_equal(a->buffers[0].size, 16 * 16 * 2);
  mb_workload_free(a);
  mb_workload_free(b);
  mb_factorization_free(&f);
  mb_factorization g;
  assert_false(mb_factorization_builtin("winograd", &g, &err));
  assert_non_null(strstr(err.message, "'winograd' unknown"));
}

/* Coefficients other than +1: a single -1 is a negation (1 FLOP per element), a 2 is a
 * multiply, a first C contribution of -1 needs an init op. Built by negating term 0 of the
 * standard algorithm in U and W: (-A)(B) and C -= M still give +A B. */
static void test_signs_and_scales(void **state) {
  (void)state;
  mb_factorization f;
  mb_error err;
  assert_true(mb_factorization_builtin("standard", &f, &err));
  for (int s = 0; s < 16; s++) {
    f.u[s * 64 + 0] = -f.u[s * 64 + 0];
    f.w[s * 64 + 0] = -f.w[s * 64 + 0];
  }
  assert_true(mb_factorization_check(&f, &err));
  const int64_t nb = 16;
  mb_workload *w = mb_alphatensor_trace(&f, "neg", 4 * nb, "bf16", &err);
  assert_non_null(w);
  int32_t ops;
  double flops;
  expected_counts(&f, nb, &ops, &flops);
  assert_int_equal(w->n_ops, 112 + 2); /* + negate L00 + init C00_v1 */
  assert_int_equal(w->n_ops, ops);
  assert_int_equal(count_ops(w, "negate"), 2);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  assert_true(st.total_flops == flops);
  assert_true(mb_workload_find_op(w, "make_L00") == 0);
  mb_workload_free(w);
  mb_factorization_free(&f);
}

/* The standard algorithm (rank 64) with `extra` all-zero terms after its own, to be filled in. */
static void standard_widened(int32_t extra, mb_factorization *f) {
  mb_factorization std;
  mb_error err;
  assert_true(mb_factorization_builtin("standard", &std, &err));
  const int32_t R = 64 + extra;
  f->rank = R;
  f->u = calloc((size_t)16 * R, sizeof *f->u);
  f->v = calloc((size_t)16 * R, sizeof *f->v);
  f->w = calloc((size_t)16 * R, sizeof *f->w);
  assert_true(f->u && f->v && f->w);
  for (int s = 0; s < 16; s++)
    for (int32_t r = 0; r < 64; r++) {
      f->u[s * R + r] = std.u[s * 64 + r];
      f->v[s * R + r] = std.v[s * 64 + r];
      f->w[s * R + r] = std.w[s * 64 + r];
    }
  mb_factorization_free(&std);
}

/* The FLOPs of op `name`, which must exist and be of `kind`. */
static double op_flops(const mb_workload *w, const char *name, const char *kind) {
  int32_t o = mb_workload_find_op(w, name);
  if (o < 0) fail_msg("no op %s", name);
  if (strcmp(w->ops[o].kind, kind))
    fail_msg("op %s is a %s, expected %s", name, w->ops[o].kind, kind);
  return w->ops[o].flops;
}

/* Coefficients other than +-1 and combinations of several blocks, each with its FLOP rule. The
 * standard algorithm (term r = 16i + 4j + k adds A_ij B_jk to C_ik, the j = 3 term last) gets
 * three changes, each cancelled by a new term so that it still decomposes:
 *  - term 0: L = 2 A00; term 64: L = -A00, the rest as term 0;
 *  - term 1: L = -A00 - A11 and C01 -= M; term 66: L = -A11, B01, C01 += M;
 *  - term 63 (C33's last contribution): C33 += 2 M; term 65: as term 63 with C33 -= M. */
static void test_scaled_coefficients(void **state) {
  (void)state;
  mb_factorization f;
  mb_error err;
  standard_widened(3, &f);
  const int32_t R = f.rank;
  const int A00 = 0, A11 = 5, B00 = 0, B01 = 1, B33 = 15, C00 = 0, C01 = 4, C33 = 15, A33 = 15;
  f.u[A00 * R + 0] = 2;
  f.u[A00 * R + 64] = -1, f.v[B00 * R + 64] = 1, f.w[C00 * R + 64] = 1;
  f.u[A00 * R + 1] = -1, f.u[A11 * R + 1] = -1, f.w[C01 * R + 1] = -1;
  f.u[A11 * R + 66] = -1, f.v[B01 * R + 66] = 1, f.w[C01 * R + 66] = 1;
  f.w[C33 * R + 63] = 2;
  f.u[A33 * R + 65] = 1, f.v[B33 * R + 65] = 1, f.w[C33 * R + 65] = -1;
  if (!mb_factorization_check(&f, &err)) fail_msg("%s", err.message);
  const int64_t nb = 8;
  const double e = (double)(nb * nb);
  mb_workload *w = mb_alphatensor_trace(&f, "scaled", 4 * nb, "f32", &err);
  if (!w) fail_msg("%s", err.message);
  int32_t ops;
  double flops;
  expected_counts(&f, nb, &ops, &flops);
  assert_int_equal(w->n_ops, ops);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  assert_true(st.total_flops == flops);
  assert_true(op_flops(w, "make_L00", "multiply") == e);  /* 2 A00: one multiply */
  assert_true(op_flops(w, "make_L64", "negate") == e);    /* -A00 */
  assert_true(op_flops(w, "make_L01", "add") == 2 * e);   /* -A00 - A11: add, negate */
  assert_true(op_flops(w, "make_L66", "negate") == e);    /* -A11 */
  assert_true(op_flops(w, "init_C01_v1", "negate") == e); /* C01 = -M01 */
  assert_true(op_flops(w, "acc_C00_v5", "add") == e);     /* C00 += M64 (= -A00 B00) */
  assert_true(op_flops(w, "acc_C01_v5", "add") == e);     /* C01 += M66 */
  assert_true(op_flops(w, "acc_C33_v4", "add") == 2 * e); /* C33 += 2 M63: multiply, add */
  assert_true(op_flops(w, "acc_C33_v5", "add") == e);     /* C33 -= M65 */
  assert_true(mb_workload_find_op(w, "make_R64") < 0);    /* B00 alone: an alias */
  mb_workload_free(w);
  mb_factorization_free(&f);
}

/* The densest terms (every coefficient nonzero: 16 blocks read per combination, a contribution
 * to every C block) fit the plan: the standard algorithm plus 30 pairs of all-ones terms whose
 * W columns are +1 and -1, so each pair cancels. */
static void test_dense_terms(void **state) {
  (void)state;
  mb_factorization f;
  mb_error err;
  standard_widened(60, &f);
  const int32_t R = f.rank;
  for (int s = 0; s < 16; s++)
    for (int32_t r = 64; r < R; r++) {
      f.u[s * R + r] = f.v[s * R + r] = 1;
      f.w[s * R + r] = r % 2 ? -1 : 1;
    }
  if (!mb_factorization_check(&f, &err)) fail_msg("%s", err.message);
  const int64_t nb = 4;
  mb_workload *w = mb_alphatensor_trace(&f, "dense", 4 * nb, "bf16", &err);
  if (!w) fail_msg("%s", err.message);
  int32_t ops;
  double flops;
  expected_counts(&f, nb, &ops, &flops);
  assert_int_equal(w->n_ops, ops);
  assert_int_equal(w->n_ops, 64 + 48 + 60 * 19); /* each dense term: L, R, M, 16 C versions */
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  assert_true(st.total_flops == flops);
  mb_workload_free(w);
  mb_factorization_free(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_standard_counts_and_flops),
      cmocka_unit_test(test_strassen_squared_equals_deepmind),
      cmocka_unit_test(test_all_factorizations_decompose),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_more_parse_errors),
      cmocka_unit_test(test_trace_argument_errors),
      cmocka_unit_test(test_signs_and_scales),
      cmocka_unit_test(test_scaled_coefficients),
      cmocka_unit_test(test_dense_terms),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
