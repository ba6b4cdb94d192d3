/* AlphaTensor factorizations and the traces of their 4x4 block algorithms.
 *
 * Trace rules (documented in datasets/CATALOGUE.md):
 *  - inputs: 16 A blocks and 16 B blocks of (N/4)^2 elements, pinned (entry parameters), live
 *    from time 0 to their last use;
 *  - per useful rank-one term r (terms with a zero U, V or W column contribute nothing and are
 *    dropped, as a compiler would): L_r = sum_s U[s][r] A_s and R_r = sum_s V[s][r] B_s, one op
 *    each reading every involved block; a combination that is a single +1 coefficient needs no
 *    op: L_r is that block (an alias, no buffer); then M_r = L_r @ R_r (2 (N/4)^3 FLOPs);
 *  - then, in block order, C[i][k] += W[(k,i)][r] M_r: every contribution defines a new
 *    version C_ik_v (SSA, so blocks are never modified in place). The first contribution
 *    initialises: with coefficient +1 the version IS M_r (an alias), otherwise a scale op.
 *    The last version of every C block is an output: pinned, live to the end.
 *  - FLOPs per element of a linear combination with m nonzero coefficients: m - 1 additions,
 *    plus one multiply per coefficient other than +-1, plus one negation when every
 *    coefficient is -1 (nothing positive to start from). */
#include "alphatensor.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "text_lines.h"

/* A 4x4 tensor has rank at most 64 in any useful factorization; the limit only guards
 * allocations against absurd input. */
#define MAX_RANK 4096
/* Coefficients beyond this are surely a typo; the bound also keeps the check's sums exact. */
#define MAX_COEF 1000000

void mb_factorization_free(mb_factorization *f) {
  if (!f) return;
  free(f->u);
  free(f->v);
  free(f->w);
  f->u = f->v = f->w = NULL;
  f->rank = 0;
}

static bool alloc_factors(mb_factorization *f, int32_t rank) {
  f->rank = rank;
  f->u = calloc((size_t)16 * (size_t)rank, sizeof *f->u);
  f->v = calloc((size_t)16 * (size_t)rank, sizeof *f->v);
  f->w = calloc((size_t)16 * (size_t)rank, sizeof *f->w);
  if (f->u && f->v && f->w) return true;
  mb_factorization_free(f);
  return false;
}

/* ---------------------------------------------------------------- parsing */

/* Splits the integers of one row (NUL-terminated, no newline). Returns the count, or -1 with
 * err set. When out is NULL only counts (values still checked). */
static int32_t parse_row(const char *line, const char *path, int32_t lineno, int32_t *out,
                         int32_t cap, mb_error *err) {
  int32_t n = 0;
  const char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (!*p) break;
    const char *tok = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r') p++;
    int len = (int)(p - tok);
    char buf[32];
    if (len >= (int)sizeof buf) {
      mb_fail(err, "%s:%d: column %d: '%.20s...' is not an integer", path, lineno, n + 1, tok);
      return -1;
    }
    memcpy(buf, tok, (size_t)len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long x = strtol(buf, &end, 10);
    if (end == buf || *end || errno) {
      mb_fail(err, "%s:%d: column %d: '%s' is not an integer", path, lineno, n + 1, buf);
      return -1;
    }
    if (x > MAX_COEF || x < -MAX_COEF) {
      mb_fail(err, "%s:%d: column %d: coefficient %ld out of range [-%d, %d]", path, lineno, n + 1,
              x, MAX_COEF, MAX_COEF);
      return -1;
    }
    if (out) {
      if (n >= cap) {
        mb_fail(err, "%s:%d: more than %d integers (the rank set by the first U row)", path, lineno,
                cap);
        return -1;
      }
      out[n] = (int32_t)x;
    }
    n++;
    if (n > MAX_RANK) {
      mb_fail(err, "%s:%d: more than %d columns: not a 4x4 factorization", path, lineno, MAX_RANK);
      return -1;
    }
  }
  return n;
}

