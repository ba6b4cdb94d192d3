/* mallocMuZero training: self-play with search into a replay buffer, interleaved with K-step
 * unroll training of the networks, a synthetic curriculum, evaluation, and checkpoints.
 *
 * The loop works in rounds. In each round `actors_per_round` actors each play one trajectory
 * (in parallel on `jobs` threads; each actor owns its game, a copy of the current weights and
 * its search), the trajectories join the replay buffer in actor order, and then the learner
 * makes as many updates as keep the replay ratio (samples drawn per new decision) at
 * `replay_ratio`. Every actor's randomness is the stream (seed, round, actor), so results do
 * not depend on `jobs` or on thread timing (bit-identical for any --jobs as long as BLAS runs
 * single-threaded; guaranteed with --jobs 1).
 *
 * Trajectories. A workload with more decisions than `segment` is played in segments: the raw
 * policy network plays greedily (no search) up to a random start, then search plays `segment`
 * decisions that are stored; the value after the segment is bootstrapped (replay.h). Small
 * workloads are played whole. Self-play uses the Gumbel search in the learned model (or pUCT)
 * with Gumbel noise on, `search.simulations` per move. With self_play_exact the same search steps
 * the real game instead (AlphaZero's setting: the game's rules are known to a compiler), so the
 * policy targets are those of the stronger exact search; the learned model is still trained on
 * every stored transition, and evaluation chooses its search separately (mallocmuzero or
 * mallocmuzero-exact).
 *
 * Workloads. The catalogue workloads given by the caller, and/or synthetic random workloads
 * (random_workload.h) on the TPU-v4-like profile with the catalogue's capacity rule: each episode
 * draws a fresh one whose buffer count grows from synth_min to synth_max over the first half of
 * training (curriculum from small to large). With both, an episode is synthetic with
 * probability synth_share. A synthetic episode is a packing instance (mb_random_packing_workload:
 * op-less, benefit = size, cut from a 1 MiB x 2^20-step rectangle) with probability
 * synth_packing_share, otherwise a program; a packing instance's capacity is the full 1 MiB
 * half of the time (every buffer fits: the optimum is the perfect packing), otherwise a uniform
 * fraction of it in [1/4, 1), rounded to 1 KiB (choose what fits). Actors play through the
 * player (player.h), as the solvers do.
 *
 * Learner (learner.h). Batch of B decision rows, unroll K steps through the dynamics (gradient into
 * the state halved at each step), losses: policy cross-entropy against the search policy (illegal
 * actions get target 0, so the learned model learns to avoid them below the root), value (weight
 * value_weight) against n-step targets bootstrapped from a target network (copied every
 * target_period updates), reward, and consistency (weight consistency_weight; EfficientZero): the
 * dynamics' state after k steps against the representation of the observation reached, without
 * gradient into that target. Without it, the learned model's one-step Q was measured to make search
 * worse than the raw policy (datasets/agents/EXPERIMENTS.md). Losses of unroll steps 1..K are
 * scaled by 1/K; AdamW with global gradient clipping.
 *
 * Sibling paths (sibling_weight > 0, the default). Search asks the learned model about actions
 * self-play did not take, and about the states below them; trained only on the taken ones, its
 * answers there were measured to be poor (datasets/agents/EXPERIMENTS.md). So each self-play
 * decision also tries one other legal action in the real game, then sibling_depth - 1 greedy moves
 * of the raw policy network (snapshot, steps, restore), and stores the path with the decision. The
 * learner unrolls the dynamics along it from the decision's state: reward and consistency losses
 * at every step and, at the steps the path continues past, a value loss against the path's later
 * rewards plus the target network's value of its last observation (0 when the episode ended); all
 * weighted sibling_weight / sibling_depth. With sibling_from_search the sibling is instead the
 * action the decision's search valued highest after the one taken, and the path follows the
 * search tree below it (where the learned model's optimism, if any, decided the search).
 *
 * Prioritised replay (optional, priority_alpha > 0; Schaul et al. 2016, as in MuZero): rows are
 * drawn with probability proportional to p^alpha (replay.h), and every loss of a drawn row (all
 * unroll steps: policy, value, reward, consistency) is multiplied by its importance weight, so
 * the expected gradient stays that of uniform sampling. After each update a drawn row's priority
 * becomes |value prediction at unroll step 0 - n-step value target|, in the network's scaled
 * units, from that update's forward pass. beta goes linearly from priority_beta to 1 over the
 * run's step limit (full correction at the end, when the estimate matters most); with only a time
 * limit it stays at priority_beta. Priorities live in the replay buffer, which a resumed run
 * starts empty. The logged and curve losses are then the importance-weighted ones (weights <= 1):
 * their scale is not comparable with a uniform run's.
 *
 * Evaluation. Every eval_every updates the raw policy network alone (greedy, no search) plays
 * every evaluation workload once; its mean return is the `policy` column of the training curve
 * (mb_agent_curve). The evaluation set is the caller's first eval_max workloads (whole
 * episodes), or 8 fixed synthetic workloads spanning synth_min..synth_max when training on
 * synthetic workloads only. The self-play column is the mean return of the trajectories played
 * since the previous point (a segment's return on big workloads). The heuristic's and random
 * play's mean returns on the same set, measured at the start of every run (resumed ones too),
 * are the curve's references (`heuristic`, `random`), stored with it. A resumed run's eval set
 * must be the one of its curve: the heuristic reference it measures is compared with the
 * stored one (keep_eval_set below).
 *
 * Validation (optional). The eval set is trained on, so its curve cannot show overfitting. A
 * validation set (workloads the caller keeps out of training) is played the same way, by the
 * raw policy with the eval set's seed, at the same points (start, every eval_every, end); its
 * mean return is the curve's `validation` series (NaN at points without one). With best_out,
 * the agent is also written there (same atomic writer, with optimiser, progress and curve up
 * to that point) whenever the validation return is strictly higher than the best so far. A
 * resumed run starts from the best of the resumed curve's validation series, so it only
 * replaces best_out with a better agent (the validation sets of both runs should be the same).
 * Evaluation draws nothing from the training streams: weights do not depend on validation.
 *
 * Training state (train_state.h). A checkpoint alone resumes with an empty replay buffer and a
 * new learner stream: the resumed run trains well but not as the uninterrupted one would. With
 * state_out, the full state (a checkpoint plus replay buffer, learner stream and counters) is
 * also written every state_every updates, at the first step at or after each multiple of it
 * where the target network has just been copied. Resuming from it (resume_state) continues the
 * run bit for bit: the weights, optimiser, curve returns and every later checkpoint are those
 * of the run that was never stopped (wall times excepted), for a run bounded by --steps (the
 * curriculum and beta follow the step count; under a time limit they follow the clock). A state
 * older than the checkpoint rolls the run back to the state's step. */
