/* The probes of mallocMuZero's search behind `mallocbench bench muzero --model-error`,
 * `--search-regret`, `--unroll-error` and `--next-window` (diagnostics.h). */
#include "diagnostics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "game.h"
#include "player.h"

/* Rollout returns (normalised) closer than this are a tie: neither action of such a pair is the
 * better one, and each of them is rollout-best when the other is. */
static const double ROLLOUT_TIE = 1e-9;

/* The buffers a probe works in, so that a workload's pass allocates nothing: the agent-sized ones
 * allocated once per probe, --unroll-error's per-decision arrays grown to the longest episode so
 * far (scratch_reserve). */
typedef struct probe_scratch {
  mb_agent_infer inf;
  bool inf_made;
  float *obs;      /* obs_dim: the decision's observation (rollouts overwrite it) */
  float *root_obs; /* obs_dim: --model-error's root observation, kept through its rollouts */
  float *lat;      /* latent: the root's representation */
  float *logits;   /* A: the decision's policy logits */
  float *l2;       /* A: the rollouts' and the children's logits */
  uint8_t *mask;   /* A: the decision's legal actions */
  uint8_t *m2;     /* A: the rollouts' legal actions */
  /* per action of a root, normalised (one allocation, 5 x A): the exact one-step value Q1, the
   * learned one Q1^, the rollout value QR, the policy logit, the true reward r */
  double *q1, *q1l, *qr, *lg, *rr;
  mb_player *learned, *exact; /* --search-regret's searches (NULL for the other probes) */
  /* --unroll-error, room for `cap` decisions: each one's representation (cap x latent) and
   * observation (cap x obs_dim, with action features only), normalised reward, value, action
   * and return to go; `chain` the current and next latent of an unrolled path (2 x latent) */
  int32_t cap;
  float *lat_at, *obs_at, *chain;
  double *rew, *val, *to_go;
  int32_t *act;
} probe_scratch;

static void scratch_free(probe_scratch *s) {
  if (s->inf_made) mb_agent_infer_free(&s->inf);
  free(s->obs);
  free(s->root_obs);
  free(s->lat);
  free(s->logits);
  free(s->l2);
  free(s->mask);
  free(s->m2);
  free(s->q1);
  mb_player_free(s->learned);
  mb_player_free(s->exact);
  free(s->lat_at);
  free(s->obs_at);
  free(s->chain);
  free(s->rew);
  free(s->val);
  free(s->to_go);
  free(s->act);
  *s = (probe_scratch){0};
}

/* The agent-sized buffers, and with scfg (--search-regret) a player per search of
 * scfg->simulations. False, s freed, after an error. */
static bool scratch_create(probe_scratch *s, const mb_agent *ag, const mb_search_config *scfg,
                           mb_error *err) {
  *s = (probe_scratch){0};
  size_t A = (size_t)ag->cfg.game.n_actions, D = (size_t)ag->cfg.obs_dim;
  if (!mb_agent_infer_create(&s->inf, ag, err)) return false;
  s->inf_made = true;
  s->obs = malloc(D * sizeof(float));
  s->root_obs = malloc(D * sizeof(float));
  s->lat = malloc((size_t)ag->cfg.latent * sizeof(float));
  s->logits = malloc(A * sizeof(float));
  s->l2 = malloc(A * sizeof(float));
  s->mask = malloc(A);
  s->m2 = malloc(A);
  s->q1 = malloc(5 * A * sizeof(double));
  bool ok = s->obs && s->root_obs && s->lat && s->logits && s->l2 && s->mask && s->m2 && s->q1;
  if (!ok) mb_fail(err, "probe: out of memory");
  if (ok) {
    s->q1l = s->q1 + A;
    s->qr = s->q1 + 2 * A;
    s->lg = s->q1 + 3 * A;
    s->rr = s->q1 + 4 * A;
  }
  if (ok && scfg) {
    s->learned = mb_player_create(ag, scfg->simulations, err);
    s->exact = s->learned ? mb_player_create(ag, scfg->simulations, err) : NULL;
    ok = s->exact != NULL;
  }
  if (!ok) scratch_free(s);
  return ok;
}

