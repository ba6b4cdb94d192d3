/* Tests of the neural-network core (solvers/muzero/tensor, nn, adam).
 *
 * Gradient checks. Every layer, loss and a 5-step MuZero unroll are compared against central
 * finite differences of a float32 forward pass whose loss is summed in double. The scheme:
 *   - the perturbation actually applied is fl(x + h) - x (exact in double), not h;
 *   - the networks are piecewise smooth: ReLU signs and minmax's argmin/argmax select a smooth
 *     piece. The test fingerprints that activation pattern on every tape, and a difference is
 *     only taken when x - h, x and x + h (and x +- h/2) share the base point's pattern; the
 *     step is halved (from 1e-2 down to 1e-2/8, below which float noise would dominate) until
 *     they do, else the element is skipped and counted (at most 25% may be: the 5-step
 *     unroll has hundreds of ReLUs and skips ~11%; the single layers skip none). A kink is
 *     thus never inside a stencil, and a systematic error cannot hide among the skipped;
 *   - the Richardson combination (4 D(h/2) - D(h)) / 3 is compared to the analytic gradient
 *     with |fd - an| <= 1e-2 max(|fd|, |an|) + 1e-3 max(1, max |an|) (relative 1e-2 as asked,
 *     plus an absolute floor for gradients near 0 where float noise ~1e-4 dominates).
 * h = 1e-2 keeps float32 rounding noise (~1e-7 |L| / h) well below the tolerance while the
 * O(h^2) truncation error is ~1e-4. MuZero's scale_gradient(x, s) is not the derivative of
 * any function; it is the derivative of s x + (1 - s) stop_gradient(x), so the unroll's
 * reference loss feeds the dynamics with s x(theta) + (1 - s) x(theta_0), x(theta_0) frozen
 * at the unperturbed point: equal value there, and the derivative the scaled backprop must
 * produce. The batch-1 forward through sgemv is checked against sgemm's within float rounding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adam.h"
#include "nn.h"
#include "support.h"
#include "tensor.h"

#define CHECK(call)                                     \
  do {                                                  \
    mb_error e_ = {{0}};                                \
    mb_error *err = &e_;                                \
    if (!(call)) fail_msg("%s: %s", #call, e_.message); \
    (void)err;                                          \
  } while (0)

static void fill_uniform(mb_tensor *t, mb_rng *rng, float lo, float hi) {
  for (int64_t i = 0; i < mb_tensor_size(t); i++)
    t->data[i] = lo + (hi - lo) * (float)mb_rng_uniform(rng);
}

/* Values in +-[0.1, 1]: no ReLU kink within h = 1e-2 of an input. */
static void fill_away_from_zero(mb_tensor *t, mb_rng *rng) {
  for (int64_t i = 0; i < mb_tensor_size(t); i++) {
    float v = 0.1f + 0.9f * (float)mb_rng_uniform(rng);
    t->data[i] = mb_rng_uniform(rng) < 0.5 ? -v : v;
  }
}

/* ---------------------------------------------------------------- FD harness */

typedef double (*loss_fn)(void *ctx);
/* Fingerprint of the activation pattern of the last evaluation (NULL: a smooth function). */
typedef uint64_t (*pattern_fn)(void *ctx);

typedef struct fd_stats {
  int checked, skipped;
} fd_stats;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL; }

/* ReLU signs and minmax argmin/argmax of a tape's last forward. */
static uint64_t tape_pattern(const mb_nn_tape *t, uint64_t h) {
  const mb_nn_module *m = t->module;
  for (int32_t i = 0; i < m->n_layers; i++) {
    const mb_nn_cache *c = &t->cache[i];
    if (m->layers[i].kind == MB_LAYER_RELU)
      for (int64_t k = 0; k < (int64_t)t->batch * m->layers[i].out; k++)
        h = mix(h, c->out.data[k] > 0);
    if (m->layers[i].kind == MB_LAYER_MINMAX)
      for (int32_t r = 0; r < 2 * t->batch; r++) h = mix(h, (uint64_t)(c->idx[r] + 1));
  }
  return h;
}

/* Central difference with step h, or NAN when x +- h leaves the base activation pattern. */
static double central(loss_fn f, pattern_fn pat, void *ctx, float *x, double h, uint64_t base) {
  float x0 = *x;
  *x = (float)(x0 + h);
  double dp = (double)*x - x0, lp = f(ctx);
  bool same = !pat || pat(ctx) == base;
  *x = (float)(x0 - h);
  double dm = (double)*x - x0, lm = f(ctx);
  same = same && (!pat || pat(ctx) == base);
  *x = x0;
  return same ? (lp - lm) / (dp - dm) : NAN;
}

/* Checks analytic[i] against finite differences of f w.r.t. x[i] for up to `limit` elements
 * (evenly strided) of x[0..n). */
static void check_grad(const char *what, loss_fn f, pattern_fn pat, void *ctx, float *x,
                       const float *analytic, int64_t n, int limit, fd_stats *st) {
  double amax = 1.0;
  for (int64_t i = 0; i < n; i++) amax = fmax(amax, fabs(analytic[i]));
  int64_t stride = n > limit ? n / limit : 1;
  f(ctx);
  uint64_t base = pat ? pat(ctx) : 0;
  for (int64_t i = 0; i < n; i += stride) {
    double d1 = NAN, d2 = NAN, h = 1e-2 * fmax(1.0, fabs(x[i])), stop = h / 8;
    for (; h >= stop && isnan(d2); h /= 2) {
      d1 = central(f, pat, ctx, &x[i], h, base);
      d2 = isnan(d1) ? NAN : central(f, pat, ctx, &x[i], h / 2, base);
    }
    if (isnan(d2)) { /* a kink closer than 1e-2/64: no smooth stencil */
      st->skipped++;
      continue;
    }
    double fd = (4 * d2 - d1) / 3, an = analytic[i];
    double tol = 1e-2 * fmax(fabs(fd), fabs(an)) + 1e-3 * amax;
    if (!(fabs(fd - an) <= tol))
      fail_msg(
          "%s[%lld]: analytic %.6g, finite difference %.6g (tolerance %.3g; steps %.3g, "
          "%.3g: %.6g, %.6g)",
          what, (long long)i, an, fd, tol, 2 * h, h, d1, d2);
    st->checked++;
  }
}

static void assert_few_skipped(const fd_stats *st) {
  print_message("gradient check: %d elements checked, %d skipped at kinks\n", st->checked,
                st->skipped);
  if (st->checked < 10 || st->skipped * 4 > st->checked + st->skipped)
    fail_msg("gradient check: %d elements checked, %d skipped at kinks", st->checked, st->skipped);
}

/* ---------------------------------------------------------------- single modules */

/* L = sum_ij C_ij y_ij (in double), y = module(x). */
typedef struct module_ctx {
  mb_nn_module *m;
  mb_nn_tape tape;
  mb_tensor x, c;
} module_ctx;

static uint64_t module_pattern(void *p) {
  return tape_pattern(&((module_ctx *)p)->tape, 0xcbf29ce484222325ULL);
}

static double module_loss(void *p) {
  module_ctx *ctx = p;
  const mb_tensor *y = mb_nn_forward(&ctx->tape, &ctx->x, NULL);
  double l = 0;
  for (int64_t i = 0; i < mb_tensor_size(y); i++) l += (double)ctx->c.data[i] * y->data[i];
  return l;
}

/* Randomises every parameter (so biases, shifts and gains are not at their trivial init),
 * then checks every parameter gradient and the input gradient. */
static void check_module(mb_nn_module *m, int32_t batch, uint64_t seed, bool smooth_input) {
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  module_ctx ctx = {.m = m};
  CHECK(mb_nn_tape_create(&ctx.tape, m, batch, err));
  CHECK(mb_tensor_init(&ctx.x, batch, m->in_dim, err));
  CHECK(mb_tensor_init(&ctx.c, batch, m->out_dim, err));
  mb_nn_module_init_params(m, &rng);
  for (int32_t i = 0; i < m->n_params; i++) {
    mb_tensor *v = &m->params[i].value;
    for (int64_t k = 0; k < mb_tensor_size(v); k++)
      v->data[k] += 0.3f * (float)(2 * mb_rng_uniform(&rng) - 1);
  }
  if (smooth_input)
    fill_away_from_zero(&ctx.x, &rng);
  else
    fill_uniform(&ctx.x, &rng, -2, 2);
  fill_uniform(&ctx.c, &rng, -1, 1);

  mb_tensor dx;
  CHECK(mb_tensor_init(&dx, batch, m->in_dim, err));
  mb_nn_zero_grad(m);
  module_loss(&ctx);
  CHECK(mb_nn_backward(&ctx.tape, &ctx.c, &dx, err));
  fd_stats st = {0, 0};
  for (int32_t i = 0; i < m->n_params; i++) {
    char what[96];
    snprintf(what, sizeof what, "%s/%s", m->name, m->params[i].name);
    check_grad(what, module_loss, module_pattern, &ctx, m->params[i].value.data,
               m->params[i].grad.data, mb_tensor_size(&m->params[i].value), 400, &st);
  }
  check_grad("input", module_loss, module_pattern, &ctx, ctx.x.data, dx.data, mb_tensor_size(&dx),
             400, &st);
  assert_few_skipped(&st);
  mb_tensor_free(&dx);
  mb_tensor_free(&ctx.x);
  mb_tensor_free(&ctx.c);
  mb_nn_tape_free(&ctx.tape);
}

static void test_grad_linear(void **state) {
  (void)state;
  mb_nn_module m;
  CHECK(mb_nn_module_create(&m, "lin", 7, err));
  CHECK(mb_nn_add_linear(&m, 5, MB_INIT_XAVIER, err));
  check_module(&m, 4, 1, false);
  mb_nn_module_free(&m);
}

