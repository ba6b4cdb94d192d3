/* mallocMuZero self-play, learner, evaluation and the playing loop (see train.h). */
#include "train.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_describe.h"
#include "catalogue.h"
#include "clock.h"
#include "learner.h"
#include "paths.h"
#include "player.h"
#include "random_workload.h"
#include "replay.h"
#include "train_state.h"

/* Self-play episodes in a row without a single decision before training gives up. */
#define EMPTY_EPISODES_MAX 64

void mb_train_config_default(mb_train_config *c) {
  memset(c, 0, sizeof *c);
  mb_agent_config_default(&c->agent);
  mb_search_config_default(&c->search);
  c->search.simulations = 8;
  c->steps = 0;
  c->seconds = 0;
  c->batch = 64;
  c->unroll = 5;
  c->td_steps = 10;
  c->gamma = 1.0;
  c->value_weight = 0.25;
  c->consistency_weight = 1.0;
  c->sibling_weight = 1.0; /* measured: datasets/agents/EXPERIMENTS.md */
  c->lr = 1e-3;
  c->lr_end = NAN; /* = lr: constant */
  c->weight_decay = 1e-4;
  c->max_grad_norm = 5.0;
  c->root_gradient = 0.5;
  c->replay_capacity = 50000;
  c->replay_ratio = 4.0;
  c->priority_alpha = 0.0;
  c->priority_beta = 0.4;
  c->sibling_depth = 1;
  c->target_period = 100;
  c->actors_per_round = 2;
  c->jobs = 1;
  c->segment = 48;
  c->segment_cover = true; /* measured: datasets/agents/EXPERIMENTS.md */
  c->synthetic = false;
  c->synth_min = 16;
  c->synth_max = 256;
  c->synth_share = 0.5;
  c->synth_packing_share = 0.0;
  c->eval_every = 100;
  c->eval_max = 8;
  c->checkpoint_every = 200;
  c->state_every = MB_TRAIN_STATE_EVERY;
  c->seed = 0;
  c->log_every_s = 5.0;
}

void mb_train_config_finetune(mb_train_config *c, double seconds, int64_t steps, uint64_t seed,
                              bool exact) {
  mb_train_config_default(c);
  c->seconds = seconds;
  c->steps = steps;
  c->seed = seed;
  c->checkpoint_every = 0;
  c->batch = 32;
  c->self_play_exact = exact;
}

void mb_train_config_model_only(mb_train_config *c) {
  c->freeze = "repr,pred";
  c->td_steps = 0;
  c->value_weight = 1;
}

int64_t mb_train_replay_floor(int32_t segment) { return 2 * ((int64_t)segment + 1); }

bool mb_train_config_check(const mb_train_config *c, mb_error *err) {
  if (!mb_search_config_check(&c->search, err)) return mb_fail_prefix(err, "train config");
  if (c->steps < 0 || c->seconds < 0)
    return mb_fail(err, "train config: steps %lld / seconds %g: expected >= 0", (long long)c->steps,
                   c->seconds);
  if (c->steps == 0 && c->seconds <= 0)
    return mb_fail(err, "train config: neither a step limit nor a time limit");
  if (c->batch < 1 || c->batch > 4096)
    return mb_fail(err, "train config: batch %d: expected in [1, 4096]", c->batch);
  if (c->unroll < 0 || c->unroll > 32)
    return mb_fail(err, "train config: unroll %d: expected in [0, 32]", c->unroll);
  if (c->td_steps < 0) return mb_fail(err, "train config: td_steps %d: expected >= 0", c->td_steps);
  if (!(c->gamma > 0 && c->gamma <= 1))
    return mb_fail(err, "train config: gamma %g: expected in (0, 1]", c->gamma);
  if (!(c->lr > 0) || !(c->weight_decay >= 0) || !(c->max_grad_norm > 0) ||
      !(c->value_weight >= 0) || !(c->consistency_weight >= 0) || !(c->sibling_weight >= 0))
    return mb_fail(err,
                   "train config: lr %g, weight decay %g, clip %g, value weight %g, consistency "
                   "weight %g, sibling weight %g: bad value",
                   c->lr, c->weight_decay, c->max_grad_norm, c->value_weight, c->consistency_weight,
                   c->sibling_weight);
  if (!(c->root_gradient >= 0 && c->root_gradient <= 1))
    return mb_fail(err, "train config: root gradient %g: expected in [0, 1]", c->root_gradient);
  if (!isnan(c->lr_end) && !(c->lr_end >= 0 && c->lr_end <= c->lr))
    return mb_fail(err, "train config: lr_end %g: expected in [0, lr = %g]", c->lr_end, c->lr);
  if (c->sibling_depth < 1 || c->sibling_depth > MB_SIBLING_MAX_DEPTH)
    return mb_fail(err, "train config: sibling depth %d: expected 1..%d", c->sibling_depth,
                   MB_SIBLING_MAX_DEPTH);
  if (c->replay_capacity < mb_train_replay_floor(c->segment))
    return mb_fail(err, "train config: replay capacity %lld < two segments of %d",
                   (long long)c->replay_capacity, c->segment);
  if (!(c->replay_ratio > 0))
    return mb_fail(err, "train config: replay ratio %g: expected > 0", c->replay_ratio);
  if (!(c->priority_alpha >= 0 && c->priority_alpha <= 1))
    return mb_fail(err, "train config: priority_alpha %g: expected in [0, 1]", c->priority_alpha);
  if (!(c->priority_beta >= 0 && c->priority_beta <= 1))
    return mb_fail(err, "train config: priority_beta %g: expected in [0, 1]", c->priority_beta);
  if (c->target_period < 1 || c->actors_per_round < 1 || c->jobs < 1 || c->segment < 1)
    return mb_fail(err,
                   "train config: target period %d, actors %d, jobs %d, segment %d: "
                   "expected >= 1",
                   c->target_period, c->actors_per_round, c->jobs, c->segment);
  if (c->synth_min < 2 || c->synth_max < c->synth_min)
    return mb_fail(err, "train config: synthetic sizes %d..%d: expected 2 <= min <= max",
                   c->synth_min, c->synth_max);
  if (!(c->synth_share >= 0 && c->synth_share <= 1))
    return mb_fail(err, "train config: synth_share %g: expected in [0, 1]", c->synth_share);
  if (!(c->synth_packing_share >= 0 && c->synth_packing_share <= 1))
    return mb_fail(err, "train config: synth_packing_share %g: expected in [0, 1]",
                   c->synth_packing_share);
  if (c->n_validation < 0 || (c->n_validation > 0 && !c->validation))
    return mb_fail(err, "train config: validation set of %d workloads without workloads",
                   c->n_validation);
  if (c->best_out && c->n_validation == 0)
    return mb_fail(err, "train config: best_out '%s' needs a validation set", c->best_out);
  if (c->eval_every < 0 || c->eval_max < 1 || c->checkpoint_every < 0 || c->state_every < 0)
    return mb_fail(err,
                   "train config: eval_every %d, eval_max %d, checkpoint_every %d, state_every %d: "
                   "bad value",
                   c->eval_every, c->eval_max, c->checkpoint_every, c->state_every);
  if (c->resume_state && !c->resume)
    return mb_fail(err, "train config: resume_state '%s' without resume", c->resume_state);
  if (c->new_model && (!c->resume || c->resume_state))
    return mb_fail(err, "train config: new_model needs resume and no resume_state");
  /* a fresh agent is built from c->agent (a resumed one from its checkpoint) */
  if (!c->resume && !mb_agent_config_check(&c->agent, err))
    return mb_fail_prefix(err, "train config");
  return true;
}

