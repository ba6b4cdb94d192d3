/* One interface for every solver: solve(workload, hardware, options, rng) -> assignment.
 *
 * Every solver is deterministic for a given seed, respects its budget, and never returns an
 * invalid assignment (callers still run the validator: it is independent of every solver).
 * Solvers are looked up by name in a registry (solvers/solver.c). */
#ifndef MB_SOLVER_H
#define MB_SOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "assignment.h"
#include "error.h"
#include "hardware.h"
#include "rng.h"
#include "workload.h"

typedef struct mb_solver_options {
  uint64_t seed;
  double budget_seconds;   /* wall-clock budget for search/local search (<= 0: default) */
  const char *agent_path;  /* mallocMuZero checkpoint (HDF5), NULL for solvers without one */
  int simulations;         /* mallocMuZero: simulations per step (0: default) */
  double c_scale;          /* mallocMuZero: Gumbel sigma's c_scale at evaluation (0: default) */
  int search;              /* mallocMuZero: MB_SOLVER_SEARCH_GUMBEL (0, the default: Gumbel
                              MuZero) or MB_SOLVER_SEARCH_PUCT (MuZero's pUCT, no root noise,
                              the most visited move) */
  int leaf_rollout;        /* mallocMuZero: raw-policy steps played from each new search node
                              for its value (mb_search_config.leaf_rollout); 0: the solver's
                              default, MB_SOLVER_NO_LEAF_ROLLOUT: none (the value network alone) */
  double finetune_seconds; /* mallocMuZero: per-workload fine-tuning budget (0: none) */
  int64_t finetune_steps;  /* mallocMuZero: fine-tuning by updates instead of time (0: none);
                              reproducible, unlike seconds; not both */
  const char *order;       /* mallocMuZero: mallocGame buffer order, "heuristic" (default),
                              "start" or "size"; other solvers ignore it */
} mb_solver_options;

/* Upper limits of the mallocMuZero options, one for every entry point (CLI, driver, solver). */
#define MB_SOLVER_MAX_SIMULATIONS 1000000
#define MB_SOLVER_MAX_FINETUNE_STEPS 100000000 /* days of updates on a 2-core machine */
#define MB_SOLVER_MAX_LEAF_ROLLOUT 100000      /* = MB_SEARCH_MAX_LEAF_ROLLOUT (asserted) */
#define MB_SOLVER_NO_LEAF_ROLLOUT (-1)
/* mallocMuZero's search kinds (= mb_search_kind, asserted in solvers/muzero/mallocmuzero.c). */
#define MB_SOLVER_SEARCH_GUMBEL 0
#define MB_SOLVER_SEARCH_PUCT 1
/* "gumbel" or "puct" to MB_SOLVER_SEARCH_*; false for anything else. */
bool mb_solver_search_parse(const char *name, int *search);
/* The name of a search kind; NULL when `search` is none. */
const char *mb_solver_search_name(int search);

/* What a solver reports besides the assignment (all optional to fill). */
typedef struct mb_solver_stats {
  int64_t iterations; /* solver-specific effort counter (moves tried, simulations, ...) */
  bool budget_hit;    /* stopped by the budget rather than by convergence */
  char note[256];     /* one line for humans, e.g. "local search: 12 swaps, 3 repacks" */
  /* Training curve / evaluation episodes (mallocMuZero); owned by the stats, may be NULL. */
  int32_t curve_len;
  double *curve_step;   /* training steps */
  double *curve_return; /* mean episode return at that step */
  /* The curve's reference: the heuristic's mean return on the same episodes; NaN when unknown.
   * Read only with a curve: a solver that reports a curve sets it. */
  double curve_heuristic;
} mb_solver_stats;

void mb_solver_stats_free(mb_solver_stats *st);

/* A solve, as the driver and `solve` call it:
 * - w has passed mb_cost_check_range on hw (its times cannot overflow); hw->capacity is the
 *   fast memory to fill;
 * - rng is already seeded by the caller from opt->seed: draw from it, do not reseed, so that a
 *   seed replays a run's row;
 * - out has w->n_buffers entries, all slow (mb_assignment_new): the solver sets the offsets of
 *   the buffers it places; on false its content is ignored;
 * - stats is zeroed by the caller (curve_heuristic NaN in the driver) and never NULL there: fill
 *   what applies (heuristic and greedy also accept NULL, which the bound's tests use);
 * - false only when the solver cannot play (err says why: a missing agent, out of memory); the
 *   run stores an 'error' row. Returning an invalid assignment is a bug the driver's validator
 *   catches and stores as 'invalid'. */
