/* Tests of the mallocMuZero learner (solvers/muzero/learner.h), on a tiny agent and a replay
 * buffer of a few raw-policy episodes of small synthetic workloads:
 *   - the losses are 0 before the first update and finite after each one;
 *   - the batch an update trains on holds the replay's rows, targets and weights, entry by
 *     entry, its value targets bootstrapped from the target network (sibling paths too);
 *   - the losses it reports, and the priorities it sets, equal a recomputation from that batch
 *     with the networks as they were before it, one column at a time;
 *   - it learns: repeated updates on the same small buffer lower every supervised loss (policy,
 *     value, reward), with and without sibling paths, and with action features (whose weights
 *     in the dynamics' first layer then move);
 *   - the same draws give the same weights (determinism), other draws other weights;
 *   - the target network is what the value targets bootstrap from: updates after
 *     mb_learner_update_target differ from updates without it. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adam.h"
#include "agent.h"
#include "catalogue.h"
#include "game.h"
#include "hardware.h"
#include "learner.h"
#include "player.h"
#include "random_workload.h"
#include "replay.h"
#include "train.h"

enum { SIBLINGS = 1 }; /* sibling path steps, in the replay and the learner */

/* Fills rb with the raw policy's whole episodes of 6 synthetic workloads, with one-step sibling
 * paths (a random other legal action) when `siblings`. */
static void fill_replay(const mb_agent *ag, mb_replay *rb, bool siblings) {
  mb_error err = {{0}};
  mb_hardware base;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &base, &err));
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, ag->cfg.obs_dim, ag->cfg.game.n_actions, &err));
  if (siblings) assert_true(mb_trajectory_enable_siblings(&t, SIBLINGS, &err));
  mb_player *p = mb_player_create(ag, 1, &err);
  assert_non_null(p);
  float *obs = malloc((size_t)ag->cfg.obs_dim * sizeof *obs);
  assert_non_null(obs);
  mb_rng rng;
  mb_rng_seed(&rng, 5);
  for (uint64_t seed = 1; seed <= 6; seed++) {
    mb_rng wr;
    mb_rng_seed(&wr, 100 + seed);
    mb_random_options o;
    mb_random_options_default(&o);
    mb_workload *w = mb_random_workload(&wr, 24, &o, NULL, &err);
    assert_non_null(w);
    mb_hardware hw = mb_hardware_with_capacity(&base, mb_catalogue_auto_capacity(w, &base));
    mb_game *g = mb_game_new(w, &hw, &ag->cfg.game, &err);
    assert_non_null(g);
    mb_player_set_scale(p, mb_return_scale(w, &hw, g));
    mb_trajectory_clear(&t);
    while (!mb_game_done(g)) {
      mb_player_decision d;
      assert_true(mb_player_decide_record(p, g, NULL, false, false, &rng, &d, &err));
      int32_t sib = -1;
      for (int32_t a = 0; a < ag->cfg.game.n_actions && sib < 0; a++)
        if (d.mask[a] && a != d.action) sib = a;
      float sib_rew = 0;
      bool sib_end = false;
      if (siblings && sib >= 0) { /* the sibling's step, observed, then undone */
        mb_game_snapshot snap = mb_game_snapshot_take(g);
        double r = 0;
        assert_true(mb_game_step(g, sib, &r, &err));
        sib_rew = (float)(r * mb_player_reward_unit(p));
        sib_end = mb_game_done(g);
        mb_game_observe(g, obs);
        assert_true(mb_game_restore(g, snap, &err));
      }
      double r = 0;
      assert_true(mb_game_step(g, d.action, &r, &err));
      assert_true(mb_trajectory_push(&t, d.obs, d.mask, d.policy, d.action,
                                     (float)(r * mb_player_reward_unit(p)), d.value, &err));
      if (siblings && sib >= 0)
        assert_true(mb_trajectory_set_sibling(&t, 1, &sib, &sib_rew, obs, sib_end, &err));
    }
    mb_game_observe(g, obs);
    assert_true(mb_trajectory_finish(&t, obs, true, &err));
    assert_true(mb_replay_add(rb, &t, &err));
    mb_game_free(g);
    mb_workload_free(w);
  }
  free(obs);
  mb_player_free(p);
  mb_trajectory_free(&t);
}

/* A fresh agent (seed 3), its optimiser and a replay filled by its raw policy. */
typedef struct fixture {
  mb_agent ag;
  mb_adam opt;
  mb_replay rb;
  mb_train_config cfg;
} fixture;

static void fixture_init(fixture *f, bool siblings, bool action_features) {
  mb_error err = {{0}};
  memset(f, 0, sizeof *f);
  mb_agent_config c;
  mb_test_agent_config(&c, 16, 6, 6);
  c.action_features = action_features;
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  assert_true(mb_agent_create(&f->ag, &c, &rng, &err));
  mb_nn_module *mods[4];
  mb_agent_modules(&f->ag, mods);
  mb_adam_config ac;
  mb_adam_config_default(&ac);
  assert_true(mb_adam_create(&f->opt, mods, 4, &ac, &err));
  assert_true(mb_replay_init(&f->rb, 4096, c.obs_dim, c.game.n_actions, &err));
  if (siblings) assert_true(mb_replay_enable_siblings(&f->rb, SIBLINGS, &err));
  fill_replay(&f->ag, &f->rb, siblings);
  mb_train_config_default(&f->cfg);
  f->cfg.batch = 16;
  f->cfg.unroll = 3;
  f->cfg.td_steps = 4;
  f->cfg.sibling_depth = SIBLINGS;
  f->cfg.sibling_weight = siblings ? 1.0 : 0.0;
}

