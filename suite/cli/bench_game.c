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
#include "error.h"
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
      "  --seconds S     wall-clock seconds per measurement, fractional allowed\n"
      "                  (0 < S <= 3600; default 1)\n"
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
    mb_diag(stderr, "note: %s not readable (%s): skipped", dir, strerror(errno));
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
      mb_diag(stderr, "note: skipped %s", err.message);
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
  mb_game_legal_mask(g, mask);
  int32_t a = mb_rng_pick(rng, mask, mb_game_n_actions(g), -1);
  return a >= 0 ? a : mb_game_slow_action(g); /* none when done: the caller's step reports it */
}

typedef struct rate {
  double per_s;
  int64_t count;
  double seconds;
} rate;

static void print_rate(const char *what, const char *unit, rate r) {
  printf("  %-44s %12.0f %s/s  (%" PRId64 " in %.2f s)\n", what, r.per_s, unit, r.count, r.seconds);
}

/* The workload to measure: a random one of random_n buffers (> 0), the file at path, or the
 * largest sample or HLO dump. Its description goes to label; NULL after an error line. */
static mb_workload *bench_workload(int32_t random_n, uint64_t seed, const char *path,
                                   const char *data, char *label, size_t label_len) {
  mb_error err;
  mb_workload *w = NULL;
  if (random_n > 0) {
    mb_random_options ro;
    mb_random_options_default(&ro);
    mb_rng wrng;
    mb_rng_seed(&wrng, seed);
    w = mb_random_workload(&wrng, random_n, &ro, NULL, &err);
    if (!w) mb_diag(stderr, "mallocbench bench game: --random: %s", err.message);
    snprintf(label, label_len, "random, seed %" PRIu64, seed);
  } else if (path) {
    w = mb_workload_load_any(path, &err);
    if (!w) mb_diag(stderr, "mallocbench bench game: %s", err.message);
    snprintf(label, label_len, "%s", path);
  } else {
    char dir[2048];
    if (mb_path_join(dir, sizeof dir, mb_source_dir(), "datasets/samples"))
      scan_largest(dir, "", &w, label, label_len);
    if (mb_path_join(dir, sizeof dir, mb_data_dir(data), "hlo"))
      scan_largest(dir, ".hlo", &w, label, label_len);
    if (!w) fprintf(stderr, "mallocbench bench game: no workload found; pass one as an argument\n");
  }
  return w;
}

/* What the measurements share: two games of the same workload (g plays, g2 branches from g's
 * states), scratch buffers, the random policy's stream and the time per measurement. */
typedef struct bench {
  mb_game *g, *g2;
  float *obs;
  uint8_t *mask;
  mb_game_snapshot *path; /* the states of g's last episode, root first */
  mb_rng rng;
  double seconds;
} bench;

static rate finish(rate r, double seconds) {
  r.seconds = seconds;
  r.per_s = (double)r.count / seconds;
  return r;
}

/* 1 and 2. Full random episodes (reset included), with or without an observation per decision.
 */
static rate time_episodes(bench *B, bool observe, int64_t *episodes) {
  rate r = {0};
  double t0 = mb_wall_seconds(), t;
  do {
    mb_game_reset(B->g);
    while (!mb_game_done(B->g)) {
      if (observe) mb_game_observe(B->g, B->obs);
      mb_game_step(B->g, random_action(B->g, &B->rng, B->mask), NULL, NULL);
      r.count++;
    }
    (*episodes)++;
  } while ((t = mb_wall_seconds()) - t0 < B->seconds);
  return finish(r, t - t0);
}

/* A fresh reference episode in g, its states in B->path; returns its decisions. */
static int32_t play_reference(bench *B) {
  mb_game_reset(B->g);
  int32_t depth = 0;
  B->path[depth++] = mb_game_snapshot_take(B->g);
  while (!mb_game_done(B->g)) {
    mb_game_step(B->g, random_action(B->g, &B->rng, B->mask), NULL, NULL);
    B->path[depth++] = mb_game_snapshot_take(B->g);
  }
  return mb_game_depth(B->g);
}

/* 3. Branching as tree search does, walking back along the reference episode: at each state,
 * snapshot, try one random action, restore (then one more restore steps back to the parent).
 * Resyncing g2 to the episode's end between walks is not timed. */
static rate time_branching(bench *B, int32_t decisions) {
  rate r = {0};
  double walk_time = 0, t0 = mb_wall_seconds();
  do {
    mb_game_copy(B->g2, B->g, NULL);
    double a = mb_wall_seconds();
    for (int32_t d = decisions - 1; d >= 0; d--) {
      mb_game_restore(B->g2, B->path[d], NULL);
      mb_game_snapshot s = mb_game_snapshot_take(B->g2);
      mb_game_step(B->g2, random_action(B->g2, &B->rng, B->mask), NULL, NULL);
      mb_game_restore(B->g2, s, NULL);
      r.count++;
    }
    walk_time += mb_wall_seconds() - a;
  } while (mb_wall_seconds() - t0 < B->seconds);
  return finish(r, walk_time);
}

