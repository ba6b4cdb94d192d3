/* mallocbench run: the whole benchmark (suite/driver.h), then the summary table. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "driver.h"
#include "error.h"
#include "paths.h"
#include "results.h"
#include "search.h"
#include "summary.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench run [OPTIONS]\n"
          "       mallocbench run --resume FILE [--jobs N] [--data DIR] [--catalogue FILE]\n\n"
          "Runs catalogue workloads x solvers x seeds x hardware profiles and stores every result\n"
          "in one HDF5 file (layout: results/README.md). Times are simulated by mallocbench's\n"
          "cost model; speedups are over the heuristic on the same workload and hardware.\n\n"
          "  --profile quick|full  quick (default): the entries tagged 'quick' in the catalogue\n"
          "                        (else a fixed list), 1 seed; full: every entry, 3 seeds;\n"
          "                        both: each solver's default budget per solve\n"
          "  --workloads REGEX     entries whose name matches (PCRE2), instead of the profile's\n"
          "  --split train|test    only the entries of this catalogue split (with the profile's\n"
          "                        set or --workloads); stored as the exact list of names\n"
          "  --solvers LIST        comma-separated solver names (default: all registered)\n"
          "  --seeds N             seeds 0..N-1 (default: the profile's)\n"
          "  --hardware LIST       run every workload on these profiles (name or path) instead of\n"
          "                        its entry's; the entry's fast-memory capacity is kept, since\n"
          "                        the catalogue sizes it per workload (datasets/CATALOGUE.md);\n"
          "                        at most 16 profiles, each with its own name\n"
          "  --agent FILE          mallocMuZero checkpoint for the mallocmuzero solvers (default:\n"
          "                        theirs, results/agents/default.h5); loaded before anything\n"
          "                        is solved (missing or bad: exit 2 at once); its absolute path\n"
          "                        and SHA-256 are recorded\n"
          "  --jobs N              parallel solves (default: number of cores)\n"
          "  --budget SEC          seconds per solve (default: each solver's own, a wall-clock\n"
          "                        safety net that no solve of either profile reaches)\n"
          "  --bound-budget SEC    time limit of each workload x hardware LP bound, > 0\n"
          "                        (default: the profile's, quick 10 s, full 120 s); building\n"
          "                        the LP and its rounds of cover cuts counts, each GLPK solve\n"
          "                        gets what is left but at least 1 ms and checks its clock\n"
          "                        between iterations; a bound cut short is valid but weaker\n"
          "                        (bound_status 'not solved')\n"
          "  --simulations N       mallocmuzero solvers: search simulations per decision\n"
          "                        (default: theirs, %d)\n"
          "  --c-scale X           mallocmuzero solvers: Gumbel sigma's c_scale at evaluation,\n"
          "                        > 0 (default: theirs, %g)\n"
          "  --leaf-rollout N      mallocmuzero solvers: value each new search node by N steps\n"
          "                        of the agent's raw policy from it, then its value network\n"
          "                        (0: the value network alone; default: theirs, %d in the\n"
          "                        real game for mallocmuzero-exact, none in the learned model)\n"
          "  --search gumbel|puct  mallocmuzero solvers: Gumbel MuZero (default) or MuZero's\n"
          "                        pUCT (no root noise, the most visited move; --c-scale is\n"
          "                        then unused)\n"
          "  --finetune SEC        mallocmuzero solvers: after a first play, train the agent on\n"
          "                        each workload for SEC seconds (on top of --budget), playing\n"
          "                        again at 8 points and at the end; the best episode is kept\n"
          "                        (default 0: none)\n"
          "  --finetune-steps N    mallocmuzero solvers: the same for N training updates instead\n"
          "                        of seconds, playing every N/8 updates: reproducible on any\n"
          "                        machine with the same OpenBLAS kernel\n"
          "                        (scripts/pinned-blas.sh), unlike --finetune (not both); the\n"
          "                        other solvers ignore these options\n"
          "  --data DIR            external data directory (default: MALLOCBENCH_DATA or\n"
          "                        ../shared/data)\n"
          "  --catalogue FILE      catalogue file (default: datasets/catalogue.txt)\n"
          "  --out FILE            results file (default: results/<profile>-<UTC stamp>.h5,\n"
          "                        -2.h5 etc. if taken, and the symlink results/latest.h5);\n"
          "                        an existing FILE is an error\n"
          "  --force               replace an existing --out FILE\n"
          "  --resume FILE         continue an interrupted run (plan options come from FILE)\n"
          "  --no-progress         no progress line on stderr\n\n"
          "Exit status: 0 done, 1 some solver returned an invalid assignment or failed (stored\n"
          "as rows with status 'invalid'/'error'), 2 bad usage, bad input or an I/O error.\n",
          MB_SEARCH_EVAL_SIMULATIONS, MB_SEARCH_EVAL_C_SCALE, MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT);
}

/* A list option that names nothing (`''`, `,`) would silently mean the default (every solver,
 * each entry's own profile): an error line instead. */
