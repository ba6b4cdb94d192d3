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
 * Sampling. mb_replay_sample draws decision rows uniformly. After mb_replay_enable_priority(alpha),
 * mb_replay_sample_prioritised draws row i with P(i) = p_i^alpha / sum_j p_j^alpha (prioritised
 * experience replay, Schaul et al. 2016) and returns its importance weight (N P(i))^-beta divided
 * by the largest weight over the stored rows, so weights lie in (0, 1]; N = decision rows stored.
 * New decision rows get the largest priority stored (1 in an empty buffer), so each is likely to
 * be drawn before its error is known; the learner then sets p_i = |error| + 1e-6 with
 * mb_replay_set_priority. Final rows have priority 0 and are never drawn.
 *
 * Priority layout: three complete binary trees over `leaves` (the power of two >= capacity)
 * leaves, stored heap-style (root at index 1, children of node j at 2j and 2j + 1, ring row i at
 * leaf leaves + i): `sum` holds p^alpha and the sums of subtrees (proportional sampling walks
 * down from the root), `min` the smallest p^alpha over decision rows (+inf elsewhere; gives the
 * largest importance weight) and `max` the largest raw p (0 elsewhere; gives the priority of new
 * rows). mb_replay_add first zeroes the leaves of the rows it overwrites (eviction: an evicted
 * row leaves nothing behind), then gives its decision rows the largest priority among the rows
 * that stay. A leaf change recomputes its ancestors from their children: O(log n) per change,
 * and sums do not drift however many updates are made.
 *
 * Single-threaded: the trainer appends the actors' trajectories from its own thread. */
#ifndef MB_REPLAY_H
#define MB_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "nn_io.h"
#include "rng.h"

/* Priorities of the rows (see "Priority layout" above); all NULL while sampling is uniform. */
typedef struct mb_replay_priorities {
  double alpha;   /* exponent of P(i), in (0, 1] */
  int64_t leaves; /* power of two >= capacity */
  double *p;      /* capacity: raw priority of each row (0 on final rows) */
  double *sum;    /* 2 x leaves: p^alpha and subtree sums */
  double *min;    /* 2 x leaves: min p^alpha over decision rows (+inf elsewhere) */
  double *max;    /* 2 x leaves: max raw p over decision rows (0 elsewhere) */
} mb_replay_priorities;

typedef struct mb_replay {
  int64_t capacity; /* rows */
  int32_t obs_dim, A;
  int64_t head;          /* next row to write (ring index) */
  int64_t count;         /* rows in use */
  int64_t total_added;   /* decision rows ever added */
  int64_t trajectories;  /* trajectories ever added */
  float *obs;            /* capacity x obs_dim */
  float *policy;         /* capacity x A */
  uint8_t *mask;         /* capacity x A */
  int32_t *action;       /* -1 on final rows */
  float *reward;         /* reward of the row's action */
  float *value;          /* search value at the row */
  int32_t *to_final;     /* rows until the trajectory's final row (0 on the final row) */
  uint8_t *terminal;     /* final rows: 1 terminal, 0 truncated */
  int64_t decision_rows; /* decision rows stored */
  mb_replay_priorities prio;
  /* Sibling paths (mb_replay_enable_siblings; NULL when off): per decision row, a path of up to
   * sib_depth steps tried from the same state in the real game: first another legal action (the
   * sibling), then the raw policy network's greedy moves. Step j's action, reward and the
   * observation it leads to are at [row * sib_depth + j]; sib_len is the number of steps (0: none
   * recorded) and sib_terminal whether the path's last step ended the episode. */
  int32_t sib_depth;
  int32_t *sib_action; /* capacity x sib_depth (-1 beyond the path) */
  float *sib_reward;   /* capacity x sib_depth */
  float *sib_obs;      /* capacity x sib_depth x obs_dim */
  uint8_t *sib_len;
  uint8_t *sib_terminal;
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
  /* sibling paths (mb_trajectory_enable_siblings): per decision, laid out as in mb_replay */
  int32_t sib_depth; /* 0: off */
  int32_t *sib_action;
  float *sib_reward;
  float *sib_obs; /* len x sib_depth x obs_dim */
  uint8_t *sib_len;
  uint8_t *sib_terminal;
} mb_trajectory;

bool mb_trajectory_init(mb_trajectory *t, int32_t obs_dim, int32_t A, mb_error *err);
void mb_trajectory_free(mb_trajectory *t);
void mb_trajectory_clear(mb_trajectory *t);
/* Appends a decision: obs (obs_dim), mask, policy (A), action, reward, search value. */
bool mb_trajectory_push(mb_trajectory *t, const float *obs, const uint8_t *mask,
                        const float *policy, int32_t action, float reward, float value,
                        mb_error *err);
/* Longest sibling path. */
#define MB_SIBLING_MAX_DEPTH 16
/* Records sibling paths of up to depth (1..MB_SIBLING_MAX_DEPTH) steps from now on (call before
 * the first push). */
