/* The mallocMuZero solvers: `mallocmuzero` (search in the learned model) and
 * `mallocmuzero-exact` (the same agent searching the real game: exact rewards and masks at every
 * node, leaves valued by rollouts of its own policy network).
 *
 * Both load an agent checkpoint (opt->agent_path, default results/agents/default.h5 under the
 * source tree; `mallocbench train` makes it) and play one whole mallocGame episode on the
 * workload with search at every decision: opt->simulations per decision and the Gumbel sigma's
 * opt->c_scale (default: mb_search_config_evaluation, the same for both), Gumbel root without
 * noise; opt->search MB_SOLVER_SEARCH_PUCT plays MuZero's pUCT instead (no root noise, the most
 * visited move). New nodes are valued by the value network (mallocmuzero) or, in the real game, by
 * a leaf rollout of the agent's own raw policy plus the value network where it stops
 * (mallocmuzero-exact, MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT steps; opt->leaf_rollout sets it for
 * either, MB_SOLVER_NO_LEAF_ROLLOUT turns it off: exact search with the value network alone is
 * then the ablation that differs from mallocmuzero only in the model searched). When the time
 * budget (opt->budget_seconds, default MB_MUZERO_DEFAULT_BUDGET_S) runs out mid-episode, the
 * remaining decisions are played by the agent's raw policy network (greedy, no search) and
 * stats->note says how many. With opt->finetune_seconds > 0 the agent then trains on this workload
 * alone (self-play + updates) for that long, playing the whole episode again with the same search
 * about FINETUNE_PLAYS times (at evaluation points spread over that time, the last at its end), and
 * the best episode found is returned (the "reporting the best episode found").
 * opt->finetune_steps = N > 0 does the same for N updates, playing after every N / FINETUNE_PLAYS
 * of them (after each when N < FINETUNE_PLAYS) and at the end: the same answer on
 * any machine with the same OpenBLAS kernel (tensor.h, "Determinism"), unless a play hits the time
 * budget, where seconds depend on the machine's speed and load. Fine-tuning self-play searches the
 * model the solver searches: the learned one, or the real game for mallocmuzero-exact. The answer
 * is always the agent's own play: no other solver's assignment is used. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "clock.h"
#include "game.h"
#include "paths.h"
#include "player.h"
#include "solver.h"
#include "train.h"

/* solver.h cannot include the search's header; the two limits are one */
_Static_assert(MB_SOLVER_MAX_LEAF_ROLLOUT == MB_SEARCH_MAX_LEAF_ROLLOUT,
               "MB_SOLVER_MAX_LEAF_ROLLOUT must equal MB_SEARCH_MAX_LEAF_ROLLOUT");
_Static_assert(MB_SOLVER_SEARCH_GUMBEL == (int)MB_SEARCH_GUMBEL &&
                   MB_SOLVER_SEARCH_PUCT == (int)MB_SEARCH_PUCT,
               "MB_SOLVER_SEARCH_* must equal mb_search_kind");

/* MB_MUZERO_DEFAULT_BUDGET_S (solver.h), seconds per play: the exact variant's leaf rollouts
 * take ~20 s on the largest test-split workload (657 decisions) on the 2-core machine and ~3x
 * that under scripts/pinned-blas.sh (the fine-tuning runs), so a budget that rarely cuts a
 * search short, which would make the answer depend on the machine's speed */
/* plays during fine-tuning besides the one at its end: enough for a best-of to matter, few
 * enough that playing takes a small share of the time on the largest workloads */
#define FINETUNE_PLAYS 8

const char *mb_default_agent_path(char *out, size_t n) {
  return mb_path_join(out, n, mb_source_dir(), "results/agents/default.h5");
}

/* Plays one episode; the assignment goes to out. */
static bool play_once(const mb_agent *ag, const mb_workload *w, const mb_hardware *hw,
                      const mb_search_config *scfg, bool exact, double deadline, mb_rng *rng,
                      mb_assignment *out, double *ret, int64_t *searched, int64_t *decisions,
                      mb_error *err) {
  mb_game *g = mb_game_new(w, hw, &ag->cfg.game, err);
  if (!g) return false;
  mb_player *p = mb_player_create(ag, scfg->simulations, err);
  if (p) {
    mb_player_set_scale(p, mb_return_scale(w, hw, g));
    mb_player_use_gemv(p, true); /* a third of the time; the same moves (player.h) */
  }
  bool ok = p && mb_player_play(p, g, scfg, exact, deadline, rng, searched, decisions, err) &&
            mb_game_assignment(g, out, err);
  if (ok) *ret = mb_game_return(g);
  mb_player_free(p);
  mb_game_free(g);
  return ok;
}