/* 4. Full rollback (restore from the end of the reference episode to the root) against a copy
 * of the finished episode (mb_game_copy, the alternative to undo), timed alternately. */
static void time_rollback_and_copy(bench *B, rate *rollback, rate *copy) {
  *rollback = *copy = (rate){0};
  double copy_time = 0, restore_time = 0, t0 = mb_wall_seconds();
  do {
    double a = mb_wall_seconds();
    mb_game_copy(B->g2, B->g, NULL);
    double b = mb_wall_seconds();
    mb_game_restore(B->g2, B->path[0], NULL);
    double c = mb_wall_seconds();
    copy_time += b - a;
    restore_time += c - b;
    copy->count++;
    rollback->count++;
  } while (mb_wall_seconds() - t0 < 2 * B->seconds);
  *copy = finish(*copy, copy_time);
  *rollback = finish(*rollback, restore_time);
}

/* The measurements, on a workload with decisions to make. */
static void measure(bench *B) {
  int64_t episodes = 0, ignored = 0;
  rate steps = time_episodes(B, false, &episodes);
  rate obs_steps = time_episodes(B, true, &ignored);
  rate branch = time_branching(B, play_reference(B));
  rate rollback, copy;
  time_rollback_and_copy(B, &rollback, &copy);

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
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o); /* every option takes a value */
    const char *a = o.flag, *v = o.value;
    if (!strcmp(a, "--hardware")) {
      if (!mb_option_text("bench game", a, v, &hw_name)) return 2;
    } else if (!strcmp(a, "--data")) {
      if (!mb_option_path("bench game", a, v, &data)) return 2;
    } else if (!strcmp(a, "--fraction")) {
      if (!mb_option_number("bench game", a, v, 0, false, 1e6, &fraction)) return 2;
    } else if (!strcmp(a, "--seconds")) {
      if (!mb_option_number("bench game", a, v, 0, true, 3600, &seconds)) return 2;
    } else if (!strcmp(a, "--actions")) {
      if (!mb_option_i32("bench game", a, v, 2, 1024, &actions)) return 2;
    } else if (!strcmp(a, "--random")) {
      if (!mb_option_i32("bench game", a, v, 1, 100000000, &random_n)) return 2;
    } else if (!strcmp(a, "--seed")) {
      if (!mb_option_u64("bench game", a, v, &seed)) return 2;
    } else {
      return mb_unknown_option("bench game", arg);
    }
    i = o.last;
  }

  char label[2048] = "";
  mb_workload *w = bench_workload(random_n, seed, path, data, label, sizeof label);
  if (!w) return 2;
  mb_error err;
  mb_hardware hw;
  if (!mb_hardware_find(hw_name, NULL, &hw, &err)) {
    mb_diag(stderr, "mallocbench bench game: %s", err.message);
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
  int32_t obs_n = mb_game_observation_size(&cfg);
  bench B = {.seconds = seconds};
  B.g = mb_game_new(w, &hw, &cfg, &err);
  B.g2 = B.g ? mb_game_new(w, &hw, &cfg, &err) : NULL;
  B.obs = malloc(sizeof *B.obs * (size_t)obs_n);
  B.mask = malloc((size_t)cfg.n_actions);
  B.path = malloc(sizeof *B.path * (size_t)(w->n_buffers > 0 ? w->n_buffers + 1 : 1));
  mb_rng_seed(&B.rng, seed);
  int status = 0;
  if (!B.g || !B.g2 || !B.obs || !B.mask || !B.path) {
    mb_diag(stderr, "mallocbench bench game: %s", !B.g || !B.g2 ? err.message : "out of memory");
    status = 2;
  } else {
    /* one episode to describe the workload (and to skip a workload with nothing to decide) */
    while (!mb_game_done(B.g)) mb_game_step(B.g, random_action(B.g, &B.rng, B.mask), NULL, NULL);
    int32_t decisions = mb_game_depth(B.g);
    printf("mallocGame benchmark (wall clock; game times are simulated)\n");
    mb_diag(stdout, "workload %s (%s): %d buffers, %d visited, %d decisions per random episode",
            w->name, label, (int)w->n_buffers, (int)mb_game_n_visitable(B.g), (int)decisions);
    mb_diag(stdout,
            "hardware %s, fast memory %" PRId64 " B (%s), %d actions, observation %d floats",
            hw.name, hw.capacity, fraction > 0 ? "fraction of peak live bytes" : "profile",
            (int)cfg.n_actions, (int)obs_n);
    if (decisions == 0)
      printf("no decisions to make: nothing to measure\n");
    else
      measure(&B);
  }
  free(B.path);
  free(B.mask);
  free(B.obs);
  mb_game_free(B.g2);
  mb_game_free(B.g);
  mb_workload_free(w);
  return status;
}
