/* mallocMuZero's networks and checkpoints (see agent.h). */
#include "agent.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_io.h"
#include "sha256.h"
#include "tensor.h"

void mb_agent_config_default(mb_agent_config *c) {
  memset(c, 0, sizeof *c);
  mb_game_config_default(&c->game);
  /* the agent's observation also shows the gain block and the next 4 buffers: measured in
   * datasets/agents/EXPERIMENTS.md ("Gain features and covering segment
   * starts") */
  c->game.gain_features = true;
  c->game.next_buffers = 4;
  c->obs_dim = mb_game_observation_size(&c->game);
  c->latent = 128;
  c->blocks = 1;
  c->support = 31;
  c->support_max = 10.5f;
  c->value_scale = 100.0f;
}

bool mb_agent_config_check(const mb_agent_config *c, mb_error *err) {
  if (!mb_game_config_check(&c->game, err)) return mb_fail_prefix(err, "agent config");
  if (c->obs_dim != mb_game_observation_size(&c->game))
    return mb_fail(err, "agent config: obs_dim %d but the game config gives %d", c->obs_dim,
                   mb_game_observation_size(&c->game));
  if (c->latent < MB_AGENT_MIN_WIDTH || c->latent > MB_AGENT_MAX_WIDTH)
    return mb_fail(err, "agent config: latent %d: expected in [%d, %d]", c->latent,
                   MB_AGENT_MIN_WIDTH, MB_AGENT_MAX_WIDTH);
  if (c->blocks < 0 || c->blocks > MB_AGENT_MAX_BLOCKS)
    return mb_fail(err, "agent config: blocks %d: expected in [0, %d]", c->blocks,
                   MB_AGENT_MAX_BLOCKS);
  if (c->dyn_width != 0 && (c->dyn_width < MB_AGENT_MIN_WIDTH || c->dyn_width > MB_AGENT_MAX_WIDTH))
    return mb_fail(err, "agent config: dyn_width %d: expected 0 (latent) or in [%d, %d]",
                   c->dyn_width, MB_AGENT_MIN_WIDTH, MB_AGENT_MAX_WIDTH);
  /* 0 is "as blocks"; a depth is 1 or more */
  if (c->dyn_blocks < 0 || c->dyn_blocks > MB_AGENT_MAX_BLOCKS)
    return mb_fail(err, "agent config: dyn_blocks %d: expected 0 (blocks) or in [1, %d]",
                   c->dyn_blocks, MB_AGENT_MAX_BLOCKS);
  if (c->latent_norm != MB_LATENT_MINMAX && c->latent_norm != MB_LATENT_SIMNORM)
    return mb_fail(err, "agent config: latent_norm %d: expected %d (minmax) or %d (simnorm)",
                   (int)c->latent_norm, MB_LATENT_MINMAX, MB_LATENT_SIMNORM);
  if (c->latent_norm == MB_LATENT_SIMNORM && c->latent % MB_NN_SIMNORM_GROUP != 0)
    return mb_fail(err, "agent config: latent %d with simnorm: expected a multiple of %d",
                   c->latent, MB_NN_SIMNORM_GROUP);
  if (c->support < MB_AGENT_MIN_SUPPORT || c->support > MB_AGENT_MAX_SUPPORT)
    return mb_fail(err, "agent config: support %d atoms: expected in [%d, %d]", c->support,
                   MB_AGENT_MIN_SUPPORT, MB_AGENT_MAX_SUPPORT);
  if (!(c->support_min <= 0) || !(c->support_max > 0) || !(c->value_scale > 0))
    return mb_fail(err,
                   "agent config: support_min %g / support_max %g / value_scale %g: expected <= 0 "
                   "/ > 0 / > 0",
                   (double)c->support_min, (double)c->support_max, (double)c->value_scale);
  return true;
}

const char *const MB_AGENT_NETWORKS[4] = {"repr", "dyn", "reward", "pred"};

/* The learned model: the dynamics (its own width and depth when set) and the reward head on
 * its latent output. */
static bool build_model(mb_nn_module *dyn, mb_nn_module *reward, const mb_agent_config *cfg,
                        mb_error *err) {
  int32_t W = cfg->latent;
  if (!mb_nn_build_state_resmlp(dyn, MB_AGENT_NETWORKS[1], mb_agent_dynamics_inputs(cfg),
                                mb_agent_dyn_width(cfg), mb_agent_dyn_blocks(cfg), W,
                                cfg->latent_norm, err))
    return false;
  if (mb_nn_build_resmlp(reward, MB_AGENT_NETWORKS[2], W, W, 0, cfg->support, MB_INIT_ZERO, err))
    return true;
  mb_nn_module_free(dyn);
  return false;
}

