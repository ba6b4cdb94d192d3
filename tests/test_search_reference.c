/* The search (solvers/muzero/search.h) against a reference: the rules its header documents,
 * written again here plainly (one function per rule, doubles throughout, no node pool), run on
 * random game trees side by side with the real search. For Gumbel MuZero (root noise off and
 * on, per-node and tree-wide rescaling, depth limits, discounts) and pUCT (Dirichlet noise off
 * and on, the most visited move and the sampled one), the visit counts, the move, the policy
 * target, the search value and the node count agree. The reference draws its root noise from
 * a copy of the search's generator in the order the header gives (the legal root actions, by
 * index), so the comparison is exact, noise included.
 *
 * A random tree: every node's logits, value, reward, end flag and (below the root, when the
 * game gives masks) legal actions are a function of its path from the root, so the search and
 * the reference see the same game however they order their expansions. A quarter of the trees
 * are flat below the root (equal logits, two rewards), so that ties occur and the lowest index
 * must win them, as in the reference. Also one case worked
 * out by hand: the completed-Q policy target of a three-armed root. */
#include "support.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "search.h"

enum { MAX_A = 6, MAX_NODES = 80 };

/* ---- the random game ---- */

typedef struct game {
  int A;
  uint64_t seed;
  int max_len;    /* a node at this depth ends the episode */
  bool masks;     /* nodes below the root give exact masks (as the real game does) */
  bool sharp;     /* logits in [-6, 6] instead of [-1.5, 1.5] */
  double p_end;   /* chance that a node below the root ends the episode early */
  bool ties;      /* below the root: equal logits, values 0, rewards 0 or 0.5, so that the
                     rules' ties occur (the lowest index wins them) */
  int expansions; /* counted by the search's callback */
} game;

typedef struct eval {
  float logits[MAX_A], value, reward;
  uint8_t mask[MAX_A];
  bool terminal;
} eval;

static void game_eval(const game *g, const int32_t *path, int depth, eval *e) {
  uint64_t h = g->seed * 0x9E3779B97F4A7C15ull + 1;
  for (int i = 0; i < depth; i++) h = (h ^ (uint64_t)(path[i] + 1)) * 0x100000001B3ull;
  mb_rng r;
  mb_rng_seed(&r, h);
  double spread = g->sharp ? 6.0 : 1.5;
  int legal = 0;
  for (int a = 0; a < g->A; a++) {
    e->logits[a] = (float)((2 * mb_rng_uniform(&r) - 1) * spread);
    e->mask[a] = !g->masks || mb_rng_uniform(&r) < 0.7;
    legal += e->mask[a];
  }
  if (!legal) e->mask[mb_rng_below(&r, (uint64_t)g->A)] = 1;
  e->value = (float)(2 * mb_rng_uniform(&r) - 0.5);
  e->reward = (float)mb_rng_uniform(&r);
  if (g->ties && depth > 0) {
    for (int a = 0; a < g->A; a++) e->logits[a] = 0;
    e->value = 0;
    e->reward = e->reward < 0.5f ? 0.0f : 0.5f;
  }
  e->terminal = depth >= g->max_len || (depth > 0 && mb_rng_uniform(&r) < g->p_end);
}

static bool game_expand(void *ctx, int32_t node, int32_t parent, int32_t action,
                        const int32_t *path, int32_t depth, mb_search_eval *out, mb_error *err) {
  (void)node;
  (void)parent;
  (void)action;
  (void)err;
  game *g = ctx;
  g->expansions++;
  eval e;
  game_eval(g, path, depth, &e);
  memcpy(out->logits, e.logits, sizeof(float) * (size_t)g->A);
  memcpy(out->mask, e.mask, (size_t)g->A);
  out->has_mask = g->masks;
  out->value = e.value;
  out->reward = e.reward;
  out->terminal = e.terminal;
  return true;
}

/* ---- the reference search ---- */