/* ================================ catalogue workloads ================================ */

void mb_train_set_free(mb_train_set *s) {
  for (int32_t i = 0; s->w && i < s->n; i++) mb_workload_free(s->w[i]);
  free(s->w);
  free(s->tw);
  memset(s, 0, sizeof *s);
}

bool mb_train_set_load(const char *catalogue, const char *data_dir, const char *regex,
                       const char *split, int64_t max_buffers, FILE *log, mb_train_set *out,
                       mb_error *err) {
  memset(out, 0, sizeof *out);
  char default_catalogue[4096];
  if (!catalogue)
    catalogue = mb_catalogue_default_path(default_catalogue, sizeof default_catalogue);
  if (!catalogue) return mb_fail(err, "the source tree's path is too long (%s)", mb_source_dir());
  mb_catalogue *c = mb_catalogue_load(catalogue, err);
  if (!c) return false;
  bool *selected = calloc((size_t)c->n_entries + 1, sizeof *selected);
  if (!selected || !mb_catalogue_select(c, regex, "--workloads", selected, err)) {
    if (!selected) mb_fail(err, "catalogue workloads: out of memory");
    free(selected);
    mb_catalogue_free(c);
    return false;
  }
  char cache[4096];
  out->tw = calloc((size_t)c->n_entries + 1, sizeof *out->tw);
  out->w = calloc((size_t)c->n_entries + 1, sizeof *out->w);
  bool ok = out->tw && out->w;
  if (!ok) mb_fail(err, "catalogue workloads: out of memory");
  if (ok && !mb_cache_dir(cache, sizeof cache))
    ok = mb_fail(err, "%s/results/cache: path too long", mb_source_dir());
  for (int32_t i = 0; ok && i < c->n_entries; i++) {
    const mb_catalogue_entry *e = &c->entries[i];
    if (split && strcmp(e->split, split)) continue;
    if (!selected[i]) continue;
    bool missing = false;
    mb_error werr = {{0}};
    mb_workload *w = mb_catalogue_load_workload(e, data_dir, cache, &missing, &werr);
    mb_hardware hw;
    if (w && w->n_buffers > max_buffers) {
      mb_fail(&werr, "%d buffers > the limit %lld", w->n_buffers, (long long)max_buffers);
      mb_workload_free(w);
      w = NULL;
    } else if (w && !mb_catalogue_hardware(e, &hw, &werr)) {
      mb_workload_free(w);
      w = NULL;
    }
    if (!w) {
      mb_diag(log, "note: skipping %s: %s", e->name, werr.message); /* nothing when log is NULL */
      continue;
    }
    out->w[out->n] = w;
    out->tw[out->n] = (mb_train_workload){.name = w->name, .w = w, .hw = hw};
    out->n++;
  }
  free(selected);
  mb_catalogue_free(c);
  if (!ok) mb_train_set_free(out);
  return ok;
}

/* ================================ evaluation ================================ */

bool mb_eval_policy(const mb_agent *ag, const mb_train_workload *workloads, int32_t n,
                    mb_eval_mode mode, uint64_t seed, double *mean_return, mb_error *err) {
  mb_player *p = mb_player_create(ag, 1, err);
  uint8_t *mask = malloc((size_t)ag->cfg.game.n_actions);
  if (!p || !mask) {
    if (p) mb_fail(err, "evaluation: out of memory");
    mb_player_free(p);
    free(mask);
    return false;
  }
  double sum = 0;
  bool ok = true;
  mb_rng base;
  mb_rng_seed(&base, seed);
  for (int32_t i = 0; ok && i < n; i++) {
    mb_game *g = mb_game_new(workloads[i].w, &workloads[i].hw, &ag->cfg.game, err);
    if (!g) {
      ok = mb_fail_prefix(err, "evaluation workload '%s'", workloads[i].name);
      break;
    }
    mb_rng rng = mb_rng_split(&base, (uint64_t)i);
    while (ok && !mb_game_done(g)) {
      int32_t a;
      if (mode == MB_EVAL_HEURISTIC) {
        a = mb_game_heuristic_action(g);
      } else if (mode == MB_EVAL_RANDOM) {
        mb_game_legal_mask(g, mask);
        a = mb_rng_pick(&rng, mask, mb_game_n_actions(g), -1);
      } else {
        mb_player_decision d;
        ok = mb_player_decide_record(p, g, NULL, false, false, &rng, &d, err);
        a = d.action;
      }
      ok = ok && mb_game_step(g, a, NULL, err);
    }
    sum += mb_game_return(g);
    mb_game_free(g);
  }
  mb_player_free(p);
  free(mask);
  *mean_return = n > 0 ? sum / n : 0;
  return ok;
}

/* ================================ self-play actors ================================ */

typedef struct actor {
  mb_agent ag; /* this round's copy of the weights */
  mb_player *player;
  mb_game **games; /* per catalogue workload, created on first use */
  mb_trajectory traj;
  float *obs; /* the observation after the trajectory's last decision */
  /* sibling paths (sibling_weight > 0): the path's actions, rewards and observations (one per
   * step), and the legal mask at its current state */
  int32_t *sib_act, *sib_tree; /* sib_tree: the search tree's path (sibling_from_search) */
  float *sib_rew, *sib_obs;
  uint8_t *sib_mask;
  /* the round's job */
  mb_rng rng;
  int32_t n_synth;    /* > 0: play a fresh synthetic workload of that many buffers */
  bool synth_packing; /* that workload is a packing instance, not a program */
  int32_t workload;
  /* results */
  bool ok, full_episode;
  double ret;
  mb_error err;
} actor;

/* The random streams of a run, each split from its seed (trainer.base) by a stream id that no
 * other stream of the run uses, so that no two draw the same numbers. The ids of a fresh run
 * are those agents have always been trained with (changing one changes every trained agent);
 * the streams that only resumes use lie far above every episode count. */
enum {
  STREAM_INIT = 0x5eed,     /* the networks' initial weights */
  STREAM_EVAL_SET = 0xe7a1, /* + i: synthetic evaluation workload i (i < 8) */
  STREAM_LEARNER = 0x1ea4,  /* a fresh run's learner (minibatch sampling) */
  STREAM_ACTOR = 0x10000,   /* + episode: the actor that plays that episode */
};
static const uint64_t STREAM_LEARNER_RESUMED = (uint64_t)1 << 40; /* + the step resumed at */
static const uint64_t STREAM_NEW_MODEL = (uint64_t)1 << 41;       /* resume --new-model's init */

/* The learner's stream of a run that starts at step `steps` (0: a fresh run). A resume from a
 * training state restores the stream it had instead (bit for bit); from an agent alone it takes
 * one of its own, which before 2026-12-01 was STREAM_LEARNER + steps and, from step 16457 on,
 * could equal the initial weights' or an actor's stream. */
