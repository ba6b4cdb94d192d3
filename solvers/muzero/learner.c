/* The mallocMuZero learner (see learner.h). */
#include "learner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mb_learner {
  int32_t B, K, A, W, S, D, NB;
  int32_t NBOOT; /* rows of the target-network bootstrap batch: NB, + B with sibling paths */
  mb_agent target;
  mb_nn_tape repr, *pred, *dyn, *rew, trepr, tpred;
  /* consistency targets: the current representation of the observations after steps 1..K
   * (B x K rows, forward only: the target branch gets no gradient) */
  mb_nn_tape crepr;
  mb_tensor cobs;
  float *cw; /* 1 where the step-k observation exists */
  mb_tensor obs, in, bobs, logits, vlog, dpol, dval, dpred, ds, dtmp, din, carry, rlog, dr, tv;
  mb_tensor *ptarget;
  int32_t *actions;
  float *vt, *vw, *pw, *rt, *rw, *bootv;
  int64_t *rows, *boot_idx;
  double *boot_sum, *boot_disc;
  bool *past;
  /* prioritised replay: importance weight of each drawn row, value logits and decoded value at
   * unroll step 0 (for the new priorities) */
  float *isw, *v0;
  mb_tensor vlog0;
  /* sibling paths (P > 0): P dynamics steps from the root state along the stored path; step j's
   * rows are [j * B, (j + 1) * B). Value heads at steps 0..P-2 (the path continues past them). */
  int32_t P;
  mb_nn_tape *sdyn, *srew, *spred, srepr;
  mb_tensor sin, sobs, sds, scarry, svlog, sdpred;
  int32_t *sact;
  float *srt, *sw, *svt, *svw;
  double *ssum, *sdisc; /* value target parts: rewards to the path's end, discount to it */
  int64_t *sboot;       /* per column: its bootstrap row in bobs (-1: none) */
  double loss_s;
  double loss_p, loss_v, loss_r, loss_c; /* last update's (batch means) */
};

static void learner_release(mb_learner *L) {
  /* tapes first: freeing a tape reads its module's layer list */
  mb_nn_tape_free(&L->repr);
  for (int32_t k = 0; L->pred && k <= L->K; k++) mb_nn_tape_free(&L->pred[k]);
  for (int32_t k = 0; L->dyn && k < L->K; k++) mb_nn_tape_free(&L->dyn[k]);
  for (int32_t k = 0; L->rew && k < L->K; k++) mb_nn_tape_free(&L->rew[k]);
  free(L->pred);
  free(L->dyn);
  free(L->rew);
  mb_nn_tape_free(&L->trepr);
  mb_nn_tape_free(&L->tpred);
  mb_nn_tape_free(&L->crepr);
  mb_tensor_free(&L->cobs);
  free(L->cw);
  mb_agent_free(&L->target);
  mb_tensor *ts[] = {&L->obs,  &L->in,    &L->bobs,  &L->logits, &L->vlog,
                     &L->dpol, &L->dval,  &L->dpred, &L->ds,     &L->dtmp,
                     &L->din,  &L->carry, &L->rlog,  &L->dr,     &L->tv};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) mb_tensor_free(ts[i]);
  for (int32_t k = 0; L->ptarget && k <= L->K; k++) mb_tensor_free(&L->ptarget[k]);
  free(L->ptarget);
  free(L->actions);
  free(L->vt);
  free(L->vw);
  free(L->pw);
  free(L->rt);
  free(L->rw);
  free(L->bootv);
  free(L->rows);
  free(L->boot_idx);
  free(L->boot_sum);
  free(L->boot_disc);
  free(L->past);
  free(L->isw);
  for (int32_t j = 0; L->sdyn && j < L->P; j++) mb_nn_tape_free(&L->sdyn[j]);
  for (int32_t j = 0; L->srew && j < L->P; j++) mb_nn_tape_free(&L->srew[j]);
  for (int32_t j = 0; L->spred && j + 1 < L->P; j++) mb_nn_tape_free(&L->spred[j]);
  free(L->sdyn);
  free(L->srew);
  free(L->spred);
  mb_nn_tape_free(&L->srepr);
  mb_tensor *sts[] = {&L->sin, &L->sobs, &L->sds, &L->scarry, &L->svlog, &L->sdpred};
  for (size_t i = 0; i < sizeof sts / sizeof sts[0]; i++) mb_tensor_free(sts[i]);
  free(L->sact);
  free(L->srt);
  free(L->sw);
  free(L->svt);
  free(L->svw);
  free(L->ssum);
  free(L->sdisc);
  free(L->sboot);
  free(L->v0);
  mb_tensor_free(&L->vlog0);
  memset(L, 0, sizeof *L);
}