bool mb_factorization_parse(const char *text, const char *path, mb_factorization *out,
                            mb_error *err) {
  memset(out, 0, sizeof *out);
  if (!path) path = "<factorization>";
  const char *names = "UVW";
  int block = -1;  /* index into names of the block being read */
  int32_t row = 0; /* rows read in the current block */
  int32_t lineno = 0;
  int32_t header_line = 0;
  mb_text_lines it;
  mb_text_lines_init(&it, text, strlen(text));
  const char *p;
  size_t len;
  char *line = NULL;
  size_t line_cap = 0;
  bool ok = false;
  while (mb_text_lines_next(&it, &p, &len)) {
    lineno = (int32_t)it.line_no;
    if (len + 1 > line_cap) {
      char *nl = realloc(line, len + 1);
      if (!nl) {
        mb_fail(err, "%s:%d: out of memory", path, lineno);
        goto done;
      }
      line = nl;
      line_cap = len + 1;
    }
    memcpy(line, p, len);
    line[len] = '\0';
    /* trim */
    char *s = line;
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    if (!*s || *s == '#') continue;
    if ((s[0] == 'U' || s[0] == 'V' || s[0] == 'W') && s[1] == '\0') {
      int want = block + 1;
      if (block >= 0 && row != 16) {
        mb_fail(err,
                "%s:%d: block %c has %d rows before '%s', expected 16 (one per block s = "
                "4*row + col)",
                path, lineno, names[block], row, s);
        goto done;
      }
      if (want > 2 || s[0] != names[want]) {
        mb_fail(err, "%s:%d: unexpected block header '%s', expected %s", path, lineno, s,
                want > 2 ? "end of file after block W"
                         : (want == 0   ? "'U'"
                            : want == 1 ? "'V'"
                                        : "'W'"));
        goto done;
      }
      block = want;
      row = 0;
      header_line = lineno;
      continue;
    }
    if (block < 0) {
      mb_fail(err, "%s:%d: expected block header 'U' before the first row, found '%.40s'", path,
              lineno, s);
      goto done;
    }
    if (row >= 16) {
      mb_fail(err, "%s:%d: block %c has more than 16 rows", path, lineno, names[block]);
      goto done;
    }
    if (out->rank == 0) {
      int32_t n = parse_row(s, path, lineno, NULL, 0, err);
      if (n < 0) goto done;
      if (!alloc_factors(out, n)) {
        mb_fail(err, "%s:%d: out of memory for rank %d", path, lineno, n);
        goto done;
      }
    }
    int32_t vals[MAX_RANK];
    int32_t n = parse_row(s, path, lineno, vals, out->rank, err);
    if (n < 0) goto done;
    if (n != out->rank) {
      mb_fail(err,
              "%s:%d: block %c row %d: %d integers, expected %d (the rank set by the first "
              "U row)",
              path, lineno, names[block], row + 1, n, out->rank); /* rows count from 1 */
      goto done;
    }
    int32_t *dst = block == 0 ? out->u : block == 1 ? out->v : out->w;
    memcpy(dst + (size_t)row * (size_t)out->rank, vals, (size_t)n * sizeof *vals);
    row++;
  }
  if (block < 2 || row != 16) {
    if (block < 0)
      mb_fail(err, "%s:%d: no block 'U' found (expected blocks U, V, W of 16 rows each)", path,
              lineno);
    else if (row != 16)
      mb_fail(err, "%s:%d: block %c (from line %d) has %d rows, expected 16", path, lineno,
              names[block], header_line, row);
    else
      mb_fail(err, "%s:%d: file ends after block %c; expected blocks U, V and W", path, lineno,
              names[block]);
    goto done;
  }
  if (out->rank <= 0) {
    mb_fail(err, "%s: rank 0: no rank-one terms", path);
    goto done;
  }
  ok = true;
done:
  free(line);
  if (!ok) mb_factorization_free(out);
  return ok;
}

bool mb_factorization_load(const char *path, mb_factorization *out, mb_error *err) {
  memset(out, 0, sizeof *out);
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) return mb_fail(err, "%s: cannot read: %s", path, strerror(errno));
  bool ok =
      mb_text_check_no_nul(text, len, path, err) && mb_factorization_parse(text, path, out, err);
  free(text);
  return ok;
}

/* ---------------------------------------------------------------- built-ins */

