/* `mallocbench bench game`: how fast the mallocGame runs, for sizing mallocMuZero's search.
 *
 * On one workload (an argument, or the largest by buffer count of datasets/samples/ and the
 * data directory's hlo/ files) it measures, in one run and on wall clock:
 *   - full random-policy episodes: steps per second (step + legal mask + pick),
 *   - the same with an observation per step (what an actor pays),
 *   - search branching: at every state of an episode (walking back), snapshot + one step +
 *     restore per second,
 *   - full rollback: restore from the end of an episode to the root, per second,
 *   - mb_game_copy (the alternative to undo: rebuild a state from scratch) per second,
 * and prints ratios so that the numbers stay comparable on a noisy, shared machine. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "commands.h"
#include "game.h"
#include "hardware.h"
#include "paths.h"
#include "random_workload.h"
#include "rng.h"
#include "workload.h"
#include "workload_io.h"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: mallocbench bench game [WORKLOAD] [OPTIONS]\n\n"
      "mallocGame steps, observations and snapshot/restore per second (wall clock).\n"
      "Default WORKLOAD: the largest (by buffers) of datasets/samples/ and DATA/hlo/*.hlo.\n\n"
      "Options:\n"
      "  --hardware H    profile name or path (default tpu-v4i)\n"
      "  --fraction F    fast memory = F x the workload's peak live bytes, so placements\n"
      "                  compete (default 0.25; 0: the profile's capacity)\n"
      "  --seconds S     wall time per measurement (default 1)\n"
      "  --actions A     actions per decision (default 16)\n"
      "  --seed S        random policy seed (default 0)\n"
      "  --random N      instead of a file: a random workload of N buffers\n"
      "                  (suite/random_workload.h defaults, seeded by --seed)\n"
      "  --data DIR      external data directory (default: MALLOCBENCH_DATA or ../shared/data)\n");
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

/* Keeps in *best the workload of dir (files ending in suffix) with the most buffers. */
static void scan_largest(const char *dir, const char *suffix, mb_workload **best, char *best_path,
                         size_t n) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "note: %s not readable (%s): skipped\n", dir, strerror(errno));
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' || !has_suffix(e->d_name, suffix) || has_suffix(e->d_name, ".md"))
      continue;
    char path[2048];
    if (!mb_path_join(path, sizeof path, dir, e->d_name)) continue;
    mb_error err;
    mb_workload *w = mb_workload_load_any(path, &err);
    if (!w) {
      fprintf(stderr, "note: skipped %s\n", err.message);
      continue;
    }
    if (!*best || w->n_buffers > (*best)->n_buffers) {
      mb_workload_free(*best);
      *best = w;
      snprintf(best_path, n, "%s", path);
    } else {
      mb_workload_free(w);
    }
  }
  closedir(d);
}

static int32_t random_action(const mb_game *g, mb_rng *rng, uint8_t *mask) {
  int32_t n = mb_game_legal_mask(g, mask);
  if (n == 0) return mb_game_slow_action(g); /* done: the caller's step reports it */
  int32_t k = (int32_t)mb_rng_below(rng, (uint64_t)n);
  int32_t a;
  for (a = 0; a < mb_game_n_actions(g); a++)
    if (mask[a] && k-- == 0) break;
  return a;
}

typedef struct rate {
  double per_s;
  int64_t count;
  double seconds;
} rate;

static void print_rate(const char *what, const char *unit, rate r) {
  printf("  %-44s %12.0f %s/s  (%" PRId64 " in %.2f s)\n", what, r.per_s, unit, r.count, r.seconds);
}