static bool learner_init(mb_learner *L, const mb_agent *ag, int32_t B, int32_t K, int32_t P,
                         mb_error *err) {
  memset(L, 0, sizeof *L);
  L->B = B;
  L->K = K;
  L->A = ag->cfg.game.n_actions;
  L->W = ag->cfg.latent;
  L->S = ag->cfg.support;
  L->D = ag->cfg.obs_dim;
  L->NB = B * (K + 1);
  L->NBOOT = L->NB + (P >= 2 ? B : 0);
  mb_rng r0;
  mb_rng_seed(&r0, 0);
  bool ok =
      mb_agent_create(&L->target, &ag->cfg, &r0, err) && mb_agent_copy_weights(&L->target, ag, err);
  L->pred = calloc((size_t)K + 1, sizeof *L->pred);
  L->dyn = calloc((size_t)K + 1, sizeof *L->dyn);
  L->rew = calloc((size_t)K + 1, sizeof *L->rew);
  L->ptarget = calloc((size_t)K + 1, sizeof *L->ptarget);
  int64_t nb = L->NB;
  L->actions = calloc((size_t)nb, sizeof *L->actions);
  L->vt = calloc((size_t)nb, sizeof(float));
  L->vw = calloc((size_t)nb, sizeof(float));
  L->pw = calloc((size_t)nb, sizeof(float));
  L->rt = calloc((size_t)nb, sizeof(float));
  L->rw = calloc((size_t)nb, sizeof(float));
  L->bootv = calloc((size_t)L->NBOOT, sizeof(float));
  L->rows = calloc((size_t)nb, sizeof(int64_t));
  L->boot_idx = calloc((size_t)nb, sizeof(int64_t));
  L->boot_sum = calloc((size_t)nb, sizeof(double));
  L->boot_disc = calloc((size_t)nb, sizeof(double));
  L->past = calloc((size_t)nb, sizeof(bool));
  L->isw = calloc((size_t)B, sizeof(float));
  L->v0 = calloc((size_t)B, sizeof(float));
  int32_t BK = K > 0 ? B * K : 1;
  L->cw = calloc((size_t)BK, sizeof(float));
  if (ok && (!L->cw || !L->pred || !L->dyn || !L->rew || !L->ptarget || !L->actions || !L->vt ||
             !L->vw || !L->pw || !L->rt || !L->rw || !L->bootv || !L->rows || !L->boot_idx ||
             !L->boot_sum || !L->boot_disc || !L->past || !L->isw || !L->v0))
    ok = mb_fail(err, "learner: out of memory");
  ok = ok && mb_nn_tape_create(&L->repr, &ag->repr, B, err) &&
       mb_nn_tape_create(&L->trepr, &L->target.repr, L->NBOOT, err) &&
       mb_nn_tape_create(&L->tpred, &L->target.pred, L->NBOOT, err) &&
       mb_nn_tape_create(&L->crepr, &ag->repr, BK, err) && mb_tensor_init(&L->cobs, BK, L->D, err);
  if (ok && P > 0) {
    size_t n = (size_t)B * (size_t)P;
    L->sdyn = calloc((size_t)P, sizeof *L->sdyn);
    L->srew = calloc((size_t)P, sizeof *L->srew);
    L->spred = calloc((size_t)P, sizeof *L->spred);
    L->sact = calloc(n, sizeof *L->sact);
    L->srt = calloc(n, sizeof *L->srt);
    L->sw = calloc(n, sizeof *L->sw);
    L->svt = calloc(n, sizeof *L->svt);
    L->svw = calloc(n, sizeof *L->svw);
    L->ssum = calloc(n, sizeof *L->ssum);
    L->sdisc = calloc(n, sizeof *L->sdisc);
    L->sboot = calloc((size_t)B, sizeof *L->sboot);
    ok = (L->sdyn && L->srew && L->spred && L->sact && L->srt && L->sw && L->svt && L->svw &&
          L->ssum && L->sdisc && L->sboot) ||
         mb_fail(err, "learner: out of memory");
    if (ok) L->P = P; /* the tape arrays exist: learner_release may walk them */
    for (int32_t j = 0; ok && j < P; j++)
      ok = mb_nn_tape_create(&L->sdyn[j], &ag->dyn, B, err) &&
           mb_nn_tape_create(&L->srew[j], &ag->reward, B, err) &&
           (j + 1 == P || mb_nn_tape_create(&L->spred[j], &ag->pred, B, err));
    ok = ok && mb_nn_tape_create(&L->srepr, &ag->repr, B * P, err) &&
         mb_tensor_init(&L->sin, B, mb_agent_dynamics_inputs(&ag->cfg), err) &&
         mb_tensor_init(&L->sobs, B * P, L->D, err) && mb_tensor_init(&L->sds, B, L->W, err) &&
         mb_tensor_init(&L->scarry, B, L->W, err) && mb_tensor_init(&L->svlog, B, L->S, err) &&
         mb_tensor_init(&L->sdpred, B, L->A + L->S, err);
  }
  for (int32_t k = 0; ok && k <= K; k++)
    ok = mb_nn_tape_create(&L->pred[k], &ag->pred, B, err) &&
         mb_tensor_init(&L->ptarget[k], B, L->A, err);
  for (int32_t k = 0; ok && k < K; k++)
    ok = mb_nn_tape_create(&L->dyn[k], &ag->dyn, B, err) &&
         mb_nn_tape_create(&L->rew[k], &ag->reward, B, err);
  int32_t W = L->W, A = L->A, S = L->S;
  int32_t X = mb_agent_dynamics_inputs(&ag->cfg);
  ok = ok && mb_tensor_init(&L->obs, B, L->D, err) && mb_tensor_init(&L->in, B, X, err) &&
       mb_tensor_init(&L->bobs, L->NBOOT, L->D, err) && mb_tensor_init(&L->logits, B, A, err) &&
       mb_tensor_init(&L->vlog, L->NBOOT, S, err) && mb_tensor_init(&L->dpol, B, A, err) &&
       mb_tensor_init(&L->dval, B, S, err) && mb_tensor_init(&L->dpred, B, A + S, err) &&
       mb_tensor_init(&L->ds, B, W, err) && mb_tensor_init(&L->dtmp, B, W, err) &&
       mb_tensor_init(&L->din, B, X, err) && mb_tensor_init(&L->carry, B, W, err) &&
       mb_tensor_init(&L->rlog, B, S, err) && mb_tensor_init(&L->dr, B, S, err) &&
       mb_tensor_init(&L->tv, L->NB, 1, err) && mb_tensor_init(&L->vlog0, B, S, err);
  if (!ok) learner_release(L);
  return ok;
}