/* Room for `cap` decisions in --unroll-error's arrays (their contents are not kept). */
static bool scratch_reserve(probe_scratch *s, const mb_agent *ag, int32_t cap, mb_error *err) {
  if (cap <= s->cap) return true;
  size_t n = (size_t)cap, W = (size_t)ag->cfg.latent, D = (size_t)ag->cfg.obs_dim;
  free(s->lat_at);
  free(s->obs_at);
  free(s->chain);
  free(s->rew);
  free(s->val);
  free(s->to_go);
  free(s->act);
  s->lat_at = malloc(n * W * sizeof(float));
  s->obs_at = ag->cfg.action_features ? malloc(n * D * sizeof(float)) : NULL;
  s->chain = malloc(2 * W * sizeof(float));
  s->rew = malloc(n * sizeof(double));
  s->val = malloc(n * sizeof(double));
  s->to_go = malloc(n * sizeof(double));
  s->act = malloc(n * sizeof(int32_t));
  bool ok = s->lat_at && (s->obs_at || !ag->cfg.action_features) && s->chain && s->rew && s->val &&
            s->to_go && s->act;
  s->cap = ok ? cap : 0;
  return ok || mb_fail(err, "probe: out of memory (%d decisions)", cap);
}

/* What one probe needs on each workload: the decision stride, the search (--search-regret only)
 * and the sums it adds to (its own type). */
typedef struct probe_pass {
  int32_t stride;
  const mb_search_config *scfg; /* [0] the learned model's, [1] the real game's */
  void *sums;
} probe_pass;

/* One probe on one workload: g is fresh, scale its R_ref. */
typedef bool (*probe_workload_fn)(probe_scratch *s, const mb_agent *ag, mb_game *g, double scale,
                                  const probe_pass *pass, mb_error *err);

/* Runs fn on every workload of the set, in one scratch; false, err naming the workload, at the
 * first that fails. */
static bool probe_over_set(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                           probe_workload_fn fn, const probe_pass *pass, mb_error *err) {
  probe_scratch s;
  if (!scratch_create(&s, ag, pass->scfg, err)) return false;
  bool ok = true;
  for (int32_t e = 0; ok && e < n_set; e++) {
    mb_game *g = mb_game_new(set[e].w, &set[e].hw, &ag->cfg.game, err);
    ok = g && fn(&s, ag, g, mb_return_scale(set[e].w, &set[e].hw, g), pass, err);
    mb_game_free(g);
    if (!ok) mb_fail_prefix(err, "%s", set[e].name);
  }
  scratch_free(&s);
  return ok;
}

/* Raw-policy rollout of every legal action (s->mask) from g's current state (g is restored):
 * qr[a] = r(a) + the raw policy's return after it, normalised by rs. Overwrites s->obs, s->l2
 * and s->m2. */
static bool rollout_values(probe_scratch *s, mb_game *g, double rs, double *qr, mb_error *err) {
  int32_t A = mb_game_n_actions(g);
  mb_game_snapshot snap = mb_game_snapshot_take(g);
  bool ok = true;
  for (int32_t a = 0; ok && a < A; a++) {
    if (!s->mask[a]) continue;
    double r = 0, G = 0;
    ok = mb_game_restore(g, snap, err) && mb_game_step(g, a, &r, err);
    while (ok && !mb_game_done(g)) {
      double r2 = 0;
      float v;
      mb_game_observe(g, s->obs);
      mb_game_legal_mask(g, s->m2);
      ok = mb_agent_initial(&s->inf, s->obs, NULL, s->l2, &v, err) &&
           mb_game_step(g, mb_agent_greedy(s->l2, s->m2, A), &r2, err);
      G += r2;
    }
    qr[a] = (r + G) * rs;
  }
  return mb_game_restore(g, snap, ok ? err : &(mb_error){{0}}) && ok;
}

