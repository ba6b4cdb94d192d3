/* PROTOTYPE: a dynamics model in observation space (see obs_model.h). */
#include "obs_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adam.h"
#include "game.h"
#include "player.h"

void mb_obs_model_options_default(mb_obs_model_options *o) {
  memset(o, 0, sizeof *o);
  o->episodes = 4;
  o->epsilon = 0.2;
  o->width = 512;
  o->blocks = 2;
  o->steps = 20000;
  o->batch = 128;
  o->lr = 1e-3;
  o->value_weight = 0;
  o->max_transitions = 400000;
  o->seed = 0;
  o->unroll = 1;
}

/* Real transitions: obs rows per decision, then per transition its decision, action, the
 * observation reached and the fixed agent's value distribution there. */
typedef struct transitions {
  int32_t obs_dim, support;
  int64_t n_dec, cap_dec, n, cap;
  float *obs;        /* n_dec x obs_dim */
  int64_t *played;   /* n_dec: the transition of the move played there */
  int64_t *next_dec; /* n_dec: the decision it led to (-1: the episode ended) */
  int64_t *dec;      /* n */
  int32_t *action;   /* n */
  float *next;       /* n x obs_dim */
  float *vdist;      /* n x support */
} transitions;

static bool grow(void **p, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return true;
  int64_t c = *cap ? *cap : 1024;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * elem);
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}

static void transitions_free(transitions *t) {
  free(t->obs);
  free(t->played);
  free(t->next_dec);
  free(t->dec);
  free(t->action);
  free(t->next);
  free(t->vdist);
}

/* The fixed agent's value distribution (softmax of its value logits) at obs. */
static bool value_dist(mb_agent_infer *inf, const float *obs, float *out, mb_error *err) {
  const mb_agent *ag = inf->ag;
  int32_t A = ag->cfg.game.n_actions, S = ag->cfg.support;
  memcpy(inf->x.data, obs, (size_t)ag->cfg.obs_dim * sizeof(float));
  const mb_tensor *s = mb_nn_forward(&inf->repr, &inf->x, err);
  if (!s) return false;
  const mb_tensor *o = mb_nn_forward(&inf->pred, s, err);
  if (!o) return false;
  const float *l = o->data + A;
  float mx = l[0];
  for (int32_t i = 1; i < S; i++) mx = l[i] > mx ? l[i] : mx;
  double z = 0;
  for (int32_t i = 0; i < S; i++) z += exp((double)(l[i] - mx));
  for (int32_t i = 0; i < S; i++) out[i] = (float)(exp((double)(l[i] - mx)) / z);
  return true;
}

