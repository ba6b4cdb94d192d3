/* mallocbench bench solvers: solver cost and quality, measured in one run.
 *  1. Scaling on random workloads (suite/random_workload.h) of 10^3 .. 10^6 buffers: wall time
 *     of the heuristic, of the greedy with a fixed small budget, and of the greedy's
 *     constructive phase alone, per buffer and per n log2 n (flat when the cost grows like
 *     n log n).
 *  2. Quality on the catalogue (or, without one, the samples and HLO files): simulated speedup
 *     of the greedy over the heuristic and each one's gap to the LP bound, with wall times.
 *  3. The exact packer on MiniMalloc's challenging instances, next to plain best fit.
 * Times marked "wall" are measured on this machine (noisy: compare ratios within one run);
 * program times are simulated by the cost model. */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "catalogue.h"
#include "clock.h"
#include "commands.h"
#include "cost.h"
#include "csv_import.h"
#include "error.h"
#include "hardware.h"
#include "packer.h"
#include "paths.h"
#include "random_workload.h"
#include "solver.h"
#include "validator.h"
#include "workload_io.h"

typedef struct bench_opts {
  int64_t max_n;
  double greedy_budget;
  double bound_budget;
  uint64_t seed;
  const char *data;
} bench_opts;

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench bench solvers [--max N] [--budget SEC] [--bound-budget SEC]\n"
          "                                 [--seed S] [--data DIR]\n\n"
          "1. heuristic and greedy wall time on random workloads of 10^3..N buffers (default\n"
          "   N = 10^6), with the greedy's constructive phase per buffer and per n log2 n;\n"
          "2. greedy vs heuristic speedup and gaps to the LP bound on the catalogue (or the\n"
          "   samples and HLO files when there is no catalogue);\n"
          "3. the exact packer on MiniMalloc's A, B, C instances next to plain best fit.\n"
          "--budget SEC       greedy budget (default 0.5)\n"
          "--bound-budget SEC LP time limit (default 30)\n");
}

static mb_time_ps time_of(const mb_workload *w, const mb_hardware *hw, const mb_assignment *a) {
  bool *fast = malloc(sizeof *fast * (size_t)(w->n_buffers ? w->n_buffers : 1));
  if (!fast) return -1;
  mb_assignment_fast_flags(a, fast);
  mb_time_ps t = mb_program_time(w, hw, fast);
  free(fast);
  return t;
}

/* Runs a solver, validates, returns the wall seconds (< 0 on failure, message printed). */
static double run_solver(const char *name, const mb_workload *w, const mb_hardware *hw,
                         const bench_opts *bo, mb_assignment *a, mb_solver_stats *st) {
  const mb_solver *s = mb_solver_find(name);
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  opt.seed = bo->seed;
  opt.budget_seconds = bo->greedy_budget;
  mb_rng rng;
  mb_rng_seed(&rng, bo->seed);
  mb_error err;
  double t0 = mb_wall_seconds();
  if (!s || !s->solve(w, hw, &opt, &rng, a, st, &err)) {
    mb_diag(stderr, "bench solvers: %s on %s: %s", name, w->name, s ? err.message : "no solver");
    return -1;
  }
  double wall = mb_wall_seconds() - t0;
  if (!mb_validate(w, hw, a, &err)) {
    mb_diag(stderr, "bench solvers: %s on %s: INVALID: %s", name, w->name, err.message);
    return -1;
  }
  return wall;
}

static mb_hardware bench_hw(int64_t capacity) {
  mb_hardware hw;
  mb_error err;
  if (!mb_hardware_find("tpu-v4i", NULL, &hw, &err)) {
    /* The numbers of datasets/hardware/tpu-v4i.txt, in case the profile is not installed. */
    memset(&hw, 0, sizeof hw);
    snprintf(hw.name, sizeof hw.name, "tpu-v4i-builtin");
    hw.alignment = 512;
    hw.slow_bandwidth = 614e9;
    hw.fast_bandwidth = 2000e9;
    hw.peak_flops = 138e12;
    hw.op_overhead_s = 1e-6;
  }
  return mb_hardware_with_capacity(&hw, capacity);
}