typedef struct ref_node {
  int parent, action, depth, n_sum;
  bool terminal;
  double value, reward; /* value 0 at an end */
  double logits[MAX_A], prior[MAX_A], w[MAX_A];
  bool legal[MAX_A];
  int child[MAX_A], n[MAX_A];
} ref_node;

typedef struct ref {
  const game *g;
  const mb_search_config *cfg;
  ref_node node[MAX_NODES];
  int n_nodes, path[64];
  double gumbel[MAX_A], qmin, qmax; /* qmin/qmax: every edge mean backed up so far */
} ref;

/* A node from the game; the root with the search's mask. Its prior is the softmax of its
 * logits over its legal actions (stored as the search stores it, in single precision). */
static int ref_expand(ref *R, int parent, int action, int depth, const uint8_t *root_mask) {
  int i = R->n_nodes++;
  assert_true(i < MAX_NODES);
  ref_node *nd = &R->node[i];
  memset(nd, 0, sizeof *nd);
  eval e;
  game_eval(R->g, R->path, depth, &e);
  nd->parent = parent;
  nd->action = action;
  nd->depth = depth;
  nd->terminal = e.terminal;
  nd->value = e.terminal ? 0 : e.value;
  nd->reward = e.reward;
  int legal = 0;
  double mx = -DBL_MAX, z = 0;
  for (int a = 0; a < R->g->A; a++) {
    nd->child[a] = -1;
    nd->logits[a] = e.logits[a];
    nd->legal[a] = root_mask ? root_mask[a] : R->g->masks ? e.mask[a] : true;
    legal += nd->legal[a];
    if (nd->legal[a] && nd->logits[a] > mx) mx = nd->logits[a];
  }
  if (!legal) nd->terminal = true;
  for (int a = 0; a < R->g->A; a++) z += nd->legal[a] ? exp(nd->logits[a] - mx) : 0;
  for (int a = 0; a < R->g->A; a++)
    nd->prior[a] = nd->legal[a] ? (float)(exp(nd->logits[a] - mx) / z) : 0;
  return i;
}

static double q_of(const ref_node *nd, int a) { return nd->w[a] / nd->n[a]; }

/* Tree-wide min-max to [0, 1]; 0 while the tree has seen a single value. */
static double tree_normalise(const ref *R, double q) {
  if (!(R->qmax > R->qmin)) return 0;
  double x = (q - R->qmin) / (R->qmax - R->qmin);
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* Completed Q^ of the node's actions (header: Q for the visited, the mixed value for the rest,
 * then rescaled over the legal actions); returns max_b N(b). */
static int completed(const ref *R, const ref_node *nd, double *qhat) {
  int A = R->g->A, max_n = 0, k = 0;
  double sum_pi = 0, sum_piq = 0, sum_q = 0;
  for (int a = 0; a < A; a++)
    if (nd->n[a] > 0) {
      sum_pi += nd->prior[a];
      sum_piq += nd->prior[a] * q_of(nd, a);
      sum_q += q_of(nd, a);
      k++;
      if (nd->n[a] > max_n) max_n = nd->n[a];
    }
  double mixed = nd->value;
  if (nd->n_sum > 0) {
    /* visited actions of ~zero prior (the root may force them): their plain mean */
    double weighted = sum_pi > 1e-12 ? sum_piq / sum_pi : sum_q / k;
    mixed = (nd->value + nd->n_sum * weighted) / (1.0 + nd->n_sum);
  }
  double lo = DBL_MAX, hi = -DBL_MAX;
  for (int a = 0; a < A; a++) {
    qhat[a] = nd->n[a] > 0 ? q_of(nd, a) : mixed;
    if (nd->legal[a]) lo = fmin(lo, qhat[a]), hi = fmax(hi, qhat[a]);
  }
  for (int a = 0; a < A; a++) {
    if (!nd->legal[a])
      qhat[a] = 0;
    else if (R->cfg->rescale == MB_Q_TREE)
      qhat[a] = tree_normalise(R, qhat[a]);
    else
      qhat[a] = (qhat[a] - lo) / fmax(hi - lo, R->cfg->q_min_range);
  }
  return max_n;
}