static void test_grad_relu(void **state) {
  (void)state;
  mb_nn_module m;
  CHECK(mb_nn_module_create(&m, "relu", 9, err));
  CHECK(mb_nn_add_relu(&m, err));
  check_module(&m, 3, 2, true);
  mb_nn_module_free(&m);
}

static void test_grad_layernorm(void **state) {
  (void)state;
  mb_nn_module m;
  CHECK(mb_nn_module_create(&m, "ln", 6, err));
  CHECK(mb_nn_add_layernorm(&m, err));
  check_module(&m, 3, 3, false);
  mb_nn_module_free(&m);
}

/* LayerNorm's forward values by hand: (x - mean) / sqrt(var + 1e-5) * gain + shift, with the
 * population variance; a constant row (var 0) gives the shift, not NaN. */
static void test_layernorm_values(void **state) {
  (void)state;
  mb_nn_module m;
  mb_nn_tape t;
  mb_tensor x;
  CHECK(mb_nn_module_create(&m, "ln", 4, err));
  CHECK(mb_nn_add_layernorm(&m, err));
  const float gain[4] = {1, 2, -1, 0.5f}, shift[4] = {0, 1, 0.25f, -3};
  memcpy(m.params[0].value.data, gain, sizeof gain);
  memcpy(m.params[1].value.data, shift, sizeof shift);
  CHECK(mb_nn_tape_create(&t, &m, 2, err));
  CHECK(mb_tensor_init(&x, 2, 4, err));
  const float rows[2][4] = {{1, 2, 3, 6}, {7, 7, 7, 7}};
  memcpy(x.data, rows, sizeof rows);
  const mb_tensor *y = mb_nn_forward(&t, &x, NULL);
  assert_non_null(y);
  /* row 0: mean 3, squared deviations 4 + 1 + 0 + 9 = 14, var 3.5 */
  double rstd = 1 / sqrt(3.5 + 1e-5);
  for (int j = 0; j < 4; j++) {
    double want0 = (rows[0][j] - 3) * rstd * gain[j] + shift[j];
    if (!(fabs(mb_tensor_row(y, 0)[j] - want0) <= 1e-5))
      fail_msg("row 0, column %d: %g, expected %g", j, mb_tensor_row(y, 0)[j], want0);
    if (!(mb_tensor_row(y, 1)[j] == shift[j]))
      fail_msg("constant row, column %d: %g, expected the shift %g", j, mb_tensor_row(y, 1)[j],
               shift[j]);
  }
  mb_tensor_free(&x);
  mb_nn_tape_free(&t);
  mb_nn_module_free(&m);
}

static void test_grad_resblock(void **state) {
  (void)state;
  mb_nn_module m;
  CHECK(mb_nn_module_create(&m, "res", 6, err));
  CHECK(mb_nn_add_resblock(&m, err));
  CHECK(mb_nn_add_resblock(&m, err));
  check_module(&m, 3, 4, false);
  mb_nn_module_free(&m);
}

static void test_grad_minmax(void **state) {
  (void)state;
  mb_nn_module m;
  CHECK(mb_nn_module_create(&m, "mm", 5, err));
  CHECK(mb_nn_add_linear(&m, 8, MB_INIT_HE, err));
  CHECK(mb_nn_add_minmax(&m, err));
  check_module(&m, 4, 5, false);
  /* The output is in [0, 1] with exact 0 and 1 per sample. */
  mb_nn_tape t;
  mb_tensor x;
  mb_rng rng;
  mb_rng_seed(&rng, 6);
  CHECK(mb_nn_tape_create(&t, &m, 4, err));
  CHECK(mb_tensor_init(&x, 4, 5, err));
  fill_uniform(&x, &rng, -3, 3);
  const mb_tensor *y = mb_nn_forward(&t, &x, NULL);
  for (int32_t r = 0; r < 4; r++) {
    float lo = 1, hi = 0;
    for (int32_t j = 0; j < 8; j++) {
      lo = fminf(lo, mb_tensor_row(y, r)[j]);
      hi = fmaxf(hi, mb_tensor_row(y, r)[j]);
    }
    assert_true(lo == 0.0f && hi == 1.0f);
  }
  mb_tensor_free(&x);
  mb_nn_tape_free(&t);
  mb_nn_module_free(&m);
}

/* SimNorm: its gradient is right, every group of 8 outputs is a distribution (positive, summing
 * to 1), a width that is not a multiple of 8 is refused, and the state networks end in it when
 * asked: as wide as their state (no projection) or narrower. */
static void test_simnorm(void **state) {
  (void)state;
  mb_nn_module m;
  CHECK(mb_nn_module_create(&m, "sn", 5, err));
  CHECK(mb_nn_add_linear(&m, 16, MB_INIT_HE, err));
  CHECK(mb_nn_add_simnorm(&m, err));
  check_module(&m, 4, 5, false);
  mb_nn_tape t;
  mb_tensor x;
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  CHECK(mb_nn_tape_create(&t, &m, 4, err));
  CHECK(mb_tensor_init(&x, 4, 5, err));
  /* large inputs too: the softmax is shifted by each group's max, so exp cannot overflow */
  fill_uniform(&x, &rng, -60, 60);
  const mb_tensor *y = mb_nn_forward(&t, &x, NULL);
  assert_non_null(y);
  for (int32_t r = 0; r < 4; r++)
    for (int32_t g = 0; g < 16; g += MB_NN_SIMNORM_GROUP) {
      double sum = 0;
      for (int32_t j = g; j < g + MB_NN_SIMNORM_GROUP; j++) {
        float v = mb_tensor_row(y, r)[j];
        assert_true(v >= 0.0f && v <= 1.0f);
        sum += v;
      }
      assert_true(fabs(sum - 1.0) < 1e-5);
    }
  char d[256];
  mb_nn_describe(&m, d, sizeof d);
  assert_non_null(strstr(d, " simnorm/8"));
  mb_tensor_free(&x);
  mb_nn_tape_free(&t);
  mb_nn_module_free(&m);

  mb_error e;
  CHECK(mb_nn_module_create(&m, "sn", 5, err));
  CHECK(mb_nn_add_linear(&m, 12, MB_INIT_HE, err));
  assert_false(mb_nn_add_simnorm(&m, &e));
  assert_non_null(strstr(e.message, "width 12: expected a multiple of 8"));
  assert_false(mb_nn_add_latent_norm(&m, (mb_latent_norm)7, &e));
  assert_non_null(strstr(e.message, "latent norm 7"));
  assert_string_equal(mb_latent_norm_name(MB_LATENT_MINMAX), "minmax");
  assert_string_equal(mb_latent_norm_name(MB_LATENT_SIMNORM), "simnorm");
  assert_string_equal(mb_latent_norm_name((mb_latent_norm)7), "unknown");
  mb_nn_module_free(&m);

  /* one huge or tiny input in any place of either group: each group is shifted by its own max,
   * so nothing overflows, underflows to an empty group or leaks into the other group */
  CHECK(mb_nn_module_create(&m, "sn", 16, err));
  CHECK(mb_nn_add_simnorm(&m, err));
  CHECK(mb_nn_tape_create(&t, &m, 2, err));
  CHECK(mb_tensor_init(&x, 2, 16, err));
  for (int32_t p = 0; p < 16; p++) {
    memset(x.data, 0, 32 * sizeof(float));
    x.data[p] = 1000.0f;       /* row 0: one huge input */
    x.data[16 + p] = -1000.0f; /* row 1: one tiny input */
    y = mb_nn_forward(&t, &x, NULL);
    int32_t mine = p / MB_NN_SIMNORM_GROUP * MB_NN_SIMNORM_GROUP;
    for (int32_t j = 0; j < 16; j++) {
      bool in_group = j >= mine && j < mine + MB_NN_SIMNORM_GROUP;
      float huge = in_group ? (j == p ? 1.0f : 0.0f) : 1.0f / MB_NN_SIMNORM_GROUP;
      float tiny = in_group ? (j == p ? 0.0f : 1.0f / (MB_NN_SIMNORM_GROUP - 1))
                            : 1.0f / MB_NN_SIMNORM_GROUP;
      if (!(fabsf(mb_tensor_row(y, 0)[j] - huge) < 1e-6f) ||
          !(fabsf(mb_tensor_row(y, 1)[j] - tiny) < 1e-6f))
        fail_msg("input %d: output %d is %g and %g, expected %g and %g", p, j,
                 (double)mb_tensor_row(y, 0)[j], (double)mb_tensor_row(y, 1)[j], (double)huge,
                 (double)tiny);
    }
  }
  mb_tensor_free(&x);
  mb_nn_tape_free(&t);
  mb_nn_module_free(&m);
  /* the narrowest: one group */
  CHECK(mb_nn_module_create(&m, "sn", 3, err));
  CHECK(mb_nn_add_linear(&m, MB_NN_SIMNORM_GROUP, MB_INIT_HE, err));
  CHECK(mb_nn_add_simnorm(&m, err));
  mb_nn_module_free(&m);

  mb_nn_module same, narrow, plain;
  CHECK(mb_nn_build_state_resmlp(&same, "repr", 5, 16, 1, 16, MB_LATENT_SIMNORM, err));
  mb_nn_describe(&same, d, sizeof d);
  assert_string_equal(d,
                      "repr: linear 5->16 relu [res ln relu linear 16->16 ln relu linear 16->16 ]"
                      " simnorm/8");
  CHECK(mb_nn_build_state_resmlp(&narrow, "dyn", 5, 24, 1, 16, MB_LATENT_SIMNORM, err));
  CHECK(mb_nn_build_state_resmlp(&plain, "repr", 5, 16, 1, 16, MB_LATENT_MINMAX, err));
  assert_int_equal(same.layers[same.n_layers - 1].kind, MB_LAYER_SIMNORM);
  assert_int_equal(narrow.layers[narrow.n_layers - 1].kind, MB_LAYER_SIMNORM);
  assert_int_equal(narrow.layers[narrow.n_layers - 2].kind, MB_LAYER_LINEAR);
  assert_int_equal(narrow.out_dim, 16);
  /* the same layers but the last: SimNorm replaces minmax, nothing else */
  assert_int_equal(same.n_layers, plain.n_layers);
  for (int32_t i = 0; i + 1 < same.n_layers; i++)
    assert_int_equal(same.layers[i].kind, plain.layers[i].kind);
  assert_int_equal(same.n_params, plain.n_params);
  check_module(&narrow, 3, 5, false);
  /* the smallest sizes: no residual block, width 2 */
  CHECK(mb_nn_build_state_resmlp(&m, "dyn", 5, 8, 0, 8, MB_LATENT_SIMNORM, err));
  mb_nn_describe(&m, d, sizeof d);
  assert_string_equal(d, "dyn: linear 5->8 relu simnorm/8");
  mb_nn_module_free(&m);
  CHECK(mb_nn_build_state_resmlp(&m, "dyn", 5, 2, 0, 2, MB_LATENT_MINMAX, err));
  mb_nn_module_free(&m);
  CHECK(mb_nn_build_resmlp(&m, "dyn", 5, 2, 0, 0, MB_INIT_HE, err));
  mb_nn_module_free(&m);
  assert_false(mb_nn_build_state_resmlp(&m, "dyn", 5, 12, 1, 12, MB_LATENT_SIMNORM, &e));
  assert_non_null(strstr(e.message, "expected a multiple of 8"));
  mb_nn_module_free(&same);
  mb_nn_module_free(&narrow);
  mb_nn_module_free(&plain);
}

