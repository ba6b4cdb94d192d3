/* The mallocMuZero learner: one update of the networks from a batch drawn from the replay buffer
 * (train.h describes the recipe). Per batch column it unrolls the dynamics K steps from the
 * representation of a stored observation along the stored actions and trains
 *   - the policy head on the search's improved policy, the value head on n-step returns
 *     bootstrapped from a target network (categorical, h-transformed), the reward head on the
 *     true rewards, at every unroll step;
 *   - the consistency loss: the dynamics' state after k steps towards the representation of
 *     the observation actually reached (EfficientZero);
 *   - with sibling paths, the dynamics along one other action per decision and the raw policy
 *     after it (rewards, consistency, values);
 * with the dynamics gradient halved per step, AdamW, global gradient clipping, and with
 * prioritised replay the drawn rows' new priorities. It owns its batch buffers and network
 * tapes (sized once) and the target network. */
#ifndef MB_LEARNER_H
#define MB_LEARNER_H

#include <stdbool.h>
#include <stdint.h>

#include "adam.h"
#include "agent.h"
#include "error.h"
#include "replay.h"
#include "rng.h"
#include "train.h"

typedef struct mb_learner mb_learner;

/* A learner for `ag`'s networks: batches of `batch` columns, `unroll` (K) steps, sibling paths
 * of `sibling_steps` steps (0: none). Its target network starts as a fresh network of ag's
 * config; mb_learner_update_target copies ag into it. */
mb_learner *mb_learner_create(const mb_agent *ag, int32_t batch, int32_t unroll,
                              int32_t sibling_steps, mb_error *err);
void mb_learner_free(mb_learner *L);
/* One update of ag (through opt, at opt's learning rate) from a batch drawn from rb with rng;
 * beta is prioritised replay's importance-weight exponent. cfg gives the loss weights, n-step
 * length, discount and clip. Updates rb's priorities when it has them. With sibling paths, rb
 * must record paths of the learner's length (an error otherwise). */
bool mb_learner_step(mb_learner *L, mb_agent *ag, mb_adam *opt, const mb_train_config *cfg,
                     mb_replay *rb, double beta, mb_rng *rng, mb_error *err);
/* Copies ag's weights into the target network (the bootstrap of the value targets). */
bool mb_learner_update_target(mb_learner *L, const mb_agent *ag, mb_error *err);

/* The last update's batch as it assembled it, for tests and diagnostics: views into the
 * learner, valid until its next update or its freeing. Entry i = k * batch + b is unroll step
 * k (0..unroll) of batch column b. Targets are in the networks' scaled units (value_scale);
 * weights include prioritised replay's importance weights. */
typedef struct mb_learner_batch {
  int32_t batch, unroll;
  const mb_tensor *observations;   /* batch x obs_dim: the observation column b starts from */
  const int64_t *rows;             /* replay row of each entry (clamped at the final row) */
  const bool *past;                /* the entry lies past its trajectory's final row */
  const mb_tensor *policy_targets; /* unroll + 1 tensors, batch x actions (uniform where not a
                                      decision) */
  const float *policy_weight;
  const float *value_target, *value_weight;
  const int32_t *actions;                     /* k < unroll: the action unrolled */
  const float *reward_target, *reward_weight; /* k < unroll */
  /* Sibling paths (sibling_steps P, 0 without): entry j * batch + b is step j of column b's
   * path, from its first row; value targets at steps 0..P-2 only (the path continues past). */
  int32_t sibling_steps;
  const int32_t *sibling_actions;
  const float *sibling_reward_target, *sibling_reward_weight;
  const float *sibling_value_target, *sibling_value_weight;
} mb_learner_batch;
mb_learner_batch mb_learner_last_batch(const mb_learner *L);

/* The last update's losses (batch means; all 0 before the first update). */
typedef struct mb_learner_losses {
  double policy, value, reward, consistency, sibling;
} mb_learner_losses;
mb_learner_losses mb_learner_last_losses(const mb_learner *L);

#endif