static void fixture_free(fixture *f) {
  mb_replay_free(&f->rb);
  mb_adam_free(&f->opt);
  mb_agent_free(&f->ag);
}

/* Mean losses of `n` updates drawn from rng. */
static mb_learner_losses run_updates(fixture *f, mb_learner *L, int n, mb_rng *rng) {
  mb_error err = {{0}};
  mb_learner_losses sum = {0};
  for (int i = 0; i < n; i++) {
    if (!mb_learner_step(L, &f->ag, &f->opt, &f->cfg, &f->rb, 1.0, rng, &err))
      fail_msg("%s", err.message);
    mb_learner_losses l = mb_learner_last_losses(L);
    assert_true(isfinite(l.policy) && isfinite(l.value) && isfinite(l.reward) &&
                isfinite(l.consistency) && isfinite(l.sibling));
    sum.policy += l.policy / n;
    sum.value += l.value / n;
    sum.reward += l.reward / n;
    sum.sibling += l.sibling / n;
  }
  return sum;
}

static void learns(bool siblings, bool action_features) {
  mb_error err = {{0}};
  fixture f;
  fixture_init(&f, siblings, action_features);
  /* the dynamics' first-layer weights of the action features: rows W + A .. of l0.weight */
  const mb_tensor *w0 = &f.ag.dyn.params[0].value;
  int32_t row0 = f.ag.cfg.latent + f.ag.cfg.game.n_actions;
  assert_int_equal(w0->rows, row0 + (action_features ? MB_AGENT_ACTION_FEATURES : 0));
  size_t n_feat = (size_t)(w0->rows - row0) * (size_t)w0->cols;
  float *feat0 = malloc(n_feat * sizeof *feat0 + 1);
  assert_non_null(feat0);
  if (n_feat) memcpy(feat0, mb_tensor_row(w0, row0), n_feat * sizeof *feat0);
  mb_learner *L =
      mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, siblings ? SIBLINGS : 0, &err);
  assert_non_null(L);
  mb_learner_losses zero = mb_learner_last_losses(L);
  assert_true(zero.policy == 0 && zero.value == 0 && zero.reward == 0 && zero.consistency == 0 &&
              zero.sibling == 0);
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  mb_learner_losses first = run_updates(&f, L, 20, &rng);
  for (int i = 0; i < 8; i++) {
    run_updates(&f, L, 40, &rng);
    assert_true(mb_learner_update_target(L, &f.ag, &err));
  }
  mb_learner_losses last = run_updates(&f, L, 20, &rng);
  print_message("learner%s: policy %.3f -> %.3f, value %.3f -> %.3f, reward %.3f -> %.3f\n",
                siblings ? " (siblings)" : "", first.policy, last.policy, first.value, last.value,
                first.reward, last.reward);
  assert_true(last.policy < first.policy);
  assert_true(last.value < first.value);
  assert_true(last.reward < first.reward);
  if (siblings) assert_true(first.sibling > 0 && last.sibling < first.sibling);
  /* the features reach the dynamics: their weights were trained */
  if (action_features) {
    double moved = 0;
    for (size_t i = 0; i < n_feat; i++) moved += fabs(mb_tensor_row(w0, row0)[i] - feat0[i]);
    print_message("learner (action features): their weights moved %.4f in all\n", moved);
    assert_true(moved > 1e-3);
  }
  free(feat0);
  mb_learner_free(L);
  fixture_free(&f);
}

static void test_learns(void **state) {
  (void)state;
  learns(false, false);
}

static void test_learns_with_siblings(void **state) {
  (void)state;
  learns(true, false);
}

static void test_learns_with_action_features(void **state) {
  (void)state;
  learns(true, true);
}

/* A learner of sibling paths refuses a replay without them, or with paths of another length. */
static void test_sibling_depth_mismatch(void **state) {
  (void)state;
  mb_error err = {{0}};
  fixture f;
  fixture_init(&f, false, false);
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_learner *L = mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, 2, &err);
  assert_non_null(L);
  assert_false(mb_learner_step(L, &f.ag, &f.opt, &f.cfg, &f.rb, 1.0, &rng, &err));
  assert_non_null(strstr(err.message, "sibling paths of 2 steps, the replay's of 0"));
  mb_learner_free(L);
  fixture_free(&f);
  fixture_init(&f, true, false);
  L = mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, SIBLINGS + 1, &err);
  assert_non_null(L);
  assert_false(mb_learner_step(L, &f.ag, &f.opt, &f.cfg, &f.rb, 1.0, &rng, &err));
  assert_non_null(strstr(err.message, "the replay's of 1"));
  mb_learner_free(L);
  fixture_free(&f);
}

