/* The benchmark driver behind `mallocbench run`: catalogue workloads x solvers x seeds x
 * hardware profiles, solved in parallel, stored in one HDF5 results file (suite/results.h).
 *
 * The plan. For every selected catalogue entry and hardware profile (a "pair"), one baseline
 * task (all-slow time, the heuristic's time, the LP bound: every speedup's reference) and then
 * one job per solver and seed. Tasks are numbered in that order; the number is the row order
 * of the stored tables, so a file does not depend on --jobs or on completion order.
 *
 * Threads. --jobs worker threads (pthreads) take tasks in plan order and compute (solve,
 * validate, simulate). The main thread alone writes the results file and the journal: it
 * commits finished tasks in plan order (so the stored order never depends on timing) and
 * draws the progress line.
 *
 * Crash safety. Each finished task is first appended to a sidecar journal (FILE.journal, one
 * checksummed text line per task, fdatasync'ed), then written to HDF5 once every earlier task
 * is (assignment, flush, row, flush). A kill -9 therefore loses at most the in-flight tasks,
 * and the killed file opens and verifies. `--resume FILE` re-plans from the options stored in
 * the file (or the journal), checks the plan hash (catalogue, workload contents, hardware,
 * solvers, seeds, budgets (the solvers' and the LP bound's), the agent file's SHA-256,
 * mallocMuZero's evaluation options; another agent file with the same networks, by their digest,
 * is accepted with a note), rebuilds the file from the journal beside it and renames it over the
 * old one, then runs the rest. The finished file equals an uninterrupted run's except wall times,
 * solver notes and timestamps. The journal is deleted when the run completes.
 *
 * mallocMuZero options. simulations, c_scale, leaf_rollout, search, finetune and finetune_steps
 * reach every solve (mb_solver_options); only the mallocmuzero solvers read them. They are plan
 * options like the budget, but enter the plan hash and the journal header only when one is
 * not the default (and finetune_steps, leaf_rollout and search only when they are not): a run at
 * the defaults hashes as runs made before they existed, so those files still resume (and read the
 * options as 0). */
#ifndef MB_DRIVER_H
#define MB_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "solver.h"

/* Entries of the quick profile when the catalogue has no entry tagged `quick`: one regex,
 * defined once, matched (PCRE2) against entry names. */
extern const char MB_QUICK_FALLBACK_REGEX[];

typedef struct mb_run_config {
  const char *profile;      /* "quick" (default when NULL) or "full" */
  const char *workloads;    /* PCRE2 regex on catalogue entry names; NULL: the profile's set */
  const char *split;        /* keep only entries of this catalogue split ("train"/"test");
                               recorded as the exact name regex of the entries taken */
  const char *solvers;      /* comma-separated solver names; NULL: every registered solver */
  int seeds;                /* seeds 0..seeds-1; 0: the profile's (quick 1, full 3) */
  const char *hardware;     /* comma-separated profiles replacing each entry's own (the
                               entry's capacity is kept); NULL: each entry's profile */
  const char *agent;        /* mallocMuZero checkpoint (HDF5); NULL: the solvers' default */
  int jobs;                 /* worker threads; 0: online cores */
  double budget;            /* seconds per solve; 0: each solver's default (both profiles) */
  double bound_budget;      /* time limit of each pair's LP bound, seconds (at least 1 ms of
                               GLPK's: solvers/bound.h); 0: the profile's (quick 10 s, full
                               120 s) */
  int simulations;          /* mallocMuZero ("mallocMuZero options" above): simulations per
                               decision; 0: the solvers' default */
  double c_scale;           /* mallocMuZero: Gumbel sigma's c_scale at evaluation; 0: default */
  double finetune;          /* mallocMuZero: seconds of per-workload fine-tuning; 0: none */
  int64_t finetune_steps;   /* mallocMuZero: fine-tuning by updates instead (reproducible);
                               0: none; not both */
  int leaf_rollout;         /* mallocMuZero: leaf rollout steps (mb_solver_options); 0: the
                               solvers' defaults, MB_SOLVER_NO_LEAF_ROLLOUT: none */
  int search;               /* mallocMuZero: MB_SOLVER_SEARCH_GUMBEL (0, the solvers' default)
                               or MB_SOLVER_SEARCH_PUCT */
  const char *data_dir;     /* external data; NULL: mb_data_dir(NULL) */
  const char *catalogue;    /* NULL: mb_catalogue_default_path */
  const char *out;          /* results file; NULL: results/<profile>-<stamp>.h5 + latest.h5 */
  const char *resume;       /* continue this file (the other plan options come from it) */
  bool force;               /* replace an existing --out file */
  const char *command_line; /* recorded as provenance */
  FILE *log;                /* progress, notes and skips (stderr when NULL) */
  bool progress;            /* draw the progress line */
  /* Solvers usable by name in `solvers` besides the registry's (tests inject fakes that
   * return curves, invalid assignments or errors); NULL when none. */
  const mb_solver *extra_solvers;
  int n_extra_solvers;
  /* Test hook: stop (as if killed) after this many commits in this process; 0: never. */
  int64_t stop_after;
} mb_run_config;

/* What a run did, for the caller's report. */
typedef struct mb_run_stats {
  char out_path[4096];
  int64_t tasks_total;  /* baselines + jobs in the plan */
  int64_t jobs_total;   /* solver jobs in the plan */
  int64_t tasks_run;    /* computed by this process */
  int64_t tasks_reused; /* taken from the file or the journal on --resume */
  int32_t n_pairs;
  int32_t n_skipped; /* catalogue entries skipped for missing data */
  int64_t n_invalid; /* rows the validator rejected */
  int64_t n_error;   /* rows whose solver failed */
  double wall_s;     /* whole run */
  double solve_s;    /* sum over computed tasks of their compute time (all workers) */
  int64_t commits;   /* rows written to HDF5 by this process */
  double store_s;    /* main thread: HDF5 writes + flushes (over `commits`) */
  double journal_s;  /* main thread: journal writes + fsyncs */
  double prepare_s;  /* catalogue, workloads, file creation */
  bool stopped;      /* stop_after hit: the run is incomplete by request */
  bool was_complete; /* --resume of a file that was already complete: nothing was done */
  bool wrote_output; /* out_path is this run's file (created or resumed): after a failure it
                        holds what was finished */
} mb_run_stats;

/* Runs (or resumes) a benchmark. Returns false with err set on bad input or an I/O failure;
 * results committed before the failure stay in the file. Invalid or failed solves are not
 * errors of the run: they are stored as rows and counted in stats. */
bool mb_run(const mb_run_config *cfg, mb_run_stats *stats, mb_error *err);

#endif