/* pi' = softmax(logits + (c_visit + max N) c_scale Q^) over the legal actions. */
static void improved(const ref *R, const ref_node *nd, double *pi) {
  double qhat[MAX_A], mx = -DBL_MAX, z = 0;
  int max_n = completed(R, nd, qhat);
  for (int a = 0; a < R->g->A; a++) {
    pi[a] = nd->logits[a] + (R->cfg->c_visit + max_n) * R->cfg->c_scale * qhat[a];
    if (nd->legal[a]) mx = fmax(mx, pi[a]);
  }
  for (int a = 0; a < R->g->A; a++) z += pi[a] = nd->legal[a] ? exp(pi[a] - mx) : 0;
  for (int a = 0; a < R->g->A; a++) pi[a] /= z;
}

/* argmax of score over the actions with use[a], the lowest index on ties; -1 when none */
static int argmax(int A, const bool *use, const double *score) {
  int best = -1;
  for (int a = 0; a < A; a++)
    if (use[a] && (best < 0 || score[a] > score[best])) best = a;
  return best;
}

/* The Gumbel root: among the legal actions with `visits` visits, the largest g + logits +
 * sigma(Q^). */
static int gumbel_root(const ref *R, const ref_node *root, int visits) {
  double qhat[MAX_A];
  int max_n = completed(R, root, qhat);
  double sigma = (R->cfg->c_visit + max_n) * R->cfg->c_scale, score[MAX_A];
  bool use[MAX_A];
  for (int a = 0; a < R->g->A; a++) {
    use[a] = root->legal[a] && root->n[a] == visits;
    score[a] = R->gumbel[a] + root->logits[a] + sigma * qhat[a];
  }
  return argmax(R->g->A, use, score);
}

/* Below the root, Gumbel: argmax pi'(a) - N(a) / (1 + sum N). pUCT (root too): argmax Q^(a) +
 * prior(a) sqrt(1 + sum N) / (1 + N(a)) (c1 + log((sum N + c2 + 1) / c2)), Q^ tree-wide, an
 * unvisited action's its node's value. */
static int interior(const ref *R, const ref_node *nd) {
  const mb_search_config *c = R->cfg;
  double score[MAX_A];
  if (c->kind == MB_SEARCH_GUMBEL) {
    improved(R, nd, score);
    for (int a = 0; a < R->g->A; a++) score[a] -= nd->n[a] / (1.0 + nd->n_sum);
    return argmax(R->g->A, nd->legal, score);
  }
  double explore = sqrt(nd->n_sum + 1.0) * (c->c1 + log((nd->n_sum + c->c2 + 1) / c->c2));
  for (int a = 0; a < R->g->A; a++)
    score[a] = (nd->n[a] ? tree_normalise(R, q_of(nd, a)) : tree_normalise(R, nd->value)) +
               nd->prior[a] * explore / (1.0 + nd->n[a]);
  return argmax(R->g->A, nd->legal, score);
}

typedef struct ref_result {
  int action, visits[MAX_A], nodes;
  double policy[MAX_A], search_value;
} ref_result;

