/* Tests of the Gumbel MuZero / pUCT search (solvers/muzero/search.h) on hand-made games whose
 * values are known, driven through the model callback with exact dynamics:
 *   - a bandit: the best arm is chosen (noise off: always; noise on: in most seeds), with pUCT too;
 *     pUCT's root noise explores arms the prior rules out and its moves follow the visit counts;
 *   - a delayed-reward tree where the prior and the immediate reward both point to the wrong
 *     move: enough simulations find the right one, one simulation (or a depth limit of 1) does
 *     not;
 *   - visit counts sum to the budget for every (considered, budget) pair; the halving schedule
 *     has the documented shape;
 *   - the improved policy target sums to 1 and is 0 on illegal actions; illegal actions are
 *     never visited or played;
 *   - every config field is accepted at the ends of its range and refused past them, alone;
 *     a model's non-finite value, reward or logit is refused.
 * tests/test_search_reference.c checks the numbers: the search against a reference written from
 * the header's rules, on random trees. */
#include "support.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "search.h"

/* ---- toy games ---- */

typedef struct toy {
  int A;
  int kind;        /* 0 bandit, 1 delayed */
  double arm[16];  /* bandit rewards */
  float prior[16]; /* root logits */
  int expansions;
} toy;

static bool toy_expand(void *ctx, int32_t node, int32_t parent, int32_t action, const int32_t *path,
                       int32_t depth, mb_search_eval *out, mb_error *err) {
  toy *t = ctx;
  (void)node;
  (void)parent;
  (void)err;
  t->expansions++;
  for (int a = 0; a < t->A; a++) out->logits[a] = depth == 0 ? t->prior[a] : 0.0f;
  out->value = 0;
  out->reward = 0;
  out->terminal = false;
  out->has_mask = false;
  if (t->kind == 0) {
    if (depth >= 1) {
      out->reward = (float)t->arm[path[0]];
      out->terminal = true;
    }
    return true;
  }
  /* delayed: action 0 at the root pays 0.3 and ends; any other action pays 0 and leads to a
   * state where action 1 pays 1.0 and the others 0; then the game ends */
  if (depth == 1) {
    out->reward = path[0] == 0 ? 0.3f : 0.0f;
    out->terminal = path[0] == 0;
  } else if (depth == 2) {
    out->reward = path[1] == 1 ? 1.0f : 0.0f;
    out->terminal = true;
  }
  return true;
}

static mb_search_model toy_model(toy *t) {
  mb_search_model m = {.ctx = t, .expand = toy_expand};
  return m;
}

static void all_legal(uint8_t *mask, int A) {
  for (int a = 0; a < A; a++) mask[a] = 1;
}

/* ---- tests ---- */

static void test_bandit_best_arm(void **state) {
  (void)state;
  toy t = {.A = 6, .kind = 0, .arm = {0.1, 0.5, 0.3, 0.45, 0.0, 0.2}};
  /* the prior prefers a worse arm (by one logit; sigma(q) outweighs it once visited) */
  t.prior[2] = 1.0f;
  uint8_t mask[6];
  all_legal(mask, 6);
  mb_error err = {{0}};
  mb_search *s = mb_search_create(6, 64, &err);
  assert_non_null(s);
  mb_search_config cfg;
  mb_search_config_default(&cfg);
  cfg.simulations = 32;
  cfg.gumbel_noise = false;
  mb_search_model m = toy_model(&t);
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_search_result r;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 1);
  /* the tree-wide normalisation finds it too (a bandit's tree holds only the root's edges) */
  cfg.rescale = MB_Q_TREE;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 1);
  cfg.rescale = MB_Q_NODE;
  /* with Gumbel noise the move is a sample that favours higher values: the best arm is the
   * most frequent, and the arms far below it (0.0 and 0.1 against 0.5) are (almost) never played */
  cfg.gumbel_noise = true;
  int count[6] = {0};
  for (int seed = 0; seed < 60; seed++) {
    mb_rng_seed(&rng, (uint64_t)seed);
    assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
    count[r.action]++;
  }
  for (int a = 0; a < 6; a++) assert_true(count[1] >= count[a]);
  assert_true(count[0] + count[4] <= 2);
  /* pUCT finds it too (with a flat prior: with few simulations pUCT follows a confident prior) */
  t.prior[2] = 0.0f;
  cfg.kind = MB_SEARCH_PUCT;
  cfg.dirichlet_frac = 0;
  cfg.sample = false;
  cfg.simulations = 64;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 1);
  mb_search_free(s);
}