/* --model-error: how well the search's one-step evaluations rank a state's legal actions.
 * One episode per workload; at every `stride`-th decision ("root") and for every legal action a:
 *   exact one-step Q1(a) = r(a) + v(h(obs after a)) (the exact-game search's leaf),
 *   learned one-step Q1^(a) = r^(a) + v^(g(h(obs), a)) (the learned-model search's leaf),
 *   rollout QR(a) = r(a) + the return of the raw policy after a (ground truth for the policy),
 * all in normalised units (1 / R_ref). Prints the reward head's error against the true rewards,
 * the learned Q1^'s against Q1 (also relative to the siblings' means, which is what a root's
 * comparison of its children sees) and, over sibling pairs whose rollout returns differ, how
 * often each one-step estimate (and the policy's logits) orders the pair like the rollouts
 * do; also over the policy's two favourites alone, the pair a 2-simulation search compares. Roots
 * then play the rollout-best action (the raw policy's on ties), the other decisions the raw policy:
 * with stride 1 the episode's return is that of one step of exact policy improvement, the most a
 * search whose leaves valued states as well as the rollouts do could gain at depth 1. */
typedef struct model_error_sums {
  double r_abs_err, r_spread, q_abs_err, q_spread, vq_abs_err;
  double q_rel_err; /* |(Q1^ - siblings' mean Q1^) - (Q1 - siblings' mean Q1)|: the error left
                       in the differences a root's comparison sees (a shared offset cancels) */
  int64_t n_act, pairs, agree_exact, agree_learned, agree_logits, roots;
  int64_t best_exact, best_learned, best_logits;
  /* the policy's two favourites (the pair a 2-simulation search compares), when their
   * rollouts differ: how often each estimate orders them like the rollouts */
  int64_t top2_pairs, top2_exact, top2_learned, top2_logits;
  double r_err_greedy, q_err_greedy; /* the same errors on the raw policy's own action */
  int64_t n_greedy;
  double ret; /* sum of the episodes' true returns */
} model_error_sums;

static int sign3(double x, double eps) { return x > eps ? 1 : (x < -eps ? -1 : 0); }

/* The root's values (g's current state; g is back there after): per legal action s->q1, s->q1l,
 * s->qr, s->lg and s->rr, and their errors added to d. s->root_obs, s->lat and s->logits hold the
 * root's observation, representation and policy logits; greedy is the raw policy's action. */
static bool evaluate_root(probe_scratch *s, mb_game *g, double rs, int32_t greedy,
                          model_error_sums *d, mb_error *err) {
  int32_t A = mb_game_n_actions(g);
  mb_game_snapshot snap = mb_game_snapshot_take(g);
  bool ok = rollout_values(s, g, rs, s->qr, err);
  for (int32_t a = 0; ok && a < A; a++) {
    if (!s->mask[a]) continue;
    float rhat, vhat, v2 = 0;
    double r = 0;
    ok = mb_agent_recurrent(&s->inf, s->lat, a, s->root_obs, NULL, &rhat, s->l2, &vhat, err) &&
         mb_game_restore(g, snap, err) && mb_game_step(g, a, &r, err);
    r *= rs;
    if (ok && !mb_game_done(g)) {
      mb_game_observe(g, s->obs);
      ok = mb_agent_initial(&s->inf, s->obs, NULL, s->l2, &v2, err);
    }
    s->rr[a] = r;
    s->q1[a] = r + v2;
    s->q1l[a] = rhat + vhat;
    s->lg[a] = s->logits[a];
    d->r_abs_err += fabs(rhat - r);
    d->q_abs_err += fabs(s->q1l[a] - s->q1[a]);
    if (a == greedy) {
      d->r_err_greedy += fabs(rhat - r);
      d->q_err_greedy += fabs(s->q1l[a] - s->q1[a]);
      d->n_greedy++;
    }
    d->vq_abs_err += fabs(s->q1[a] - s->qr[a]);
    d->n_act++;
  }
  return ok && mb_game_restore(g, snap, err);
}

/* Judges the root's values (evaluate_root; n_legal >= 2 legal actions): how the one-step
 * estimates and the logits order its actions against the rollouts, added to d. Returns the
 * rollout-best action (greedy, the raw policy's, unless another is better by more than a tie). */