/* A state network wider than its state: the gradients are right, it ends in a minmax over
 * `state` features, and with state == width it is the plain latent network layer for layer
 * (checkpoints of either load as the other). */
static void test_state_resmlp(void **state) {
  (void)state;
  mb_nn_module m, plain, same;
  CHECK(mb_nn_build_state_resmlp(&m, "dyn", 5, 8, 1, 6, MB_LATENT_MINMAX, err));
  assert_int_equal(m.out_dim, 6);
  assert_int_equal(m.layers[m.n_layers - 1].kind, MB_LAYER_MINMAX);
  check_module(&m, 3, 11, false);
  CHECK(mb_nn_build_resmlp(&plain, "dyn", 5, 8, 2, 0, MB_INIT_HE, err));
  CHECK(mb_nn_build_state_resmlp(&same, "dyn", 5, 8, 2, 8, MB_LATENT_MINMAX, err));
  char a[512], b[512];
  mb_nn_describe(&plain, a, sizeof a);
  mb_nn_describe(&same, b, sizeof b);
  assert_string_equal(a, b);
  mb_nn_module_free(&m);
  mb_error e;
  assert_false(mb_nn_build_state_resmlp(&m, "dyn", 5, 8, 1, 1, MB_LATENT_MINMAX, &e));
  assert_non_null(strstr(e.message, "state 1"));
  mb_nn_module_free(&same);
  mb_nn_module_free(&plain);
}

/* The batch-1 forward through sgemv (mb_nn_tape_use_gemv): within float rounding of sgemm's,
 * deterministic, and only at batch 1 (a larger batch is sgemm's to the bit). */
static void test_gemv_forward(void **state) {
  (void)state;
  mb_nn_module m;
  CHECK(mb_nn_build_resmlp(&m, "pred", 37, 64, 2, 20, MB_INIT_XAVIER, err));
  mb_rng rng;
  mb_rng_seed(&rng, 5);
  mb_nn_module_init_params(&m, &rng);
  mb_nn_tape by_gemm, by_gemv;
  mb_tensor x, row, first;
  CHECK(mb_nn_tape_create(&by_gemm, &m, 3, err));
  CHECK(mb_nn_tape_create(&by_gemv, &m, 3, err));
  mb_nn_tape_use_gemv(&by_gemv, true);
  CHECK(mb_tensor_init(&x, 3, 37, err));
  CHECK(mb_tensor_init(&row, 1, 37, err));
  CHECK(mb_tensor_init(&first, 1, 20, err));
  for (int trial = 0; trial < 20; trial++) {
    fill_uniform(&x, &rng, -2.0f, 2.0f);
    memcpy(row.data, x.data, 37 * sizeof(float));
    const mb_tensor *a = mb_nn_forward(&by_gemm, &row, NULL),
                    *b = mb_nn_forward(&by_gemv, &row, NULL);
    assert_non_null(a);
    assert_non_null(b);
    float scale = 1.0f;
    for (int k = 0; k < 20; k++) scale = fmaxf(scale, fabsf(a->data[k]));
    for (int k = 0; k < 20; k++)
      if (!(fabsf(a->data[k] - b->data[k]) <= 1e-5f * scale))
        fail_msg("trial %d output %d: sgemm %.9g, sgemv %.9g", trial, k, (double)a->data[k],
                 (double)b->data[k]);
    CHECK(mb_tensor_copy(&first, b, err));
    assert_true(mb_tensor_equal(&first, mb_nn_forward(&by_gemv, &row, NULL)));
    a = mb_nn_forward(&by_gemm, &x, NULL);
    b = mb_nn_forward(&by_gemv, &x, NULL);
    assert_true(mb_tensor_equal(a, b)); /* batch 3: sgemm on both tapes */
  }
  /* the flag changes the product, not what it is used for: switched off, sgemm again */
  mb_nn_tape_use_gemv(&by_gemv, false);
  const mb_tensor *a = mb_nn_forward(&by_gemm, &row, NULL);
  CHECK(mb_tensor_copy(&first, a, err));
  assert_true(mb_tensor_equal(&first, mb_nn_forward(&by_gemv, &row, NULL)));
  mb_tensor_free(&x);
  mb_tensor_free(&row);
  mb_tensor_free(&first);
  mb_nn_tape_free(&by_gemm);
  mb_nn_tape_free(&by_gemv);
  mb_nn_module_free(&m);
}

/* A constant latent (range below the floor) maps to 0 with finite gradients. */
static void test_minmax_constant_row(void **state) {
  (void)state;
  mb_nn_module m;
  mb_nn_tape t;
  mb_tensor x, dy, dx;
  CHECK(mb_nn_module_create(&m, "mm", 4, err));
  CHECK(mb_nn_add_minmax(&m, err));
  CHECK(mb_nn_tape_create(&t, &m, 1, err));
  CHECK(mb_tensor_init(&x, 1, 4, err));
  CHECK(mb_tensor_init(&dy, 1, 4, err));
  CHECK(mb_tensor_init(&dx, 1, 4, err));
  mb_tensor_fill(&x, 0.7f);
  mb_tensor_fill(&dy, 1.0f);
  const mb_tensor *y = mb_nn_forward(&t, &x, NULL);
  for (int j = 0; j < 4; j++) assert_true(y->data[j] == 0.0f);
  CHECK(mb_nn_backward(&t, &dy, &dx, err));
  double s = 0;
  for (int j = 0; j < 4; j++) {
    assert_true(isfinite(dx.data[j]));
    s += dx.data[j];
  }
  assert_true(fabs(s) < 1e-3); /* translation invariance: gradients sum to 0 */
  mb_tensor_free(&x);
  mb_tensor_free(&dy);
  mb_tensor_free(&dx);
  mb_nn_tape_free(&t);
  mb_nn_module_free(&m);
}

/* ---------------------------------------------------------------- losses */

typedef struct loss_ctx {
  int kind; /* 0 softmax xent, 1 mse, 2 categorical */
  mb_tensor in, target;
  uint8_t *mask;
  float *weight, *scalar_target;
  mb_support support;
} loss_ctx;

static double eval_loss(void *p) {
  loss_ctx *c = p;
  double l = 0;
  mb_error err;
  bool ok = c->kind == 0
                ? mb_loss_softmax_xent(&c->in, &c->target, c->mask, c->weight, 0.5f, &l, NULL, &err)
            : c->kind == 1 ? mb_loss_mse(&c->in, &c->target, c->weight, 0.5f, &l, NULL, &err)
                           : mb_loss_categorical(&c->support, &c->in, c->scalar_target, c->weight,
                                                 0.5f, &l, NULL, &err);
  if (!ok) fail_msg("loss: %s", err.message);
  return l;
}