#ifndef MB_TRAIN_H
#define MB_TRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "adam.h"
#include "agent.h"
#include "error.h"
#include "hardware.h"
#include "search.h"
#include "workload.h"

typedef struct mb_train_workload {
  const char *name;
  const mb_workload *w; /* owned by the caller, outlives the training */
  mb_hardware hw;
} mb_train_workload;

/* Catalogue workloads selected by name (PCRE2 regex) and/or split, materialised (the caller
 * frees with mb_train_set_free). Entries whose data is missing, that fail to load or that have
 * more than max_buffers buffers are skipped with a one-line note on `log` (may be NULL). */
typedef struct mb_train_set {
  int32_t n;
  mb_train_workload *tw;
  mb_workload **w;
} mb_train_set;
bool mb_train_set_load(const char *catalogue, const char *data_dir, const char *regex,
                       const char *split, int64_t max_buffers, FILE *log, mb_train_set *out,
                       mb_error *err);
void mb_train_set_free(mb_train_set *s);

typedef struct mb_train_config {
  mb_agent_config agent; /* used when starting fresh */
  mb_search_config search;
  int64_t steps;    /* stop after this many updates in total (0: no limit) */
  double seconds;   /* stop after this much wall time in this process (0: no limit) */
  int32_t batch;    /* B */
  int32_t unroll;   /* K */
  int32_t td_steps; /* n (0: the target network's value of the observation reached itself) */
  double gamma;
  double value_weight;
  double consistency_weight; /* dynamics state vs representation of the reached observation */
  double sibling_weight;     /* > 0 (default 1): sibling paths (a second legal action per
                                decision, tried in the real game) train the dynamics' reward and
                                consistency with this weight; 0: off */
  int32_t sibling_depth;     /* steps of a sibling path (1..MB_SIBLING_MAX_DEPTH, default 1): the
                                sibling, then the raw policy's greedy moves; from 2 on, the path's
                                rewards also give value targets along it */
  bool sibling_from_search;  /* the sibling is the searched root action other than the one
                                taken with the highest Q, its path follows the search tree's
                                most visited children while they are legal in the real game
                                (then the raw policy's greedy moves): the model is trained where
                                its search looked; false (default): a uniformly drawn sibling */
  double root_gradient;      /* the factor on the gradient the first dynamics step sends into
                                the representation's state s0, in [0, 1]: 0.5 (default) halves it
                                as at every later state; 1 is MuZero's pseudocode, which halves
                                only the states the dynamics made; 0 stops it, so that the
                                representation learns from step 0's losses alone (measured:
                                EXPERIMENTS.md) */
  bool self_play_exact;      /* self-play searches the real game (snapshot / restore, as
                                mallocmuzero-exact) instead of the learned model (default false) */
  double lr, weight_decay, max_grad_norm;
  double lr_end;      /* learning rate at the step limit: cosine from lr down to lr_end over `steps`
                         (mb_train_lr; constant lr without a step limit). Default: lr (constant) */
  const char *freeze; /* comma-separated networks whose weights stay as they are (repr, dyn,
                         reward, pred; NULL: none): e.g. "repr,pred" trains the learned model
                         alone under a fixed policy and value network */
  int64_t replay_capacity; /* transitions */
  double replay_ratio;     /* samples drawn per new decision */
  double priority_alpha;   /* prioritised replay exponent in [0, 1] (0: uniform sampling) */
  double priority_beta;    /* importance-weight exponent at the start, in [0, 1] */
  int32_t target_period;   /* updates between target-network copies */
  int32_t actors_per_round;
  int32_t jobs;       /* threads playing the actors of a round */
  int32_t segment;    /* max stored decisions per trajectory */
  bool segment_cover; /* segment starts by mb_segment_start's cover rule (below) */
  bool synthetic;
  int32_t synth_min, synth_max;
  double synth_share;
  double synth_packing_share; /* of the synthetic episodes, the share of packing instances
                                 (MiniMalloc-like, random_workload.h) instead of programs */
  int32_t eval_every;       /* updates between raw-policy evaluations (0: only at start and end) */
  int32_t eval_max;         /* evaluation workloads (first ones) */
  int32_t checkpoint_every; /* updates between checkpoints (0: only at the end) */
  int32_t state_every;      /* with state_out: updates between training states (0: none
                               written) */
  uint64_t seed;
  const char *out;          /* checkpoint path (NULL: none written) */
  const char *resume;       /* continue from this checkpoint (NULL: fresh) */
  const char *resume_state; /* with resume: continue from this training state instead (see
                               "Training state" above; NULL: the checkpoint alone) */
  bool new_model;           /* with resume: replace the checkpoint's learned model (dynamics
                               and reward head) by a fresh one shaped by agent.dyn_width and
                               agent.dyn_blocks, initialised from the seed, with a fresh
                               optimiser (mb_agent_new_model); not with resume_state */
  const char *state_out;    /* training state written every state_every updates, removed when
                               the run ends normally (NULL: none). A state found there at the
                               start belongs to an earlier run and is removed, unless it is
                               resume_state; also with state_every 0, or a later resume would
                               take it for this run's */
  const char *note;         /* stored as the checkpoint's `training` attribute */
  const char *options;      /* stored as the checkpoint's train.options (the options that
                               define the run, mb_agent_progress.options; NULL: a resumed
                               checkpoint's kept, none for a fresh run) */
  bool keep_eval_set;       /* with resume: the eval set must be the resumed curve's. The
                               heuristic's mean return on it, measured at the start, is
                               compared with the curve's stored reference: a different one
                               fails the run (true: train --resume A --out A, one run) or
                               starts the curve again at the resumed step, its earlier points
                               measured on another set left out (false: a new agent branched
                               off the checkpoint; said in the log) */
  const mb_train_workload *validation; /* held-out workloads (owned by the caller; NULL: none) */
  int32_t n_validation;
  const char *best_out; /* with a validation set: the best agent so far (NULL: not kept) */
  FILE *log;            /* progress lines (NULL: silent) */
  double log_every_s;   /* seconds between progress lines */
  /* Called with the current weights at every evaluation point (after its curve point) and once
   * more when training ends (`final`); false stops training with err set. NULL: none. Per-workload
   * fine-tuning plays the solver's episode there and keeps the best (mallocmuzero.c). */
  bool (*on_eval)(void *ctx, const mb_agent *ag, int64_t step, bool final, mb_error *err);
  void *on_eval_ctx;
} mb_train_config;

