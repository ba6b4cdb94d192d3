/* mallocbench solve WORKLOAD --solver NAME: solves one workload with one solver and prints the
 * simulated times (all-slow, heuristic, solver), speedups, the LP bound and the gap to it,
 * fast-memory utilisation and the validator's verdict. Exit 0 valid, 1 invalid assignment,
 * 2 bad usage or bad input. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "clock.h"
#include "commands.h"
#include "cost.h"
#include "error.h"
#include "hardware.h"
#include "paths.h"
#include "search.h"
#include "solver.h"
#include "validator.h"
#include "workload_io.h"

/* The rest of --budget's help: each solver's default from the registry, wrapped under the
 * option column, e.g. " heuristic none, greedy 60 s, ...)". */
static void print_default_budgets(FILE *out, const mb_solver *s, int n) {
  enum { INDENT = 18, WIDTH = 88 };
  int col = INDENT + (int)strlen("solver wall-clock budget (default: the solver's own,");
  for (int i = 0; i < n; i++) {
    char item[96];
    if (s[i].default_budget_s > 0)
      snprintf(item, sizeof item, "%s %g s%s", s[i].name, s[i].default_budget_s,
               i + 1 < n ? "," : ")");
    else
      snprintf(item, sizeof item, "%s none%s", s[i].name, i + 1 < n ? "," : ")");
    int len = (int)strlen(item);
    if (col + 1 + len > WIDTH) {
      fprintf(out, "\n%*s%s", INDENT, "", item);
      col = INDENT + len;
    } else {
      fprintf(out, " %s", item);
      col += 1 + len;
    }
  }
  fputc('\n', out);
}

static void usage(FILE *out) {
  int n;
  const mb_solver *s = mb_solver_list(&n);
  fprintf(out,
          "usage: mallocbench solve WORKLOAD --solver NAME [--hardware H] [--capacity C]\n"
          "                         [--catalogue FILE] [--data DIR]\n"
          "                         [--seed S] [--budget SEC] [--bound-budget SEC]\n"
          "                         [--agent CHECKPOINT.h5] [--simulations N] [--c-scale X]\n"
          "                         [--leaf-rollout N] [--search gumbel|puct]\n"
          "                         [--finetune SEC | --finetune-steps N]\n"
          "                         [--out ASSIGNMENT.csv]\n\n"
          "Solves one workload and prints T_slow, T_heuristic and T_solver (all simulated by\n"
          "mallocbench's roofline cost model, not measured), the speedups, the LP upper bound on\n"
          "the saving and the solver's gap to it, fast-memory utilisation, and whether the\n"
          "independent validator accepts the assignment.\n"
          "Exit status: 0 valid, 1 invalid assignment, 2 bad usage or unreadable input.\n\n"
          "WORKLOAD          a native workload (.wl), an HLO text dump (.hlo), a buffer CSV\n"
          "                  (.csv) or a model-zoo spec (.spec); or, when no file has that\n"
          "                  name, a catalogue entry's name ('mallocbench list')\n"
          "--solver NAME     one of:");
  for (int i = 0; i < n; i++) fprintf(out, " %s", s[i].name);
  fputc('\n', out);
  mb_workload_arg_usage(out);
  fprintf(out,
          "--capacity C      fast-memory bytes instead of the profile's (suffixes B, KiB, MiB,\n"
          "                  GiB, KB, MB, GB)\n"
          "--seed S          random seed (default 1; `run` numbers its seeds 0..N-1, so --seed 0\n"
          "                  and the run's options replay its first seed, budget cuts aside)\n"
          "--budget SEC      solver wall-clock budget (default: the solver's own,");
  print_default_budgets(out, s, n);
  fprintf(out,
          "--bound-budget SEC time limit of the LP bound (default 30)\n"
          "--agent FILE      mallocMuZero checkpoint (mallocmuzero solvers)\n"
          "--simulations N   mallocmuzero solvers: search simulations per decision (default %d)\n"
          "--c-scale X       mallocmuzero solvers: Gumbel sigma's c_scale at evaluation, > 0\n"
          "                  (default %g)\n"
          "--leaf-rollout N  mallocmuzero solvers: value each new search node by N steps of\n"
          "                  the agent's raw policy from it, then its value network (0: the\n"
          "                  value network alone; default %d for mallocmuzero-exact, in the\n"
          "                  real game; none for mallocmuzero)\n"
          "--search KIND     mallocmuzero solvers: gumbel (Gumbel MuZero, default) or puct\n"
          "                  (MuZero's pUCT, no root noise, the most visited move; --c-scale\n"
          "                  is then unused)\n"
          "--finetune SEC    mallocmuzero solvers: after a first play, train the agent on this\n"
          "                  workload for SEC seconds (on top of --budget), playing again at\n"
          "                  8 points and at the end; the best episode is kept (default 0:\n"
          "                  none)\n"
          "--finetune-steps N  mallocmuzero solvers: the same for N training updates instead of\n"
          "                  seconds, playing every N/8 updates: reproducible on any machine\n"
          "                  with the same OpenBLAS kernel (scripts/pinned-blas.sh), unlike\n"
          "                  --finetune (not both); the other solvers ignore these options\n"
          "--out FILE        write the assignment CSV (readable by 'mallocbench check')\n",
          MB_SEARCH_EVAL_SIMULATIONS, MB_SEARCH_EVAL_C_SCALE, MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT);
}