static void test_grad_losses(void **state) {
  (void)state;
  const int32_t B = 4, A = 6;
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  uint8_t mask[4 * 6];
  float weight[4] = {1.0f, 0.5f, 2.0f, 0.0f}, scalar[4] = {-7.5f, 0.0f, 0.3f, 120.0f};
  for (int kind = 0; kind < 3; kind++) {
    loss_ctx c = {.kind = kind, .weight = weight, .scalar_target = scalar};
    c.support = (mb_support){9, -4.0f, 4.0f};
    int32_t cols = kind == 2 ? c.support.n : A;
    CHECK(mb_tensor_init(&c.in, B, cols, err));
    CHECK(mb_tensor_init(&c.target, B, cols, err));
    fill_uniform(&c.in, &rng, -2, 2);
    if (kind == 0) {
      c.mask = mask;
      for (int32_t r = 0; r < B; r++) {
        double s = 0;
        for (int32_t j = 0; j < A; j++) {
          mask[r * A + j] = j == r || mb_rng_uniform(&rng) < 0.6;
          float t = mask[r * A + j] ? (float)mb_rng_uniform(&rng) : 0.0f;
          mb_tensor_row(&c.target, r)[j] = t;
          s += t;
        }
        for (int32_t j = 0; j < A; j++) mb_tensor_row(&c.target, r)[j] /= (float)s;
      }
    } else {
      fill_uniform(&c.target, &rng, -1, 1);
    }
    mb_tensor grad;
    CHECK(mb_tensor_init(&grad, B, cols, err));
    double l = 0;
    if (kind == 0)
      CHECK(mb_loss_softmax_xent(&c.in, &c.target, mask, weight, 0.5f, &l, &grad, err));
    if (kind == 1) CHECK(mb_loss_mse(&c.in, &c.target, weight, 0.5f, &l, &grad, err));
    if (kind == 2)
      CHECK(mb_loss_categorical(&c.support, &c.in, scalar, weight, 0.5f, &l, &grad, err));
    assert_true(l == eval_loss(&c));
    fd_stats st = {0, 0};
    const char *names[] = {"softmax_xent", "mse", "categorical"};
    check_grad(names[kind], eval_loss, NULL, &c, c.in.data, grad.data, mb_tensor_size(&c.in), 1000,
               &st);
    assert_int_equal(st.skipped, 0); /* the losses are smooth */
    if (kind == 0) /* illegal actions: gradient exactly 0, logit value irrelevant */
      for (int32_t k = 0; k < B * A; k++)
        if (!mask[k]) {
          assert_true(grad.data[k] == 0.0f);
          c.in.data[k] = 1e6f;
          assert_true(eval_loss(&c) == l);
        }
    mb_tensor_free(&grad);
    mb_tensor_free(&c.in);
    mb_tensor_free(&c.target);
  }
}

static void test_softmax_xent_errors(void **state) {
  (void)state;
  mb_tensor z, t;
  mb_error err;
  double l;
  assert_true(mb_tensor_init(&z, 2, 3, &err) && mb_tensor_init(&t, 2, 3, &err));
  uint8_t mask[6] = {1, 0, 1, 1, 1, 1};
  t.data[1] = 1.0f; /* mass on the illegal action (row 0, column 1) */
  assert_false(mb_loss_softmax_xent(&z, &t, mask, NULL, 1.0f, &l, NULL, &err));
  assert_non_null(strstr(err.message, "target[0][1]"));
  t.data[1] = 0.0f;
  memset(mask + 3, 0, 3);
  assert_false(mb_loss_softmax_xent(&z, &t, mask, NULL, 1.0f, &l, NULL, &err));
  assert_non_null(strstr(err.message, "row 1 has no legal action"));
  /* a gradient tensor with room for fewer entries than the input, in either loss */
  mb_tensor small;
  assert_true(mb_tensor_init(&small, 1, 3, &err));
  memset(mask, 1, sizeof mask);
  t.data[0] = t.data[3] = 1.0f;
  assert_false(mb_loss_softmax_xent(&z, &t, mask, NULL, 1.0f, &l, &small, &err));
  assert_string_equal(err.message, "softmax cross-entropy: gradient needs 2x3, capacity 3");
  assert_false(mb_loss_mse(&z, &t, NULL, 1.0f, &l, &small, &err));
  assert_string_equal(err.message, "squared error: gradient needs 2x3, capacity 3");
  assert_false(mb_loss_mse(&z, &small, NULL, 1.0f, &l, NULL, &err));
  assert_string_equal(err.message, "squared error: input 2x3, target 1x3");
  assert_true(mb_loss_softmax_xent(&z, &t, mask, NULL, 1.0f, &l, NULL, &err));
  mb_tensor_free(&small);
  mb_tensor_free(&z);
  mb_tensor_free(&t);
}

/* ---------------------------------------------------------------- value transform, two-hot */

static void test_value_transform(void **state) {
  (void)state;
  assert_true(mb_value_transform(0.0) == 0.0);
  assert_true(fabs(mb_value_transform(3.0) - (1.0 + 0.003)) < 1e-15);
  assert_true(fabs(mb_value_transform(-8.0) - (-2.0 - 0.008)) < 1e-15);
  for (int s = -1; s <= 1; s += 2)
    for (double a = 1e-12; a < 1e9; a *= 1.37) {
      double x = s * a, y = mb_value_transform(x), back = mb_value_inverse(y);
      if (!(fabs(back - x) <= 1e-12 * fabs(x)))
        fail_msg("inverse(h(%.17g)) = %.17g (h = %.17g)", x, back, y);
      assert_true(y * x > 0 && fabs(y) < fabs(x) + 1e-15 + 1e-3 * fabs(x));
    }
}

static void test_twohot(void **state) {
  (void)state;
  mb_support s = {21, -10.0f, 10.0f};
  mb_rng rng;
  mb_rng_seed(&rng, 8);
  float p[21];
  for (int i = 0; i < 2000; i++) {
    float y = (float)(-12 + 24 * mb_rng_uniform(&rng));
    float clamped = mb_twohot_encode(&s, y, p);
    double sum = 0;
    int nonzero = 0;
    for (int j = 0; j < s.n; j++) {
      assert_true(p[j] >= 0.0f);
      sum += p[j];
      nonzero += p[j] > 0;
    }
    assert_true(fabs(sum - 1) < 1e-6 && nonzero <= 2);
    assert_true(clamped == fminf(10.0f, fmaxf(-10.0f, y)));
    float back = mb_twohot_decode(&s, p);
    if (!(fabsf(back - clamped) <= 1e-5f)) fail_msg("two-hot %g decodes to %g", clamped, back);
  }
  /* Atoms encode to one-hot. */
  mb_twohot_encode(&s, 3.0f, p);
  assert_true(p[13] == 1.0f);
  /* A categorical head whose softmax is the two-hot of h(y) decodes to y. */
  mb_tensor logits;
  CHECK(mb_tensor_init(&logits, 3, s.n, err));
  float ys[3] = {-40.0f, 0.25f, 77.0f}, out[3];
  for (int r = 0; r < 3; r++) {
    mb_twohot_encode(&s, (float)mb_value_transform(ys[r]), p);
    for (int j = 0; j < s.n; j++) mb_tensor_row(&logits, r)[j] = logf(p[j] + 1e-30f);
  }
  CHECK(mb_categorical_decode(&s, &logits, out, err));
  for (int r = 0; r < 3; r++)
    if (!(fabsf(out[r] - ys[r]) <= 1e-4f * fmaxf(1.0f, fabsf(ys[r])))) /* NaN fails too */
      fail_msg("categorical decode of %g gave %g", ys[r], out[r]);
  mb_tensor_free(&logits);
  mb_error err;
  mb_support bad = {1, 0.0f, 1.0f};
  assert_false(mb_support_check(&bad, &err));
}

/* ---------------------------------------------------------------- 5-step unroll */

enum { UB = 3, UOBS = 10, UW = 8, UA = 4, UK = 5 };

typedef struct unroll {
  mb_nn_module repr, dyn, pred, reward; /* pred outputs UA policy logits + value atoms */
  mb_nn_tape t_repr, t_dyn[UK], t_pred[UK + 1], t_rew[UK];
  mb_support support;
  mb_tensor obs, dyn_in, frozen[UK], latent, dlogit, dval, dpred, drew, ds, dtmp, din;
  mb_tensor policy, value, reward_out, pi_target[UK + 1], r_target[UK];
  int32_t action[UK][UB];
  uint8_t mask[UK + 1][UB * UA];
  float z_target[UK + 1][UB];
  float scale; /* the gradient scale between unroll steps */
  bool freeze; /* record frozen latents (at the base point) or use them */
} unroll;