static int32_t judge_root(const probe_scratch *s, int32_t A, int32_t n_legal, int32_t greedy,
                          model_error_sums *d) {
  const uint8_t *mask = s->mask;
  const double *q1 = s->q1, *q1l = s->q1l, *qr = s->qr, *lg = s->lg, *rr = s->rr;
  double rmean = 0, qmean = 0, qlmean = 0;
  for (int32_t a = 0; a < A; a++) {
    if (!mask[a]) continue;
    rmean += rr[a];
    qmean += q1[a];
    qlmean += q1l[a];
  }
  rmean /= n_legal;
  qmean /= n_legal;
  qlmean /= n_legal;
  int32_t be = -1, bl = -1, bg = -1, br = greedy; /* argmax of Q1, Q1^, the logits, QR */
  for (int32_t a = 0; a < A; a++) {
    if (!mask[a]) continue;
    d->r_spread += fabs(rr[a] - rmean);
    d->q_spread += fabs(q1[a] - qmean);
    d->q_rel_err += fabs((q1l[a] - qlmean) - (q1[a] - qmean));
    if (be < 0 || q1[a] > q1[be]) be = a;
    if (bl < 0 || q1l[a] > q1l[bl]) bl = a;
    if (bg < 0 || lg[a] > lg[bg]) bg = a;
    if (qr[a] > qr[br] + ROLLOUT_TIE) br = a;
    for (int32_t b = a + 1; b < A; b++) {
      if (!mask[b]) continue;
      int sr = sign3(qr[a] - qr[b], ROLLOUT_TIE);
      if (!sr) continue;
      d->pairs++;
      d->agree_exact += sign3(q1[a] - q1[b], 0) == sr;
      d->agree_learned += sign3(q1l[a] - q1l[b], 0) == sr;
      d->agree_logits += sign3(lg[a] - lg[b], 0) == sr;
    }
  }
  int32_t second = -1; /* the policy's second favourite */
  for (int32_t a = 0; a < A; a++)
    if (mask[a] && a != bg && (second < 0 || lg[a] > lg[second])) second = a;
  int s2 = sign3(qr[bg] - qr[second], ROLLOUT_TIE);
  if (s2) {
    d->top2_pairs++;
    d->top2_exact += sign3(q1[bg] - q1[second], 0) == s2;
    d->top2_learned += sign3(q1l[bg] - q1l[second], 0) == s2;
    d->top2_logits += sign3(lg[bg] - lg[second], 0) == s2;
  }
  d->roots++;
  d->best_exact += qr[be] >= qr[br] - ROLLOUT_TIE;
  d->best_learned += qr[bl] >= qr[br] - ROLLOUT_TIE;
  d->best_logits += qr[bg] >= qr[br] - ROLLOUT_TIE;
  return br;
}

static bool model_error_workload(probe_scratch *s, const mb_agent *ag, mb_game *g, double scale,
                                 const probe_pass *pass, mb_error *err) {
  model_error_sums *d = pass->sums;
  int32_t A = ag->cfg.game.n_actions;
  double rs = 1.0 / scale;
  bool ok = true;
  mb_game_reset(g);
  for (int32_t t = 0; ok && !mb_game_done(g); t++) {
    mb_game_legal_mask(g, s->mask);
    mb_game_observe(g, s->root_obs);
    float v;
    ok = mb_agent_initial(&s->inf, s->root_obs, s->lat, s->logits, &v, err);
    int32_t move = mb_agent_greedy(s->logits, s->mask, A);
    int32_t n_legal = 0;
    for (int32_t a = 0; a < A; a++) n_legal += s->mask[a] != 0;
    if (ok && t % pass->stride == 0 && n_legal >= 2) {
      ok = evaluate_root(s, g, rs, move, d, err);
      if (ok) move = judge_root(s, A, n_legal, move, d);
    }
    ok = ok && mb_game_step(g, move, NULL, err);
  }
  d->ret += mb_game_return(g);
  return ok;
}

