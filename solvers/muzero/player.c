/* The mallocMuZero player (see player.h). */
#include "player.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cost.h"

struct mb_player {
  mb_agent_infer inf;
  mb_search *search;
  int32_t A, W, max_sims;
  float *latents; /* (max_sims + 1) x W */
  float *obs, *logits, *policy;
  uint8_t *mask;
  /* learned mode with action features: the root's real observation (p->obs may be overwritten
   * by the oracle's expansions), which gives the actions of the root's children (depth 1) their
   * features */
  float *root_obs;
  /* leaf rollouts (mb_search_config.leaf_rollout): their own buffers, so that the node's
   * logits and mask stay the node's */
  int32_t leaf_rollout;
  int32_t remaining; /* buffers the real episode has left to visit at the root, an upper bound
                        on its decisions left (bounds learned rollouts, since the learned model
                        has no end) */
  float *roll_latent, *roll_logits;
  uint8_t *roll_mask;
  double rscale; /* 1 / R_ref: rewards are multiplied by it */
  /* exact mode, and the learned mode's oracle */
  mb_game *game;
  mb_game_snapshot root;
  unsigned oracle;                /* MB_ORACLE_* parts (0: none) */
  double oracle_weight;           /* mb_player_set_oracle_weight */
  float *oracle_logits;           /* A: the real observation's logits */
  int64_t oracle_nodes, off_game; /* mb_player_oracle_stats */
};

mb_player *mb_player_create(const mb_agent *ag, int32_t max_simulations, mb_error *err) {
  mb_player *p = calloc(1, sizeof *p);
  if (!p) return mb_fail(err, "player: out of memory"), NULL;
  p->A = ag->cfg.game.n_actions;
  p->W = ag->cfg.latent;
  p->max_sims = max_simulations < 1 ? 1 : max_simulations;
  p->rscale = 1.0;
  p->oracle_weight = 1.0;
  if (!mb_agent_infer_create(&p->inf, ag, err)) {
    free(p);
    return NULL;
  }
  p->search = mb_search_create(p->A, p->max_sims, err);
  p->latents = malloc((size_t)(p->max_sims + 1) * p->W * sizeof(float));
  p->obs = malloc((size_t)ag->cfg.obs_dim * sizeof(float));
  p->root_obs = malloc((size_t)ag->cfg.obs_dim * sizeof(float));
  p->logits = malloc((size_t)p->A * sizeof(float));
  p->policy = malloc((size_t)p->A * sizeof(float));
  p->mask = malloc((size_t)p->A);
  p->oracle_logits = malloc((size_t)p->A * sizeof(float));
  p->roll_latent = malloc((size_t)2 * p->W * sizeof(float));
  p->roll_logits = malloc((size_t)p->A * sizeof(float));
  p->roll_mask = malloc((size_t)p->A);
  if (!p->search || !p->latents || !p->obs || !p->root_obs || !p->logits || !p->policy ||
      !p->mask || !p->oracle_logits || !p->roll_latent || !p->roll_logits || !p->roll_mask) {
    if (p->search) mb_fail(err, "player: out of memory");
    mb_player_free(p);
    return NULL;
  }
  return p;
}

void mb_player_use_gemv(mb_player *p, bool on) { mb_agent_infer_use_gemv(&p->inf, on); }

void mb_player_set_scale(mb_player *p, double return_scale) {
  p->rscale = return_scale > 0 ? 1.0 / return_scale : 1.0;
}

void mb_player_set_oracle(mb_player *p, unsigned parts) { p->oracle = parts & MB_ORACLE_ALL; }

void mb_player_set_oracle_weight(mb_player *p, double weight) { p->oracle_weight = weight; }

/* The learned estimate moved toward the real one by the oracle's weight (at weight 1 exactly
 * the real one: 0 x a finite learned value adds nothing). */
static float oracle_mix(const mb_player *p, float learned, double real) {
  return (float)((1.0 - p->oracle_weight) * learned + p->oracle_weight * real);
}

void mb_player_oracle_stats(const mb_player *p, int64_t *nodes, int64_t *off_game) {
  *nodes = p->oracle_nodes;
  *off_game = p->off_game;
}