/* dst: a network of src's config holding src's weights (a target network, or the networks as
 * they were before an update), and inf, its inference one observation at a time. */
static void copy_agent(const mb_agent *src, mb_agent *dst, mb_agent_infer *inf) {
  mb_error err = {{0}};
  mb_rng rng;
  mb_rng_seed(&rng, 0);
  assert_true(mb_agent_create(dst, &src->cfg, &rng, &err));
  assert_true(mb_agent_copy_weights(dst, src, &err));
  assert_true(mb_agent_infer_create(inf, dst, &err));
}

/* The value (in return units) inf's networks give obs. */
static float value_of(mb_agent_infer *inf, const float *obs) {
  mb_error err = {{0}};
  float *logits = malloc(sizeof(float) * (size_t)inf->ag->cfg.game.n_actions), value;
  assert_non_null(logits);
  assert_true(mb_agent_initial(inf, obs, NULL, logits, &value, &err));
  free(logits);
  return value;
}

/* 0.5 ||x - h(obs)||^2 over the latent, h being ag's representation, run through an inference
 * of its own so that an unroll's tapes in another stay as they are. */
static double half_sq_to_representation(const mb_agent *ag, const float *x, const float *obs) {
  mb_error err = {{0}};
  int32_t W = ag->cfg.latent, A = ag->cfg.game.n_actions;
  float *h = malloc(sizeof(float) * (size_t)W), *logits = malloc(sizeof(float) * (size_t)A);
  assert_true(h && logits);
  float value;
  mb_agent_infer inf;
  assert_true(mb_agent_infer_create(&inf, ag, &err));
  assert_true(mb_agent_initial(&inf, obs, h, logits, &value, &err));
  mb_agent_infer_free(&inf);
  double sq = 0;
  for (int32_t j = 0; j < W; j++) sq += (double)(x[j] - h[j]) * (x[j] - h[j]);
  free(h);
  free(logits);
  return 0.5 * sq;
}

/* Adds to rb a truncated episode: the first 5 decisions of its first, cut there (the
 * fixture's episodes all end). */
static void add_truncated_episode(mb_replay *rb) {
  mb_error err = {{0}};
  int32_t D = rb->obs_dim, A = rb->A;
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  for (int64_t row = 0; row < 5; row++) {
    assert_true(rb->action[row] >= 0);
    assert_true(mb_trajectory_push(&t, rb->obs + row * D, rb->mask + row * A, rb->policy + row * A,
                                   rb->action[row], rb->reward[row], rb->value[row], &err));
  }
  assert_true(mb_trajectory_finish(&t, rb->obs + 5 * D, false, &err));
  assert_true(mb_replay_add(rb, &t, &err));
  mb_trajectory_free(&t);
}

/* The batch an update trains on, checked entry by entry against the replay it was drawn
 * from, over 30 updates (each draws 16 columns of 3 unroll steps): entry (k, b) is the row k
 * steps after column b's first row, past the final row when k exceeds the rows to it; the
 * column starts from its first row's observation; a decision entry's policy target is its
 * row's (weight 1), any other's uniform (weight 0); an unrolled action is the row's own where
 * it is a decision; a reward target is the row's reward scaled (weight 1), else 0 (weight 1
 * past the end of an episode that ended, 0 after a truncated one); a value target is the
 * row's n-step return (mb_replay_nstep) bootstrapped from the target network's value of the
 * bootstrap row's observation (computed here one observation at a time), scaled, weight 1;
 * past the final row 0, weighted as the reward. The replay holds one truncated episode too. */