/* Draws the first row of batch column b: uniformly (importance weight 1), or by priority with
 * its importance weight for exponent beta. -1 when the buffer is empty. */
static int64_t learner_draw(mb_learner *L, int32_t b, const mb_replay *rb, bool prioritised,
                            double beta, mb_rng *rng) {
  double w = 1;
  int64_t row =
      prioritised ? mb_replay_sample_prioritised(rb, rng, beta, &w) : mb_replay_sample(rb, rng);
  L->isw[b] = (float)w;
  return row;
}

/* Multiplies every loss weight of each batch column (policy, value, reward and consistency at
 * every unroll step) by the column's importance weight. */
static void learner_apply_is_weights(mb_learner *L) {
  int32_t B = L->B, K = L->K;
  for (int32_t k = 0; k <= K; k++)
    for (int32_t b = 0; b < B; b++) {
      int64_t i = (int64_t)k * B + b;
      L->pw[i] *= L->isw[b];
      L->vw[i] *= L->isw[b];
      if (k < K) L->rw[i] *= L->isw[b];
      if (k >= 1) L->cw[(int64_t)(k - 1) * B + b] *= L->isw[b];
    }
}

/* Sibling path of batch column b drawn at row0 (weights 0 beyond the path, everywhere when the
 * row has none): actions, reward targets, consistency observations, value target parts (and the
 * observation to bootstrap from, appended to bobs at *nboot). */
