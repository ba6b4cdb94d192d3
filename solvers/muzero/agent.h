/* The mallocMuZero agent: its configuration, its three networks, and its checkpoint.
 *
 * Networks (residual MLPs from nn.h; widths and depth in mb_agent_config):
 *   representation  h(obs)               -> s, latent of `latent` floats, min-max scaled to [0, 1]
 *   dynamics        g([s | one_hot(a) | x(a)]) -> s', scaled to [0, 1]; x(a) only with
 *                   action_features: the candidate slot's fields of the real observation a is
 *                   chosen on (zeros for slow memory and below the first step of the model)
 *   reward head     r(s')                -> categorical reward logits (`support` atoms)
 *   prediction      f(s)                 -> [policy logits (A) | categorical value logits]
 * The reward head reads the dynamics' output state (MuZero's reward head sits on the dynamics
 * trunk); it is a separate module so that its gradient simply joins the state's gradient.
 *
 * Scalars. Rewards and values are fractions of T_slow (an episode's return is at most 1); the
 * networks see them multiplied by `value_scale` (100: percent of T_slow) so that MuZero's
 * h(x) squashing and a support of [0, support_max] resolve them; mb_agent_* functions take and
 * return unscaled values.
 *
 * The checkpoint (HDF5 through nn_io.h) holds the four modules, the optimiser, the config as
 * root attributes (`cfg.*`), the game config it was trained with (observation layout and action
 * count are part of the networks' shape), training counters and the training curve series
 * (`curve_step`, `curve_selfplay`, `curve_policy`, ..., and `curve_validation` when a run had
 * a validation set; checkpoints without it load with that series all NaN), with the curve's
 * references as root attributes `curve.heuristic` and `curve.random` (each only when known;
 * checkpoints without them load with NaN). Loading rebuilds the networks from the stored
 * config, so a checkpoint is self-describing. */
#ifndef MB_AGENT_H
#define MB_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "adam.h"
#include "error.h"
#include "game.h"
#include "nn.h"
#include "nn_io.h"
#include "results.h" /* MB_AGENT_FORMAT: the root attribute `format` of every agent */
#include "rng.h"

typedef struct mb_agent_config {
  mb_game_config game; /* actions, observation layout, buffer order */
  int32_t obs_dim;     /* derived: mb_game_observation_size(&game) */
  int32_t latent;      /* latent state width (also the hidden width of every module) */
  int32_t blocks;      /* residual blocks per module */
  int32_t dyn_width;   /* the dynamics' hidden width (0: latent); a wider one ends in a linear
                          layer down to the latent state */
  int32_t dyn_blocks;  /* the dynamics' residual blocks (0: blocks) */
  mb_latent_norm latent_norm; /* how the representation and the dynamics scale their latent
                                 state: MuZero's minmax (default) or simnorm (latent a multiple
                                 of MB_NN_SIMNORM_GROUP) */
  int32_t support;      /* atoms of the value/reward supports over [support_min, support_max] */
  float support_min;    /* in h-transformed scaled units; 0 unless rewards can be negative
                           (game.shaping > 0) */
  float support_max;    /* in h-transformed scaled units */
  float value_scale;    /* network units per unit of return (fraction of T_slow) */
  bool action_features; /* the dynamics also sees an action's candidate slot fields
                           (MB_AGENT_ACTION_FEATURES) when the action is chosen on a real
                           observation: at the search's root and at the first unroll step. A
                           one-hot action only adds a bias per slot to the dynamics' first
                           layer, so telling what placing the buffer at slot k does means
                           finding slot k's offset and gap inside the latent state; with them
                           it reads them directly. Zeros below the first step, where no real
                           observation exists, in training as in search. */
} mb_agent_config;

/* The sizes an agent may have: mb_agent_config_check's limits, which `train`'s options take as
 * their ranges (so that a value the CLI reads is one the agent accepts).
 *   latent and dyn_width: MB_AGENT_MIN_WIDTH..MB_AGENT_MAX_WIDTH (dyn_width 0: latent);
 *   blocks: 0..MB_AGENT_MAX_BLOCKS; dyn_blocks: 1..MB_AGENT_MAX_BLOCKS (0: blocks). The 0 of
 *     dyn_width and dyn_blocks means "as the other modules": it is no size, and train --dyn-width
 *     / --dyn-blocks do not take it (a dynamics of 0 blocks beside modules of 1 cannot be asked
 *     for: `--dyn-blocks 0` would get --blocks' depth, not none);
 *   support: MB_AGENT_MIN_SUPPORT..MB_AGENT_MAX_SUPPORT atoms;
 *   the game's layout (game.n_actions, next_buffers, demand_bins): the bounds of
 *     mb_game_config_check (suite/game.c), restated here; tests/test_agent.c checks that they
 *     agree. */
