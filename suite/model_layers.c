#include "model_layers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

/* Per-element FLOP constants of the non-product ops. They are estimates (an op's arithmetic
 * as commonly implemented), small next to the products, and excluded from the comparison with
 * published figures, which count multiply-accumulates of dot and convolution only. */
enum {
  FL_LAYERNORM = 8,       /* mean, variance, normalise, scale, shift */
  FL_RMSNORM = 4,         /* square-sum, rsqrt-scale, scale */
  FL_BATCHNORM_TRAIN = 8, /* batch statistics + normalise + scale/shift */
  FL_BATCHNORM_INFER = 2, /* folded scale and shift with running statistics */
  FL_NORM_DX = 10,
  FL_NORM_DW = 3,
  FL_SOFTMAX = 5, /* max, subtract, exp, sum, divide */
  FL_SOFTMAX_DX = 4,
  FL_SWIGLU = 5,
  FL_SWIGLU_DX = 10,
  FL_ROPE = 3,
  FL_LSTM_CELL = 24, /* 3 sigmoids, 2 tanh, 3 multiplies, 1 add per hidden unit */
  FL_LSTM_CELL_DX = 30,
  FL_XENT = 5,
  FL_XENT_DX = 2,
  FL_ADAM = 10 /* m, v moving averages, bias-corrected step: per updated element */
};

/* ---- dtypes ---- */

int64_t mb_dtype_size(mb_dtype t) {
  switch (t) {
    case MB_DTYPE_F32:
      return 4;
    case MB_DTYPE_BF16:
      return 2;
    case MB_DTYPE_F16:
      return 2;
    case MB_DTYPE_S32:
      return 4;
  }
  return 4;
}

static const char *const dtype_names[] = {"f32", "bf16", "f16", "s32"};

const char *mb_dtype_name(mb_dtype t) {
  return (unsigned)t < sizeof dtype_names / sizeof *dtype_names ? dtype_names[t] : "?";
}

bool mb_dtype_from_name(const char *s, mb_dtype *out) {
  for (size_t i = 0; i < sizeof dtype_names / sizeof *dtype_names; i++) {
    if (!strcmp(s, dtype_names[i])) {
      *out = (mb_dtype)i;
      return true;
    }
  }
  return false;
}

/* ---- the net ---- */

/* Largest number of elements of a tensor (its bytes stay within int64 for every dtype). */
#define MAX_NUMEL (INT64_MAX / 8)

enum { T_ACT, T_INPUT, T_WEIGHT, T_GRAD, T_MOMENT };
#define GRAD_NONE (-1)
#define GRAD_SEED (-2) /* the loss: d loss / d loss = 1, no buffer */

typedef struct tinfo {
  char *name;
  int64_t numel;
  mb_dtype dt;
  uint8_t kind;
  bool requires_grad, output;
  int64_t touched; /* sparse gradient: elements written and updated (0: dense) */
  int32_t first, last;
  int32_t grad;     /* current gradient tensor, GRAD_NONE or GRAD_SEED */
  int32_t versions; /* gradient versions created so far */
} tinfo;

/* A tensor read by a backward op: the tensor itself or its current gradient. */
typedef struct ref {
  int32_t t;
  bool grad;
  int64_t bytes; /* 0: the whole tensor */
} ref;

typedef struct bop {
  char suffix[16];
  const char *kind; /* string literal */
  double flops;
  int32_t r0, nr; /* reads: refs[r0 .. r0 + nr) */
  int32_t w0, nw; /* gradients written: ints[w0 .. w0 + nw) */
  bool alias;     /* pass-through: the gradient is the output's gradient (no op) */
} bop;

typedef struct tentry {
  char *name;
  int32_t o0, no; /* outputs: ints[o0 .. o0 + no) */
  int32_t b0, nb; /* backward ops: bops[b0 .. b0 + nb) */
} tentry;

#define SCOPE_DEPTH 16

struct mb_net {
  mb_workload_builder *b;
  char name[MB_NAME_MAX];
  bool training;
  mb_dtype dt, odt;
  tinfo *t;
  int32_t nt, ct;
  ref *refs;
  int32_t nrefs, crefs;
  int32_t *ints;
  int32_t nints, cints;
  bop *bops;
  int32_t nbops, cbops;
  tentry *tape;
  int32_t ntape, ctape;
  char scope[MB_NAME_MAX];
  size_t scope_len[SCOPE_DEPTH];
  int32_t depth;
  bool failed;
  char fail_msg[MB_ERROR_MAX];
};

static void fail(mb_net *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(mb_net *n, const char *fmt, ...) {
  if (n->failed) return;
  n->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n->fail_msg, sizeof n->fail_msg, fmt, ap);
  va_end(ap);
}

/* mb_array_reserve, recording "out of memory" on the net when it fails. */
static bool grow(mb_net *n, void **data, int32_t *cap, int64_t need, size_t elem) {
  if (mb_array_reserve(data, cap, need, elem)) return true;
  fail(n, "out of memory");
  return false;
}

mb_net *mb_net_new(const char *name, const char *source, bool training, mb_dtype dtype,
                   mb_dtype opt_dtype) {
  mb_net *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->b = mb_builder_new(name, source);
  if (!n->b) {
    free(n);
    return NULL;
  }
  snprintf(n->name, sizeof n->name, "%s", name);
  n->training = training;
  n->dt = dtype;
  n->odt = opt_dtype;
  return n;
}

void mb_net_free(mb_net *n) {
  if (!n) return;
  for (int32_t i = 0; i < n->nt; i++) free(n->t[i].name);
  for (int32_t i = 0; i < n->ntape; i++) free(n->tape[i].name);
  free(n->t);
  free(n->refs);
  free(n->ints);
  free(n->bops);
  free(n->tape);
  mb_builder_free(n->b);
  free(n);
}

bool mb_net_training(const mb_net *n) { return n->training; }
mb_dtype mb_net_dtype(const mb_net *n) { return n->dt; }

/* Arguments for "%s%s%s": a layer's name qualified by the current scope. */
#define SCOPED(nm) n->scope, n->scope[0] ? "." : "", (nm)

static bool valid(mb_net *n, mb_tensor t) {
  if (n->failed) return false;
  if (t < 0 || t >= n->nt) {
    fail(n, "generator bug: invalid tensor %d in scope '%s'", t, n->scope);
    return false;
  }
  return true;
}

int64_t mb_net_numel(const mb_net *n, mb_tensor t) {
  return t >= 0 && t < n->nt ? n->t[t].numel : 0;
}

void mb_net_scope_push(mb_net *n, const char *fmt, ...) {
  if (n->depth >= SCOPE_DEPTH) {
    fail(n, "generator bug: scopes nested deeper than %d", SCOPE_DEPTH);
    return;
  }
  size_t len = strlen(n->scope);
  n->scope_len[n->depth++] = len; /* pushed even when refused below: the pop still matches */
  char part[MB_NAME_MAX];
  va_list ap;
  va_start(ap, fmt);
  int plen = vsnprintf(part, sizeof part, fmt, ap);
  va_end(ap);
  if (plen < 0) {
    fail(n, "generator bug: scope name format '%s' fails", fmt);
    return;
  }
  if ((size_t)plen >= sizeof part) {
    /* `part` holds only the first MB_NAME_MAX - 1 characters: say so instead of using them */
    fail(n, "scope name '%s...' (%d characters) longer than %d characters", part, plen,
         MB_NAME_MAX - 1);
    return;
  }
  int w = snprintf(n->scope + len, sizeof n->scope - len, "%s%s", len ? "." : "", part);
  if (w < 0 || (size_t)w >= sizeof n->scope - len) {
    n->scope[len] = '\0';
    fail(n, "scope name '%s%s%s' longer than %d characters", n->scope, len ? "." : "", part,
         MB_NAME_MAX - 1);
  }
}