double mb_return_scale(const mb_workload *w, const mb_hardware *hw, const mb_game *g) {
  mb_time_ps *b = malloc((size_t)(w->n_buffers > 0 ? w->n_buffers : 1) * sizeof *b);
  if (!b) return 1.0;
  mb_standalone_benefits(w, hw, b);
  const int32_t *order = mb_game_visit_order(g);
  double sum = 0;
  for (int32_t i = 0; i < mb_game_n_visitable(g); i++) sum += (double)b[order[i]];
  free(b);
  double ts = (double)mb_game_slow_time(g);
  return sum > 0 && ts > 0 ? sum / ts : 1.0;
}

void mb_player_free(mb_player *p) {
  if (!p) return;
  mb_agent_infer_free(&p->inf);
  mb_search_free(p->search);
  free(p->latents);
  free(p->obs);
  free(p->root_obs);
  free(p->logits);
  free(p->policy);
  free(p->mask);
  free(p->oracle_logits);
  free(p->roll_latent);
  free(p->roll_logits);
  free(p->roll_mask);
  free(p);
}

/* Replaces the oracle parts of a learned-model node's evaluation by the real game's, when the
 * node's path is legal there (replayed from the root snapshot). */
static bool apply_oracle(mb_player *p, const int32_t *path, int32_t depth, mb_search_eval *out,
                         mb_error *err) {
  p->oracle_nodes++;
  if (!mb_game_restore(p->game, p->root, err)) return false;
  double r = 0;
  for (int32_t i = 0; i < depth; i++) {
    if (mb_game_done(p->game) || !mb_game_is_legal(p->game, path[i])) {
      p->off_game++;
      return true;
    }
    if (!mb_game_step(p->game, path[i], &r, err)) return false;
  }
  if (p->oracle & MB_ORACLE_REWARDS) out->reward = oracle_mix(p, out->reward, r * p->rscale);
  if (mb_game_done(p->game)) {
    if (p->oracle & MB_ORACLE_VALUES) out->value = oracle_mix(p, out->value, 0);
    if (p->oracle & MB_ORACLE_TERMINALS) out->terminal = true;
    return true;
  }
  if (p->oracle & MB_ORACLE_MASKS) {
    mb_game_legal_mask(p->game, out->mask);
    out->has_mask = true;
  }
  if (p->oracle & (MB_ORACLE_VALUES | MB_ORACLE_PRIORS)) {
    float v;
    mb_game_observe(p->game, p->obs);
    if (!mb_agent_initial(&p->inf, p->obs, NULL, p->oracle_logits, &v, err)) return false;
    if (p->oracle & MB_ORACLE_VALUES) out->value = oracle_mix(p, out->value, v);
    if (p->oracle & MB_ORACLE_PRIORS)
      memcpy(out->logits, p->oracle_logits, (size_t)p->A * sizeof(float));
  }
  return true;
}

/* Leaf rollout in the learned model: leaf_rollout greedy steps of the policy head from the
 * node's latent (every action allowed, as below the root of the search), predicted rewards
 * summed, the value head where they stop. Replaces out->value. */
static bool rollout_learned(mb_player *p, const float *lat, int32_t depth, mb_search_eval *out,
                            mb_error *err) {
  int32_t steps = p->remaining - depth < p->leaf_rollout ? p->remaining - depth : p->leaf_rollout;
  float *cur = p->roll_latent, *next = p->roll_latent + p->W, r, v = out->value;
  memcpy(cur, lat, (size_t)p->W * sizeof(float));
  memcpy(p->roll_logits, out->logits, (size_t)p->A * sizeof(float));
  memset(p->roll_mask, 1, (size_t)p->A);
  double g = 0;
  for (int32_t k = 0; k < steps; k++) {
    int32_t a = mb_agent_greedy(p->roll_logits, p->roll_mask, p->A);
    if (!mb_agent_recurrent(&p->inf, cur, a, NULL, next, &r, p->roll_logits, &v, err)) return false;
    g += r;
    float *t = cur;
    cur = next;
    next = t;
  }
  out->value = (float)(g + v);
  return true;
}

