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
#include "hardware.h"
#include "search.h"
#include "solver.h"
#include "validator.h"
#include "workload_io.h"

static void usage(FILE *out) {
  int n;
  const mb_solver *s = mb_solver_list(&n);
  fprintf(out,
          "usage: mallocbench solve WORKLOAD --solver NAME [--hardware H] [--capacity C]\n"
          "                         [--seed S] [--budget SEC] [--bound-budget SEC]\n"
          "                         [--agent CHECKPOINT.h5] [--simulations N] [--c-scale X]\n"
          "                         [--leaf-rollout N]\n"
          "                         [--finetune SEC | --finetune-steps N]\n"
          "                         [--out ASSIGNMENT.csv]\n\n"
          "Solves one workload and prints T_slow, T_heuristic and T_solver (all simulated by\n"
          "mallocbench's roofline cost model, not measured), the speedups, the LP upper bound on\n"
          "the saving and the solver's gap to it, fast-memory utilisation, and whether the\n"
          "independent validator accepts the assignment.\n"
          "Exit status: 0 valid, 1 invalid assignment, 2 bad usage or unreadable input.\n\n"
          "WORKLOAD          a native workload (.wl), an HLO text dump (.hlo) or a buffer CSV\n"
          "--solver NAME     one of:");
  for (int i = 0; i < n; i++) fprintf(out, " %s", s[i].name);
  fprintf(out,
          "\n--hardware H      hardware profile name or path (default tpu-v4i)\n"
          "--capacity C      fast-memory bytes instead of the profile's (suffixes B, KiB, MiB,\n"
          "                  GiB, KB, MB, GB)\n"
          "--seed S          random seed (default 1)\n"
          "--budget SEC      solver wall-clock budget (default: the solver's own)\n"
          "--bound-budget SEC time limit of the LP bound (default 30)\n"
          "--agent FILE      mallocMuZero checkpoint (mallocmuzero solvers)\n"
          "--simulations N   mallocmuzero solvers: search simulations per decision (default %d)\n"
          "--c-scale X       mallocmuzero solvers: Gumbel sigma's c_scale at evaluation, > 0\n"
          "                  (default %g)\n"
          "--leaf-rollout N  mallocmuzero solvers: value each new search node by N steps of\n"
          "                  the agent's raw policy from it, then its value network (0: the\n"
          "                  value network alone; default %d for mallocmuzero-exact, in the\n"
          "                  real game; none for mallocmuzero)\n"
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

int mb_cmd_solve(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  const char *path = NULL, *solver_name = NULL, *hw_name = "tpu-v4i", *out_path = NULL;
  const char *agent = NULL;
  int64_t capacity = -1;
  uint64_t seed = 1;
  double budget = 0, bound_budget = 30;
  int32_t simulations = 0;          /* mallocMuZero: 0 = the solver's default */
  double c_scale = 0, finetune = 0; /* idem; finetune 0 = none */
  int32_t finetune_steps = 0;       /* idem; 0 = none */
  int32_t leaf_rollout = 0;         /* idem; MB_SOLVER_NO_LEAF_ROLLOUT = none */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (a[0] == '-' && a[1] && strcmp(a, "--solver") && strcmp(a, "--hardware") &&
        strcmp(a, "--capacity") && strcmp(a, "--seed") && strcmp(a, "--budget") &&
        strcmp(a, "--bound-budget") && strcmp(a, "--out") && strcmp(a, "--agent") &&
        strcmp(a, "--simulations") && strcmp(a, "--c-scale") && strcmp(a, "--finetune") &&
        strcmp(a, "--finetune-steps") && strcmp(a, "--leaf-rollout")) {
      fprintf(stderr, "mallocbench solve: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
    if (a[0] == '-' && a[1] && !has_value) {
      fprintf(stderr, "mallocbench solve: %s needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--solver")) {
      solver_name = argv[++i];
    } else if (!strcmp(a, "--hardware")) {
      hw_name = argv[++i];
    } else if (!strcmp(a, "--out")) {
      out_path = argv[++i];
    } else if (!strcmp(a, "--agent")) {
      agent = argv[++i];
    } else if (!strcmp(a, "--capacity")) {
      if (!mb_option_bytes("solve", a, argv[++i], 1, INT64_MAX, &capacity)) return 2;
    } else if (!strcmp(a, "--seed")) {
      if (!mb_option_u64("solve", a, argv[++i], &seed)) return 2;
    } else if (!strcmp(a, "--simulations")) {
      if (!mb_option_i32("solve", a, argv[++i], 1, MB_SOLVER_MAX_SIMULATIONS, &simulations))
        return 2;
    } else if (!strcmp(a, "--finetune-steps")) {
      if (!mb_option_i32("solve", a, argv[++i], 0, MB_SOLVER_MAX_FINETUNE_STEPS, &finetune_steps))
        return 2;
    } else if (!strcmp(a, "--leaf-rollout")) {
      if (!mb_option_i32("solve", a, argv[++i], 0, MB_SOLVER_MAX_LEAF_ROLLOUT, &leaf_rollout))
        return 2;
      if (leaf_rollout == 0) leaf_rollout = MB_SOLVER_NO_LEAF_ROLLOUT;
    } else if (!strcmp(a, "--c-scale")) {
      if (!mb_option_number("solve", a, argv[++i], 0, true, 1e6, &c_scale)) return 2;
    } else if (!strcmp(a, "--budget") || !strcmp(a, "--bound-budget") || !strcmp(a, "--finetune")) {
      double *dst = !strcmp(a, "--budget")     ? &budget
                    : !strcmp(a, "--finetune") ? &finetune
                                               : &bound_budget;
      if (!mb_option_number("solve", a, argv[++i], 0, false, 1e9, dst)) return 2;
    } else if (path) {
      fprintf(stderr, "mallocbench solve: unexpected argument '%s'\n", a);
      return 2;
    } else {
      path = a;
    }
  }
  if (finetune > 0 && finetune_steps > 0) {
    fprintf(stderr, "mallocbench solve: --finetune and --finetune-steps: give one of them\n");
    return 2;
  }
  if (!path || !solver_name) {
    fprintf(stderr, "mallocbench solve: %s\n", !path ? "missing WORKLOAD" : "missing --solver");
    usage(stderr);
    return 2;
  }
  const mb_solver *solver = mb_solver_find(solver_name);
  if (!solver) {
    fprintf(stderr, "mallocbench solve: no solver named '%s' (see --help)\n", solver_name);
    return 2;
  }
  mb_error err;
  mb_hardware hw;
  if (!mb_hardware_find(hw_name, NULL, &hw, &err)) {
    fprintf(stderr, "mallocbench solve: %s\n", err.message);
    return 2;
  }
  if (capacity > 0) hw = mb_hardware_with_capacity(&hw, capacity);
  mb_workload *w = mb_workload_load_any(path, &err);
  if (!w) {
    fprintf(stderr, "mallocbench solve: %s\n", err.message);
    return 2;
  }

  int rc = 2;
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  mb_assignment *h = mb_assignment_new(w->n_buffers);
  bool *fast = malloc(sizeof *fast * (size_t)(w->n_buffers ? w->n_buffers : 1));
  mb_solver_stats st, hst;
  memset(&st, 0, sizeof st);
  memset(&hst, 0, sizeof hst);
  if (!a || !h || !fast) {
    fprintf(stderr, "mallocbench solve: out of memory for '%s'\n", path);
    goto done;
  }
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  opt.seed = seed;
  opt.budget_seconds = budget;
  opt.agent_path = agent;
  opt.simulations = simulations;
  opt.c_scale = c_scale;
  opt.leaf_rollout = leaf_rollout;
  opt.finetune_seconds = finetune;
  opt.finetune_steps = finetune_steps;
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  double t0 = mb_wall_seconds();
  if (!solver->solve(w, &hw, &opt, &rng, a, &st, &err)) {
    fprintf(stderr, "mallocbench solve: %s: %s\n", solver->name, err.message);
    goto done;
  }
  double wall = mb_wall_seconds() - t0;
  mb_rng_seed(&rng, seed);
  if (!mb_solve_heuristic(w, &hw, &opt, &rng, h, &hst, &err)) {
    fprintf(stderr, "mallocbench solve: heuristic: %s\n", err.message);
    goto done;
  }
  mb_error verr;
  bool valid = mb_validate(w, &hw, a, &verr);
  mb_time_ps t_slow = mb_slow_time(w, &hw);
  mb_time_ps t_heur = time_of(w, &hw, h, fast);
  mb_time_ps t_sol = time_of(w, &hw, a, fast);
  mb_bound_result br;
  bool have_bound = mb_bound_lp(w, &hw, bound_budget, &br, &err);
  int64_t peak = 0, max_addr = 0;
  mb_assignment_usage(w, a, &peak, &max_addr);

  printf("workload  %s (%d buffers, %d ops, %d time steps)\n", w->name, w->n_buffers, w->n_ops,
         w->schedule_length);
  printf("hardware  %s: fast memory %" PRId64 " B, alignment %" PRId64 " B\n", hw.name, hw.capacity,
         hw.alignment);
  printf("solver    %s, seed %" PRIu64 ", wall %.3f s%s\n", solver->name, seed, wall,
         st.budget_hit ? " (budget hit)" : "");
  if (st.note[0]) printf("          %s\n", st.note);
  printf("times are simulated by mallocbench's roofline cost model (not measured):\n");
  printf("  T_slow       %15" PRId64 " ps\n", t_slow);
  printf("  T_heuristic  %15" PRId64 " ps\n", t_heur);
  printf("  T_%-10s %15" PRId64 " ps\n", solver->name, t_sol);
  printf("  speedup vs slow       %.4fx\n", t_sol > 0 ? (double)t_slow / (double)t_sol : 0.0);
  printf("  speedup vs heuristic  %.4fx\n", t_sol > 0 ? (double)t_heur / (double)t_sol : 0.0);
  if (have_bound) {
    printf("  T_bound      %15" PRId64 " ps  (LP upper bound on the saving: %s, %.3f s)\n",
           br.bound_ps, mb_bound_status_name(br.status), br.seconds);
    double gap = br.bound_ps > 0 ? 100.0 * (double)(t_sol - br.bound_ps) / (double)br.bound_ps : 0;
    double hgap =
        br.bound_ps > 0 ? 100.0 * (double)(t_heur - br.bound_ps) / (double)br.bound_ps : 0;
    printf("  gap to bound  %s %.3f%%, heuristic %.3f%%  ((T - T_bound) / T_bound)\n", solver->name,
           gap, hgap);
  } else {
    printf("  T_bound      unavailable: %s\n", err.message);
  }
  printf("fast memory  %d buffers, peak %" PRId64
         " B live (%.1f%% of capacity), highest address "
         "%" PRId64 " B\n",
         mb_assignment_n_fast(a), peak,
         hw.capacity ? 100.0 * (double)peak / (double)hw.capacity : 0, max_addr);
  if (valid)
    printf("valid        yes (independent validator)\n");
  else
    printf("valid        NO: %s\n", verr.message);
  rc = valid ? 0 : 1;
  if (out_path) {
    if (!mb_assignment_save_csv(a, w, out_path, &err)) {
      fprintf(stderr, "mallocbench solve: %s\n", err.message);
      rc = 2;
    } else {
      printf("assignment   written to %s\n", out_path);
    }
  }
done:
  mb_solver_stats_free(&st);
  mb_solver_stats_free(&hst);
  free(fast);
  mb_assignment_free(a);
  mb_assignment_free(h);
  mb_workload_free(w);
  return rc;
}