int mb_bench_game(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  const char *path = NULL, *hw_name = "tpu-v4i", *data = NULL;
  double fraction = 0.25, seconds = 1.0;
  int32_t actions = 16, random_n = 0;
  uint64_t seed = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-') {
      path = arg;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "mallocbench bench game: %s needs a value\n", arg);
      return 2;
    }
    const char *v = argv[++i];
    if (!strcmp(arg, "--hardware")) {
      hw_name = v;
    } else if (!strcmp(arg, "--data")) {
      data = v;
    } else if (!strcmp(arg, "--fraction")) {
      if (!mb_option_number("bench game", arg, v, 0, false, 1e6, &fraction)) return 2;
    } else if (!strcmp(arg, "--seconds")) {
      if (!mb_option_number("bench game", arg, v, 0, true, 3600, &seconds)) return 2;
    } else if (!strcmp(arg, "--actions")) {
      if (!mb_option_i32("bench game", arg, v, 2, 1024, &actions)) return 2;
    } else if (!strcmp(arg, "--random")) {
      if (!mb_option_i32("bench game", arg, v, 1, 100000000, &random_n)) return 2;
    } else if (!strcmp(arg, "--seed")) {
      if (!mb_option_u64("bench game", arg, v, &seed)) return 2;
    } else {
      fprintf(stderr, "mallocbench bench game: unknown option '%s'; see --help\n", arg);
      return 2;
    }
  }

  mb_error err;
  mb_workload *w = NULL;
  char wpath[2048] = "";
  if (random_n > 0) {
    mb_random_options ro;
    mb_random_options_default(&ro);
    mb_rng wrng;
    mb_rng_seed(&wrng, seed);
    w = mb_random_workload(&wrng, random_n, &ro, NULL, &err);
    if (!w) {
      fprintf(stderr, "mallocbench bench game: --random: %s\n", err.message);
      return 2;
    }
    snprintf(wpath, sizeof wpath, "random, seed %" PRIu64, seed);
  } else if (path) {
    w = mb_workload_load_any(path, &err);
    if (!w) {
      fprintf(stderr, "mallocbench bench game: %s\n", err.message);
      return 2;
    }
    snprintf(wpath, sizeof wpath, "%s", path);
  } else {
    char dir[2048];
    if (mb_path_join(dir, sizeof dir, mb_source_dir(), "datasets/samples"))
      scan_largest(dir, "", &w, wpath, sizeof wpath);
    if (mb_path_join(dir, sizeof dir, mb_data_dir(data), "hlo"))
      scan_largest(dir, ".hlo", &w, wpath, sizeof wpath);
    if (!w) {
      fprintf(stderr, "mallocbench bench game: no workload found; pass one as an argument\n");
      return 2;
    }
  }
  mb_hardware hw;
  if (!mb_hardware_find(hw_name, NULL, &hw, &err)) {
    fprintf(stderr, "mallocbench bench game: %s\n", err.message);
    mb_workload_free(w);
    return 2;
  }
  if (fraction > 0) {
    mb_workload_stats st;
    mb_workload_stats_compute(w, &st);
    hw = mb_hardware_with_capacity(&hw, (int64_t)(fraction * (double)st.peak_live_bytes));
  }
  mb_game_config cfg;
  mb_game_config_default(&cfg);
  cfg.n_actions = actions;
  mb_game *g = mb_game_new(w, &hw, &cfg, &err);
  mb_game *g2 = g ? mb_game_new(w, &hw, &cfg, &err) : NULL;
  int32_t obs_n = mb_game_observation_size(&cfg);
  float *obs = malloc(sizeof *obs * (size_t)obs_n);
  uint8_t *mask = malloc((size_t)cfg.n_actions);
  mb_game_snapshot *path_snaps =
      malloc(sizeof *path_snaps * (size_t)(w->n_buffers > 0 ? w->n_buffers + 1 : 1));
  int status = 0;
  if (!g || !g2 || !obs || !mask || !path_snaps) {
    fprintf(stderr, "mallocbench bench game: %s\n", !g || !g2 ? err.message : "out of memory");
    status = 2;
    goto done;
  }
  mb_rng rng;
  mb_rng_seed(&rng, seed);

  /* One episode to describe the workload (and to skip a workload with nothing to decide). */
  int32_t depth = 0;
  while (!mb_game_done(g)) mb_game_step(g, random_action(g, &rng, mask), NULL, NULL);
  int32_t decisions = mb_game_depth(g);
  printf("mallocGame benchmark (wall clock; game times are simulated)\n");
  printf("workload %s (%s): %d buffers, %d visited, %d decisions per random episode\n", w->name,
         wpath, (int)w->n_buffers, (int)mb_game_n_visitable(g), (int)decisions);
  printf("hardware %s, fast memory %" PRId64 " B (%s), %d actions, observation %d floats\n",
         hw.name, hw.capacity, fraction > 0 ? "fraction of peak live bytes" : "profile",
         (int)cfg.n_actions, (int)obs_n);
  if (decisions == 0) {
    printf("no decisions to make: nothing to measure\n");
    goto done;
  }

  /* 1. Full random episodes (reset included). */
  rate steps = {0}, obs_steps = {0}, branch = {0}, rollback = {0}, copy = {0};
  double t0 = mb_wall_seconds(), t;
  int64_t episodes = 0;
  do {
    mb_game_reset(g);
    while (!mb_game_done(g)) {
      mb_game_step(g, random_action(g, &rng, mask), NULL, NULL);
      steps.count++;
    }
    episodes++;
  } while ((t = mb_wall_seconds()) - t0 < seconds);
  steps.seconds = t - t0;
  steps.per_s = (double)steps.count / steps.seconds;

  /* 2. The same with one observation per decision. */
  t0 = mb_wall_seconds();
  do {
    mb_game_reset(g);
    while (!mb_game_done(g)) {
      mb_game_observe(g, obs);
      mb_game_step(g, random_action(g, &rng, mask), NULL, NULL);
      obs_steps.count++;
    }
  } while ((t = mb_wall_seconds()) - t0 < seconds);
  obs_steps.seconds = t - t0;
  obs_steps.per_s = (double)obs_steps.count / obs_steps.seconds;

  /* A fresh reference episode whose snapshots the branching measurement restores. */
  mb_game_reset(g);
  depth = 0;
  path_snaps[depth++] = mb_game_snapshot_take(g);
  while (!mb_game_done(g)) {
    mb_game_step(g, random_action(g, &rng, mask), NULL, NULL);
    path_snaps[depth++] = mb_game_snapshot_take(g);
  }
  decisions = mb_game_depth(g);

  /* 3. Branching as tree search does, walking back along the reference episode: at each
   * state, snapshot, try one random action, restore (then one more restore steps back to the
   * parent). Resyncing g2 to the episode's end between walks is not timed. */
  double walk_time = 0;
  t0 = mb_wall_seconds();
  do {
    mb_game_copy(g2, g, NULL);
    double a = mb_wall_seconds();
    for (int32_t d = decisions - 1; d >= 0; d--) {
      mb_game_restore(g2, path_snaps[d], NULL);
      mb_game_snapshot s = mb_game_snapshot_take(g2);
      mb_game_step(g2, random_action(g2, &rng, mask), NULL, NULL);
      mb_game_restore(g2, s, NULL);
      branch.count++;
    }
    walk_time += mb_wall_seconds() - a;
  } while ((t = mb_wall_seconds()) - t0 < seconds);
  branch.seconds = walk_time;
  branch.per_s = (double)branch.count / walk_time;

  /* 4. Full rollback: copy the finished episode into g2, restore to the root. */
  double copy_time = 0, restore_time = 0;
  t0 = mb_wall_seconds();
  do {
    double a = mb_wall_seconds();
    mb_game_copy(g2, g, NULL);
    double b = mb_wall_seconds();
    mb_game_restore(g2, path_snaps[0], NULL);
    double c = mb_wall_seconds();
    copy_time += b - a;
    restore_time += c - b;
    copy.count++;
    rollback.count++;
  } while ((t = mb_wall_seconds()) - t0 < 2 * seconds);
  copy.seconds = copy_time;
  copy.per_s = (double)copy.count / copy_time;
  rollback.seconds = restore_time;
  rollback.per_s = (double)rollback.count / restore_time;

  printf("\n");
  print_rate("random episodes: steps", "steps", steps);
  printf("  %-44s %12.1f episodes/s\n", "random episodes", (double)episodes / steps.seconds);
  print_rate("random episodes with observe(): steps", "steps", obs_steps);
  print_rate("branch: snapshot, step, restore (+1 undo)", "branches", branch);
  print_rate("rollback: restore end of episode -> root", "rollbacks", rollback);
  print_rate("copy: mb_game_copy of a finished episode", "copies", copy);
  printf("\nratios (same run):\n");
  printf("  observe() cost per step           %8.2f x a bare step\n",
         steps.per_s / obs_steps.per_s - 1.0);
  printf("  branches per second / steps per s %8.2f\n", branch.per_s / steps.per_s);
  printf("  undo vs copy for a full episode   %8.2f x faster (rollback rate / copy rate)\n",
         rollback.per_s / copy.per_s);
  printf("  undo vs copy to branch once       %8.2f x faster (branch rate / copy rate)\n",
         branch.per_s / copy.per_s);

done:
  free(path_snaps);
  free(mask);
  free(obs);
  mb_game_free(g2);
  mb_game_free(g);
  mb_workload_free(w);
  return status;
}