static bool nonempty_list(const char *flag, const char *value, const char *of_what) {
  if (value[strspn(value, ", ")] != '\0') return true;
  mb_diag(stderr, "mallocbench run: %s '%s': expected a comma-separated list of %s", flag, value,
          of_what);
  return false;
}

/* Reads the options into cfg. Returns 0, or 2 after an error line. */
static int parse_options(int argc, char **argv, mb_run_config *cfg) {
  *cfg = (mb_run_config){.progress = true};
  bool plan_option = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--force")) {
      cfg->force = true;
      continue;
    }
    if (!strcmp(a, "--no-progress")) {
      cfg->progress = false;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *name = o.flag, *val = o.value;
    if (!strcmp(name, "--jobs")) {
      int64_t n = 0;
      if (!mb_option_int("run", name, val, 1, 1000000, &n)) return 2;
      cfg->jobs = (int)n;
    } else if (!strcmp(name, "--data")) {
      if (!mb_option_path("run", name, val, &cfg->data_dir)) return 2;
    } else if (!strcmp(name, "--catalogue")) {
      if (!mb_option_path("run", name, val, &cfg->catalogue)) return 2;
    } else if (!strcmp(name, "--out")) {
      if (!mb_option_path("run", name, val, &cfg->out)) return 2;
    } else if (!strcmp(name, "--resume")) {
      if (!mb_option_path("run", name, val, &cfg->resume)) return 2;
    } else {
      plan_option = true; /* the rest make the plan, which --resume takes from its file */
      if (!strcmp(name, "--profile")) {
        if (!mb_option_text("run", name, val, &cfg->profile)) return 2;
      } else if (!strcmp(name, "--workloads")) {
        if (!mb_option_text("run", name, val, &cfg->workloads)) return 2;
      } else if (!strcmp(name, "--split")) {
        if (!mb_option_split("run", name, val, &cfg->split)) return 2;
      } else if (!strcmp(name, "--solvers")) {
        if (!mb_option_text("run", name, val, &cfg->solvers)) return 2;
        if (!nonempty_list(name, val, "solver names")) return 2;
      } else if (!strcmp(name, "--agent")) {
        if (!mb_option_path("run", name, val, &cfg->agent)) return 2;
      } else if (!strcmp(name, "--hardware")) {
        if (!mb_option_text("run", name, val, &cfg->hardware)) return 2;
        if (!nonempty_list(name, val, "hardware profiles (names or paths)")) return 2;
      } else if (!strcmp(name, "--seeds")) {
        int64_t n = 0;
        if (!mb_option_int("run", name, val, 1, 1000000, &n)) return 2;
        cfg->seeds = (int)n;
      } else if (!strcmp(name, "--budget")) {
        if (!mb_option_number("run", name, val, 0, true, 1e9, &cfg->budget)) return 2;
      } else if (!strcmp(name, "--bound-budget")) {
        if (!mb_option_number("run", name, val, 0, true, 1e9, &cfg->bound_budget)) return 2;
      } else if (!strcmp(name, "--simulations")) {
        int64_t n = 0;
        if (!mb_option_int("run", name, val, 1, MB_SOLVER_MAX_SIMULATIONS, &n)) return 2;
        cfg->simulations = (int)n;
      } else if (!strcmp(name, "--c-scale")) {
        if (!mb_option_number("run", name, val, 0, true, 1e6, &cfg->c_scale)) return 2;
      } else if (!strcmp(name, "--leaf-rollout")) {
        int64_t n = 0;
        if (!mb_option_int("run", name, val, 0, MB_SOLVER_MAX_LEAF_ROLLOUT, &n)) return 2;
        cfg->leaf_rollout = n > 0 ? (int)n : MB_SOLVER_NO_LEAF_ROLLOUT;
      } else if (!strcmp(name, "--search")) {
        if (!mb_option_search("run", name, val, &cfg->search)) return 2;
      } else if (!strcmp(name, "--finetune")) {
        if (!mb_option_number("run", name, val, 0, false, 1e9, &cfg->finetune)) return 2;
      } else if (!strcmp(name, "--finetune-steps")) {
        int64_t n = 0;
        if (!mb_option_int("run", name, val, 0, MB_SOLVER_MAX_FINETUNE_STEPS, &n)) return 2;
        cfg->finetune_steps = n;
      } else {
        return mb_unknown_option("run", a);
      }
    }
    i = o.last;
  }
  if (cfg->resume && plan_option) {
    fprintf(stderr,
            "mallocbench run: --resume takes the plan (profile, workloads, split, solvers, "
            "seeds, hardware, agent, budget, bound-budget, simulations, c-scale, leaf-rollout, "
            "search, finetune, finetune-steps) from the file; drop those options\n");
    return 2;
  }
  return 0;
}