static mb_rng learner_stream(const mb_rng *base, int64_t steps) {
  return mb_rng_split(
      base, steps == 0 ? (uint64_t)STREAM_LEARNER : STREAM_LEARNER_RESUMED + (uint64_t)steps);
}

/* One training run (mb_train). The actors' threads read cfg, wl, n_wl and synth_hw; everything
 * else belongs to the loop's thread. */
typedef struct trainer {
  const mb_train_config *cfg;
  const mb_train_workload *wl;
  int32_t n_wl;
  mb_hardware synth_hw; /* base profile of synthetic workloads */
  actor *actors;        /* cfg->actors_per_round */
  mb_train_result *res; /* the agent, its optimiser, progress and curve */
  mb_rng base;          /* the run's seed: every stream is split from it */
  double t_start;       /* wall clock at the start of this process's run */
  /* the evaluation set the curve's raw-policy returns are measured on (eval_own: its synthetic
   * workloads, owned) */
  mb_train_workload *eval_set;
  mb_workload **eval_own;
  int32_t n_eval;
  mb_learner *learner;
  mb_replay replay;
  mb_train_counters k; /* what a training state saves besides the agent and the buffer */
  /* this process's work and time, for the rates */
  double t_self, t_learn, last_log;
  int64_t updates, decisions_run, episodes_run;
  /* the next step of each kind of event, on the grid of a run that started at step 0 */
  int64_t next_eval, next_ckpt, next_state;
} trainer;

mb_workload *mb_train_synthetic_workload(mb_rng *rng, int32_t n_buffers, bool packing,
                                         const char *name, const mb_hardware *base, mb_hardware *hw,
                                         mb_error *err) {
  if (packing) {
    mb_packing_options po;
    mb_packing_options_default(&po);
    po.length = 1 << 16; /* MiniMalloc's 2^20 steps cost 16x more per new game, shape the same */
    mb_workload *w = mb_random_packing_workload(rng, n_buffers, &po, name, NULL, err);
    if (!w) return NULL;
    int64_t quanta = po.height / po.quantum, cap = po.height;
    if (mb_rng_below(rng, 2)) /* choose what fits: [1/4, 1) of the perfect packing's height */
      cap = po.quantum * mb_rng_range(rng, quanta / 4 > 1 ? quanta / 4 : 1, quanta - 1);
    *hw = mb_hardware_with_capacity(base, cap);
    return w;
  }
  mb_random_options o;
  mb_random_options_default(&o);
  mb_workload *w = mb_random_workload(rng, n_buffers, &o, name, err);
  if (!w) return NULL;
  int64_t cap = mb_catalogue_auto_capacity(w, base);
  if (cap <= 0) cap = base->capacity;
  *hw = mb_hardware_with_capacity(base, cap);
  return w;
}

int32_t mb_segment_start(int32_t n, int32_t segment, bool cover, mb_rng *rng) {
  if (n <= segment) return 0;
  if (!cover) return (int32_t)mb_rng_below(rng, (uint64_t)(n - segment + 1));
  /* a start in [-(segment - 1), n - 1], clamped into [0, n - segment] */
  int64_t s = (int64_t)mb_rng_below(rng, (uint64_t)n + (uint64_t)segment - 1) - (segment - 1);
  return (int32_t)(s < 0 ? 0 : (s > n - segment ? n - segment : s));
}

/* Sibling path of the decision about to be played: one other legal action, drawn uniformly,
 * tried in the real game, then up to depth - 1 greedy moves of the raw policy network (snapshot,
 * steps, observations, restore), so that the learned model is also trained on actions search
 * compares but self-play did not take, and on the states a search reaches below them. *len is 0
 * when the root has no other legal action. `root` is p's decision at g's state, which stays
 * valid. With from_search the action is the decision's search's best alternative to the move
 * taken, and the path follows its tree while the tree's moves are legal (a uniformly drawn
 * action when the search visited no other). False on a game or network error. */
static bool sibling_path(actor *a, mb_player *p, const mb_player_decision *root, mb_game *g,
                         int32_t depth, bool from_search, int32_t *len, bool *terminal,
                         mb_error *err) {
  int32_t A = mb_game_n_actions(g), D = a->ag.cfg.obs_dim, taken = root->action;
  *len = 0;
  *terminal = false;
  int32_t b = -1, tree_len = 0;
  if (from_search) {
    const mb_search *s = mb_player_search(p);
    b = mb_search_best_alternative(s, taken);
    if (b >= 0) tree_len = mb_search_tree_path(s, b, a->sib_tree, depth);
  }
  if (b < 0) b = mb_rng_pick(&a->rng, root->mask, A, taken);
  if (b < 0) return true; /* no other legal action */
  mb_game_snapshot snap = mb_game_snapshot_take(g);
  bool ok = true;
  for (int32_t j = 0; ok && j < depth; j++) {
    if (j > 0) { /* the tree's next move while it is legal, else the raw policy's */
      mb_game_legal_mask(g, a->sib_mask);
      if (j < tree_len && a->sib_mask[a->sib_tree[j]]) {
        b = a->sib_tree[j];
      } else {
        tree_len = j;
        ok = mb_player_raw_action(p, a->sib_obs + (int64_t)(j - 1) * D, a->sib_mask, &b, err);
        if (!ok || b < 0) break;
      }
    }
    double r = 0;
    ok = mb_game_step(g, b, &r, err);
    if (!ok) break;
    a->sib_act[j] = b;
    a->sib_rew[j] = (float)(r * mb_player_reward_unit(p));
    mb_game_observe(g, a->sib_obs + (int64_t)j * D);
    *len = j + 1;
    if ((*terminal = mb_game_done(g))) break;
  }
  return mb_game_restore(g, snap, ok ? err : &(mb_error){{0}}) && ok;
}

