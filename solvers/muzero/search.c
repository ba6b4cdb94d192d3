/* Gumbel MuZero and pUCT tree search (see search.h). */
#include "search.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
  int32_t parent, action, depth;
  bool terminal;
  float value;    /* model value */
  float reward;   /* reward of the edge into the node */
  int32_t n_sum;  /* sum of children visits */
  int32_t *child; /* A entries, -1 when not expanded */
  int32_t *n;     /* A visit counts */
  double *w;      /* A sums of backed-up returns through the edge */
  float *logits;  /* A prior logits (illegal: -inf) */
  float *prior;   /* A softmax of logits (0 on illegal) */
  uint8_t *mask;  /* A legal actions used at this node */
} node;

struct mb_search {
  int32_t A, max_sims, cap_nodes, n_nodes;
  node *nodes;
  int32_t *i32_pool;
  double *f64_pool;
  float *f32_pool;
  uint8_t *u8_pool;
  /* per-search scratch */
  double *gumbel, *score, *qhat, *pi;
  float *policy;
  int32_t *visits, *path, *schedule, *order;
  uint8_t *mask_tmp;
  double qmin, qmax;
};

void mb_search_config_default(mb_search_config *c) {
  memset(c, 0, sizeof *c);
  c->kind = MB_SEARCH_GUMBEL;
  c->simulations = 16;
  c->max_considered = 16;
  c->c_visit = 50;
  c->c_scale = 0.1;
  c->gamma = 1.0;
  c->q_min_range = 1e-8;
  c->gumbel_noise = true;
  c->dirichlet_alpha = 0.3;
  c->dirichlet_frac = 0.25;
  c->c1 = 1.25;
  c->c2 = 19652;
  c->sample = true;
}

void mb_search_config_evaluation(mb_search_config *c, bool exact) {
  mb_search_config_default(c);
  c->leaf_rollout = exact ? MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT : 0;
  c->gumbel_noise = false; /* no exploration: Gumbel's g = 0, pUCT's noise off, best move */
  c->dirichlet_frac = 0;
  c->sample = false;
  c->simulations = MB_SEARCH_EVAL_SIMULATIONS;
  c->c_scale = MB_SEARCH_EVAL_C_SCALE;
  c->q_min_range = MB_SEARCH_EVAL_Q_MIN_RANGE;
}

bool mb_search_config_check(const mb_search_config *c, mb_error *err) {
  if (c->rescale != MB_Q_NODE && c->rescale != MB_Q_TREE)
    return mb_fail(err, "search config: rescale %d: expected node or tree", (int)c->rescale);
  if (c->kind != MB_SEARCH_GUMBEL && c->kind != MB_SEARCH_PUCT)
    return mb_fail(err, "search config: kind %d: expected gumbel or puct", (int)c->kind);
  if (c->simulations < 1)
    return mb_fail(err, "search config: simulations %d: expected >= 1", c->simulations);
  if (c->max_considered < 1)
    return mb_fail(err, "search config: max_considered %d: expected >= 1", c->max_considered);
  if (c->max_depth < 0)
    return mb_fail(err, "search config: max_depth %d: expected >= 0 (0: no limit)", c->max_depth);
  if (c->leaf_rollout < 0 || c->leaf_rollout > MB_SEARCH_MAX_LEAF_ROLLOUT)
    return mb_fail(err, "search config: leaf_rollout %d: expected in [0, %d] (0: none)",
                   c->leaf_rollout, MB_SEARCH_MAX_LEAF_ROLLOUT);
  if (!(c->gamma > 0 && c->gamma <= 1))
    return mb_fail(err, "search config: gamma %g: expected in (0, 1]", c->gamma);
  if (!(c->q_min_range > 0 && c->q_min_range <= 1))
    return mb_fail(err, "search config: q_min_range %g: expected in (0, 1]", c->q_min_range);
  if (!(c->c_visit >= 0) || !(c->c_scale >= 0))
    return mb_fail(err, "search config: c_visit %g / c_scale %g: expected >= 0", c->c_visit,
                   c->c_scale);
  if (!(c->dirichlet_frac >= 0 && c->dirichlet_frac <= 1) || !(c->dirichlet_alpha > 0))
    return mb_fail(err, "search config: dirichlet alpha %g / fraction %g: expected > 0 / [0, 1]",
                   c->dirichlet_alpha, c->dirichlet_frac);
  if (!(c->c1 > 0) || !(c->c2 > 0))
    return mb_fail(err, "search config: c1 %g / c2 %g: expected > 0", c->c1, c->c2);
  return true;
}