bool mb_trajectory_enable_siblings(mb_trajectory *t, int32_t depth, mb_error *err);
/* Attaches to the last pushed decision a sibling path of n steps (1..depth): actions[0] is legal
 * and not the action taken, actions[1..n) the moves after it; rewards[n], obs[n x obs_dim] (the
 * observation after each step) and whether the last step ended the episode. */
bool mb_trajectory_set_sibling(mb_trajectory *t, int32_t n, const int32_t *actions,
                               const float *rewards, const float *obs, bool terminal,
                               mb_error *err);
/* Sets the observation after the last decision and whether the episode ended there. */
bool mb_trajectory_finish(mb_trajectory *t, const float *final_obs, bool terminal, mb_error *err);

bool mb_replay_init(mb_replay *r, int64_t capacity, int32_t obs_dim, int32_t A, mb_error *err);
void mb_replay_free(mb_replay *r);
/* Adds a finished trajectory (len >= 1, len + 1 <= capacity), evicting the oldest. */
bool mb_replay_add(mb_replay *r, const mb_trajectory *t, mb_error *err);
/* Decision rows stored. */
int64_t mb_replay_decisions(const mb_replay *r);
/* Stores sibling paths of up to depth steps (1..MB_SIBLING_MAX_DEPTH) of the trajectories added
 * from now on (depth x obs_dim extra floats per row); a trajectory's longer paths are cut. */
bool mb_replay_enable_siblings(mb_replay *r, int32_t depth, mb_error *err);
/* Value target parts of the state after step j of row's sibling path, for j < sib_len - 1 (the
 * path continues past it): *reward_sum = sum_{i > j} gamma^(i-j-1) r_i over the path's later
 * steps, and *boot_discount = gamma^(n-1-j) on the value of its last observation, 0 when the
 * path ended the episode. False (both 0) for other j. */
bool mb_replay_sibling_target(const mb_replay *r, int64_t row, int32_t j, double gamma,
                              double *reward_sum, double *boot_discount);
/* A uniformly drawn decision row (ring index), -1 when empty. */
int64_t mb_replay_sample(const mb_replay *r, mb_rng *rng);

/* Switches prioritised sampling on (alpha in (0, 1]): allocates the trees; rows already stored
 * get priority 1. Calling it again changes alpha and keeps the raw priorities. */
bool mb_replay_enable_priority(mb_replay *r, double alpha, mb_error *err);
/* A decision row drawn with P(i) = p_i^alpha / sum p^alpha (ring index); -1 when no decision row
 * is stored or priority is off. *is_weight (may be NULL) = (N P(i))^-beta / max_j (N P(j))^-beta,
 * in (0, 1]; beta in [0, 1]. */
int64_t mb_replay_sample_prioritised(const mb_replay *r, mb_rng *rng, double beta,
                                     double *is_weight);
/* Sets row's priority to |error| + 1e-6. Ignored when priority is off, the row is outside the
 * stored rows or is a final row, or error is not finite.
 * A row overwritten since it was drawn is not detected when a decision row took its place: that
 * newer row then receives the update. This cannot happen in mb_train (priorities are set in the
 * same learner step that drew the rows, and rows are only added between learner steps); for
 * other callers it is harmless to correctness: the stored priority is still positive, and draws
 * and importance weights always use the priorities stored at draw time, so the correction stays
 * exact for the distribution actually sampled. Only the new row's head start (maximum priority)
 * is lost. A final row that took the place is detected (action -1) and stays undrawable. */
void mb_replay_set_priority(mb_replay *r, int64_t row, double error);
/* Raw priority p_i of a row (0 on final rows and when priority is off). */
double mb_replay_priority(const mb_replay *r, int64_t row);
/* Ring index of the row k steps after `row` in its trajectory, clamped at its final row; and
 * whether it is past the final row (absorbing: no policy/value/reward target). */
int64_t mb_replay_offset(const mb_replay *r, int64_t row, int32_t k, bool *past_end);
/* n-step target parts for row (a decision row or a final row): *reward_sum, *boot_row (-1 when
 * the target ends in a terminal state), *boot_discount = gamma^n'. n = 0 gives the value of the
 * row's own observation (no rewards, discount 1). */
void mb_replay_nstep(const mb_replay *r, int64_t row, int32_t n, double gamma, double *reward_sum,
                     int64_t *boot_row, double *boot_discount);

/* Saving and restoring (train_state.h): the stored rows [0, count), the ring's counters, the raw
 * priorities and the sibling paths, as arrays and attributes named replay.* in f. Restoring goes
 * into a buffer set up as the saved one (capacity, obs_dim, actions, sibling depth, priority
 * alpha or off) and fails naming the first difference, or a damaged row; the priority trees are
 * rebuilt from the raw priorities, exactly as they were (every tree node is a function of the
 * leaves). On failure the buffer's rows are undefined: free it or restore again. */
bool mb_replay_save(const mb_replay *r, mb_nn_file *f, mb_error *err);
bool mb_replay_load(mb_replay *r, mb_nn_file *f, mb_error *err);

#endif