static void learner_sibling(mb_learner *L, const mb_replay *rb, int32_t b, int64_t row0,
                            float scale, double gamma, int32_t *nboot) {
  int32_t B = L->B, P = L->P, n = rb->sib_len[row0];
  int64_t base = row0 * P;
  for (int32_t j = 0; j < P; j++) {
    int64_t i = (int64_t)j * B + b;
    bool has = j < n;
    L->sact[i] = has ? rb->sib_action[base + j] : 0;
    L->srt[i] = has ? rb->sib_reward[base + j] * scale : 0.0f;
    L->sw[i] = has ? L->isw[b] : 0.0f;
    float *o = mb_tensor_row(&L->sobs, (int32_t)i);
    if (has)
      memcpy(o, rb->sib_obs + (base + j) * L->D, (size_t)L->D * sizeof(float));
    else
      memset(o, 0, (size_t)L->D * sizeof(float));
    L->svw[i] = 0;
  }
  /* value targets at the steps the path continues past: the path's later rewards, then the
   * target network's value of its last observation unless the episode ended there */
  L->sboot[b] = -1;
  if (n < 2) return;
  if (!rb->sib_terminal[row0]) {
    memcpy(mb_tensor_row(&L->bobs, *nboot), rb->sib_obs + (base + n - 1) * L->D,
           (size_t)L->D * sizeof(float));
    L->sboot[b] = (*nboot)++;
  }
  for (int32_t j = 0; j + 1 < n; j++) {
    int64_t i = (int64_t)j * B + b;
    mb_replay_sibling_target(rb, row0, j, gamma, &L->ssum[i], &L->sdisc[i]);
    L->svw[i] = L->isw[b];
  }
}

/* Fills the batch: rows, actions, policy/value/reward targets (scaled), weights. beta is the
 * importance-weight exponent when rows are drawn by priority. */