/* Defaults: Gumbel search with 8 simulations (m = 16), B 64, K 5, n 10, gamma 1, value weight
 * 0.25, consistency weight 1, sibling paths of 1 step with weight 1, lr 1e-3 (constant: lr_end
 * NAN, read as lr), weight decay 1e-4, clip 5, replay 50000 transitions, ratio 4, uniform sampling
 * (priority alpha 0; beta 0.4 when it is switched on), target every 100, 2 actors per round, 1 job,
 * segment 48 with covering starts, synthetic 16..256 buffers, share 0.5, no packing instances,
 * evaluation every 100 updates on at most 8 workloads, checkpoint every 200, training state every
 * MB_TRAIN_STATE_EVERY (when state_out is set), seed 0, log every 5 s. */
#define MB_TRAIN_STATE_EVERY 5000
void mb_train_config_default(mb_train_config *c);
/* Per-workload fine-tuning's configuration (the solvers' --finetune and --finetune-steps, bench
 * muzero --finetune-steps): the defaults with 32-row batches and no checkpoint, for `seconds` of
 * wall time or `steps` updates (the other 0) from `seed`; self-play searches the real game when
 * `exact`. The caller sets the evaluation hook and how often it runs. */
void mb_train_config_finetune(mb_train_config *c, double seconds, int64_t steps, uint64_t seed,
                              bool exact);
