#include "nn.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LN_EPS 1e-5f
#define MINMAX_EPS 1e-5f

/* ---------------------------------------------------------------- building */

bool mb_nn_module_create(mb_nn_module *m, const char *name, int32_t in_dim, mb_error *err) {
  memset(m, 0, sizeof *m);
  m->open_res = -1;
  size_t len = name ? strlen(name) : 0;
  if (len == 0 || len >= sizeof m->name)
    return mb_fail(err, "nn module: name '%s' must have 1..%d characters", name ? name : "",
                   (int)sizeof m->name - 1);
  for (size_t i = 0; i < len; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return mb_fail(err, "nn module: name '%s': character '%c' not in [A-Za-z0-9_-]", name, c);
  }
  if (in_dim < 1) return mb_fail(err, "nn module '%s': input width %d < 1", name, in_dim);
  memcpy(m->name, name, len + 1);
  m->in_dim = m->out_dim = in_dim;
  return true;
}

void mb_nn_module_free(mb_nn_module *m) {
  for (int32_t i = 0; i < m->n_params; i++) {
    mb_tensor_free(&m->params[i].value);
    mb_tensor_free(&m->params[i].grad);
  }
  free(m->params);
  free(m->layers);
  memset(m, 0, sizeof *m);
  m->open_res = -1;
}

static bool push_layer(mb_nn_module *m, mb_layer_kind kind, int32_t out, mb_error *err) {
  if (!m->name[0]) return mb_fail(err, "nn module: add a layer to a module not created");
  if (m->n_layers == m->cap_layers) {
    int32_t cap = m->cap_layers ? 2 * m->cap_layers : 16;
    mb_nn_layer *l = realloc(m->layers, (size_t)cap * sizeof *l);
    if (!l) return mb_fail(err, "nn module '%s': out of memory", m->name);
    m->layers = l;
    m->cap_layers = cap;
  }
  mb_nn_layer *l = &m->layers[m->n_layers++];
  memset(l, 0, sizeof *l);
  l->kind = kind;
  l->in = m->out_dim;
  l->out = out;
  l->param = -1;
  l->partner = -1;
  m->out_dim = out;
  return true;
}

static bool push_param(mb_nn_module *m, const char *suffix, int32_t rows, int32_t cols, bool decay,
                       mb_error *err) {
  if (m->n_params == m->cap_params) {
    int32_t cap = m->cap_params ? 2 * m->cap_params : 16;
    mb_nn_param *p = realloc(m->params, (size_t)cap * sizeof *p);
    if (!p) return mb_fail(err, "nn module '%s': out of memory", m->name);
    m->params = p;
    m->cap_params = cap;
  }
  mb_nn_param *p = &m->params[m->n_params];
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "l%d.%s", m->n_layers - 1, suffix);
  p->decay = decay;
  if (!mb_tensor_init(&p->value, rows, cols, err) || !mb_tensor_init(&p->grad, rows, cols, err)) {
    mb_tensor_free(&p->value);
    return mb_fail_prefix(err, "nn module '%s': parameter '%s'", m->name, p->name);
  }
  if (m->layers[m->n_layers - 1].param < 0) m->layers[m->n_layers - 1].param = m->n_params;
  m->n_params++;
  return true;
}

bool mb_nn_add_linear(mb_nn_module *m, int32_t out, mb_init init, mb_error *err) {
  if (out < 1) return mb_fail(err, "nn module '%s': linear output width %d < 1", m->name, out);
  int32_t in = m->out_dim;
  if (!push_layer(m, MB_LAYER_LINEAR, out, err)) return false;
  m->layers[m->n_layers - 1].init = init;
  return push_param(m, "weight", in, out, true, err) && push_param(m, "bias", 1, out, false, err);
}

bool mb_nn_add_relu(mb_nn_module *m, mb_error *err) {
  return push_layer(m, MB_LAYER_RELU, m->out_dim, err);
}

bool mb_nn_add_layernorm(mb_nn_module *m, mb_error *err) {
  int32_t d = m->out_dim;
  if (d < 2) return mb_fail(err, "nn module '%s': layernorm over width %d < 2", m->name, d);
  return push_layer(m, MB_LAYER_LAYERNORM, d, err) && push_param(m, "gain", 1, d, false, err) &&
         push_param(m, "shift", 1, d, false, err);
}

bool mb_nn_add_minmax(mb_nn_module *m, mb_error *err) {
  if (m->out_dim < 2)
    return mb_fail(err, "nn module '%s': minmax over width %d < 2", m->name, m->out_dim);
  return push_layer(m, MB_LAYER_MINMAX, m->out_dim, err);
}