/* Strassen's 2x2 algorithm (rank 7) in this file's convention: index s = 2*row + col, and W
 * indexed by (k, i) for the contribution to C[i][k].
 *   M1 = (A11 + A22)(B11 + B22)  M2 = (A21 + A22) B11  M3 = A11 (B12 - B22)
 *   M4 = A22 (B21 - B11)         M5 = (A11 + A12) B22  M6 = (A21 - A11)(B11 + B12)
 *   M7 = (A12 - A22)(B21 + B22)
 *   C11 = M1 + M4 - M5 + M7  C12 = M3 + M5  C21 = M2 + M4  C22 = M1 - M2 + M3 + M6 */
static const int8_t STRASSEN_U[7][4] = {{1, 0, 0, 1}, {0, 0, 1, 1},  {1, 0, 0, 0}, {0, 0, 0, 1},
                                        {1, 1, 0, 0}, {-1, 0, 1, 0}, {0, 1, 0, -1}};
static const int8_t STRASSEN_V[7][4] = {{1, 0, 0, 1}, {1, 0, 0, 0}, {0, 1, 0, -1}, {-1, 0, 1, 0},
                                        {0, 0, 0, 1}, {1, 1, 0, 0}, {0, 0, 1, 1}};
/* W[r][2*k + i]: C11 -> index 0, C12 (i=0,k=1) -> 2, C21 (i=1,k=0) -> 1, C22 -> 3. */
static const int8_t STRASSEN_W[7][4] = {{1, 0, 0, 1},  {0, 1, 0, -1}, {0, 0, 1, 1}, {1, 1, 0, 0},
                                        {-1, 0, 1, 0}, {0, 0, 0, 1},  {1, 0, 0, 0}};

/* Kronecker product of two 2x2 factor vectors into a 4x4 one: block row 2*i1 + i2, block
 * column 2*j1 + j2 (outer algorithm on 2x2 blocks of the inner one). The transposed W index
 * composes the same way, so the product decomposes the 4x4x4 tensor. */
static void kron(const int8_t a[4], const int8_t b[4], int32_t *dst, int32_t rank, int32_t r) {
  for (int i1 = 0; i1 < 2; i1++)
    for (int j1 = 0; j1 < 2; j1++)
      for (int i2 = 0; i2 < 2; i2++)
        for (int j2 = 0; j2 < 2; j2++) {
          int s = 4 * (2 * i1 + i2) + (2 * j1 + j2);
          dst[s * rank + r] = a[2 * i1 + j1] * b[2 * i2 + j2];
        }
}

bool mb_factorization_builtin(const char *name, mb_factorization *out, mb_error *err) {
  memset(out, 0, sizeof *out);
  if (name && !strcmp(name, "standard")) {
    if (!alloc_factors(out, 64)) return mb_fail(err, "builtin:standard: out of memory");
    int32_t r = 0;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 4; k++, r++) {
          out->u[(4 * i + j) * 64 + r] = 1;
          out->v[(4 * j + k) * 64 + r] = 1;
          out->w[(4 * k + i) * 64 + r] = 1;
        }
    return true;
  }
  if (name && !strcmp(name, "strassen_squared")) {
    if (!alloc_factors(out, 49)) return mb_fail(err, "builtin:strassen_squared: out of memory");
    for (int r1 = 0; r1 < 7; r1++)
      for (int r2 = 0; r2 < 7; r2++) {
        int32_t r = 7 * r1 + r2;
        kron(STRASSEN_U[r1], STRASSEN_U[r2], out->u, 49, r);
        kron(STRASSEN_V[r1], STRASSEN_V[r2], out->v, 49, r);
        kron(STRASSEN_W[r1], STRASSEN_W[r2], out->w, 49, r);
      }
    return true;
  }
  return mb_fail(err,
                 "builtin factorization '%s' unknown: expected 'standard' or "
                 "'strassen_squared'",
                 name ? name : "(null)");
}

bool mb_factorization_check(const mb_factorization *f, mb_error *err) {
  if (!f || f->rank <= 0 || !f->u || !f->v || !f->w)
    return mb_fail(err, "factorization: empty (rank 0)");
  const int32_t R = f->rank;
  for (int a = 0; a < 16; a++)
    for (int b = 0; b < 16; b++)
      for (int c = 0; c < 16; c++) {
        int64_t sum = 0;
        for (int32_t r = 0; r < R; r++) {
          int64_t uv = (int64_t)f->u[a * R + r] * f->v[b * R + r];
          if (uv) sum += uv * f->w[c * R + r];
        }
        /* a = (i, j), b = (j', k), c = (k', i'): 1 iff j = j', k = k', i = i'. */
        int i = a / 4, j = a % 4, j2 = b / 4, k = b % 4, k2 = c / 4, i2 = c % 4;
        int64_t want = (j == j2 && k == k2 && i == i2) ? 1 : 0;
        if (sum != want)
          return mb_fail(err,
                         "factorization: not a decomposition of the 4x4x4 matrix-"
                         "multiplication tensor: entry (U row %d, V row %d, W row %d) sums to "
                         "%lld, expected %lld",
                         a, b, c, (long long)sum, (long long)want);
      }
  return true;
}

