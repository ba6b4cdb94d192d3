/* Why mallocMuZero's search does or does not help: the diagnostics behind `mallocbench bench
 * muzero --model-error`, `--search-regret`, `--unroll-error` and `--next-window`. Each plays the
 * raw policy's own episodes on a set of workloads and, at every `stride`-th decision, judges what
 * a search would do against the truth (raw-policy rollouts, or the true return to go) or, for
 * --next-window, what the observation shows the model; prints one table to stdout and returns
 * the exit status: 0, or 1 with a message naming the workload on stderr. `what` names the set in
 * the table's title. Values are in normalised units (1 / R_ref, train.h). */
#ifndef MB_MUZERO_DIAGNOSTICS_H
#define MB_MUZERO_DIAGNOSTICS_H

#include <stdint.h>

#include "agent.h"
#include "search.h"
#include "train.h"

/* One-step evaluations: for each legal action, the learned model's r^ + v^ against the exact
 * game's r + v(next state) and against a rollout; how often each ranks siblings like it. */
int mb_diag_model_error(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                        int32_t stride, const char *what);

/* One step of policy improvement: the moves of the raw policy and of both searches (scfg[0] in
 * the learned model, scfg[1] in the real game, scfg[0].simulations each) judged by rollouts;
 * what the learned search's changes gain or lose. */
int mb_diag_search_regret(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                          int32_t stride, const mb_search_config scfg[2], const char *what);

/* Depth: the path of the raw policy's next k = 0..12 moves valued as a search of depth k would,
 * in the exact game and in the learned model, against the true return to go. */
int mb_diag_unroll_error(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                         int32_t stride, const char *what);

/* Partial observability: how much of the next observation's occupancy picture the current one
 * shows. At every stride-th decision t of the raw policy's episodes: the share of the next
 * buffer's time window (mb_game_window) inside the current one's, and of the fast memory in use
 * in the next window (bytes x ops of the buffers placed so far) the share outside the current
 * window: what a learned dynamics model has to predict without the observation showing it. */
int mb_diag_next_window(const mb_agent *ag, const mb_train_workload *set, int32_t n_set,
                        int32_t stride, const char *what);

#endif