bool mb_search_kind_parse(const char *s, mb_search_kind *out) {
  if (!strcmp(s, "gumbel")) {
    *out = MB_SEARCH_GUMBEL;
    return true;
  }
  if (!strcmp(s, "puct")) {
    *out = MB_SEARCH_PUCT;
    return true;
  }
  return false;
}

mb_search *mb_search_create(int32_t n_actions, int32_t max_simulations, mb_error *err) {
  if (n_actions < 1 || n_actions > 4096)
    return mb_fail(err, "search: n_actions %d: expected in [1, 4096]", n_actions), NULL;
  if (max_simulations < 1 || max_simulations > 1000000)
    return mb_fail(err, "search: max simulations %d: expected in [1, 1000000]", max_simulations),
           NULL;
  mb_search *s = calloc(1, sizeof *s);
  if (!s) return mb_fail(err, "search: out of memory"), NULL;
  int64_t A = n_actions, cap = max_simulations + 1;
  s->A = n_actions;
  s->max_sims = max_simulations;
  s->cap_nodes = (int32_t)cap;
  s->nodes = calloc((size_t)cap, sizeof *s->nodes);
  s->i32_pool = malloc((size_t)(cap * A * 2) * sizeof *s->i32_pool);
  s->f64_pool = malloc((size_t)(cap * A) * sizeof *s->f64_pool);
  s->f32_pool = malloc((size_t)(cap * A * 2) * sizeof *s->f32_pool);
  s->u8_pool = malloc((size_t)(cap * A));
  s->gumbel = malloc((size_t)A * sizeof(double));
  s->score = malloc((size_t)A * sizeof(double));
  s->qhat = malloc((size_t)A * sizeof(double));
  s->pi = malloc((size_t)A * sizeof(double));
  s->policy = malloc((size_t)A * sizeof(float));
  s->visits = malloc((size_t)A * sizeof(int32_t));
  s->order = malloc((size_t)A * sizeof(int32_t));
  s->path = malloc((size_t)cap * sizeof(int32_t));
  s->schedule = malloc((size_t)max_simulations * sizeof(int32_t));
  s->mask_tmp = malloc((size_t)A);
  if (!s->nodes || !s->i32_pool || !s->f64_pool || !s->f32_pool || !s->u8_pool || !s->gumbel ||
      !s->score || !s->qhat || !s->pi || !s->policy || !s->visits || !s->order || !s->path ||
      !s->schedule || !s->mask_tmp) {
    mb_search_free(s);
    return mb_fail(err, "search: out of memory for %d actions x %d simulations", n_actions,
                   max_simulations),
           NULL;
  }
  for (int64_t i = 0; i < cap; i++) {
    node *nd = &s->nodes[i];
    nd->child = s->i32_pool + i * A * 2;
    nd->n = nd->child + A;
    nd->w = s->f64_pool + i * A;
    nd->logits = s->f32_pool + i * A * 2;
    nd->prior = nd->logits + A;
    nd->mask = s->u8_pool + i * A;
  }
  return s;
}

void mb_search_free(mb_search *s) {
  if (!s) return;
  free(s->nodes);
  free(s->i32_pool);
  free(s->f64_pool);
  free(s->f32_pool);
  free(s->u8_pool);
  free(s->gumbel);
  free(s->score);
  free(s->qhat);
  free(s->pi);
  free(s->policy);
  free(s->visits);
  free(s->order);
  free(s->path);
  free(s->schedule);
  free(s->mask_tmp);
  free(s);
}

bool mb_search_halving_schedule(int32_t m, int32_t n, int32_t *visits_at) {
  if (m < 1 || n < 1) return false;
  if (m == 1) {
    for (int32_t i = 0; i < n; i++) visits_at[i] = i;
    return true;
  }
  int32_t log2m = 0;
  while ((1 << log2m) < m) log2m++;
  int32_t len = 0, considered = m, base = 0;
  /* every surviving action has the same count `base` at the start of a phase (the survivors
   * are always the first `considered` of the ranking) */
  while (len < n) {
    int32_t extra = n / (log2m * considered);
    if (extra < 1) extra = 1;
    for (int32_t e = 0; e < extra && len < n; e++) {
      for (int32_t i = 0; i < considered && len < n; i++) visits_at[len++] = base;
      base++;
    }
    considered = considered / 2 < 2 ? 2 : considered / 2;
  }
  return true;
}