static mb_time_ps time_of(const mb_workload *w, const mb_hardware *hw, const mb_assignment *a,
                          bool *fast) {
  mb_assignment_fast_flags(a, fast);
  return mb_program_time(w, hw, fast);
}

/* The command line of one solve. */
typedef struct solve_command {
  const char *path, *solver_name, *out_path;
  mb_workload_arg workload; /* --hardware, --catalogue, --data */
  int64_t capacity;         /* -1: the profile's */
  double bound_budget;
  mb_solver_options opt; /* seed, budget and the mallocMuZero settings */
} solve_command;

/* Reads the options into S (defaults first). Returns 0, or 2 after an error line. */
static int parse_options(int argc, char **argv, solve_command *S) {
  memset(S, 0, sizeof *S);
  S->capacity = -1;
  S->bound_budget = 30;
  mb_solver_options *opt = &S->opt;
  /* seed 1; budget, simulations, c_scale, leaf rollout 0: each solver's default; no
   * fine-tuning (--leaf-rollout 0 asks for none: MB_SOLVER_NO_LEAF_ROLLOUT) */
  mb_solver_options_default(opt);
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-' || !arg[1]) {
      if (S->path) {
        mb_diag(stderr, "mallocbench solve: unexpected argument '%s'", arg);
        return 2;
      }
      S->path = arg;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o); /* every option takes a value */
    const char *a = o.flag, *v = o.value;
    int read = mb_option_workload_arg("solve", a, v, &S->workload);
    if (read < 0) return 2;
    if (read > 0) {
      /* read */
    } else if (!strcmp(a, "--solver")) {
      if (S->solver_name && v) {
        mb_diag(stderr,
                "mallocbench solve: --solver '%s' after --solver '%s': one solver at a time "
                "(run --solvers A,B compares several)",
                v, S->solver_name);
        return 2;
      }
      if (!mb_option_text("solve", a, v, &S->solver_name)) return 2;
    } else if (!strcmp(a, "--out")) {
      if (!mb_option_path("solve", a, v, &S->out_path)) return 2;
    } else if (!strcmp(a, "--agent")) {
      if (!mb_option_path("solve", a, v, &opt->agent_path)) return 2;
    } else if (!strcmp(a, "--capacity")) {
      if (!mb_option_bytes("solve", a, v, 1, INT64_MAX, &S->capacity)) return 2;
    } else if (!strcmp(a, "--seed")) {
      if (!mb_option_u64("solve", a, v, &opt->seed)) return 2;
    } else if (!strcmp(a, "--simulations")) {
      if (!mb_option_i32("solve", a, v, 1, MB_SOLVER_MAX_SIMULATIONS, &opt->simulations)) return 2;
    } else if (!strcmp(a, "--finetune-steps")) {
      if (!mb_option_int("solve", a, v, 0, MB_SOLVER_MAX_FINETUNE_STEPS, &opt->finetune_steps))
        return 2;
    } else if (!strcmp(a, "--leaf-rollout")) {
      if (!mb_option_i32("solve", a, v, 0, MB_SOLVER_MAX_LEAF_ROLLOUT, &opt->leaf_rollout))
        return 2;
      if (opt->leaf_rollout == 0) opt->leaf_rollout = MB_SOLVER_NO_LEAF_ROLLOUT;
    } else if (!strcmp(a, "--search")) {
      if (!mb_option_search("solve", a, v, &opt->search)) return 2;
    } else if (!strcmp(a, "--c-scale")) {
      if (!mb_option_number("solve", a, v, 0, true, 1e6, &opt->c_scale)) return 2;
    } else if (!strcmp(a, "--budget") || !strcmp(a, "--bound-budget") || !strcmp(a, "--finetune")) {
      double *dst = !strcmp(a, "--budget")     ? &opt->budget_seconds
                    : !strcmp(a, "--finetune") ? &opt->finetune_seconds
                                               : &S->bound_budget;
      /* a budget of 0 would stop at once (run refuses it too); --finetune 0 is none */
      bool zero_ok = dst == &opt->finetune_seconds;
      if (!mb_option_number("solve", a, v, 0, !zero_ok, 1e9, dst)) return 2;
    } else {
      return mb_unknown_option("solve", arg);
    }
    i = o.last;
  }
  if (opt->finetune_seconds > 0 && opt->finetune_steps > 0) {
    fprintf(stderr, "mallocbench solve: --finetune and --finetune-steps: give one of them\n");
    return 2;
  }
  if (!S->path || !S->solver_name) {
    mb_diag(stderr, "mallocbench solve: %s", !S->path ? "missing WORKLOAD" : "missing --solver");
    usage(stderr);
    return 2;
  }
  /* --out must not destroy an input: the workload, or an agent that took hours to train */
  mb_error err;
  if (!mb_path_check_distinct(S->out_path, S->path, "the WORKLOAD", &err) ||
      !mb_path_check_distinct(S->out_path, opt->agent_path, "the --agent checkpoint", &err)) {
    mb_diag(stderr, "mallocbench solve: --out %s", err.message);
    return 2;
  }
  return 0;
}

