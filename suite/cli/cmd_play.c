/* `mallocbench play`: plays full mallocGame episodes (suite/game.h) on one workload with a
 * simple policy and prints each episode's return and simulated time. Every final assignment
 * goes through the validator and its incremental time is checked against a full evaluation;
 * with --policy heuristic in the heuristic order the result is also compared with the heuristic
 * solver, which the game must reproduce exactly (exit 1 otherwise). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "commands.h"
#include "cost.h"
#include "csv_import.h"
#include "error.h"
#include "game.h"
#include "hardware.h"
#include "paths.h"
#include "rng.h"
#include "solver.h"
#include "validator.h"
#include "workload.h"
#include "workload_io.h"

typedef enum policy { POLICY_RANDOM, POLICY_HEURISTIC, POLICY_SLOW } policy;

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench play WORKLOAD [OPTIONS]\n\n"
          "Plays mallocGame episodes with a simple policy and prints each episode's return\n"
          "(T_slow - T_final) / T_slow and final program time. Times are simulated by\n"
          "mallocbench's cost model (the ground truth of the suite), not measured.\n\n"
          "WORKLOAD: native workload file, .hlo (XLA HLO text), .csv (MiniMalloc buffers) or\n"
          ".spec (a model-zoo spec); or, when no file has that name, a catalogue entry's name.\n\n"
          "--capacity C      fast-memory bytes, units B KiB MiB GiB KB MB GB (default: the\n"
          "                  profile's, or the number in a MiniMalloc name like A.1048576.csv)\n"
          "--policy P        random | heuristic | slow (default heuristic)\n"
          "--episodes N      episodes to play (default 1)\n"
          "--seed S          seed of the random policy (default 0; episode i uses stream i)\n"
          "--order O         buffer order: heuristic | start | size (default heuristic)\n"
          "--actions A       actions per decision: A-1 candidate offsets + slow (default 16)\n"
          "--out FILE        write the best episode's assignment as CSV\n"
          "-q, --quiet       print the summary only\n");
  mb_workload_arg_usage(out);
  fprintf(out,
          "\nWith --policy heuristic the heuristic solver's time is printed beside; in the\n"
          "heuristic order the two must be identical.\n"
          "Exit status: 0 ok, 1 invalid assignment or heuristic mismatch, 2 bad usage/input.\n");
}

static mb_time_ps assignment_time(const mb_workload *w, const mb_hardware *hw,
                                  const mb_assignment *a, bool *scratch) {
  mb_assignment_fast_flags(a, scratch);
  return mb_program_time(w, hw, scratch);
}

/* One episode of the policy from the start (a random policy draws from rng). */
static bool play_episode(mb_game *g, policy pol, mb_rng *rng, uint8_t *mask, mb_error *err) {
  mb_game_reset(g);
  while (!mb_game_done(g)) {
    int32_t act;
    if (pol == POLICY_HEURISTIC) {
      act = mb_game_heuristic_action(g);
    } else if (pol == POLICY_SLOW) {
      act = mb_game_slow_action(g);
    } else {
      mb_game_legal_mask(g, mask); /* uniform over the legal actions */
      act = mb_rng_pick(rng, mask, mb_game_n_actions(g), -1);
    }
    if (!mb_game_step(g, act, NULL, err)) return false;
  }
  return true;
}

/* The finished episode's assignment (into a) is valid, and the game's incremental time equals
 * a from-scratch evaluation (*time). */
static bool check_episode(const mb_game *g, const mb_workload *w, const mb_hardware *hw,
                          mb_assignment *a, bool *scratch, mb_time_ps *time, mb_error *err) {
  mb_game_assignment(g, a, NULL);
  if (!mb_validate(w, hw, a, err)) return mb_fail_prefix(err, "invalid assignment");
  *time = assignment_time(w, hw, a, scratch);
  if (*time != mb_game_time(g))
    return mb_fail(err, "incremental time %" PRId64 " ps != full evaluation %" PRId64 " ps",
                   mb_game_time(g), *time);
  return true;
}

/* The heuristic solver's time beside the heuristic policy's best: in the heuristic order the two
 * must be identical (false and a MISMATCH line otherwise); in another order best fit is another
 * algorithm, shown for reference. ref and scratch are scratch space. */