bool mb_nn_add_simnorm(mb_nn_module *m, mb_error *err) {
  if (m->out_dim < MB_NN_SIMNORM_GROUP || m->out_dim % MB_NN_SIMNORM_GROUP != 0)
    return mb_fail(err, "nn module '%s': simnorm over width %d: expected a multiple of %d", m->name,
                   m->out_dim, MB_NN_SIMNORM_GROUP);
  return push_layer(m, MB_LAYER_SIMNORM, m->out_dim, err);
}

const char *mb_latent_norm_name(mb_latent_norm norm) {
  switch (norm) {
    case MB_LATENT_MINMAX:
      return "minmax";
    case MB_LATENT_SIMNORM:
      return "simnorm";
  }
  return "unknown";
}

bool mb_nn_add_latent_norm(mb_nn_module *m, mb_latent_norm norm, mb_error *err) {
  switch (norm) {
    case MB_LATENT_MINMAX:
      return mb_nn_add_minmax(m, err);
    case MB_LATENT_SIMNORM:
      return mb_nn_add_simnorm(m, err);
  }
  return mb_fail(err, "nn module '%s': latent norm %d: expected minmax (0) or simnorm (1)", m->name,
                 (int)norm);
}

bool mb_nn_add_resblock(mb_nn_module *m, mb_error *err) {
  if (m->open_res >= 0) return mb_fail(err, "nn module '%s': residual blocks do not nest", m->name);
  int32_t d = m->out_dim;
  if (!push_layer(m, MB_LAYER_RES_BEGIN, d, err)) return false;
  int32_t begin = m->n_layers - 1;
  m->open_res = begin;
  if (!mb_nn_add_layernorm(m, err) || !mb_nn_add_relu(m, err) ||
      !mb_nn_add_linear(m, d, MB_INIT_HE, err) || !mb_nn_add_layernorm(m, err) ||
      !mb_nn_add_relu(m, err) || !mb_nn_add_linear(m, d, MB_INIT_HE, err) ||
      !push_layer(m, MB_LAYER_RES_END, d, err))
    return false;
  m->layers[m->n_layers - 1].partner = begin;
  m->open_res = -1;
  return true;
}

/* Linear(in -> width) [He], ReLU and `blocks` residual blocks: every resmlp's trunk. */
static bool build_trunk(mb_nn_module *m, const char *name, int32_t in, int32_t width,
                        int32_t blocks, mb_error *err) {
  if (!mb_nn_module_create(m, name, in, err)) return false;
  bool ok = mb_nn_add_linear(m, width, MB_INIT_HE, err) && mb_nn_add_relu(m, err);
  for (int32_t b = 0; ok && b < blocks; b++) ok = mb_nn_add_resblock(m, err);
  if (!ok) mb_nn_module_free(m);
  return ok;
}

bool mb_nn_build_resmlp(mb_nn_module *m, const char *name, int32_t in, int32_t width,
                        int32_t blocks, int32_t out, mb_init out_init, mb_error *err) {
  if (!(width >= 2 && blocks >= 0 && out >= 0))
    return mb_fail(err, "nn module '%s': width %d (>= 2), blocks %d (>= 0), out %d (>= 0)", name,
                   width, blocks, out);
  if (!build_trunk(m, name, in, width, blocks, err)) return false;
  bool ok = out == 0 ? mb_nn_add_minmax(m, err)
                     : mb_nn_add_layernorm(m, err) && mb_nn_add_relu(m, err) &&
                           mb_nn_add_linear(m, out, out_init, err);
  if (!ok) mb_nn_module_free(m);
  return ok;
}

bool mb_nn_build_state_resmlp(mb_nn_module *m, const char *name, int32_t in, int32_t width,
                              int32_t blocks, int32_t state, mb_latent_norm norm, mb_error *err) {
  if (!(width >= 2 && blocks >= 0 && state >= 2))
    return mb_fail(err, "nn module '%s': width %d (>= 2), blocks %d (>= 0), state %d (>= 2)", name,
                   width, blocks, state);
  if (!build_trunk(m, name, in, width, blocks, err)) return false;
  bool ok = state == width || (mb_nn_add_layernorm(m, err) && mb_nn_add_relu(m, err) &&
                               mb_nn_add_linear(m, state, MB_INIT_HE, err));
  ok = ok && mb_nn_add_latent_norm(m, norm, err);
  if (!ok) mb_nn_module_free(m);
  return ok;
}