/* Plays the actor's trajectory: whole episode, or greedy prefix + searched segment. */
static bool actor_play(trainer *T, actor *a, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_workload *own = NULL;
  mb_game *g = NULL;
  mb_hardware synth_hw = T->synth_hw;
  /* the episode's workload and hardware: the game and the return scale both read these */
  const mb_workload *w;
  const mb_hardware *hw;
  bool ok = true;
  if (a->n_synth > 0) {
    own = mb_train_synthetic_workload(&a->rng, a->n_synth, a->synth_packing, NULL, &T->synth_hw,
                                      &synth_hw, err);
    if (!own) return false;
    w = own;
    hw = &synth_hw;
    g = mb_game_new(w, hw, &a->ag.cfg.game, err);
    if (!g) {
      mb_workload_free(own);
      return false;
    }
  } else {
    w = T->wl[a->workload].w;
    hw = &T->wl[a->workload].hw;
    if (!a->games[a->workload]) {
      a->games[a->workload] = mb_game_new(w, hw, &a->ag.cfg.game, err);
      if (!a->games[a->workload])
        return mb_fail_prefix(err, "workload '%s'", T->wl[a->workload].name);
    }
    g = a->games[a->workload];
  }
  mb_game_reset(g);
  mb_trajectory_clear(&a->traj);
  mb_player *p = a->player;
  mb_player_set_scale(p, mb_return_scale(w, hw, g));
  /* decisions of an episode are at most the visitable buffers */
  int32_t start =
      mb_segment_start(mb_game_n_visitable(g), cfg->segment, cfg->segment_cover, &a->rng);
  int32_t played = 0;
  mb_player_decision d;
  while (ok && !mb_game_done(g) && played < start) {
    ok = mb_player_decide_record(p, g, &cfg->search, false, false, &a->rng, &d, err) &&
         mb_game_step(g, d.action, NULL, err);
    played++;
  }
  a->full_episode = played == 0;
  double ret_start = mb_game_return(g); /* the segment's return: unshaped (game.h) */
  while (ok && !mb_game_done(g) && a->traj.len < cfg->segment) {
    double r = 0;
    ok = mb_player_decide_record(p, g, &cfg->search, cfg->self_play_exact, true, &a->rng, &d, err);
    int32_t sib_len = 0;
    bool sib_term = false;
    if (ok && a->sib_act)
      ok = sibling_path(a, p, &d, g, cfg->sibling_depth, cfg->sibling_from_search, &sib_len,
                        &sib_term, err);
    ok = ok && mb_game_step(g, d.action, &r, err) &&
         mb_trajectory_push(&a->traj, d.obs, d.mask, d.policy, d.action,
                            (float)(r * mb_player_reward_unit(p)), d.value, err);
    if (ok && sib_len > 0)
      ok = mb_trajectory_set_sibling(&a->traj, sib_len, a->sib_act, a->sib_rew, a->sib_obs,
                                     sib_term, err);
  }
  if (ok) {
    bool done = mb_game_done(g);
    if (!done) a->full_episode = false;
    mb_game_observe(g, a->obs);
    ok = mb_trajectory_finish(&a->traj, a->obs, done, err);
    a->ret = mb_game_return(g) - ret_start;
  }
  if (own) {
    mb_game_free(g);
    mb_workload_free(own);
  }
  return ok;
}

static void *actor_thread(void *arg) {
  void **args = arg;
  trainer *T = args[0];
  actor *a = args[1];
  a->ok = actor_play(T, a, &a->err);
  return NULL;
}

/* Runs actors [0, n) on `jobs` threads: each thread takes actors i = t, t + jobs, ... */
typedef struct pool_arg {
  trainer *T;
  int32_t first, stride, n;
} pool_arg;

static void *pool_thread(void *arg) {
  pool_arg *pa = arg;
  for (int32_t i = pa->first; i < pa->n; i += pa->stride) {
    void *args[2] = {pa->T, &pa->T->actors[i]};
    actor_thread(args);
  }
  return NULL;
}

static bool run_actors(trainer *T, int32_t n, int32_t jobs, mb_error *err) {
  if (jobs <= 1 || n <= 1) {
    pool_arg pa = {T, 0, 1, n};
    pool_thread(&pa);
  } else {
    if (jobs > n) jobs = n;
    pthread_t th[64];
    pool_arg pa[64];
    if (jobs > 64) jobs = 64;
    int32_t started = 0;
    for (int32_t t = 0; t < jobs; t++) {
      pa[t] = (pool_arg){T, t, jobs, n};
      if (pthread_create(&th[t], NULL, pool_thread, &pa[t]) != 0) break;
      started++;
    }
    for (int32_t t = 0; t < started; t++) pthread_join(th[t], NULL);
    if (started < jobs) {
      /* finish the rest on this thread */
      for (int32_t t = started; t < jobs; t++) pool_thread(&pa[t]);
    }
  }
  for (int32_t i = 0; i < n; i++)
    if (!T->actors[i].ok) {
      *err = T->actors[i].err;
      return mb_fail_prefix(err, "self-play actor %d", i);
    }
  return true;
}

/* ================================ the loop ================================ */

void mb_train_result_free(mb_train_result *res) {
  mb_agent_free(&res->agent);
  if (res->opt.slots) mb_adam_free(&res->opt);
  mb_agent_curve_free(&res->curve);
  memset(res, 0, sizeof *res);
}

static void free_actors(trainer *T, int32_t n) {
  for (int32_t i = 0; T->actors && i < n; i++) {
    actor *a = &T->actors[i];
    mb_player_free(a->player);
    for (int32_t w = 0; a->games && w < T->n_wl; w++) mb_game_free(a->games[w]);
    free(a->games);
    mb_trajectory_free(&a->traj);
    free(a->sib_act);
    free(a->sib_tree);
    free(a->sib_rew);
    free(a->sib_obs);
    free(a->sib_mask);
    free(a->obs);
    mb_agent_free(&a->ag);
  }
  free(T->actors);
  T->actors = NULL;
}

/* The first multiple of `every` above step (INT64_MAX when every is 0: never). */
static int64_t next_multiple(int64_t step, int64_t every) {
  return every > 0 ? (step / every + 1) * every : INT64_MAX;
}

double mb_train_lr(const mb_train_config *c, int64_t step) {
  if (isnan(c->lr_end) || c->steps <= 0) return c->lr;
  double f = fmin(1.0, (double)step / (double)c->steps);
  return c->lr_end + (c->lr - c->lr_end) * 0.5 * (1.0 + cos(M_PI * f));
}

double mb_train_priority_beta(const mb_train_config *c, int64_t step) {
  if (c->steps <= 0) return c->priority_beta;
  double f = (double)step / (double)c->steps;
  if (f > 1) f = 1;
  return c->priority_beta + (1.0 - c->priority_beta) * f;
}

int32_t mb_train_curriculum_max(const mb_train_config *c, int64_t step, double seconds) {
  double f =
      c->steps > 0 ? (double)step / (double)c->steps : seconds / (c->seconds > 0 ? c->seconds : 1);
  f = f < 0 ? 0 : f < 0.5 ? f : 0.5; /* sizes grow over the first half of the run */
  return c->synth_min + (int32_t)lround(2 * f * (c->synth_max - c->synth_min));
}

static bool save(const mb_train_config *cfg, mb_train_result *res, mb_error *err) {
  if (!cfg->out) return true;
  return mb_agent_save(cfg->out, &res->agent, &res->opt, &res->prog, &res->curve, cfg->note, err);
}

/* The validation set at the curve's last point (which is at the current step, `seconds` into
 * training): its return goes into the curve, and a new best is kept in best_out. */
static bool validate(const mb_train_config *cfg, mb_train_result *res, double seconds,
                     mb_error *err) {
  mb_agent_curve *c = &res->curve;
  if (cfg->n_validation == 0 || c->len == 0 || c->step[c->len - 1] != (double)res->prog.steps ||
      !isnan(c->validation[c->len - 1]))
    return true;
  double v;
  if (!mb_eval_policy(&res->agent, cfg->validation, cfg->n_validation, MB_EVAL_POLICY, cfg->seed,
                      &v, err))
    return mb_fail_prefix(err, "validation");
  mb_agent_curve_set_validation(c, v);
  if (!isnan(res->best_validation) && !(v > res->best_validation)) return true;
  res->best_validation = v;
  res->best_step = res->prog.steps;
  if (!cfg->best_out) return true;
  /* the note says which point this is: the file's curve and progress say it too */
  const char *base = cfg->note ? cfg->note : "mallocbench train";
  size_t n = strlen(base) + 128;
  char *note = malloc(n);
  if (!note) return mb_fail(err, "train: out of memory");
  snprintf(note, n, "%s; kept as the best validation return %.6f at step %lld", base, v,
           (long long)res->prog.steps);
  double keep = res->prog.seconds;
  res->prog.seconds = seconds;
  bool ok = mb_agent_save(cfg->best_out, &res->agent, &res->opt, &res->prog, c, note, err);
  res->prog.seconds = keep;
  free(note);
  if (!ok) return false;
  res->best_written = true;
  if (cfg->log)
    fprintf(cfg->log, "train: step %lld: best validation return so far %.4f, written to %s\n",
            (long long)res->prog.steps, v, cfg->best_out);
  return true;
}