static void test_batch_matches_replay(void **state) {
  (void)state;
  mb_error err = {{0}};
  fixture f;
  fixture_init(&f, false, false);
  add_truncated_episode(&f.rb);
  int32_t D = f.ag.cfg.obs_dim, A = f.ag.cfg.game.n_actions;
  /* the target network: the agent as the learner was created, never updated here */
  mb_agent target;
  mb_agent_infer inf;
  copy_agent(&f.ag, &target, &inf);
  mb_learner *L = mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, 0, &err);
  assert_non_null(L);
  const double scale = f.ag.cfg.value_scale;
  mb_rng rng;
  mb_rng_seed(&rng, 21);
  int past_terminal = 0, past_truncated = 0, bootstrapped = 0;
  for (int update = 0; update < 30; update++) {
    if (!mb_learner_step(L, &f.ag, &f.opt, &f.cfg, &f.rb, 1.0, &rng, &err))
      fail_msg("%s", err.message);
    mb_learner_batch bt = mb_learner_last_batch(L);
    assert_int_equal(bt.batch, f.cfg.batch);
    assert_int_equal(bt.unroll, f.cfg.unroll);
    for (int32_t b = 0; b < bt.batch; b++) {
      int64_t row0 = bt.rows[b];
      assert_memory_equal(mb_tensor_row(bt.observations, b), f.rb.obs + row0 * D,
                          sizeof(float) * (size_t)D);
      int64_t fin = (row0 + f.rb.to_final[row0]) % f.rb.capacity;
      bool terminal = f.rb.terminal[fin] != 0;
      for (int32_t k = 0; k <= bt.unroll; k++) {
        int64_t i = (int64_t)k * bt.batch + b, row = bt.rows[i];
        bool past = k > f.rb.to_final[row0];
        assert_int_equal(bt.past[i], past);
        assert_int_equal(row, (row0 + (past ? f.rb.to_final[row0] : k)) % f.rb.capacity);
        bool decision = !past && f.rb.action[row] >= 0;
        const float *pt = mb_tensor_row(&bt.policy_targets[k], b);
        for (int32_t a = 0; a < A; a++)
          assert_true(pt[a] == (decision ? f.rb.policy[row * A + a] : 1.0f / (float)A));
        assert_true(bt.policy_weight[i] == (decision ? 1.0f : 0.0f));
        if (k < bt.unroll) {
          if (decision) assert_int_equal(bt.actions[i], f.rb.action[row]);
          assert_true(bt.actions[i] >= 0 && bt.actions[i] < A);
          assert_true(bt.reward_target[i] == (decision ? f.rb.reward[row] * (float)scale : 0.0f));
          assert_true(bt.reward_weight[i] == (decision || terminal ? 1.0f : 0.0f));
        }
        if (past) {
          assert_true(bt.value_target[i] == 0.0f);
          assert_true(bt.value_weight[i] == (terminal ? 1.0f : 0.0f));
          past_terminal += terminal;
          past_truncated += !terminal;
          continue;
        }
        double sum, disc, v = 0;
        int64_t boot;
        mb_replay_nstep(&f.rb, row, f.cfg.td_steps, f.cfg.gamma, &sum, &boot, &disc);
        if (boot >= 0) {
          v = value_of(&inf, f.rb.obs + boot * D);
          bootstrapped++;
        }
        double want = (sum + disc * v) * scale;
        if (!(fabs(bt.value_target[i] - want) <= 1e-3 * (1 + fabs(want))))
          fail_msg("update %d, (k %d, b %d): value target %.6f, want %.6f", update, k, b,
                   bt.value_target[i], want);
        assert_true(bt.value_weight[i] == 1.0f);
      }
    }
  }
  print_message("batch entries past a terminal end %d, past a truncated end %d, bootstrapped %d\n",
                past_terminal, past_truncated, bootstrapped);
  assert_true(past_terminal > 0 && bootstrapped > 0);
  mb_agent_infer_free(&inf);
  mb_agent_free(&target);
  mb_learner_free(L);
  fixture_free(&f);
}

/* Adds one entry's softmax cross-entropy (policy, A logits) or categorical loss (value or
 * reward, S logits) with weight w and scale sc to *sum, through the library's loss functions
 * on a one-row tensor. */
static void add_policy_loss(const float *logits, const float *target, int32_t A, float w, float sc,
                            double *sum) {
  mb_error err = {{0}};
  mb_tensor l, t, d;
  assert_true(mb_tensor_init(&l, 1, A, &err) && mb_tensor_init(&t, 1, A, &err) &&
              mb_tensor_init(&d, 1, A, &err));
  memcpy(l.data, logits, sizeof(float) * (size_t)A);
  memcpy(t.data, target, sizeof(float) * (size_t)A);
  double loss;
  assert_true(mb_loss_softmax_xent(&l, &t, NULL, &w, sc, &loss, &d, &err));
  *sum += loss;
  mb_tensor_free(&l);
  mb_tensor_free(&t);
  mb_tensor_free(&d);
}

static void add_categorical_loss(const mb_support *sup, const float *logits, int32_t S,
                                 float target, float w, float sc, double *sum) {
  mb_error err = {{0}};
  mb_tensor l, d;
  assert_true(mb_tensor_init(&l, 1, S, &err) && mb_tensor_init(&d, 1, S, &err));
  memcpy(l.data, logits, sizeof(float) * (size_t)S);
  double loss;
  assert_true(mb_loss_categorical(sup, &l, &target, &w, sc, &loss, &d, &err));
  *sum += loss;
  mb_tensor_free(&l);
  mb_tensor_free(&d);
}

/* The losses an update reports, recomputed from its batch (mb_learner_last_batch) with the
 * networks as they were before it, one column at a time: the representation of the column's
 * observation, then the dynamics along the batch's actions (mb_agent_recurrent); at unroll step
 * k the policy, value and (k >= 1) reward losses against the batch's targets and weights, and
 * the consistency loss 0.5 ||g^k - h(o_k)||^2 towards the representation of the row reached
 * (0 past the final row), each scaled 1 / B at step 0 and 1 / (K B) at the others, the value's
 * by value_weight, the consistency's by consistency_weight (2 here, so a weight used as its
 * inverse shows). */