void mb_nn_module_init_params(mb_nn_module *m, mb_rng *rng) {
  for (int32_t i = 0; i < m->n_layers; i++) {
    const mb_nn_layer *l = &m->layers[i];
    if (l->param < 0) continue;
    mb_tensor *a = &m->params[l->param].value, *b = &m->params[l->param + 1].value;
    if (l->kind == MB_LAYER_LINEAR) {
      double bound = l->init == MB_INIT_HE       ? sqrt(6.0 / l->in)
                     : l->init == MB_INIT_XAVIER ? sqrt(6.0 / (l->in + l->out))
                                                 : 0.0;
      int64_t n = mb_tensor_size(a);
      for (int64_t k = 0; k < n; k++)
        a->data[k] = bound > 0 ? (float)((2.0 * mb_rng_uniform(rng) - 1.0) * bound) : 0.0f;
      mb_tensor_zero(b);
    } else { /* layernorm */
      mb_tensor_fill(a, 1.0f);
      mb_tensor_zero(b);
    }
  }
  mb_nn_zero_grad(m);
}

void mb_nn_zero_grad(mb_nn_module *m) {
  for (int32_t i = 0; i < m->n_params; i++) mb_tensor_zero(&m->params[i].grad);
}

int64_t mb_nn_param_count(const mb_nn_module *m) {
  int64_t n = 0;
  for (int32_t i = 0; i < m->n_params; i++) n += mb_tensor_size(&m->params[i].value);
  return n;
}

static int32_t first_param_layer(const mb_nn_module *m) {
  for (int32_t i = 0; i < m->n_layers; i++)
    if (m->layers[i].param >= 0) return i;
  return m->n_layers;
}

int64_t mb_nn_gemm_flops(const mb_nn_module *m, int32_t batch, bool backward,
                         bool need_input_grad) {
  int64_t f = 0;
  int32_t first = first_param_layer(m);
  for (int32_t i = 0; i < m->n_layers; i++) {
    const mb_nn_layer *l = &m->layers[i];
    if (l->kind != MB_LAYER_LINEAR) continue;
    int64_t mul = 2 * (int64_t)batch * l->in * l->out;
    f += mul;                                                          /* forward */
    if (backward) f += mul + (need_input_grad || i > first ? mul : 0); /* dW, dx */
  }
  return f;
}

void mb_nn_describe(const mb_nn_module *m, char *out, int n) {
  int used = snprintf(out, (size_t)n, "%s:", m->name);
  for (int32_t i = 0; i < m->n_layers && used >= 0 && used < n; i++) {
    const mb_nn_layer *l = &m->layers[i];
    char piece[64];
    switch (l->kind) {
      case MB_LAYER_LINEAR:
        snprintf(piece, sizeof piece, " linear %d->%d", l->in, l->out);
        break;
      case MB_LAYER_RELU:
        snprintf(piece, sizeof piece, " relu");
        break;
      case MB_LAYER_LAYERNORM:
        snprintf(piece, sizeof piece, " ln");
        break;
      case MB_LAYER_MINMAX:
        snprintf(piece, sizeof piece, " minmax");
        break;
      case MB_LAYER_SIMNORM:
        snprintf(piece, sizeof piece, " simnorm/%d", MB_NN_SIMNORM_GROUP);
        break;
      case MB_LAYER_RES_BEGIN:
        snprintf(piece, sizeof piece, " [res");
        break;
      case MB_LAYER_RES_END:
        snprintf(piece, sizeof piece, " ]");
        break;
    }
    used += snprintf(out + used, (size_t)(n - used), "%s", piece);
  }
}

/* ---------------------------------------------------------------- tapes */

void mb_nn_tape_free(mb_nn_tape *t) {
  if (t->cache && t->module) {
    for (int32_t i = 0; i < t->module->n_layers; i++) {
      mb_tensor_free(&t->cache[i].out);
      mb_tensor_free(&t->cache[i].aux);
      mb_tensor_free(&t->cache[i].aux2);
      free(t->cache[i].idx);
    }
  }
  free(t->cache);
  mb_tensor_free(&t->input);
  mb_tensor_free(&t->grad[0]);
  mb_tensor_free(&t->grad[1]);
  mb_tensor_free(&t->stash);
  memset(t, 0, sizeof *t);
}