static void ref_run(ref *R, const uint8_t *root_mask, mb_rng *rng, ref_result *out) {
  const mb_search_config *c = R->cfg;
  int A = R->g->A;
  R->n_nodes = 0;
  R->qmin = DBL_MAX;
  R->qmax = -DBL_MAX;
  ref_node *root = &R->node[ref_expand(R, -1, -1, 0, root_mask)];
  int legal = 0;
  for (int a = 0; a < A; a++) {
    legal += root->legal[a];
    R->gumbel[a] =
        c->kind == MB_SEARCH_GUMBEL && c->gumbel_noise && root->legal[a] ? mb_rng_gumbel(rng) : 0;
  }
  if (c->kind == MB_SEARCH_PUCT && c->dirichlet_frac > 0) {
    double d[MAX_A], z = 0;
    for (int a = 0; a < A; a++)
      z += d[a] = root->legal[a] ? mb_rng_gamma(rng, c->dirichlet_alpha) : 0;
    for (int a = 0; a < A; a++)
      if (root->legal[a])
        root->prior[a] =
            (float)((1 - c->dirichlet_frac) * root->prior[a] + c->dirichlet_frac * d[a] / z);
  }
  int32_t schedule[64];
  assert_true(c->simulations <= 64);
  assert_true(mb_search_halving_schedule(c->max_considered < legal ? c->max_considered : legal,
                                         c->simulations, schedule));
  for (int sim = 0; sim < c->simulations; sim++) {
    int cur = 0, depth = 0, leaf = -1, a;
    for (;;) { /* down to an unexpanded edge, an end or the depth limit */
      ref_node *nd = &R->node[cur];
      a = cur == 0 && c->kind == MB_SEARCH_GUMBEL ? gumbel_root(R, nd, schedule[sim])
                                                  : interior(R, nd);
      assert_true(a >= 0);
      R->path[depth++] = a;
      if (nd->child[a] < 0) break;
      cur = nd->child[a];
      if (R->node[cur].terminal || (c->max_depth > 0 && R->node[cur].depth >= c->max_depth)) {
        leaf = cur;
        break;
      }
    }
    if (leaf < 0) {
      leaf = ref_expand(R, cur, a, depth, NULL);
      R->node[cur].child[a] = leaf;
    }
    double ret = R->node[leaf].value;
    for (int x = leaf; R->node[x].parent >= 0; x = R->node[x].parent) {
      ref_node *ch = &R->node[x], *p = &R->node[ch->parent];
      ret = ch->reward + c->gamma * ret;
      p->w[ch->action] += ret;
      p->n[ch->action]++;
      p->n_sum++;
      R->qmin = fmin(R->qmin, q_of(p, ch->action));
      R->qmax = fmax(R->qmax, q_of(p, ch->action));
    }
  }
  root = &R->node[0];
  double sum_w = 0, z = c->simulations;
  int max_n = 0;
  for (int a = 0; a < A; a++) {
    out->visits[a] = root->n[a];
    sum_w += root->w[a];
    if (root->legal[a] && root->n[a] > max_n) max_n = root->n[a];
  }
  if (c->kind == MB_SEARCH_GUMBEL) {
    out->action = gumbel_root(R, root, max_n);
    improved(R, root, out->policy);
  } else {
    /* the most visited; equally visited: the higher prior, then the lower index */
    double score[MAX_A];
    for (int a = 0; a < A; a++) score[a] = root->n[a] + 1e-3 * root->prior[a];
    out->action = argmax(A, root->legal, score);
    for (int a = 0; a < A; a++) out->policy[a] = root->legal[a] ? root->n[a] / z : 0;
    if (c->sample) { /* by visit counts: the first action whose running count passes u z */
      double u = mb_rng_uniform(rng) * z, acc = 0;
      for (int a = 0; a < A; a++)
        if (root->legal[a] && root->n[a] > 0 && u < (acc += root->n[a])) {
          out->action = a;
          break;
        }
    }
  }
  out->search_value = (root->value + sum_w) / (1.0 + root->n_sum);
  out->nodes = R->n_nodes;
}

/* ---- tests ---- */