static void test_losses_from_batch(void **state) {
  (void)state;
  mb_error err = {{0}};
  fixture f;
  fixture_init(&f, false, false);
  f.cfg.consistency_weight = 2.0;
  add_truncated_episode(&f.rb); /* entries past it weigh 0, past an ending 1 */
  int32_t D = f.ag.cfg.obs_dim, A = f.ag.cfg.game.n_actions, S = f.ag.cfg.support;
  int32_t W = f.ag.cfg.latent;
  mb_agent before;
  mb_agent_infer inf;
  copy_agent(&f.ag, &before, &inf);
  float *latent = malloc(sizeof(float) * (size_t)W), *next = malloc(sizeof(float) * (size_t)W);
  float *logits = malloc(sizeof(float) * (size_t)A);
  assert_true(latent && next && logits);
  mb_learner *L = mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, 0, &err);
  assert_non_null(L);
  mb_rng rng;
  mb_rng_seed(&rng, 23);
  int past_truncated = 0;
  for (int update = 0; update < 30; update++) {
    assert_true(mb_agent_copy_weights(&before, &f.ag, &err));
    if (!mb_learner_step(L, &f.ag, &f.opt, &f.cfg, &f.rb, 1.0, &rng, &err))
      fail_msg("%s", err.message);
    mb_learner_batch bt = mb_learner_last_batch(L);
    mb_learner_losses got = mb_learner_last_losses(L);
    int32_t B = bt.batch, K = bt.unroll;
    double lp = 0, lv = 0, lr = 0, lc = 0;
    for (int32_t b = 0; b < B; b++) {
      const float *obs = mb_tensor_row(bt.observations, b);
      float value, reward;
      for (int32_t k = 0; k < K; k++)
        past_truncated += bt.past[k * B + b] && bt.reward_weight[k * B + b] == 0;
      assert_true(mb_agent_initial(&inf, obs, latent, logits, &value, &err));
      for (int32_t k = 0; k <= K; k++) {
        int64_t i = (int64_t)k * B + b;
        float sc = (k == 0 ? 1.0f : 1.0f / (float)K) / (float)B;
        const float *out = mb_tensor_row(mb_nn_tape_output(&inf.pred), 0);
        add_policy_loss(out, mb_tensor_row(&bt.policy_targets[k], b), A, bt.policy_weight[i], sc,
                        &lp);
        add_categorical_loss(&before.sup, out + A, S, bt.value_target[i], bt.value_weight[i],
                             sc * (float)f.cfg.value_weight, &lv);
        if (k == K) break;
        float sc1 = 1.0f / (float)K / (float)B;
        assert_true(mb_agent_recurrent(&inf, latent, bt.actions[i], k == 0 ? obs : NULL, next,
                                       &reward, logits, &value, &err));
        add_categorical_loss(&before.sup, mb_tensor_row(mb_nn_tape_output(&inf.reward), 0), S,
                             bt.reward_target[i], bt.reward_weight[i], sc1, &lr);
        memcpy(latent, next, sizeof(float) * (size_t)W);
        int64_t row = bt.rows[i + B];
        if (!bt.past[i + B])
          lc += sc1 * f.cfg.consistency_weight *
                half_sq_to_representation(&before, next, f.rb.obs + row * D);
      }
    }
    const double got_v[4] = {got.policy, got.value, got.reward, got.consistency};
    const double want_v[4] = {lp, lv, lr, lc};
    const char *names[4] = {"policy", "value", "reward", "consistency"};
    for (int j = 0; j < 4; j++)
      if (!(fabs(got_v[j] - want_v[j]) <= 1e-4 * fabs(want_v[j]) + 1e-7))
        fail_msg("update %d: %s loss %.9g, recomputed %.9g", update, names[j], got_v[j], want_v[j]);
  }
  assert_true(past_truncated > 0); /* the reward weights of 0 were at stake */
  free(latent);
  free(next);
  free(logits);
  mb_agent_infer_free(&inf);
  mb_agent_free(&before);
  mb_learner_free(L);
  fixture_free(&f);
}

/* With prioritised replay, an update sets each drawn row's priority to |v - z| + 1e-6: the
 * value the networks before it predicted for the row's observation against the row's value
 * target (both scaled; mb_learner_last_batch), recomputed here one observation at a time. */
static void test_priorities_from_batch(void **state) {
  (void)state;
  mb_error err = {{0}};
  fixture f;
  fixture_init(&f, false, false);
  f.cfg.priority_alpha = 0.6;
  assert_true(mb_replay_enable_priority(&f.rb, f.cfg.priority_alpha, &err));
  mb_agent before;
  mb_agent_infer inf;
  copy_agent(&f.ag, &before, &inf);
  mb_learner *L = mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, 0, &err);
  assert_non_null(L);
  mb_rng rng;
  mb_rng_seed(&rng, 24);
  for (int update = 0; update < 10; update++) {
    assert_true(mb_agent_copy_weights(&before, &f.ag, &err));
    if (!mb_learner_step(L, &f.ag, &f.opt, &f.cfg, &f.rb, 0.4, &rng, &err))
      fail_msg("%s", err.message);
    mb_learner_batch bt = mb_learner_last_batch(L);
    for (int32_t b = 0; b < bt.batch; b++) {
      double value = value_of(&inf, mb_tensor_row(bt.observations, b));
      double want = fabs(value * f.ag.cfg.value_scale - bt.value_target[b]) + 1e-6;
      double got = mb_replay_priority(&f.rb, bt.rows[b]);
      if (!(fabs(got - want) <= 1e-3 * (1 + want)))
        fail_msg("update %d, column %d: priority %.6f, want %.6f", update, b, got, want);
    }
  }
  mb_agent_infer_free(&inf);
  mb_agent_free(&before);
  mb_learner_free(L);
  fixture_free(&f);
}