bool mb_nn_tape_create(mb_nn_tape *t, const mb_nn_module *m, int32_t max_batch, mb_error *err) {
  memset(t, 0, sizeof *t);
  if (m->n_layers == 0)
    return mb_fail(err, "nn module '%s': tape of a module without layers", m->name);
  if (m->open_res >= 0)
    return mb_fail(err, "nn module '%s': residual block opened at layer %d is not closed", m->name,
                   m->open_res);
  if (max_batch < 1)
    return mb_fail(err, "nn module '%s': tape max batch %d < 1", m->name, max_batch);
  t->module = m;
  t->max_batch = max_batch;
  t->cache = calloc((size_t)m->n_layers, sizeof *t->cache);
  if (!t->cache) return mb_fail(err, "nn module '%s': tape: out of memory", m->name);
  int32_t widest = m->in_dim;
  bool ok = mb_tensor_init(&t->input, max_batch, m->in_dim, err);
  for (int32_t i = 0; ok && i < m->n_layers; i++) {
    const mb_nn_layer *l = &m->layers[i];
    mb_nn_cache *c = &t->cache[i];
    if (l->out > widest) widest = l->out;
    ok = mb_tensor_init(&c->out, max_batch, l->out, err);
    if (ok && l->kind == MB_LAYER_LAYERNORM)
      ok = mb_tensor_init(&c->aux, max_batch, l->out, err) &&
           mb_tensor_init(&c->aux2, max_batch, 1, err);
    if (ok && l->kind == MB_LAYER_MINMAX) {
      ok = mb_tensor_init(&c->aux, max_batch, 1, err);
      c->idx = ok ? calloc(2 * (size_t)max_batch, sizeof *c->idx) : NULL;
      if (ok && !c->idx) ok = mb_fail(err, "tape: out of memory");
    }
  }
  ok = ok && mb_tensor_init(&t->grad[0], max_batch, widest, err) &&
       mb_tensor_init(&t->grad[1], max_batch, widest, err) &&
       mb_tensor_init(&t->stash, max_batch, widest, err);
  if (!ok) {
    mb_nn_tape_free(t);
    return mb_fail_prefix(err, "nn module '%s': tape for batch %d", m->name, max_batch);
  }
  return true;
}

static const mb_tensor *layer_input(const mb_nn_tape *t, int32_t i) {
  return i == 0 ? &t->input : &t->cache[i - 1].out;
}

/* y = x W + b. A single row goes through sgemv when the tape asks for it (mb_nn_tape_use_gemv):
 * sgemm packs all of W at every call, which at batch 1 costs as much as the product. */
static void linear_forward(const mb_nn_module *m, const mb_nn_layer *l, const mb_tensor *x,
                           mb_tensor *y, bool gemv) {
  const float *w = m->params[l->param].value.data, *b = m->params[l->param + 1].value.data;
  for (int32_t r = 0; r < x->rows; r++)
    memcpy(mb_tensor_row(y, r), b, (size_t)l->out * sizeof(float));
  if (gemv && x->rows == 1)
    cblas_sgemv(CblasRowMajor, CblasTrans, l->in, l->out, 1.0f, w, l->out, x->data, 1, 1.0f,
                y->data, 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x->rows, l->out, l->in, 1.0f, x->data,
                l->in, w, l->out, 1.0f, y->data, l->out);
}

static void layernorm_forward(const mb_nn_module *m, const mb_nn_layer *l, const mb_tensor *x,
                              mb_nn_cache *c) {
  const float *gain = m->params[l->param].value.data, *shift = m->params[l->param + 1].value.data;
  int32_t d = l->in;
  for (int32_t r = 0; r < x->rows; r++) {
    const float *xr = mb_tensor_row(x, r);
    float *h = mb_tensor_row(&c->aux, r), *y = mb_tensor_row(&c->out, r);
    float mean = 0, var = 0;
    for (int32_t j = 0; j < d; j++) mean += xr[j];
    mean /= (float)d;
    for (int32_t j = 0; j < d; j++) var += (xr[j] - mean) * (xr[j] - mean);
    float rstd = 1.0f / sqrtf(var / (float)d + LN_EPS);
    c->aux2.data[r] = rstd;
    for (int32_t j = 0; j < d; j++) {
      h[j] = (xr[j] - mean) * rstd;
      y[j] = gain[j] * h[j] + shift[j];
    }
  }
}

static void minmax_forward(const mb_nn_layer *l, const mb_tensor *x, mb_nn_cache *c) {
  int32_t d = l->in;
  for (int32_t r = 0; r < x->rows; r++) {
    const float *xr = mb_tensor_row(x, r);
    float *y = mb_tensor_row(&c->out, r);
    int32_t lo = 0, hi = 0;
    for (int32_t j = 1; j < d; j++) {
      if (xr[j] < xr[lo]) lo = j;
      if (xr[j] > xr[hi]) hi = j;
    }
    float range = xr[hi] - xr[lo];
    bool clamped = !(range >= MINMAX_EPS);
    float inv = 1.0f / (clamped ? MINMAX_EPS : range);
    c->aux.data[r] = inv;
    c->idx[2 * r] = lo;
    c->idx[2 * r + 1] = clamped ? -1 : hi;
    /* divide (not multiply by inv) so that the max maps to exactly 1 */
    float den = clamped ? MINMAX_EPS : range;
    for (int32_t j = 0; j < d; j++) y[j] = (xr[j] - xr[lo]) / den;
  }
}