typedef bool (*mb_solve_fn)(const mb_workload *w, const mb_hardware *hw,
                            const mb_solver_options *opt, mb_rng *rng, mb_assignment *out,
                            mb_solver_stats *stats, mb_error *err);

/* Checks once, before a run solves anything, what every solve with these options needs;
 * false with err saying what is missing and how to get it (a run then fails at once instead of
 * storing one error row per solve). */
typedef bool (*mb_solver_check_fn)(const mb_solver_options *opt, mb_error *err);

/* A registry entry (solvers/solver.c). Adding a solver: HACKING.md, "Adding a solver"; a
 * registered solver joins every run that does not name its solvers (`run`'s default, so
 * scripts/run.sh and both profiles). */
typedef struct mb_solver {
  const char *name; /* at most 31 bytes (results files store 32), no comma (--solvers lists
                       names with commas), distinct from the others in its letters alone (the
                       paper's LaTeX macros keep only letters); test_solver checks all three */
  const char *summary;
  mb_solve_fn solve;
  mb_solver_check_fn check; /* NULL: the solver needs nothing beyond its inputs */
  bool uses_agent;          /* plays an agent checkpoint (opt->agent_path, else the default) */
  double default_budget_s;  /* the wall-clock budget when opt->budget_seconds <= 0; 0: the
                               solver has no budget (it always completes quickly) */
} mb_solver;

/* NULL when no solver has that name. */
const mb_solver *mb_solver_find(const char *name);
/* The registry, in the order tables list solvers. */
const mb_solver *mb_solver_list(int *count);
void mb_solver_options_default(mb_solver_options *opt);

/* ---- the solvers (one file each) ---- */
/* Default budgets (why these: greedy.c and muzero/mallocmuzero.c): a wall-clock safety net that
 * no solve of either profile reaches, so that results do not depend on the machine's speed. */
#define MB_GREEDY_DEFAULT_BUDGET_S 60.0
#define MB_MUZERO_DEFAULT_BUDGET_S 300.0
bool mb_solve_heuristic(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                        mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err);
bool mb_solve_greedy(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                     mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err);

/* The greedy's constructive phase alone (lazy greedy on exact gains, lowest-offset placement),
 * without the heuristic start and the local search: for benchmarks of its O(n log n) cost. */
bool mb_greedy_construct(const mb_workload *w, const mb_hardware *hw, mb_assignment *out,
                         mb_error *err);
/* The default agent checkpoint, results/agents/default.h5 under the source tree, into out (n
 * bytes); NULL when it does not fit. */
const char *mb_default_agent_path(char *out, size_t n);
/* The agent check of both mallocMuZero solvers: the checkpoint loads (the message of a missing
 * one says how to train it). */
bool mb_check_mallocmuzero(const mb_solver_options *opt, mb_error *err);
/* The digest (mb_agent_digest, solvers/muzero/agent.h: the networks and config, nothing of the
 * training run) of the agent the mallocMuZero solvers play with these options, into hex (65
 * bytes). Results files record it beside the checkpoint file's SHA-256: two trainings that end
 * in the same networks write files that differ in wall times, and this tells them equal. */
bool mb_mallocmuzero_agent_digest(const mb_solver_options *opt, char hex[65], mb_error *err);
/* mallocMuZero (solvers/muzero/mallocmuzero.c): needs an agent checkpoint (opt->agent_path,
 * default results/agents/default.h5, made by `mallocbench train`). */
bool mb_solve_mallocmuzero(const mb_workload *w, const mb_hardware *hw,
                           const mb_solver_options *opt, mb_rng *rng, mb_assignment *out,
                           mb_solver_stats *stats, mb_error *err);
bool mb_solve_mallocmuzero_exact(const mb_workload *w, const mb_hardware *hw,
                                 const mb_solver_options *opt, mb_rng *rng, mb_assignment *out,
                                 mb_solver_stats *stats, mb_error *err);

/* The heuristic's buffer priority order (memory-boundedness, then larger size, then longer live
 * range, then id), pinned and over-capacity buffers excluded, and buffers with zero
 * memory-boundedness (they cannot save time: see solvers/heuristic.c). Writes indices to
 * order[] (n_buffers entries) and returns how many; -1 on allocation failure. The mallocGame
 * visits buffers in this order by default. */
int32_t mb_heuristic_order(const mb_workload *w, const mb_hardware *hw, int32_t *order);

#endif
