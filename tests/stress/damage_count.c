/* damage_count FILE [--n N] [--seed S] [--verbose]: how a results file or an agent checkpoint
 * fares when one byte of it is changed.
 *
 * N copies of FILE (default 200) each get one byte XORed with a non-zero value at a seeded
 * position, and each copy is read in a child process as mallocbench's readers read it:
 *   results file: mb_results_open, every row and baseline, every root attribute, every stored
 *                 assignment, curve and curve reference, every workload copy and its split
 *                 (what verify, export, summary, plot and report read);
 *   checkpoint:   mb_agent_load with the optimiser, progress and curve (what train --resume
 *                 reads; a solve reads a part of it).
 * Each read is counted as: crashed (the child died of a signal), refused (an error), intact (the
 * same contents as the undamaged file: the byte was not used) or changed (other contents, no
 * error: a silent wrong load). The kind of FILE is found by reading it. Exit 0 when no copy
 * crashed or changed, 1 otherwise, 2 on usage or setup errors.
 *
 * The program uses only functions that existed before seals and checksums, so that it builds in
 * older trees too (copy it there). Measured 2026-11-29 (Release, HDF5 1.10.8, --n 500, seeds 1-4
 * for results files, 1-2 for checkpoints; counts summed over the seeds):
 *   results file of `run` with 2 workloads x (heuristic, greedy) x 2 seeds (149 KB):
 *     before seals (written and read by commit 0a79c5e): crashed 6, changed 86, refused 49,
 *     intact 1859 of 2000; sealed: refused 2000 of 2000.
 *   the same run killed after 10 tasks (its seal block says open, 51 KB; seeds 1-2): crashed 7,
 *     changed 53, refused 57, intact 883 of 1000: a killed file is not protected (file_seal.h).
 *   a complete run's file with its seal block zeroed (`run --workloads
 *     '^(mlp_pt_xla-tpu|graphsage_tf-tpu)$' --solvers heuristic,greedy --seeds 2`, 155 KB,
 *     seeds 1-4; 2026-11-29): before crashed 7, changed 122, refused 88, intact 1783 of 2000;
 *     once mb_results_open read such files first in a child (isolated.h): crashed 0, changed
 *     121, refused 96, intact 1783.
 *   checkpoint of `train --synthetic --latent 16 --actions 8 --synth-min 16 --synth-max 32
 *     --batch 16 --steps 20` (174 KB): before checksums crashed 0, changed 686, refused 126,
 *     intact 188 of 1000; with them: changed 0, refused 968, intact 32.
 *   default-size checkpoint (`train --synthetic --steps 10`, 2.6 MB; seed 1): before changed 481,
 *     refused 6, intact 13 of 500; with checksums changed 0, refused 498, intact 2. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "results.h"
#include "rng.h"
#include "workload.h"
#include "workload_io.h"

/* ---- what a reader gets, as bytes (NULL when a read failed) ---- */