static int scaling(const bench_opts *bo) {
  printf(
      "== 1. scaling on random workloads (mb_random_workload defaults; tpu-v4i profile, "
      "capacity = fast memory, 1/4 of the peak live bytes rounded down to the 512 B alignment, "
      "both in bytes; the *s columns are wall clock, T ratio is simulated)\n");
  printf("%9s %9s %12s %11s %10s %10s %12s %12s %14s %10s %10s\n", "buffers", "uses", "peak live",
         "capacity", "heur s", "greedy s", "construct s", "constr us/b", "constr ns/nlgn",
         "greedy/heur", "T ratio");
  for (int64_t n = 1000; n <= bo->max_n; n *= 10) {
    mb_rng rng;
    mb_rng_seed(&rng, bo->seed + (uint64_t)n);
    mb_error err;
    mb_workload *w = mb_random_workload(&rng, (int32_t)n, NULL, NULL, &err);
    if (!w) {
      mb_diag(stderr, "bench solvers: %s", err.message);
      return 1;
    }
    mb_workload_stats ws;
    mb_workload_stats_compute(w, &ws);
    mb_hardware hw = bench_hw(ws.peak_live_bytes / 4 / 512 * 512);
    mb_assignment *h = mb_assignment_new(w->n_buffers), *g = mb_assignment_new(w->n_buffers);
    mb_assignment *c = mb_assignment_new(w->n_buffers);
    mb_solver_stats st;
    memset(&st, 0, sizeof st);
    double th = h ? run_solver("heuristic", w, &hw, bo, h, NULL) : -1;
    double tg = g ? run_solver("greedy", w, &hw, bo, g, &st) : -1;
    double t0 = mb_wall_seconds();
    bool ok = c && mb_greedy_construct(w, &hw, c, &err);
    double tc = mb_wall_seconds() - t0;
    if (th < 0 || tg < 0 || !ok) {
      if (!ok) mb_diag(stderr, "bench solvers: construct: %s", c ? err.message : "no memory");
      mb_assignment_free(h);
      mb_assignment_free(g);
      mb_assignment_free(c);
      mb_workload_free(w);
      return 1;
    }
    double nlogn = (double)n * log2((double)n);
    mb_time_ps t_h = time_of(w, &hw, h), t_g = time_of(w, &hw, g);
    printf("%9" PRId64 " %9d %12" PRId64 " %11" PRId64
           " %10.3f %10.3f %12.3f %12.2f %14.2f %10.2f %10.4f%s\n",
           n, w->n_uses, ws.peak_live_bytes, hw.capacity, th, tg, tc, tc / (double)n * 1e6,
           tc / nlogn * 1e9, tg / th, t_g > 0 ? (double)t_h / (double)t_g : 0.0,
           st.budget_hit ? "  (greedy budget hit)" : "");
    fflush(stdout);
    mb_solver_stats_free(&st);
    mb_assignment_free(h);
    mb_assignment_free(g);
    mb_assignment_free(c);
    mb_workload_free(w);
  }
  printf(
      "(T ratio = T_heuristic / T_greedy, simulated; greedy budget %.2f s; construct = the "
      "greedy's lazy-greedy phase alone)\n\n",
      bo->greedy_budget);
  return 0;
}

/* Width of the workload column of section 2: names are never cut (two catalogue entries may
 * share their first 28 characters, e.g. bert_pt_xla_adam_step_nofusion-tpu and -edge), the
 * column fits the longest name known before the rows are printed (the catalogue's), and a
 * longer one (a file's workload name) widens its own row. */
enum { NAME_MIN_WIDTH = 28 };