/* A softmax per group, shifted by the group's max so that exp never overflows. */
static void simnorm_forward(const mb_nn_layer *l, const mb_tensor *x, mb_nn_cache *c) {
  for (int32_t r = 0; r < x->rows; r++) {
    const float *xr = mb_tensor_row(x, r);
    float *y = mb_tensor_row(&c->out, r);
    for (int32_t g = 0; g < l->in; g += MB_NN_SIMNORM_GROUP) {
      float top = xr[g], sum = 0;
      for (int32_t j = g + 1; j < g + MB_NN_SIMNORM_GROUP; j++) top = fmaxf(top, xr[j]);
      for (int32_t j = g; j < g + MB_NN_SIMNORM_GROUP; j++) sum += y[j] = expf(xr[j] - top);
      for (int32_t j = g; j < g + MB_NN_SIMNORM_GROUP; j++) y[j] /= sum;
    }
  }
}

const mb_tensor *mb_nn_forward(mb_nn_tape *t, const mb_tensor *x, mb_error *err) {
  const mb_nn_module *m = t->module;
  if (!m) return mb_fail(err, "nn forward: tape not created"), NULL;
  if (x->cols != m->in_dim || x->rows < 1 || x->rows > t->max_batch)
    return mb_fail(err, "nn module '%s': forward input %dx%d, expected batch 1..%d x %d", m->name,
                   x->rows, x->cols, t->max_batch, m->in_dim),
           NULL;
  int32_t B = x->rows;
  t->batch = B;
  mb_tensor_copy(&t->input, x, NULL);
  for (int32_t i = 0; i < m->n_layers; i++) {
    const mb_nn_layer *l = &m->layers[i];
    const mb_tensor *in = layer_input(t, i);
    mb_nn_cache *c = &t->cache[i];
    c->out.rows = B; /* within capacity: sized for max_batch x out at creation */
    int64_t n = (int64_t)B * l->out;
    switch (l->kind) {
      case MB_LAYER_LINEAR:
        linear_forward(m, l, in, &c->out, t->gemv);
        break;
      case MB_LAYER_RELU:
        for (int64_t k = 0; k < n; k++) c->out.data[k] = in->data[k] > 0 ? in->data[k] : 0.0f;
        break;
      case MB_LAYER_LAYERNORM:
        c->aux.rows = B;
        c->aux2.rows = B;
        layernorm_forward(m, l, in, c);
        break;
      case MB_LAYER_MINMAX:
        c->aux.rows = B;
        minmax_forward(l, in, c);
        break;
      case MB_LAYER_SIMNORM:
        simnorm_forward(l, in, c);
        break;
      case MB_LAYER_RES_BEGIN:
        memcpy(c->out.data, in->data, (size_t)n * sizeof(float));
        break;
      case MB_LAYER_RES_END: {
        const mb_tensor *skip = layer_input(t, l->partner);
        for (int64_t k = 0; k < n; k++) c->out.data[k] = in->data[k] + skip->data[k];
        break;
      }
    }
  }
  return &t->cache[m->n_layers - 1].out;
}

/* g (B x d) becomes the gradient w.r.t. the layernorm input, in place; parameter grads added. */
static void layernorm_backward(const mb_nn_module *m, const mb_nn_layer *l, const mb_nn_cache *c,
                               mb_tensor *g) {
  const float *gain = m->params[l->param].value.data;
  float *dgain = m->params[l->param].grad.data, *dshift = m->params[l->param + 1].grad.data;
  int32_t d = l->in;
  for (int32_t r = 0; r < g->rows; r++) {
    float *gr = mb_tensor_row(g, r);
    const float *h = mb_tensor_row(&c->aux, r);
    float rstd = c->aux2.data[r], m1 = 0, m2 = 0;
    for (int32_t j = 0; j < d; j++) {
      float dh = gr[j] * gain[j];
      dgain[j] += gr[j] * h[j];
      dshift[j] += gr[j];
      m1 += dh;
      m2 += dh * h[j];
    }
    m1 /= (float)d;
    m2 /= (float)d;
    for (int32_t j = 0; j < d; j++) gr[j] = rstd * (gr[j] * gain[j] - m1 - h[j] * m2);
  }
}

/* d y_j / d x: 1/d for every j, plus the effect of the min (all j) and of the max through the
 * denominator d = x_max - x_min (not when d was clamped to its floor, a constant). */