/* Sibling paths of two steps in the batch, checked entry by entry against the replay: a copy
 * of the fixture's episodes in which every decision but each third has a path (its first
 * action the first legal one not taken, rewards and observations taken from later rows, every
 * second path ending its episode). Step j's action and reward target (scaled, weight 1) are the
 * path's, 0 (weight 0) beyond it; step 0's value target, on paths of two steps, is the second
 * step's reward plus the discounted target-network value of the path's last observation (none
 * when the path ended the episode), scaled, weight 1. The sibling loss the update reports is
 * recomputed from them with the networks as they were before it: dynamics from the column's
 * representation along the path's actions, reward and value losses and the consistency towards
 * the representation of each step's observation, each scaled sibling_weight / (B P). */
static void test_batch_sibling_paths(void **state) {
  (void)state;
  enum { P = 2 };
  mb_error err = {{0}};
  fixture f;
  fixture_init(&f, false, false);
  int32_t D = f.ag.cfg.obs_dim, A = f.ag.cfg.game.n_actions;
  mb_replay rb;
  assert_true(mb_replay_init(&rb, f.rb.capacity, D, A, &err));
  assert_true(mb_replay_enable_siblings(&rb, P, &err));
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  assert_true(mb_trajectory_enable_siblings(&t, P, &err));
  int paths = 0;
  for (int64_t row = 0; row < f.rb.count; row++) {
    if (f.rb.action[row] < 0) { /* the final row: the episode as copied, with its paths */
      assert_true(mb_trajectory_finish(&t, f.rb.obs + row * D, f.rb.terminal[row], &err));
      assert_true(mb_replay_add(&rb, &t, &err));
      mb_trajectory_clear(&t);
      continue;
    }
    const uint8_t *mask = f.rb.mask + row * A;
    assert_true(mb_trajectory_push(&t, f.rb.obs + row * D, mask, f.rb.policy + row * A,
                                   f.rb.action[row], f.rb.reward[row], f.rb.value[row], &err));
    int32_t sib = -1;
    for (int32_t a = 0; a < A && sib < 0; a++)
      if (mask[a] && a != f.rb.action[row]) sib = a;
    if (sib < 0 || row % 3 == 0 || row + 2 >= f.rb.count) continue;
    int32_t actions[P] = {sib, 0};
    float rewards[P] = {0.01f * (float)(row % 7), 0.02f};
    int n = row % 5 == 0 ? 1 : P;
    assert_true(mb_trajectory_set_sibling(&t, n, actions, rewards, f.rb.obs + (row + 1) * D,
                                          paths % 2 == 0, &err));
    paths++;
  }
  assert_true(paths > 20);
  mb_agent target;
  mb_agent_infer inf;
  copy_agent(&f.ag, &target, &inf);
  float *logits = malloc(sizeof *logits * (size_t)A);
  assert_non_null(logits);
  mb_learner *L = mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, P, &err);
  assert_non_null(L);
  const double scale = f.ag.cfg.value_scale;
  f.cfg.sibling_weight = 1.5;
  /* the networks before each update, for the sibling loss recomputed column by column */
  mb_agent before;
  mb_agent_infer binf;
  copy_agent(&f.ag, &before, &binf);
  int32_t W = f.ag.cfg.latent, S = f.ag.cfg.support;
  float *latent = malloc(sizeof(float) * (size_t)W), *next = malloc(sizeof(float) * (size_t)W);
  assert_true(latent && next);
  mb_rng rng;
  mb_rng_seed(&rng, 22);
  int with_value = 0, ended = 0;
  for (int update = 0; update < 20; update++) {
    assert_true(mb_agent_copy_weights(&before, &f.ag, &err));
    if (!mb_learner_step(L, &f.ag, &f.opt, &f.cfg, &rb, 1.0, &rng, &err))
      fail_msg("%s", err.message);
    mb_learner_batch bt = mb_learner_last_batch(L);
    assert_int_equal(bt.sibling_steps, P);
    double sibling_loss = 0;
    const float sc = (float)f.cfg.sibling_weight / (float)(bt.batch * P);
    for (int32_t b = 0; b < bt.batch; b++) {
      int64_t row0 = bt.rows[b], base = row0 * P;
      int32_t n = rb.sib_len[row0];
      /* the sibling loss of this column: dynamics from h(o) along the path's actions */
      const float *obs = mb_tensor_row(bt.observations, b);
      float value, reward;
      assert_true(mb_agent_initial(&binf, obs, latent, logits, &value, &err));
      for (int32_t j = 0; j < P; j++) {
        int64_t i = (int64_t)j * bt.batch + b;
        assert_true(mb_agent_recurrent(&binf, latent, bt.sibling_actions[i], j == 0 ? obs : NULL,
                                       next, &reward, logits, &value, &err));
        add_categorical_loss(&before.sup, mb_tensor_row(mb_nn_tape_output(&binf.reward), 0), S,
                             bt.sibling_reward_target[i], bt.sibling_reward_weight[i], sc,
                             &sibling_loss);
        if (j + 1 < P)
          add_categorical_loss(&before.sup, mb_tensor_row(mb_nn_tape_output(&binf.pred), 0) + A, S,
                               bt.sibling_value_target[i], bt.sibling_value_weight[i],
                               sc * (float)f.cfg.value_weight, &sibling_loss);
        memcpy(latent, next, sizeof(float) * (size_t)W);
        if (bt.sibling_reward_weight[i] == 0) continue; /* no step: no consistency either */
        sibling_loss += sc * half_sq_to_representation(&before, next, rb.sib_obs + (base + j) * D);
      }
      for (int32_t j = 0; j < P; j++) {
        int64_t i = (int64_t)j * bt.batch + b;
        bool has = j < n;
        assert_int_equal(bt.sibling_actions[i], has ? rb.sib_action[base + j] : 0);
        assert_true(bt.sibling_reward_target[i] ==
                    (has ? rb.sib_reward[base + j] * (float)scale : 0.0f));
        assert_true(bt.sibling_reward_weight[i] == (has ? 1.0f : 0.0f));
        if (j + 1 >= P) continue;
        if (j + 1 >= n) {
          assert_true(bt.sibling_value_target[i] == 0.0f && bt.sibling_value_weight[i] == 0.0f);
          continue;
        }
        double sum, disc;
        assert_true(mb_replay_sibling_target(&rb, row0, j, f.cfg.gamma, &sum, &disc));
        float boot_value =
            rb.sib_terminal[row0] ? 0 : value_of(&inf, rb.sib_obs + (base + n - 1) * D);
        double want = (sum + disc * boot_value) * scale;
        if (!(fabs(bt.sibling_value_target[i] - want) <= 1e-3 * (1 + fabs(want))))
          fail_msg("update %d, column %d: sibling value target %.6f, want %.6f", update, b,
                   bt.sibling_value_target[i], want);
        assert_true(bt.sibling_value_weight[i] == 1.0f);
        with_value++;
        ended += rb.sib_terminal[row0];
      }
    }
    double got = mb_learner_last_losses(L).sibling;
    if (!(fabs(got - sibling_loss) <= 1e-4 * fabs(sibling_loss) + 1e-7))
      fail_msg("update %d: sibling loss %.9g, recomputed %.9g", update, got, sibling_loss);
  }
  print_message("sibling value targets checked %d (%d on paths that ended the episode)\n",
                with_value, ended);
  assert_true(with_value > 20 && ended > 0 && ended < with_value);
  free(logits);
  free(latent);
  free(next);
  mb_agent_infer_free(&binf);
  mb_agent_free(&before);
  mb_agent_infer_free(&inf);
  mb_agent_free(&target);
  mb_learner_free(L);
  mb_trajectory_free(&t);
  mb_replay_free(&rb);
  fixture_free(&f);
}