/* pUCT's self-play exploration (the defaults): Dirichlet noise at the root makes arms the prior
 * all but rules out get visited, never illegal ones; the move is sampled in proportion to the
 * root's visit counts; the evaluation setting has neither. */
static void test_puct_noise_and_sampling(void **state) {
  (void)state;
  enum { A = 6, SEEDS = 400 };
  toy t = {.A = A, .kind = 0, .arm = {0.1, 0.5, 0.3, 0.45, 0.0, 0.2}};
  uint8_t mask[A];
  all_legal(mask, A);
  mask[4] = 0;
  mb_error err = {{0}};
  mb_search *s = mb_search_create(A, 64, &err);
  assert_non_null(s);
  mb_search_model m = toy_model(&t);
  mb_rng rng;
  mb_search_result r;

  /* a prior of ~99.9% on arm 2: without noise arm 2 takes every visit (the others' exploration
   * term is ~0) */
  t.prior[2] = 8.0f;
  mb_search_config cfg;
  mb_search_config_default(&cfg);
  assert_int_equal(cfg.kind, MB_SEARCH_GUMBEL);
  assert_true(cfg.sample);
  assert_true(cfg.dirichlet_frac > 0);
  cfg.kind = MB_SEARCH_PUCT;
  cfg.simulations = 64;
  cfg.sample = false;
  cfg.dirichlet_frac = 0;
  mb_rng_seed(&rng, 1);
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.visits[2], 64);
  assert_int_equal(r.action, 2);
  /* a flat prior and arms of equal value: 8 simulations spread over the arms, as the prior
   * says (with MuZero's pseudocode rules, sqrt(sum N) and unvisited children at the tree's
   * minimum, all 8 went to the first arm tried) */
  toy flat = {.A = A, .kind = 0, .arm = {0.3, 0.3, 0.3, 0.3, 0.3, 0.3}};
  mb_search_model fm = toy_model(&flat);
  cfg.simulations = 8;
  assert_true(mb_search_run(s, &cfg, &fm, mask, &rng, &r, &err));
  int n_visited = 0;
  for (int a = 0; a < A; a++) n_visited += r.visits[a] > 0;
  assert_int_equal(n_visited, 5); /* every legal arm */
  cfg.simulations = 64;
  /* with the default noise, over seeds, every legal arm is visited and the illegal one never
   * (an arm the noise gives a prior p outbids arm 2 once p sqrt(N) c1 exceeds arm 2's
   * normalised lead of 1: N = 64 lets p ~ 0.1 do it) */
  mb_search_config_default(&cfg);
  cfg.kind = MB_SEARCH_PUCT;
  cfg.simulations = 64;
  int visited[A] = {0};
  for (int seed = 0; seed < 50; seed++) {
    mb_rng_seed(&rng, (uint64_t)seed);
    assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
    double sum = 0;
    for (int a = 0; a < A; a++) {
      visited[a] += r.visits[a] > 0;
      sum += r.policy[a];
    }
    assert_true(fabs(sum - 1) < 1e-5);
    assert_int_equal(r.visits[4], 0);
    assert_true(r.policy[4] == 0.0f);
    assert_true(mask[r.action] && r.visits[r.action] > 0);
  }
  for (int a = 0; a < A; a++)
    if (a != 4) assert_true(visited[a] > 0);

  /* sampling without noise: the visits are the same in every seed, and the moves follow them
   * (binomial standard deviation <= 0.025 over SEEDS draws: 0.1 is four of them) */
  t.prior[2] = 0.0f;
  cfg.dirichlet_frac = 0;
  cfg.simulations = 64;
  mb_rng_seed(&rng, 1);
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  int32_t visits[A];
  memcpy(visits, r.visits, sizeof visits);
  int played[A] = {0}, distinct = 0;
  for (int seed = 0; seed < SEEDS; seed++) {
    mb_rng_seed(&rng, (uint64_t)seed + 1000);
    assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
    assert_memory_equal(r.visits, visits, sizeof visits);
    played[r.action]++;
  }
  for (int a = 0; a < A; a++) {
    distinct += played[a] > 0;
    assert_true(fabs((double)played[a] / SEEDS - visits[a] / 64.0) < 0.1);
  }
  assert_true(distinct >= 2);
  assert_int_equal(played[4], 0);

  /* the evaluation setting plays the most visited move, without noise */
  mb_search_config_evaluation(&cfg, false);
  assert_false(cfg.sample);
  assert_true(cfg.dirichlet_frac == 0);
  mb_search_free(s);
}