/* Makes c train the learned model alone (dynamics and reward) against the frozen representation
 * and prediction networks, its values fitted to the frozen value network's values of the
 * observations reached: train --freeze repr,pred --td-steps 0 --value-weight 1 (bench muzero
 * --finetune-model). The raw policy and the exact game's search stay what they were. */
void mb_train_config_model_only(mb_train_config *c);
bool mb_train_config_check(const mb_train_config *c, mb_error *err);
/* The smallest replay capacity (rows) mb_train_config_check accepts for `segment`: two
 * trajectories of segment decisions, each with its final observation row. */
int64_t mb_train_replay_floor(int32_t segment);

/* What a training run leaves. The agent (and optimiser) belong to the result. */
typedef struct mb_train_result {
  mb_agent agent;
  mb_adam opt;
  mb_agent_progress prog;
  mb_agent_curve curve;
  double untrained_policy; /* raw-policy mean return on the eval set before this run's updates */
  double random_policy;    /* uniformly random legal play on the eval set (same seeds) */
  double heuristic_play;   /* the game's heuristic action on the eval set (reference) */
  double final_policy;     /* raw-policy mean return after training */
  double final_validation; /* raw-policy mean return on the validation set after training (NaN
                              without one) */
  double best_validation;  /* the best validation return of the curve (NaN: none) */
  int64_t best_step;       /* its step */
  bool best_written;       /* this run wrote it to best_out */
  double updates_per_s;    /* learner updates / learner seconds */
  double decisions_per_s;  /* self-play decisions / self-play seconds */
  int64_t updates;         /* made by this run */
  double seconds;          /* wall time of this run's training (prog.seconds also counts the
                              runs it resumed) */
} mb_train_result;