static void minmax_backward(const mb_nn_layer *l, const mb_nn_cache *c, mb_tensor *g) {
  int32_t d = l->in;
  for (int32_t r = 0; r < g->rows; r++) {
    float *gr = mb_tensor_row(g, r);
    const float *y = mb_tensor_row(&c->out, r);
    float inv = c->aux.data[r], s1 = 0, s2 = 0;
    for (int32_t j = 0; j < d; j++) {
      s1 += gr[j];
      s2 += gr[j] * y[j];
    }
    for (int32_t j = 0; j < d; j++) gr[j] *= inv;
    int32_t lo = c->idx[2 * r], hi = c->idx[2 * r + 1];
    if (hi >= 0) {
      gr[lo] += (s2 - s1) * inv;
      gr[hi] -= s2 * inv;
    } else {
      gr[lo] -= s1 * inv;
    }
  }
}

/* The softmax's Jacobian per group: d x_j = y_j (d y_j - sum_k y_k d y_k), in place. */
static void simnorm_backward(const mb_nn_layer *l, const mb_nn_cache *c, mb_tensor *g) {
  for (int32_t r = 0; r < g->rows; r++) {
    float *gr = mb_tensor_row(g, r);
    const float *y = mb_tensor_row(&c->out, r);
    for (int32_t s = 0; s < l->in; s += MB_NN_SIMNORM_GROUP) {
      float dot = 0;
      for (int32_t j = s; j < s + MB_NN_SIMNORM_GROUP; j++) dot += y[j] * gr[j];
      for (int32_t j = s; j < s + MB_NN_SIMNORM_GROUP; j++) gr[j] = y[j] * (gr[j] - dot);
    }
  }
}

bool mb_nn_backward(mb_nn_tape *t, const mb_tensor *dy, mb_tensor *dx, mb_error *err) {
  const mb_nn_module *m = t->module;
  if (!m || t->batch < 1) return mb_fail(err, "nn backward: no forward recorded on this tape");
  int32_t B = t->batch;
  if (dy->rows != B || dy->cols != m->out_dim)
    return mb_fail(err, "nn module '%s': backward gradient %dx%d, expected %dx%d", m->name,
                   dy->rows, dy->cols, B, m->out_dim);
  if (dx && (int64_t)B * m->in_dim > dx->capacity)
    return mb_fail(err, "nn module '%s': input gradient needs %dx%d, capacity %lld", m->name, B,
                   m->in_dim, (long long)dx->capacity);
  int32_t first = first_param_layer(m);
  mb_tensor *g = &t->grad[0];
  mb_tensor_copy(g, dy, NULL);
  for (int32_t i = m->n_layers - 1; i >= 0; i--) {
    const mb_nn_layer *l = &m->layers[i];
    bool need_dx = dx || i > first;
    if (!need_dx && l->param < 0) break; /* nothing below needs a gradient */
    const mb_nn_cache *c = &t->cache[i];
    int64_t n = (int64_t)B * l->out;
    switch (l->kind) {
      case MB_LAYER_LINEAR: {
        const mb_tensor *x = layer_input(t, i);
        mb_nn_param *w = &m->params[l->param], *b = &m->params[l->param + 1];
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l->in, l->out, B, 1.0f, x->data, l->in,
                    g->data, l->out, 1.0f, w->grad.data, l->out);
        for (int32_t r = 0; r < B; r++) {
          const float *gr = mb_tensor_row(g, r);
          for (int32_t j = 0; j < l->out; j++) b->grad.data[j] += gr[j];
        }
        if (need_dx) {
          mb_tensor *o = g == &t->grad[0] ? &t->grad[1] : &t->grad[0];
          o->rows = B;
          o->cols = l->in;
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, l->in, l->out, 1.0f, g->data,
                      l->out, w->value.data, l->out, 0.0f, o->data, l->in);
          g = o;
        }
        break;
      }
      case MB_LAYER_RELU:
        for (int64_t k = 0; k < n; k++)
          if (!(c->out.data[k] > 0)) g->data[k] = 0.0f;
        break;
      case MB_LAYER_LAYERNORM:
        layernorm_backward(m, l, c, g);
        break;
      case MB_LAYER_MINMAX:
        minmax_backward(l, c, g);
        break;
      case MB_LAYER_SIMNORM:
        simnorm_backward(l, c, g);
        break;
      case MB_LAYER_RES_END:
        mb_tensor_copy(&t->stash, g, NULL);
        break;
      case MB_LAYER_RES_BEGIN:
        for (int64_t k = 0; k < n; k++) g->data[k] += t->stash.data[k];
        break;
    }
    if (!need_dx) break;
  }
  if (dx) {
    dx->rows = B;
    dx->cols = m->in_dim;
    memcpy(dx->data, g->data, (size_t)B * m->in_dim * sizeof(float));
  }
  return true;
}

/* ---------------------------------------------------------------- losses */