static bool collect(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                    const mb_obs_model_options *o, transitions *t, FILE *log, mb_error *err) {
  int32_t D = ag->cfg.obs_dim, A = ag->cfg.game.n_actions, S = ag->cfg.support;
  t->obs_dim = D;
  t->support = S;
  mb_agent_infer inf;
  if (!mb_agent_infer_create(&inf, ag, err)) return false;
  mb_agent_infer_use_gemv(&inf, true);
  float *logits = malloc((size_t)A * sizeof(float)), *cur = malloc((size_t)D * sizeof(float));
  uint8_t *mask = malloc((size_t)A);
  bool ok = logits && cur && mask;
  if (!ok) mb_fail(err, "obs model: out of memory");
  mb_rng base;
  mb_rng_seed(&base, o->seed);
  for (int32_t e = 0; ok && e < n_set && t->n < o->max_transitions; e++) {
    mb_game *g = mb_game_new(set[e].w, &set[e].hw, &ag->cfg.game, err);
    if (!g) {
      ok = false;
      break;
    }
    for (int32_t ep = 0; ok && ep < o->episodes && t->n < o->max_transitions; ep++) {
      mb_rng rng = mb_rng_split(&base, (uint64_t)e * 1000 + (uint64_t)ep);
      mb_game_reset(g);
      while (ok && !mb_game_done(g) && t->n < o->max_transitions) {
        mb_game_observe(g, cur);
        mb_game_legal_mask(g, mask);
        float v;
        if (!mb_agent_initial(&inf, cur, NULL, logits, &v, err)) {
          ok = false;
          break;
        }
        int32_t a_play = mb_agent_greedy(logits, mask, A);
        if (ep > 0 && mb_rng_uniform(&rng) < o->epsilon) a_play = mb_rng_pick(&rng, mask, A, -1);
        int64_t d0 = t->cap_dec, d1 = t->cap_dec;
        if (!grow((void **)&t->played, &d0, t->n_dec + 1, sizeof(int64_t)) ||
            !grow((void **)&t->next_dec, &d1, t->n_dec + 1, sizeof(int64_t)) ||
            !grow((void **)&t->obs, &t->cap_dec, t->n_dec + 1, (size_t)D * sizeof(float))) {
          ok = mb_fail(err, "obs model: out of memory");
          break;
        }
        memcpy(t->obs + t->n_dec * D, cur, (size_t)D * sizeof(float));
        mb_game_snapshot snap = mb_game_snapshot_take(g);
        for (int32_t a = 0; ok && a < A; a++) {
          if (!mask[a]) continue;
          int64_t need = t->n + 1, c0 = t->cap;
          if (!grow((void **)&t->dec, &c0, need, sizeof(int64_t))) ok = false;
          int64_t c1 = t->cap;
          if (ok && !grow((void **)&t->action, &c1, need, sizeof(int32_t))) ok = false;
          int64_t c2 = t->cap;
          if (ok && !grow((void **)&t->next, &c2, need, (size_t)D * sizeof(float))) ok = false;
          int64_t c3 = t->cap;
          if (ok && !grow((void **)&t->vdist, &c3, need, (size_t)S * sizeof(float))) ok = false;
          if (!ok) {
            mb_fail(err, "obs model: out of memory");
            break;
          }
          t->cap = c0;
          if (!mb_game_step(g, a, NULL, err)) {
            ok = false;
            break;
          }
          float *nx = t->next + t->n * D;
          mb_game_observe(g, nx);
          float *vd = t->vdist + t->n * S;
          if (mb_game_done(g)) {
            /* value 0: the two-hot of 0 on the support is one atom at 0 when 0 is an atom */
            if (!value_dist(&inf, nx, vd, err)) ok = false;
          } else if (!value_dist(&inf, nx, vd, err)) {
            ok = false;
          }
          if (a == a_play) t->played[t->n_dec] = t->n;
          t->dec[t->n] = t->n_dec;
          t->action[t->n] = a;
          t->n++;
          if (!mb_game_restore(g, snap, err)) ok = false;
        }
        t->n_dec++;
        if (ok && !mb_game_step(g, a_play, NULL, err)) ok = false;
        t->next_dec[t->n_dec - 1] = mb_game_done(g) ? -1 : t->n_dec;
      }
    }
    mb_game_free(g);
  }
  if (log)
    fprintf(log, "obs model: %lld transitions at %lld decisions\n", (long long)t->n,
            (long long)t->n_dec);
  free(logits);
  free(cur);
  free(mask);
  mb_agent_infer_free(&inf);
  return ok;
}

/* Writes [obs | one_hot(a) | a's candidate fields] into row. */
static void input_row(const mb_obs_model *m, const float *obs, int32_t action, float *row) {
  memcpy(row, obs, (size_t)m->obs_dim * sizeof(float));
  memset(row + m->obs_dim, 0, (size_t)m->A * sizeof(float));
  row[m->obs_dim + action] = 1.0f;
  float *f = row + m->obs_dim + m->A;
  if (action < m->A - 1)
    memcpy(f, obs + m->cand_off + (int64_t)action * MB_GAME_OBS_PER_CANDIDATE,
           MB_GAME_OBS_PER_CANDIDATE * sizeof(float));
  else
    memset(f, 0, MB_GAME_OBS_PER_CANDIDATE * sizeof(float));
}