#define MB_AGENT_MIN_WIDTH 4
#define MB_AGENT_MAX_WIDTH 4096
#define MB_AGENT_MAX_BLOCKS 16
#define MB_AGENT_MIN_SUPPORT 3
#define MB_AGENT_MAX_SUPPORT 1001
#define MB_AGENT_MIN_ACTIONS 2
#define MB_AGENT_MAX_ACTIONS 1024
#define MB_AGENT_MAX_NEXT_BUFFERS 64
#define MB_AGENT_MAX_DEMAND_BINS 256

/* Width of x(a), the action's features: a candidate slot's fields (game.h). */
#define MB_AGENT_ACTION_FEATURES MB_GAME_OBS_PER_CANDIDATE

/* Defaults: game defaults (A = 16, 16 x 16 occupancy picture) with the gain block and the next
 * 4 buffers in the observation, latent 128, 1 block (the dynamics too), support 31 atoms over
 * [0, 10.5] (h(100) = 9.15), value_scale 100. */
void mb_agent_config_default(mb_agent_config *c);
bool mb_agent_config_check(const mb_agent_config *c, mb_error *err);

typedef struct mb_agent {
  mb_agent_config cfg;
  mb_support sup;
  mb_nn_module repr, dyn, reward, pred;
} mb_agent;

/* Builds the networks and initialises them from rng. */
bool mb_agent_create(mb_agent *ag, const mb_agent_config *cfg, mb_rng *rng, mb_error *err);
void mb_agent_free(mb_agent *ag);
/* Replaces the dynamics and the reward head (the learned model) by fresh ones, the dynamics
 * dyn_width wide with dyn_blocks blocks (0: as for the other modules), initialised from rng;
 * the representation and prediction networks stay as they are. An optimiser over the old
 * modules must be rebuilt. On failure the agent is unchanged. */
bool mb_agent_new_model(mb_agent *ag, int32_t dyn_width, int32_t dyn_blocks, mb_rng *rng,
                        mb_error *err);
/* Copies every parameter of src into dst (same config). */
bool mb_agent_copy_weights(mb_agent *dst, const mb_agent *src, mb_error *err);
/* The networks' module names, in mb_agent_modules' order ("repr", "dyn", "reward", "pred"):
 * checkpoints and optimisers name parameters by them, train --freeze takes them. */
extern const char *const MB_AGENT_NETWORKS[4];
/* The four modules in a fixed order (for optimisers and checkpoints). */
void mb_agent_modules(mb_agent *ag, mb_nn_module *out[4]);
int64_t mb_agent_param_count(const mb_agent *ag);
/* The agent's digest (64 hex digits and a NUL into hex): SHA-256 of everything that decides how
 * it plays, its config (the game's included) and each module's layers and parameters (shapes
 * and float32 values), and of nothing else: not the optimiser, the training counters, the
 * curve or wall times. Two trainings that end in the same networks (train is deterministic with
 * --jobs 1 on one BLAS kernel) have the same digest although their checkpoint files differ.
 * Results files record it as agent_networks_sha256. */
void mb_agent_digest(const mb_agent *ag, char hex[65]);
/* The dynamics' hidden width and residual blocks (dyn_width / dyn_blocks, or the others'). */
int32_t mb_agent_dyn_width(const mb_agent_config *c);
int32_t mb_agent_dyn_blocks(const mb_agent_config *c);
/* Columns of the dynamics' input: latent + A (+ MB_AGENT_ACTION_FEATURES with action_features). */
int32_t mb_agent_dynamics_inputs(const mb_agent_config *c);
/* Writes x(a), the MB_AGENT_ACTION_FEATURES values of action a chosen on the real observation
 * obs: slot a's fields for a candidate slot, zeros for slow memory or when obs is NULL (the
 * state is one of the learned dynamics). Nothing is written without action_features. */
void mb_agent_action_features(const mb_agent_config *c, const float *obs, int32_t action,
                              float *out);

/* Batch-1 inference (search and play): tapes sized once, no allocation per call. */
typedef struct mb_agent_infer {
  const mb_agent *ag;
  mb_nn_tape repr, dyn, reward, pred;
  mb_tensor x, in; /* observation row; the dynamics' input row */
} mb_agent_infer;

/* Created with sgemm's numerics, those of training; mb_agent_infer_use_gemv switches every
 * network to sgemv (nn.h, mb_nn_tape_use_gemv: about 3x faster, equal to float rounding). */
bool mb_agent_infer_create(mb_agent_infer *inf, const mb_agent *ag, mb_error *err);
void mb_agent_infer_use_gemv(mb_agent_infer *inf, bool on);
void mb_agent_infer_free(mb_agent_infer *inf);
/* h then f: latent (cfg.latent floats, may be NULL), policy logits (A), value (unscaled). */
bool mb_agent_initial(mb_agent_infer *inf, const float *obs, float *latent, float *logits,
                      float *value, mb_error *err);