bool mb_muzero_probe_model_error(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                                 int32_t stride, const char *what, FILE *out, mb_error *err) {
  model_error_sums d = {0};
  if (!probe_over_set(ag, set, n_set, model_error_workload, &(probe_pass){stride, NULL, &d}, err))
    return false;
  if (d.n_act == 0 || d.pairs == 0) return mb_fail(err, "no decision with two legal actions");
  fprintf(out,
          "one-step model accuracy over %s: %lld roots (every %d-th raw-policy decision), "
          "%lld legal actions, normalised units (1 / R_ref)\n",
          what, (long long)d.roots, stride, (long long)d.n_act);
  fprintf(out, "  reward head |r^ - r|                 %.5f  (siblings' mean |r - mean r| %.5f)\n",
          d.r_abs_err / d.n_act, d.r_spread / d.n_act);
  fprintf(out,
          "  learned Q1^ vs exact Q1 |diff|       %.5f  (siblings' mean |Q1 - mean Q1| %.5f)\n",
          d.q_abs_err / d.n_act, d.q_spread / d.n_act);
  fprintf(
      out,
      "  the same relative to the siblings'  %.5f  (|(Q1^ - mean Q1^) - (Q1 - mean Q1)|: what a "
      "root comparison sees)\n",
      d.q_rel_err / d.n_act);
  fprintf(out, "  on the raw policy's own action:     |r^ - r| %.5f, |Q1^ - Q1| %.5f\n",
          d.r_err_greedy / d.n_greedy, d.q_err_greedy / d.n_greedy);
  fprintf(out, "  exact Q1 vs raw-policy rollout |diff| %.5f\n", d.vq_abs_err / d.n_act);
  fprintf(out,
          "  sibling pairs ordered like the rollouts (%lld pairs): exact Q1 %.3f, learned Q1^ "
          "%.3f, policy logits %.3f\n",
          (long long)d.pairs, (double)d.agree_exact / d.pairs, (double)d.agree_learned / d.pairs,
          (double)d.agree_logits / d.pairs);
  if (d.top2_pairs > 0)
    fprintf(out,
            "  the policy's two favourites, ordered like the rollouts (%lld pairs): exact Q1 %.3f, "
            "learned Q1^ %.3f, policy logits %.3f\n",
            (long long)d.top2_pairs, (double)d.top2_exact / d.top2_pairs,
            (double)d.top2_learned / d.top2_pairs, (double)d.top2_logits / d.top2_pairs);
  else
    fprintf(out,
            "  the policy's two favourites, ordered like the rollouts: no pair whose rollouts "
            "differ\n");
  fprintf(out,
          "  mean true return of these episodes (examined decisions play the rollout-best "
          "action, the others the raw policy): %.4f\n",
          d.ret / n_set);
  fprintf(
      out,
      "  argmax is a rollout-best action: exact Q1 %.3f, learned Q1^ %.3f, policy logits %.3f\n",
      (double)d.best_exact / d.roots, (double)d.best_learned / d.roots,
      (double)d.best_logits / d.roots);
  return true;
}

/* --search-regret: which moves the searches change, and whether the change pays, judged by
 * raw-policy rollouts (see model_error_workload). Kinds of change from the raw policy's move: 0
 * another offset, 1 fast to slow, 2 slow to fast. */
typedef struct regret_sums {
  int64_t roots, changed[3];
  double regret[3];        /* raw policy, learned search, exact search */
  double gain[3], loss[3]; /* the learned search's changes, by kind */
  double exact_gain[3];    /* the exact search's changes, by kind (net) */
  int64_t exact_changed[3];
} regret_sums;

static int change_kind(int32_t from, int32_t to, int32_t slow) {
  if ((from == slow) == (to == slow)) return 0;
  return to == slow ? 1 : 2;
}