static bool compare_with_heuristic_solver(const mb_workload *w, const mb_hardware *hw,
                                          mb_game_order order, uint64_t seed,
                                          mb_time_ps policy_time, mb_assignment *ref,
                                          bool *scratch) {
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  mb_solver_stats st;
  memset(&st, 0, sizeof st);
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  mb_error err;
  if (!mb_solve_heuristic(w, hw, &opt, &rng, ref, &st, &err)) {
    mb_diag(stderr, "mallocbench play: heuristic solver: %s", err.message);
    return false;
  }
  mb_solver_stats_free(&st);
  mb_time_ps th = assignment_time(w, hw, ref, scratch);
  if (order != MB_GAME_ORDER_HEURISTIC) {
    printf("heuristic solver: T %" PRId64 " ps (best fit in %s order here: %+.4f%% time)\n", th,
           mb_game_order_name(order),
           th > 0 ? 100.0 * (double)(policy_time - th) / (double)th : 0.0);
    return true;
  }
  bool same = th == policy_time;
  printf("heuristic solver: T %" PRId64 " ps: %s\n", th,
         same ? "identical to the heuristic policy" : "MISMATCH with the heuristic policy");
  return same;
}

/* The command line, parsed. */
typedef struct play_options {
  const char *path, *out_path;
  mb_workload_arg workload; /* --hardware, --catalogue, --data */
  int64_t capacity;         /* -1: the profile's (or a MiniMalloc name's) */
  int64_t episodes, seed;
  policy pol;
  mb_game_config cfg;
  bool quiet;
} play_options;

/* 0 when the options are good, else the exit status (2) after a message. */
static int parse_options(int argc, char **argv, play_options *o) {
  *o = (play_options){.capacity = -1, .episodes = 1, .pol = POLICY_HEURISTIC};
  mb_game_config_default(&o->cfg);
  int64_t actions = 16;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "-q") || !strcmp(arg, "--quiet")) {
      o->quiet = true;
      continue;
    }
    if (arg[0] != '-') {
      if (o->path) {
        mb_diag(stderr, "mallocbench play: more than one workload ('%s', '%s')", o->path, arg);
        return 2;
      }
      o->path = arg;
      continue;
    }
    mb_option_arg opt;
    mb_option_arg_read(argc, argv, i, &opt); /* every option but -q takes a value */
    const char *flag = opt.flag, *v = opt.value;
    int read = mb_option_workload_arg("play", flag, v, &o->workload);
    int k;
    if (read < 0) return 2;
    if (read > 0) {
      /* read */
    } else if (!strcmp(flag, "--capacity")) {
      if (!mb_option_bytes("play", flag, v, 0, INT64_MAX, &o->capacity)) return 2;
    } else if (!strcmp(flag, "--policy")) {
      static const char *const policies[] = {"random", "heuristic", "slow"};
      static const policy as_policy[] = {POLICY_RANDOM, POLICY_HEURISTIC, POLICY_SLOW};
      if (!mb_option_choice("play", flag, v, policies, 3, &k)) return 2;
      o->pol = as_policy[k];
    } else if (!strcmp(flag, "--episodes")) {
      if (!mb_option_int("play", flag, v, 1, 100000000, &o->episodes)) return 2;
    } else if (!strcmp(flag, "--seed")) {
      if (!mb_option_int("play", flag, v, 0, INT64_MAX, &o->seed)) return 2;
    } else if (!strcmp(flag, "--order")) {
      static const char *const orders[] = {"heuristic", "start", "size"};
      if (!mb_option_choice("play", flag, v, orders, 3, &k)) return 2;
      mb_game_order_parse(orders[k], &o->cfg.order);
    } else if (!strcmp(flag, "--actions")) {
      if (!mb_option_int("play", flag, v, 2, 1024, &actions)) return 2;
    } else if (!strcmp(flag, "--out")) {
      if (!mb_option_path("play", flag, v, &o->out_path)) return 2;
    } else {
      return mb_unknown_option("play", arg);
    }
    i = opt.last;
  }
  if (!o->path) {
    usage(stderr);
    return 2;
  }
  o->cfg.n_actions = (int32_t)actions;
  return 0;
}