/* ---- node values ---- */

static void minmax_update(mb_search *s, double q) {
  if (q < s->qmin) s->qmin = q;
  if (q > s->qmax) s->qmax = q;
}

static double normalise(const mb_search *s, double q) {
  if (s->qmax > s->qmin) {
    double x = (q - s->qmin) / (s->qmax - s->qmin);
    return x < 0 ? 0 : (x > 1 ? 1 : x);
  }
  return 0;
}

/* Q(s, a) of a visited edge: reward + gamma * mean value of the child. */
static double edge_q(const mb_search *s, const node *nd, int32_t a) { return nd->w[a] / nd->n[a]; }

/* Completed, normalised Q^ of every action of nd into s->qhat (mixed value for the unvisited,
 * then min-max rescaled over the node's legal actions).
 * Returns max_b N(b). */
static int32_t completed_q(mb_search *s, const mb_search_config *cfg, const node *nd) {
  double sum_pi = 0, sum_piq = 0;
  int32_t max_n = 0;
  for (int32_t a = 0; a < s->A; a++) {
    if (nd->n[a] > 0) {
      sum_pi += nd->prior[a];
      sum_piq += nd->prior[a] * edge_q(s, nd, a);
      if (nd->n[a] > max_n) max_n = nd->n[a];
    }
  }
  double mixed = nd->value;
  if (nd->n_sum > 0) {
    double wq = sum_pi > 1e-12 ? sum_piq / sum_pi : 0;
    if (sum_pi <= 1e-12) {
      /* visited actions have ~zero prior (e.g. forced by the root): plain mean of their Q */
      double sq = 0;
      int32_t k = 0;
      for (int32_t a = 0; a < s->A; a++)
        if (nd->n[a] > 0) sq += edge_q(s, nd, a), k++;
      wq = k ? sq / k : 0;
    }
    mixed = (nd->value + nd->n_sum * wq) / (1.0 + nd->n_sum);
  }
  /* per-node min-max over the legal actions' completed values (mctx's rescale_values): the
   * contrast between siblings stays whole however wide the values in the rest of the tree */
  double lo = DBL_MAX, hi = -DBL_MAX;
  for (int32_t a = 0; a < s->A; a++) {
    s->qhat[a] = nd->n[a] > 0 ? edge_q(s, nd, a) : mixed;
    if (!nd->mask[a]) continue;
    if (s->qhat[a] < lo) lo = s->qhat[a];
    if (s->qhat[a] > hi) hi = s->qhat[a];
  }
  if (cfg->rescale == MB_Q_TREE) {
    for (int32_t a = 0; a < s->A; a++) s->qhat[a] = nd->mask[a] ? normalise(s, s->qhat[a]) : 0;
    return max_n;
  }
  double range = hi - lo > cfg->q_min_range ? hi - lo : cfg->q_min_range;
  for (int32_t a = 0; a < s->A; a++) s->qhat[a] = nd->mask[a] ? (s->qhat[a] - lo) / range : 0;
  return max_n;
}

/* pi' = softmax(logits + sigma(Q^)) over the node's mask into s->pi. */
static void improved_policy(mb_search *s, const mb_search_config *cfg, const node *nd) {
  int32_t max_n = completed_q(s, cfg, nd);
  double scale = (cfg->c_visit + max_n) * cfg->c_scale, mx = -DBL_MAX;
  for (int32_t a = 0; a < s->A; a++) {
    if (!nd->mask[a]) continue;
    s->pi[a] = nd->logits[a] + scale * s->qhat[a];
    if (s->pi[a] > mx) mx = s->pi[a];
  }
  double z = 0;
  for (int32_t a = 0; a < s->A; a++) {
    s->pi[a] = nd->mask[a] ? exp(s->pi[a] - mx) : 0;
    z += s->pi[a];
  }
  for (int32_t a = 0; a < s->A; a++) s->pi[a] /= z;
}