static bool expand_learned(void *ctx, int32_t node, int32_t parent, int32_t action,
                           const int32_t *path, int32_t depth, mb_search_eval *out, mb_error *err) {
  mb_player *p = ctx;
  float *lat = p->latents + (int64_t)node * p->W;
  out->has_mask = false;
  out->terminal = false;
  out->reward = 0;
  const mb_agent_config *cfg = &p->inf.ag->cfg;
  if (parent < 0) {
    if (cfg->action_features) memcpy(p->root_obs, p->obs, (size_t)cfg->obs_dim * sizeof(float));
    return mb_agent_initial(&p->inf, p->obs, lat, out->logits, &out->value, err);
  }
  if (!mb_agent_recurrent(&p->inf, p->latents + (int64_t)parent * p->W, action,
                          depth == 1 ? p->root_obs : NULL, lat, &out->reward, out->logits,
                          &out->value, err))
    return false;
  if (p->oracle != 0 && !apply_oracle(p, path, depth, out, err)) return false;
  return p->leaf_rollout == 0 || rollout_learned(p, lat, depth, out, err);
}

/* Leaf rollout in the real game, from the node the game is at: leaf_rollout greedy raw-policy
 * steps with exact rewards and masks, the value network where they stop (0 at the episode's
 * end). Replaces out->value; the next expansion's restore of the root snapshot undoes them. */
static bool rollout_exact(mb_player *p, mb_search_eval *out, mb_error *err) {
  memcpy(p->roll_logits, out->logits, (size_t)p->A * sizeof(float));
  memcpy(p->roll_mask, out->mask, (size_t)p->A);
  /* the rollout's rewards as one total (mb_game_step): no potential at its inner steps */
  double shaping = mb_game_get_config(p->game)->shaping;
  double ret0 = mb_game_return(p->game), phi0 = mb_game_potential(p->game);
  float v = out->value;
  for (int32_t k = 0; k < p->leaf_rollout; k++) {
    int32_t a = mb_agent_greedy(p->roll_logits, p->roll_mask, p->A);
    if (!mb_game_step(p->game, a, NULL, err)) return false;
    if (mb_game_done(p->game)) {
      v = 0;
      break;
    }
    mb_game_observe(p->game, p->obs);
    mb_game_legal_mask(p->game, p->roll_mask);
    if (!mb_agent_initial(&p->inf, p->obs, NULL, p->roll_logits, &v, err)) return false;
  }
  double g = mb_game_return(p->game) - ret0 + shaping * (mb_game_potential(p->game) - phi0);
  out->value = (float)(g * p->rscale + v);
  return true;
}

/* The real game: replay the path from the root snapshot (exact rewards, masks, terminals). */
static bool expand_exact(void *ctx, int32_t node, int32_t parent, int32_t action,
                         const int32_t *path, int32_t depth, mb_search_eval *out, mb_error *err) {
  mb_player *p = ctx;
  if (!mb_game_restore(p->game, p->root, err)) return false;
  double r = 0; /* the last step's reward: the earlier ones' potentials are not needed */
  for (int32_t i = 0; i < depth; i++)
    if (!mb_game_step(p->game, path[i], i == depth - 1 ? &r : NULL, err)) return false;
  out->reward = depth > 0 ? (float)(r * p->rscale) : 0.0f;
  if (mb_game_done(p->game)) {
    out->terminal = true;
    out->value = 0;
    out->has_mask = false;
    memset(out->logits, 0, (size_t)p->A * sizeof(float));
    return true;
  }
  out->terminal = false;
  mb_game_observe(p->game, p->obs);
  mb_game_legal_mask(p->game, out->mask);
  out->has_mask = true;
  if (!mb_agent_initial(&p->inf, p->obs, NULL, out->logits, &out->value, err)) return false;
  return p->leaf_rollout == 0 || rollout_exact(p, out, err);
}

/* One decision at g's current state: search, or the raw policy when use_search is false. Fills
 * p->mask, p->obs (the observation at the state), p->policy and returns the action. */