/* The evaluation setting (mb_search_config_evaluation) exists because a trained policy's logits
 * are sharp: with Gumbel MuZero's c_scale 0.1, sigma(q^) <= (50 + max N) * 0.1 cannot outweigh
 * a prior that prefers a worse arm by 8 logits, with c_scale 1 it does; and its floor under the
 * Q spread keeps differences at the value network's noise level from doing so. */
static void test_evaluation_setting_overrides_a_sharp_prior(void **state) {
  (void)state;
  toy t = {.A = 6, .kind = 0, .arm = {0.1, 0.5, 0.3, 0.45, 0.0, 0.2}};
  t.prior[2] = 8.0f;
  uint8_t mask[6];
  all_legal(mask, 6);
  mb_error err = {{0}};
  mb_search *s = mb_search_create(6, 64, &err);
  assert_non_null(s);
  mb_search_config cfg;
  mb_search_config_evaluation(&cfg, true);
  assert_true(mb_search_config_check(&cfg, &err));
  assert_int_equal(cfg.leaf_rollout, MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT);
  mb_search_config_evaluation(&cfg, false);
  assert_true(mb_search_config_check(&cfg, &err));
  assert_int_equal(cfg.leaf_rollout, 0);
  assert_false(cfg.gumbel_noise);
  assert_int_equal(cfg.simulations, MB_SEARCH_EVAL_SIMULATIONS);
  mb_search_model m = toy_model(&t);
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_search_result r;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 1);
  cfg.c_scale = 0.1;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 2);
  /* arms 10x closer (spread 0.05): the evaluation's floor (0.1) halves their contrast, which
   * still outweighs the prior; a floor far above the spread (1) lets the prior win again; a
   * floor below the spread changes nothing */
  assert_true(cfg.q_min_range == MB_SEARCH_EVAL_Q_MIN_RANGE);
  cfg.c_scale = 1;
  for (int a = 0; a < 6; a++) t.arm[a] /= 10;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 1);
  cfg.q_min_range = 1.0;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 2);
  cfg.q_min_range = 0.01;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 1);
  /* arms 1000x closer (spread 0.0005, value-noise level): mctx's floor (1e-8) stretches the
   * difference over the whole contrast and it overrides the sharp prior; the evaluation's floor
   * leaves the move to the prior: what the floor is for */
  for (int a = 0; a < 6; a++) t.arm[a] /= 100;
  cfg.q_min_range = 1e-8;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 1);
  cfg.q_min_range = MB_SEARCH_EVAL_Q_MIN_RANGE;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 2);
  cfg.q_min_range = 0;
  assert_false(mb_search_config_check(&cfg, &err));
  assert_non_null(strstr(err.message, "q_min_range"));
  mb_search_free(s);
}

static void test_delayed_reward(void **state) {
  (void)state;
  toy t = {.A = 4, .kind = 1};
  t.prior[0] = 2.0f; /* the prior likes the greedy move */
  uint8_t mask[4];
  all_legal(mask, 4);
  mb_error err = {{0}};
  mb_search *s = mb_search_create(4, 64, &err);
  mb_search_config cfg;
  mb_search_config_default(&cfg);
  cfg.gumbel_noise = false;
  mb_search_model m = toy_model(&t);
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  mb_search_result r;
  cfg.simulations = 1; /* one simulation only sees the immediate reward of the prior's move */
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 0);
  cfg.simulations = 48;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_not_equal(r.action, 0);
  /* the search value approaches the optimum 1.0 from below */
  assert_true(r.search_value > 0.3f && r.search_value <= 1.0f + 1e-6f);
  /* each simulation expands at most one node */
  assert_true(r.nodes <= 49);
  /* a depth limit of 1 hides the delayed reward whatever the budget, and no node is expanded
   * below it (the root and its 4 children); 2 finds it again */
  cfg.max_depth = 1;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 0);
  assert_int_equal(r.nodes, 5);
  cfg.max_depth = 2;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_not_equal(r.action, 0);
  mb_search_free(s);
}