/* Copies the name that starts at *p in a comma-separated list into name[n] and moves *p to
 * the comma or the end after it; false when that name is empty or does not fit. */
static bool next_network(const char **p, char *name, size_t n) {
  size_t len = strcspn(*p, ",");
  if (len == 0 || len >= n) return false;
  memcpy(name, *p, len);
  name[len] = '\0';
  *p += len;
  return true;
}

bool mb_train_freeze_check(const char *list, mb_error *err) {
  char name[32];
  for (const char *p = list;; p++) { /* p++: past the comma */
    bool found = false;
    if (next_network(&p, name, sizeof name))
      for (int i = 0; i < 4; i++) found = found || !strcmp(name, MB_AGENT_NETWORKS[i]);
    if (!found)
      return mb_fail(err, "--freeze '%s': expected networks among %s, %s, %s, %s", list,
                     MB_AGENT_NETWORKS[0], MB_AGENT_NETWORKS[1], MB_AGENT_NETWORKS[2],
                     MB_AGENT_NETWORKS[3]);
    if (!*p) return true;
  }
}

/* Freezes the networks named in `list` (comma-separated; NULL: none) in the optimiser. */
static bool freeze_networks(mb_adam *opt, const char *list, mb_error *err) {
  char name[32];
  for (const char *p = list; p; p++) { /* p++: past the comma */
    if (!next_network(&p, name, sizeof name))
      return mb_train_freeze_check(list, err); /* names the list and what it expects */
    if (!mb_adam_freeze(opt, name, err)) return mb_fail_prefix(err, "--freeze '%s'", list);
    if (!*p) break;
  }
  return true;
}

/* The agent to train: the checkpoint (or training state) resumed, else a fresh one (init's
 * weights when given) with a fresh optimiser. */
static bool start_agent(trainer *T, const mb_agent *init, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_train_result *res = T->res;
  if (cfg->resume) {
    /* a training state is a checkpoint too: its agent is the one to continue */
    const char *from = cfg->resume_state ? cfg->resume_state : cfg->resume;
    if (!mb_agent_load(from, &res->agent, &res->opt, &res->prog, &res->curve, err)) return false;
    if (cfg->options) snprintf(res->prog.options, sizeof res->prog.options, "%s", cfg->options);
    res->opt.cfg.lr = cfg->lr;
    if (!cfg->new_model) return true;
    /* the old optimiser's slots point at the old model, and its step count would leave the
     * new model's moments without bias correction: a fresh one over all four networks */
    mb_adam_free(&res->opt);
    mb_rng r = mb_rng_split(&T->base, STREAM_NEW_MODEL);
    if (!mb_agent_new_model(&res->agent, cfg->agent.dyn_width, cfg->agent.dyn_blocks, &r, err)) {
      mb_train_result_free(res);
      return false;
    }
  } else {
    mb_rng r = mb_rng_split(&T->base, STREAM_INIT);
    const mb_agent_config *ac = init ? &init->cfg : &cfg->agent;
    if (!mb_agent_create(&res->agent, ac, &r, err)) return false;
    if (init && !mb_agent_copy_weights(&res->agent, init, err)) {
      mb_train_result_free(res);
      return false;
    }
    res->prog.seed = cfg->seed;
    if (cfg->options) snprintf(res->prog.options, sizeof res->prog.options, "%s", cfg->options);
  }
  mb_nn_module *mods[4];
  mb_agent_modules(&res->agent, mods);
  mb_adam_config acfg;
  mb_adam_config_default(&acfg);
  acfg.lr = cfg->lr;
  acfg.weight_decay = cfg->weight_decay;
  if (!mb_adam_create(&res->opt, mods, 4, &acfg, err)) {
    mb_train_result_free(res);
    return false;
  }
  return true;
}

/* The evaluation set: the first eval_max training workloads, or 8 synthetic ones from small to
 * large drawn from the run's seed. */
static bool make_eval_set(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  if (cfg->synthetic && !mb_hardware_find("tpu-v4i", NULL, &T->synth_hw, err))
    return mb_fail_prefix(err, "synthetic workloads");
  int32_t n = T->n_wl > 0 ? (T->n_wl < cfg->eval_max ? T->n_wl : cfg->eval_max) : 8;
  T->n_eval = n;
  T->eval_set = calloc((size_t)n, sizeof *T->eval_set);
  T->eval_own = calloc((size_t)n, sizeof *T->eval_own);
  if (!T->eval_set || !T->eval_own) return mb_fail(err, "train: out of memory");
  for (int32_t i = 0; i < n; i++) {
    if (T->n_wl > 0) {
      T->eval_set[i] = T->wl[i];
      continue;
    }
    mb_rng r = mb_rng_split(&T->base, STREAM_EVAL_SET + (uint64_t)i);
    int32_t nb = cfg->synth_min + (cfg->synth_max - cfg->synth_min) * i / (n > 1 ? n - 1 : 1);
    T->eval_own[i] =
        mb_train_synthetic_workload(&r, nb, false, NULL, &T->synth_hw, &T->eval_set[i].hw, err);
    if (!T->eval_own[i]) return false;
    T->eval_set[i].w = T->eval_own[i];
    T->eval_set[i].name = "synthetic-eval";
  }
  return true;
}

/* The opening lines of the log: size, references, the game and observation, the BLAS kernel. */
static void log_start(const trainer *T) {
  const mb_train_config *cfg = T->cfg;
  const mb_train_result *res = T->res;
  if (!cfg->log) return;
  fprintf(cfg->log,
          "train: %lld parameters; eval set %d workloads: raw policy %.4f, random play %.4f, "
          "heuristic %.4f (mean return, simulated)\n",
          (long long)mb_agent_param_count(&res->agent), T->n_eval, res->untrained_policy,
          res->random_policy, res->heuristic_play);
  mb_agent_describe_game(cfg->log, &res->agent.cfg, "train: ");
  /* the agent trained depends on sgemm's kernel in its last bits (tensor.h, "Determinism") */
  char blas[256];
  mb_blas_describe(blas, sizeof blas);
  fprintf(cfg->log,
          "train: BLAS %s (another kernel trains another agent: "
          "scripts/pinned-blas.sh)\n",
          blas);
  if (cfg->resume && res->prog.blas[0] && strcmp(res->prog.blas, blas))
    mb_diag(cfg->log, /* the BLAS recorded in the file is text from a file */
            "train: warning: %s was trained with BLAS '%s', this run uses '%s': the resumed "
            "agent will differ from an uninterrupted run on either kernel "
            "(scripts/pinned-blas.sh)",
            cfg->resume, res->prog.blas, blas);
}