static void unroll_init(unroll *u, uint64_t seed) {
  memset(u, 0, sizeof *u);
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  u->support = (mb_support){7, -3.0f, 3.0f};
  u->scale = 0.5f;
  CHECK(mb_nn_build_resmlp(&u->repr, "repr", UOBS, UW, 1, 0, MB_INIT_XAVIER, err));
  CHECK(mb_nn_build_resmlp(&u->dyn, "dyn", UW + UA, UW, 1, 0, MB_INIT_XAVIER, err));
  CHECK(mb_nn_build_resmlp(&u->pred, "pred", UW, UW, 1, UA + u->support.n, MB_INIT_XAVIER, err));
  CHECK(mb_nn_module_create(&u->reward, "reward", UW, err));
  CHECK(mb_nn_add_linear(&u->reward, 1, MB_INIT_XAVIER, err));
  mb_nn_module *mods[] = {&u->repr, &u->dyn, &u->pred, &u->reward};
  for (int i = 0; i < 4; i++) {
    mb_nn_module_init_params(mods[i], &rng);
    for (int32_t p = 0; p < mods[i]->n_params; p++) { /* break the trivial init symmetry */
      mb_tensor *v = &mods[i]->params[p].value;
      for (int64_t k = 0; k < mb_tensor_size(v); k++)
        v->data[k] += 0.2f * (float)(2 * mb_rng_uniform(&rng) - 1);
    }
  }
  CHECK(mb_nn_tape_create(&u->t_repr, &u->repr, UB, err));
  for (int k = 0; k < UK; k++) CHECK(mb_nn_tape_create(&u->t_dyn[k], &u->dyn, UB, err));
  for (int k = 0; k < UK; k++) CHECK(mb_nn_tape_create(&u->t_rew[k], &u->reward, UB, err));
  for (int k = 0; k <= UK; k++) CHECK(mb_nn_tape_create(&u->t_pred[k], &u->pred, UB, err));
  mb_tensor *sq[] = {&u->latent, &u->ds, &u->dtmp};
  for (int i = 0; i < 3; i++) CHECK(mb_tensor_init(sq[i], UB, UW, err));
  CHECK(mb_tensor_init(&u->obs, UB, UOBS, err));
  CHECK(mb_tensor_init(&u->dyn_in, UB, UW + UA, err));
  CHECK(mb_tensor_init(&u->din, UB, UW + UA, err));
  CHECK(mb_tensor_init(&u->dlogit, UB, UA, err));
  CHECK(mb_tensor_init(&u->policy, UB, UA, err));
  CHECK(mb_tensor_init(&u->value, UB, u->support.n, err));
  CHECK(mb_tensor_init(&u->dval, UB, u->support.n, err));
  CHECK(mb_tensor_init(&u->dpred, UB, UA + u->support.n, err));
  CHECK(mb_tensor_init(&u->reward_out, UB, 1, err));
  CHECK(mb_tensor_init(&u->drew, UB, 1, err));
  for (int k = 0; k < UK; k++) {
    CHECK(mb_tensor_init(&u->frozen[k], UB, UW, err));
    CHECK(mb_tensor_init(&u->r_target[k], UB, 1, err));
    fill_uniform(&u->r_target[k], &rng, -1, 1);
    for (int b = 0; b < UB; b++) u->action[k][b] = (int32_t)mb_rng_below(&rng, UA);
  }
  fill_uniform(&u->obs, &rng, -1, 1);
  for (int k = 0; k <= UK; k++) {
    CHECK(mb_tensor_init(&u->pi_target[k], UB, UA, err));
    for (int b = 0; b < UB; b++) {
      u->z_target[k][b] = (float)(-5 + 10 * mb_rng_uniform(&rng));
      double s = 0;
      for (int a = 0; a < UA; a++) {
        uint8_t legal = a == b || mb_rng_uniform(&rng) < 0.7;
        u->mask[k][b * UA + a] = legal;
        float t = legal ? (float)mb_rng_uniform(&rng) : 0.0f;
        mb_tensor_row(&u->pi_target[k], b)[a] = t;
        s += t;
      }
      for (int a = 0; a < UA; a++) mb_tensor_row(&u->pi_target[k], b)[a] /= (float)s;
    }
  }
}

static void unroll_free(unroll *u) {
  mb_nn_module *mods[] = {&u->repr, &u->dyn, &u->pred, &u->reward};
  mb_nn_tape_free(&u->t_repr);
  for (int k = 0; k < UK; k++) {
    mb_nn_tape_free(&u->t_dyn[k]);
    mb_nn_tape_free(&u->t_rew[k]);
    mb_tensor_free(&u->frozen[k]);
    mb_tensor_free(&u->r_target[k]);
  }
  for (int k = 0; k <= UK; k++) {
    mb_nn_tape_free(&u->t_pred[k]);
    mb_tensor_free(&u->pi_target[k]);
  }
  mb_tensor *ts[] = {&u->obs,    &u->dyn_in, &u->latent,    &u->dlogit, &u->dval,
                     &u->dpred,  &u->drew,   &u->ds,        &u->dtmp,   &u->din,
                     &u->policy, &u->value,  &u->reward_out};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) mb_tensor_free(ts[i]);
  for (int i = 0; i < 4; i++) mb_nn_module_free(mods[i]);
}

/* Prediction losses at step k on the tape's last forward; with grads, writes d/d latent
 * into u->ds (overwritten). */
static double heads_loss(unroll *u, int k, bool grads) {
  const float inv_b = 1.0f / UB;
  const mb_tensor *out = mb_nn_tape_output(&u->t_pred[k]);
  double l_pi, l_v, l_r = 0;
  CHECK(mb_tensor_get_cols(&u->policy, out, 0, UA, err));
  CHECK(mb_tensor_get_cols(&u->value, out, UA, u->support.n, err));
  CHECK(mb_loss_softmax_xent(&u->policy, &u->pi_target[k], u->mask[k], NULL, inv_b, &l_pi,
                             grads ? &u->dlogit : NULL, err));
  CHECK(mb_loss_categorical(&u->support, &u->value, u->z_target[k], NULL, inv_b, &l_v,
                            grads ? &u->dval : NULL, err));
  if (k > 0)
    CHECK(mb_loss_mse(mb_nn_tape_output(&u->t_rew[k - 1]), &u->r_target[k - 1], NULL, inv_b, &l_r,
                      grads ? &u->drew : NULL, err));
  if (grads) {
    CHECK(mb_tensor_set_cols(&u->dpred, 0, &u->dlogit, err));
    CHECK(mb_tensor_set_cols(&u->dpred, UA, &u->dval, err));
    CHECK(mb_nn_backward(&u->t_pred[k], &u->dpred, &u->ds, err));
    if (k > 0) {
      CHECK(mb_nn_backward(&u->t_rew[k - 1], &u->drew, &u->dtmp, err));
      CHECK(mb_tensor_axpy(&u->ds, 1.0f, &u->dtmp, err));
    }
  }
  return l_pi + l_v + l_r;
}

/* The summed loss of the unroll (forward only). In freeze mode it records each latent as the
 * frozen point; otherwise the dynamics see scale * latent + (1 - scale) * frozen. */
static double unroll_loss(void *p) {
  unroll *u = p;
  const mb_tensor *s = mb_nn_forward(&u->t_repr, &u->obs, NULL);
  double total = 0;
  for (int k = 0; k <= UK; k++) {
    CHECK(mb_tensor_copy(&u->latent, s, err));
    if (!mb_nn_forward(&u->t_pred[k], &u->latent, NULL)) fail_msg("pred forward");
    if (k > 0 && !mb_nn_forward(&u->t_rew[k - 1], &u->latent, NULL)) fail_msg("reward forward");
    total += heads_loss(u, k, false);
    if (k == UK) break;
    if (u->freeze) CHECK(mb_tensor_copy(&u->frozen[k], &u->latent, err));
    for (int64_t i = 0; i < mb_tensor_size(&u->latent); i++)
      u->latent.data[i] = u->scale * u->latent.data[i] + (1 - u->scale) * u->frozen[k].data[i];
    CHECK(mb_tensor_set_cols(&u->dyn_in, 0, &u->latent, err));
    CHECK(mb_tensor_set_onehot(&u->dyn_in, UW, UA, u->action[k], err));
    s = mb_nn_forward(&u->t_dyn[k], &u->dyn_in, NULL);
    if (!s) fail_msg("dynamics forward");
  }
  return total;
}

static uint64_t unroll_pattern(void *p) {
  unroll *u = p;
  uint64_t h = tape_pattern(&u->t_repr, 0xcbf29ce484222325ULL);
  for (int k = 0; k < UK; k++) h = tape_pattern(&u->t_dyn[k], tape_pattern(&u->t_rew[k], h));
  for (int k = 0; k <= UK; k++) h = tape_pattern(&u->t_pred[k], h);
  return h;
}

/* Forward at the base point, then backprop through time in reverse step order. */
static double unroll_backward(unroll *u) {
  mb_nn_module *mods[] = {&u->repr, &u->dyn, &u->pred, &u->reward};
  for (int i = 0; i < 4; i++) mb_nn_zero_grad(mods[i]);
  u->freeze = true;
  double loss = unroll_loss(u);
  u->freeze = false;
  mb_tensor carry; /* d loss / d latent_k from the steps after k */
  CHECK(mb_tensor_init(&carry, UB, UW, err));
  for (int k = UK; k >= 0; k--) {
    /* the heads' tapes hold step k's activations: recompute their gradient */
    heads_loss(u, k, true);
    if (k < UK) CHECK(mb_tensor_axpy(&u->ds, 1.0f, &carry, err));
    if (k == 0) break;
    CHECK(mb_nn_backward(&u->t_dyn[k - 1], &u->ds, &u->din, err));
    CHECK(mb_tensor_get_cols(&carry, &u->din, 0, UW, err));
    mb_nn_scale_gradient(&carry, u->scale);
  }
  CHECK(mb_nn_backward(&u->t_repr, &u->ds, NULL, err));
  mb_tensor_free(&carry);
  return loss;
}

static void test_grad_unroll(void **state) {
  (void)state;
  unroll *u = malloc(sizeof *u);
  unroll_init(u, 9);
  double loss = unroll_backward(u);
  assert_true(isfinite(loss) && loss > 0);
  assert_true(unroll_loss(u) == loss); /* frozen latents: same value at the base point */
  mb_nn_module *mods[] = {&u->repr, &u->dyn, &u->pred, &u->reward};
  fd_stats st = {0, 0};
  for (int i = 0; i < 4; i++)
    for (int32_t p = 0; p < mods[i]->n_params; p++) {
      char what[96];
      snprintf(what, sizeof what, "%s/%s", mods[i]->name, mods[i]->params[p].name);
      check_grad(what, unroll_loss, unroll_pattern, u, mods[i]->params[p].value.data,
                 mods[i]->params[p].grad.data, mb_tensor_size(&mods[i]->params[p].value), 40, &st);
    }
  assert_few_skipped(&st);
  /* The scale matters: without it the dynamics gradient differs (the test can fail). */
  mb_tensor g_half;
  CHECK(mb_tensor_init(&g_half, u->dyn.params[0].grad.rows, u->dyn.params[0].grad.cols, err));
  CHECK(mb_tensor_copy(&g_half, &u->dyn.params[0].grad, err));
  u->scale = 1.0f;
  unroll_backward(u);
  assert_false(mb_tensor_equal(&g_half, &u->dyn.params[0].grad));
  mb_tensor_free(&g_half);
  unroll_free(u);
  free(u);
}