bool mb_agent_create(mb_agent *ag, const mb_agent_config *cfg, mb_rng *rng, mb_error *err) {
  memset(ag, 0, sizeof *ag);
  if (!mb_agent_config_check(cfg, err)) return false;
  ag->cfg = *cfg;
  ag->sup = (mb_support){.n = cfg->support, .lo = cfg->support_min, .hi = cfg->support_max};
  int32_t A = cfg->game.n_actions, W = cfg->latent;
  /* The prediction head is Xavier-initialised, not zero: zero policy logits would make the
   * untrained greedy policy tie-break to action 0, which is the heuristic's best-fit candidate,
   * and hide what the agent learned. The reward head starts at zero (MuZero's choice). */
  bool ok = mb_nn_build_state_resmlp(&ag->repr, MB_AGENT_NETWORKS[0], cfg->obs_dim, W, cfg->blocks,
                                     W, cfg->latent_norm, err) &&
            build_model(&ag->dyn, &ag->reward, cfg, err) &&
            mb_nn_build_resmlp(&ag->pred, MB_AGENT_NETWORKS[3], W, W, cfg->blocks, A + cfg->support,
                               MB_INIT_XAVIER, err);
  if (!ok) {
    mb_agent_free(ag);
    return mb_fail_prefix(err, "agent");
  }
  mb_nn_module_init_params(&ag->repr, rng);
  mb_nn_module_init_params(&ag->dyn, rng);
  mb_nn_module_init_params(&ag->reward, rng);
  mb_nn_module_init_params(&ag->pred, rng);
  return true;
}

bool mb_agent_new_model(mb_agent *ag, int32_t dyn_width, int32_t dyn_blocks, mb_rng *rng,
                        mb_error *err) {
  mb_agent_config cfg = ag->cfg;
  cfg.dyn_width = dyn_width;
  cfg.dyn_blocks = dyn_blocks;
  mb_nn_module dyn, reward;
  if (!mb_agent_config_check(&cfg, err) || !build_model(&dyn, &reward, &cfg, err))
    return mb_fail_prefix(err, "agent: new learned model");
  mb_nn_module_init_params(&dyn, rng);
  mb_nn_module_init_params(&reward, rng);
  mb_nn_module_free(&ag->dyn);
  mb_nn_module_free(&ag->reward);
  ag->dyn = dyn;
  ag->reward = reward;
  ag->cfg = cfg;
  return true;
}

void mb_agent_free(mb_agent *ag) {
  mb_nn_module_free(&ag->repr);
  mb_nn_module_free(&ag->dyn);
  mb_nn_module_free(&ag->reward);
  mb_nn_module_free(&ag->pred);
}

void mb_agent_modules(mb_agent *ag, mb_nn_module *out[4]) {
  out[0] = &ag->repr;
  out[1] = &ag->dyn;
  out[2] = &ag->reward;
  out[3] = &ag->pred;
}

int32_t mb_agent_dyn_width(const mb_agent_config *c) {
  return c->dyn_width ? c->dyn_width : c->latent;
}

int32_t mb_agent_dyn_blocks(const mb_agent_config *c) {
  return c->dyn_blocks ? c->dyn_blocks : c->blocks;
}

int32_t mb_agent_dynamics_inputs(const mb_agent_config *c) {
  return c->latent + c->game.n_actions + (c->action_features ? MB_AGENT_ACTION_FEATURES : 0);
}

void mb_agent_action_features(const mb_agent_config *c, const float *obs, int32_t action,
                              float *out) {
  if (!c->action_features) return;
  if (obs && action >= 0 && action < c->game.n_actions - 1)
    memcpy(out,
           obs + mb_game_candidate_block_offset(&c->game) +
               (int64_t)action * MB_GAME_OBS_PER_CANDIDATE,
           MB_AGENT_ACTION_FEATURES * sizeof(float));
  else
    memset(out, 0, MB_AGENT_ACTION_FEATURES * sizeof(float));
}

int64_t mb_agent_param_count(const mb_agent *ag) {
  return mb_nn_param_count(&ag->repr) + mb_nn_param_count(&ag->dyn) +
         mb_nn_param_count(&ag->reward) + mb_nn_param_count(&ag->pred);
}

/* The digest hashes a text manifest: one line for the config, one for the game, then per module
 * its layers and per parameter its shape and its values' SHA-256 (the checkpoint's per-tensor
 * "sha256" attribute, nn_io.h), so that it can be recomputed from those attributes alone. */