void mb_net_scope_pop(mb_net *n) {
  if (n->depth <= 0) return;
  n->scope[n->scope_len[--n->depth]] = '\0';
}

/* Longest prefix added to a tensor name ("adam_m.", "grad." + ".NNN") must still fit. */
#define NAME_ROOM (MB_NAME_MAX - 16)

static bool full_name(mb_net *n, char *out, const char *name) {
  int w = snprintf(out, NAME_ROOM, "%s%s%s", n->scope, n->scope[0] ? "." : "", name);
  if (w < 0 || w >= NAME_ROOM) {
    fail(n, "name '%s%s%s' longer than %d characters", SCOPED(name), NAME_ROOM - 1);
    return false;
  }
  return true;
}

static mb_tensor tensor_new(mb_net *n, const char *fullname, int64_t numel, mb_dtype dt,
                            uint8_t kind) {
  if (n->failed) return MB_NO_TENSOR;
  if (numel <= 0) {
    fail(n, "tensor '%s': %lld elements (must be > 0)", fullname, (long long)numel);
    return MB_NO_TENSOR;
  }
  if (numel > MAX_NUMEL) {
    fail(n, "tensor '%s': %lld elements, more than %lld", fullname, (long long)numel,
         (long long)MAX_NUMEL);
    return MB_NO_TENSOR;
  }
  if (!grow(n, (void **)&n->t, &n->ct, (int64_t)n->nt + 1, sizeof *n->t)) return MB_NO_TENSOR;
  tinfo *ti = &n->t[n->nt];
  memset(ti, 0, sizeof *ti);
  ti->name = strdup(fullname);
  if (!ti->name) {
    fail(n, "out of memory");
    return MB_NO_TENSOR;
  }
  ti->numel = numel;
  ti->dt = dt;
  ti->kind = kind;
  ti->first = ti->last = -1;
  ti->grad = GRAD_NONE;
  return n->nt++;
}

void mb_net_fail(mb_net *n, const char *message) { fail(n, "%s", message); }

static int64_t tbytes(const mb_net *n, mb_tensor t) {
  return n->t[t].numel * mb_dtype_size(n->t[t].dt);
}

/* ---- checks of a layer's parameters ----
 * Every message names the layer with its scope ("matmul 'l0.attn.scores'") and the field;
 * mb_net_finish prefixes the model. Sizes the caller gets wrong about its own tensors (an
 * input of the wrong number of elements) are generator bugs; sizes out of range name the
 * parameter and its value. */

/* A shape: named sizes whose product is a tensor's number of elements. */
typedef struct shape {
  int32_t nd;
  const char *field[4];
  int64_t v[4];
  int64_t numel; /* the product, set by shape_ok */
} shape;