/* g then r and f: next latent, reward (unscaled), policy logits, value. obs: the real
 * observation whose representation latent is, or NULL when latent is a state of the learned
 * dynamics (it gives the action's features, mb_agent_action_features). */
bool mb_agent_recurrent(mb_agent_infer *inf, const float *latent, int32_t action, const float *obs,
                        float *next_latent, float *reward, float *logits, float *value,
                        mb_error *err);
/* The raw policy's greedy action among mask's legal ones (argmax of the logits). */
int32_t mb_agent_greedy(const float *logits, const uint8_t *mask, int32_t A);

/* A training curve: parallel series, appended to during training and stored in checkpoints. */
typedef struct mb_agent_curve {
  int64_t len, cap;
  double *step;       /* training steps */
  double *episodes;   /* self-play episodes so far */
  double *selfplay;   /* mean self-play return since the previous point */
  double *policy;     /* mean return of the raw policy network (greedy, no search) on the train
                         workloads; NaN when not evaluated at that point */
  double *loss;       /* mean total loss since the previous point */
  double *seconds;    /* wall seconds of training so far */
  double *validation; /* mean return of the raw policy on held-out workloads (train
                         --validate); NaN when there was none at that point */
  /* References on the same eval set as `policy` (mean returns, simulated): the game's
   * heuristic action and uniformly random legal play; NaN when unknown (checkpoints written
   * before they were stored). */
  double heuristic, random;
} mb_agent_curve;

/* An empty curve with unknown references (a zeroed struct would claim references of 0). */
void mb_agent_curve_init(mb_agent_curve *c);
/* Appends a point; its validation is NaN until mb_agent_curve_set_validation. */
bool mb_agent_curve_push(mb_agent_curve *c, double step, double episodes, double selfplay,
                         double policy, double loss, double seconds, mb_error *err);
/* Sets the validation return of the last point (no-op on an empty curve). */
void mb_agent_curve_set_validation(mb_agent_curve *c, double validation);
/* Frees the series and leaves the curve as mb_agent_curve_init does. */
void mb_agent_curve_free(mb_agent_curve *c);

/* Room for mb_agent_progress.options, with its terminating NUL. */
#define MB_AGENT_OPTIONS_MAX 8192

/* Training state stored with the weights. */
typedef struct mb_agent_progress {
  int64_t steps;     /* training steps (optimizer updates) done */
  int64_t episodes;  /* self-play trajectories played */
  int64_t decisions; /* self-play decisions played */
  uint64_t seed;     /* the training seed */
  double seconds;    /* training wall time so far */
  char blas[256];    /* loaded: the OpenBLAS build and kernel the checkpoint was written with
                        ("" when it predates the attribute); written: always this process's
                        (mb_blas_describe), since it decides the agent's last bits */
  char options[MB_AGENT_OPTIONS_MAX]; /* the options that define the training run (workloads,
                        seed, learning rate, ...), as a command-line fragment that `train
                        --resume` reads back and keeps; attribute train.options, written when
                        not "" ("" when loaded from a checkpoint written before it) */
} mb_agent_progress;

/* Writes the agent (+ optimiser and progress when not NULL, curve when not NULL) atomically:
 * a temporary file renamed over `path`. `note` (may be NULL) is stored as the `training`
 * attribute (how it was trained: train writes its history, the command line of the run that
 * started it, then one line per resumed run's command line; checkpoints written before the
 * history have the last command line alone). */
bool mb_agent_save(const char *path, const mb_agent *ag, const mb_adam *opt,
                   const mb_agent_progress *prog, const mb_agent_curve *curve, const char *note,
                   mb_error *err);
/* Loads a checkpoint: builds *ag from the stored config. opt (may be NULL) must be NULL or a
 * zeroed struct: it is created over ag's modules with the stored state. prog and curve may be
 * NULL. On failure nothing needs freeing. */
bool mb_agent_load(const char *path, mb_agent *ag, mb_adam *opt, mb_agent_progress *prog,
                   mb_agent_curve *curve, mb_error *err);
/* The same on a file the caller opened (mb_nn_file_create / mb_nn_file_open) and then commits
 * or closes: the training state (train_state.h) writes its arrays into the same file. */
bool mb_agent_write(mb_nn_file *f, const mb_agent *ag, const mb_adam *opt,
                    const mb_agent_progress *prog, const mb_agent_curve *curve, const char *note,
                    mb_error *err);
bool mb_agent_read(mb_nn_file *f, mb_agent *ag, mb_adam *opt, mb_agent_progress *prog,
                   mb_agent_curve *curve, mb_error *err);

#endif