/* Prints the simulated times, speedups, the LP bound and the gap to it (computed here within
 * bound_budget seconds) and the fast-memory usage of the solver's assignment a beside the
 * heuristic's h. */
static void print_times(const mb_workload *w, const mb_hardware *hw, const char *solver_name,
                        const mb_assignment *a, const mb_assignment *h, double bound_budget,
                        bool *fast) {
  mb_time_ps t_slow = mb_slow_time(w, hw);
  mb_time_ps t_heur = time_of(w, hw, h, fast);
  mb_time_ps t_sol = time_of(w, hw, a, fast);
  /* the times in one column, however long the solver's name */
  char t_solver[64];
  snprintf(t_solver, sizeof t_solver, "T_%s", solver_name);
  int width = (int)strlen(t_solver) > 12 ? (int)strlen(t_solver) : 12;
  printf("times are simulated by mallocbench's roofline cost model (not measured):\n");
  printf("  %-*s %15" PRId64 " ps\n", width, "T_slow", t_slow);
  printf("  %-*s %15" PRId64 " ps\n", width, "T_heuristic", t_heur);
  /* the heuristic's own solve is its reference: one line, not two */
  bool is_reference = !strcmp(solver_name, "heuristic");
  if (!is_reference) printf("  %-*s %15" PRId64 " ps\n", width, t_solver, t_sol);
  printf("  speedup vs slow       %.4fx\n", t_sol > 0 ? (double)t_slow / (double)t_sol : 0.0);
  printf("  speedup vs heuristic  %.4fx\n", t_sol > 0 ? (double)t_heur / (double)t_sol : 0.0);
  mb_bound_result br;
  mb_error err;
  if (mb_bound_lp(w, hw, bound_budget, &br, &err)) {
    printf("  %-*s %15" PRId64
           " ps  (LP upper bound on the saving, %d cover cuts, %d capped ops: %s, %.3f s)\n",
           width, "T_bound", br.bound_ps, (int)br.n_cuts, (int)br.n_capped_ops,
           mb_bound_status_name(br.status), br.seconds);
    double gap = br.bound_ps > 0 ? 100.0 * (double)(t_sol - br.bound_ps) / (double)br.bound_ps : 0;
    double hgap =
        br.bound_ps > 0 ? 100.0 * (double)(t_heur - br.bound_ps) / (double)br.bound_ps : 0;
    if (is_reference)
      printf("  gap to bound  heuristic %.3f%%  ((T - T_bound) / T_bound)\n", hgap);
    else
      printf("  gap to bound  %s %.3f%%, heuristic %.3f%%  ((T - T_bound) / T_bound)\n",
             solver_name, gap, hgap);
  } else {
    printf("  %-*s unavailable: %s\n", width, "T_bound", err.message);
  }
  int64_t peak = 0, max_addr = 0;
  mb_assignment_usage(w, a, &peak, &max_addr);
  printf("fast memory  %d buffers, peak %" PRId64
         " B live (%.1f%% of capacity), highest address "
         "%" PRId64 " B\n",
         mb_assignment_n_fast(a), peak,
         hw->capacity ? 100.0 * (double)peak / (double)hw->capacity : 0, max_addr);
}