/* The episodes played during fine-tuning (the train loop's on_eval hook): the best one is kept. */
typedef struct finetune_plays {
  const mb_workload *w;
  const mb_hardware *hw;
  const mb_search_config *scfg;
  bool exact;
  double budget; /* seconds per play */
  /* when the next play is due: by time (every_s > 0), else by updates (every_steps) */
  double every_s, next_play;                 /* mb_wall_seconds() seconds */
  int64_t every_steps, next_step, last_step; /* last_step: the final play's */
  mb_rng *rng;
  mb_assignment *trial, *best;
  double best_ret;
  int64_t best_step, searched, decisions; /* of the best play (best_step -1: the first one) */
  bool best_final;                        /* the best play is the one at the end */
  int32_t plays;
} finetune_plays;

static bool play_during_finetune(void *ctx, const mb_agent *ag, int64_t step, bool final,
                                 mb_error *err) {
  finetune_plays *f = ctx;
  double now = mb_wall_seconds();
  bool due = f->every_s > 0 ? now >= f->next_play : step >= f->next_step && step < f->last_step;
  if (!final && !due) return true;
  f->next_play = now + f->every_s;
  f->next_step = step + f->every_steps;
  double ret = 0;
  int64_t s = 0, d = 0;
  if (!play_once(ag, f->w, f->hw, f->scfg, f->exact, now + f->budget, f->rng, f->trial, &ret, &s,
                 &d, err))
    return false;
  f->plays++;
  if (ret > f->best_ret) {
    mb_assignment_copy(f->best, f->trial);
    f->best_ret = ret;
    f->best_step = step;
    f->best_final = final;
    f->searched = s;
    f->decisions = d;
  }
  return true;
}

/* The agent checkpoint (opt->agent_path, else the default one) and its training curve. */
static bool load_agent(const mb_solver_options *opt, mb_agent *ag, mb_agent_curve *curve,
                       mb_error *err) {
  char path[4096];
  const char *agent_path = opt->agent_path;
  if (!agent_path) {
    if (!mb_default_agent_path(path, sizeof path))
      return mb_fail(err, "the default agent's path is too long (source tree %s)", mb_source_dir());
    agent_path = path;
  }
  /* O_NONBLOCK: a FIFO's open would wait for a writer (the load below refuses it) */
  int probe = open(agent_path, O_RDONLY | O_NONBLOCK);
  if (probe < 0 && errno == ENOENT)
    return mb_fail(err,
                   "agent checkpoint '%s' not found: pass --agent FILE, or train the default "
                   "agent with `scripts/pinned-blas.sh build/mallocbench train --synthetic "
                   "--split train --steps 42000 --jobs 1 --seed 0 --out %s` from the source "
                   "tree (about 13 minutes; see datasets/agents/README.md)",
                   agent_path, agent_path);
  if (probe < 0) return mb_fail(err, "agent checkpoint '%s': %s", agent_path, strerror(errno));
  close(probe);
  /* HDF5 is built thread-safe here (H5_HAVE_THREADSAFE), so driver workers may load
   * concurrently */
  mb_agent_progress prog;
  mb_agent_curve_init(curve);
  return mb_agent_load(agent_path, ag, NULL, &prog, curve, err);
}

bool mb_mallocmuzero_agent_digest(const mb_solver_options *opt, char hex[65], mb_error *err) {
  mb_agent ag;
  mb_agent_curve curve;
  if (!load_agent(opt, &ag, &curve, err)) return false;
  mb_agent_digest(&ag, hex);
  mb_agent_free(&ag);
  mb_agent_curve_free(&curve);
  return true;
}

/* The check is the load that the digest makes (a digest costs little beside it). */
bool mb_check_mallocmuzero(const mb_solver_options *opt, mb_error *err) {
  char unused[65];
  return mb_mallocmuzero_agent_digest(opt, unused, err);
}