/* The first layer's weights of the representation after `n` updates from draw seed `seed`,
 * with the target network updated after every update when `sync`. */
static void weights_after(uint64_t seed, int n, bool sync, float *out, size_t count) {
  mb_error err = {{0}};
  fixture f;
  fixture_init(&f, false, false);
  mb_learner *L = mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, 0, &err);
  assert_non_null(L);
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  for (int i = 0; i < n; i++) {
    assert_true(mb_learner_step(L, &f.ag, &f.opt, &f.cfg, &f.rb, 1.0, &rng, &err));
    if (sync) assert_true(mb_learner_update_target(L, &f.ag, &err));
  }
  const mb_tensor *w = &f.ag.repr.params[0].value;
  assert_true((size_t)w->rows * (size_t)w->cols >= count);
  memcpy(out, w->data, count * sizeof *out);
  mb_learner_free(L);
  fixture_free(&f);
}

static void test_deterministic_and_target(void **state) {
  (void)state;
  enum { N = 256 };
  float a[N], b[N], c[N], d[N];
  weights_after(7, 30, false, a, N);
  weights_after(7, 30, false, b, N);
  weights_after(8, 30, false, c, N);
  weights_after(7, 30, true, d, N);
  assert_memory_equal(a, b, sizeof a);
  assert_memory_not_equal(a, c, sizeof a);
  assert_memory_not_equal(a, d, sizeof a);
}

/* Every module's parameter values (grads false) or gradients (true) after one update of a fresh
 * fixture, in mb_agent_modules' order; out[m] is malloc'd, counts[m] its floats. Gradient
 * clipping is off, so that a change in one module's gradient cannot rescale another's. */