/* Where the run's time went, and what it reused. */
static void print_run_stats(const mb_run_stats *st) {
  int64_t commits = st->commits;
  printf("\nrun: %" PRId64 " task%s (%" PRId64 " job%s + %d baseline%s), %" PRId64
         " computed here, %" PRId64 " reused; %d entr%s skipped for missing data\n",
         st->tasks_total, st->tasks_total == 1 ? "" : "s", st->jobs_total,
         st->jobs_total == 1 ? "" : "s", (int)st->n_pairs, st->n_pairs == 1 ? "" : "s",
         st->tasks_run, st->tasks_reused, (int)st->n_skipped, st->n_skipped == 1 ? "y" : "ies");
  printf(
      "wall %.2f s (prepare %.2f s); compute %.2f s summed over workers; store %.3f s "
      "(%.2f ms per task), journal %.3f s (%.2f ms per task)\n",
      st->wall_s, st->prepare_s, st->solve_s, st->store_s,
      commits > 0 ? 1e3 * st->store_s / (double)commits : 0.0, st->journal_s,
      st->tasks_run > 0 ? 1e3 * st->journal_s / (double)st->tasks_run : 0.0);
}

int mb_cmd_run(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  mb_run_config cfg;
  int status = parse_options(argc, argv, &cfg);
  if (status != 0) return status;
  /* --out (even with --force) must not replace an input: the catalogue or the agent */
  mb_error input_err;
  if (!mb_path_check_distinct(cfg.out, cfg.catalogue, "the --catalogue file", &input_err) ||
      !mb_path_check_distinct(cfg.out, cfg.agent, "the --agent checkpoint", &input_err)) {
    mb_diag(stderr, "mallocbench run: --out %s", input_err.message);
    return 2;
  }
  char *cmd = mb_command_line(argc, argv);
  cfg.command_line = cmd ? cmd : "mallocbench run";
  cfg.log = stderr;
  mb_run_stats st;
  mb_error err = {{0}};
  bool ok = mb_run(&cfg, &st, &err);
  free(cmd);
  if (!ok) {
    mb_diag(stderr, "mallocbench run: %s", err.message);
    if (st.wrote_output && access(st.out_path, F_OK) == 0)
      mb_diag(stderr,
              "mallocbench run: results finished so far are in %s (continue with "
              "mallocbench run --resume %s)",
              st.out_path, st.out_path);
    return 2;
  }
  mb_results *r = mb_results_open(st.out_path, false, &err);
  if (!r || !mb_summary_print(r, stdout, &err)) {
    mb_diag(stderr, "mallocbench run: %s", err.message);
    mb_results_close(r, NULL);
    return 2;
  }
  print_run_stats(&st);
  mb_diag(stdout, "results: %s", st.out_path);
  if (st.n_invalid || st.n_error) mb_summary_print_failures(r, "mallocbench run", stderr, &err);
  mb_results_close(r, NULL);
  if (st.n_invalid || st.n_error) {
    fprintf(stderr,
            "mallocbench run: %" PRId64 " invalid and %" PRId64
            " failed solve(s); see the rows' status and note\n",
            st.n_invalid, st.n_error);
    return 1;
  }
  return 0;
}