static void digest_line(mb_sha256 *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void digest_line(mb_sha256 *h, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  /* every line is far shorter than the buffer; were one cut, its prefix still enters */
  if (n > 0) mb_sha256_update(h, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
}

static const char *layer_kind_name(mb_layer_kind k) {
  switch (k) {
    case MB_LAYER_LINEAR:
      return "linear";
    case MB_LAYER_RELU:
      return "relu";
    case MB_LAYER_LAYERNORM:
      return "layernorm";
    case MB_LAYER_MINMAX:
      return "minmax";
    case MB_LAYER_SIMNORM:
      return "simnorm";
    case MB_LAYER_RES_BEGIN:
      return "res_begin";
    case MB_LAYER_RES_END:
      return "res_end";
  }
  return "unknown";
}

void mb_agent_digest(const mb_agent *ag, char hex[65]) {
  const mb_agent_config *c = &ag->cfg;
  const mb_game_config *g = &c->game;
  mb_sha256 h;
  mb_sha256_init(&h);
  digest_line(&h, "mallocmuzero agent digest 1\n");
  digest_line(&h,
              "config obs_dim %d latent %d blocks %d dyn_width %d dyn_blocks %d support %d "
              "support_min %.9g support_max %.9g value_scale %.9g action_features %d\n",
              c->obs_dim, c->latent, c->blocks, c->dyn_width, c->dyn_blocks, c->support,
              (double)c->support_min, (double)c->support_max, (double)c->value_scale,
              c->action_features ? 1 : 0);
  /* only when not minmax, so that every agent trained before SimNorm keeps its digest */
  if (c->latent_norm != MB_LATENT_MINMAX) digest_line(&h, "latent_norm %d\n", (int)c->latent_norm);
  digest_line(&h,
              "game n_actions %d order %s addr_bins %d time_bins %d lookahead %d auto_slow %d "
              "next_buffers %d demand_bins %d gain_features %d shaping %.17g\n",
              g->n_actions, mb_game_order_name(g->order), g->addr_bins, g->time_bins, g->lookahead,
              g->auto_slow ? 1 : 0, g->next_buffers, g->demand_bins, g->gain_features ? 1 : 0,
              g->shaping);
  mb_nn_module *mods[4];
  mb_agent_modules((mb_agent *)ag, mods);
  for (int i = 0; i < 4; i++) {
    const mb_nn_module *m = mods[i];
    digest_line(&h, "module %s in %d out %d layers", m->name, m->in_dim, m->out_dim);
    for (int32_t l = 0; l < m->n_layers; l++)
      digest_line(&h, " %s %d %d", layer_kind_name(m->layers[l].kind), m->layers[l].in,
                  m->layers[l].out);
    digest_line(&h, "\n");
    for (int32_t k = 0; k < m->n_params; k++) {
      const mb_tensor *t = &m->params[k].value;
      char values[65];
      mb_sha256_le_hex(t->data, mb_tensor_size(t), sizeof *t->data, values);
      digest_line(&h, "param %s %s %dx%d %s\n", m->name, m->params[k].name, t->rows, t->cols,
                  values);
    }
  }
  uint8_t d[32];
  mb_sha256_final(&h, d);
  mb_sha256_digest_hex(d, hex);
}

bool mb_agent_copy_weights(mb_agent *dst, const mb_agent *src, mb_error *err) {
  mb_nn_module *d[4], *s[4];
  mb_agent_modules(dst, d);
  mb_agent_modules((mb_agent *)src, s);
  for (int i = 0; i < 4; i++) {
    if (d[i]->n_params != s[i]->n_params)
      return mb_fail(err, "agent copy: module '%s': %d parameters vs %d", s[i]->name,
                     s[i]->n_params, d[i]->n_params);
    for (int32_t p = 0; p < s[i]->n_params; p++)
      if (!mb_tensor_copy(&d[i]->params[p].value, &s[i]->params[p].value, err))
        return mb_fail_prefix(err, "agent copy: %s.%s", s[i]->name, s[i]->params[p].name);
  }
  return true;
}

/* ---- inference ---- */

bool mb_agent_infer_create(mb_agent_infer *inf, const mb_agent *ag, mb_error *err) {
  memset(inf, 0, sizeof *inf);
  inf->ag = ag;
  if (!mb_nn_tape_create(&inf->repr, &ag->repr, 1, err) ||
      !mb_nn_tape_create(&inf->dyn, &ag->dyn, 1, err) ||
      !mb_nn_tape_create(&inf->reward, &ag->reward, 1, err) ||
      !mb_nn_tape_create(&inf->pred, &ag->pred, 1, err) ||
      !mb_tensor_init(&inf->x, 1, ag->cfg.obs_dim, err) ||
      !mb_tensor_init(&inf->in, 1, mb_agent_dynamics_inputs(&ag->cfg), err)) {
    mb_agent_infer_free(inf);
    return false;
  }
  return true;
}

void mb_agent_infer_use_gemv(mb_agent_infer *inf, bool on) {
  mb_nn_tape_use_gemv(&inf->repr, on);
  mb_nn_tape_use_gemv(&inf->dyn, on);
  mb_nn_tape_use_gemv(&inf->reward, on);
  mb_nn_tape_use_gemv(&inf->pred, on);
}

void mb_agent_infer_free(mb_agent_infer *inf) {
  mb_nn_tape_free(&inf->repr);
  mb_nn_tape_free(&inf->dyn);
  mb_nn_tape_free(&inf->reward);
  mb_nn_tape_free(&inf->pred);
  mb_tensor_free(&inf->x);
  mb_tensor_free(&inf->in);
}

/* f(s): policy logits and unscaled value from the prediction module's output row. */
static bool predict(mb_agent_infer *inf, const mb_tensor *s, float *logits, float *value,
                    mb_error *err) {
  const mb_agent *ag = inf->ag;
  int32_t A = ag->cfg.game.n_actions;
  const mb_tensor *o = mb_nn_forward(&inf->pred, s, err);
  if (!o) return false;
  if (logits) memcpy(logits, o->data, (size_t)A * sizeof(float));
  if (value) {
    mb_tensor vl = {
        .rows = 1, .cols = ag->cfg.support, .capacity = ag->cfg.support, .data = o->data + A};
    float v;
    if (!mb_categorical_decode(&ag->sup, &vl, &v, err)) return false;
    *value = v / ag->cfg.value_scale;
  }
  return true;
}

bool mb_agent_initial(mb_agent_infer *inf, const float *obs, float *latent, float *logits,
                      float *value, mb_error *err) {
  memcpy(inf->x.data, obs, (size_t)inf->ag->cfg.obs_dim * sizeof(float));
  const mb_tensor *s = mb_nn_forward(&inf->repr, &inf->x, err);
  if (!s) return false;
  if (latent) memcpy(latent, s->data, (size_t)inf->ag->cfg.latent * sizeof(float));
  return predict(inf, s, logits, value, err);
}

bool mb_agent_recurrent(mb_agent_infer *inf, const float *latent, int32_t action, const float *obs,
                        float *next_latent, float *reward, float *logits, float *value,
                        mb_error *err) {
  const mb_agent *ag = inf->ag;
  int32_t W = ag->cfg.latent, A = ag->cfg.game.n_actions;
  if (action < 0 || action >= A) return mb_fail(err, "agent: action %d outside [0, %d)", action, A);
  memset(inf->in.data, 0, (size_t)(W + A) * sizeof(float));
  memcpy(inf->in.data, latent, (size_t)W * sizeof(float));
  inf->in.data[W + action] = 1.0f;
  mb_agent_action_features(&ag->cfg, obs, action, inf->in.data + W + A);
  const mb_tensor *s = mb_nn_forward(&inf->dyn, &inf->in, err);
  if (!s) return false;
  if (next_latent) memcpy(next_latent, s->data, (size_t)W * sizeof(float));
  if (reward) {
    const mb_tensor *rl = mb_nn_forward(&inf->reward, s, err);
    float r;
    if (!rl || !mb_categorical_decode(&ag->sup, rl, &r, err)) return false;
    *reward = r / ag->cfg.value_scale;
  }
  return predict(inf, s, logits, value, err);
}

int32_t mb_agent_greedy(const float *logits, const uint8_t *mask, int32_t A) {
  int32_t best = -1;
  for (int32_t a = 0; a < A; a++)
    if (mask[a] && (best < 0 || logits[a] > logits[best])) best = a;
  return best;
}

/* ---- curve ---- */

void mb_agent_curve_init(mb_agent_curve *c) {
  memset(c, 0, sizeof *c);
  c->heuristic = c->random = NAN;
}

bool mb_agent_curve_push(mb_agent_curve *c, double step, double episodes, double selfplay,
                         double policy, double loss, double seconds, mb_error *err) {
  if (c->len == c->cap) {
    int64_t cap = c->cap ? c->cap * 2 : 64;
    double **cols[7] = {&c->step, &c->episodes, &c->selfplay,  &c->policy,
                        &c->loss, &c->seconds,  &c->validation};
    for (int i = 0; i < 7; i++) {
      double *p = realloc(*cols[i], (size_t)cap * sizeof(double));
      if (!p) return mb_fail(err, "training curve: out of memory");
      *cols[i] = p;
    }
    c->cap = cap;
  }
  c->step[c->len] = step;
  c->episodes[c->len] = episodes;
  c->selfplay[c->len] = selfplay;
  c->policy[c->len] = policy;
  c->loss[c->len] = loss;
  c->seconds[c->len] = seconds;
  c->validation[c->len] = NAN;
  c->len++;
  return true;
}

void mb_agent_curve_set_validation(mb_agent_curve *c, double validation) {
  if (c->len > 0) c->validation[c->len - 1] = validation;
}

void mb_agent_curve_free(mb_agent_curve *c) {
  free(c->step);
  free(c->episodes);
  free(c->selfplay);
  free(c->policy);
  free(c->loss);
  free(c->seconds);
  free(c->validation);
  mb_agent_curve_init(c);
}

/* ---- checkpoints ---- */

static const char *CURVE_NAMES[6] = {"curve_step",   "curve_episodes", "curve_selfplay",
                                     "curve_policy", "curve_loss",     "curve_seconds"};
/* Written only when some point has a validation return (runs without a validation set keep
 * the layout they always had); read when present. */
static const char *CURVE_VALIDATION = "curve_validation";
/* The curve's references (root attributes): written only when known, NaN when absent. */
static const char *CURVE_REFS[2] = {"curve.heuristic", "curve.random"};

static bool curve_has_validation(const mb_agent_curve *c) {
  for (int64_t i = 0; c->validation && i < c->len; i++)
    if (!isnan(c->validation[i])) return true;
  return false;
}

bool mb_agent_write(mb_nn_file *f, const mb_agent *ag, const mb_adam *opt,
                    const mb_agent_progress *prog, const mb_agent_curve *curve, const char *note,
                    mb_error *err) {
  const char *path = mb_nn_file_path(f);
  const mb_agent_config *c = &ag->cfg;
  mb_nn_module *mods[4];
  mb_agent_modules((mb_agent *)ag, mods);
  bool ok = mb_nn_file_set_string(f, "format", MB_AGENT_FORMAT, err) &&
            mb_nn_file_set_double(f, "cfg.latent", c->latent, err) &&
            mb_nn_file_set_double(f, "cfg.blocks", c->blocks, err) &&
            mb_nn_file_set_double(f, "cfg.support", c->support, err) &&
            mb_nn_file_set_double(f, "cfg.support_max", c->support_max, err) &&
            mb_nn_file_set_double(f, "cfg.value_scale", c->value_scale, err) &&
            mb_nn_file_set_double(f, "cfg.obs_dim", c->obs_dim, err) &&
            mb_nn_file_set_double(f, "game.n_actions", c->game.n_actions, err) &&
            mb_nn_file_set_string(f, "game.order", mb_game_order_name(c->game.order), err) &&
            mb_nn_file_set_double(f, "game.addr_bins", c->game.addr_bins, err) &&
            mb_nn_file_set_double(f, "game.time_bins", c->game.time_bins, err) &&
            mb_nn_file_set_double(f, "game.lookahead", c->game.lookahead, err) &&
            mb_nn_file_set_double(f, "game.auto_slow", c->game.auto_slow ? 1 : 0, err) &&
            mb_nn_file_set_double(f, "game.next_buffers", c->game.next_buffers, err) &&
            mb_nn_file_set_double(f, "game.gain_features", c->game.gain_features ? 1 : 0, err) &&
            mb_nn_file_set_double(f, "game.demand_bins", c->game.demand_bins, err) &&
            mb_nn_file_set_double(f, "game.shaping", c->game.shaping, err) &&
            mb_nn_file_set_double(f, "cfg.support_min", c->support_min, err) &&
            mb_nn_file_set_double(f, "cfg.action_features", c->action_features ? 1 : 0, err) &&
            mb_nn_file_set_double(f, "cfg.dyn_width", c->dyn_width, err) &&
            mb_nn_file_set_double(f, "cfg.dyn_blocks", c->dyn_blocks, err) &&
            mb_nn_file_set_double(f, "cfg.latent_norm", (double)c->latent_norm, err);
  for (int i = 0; ok && i < 4; i++) ok = mb_nn_file_write_module(f, mods[i], err);
  if (ok && opt) ok = mb_nn_file_write_adam(f, opt, err);
  if (ok && prog)
    ok = mb_nn_file_set_double(f, "train.steps", (double)prog->steps, err) &&
         mb_nn_file_set_double(f, "train.episodes", (double)prog->episodes, err) &&
         mb_nn_file_set_double(f, "train.decisions", (double)prog->decisions, err) &&
         mb_nn_file_set_double(f, "train.seed", (double)prog->seed, err) &&
         mb_nn_file_set_double(f, "train.seconds", prog->seconds, err);
  if (ok && prog) {
    /* the sgemm kernel decides the last bits of every update, so the same command trains a
     * different agent on a different kernel (tensor.h, "Determinism") */
    char blas[256];
    mb_blas_describe(blas, sizeof blas);
    ok = mb_nn_file_set_string(f, "train.blas", blas, err);
  }
  if (ok && prog && prog->options[0])
    ok = mb_nn_file_set_string(f, "train.options", prog->options, err);
  if (ok && note) ok = mb_nn_file_set_string(f, "training", note, err);
  if (ok && curve) {
    const double *cols[6] = {curve->step,   curve->episodes, curve->selfplay,
                             curve->policy, curve->loss,     curve->seconds};
    for (int i = 0; ok && i < 6; i++)
      ok = mb_nn_file_write_series(f, CURVE_NAMES[i], cols[i], curve->len, err);
    if (ok && curve_has_validation(curve))
      ok = mb_nn_file_write_series(f, CURVE_VALIDATION, curve->validation, curve->len, err);
    const double refs[2] = {curve->heuristic, curve->random};
    for (int i = 0; ok && i < 2; i++)
      if (isfinite(refs[i])) ok = mb_nn_file_set_double(f, CURVE_REFS[i], refs[i], err);
  }
  return ok || mb_fail_prefix(err, "%s", path);
}

bool mb_agent_save(const char *path, const mb_agent *ag, const mb_adam *opt,
                   const mb_agent_progress *prog, const mb_agent_curve *curve, const char *note,
                   mb_error *err) {
  mb_nn_file *f = mb_nn_file_create(path, err);
  if (!f) return false;
  if (!mb_agent_write(f, ag, opt, prog, curve, note, err)) {
    mb_nn_file_close(f);
    return false;
  }
  return mb_nn_file_commit(f, err);
}

static bool get_int(mb_nn_file *f, const char *path, const char *key, int32_t *out, mb_error *err) {
  double v;
  if (!mb_nn_file_get_double(f, key, &v, err)) return false; /* its message names the file */
  if (!(v >= -2147483647.0 && v <= 2147483647.0) || v != floor(v))
    return mb_fail(err, "%s: attribute %s = %g: expected an integer", path, key, v);
  *out = (int32_t)v;
  return true;
}

/* The stored config (cfg.* and game.* root attributes); attributes added since the first
 * checkpoints read as absent, i.e. as the agents written before them were trained. */
static bool read_config(mb_nn_file *f, const char *path, mb_agent_config *c, mb_error *err) {
  char fmt[64], order[32];
  mb_agent_config_default(c);
  int32_t auto_slow = 1;
  double smax = 0, vscale = 0;
  bool ok =
      mb_nn_file_has(f, "format") ||
      mb_fail(err, "%s: not a mallocMuZero agent checkpoint: root attribute 'format' is missing",
              path);
  ok = ok && mb_nn_file_get_string(f, "format", fmt, sizeof fmt, err);
  if (ok && strcmp(fmt, MB_AGENT_FORMAT))
    ok = mb_fail(err, "%s: attribute format '%s': expected " MB_AGENT_FORMAT, path, fmt);
  ok = ok && get_int(f, path, "cfg.latent", &c->latent, err) &&
       get_int(f, path, "cfg.blocks", &c->blocks, err) &&
       get_int(f, path, "cfg.support", &c->support, err) &&
       get_int(f, path, "cfg.obs_dim", &c->obs_dim, err) &&
       get_int(f, path, "game.n_actions", &c->game.n_actions, err) &&
       get_int(f, path, "game.addr_bins", &c->game.addr_bins, err) &&
       get_int(f, path, "game.time_bins", &c->game.time_bins, err) &&
       get_int(f, path, "game.lookahead", &c->game.lookahead, err) &&
       get_int(f, path, "game.auto_slow", &auto_slow, err);
  /* checkpoints written before the next-buffers block have none (not the default's 4) */
  c->game.next_buffers = 0;
  if (ok && mb_nn_file_has(f, "game.next_buffers"))
    ok = get_int(f, path, "game.next_buffers", &c->game.next_buffers, err);
  /* and before the demand profile: read as without it */
  c->game.demand_bins = 0;
  if (ok && mb_nn_file_has(f, "game.demand_bins"))
    ok = get_int(f, path, "game.demand_bins", &c->game.demand_bins, err);
  /* and before the gain block (game.h): read as without it */
  int32_t gain_features = 0;
  if (ok && mb_nn_file_has(f, "game.gain_features"))
    ok = get_int(f, path, "game.gain_features", &gain_features, err);
  if (ok && gain_features != 0 && gain_features != 1)
    ok =
        mb_fail(err, "%s: attribute game.gain_features = %d: expected 0 or 1", path, gain_features);
  c->game.gain_features = gain_features != 0;
  /* and before action features: read as without them */
  int32_t action_features = 0;
  if (ok && mb_nn_file_has(f, "cfg.action_features"))
    ok = get_int(f, path, "cfg.action_features", &action_features, err);
  if (ok && action_features != 0 && action_features != 1)
    ok = mb_fail(err, "%s: attribute cfg.action_features = %d: expected 0 or 1", path,
                 action_features);
  c->action_features = action_features != 0;
  /* and before the dynamics had its own shape: as wide and deep as the others */
  c->dyn_width = c->dyn_blocks = 0;
  if (ok && mb_nn_file_has(f, "cfg.dyn_width"))
    ok = get_int(f, path, "cfg.dyn_width", &c->dyn_width, err);
  if (ok && mb_nn_file_has(f, "cfg.dyn_blocks"))
    ok = get_int(f, path, "cfg.dyn_blocks", &c->dyn_blocks, err);
  /* and before SimNorm: min-max scaled, as MuZero */
  int32_t latent_norm = MB_LATENT_MINMAX;
  if (ok && mb_nn_file_has(f, "cfg.latent_norm"))
    ok = get_int(f, path, "cfg.latent_norm", &latent_norm, err);
  if (ok && latent_norm != MB_LATENT_MINMAX && latent_norm != MB_LATENT_SIMNORM)
    ok = mb_fail(err, "%s: attribute cfg.latent_norm = %d: expected %d (minmax) or %d (simnorm)",
                 path, latent_norm, MB_LATENT_MINMAX, MB_LATENT_SIMNORM);
  c->latent_norm = (mb_latent_norm)latent_norm;
  /* and before reward shaping and signed supports: read as without them */
  double shaping = 0, smin = 0;
  if (ok && mb_nn_file_has(f, "game.shaping"))
    ok = mb_nn_file_get_double(f, "game.shaping", &shaping, err);
  if (ok && mb_nn_file_has(f, "cfg.support_min"))
    ok = mb_nn_file_get_double(f, "cfg.support_min", &smin, err);
  c->game.shaping = shaping;
  c->support_min = (float)smin;
  ok = ok && mb_nn_file_get_double(f, "cfg.support_max", &smax, err) &&
       mb_nn_file_get_double(f, "cfg.value_scale", &vscale, err) &&
       mb_nn_file_get_string(f, "game.order", order, sizeof order, err);
  if (ok && !mb_game_order_parse(order, &c->game.order))
    ok = mb_fail(err, "%s: attribute game.order '%s': expected heuristic, start or size", path,
                 order);
  c->game.auto_slow = auto_slow != 0;
  c->support_max = (float)smax;
  c->value_scale = (float)vscale;
  return ok;
}

/* The training counters (train.* root attributes). */
static bool read_progress(mb_nn_file *f, mb_agent_progress *prog, mb_error *err) {
  double st = 0, ep = 0, de = 0, sd = 0, secs = 0;
  memset(prog, 0, sizeof *prog);
  bool ok = mb_nn_file_get_double(f, "train.steps", &st, err) &&
            mb_nn_file_get_double(f, "train.episodes", &ep, err) &&
            mb_nn_file_get_double(f, "train.decisions", &de, err) &&
            mb_nn_file_get_double(f, "train.seed", &sd, err) &&
            mb_nn_file_get_double(f, "train.seconds", &secs, err);
  prog->steps = (int64_t)st;
  prog->episodes = (int64_t)ep;
  prog->decisions = (int64_t)de;
  prog->seed = (uint64_t)sd;
  prog->seconds = secs;
  if (ok && mb_nn_file_has(f, "train.blas"))
    ok = mb_nn_file_get_string(f, "train.blas", prog->blas, sizeof prog->blas, err);
  /* checkpoints written before the run's options were stored have none: "" */
  if (ok && mb_nn_file_has(f, "train.options"))
    ok = mb_nn_file_get_string(f, "train.options", prog->options, sizeof prog->options, err);
  return ok;
}

/* The training curve's series, all of one length, and its references; the curve is left empty
 * (but initialised) on failure. */
static bool read_curve(mb_nn_file *f, const char *path, mb_agent_curve *curve, mb_error *err) {
  mb_agent_curve_init(curve);
  bool ok = true;
  /* checkpoints written before the references were stored have none: NaN */
  double refs[2] = {NAN, NAN};
  for (int i = 0; ok && i < 2; i++)
    if (mb_nn_file_has(f, CURVE_REFS[i]))
      ok = mb_nn_file_get_double(f, CURVE_REFS[i], &refs[i], err);
  double *cols[7] = {0};
  int64_t n[7] = {0};
  for (int i = 0; ok && i < 6; i++)
    ok = mb_nn_file_read_series(f, CURVE_NAMES[i], &cols[i], &n[i], err);
  for (int i = 1; ok && i < 6; i++)
    if (n[i] != n[0])
      ok = mb_fail(err, "%s: series %s has %lld points, %s %lld", path, CURVE_NAMES[i],
                   (long long)n[i], CURVE_NAMES[0], (long long)n[0]);
  /* checkpoints written before validation sets, or by runs without one, have no such series:
   * every point's validation is then NaN (absent) */
  if (ok && mb_nn_file_has_series(f, CURVE_VALIDATION)) {
    ok = mb_nn_file_read_series(f, CURVE_VALIDATION, &cols[6], &n[6], err);
    if (ok && n[6] != n[0])
      ok = mb_fail(err, "%s: series %s has %lld points, %s %lld", path, CURVE_VALIDATION,
                   (long long)n[6], CURVE_NAMES[0], (long long)n[0]);
  } else if (ok && n[0] > 0) {
    cols[6] = malloc((size_t)n[0] * sizeof(double));
    if (!cols[6]) ok = mb_fail(err, "%s: training curve: out of memory", path);
    for (int64_t i = 0; ok && i < n[0]; i++) cols[6][i] = NAN;
  }
  if (!ok) {
    for (int i = 0; i < 7; i++) free(cols[i]);
    return false;
  }
  curve->len = curve->cap = n[0];
  curve->step = cols[0];
  curve->episodes = cols[1];
  curve->selfplay = cols[2];
  curve->policy = cols[3];
  curve->loss = cols[4];
  curve->seconds = cols[5];
  curve->validation = cols[6];
  curve->heuristic = refs[0];
  curve->random = refs[1];
  return true;
}

bool mb_agent_read(mb_nn_file *f, mb_agent *ag, mb_adam *opt, mb_agent_progress *prog,
                   mb_agent_curve *curve, mb_error *err) {
  memset(ag, 0, sizeof *ag);
  const char *path = mb_nn_file_path(f);
  mb_agent_config c;
  if (!read_config(f, path, &c, err)) return false;
  mb_rng rng;
  mb_rng_seed(&rng, 0);
  if (!mb_agent_create(ag, &c, &rng, err)) return mb_fail_prefix(err, "%s", path);
  mb_nn_module *mods[4];
  mb_agent_modules(ag, mods);
  bool ok = true;
  for (int i = 0; ok && i < 4; i++) ok = mb_nn_file_read_module(f, mods[i], err);
  if (ok && opt) {
    mb_adam_config ac;
    mb_adam_config_default(&ac);
    ok = mb_adam_create(opt, mods, 4, &ac, err) || mb_fail_prefix(err, "%s", path);
    if (ok && !mb_nn_file_read_adam(f, opt, err)) {
      mb_adam_free(opt);
      memset(opt, 0, sizeof *opt);
      ok = false;
    }
  }
  if (ok && prog) ok = read_progress(f, prog, err);
  if (ok && curve) ok = read_curve(f, path, curve, err);
  if (!ok) { /* every message above names the file */
    if (opt && opt->slots) mb_adam_free(opt);
    mb_agent_free(ag);
    return false;
  }
  return true;
}

bool mb_agent_load(const char *path, mb_agent *ag, mb_adam *opt, mb_agent_progress *prog,
                   mb_agent_curve *curve, mb_error *err) {
  memset(ag, 0, sizeof *ag);
  mb_nn_file *f = mb_nn_file_open(path, err);
  if (!f) return false;
  bool ok = mb_agent_read(f, ag, opt, prog, curve, err);
  mb_nn_file_close(f);
  return ok;
}