/* The search the solver plays with (the evaluation setting with the options' search kind,
 * simulations, c_scale and leaf rollout) and the options' buffer order (into the agent's game). */
static bool read_options(const mb_solver_options *opt, bool exact, mb_agent *ag,
                         mb_search_config *scfg, mb_error *err) {
  mb_search_config_evaluation(scfg, exact);
  if (opt->search == MB_SOLVER_SEARCH_PUCT)
    scfg->kind = MB_SEARCH_PUCT;
  else if (opt->search != MB_SOLVER_SEARCH_GUMBEL)
    return mb_fail(err, "mallocmuzero: search %d: expected gumbel (%d) or puct (%d)", opt->search,
                   MB_SOLVER_SEARCH_GUMBEL, MB_SOLVER_SEARCH_PUCT);
  if (opt->simulations > 0) scfg->simulations = opt->simulations;
  if (opt->c_scale > 0) scfg->c_scale = opt->c_scale;
  if (opt->leaf_rollout == MB_SOLVER_NO_LEAF_ROLLOUT)
    scfg->leaf_rollout = 0;
  else if (opt->leaf_rollout > 0)
    scfg->leaf_rollout = opt->leaf_rollout;
  if (opt->order) {
    mb_game_order ord;
    if (!mb_game_order_parse(opt->order, &ord))
      return mb_fail(err, "mallocmuzero: order '%s': expected heuristic, start or size",
                     opt->order);
    ag->cfg.game.order = ord;
  }
  return true;
}

/* Fine-tunes the agent on this workload alone for `seconds` or `steps` updates (the other 0),
 * f's hook playing the episode again at evaluation points (f->best then holds the best play);
 * *updates: how many were made. */
static bool finetune(mb_agent *ag, const mb_workload *w, const mb_hardware *hw, double seconds,
                     int64_t steps, uint64_t seed, bool exact, finetune_plays *f, int64_t *updates,
                     mb_error *err) {
  mb_train_config tc;
  mb_train_config_finetune(&tc, seconds, steps, seed, exact);
  /* the hook runs at evaluation points: often enough to play on time, or exactly when a play
   * by updates is due */
  tc.eval_every =
      tc.seconds > 0 ? 100 : (int32_t)(f->every_steps < INT32_MAX ? f->every_steps : INT32_MAX);
  tc.on_eval = play_during_finetune;
  tc.on_eval_ctx = f;
  f->next_play = mb_wall_seconds() + f->every_s;
  f->trial = mb_assignment_new(w->n_buffers);
  mb_train_workload tw = {.name = w->name, .w = w, .hw = *hw};
  mb_train_result tr;
  bool ok = f->trial && mb_train(&tc, &tw, 1, ag, &tr, err);
  if (ok) {
    *updates = tr.updates;
    mb_train_result_free(&tr);
  }
  mb_assignment_free(f->trial);
  f->trial = NULL;
  return ok;
}

/* The agent's training curve (raw-policy mean return against training steps, and the
 * heuristic's on the same eval set: NaN from checkpoints that predate it), reported with the
 * result. */
static bool report_curve(const mb_agent_curve *curve, mb_solver_stats *stats, mb_error *err) {
  if (curve->len == 0) return true;
  stats->curve_step = malloc((size_t)curve->len * sizeof(double));
  stats->curve_return = malloc((size_t)curve->len * sizeof(double));
  if (!stats->curve_step || !stats->curve_return) {
    free(stats->curve_step);
    free(stats->curve_return);
    stats->curve_step = stats->curve_return = NULL;
    return mb_fail(err, "mallocmuzero: out of memory for the training curve");
  }
  memcpy(stats->curve_step, curve->step, (size_t)curve->len * sizeof(double));
  memcpy(stats->curve_return, curve->policy, (size_t)curve->len * sizeof(double));
  stats->curve_len = (int32_t)curve->len;
  stats->curve_heuristic = curve->heuristic;
  return true;
}