/* Where training starts from: the raw policy, random play and the heuristic on the eval set
 * (the curve's references and, for a fresh run, its first point), the best validation return
 * of a resumed curve, and the validation set at the starting step. */
static bool measure_start(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_train_result *res = T->res;
  const mb_agent *ag = &res->agent;
  if (!mb_eval_policy(ag, T->eval_set, T->n_eval, MB_EVAL_POLICY, cfg->seed, &res->untrained_policy,
                      err) ||
      !mb_eval_policy(ag, T->eval_set, T->n_eval, MB_EVAL_RANDOM, cfg->seed, &res->random_policy,
                      err) ||
      !mb_eval_policy(ag, T->eval_set, T->n_eval, MB_EVAL_HEURISTIC, cfg->seed,
                      &res->heuristic_play, err))
    return false;
  log_start(T);
  /* a resumed curve's points were measured on its eval set: this run's must be the same, which
   * the heuristic's return on it tells (curves stored before the references: not known) */
  if (cfg->resume && res->curve.len > 0 && isfinite(res->curve.heuristic) &&
      res->curve.heuristic != res->heuristic_play) {
    if (cfg->keep_eval_set)
      return mb_fail(err,
                     "train: --resume %s: this run's eval set is not the one of its training "
                     "curve (the heuristic's mean return on it: %.6f, on the curve's %.6f): the "
                     "workloads differ from the run's",
                     cfg->resume, res->heuristic_play, res->curve.heuristic);
    if (cfg->log)
      fprintf(cfg->log,
              "train: the eval set differs from the one of %s's training curve (heuristic "
              "%.4f there, %.4f here): its %lld points are left out, the curve starts again "
              "at step %lld\n",
              cfg->resume, res->curve.heuristic, res->heuristic_play, (long long)res->curve.len,
              (long long)res->prog.steps);
    mb_agent_curve_free(&res->curve);
  }
  /* the curve's references, on the same eval set as its raw-policy returns; a resumed run
   * measures them again (its eval set is the one of the points it adds) */
  res->curve.heuristic = res->heuristic_play;
  res->curve.random = res->random_policy;
  if (res->curve.len == 0 &&
      !mb_agent_curve_push(&res->curve, (double)res->prog.steps, (double)res->prog.episodes, NAN,
                           res->untrained_policy, NAN, res->prog.seconds, err))
    return false;
  /* best so far: a resumed curve's, so that best_out is only ever replaced by a better agent */
  res->final_validation = res->best_validation = NAN;
  res->best_step = -1;
  for (int64_t i = 0; i < res->curve.len; i++) {
    double v = res->curve.validation[i];
    if (!isnan(v) && (isnan(res->best_validation) || v > res->best_validation)) {
      res->best_validation = v;
      res->best_step = (int64_t)res->curve.step[i];
    }
  }
  if (!validate(cfg, res, res->prog.seconds, err)) return false;
  if (cfg->log && cfg->n_validation > 0)
    fprintf(cfg->log, "train: validation set %d workloads: raw policy %.4f (step %lld)\n",
            cfg->n_validation, res->curve.validation[res->curve.len - 1],
            (long long)res->prog.steps);
  return true;
}

/* The self-play actors (each with its own copy of the network, player, trajectory and sibling
 * buffers), the learner and the replay buffer. */
static bool create_actors_and_learner(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  const mb_agent *ag = &T->res->agent;
  const int32_t A = ag->cfg.game.n_actions, NA = cfg->actors_per_round;
  T->actors = calloc((size_t)NA, sizeof *T->actors);
  if (!T->actors) return mb_fail(err, "train: out of memory");
  for (int32_t i = 0; i < NA; i++) {
    actor *a = &T->actors[i];
    mb_rng r0;
    mb_rng_seed(&r0, 0);
    if (!mb_agent_create(&a->ag, &ag->cfg, &r0, err) ||
        !mb_trajectory_init(&a->traj, ag->cfg.obs_dim, A, err))
      return false;
    a->obs = malloc((size_t)ag->cfg.obs_dim * sizeof *a->obs);
    if (!a->obs) return mb_fail(err, "train: out of memory");
    if (cfg->sibling_weight > 0) {
      int32_t P = cfg->sibling_depth;
      if (!mb_trajectory_enable_siblings(&a->traj, P, err)) return false;
      a->sib_act = malloc((size_t)P * sizeof *a->sib_act);
      a->sib_tree = malloc((size_t)P * sizeof *a->sib_tree);
      a->sib_rew = malloc((size_t)P * sizeof *a->sib_rew);
      a->sib_obs = malloc((size_t)P * ag->cfg.obs_dim * sizeof *a->sib_obs);
      a->sib_mask = malloc((size_t)A);
      if (!a->sib_act || !a->sib_tree || !a->sib_rew || !a->sib_obs || !a->sib_mask)
        return mb_fail(err, "train: out of memory");
    }
    if (!(a->player = mb_player_create(&a->ag, cfg->search.simulations, err))) return false;
    if (T->n_wl > 0 && !(a->games = calloc((size_t)T->n_wl, sizeof *a->games)))
      return mb_fail(err, "train: out of memory");
  }
  int32_t sibling_depth = cfg->sibling_weight > 0 ? cfg->sibling_depth : 0;
  if (!(T->learner = mb_learner_create(ag, cfg->batch, cfg->unroll, sibling_depth, err)) ||
      !mb_replay_init(&T->replay, cfg->replay_capacity, ag->cfg.obs_dim, A, err))
    return false;
  if (cfg->priority_alpha > 0 && !mb_replay_enable_priority(&T->replay, cfg->priority_alpha, err))
    return false;
  return cfg->sibling_weight <= 0 || mb_replay_enable_siblings(&T->replay, cfg->sibling_depth, err);
}

/* The learner's counters and stream, and the replay buffer when the run resumes a training
 * state (then it continues bit for bit); the grids of evaluations, checkpoints and states. */