/* ---------------------------------------------------------------- Adam */

static void test_adam_least_squares(void **state) {
  (void)state;
  enum { N = 64, D = 4 };
  mb_rng rng;
  mb_rng_seed(&rng, 10);
  float w_true[D] = {1.5f, -2.0f, 0.25f, 3.0f}, b_true = -0.7f;
  mb_tensor x, y, dy;
  CHECK(mb_tensor_init(&x, N, D, err));
  CHECK(mb_tensor_init(&y, N, 1, err));
  CHECK(mb_tensor_init(&dy, N, 1, err));
  fill_uniform(&x, &rng, -1, 1);
  for (int r = 0; r < N; r++) {
    double s = b_true;
    for (int j = 0; j < D; j++) s += (double)w_true[j] * mb_tensor_row(&x, r)[j];
    y.data[r] = (float)s;
  }
  mb_nn_module m;
  mb_nn_tape t;
  CHECK(mb_nn_module_create(&m, "ls", D, err));
  CHECK(mb_nn_add_linear(&m, 1, MB_INIT_XAVIER, err));
  mb_nn_module_init_params(&m, &rng);
  CHECK(mb_nn_tape_create(&t, &m, N, err));
  mb_adam opt;
  mb_adam_config cfg;
  mb_adam_config_default(&cfg);
  cfg.weight_decay = 0; /* the least-squares optimum is only exact without decay */
  mb_nn_module *mods[] = {&m};
  CHECK(mb_adam_create(&opt, mods, 1, &cfg, err));
  const int steps = 3000;
  double loss = 0;
  for (int s = 0; s < steps; s++) {
    opt.cfg.lr = 0.05 * 0.5 * (1 + cos(M_PI * s / steps)); /* cosine decay */
    mb_nn_zero_grad(&m);
    const mb_tensor *p = mb_nn_forward(&t, &x, NULL);
    CHECK(mb_loss_mse(p, &y, NULL, 1.0f / N, &loss, &dy, err));
    CHECK(mb_nn_backward(&t, &dy, NULL, err));
    CHECK(mb_adam_step(&opt, err));
  }
  assert_int_equal(opt.step, steps);
  for (int j = 0; j < D; j++)
    if (!(fabsf(m.params[0].value.data[j] - w_true[j]) <= 1e-3f))
      fail_msg("w[%d] = %g, solution %g (loss %g)", j, m.params[0].value.data[j], w_true[j], loss);
  assert_true(fabsf(m.params[1].value.data[0] - b_true) < 1e-3f);
  mb_adam_free(&opt);
  mb_nn_tape_free(&t);
  mb_nn_module_free(&m);
  mb_tensor_free(&x);
  mb_tensor_free(&y);
  mb_tensor_free(&dy);
}

/* Entry k of a one-layer module's weights then biases, as one vector: the value or the
 * gradient. */
static float *flat_param(mb_nn_module *m, int k, bool grad) {
  int64_t n0 = mb_tensor_size(&m->params[0].value);
  mb_nn_param *par = &m->params[k < n0 ? 0 : 1];
  return (grad ? par->grad.data : par->value.data) + (k < n0 ? k : k - n0);
}

/* Adam step by step against the textbook AdamW in double (Kingma and Ba's bias-corrected
 * moments, Loshchilov and Hutter's decoupled decay): p <- p (1 - lr wd) - lr m^ / (sqrt(v^) +
 * eps), m^ = m / (1 - beta1^t), v^ = v / (1 - beta2^t); weights decayed, biases not. Betas and
 * eps far from their defaults, so that every term shows. The config's ranges are checked at
 * each end; clipping to 0 or below clips nothing. */