/* ---------------------------------------------------------------- traces */

typedef struct plan_op {
  char name[48];
  const char *kind;
  double flops;
} plan_op;

typedef struct plan_buf {
  char name[48];
  bool pinned;
  bool output;
  int32_t start, end;
} plan_buf;

typedef struct plan_use {
  int32_t op, buf;
  bool writes;
} plan_use;

typedef struct plan {
  plan_op *ops;
  plan_buf *bufs;
  plan_use *uses;
  int32_t n_ops, n_bufs, n_uses;
  int32_t cap_ops, cap_bufs, cap_uses;
} plan;

static int32_t plan_buf_add(plan *p, const char *name, bool pinned) {
  if (p->n_bufs >= p->cap_bufs) return -1;
  plan_buf *b = &p->bufs[p->n_bufs];
  snprintf(b->name, sizeof b->name, "%s", name);
  b->pinned = pinned;
  b->output = false;
  b->start = b->end = -1;
  return p->n_bufs++;
}

static int32_t plan_op_add(plan *p, const char *name, const char *kind, double flops) {
  if (p->n_ops >= p->cap_ops) return -1;
  plan_op *o = &p->ops[p->n_ops];
  snprintf(o->name, sizeof o->name, "%s", name);
  o->kind = kind;
  o->flops = flops;
  return p->n_ops++;
}

static bool plan_use_add(plan *p, int32_t op, int32_t buf, bool writes) {
  if (p->n_uses >= p->cap_uses || op < 0 || buf < 0) return false;
  p->uses[p->n_uses++] = (plan_use){op, buf, writes};
  return true;
}

/* FLOPs per element of sum_s coef[s] x_s over the nonzero coefficients (rule on top). */
static int64_t lincomb_flops_per_element(const int32_t *coef, int32_t stride, int32_t *nnz,
                                         int32_t *single) {
  int32_t m = 0, scaled = 0, negative = 0;
  *single = -1;
  for (int s = 0; s < 16; s++) {
    int32_t c = coef[s * stride];
    if (!c) continue;
    m++;
    *single = s;
    if (c != 1 && c != -1) scaled++;
    if (c == -1) negative++;
  }
  *nnz = m;
  return (m > 0 ? m - 1 : 0) + scaled + (m > 0 && negative == m ? 1 : 0);
}

static int64_t dtype_bytes(const char *dtype) {
  if (!dtype) return 0;
  if (!strcmp(dtype, "bf16") || !strcmp(dtype, "f16")) return 2;
  if (!strcmp(dtype, "f32")) return 4;
  return 0;
}

/* Emits L_r (U, blocks "A") or R_r (V, blocks "B"): returns the buffer holding the
 * combination (an input block when it is a single +1 coefficient), or -1 on overflow. */
static int32_t emit_lincomb(plan *p, const int32_t *factor, int32_t rank, int32_t r, char side,
                            const int32_t in_bufs[16], int64_t elems) {
  int32_t nnz, single;
  int64_t per = lincomb_flops_per_element(factor + r, rank, &nnz, &single);
  if (nnz == 1 && factor[single * rank + r] == 1) return in_bufs[single]; /* alias */
  char name[32], opname[40];
  snprintf(name, sizeof name, "%c%02d", side, r);
  snprintf(opname, sizeof opname, "make_%s", name);
  const char *kind = nnz > 1 ? "add" : (factor[single * rank + r] == -1 ? "negate" : "multiply");
  int32_t op = plan_op_add(p, opname, kind, (double)per * (double)elems);
  int32_t out = plan_buf_add(p, name, false);
  for (int s = 0; s < 16; s++)
    if (factor[s * rank + r] && !plan_use_add(p, op, in_bufs[s], false)) return -1;
  if (!plan_use_add(p, op, out, true)) return -1;
  return out;
}