static bool learner_batch(mb_learner *L, const mb_replay *rb, const mb_train_config *cfg,
                          const mb_agent *ag, double beta, mb_rng *rng, mb_error *err) {
  int32_t B = L->B, K = L->K, A = L->A, D = L->D;
  float scale = ag->cfg.value_scale;
  int32_t nboot = 0;
  bool prioritised = cfg->priority_alpha > 0;
  for (int32_t b = 0; b < B; b++) {
    int64_t row0 = learner_draw(L, b, rb, prioritised, beta, rng);
    if (row0 < 0) return mb_fail(err, "learner: empty replay buffer");
    memcpy(mb_tensor_row(&L->obs, b), rb->obs + row0 * D, (size_t)D * sizeof(float));
    if (L->P > 0) learner_sibling(L, rb, b, row0, scale, cfg->gamma, &nboot);
    /* the trajectory's final row: terminal or truncated */
    bool pe;
    int64_t fin = mb_replay_offset(rb, row0, rb->to_final[row0], &pe);
    bool term = rb->terminal[fin] != 0;
    for (int32_t k = 0; k <= K; k++) {
      int64_t i = (int64_t)k * B + b;
      bool past;
      int64_t row = mb_replay_offset(rb, row0, k, &past);
      L->rows[i] = row;
      L->past[i] = past;
      bool decision = !past && rb->action[row] >= 0;
      float *pt = mb_tensor_row(&L->ptarget[k], b);
      if (decision) {
        memcpy(pt, rb->policy + row * A, (size_t)A * sizeof(float));
        L->pw[i] = 1;
      } else {
        for (int32_t a = 0; a < A; a++) pt[a] = 1.0f / (float)A;
        L->pw[i] = 0;
      }
      L->boot_idx[i] = -1;
      if (past) {
        L->vt[i] = 0;
        L->vw[i] = term ? 1.0f : 0.0f;
      } else {
        int64_t boot;
        mb_replay_nstep(rb, row, cfg->td_steps, cfg->gamma, &L->boot_sum[i], &boot,
                        &L->boot_disc[i]);
        L->vw[i] = 1;
        if (boot >= 0) {
          memcpy(mb_tensor_row(&L->bobs, nboot), rb->obs + boot * D, (size_t)D * sizeof(float));
          L->boot_idx[i] = nboot++;
        }
      }
      if (k >= 1) {
        int64_t c = (int64_t)(k - 1) * B + b;
        memcpy(mb_tensor_row(&L->cobs, (int32_t)c), rb->obs + row * D, (size_t)D * sizeof(float));
        L->cw[c] = past ? 0.0f : 1.0f;
      }
      if (k < K) {
        L->actions[i] = decision ? rb->action[row] : (int32_t)mb_rng_below(rng, (uint64_t)A);
        L->rt[i] = decision ? rb->reward[row] * scale : 0.0f;
        L->rw[i] = decision ? 1.0f : (term ? 1.0f : 0.0f);
      }
    }
  }
  /* bootstrap values from the target network */
  if (nboot > 0) {
    if (!mb_tensor_reshape(&L->bobs, nboot, D, err)) return false;
    const mb_tensor *s = mb_nn_forward(&L->trepr, &L->bobs, err);
    const mb_tensor *o = s ? mb_nn_forward(&L->tpred, s, err) : NULL;
    if (!o || !mb_tensor_get_cols(&L->vlog, o, A, L->S, err) ||
        !mb_categorical_decode(&L->target.sup, &L->vlog, L->bootv, err))
      return false;
    if (!mb_tensor_reshape(&L->bobs, L->NBOOT, D, err)) return false;
  }
  for (int32_t b = 0; b < B && L->P >= 2; b++) {
    double v = L->sboot[b] >= 0 ? L->bootv[L->sboot[b]] / scale : 0.0;
    for (int32_t j = 0; j + 1 < L->P; j++) {
      int64_t i = (int64_t)j * B + b;
      L->svt[i] = L->svw[i] > 0 ? (float)((L->ssum[i] + L->sdisc[i] * v) * scale) : 0.0f;
    }
  }
  for (int32_t k = 0; k <= K; k++)
    for (int32_t b = 0; b < B; b++) {
      int64_t i = (int64_t)k * B + b;
      if (L->past[i]) continue;
      double v = L->boot_idx[i] >= 0 ? L->bootv[L->boot_idx[i]] / scale : 0.0;
      double z = L->boot_sum[i] + L->boot_disc[i] * v;
      L->vt[i] = (float)(z * scale);
    }
  if (prioritised) learner_apply_is_weights(L);
  return true;
}

mb_learner_batch mb_learner_last_batch(const mb_learner *L) {
  return (mb_learner_batch){.batch = L->B,
                            .unroll = L->K,
                            .observations = &L->obs,
                            .rows = L->rows,
                            .past = L->past,
                            .policy_targets = L->ptarget,
                            .policy_weight = L->pw,
                            .value_target = L->vt,
                            .value_weight = L->vw,
                            .actions = L->actions,
                            .reward_target = L->rt,
                            .reward_weight = L->rw,
                            .sibling_steps = L->P,
                            .sibling_actions = L->sact,
                            .sibling_reward_target = L->srt,
                            .sibling_reward_weight = L->sw,
                            .sibling_value_target = L->svt,
                            .sibling_value_weight = L->svw};
}

/* The value the network predicts at unroll step 0 for each batch column (scaled units), from
 * the prediction tape of this update's forward pass (before the weights change). */
static bool learner_value0(mb_learner *L, const mb_agent *ag, mb_error *err) {
  return mb_tensor_get_cols(&L->vlog0, mb_nn_tape_output(&L->pred[0]), L->A, L->S, err) &&
         mb_categorical_decode(&ag->sup, &L->vlog0, L->v0, err);
}

/* New priorities of the drawn rows: |value prediction - n-step target| at unroll step 0 (both
 * scaled); a row drawn twice gets the same error twice. */