static bool regret_workload(probe_scratch *s, const mb_agent *ag, mb_game *g, double scale,
                            const probe_pass *pass, mb_error *err) {
  regret_sums *d = pass->sums;
  const mb_search_config *scfg = pass->scfg;
  int32_t A = ag->cfg.game.n_actions, slow = A - 1;
  double *qr = s->qr;
  mb_player_set_scale(s->learned, scale);
  mb_player_set_scale(s->exact, scale);
  mb_rng rng;
  mb_rng_seed(&rng, 1); /* unused by evaluation search (no noise) */
  bool ok = true;
  mb_game_reset(g);
  for (int32_t t = 0; ok && !mb_game_done(g); t++) {
    float v;
    int32_t n_legal = mb_game_legal_mask(g, s->mask);
    mb_game_observe(g, s->obs);
    ok = mb_agent_initial(&s->inf, s->obs, NULL, s->logits, &v, err);
    int32_t raw = ok ? mb_agent_greedy(s->logits, s->mask, A) : -1;
    if (ok && t % pass->stride == 0 && n_legal >= 2) {
      int32_t al = -1, ae = -1, best = raw;
      ok = mb_player_decide(s->learned, g, &scfg[0], false, &rng, &al, err) &&
           mb_player_decide(s->exact, g, &scfg[1], true, &rng, &ae, err) &&
           rollout_values(s, g, 1.0 / scale, qr, err);
      if (!ok) break;
      for (int32_t a = 0; a < A; a++)
        if (s->mask[a] && qr[a] > qr[best]) best = a;
      d->roots++;
      d->regret[0] += qr[best] - qr[raw];
      d->regret[1] += qr[best] - qr[al];
      d->regret[2] += qr[best] - qr[ae];
      if (al != raw) {
        int k = change_kind(raw, al, slow);
        d->changed[k]++;
        double x = qr[al] - qr[raw];
        if (x > 0)
          d->gain[k] += x;
        else
          d->loss[k] -= x;
      }
      if (ae != raw) {
        int k = change_kind(raw, ae, slow);
        d->exact_changed[k]++;
        d->exact_gain[k] += qr[ae] - qr[raw];
      }
    }
    ok = ok && mb_game_step(g, raw, NULL, err);
  }
  return ok;
}

bool mb_muzero_probe_search_regret(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                                   int32_t stride, const mb_search_config scfg[2], const char *what,
                                   FILE *out, mb_error *err) {
  regret_sums d = {0};
  if (!probe_over_set(ag, set, n_set, regret_workload, &(probe_pass){stride, scfg, &d}, err))
    return false;
  if (d.roots == 0) return mb_fail(err, "no decision with two legal actions");
  fprintf(out,
          "one step of policy improvement over %s: %lld roots (every %d-th raw-policy decision), "
          "%d simulations, judged by raw-policy rollouts (normalised units 1 / R_ref, x 1000)\n",
          what, (long long)d.roots, stride, scfg->simulations);
  fprintf(out,
          "  mean regret against the rollout-best move: raw policy %.4f, learned-model search "
          "%.4f, exact-game search %.4f\n",
          1e3 * d.regret[0] / d.roots, 1e3 * d.regret[1] / d.roots, 1e3 * d.regret[2] / d.roots);
  const char *kind[3] = {"another offset", "fast to slow", "slow to fast"};
  for (int k = 0; k < 3; k++)
    fprintf(out,
            "  moves changed, %-14s learned: %5lld, gained %9.3f, lost %9.3f (net %9.3f) | "
            "exact: %5lld, net %9.3f\n",
            kind[k], (long long)d.changed[k], 1e3 * d.gain[k], 1e3 * d.loss[k],
            1e3 * (d.gain[k] - d.loss[k]), (long long)d.exact_changed[k], 1e3 * d.exact_gain[k]);
  return true;
}

/* --unroll-error: how the learned model's path values drift with depth. One raw-policy episode
 * per workload (greedy, no search); at every `stride`-th decision t and for k = 0..UNROLL_MAX
 * with t + k <= T (the episode's length), along the actions the episode took:
 *   exact   E_k  = r_t + ... + r_{t+k-1} + v(h(o_{t+k}))   (v = 0 at the end),
 *   learned E^_k = r^_1 + ... + r^_k + v^(g^k(h(o_t), a_t..a_{t+k-1})),
 * the values a search path of depth k gets in the real game and in the learned model, against
 * the true return to go G_t = r_t + ... + r_{T-1} (normalised units 1 / R_ref). E^_0 = E_0. */
enum { UNROLL_MAX = 12 };

typedef struct unroll_sums {
  int64_t n[UNROLL_MAX + 1];
  double exact_err[UNROLL_MAX + 1], learned_err[UNROLL_MAX + 1];
  double gap[UNROLL_MAX + 1], bias[UNROLL_MAX + 1]; /* |E^_k - E_k|, E^_k - E_k */
  double reward_bias[UNROLL_MAX + 1];               /* its rewards' part: sum r^ - sum r */
  int64_t roots;
} unroll_sums;