bool mb_obs_model_fit(mb_obs_model *m, const mb_agent *ag, const mb_train_workload *set, int32_t n,
                      const mb_obs_model_options *o, FILE *log, mb_error *err) {
  memset(m, 0, sizeof *m);
  m->obs_dim = ag->cfg.obs_dim;
  m->A = ag->cfg.game.n_actions;
  m->in_dim = m->obs_dim + m->A + MB_GAME_OBS_PER_CANDIDATE;
  m->cand_off = mb_game_candidate_block_offset(&ag->cfg.game);
  transitions t = {0};
  if (!collect(ag, set, n, o, &t, log, err)) {
    transitions_free(&t);
    return false;
  }
  if (t.n == 0) {
    transitions_free(&t);
    return mb_fail(err, "obs model: no transitions");
  }
  mb_rng rng;
  mb_rng_seed(&rng, o->seed ^ 0x0b5);
  if (!mb_nn_build_resmlp(&m->net, "obsmodel", m->in_dim, o->width, o->blocks, m->obs_dim,
                          MB_INIT_XAVIER, err)) {
    transitions_free(&t);
    return false;
  }
  mb_nn_module_init_params(&m->net, &rng);
  enum { KMAX = 16 };
  int32_t B = o->batch, D = m->obs_dim, A = m->A, S = ag->cfg.support;
  int32_t K = o->unroll < 1 ? 1 : o->unroll > KMAX ? KMAX : o->unroll;
  bool ve = o->value_weight > 0;
  mb_nn_tape tape[KMAX], trepr[KMAX], tpred[KMAX];
  memset(tape, 0, sizeof tape);
  memset(trepr, 0, sizeof trepr);
  memset(tpred, 0, sizeof tpred);
  mb_tensor x = {0}, y = {0}, dy = {0}, dx = {0}, vt = {0}, vl = {0}, dvl = {0}, dpred = {0},
            ds = {0}, dobs = {0};
  float *wt = calloc((size_t)KMAX * B, sizeof(float));
  int64_t *tr = calloc((size_t)KMAX * B, sizeof(int64_t)); /* transition of row b at step k */
  mb_adam opt = {0};
  mb_adam_config ac;
  mb_adam_config_default(&ac);
  ac.lr = o->lr;
  ac.weight_decay = 0;
  mb_nn_module *mods[1] = {&m->net};
  /* value equivalence goes back through the fixed agent's networks: their parameter gradients
   * accumulate and are never used (zeroed after every step) */
  mb_nn_module *repr = (mb_nn_module *)&ag->repr, *pred = (mb_nn_module *)&ag->pred;
  bool ok = wt && tr && mb_tensor_init(&x, B, m->in_dim, err) && mb_tensor_init(&y, B, D, err) &&
            mb_tensor_init(&dy, B, D, err) && mb_tensor_init(&dx, B, m->in_dim, err) &&
            mb_adam_create(&opt, mods, 1, &ac, err);
  if (!wt || !tr) mb_fail(err, "obs model: out of memory");
  for (int32_t k = 0; ok && k < K; k++) {
    ok = mb_nn_tape_create(&tape[k], &m->net, B, err);
    if (ok && ve)
      ok = mb_nn_tape_create(&trepr[k], repr, B, err) && mb_nn_tape_create(&tpred[k], pred, B, err);
  }
  if (ok && ve)
    ok = mb_tensor_init(&vt, B, S, err) && mb_tensor_init(&vl, B, S, err) &&
         mb_tensor_init(&dvl, B, S, err) && mb_tensor_init(&dpred, B, A + S, err) &&
         mb_tensor_init(&ds, B, ag->cfg.latent, err) && mb_tensor_init(&dobs, B, D, err);
  double run_mse = 0, run_v = 0;
  for (int64_t step = 1; ok && step <= o->steps; step++) {
    /* the rows' paths: a random transition (any legal move), then the moves played after it */
    for (int32_t b = 0; b < B; b++) {
      int64_t i = (int64_t)mb_rng_below(&rng, (uint64_t)t.n);
      for (int32_t k = 0; k < K; k++) {
        tr[k * B + b] = i;
        wt[k * B + b] = i >= 0 ? 1.0f : 0.0f;
        if (i < 0) continue;
        int64_t d = t.dec[i];
        int64_t nd = t.played[d] == i ? t.next_dec[d] : -1;
        i = nd >= 0 && nd < t.n_dec ? t.played[nd] : -1;
      }
    }
    mb_nn_zero_grad(&m->net);
    double mse = 0, vloss = 0;
    /* forward: step 0 from the real observation, later steps from the prediction */
    for (int32_t k = 0; ok && k < K; k++) {
      for (int32_t b = 0; b < B; b++) {
        int64_t i = tr[k * B + b];
        const float *src =
            k == 0 ? t.obs + t.dec[i] * D : mb_tensor_row(mb_nn_tape_output(&tape[k - 1]), b);
        input_row(m, src, i >= 0 ? t.action[i] : A - 1, mb_tensor_row(&x, b));
      }
      ok = mb_nn_forward(&tape[k], &x, err) != NULL;
    }
    /* backward, last step first: each step's losses plus what flows back from the next */
    mb_tensor_zero(&dx);
    for (int32_t k = K - 1; ok && k >= 0; k--) {
      const mb_tensor *yh = mb_nn_tape_output(&tape[k]);
      for (int32_t b = 0; b < B; b++) {
        int64_t i = tr[k * B + b];
        if (i >= 0)
          memcpy(mb_tensor_row(&y, b), t.next + i * D, (size_t)D * sizeof(float));
        else
          memcpy(mb_tensor_row(&y, b), mb_tensor_row(yh, b), (size_t)D * sizeof(float));
        if (ve) {
          if (i >= 0)
            memcpy(mb_tensor_row(&vt, b), t.vdist + i * S, (size_t)S * sizeof(float));
          else {
            memset(mb_tensor_row(&vt, b), 0, (size_t)S * sizeof(float));
            mb_tensor_row(&vt, b)[0] = 1;
          }
        }
      }
      double l = 0;
      ok = mb_loss_mse(yh, &y, wt + k * B, 1.0f / (float)(B * K), &l, &dy, err);
      mse += l;
      if (ok && ve) {
        const mb_tensor *s = mb_nn_forward(&trepr[k], yh, err);
        const mb_tensor *po = s ? mb_nn_forward(&tpred[k], s, err) : NULL;
        double lv = 0;
        ok = po && mb_tensor_get_cols(&vl, po, A, S, err) &&
             mb_loss_softmax_xent(&vl, &vt, NULL, wt + k * B, (float)(o->value_weight / (B * K)),
                                  &lv, &dvl, err);
        vloss += lv;
        if (ok) {
          mb_tensor_zero(&dpred);
          ok = mb_tensor_set_cols(&dpred, A, &dvl, err) &&
               mb_nn_backward(&tpred[k], &dpred, &ds, err) &&
               mb_nn_backward(&trepr[k], &ds, &dobs, err) && mb_tensor_axpy(&dy, 1.0f, &dobs, err);
          mb_nn_zero_grad(repr);
          mb_nn_zero_grad(pred);
        }
      }
      if (ok && k < K - 1) {
        /* the next step's input gradient: its observation columns and the candidate fields it
         * copied, scaled by 1/2 as MuZero scales the dynamics' */
        for (int32_t b = 0; b < B; b++) {
          int64_t i = tr[(k + 1) * B + b];
          if (i < 0) continue;
          const float *g = mb_tensor_row(&dx, b);
          float *d = mb_tensor_row(&dy, b);
          for (int32_t j = 0; j < D; j++) d[j] += 0.5f * g[j];
          int32_t a = t.action[i];
          if (a < A - 1)
            for (int32_t j = 0; j < MB_GAME_OBS_PER_CANDIDATE; j++)
              d[m->cand_off + a * MB_GAME_OBS_PER_CANDIDATE + j] += 0.5f * g[D + A + j];
        }
      }
      ok = ok && mb_nn_backward(&tape[k], &dy, k > 0 ? &dx : NULL, err);
    }
    if (ok) {
      mb_adam_clip_grad_norm(&opt, 5.0);
      ok = mb_adam_step(&opt, err);
    }
    run_mse += mse * K;
    run_v += vloss * K / (o->value_weight > 0 ? o->value_weight : 1);
    if (ok && log && step % 1000 == 0) {
      fprintf(log, "obs model: step %lld  mse %.5f  value xent %.4f (per unroll step)\n",
              (long long)step, run_mse / 1000, run_v / 1000);
      fflush(log);
      run_mse = run_v = 0;
    }
  }
  mb_adam_free(&opt);
  for (int32_t k = 0; k < KMAX; k++) {
    mb_nn_tape_free(&tape[k]);
    mb_nn_tape_free(&trepr[k]);
    mb_nn_tape_free(&tpred[k]);
  }
  free(wt);
  free(tr);
  mb_tensor_free(&x);
  mb_tensor_free(&y);
  mb_tensor_free(&dy);
  mb_tensor_free(&dx);
  mb_tensor_free(&vt);
  mb_tensor_free(&vl);
  mb_tensor_free(&dvl);
  mb_tensor_free(&dpred);
  mb_tensor_free(&ds);
  mb_tensor_free(&dobs);
  transitions_free(&t);
  if (!ok) mb_obs_model_free(m);
  return ok;
}