static void learner_set_priorities(const mb_learner *L, mb_replay *rb) {
  for (int32_t b = 0; b < L->B; b++)
    mb_replay_set_priority(rb, L->rows[b], fabs((double)L->v0[b] - (double)L->vt[b]));
}

/* sum_b 0.5 w row_w[b] ||x_b - t_b||^2 over B rows of W floats (rows with weight 0 skipped);
 * adds the gradient w row_w[b] (x_b - t_b) into g. Returns the loss. */
static double latent_mse_grad(const float *x, const float *t, const float *row_w, float w,
                              int32_t B, int32_t W, float *g) {
  double loss = 0;
  for (int32_t b = 0; b < B; b++) {
    if (row_w[b] == 0) continue;
    float wb = w * row_w[b];
    const float *xb = x + (int64_t)b * W, *tb = t + (int64_t)b * W;
    float *gb = g + (int64_t)b * W;
    for (int32_t j = 0; j < W; j++) {
      float d = xb[j] - tb[j];
      loss += 0.5 * (double)wb * (double)d * (double)d;
      gb[j] += wb * d;
    }
  }
  return loss;
}

/* Consistency (EfficientZero, Ye et al. 2021): the dynamics' state after k steps should be the
 * representation of the observation actually reached, 0.5 w ||g^k(s, a) - sg(h(o_{t+k}))||^2.
 * MuZero's losses constrain the learned states only through one scalar value and reward per
 * step, so the dynamics is free to drift from the states the prediction head was trained on,
 * and the value of an untaken sibling action is then poorly predicted (measured by `bench muzero
 * --model-error`). Adds the gradient into L->ds; returns the loss. */
static double consistency_grad(mb_learner *L, int32_t k, const mb_tensor *target, float w) {
  /* cw: 0/1 existence times the importance weight */
  int32_t first = (k - 1) * L->B;
  return latent_mse_grad(mb_tensor_row(mb_nn_tape_output(&L->dyn[k - 1]), 0),
                         mb_tensor_row(target, first), L->cw + first, w, L->B, L->W,
                         mb_tensor_row(&L->ds, 0));
}

/* The dynamics' input [s | one_hot(a) | x(a)] of one unroll step: x(a) from each row's real
 * observation at the first step (obs), zeros below it (obs NULL), as in search. */
static bool dynamics_input(mb_tensor *in, const mb_tensor *s, const int32_t *action,
                           const mb_tensor *obs, const mb_agent_config *c, mb_error *err) {
  int32_t W = c->latent, A = c->game.n_actions;
  if (!mb_tensor_set_cols(in, 0, s, err) || !mb_tensor_set_onehot(in, W, A, action, err))
    return false;
  for (int32_t r = 0; c->action_features && r < in->rows; r++)
    mb_agent_action_features(c, obs ? mb_tensor_row(obs, r) : NULL, action[r],
                             mb_tensor_row(in, r) + W + A);
  return true;
}

/* Sibling paths: forward P dynamics steps from the root state s0 along the stored paths, then
 * at every step the reward and consistency losses and, where the path continues, the value loss
 * (all weighted sibling_weight / P, the value also value_weight), backward through the chain into
 * L->ds (the gradient at s0; like the main unroll's, halved into every state a dynamics step
 * made and scaled by root_gradient into s0). Returns the loss. With P = 1 this is one step with
 * reward and consistency only. */