static void after_one_update(bool siblings, int32_t unroll, double root_gradient, bool grads,
                             float *out[4], size_t counts[4]) {
  mb_error err = {{0}};
  fixture f;
  fixture_init(&f, siblings, false);
  f.cfg.unroll = unroll;
  f.cfg.max_grad_norm = 1e30;
  f.cfg.root_gradient = root_gradient;
  mb_learner *L =
      mb_learner_create(&f.ag, f.cfg.batch, f.cfg.unroll, siblings ? SIBLINGS : 0, &err);
  assert_non_null(L);
  mb_rng rng;
  mb_rng_seed(&rng, 5);
  if (!mb_learner_step(L, &f.ag, &f.opt, &f.cfg, &f.rb, 1.0, &rng, &err))
    fail_msg("%s", err.message);
  mb_nn_module *mods[4];
  mb_agent_modules(&f.ag, mods);
  for (int m = 0; m < 4; m++) {
    counts[m] = 0;
    for (int32_t p = 0; p < mods[m]->n_params; p++)
      counts[m] += (size_t)mods[m]->params[p].value.rows * (size_t)mods[m]->params[p].value.cols;
    out[m] = malloc(counts[m] * sizeof(float));
    assert_non_null(out[m]);
    size_t at = 0;
    for (int32_t p = 0; p < mods[m]->n_params; p++) {
      const mb_tensor *t = grads ? &mods[m]->params[p].grad : &mods[m]->params[p].value;
      size_t n = (size_t)t->rows * (size_t)t->cols;
      memcpy(out[m] + at, t->data, n * sizeof(float));
      at += n;
    }
  }
  mb_learner_free(L);
  fixture_free(&f);
}

static void free_modules(float *m[4]) {
  for (int i = 0; i < 4; i++) free(m[i]);
}

/* root_gradient changes only the gradient that reaches the representation's state s0 from the
 * first dynamics step: after one update with another factor (1, 0) the dynamics, reward and
 * prediction weights are the same as with the default's 0.5 (their gradients do not pass
 * through s0), and only the representation's differ, from the main unroll or a sibling path;
 * without either nothing passes through a dynamics step. */
static void test_root_gradient_reaches_only_the_representation(void **state) {
  (void)state;
  static const struct {
    bool siblings;
    int32_t unroll;
  } cases[] = {{false, 3}, {true, 3}, {true, 0}, {false, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (double factor = 0; factor <= 1; factor += 1) {
      float *half[4], *other[4];
      size_t nh[4], no[4];
      after_one_update(cases[c].siblings, cases[c].unroll, 0.5, false, half, nh);
      after_one_update(cases[c].siblings, cases[c].unroll, factor, false, other, no);
      for (int m = 0; m < 4; m++) {
        assert_int_equal(nh[m], no[m]);
        bool same = !memcmp(half[m], other[m], nh[m] * sizeof(float));
        bool reaches = m == 0 && (cases[c].unroll > 0 || cases[c].siblings);
        if (same == reaches)
          fail_msg("case %zu (siblings %d, unroll %d), factor %g: %s weights %s", c,
                   cases[c].siblings, (int)cases[c].unroll, factor, MB_AGENT_NETWORKS[m],
                   same ? "unchanged" : "changed");
      }
      free_modules(half);
      free_modules(other);
    }
}

/* Which way round: with one unroll step the representation's gradient is g0 + c g1, where g0 is
 * step 0's (the whole gradient without an unroll, the same batch), g1 what step 1 sends back
 * through the dynamics and c the factor: 1/2 by default, 1 in MuZero's pseudocode (where it is
 * the loss's exact gradient), 0 for step 0's alone. So the gradient with c is g0 + 2c (half - g0).
 */
static void test_root_gradient_factor(void **state) {
  (void)state;
  float *g0[4], *half[4];
  size_t n0[4], nh[4];
  after_one_update(false, 0, 0.5, true, g0, n0);
  after_one_update(false, 1, 0.5, true, half, nh);
  assert_int_equal(n0[0], nh[0]);
  const double factors[] = {0, 0.25, 1};
  for (size_t f = 0; f < sizeof factors / sizeof *factors; f++) {
    float *g[4];
    size_t n[4];
    after_one_update(false, 1, factors[f], true, g, n);
    double worst = 0, scale = 0, step1 = 0;
    for (size_t i = 0; i < nh[0]; i++) {
      double want = g0[0][i] + 2 * factors[f] * ((double)half[0][i] - g0[0][i]);
      worst = fmax(worst, fabs(g[0][i] - want));
      scale = fmax(scale, fabs(half[0][i]));
      step1 = fmax(step1, fabs((double)half[0][i] - g0[0][i]));
    }
    assert_true(step1 > 1e-3 * scale); /* step 1 does reach the representation */
    if (worst > 1e-4 * scale)
      fail_msg("factor %g: the gradient differs from g0 + 2c (half - g0) by %g (of %g)", factors[f],
               worst, scale);
    free_modules(g);
  }
  free_modules(g0);
  free_modules(half);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_learns),
      cmocka_unit_test(test_learns_with_siblings),
      cmocka_unit_test(test_learns_with_action_features),
      cmocka_unit_test(test_batch_matches_replay),
      cmocka_unit_test(test_batch_sibling_paths),
      cmocka_unit_test(test_losses_from_batch),
      cmocka_unit_test(test_priorities_from_batch),
      cmocka_unit_test(test_sibling_depth_mismatch),
      cmocka_unit_test(test_deterministic_and_target),
      cmocka_unit_test(test_root_gradient_reaches_only_the_representation),
      cmocka_unit_test(test_root_gradient_factor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