/* Stores the model's evaluation into node i. */
static bool expand_node(mb_search *s, const mb_search_model *model, int32_t i, int32_t parent,
                        int32_t action, int32_t depth, const uint8_t *given_mask, mb_error *err) {
  node *nd = &s->nodes[i];
  nd->parent = parent;
  nd->action = action;
  nd->depth = depth;
  nd->n_sum = 0;
  for (int32_t a = 0; a < s->A; a++) {
    nd->child[a] = -1;
    nd->n[a] = 0;
    nd->w[a] = 0;
    nd->mask[a] = 1;
  }
  mb_search_eval ev = {.logits = nd->logits, .mask = s->mask_tmp};
  if (!model->expand(model->ctx, i, parent, action, s->path, depth, &ev, err)) return false;
  if (!isfinite(ev.value) || !isfinite(ev.reward))
    return mb_fail(err, "search: node %d (depth %d): model returned a non-finite value or reward",
                   i, depth);
  nd->value = ev.terminal ? 0.0f : ev.value;
  nd->reward = ev.reward;
  nd->terminal = ev.terminal;
  const uint8_t *mask = given_mask ? given_mask : (ev.has_mask ? ev.mask : NULL);
  int32_t n_legal = 0;
  float mx = -FLT_MAX;
  for (int32_t a = 0; a < s->A; a++) {
    nd->mask[a] = mask ? (mask[a] != 0) : 1;
    if (!isfinite(nd->logits[a]))
      return mb_fail(err, "search: node %d: model returned a non-finite logit for action %d", i, a);
    if (nd->mask[a]) {
      n_legal++;
      if (nd->logits[a] > mx) mx = nd->logits[a];
    }
  }
  if (n_legal == 0 && !nd->terminal) nd->terminal = true; /* nothing to do: a leaf */
  double z = 0;
  for (int32_t a = 0; a < s->A; a++) {
    nd->prior[a] = nd->mask[a] ? (float)exp((double)nd->logits[a] - mx) : 0.0f;
    z += nd->prior[a];
  }
  for (int32_t a = 0; a < s->A; a++) nd->prior[a] = z > 0 ? (float)(nd->prior[a] / z) : 0.0f;
  return true;
}

/* Interior selection (Gumbel: deterministic completed-Q rule; pUCT: UCB). */
static int32_t select_interior(mb_search *s, const mb_search_config *cfg, const node *nd) {
  int32_t best = -1;
  double best_score = -DBL_MAX;
  if (cfg->kind == MB_SEARCH_GUMBEL) {
    improved_policy(s, cfg, nd);
    for (int32_t a = 0; a < s->A; a++) {
      if (!nd->mask[a]) continue;
      double sc = s->pi[a] - (double)nd->n[a] / (1.0 + nd->n_sum);
      if (sc > best_score) best_score = sc, best = a;
    }
    return best;
  }
  /* As mctx: the node's own evaluation counts as its first visit, so that the first simulation
   * follows the prior (sqrt(0) would tie every action and pick the lowest index), and an
   * unvisited child is valued at its parent's value (qtransform_by_parent_and_siblings), not at
   * 0, the tree's minimum, which at a few simulations sent every visit to the first child tried
   * (see search.h). */
  double sq = sqrt((double)nd->n_sum + 1.0);
  double c = cfg->c1 + log((nd->n_sum + cfg->c2 + 1) / cfg->c2);
  double unvisited_q = normalise(s, nd->value);
  for (int32_t a = 0; a < s->A; a++) {
    if (!nd->mask[a]) continue;
    double q = nd->n[a] > 0 ? normalise(s, edge_q(s, nd, a)) : unvisited_q;
    double sc = q + nd->prior[a] * sq / (1.0 + nd->n[a]) * c;
    if (sc > best_score) best_score = sc, best = a;
  }
  return best;
}

/* Gumbel root score g + logits + sigma(Q^) of action a (s->qhat filled for the root). */
static double root_score(const mb_search *s, const mb_search_config *cfg, const node *root,
                         int32_t max_n, float max_logit, int32_t a) {
  double sc = s->gumbel[a] + (root->logits[a] - max_logit) +
              (cfg->c_visit + max_n) * cfg->c_scale * s->qhat[a];
  return sc < -1e9 ? -1e9 : sc;
}