static bool sibling_paths(mb_learner *L, const mb_agent *ag, const mb_tensor *s0,
                          const mb_train_config *cfg, double *loss, mb_error *err) {
  int32_t B = L->B, W = L->W, A = L->A, S = L->S, P = L->P;
  float sc = (float)cfg->sibling_weight / (float)(B * P);
  *loss = 0;
  const mb_tensor *target = mb_nn_forward(&L->srepr, &L->sobs, err);
  if (!target) return false;
  const mb_tensor *s = s0;
  for (int32_t j = 0; j < P; j++) {
    if (!dynamics_input(&L->sin, s, L->sact + (int64_t)j * B, j == 0 ? &L->obs : NULL, &ag->cfg,
                        err))
      return false;
    s = mb_nn_forward(&L->sdyn[j], &L->sin, err);
    if (!s || !mb_nn_forward(&L->srew[j], s, err)) return false;
    if (j + 1 < P && !mb_nn_forward(&L->spred[j], s, err)) return false;
  }
  mb_tensor_zero(&L->scarry);
  mb_tensor_zero(&L->sdpred); /* the policy columns get no gradient */
  for (int32_t j = P - 1; j >= 0; j--) {
    int64_t first = (int64_t)j * B;
    double lv = 0, lr = 0;
    mb_tensor_zero(&L->sds);
    if (j + 1 < P) {
      if (!mb_tensor_get_cols(&L->svlog, mb_nn_tape_output(&L->spred[j]), A, S, err) ||
          !mb_tensor_reshape(&L->dr, B, S, err) ||
          !mb_loss_categorical(&ag->sup, &L->svlog, L->svt + first, L->svw + first,
                               sc * (float)cfg->value_weight, &lv, &L->dr, err) ||
          !mb_tensor_set_cols(&L->sdpred, A, &L->dr, err) ||
          !mb_nn_backward(&L->spred[j], &L->sdpred, &L->dtmp, err) ||
          !mb_tensor_axpy(&L->sds, 1.0f, &L->dtmp, err))
        return false;
    }
    if (!mb_loss_categorical(&ag->sup, mb_nn_tape_output(&L->srew[j]), L->srt + first,
                             L->sw + first, sc, &lr, &L->dr, err) ||
        !mb_nn_backward(&L->srew[j], &L->dr, &L->dtmp, err) ||
        !mb_tensor_axpy(&L->sds, 1.0f, &L->dtmp, err))
      return false;
    double lc = latent_mse_grad(mb_tensor_row(mb_nn_tape_output(&L->sdyn[j]), 0),
                                mb_tensor_row(target, (int32_t)first), L->sw + first, sc, B, W,
                                mb_tensor_row(&L->sds, 0));
    if (!mb_tensor_axpy(&L->sds, 1.0f, &L->scarry, err) ||
        !mb_nn_backward(&L->sdyn[j], &L->sds, &L->din, err) ||
        !mb_tensor_get_cols(&L->scarry, &L->din, 0, W, err))
      return false;
    mb_nn_scale_gradient(&L->scarry, j > 0 ? 0.5f : (float)cfg->root_gradient);
    *loss += lv + lr + lc;
  }
  return mb_tensor_axpy(&L->ds, 1.0f, &L->scarry, err);
}