/* What the tree says beyond the result: the best visited alternative to a move (by its edge's
 * mean return) and the most visited path below a root action. */
static void test_tree_queries(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_rng rng;
  mb_rng_seed(&rng, 5);
  mb_search_result r;
  mb_search_config cfg;
  mb_search_config_default(&cfg);
  cfg.gumbel_noise = false;
  int32_t path[5];
  /* bandit: every arm is considered and visited; the edges' means are the arms' rewards */
  toy b = {.A = 6, .kind = 0, .arm = {0.1, 0.5, 0.3, 0.45, 0.0, 0.2}};
  uint8_t mask[6];
  all_legal(mask, 6);
  mb_search *s = mb_search_create(6, 64, &err);
  mb_search_model m = toy_model(&b);
  cfg.simulations = 32;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 1);
  assert_int_equal(mb_search_best_alternative(s, 1), 3);
  assert_int_equal(mb_search_best_alternative(s, 3), 1);
  /* an arm's node ends the game: its path is the arm alone */
  assert_int_equal(mb_search_tree_path(s, 3, path, 5), 1);
  assert_int_equal(path[0], 3);
  /* equal arms: the alternative is the lowest visited index other than the move */
  toy eq = {.A = 4, .kind = 0, .arm = {0.3, 0.3, 0.3, 0.3}};
  uint8_t all4[4] = {1, 1, 1, 1};
  mb_search *s4 = mb_search_create(4, 64, &err);
  mb_search_model em = toy_model(&eq);
  cfg.simulations = 8;
  assert_true(mb_search_run(s4, &cfg, &em, all4, &rng, &r, &err));
  for (int a = 0; a < 4; a++) assert_true(r.visits[a] > 0); /* 3, 3, 1, 1 */
  for (int taken = 0; taken < 4; taken++)
    assert_int_equal(mb_search_best_alternative(s4, taken), taken == 0 ? 1 : 0);
  mb_search_free(s4);
  cfg.simulations = 32;
  /* an illegal arm is never visited, so never the alternative */
  mask[3] = 0;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(mb_search_best_alternative(s, 1), 2);
  mb_search_free(s);
  /* delayed reward: below the move found, the most visited path takes the paying action 1 */
  toy t = {.A = 4, .kind = 1};
  t.prior[0] = 2.0f;
  all_legal(mask, 4);
  s = mb_search_create(4, 64, &err);
  m = toy_model(&t);
  cfg.simulations = 48;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_not_equal(r.action, 0);
  assert_int_equal(mb_search_tree_path(s, r.action, path, 5), 2);
  assert_int_equal(path[0], r.action);
  assert_int_equal(path[1], 1);
  assert_int_equal(mb_search_tree_path(s, r.action, path, 1), 1);
  assert_int_equal(mb_search_tree_path(s, r.action, path, 0), 0);
  /* one simulation visits the prior's move only: no alternative, no node below the others */
  cfg.simulations = 1;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.action, 0);
  assert_int_equal(mb_search_best_alternative(s, 0), -1);
  assert_int_equal(mb_search_tree_path(s, 2, path, 5), 1);
  assert_int_equal(path[0], 2);
  mb_search_free(s);
}

/* pUCT's move at evaluation is the most visited; equally visited moves go to the prior's
 * favourite, not to the lowest index (2 simulations on equal arms split the visits 1-1). */