static bool check_pair(const char *what, const mb_tensor *a, const mb_tensor *b,
                       const mb_tensor *grad, mb_error *err) {
  if (a->rows != b->rows || a->cols != b->cols)
    return mb_fail(err, "%s: input %dx%d, target %dx%d", what, a->rows, a->cols, b->rows, b->cols);
  if (grad && (int64_t)a->rows * a->cols > grad->capacity)
    return mb_fail(err, "%s: gradient needs %dx%d, capacity %lld", what, a->rows, a->cols,
                   (long long)grad->capacity);
  return true;
}

bool mb_loss_softmax_xent(const mb_tensor *logits, const mb_tensor *target, const uint8_t *mask,
                          const float *weight, float scale, double *loss, mb_tensor *dlogits,
                          mb_error *err) {
  if (!check_pair("softmax cross-entropy", logits, target, dlogits, err)) return false;
  int32_t B = logits->rows, A = logits->cols;
  double total = 0;
  for (int32_t r = 0; r < B; r++) { /* validate everything before writing anything */
    const float *t = mb_tensor_row(target, r);
    const uint8_t *mk = mask ? mask + (int64_t)r * A : NULL;
    int legal = 0;
    for (int32_t j = 0; j < A; j++) {
      if (!(t[j] >= 0) || !isfinite(t[j]))
        return mb_fail(err, "softmax cross-entropy: target[%d][%d] = %g is not a probability", r, j,
                       t[j]);
      if (mk && !mk[j] && t[j] > 0)
        return mb_fail(err, "softmax cross-entropy: target[%d][%d] = %g on an illegal action", r, j,
                       t[j]);
      legal += !mk || mk[j];
    }
    if (!legal) return mb_fail(err, "softmax cross-entropy: row %d has no legal action", r);
  }
  if (dlogits) {
    dlogits->rows = B;
    dlogits->cols = A;
  }
  for (int32_t r = 0; r < B; r++) {
    const float *z = mb_tensor_row(logits, r), *t = mb_tensor_row(target, r);
    const uint8_t *mk = mask ? mask + (int64_t)r * A : NULL;
    double zmax = -INFINITY, sum = 0, tsum = 0, dot = 0;
    for (int32_t j = 0; j < A; j++)
      if ((!mk || mk[j]) && z[j] > zmax) zmax = z[j];
    for (int32_t j = 0; j < A; j++)
      if (!mk || mk[j]) {
        sum += exp(z[j] - zmax);
        tsum += t[j];
        dot += t[j] * (z[j] - zmax);
      }
    double logz = log(sum), w = (weight ? weight[r] : 1.0) * scale;
    total += w * (tsum * logz - dot); /* -sum_j t_j log p_j */
    if (dlogits) {
      float *dz = mb_tensor_row(dlogits, r);
      for (int32_t j = 0; j < A; j++)
        dz[j] = (!mk || mk[j]) ? (float)(w * (tsum * exp(z[j] - zmax - logz) - t[j])) : 0.0f;
    }
  }
  if (loss) *loss = total;
  return true;
}

bool mb_loss_mse(const mb_tensor *pred, const mb_tensor *target, const float *weight, float scale,
                 double *loss, mb_tensor *dpred, mb_error *err) {
  if (!check_pair("squared error", pred, target, dpred, err)) return false;
  if (dpred) {
    dpred->rows = pred->rows;
    dpred->cols = pred->cols;
  }
  double total = 0;
  for (int32_t r = 0; r < pred->rows; r++) {
    const float *p = mb_tensor_row(pred, r), *t = mb_tensor_row(target, r);
    double w = (weight ? weight[r] : 1.0) * scale;
    for (int32_t j = 0; j < pred->cols; j++) {
      double e = (double)p[j] - t[j];
      total += w * e * e;
      if (dpred) mb_tensor_row(dpred, r)[j] = (float)(2.0 * w * e);
    }
  }
  if (loss) *loss = total;
  return true;
}

double mb_value_transform(double x) {
  /* sqrt(|x| + 1) - 1 written as |x| / (sqrt(|x| + 1) + 1): no cancellation near 0 */
  double a = fabs(x), r = a / (sqrt(a + 1.0) + 1.0);
  return (x < 0 ? -r : r) + MB_VALUE_EPS * x;
}

/* For y >= 0, x >= 0 solves eps u^2 + u - (1 + eps + y) = 0 with u = sqrt(x + 1). u - 1 is
 * written without cancellation (numerator rationalised twice), then x = (u - 1)(u + 1); odd
 * symmetry gives y < 0. Exact up to double rounding, also for |y| near 0. */