static char *dump_results(const char *path, size_t *len) {
  mb_error err = {{0}};
  char *text = NULL;
  FILE *out = open_memstream(&text, len);
  mb_results *r = mb_results_open(path, false, &err);
  mb_result_row *rows = NULL;
  mb_baseline_row *base = NULL;
  char **keys = NULL, **vals = NULL, **wk = NULL;
  int64_t n = 0, nb = 0;
  int32_t na = 0, nw = 0;
  bool ok = r && mb_results_read_rows(r, &rows, &n, &err) &&
            mb_results_read_baselines(r, &base, &nb, &err) &&
            mb_results_list_attrs(r, &keys, &vals, &na, &err) &&
            mb_results_workload_keys(r, &wk, &nw, &err);
  for (int32_t i = 0; ok && i < na; i++) fprintf(out, "attr %s=%s\n", keys[i], vals[i]);
  for (int64_t i = 0; ok && i < n; i++) {
    const mb_result_row *x = &rows[i];
    fprintf(out,
            "row %" PRId64 " %s %s %s %" PRId64 " %s %d %" PRId64 " %d %d %" PRId64 " %" PRId64
            " %" PRId64 " %" PRId64 " %" PRId64 " %a %a %a %a %a %" PRId64 " %d %s\n",
            x->task, x->workload, x->hardware, x->solver, x->seed, x->status, x->valid, x->capacity,
            x->n_buffers, x->n_fast, x->fast_bytes, x->t_slow_ps, x->t_heuristic_ps, x->t_solver_ps,
            x->t_bound_ps, x->t_solver_s, x->speedup_heuristic, x->speedup_slow, x->gap_to_bound,
            x->wall_s, x->iterations, x->budget_hit, x->note);
    bool absent = false;
    mb_assignment *a = mb_results_get_assignment(r, x, &absent, &err);
    if (!a && !absent) ok = false;
    for (int32_t k = 0; a && k < a->n_buffers; k++) fprintf(out, " %" PRId64, a->offset[k]);
    mb_assignment_free(a);
    double *s = NULL, *v = NULL, h = 0;
    int32_t len_c = 0;
    ok = ok && mb_results_get_curve(r, x, &s, &v, &len_c, &err) &&
         mb_results_get_curve_heuristic(r, x, &h, &err);
    for (int32_t k = 0; ok && k < len_c; k++) fprintf(out, " (%a %a)", s[k], v[k]);
    fprintf(out, " ref %a\n", h);
    free(s);
    free(v);
  }
  for (int64_t i = 0; ok && i < nb; i++) {
    const mb_baseline_row *x = &base[i];
    fprintf(out,
            "baseline %" PRId64 " %s %s %s %" PRId64 " %" PRId64 " %a %a %a %a %" PRId64 " %" PRId64
            " %" PRId64 " %s %s %a %a:",
            x->task, x->workload, x->hardware, x->profile_sha256, x->capacity, x->alignment,
            x->slow_bandwidth, x->fast_bandwidth, x->peak_flops, x->op_overhead_s, x->t_slow_ps,
            x->t_heuristic_ps, x->t_bound_ps, x->bound_status, x->bound_note, x->heuristic_wall_s,
            x->bound_wall_s);
    bool absent = false;
    mb_assignment *a = mb_results_get_baseline_assignment(r, x, &absent, &err);
    if (!a && !absent) ok = false;
    for (int32_t k = 0; a && k < a->n_buffers; k++) fprintf(out, " %" PRId64, a->offset[k]);
    fprintf(out, "\n");
    mb_assignment_free(a);
  }
  for (int32_t i = 0; ok && i < nw; i++) {
    char sha[MB_RES_SHA], split[MB_RES_SPLIT], text_sha[65];
    mb_workload *w = mb_results_get_workload(r, wk[i], sha, &err);
    ok = w && mb_results_get_workload_split(r, wk[i], split, &err) &&
         mb_workload_sha256_hex(w, text_sha);
    if (ok) fprintf(out, "workload %s %s %s %s\n", wk[i], sha, text_sha, split);
    mb_workload_free(w);
  }
  fclose(out);
  mb_results_free_strings(keys, na);
  mb_results_free_strings(vals, na);
  mb_results_free_strings(wk, nw);
  free(rows);
  free(base);
  if (r) mb_results_close(r, NULL);
  if (!ok) {
    free(text);
    return NULL;
  }
  return text;
}

static void put_tensor(FILE *out, const mb_tensor *t) {
  fprintf(out, "%dx%d:", t->rows, t->cols);
  fwrite(t->data, sizeof *t->data, (size_t)mb_tensor_size(t), out);
}

static void put_series(FILE *out, const double *x, int64_t n) {
  if (n > 0) fwrite(x, sizeof *x, (size_t)n, out);
}

static char *dump_agent(const char *path, size_t *len) {
  mb_error err = {{0}};
  mb_agent ag;
  mb_adam opt;
  mb_agent_progress prog;
  mb_agent_curve curve;
  memset(&opt, 0, sizeof opt);
  memset(&prog, 0, sizeof prog);
  mb_agent_curve_init(&curve);
  if (!mb_agent_load(path, &ag, &opt, &prog, &curve, &err)) return NULL;
  char *bytes = NULL;
  FILE *out = open_memstream(&bytes, len);
  const mb_agent_config *c = &ag.cfg;
  fprintf(out, "cfg %d %d %d %d %d %d %a %a %a %d\n", c->obs_dim, c->latent, c->blocks,
          c->dyn_width, c->dyn_blocks, c->support, c->support_min, c->support_max, c->value_scale,
          c->action_features);
  mb_nn_module *mods[4];
  mb_agent_modules(&ag, mods);
  for (int i = 0; i < 4; i++)
    for (int32_t k = 0; k < mods[i]->n_params; k++) put_tensor(out, &mods[i]->params[k].value);
  fprintf(out, "adam %" PRId64 " %a %a %a %a %a\n", opt.step, opt.cfg.lr, opt.cfg.beta1,
          opt.cfg.beta2, opt.cfg.eps, opt.cfg.weight_decay);
  for (int i = 0; i < opt.n; i++) {
    put_tensor(out, &opt.slots[i].m);
    put_tensor(out, &opt.slots[i].v);
  }
  fprintf(out, "progress %" PRId64 " %" PRId64 " %" PRId64 " %" PRIu64 " %a %s\n", prog.steps,
          prog.episodes, prog.decisions, prog.seed, prog.seconds, prog.blas);
  fprintf(out, "curve %" PRId64 " %a %a\n", curve.len, curve.heuristic, curve.random);
  put_series(out, curve.step, curve.len);
  put_series(out, curve.episodes, curve.len);
  put_series(out, curve.selfplay, curve.len);
  put_series(out, curve.policy, curve.len);
  put_series(out, curve.loss, curve.len);
  put_series(out, curve.seconds, curve.len);
  put_series(out, curve.validation, curve.len);
  fclose(out);
  mb_agent_curve_free(&curve);
  mb_adam_free(&opt);
  mb_agent_free(&ag);
  return bytes;
}