static bool unroll_workload(probe_scratch *s, const mb_agent *ag, mb_game *g, double scale,
                            const probe_pass *pass, mb_error *err) {
  unroll_sums *d = pass->sums;
  int32_t stride = pass->stride;
  int32_t A = ag->cfg.game.n_actions, W = ag->cfg.latent, D = ag->cfg.obs_dim;
  int32_t cap = mb_game_n_visitable(g) + 1; /* decisions <= visitable buffers */
  if (!scratch_reserve(s, ag, cap, err)) return false;
  float *lat = s->lat_at, *obs_at = s->obs_at; /* obs_at: for the first learned step's action
                                                  features (NULL without them) */
  double *rew = s->rew, *val = s->val, *to_go = s->to_go;
  int32_t *act = s->act;
  double rs = 1.0 / scale;
  int32_t T = 0;
  bool ok = true;
  mb_game_reset(g);
  while (ok && !mb_game_done(g)) {
    if (T + 1 >= cap) {
      ok = mb_fail(err, "more decisions than visitable buffers");
      break;
    }
    float v;
    double r = 0;
    mb_game_observe(g, s->obs);
    if (obs_at) memcpy(obs_at + (size_t)T * D, s->obs, (size_t)D * sizeof(float));
    mb_game_legal_mask(g, s->mask);
    ok = mb_agent_initial(&s->inf, s->obs, lat + (size_t)T * W, s->logits, &v, err);
    act[T] = mb_agent_greedy(s->logits, s->mask, A);
    ok = ok && mb_game_step(g, act[T], &r, err);
    val[T] = v;
    rew[T++] = r * rs;
  }
  if (ok) val[T] = 0; /* the episode is over: nothing left to gain */
  double go = 0;      /* G_t, filled backwards */
  for (int32_t t = T; ok && t >= 0; t--) {
    to_go[t] = go;
    if (t > 0) go += rew[t - 1];
  }
  for (int32_t t = 0; ok && t < T; t += stride) {
    double sum_r = 0, sum_rhat = 0, leaf = val[t]; /* leaf: v^ at the learned path's end */
    float *cur = s->chain, *next = s->chain + W;
    memcpy(cur, lat + (size_t)t * W, (size_t)W * sizeof(float));
    d->roots++;
    for (int32_t k = 0; ok && k <= UNROLL_MAX && t + k <= T; k++) {
      if (k > 0) {
        float rhat, vhat;
        const float *o = k == 1 && obs_at ? obs_at + (size_t)t * D : NULL;
        ok =
            mb_agent_recurrent(&s->inf, cur, act[t + k - 1], o, next, &rhat, s->logits, &vhat, err);
        if (!ok) break;
        float *tmp = cur;
        cur = next;
        next = tmp;
        sum_r += rew[t + k - 1];
        sum_rhat += rhat;
        leaf = vhat;
      }
      double exact = sum_r + val[t + k], learned = sum_rhat + leaf;
      d->n[k]++;
      d->exact_err[k] += fabs(exact - to_go[t]);
      d->learned_err[k] += fabs(learned - to_go[t]);
      d->gap[k] += fabs(learned - exact);
      d->bias[k] += learned - exact;
      d->reward_bias[k] += sum_rhat - sum_r;
    }
  }
  return ok;
}

bool mb_muzero_probe_unroll_error(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                                  int32_t stride, const char *what, FILE *out, mb_error *err) {
  unroll_sums d = {0};
  if (!probe_over_set(ag, set, n_set, unroll_workload, &(probe_pass){stride, NULL, &d}, err))
    return false;
  if (d.roots == 0) return mb_fail(err, "no decision to unroll from");
  fprintf(out,
          "path values k steps deep along the raw policy's episodes over %s: %lld roots (every "
          "%d-th decision), against the true return to go G, normalised units (1 / R_ref)\n",
          what, (long long)d.roots, stride);
  fprintf(out,
          "   k  paths   exact |E_k - G|   learned |E^_k - G|   |E^_k - E_k|   mean E^_k - E_k   "
          "(rewards' part)\n");
  for (int k = 0; k <= UNROLL_MAX && d.n[k] > 0; k++) {
    double n = (double)d.n[k];
    fprintf(out, "  %2d  %6lld   %15.5f   %18.5f   %12.5f   %15.5f   %15.5f\n", k,
            (long long)d.n[k], d.exact_err[k] / n, d.learned_err[k] / n, d.gap[k] / n,
            d.bias[k] / n, d.reward_bias[k] / n);
  }
  return true;
}