static int32_t gumbel_root_action(mb_search *s, const mb_search_config *cfg, const node *root,
                                  int32_t considered_visit) {
  int32_t max_n = completed_q(s, cfg, root);
  float ml = -FLT_MAX;
  for (int32_t a = 0; a < s->A; a++)
    if (root->mask[a] && root->logits[a] > ml) ml = root->logits[a];
  int32_t best = -1;
  double best_score = -DBL_MAX;
  for (int32_t a = 0; a < s->A; a++) {
    if (!root->mask[a] || root->n[a] != considered_visit) continue;
    double sc = root_score(s, cfg, root, max_n, ml, a);
    if (sc > best_score) best_score = sc, best = a;
  }
  return best;
}

/* Root noise: Gumbel draws for the legal actions (Gumbel self-play), or Dirichlet noise mixed
 * into the root's prior (pUCT self-play); neither at evaluation. */
static void add_root_noise(mb_search *s, const mb_search_config *cfg, mb_rng *rng, node *root) {
  for (int32_t a = 0; a < s->A; a++) s->gumbel[a] = 0;
  if (cfg->kind == MB_SEARCH_GUMBEL && cfg->gumbel_noise) {
    for (int32_t a = 0; a < s->A; a++) s->gumbel[a] = root->mask[a] ? mb_rng_gumbel(rng) : 0;
  } else if (cfg->kind == MB_SEARCH_PUCT && cfg->dirichlet_frac > 0) {
    double z = 0;
    for (int32_t a = 0; a < s->A; a++) {
      s->pi[a] = root->mask[a] ? mb_rng_gamma(rng, cfg->dirichlet_alpha) : 0;
      z += s->pi[a];
    }
    for (int32_t a = 0; a < s->A; a++)
      if (root->mask[a] && z > 0)
        root->prior[a] = (float)((1 - cfg->dirichlet_frac) * root->prior[a] +
                                 cfg->dirichlet_frac * s->pi[a] / z);
  }
}

/* One simulation: descend until an unexpanded edge (expand it), a terminal node (value 0) or
 * a node at max_depth (its value again), then back the leaf's value up the path. */
static bool simulate(mb_search *s, const mb_search_config *cfg, const mb_search_model *model,
                     int32_t sim, mb_error *err) {
  int32_t cur = 0, depth = 0, a, leaf = -1;
  for (;;) {
    node *nd = &s->nodes[cur];
    if (cur == 0 && cfg->kind == MB_SEARCH_GUMBEL)
      a = gumbel_root_action(s, cfg, nd, s->schedule[sim]);
    else
      a = select_interior(s, cfg, nd);
    if (a < 0) return mb_fail(err, "search: no action to select at node %d", cur);
    s->path[depth++] = a;
    if (nd->child[a] < 0) break;
    cur = nd->child[a];
    if (s->nodes[cur].terminal || (cfg->max_depth > 0 && s->nodes[cur].depth >= cfg->max_depth)) {
      leaf = cur;
      break;
    }
  }
  if (leaf < 0) {
    if (s->n_nodes >= s->cap_nodes)
      return mb_fail(err, "search: node pool of %d exhausted", s->cap_nodes);
    leaf = s->n_nodes++;
    if (!expand_node(s, model, leaf, cur, a, depth, NULL, err)) return false;
    s->nodes[cur].child[a] = leaf;
  }
  double g = s->nodes[leaf].value;
  int32_t c = leaf;
  while (s->nodes[c].parent >= 0) {
    node *ch = &s->nodes[c];
    node *p = &s->nodes[ch->parent];
    g = ch->reward + cfg->gamma * g;
    p->w[ch->action] += g;
    p->n[ch->action] += 1;
    p->n_sum += 1;
    minmax_update(s, p->w[ch->action] / p->n[ch->action]);
    c = ch->parent;
  }
  return true;
}

/* Gumbel's move and policy target: the most visited survivor with the largest g + logits +
 * sigma(q^), and the completed-Q improved policy. */
static int32_t gumbel_result(mb_search *s, const mb_search_config *cfg, node *root) {
  int32_t max_n = 0;
  for (int32_t a = 0; a < s->A; a++)
    if (root->mask[a] && root->n[a] > max_n) max_n = root->n[a];
  int32_t action = gumbel_root_action(s, cfg, root, max_n);
  improved_policy(s, cfg, root);
  for (int32_t a = 0; a < s->A; a++) s->policy[a] = (float)s->pi[a];
  return action;
}

/* pUCT's move and policy target: the visit distribution; the move is sampled from it
 * (self-play) or the most visited one, among equally visited ones the prior's favourite (at 2
 * simulations the two visits often split 1-1, and the lowest index, best fit, then won
 * whatever the network preferred). */