/* True when the rank-one term r has an all-zero factor: it contributes nothing. */
static bool term_is_dead(const mb_factorization *f, int32_t r) {
  const int32_t R = f->rank;
  for (int x = 0; x < 3; x++) {
    const int32_t *fac = x == 0 ? f->u : x == 1 ? f->v : f->w;
    bool any = false;
    for (int s = 0; s < 16; s++) any |= fac[s * R + r] != 0;
    if (!any) return true;
  }
  return false;
}

/* The ops of rank-one term r: L_r and R_r, M_r = L_r @ R_r, then C[i][k] += W[(k,i)][r] M_r in C
 * block order (i, k). c_cur is each C block's current version's buffer (-1 before the first),
 * c_ver its version count. False when the plan overflows. */
static bool emit_term(plan *p, const mb_factorization *f, int32_t r, const int32_t a_buf[16],
                      const int32_t b_buf[16], int32_t c_cur[16], int32_t c_ver[16], int64_t nb) {
  const int32_t R = f->rank;
  const int64_t elems = nb * nb;
  int32_t l = emit_lincomb(p, f->u, R, r, 'L', a_buf, elems);
  int32_t rr = emit_lincomb(p, f->v, R, r, 'R', b_buf, elems);
  if (l < 0 || rr < 0) return false;
  char mname[32], opname[40];
  snprintf(mname, sizeof mname, "M%02d", r);
  snprintf(opname, sizeof opname, "matmul_%s", mname);
  int32_t mop = plan_op_add(p, opname, "dot", 2.0 * (double)nb * (double)nb * (double)nb);
  int32_t m = plan_buf_add(p, mname, false);
  if (!plan_use_add(p, mop, l, false) || !plan_use_add(p, mop, rr, false) ||
      !plan_use_add(p, mop, m, true))
    return false;
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 4; k++) {
      int32_t coef = f->w[(4 * k + i) * R + r];
      if (!coef) continue;
      int cs = 4 * i + k;
      int v = ++c_ver[cs];
      if (v == 1 && coef == 1) {
        c_cur[cs] = m; /* the first contribution initialises: C_ik_v1 is M_r */
        continue;
      }
      char cname[32];
      snprintf(cname, sizeof cname, "C%d%d_v%d", i, k, v);
      snprintf(opname, sizeof opname, "%s_%s", v == 1 ? "init" : "acc", cname);
      bool scaled = coef != 1 && coef != -1;
      double per = v == 1 ? 1.0 : 1.0 + (scaled ? 1.0 : 0.0);
      const char *kind = v > 1 ? "add" : (coef == -1 ? "negate" : "multiply");
      int32_t op = plan_op_add(p, opname, kind, per * (double)elems);
      int32_t c = plan_buf_add(p, cname, false);
      if (v > 1 && !plan_use_add(p, op, c_cur[cs], false)) return false;
      if (!plan_use_add(p, op, m, false) || !plan_use_add(p, op, c, true)) return false;
      c_cur[cs] = c;
    }
  return true;
}

/* Live ranges: from the defining op (time 0 for the inputs) to the last use (the end of the
 * program for the outputs). */
static void set_live_ranges(plan *p, const int32_t a_buf[16], const int32_t b_buf[16]) {
  for (int32_t u = 0; u < p->n_uses; u++) {
    plan_buf *pb = &p->bufs[p->uses[u].buf];
    int32_t t = p->uses[u].op;
    if (pb->start < 0 || t < pb->start) pb->start = t;
    if (t > pb->end) pb->end = t;
  }
  for (int s = 0; s < 16; s++) p->bufs[a_buf[s]].start = p->bufs[b_buf[s]].start = 0;
  for (int32_t i = 0; i < p->n_bufs; i++)
    if (p->bufs[i].output) p->bufs[i].end = p->n_ops - 1;
}

