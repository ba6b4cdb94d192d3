/* The mallocMuZero solvers: `mallocmuzero` (search in the learned model) and
 * `mallocmuzero-exact` (the same agent searching the real game: exact rewards and masks at every
 * node, the ablation).
 *
 * Both load an agent checkpoint (opt->agent_path, default results/agents/default.h5 under the
 * source tree; `mallocbench train` makes it) and play one whole mallocGame episode on the
 * workload with search at every decision: opt->simulations per decision and the Gumbel sigma's
 * opt->c_scale (default: mb_search_config_evaluation, the same for both so that they differ only
 * in the model searched), Gumbel root without noise. When the time budget (opt->budget_seconds,
 * default 60 s) runs out mid-episode, the remaining decisions are played by the agent's raw
 * policy network (greedy, no search) and stats->note says how many. With opt->finetune_seconds
 * > 0 the agent first trains on this workload alone (self-play + updates) for that long, plays
 * again, and the better of the two episodes is returned. The answer is always the agent's own
 * play: no other solver's assignment is used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "game.h"
#include "paths.h"
#include "solver.h"
#include "train.h"

#define DEFAULT_BUDGET_S 60.0

static bool default_agent_path(char *out, size_t n) {
  return mb_path_join(out, n, mb_source_dir(), "results/agents/default.h5") != NULL;
}

/* Plays one episode; the assignment goes to out. */
static bool play_once(const mb_agent *ag, const mb_workload *w, const mb_hardware *hw,
                      const mb_search_config *scfg, bool exact, double deadline, mb_rng *rng,
                      mb_assignment *out, double *ret, int64_t *searched, int64_t *decisions,
                      mb_error *err) {
  mb_game *g = mb_game_new(w, hw, &ag->cfg.game, err);
  if (!g) return false;
  mb_player *p = mb_player_create(ag, scfg->simulations, err);
  if (p) mb_player_set_scale(p, mb_return_scale(w, hw, g));
  bool ok = p && mb_player_play(p, g, scfg, exact, deadline, rng, searched, decisions, err) &&
            mb_game_assignment(g, out, err);
  if (ok) *ret = mb_game_return(g);
  mb_player_free(p);
  mb_game_free(g);
  return ok;
}

static bool solve(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                  mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, bool exact,
                  mb_error *err) {
  double t0 = mb_train_now();
  char path[4096];
  const char *agent_path = opt->agent_path;
  if (!agent_path) {
    if (!default_agent_path(path, sizeof path))
      return mb_fail(err, "mallocmuzero: default agent path too long");
    agent_path = path;
  }
  FILE *probe = fopen(agent_path, "rb");
  if (!probe)
    return mb_fail(err,
                   "mallocmuzero: agent checkpoint '%s' not found: train one first with "
                   "`mallocbench train --synthetic --out %s` (see datasets/agents/README.md)",
                   agent_path, agent_path);
  fclose(probe);
  /* the agent and its training curve (raw-policy returns), reported with the result; HDF5 is
   * built thread-safe here (H5_HAVE_THREADSAFE), so driver workers may load concurrently */
  mb_agent ag;
  mb_agent_progress prog;
  mb_agent_curve curve = {0};
  if (!mb_agent_load(agent_path, &ag, NULL, &prog, &curve, err)) return false;
  mb_search_config scfg;
  mb_search_config_evaluation(&scfg);
  if (opt->simulations > 0) scfg.simulations = opt->simulations;
  if (opt->c_scale > 0) scfg.c_scale = opt->c_scale;
  if (opt->order) {
    mb_game_order ord;
    if (!mb_game_order_parse(opt->order, &ord)) {
      mb_agent_free(&ag);
      mb_agent_curve_free(&curve);
      return mb_fail(err, "mallocmuzero: order '%s': expected heuristic, start or size",
                     opt->order);
    }
    ag.cfg.game.order = ord;
  }
  double budget = opt->budget_seconds > 0 ? opt->budget_seconds : DEFAULT_BUDGET_S;
  double ft = opt->finetune_seconds > 0 ? opt->finetune_seconds : 0;
  /* the fine-tuning time is on top of the playing budget */
  double deadline = t0 + budget;
  double ret = 0, ret2 = -1;
  int64_t searched = 0, decisions = 0, s2 = 0, d2 = 0;
  bool ok =
      play_once(&ag, w, hw, &scfg, exact, deadline, rng, out, &ret, &searched, &decisions, err);
  int64_t ft_steps = 0;
  if (ok && ft > 0) {
    mb_train_config tc;
    mb_train_config_default(&tc);
    tc.seconds = ft;
    tc.seed = opt->seed;
    tc.eval_every = 0;
    tc.checkpoint_every = 0;
    tc.batch = 32;
    mb_train_workload tw = {.name = w->name, .w = w, .hw = *hw};
    mb_train_result tr;
    ok = mb_train(&tc, &tw, 1, &ag, &tr, err);
    if (ok) {
      ft_steps = tr.updates;
      mb_assignment *a2 = mb_assignment_new(w->n_buffers);
      double d2line = mb_train_now() + budget;
      ok = a2 && play_once(&tr.agent, w, hw, &scfg, exact, d2line, rng, a2, &ret2, &s2, &d2, err);
      if (ok && ret2 > ret) {
        mb_assignment_copy(out, a2);
        searched = s2;
        decisions = d2;
      }
      mb_assignment_free(a2);
      mb_train_result_free(&tr);
    }
  }
  mb_agent_free(&ag);
  if (!ok) {
    mb_agent_curve_free(&curve);
    return false;
  }
  double best = ret2 > ret ? ret2 : ret;
  stats->iterations = searched * scfg.simulations;
  stats->budget_hit = searched < decisions;
  int n = snprintf(
      stats->note, sizeof stats->note,
      "%s search, %d sims/decision, c_scale %g, Q spread floor %g: %lld of %lld decisions "
      "searched%s; return %.4f",
      exact ? "exact-game" : "learned-model", scfg.simulations, scfg.c_scale, scfg.q_min_range,
      (long long)searched, (long long)decisions,
      searched < decisions ? " (budget hit: the rest played by the raw policy net)" : "", best);
  if (ft > 0 && n > 0 && n < (int)sizeof stats->note)
    snprintf(stats->note + n, sizeof stats->note - (size_t)n,
             "; fine-tuned %lld updates: %.4f -> %.4f", (long long)ft_steps, ret, ret2);
  /* the agent's training curve: raw-policy mean return against training steps */
  if (curve.len > 0) {
    stats->curve_step = malloc((size_t)curve.len * sizeof(double));
    stats->curve_return = malloc((size_t)curve.len * sizeof(double));
    if (stats->curve_step && stats->curve_return) {
      memcpy(stats->curve_step, curve.step, (size_t)curve.len * sizeof(double));
      memcpy(stats->curve_return, curve.policy, (size_t)curve.len * sizeof(double));
      stats->curve_len = (int32_t)curve.len;
    } else {
      free(stats->curve_step);
      free(stats->curve_return);
      stats->curve_step = stats->curve_return = NULL;
    }
  }
  mb_agent_curve_free(&curve);
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