/* ---- the loop ---- */

enum { CRASHED, REFUSED, INTACT, CHANGED, N_OUTCOMES };
static const char *const OUTCOME[N_OUTCOMES] = {"crashed", "refused", "intact", "changed"};

typedef char *(*dump_fn)(const char *path, size_t *len);

/* Reads the copy in a child (a crash, or libhdf5's leaks on damaged files, stay there). */
static int outcome(dump_fn dump, const char *copy, const char *want, size_t want_len) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return CRASHED;
  if (pid == 0) {
    size_t len = 0;
    char *got = dump(copy, &len);
    _exit(!got ? REFUSED : len == want_len && !memcmp(got, want, len) ? INTACT : CHANGED);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) < N_OUTCOMES ? WEXITSTATUS(status) : CRASHED;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  long n = 200;
  unsigned long long seed = 1;
  bool verbose = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc)
      n = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--verbose"))
      verbose = true;
    else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else
      path = NULL, i = argc;
  }
  if (!path || n < 1) {
    fprintf(stderr, "usage: damage_count FILE [--n N] [--seed S] [--verbose]\n");
    return 2;
  }
  FILE *f = fopen(path, "rb");
  struct stat st;
  if (!f || stat(path, &st) != 0 || st.st_size < 1) {
    fprintf(stderr, "damage_count: cannot read %s\n", path);
    return 2;
  }
  size_t size = (size_t)st.st_size;
  unsigned char *bytes = malloc(size);
  bool read_ok = bytes && fread(bytes, 1, size, f) == size;
  fclose(f);
  size_t want_len = 0;
  dump_fn dump = dump_agent;
  char *want = read_ok ? dump_agent(path, &want_len) : NULL;
  if (!want) {
    dump = dump_results;
    want = read_ok ? dump_results(path, &want_len) : NULL;
  }
  if (!want) {
    fprintf(stderr, "damage_count: %s reads neither as an agent checkpoint nor as results\n", path);
    return 2;
  }
  char copy[4200];
  snprintf(copy, sizeof copy, "%s.damaged", path);
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  long count[N_OUTCOMES] = {0};
  for (long i = 0; i < n; i++) {
    size_t at = (size_t)mb_rng_below(&rng, size);
    unsigned char flip = (unsigned char)(1 + mb_rng_below(&rng, 255));
    bytes[at] ^= flip;
    FILE *o = fopen(copy, "wb");
    bool wrote = o && fwrite(bytes, 1, size, o) == size;
    if (o && fclose(o) != 0) wrote = false;
    bytes[at] ^= flip;
    if (!wrote) {
      fprintf(stderr, "damage_count: cannot write %s\n", copy);
      return 2;
    }
    int k = outcome(dump, copy, want, want_len);
    count[k]++;
    if (verbose) printf("byte %zu ^ 0x%02x: %s\n", at, flip, OUTCOME[k]);
  }
  unlink(copy);
  printf("%s (%s, %zu bytes), %ld one-byte changes, seed %llu:", path,
         dump == dump_agent ? "agent checkpoint" : "results file", size, n, seed);
  for (int k = 0; k < N_OUTCOMES; k++)
    printf(" %s %ld%s", OUTCOME[k], count[k], k < 3 ? "," : "\n");
  free(bytes);
  free(want);
  return count[CRASHED] || count[CHANGED] ? 1 : 0;
}
