#include "adam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void mb_adam_config_default(mb_adam_config *cfg) {
  cfg->lr = 1e-3;
  cfg->beta1 = 0.9;
  cfg->beta2 = 0.999;
  cfg->eps = 1e-8;
  cfg->weight_decay = 1e-4;
}

void mb_adam_free(mb_adam *opt) {
  for (int32_t i = 0; i < opt->n; i++) {
    mb_tensor_free(&opt->slots[i].m);
    mb_tensor_free(&opt->slots[i].v);
  }
  free(opt->slots);
  memset(opt, 0, sizeof *opt);
}

bool mb_adam_create(mb_adam *opt, mb_nn_module *const *modules, int32_t n_modules,
                    const mb_adam_config *cfg, mb_error *err) {
  memset(opt, 0, sizeof *opt);
  if (!(cfg->lr >= 0) || !(cfg->beta1 >= 0 && cfg->beta1 < 1) ||
      !(cfg->beta2 >= 0 && cfg->beta2 < 1) || !(cfg->eps > 0) || !(cfg->weight_decay >= 0))
    return mb_fail(err,
                   "adam: lr %g (>= 0), beta1 %g and beta2 %g (in [0, 1)), eps %g (> 0), "
                   "weight_decay %g (>= 0)",
                   cfg->lr, cfg->beta1, cfg->beta2, cfg->eps, cfg->weight_decay);
  opt->cfg = *cfg;
  int32_t total = 0;
  for (int32_t k = 0; k < n_modules; k++) {
    for (int32_t j = 0; j < k; j++)
      if (!strcmp(modules[j]->name, modules[k]->name))
        return mb_fail(err, "adam: two modules named '%s'", modules[k]->name);
    total += modules[k]->n_params;
  }
  opt->slots = calloc(total ? (size_t)total : 1, sizeof *opt->slots);
  if (!opt->slots) return mb_fail(err, "adam: out of memory");
  for (int32_t k = 0; k < n_modules; k++)
    for (int32_t i = 0; i < modules[k]->n_params; i++) {
      mb_adam_slot *s = &opt->slots[opt->n++];
      s->module = modules[k]->name;
      s->param = &modules[k]->params[i];
      if (!mb_tensor_init(&s->m, s->param->value.rows, s->param->value.cols, err) ||
          !mb_tensor_init(&s->v, s->param->value.rows, s->param->value.cols, err)) {
        mb_adam_free(opt);
        return mb_fail_prefix(err, "adam: %s/%s", modules[k]->name, modules[k]->params[i].name);
      }
    }
  return true;
}

bool mb_adam_freeze(mb_adam *opt, const char *module, mb_error *err) {
  bool found = false;
  for (int32_t i = 0; i < opt->n; i++)
    if (!strcmp(opt->slots[i].module, module)) found = opt->slots[i].frozen = true;
  if (!found) return mb_fail(err, "adam: no module named '%s' to freeze", module);
  return true;
}

bool mb_adam_step(mb_adam *opt, mb_error *err) {
  for (int32_t i = 0; i < opt->n; i++) {
    if (opt->slots[i].frozen) continue;
    const mb_tensor *g = &opt->slots[i].param->grad;
    int64_t n = mb_tensor_size(g);
    for (int64_t k = 0; k < n; k++)
      if (!isfinite(g->data[k]))
        return mb_fail(err, "adam: gradient of %s/%s[%lld] is %g", opt->slots[i].module,
                       opt->slots[i].param->name, (long long)k, g->data[k]);
  }
  opt->step++;
  const mb_adam_config *c = &opt->cfg;
  double bc1 = 1.0 - pow(c->beta1, (double)opt->step), bc2 = 1.0 - pow(c->beta2, (double)opt->step);
  float b1 = (float)c->beta1, b2 = (float)c->beta2;
  float step = (float)(c->lr / bc1), rbc2 = (float)(1.0 / sqrt(bc2)), eps = (float)c->eps;
  for (int32_t i = 0; i < opt->n; i++) {
    mb_adam_slot *s = &opt->slots[i];
    if (s->frozen) continue;
    float *p = s->param->value.data, *m = s->m.data, *v = s->v.data;
    const float *g = s->param->grad.data;
    float decay = s->param->decay ? (float)(1.0 - c->lr * c->weight_decay) : 1.0f;
    int64_t n = mb_tensor_size(&s->param->value);
    for (int64_t k = 0; k < n; k++) {
      m[k] = b1 * m[k] + (1.0f - b1) * g[k];
      v[k] = b2 * v[k] + (1.0f - b2) * g[k] * g[k];
      p[k] = p[k] * decay - step * m[k] / (sqrtf(v[k]) * rbc2 + eps);
    }
  }
  return true;
}

double mb_adam_grad_norm(const mb_adam *opt) {
  double s = 0;
  for (int32_t i = 0; i < opt->n; i++)
    if (!opt->slots[i].frozen) s += mb_tensor_sumsq(&opt->slots[i].param->grad);
  return sqrt(s);
}

double mb_adam_clip_grad_norm(mb_adam *opt, double max_norm) {
  double norm = mb_adam_grad_norm(opt);
  if (max_norm > 0 && norm > max_norm) {
    float f = (float)(max_norm / norm);
    for (int32_t i = 0; i < opt->n; i++)
      if (!opt->slots[i].frozen) mb_tensor_scale(&opt->slots[i].param->grad, f);
  }
  return norm;
}
