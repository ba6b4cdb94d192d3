/* Tests of the replay buffer (solvers/muzero/replay.h): capacity in transitions, n-step targets
 * on a hand-made episode (terminal and truncated), unroll offsets past the end, and overwriting
 * of the oldest rows; prioritised sampling: the sum tree against brute-force sums under random
 * adds, evictions and updates, draw frequencies against p^alpha / sum p^alpha, final and evicted
 * rows never drawn, importance weights against their formula, equal priorities = uniform; saving
 * and restoring (train_state.h): a wrapped buffer with priorities and sibling paths comes back
 * field for field, draws the same rows and grows the same way afterwards, and a buffer of another
 * shape or a damaged row is refused with the field named; a training state's counters come back
 * exactly, and a wrong format, learner stream or update debt is refused with the attribute named;
 * the names of files beside a checkpoint, at their edges.
 * Expected values are computed here from the definitions. */
#include "support.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "nn_io.h"
#include "replay.h"
#include "rng.h"
#include "train_state.h"

enum { D = 3, A = 4 };

/* An episode of `len` decisions with reward r_i = (i + 1) / 10, observation (id, i, 0). */
static void make_traj(mb_trajectory *t, int id, int len, bool terminal) {
  mb_error err = {{0}};
  mb_trajectory_clear(t);
  uint8_t mask[A] = {1, 1, 0, 1};
  float pol[A] = {0.5f, 0.25f, 0.0f, 0.25f};
  for (int i = 0; i < len; i++) {
    float obs[D] = {(float)id, (float)i, 0};
    assert_true(mb_trajectory_push(t, obs, mask, pol, i % 2, (float)(i + 1) / 10.0f, 0.0f, &err));
  }
  float fin[D] = {(float)id, (float)len, 1};
  assert_true(mb_trajectory_finish(t, fin, terminal, &err));
}

/* Sibling paths: stored with their decision row (actions, rewards, observations, length,
 * terminal), length 0 on decisions without one and on final rows, absent when the buffer does
 * not enable them; misuse is refused. Rows wrap around the ring like the others. */
static void test_sibling_transitions(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  float obs[2 * D] = {1, 2, 3, 4, 5, 6};
  int32_t one[1] = {1}, two[2] = {3, 0};
  float r1[1] = {0.5f}, r2[2] = {0.25f, 0.125f};
  assert_false(mb_trajectory_set_sibling(&t, 1, one, r1, obs, false, &err)); /* not enabled */
  assert_non_null(strstr(err.message, "not enabled"));
  assert_false(mb_trajectory_enable_siblings(&t, 0, &err));
  assert_false(mb_trajectory_enable_siblings(&t, MB_SIBLING_MAX_DEPTH + 1, &err));
  assert_true(mb_trajectory_enable_siblings(&t, 2, &err));
  assert_false(mb_trajectory_set_sibling(&t, 1, one, r1, obs, false, &err)); /* no decision */
  mb_replay r, plain, cut;
  assert_true(mb_replay_init(&r, 7, D, A, &err));
  assert_true(mb_replay_init(&plain, 7, D, A, &err));
  assert_true(mb_replay_init(&cut, 7, D, A, &err));
  assert_true(mb_replay_enable_siblings(&r, 2, &err));
  assert_true(mb_replay_enable_siblings(&r, 2, &err)); /* again: no change */
  assert_false(mb_replay_enable_siblings(&r, 3, &err));
  assert_true(mb_replay_enable_siblings(&cut, 1, &err));
  for (int ep = 0; ep < 3; ep++) {
    make_traj(&t, ep, 3, ep == 2);
    /* make_traj plays i % 2; siblings on decisions 0 and 2 only */
    int32_t taken[1] = {t.action[2]}, bad[2] = {1, A};
    assert_false(mb_trajectory_set_sibling(&t, 1, taken, r1, obs, false, &err));
    assert_non_null(strstr(err.message, "another action"));
    assert_false(mb_trajectory_set_sibling(&t, 3, two, r2, obs, false, &err)); /* too long */
    assert_false(mb_trajectory_set_sibling(&t, 2, bad, r2, obs, false, &err));
    float o0[2 * D] = {(float)ep, 0, 9, (float)ep, 0, 10};
    float r0[2] = {0.25f + (float)ep, 0.5f};
    t.len = 1; /* attach to decision 0, then restore the length */
    assert_true(mb_trajectory_set_sibling(&t, 2, two, r0, o0, ep == 1, &err));
    t.len = 3;
    float o2[D] = {(float)ep, 2, 9};
    assert_true(mb_trajectory_set_sibling(&t, 1, one, r1, o2, true, &err));
    assert_true(mb_replay_add(&r, &t, &err));
    assert_true(mb_replay_add(&plain, &t, &err));
    assert_true(mb_replay_add(&cut, &t, &err));
    /* the newest trajectory sits in the 4 rows before head */
    int64_t base = (r.head - 4 + r.capacity) % r.capacity;
    int64_t row0 = base, row1 = (base + 1) % r.capacity, row2 = (base + 2) % r.capacity,
            fin = (base + 3) % r.capacity;
    assert_int_equal(r.sib_len[row0], 2);
    assert_int_equal(r.sib_action[row0 * 2], 3);
    assert_int_equal(r.sib_action[row0 * 2 + 1], 0);
    assert_true(r.sib_reward[row0 * 2] == 0.25f + (float)ep);
    assert_true(r.sib_reward[row0 * 2 + 1] == 0.5f);
    assert_memory_equal(r.sib_obs + row0 * 2 * D, o0, sizeof o0);
    assert_int_equal(r.sib_terminal[row0], ep == 1);
    assert_int_equal(r.sib_len[row1], 0);
    assert_int_equal(r.sib_action[row1 * 2], -1);
    assert_int_equal(r.sib_len[row2], 1);
    assert_int_equal(r.sib_action[row2 * 2], 1);
    assert_int_equal(r.sib_action[row2 * 2 + 1], -1);
    assert_int_equal(r.sib_terminal[row2], 1);
    assert_memory_equal(r.sib_obs + row2 * 2 * D, o2, sizeof o2);
    assert_int_equal(r.sib_len[fin], 0);
    /* value target parts: only the first step of row0's path has a later step */
    double sum, disc;
    assert_true(mb_replay_sibling_target(&r, row0, 0, 0.5, &sum, &disc));
    assert_true(sum == 0.5 && disc == (ep == 1 ? 0.0 : 0.5));
    assert_false(mb_replay_sibling_target(&r, row0, 1, 0.5, &sum, &disc));
    assert_false(mb_replay_sibling_target(&r, row2, 0, 0.5, &sum, &disc));
    assert_true(sum == 0 && disc == 0);
    assert_false(mb_replay_sibling_target(&plain, row0, 0, 0.5, &sum, &disc));
    /* a depth-1 buffer keeps the first step; the cut path no longer ends the episode */
    assert_int_equal(cut.sib_len[row0], 1);
    assert_int_equal(cut.sib_action[row0], 3);
    assert_memory_equal(cut.sib_obs + row0 * D, o0, D * sizeof(float));
    assert_int_equal(cut.sib_terminal[row0], 0);
    assert_int_equal(cut.sib_len[row2], 1);
    assert_int_equal(cut.sib_terminal[row2], 1);
  }
  assert_null(plain.sib_action);
  mb_replay_free(&plain);
  mb_replay_free(&cut);
  mb_replay_free(&r);
  /* enabling after a decision is refused */
  mb_trajectory_clear(&t);
  make_traj(&t, 0, 1, true);
  mb_trajectory u;
  assert_true(mb_trajectory_init(&u, D, A, &err));
  uint8_t mask[A] = {1, 1, 1, 1};
  float pol[A] = {0.25f, 0.25f, 0.25f, 0.25f};
  assert_true(mb_trajectory_push(&u, obs, mask, pol, 0, 0, 0, &err));
  assert_false(mb_trajectory_enable_siblings(&u, 1, &err));
  mb_trajectory_free(&u);
  mb_trajectory_free(&t);
}