bool mb_learner_step(mb_learner *L, mb_agent *ag, mb_adam *opt, const mb_train_config *cfg,
                     mb_replay *rb, double beta, mb_rng *rng, mb_error *err) {
  if (L->P > 0 && (!rb->sib_action || rb->sib_depth != L->P))
    return mb_fail(err, "learner: sibling paths of %d steps, the replay's of %d", L->P,
                   rb->sib_action ? rb->sib_depth : 0);
  if (!learner_batch(L, rb, cfg, ag, beta, rng, err)) return false;
  int32_t B = L->B, K = L->K, A = L->A, W = L->W, S = L->S;
  const mb_tensor *ctarget = NULL;
  if (K > 0 && cfg->consistency_weight > 0 && !(ctarget = mb_nn_forward(&L->crepr, &L->cobs, err)))
    return false;
  const mb_tensor *s = mb_nn_forward(&L->repr, &L->obs, err);
  if (!s) return false;
  for (int32_t k = 0; k <= K; k++) {
    if (!mb_nn_forward(&L->pred[k], s, err)) return false;
    if (k == K) break;
    if (!dynamics_input(&L->in, s, L->actions + (int64_t)k * B, k == 0 ? &L->obs : NULL, &ag->cfg,
                        err))
      return false;
    s = mb_nn_forward(&L->dyn[k], &L->in, err);
    if (!s || !mb_nn_forward(&L->rew[k], s, err)) return false;
  }
  if (cfg->priority_alpha > 0 && !learner_value0(L, ag, err)) return false;
  mb_nn_module *mods[4];
  mb_agent_modules(ag, mods);
  for (int i = 0; i < 4; i++) mb_nn_zero_grad(mods[i]);
  mb_tensor_zero(&L->carry);
  double lp = 0, lv = 0, lr = 0, lc = 0;
  for (int32_t k = K; k >= 0; k--) {
    float sc = (k == 0 ? 1.0f : 1.0f / (float)(K > 0 ? K : 1)) / (float)B;
    const mb_tensor *po = mb_nn_tape_output(&L->pred[k]);
    double l1, l2;
    if (!mb_tensor_get_cols(&L->logits, po, 0, A, err) ||
        !mb_tensor_get_cols(&L->dval, po, A, S, err) ||
        !mb_loss_softmax_xent(&L->logits, &L->ptarget[k], NULL, L->pw + (int64_t)k * B, sc, &l1,
                              &L->dpol, err))
      return false;
    /* dval holds the value logits; the loss writes its gradient into rlog-sized dr first */
    if (!mb_tensor_reshape(&L->dr, B, S, err) ||
        !mb_loss_categorical(&ag->sup, &L->dval, L->vt + (int64_t)k * B, L->vw + (int64_t)k * B,
                             sc * (float)cfg->value_weight, &l2, &L->dr, err) ||
        !mb_tensor_set_cols(&L->dpred, 0, &L->dpol, err) ||
        !mb_tensor_set_cols(&L->dpred, A, &L->dr, err) ||
        !mb_nn_backward(&L->pred[k], &L->dpred, &L->ds, err))
      return false;
    lp += l1;
    lv += l2;
    if (k >= 1) {
      double l3;
      const mb_tensor *ro = mb_nn_tape_output(&L->rew[k - 1]);
      if (!mb_loss_categorical(&ag->sup, ro, L->rt + (int64_t)(k - 1) * B,
                               L->rw + (int64_t)(k - 1) * B, sc, &l3, &L->dr, err) ||
          !mb_nn_backward(&L->rew[k - 1], &L->dr, &L->dtmp, err) ||
          !mb_tensor_axpy(&L->ds, 1.0f, &L->dtmp, err))
        return false;
      lr += l3;
      if (ctarget) lc += consistency_grad(L, k, ctarget, sc * (float)cfg->consistency_weight);
    }
    if (!mb_tensor_axpy(&L->ds, 1.0f, &L->carry, err)) return false;
    if (k == 0) break;
    if (!mb_nn_backward(&L->dyn[k - 1], &L->ds, &L->din, err) ||
        !mb_tensor_get_cols(&L->carry, &L->din, 0, W, err))
      return false;
    mb_nn_scale_gradient(&L->carry, k > 1 ? 0.5f : (float)cfg->root_gradient);
  }
  double ls = 0;
  if (L->P > 0 && !sibling_paths(L, ag, mb_nn_tape_output(&L->repr), cfg, &ls, err)) return false;
  L->loss_s = ls;
  if (!mb_nn_backward(&L->repr, &L->ds, NULL, err)) return false;
  mb_adam_clip_grad_norm(opt, cfg->max_grad_norm);
  if (!mb_adam_step(opt, err)) return false;
  if (cfg->priority_alpha > 0) learner_set_priorities(L, rb);
  L->loss_p = lp;
  L->loss_v = lv;
  L->loss_r = lr;
  L->loss_c = lc;
  return true;
}

mb_learner *mb_learner_create(const mb_agent *ag, int32_t batch, int32_t unroll,
                              int32_t sibling_steps, mb_error *err) {
  mb_learner *L = malloc(sizeof *L);
  if (!L) return mb_fail(err, "learner: out of memory"), NULL;
  if (!learner_init(L, ag, batch, unroll, sibling_steps, err)) { /* it released what it had */
    free(L);
    return NULL;
  }
  return L;
}

void mb_learner_free(mb_learner *L) {
  if (!L) return;
  learner_release(L);
  free(L);
}

bool mb_learner_update_target(mb_learner *L, const mb_agent *ag, mb_error *err) {
  return mb_agent_copy_weights(&L->target, ag, err);
}

mb_learner_losses mb_learner_last_losses(const mb_learner *L) {
  return (mb_learner_losses){.policy = L->loss_p,
                             .value = L->loss_v,
                             .reward = L->loss_r,
                             .consistency = L->loss_c,
                             .sibling = L->loss_s};
}
