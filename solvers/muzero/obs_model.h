/* PROTOTYPE (evaluation only): a dynamics model in observation space for mallocMuZero's search.
 *
 * Why. The latent dynamics' values drift from the value network's on the real observations
 * (datasets/agents/EXPERIMENTS.md, "Why search in the learned model does not help yet"); the
 * search rises when its values are v(h(o)) of the real observations. A model that predicts the
 * next observation o^' = M(o, a) and values it with the agent's own representation and
 * prediction networks, v(h(o^')), has that search as its ceiling.
 *
 * M is a residual MLP on [o | one_hot(a) | a's candidate fields in o] with a linear output of
 * obs_dim values (clamped to [0, 1] when played), fitted alone against a fixed agent on real
 * transitions: at every decision of the agent's raw-policy episodes (epsilon-greedy after the
 * first) every legal action is stepped in the real game and the observation it reaches kept.
 * The loss is the squared error of the observation, plus, with value_weight > 0, the
 * cross-entropy between the value distributions the fixed agent gives o^' and o'
 * (value equivalence through the frozen representation and prediction networks). */
#ifndef MB_OBS_MODEL_H
#define MB_OBS_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent.h"
#include "error.h"
#include "nn.h"
#include "train.h"

typedef struct mb_obs_model_options {
  int32_t episodes; /* per workload: the first greedy, the others epsilon-greedy */
  double epsilon;   /* share of random legal moves in the later episodes */
  int32_t width, blocks;
  int64_t steps; /* updates */
  int32_t batch;
  double lr;
  double value_weight; /* weight of the value-distribution loss (0: observation only) */
  int64_t max_transitions;
  int32_t unroll; /* K: steps unrolled on the model's own predictions along played moves */
  uint64_t seed;
} mb_obs_model_options;

void mb_obs_model_options_default(mb_obs_model_options *o);

typedef struct mb_obs_model {
  int32_t obs_dim, A, in_dim;
  int32_t cand_off; /* first candidate slot's field in the observation */
  mb_nn_module net;
} mb_obs_model;

/* Collects transitions on set[0..n) with `ag` and fits a new model (progress on log). */
bool mb_obs_model_fit(mb_obs_model *m, const mb_agent *ag, const mb_train_workload *set, int32_t n,
                      const mb_obs_model_options *o, FILE *log, mb_error *err);
void mb_obs_model_free(mb_obs_model *m);

/* Batch-1 prediction. */
typedef struct mb_obs_model_infer {
  const mb_obs_model *m;
  mb_nn_tape tape;
  mb_tensor x;
} mb_obs_model_infer;
bool mb_obs_model_infer_create(mb_obs_model_infer *inf, const mb_obs_model *m, mb_error *err);
void mb_obs_model_infer_free(mb_obs_model_infer *inf);
/* next = M(obs, action), clamped to [0, 1]. */
bool mb_obs_model_predict(mb_obs_model_infer *inf, const float *obs, int32_t action, float *next,
                          mb_error *err);

/* Prints the mean |E^_k - E_k| along the raw policy's greedy paths from every `every`-th
 * decision (EXPERIMENTS.md's drift table, with this model in place of the latent dynamics). */
bool mb_obs_model_drift(const mb_obs_model *m, const mb_agent *ag, const mb_train_workload *set,
                        int32_t n_set, int32_t every, FILE *out, mb_error *err);

#endif