/* --next-window: what the observation shows of the next one's occupancy picture
 * (mb_muzero_probe_next_window, diagnostics.h). */
typedef struct window_sums {
  int64_t decisions; /* decisions t with a next one */
  double covered;    /* sum over them: share of the next window inside the current one */
  int64_t disjoint;  /* of them: windows without a common op */
  int64_t occupied;  /* of them: some fast memory in use in the next window */
  double unseen;     /* sum over those: share of that use outside the current window */
} window_sums;

static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { /* [a0,a1) ^ [b0,b1) */
  int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
  return hi > lo ? hi - lo : 0;
}

static bool window_workload(probe_scratch *s, const mb_agent *ag, mb_game *g, double scale,
                            const probe_pass *pass, mb_error *err) {
  (void)scale;
  window_sums *d = pass->sums;
  const mb_workload *w = mb_game_workload(g);
  int32_t A = ag->cfg.game.n_actions;
  mb_assignment *placed = mb_assignment_new(w->n_buffers); /* the placement so far */
  bool ok = placed || mb_fail(err, "probe: out of memory (%d buffers)", w->n_buffers);
  mb_game_reset(g);
  for (int32_t t = 0; ok && !mb_game_done(g); t++) {
    float v;
    int32_t c0, cl, n0, nl;
    mb_game_window(g, &c0, &cl);
    mb_game_observe(g, s->obs);
    mb_game_legal_mask(g, s->mask);
    ok = mb_agent_initial(&s->inf, s->obs, NULL, s->logits, &v, err) &&
         mb_game_step(g, mb_agent_greedy(s->logits, s->mask, A), NULL, err);
    if (!ok || mb_game_done(g) || t % pass->stride != 0) continue;
    mb_game_window(g, &n0, &nl);
    int64_t c1 = (int64_t)c0 + cl, n1 = (int64_t)n0 + nl, common = overlap(c0, c1, n0, n1);
    d->decisions++;
    d->covered += (double)common / (double)nl;
    d->disjoint += common == 0;
    /* fast memory in use in the next window, and the part of it in the current window too */
    ok = mb_game_assignment(g, placed, err);
    double in_next = 0, in_both = 0;
    for (int32_t b = 0; ok && b < w->n_buffers; b++) {
      if (placed->offset[b] == MB_SLOW) continue;
      const mb_buffer *buf = &w->buffers[b];
      int64_t b0 = buf->start, b1 = (int64_t)buf->end + 1; /* the buffer's ops [b0, b1) */
      in_next += (double)buf->size * (double)overlap(b0, b1, n0, n1);
      if (common > 0) {
        int64_t i0 = n0 > c0 ? n0 : c0, i1 = n1 < c1 ? n1 : c1;
        in_both += (double)buf->size * (double)overlap(b0, b1, i0, i1);
      }
    }
    if (in_next > 0) {
      d->occupied++;
      d->unseen += 1.0 - in_both / in_next;
    }
  }
  mb_assignment_free(placed);
  return ok;
}

bool mb_muzero_probe_next_window(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                                 int32_t stride, const char *what, FILE *out, mb_error *err) {
  window_sums d = {0};
  if (!probe_over_set(ag, set, n_set, window_workload, &(probe_pass){stride, NULL, &d}, err))
    return false;
  if (d.decisions == 0) return mb_fail(err, "no decision with a next one");
  fprintf(out,
          "the next observation's occupancy picture against the current one along the raw "
          "policy's episodes over %s: %lld decisions (every %d-th)\n",
          what, (long long)d.decisions, stride);
  fprintf(out, "  next window's ops inside the current window   %.3f (mean share)\n",
          d.covered / (double)d.decisions);
  fprintf(out, "  next window disjoint from the current one     %.3f (share of decisions)\n",
          (double)d.disjoint / (double)d.decisions);
  fprintf(out,
          "  fast memory in use in the next window that the current window does not show  %.3f "
          "(mean share of bytes x ops, over %lld decisions with some)\n",
          d.occupied ? d.unseen / (double)d.occupied : 0.0, (long long)d.occupied);
  return true;
}