static bool decide(mb_player *p, mb_game *g, const mb_search_config *scfg, bool exact,
                   bool use_search, mb_rng *rng, int32_t *action, float *value, mb_error *err) {
  mb_game_legal_mask(g, p->mask);
  mb_game_observe(g, p->obs);
  if (!use_search) {
    if (!mb_agent_initial(&p->inf, p->obs, NULL, p->logits, value, err)) return false;
    *action = mb_agent_greedy(p->logits, p->mask, p->A);
    for (int32_t a = 0; a < p->A; a++) p->policy[a] = a == *action ? 1.0f : 0.0f;
    return *action >= 0 || mb_fail(err, "player: no legal action");
  }
  mb_search_result res;
  mb_search_model model = {.ctx = p, .expand = exact ? expand_exact : expand_learned};
  p->leaf_rollout = scfg->leaf_rollout;
  p->remaining = mb_game_n_visitable(g) - mb_game_snapshot_take(g).cursor;
  bool replays = exact || p->oracle != 0; /* expansions step the real game */
  if (replays) {
    p->game = g;
    p->root = mb_game_snapshot_take(g);
  }
  bool ok = mb_search_run(p->search, scfg, &model, p->mask, rng, &res, err);
  if (replays) {
    mb_error e2 = {{0}};
    if (!mb_game_restore(g, p->root, ok ? err : &e2)) ok = false;
    p->game = NULL;
    /* the expansions overwrote p->obs and p->mask: restore the root's */
    mb_game_legal_mask(g, p->mask);
    mb_game_observe(g, p->obs);
  }
  if (!ok) return false;
  memcpy(p->policy, res.policy, (size_t)p->A * sizeof(float));
  *action = res.action;
  *value = res.search_value;
  return true;
}

/* The search's budget fits the player's buffers. */
static bool budget_fits(const mb_player *p, const mb_search_config *scfg, mb_error *err) {
  return scfg->simulations <= p->max_sims ||
         mb_fail(err, "player: %d simulations exceed the %d it was created for", scfg->simulations,
                 p->max_sims);
}

bool mb_player_play(mb_player *p, mb_game *g, const mb_search_config *scfg, bool exact,
                    double deadline, mb_rng *rng, int64_t *searched, int64_t *decisions,
                    mb_error *err) {
  if (!budget_fits(p, scfg, err)) return false;
  mb_game_reset(g);
  *searched = 0;
  *decisions = 0;
  while (!mb_game_done(g)) {
    bool use_search = !(deadline > 0 && mb_wall_seconds() > deadline);
    int32_t a;
    float v;
    if (!decide(p, g, scfg, exact, use_search, rng, &a, &v, err)) return false;
    if (!mb_game_step(g, a, NULL, err)) return false;
    *searched += use_search;
    (*decisions)++;
  }
  return true;
}

bool mb_player_decide_record(mb_player *p, mb_game *g, const mb_search_config *scfg, bool exact,
                             bool search, mb_rng *rng, mb_player_decision *out, mb_error *err) {
  if (search && !budget_fits(p, scfg, err)) return false;
  if (mb_game_done(g)) return mb_fail(err, "player: the episode is over");
  if (!decide(p, g, scfg, exact, search, rng, &out->action, &out->value, err)) return false;
  out->obs = p->obs;
  out->mask = p->mask;
  out->policy = p->policy;
  return true;
}

bool mb_player_raw_action(mb_player *p, const float *obs, const uint8_t *mask, int32_t *action,
                          mb_error *err) {
  float v;
  if (!mb_agent_initial(&p->inf, obs, NULL, p->logits, &v, err)) return false;
  *action = mb_agent_greedy(p->logits, mask, p->A);
  return true;
}

bool mb_player_decide(mb_player *p, mb_game *g, const mb_search_config *scfg, bool exact,
                      mb_rng *rng, int32_t *action, mb_error *err) {
  mb_player_decision d;
  if (!mb_player_decide_record(p, g, scfg, exact, true, rng, &d, err)) return false;
  *action = d.action;
  return true;
}

double mb_player_reward_unit(const mb_player *p) { return p->rscale; }

const mb_search *mb_player_search(const mb_player *p) { return p->search; }