/* The planned ops, buffers (all of `bytes`) and uses as a workload. */
static mb_workload *build_workload(const plan *p, const char *name, const char *source,
                                   int64_t bytes, mb_error *err) {
  mb_workload_builder *b = mb_builder_new(name, source);
  if (!b) {
    mb_fail(err, "alphatensor '%s': out of memory", name);
    return NULL;
  }
  for (int32_t i = 0; i < p->n_ops; i++)
    mb_builder_add_op(b, p->ops[i].name, p->ops[i].kind, p->ops[i].flops);
  for (int32_t i = 0; i < p->n_bufs; i++) {
    const plan_buf *pb = &p->bufs[i];
    mb_builder_add_buffer(b, pb->name, bytes, pb->start, pb->end, pb->pinned);
  }
  for (int32_t u = 0; u < p->n_uses; u++)
    mb_builder_add_use(b, p->uses[u].buf, p->uses[u].op, p->uses[u].writes ? 0 : bytes,
                       p->uses[u].writes ? bytes : 0);
  mb_workload *w = mb_builder_finish(b, err); /* consumes b; reports allocation failures */
  if (!w) mb_fail_prefix(err, "alphatensor '%s'", name);
  return w;
}

mb_workload *mb_alphatensor_trace(const mb_factorization *f, const char *name, int64_t n,
                                  const char *dtype, mb_error *err) {
  if (!name || !*name) name = "alphatensor";
  int64_t esz = dtype_bytes(dtype);
  if (!esz) {
    mb_fail(err, "alphatensor '%s': dtype '%s' unknown: expected bf16, f16 or f32", name,
            dtype ? dtype : "(null)");
    return NULL;
  }
  /* Blocks of (n/4)^2 elements; 2 (n/4)^3 FLOPs stay exact in a double up to n = 2^20. */
  if (n < 4 || n % 4 || n > (1 << 20)) {
    mb_fail(err,
            "alphatensor '%s': n = %lld: must be a multiple of 4 in [4, 1048576] (the "
            "matrices are split into 4x4 blocks of n/4)",
            name, (long long)n);
    return NULL;
  }
  mb_error cerr;
  if (!mb_factorization_check(f, &cerr)) {
    mb_fail(err, "alphatensor '%s': %s", name, cerr.message);
    return NULL;
  }
  const int32_t R = f->rank;
  const int64_t nb = n / 4, bytes = nb * nb * esz;
  plan p = {0};
  p.cap_ops = R * 19;
  p.cap_bufs = 32 + R * 19;
  p.cap_uses = R * (17 + 17 + 3 + 16 * 3);
  p.ops = calloc((size_t)p.cap_ops, sizeof *p.ops);
  p.bufs = calloc((size_t)p.cap_bufs, sizeof *p.bufs);
  p.uses = calloc((size_t)p.cap_uses, sizeof *p.uses);
  mb_workload *w = NULL;
  if (!p.ops || !p.bufs || !p.uses) {
    mb_fail(err, "alphatensor '%s': out of memory", name);
    goto done;
  }
  int32_t a_buf[16], b_buf[16], c_cur[16], c_ver[16];
  char bn[32];
  for (int s = 0; s < 16; s++) {
    snprintf(bn, sizeof bn, "A%d%d", s / 4, s % 4);
    a_buf[s] = plan_buf_add(&p, bn, true);
  }
  for (int s = 0; s < 16; s++) {
    snprintf(bn, sizeof bn, "B%d%d", s / 4, s % 4);
    b_buf[s] = plan_buf_add(&p, bn, true);
    c_cur[s] = -1;
    c_ver[s] = 0;
  }
  bool overflow = false;
  for (int32_t r = 0; r < R && !overflow; r++)
    if (!term_is_dead(f, r)) overflow = !emit_term(&p, f, r, a_buf, b_buf, c_cur, c_ver, nb);
  if (overflow || p.n_ops == 0) {
    mb_fail(err, "alphatensor '%s': internal plan overflow (rank %d)", name, R);
    goto done;
  }
  for (int cs = 0; cs < 16; cs++) {
    if (c_cur[cs] < 0) { /* impossible after the check; kept so bad input never crashes */
      mb_fail(err, "alphatensor '%s': C block %d%d receives no contribution", name, cs / 4, cs % 4);
      goto done;
    }
    p.bufs[c_cur[cs]].pinned = true;
    p.bufs[c_cur[cs]].output = true;
  }
  set_live_ranges(&p, a_buf, b_buf);
  char source[160];
  snprintf(source, sizeof source, "alphatensor rank=%d n=%lld dtype=%s", R, (long long)n, dtype);
  w = build_workload(&p, name, source, bytes, err);
done:
  free(p.ops);
  free(p.bufs);
  free(p.uses);
  return w;
}