static bool solve(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                  mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, bool exact,
                  mb_error *err) {
  double t0 = mb_wall_seconds();
  mb_agent ag;
  mb_agent_curve curve;
  if (!load_agent(opt, &ag, &curve, err)) return false;
  mb_search_config scfg;
  double ft = opt->finetune_seconds > 0 ? opt->finetune_seconds : 0;
  int64_t ft_updates = opt->finetune_steps > 0 ? opt->finetune_steps : 0;
  bool ok = read_options(opt, exact, &ag, &scfg, err);
  if (ok && ft > 0 && ft_updates > 0)
    ok = mb_fail(err,
                 "mallocmuzero: fine-tuning by seconds (%g) and by updates (%lld): give one of "
                 "them",
                 ft, (long long)ft_updates);
  if (!ok) {
    mb_agent_free(&ag);
    mb_agent_curve_free(&curve);
    return false;
  }
  double budget = opt->budget_seconds > 0 ? opt->budget_seconds : MB_MUZERO_DEFAULT_BUDGET_S;
  bool want_finetune = ft > 0 || ft_updates > 0;
  /* the fine-tuning time is on top of the playing budget */
  double ret = 0;
  int64_t searched = 0, decisions = 0;
  ok = play_once(&ag, w, hw, &scfg, exact, t0 + budget, rng, out, &ret, &searched, &decisions, err);
  int64_t every_steps = ft_updates / FINETUNE_PLAYS > 0 ? ft_updates / FINETUNE_PLAYS : 1;
  finetune_plays f = {.w = w,
                      .hw = hw,
                      .scfg = &scfg,
                      .exact = exact,
                      .budget = budget,
                      .every_s = ft / FINETUNE_PLAYS,
                      .every_steps = every_steps,
                      .next_step = every_steps,
                      .last_step = ft_updates,
                      .rng = rng,
                      .best = out,
                      .best_ret = ret,
                      .best_step = -1};
  int64_t ft_steps = 0;
  /* a workload without a decision (nothing visitable) has nothing to fine-tune on */
  bool nothing_to_learn = ok && want_finetune && decisions == 0;
  if (ok && want_finetune && !nothing_to_learn) {
    ok = finetune(&ag, w, hw, ft, ft_updates, opt->seed, exact, &f, &ft_steps, err);
    if (ok && f.best_step >= 0) searched = f.searched, decisions = f.decisions;
  }
  mb_agent_free(&ag);
  ok = ok && report_curve(&curve, stats, err);
  mb_agent_curve_free(&curve);
  if (!ok) return false;
  bool puct = scfg.kind == MB_SEARCH_PUCT;
  stats->iterations = searched * scfg.simulations;
  stats->budget_hit = searched < decisions;
  int n =
      snprintf(stats->note, sizeof stats->note,
               "%s search%s, %d sims/decision, %s %g, %s %g, leaf rollout %d: "
               "%lld of %lld decisions searched%s; return %.4f",
               exact ? "exact-game" : "learned-model", puct ? " (pUCT)" : "", scfg.simulations,
               puct ? "c1" : "c_scale", puct ? scfg.c1 : scfg.c_scale,
               puct ? "c2" : "Q spread floor", puct ? scfg.c2 : scfg.q_min_range, scfg.leaf_rollout,
               (long long)searched, (long long)decisions,
               searched < decisions ? " (budget hit: the rest played by the raw policy net)" : "",
               f.best_ret);
  if (nothing_to_learn && n > 0 && n < (int)sizeof stats->note)
    snprintf(stats->note + n, sizeof stats->note - (size_t)n,
             "; not fine-tuned: no decision to learn from");
  else if (want_finetune && n > 0 && n < (int)sizeof stats->note)
    snprintf(stats->note + n, sizeof stats->note - (size_t)n,
             "; fine-tuned %lld updates, %d more plays: first %.4f, best %.4f (%s)",
             (long long)ft_steps, f.plays, ret, f.best_ret,
             f.best_step < 0 ? "the first"
             : f.best_final  ? "at the end"
                             : "during fine-tuning");
  return true;
}

bool mb_solve_mallocmuzero(const mb_workload *w, const mb_hardware *hw,
                           const mb_solver_options *opt, mb_rng *rng, mb_assignment *out,
                           mb_solver_stats *stats, mb_error *err) {
  return solve(w, hw, opt, rng, out, stats, false, err);
}

bool mb_solve_mallocmuzero_exact(const mb_workload *w, const mb_hardware *hw,
                                 const mb_solver_options *opt, mb_rng *rng, mb_assignment *out,
                                 mb_solver_stats *stats, mb_error *err) {
  return solve(w, hw, opt, rng, out, stats, true, err);
}