/* One quality row. */
static void quality_row(const char *name, int width, const mb_workload *w, const mb_hardware *hw,
                        const bench_opts *bo, int *failures) {
  mb_assignment *h = mb_assignment_new(w->n_buffers), *g = mb_assignment_new(w->n_buffers);
  double th = h ? run_solver("heuristic", w, hw, bo, h, NULL) : -1;
  double tg = g ? run_solver("greedy", w, hw, bo, g, NULL) : -1;
  mb_bound_result br;
  mb_error err;
  if (th < 0 || tg < 0 || !mb_bound_lp(w, hw, bo->bound_budget, &br, &err)) {
    if (th >= 0 && tg >= 0) mb_diag(stderr, "bench solvers: bound on %s: %s", name, err.message);
    (*failures)++;
  } else {
    mb_time_ps t_h = time_of(w, hw, h), t_g = time_of(w, hw, g);
    double gap_h = br.bound_ps > 0 ? 100.0 * (double)(t_h - br.bound_ps) / (double)br.bound_ps : 0;
    double gap_g = br.bound_ps > 0 ? 100.0 * (double)(t_g - br.bound_ps) / (double)br.bound_ps : 0;
    mb_diag(stdout, "%-*s %8d %11" PRId64 " %9.4f %9.4f %9.4f %9.3f %9.3f %9.3f %s", width, name,
            w->n_buffers, hw->capacity, t_g > 0 ? (double)t_h / (double)t_g : 0.0, gap_h, gap_g, th,
            tg, br.seconds, mb_bound_status_name(br.status));
    if (t_g > t_h) (*failures)++;
  }
  fflush(stdout);
  mb_assignment_free(h);
  mb_assignment_free(g);
}

static void quality_header(int width) {
  printf("%-*s %8s %11s %9s %9s %9s %9s %9s %9s %s\n", width, "workload", "buffers", "capacity",
         "heur/grd", "gap_h %", "gap_g %", "heur s", "greedy s", "bound s", "LP");
}

static void quality_files(const char *dir, const char *suffix, const bench_opts *bo,
                          int *failures) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name), k = strlen(suffix);
    if (n <= k || strcmp(e->d_name + n - k, suffix)) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    mb_error err;
    mb_workload *w = mb_workload_load_any(path, &err);
    if (!w) {
      mb_diag(stdout, "%-*s skipped: %s", NAME_MIN_WIDTH, e->d_name, err.message);
      continue;
    }
    mb_workload_stats ws;
    mb_workload_stats_compute(w, &ws);
    mb_hardware hw =
        bench_hw(ws.peak_live_bytes / 4 > 512 ? ws.peak_live_bytes / 4 / 512 * 512 : 512);
    quality_row(w->name, NAME_MIN_WIDTH, w, &hw, bo, failures);
    mb_workload_free(w);
  }
  closedir(d);
}

static int quality(const bench_opts *bo) {
  int failures = 0;
  const char *data = mb_data_dir(bo->data);
  mb_error err;
  char cat_path[4096];
  mb_catalogue *cat = NULL;
  if (mb_catalogue_default_path(cat_path, sizeof cat_path))
    cat = mb_catalogue_load(cat_path, &err);
  else
    mb_fail(&err, "the source tree's path is too long (%s)", mb_source_dir());
  if (cat && cat->n_entries > 0) {
    printf(
        "== 2. quality on the catalogue %s (%d entries; heur/grd = T_heuristic / T_greedy and "
        "gap = (T - T_bound) / T_bound from simulated program times; heur s, greedy s, bound s: "
        "wall clock)\n",
        cat->path, cat->n_entries);
    int width = NAME_MIN_WIDTH;
    for (int32_t i = 0; i < cat->n_entries; i++) {
      int len = (int)strlen(cat->entries[i].name);
      if (len > width) width = len;
    }
    quality_header(width);
    char cache[4096];
    if (!mb_cache_dir(cache, sizeof cache)) {
      mb_diag(stderr, "bench solvers: %s/results/cache: path too long", mb_source_dir());
      mb_catalogue_free(cat);
      return 2;
    }
    for (int32_t i = 0; i < cat->n_entries; i++) {
      const mb_catalogue_entry *e = &cat->entries[i];
      bool missing = false;
      mb_workload *w = mb_catalogue_load_workload(e, data, cache, &missing, &err);
      mb_hardware hw;
      if (!w) {
        mb_diag(stdout, "%-*s skipped: %s", width, e->name, err.message);
        continue;
      }
      if (!mb_catalogue_hardware(e, &hw, &err)) {
        mb_diag(stdout, "%-*s skipped: %s", width, e->name, err.message);
        mb_workload_free(w);
        continue;
      }
      quality_row(e->name, width, w, &hw, bo, &failures);
      mb_workload_free(w);
    }
    mb_catalogue_free(cat);
  } else {
    if (cat) mb_catalogue_free(cat);
    printf(
        "== 2. quality on the samples and HLO files (no catalogue: %s); fast memory = 1/4 of "
        "peak live bytes; heur/grd and gaps from simulated program times; heur s, greedy s, "
        "bound s: wall clock\n",
        cat ? "empty" : err.message);
    quality_header(NAME_MIN_WIDTH);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/datasets/samples", mb_source_dir());
    quality_files(dir, ".wl", bo, &failures);
    snprintf(dir, sizeof dir, "%s/hlo", data);
    quality_files(dir, ".hlo", bo, &failures);
  }
  printf("\n");
  return failures ? 1 : 0;
}