static void test_nstep_terminal(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  assert_true(mb_replay_init(&r, 100, D, A, &err));
  make_traj(&t, 1, 6, true);
  assert_true(mb_replay_add(&r, &t, &err));
  assert_int_equal(r.count, 7); /* 6 decisions + final row */
  assert_int_equal(mb_replay_decisions(&r), 6);
  double gamma = 0.9;
  /* n = 0 (train --td-steps 0): no rewards, the value of the row's own observation */
  for (int row = 0; row < 6; row++)
    for (int n = 0; n <= 8; n++) {
      double sum, disc;
      int64_t boot;
      mb_replay_nstep(&r, row, n, gamma, &sum, &boot, &disc);
      double want = 0, d = 1;
      int steps = n < 6 - row ? n : 6 - row;
      for (int i = 0; i < steps; i++, d *= gamma) want += d * (row + i + 1) / 10.0;
      assert_true(fabs(sum - want) < 1e-6);
      assert_true(fabs(disc - d) < 1e-12);
      if (row + n >= 6) {
        assert_int_equal(boot, -1); /* terminal: nothing to bootstrap */
      } else {
        assert_int_equal(boot, row + n);
        assert_true(r.obs[boot * D + 1] == (float)(row + n));
      }
    }
  /* at the terminal final row itself there is nothing to bootstrap, for any n */
  for (int n = 0; n <= 2; n++) {
    double sum, disc;
    int64_t boot;
    mb_replay_nstep(&r, 6, n, gamma, &sum, &boot, &disc);
    assert_true(sum == 0 && disc == 1);
    assert_int_equal(boot, -1);
  }
  /* unroll offsets clamp at the final row and flag the absorbing steps */
  bool past;
  assert_int_equal(mb_replay_offset(&r, 4, 1, &past), 5);
  assert_false(past);
  assert_int_equal(mb_replay_offset(&r, 4, 2, &past), 6);
  assert_false(past);
  assert_int_equal(mb_replay_offset(&r, 4, 3, &past), 6);
  assert_true(past);
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

static void test_nstep_truncated(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  assert_true(mb_replay_init(&r, 100, D, A, &err));
  make_traj(&t, 2, 4, false);
  assert_true(mb_replay_add(&r, &t, &err));
  double sum, disc;
  int64_t boot;
  mb_replay_nstep(&r, 1, 10, 1.0, &sum, &boot, &disc);
  /* rewards 0.2 + 0.3 + 0.4, then bootstrap from the final (truncation) observation */
  assert_true(fabs(sum - 0.9) < 1e-6);
  assert_int_equal(boot, 4);
  assert_true(r.obs[boot * D + 2] == 1.0f);
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

static void test_capacity_in_transitions(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  assert_true(mb_replay_init(&r, 20, D, A, &err));
  mb_rng rng;
  mb_rng_seed(&rng, 5);
  for (int id = 0; id < 10; id++) {
    make_traj(&t, id, 1 + id % 5, id % 2 == 0);
    assert_true(mb_replay_add(&r, &t, &err));
    assert_true(r.count <= 20);
    /* every surviving decision row still reaches its own final row */
    for (int64_t row = 0; row < r.count; row++) {
      if (r.action[row] < 0) continue;
      bool past;
      int64_t fin = mb_replay_offset(&r, row, r.to_final[row], &past);
      assert_int_equal(r.action[fin], -1);
      assert_true(r.obs[fin * D] == r.obs[row * D]); /* same trajectory id */
    }
    int64_t s = mb_replay_sample(&r, &rng);
    assert_true(s >= 0 && r.action[s] >= 0);
  }
  assert_int_equal(r.count, 20);
  /* a trajectory longer than the buffer is refused with a message */
  make_traj(&t, 99, 25, true);
  assert_false(mb_replay_add(&r, &t, &err));
  assert_non_null(strstr(err.message, "does not fit"));
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

/* Every row holds its own step's fields: observation, policy target, mask, action, reward,
 * value, rows to the final row, terminal flag; a final row has the final observation, a zero
 * policy and mask and action -1. Each step's fields differ from every other step's, and a
 * second trajectory wraps around the ring over the first one's rows. */
static void test_rows_copy_the_trajectory(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  assert_true(mb_replay_init(&r, 6, D, A, &err));
  for (int ep = 0; ep < 2; ep++) {
    mb_trajectory_clear(&t);
    const int len = 4;
    for (int i = 0; i < len; i++) {
      float obs[D] = {(float)ep, (float)i, 0.5f};
      float pol[A] = {0, 0, 0, 0};
      uint8_t mask[A] = {0, 0, 0, 0};
      pol[i % A] = 0.75f;
      pol[(i + 1) % A] = 0.25f;
      mask[i % A] = mask[(i + 1) % A] = 1;
      assert_true(mb_trajectory_push(&t, obs, mask, pol, i % A, 0.1f * (float)(i + 1),
                                     -0.01f * (float)i, &err));
    }
    float fin[D] = {(float)ep, (float)len, 1};
    assert_true(mb_trajectory_finish(&t, fin, ep == 0, &err));
    int64_t first = r.head;
    assert_true(mb_replay_add(&r, &t, &err));
    for (int i = 0; i <= len; i++) {
      int64_t row = (first + i) % r.capacity;
      const float *o = r.obs + row * D;
      assert_true(o[0] == (float)ep && o[1] == (float)i && o[2] == (i < len ? 0.5f : 1.0f));
      assert_int_equal(r.to_final[row], len - i);
      for (int a = 0; a < A; a++) {
        bool first_choice = i < len && a == i % A, second = i < len && a == (i + 1) % A;
        float want = first_choice ? 0.75f : second ? 0.25f : 0.0f;
        assert_true(r.policy[row * A + a] == want);
        assert_int_equal(r.mask[row * A + a], first_choice || second);
      }
      if (i < len) {
        assert_int_equal(r.action[row], i % A);
        assert_true(r.reward[row] == 0.1f * (float)(i + 1));
        assert_true(r.value[row] == -0.01f * (float)i);
        assert_int_equal(r.terminal[row], 0);
      } else {
        assert_int_equal(r.action[row], -1);
        assert_int_equal(r.terminal[row], ep == 0);
      }
    }
  }
  assert_int_equal(r.count, 6);
  assert_int_equal(mb_replay_decisions(&r), 4); /* the first's decisions were overwritten */
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

static void test_bad_input(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_replay r;
  assert_false(mb_replay_init(&r, 1, D, A, &err));
  assert_non_null(strstr(err.message, "capacity"));
  assert_false(mb_replay_init(&r, ((int64_t)1 << 30) + 1, D, A, &err));
  assert_non_null(strstr(err.message, "capacity"));
  assert_false(mb_replay_init(&r, 4, 0, A, &err));
  assert_non_null(strstr(err.message, "obs_dim 0"));
  assert_false(mb_replay_init(&r, 4, D, 0, &err));
  assert_non_null(strstr(err.message, "actions 0"));
  assert_true(mb_replay_init(&r, 2, D, A, &err)); /* the smallest: a decision and its final row */
  assert_false(mb_replay_enable_siblings(&r, 0, &err));
  assert_non_null(strstr(err.message, "sibling depth 0"));
  assert_false(mb_replay_enable_siblings(&r, MB_SIBLING_MAX_DEPTH + 1, &err));
  assert_true(mb_replay_enable_siblings(&r, MB_SIBLING_MAX_DEPTH, &err));
  mb_replay_free(&r);
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  float obs[D] = {0}, pol[A] = {1, 0, 0, 0};
  uint8_t mask[A] = {1, 1, 1, 1};
  assert_false(mb_trajectory_push(&t, obs, mask, pol, A, 0, 0, &err));
  assert_non_null(strstr(err.message, "action"));
  /* sibling paths of the smallest depth, one step */
  assert_true(mb_trajectory_enable_siblings(&t, 1, &err));
  assert_true(mb_trajectory_push(&t, obs, mask, pol, 0, 0, 0, &err));
  int32_t sibling[1] = {2};
  float sib_reward[1] = {0.5f};
  if (!mb_trajectory_set_sibling(&t, 1, sibling, sib_reward, obs, true, &err))
    fail_msg("%s", err.message);
  assert_int_equal(t.sib_len[0], 1);
  mb_trajectory_free(&t);
}

/* ---- prioritised replay ---- */

/* Brute-force view of the priorities: sum, min and max of p^alpha over the decision rows, their
 * number, and checks that final rows have priority 0. */
typedef struct brute {
  double sum, min, max;
  int64_t n;
} brute;

static brute brute_force(const mb_replay *r) {
  brute b = {0, INFINITY, 0, 0};
  for (int64_t i = 0; i < r->count; i++) {
    double p = mb_replay_priority(r, i);
    if (r->action[i] < 0) {
      assert_true(p == 0);
      continue;
    }
    assert_true(p > 0);
    double pa = pow(p, r->prio.alpha);
    b.sum += pa;
    b.min = fmin(b.min, pa);
    b.max = fmax(b.max, pa);
    b.n++;
  }
  return b;
}

static void assert_close(double got, double want, double rel) {
  if (!(fabs(got - want) <= rel * fabs(want)))
    fail_msg("got %.17g, want %.17g (relative tolerance %g)", got, want, rel);
}

static void test_priority_tree_matches_brute_force(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  assert_true(mb_replay_init(&r, 53, D, A, &err)); /* not a power of two */
  assert_true(mb_replay_enable_priority(&r, 0.6, &err));
  assert_int_equal(r.prio.leaves, 64);
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  for (int it = 0; it < 400; it++) {
    if (it % 7 == 0) { /* adds wrap the ring many times: evictions */
      make_traj(&t, it, 1 + (int)mb_rng_below(&rng, 9), it % 2 == 0);
      assert_true(mb_replay_add(&r, &t, &err));
    } else { /* updates, also on final rows and outside the stored rows (both ignored) */
      int64_t row = (int64_t)mb_rng_below(&rng, 60);
      mb_replay_set_priority(&r, row, (mb_rng_uniform(&rng) - 0.5) * 20);
    }
    brute b = brute_force(&r);
    assert_int_equal(b.n, mb_replay_decisions(&r));
    assert_close(r.prio.sum[1], b.sum, 1e-12);
    assert_true(r.prio.min[1] == b.min);
    assert_close(pow(r.prio.max[1], r.prio.alpha), b.max, 1e-12);
  }
  /* a new row enters with the largest stored priority */
  double pmax = r.prio.max[1];
  make_traj(&t, 999, 2, true);
  assert_true(mb_replay_add(&r, &t, &err));
  int64_t first = (r.head - 3 + r.capacity) % r.capacity;
  assert_true(mb_replay_priority(&r, first) <= pmax && mb_replay_priority(&r, first) > 0);
  assert_true(mb_replay_priority(&r, first) == r.prio.max[1]);
  /* a new alpha keeps the raw priorities and rebuilds the tree */
  assert_true(mb_replay_enable_priority(&r, 1.0, &err));
  brute b = brute_force(&r);
  assert_close(r.prio.sum[1], b.sum, 1e-12);
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

/* Draws n rows; counts[row] += 1. */
static void draw(const mb_replay *r, mb_rng *rng, int n, double beta, int64_t *counts) {
  for (int i = 0; i < n; i++) {
    double w = -1;
    int64_t row = mb_replay_sample_prioritised(r, rng, beta, &w);
    assert_true(row >= 0 && row < r->count);
    assert_true(w > 0 && w <= 1);
    counts[row]++;
  }
}

static void test_priority_frequencies(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  enum { CAP = 40, DRAWS = 200000 };
  assert_true(mb_replay_init(&r, CAP, D, A, &err));
  assert_true(mb_replay_enable_priority(&r, 0.7, &err));
  for (int id = 0; id < 6; id++) {
    make_traj(&t, id, 2 + id, id % 2 == 0);
    assert_true(mb_replay_add(&r, &t, &err));
  }
  /* priorities spanning three orders of magnitude */
  for (int64_t i = 0; i < r.count; i++)
    mb_replay_set_priority(&r, i, 0.01 * (double)((i * 7) % 23 + 1) * (i % 3 ? 1 : 10));
  brute b = brute_force(&r);
  int64_t counts[CAP] = {0};
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  draw(&r, &rng, DRAWS, 0.5, counts);
  double chi2 = 0, worst = 0;
  int df = -1, checked = 0;
  for (int64_t i = 0; i < r.count; i++) {
    if (r.action[i] < 0) {
      assert_int_equal(counts[i], 0); /* final rows are never drawn */
      continue;
    }
    double want = DRAWS * pow(mb_replay_priority(&r, i), r.prio.alpha) / b.sum;
    chi2 += (counts[i] - want) * (counts[i] - want) / want;
    df++;
    if (want >= 10000) { /* the big rows: relative error, sd below 1% */
      worst = fmax(worst, fabs(counts[i] - want) / want);
      checked++;
    }
  }
  print_message(
      "prioritised draws: chi-square %.1f with %d degrees of freedom, max relative "
      "error %.4f on %d rows\n",
      chi2, df, worst, checked);
  assert_true(checked >= 3);
  assert_true(worst < 0.03);
  /* chi-square 0.999 quantile is below df + 4.5 sqrt(2 df) for df in 10..100 */
  assert_true(df >= 10);
  assert_true(chi2 < df + 4.5 * sqrt(2.0 * df));
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

static void test_priority_is_weights(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  assert_true(mb_replay_init(&r, 30, D, A, &err));
  assert_true(mb_replay_enable_priority(&r, 0.8, &err));
  for (int id = 0; id < 5; id++) {
    make_traj(&t, id, 4, true);
    assert_true(mb_replay_add(&r, &t, &err));
  }
  mb_rng rng;
  mb_rng_seed(&rng, 8);
  for (int64_t i = 0; i < r.count; i++) mb_replay_set_priority(&r, i, 5 * mb_rng_uniform(&rng));
  brute b = brute_force(&r);
  for (int k = 0; k < 5; k++) {
    double beta = 0.25 * k, maxw = 0;
    for (int64_t i = 0; i < r.count; i++)
      if (r.action[i] >= 0)
        maxw = fmax(maxw, pow(b.n * pow(mb_replay_priority(&r, i), r.prio.alpha) / b.sum, -beta));
    for (int n = 0; n < 2000; n++) {
      double w;
      int64_t row = mb_replay_sample_prioritised(&r, &rng, beta, &w);
      assert_true(row >= 0 && r.action[row] >= 0);
      double P = pow(mb_replay_priority(&r, row), r.prio.alpha) / b.sum;
      assert_close(w, pow(b.n * P, -beta) / maxw, 1e-9);
      assert_true(w <= 1);
    }
  }
  /* not enabled, or nothing stored: no row */
  mb_replay u;
  assert_true(mb_replay_init(&u, 10, D, A, &err));
  assert_int_equal(mb_replay_sample_prioritised(&u, &rng, 0.5, NULL), -1);
  assert_true(mb_replay_enable_priority(&u, 0.5, &err));
  assert_int_equal(mb_replay_sample_prioritised(&u, &rng, 0.5, NULL), -1);
  mb_replay_free(&u);
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

/* A high-priority row that is evicted, and the final row that takes its place, are never drawn;
 * the new rows do not inherit the evicted row's priority. */
static void test_priority_eviction(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  assert_true(mb_replay_init(&r, 8, D, A, &err));
  assert_true(mb_replay_enable_priority(&r, 1.0, &err));
  make_traj(&t, 1, 3, true); /* rows 0..3, final at 3 */
  assert_true(mb_replay_add(&r, &t, &err));
  mb_replay_set_priority(&r, 0, 1000);
  mb_replay_set_priority(&r, 1, 1000);
  mb_replay_set_priority(&r, 3, 1000); /* final row: ignored */
  assert_true(mb_replay_priority(&r, 3) == 0);
  make_traj(&t, 2, 3, true); /* rows 4..7: enter with the maximum, 1000 + 1e-6 */
  assert_true(mb_replay_add(&r, &t, &err));
  assert_close(mb_replay_priority(&r, 4), 1000 + 1e-6, 1e-15);
  for (int64_t i = 4; i < 7; i++) mb_replay_set_priority(&r, i, 1);
  make_traj(&t, 3, 1, true); /* rows 0 (decision) and 1 (final): evicts rows 0 and 1 */
  assert_true(mb_replay_add(&r, &t, &err));
  assert_true(mb_replay_priority(&r, 1) == 0);
  /* the new decision row gets the largest surviving priority (rows 4..6), not the evicted 1000 */
  assert_close(mb_replay_priority(&r, 0), 1 + 1e-6, 1e-12);
  assert_int_equal(mb_replay_decisions(&r), 1 + 1 + 3);
  mb_rng rng;
  mb_rng_seed(&rng, 2);
  int64_t counts[8] = {0};
  draw(&r, &rng, 20000, 0.4, counts);
  assert_int_equal(counts[1], 0); /* evicted (now a final row) */
  assert_int_equal(counts[3], 0); /* final */
  assert_int_equal(counts[7], 0); /* final */
  for (int64_t i = 0; i < 8; i++)
    if (r.action[i] >= 0) assert_true(counts[i] > 0);
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

static void test_priority_equal_is_uniform(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  mb_replay r;
  enum { CAP = 32, DRAWS = 200000 };
  assert_true(mb_replay_init(&r, CAP, D, A, &err));
  /* rows stored before priority is enabled get priority 1 */
  for (int id = 0; id < 4; id++) {
    make_traj(&t, id, 5, false);
    assert_true(mb_replay_add(&r, &t, &err));
  }
  assert_true(mb_replay_enable_priority(&r, 0.9, &err));
  mb_rng rng;
  mb_rng_seed(&rng, 4);
  int64_t counts[CAP] = {0};
  for (int i = 0; i < DRAWS; i++) {
    double w;
    int64_t row = mb_replay_sample_prioritised(&r, &rng, 0.7, &w);
    assert_true(w == 1.0); /* equal priorities: no correction */
    counts[row]++;
  }
  double want = (double)DRAWS / (double)mb_replay_decisions(&r), worst = 0;
  for (int64_t i = 0; i < r.count; i++) {
    if (r.action[i] < 0) {
      assert_int_equal(counts[i], 0);
      continue;
    }
    worst = fmax(worst, fabs(counts[i] - want) / want);
  }
  print_message("equal priorities: max relative deviation from uniform %.4f\n", worst);
  assert_true(worst < 0.03);
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

static void test_priority_bad_input(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_replay r;
  assert_true(mb_replay_init(&r, 10, D, A, &err));
  double bad[] = {0, -0.5, 1.5, NAN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_false(mb_replay_enable_priority(&r, bad[i], &err));
    assert_non_null(strstr(err.message, "alpha"));
  }
  assert_true(mb_replay_enable_priority(&r, 0.5, &err));
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  make_traj(&t, 1, 2, true);
  assert_true(mb_replay_add(&r, &t, &err));
  double before = r.prio.sum[1];
  mb_replay_set_priority(&r, 0, NAN);      /* not finite: ignored */
  mb_replay_set_priority(&r, 0, INFINITY); /* not finite: ignored */
  mb_replay_set_priority(&r, -1, 3);       /* outside: ignored */
  mb_replay_set_priority(&r, 9, 3);        /* not stored: ignored */
  assert_true(r.prio.sum[1] == before);
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

/* A buffer of capacity 11 with sibling paths (depth 2) and priorities (alpha 0.7), wrapped. */
static void fill_for_saving(mb_replay *r, mb_trajectory *t, int first_ep, int episodes) {
  mb_error err = {{0}};
  for (int ep = first_ep; ep < first_ep + episodes; ep++) {
    make_traj(t, ep, 2 + ep % 2, ep % 3 == 0);
    /* a two-step path after decision 0 (rebuilt: make_traj clears the trajectory) */
    mb_trajectory_clear(t);
    uint8_t mask[A] = {1, 1, 0, 1};
    float pol[A] = {0.5f, 0.25f, 0.0f, 0.25f};
    for (int i = 0; i < 2 + ep % 2; i++) {
      float obs[D] = {(float)ep, (float)i, 0};
      assert_true(mb_trajectory_push(t, obs, mask, pol, i % 2, 0.1f * (float)(i + 1), 0, &err));
      if (i == 0) {
        int32_t acts[2] = {3, 0};
        float rews[2] = {0.5f, (float)ep}, sobs[2 * D] = {(float)ep, 7, 7, (float)ep, 8, 8};
        assert_true(mb_trajectory_set_sibling(t, 1 + ep % 2, acts, rews, sobs, ep == 4, &err));
      }
    }
    float fin[D] = {(float)ep, 9, 1};
    assert_true(mb_trajectory_finish(t, fin, ep % 3 == 0, &err));
    assert_true(mb_replay_add(r, t, &err));
    mb_replay_set_priority(r, (r->head + r->capacity - 2) % r->capacity, 0.25 * (ep + 1));
  }
}

static void assert_same_buffers(const mb_replay *a, const mb_replay *b) {
  assert_int_equal(a->head, b->head);
  assert_int_equal(a->count, b->count);
  assert_int_equal(a->total_added, b->total_added);
  assert_int_equal(a->trajectories, b->trajectories);
  assert_int_equal(a->decision_rows, b->decision_rows);
  size_t n = (size_t)a->count, P = (size_t)a->sib_depth;
  assert_memory_equal(a->obs, b->obs, n * D * sizeof(float));
  assert_memory_equal(a->policy, b->policy, n * A * sizeof(float));
  assert_memory_equal(a->mask, b->mask, n * A);
  assert_memory_equal(a->action, b->action, n * sizeof(int32_t));
  assert_memory_equal(a->reward, b->reward, n * sizeof(float));
  assert_memory_equal(a->value, b->value, n * sizeof(float));
  assert_memory_equal(a->to_final, b->to_final, n * sizeof(int32_t));
  assert_memory_equal(a->terminal, b->terminal, n);
  assert_memory_equal(a->sib_action, b->sib_action, n * P * sizeof(int32_t));
  assert_memory_equal(a->sib_reward, b->sib_reward, n * P * sizeof(float));
  assert_memory_equal(a->sib_obs, b->sib_obs, n * P * D * sizeof(float));
  assert_memory_equal(a->sib_len, b->sib_len, n);
  assert_memory_equal(a->sib_terminal, b->sib_terminal, n);
  assert_memory_equal(a->prio.p, b->prio.p, n * sizeof(double));
  size_t tree = 2 * (size_t)a->prio.leaves;
  assert_memory_equal(a->prio.sum, b->prio.sum, tree * sizeof(double));
  assert_memory_equal(a->prio.min, b->prio.min, tree * sizeof(double));
  assert_memory_equal(a->prio.max, b->prio.max, tree * sizeof(double));
}

static void shaped(mb_replay *r, int64_t capacity, int32_t sib_depth, double alpha) {
  mb_error err = {{0}};
  assert_true(mb_replay_init(r, capacity, D, A, &err));
  if (sib_depth > 0) assert_true(mb_replay_enable_siblings(r, sib_depth, &err));
  if (alpha > 0) assert_true(mb_replay_enable_priority(r, alpha, &err));
}

/* Saves r as `name` in a fresh temporary directory and returns the path (for
 * mb_test_temp_remove). */
static char *save_to(const mb_replay *r, const char *name) {
  mb_error err = {{0}};
  char *path = mb_test_temp_path(name);
  mb_nn_file *f = mb_nn_file_create(path, &err);
  assert_non_null(f);
  assert_true(mb_replay_save(r, f, &err));
  assert_true(mb_nn_file_commit(f, &err));
  return path;
}

static bool load_from(mb_replay *r, const char *path, mb_error *err) {
  mb_nn_file *f = mb_nn_file_open(path, err);
  assert_non_null(f);
  bool ok = mb_replay_load(r, f, err);
  mb_nn_file_close(f);
  return ok;
}

/* Files beside a checkpoint: ".h5" replaced by the suffix (appended without it), and a name that
 * does not fit refused rather than cut short. */
static void test_checkpoint_beside(void **state) {
  (void)state;
  char out[32];
  assert_true(mb_checkpoint_beside("runs/a.h5", ".best.h5", out, sizeof out));
  assert_string_equal(out, "runs/a.best.h5");
  assert_true(mb_checkpoint_beside("agent", ".best.h5", out, sizeof out));
  assert_string_equal(out, "agent.best.h5");
  assert_true(mb_train_state_path("a.h5", out, sizeof out));
  assert_string_equal(out, "a.state.h5");
  assert_false(
      mb_checkpoint_beside("a-name-much-too-long-for-it.h5", ".state.h5", out, sizeof out));
  /* ".h5" alone is the extension; "h5" without its dot is a name */
  assert_true(mb_train_state_path(".h5", out, sizeof out));
  assert_string_equal(out, ".state.h5");
  assert_true(mb_train_state_path("h5", out, sizeof out));
  assert_string_equal(out, "h5.state.h5");
  /* the terminating zero counts: "a.state.h5" needs 11 bytes; nothing at all needs 1 */
  assert_true(mb_train_state_path("a.h5", out, 11));
  assert_false(mb_train_state_path("a.h5", out, 10));
  assert_true(mb_checkpoint_beside("", "", out, 1));
  assert_string_equal(out, "");
}

/* The state attributes mb_train_state_load reads, written by hand (with an empty replay buffer
 * of the default shape) so that each can be made wrong on its own. */
static char *write_state(const char *name, const char *format, const char *rng_hex, double owed) {
  mb_error err = {{0}};
  char *path = mb_test_temp_path(name);
  mb_nn_file *f = mb_nn_file_create(path, &err);
  assert_non_null(f);
  mb_replay empty;
  shaped(&empty, 11, 0, 0);
  assert_true(mb_nn_file_set_string(f, "state.format", format, &err) &&
              mb_nn_file_set_string(f, "state.learner_rng", rng_hex, &err) &&
              mb_nn_file_set_double(f, "state.owed", owed, &err) &&
              mb_nn_file_set_double(f, "state.selfplay_sum", 0, &err) &&
              mb_nn_file_set_double(f, "state.selfplay_n", 0, &err) &&
              mb_nn_file_set_double(f, "state.loss_sum", 0, &err) &&
              mb_nn_file_set_double(f, "state.loss_n", 0, &err) && mb_replay_save(&empty, f, &err));
  assert_true(mb_nn_file_commit(f, &err));
  mb_replay_free(&empty);
  return path;
}

/* A training state: the counters come back exactly (the learner's stream through every hex
 * digit, a debt of 0 updates, counts past 2^32), the buffer field for field, and the agent parts
 * load as a checkpoint; a state whose format, stream or debt is wrong is refused, naming the file
 * and the attribute. */
static void test_train_state_round_trip(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_agent_config cfg;
  mb_test_agent_config(&cfg, 24, 8, 8);
  mb_rng init;
  mb_rng_seed(&init, 3);
  mb_agent ag;
  assert_true(mb_agent_create(&ag, &cfg, &init, &err));
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  assert_true(mb_trajectory_enable_siblings(&t, 2, &err));
  mb_replay r, back;
  shaped(&r, 11, 2, 0.7);
  fill_for_saving(&r, &t, 0, 6);
  mb_train_counters c = {
      .owed = 0,
      .learner_rng = {{0x0123456789abcdefULL, 0xfedcba9876543210ULL, UINT64_MAX, 0}},
      .selfplay_sum = -2.75,
      .selfplay_n = 3,
      .loss_sum = 0.125,
      .loss_n = (int64_t)1 << 40};
  char *path = mb_test_temp_path("agent.state.h5");
  assert_true(mb_train_state_save(path, &ag, NULL, NULL, NULL, "unit test", &r, &c, &err));

  mb_train_counters got;
  memset(&got, 0xff, sizeof got);
  shaped(&back, 11, 2, 0.7);
  if (!mb_train_state_load(path, &back, &got, &err)) fail_msg("%s", err.message);
  assert_memory_equal(got.learner_rng.s, c.learner_rng.s, sizeof c.learner_rng.s);
  assert_true(got.owed == 0 && got.selfplay_sum == -2.75 && got.loss_sum == 0.125);
  assert_int_equal(got.selfplay_n, 3);
  assert_int_equal(got.loss_n, (int64_t)1 << 40);
  assert_same_buffers(&r, &back);
  mb_replay_free(&back);
  mb_agent same;
  if (!mb_agent_load(path, &same, NULL, NULL, NULL, &err)) fail_msg("%s", err.message);
  assert_int_equal(mb_agent_param_count(&same), mb_agent_param_count(&ag));
  mb_agent_free(&same);
  mb_test_temp_remove(path);

  const char *digits = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  char upper[65], letter_g[65];
  snprintf(upper, sizeof upper, "%s", digits);
  upper[10] = 'A';
  snprintf(letter_g, sizeof letter_g, "%s", digits);
  letter_g[63] = 'g';
  const struct {
    const char *format, *rng;
    double owed;
    const char *fault; /* NULL: loads */
  } cases[] = {
      {"mallocmuzero-train-state-1", digits, 0, NULL},
      {"mallocmuzero-train-state-1", digits, 999999999.5, NULL},
      {"mallocmuzero-train-state-1", digits, 1e9, "attribute state.owed = 1e+09"},
      {"mallocmuzero-train-state-1", digits, -0.5, "attribute state.owed = -0.5"},
      {"mallocmuzero-train-state-1", digits, NAN, "attribute state.owed = nan"},
      {"mallocmuzero-train-state-1", upper, 0, "attribute state.learner_rng"},
      {"mallocmuzero-train-state-1", letter_g, 0, "attribute state.learner_rng"},
      {"mallocmuzero-train-state-1", digits + 1, 0, "expected 64 hex digits"},
      {"mallocmuzero-train-state-2", digits, 0, "attribute state.format"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    path = write_state("handmade.state.h5", cases[i].format, cases[i].rng, cases[i].owed);
    shaped(&back, 11, 0, 0);
    memset(&got, 0, sizeof got);
    bool ok = mb_train_state_load(path, &back, &got, &err);
    if (!cases[i].fault) {
      if (!ok) fail_msg("case %zu: %s", i, err.message);
      assert_true(got.owed == cases[i].owed);
      assert_int_equal(got.learner_rng.s[0], 0x0123456789abcdefULL);
    } else {
      if (ok) fail_msg("case %zu loaded; expected '%s'", i, cases[i].fault);
      assert_non_null(strstr(err.message, cases[i].fault));
      assert_non_null(strstr(err.message, path));
    }
    mb_replay_free(&back);
    mb_test_temp_remove(path);
  }

  mb_replay_free(&r);
  mb_trajectory_free(&t);
  mb_agent_free(&ag);
}

static void test_save_load(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  assert_true(mb_trajectory_enable_siblings(&t, 2, &err));
  mb_replay r, back;
  shaped(&r, 11, 2, 0.7);
  fill_for_saving(&r, &t, 0, 6); /* 6 trajectories of 3-4 rows: the ring wraps */
  assert_true(r.count == r.capacity && r.total_added > r.capacity);
  char *path = save_to(&r, "replay.h5");
  shaped(&back, 11, 2, 0.7);
  assert_true(load_from(&back, path, &err));
  assert_same_buffers(&r, &back);
  /* the same draws, importance weights and n-step targets */
  mb_rng g1, g2;
  mb_rng_seed(&g1, 5);
  mb_rng_seed(&g2, 5);
  for (int i = 0; i < 200; i++) {
    double w1, w2;
    assert_int_equal(mb_replay_sample_prioritised(&r, &g1, 0.5, &w1),
                     mb_replay_sample_prioritised(&back, &g2, 0.5, &w2));
    assert_true(w1 == w2);
  }
  /* and both grow the same way */
  fill_for_saving(&r, &t, 6, 3);
  fill_for_saving(&back, &t, 6, 3);
  assert_same_buffers(&r, &back);
  mb_replay_free(&back);

  /* a buffer of another shape is refused, the field named */
  const struct {
    int64_t capacity;
    int32_t depth;
    double alpha;
    const char *field;
  } other[] = {{12, 2, 0.7, "replay.capacity"},
               {11, 1, 0.7, "replay.sib_depth"},
               {11, 2, 0, "replay.priority_alpha"},
               {11, 2, 0.5, "replay.priority_alpha"}};
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
    shaped(&back, other[i].capacity, other[i].depth, other[i].alpha);
    assert_false(load_from(&back, path, &err));
    assert_non_null(strstr(err.message, other[i].field));
    assert_non_null(strstr(err.message, path));
    mb_replay_free(&back);
  }
  mb_test_temp_remove(path);

  /* a damaged row (an action outside the game) is refused */
  r.action[2] = A + 3;
  path = save_to(&r, "replay_damaged.h5");
  shaped(&back, 11, 2, 0.7);
  assert_false(load_from(&back, path, &err));
  assert_non_null(strstr(err.message, "row 2 is damaged"));
  mb_replay_free(&back);
  mb_test_temp_remove(path);

  /* an empty buffer round-trips too */
  mb_replay empty;
  shaped(&empty, 11, 0, 0);
  path = save_to(&empty, "replay_empty.h5");
  shaped(&back, 11, 0, 0);
  assert_true(load_from(&back, path, &err));
  assert_int_equal(back.count, 0);
  assert_int_equal(mb_replay_sample(&back, &g1), -1);
  mb_replay_free(&back);
  mb_replay_free(&empty);
  mb_test_temp_remove(path);
  mb_replay_free(&r);
  mb_trajectory_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nstep_terminal),
      cmocka_unit_test(test_nstep_truncated),
      cmocka_unit_test(test_capacity_in_transitions),
      cmocka_unit_test(test_rows_copy_the_trajectory),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_priority_tree_matches_brute_force),
      cmocka_unit_test(test_priority_frequencies),
      cmocka_unit_test(test_priority_is_weights),
      cmocka_unit_test(test_priority_eviction),
      cmocka_unit_test(test_priority_equal_is_uniform),
      cmocka_unit_test(test_priority_bad_input),
      cmocka_unit_test(test_sibling_transitions),
      cmocka_unit_test(test_checkpoint_beside),
      cmocka_unit_test(test_save_load),
      cmocka_unit_test(test_train_state_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