double mb_value_inverse(double y) {
  const double e = MB_VALUE_EPS;
  double a = fabs(y);
  double s = sqrt(1.0 + 4.0 * e * (1.0 + e + a));
  double um1 = 4.0 * a * (1.0 + e + a) / ((1.0 + 2.0 * e + 2.0 * a + s) * (1.0 + s));
  double x = um1 * (um1 + 2.0);
  return y < 0 ? -x : x;
}

bool mb_support_check(const mb_support *s, mb_error *err) {
  if (s->n < 2 || !(s->lo < s->hi) || !isfinite(s->lo) || !isfinite(s->hi))
    return mb_fail(err, "support: %d atoms on [%g, %g]: need >= 2 atoms and lo < hi", s->n, s->lo,
                   s->hi);
  return true;
}

/* Lower atom index and the mass of the upper one for y (clamped). */
static int32_t twohot_pos(const mb_support *s, float y, double *frac) {
  double pos = ((double)y - s->lo) / ((double)s->hi - s->lo) * (s->n - 1);
  if (!(pos > 0)) pos = 0; /* also NaN */
  if (pos > s->n - 1) pos = s->n - 1;
  int32_t i = (int32_t)floor(pos);
  if (i > s->n - 2) i = s->n - 2;
  *frac = pos - i;
  return i;
}

float mb_twohot_encode(const mb_support *s, float y, float *probs) {
  double frac;
  int32_t i = twohot_pos(s, y, &frac);
  memset(probs, 0, (size_t)s->n * sizeof(float));
  probs[i] = (float)(1.0 - frac);
  probs[i + 1] = (float)frac;
  return y < s->lo ? s->lo : y > s->hi ? s->hi : y;
}

float mb_twohot_decode(const mb_support *s, const float *probs) {
  double e = 0;
  for (int32_t i = 0; i < s->n; i++) e += (double)probs[i] * mb_support_atom(s, i);
  return (float)e;
}

bool mb_categorical_decode(const mb_support *s, const mb_tensor *logits, float *out,
                           mb_error *err) {
  if (!mb_support_check(s, err)) return false;
  if (logits->cols != s->n)
    return mb_fail(err, "categorical decode: logits have %d columns, support %d atoms",
                   logits->cols, s->n);
  for (int32_t r = 0; r < logits->rows; r++) {
    const float *z = mb_tensor_row(logits, r);
    double zmax = z[0], sum = 0, e = 0;
    for (int32_t j = 1; j < s->n; j++)
      if (z[j] > zmax) zmax = z[j];
    for (int32_t j = 0; j < s->n; j++) {
      double p = exp(z[j] - zmax);
      sum += p;
      e += p * mb_support_atom(s, j);
    }
    out[r] = (float)mb_value_inverse(e / sum);
  }
  return true;
}

bool mb_loss_categorical(const mb_support *s, const mb_tensor *logits, const float *target,
                         const float *weight, float scale, double *loss, mb_tensor *dlogits,
                         mb_error *err) {
  if (!mb_support_check(s, err)) return false;
  int32_t B = logits->rows, n = s->n;
  if (logits->cols != n)
    return mb_fail(err, "categorical loss: logits have %d columns, support %d atoms", logits->cols,
                   n);
  if (dlogits && (int64_t)B * n > dlogits->capacity)
    return mb_fail(err, "categorical loss: gradient needs %dx%d, capacity %lld", B, n,
                   (long long)dlogits->capacity);
  for (int32_t r = 0; r < B; r++)
    if (!isfinite(target[r]))
      return mb_fail(err, "categorical loss: target[%d] = %g is not finite", r, target[r]);
  if (dlogits) {
    dlogits->rows = B;
    dlogits->cols = n;
  }
  double total = 0;
  for (int32_t r = 0; r < B; r++) {
    const float *z = mb_tensor_row(logits, r);
    double frac;
    int32_t i = twohot_pos(s, (float)mb_value_transform(target[r]), &frac);
    double zmax = z[0], sum = 0;
    for (int32_t j = 1; j < n; j++)
      if (z[j] > zmax) zmax = z[j];
    for (int32_t j = 0; j < n; j++) sum += exp(z[j] - zmax);
    double logz = zmax + log(sum), w = (weight ? weight[r] : 1.0) * scale;
    total += w * ((1.0 - frac) * (logz - z[i]) + frac * (logz - z[i + 1]));
    if (dlogits) {
      float *dz = mb_tensor_row(dlogits, r);
      for (int32_t j = 0; j < n; j++) {
        double t = j == i ? 1.0 - frac : j == i + 1 ? frac : 0.0;
        dz[j] = (float)(w * (exp(z[j] - logz) - t));
      }
    }
  }
  if (loss) *loss = total;
  return true;
}