static bool start_counters(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_train_result *res = T->res;
  T->last_log = mb_wall_seconds();
  T->k = (mb_train_counters){.learner_rng = learner_stream(&T->base, res->prog.steps)};
  /* the learner target was copied from the weights above: at a state's step they are equal */
  if (cfg->resume_state && !mb_train_state_load(cfg->resume_state, &T->replay, &T->k, err))
    return false;
  /* a state already at state_out belongs to another run (one this run overwrites): left there,
   * a later --resume would take it for this run's */
  if (cfg->state_out && !(cfg->resume_state && !strcmp(cfg->resume_state, cfg->state_out)) &&
      unlink(cfg->state_out) == 0 && cfg->log)
    fprintf(cfg->log, "train: removed %s, the training state of an earlier run\n", cfg->state_out);
  if (cfg->resume && cfg->log) {
    if (cfg->resume_state)
      fprintf(cfg->log,
              "train: resumed at step %lld from the training state %s (%lld transitions in the "
              "replay buffer): the run continues as if it had never stopped\n",
              (long long)res->prog.steps, cfg->resume_state, (long long)T->replay.count);
    else
      fprintf(cfg->log,
              "train: resumed at step %lld from the checkpoint %s alone (no training state): the "
              "replay buffer starts empty, so this run will differ from an uninterrupted one\n",
              (long long)res->prog.steps, cfg->resume);
    if (cfg->new_model)
      fprintf(cfg->log,
              "train: a new learned model: dynamics %d wide with %d residual block(s) and a "
              "reward head, freshly initialised, with a fresh optimiser; the other networks "
              "are %s's\n",
              mb_agent_dyn_width(&res->agent.cfg), mb_agent_dyn_blocks(&res->agent.cfg),
              cfg->resume);
  }
  /* on the grids of the run that started at step 0, wherever this one resumes */
  T->next_eval = next_multiple(res->prog.steps, cfg->eval_every);
  T->next_ckpt = next_multiple(res->prog.steps, cfg->checkpoint_every);
  T->next_state = cfg->state_out ? next_multiple(res->prog.steps, cfg->state_every) : INT64_MAX;
  return true;
}

/* A point of the curve at the current step: the raw policy on the eval set, the mean self-play
 * return and loss since the last point, the validation set; then the caller's hook. */
static bool curve_point(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_train_result *res = T->res;
  mb_train_counters *k = &T->k;
  double pol, seconds = res->prog.seconds + (mb_wall_seconds() - T->t_start);
  bool ok =
      mb_eval_policy(&res->agent, T->eval_set, T->n_eval, MB_EVAL_POLICY, cfg->seed, &pol, err) &&
      mb_agent_curve_push(&res->curve, (double)res->prog.steps, (double)res->prog.episodes,
                          k->selfplay_n ? k->selfplay_sum / k->selfplay_n : NAN, pol,
                          k->loss_n ? k->loss_sum / k->loss_n : NAN, seconds, err);
  ok = ok && validate(cfg, res, seconds, err);
  ok = ok &&
       (!cfg->on_eval || cfg->on_eval(cfg->on_eval_ctx, &res->agent, res->prog.steps, false, err));
  k->selfplay_sum = k->loss_sum = 0;
  k->selfplay_n = k->loss_n = 0;
  T->next_eval = next_multiple(res->prog.steps, cfg->eval_every);
  if (ok && cfg->log) {
    char val[48] = "";
    if (cfg->n_validation > 0)
      snprintf(val, sizeof val, ", validation %.4f", res->curve.validation[res->curve.len - 1]);
    fprintf(cfg->log, "train: step %lld: raw policy (greedy, no search) %.4f on the eval set%s\n",
            (long long)res->prog.steps, pol, val);
  }
  return ok;
}

/* The checkpoint and the training state, when the step is on their grids. */
static bool write_due(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_train_result *res = T->res;
  bool at_ckpt = res->prog.steps >= T->next_ckpt;
  /* the target network equals the weights only right after a copy */
  bool at_state = res->prog.steps >= T->next_state && res->prog.steps % cfg->target_period == 0;
  if (!at_ckpt && !at_state) return true;
  double keep = res->prog.seconds;
  res->prog.seconds = keep + (mb_wall_seconds() - T->t_start);
  bool ok = !at_ckpt || save(cfg, res, err);
  if (ok && at_state) {
    double t_state = mb_wall_seconds();
    ok = mb_train_state_save(cfg->state_out, &res->agent, &res->opt, &res->prog, &res->curve,
                             cfg->note, &T->replay, &T->k, err);
    struct stat st;
    if (ok && cfg->log && stat(cfg->state_out, &st) == 0)
      fprintf(cfg->log, "train: step %lld: training state written to %s (%.1f MB, %.2f s)\n",
              (long long)res->prog.steps, cfg->state_out, (double)st.st_size / 1e6,
              mb_wall_seconds() - t_state);
  }
  res->prog.seconds = keep;
  if (at_ckpt) T->next_ckpt = next_multiple(res->prog.steps, cfg->checkpoint_every);
  if (at_state) T->next_state = next_multiple(res->prog.steps, cfg->state_every);
  return ok;
}

static bool step_limit_reached(const trainer *T) {
  return T->cfg->steps > 0 && T->res->prog.steps >= T->cfg->steps;
}

/* The learner updates the replay ratio owes (a resumed state may owe some still), with the
 * target network copies, curve points, checkpoints and states that fall among them. */
static bool learn(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_train_result *res = T->res;
  double t0 = mb_wall_seconds();
  bool ok = true;
  while (ok && T->k.owed >= 1 && !step_limit_reached(T)) {
    res->opt.cfg.lr = mb_train_lr(cfg, res->prog.steps);
    ok = mb_learner_step(T->learner, &res->agent, &res->opt, cfg, &T->replay,
                         mb_train_priority_beta(cfg, res->prog.steps), &T->k.learner_rng, err);
    T->k.owed -= 1;
    res->prog.steps++;
    T->updates++;
    mb_learner_losses loss = mb_learner_last_losses(T->learner);
    T->k.loss_sum += loss.policy + loss.value + loss.reward + loss.consistency + loss.sibling;
    T->k.loss_n++;
    if (ok && res->prog.steps % cfg->target_period == 0)
      ok = mb_learner_update_target(T->learner, &res->agent, err);
    if (ok && res->prog.steps >= T->next_eval) ok = curve_point(T, err);
    ok = ok && write_due(T, err);
  }
  T->t_learn += mb_wall_seconds() - t0;
  return ok;
}

/* The progress line, every log_every_s seconds. */
static void log_progress(trainer *T) {
  const mb_train_config *cfg = T->cfg;
  const mb_train_result *res = T->res;
  if (!cfg->log || mb_wall_seconds() - T->last_log < cfg->log_every_s) return;
  T->last_log = mb_wall_seconds();
  /* "-" when no trajectory ended since the last curve point (its mean restarts there) */
  char selfplay[32] = "-";
  if (T->k.selfplay_n)
    snprintf(selfplay, sizeof selfplay, "%.4f", T->k.selfplay_sum / T->k.selfplay_n);
  mb_learner_losses loss = mb_learner_last_losses(T->learner);
  /* steps/s is this run's wall-clock rate (self-play, evaluations and checkpoints
   * included), which the ETA extrapolates; the learner's and self-play's own rates follow */
  double wall = mb_wall_seconds() - T->t_start, rate = wall > 0 ? T->updates / wall : 0.0;
  char eta[48] = "";
  double left = rate > 0 ? (double)(cfg->steps - res->prog.steps) / rate : -1;
  if (cfg->steps > 0 && left >= 0 && left < 1e7) { /* h:mm:ss, as run's progress line */
    long long x = (long long)(left + 0.5);
    if (x >= 3600)
      snprintf(eta, sizeof eta, "  ETA %lld:%02lld:%02lld", x / 3600, x / 60 % 60, x % 60);
    else
      snprintf(eta, sizeof eta, "  ETA %02lld:%02lld", x / 60, x % 60);
  }
  fprintf(cfg->log,
          "train: step %lld  episodes %lld  decisions %lld  self-play return %s  loss "
          "policy %.3f value %.3f reward %.3f consistency %.3f  %.1f steps/s (learner "
          "%.1f updates/s, self-play %.0f decisions/s)  replay %lld%s\n",
          (long long)res->prog.steps, (long long)res->prog.episodes, (long long)res->prog.decisions,
          selfplay, loss.policy, loss.value, loss.reward, loss.consistency, rate,
          T->t_learn > 0 ? T->updates / T->t_learn : 0.0,
          T->t_self > 0 ? T->decisions_run / T->t_self : 0.0, (long long)T->replay.count, eta);
  fflush(cfg->log);
}