static void test_puct_ties_follow_the_prior(void **state) {
  (void)state;
  toy t = {.A = 4, .kind = 0}; /* every arm pays 0 */
  t.prior[0] = 1.5f;
  t.prior[2] = 2.0f;
  uint8_t mask[4];
  all_legal(mask, 4);
  mb_error err = {{0}};
  mb_search *s = mb_search_create(4, 8, &err);
  mb_search_config cfg;
  mb_search_config_evaluation(&cfg, false);
  cfg.kind = MB_SEARCH_PUCT;
  cfg.simulations = 2;
  mb_search_model m = toy_model(&t);
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_search_result r;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_int_equal(r.visits[0], 1);
  assert_int_equal(r.visits[2], 1);
  assert_int_equal(r.action, 2);
  mb_search_free(s);
}

static void test_visits_sum_to_budget(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  for (int A = 2; A <= 12; A += 5) {
    mb_search *s = mb_search_create(A, 100, &err);
    assert_non_null(s);
    toy t = {.A = A, .kind = 0};
    for (int a = 0; a < A; a++) {
      t.arm[a] = mb_rng_uniform(&rng);
      t.prior[a] = (float)mb_rng_normal(&rng);
    }
    mb_search_model m = toy_model(&t);
    for (int n = 1; n <= 100; n += 9)
      for (int mc = 1; mc <= 16; mc *= 2) {
        uint8_t mask[16];
        int legal = 0;
        for (int a = 0; a < A; a++) legal += mask[a] = mb_rng_below(&rng, 3) != 0;
        if (!legal) mask[A - 1] = 1;
        mb_search_config cfg;
        mb_search_config_default(&cfg);
        cfg.simulations = n;
        cfg.max_considered = mc;
        mb_search_result r;
        assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
        int sum = 0;
        double psum = 0;
        for (int a = 0; a < A; a++) {
          sum += r.visits[a];
          psum += r.policy[a];
          if (!mask[a]) {
            assert_int_equal(r.visits[a], 0);
            assert_true(r.policy[a] == 0.0f);
          }
          assert_true(r.policy[a] >= 0.0f);
        }
        assert_int_equal(sum, n);
        assert_true(fabs(psum - 1.0) < 1e-5);
        assert_true(mask[r.action]);
      }
    mb_search_free(s);
  }
}