/* Solves S's workload with its solver and with the heuristic (the reference), prints the
 * comparison and the validator's verdict, and writes the assignment if asked. Returns the
 * command's exit status. */
static int solve_and_report(const solve_command *S, const mb_solver *solver, const mb_hardware *hw,
                            const mb_workload *w) {
  int rc = 2;
  mb_error err;
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  mb_assignment *h = mb_assignment_new(w->n_buffers);
  bool *fast = malloc(sizeof *fast * (size_t)(w->n_buffers ? w->n_buffers : 1));
  mb_solver_stats st, hst;
  memset(&st, 0, sizeof st);
  memset(&hst, 0, sizeof hst);
  if (!a || !h || !fast) {
    mb_diag(stderr, "mallocbench solve: out of memory for '%s'", S->path);
    goto done;
  }
  mb_rng rng;
  mb_rng_seed(&rng, S->opt.seed);
  double t0 = mb_wall_seconds();
  if (!solver->solve(w, hw, &S->opt, &rng, a, &st, &err)) {
    mb_diag(stderr, "mallocbench solve: %s: %s", solver->name, err.message);
    goto done;
  }
  double wall = mb_wall_seconds() - t0;
  mb_rng_seed(&rng, S->opt.seed);
  if (!mb_solve_heuristic(w, hw, &S->opt, &rng, h, &hst, &err)) {
    mb_diag(stderr, "mallocbench solve: heuristic: %s", err.message);
    goto done;
  }
  mb_error verr;
  bool valid = mb_validate(w, hw, a, &verr);
  /* names, notes and paths escaped as in messages (error.h) */
  mb_diag(stdout, "workload  %s (%d buffers, %d ops, %d time steps)", w->name, w->n_buffers,
          w->n_ops, w->schedule_length);
  mb_diag(stdout, "hardware  %s: fast memory %" PRId64 " B, alignment %" PRId64 " B", hw->name,
          hw->capacity, hw->alignment);
  printf("solver    %s, seed %" PRIu64 ", wall %.3f s%s\n", solver->name, S->opt.seed, wall,
         st.budget_hit ? " (budget hit)" : "");
  if (st.note[0]) mb_diag(stdout, "          %s", st.note);
  print_times(w, hw, solver->name, a, h, S->bound_budget, fast);
  if (valid)
    printf("valid        yes (independent validator)\n");
  else
    printf("valid        NO: %s\n", verr.message);
  rc = valid ? 0 : 1;
  if (S->out_path) {
    if (!mb_assignment_save_csv(a, w, S->out_path, &err)) {
      mb_diag(stderr, "mallocbench solve: %s", err.message);
      rc = 2;
    } else {
      mb_diag(stdout, "assignment   written to %s", S->out_path);
    }
  }
done:
  mb_solver_stats_free(&st);
  mb_solver_stats_free(&hst);
  free(fast);
  mb_assignment_free(a);
  mb_assignment_free(h);
  return rc;
}

int mb_cmd_solve(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  solve_command command;
  if (parse_options(argc, argv, &command) != 0) return 2;
  const mb_solver *solver = mb_solver_find(command.solver_name);
  if (!solver) {
    mb_diag(stderr, "mallocbench solve: no solver named '%s' (see --help)", command.solver_name);
    return 2;
  }
  mb_error err;
  mb_hardware hw;
  mb_workload *w = mb_cli_workload(command.path, &command.workload, &hw, NULL, &err);
  if (!w) {
    mb_diag(stderr, "mallocbench solve: %s", err.message);
    return 2;
  }
  if (command.capacity > 0) hw = mb_hardware_with_capacity(&hw, command.capacity);
  if (!mb_cost_check_range(w, &hw, &err)) {
    mb_diag(stderr, "mallocbench solve: %s: %s", command.path, err.message);
    mb_workload_free(w);
    return 2;
  }
  int rc = solve_and_report(&command, solver, &hw, w);
  mb_workload_free(w);
  return rc;
}