/* One random configuration of either kind. */
static void random_config(mb_rng *rng, mb_search_kind kind, mb_search_config *c) {
  mb_search_config_default(c);
  c->kind = kind;
  c->simulations = 1 + (int32_t)mb_rng_below(rng, 40);
  c->max_considered = 1 + (int32_t)mb_rng_below(rng, 8);
  c->c_visit = mb_rng_below(rng, 2) ? 50 : 5 + 20 * mb_rng_uniform(rng);
  c->c_scale = mb_rng_below(rng, 2) ? 0.1 : 0.05 + 2 * mb_rng_uniform(rng);
  c->gamma = mb_rng_below(rng, 2) ? 1.0 : 0.5 + 0.5 * mb_rng_uniform(rng);
  c->gumbel_noise = mb_rng_below(rng, 2);
  c->rescale = mb_rng_below(rng, 4) ? MB_Q_NODE : MB_Q_TREE;
  c->q_min_range = mb_rng_below(rng, 2) ? 1e-8 : 0.3 * mb_rng_uniform(rng) + 1e-6;
  c->max_depth = mb_rng_below(rng, 3) ? 0 : 1 + (int32_t)mb_rng_below(rng, 3);
  c->dirichlet_frac = mb_rng_below(rng, 2) ? 0 : mb_rng_uniform(rng);
  c->dirichlet_alpha = 0.1 + mb_rng_uniform(rng);
  c->c1 = 0.5 + 2 * mb_rng_uniform(rng);
  c->c2 = mb_rng_below(rng, 2) ? 19652 : 1 + 50 * mb_rng_uniform(rng);
  c->sample = mb_rng_below(rng, 2);
}

static void compare_on_random_trees(mb_search_kind kind, uint64_t seed) {
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  mb_error err = {{0}};
  ref *R = malloc(sizeof *R);
  assert_non_null(R);
  int differing_moves = 0; /* moves that are not the prior's favourite: the search counted */
  for (int iter = 0; iter < 2000; iter++) {
    game g = {.A = 2 + (int)mb_rng_below(&rng, MAX_A - 1),
              .seed = mb_rng_next(&rng),
              .max_len = 1 + (int)mb_rng_below(&rng, 4),
              .masks = mb_rng_below(&rng, 2),
              .sharp = mb_rng_below(&rng, 4) == 0,
              .p_end = 0.2 * mb_rng_uniform(&rng),
              .ties = mb_rng_below(&rng, 4) == 0};
    mb_search_config cfg;
    random_config(&rng, kind, &cfg);
    assert_true(mb_search_config_check(&cfg, &err));
    uint8_t mask[MAX_A];
    int legal = 0;
    for (int a = 0; a < g.A; a++) legal += mask[a] = mb_rng_below(&rng, 4) != 0;
    if (!legal) mask[0] = 1;
    mb_search *s = mb_search_create(g.A, cfg.simulations, &err);
    assert_non_null(s);
    mb_search_model m = {.ctx = &g, .expand = game_expand};
    uint64_t noise_seed = mb_rng_next(&rng);
    mb_rng a_rng, b_rng;
    mb_rng_seed(&a_rng, noise_seed);
    mb_rng_seed(&b_rng, noise_seed);
    mb_search_result got;
    assert_true(mb_search_run(s, &cfg, &m, mask, &a_rng, &got, &err));
    R->g = &g;
    R->cfg = &cfg;
    ref_result want;
    ref_run(R, mask, &b_rng, &want);
    assert_int_equal(got.nodes, want.nodes);
    assert_int_equal(g.expansions, want.nodes);
    for (int a = 0; a < g.A; a++) {
      if (got.visits[a] != want.visits[a] || !(fabs(got.policy[a] - want.policy[a]) <= 2e-6))
        fail_msg("iter %d, action %d: visits %d (reference %d), policy %.9g (reference %.9g)", iter,
                 a, got.visits[a], want.visits[a], got.policy[a], want.policy[a]);
    }
    assert_int_equal(got.action, want.action);
    assert_true(fabs(got.search_value - want.search_value) <= 1e-5 * (1 + fabs(want.search_value)));
    /* the generator is where the reference left it: the same draws were made */
    assert_true(mb_rng_next(&a_rng) == mb_rng_next(&b_rng));
    int favourite = -1;
    for (int a = 0; a < g.A; a++)
      if (mask[a] && (favourite < 0 || R->node[0].logits[a] > R->node[0].logits[favourite]))
        favourite = a;
    differing_moves += got.action != favourite;
    mb_search_free(s);
  }
  /* the trees are not so easy that the prior's move is always the search's */
  assert_true(differing_moves > 500);
  free(R);
}

static void test_gumbel_equals_reference(void **state) {
  (void)state;
  compare_on_random_trees(MB_SEARCH_GUMBEL, 11);
}