/* One round of self-play: each actor gets the current weights and a job (a synthetic workload
 * of the curriculum's size, or a catalogue workload), plays it, and its trajectory goes into
 * the replay buffer; the learner is then owed replay_ratio updates per batch of new
 * decisions. */
static bool self_play_round(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_train_result *res = T->res;
  const int32_t NA = cfg->actors_per_round;
  double t0 = mb_wall_seconds();
  int32_t largest = mb_train_curriculum_max(cfg, res->prog.steps, mb_wall_seconds() - T->t_start);
  bool ok = true;
  for (int32_t i = 0; ok && i < NA; i++) {
    actor *a = &T->actors[i];
    ok = mb_agent_copy_weights(&a->ag, &res->agent, err);
    uint64_t round = (uint64_t)res->prog.episodes + (uint64_t)i;
    a->rng = mb_rng_split(&T->base, STREAM_ACTOR + round);
    bool synth = cfg->synthetic && (T->n_wl == 0 || mb_rng_uniform(&a->rng) < cfg->synth_share);
    a->n_synth = 0;
    a->synth_packing = false;
    if (synth) {
      a->n_synth = (int32_t)mb_rng_range(&a->rng, cfg->synth_min, largest);
      /* drawn only when asked for, so that runs without packing keep their random stream */
      a->synth_packing =
          cfg->synth_packing_share > 0 && mb_rng_uniform(&a->rng) < cfg->synth_packing_share;
    } else {
      a->workload = (int32_t)mb_rng_below(&a->rng, (uint64_t)T->n_wl);
    }
  }
  ok = ok && run_actors(T, NA, cfg->jobs, err);
  int64_t new_dec = 0;
  for (int32_t i = 0; ok && i < NA; i++) {
    actor *a = &T->actors[i];
    if (a->traj.len == 0) continue; /* an episode without decisions */
    ok = mb_replay_add(&T->replay, &a->traj, err);
    new_dec += a->traj.len;
    T->k.selfplay_sum += a->ret;
    T->k.selfplay_n++;
  }
  res->prog.episodes += NA;
  res->prog.decisions += new_dec;
  T->decisions_run += new_dec;
  T->episodes_run += NA;
  T->t_self += mb_wall_seconds() - t0;
  /* without a single decision nothing is ever learned, and a run bounded by --steps would
   * never end */
  if (ok && T->decisions_run == 0 && T->episodes_run >= EMPTY_EPISODES_MAX)
    ok = mb_fail(err,
                 "train: %" PRId64
                 " episodes without a decision: the workloads have nothing "
                 "to learn from (every buffer pinned, larger than the fast memory or without "
                 "benefit)",
                 T->episodes_run);
  if (T->replay.total_added >= cfg->batch)
    T->k.owed += (double)new_dec * cfg->replay_ratio / cfg->batch;
  return ok;
}

/* The end of a run: the last curve point (unless the last evaluation was at this step), the
 * validation set, the checkpoint and the caller's hook; the training state is then obsolete. */
static bool finish(trainer *T, mb_error *err) {
  const mb_train_config *cfg = T->cfg;
  mb_train_result *res = T->res;
  if (!mb_eval_policy(&res->agent, T->eval_set, T->n_eval, MB_EVAL_POLICY, cfg->seed,
                      &res->final_policy, err))
    return false;
  mb_agent_curve *c = &res->curve;
  if ((c->len == 0 || c->step[c->len - 1] != (double)res->prog.steps) &&
      !mb_agent_curve_push(c, (double)res->prog.steps, (double)res->prog.episodes,
                           T->k.selfplay_n ? T->k.selfplay_sum / T->k.selfplay_n : NAN,
                           res->final_policy, T->k.loss_n ? T->k.loss_sum / T->k.loss_n : NAN,
                           res->prog.seconds, err))
    return false;
  if (!validate(cfg, res, res->prog.seconds, err)) return false;
  if (cfg->n_validation > 0) res->final_validation = c->validation[c->len - 1];
  if (!save(cfg, res, err) ||
      (cfg->on_eval && !cfg->on_eval(cfg->on_eval_ctx, &res->agent, res->prog.steps, true, err)))
    return false;
  /* the run is complete: its state has nothing left to resume */
  if (cfg->state_out && unlink(cfg->state_out) != 0 && errno != ENOENT && cfg->log)
    fprintf(cfg->log, "train: note: cannot remove the training state %s: %s\n", cfg->state_out,
            strerror(errno));
  return true;
}

static void trainer_free(trainer *T) {
  free_actors(T, T->cfg->actors_per_round);
  mb_learner_free(T->learner);
  mb_replay_free(&T->replay);
  for (int32_t i = 0; T->eval_own && i < T->n_eval; i++) mb_workload_free(T->eval_own[i]);
  free(T->eval_own);
  free(T->eval_set);
}

bool mb_train(const mb_train_config *cfg, const mb_train_workload *workloads, int32_t n_workloads,
              const mb_agent *init, mb_train_result *res, mb_error *err) {
  memset(res, 0, sizeof *res);
  if (!mb_train_config_check(cfg, err)) return false;
  if (n_workloads <= 0 && !cfg->synthetic)
    return mb_fail(err, "train: no workloads (give catalogue workloads or synthetic training)");
  trainer T = {.cfg = cfg, .wl = workloads, .n_wl = n_workloads, .res = res};
  T.t_start = mb_wall_seconds();
  mb_rng_seed(&T.base, cfg->seed);
  if (!start_agent(&T, init, err)) return false;
  if (!freeze_networks(&res->opt, cfg->freeze, err)) {
    mb_train_result_free(res);
    return false;
  }
  bool ok = make_eval_set(&T, err) && measure_start(&T, err) &&
            create_actors_and_learner(&T, err) && start_counters(&T, err);
  /* rounds: the learner catches up with what self-play has added, then self-play adds more */
  while (ok) {
    ok = learn(&T, err);
    if (ok) log_progress(&T);
    if (!ok || step_limit_reached(&T)) break;
    if (cfg->seconds > 0 && mb_wall_seconds() - T.t_start >= cfg->seconds) break;
    ok = self_play_round(&T, err);
  }
  res->seconds = mb_wall_seconds() - T.t_start;
  res->prog.seconds += res->seconds;
  res->updates = T.updates;
  res->updates_per_s = T.t_learn > 0 ? T.updates / T.t_learn : 0;
  res->decisions_per_s = T.t_self > 0 ? T.decisions_run / T.t_self : 0;
  ok = ok && finish(&T, err);
  trainer_free(&T);
  if (!ok) mb_train_result_free(res);
  return ok;
}