/* "batch x m x k = 2 x 3 x 4" */
static void shape_text(const shape *s, char *out, size_t cap) {
  size_t len = 0;
  for (int32_t i = 0; i < s->nd && len < cap; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " x " : "", s->field[i]);
  for (int32_t i = 0; i < s->nd && len < cap; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s%lld", i ? " x " : " = ", (long long)s->v[i]);
}

/* Every size of `s` positive and their product at most MAX_NUMEL; sets s->numel. */
static bool shape_ok(mb_net *n, const char *layer, const char *name, shape *s) {
  if (n->failed) return false;
  int64_t p = 1;
  for (int32_t i = 0; i < s->nd; i++) {
    if (s->v[i] <= 0) {
      fail(n, "%s '%s%s%s': %s = %lld (must be > 0)", layer, SCOPED(name), s->field[i],
           (long long)s->v[i]);
      return false;
    }
    if (s->v[i] > MAX_NUMEL / p) {
      char text[256];
      shape_text(s, text, sizeof text);
      fail(n, "%s '%s%s%s': %s: more than %lld elements", layer, SCOPED(name), text,
           (long long)MAX_NUMEL);
      return false;
    }
    p *= s->v[i];
  }
  s->numel = p;
  return true;
}

/* One size > 0 (and at most MAX_NUMEL). */
static bool positive(mb_net *n, const char *layer, const char *name, const char *field, int64_t v) {
  shape s = {1, {field}, {v}, 0};
  return shape_ok(n, layer, name, &s);
}

/* Tensor t (the layer's operand `what`) has s->numel elements (shape_ok passed). */
static bool has_shape(mb_net *n, const char *layer, const char *name, const char *what, mb_tensor t,
                      const shape *s) {
  if (n->t[t].numel == s->numel) return true;
  char text[256];
  shape_text(s, text, sizeof text);
  fail(n, "generator bug: %s '%s%s%s': %s ('%s') has %lld elements, expected %s = %lld", layer,
       SCOPED(name), what, n->t[t].name, (long long)n->t[t].numel, text, (long long)s->numel);
  return false;
}

/* Tensor b (operand `what`, broadcast over x) has a number of elements dividing x's. */
static bool divides(mb_net *n, const char *layer, const char *name, const char *what, mb_tensor b,
                    mb_tensor x) {
  if (n->t[x].numel % n->t[b].numel == 0) return true;
  fail(n,
       "generator bug: %s '%s%s%s': %s ('%s') has %lld elements, which do not divide the %lld of "
       "'%s'",
       layer, SCOPED(name), what, n->t[b].name, (long long)n->t[b].numel, (long long)n->t[x].numel,
       n->t[x].name);
  return false;
}

/* Tensor t (operand `what`) has dtype dt. */
static bool has_dtype(mb_net *n, const char *layer, const char *name, const char *what, mb_tensor t,
                      mb_dtype dt) {
  if (n->t[t].dt == dt) return true;
  fail(n, "generator bug: %s '%s%s%s': %s ('%s') is %s, expected %s", layer, SCOPED(name), what,
       n->t[t].name, mb_dtype_name(n->t[t].dt), mb_dtype_name(dt));
  return false;
}

/* An enum parameter within [0, count). */
static bool enum_ok(mb_net *n, const char *layer, const char *name, const char *field, int v,
                    int count) {
  if (v >= 0 && v < count) return true;
  fail(n, "generator bug: %s '%s%s%s': %s = %d is not one of the %d known", layer, SCOPED(name),
       field, v, count);
  return false;
}

/* "<name>.<suffix>" (a layer's weight or part) into out[MB_NAME_MAX]; refused, not cut, when
 * it does not fit (full_name then checks the room left for the prefixes). */
static bool sub_name(mb_net *n, char *out, const char *name, const char *suffix) {
  int w = snprintf(out, MB_NAME_MAX, "%s.%s", name, suffix);
  if (w >= 0 && w < MB_NAME_MAX) return true;
  fail(n, "name '%s%s%s.%s' longer than %d characters", SCOPED(name), suffix, NAME_ROOM - 1);
  return false;
}

int64_t mb_window_out(int64_t in, int64_t k, int64_t stride, int64_t pad) {
  if (in <= 0 || k <= 0 || stride <= 0 || pad < 0 || pad >= k || in > MAX_NUMEL || k > MAX_NUMEL)
    return 0;
  int64_t span = in + 2 * pad; /* < 3 x MAX_NUMEL: no overflow */
  return span < k ? 0 : (span - k) / stride + 1;
}

static int32_t op_new(mb_net *n, const char *name, const char *kind, double flops) {
  if (n->failed) return -1;
  int32_t op = mb_builder_add_op(n->b, name, kind, flops);
  if (op < 0) fail(n, "out of memory");
  return op;
}

static void use(mb_net *n, int32_t op, mb_tensor t, int64_t rd, int64_t wr) {
  if (n->failed || op < 0) return;
  tinfo *ti = &n->t[t];
  if (ti->first < 0 || op < ti->first) ti->first = op;
  if (op > ti->last) ti->last = op;
  if (!mb_builder_add_use(n->b, t, op, rd, wr)) fail(n, "out of memory");
}

mb_tensor mb_net_input(mb_net *n, const char *name, int64_t numel, mb_dtype dtype) {
  char full[MB_NAME_MAX];
  if (!full_name(n, full, name)) return MB_NO_TENSOR;
  return tensor_new(n, full, numel, dtype, T_INPUT);
}

mb_tensor mb_net_weight(mb_net *n, const char *name, int64_t numel) {
  char full[MB_NAME_MAX];
  if (!full_name(n, full, name)) return MB_NO_TENSOR;
  mb_tensor w = tensor_new(n, full, numel, n->dt, T_WEIGHT);
  if (w >= 0) n->t[w].requires_grad = n->training;
  return w;
}

void mb_net_sparse_grad(mb_net *n, mb_tensor weight, int64_t touched_numel) {
  if (!valid(n, weight)) return;
  tinfo *ti = &n->t[weight];
  ti->touched = touched_numel < ti->numel ? touched_numel : 0;
}

void mb_net_output(mb_net *n, mb_tensor t) {
  if (valid(n, t)) n->t[t].output = true;
}

/* ---- forward ops and the tape ---- */

#define R(x) ((ref){(x), false, 0})
#define RB(x, nbytes) ((ref){(x), false, (nbytes)})
#define G(x) ((ref){(x), true, 0})

static int64_t ref_bytes(const mb_net *n, mb_tensor t, int64_t bytes) {
  int64_t full = tbytes(n, t);
  return bytes > 0 && bytes < full ? bytes : full;
}

/* Emits a forward op "<prefix>.<scope>.<name>" reading `reads` and writing `nout` new
 * tensors (named <scope>.<name>, or <scope>.<name>.<out_names[i]> when given), and opens its
 * tape entry in training. Returns false after a failure. */
static bool fwd_op(mb_net *n, const char *prefix, const char *name, const char *kind, double flops,
                   int32_t nr, const ref *reads, int32_t nout, const int64_t *out_numel,
                   const char *const *out_names, mb_tensor *outs) {
  if (n->failed) return false;
  char full[MB_NAME_MAX], opname[MB_NAME_MAX + 8];
  if (!full_name(n, full, name)) return false;
  bool rg = false;
  for (int32_t i = 0; i < nr; i++) {
    if (!valid(n, reads[i].t)) return false;
    rg |= n->t[reads[i].t].requires_grad;
  }
  snprintf(opname, sizeof opname, "%s.%s", prefix, full);
  int32_t op = op_new(n, opname, kind, flops);
  for (int32_t i = 0; i < nr; i++)
    use(n, op, reads[i].t, ref_bytes(n, reads[i].t, reads[i].bytes), 0);
  for (int32_t i = 0; i < nout; i++) {
    char oname[MB_NAME_MAX];
    if (out_names) {
      int w = snprintf(oname, NAME_ROOM, "%s.%s", full, out_names[i]);
      if (w < 0 || w >= NAME_ROOM) {
        fail(n, "name '%s.%s' too long", full, out_names[i]);
        return false;
      }
    } else {
      memcpy(oname, full, sizeof oname);
    }
    outs[i] = tensor_new(n, oname, out_numel[i], n->dt, T_ACT);
    if (outs[i] < 0) return false;
    n->t[outs[i]].requires_grad = n->training && rg;
    use(n, op, outs[i], 0, tbytes(n, outs[i]));
  }
  if (!n->training || n->failed) return !n->failed;
  if (!grow(n, (void **)&n->tape, &n->ctape, (int64_t)n->ntape + 1, sizeof *n->tape)) return false;
  if (!grow(n, (void **)&n->ints, &n->cints, (int64_t)n->nints + nout, sizeof *n->ints))
    return false;
  tentry *e = &n->tape[n->ntape];
  e->name = strdup(full);
  if (!e->name) {
    fail(n, "out of memory");
    return false;
  }
  n->ntape++;
  e->o0 = n->nints;
  e->no = nout;
  e->b0 = n->nbops;
  e->nb = 0;
  for (int32_t i = 0; i < nout; i++) n->ints[n->nints++] = outs[i];
  return true;
}

static mb_tensor fwd1(mb_net *n, const char *name, const char *kind, double flops, int32_t nr,
                      const ref *reads, int64_t out_numel) {
  mb_tensor y = MB_NO_TENSOR;
  if (!fwd_op(n, "fwd", name, kind, flops, nr, reads, 1, &out_numel, NULL, &y)) return MB_NO_TENSOR;
  return y;
}

/* Records a backward op of the last tape entry: reads `reads`, writes the gradients of
 * `writes` (those that require one). Training only. */
static void bwd(mb_net *n, const char *suffix, const char *kind, double flops, int32_t nr,
                const ref *reads, int32_t nw, const mb_tensor *writes, bool alias) {
  if (!n->training || n->failed || n->ntape == 0) return;
  if (!grow(n, (void **)&n->bops, &n->cbops, (int64_t)n->nbops + 1, sizeof *n->bops)) return;
  if (!grow(n, (void **)&n->refs, &n->crefs, (int64_t)n->nrefs + nr, sizeof *n->refs)) return;
  if (!grow(n, (void **)&n->ints, &n->cints, (int64_t)n->nints + nw, sizeof *n->ints)) return;
  bop *b = &n->bops[n->nbops++];
  snprintf(b->suffix, sizeof b->suffix, "%s", suffix);
  b->kind = kind;
  b->flops = flops;
  b->alias = alias;
  b->r0 = n->nrefs;
  b->nr = nr;
  for (int32_t i = 0; i < nr; i++) n->refs[n->nrefs++] = reads[i];
  b->w0 = n->nints;
  b->nw = nw;
  for (int32_t i = 0; i < nw; i++) n->ints[n->nints++] = writes[i];
  n->tape[n->ntape - 1].nb++;
}

/* ---- layers ---- */

/* The shapes of a linear layer's input, weight and output; false after a failure. */
static bool linear_shapes(mb_net *n, const char *name, int64_t rows, int64_t in, int64_t out,
                          shape *xs, shape *ws, shape *ys) {
  *xs = (shape){2, {"rows", "in"}, {rows, in}, 0};
  *ws = (shape){2, {"in", "out"}, {in, out}, 0};
  *ys = (shape){2, {"rows", "out"}, {rows, out}, 0};
  return shape_ok(n, "linear", name, xs) && shape_ok(n, "linear", name, ws) &&
         shape_ok(n, "linear", name, ys);
}

static mb_tensor linear_impl(mb_net *n, const char *name, mb_tensor x, mb_tensor w, mb_tensor bias,
                             int64_t rows, int64_t in, int64_t out) {
  if (!valid(n, x) || !valid(n, w)) return MB_NO_TENSOR;
  shape xs, ws, ys;
  if (!linear_shapes(n, name, rows, in, out, &xs, &ws, &ys) ||
      !has_shape(n, "linear", name, "x", x, &xs) || !has_shape(n, "linear", name, "w", w, &ws))
    return MB_NO_TENSOR;
  double prod = 2.0 * (double)rows * (double)in * (double)out;
  double bflops = bias >= 0 ? (double)rows * (double)out : 0.0;
  ref reads[3] = {R(x), R(w), R(bias)};
  mb_tensor y = fwd1(n, name, "dot", prod + bflops, bias >= 0 ? 3 : 2, reads, rows * out);
  if (y < 0) return y;
  bwd(n, "dx", "dot", prod, 2, (ref[]){G(y), R(w)}, 1, &x, false);
  bwd(n, "dw", "dot", prod + bflops, 2, (ref[]){G(y), R(x)}, bias >= 0 ? 2 : 1,
      (mb_tensor[]){w, bias}, false);
  return y;
}

mb_tensor mb_l_linear(mb_net *n, const char *name, mb_tensor x, int64_t rows, int64_t in,
                      int64_t out, bool bias) {
  shape xs, ws, ys;
  if (!valid(n, x) || !linear_shapes(n, name, rows, in, out, &xs, &ws, &ys)) return MB_NO_TENSOR;
  char wname[MB_NAME_MAX];
  if (!sub_name(n, wname, name, "w")) return MB_NO_TENSOR;
  mb_tensor w = mb_net_weight(n, wname, ws.numel);
  mb_tensor b = MB_NO_TENSOR;
  if (bias) {
    if (!sub_name(n, wname, name, "b")) return MB_NO_TENSOR;
    b = mb_net_weight(n, wname, out);
  }
  return linear_impl(n, name, x, w, b, rows, in, out);
}

mb_tensor mb_l_linear_w(mb_net *n, const char *name, mb_tensor x, mb_tensor w, int64_t rows,
                        int64_t in, int64_t out) {
  return linear_impl(n, name, x, w, MB_NO_TENSOR, rows, in, out);
}

mb_tensor mb_l_matmul(mb_net *n, const char *name, mb_tensor a, mb_tensor b, int64_t batch,
                      int64_t m, int64_t k, int64_t nn) {
  if (!valid(n, a) || !valid(n, b)) return MB_NO_TENSOR;
  shape as = {3, {"batch", "m", "k"}, {batch, m, k}, 0};
  shape bs = {3, {"batch", "k", "n"}, {batch, k, nn}, 0};
  shape ys = {3, {"batch", "m", "n"}, {batch, m, nn}, 0};
  if (!shape_ok(n, "matmul", name, &as) || !shape_ok(n, "matmul", name, &bs) ||
      !shape_ok(n, "matmul", name, &ys) || !has_shape(n, "matmul", name, "a", a, &as))
    return MB_NO_TENSOR;
  /* b may hold batch / g matrices, each shared by g consecutive products (grouped-query
   * attention's k and v) */
  int64_t nb = n->t[b].numel, kn = k * nn;
  if (nb != bs.numel && (nb % kn || batch % (nb / kn))) {
    char text[256];
    shape_text(&bs, text, sizeof text);
    fail(n,
         "generator bug: matmul '%s%s%s': b ('%s') has %lld elements, expected %s = %lld "
         "(or a divisor of batch times k x n)",
         SCOPED(name), n->t[b].name, (long long)nb, text, (long long)bs.numel);
    return MB_NO_TENSOR;
  }
  double prod = 2.0 * (double)batch * (double)m * (double)k * (double)nn;
  mb_tensor y = fwd1(n, name, "dot", prod, 2, (ref[]){R(a), R(b)}, ys.numel);
  if (y < 0) return y;
  bwd(n, "da", "dot", prod, 2, (ref[]){G(y), R(b)}, 1, &a, false);
  bwd(n, "db", "dot", prod, 2, (ref[]){G(y), R(a)}, 1, &b, false);
  return y;
}

mb_tensor mb_l_conv2d(mb_net *n, const char *name, mb_tensor x, const mb_conv_cfg *c, int64_t *oh,
                      int64_t *ow) {
  if (!valid(n, x)) return MB_NO_TENSOR;
  const char *L = "convolution";
  if (c->groups < 0) {
    fail(n, "convolution '%s%s%s': groups = %lld (must be >= 0; 0 means 1)", SCOPED(name),
         (long long)c->groups);
    return MB_NO_TENSOR;
  }
  int64_t g = c->groups > 0 ? c->groups : 1;
  shape xs = {4, {"batch", "h", "w", "cin"}, {c->batch, c->h, c->w, c->cin}, 0};
  if (!shape_ok(n, L, name, &xs) || !positive(n, L, name, "cout", c->cout) ||
      !positive(n, L, name, "stride", c->stride))
    return MB_NO_TENSOR;
  if (c->cin % g || c->cout % g) {
    fail(n, "convolution '%s%s%s': groups = %lld does not divide %s = %lld", SCOPED(name),
         (long long)g, c->cin % g ? "cin" : "cout", (long long)(c->cin % g ? c->cin : c->cout));
    return MB_NO_TENSOR;
  }
  shape ks = {4, {"kh", "kw", "cin / groups", "cout"}, {c->kh, c->kw, c->cin / g, c->cout}, 0};
  if (!shape_ok(n, L, name, &ks)) return MB_NO_TENSOR;
  if (!c->transposed && (c->pad < 0 || c->pad >= c->kh || c->pad >= c->kw)) {
    fail(n, "convolution '%s%s%s': pad = %lld (must be >= 0 and less than the %lldx%lld kernel)",
         SCOPED(name), (long long)c->pad, (long long)c->kh, (long long)c->kw);
    return MB_NO_TENSOR;
  }
  if (!has_shape(n, L, name, "x", x, &xs)) return MB_NO_TENSOR;
  int64_t h, w;
  if (c->transposed) {
    h = c->h <= MAX_NUMEL / c->stride ? c->h * c->stride : MAX_NUMEL;
    w = c->w <= MAX_NUMEL / c->stride ? c->w * c->stride : MAX_NUMEL;
  } else {
    h = mb_window_out(c->h, c->kh, c->stride, c->pad);
    w = mb_window_out(c->w, c->kw, c->stride, c->pad);
  }
  if (h <= 0 || w <= 0) {
    fail(n,
         "convolution '%s%s%s': input %lldx%lldx%lld does not fit a %lldx%lld "
         "kernel (image too small for the network?)",
         SCOPED(name), (long long)c->h, (long long)c->w, (long long)c->cin, (long long)c->kh,
         (long long)c->kw);
    return MB_NO_TENSOR;
  }
  shape ys = {4, {"batch", "output h", "output w", "cout"}, {c->batch, h, w, c->cout}, 0};
  if (!shape_ok(n, L, name, &ys)) return MB_NO_TENSOR;
  /* MACs: every output (every input for a transposed conv) times the kernel volume. */
  double pixels = c->transposed ? (double)c->h * (double)c->w : (double)h * (double)w;
  double other = c->transposed ? (double)(c->cout / g) * (double)c->cin
                               : (double)(c->cin / g) * (double)c->cout;
  double prod = 2.0 * (double)c->batch * pixels * other * (double)c->kh * (double)c->kw;
  int64_t out_numel = ys.numel;
  double bflops = c->bias ? (double)out_numel : 0.0;
  char wname[MB_NAME_MAX];
  if (!sub_name(n, wname, name, "w")) return MB_NO_TENSOR;
  mb_tensor wt = mb_net_weight(n, wname, ks.numel);
  mb_tensor bias = MB_NO_TENSOR;
  if (c->bias) {
    if (!sub_name(n, wname, name, "b")) return MB_NO_TENSOR;
    bias = mb_net_weight(n, wname, c->cout);
  }
  ref reads[3] = {R(x), R(wt), R(bias)};
  mb_tensor y = fwd1(n, name, "convolution", prod + bflops, c->bias ? 3 : 2, reads, out_numel);
  if (y < 0) return y;
  bwd(n, "dx", "convolution", prod, 2, (ref[]){G(y), R(wt)}, 1, &x, false);
  bwd(n, "dw", "convolution", prod + bflops, 2, (ref[]){G(y), R(x)}, c->bias ? 2 : 1,
      (mb_tensor[]){wt, bias}, false);
  if (oh) *oh = h;
  if (ow) *ow = w;
  return y;
}

mb_tensor mb_l_norm(mb_net *n, const char *name, mb_tensor x, int64_t rows, int64_t features,
                    mb_norm kind) {
  if (!valid(n, x)) return MB_NO_TENSOR;
  static const char *const kinds[] = {"layernorm", "rmsnorm", "batchnorm"};
  static const char *const grad_kinds[] = {"layernorm-grad", "rmsnorm-grad", "batchnorm-grad"};
  shape xs = {2, {"rows", "features"}, {rows, features}, 0};
  if (!enum_ok(n, "norm", name, "kind", (int)kind, 3) || !shape_ok(n, "norm", name, &xs) ||
      !has_shape(n, "norm", name, "x", x, &xs))
    return MB_NO_TENSOR;
  char wname[MB_NAME_MAX];
  mb_tensor p[4] = {MB_NO_TENSOR, MB_NO_TENSOR, MB_NO_TENSOR, MB_NO_TENSOR};
  int32_t np = 0;
  if (!sub_name(n, wname, name, "scale")) return MB_NO_TENSOR;
  p[np++] = mb_net_weight(n, wname, features);
  if (kind != MB_NORM_RMS) {
    if (!sub_name(n, wname, name, "shift")) return MB_NO_TENSOR;
    p[np++] = mb_net_weight(n, wname, features);
  }
  int32_t ntrain = np; /* running statistics are read in inference, not trained */
  if (kind == MB_NORM_BATCH && !n->training) {
    if (!sub_name(n, wname, name, "mean")) return MB_NO_TENSOR;
    p[np++] = mb_net_input(n, wname, features, n->dt);
    if (!sub_name(n, wname, name, "var")) return MB_NO_TENSOR;
    p[np++] = mb_net_input(n, wname, features, n->dt);
  }
  double e = (double)rows * (double)features;
  double per = kind == MB_NORM_LAYER ? FL_LAYERNORM
               : kind == MB_NORM_RMS ? FL_RMSNORM
               : n->training         ? FL_BATCHNORM_TRAIN
                                     : FL_BATCHNORM_INFER;
  ref reads[5] = {R(x), R(p[0]), R(p[1]), R(p[2]), R(p[3])};
  mb_tensor y = fwd1(n, name, kinds[kind], per * e, 1 + np, reads, xs.numel);
  if (y < 0) return y;
  bwd(n, "dx", grad_kinds[kind], FL_NORM_DX * e, 3, (ref[]){G(y), R(x), R(p[0])}, 1, &x, false);
  bwd(n, "dw", "reduce", FL_NORM_DW * e, 2, (ref[]){G(y), R(x)}, ntrain, p, false);
  return y;
}

mb_tensor mb_l_act(mb_net *n, const char *name, mb_tensor x, mb_act act) {
  if (!valid(n, x)) return MB_NO_TENSOR;
  static const char *const kinds[] = {"relu", "relu6", "gelu", "silu", "logistic", "tanh"};
  static const char *const grad_kinds[] = {"relu-grad", "relu6-grad",    "gelu-grad",
                                           "silu-grad", "logistic-grad", "tanh-grad"};
  static const int fl[] = {1, 2, 8, 4, 4, 4};
  static const int fl_dx[] = {1, 2, 12, 6, 3, 3};
  if (!enum_ok(n, "activation", name, "act", (int)act, 6)) return MB_NO_TENSOR;
  double e = (double)n->t[x].numel;
  mb_tensor y = fwd1(n, name, kinds[act], fl[act] * e, 1, (ref[]){R(x)}, n->t[x].numel);
  if (y < 0) return y;
  /* sigmoid and tanh differentiate from their output, the others from their input */
  mb_tensor saved = act == MB_ACT_SIGMOID || act == MB_ACT_TANH ? y : x;
  bwd(n, "dx", grad_kinds[act], fl_dx[act] * e, 2, (ref[]){G(y), R(saved)}, 1, &x, false);
  return y;
}

mb_tensor mb_l_swiglu(mb_net *n, const char *name, mb_tensor gate, mb_tensor up) {
  if (!valid(n, gate) || !valid(n, up)) return MB_NO_TENSOR;
  if (n->t[up].numel != n->t[gate].numel) {
    fail(n, "generator bug: swiglu '%s%s%s': up ('%s') has %lld elements, gate ('%s') %lld",
         SCOPED(name), n->t[up].name, (long long)n->t[up].numel, n->t[gate].name,
         (long long)n->t[gate].numel);
    return MB_NO_TENSOR;
  }
  double e = (double)n->t[gate].numel;
  mb_tensor y =
      fwd1(n, name, "swiglu", FL_SWIGLU * e, 2, (ref[]){R(gate), R(up)}, n->t[gate].numel);
  if (y < 0) return y;
  bwd(n, "dx", "swiglu-grad", FL_SWIGLU_DX * e, 3, (ref[]){G(y), R(gate), R(up)}, 2,
      (mb_tensor[]){gate, up}, false);
  return y;
}

mb_tensor mb_l_rope(mb_net *n, const char *name, mb_tensor x, mb_tensor table) {
  if (!valid(n, x) || !valid(n, table)) return MB_NO_TENSOR;
  if (!divides(n, "rope", name, "table", table, x)) return MB_NO_TENSOR;
  double e = (double)n->t[x].numel;
  mb_tensor y = fwd1(n, name, "rope", FL_ROPE * e, 2, (ref[]){R(x), R(table)}, n->t[x].numel);
  if (y < 0) return y;
  bwd(n, "dx", "rope", FL_ROPE * e, 2, (ref[]){G(y), R(table)}, 1, &x, false);
  return y;
}

mb_tensor mb_l_softmax(mb_net *n, const char *name, mb_tensor x, int64_t rows, int64_t cols) {
  if (!valid(n, x)) return MB_NO_TENSOR;
  shape xs = {2, {"rows", "cols"}, {rows, cols}, 0};
  if (!shape_ok(n, "softmax", name, &xs) || !has_shape(n, "softmax", name, "x", x, &xs))
    return MB_NO_TENSOR;
  double e = (double)rows * (double)cols;
  mb_tensor y = fwd1(n, name, "softmax", FL_SOFTMAX * e, 1, (ref[]){R(x)}, xs.numel);
  if (y < 0) return y;
  /* the backward of softmax needs its output: attention probabilities stay live */
  bwd(n, "dx", "softmax-grad", FL_SOFTMAX_DX * e, 2, (ref[]){G(y), R(y)}, 1, &x, false);
  return y;
}

mb_tensor mb_l_add(mb_net *n, const char *name, mb_tensor a, mb_tensor b) {
  if (!valid(n, a) || !valid(n, b)) return MB_NO_TENSOR;
  int64_t na = n->t[a].numel, nb = n->t[b].numel;
  if (nb > na || na % nb) {
    fail(n, "generator bug: add '%s%s%s': %lld elements do not broadcast to %lld", SCOPED(name),
         (long long)nb, (long long)na);
    return MB_NO_TENSOR;
  }
  mb_tensor y = fwd1(n, name, "add", (double)na, 2, (ref[]){R(a), R(b)}, na);
  if (y < 0) return y;
  bwd(n, "da", "add", 0, 1, (ref[]){G(y)}, 1, &a, true);
  if (nb == na)
    bwd(n, "db", "add", 0, 1, (ref[]){G(y)}, 1, &b, true);
  else
    bwd(n, "db", "reduce", (double)na, 1, (ref[]){G(y)}, 1, &b, false);
  return y;
}

mb_tensor mb_l_scale(mb_net *n, const char *name, mb_tensor x, mb_tensor s) {
  if (!valid(n, x) || !valid(n, s)) return MB_NO_TENSOR;
  if (!divides(n, "scale", name, "s", s, x)) return MB_NO_TENSOR;
  double e = (double)n->t[x].numel;
  mb_tensor y = fwd1(n, name, "multiply", e, 2, (ref[]){R(x), R(s)}, n->t[x].numel);
  if (y < 0) return y;
  bwd(n, "dx", "multiply", e, 2, (ref[]){G(y), R(s)}, 1, &x, false);
  bwd(n, "ds", "reduce", 2 * e, 2, (ref[]){G(y), R(x)}, 1, &s, false);
  return y;
}

mb_tensor mb_l_pool(mb_net *n, const char *name, mb_tensor x, mb_pool kind, int64_t batch,
                    int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad,
                    int64_t *oh, int64_t *ow) {
  if (!valid(n, x)) return MB_NO_TENSOR;
  const char *L = "pool";
  shape xs = {4, {"batch", "h", "w", "c"}, {batch, h, w, c}, 0};
  if (!enum_ok(n, L, name, "kind", (int)kind, 3) || !shape_ok(n, L, name, &xs) ||
      !has_shape(n, L, name, "x", x, &xs))
    return MB_NO_TENSOR;
  int64_t yh = 1, yw = 1;
  double flops = (double)batch * (double)c * (double)h * (double)w;
  if (kind != MB_POOL_GLOBAL_AVG) {
    if (!positive(n, L, name, "k", k) || !positive(n, L, name, "stride", stride))
      return MB_NO_TENSOR;
    if (pad < 0 || pad >= k) {
      fail(n, "pool '%s%s%s': pad = %lld (must be >= 0 and less than the %lldx%lld window)",
           SCOPED(name), (long long)pad, (long long)k, (long long)k);
      return MB_NO_TENSOR;
    }
    yh = mb_window_out(h, k, stride, pad);
    yw = mb_window_out(w, k, stride, pad);
    if (yh <= 0 || yw <= 0) {
      fail(n, "pool '%s%s%s': input %lldx%lld smaller than the %lldx%lld window", SCOPED(name),
           (long long)h, (long long)w, (long long)k, (long long)k);
      return MB_NO_TENSOR;
    }
    double kk = (double)k * (double)k; /* k * k in int64 could overflow */
    flops = (double)batch * (double)c * (double)yh * (double)yw * kk;
  }
  shape ys = {4, {"batch", "output h", "output w", "c"}, {batch, yh, yw, c}, 0};
  if (!shape_ok(n, L, name, &ys)) return MB_NO_TENSOR;
  mb_tensor y = fwd1(n, name, "reduce-window", flops, 1, (ref[]){R(x)}, ys.numel);
  if (y < 0) return y;
  double e = (double)n->t[x].numel;
  if (kind == MB_POOL_MAX)
    bwd(n, "dx", "select-and-scatter", e, 2, (ref[]){G(y), R(x)}, 1, &x, false);
  else
    bwd(n, "dx", "reduce-window-grad", e, 1, (ref[]){G(y)}, 1, &x, false);
  if (oh) *oh = yh;
  if (ow) *ow = yw;
  return y;
}

mb_tensor mb_l_embedding(mb_net *n, const char *name, mb_tensor ids, mb_tensor table,
                         int64_t lookups, int64_t dim) {
  if (!valid(n, ids) || !valid(n, table)) return MB_NO_TENSOR;
  const char *L = "embedding";
  shape ys = {2, {"lookups", "dim"}, {lookups, dim}, 0};
  if (!shape_ok(n, L, name, &ys) || !has_dtype(n, L, name, "ids", ids, MB_DTYPE_S32))
    return MB_NO_TENSOR;
  if (n->t[ids].numel < lookups) {
    fail(n,
         "generator bug: embedding '%s%s%s': ids ('%s') has %lld elements, fewer than lookups = "
         "%lld",
         SCOPED(name), n->t[ids].name, (long long)n->t[ids].numel, (long long)lookups);
    return MB_NO_TENSOR;
  }
  if (n->t[table].numel % dim) {
    fail(n,
         "generator bug: embedding '%s%s%s': table ('%s') has %lld elements, not rows of dim = "
         "%lld",
         SCOPED(name), n->t[table].name, (long long)n->t[table].numel, (long long)dim);
    return MB_NO_TENSOR;
  }
  int64_t ids_bytes = lookups * mb_dtype_size(n->t[ids].dt);
  int64_t rows_bytes = ys.numel * mb_dtype_size(n->t[table].dt);
  mb_tensor y =
      fwd1(n, name, "gather", 0, 2, (ref[]){RB(ids, ids_bytes), RB(table, rows_bytes)}, ys.numel);
  if (y < 0) return y;
  bwd(n, "dw", "scatter", (double)lookups * (double)dim, 2, (ref[]){G(y), RB(ids, ids_bytes)}, 1,
      &table, false);
  return y;
}

mb_tensor mb_l_concat(mb_net *n, const char *name, const mb_tensor *parts, int32_t k) {
  if (n->failed) return MB_NO_TENSOR;
  if (k <= 0 || !parts) {
    fail(n, "generator bug: concat '%s%s%s': k = %d parts (must be > 0)", SCOPED(name), k);
    return MB_NO_TENSOR;
  }
  ref *reads = malloc((size_t)k * sizeof *reads);
  if (!reads) {
    fail(n, "out of memory");
    return MB_NO_TENSOR;
  }
  int64_t total = 0;
  for (int32_t i = 0; i < k; i++) {
    if (!valid(n, parts[i])) {
      free(reads);
      return MB_NO_TENSOR;
    }
    reads[i] = R(parts[i]);
    if (n->t[parts[i]].numel > MAX_NUMEL - total) {
      fail(n, "concat '%s%s%s': parts 0..%d: more than %lld elements", SCOPED(name), i,
           (long long)MAX_NUMEL);
      free(reads);
      return MB_NO_TENSOR;
    }
    total += n->t[parts[i]].numel;
  }
  mb_tensor y = fwd1(n, name, "concatenate", 0, k, reads, total);
  free(reads);
  if (y < 0) return y;
  bwd(n, "dparts", "slice", 0, 1, (ref[]){G(y)}, k, parts, false);
  return y;
}

mb_tensor mb_l_slice(mb_net *n, const char *name, mb_tensor x, int64_t out_numel) {
  if (!valid(n, x) || !positive(n, "slice", name, "out_numel", out_numel)) return MB_NO_TENSOR;
  if (out_numel > n->t[x].numel) {
    fail(n, "slice '%s%s%s': out_numel = %lld is more than the %lld elements of x ('%s')",
         SCOPED(name), (long long)out_numel, (long long)n->t[x].numel, n->t[x].name);
    return MB_NO_TENSOR;
  }
  int64_t bytes = out_numel * mb_dtype_size(n->t[x].dt);
  mb_tensor y = fwd1(n, name, "slice", 0, 1, (ref[]){RB(x, bytes)}, out_numel);
  if (y < 0) return y;
  bwd(n, "dx", "pad", 0, 1, (ref[]){G(y)}, 1, &x, false);
  return y;
}

mb_tensor mb_l_gather2(mb_net *n, const char *name, mb_tensor a, mb_tensor b, int64_t out_numel) {
  if (!valid(n, a) || !valid(n, b) || !positive(n, "gather2", name, "out_numel", out_numel))
    return MB_NO_TENSOR;
  mb_tensor y = fwd1(n, name, "gather", 0, 2, (ref[]){R(a), R(b)}, out_numel);
  if (y < 0) return y;
  bwd(n, "dab", "scatter", (double)out_numel, 1, (ref[]){G(y)}, 2, (mb_tensor[]){a, b}, false);
  return y;
}

mb_lstm_weights mb_l_lstm_weights(mb_net *n, const char *name, int64_t in, int64_t hidden) {
  mb_lstm_weights wt = {MB_NO_TENSOR, MB_NO_TENSOR, MB_NO_TENSOR, in, hidden};
  shape xs = {3, {"in", "4", "hidden"}, {in, 4, hidden}, 0};
  shape hs = {3, {"hidden", "4", "hidden"}, {hidden, 4, hidden}, 0};
  if (!shape_ok(n, "lstm", name, &xs) || !shape_ok(n, "lstm", name, &hs)) return wt;
  char wname[MB_NAME_MAX];
  if (!sub_name(n, wname, name, "wx")) return wt;
  wt.wx = mb_net_weight(n, wname, xs.numel);
  if (!sub_name(n, wname, name, "wh")) return wt;
  wt.wh = mb_net_weight(n, wname, hs.numel);
  if (!sub_name(n, wname, name, "b")) return wt;
  wt.b = mb_net_weight(n, wname, 4 * hidden);
  return wt;
}

void mb_l_lstm_cell(mb_net *n, const char *name, const mb_lstm_weights *wt, mb_tensor x,
                    mb_tensor h, mb_tensor c, int64_t batch, mb_tensor *h_out, mb_tensor *c_out) {
  *h_out = *c_out = MB_NO_TENSOR;
  if (!valid(n, x) || !valid(n, h) || !valid(n, c) || !valid(n, wt->wx) || !valid(n, wt->wh) ||
      !valid(n, wt->b))
    return;
  const char *L = "lstm cell";
  shape xs = {2, {"batch", "in"}, {batch, wt->in}, 0};
  shape hs = {2, {"batch", "hidden"}, {batch, wt->hidden}, 0};
  shape gs = {3, {"batch", "4", "hidden"}, {batch, 4, wt->hidden}, 0};
  if (!shape_ok(n, L, name, &xs) || !shape_ok(n, L, name, &hs) || !shape_ok(n, L, name, &gs) ||
      !has_shape(n, L, name, "x", x, &xs) || !has_shape(n, L, name, "h", h, &hs) ||
      !has_shape(n, L, name, "c", c, &hs))
    return;
  int64_t hid = wt->hidden;
  double prod = 2.0 * (double)batch * (double)(wt->in + hid) * (double)(4 * hid);
  double bflops = (double)batch * (double)(4 * hid);
  char gname[MB_NAME_MAX];
  if (!sub_name(n, gname, name, "gates")) return;
  mb_tensor gates = fwd1(n, gname, "dot", prod + bflops, 5,
                         (ref[]){R(x), R(h), R(wt->wx), R(wt->wh), R(wt->b)}, batch * 4 * hid);
  if (gates < 0) return;
  bwd(n, "dxh", "dot", prod, 3, (ref[]){G(gates), R(wt->wx), R(wt->wh)}, 2, (mb_tensor[]){x, h},
      false);
  bwd(n, "dw", "dot", prod + bflops, 3, (ref[]){G(gates), R(x), R(h)}, 3,
      (mb_tensor[]){wt->wx, wt->wh, wt->b}, false);
  mb_tensor outs[2];
  static const char *const out_names[] = {"h", "c"};
  int64_t numel[2] = {batch * hid, batch * hid};
  if (!fwd_op(n, "fwd", name, "lstm-cell", FL_LSTM_CELL * (double)(batch * hid), 2,
              (ref[]){R(gates), R(c)}, 2, numel, out_names, outs))
    return;
  bwd(n, "dgates", "lstm-cell-grad", FL_LSTM_CELL_DX * (double)(batch * hid), 5,
      (ref[]){G(outs[0]), G(outs[1]), R(gates), R(c), R(outs[1])}, 2, (mb_tensor[]){gates, c},
      false);
  *h_out = outs[0];
  *c_out = outs[1];
}

mb_tensor mb_l_spmm(mb_net *n, const char *name, mb_tensor adj, mb_tensor x, int64_t nodes,
                    int64_t nnz, int64_t dim) {
  if (!valid(n, adj) || !valid(n, x)) return MB_NO_TENSOR;
  const char *L = "spmm";
  shape xs = {2, {"nodes", "dim"}, {nodes, dim}, 0};
  if (!shape_ok(n, L, name, &xs) || !positive(n, L, name, "nnz", nnz) ||
      !has_shape(n, L, name, "x", x, &xs) || !has_dtype(n, L, name, "adj", adj, MB_DTYPE_S32))
    return MB_NO_TENSOR;
  /* CSR: nodes + 1 row pointers, nnz column indices and nnz values */
  if (nnz > (MAX_NUMEL - nodes - 1) / 2 || n->t[adj].numel != nodes + 1 + 2 * nnz) {
    fail(n,
         "generator bug: spmm '%s%s%s': adj ('%s') has %lld elements, expected nodes + 1 + 2 x "
         "nnz = %lld + 1 + 2 x %lld",
         SCOPED(name), n->t[adj].name, (long long)n->t[adj].numel, (long long)nodes,
         (long long)nnz);
    return MB_NO_TENSOR;
  }
  double prod = 2.0 * (double)nnz * (double)dim;
  mb_tensor y = fwd1(n, name, "spmm", prod, 2, (ref[]){R(adj), R(x)}, xs.numel);
  if (y < 0) return y;
  bwd(n, "dx", "spmm", prod, 2, (ref[]){G(y), R(adj)}, 1, &x, false);
  return y;
}

mb_tensor mb_l_attention(mb_net *n, const char *name, mb_tensor x, mb_tensor mem,
                         const mb_attn_cfg *c) {
  if (!valid(n, x)) return MB_NO_TENSOR;
  mb_tensor src = mem >= 0 ? mem : x;
  int64_t kvh = c->kv_heads > 0 ? c->kv_heads : c->heads;
  int64_t hd = c->head_dim;
  int64_t qrows = c->batch * c->q_len, kvrows = c->batch * c->kv_len;
  mb_net_scope_push(n, "%s", name);
  mb_tensor q = mb_l_linear(n, "q", x, qrows, c->d_model, c->heads * hd, c->bias);
  mb_tensor k = mb_l_linear(n, "k", src, kvrows, c->d_model, kvh * hd, c->bias);
  mb_tensor v = mb_l_linear(n, "v", src, kvrows, c->d_model, kvh * hd, c->bias);
  if (c->rope_table >= 0) {
    q = mb_l_rope(n, "q_rope", q, c->rope_table);
    k = mb_l_rope(n, "k_rope", k, c->rope_table);
  }
  /* head splitting and transposes are layouts, not ops; GQA broadcasts k, v over groups */
  int64_t bh = c->batch * c->heads;
  mb_tensor s = mb_l_matmul(n, "scores", q, k, bh, c->q_len, hd, c->kv_len);
  mb_tensor p = mb_l_softmax(n, "probs", s, bh * c->q_len, c->kv_len);
  mb_tensor ctx = mb_l_matmul(n, "context", p, v, bh, c->q_len, c->kv_len, hd);
  mb_tensor y = mb_l_linear(n, "out", ctx, qrows, c->heads * hd, c->d_model, c->bias);
  mb_net_scope_pop(n);
  return y;
}

mb_tensor mb_l_mlp(mb_net *n, const char *name, mb_tensor x, int64_t rows, int64_t d, int64_t ff,
                   mb_act act, bool gated, bool bias) {
  mb_net_scope_push(n, "%s", name);
  mb_tensor h;
  if (gated) {
    mb_tensor g = mb_l_linear(n, "gate", x, rows, d, ff, bias);
    mb_tensor u = mb_l_linear(n, "up", x, rows, d, ff, bias);
    h = mb_l_swiglu(n, "act", g, u);
  } else {
    h = mb_l_act(n, "act", mb_l_linear(n, "fc1", x, rows, d, ff, bias), act);
  }
  mb_tensor y = mb_l_linear(n, gated ? "down" : "fc2", h, rows, ff, d, bias);
  mb_net_scope_pop(n);
  return y;
}

void mb_l_head(mb_net *n, mb_tensor logits, int64_t rows, int64_t classes) {
  if (!valid(n, logits)) return;
  shape ls = {2, {"rows", "classes"}, {rows, classes}, 0};
  if (!shape_ok(n, "head", "xent", &ls) || !has_shape(n, "head", "xent", "logits", logits, &ls))
    return;
  if (!n->training) {
    mb_net_output(n, logits);
    return;
  }
  mb_tensor labels = mb_net_input(n, "labels", rows, MB_DTYPE_S32);
  if (labels < 0) return;
  const char *kind = classes == 1 ? "sigmoid-cross-entropy" : "softmax-cross-entropy";
  double e = (double)rows * (double)classes;
  mb_tensor loss = MB_NO_TENSOR;
  int64_t one = 1;
  mb_dtype saved = n->dt;
  n->dt = MB_DTYPE_F32; /* the loss is a f32 scalar */
  bool ok = fwd_op(n, "loss", "xent", kind, FL_XENT * e, 2, (ref[]){R(logits), R(labels)}, 1, &one,
                   NULL, &loss);
  n->dt = saved;
  if (!ok) return;
  n->t[loss].output = true;
  n->t[loss].grad = GRAD_SEED;
  bwd(n, "dlogits", classes == 1 ? "sigmoid-cross-entropy-grad" : "softmax-cross-entropy-grad",
      FL_XENT_DX * e, 2, (ref[]){R(logits), R(labels)}, 1, &logits, false);
}

/* ---- backward, Adam, buffers ---- */

static mb_tensor grad_new(mb_net *n, mb_tensor t) {
  tinfo *ti = &n->t[t];
  char name[MB_NAME_MAX];
  int32_t v = ti->versions++;
  if (v == 0)
    snprintf(name, sizeof name, "grad.%s", ti->name);
  else
    snprintf(name, sizeof name, "grad.%s.%d", ti->name, v);
  int64_t numel = ti->touched > 0 ? ti->touched : ti->numel;
  return tensor_new(n, name, numel, ti->dt, T_GRAD);
}

static void emit_bop(mb_net *n, const tentry *e, const bop *b) {
  int32_t ntarget = 0;
  double acc = 0;
  for (int32_t i = 0; i < b->nw; i++) {
    mb_tensor t = n->ints[b->w0 + i];
    if (t < 0 || !n->t[t].requires_grad) continue;
    ntarget++;
    if (n->t[t].grad >= 0) acc += (double)n->t[n->t[t].grad].numel;
  }
  if (ntarget == 0) return;
  char opname[2 * MB_NAME_MAX];
  snprintf(opname, sizeof opname, "bwd.%s.%s", e->name, b->suffix);
  if (b->alias) {
    /* y = a + b: the gradient of a is the gradient of y; an add only if a already has one */
    int32_t src = n->t[n->refs[b->r0].t].grad;
    mb_tensor t = n->ints[b->w0];
    if (src < 0) return;
    int32_t old = n->t[t].grad;
    if (old == GRAD_NONE) {
      n->t[t].grad = src;
      return;
    }
    int32_t op = op_new(n, opname, "add", (double)n->t[old].numel);
    mb_tensor g = grad_new(n, t);
    if (g < 0) return;
    use(n, op, old, tbytes(n, old), 0);
    use(n, op, src, tbytes(n, src), 0);
    use(n, op, g, 0, tbytes(n, g));
    n->t[t].grad = g;
    return;
  }
  int32_t op = op_new(n, opname, b->kind, b->flops + acc);
  for (int32_t i = 0; i < b->nr; i++) {
    const ref *r = &n->refs[b->r0 + i];
    if (r->t < 0) continue;
    mb_tensor t = r->grad ? n->t[r->t].grad : r->t;
    if (t < 0) continue; /* no gradient flows there (or the loss seed) */
    use(n, op, t, ref_bytes(n, t, r->grad ? 0 : r->bytes), 0);
  }
  for (int32_t i = 0; i < b->nw; i++) {
    mb_tensor t = n->ints[b->w0 + i];
    if (t < 0 || !n->t[t].requires_grad) continue;
    int32_t old = n->t[t].grad;
    mb_tensor g = grad_new(n, t);
    if (g < 0) return;
    if (old >= 0) use(n, op, old, tbytes(n, old), 0); /* accumulate: SSA, a new version */
    use(n, op, g, 0, tbytes(n, g));
    n->t[t].grad = g;
  }
}

static void emit_backward(mb_net *n) {
  for (int32_t i = n->ntape - 1; i >= 0 && !n->failed; i--) {
    const tentry *e = &n->tape[i];
    bool flows = false;
    for (int32_t o = 0; o < e->no; o++) flows |= n->t[n->ints[e->o0 + o]].grad != GRAD_NONE;
    if (!flows) continue;
    for (int32_t k = 0; k < e->nb && !n->failed; k++) emit_bop(n, e, &n->bops[e->b0 + k]);
  }
}

static void emit_adam(mb_net *n) {
  int32_t nt = n->nt; /* moments appended below are not weights */
  for (mb_tensor w = 0; w < nt && !n->failed; w++) {
    if (n->t[w].kind != T_WEIGHT || n->t[w].grad < 0) continue;
    char name[MB_NAME_MAX];
    snprintf(name, sizeof name, "adam_m.%s", n->t[w].name);
    mb_tensor m = tensor_new(n, name, n->t[w].numel, n->odt, T_MOMENT);
    snprintf(name, sizeof name, "adam_v.%s", n->t[w].name);
    mb_tensor v = tensor_new(n, name, n->t[w].numel, n->odt, T_MOMENT);
    snprintf(name, sizeof name, "adam.%s", n->t[w].name);
    int64_t upd = n->t[w].touched > 0 ? n->t[w].touched : n->t[w].numel;
    int32_t op = op_new(n, name, "adam", FL_ADAM * (double)upd);
    if (m < 0 || v < 0 || op < 0) return;
    int64_t pb = upd * mb_dtype_size(n->dt), ob = upd * mb_dtype_size(n->odt);
    mb_tensor g = n->t[w].grad;
    use(n, op, w, pb, pb);
    use(n, op, g, tbytes(n, g), 0);
    use(n, op, m, ob, ob);
    use(n, op, v, ob, ob);
  }
}

mb_workload *mb_net_finish(mb_net *n, mb_error *err) {
  if (n->training && !n->failed) {
    bool has_loss = false;
    for (int32_t i = 0; i < n->nt; i++) has_loss |= n->t[i].grad == GRAD_SEED;
    if (!has_loss) fail(n, "training workload without a loss (generator bug)");
    emit_backward(n);
    emit_adam(n);
  }
  int32_t nops = mb_builder_n_ops(n->b);
  for (int32_t i = 0; i < n->nt && !n->failed; i++) {
    const tinfo *ti = &n->t[i];
    if (ti->first < 0) {
      fail(n, "generator bug: tensor '%s' is never used", ti->name);
      break;
    }
    bool entry = ti->kind == T_INPUT || ti->kind == T_WEIGHT || ti->kind == T_MOMENT;
    /* trained weights and moments are live-out state, like outputs */
    bool live_out = ti->output || (n->training && (ti->kind == T_WEIGHT || ti->kind == T_MOMENT));
    int32_t start = entry ? 0 : ti->first;
    int32_t end = live_out ? nops - 1 : ti->last;
    if (mb_builder_add_buffer(n->b, ti->name, tbytes(n, i), start, end, entry || ti->output) != i)
      fail(n, "out of memory");
  }
  if (n->failed) {
    mb_fail(err, "model '%s': %s", n->name, n->fail_msg);
    mb_net_free(n);
    return NULL;
  }
  mb_workload_builder *b = n->b;
  n->b = NULL;
  mb_net_free(n);
  return mb_builder_finish(b, err);
}