static void test_adam_by_hand(void **state) {
  (void)state;
  enum { STEPS = 4, P = 8 }; /* linear 3 -> 2: 6 weights, then 2 biases */
  mb_nn_module m;
  mb_rng rng;
  mb_rng_seed(&rng, 17);
  CHECK(mb_nn_module_create(&m, "h", 3, err));
  CHECK(mb_nn_add_linear(&m, 2, MB_INIT_HE, err));
  mb_nn_module_init_params(&m, &rng);
  assert_int_equal(mb_tensor_size(&m.params[0].value) + mb_tensor_size(&m.params[1].value), P);
  mb_adam_config cfg = {.lr = 0.05, .beta1 = 0.7, .beta2 = 0.9, .eps = 0.03, .weight_decay = 0.4};
  mb_nn_module *mods[] = {&m};
  mb_adam opt;
  CHECK(mb_adam_create(&opt, mods, 1, &cfg, err));
  double p[P], mo[P] = {0}, v[P] = {0};
  for (int k = 0; k < P; k++) p[k] = *flat_param(&m, k, false);
  for (int t = 1; t <= STEPS; t++) {
    for (int k = 0; k < P; k++) {
      double g = (k % 3 - 1) * 0.8 + 0.3 * t * (k % 2 ? 1 : -1) + 0.05 * k;
      float *grad = flat_param(&m, k, true);
      *grad = (float)g;
      g = *grad;
      mo[k] = cfg.beta1 * mo[k] + (1 - cfg.beta1) * g;
      v[k] = cfg.beta2 * v[k] + (1 - cfg.beta2) * g * g;
      double mhat = mo[k] / (1 - pow(cfg.beta1, t)), vhat = v[k] / (1 - pow(cfg.beta2, t));
      double decay = k < 6 ? 1 - cfg.lr * cfg.weight_decay : 1;
      p[k] = p[k] * decay - cfg.lr * mhat / (sqrt(vhat) + cfg.eps);
    }
    CHECK(mb_adam_step(&opt, err));
    for (int k = 0; k < P; k++) {
      float got = *flat_param(&m, k, false);
      if (!(fabs(got - p[k]) <= 1e-6 * (1 + fabs(p[k]))))
        fail_msg("step %d, parameter %d: %.9g, by hand %.9g", t, k, got, p[k]);
    }
  }
  /* clipping to 0 or below: none */
  m.params[0].grad.data[0] = 3.0f;
  assert_true(mb_adam_clip_grad_norm(&opt, 0) > 0);
  assert_true(m.params[0].grad.data[0] == 3.0f);
  mb_adam_free(&opt);
  /* the ranges: lr >= 0, betas in [0, 1), eps > 0, weight decay >= 0 */
  struct {
    double lr, beta1, beta2, eps, wd;
    bool ok;
  } cases[] = {
      {0, 0, 0, 1e-8, 0, true},
      {-1e-9, 0.9, 0.999, 1e-8, 0, false},
      {1e-3, -1e-9, 0.999, 1e-8, 0, false},
      {1e-3, 1, 0.999, 1e-8, 0, false},
      {1e-3, 0.9, -1e-9, 1e-8, 0, false},
      {1e-3, 0.9, 1, 1e-8, 0, false},
      {1e-3, 0.9, 0.999, 0, 0, false},
      {1e-3, 0.9, 0.999, 1e-8, -1e-9, false},
      {1e-3, 0.9, 0.999, 1e-8, NAN, false},
      {NAN, 0.9, 0.999, 1e-8, 0, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    mb_adam_config c = {.lr = cases[i].lr,
                        .beta1 = cases[i].beta1,
                        .beta2 = cases[i].beta2,
                        .eps = cases[i].eps,
                        .weight_decay = cases[i].wd};
    mb_error e = {{0}};
    if (mb_adam_create(&opt, mods, 1, &c, &e) != cases[i].ok)
      fail_msg("case %zu: %s", i, cases[i].ok ? e.message : "taken");
    if (cases[i].ok)
      mb_adam_free(&opt);
    else
      assert_non_null(strstr(e.message, "adam: lr"));
  }
  mb_nn_module_free(&m);
}

/* Decoupled decay: with zero gradients, decayed weights shrink by exactly (1 - lr wd) and
 * undecayed biases stay; a non-finite gradient is refused without touching parameters. */
static void test_adam_decay_and_clip(void **state) {
  (void)state;
  mb_nn_module m;
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  CHECK(mb_nn_module_create(&m, "d", 3, err));
  CHECK(mb_nn_add_linear(&m, 2, MB_INIT_HE, err));
  mb_nn_module_init_params(&m, &rng);
  m.params[1].value.data[0] = 0.5f;
  mb_adam opt;
  mb_adam_config cfg;
  mb_adam_config_default(&cfg);
  cfg.lr = 0.1;
  cfg.weight_decay = 0.5;
  mb_nn_module *mods[] = {&m};
  CHECK(mb_adam_create(&opt, mods, 1, &cfg, err));
  float w0 = m.params[0].value.data[0];
  CHECK(mb_adam_step(&opt, err));
  assert_true(m.params[0].value.data[0] == w0 * (float)(1.0 - 0.1 * 0.5));
  assert_true(m.params[1].value.data[0] == 0.5f);
  /* clipping: norm 5 clipped to 1 keeps the direction */
  mb_nn_zero_grad(&m);
  m.params[0].grad.data[0] = 3.0f;
  m.params[1].grad.data[1] = 4.0f;
  assert_true(fabs(mb_adam_clip_grad_norm(&opt, 1.0) - 5.0) < 1e-12);
  assert_true(fabs(mb_adam_grad_norm(&opt) - 1.0) < 1e-6);
  assert_true(fabsf(m.params[0].grad.data[0] - 0.6f) < 1e-6f);
  assert_true(fabs(mb_adam_clip_grad_norm(&opt, 10.0) - 1.0) < 1e-6); /* below: unchanged */
  assert_true(fabsf(m.params[1].grad.data[1] - 0.8f) < 1e-6f);
  m.params[1].grad.data[0] = NAN;
  float before = m.params[0].value.data[1];
  mb_error err;
  assert_false(mb_adam_step(&opt, &err));
  assert_non_null(strstr(err.message, "d/l0.bias[0]"));
  assert_true(m.params[0].value.data[1] == before);
  mb_adam_free(&opt);
  mb_nn_module_free(&m);
}

/* A frozen module stays exactly as it is through later steps, though its moments from earlier
 * steps and its weight decay would move it, and the gradient norm and clipping leave it out;
 * the other module keeps training. An unknown module is an error naming it. */
static void test_adam_freeze(void **state) {
  (void)state;
  mb_nn_module a, b;
  mb_rng rng;
  mb_rng_seed(&rng, 13);
  CHECK(mb_nn_module_create(&a, "a", 3, err));
  CHECK(mb_nn_add_linear(&a, 2, MB_INIT_HE, err));
  CHECK(mb_nn_module_create(&b, "b", 3, err));
  CHECK(mb_nn_add_linear(&b, 2, MB_INIT_HE, err));
  mb_nn_module_init_params(&a, &rng);
  mb_nn_module_init_params(&b, &rng);
  mb_adam opt;
  mb_adam_config cfg;
  mb_adam_config_default(&cfg);
  cfg.lr = 0.1;
  cfg.weight_decay = 0.5;
  mb_nn_module *mods[] = {&a, &b};
  CHECK(mb_adam_create(&opt, mods, 2, &cfg, err));
  /* one step with gradients everywhere: both move, both get moments */
  a.params[0].grad.data[0] = 1.0f;
  b.params[0].grad.data[0] = 1.0f;
  CHECK(mb_adam_step(&opt, err));
  mb_error unknown;
  assert_false(mb_adam_freeze(&opt, "c", &unknown));
  assert_non_null(strstr(unknown.message, "no module named 'c'"));
  CHECK(mb_adam_freeze(&opt, "a", err));
  float a0 = a.params[0].value.data[0], a1 = a.params[0].value.data[1];
  float b0 = b.params[0].value.data[0], b1 = b.params[0].value.data[1];
  /* gradients of 3 (frozen) and 4 (trained): the norm is 4, clipping to 2 halves b's only */
  mb_nn_zero_grad(&a);
  mb_nn_zero_grad(&b);
  a.params[0].grad.data[0] = 3.0f;
  b.params[0].grad.data[0] = 4.0f;
  assert_true(fabs(mb_adam_grad_norm(&opt) - 4.0) < 1e-12);
  assert_true(fabs(mb_adam_clip_grad_norm(&opt, 2.0) - 4.0) < 1e-12);
  assert_true(a.params[0].grad.data[0] == 3.0f);
  assert_true(b.params[0].grad.data[0] == 2.0f);
  for (int i = 0; i < 3; i++) CHECK(mb_adam_step(&opt, err));
  assert_true(a.params[0].value.data[0] == a0 && a.params[0].value.data[1] == a1);
  assert_true(b.params[0].value.data[0] != b0 && b.params[0].value.data[1] != b1);
  /* a frozen module's gradient is not checked either: it is not used */
  a.params[0].grad.data[0] = NAN;
  CHECK(mb_adam_step(&opt, err));
  assert_true(a.params[0].value.data[0] == a0);
  mb_adam_free(&opt);
  mb_nn_module_free(&a);
  mb_nn_module_free(&b);
}

/* ---------------------------------------------------------------- tapes, batching, determinism */

/* Two applications of one module accumulate the sum of their gradients; a batch of rows gives
 * each row's single-sample output. */
static void test_accumulate_and_batch(void **state) {
  (void)state;
  mb_nn_module m;
  mb_nn_tape t1, t2;
  mb_rng rng;
  mb_rng_seed(&rng, 12);
  CHECK(mb_nn_build_resmlp(&m, "acc", 5, 6, 1, 3, MB_INIT_XAVIER, err));
  mb_nn_module_init_params(&m, &rng);
  CHECK(mb_nn_tape_create(&t1, &m, 4, err));
  CHECK(mb_nn_tape_create(&t2, &m, 4, err));
  mb_tensor x1, x2, dy, g1, row, one;
  CHECK(mb_tensor_init(&x1, 4, 5, err));
  CHECK(mb_tensor_init(&x2, 4, 5, err));
  CHECK(mb_tensor_init(&dy, 4, 3, err));
  CHECK(mb_tensor_init(&row, 1, 5, err));
  CHECK(mb_tensor_init(&one, 1, 3, err));
  fill_uniform(&x1, &rng, -1, 1);
  fill_uniform(&x2, &rng, -1, 1);
  fill_uniform(&dy, &rng, -1, 1);
  mb_error fresh;
  assert_false(mb_nn_backward(&t1, &dy, NULL, &fresh)); /* before any forward */
  assert_string_equal(fresh.message, "nn backward: no forward recorded on this tape");
  CHECK(mb_tensor_init(&g1, m.params[0].grad.rows, m.params[0].grad.cols, err));
  mb_nn_forward(&t1, &x1, NULL);
  mb_nn_forward(&t2, &x2, NULL);
  CHECK(mb_nn_backward(&t2, &dy, NULL, err));
  CHECK(mb_tensor_copy(&g1, &m.params[0].grad, err));
  CHECK(mb_nn_backward(&t1, &dy, NULL, err));
  CHECK(mb_tensor_axpy(&g1, -1.0f, &m.params[0].grad, err)); /* g1 = -grad(x1) */
  mb_nn_zero_grad(&m);
  CHECK(mb_nn_backward(&t1, &dy, NULL, err));
  for (int64_t i = 0; i < mb_tensor_size(&g1); i++)
    assert_true(fabsf(g1.data[i] + m.params[0].grad.data[i]) <= 1e-5f);
  const mb_tensor *yb = mb_nn_forward(&t1, &x1, NULL);
  for (int r = 0; r < 4; r++) {
    memcpy(row.data, mb_tensor_row(&x1, r), 5 * sizeof(float));
    const mb_tensor *y1 = mb_nn_forward(&t2, &row, NULL);
    for (int j = 0; j < 3; j++) assert_true(fabsf(y1->data[j] - mb_tensor_row(yb, r)[j]) <= 1e-5f);
  }
  /* errors: batch above the tape's capacity, wrong width, backward with a wrong shape */
  mb_tensor big;
  mb_error e;
  CHECK(mb_tensor_init(&big, 5, 5, err));
  assert_null(mb_nn_forward(&t1, &big, &e));
  assert_non_null(strstr(e.message, "acc"));
  assert_null(mb_nn_forward(&t1, &dy, &e));
  assert_false(mb_nn_backward(&t2, &dy, NULL, &e)); /* t2 last ran batch 1 */
  assert_non_null(strstr(e.message, "backward gradient 4x3, expected 1x3"));
  mb_tensor *ts[] = {&x1, &x2, &dy, &g1, &row, &one, &big};
  for (int i = 0; i < 7; i++) mb_tensor_free(ts[i]);
  mb_nn_tape_free(&t1);
  mb_nn_tape_free(&t2);
  mb_nn_module_free(&m);
}

/* Same seed: identical weights, outputs and training trajectory; another seed differs. */
static void run_seeded(uint64_t seed, mb_tensor *out_w, mb_tensor *out_y) {
  mb_nn_module m;
  mb_nn_tape t;
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  CHECK(mb_nn_build_resmlp(&m, "det", 20, 32, 2, 16, MB_INIT_XAVIER, err));
  mb_nn_module_init_params(&m, &rng);
  CHECK(mb_nn_tape_create(&t, &m, 8, err));
  mb_tensor x, dy;
  CHECK(mb_tensor_init(&x, 8, 20, err));
  CHECK(mb_tensor_init(&dy, 8, 16, err));
  mb_rng data;
  mb_rng_seed(&data, 99);
  fill_uniform(&x, &data, -1, 1);
  fill_uniform(&dy, &data, -1, 1);
  mb_adam opt;
  mb_adam_config cfg;
  mb_adam_config_default(&cfg);
  mb_nn_module *mods[] = {&m};
  CHECK(mb_adam_create(&opt, mods, 1, &cfg, err));
  for (int s = 0; s < 5; s++) {
    mb_nn_zero_grad(&m);
    mb_nn_forward(&t, &x, NULL);
    CHECK(mb_nn_backward(&t, &dy, NULL, err));
    CHECK(mb_adam_step(&opt, err));
  }
  CHECK(mb_tensor_init(out_w, m.params[2].value.rows, m.params[2].value.cols, err));
  CHECK(mb_tensor_copy(out_w, &m.params[2].value, err));
  const mb_tensor *y = mb_nn_forward(&t, &x, NULL);
  CHECK(mb_tensor_init(out_y, y->rows, y->cols, err));
  CHECK(mb_tensor_copy(out_y, y, err));
  mb_adam_free(&opt);
  mb_tensor_free(&x);
  mb_tensor_free(&dy);
  mb_nn_tape_free(&t);
  mb_nn_module_free(&m);
}

static void test_determinism(void **state) {
  (void)state;
  mb_tensor w1, y1, w2, y2, w3, y3;
  run_seeded(42, &w1, &y1);
  run_seeded(42, &w2, &y2);
  run_seeded(43, &w3, &y3);
  assert_true(mb_tensor_equal(&w1, &w2) && mb_tensor_equal(&y1, &y2));
  assert_false(mb_tensor_equal(&w1, &w3));
  assert_false(mb_tensor_equal(&y1, &y3));
  mb_tensor *ts[] = {&w1, &y1, &w2, &y2, &w3, &y3};
  for (int i = 0; i < 6; i++) mb_tensor_free(ts[i]);
}

/* The BLAS thread setting: it takes effect, clamps below 1, and results at one fixed count are
 * bit-identical run to run (the library's determinism guarantee, tensor.h). */
static void test_blas_threads(void **state) {
  (void)state;
  mb_blas_set_threads(1);
  assert_int_equal(mb_blas_threads(), 1);
  mb_blas_set_threads(0); /* clamped to 1, never OpenBLAS's "all cores" */
  assert_int_equal(mb_blas_threads(), 1);
  mb_blas_set_threads(2); /* OpenBLAS caps it at the cores it found */
  assert_true(mb_blas_threads() >= 1 && mb_blas_threads() <= 2);
  mb_tensor w1, y1, w2, y2;
  run_seeded(42, &w1, &y1);
  run_seeded(42, &w2, &y2);
  assert_true(mb_tensor_equal(&w1, &w2) && mb_tensor_equal(&y1, &y2));
  mb_blas_set_threads(1);
  assert_int_equal(mb_blas_threads(), 1);
  mb_tensor *ts[] = {&w1, &y1, &w2, &y2};
  for (int i = 0; i < 4; i++) mb_tensor_free(ts[i]);
  char who[128];
  mb_blas_describe(who, sizeof who);
  assert_non_null(strstr(who, "OpenBLAS"));
}

/* mb_gemm against a double-precision reference for every transpose combination, and the
 * column helpers' bounds. */
static void test_tensor_ops(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 13);
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      const int M = 5, N = 3, K = 4;
      mb_tensor a, b, c;
      CHECK(mb_tensor_init(&a, ta ? K : M, ta ? M : K, err));
      CHECK(mb_tensor_init(&b, tb ? N : K, tb ? K : N, err));
      CHECK(mb_tensor_init(&c, M, N, err));
      fill_uniform(&a, &rng, -1, 1);
      fill_uniform(&b, &rng, -1, 1);
      mb_tensor_fill(&c, 1.0f);
      CHECK(mb_gemm(ta, tb, 2.0f, &a, &b, 0.5f, &c, err));
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          double ref = 0.5;
          for (int k = 0; k < K; k++)
            ref += 2.0 * (ta ? a.data[k * M + i] : a.data[i * K + k]) *
                   (tb ? b.data[j * K + k] : b.data[k * N + j]);
          assert_true(fabs(c.data[i * N + j] - ref) < 1e-5);
        }
      mb_error e;
      assert_false(mb_gemm(!ta, tb, 1.0f, &a, &b, 0.0f, &c, &e));
      assert_non_null(strstr(e.message, "gemm"));
      mb_tensor_free(&a);
      mb_tensor_free(&b);
      mb_tensor_free(&c);
    }
  mb_tensor t, part;
  mb_error e;
  CHECK(mb_tensor_init(&t, 2, 6, err));
  CHECK(mb_tensor_init(&part, 2, 6, err));
  int32_t act[2] = {3, 0}, bad[2] = {1, 4};
  CHECK(mb_tensor_set_onehot(&t, 2, 4, act, err));
  assert_true(t.data[5] == 1.0f && t.data[6 + 2] == 1.0f && t.data[4] == 0.0f);
  assert_false(mb_tensor_set_onehot(&t, 2, 4, bad, &e));
  assert_non_null(strstr(e.message, "row 1: action 4 outside [0, 4)"));
  CHECK(mb_tensor_get_cols(&part, &t, 2, 4, err));
  assert_true(part.rows == 2 && part.cols == 4 && part.data[3] == 1.0f);
  assert_false(mb_tensor_get_cols(&part, &t, 3, 4, &e));
  assert_false(mb_tensor_set_cols(&t, 3, &part, &e));
  assert_false(mb_tensor_reshape(&part, 3, 5, &e));
  mb_tensor_free(&t);
  mb_tensor_free(&part);
}