static int32_t puct_result(mb_search *s, const mb_search_config *cfg, const node *root,
                           mb_rng *rng) {
  int32_t action = -1;
  double z = 0;
  for (int32_t a = 0; a < s->A; a++) z += root->n[a];
  for (int32_t a = 0; a < s->A; a++) {
    s->policy[a] = root->mask[a] ? (float)(root->n[a] / z) : 0.0f;
    if (root->mask[a] && (action < 0 || root->n[a] > root->n[action] ||
                          (root->n[a] == root->n[action] && root->prior[a] > root->prior[action])))
      action = a;
  }
  if (cfg->sample) {
    double u = mb_rng_uniform(rng) * z, acc = 0;
    for (int32_t a = 0; a < s->A; a++) {
      if (!root->mask[a] || root->n[a] == 0) continue;
      acc += root->n[a];
      if (u < acc) {
        action = a;
        break;
      }
    }
  }
  return action;
}

bool mb_search_run(mb_search *s, const mb_search_config *cfg, const mb_search_model *model,
                   const uint8_t *root_mask, mb_rng *rng, mb_search_result *out, mb_error *err) {
  if (!mb_search_config_check(cfg, err)) return false;
  if (cfg->simulations > s->max_sims)
    return mb_fail(err, "search: simulations %d exceed the %d the search was created for",
                   cfg->simulations, s->max_sims);
  int32_t n_legal = 0;
  for (int32_t a = 0; a < s->A; a++) n_legal += root_mask[a] != 0;
  if (n_legal == 0) return mb_fail(err, "search: the root has no legal action");
  s->n_nodes = 1;
  s->qmin = DBL_MAX;
  s->qmax = -DBL_MAX;
  if (!expand_node(s, model, 0, -1, -1, 0, root_mask, err)) return false;
  node *root = &s->nodes[0];
  if (root->terminal) return mb_fail(err, "search: the root is terminal");

  add_root_noise(s, cfg, rng, root);
  int32_t m = cfg->max_considered < n_legal ? cfg->max_considered : n_legal;
  if (cfg->kind == MB_SEARCH_GUMBEL) mb_search_halving_schedule(m, cfg->simulations, s->schedule);
  for (int32_t sim = 0; sim < cfg->simulations; sim++)
    if (!simulate(s, cfg, model, sim, err)) return false;

  for (int32_t a = 0; a < s->A; a++) s->visits[a] = root->n[a];
  int32_t action =
      cfg->kind == MB_SEARCH_GUMBEL ? gumbel_result(s, cfg, root) : puct_result(s, cfg, root, rng);
  if (action < 0 || !root->mask[action])
    return mb_fail(err, "search: internal error: no legal action selected");
  double sum = root->value;
  for (int32_t a = 0; a < s->A; a++) sum += root->w[a];
  out->action = action;
  out->policy = s->policy;
  out->visits = s->visits;
  out->root_value = root->value;
  out->search_value = (float)(sum / (1.0 + root->n_sum));
  out->nodes = s->n_nodes;
  return true;
}

int32_t mb_search_best_alternative(const mb_search *s, int32_t taken) {
  const node *root = &s->nodes[0];
  int32_t best = -1;
  double best_q = 0;
  for (int32_t a = 0; a < s->A; a++) {
    if (a == taken || root->n[a] == 0) continue;
    double q = root->w[a] / root->n[a];
    if (best < 0 || q > best_q) best = a, best_q = q;
  }
  return best;
}

int32_t mb_search_tree_path(const mb_search *s, int32_t action, int32_t *path, int32_t max_len) {
  if (max_len < 1) return 0;
  path[0] = action;
  int32_t len = 1, cur = s->nodes[0].child[action];
  while (cur >= 0 && len < max_len && !s->nodes[cur].terminal) {
    const node *nd = &s->nodes[cur];
    int32_t best = -1;
    for (int32_t a = 0; a < s->A; a++) {
      if (nd->n[a] == 0 || nd->child[a] < 0) continue;
      if (best < 0 || nd->n[a] > nd->n[best] ||
          (nd->n[a] == nd->n[best] && nd->w[a] / nd->n[a] > nd->w[best] / nd->n[best]))
        best = a;
    }
    if (best < 0) break;
    path[len++] = best;
    cur = nd->child[best];
  }
  return len;
}