void mb_obs_model_free(mb_obs_model *m) { mb_nn_module_free(&m->net); }

bool mb_obs_model_infer_create(mb_obs_model_infer *inf, const mb_obs_model *m, mb_error *err) {
  memset(inf, 0, sizeof *inf);
  inf->m = m;
  if (!mb_nn_tape_create(&inf->tape, &m->net, 1, err) ||
      !mb_tensor_init(&inf->x, 1, m->in_dim, err)) {
    mb_obs_model_infer_free(inf);
    return false;
  }
  mb_nn_tape_use_gemv(&inf->tape, true);
  return true;
}

void mb_obs_model_infer_free(mb_obs_model_infer *inf) {
  mb_nn_tape_free(&inf->tape);
  mb_tensor_free(&inf->x);
}

bool mb_obs_model_predict(mb_obs_model_infer *inf, const float *obs, int32_t action, float *next,
                          mb_error *err) {
  const mb_obs_model *m = inf->m;
  input_row(m, obs, action, inf->x.data);
  const mb_tensor *y = mb_nn_forward(&inf->tape, &inf->x, err);
  if (!y) return false;
  for (int32_t i = 0; i < m->obs_dim; i++) {
    float v = y->data[i];
    next[i] = v < 0 ? 0 : v > 1 ? 1 : v;
  }
  return true;
}