/* Each tensor helper at the edges of what it accepts: a dimension of 0 either way, one column,
 * column 0, the last columns, shapes that differ in one dimension only; the errors name the
 * columns asked for; equality looks at every element. */
static void test_tensor_bounds(void **state) {
  (void)state;
  mb_tensor t, u, part;
  mb_error e;
  assert_false(mb_tensor_init(&t, 0, 5, &e));
  assert_non_null(strstr(e.message, "shape 0x5"));
  assert_false(mb_tensor_init(&t, 5, 0, &e));
  assert_non_null(strstr(e.message, "shape 5x0"));
  assert_false(mb_tensor_init(&t, 1 << 20, 1 << 20, &e));
  assert_non_null(strstr(e.message, "too large"));
  CHECK(mb_tensor_init(&t, 2, 3, err));
  CHECK(mb_tensor_init(&u, 2, 3, err));
  CHECK(mb_tensor_init(&part, 2, 3, err));

  /* axpy: the columns differ, the rows do not (and the other way) */
  CHECK(mb_tensor_reshape(&u, 2, 2, err));
  assert_false(mb_tensor_axpy(&t, 1.0f, &u, &e));
  assert_non_null(strstr(e.message, "shape 2x3 += 2x2"));
  CHECK(mb_tensor_reshape(&u, 1, 3, err));
  assert_false(mb_tensor_axpy(&t, 1.0f, &u, &e));

  /* one-hot: one column, at column 0, and at the last column; one past it refused */
  int32_t zero[2] = {0, 0}, act[2] = {2, 1};
  mb_tensor_fill(&t, 7.0f);
  CHECK(mb_tensor_set_onehot(&t, 0, 1, zero, err));
  assert_true(t.data[0] == 1.0f && t.data[3] == 1.0f && t.data[1] == 7.0f);
  CHECK(mb_tensor_set_onehot(&t, 2, 1, zero, err));
  assert_true(t.data[2] == 1.0f && t.data[5] == 1.0f);
  CHECK(mb_tensor_set_onehot(&t, 0, 3, act, err));
  float want[6] = {0, 0, 1, 0, 1, 0};
  assert_memory_equal(t.data, want, sizeof want);
  assert_false(mb_tensor_set_onehot(&t, 1, 3, act, &e));
  assert_non_null(strstr(e.message, "columns [1, 4) of 2x3"));
  assert_false(mb_tensor_set_onehot(&t, -1, 2, act, &e));
  assert_false(mb_tensor_set_onehot(&t, 0, 0, act, &e));

  /* get_cols: one column, the first and the last; one past the end refused */
  CHECK(mb_tensor_get_cols(&part, &t, 0, 1, err));
  assert_true(part.rows == 2 && part.cols == 1 && part.data[0] == 0.0f && part.data[1] == 0.0f);
  CHECK(mb_tensor_get_cols(&part, &t, 2, 1, err));
  assert_true(part.data[0] == 1.0f && part.data[1] == 0.0f);
  assert_false(mb_tensor_get_cols(&part, &t, 2, 2, &e));
  assert_non_null(strstr(e.message, "columns [2, 4) of 2x3"));
  assert_false(mb_tensor_get_cols(&part, &t, 0, 0, &e));

  /* equal: a difference in the last element counts */
  CHECK(mb_tensor_copy(&u, &t, err));
  assert_true(mb_tensor_equal(&t, &u));
  u.data[5] = 0.5f;
  assert_false(mb_tensor_equal(&t, &u));
  mb_tensor_free(&t);
  mb_tensor_free(&u);
  mb_tensor_free(&part);
}

static void test_building_errors(void **state) {
  (void)state;
  mb_nn_module m;
  mb_nn_tape t;
  mb_error err;
  assert_false(mb_nn_module_create(&m, "bad/name", 4, &err));
  assert_non_null(strstr(err.message, "'/'"));
  assert_false(mb_nn_module_create(&m, "ok", 0, &err));
  assert_true(mb_nn_module_create(&m, "ok", 4, &err));
  assert_false(mb_nn_add_linear(&m, 0, MB_INIT_HE, &err));
  assert_false(mb_nn_tape_create(&t, &m, 1, &err)); /* no layers */
  assert_true(mb_nn_add_resblock(&m, &err));
  assert_false(mb_nn_tape_create(&t, &m, 0, &err));
  assert_int_equal(mb_nn_param_count(&m), 2 * (4 * 4 + 4) + 2 * (4 + 4));
  /* forward 2*B*16 per linear; backward adds dW and dx for both (the first has params below) */
  assert_int_equal(mb_nn_gemm_flops(&m, 3, false, false), 2 * 2 * 3 * 16);
  mb_nn_module_free(&m);
}

int main(void) {
  mb_blas_set_threads(1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grad_linear),         cmocka_unit_test(test_grad_relu),
      cmocka_unit_test(test_grad_layernorm),      cmocka_unit_test(test_layernorm_values),
      cmocka_unit_test(test_grad_resblock),       cmocka_unit_test(test_grad_minmax),
      cmocka_unit_test(test_minmax_constant_row), cmocka_unit_test(test_simnorm),
      cmocka_unit_test(test_grad_losses),         cmocka_unit_test(test_softmax_xent_errors),
      cmocka_unit_test(test_value_transform),     cmocka_unit_test(test_twohot),
      cmocka_unit_test(test_grad_unroll),         cmocka_unit_test(test_adam_least_squares),
      cmocka_unit_test(test_adam_by_hand),        cmocka_unit_test(test_adam_decay_and_clip),
      cmocka_unit_test(test_adam_freeze),         cmocka_unit_test(test_accumulate_and_batch),
      cmocka_unit_test(test_determinism),         cmocka_unit_test(test_building_errors),
      cmocka_unit_test(test_tensor_ops),          cmocka_unit_test(test_tensor_bounds),
      cmocka_unit_test(test_blas_threads),        cmocka_unit_test(test_state_resmlp),
      cmocka_unit_test(test_gemv_forward),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
