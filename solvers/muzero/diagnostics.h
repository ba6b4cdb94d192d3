/* Why mallocMuZero's search does or does not help: the probes behind `mallocbench bench muzero
 * --model-error`, `--search-regret`, `--unroll-error` and `--next-window`. Each plays one episode
 * per workload of a set with the agent's raw policy network (greedy, no search) and, at every
 * `stride`-th decision, judges what a search would do against the truth (raw-policy rollouts, or
 * the true return to go) or, for --next-window, what the observation shows the model. The
 * episodes are the raw policy's own but for --model-error's, whose examined decisions play the
 * rollout-best move instead (see mb_muzero_probe_model_error).
 *
 * Each prints one table to `out` and returns true, or returns false with err naming the
 * workload that failed (or saying that no decision could be examined) and prints nothing.
 * `what` names the set in the table's title. Values are in normalised units: returns divided by
 * R_ref, the workload's reward scale (mb_return_scale, player.h). Deterministic: the same agent
 * and set print the same table. */
#ifndef MB_MUZERO_DIAGNOSTICS_H
#define MB_MUZERO_DIAGNOSTICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent.h"
#include "error.h"
#include "search.h"
#include "train.h"

/* One-step evaluations: for each legal action, the learned model's r^ + v^ against the exact
 * game's r + v(next state) and against a rollout; how often each ranks siblings like it. The
 * examined decisions then play the rollout-best action (the raw policy's on ties), the others
 * the raw policy: with stride 1 the episode's return is that of one step of exact policy
 * improvement (printed too). */
bool mb_muzero_probe_model_error(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                                 int32_t stride, const char *what, FILE *out, mb_error *err);

/* One step of policy improvement: the moves of the raw policy and of both searches (scfg[0] in
 * the learned model, scfg[1] in the real game, scfg[0].simulations each) judged by rollouts;
 * what the learned search's changes gain or lose. */
bool mb_muzero_probe_search_regret(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                                   int32_t stride, const mb_search_config scfg[2], const char *what,
                                   FILE *out, mb_error *err);

/* Depth: the path of the raw policy's next k = 0..12 moves valued as a search of depth k would,
 * in the exact game and in the learned model, against the true return to go. */
bool mb_muzero_probe_unroll_error(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                                  int32_t stride, const char *what, FILE *out, mb_error *err);

/* Partial observability: how much of the next observation's occupancy picture the current one
 * shows. At every stride-th decision t of the raw policy's episodes: the share of the next
 * buffer's time window (mb_game_window) inside the current one's, and of the fast memory in use
 * in the next window (bytes x ops of the buffers placed so far) the share outside the current
 * window: what a learned dynamics model has to predict without the observation showing it. */
bool mb_muzero_probe_next_window(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                                 int32_t stride, const char *what, FILE *out, mb_error *err);

#endif
