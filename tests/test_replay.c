/* Tests of the replay buffer (solvers/muzero/replay.h): capacity in transitions, n-step targets
 * on a hand-made episode (terminal and truncated), unroll offsets past the end, and overwriting
 * of the oldest rows. Expected values are computed here from the definitions. */
#include "support.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "replay.h"
#include "rng.h"

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
  for (int row = 0; row < 6; row++)
    for (int n = 1; n <= 8; n++) {
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

static void test_bad_input(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_replay r;
  assert_false(mb_replay_init(&r, 1, D, A, &err));
  assert_non_null(strstr(err.message, "capacity"));
  mb_trajectory t;
  assert_true(mb_trajectory_init(&t, D, A, &err));
  float obs[D] = {0}, pol[A] = {1, 0, 0, 0};
  uint8_t mask[A] = {1, 1, 1, 1};
  assert_false(mb_trajectory_push(&t, obs, mask, pol, A, 0, 0, &err));
  assert_non_null(strstr(err.message, "action"));
  mb_trajectory_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nstep_terminal),
      cmocka_unit_test(test_nstep_truncated),
      cmocka_unit_test(test_capacity_in_transitions),
      cmocka_unit_test(test_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