/* Drift along the raw policy's own greedy episodes: from every `every`-th decision, the path of
 * its next k moves valued as a search of depth k values it, in the real game E_k = true rewards
 * + v(h(o_k)) and with this model E^_k = predicted rewards + v(h(o^_k)) (normalised units);
 * prints the mean |E^_k - E_k| for k = 1, 2, 5, 8, 12. */
bool mb_obs_model_drift(const mb_obs_model *m, const mb_agent *ag, const mb_train_workload *set,
                        int32_t n_set, int32_t every, FILE *out, mb_error *err) {
  enum { KMAX = 12 };
  int32_t D = m->obs_dim, A = m->A, W = ag->cfg.latent;
  mb_agent_infer inf;
  mb_obs_model_infer oi;
  if (!mb_agent_infer_create(&inf, ag, err)) return false;
  mb_agent_infer_use_gemv(&inf, true);
  if (!mb_obs_model_infer_create(&oi, m, err)) {
    mb_agent_infer_free(&inf);
    return false;
  }
  float *obs = malloc((size_t)D * sizeof(float)), *oh = malloc((size_t)2 * D * sizeof(float)),
        *logits = malloc((size_t)A * sizeof(float)), *lat = malloc((size_t)W * sizeof(float));
  uint8_t *mask = malloc((size_t)A);
  int32_t *actions = NULL;
  double sum[KMAX + 1] = {0};
  int64_t cnt[KMAX + 1] = {0};
  /* one-step squared error by block of the observation (datasets/GAME.md) */
  enum { NB = 6 };
  static const char *const block_name[NB] = {"buffer",       "occupancy",   "candidates",
                                             "next buffers", "gain+demand", "progress"};
  const mb_game_config *gc = &ag->cfg.game;
  int32_t nb_off = m->cand_off + (m->A - 1) * MB_GAME_OBS_PER_CANDIDATE;
  int32_t block_end[NB] = {10, m->cand_off, nb_off, nb_off + gc->next_buffers * 6, D - 5, D};
  double sse[NB] = {0};
  int64_t n_sse = 0;
  bool ok = obs && oh && logits && lat && mask;
  if (!ok) mb_fail(err, "obs model: out of memory");
  for (int32_t e = 0; ok && e < n_set; e++) {
    mb_game *g = mb_game_new(set[e].w, &set[e].hw, &ag->cfg.game, err);
    if (!g) {
      ok = false;
      break;
    }
    double rscale = 1.0 / mb_return_scale(set[e].w, &set[e].hw, g);
    /* the greedy episode's actions */
    int32_t n_act = 0, cap = mb_game_n_visitable(g) + 1;
    actions = realloc(actions, (size_t)cap * sizeof(int32_t));
    mb_game_reset(g);
    while (ok && !mb_game_done(g) && n_act < cap) {
      mb_game_observe(g, obs);
      mb_game_legal_mask(g, mask);
      float v;
      ok = mb_agent_initial(&inf, obs, NULL, logits, &v, err);
      actions[n_act] = mb_agent_greedy(logits, mask, A);
      ok = ok && mb_game_step(g, actions[n_act++], NULL, err);
    }
    for (int32_t t0 = 0; ok && t0 < n_act; t0 += every) {
      mb_game_reset(g);
      for (int32_t i = 0; ok && i < t0; i++) ok = mb_game_step(g, actions[i], NULL, err);
      mb_game_observe(g, obs);
      memcpy(oh, obs, (size_t)D * sizeof(float));
      double true_r = 0, pred_r = 0;
      float *cur = oh, *nxt = oh + D;
      for (int32_t k = 1; ok && k <= KMAX && t0 + k - 1 < n_act; k++) {
        int32_t a = actions[t0 + k - 1];
        double r;
        float pr, v_true, v_pred;
        ok = mb_game_step(g, a, &r, err) && mb_agent_initial(&inf, cur, lat, NULL, NULL, err) &&
             mb_agent_recurrent(&inf, lat, a, cur, NULL, &pr, NULL, NULL, err) &&
             mb_obs_model_predict(&oi, cur, a, nxt, err);
        if (!ok) break;
        true_r += r * rscale;
        pred_r += pr;
        float *t = cur;
        cur = nxt;
        nxt = t;
        if (mb_game_done(g)) {
          v_true = 0;
        } else {
          mb_game_observe(g, obs);
          ok = mb_agent_initial(&inf, obs, NULL, NULL, &v_true, err);
        }
        ok = ok && mb_agent_initial(&inf, cur, NULL, NULL, &v_pred, err);
        if (k == 1 && !mb_game_done(g)) {
          for (int32_t bl = 0, j = 0; bl < NB; bl++)
            for (; j < block_end[bl]; j++) sse[bl] += (double)(cur[j] - obs[j]) * (cur[j] - obs[j]);
          n_sse++;
        }
        sum[k] += fabs((pred_r + v_pred) - (true_r + v_true));
        cnt[k]++;
        if (mb_game_done(g)) break;
      }
    }
    mb_game_free(g);
  }
  if (ok) {
    fprintf(out, "obs model drift |E^_k - E_k| along the raw policy's paths (every %d):", every);
    static const int ks[] = {1, 2, 5, 8, 12};
    for (int i = 0; i < 5; i++)
      fprintf(out, "  k=%d %.4f", ks[i], cnt[ks[i]] ? sum[ks[i]] / (double)cnt[ks[i]] : 0.0);
    fprintf(out,
            "\nobs model one-step squared error by block (sum over the block, mean over %lld):",
            (long long)n_sse);
    for (int32_t bl = 0; bl < NB; bl++)
      fprintf(out, "  %s %.4f", block_name[bl], n_sse ? sse[bl] / (double)n_sse : 0.0);
    fprintf(out, "\n");
  }
  free(obs);
  free(oh);
  free(logits);
  free(lat);
  free(mask);
  free(actions);
  mb_obs_model_infer_free(&oi);
  mb_agent_infer_free(&inf);
  return ok;
}