/* Checks a --freeze list (mb_train_config.freeze): comma-separated names among
 * MB_AGENT_NETWORKS; an error names the list and the networks expected. */
bool mb_train_freeze_check(const char *list, mb_error *err);
/* Trains from scratch (cfg->resume NULL; `init` NULL) or continues cfg->resume, or continues the
 * agent `init` (weights copied; for per-workload fine-tuning). Writes checkpoints to cfg->out.
 * workloads may be empty when cfg->synthetic. */
bool mb_train(const mb_train_config *cfg, const mb_train_workload *workloads, int32_t n_workloads,
              const mb_agent *init, mb_train_result *res, mb_error *err);
void mb_train_result_free(mb_train_result *res);

/* Who plays an evaluation episode: the raw policy network (greedy, no search), uniformly random
 * legal moves (drawn from the seed), or the game's heuristic action (a reference only). */
typedef enum mb_eval_mode { MB_EVAL_POLICY = 0, MB_EVAL_RANDOM, MB_EVAL_HEURISTIC } mb_eval_mode;
/* Mean return of one episode per workload. */
bool mb_eval_policy(const mb_agent *ag, const mb_train_workload *workloads, int32_t n,
                    mb_eval_mode mode, uint64_t seed, double *mean_return, mb_error *err);

/* A synthetic workload of n_buffers buffers drawn from rng, named `name` (NULL: the generator's
 * default), and in *hw the profile `base` with its capacity: a program (mb_random_workload) with
 * the catalogue's automatic capacity (base's own when that rule gives none), or with `packing`
 * an op-less packing instance (mb_random_packing_workload) with capacity the perfect packing's
 * height or, half the time, a drawn [1/4, 1) of it. Training plays these, its evaluation set
 * and bench muzero's --episodes set are made of them. NULL with err set on failure. */
mb_workload *mb_train_synthetic_workload(mb_rng *rng, int32_t n_buffers, bool packing,
                                         const char *name, const mb_hardware *base, mb_hardware *hw,
                                         mb_error *err);

/* The first stored decision of a segment of `segment` decisions in an episode of n (0 when
 * n <= segment). Uniform (cover false): a start drawn from [0, n - segment], which stores
 * decision i < segment only (i + 1) / segment as often as the middle ones (the first one
 * `segment` times less often), and the last ones alike. Cover: a start drawn from
 * [-(segment - 1), n - 1] and clamped into [0, n - segment], which stores every decision at
 * least as often as the middle ones (those within a segment of either end up to twice as
 * often): the first decisions of the heuristic order are the most memory-bound buffers. */
int32_t mb_segment_start(int32_t n, int32_t segment, bool cover, mb_rng *rng);
/* The learning rate of update `step` (0-based): lr_end + (lr - lr_end) * (1 + cos(pi * f)) / 2
 * with f = step / steps (clamped to 1), so lr at the start and lr_end at the step limit; lr for a
 * run bounded only by time (steps 0), whose end is not known in updates. A function of the step
 * alone, so a resumed run follows the same schedule. */
double mb_train_lr(const mb_train_config *c, int64_t step);
/* Prioritised replay's importance exponent at update `step`: linear from priority_beta to 1 over
 * the step limit (full correction at the end), then 1; priority_beta for a run bounded only by
 * time. */
double mb_train_priority_beta(const mb_train_config *c, int64_t step);
/* The most buffers a synthetic episode may draw (from synth_min up) at update `step`, `seconds`
 * into the run: synth_min + (synth_max - synth_min) * min(1, 2 f), rounded, where f, the share of
 * the run done, is step / steps, or seconds / the time limit for a run bounded only by time. */
int32_t mb_train_curriculum_max(const mb_train_config *c, int64_t step, double seconds);

#endif