int mb_cmd_play(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  play_options o;
  int bad = parse_options(argc, argv, &o);
  if (bad) return bad;

  mb_error err;
  if (!mb_path_check_distinct(o.out_path, o.path, "the WORKLOAD", &err)) {
    mb_diag(stderr, "mallocbench play: --out %s", err.message);
    return 2;
  }
  mb_hardware hw;
  mb_workload *w = mb_cli_workload(o.path, &o.workload, &hw, NULL, &err);
  if (!w) {
    mb_diag(stderr, "mallocbench play: %s", err.message);
    return 2;
  }
  if (o.capacity < 0 && w->n_ops == 0) {
    int64_t named = mb_csv_capacity_from_name(o.path);
    if (named > 0) o.capacity = named;
  }
  if (o.capacity >= 0) hw = mb_hardware_with_capacity(&hw, o.capacity);

  int status = 0;
  mb_game *g = mb_game_new(w, &hw, &o.cfg, &err);
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  mb_assignment *best = mb_assignment_new(w->n_buffers);
  mb_assignment *ref = mb_assignment_new(w->n_buffers);
  bool *scratch = malloc(sizeof *scratch * (size_t)(w->n_buffers > 0 ? w->n_buffers : 1));
  uint8_t *mask = malloc((size_t)o.cfg.n_actions);
  if (!g || !a || !best || !ref || !scratch || !mask) {
    mb_diag(stderr, "mallocbench play: %s", g ? "out of memory" : err.message);
    status = 2;
    goto done;
  }
  const char *pol_name = o.pol == POLICY_RANDOM      ? "random"
                         : o.pol == POLICY_HEURISTIC ? "heuristic"
                                                     : "slow";
  /* names from files, escaped as in messages (error.h) */
  mb_diag(stdout, "workload %s: %d buffers, %d visited in %s order", w->name, (int)w->n_buffers,
          (int)mb_game_n_visitable(g), mb_game_order_name(o.cfg.order));
  mb_diag(stdout, "hardware %s: fast memory %" PRId64 " B, alignment %" PRId64 " B; %d actions",
          hw.name, hw.capacity, hw.alignment, (int)o.cfg.n_actions);
  printf("policy %s, %" PRId64 " episode(s), seed %" PRId64 "\n", pol_name, o.episodes, o.seed);
  printf("T_slow %" PRId64 " ps (simulated)\n", mb_game_slow_time(g));
  if (!o.quiet)
    printf("%8s %12s %18s %10s %6s\n", "episode", "return", "T_final_ps", "decisions", "fast");

  mb_rng base;
  mb_rng_seed(&base, (uint64_t)o.seed);
  double best_return = -1, sum_return = 0;
  mb_time_ps best_time = 0;
  for (int64_t ep = 0; ep < o.episodes; ep++) {
    mb_rng rng = mb_rng_split(&base, (uint64_t)ep);
    mb_time_ps t = 0;
    if (!play_episode(g, o.pol, &rng, mask, &err) ||
        !check_episode(g, w, &hw, a, scratch, &t, &err)) {
      fprintf(stderr, "mallocbench play: episode %" PRId64 ": %s\n", ep, err.message);
      status = 1;
      goto done;
    }
    double ret = mb_game_return(g);
    sum_return += ret;
    if (!o.quiet)
      printf("%8" PRId64 " %12.6f %18" PRId64 " %10d %6d\n", ep, ret, t, (int)mb_game_depth(g),
             (int)mb_assignment_n_fast(a));
    if (ret > best_return) {
      best_return = ret;
      best_time = t;
      mb_assignment_copy(best, a);
    }
  }
  printf("best return %.6f (T %" PRId64 " ps, speedup vs all-slow %.4fx), mean return %.6f\n",
         best_return, best_time,
         best_time > 0 ? (double)mb_game_slow_time(g) / (double)best_time : 0.0,
         sum_return / (double)o.episodes);

  if (o.pol == POLICY_HEURISTIC &&
      !compare_with_heuristic_solver(w, &hw, o.cfg.order, (uint64_t)o.seed, best_time, ref,
                                     scratch))
    status = 1;
  if (o.out_path && !mb_assignment_save_csv(best, w, o.out_path, &err)) {
    mb_diag(stderr, "mallocbench play: %s", err.message);
    status = 2;
  }

done:
  free(mask);
  free(scratch);
  mb_assignment_free(ref);
  mb_assignment_free(best);
  mb_assignment_free(a);
  mb_game_free(g);
  mb_workload_free(w);
  return status;
}