static void test_puct_equals_reference(void **state) {
  (void)state;
  compare_on_random_trees(MB_SEARCH_PUCT, 12);
}

/* By hand. Three legal arms of four (arm 3 illegal), logits 1, 0, -1 (priors 0.6652, 0.2447,
 * 0.0900 over the legal ones), root value 0.2; the arms end the game paying 0.8, 0.2 and 0.9.
 * Two simulations considering two arms, noise off: arms 0 and 1 (the two largest logits) get a
 * visit each, Q = 0.8 and 0.2, sum N = 2. Arm 2 is unvisited: its completed Q is the mixed value
 * (0.2 + 2 (0.6652 * 0.8 + 0.2447 * 0.2) / (0.6652 + 0.2447)) / 3 = 0.4924. Rescaled over the
 * legal arms (min 0.2, max 0.8): 1, 0, 0.4874. With c_visit 50 and c_scale 0.1, sigma = (50 + 1)
 * 0.1 Q^ = 5.1, 0, 2.4856; pi' = softmax(6.1, 0, 1.4856) = 0.9880, 0.0022, 0.0098, 0. The move:
 * the visited arm with the largest logits + sigma, arm 0. Search value (0.2 + 0.8 + 0.2) / 3 =
 * 0.4. */
static bool three_arms(void *ctx, int32_t node, int32_t parent, int32_t action, const int32_t *path,
                       int32_t depth, mb_search_eval *out, mb_error *err) {
  (void)ctx;
  (void)node;
  (void)parent;
  (void)action;
  (void)err;
  static const float logits[4] = {1, 0, -1, 5}, pays[4] = {0.8f, 0.2f, 0.9f, 0};
  for (int a = 0; a < 4; a++) out->logits[a] = depth == 0 ? logits[a] : 0;
  out->value = depth == 0 ? 0.2f : 0;
  out->reward = depth == 0 ? 0 : pays[path[0]];
  out->terminal = depth > 0;
  out->has_mask = false;
  return true;
}

static void test_policy_target_by_hand(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_search *s = mb_search_create(4, 8, &err);
  assert_non_null(s);
  mb_search_config cfg;
  mb_search_config_default(&cfg);
  cfg.gumbel_noise = false;
  cfg.simulations = 2;
  cfg.max_considered = 2;
  const uint8_t mask[4] = {1, 1, 1, 0};
  mb_search_model m = {.expand = three_arms};
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_search_result r;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.visits[0], 1);
  assert_int_equal(r.visits[1], 1);
  assert_int_equal(r.visits[2], 0);
  assert_int_equal(r.action, 0);
  /* the same numbers to more digits than the comment gives */
  double p0 = exp(1.0), p1 = 1.0, p2 = exp(-1.0), z = p0 + p1 + p2;
  p0 /= z, p1 /= z, p2 /= z;
  double mixed = (0.2 + 2 * (p0 * 0.8 + p1 * 0.2) / (p0 + p1)) / 3;
  double q2 = (mixed - 0.2) / 0.6, s0 = 1 + 5.1, s1 = 0, s2 = -1 + 5.1 * q2;
  double zz = exp(s0) + exp(s1) + exp(s2);
  assert_true(fabs(mixed - 0.4924) < 1e-4);
  assert_true(fabs(r.policy[0] - exp(s0) / zz) < 1e-6);
  assert_true(fabs(r.policy[1] - exp(s1) / zz) < 1e-6);
  assert_true(fabs(r.policy[2] - exp(s2) / zz) < 1e-6);
  assert_true(fabs(r.policy[0] - 0.9880) < 1e-4);
  assert_true(fabs(r.policy[2] - 0.0098) < 1e-4);
  assert_true(r.policy[3] == 0.0f);
  assert_true(fabs(r.search_value - 0.4) < 1e-6);
  assert_true(fabs(r.root_value - 0.2) < 1e-7);
  mb_search_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_policy_target_by_hand),
      cmocka_unit_test(test_gumbel_equals_reference),
      cmocka_unit_test(test_puct_equals_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