static int packing(const bench_opts *bo) {
  printf(
      "== 3. exact packer on MiniMalloc's challenging instances (capacity 1048576 B; packer s "
      "is wall clock; no simulated time)\n");
  printf("%-4s %8s %10s %12s %10s %14s %16s\n", "file", "buffers", "status", "packer s", "nodes",
         "best-fit out", "best-fit height");
  const char *data = mb_data_dir(bo->data);
  const char *names[] = {"A", "B", "C"};
  int rc = 0;
  for (int k = 0; k < 3; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/minimalloc/%s.1048576.csv", data, names[k]);
    mb_error err;
    mb_workload *w = mb_csv_import_file(path, &err);
    if (!w) {
      printf("%-4s skipped: %s\n", names[k], err.message);
      continue;
    }
    mb_pack_item *it = malloc(sizeof *it * (size_t)w->n_buffers);
    int64_t *off = malloc(sizeof *off * (size_t)w->n_buffers);
    if (!it || !off) {
      free(it);
      free(off);
      mb_workload_free(w);
      return 1;
    }
    for (int32_t i = 0; i < w->n_buffers; i++)
      it[i] = (mb_pack_item){w->buffers[i].start, w->buffers[i].end, w->buffers[i].size};
    int32_t left_out = 0;
    int64_t height = 0;
    mb_pack_options po = {1048576, 1, 120, 0};
    mb_pack_result r;
    if (!mb_pack_best_fit(it, w->n_buffers, 1048576, 1, off, &left_out, &height, &err) ||
        !mb_pack(it, w->n_buffers, &po, off, &r, &err)) {
      mb_diag(stderr, "bench solvers: %s: %s", path, err.message);
      rc = 1;
    } else {
      printf("%-4s %8d %10s %12.3f %10" PRId64 " %14d %16" PRId64 "\n", names[k], w->n_buffers,
             mb_pack_status_name(r.status), r.seconds, r.nodes, left_out, height);
      if (r.status != MB_PACK_SOLVED) rc = 1;
    }
    free(it);
    free(off);
    mb_workload_free(w);
  }
  return rc;
}

int mb_bench_solvers(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  bench_opts bo = {1000000, 0.5, 30, 1, NULL};
  for (int i = 1; i < argc; i++) {
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o); /* every option takes a value */
    const char *a = o.flag, *v = o.value;
    if (!strcmp(a, "--max")) {
      double d; /* "2e9" is welcome */
      if (!mb_option_number("bench solvers", a, v, 1000, false, 2e9, &d)) return 2;
      bo.max_n = (int64_t)d;
    } else if (!strcmp(a, "--budget") || !strcmp(a, "--bound-budget")) {
      double *dst = !strcmp(a, "--budget") ? &bo.greedy_budget : &bo.bound_budget;
      if (!mb_option_number("bench solvers", a, v, 0, true, 1e6, dst)) return 2;
    } else if (!strcmp(a, "--seed")) {
      if (!mb_option_u64("bench solvers", a, v, &bo.seed)) return 2;
    } else if (!strcmp(a, "--data")) {
      if (!mb_option_path("bench solvers", a, v, &bo.data)) return 2;
    } else {
      return mb_unknown_option("bench solvers", argv[i]);
    }
    i = o.last;
  }
  int rc = scaling(&bo);
  rc |= quality(&bo);
  rc |= packing(&bo);
  return rc;
}