static void test_halving_schedule(void **state) {
  (void)state;
  int32_t seq[200];
  for (int m = 1; m <= 16; m++)
    for (int n = 1; n <= 200; n += 13) {
      assert_true(mb_search_halving_schedule(m, n, seq));
      /* the first phase visits m actions once each before any gets a second visit */
      for (int i = 0; i < n && i < m; i++) assert_int_equal(seq[i], 0);
      /* targets never decrease by more than the phase reset allows, and never exceed n */
      for (int i = 0; i < n; i++) assert_true(seq[i] >= 0 && seq[i] < n);
    }
  assert_false(mb_search_halving_schedule(0, 5, seq));
  /* m = 4, n = 8: phase 1 gives one visit each (8 / (2 * 4) = 1), phase 2 two actions get
   * two more each */
  assert_true(mb_search_halving_schedule(4, 8, seq));
  int32_t want[8] = {0, 0, 0, 0, 1, 1, 2, 2};
  for (int i = 0; i < 8; i++) assert_int_equal(seq[i], want[i]);
  /* more, from mctx's get_sequence_of_considered_visits as its source states it: phases of
   * max(1, n / (ceil(log2 m) considered)) rounds, considered halved to no fewer than 2 */
  static const struct {
    int m, n;
    int32_t want[40];
  } cases[] = {
      {4, 16, {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}},
      {3, 10, {0, 0, 0, 1, 1, 2, 2, 3, 3, 4}},
      {5, 12, {0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4}},
      {8, 32, {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,  2,
               3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10}},
      {16, 40, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
                1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    assert_true(mb_search_halving_schedule(cases[k].m, cases[k].n, seq));
    for (int i = 0; i < cases[k].n; i++)
      if (seq[i] != cases[k].want[i])
        fail_msg("m %d, n %d: visits_at[%d] = %d, expected %d", cases[k].m, cases[k].n, i, seq[i],
                 cases[k].want[i]);
  }
}

static void test_bad_input(void **state) {
  (void)state;
  mb_error err = {{0}};
  assert_null(mb_search_create(0, 10, &err));
  assert_non_null(strstr(err.message, "n_actions"));
  mb_search *s = mb_search_create(3, 4, &err);
  mb_search_config cfg;
  mb_search_config_default(&cfg);
  cfg.simulations = 5; /* more than created for */
  toy t = {.A = 3};
  mb_search_model m = toy_model(&t);
  uint8_t mask[3] = {1, 1, 1}, none[3] = {0, 0, 0};
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_search_result r;
  assert_false(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  cfg.simulations = 4;
  assert_false(mb_search_run(s, &cfg, &m, none, &rng, &r, &err));
  assert_non_null(strstr(err.message, "no legal action"));
  cfg.gamma = 0;
  assert_false(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_non_null(strstr(err.message, "gamma"));
  cfg.gamma = 1;
  cfg.max_depth = -1;
  assert_false(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_non_null(strstr(err.message, "max_depth"));
  cfg.max_depth = 0;
  cfg.leaf_rollout = -1;
  assert_false(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_non_null(strstr(err.message, "leaf_rollout -1"));
  cfg.leaf_rollout = MB_SEARCH_MAX_LEAF_ROLLOUT + 1;
  assert_false(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  assert_non_null(strstr(err.message, "leaf_rollout"));
  cfg.leaf_rollout = MB_SEARCH_MAX_LEAF_ROLLOUT;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  mb_search_free(s);
}

/* Every config field at the ends of its range is accepted and just past them refused, alone
 * (the others valid), with a message naming the field and the value. */
typedef struct field_case {
  const char *name; /* as the message names it */
  double bad, edge;
} field_case;

static void set_field(mb_search_config *c, const char *name, double v) {
  if (!strcmp(name, "simulations"))
    c->simulations = (int32_t)v;
  else if (!strcmp(name, "max_considered"))
    c->max_considered = (int32_t)v;
  else if (!strcmp(name, "max_depth"))
    c->max_depth = (int32_t)v;
  else if (!strcmp(name, "leaf_rollout"))
    c->leaf_rollout = (int32_t)v;
  else if (!strcmp(name, "gamma"))
    c->gamma = v;
  else if (!strcmp(name, "q_min_range"))
    c->q_min_range = v;
  else if (!strcmp(name, "c_visit"))
    c->c_visit = v;
  else if (!strcmp(name, "c_scale"))
    c->c_scale = v;
  else if (!strcmp(name, "fraction"))
    c->dirichlet_frac = v;
  else if (!strcmp(name, "alpha"))
    c->dirichlet_alpha = v;
  else if (!strcmp(name, "c1"))
    c->c1 = v;
  else if (!strcmp(name, "c2"))
    c->c2 = v;
  else
    fail_msg("no field %s", name);
}

static void test_config_ranges(void **state) {
  (void)state;
  const field_case cases[] = {
      {"simulations", 0, 1},
      {"max_considered", 0, 1},
      {"max_depth", -1, 0},
      {"leaf_rollout", -1, 0},
      {"leaf_rollout", MB_SEARCH_MAX_LEAF_ROLLOUT + 1, MB_SEARCH_MAX_LEAF_ROLLOUT},
      {"gamma", 0, 1e-9},
      {"gamma", 1.001, 1},
      {"gamma", NAN, 0.5},
      {"q_min_range", 0, 1e-12},
      {"q_min_range", 1.001, 1},
      {"c_visit", -0.001, 0},
      {"c_visit", NAN, 0},
      {"c_scale", -0.001, 0},
      {"fraction", -0.001, 0},
      {"fraction", 1.001, 1},
      {"alpha", 0, 1e-9},
      {"alpha", NAN, 1e-9},
      {"c1", 0, 1e-9},
      {"c2", 0, 1e-9},
  };
  mb_error err = {{0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mb_search_config c;
    mb_search_config_default(&c);
    set_field(&c, cases[i].name, cases[i].edge);
    if (!mb_search_config_check(&c, &err))
      fail_msg("%s = %g refused: %s", cases[i].name, cases[i].edge, err.message);
    set_field(&c, cases[i].name, cases[i].bad);
    assert_false(mb_search_config_check(&c, &err));
    char want[64];
    snprintf(want, sizeof want, "%s %g", cases[i].name, cases[i].bad);
    if (!strstr(err.message, want)) fail_msg("expected '%s' in '%s'", want, err.message);
  }
  /* the message says what is expected */
  mb_search_config c;
  mb_search_config_default(&c);
  c.max_depth = -1;
  assert_false(mb_search_config_check(&c, &err));
  assert_non_null(strstr(err.message, "max_depth -1: expected >= 0 (0: no limit)"));
  mb_search_config_default(&c);
  c.max_considered = 0;
  assert_false(mb_search_config_check(&c, &err));
  assert_non_null(strstr(err.message, "max_considered 0: expected >= 1"));
  mb_search_config_default(&c);
  c.c_scale = -1;
  assert_false(mb_search_config_check(&c, &err));
  assert_non_null(strstr(err.message, "expected >= 0"));
  mb_search_config_default(&c);
  c.c2 = 0;
  assert_false(mb_search_config_check(&c, &err));
  assert_non_null(strstr(err.message, "expected > 0"));
  /* the sizes a search is created for */
  const int32_t actions_ok[] = {1, 4096}, actions_bad[] = {0, 4097};
  for (int i = 0; i < 2; i++) {
    mb_search *s = mb_search_create(actions_ok[i], 1, &err);
    assert_non_null(s);
    mb_search_free(s);
    assert_null(mb_search_create(actions_bad[i], 1, &err));
    assert_non_null(strstr(err.message, "n_actions"));
  }
  assert_null(mb_search_create(2, 0, &err));
  assert_non_null(strstr(err.message, "max simulations 0: expected in [1, 1000000]"));
  assert_null(mb_search_create(2, 1000001, &err));
  assert_non_null(strstr(err.message, "max simulations 1000001"));
}

/* A model that returns a non-finite value, reward or logit is refused, naming which. */
typedef struct broken {
  int depth; /* the node at this depth is broken */
  int what;  /* 0 value, 1 reward, 2 logit */
} broken;

static bool broken_expand(void *ctx, int32_t node, int32_t parent, int32_t action,
                          const int32_t *path, int32_t depth, mb_search_eval *out, mb_error *err) {
  (void)node;
  (void)parent;
  (void)action;
  (void)path;
  (void)err;
  const broken *b = ctx;
  for (int a = 0; a < 3; a++) out->logits[a] = 0;
  out->value = 0.5f;
  out->reward = 0.25f;
  out->terminal = false;
  out->has_mask = false;
  if (depth == b->depth) {
    if (b->what == 0) out->value = NAN;
    if (b->what == 1) out->reward = INFINITY;
    if (b->what == 2) out->logits[1] = -INFINITY;
  }
  return true;
}

static void test_non_finite_model(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_search *s = mb_search_create(3, 4, &err);
  assert_non_null(s);
  mb_search_config cfg;
  mb_search_config_default(&cfg);
  cfg.simulations = 4;
  const uint8_t mask[3] = {1, 1, 1};
  const char *says[] = {"non-finite value or reward", "non-finite value or reward",
                        "non-finite logit for action 1"};
  for (int depth = 0; depth <= 1; depth++)
    for (int what = 0; what < 3; what++) {
      broken b = {.depth = depth, .what = what};
      mb_search_model m = {.ctx = &b, .expand = broken_expand};
      mb_rng rng;
      mb_rng_seed(&rng, 3);
      mb_search_result r;
      assert_false(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
      assert_non_null(strstr(err.message, says[what]));
    }
  broken fine = {.depth = 99};
  mb_search_model m = {.ctx = &fine, .expand = broken_expand};
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  mb_search_result r;
  assert_true(mb_search_run(s, &cfg, &m, mask, &rng, &r, &err));
  mb_search_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bandit_best_arm),
      cmocka_unit_test(test_puct_noise_and_sampling),
      cmocka_unit_test(test_evaluation_setting_overrides_a_sharp_prior),
      cmocka_unit_test(test_delayed_reward),
      cmocka_unit_test(test_tree_queries),
      cmocka_unit_test(test_puct_ties_follow_the_prior),
      cmocka_unit_test(test_visits_sum_to_budget),
      cmocka_unit_test(test_halving_schedule),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_config_ranges),
      cmocka_unit_test(test_non_finite_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
