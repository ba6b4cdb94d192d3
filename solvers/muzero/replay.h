/* mallocMuZero's replay buffer: self-play trajectories stored as rows in a ring sized in
 * transitions (not games), with n-step value targets and K-step unroll windows.
 *
 * Layout. A trajectory (a whole episode, or a segment of one on big workloads) of L decisions is
 * stored as L + 1 consecutive rows: one per decision (observation, legal mask, action, reward,
 * search policy target, search value) and a final row holding only the observation after the
 * last decision, flagged terminal when the episode ended there (value 0 beyond) or truncated when
 * it was a segment (the value beyond is bootstrapped from that observation). Capacity counts
 * rows; new rows overwrite the oldest. A trajectory only ever looks forward (to its later rows
 * and its final row), and later rows are newer, so the surviving rows of a partly overwritten
 * trajectory still see the rest of it: no row is ever stale.
 *
 * n-step target of the decision row t with final row f (discount gamma):
 *   z_t = sum_{i<n, t+i<f} gamma^i r_{t+i} + gamma^n' v(obs_{t+n'}),  n' = min(n, f - t)
 * where v(.) = 0 when t + n' is a terminal final row and otherwise the value the caller computes
 * for that observation (MuZero uses a periodically copied target network). mb_replay_nstep gives
 * the summed rewards, the row to bootstrap from (-1: none) and its discount.
 *
 * Sampling is uniform over decision rows (prioritised replay is not implemented). Single-threaded:
 * the trainer appends the actors' trajectories from its own thread. */
#ifndef MB_REPLAY_H
#define MB_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "rng.h"

typedef struct mb_replay {
  int64_t capacity; /* rows */
  int32_t obs_dim, A;
  int64_t head;         /* next row to write (ring index) */
  int64_t count;        /* rows in use */
  int64_t total_added;  /* decision rows ever added */
  int64_t trajectories; /* trajectories ever added */
  float *obs;           /* capacity x obs_dim */
  float *policy;        /* capacity x A */
  uint8_t *mask;        /* capacity x A */
  int32_t *action;      /* -1 on final rows */
  float *reward;        /* reward of the row's action */
  float *value;         /* search value at the row */
  int32_t *to_final;    /* rows until the trajectory's final row (0 on the final row) */
  uint8_t *terminal;    /* final rows: 1 terminal, 0 truncated */
} mb_replay;

/* One trajectory being built by an actor (growable, owned by the caller). */
typedef struct mb_trajectory {
  int32_t obs_dim, A;
  int32_t len, cap; /* decisions */
  float *obs;       /* (len + 1) x obs_dim: the last is the final observation */
  float *policy;    /* len x A */
  uint8_t *mask;    /* len x A */
  int32_t *action;
  float *reward;
  float *value;
  bool terminal; /* the episode ended after the last decision */
  double ret;    /* sum of rewards */
} mb_trajectory;

bool mb_trajectory_init(mb_trajectory *t, int32_t obs_dim, int32_t A, mb_error *err);
void mb_trajectory_free(mb_trajectory *t);
void mb_trajectory_clear(mb_trajectory *t);
/* Appends a decision: obs (obs_dim), mask, policy (A), action, reward, search value. */
bool mb_trajectory_push(mb_trajectory *t, const float *obs, const uint8_t *mask,
                        const float *policy, int32_t action, float reward, float value,
                        mb_error *err);
/* Sets the observation after the last decision and whether the episode ended there. */
bool mb_trajectory_finish(mb_trajectory *t, const float *final_obs, bool terminal, mb_error *err);

bool mb_replay_init(mb_replay *r, int64_t capacity, int32_t obs_dim, int32_t A, mb_error *err);
void mb_replay_free(mb_replay *r);
/* Adds a finished trajectory (len >= 1, len + 1 <= capacity), evicting the oldest. */
bool mb_replay_add(mb_replay *r, const mb_trajectory *t, mb_error *err);
/* Decision rows stored. */
int64_t mb_replay_decisions(const mb_replay *r);
/* A uniformly drawn decision row (ring index), -1 when empty. */
int64_t mb_replay_sample(const mb_replay *r, mb_rng *rng);
/* Ring index of the row k steps after `row` in its trajectory, clamped at its final row; and
 * whether it is past the final row (absorbing: no policy/value/reward target). */
int64_t mb_replay_offset(const mb_replay *r, int64_t row, int32_t k, bool *past_end);
/* n-step target parts for row (a decision row or a final row): *reward_sum, *boot_row (-1 when
 * the target ends in a terminal state), *boot_discount = gamma^n'. */
void mb_replay_nstep(const mb_replay *r, int64_t row, int32_t n, double gamma, double *reward_sum,
                     int64_t *boot_row, double *boot_discount);

#endif
