#include "driver.h"

#include <errno.h>
#include <fcntl.h>
#include <glpk.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assignment.h"
#include "atomic_file.h"
#include "bound.h"
#include "catalogue.h"
#include "clock.h"
#include "cost.h"
#include "hardware.h"
#include "paths.h"
#include "results.h"
#include "run_journal.h"
#include "sha256.h"
#include "solver.h"
#include "tensor.h"
#include "validator.h"
#include "version.h"
#include "workload_io.h"

/* The quick profile's workloads when no catalogue entry carries the `quick` tag: 12 entries
 * of datasets/catalogue.txt covering every source kind (4 real HLO modules, 3 AlphaTensor
 * traces, a MiniMalloc CSV, a hand-written sample, 3 model-zoo networks) and all three
 * hardware profiles. Tagging entries `quick` in the catalogue replaces this list. */
const char MB_QUICK_FALLBACK_REGEX[] =
    "^(bert_pt_xla_adam_step_nofusion-tpu|graphsage_tf-tpu|mlp_pt_xla-tpu|ssd_mobilenet_tf-edge|"
    "at_tpu_8192_bf16-tpu|strassen2_8192_bf16-tpu|at_gpu_4096_f32-gpu|minimalloc_A-tpu|"
    "attention_block-tpu|resnet50_inf_b1-tpu|bert_base_inf_b8-tpu|mobilenetv2_inf_b1-edge)$";

#define QUICK_BOUND_S 10.0 /* LP bound time limit, quick profile */
#define FULL_BOUND_S 120.0 /* LP bound time limit, full profile */
#define MAX_BOUND_S 1e9    /* --bound-budget's largest value (as solve's) */
#define QUICK_SEEDS 1
#define FULL_SEEDS 3
#define MAX_SOLVERS 16
#define PROGRESS_PERIOD_TTY 0.25 /* seconds between redraws of the progress line */
#define PROGRESS_PERIOD_LOG 10.0 /* seconds between plain progress lines (not a terminal) */

/* ---- small utilities ---- */

static void utc_stamp(char *out, size_t n, const char *fmt) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, n, fmt, &tm);
}

/* Bounded copy that always terminates (fixed-size fields truncate long text). */
static void copy_str(char *dst, size_t n, const char *src) {
  if (n == 0) return;
  size_t len = strnlen(src, n - 1);
  memcpy(dst, src, len);
  dst[len] = '\0';
}

static bool file_sha256(const char *path, char out[65]) {
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) return false;
  mb_sha256_hex(text, len, out);
  free(text);
  return true;
}

/* ---- the plan ---- */

typedef struct pair {
  int32_t workload; /* index into run.workloads */
  mb_hardware hw;
  char hw_name[MB_RES_HARDWARE]; /* the key stored in the tables */
  char profile_sha[MB_RES_SHA];
  /* the baseline, known once its task is committed (always before the pair's jobs) */
  mb_time_ps t_slow, t_heur, t_bound;
} pair;

typedef struct loaded_workload {
  char key[MB_RES_WORKLOAD]; /* catalogue entry name */
  mb_workload *w;
  char sha[MB_RES_SHA];
  char split[MB_RES_SPLIT]; /* the entry's catalogue split, stored with the workload copy */
} loaded_workload;

enum { ST_PENDING, ST_RUNNING, ST_DONE, ST_COMMITTED };

typedef struct task {
  mb_task_kind kind;
  int32_t pair;
  int32_t solver; /* index into run.solvers (jobs) */
  int64_t seed;
  int state;
  bool journaled;
  double compute_s;
  mb_task_record out; /* what its worker computed, or what the journal gave back (resume) */
} task;

typedef struct run {
  const mb_run_config *cfg;
  FILE *log;
  /* resolved options (stored in the file; --resume reads them back) */
  char profile[16];
  char *workloads_regex; /* "" when selected by the `quick` tag */
  char solvers_list[512];
  int64_t seeds;
  char *hardware_list; /* "" = each entry's own */
  char *agent_path;    /* mallocMuZero checkpoint; "" = the solvers' default */
  char agent_sha[MB_RES_SHA];
  char agent_digest[MB_RES_SHA]; /* its networks' digest (mb_mallocmuzero_agent_digest) */
  double budget;
  /* mallocMuZero's evaluation options (0: the solvers' defaults; mb_run_config) */
  int simulations;
  double c_scale, finetune;
  int64_t finetune_steps;
  int leaf_rollout;
  int search;          /* MB_SOLVER_SEARCH_* */
  double bound_budget; /* seconds for the LP bound; 0 until make_plan: the profile's */
  char *catalogue_path;
  char *data_dir;
  /* plan */
  mb_catalogue *cat;
  char catalogue_sha[MB_RES_SHA];
  const mb_solver *solvers[MAX_SOLVERS];
  int n_solvers;
  loaded_workload *workloads;
  int32_t n_workloads;
  pair *pairs;
  int32_t n_pairs;
  task *tasks;
  int64_t n_tasks, n_jobs;
  char plan_sha[MB_RES_SHA];
  char *skipped; /* "name: reason\n" lines */
  int32_t n_skipped;
  /* execution */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t next;    /* next task to hand out */
  int64_t *done_q; /* finished, not yet journaled (ring of n_tasks) */
  int64_t done_head, done_tail;
  bool stop;
  int64_t current; /* the last task handed out, for the progress line */
  int64_t n_done_here;
  /* output */
  mb_results *res;
  char out_path[4096];
  char out_stem[4080]; /* default output: out_path without ".h5"; "" when the user named it */
  char journal_path[4200];
  int journal_fd;
  int64_t committed; /* tasks 0..committed-1 are in the HDF5 file */
  int64_t n_results_rows, n_baseline_rows;
  mb_run_stats *stats;
} run;

static void run_free(run *R) {
  if (R->tasks)
    for (int64_t i = 0; i < R->n_tasks; i++) mb_task_record_clear(&R->tasks[i].out);
  free(R->tasks);
  for (int32_t i = 0; i < R->n_workloads; i++) mb_workload_free(R->workloads[i].w);
  free(R->workloads);
  free(R->pairs);
  free(R->done_q);
  free(R->skipped);
  free(R->workloads_regex);
  free(R->hardware_list);
  free(R->agent_path);
  free(R->catalogue_path);
  free(R->data_dir);
  mb_catalogue_free(R->cat);
}

static bool append_text(char **buf, const char *line) {
  size_t old = *buf ? strlen(*buf) : 0, add = strlen(line);
  char *p = realloc(*buf, old + add + 1);
  if (!p) return false;
  memcpy(p + old, line, add + 1);
  *buf = p;
  return true;
}

static bool has_tag(const char *tags, const char *tag) {
  size_t n = strlen(tag);
  for (const char *p = tags; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, tag, n)) return true;
    if (!e) break;
    p = e + 1;
  }
  return false;
}

/* Growable text buffer (regexes). */
typedef struct sbuf {
  char *s;
  size_t len, cap;
  bool failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->failed = true;
      return;
    }
    if (b->s && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
      b->failed = true;
      return;
    }
    b->s = p;
    b->cap = cap;
  }
}

/* --split: keeps the selected entries of that split and records the result as an exact name
 * regex, ^(a|b|...)$, so that the plan hash, the provenance and --resume see the selection
 * itself (a later edit of the catalogue's splits cannot change what a resumed run takes). */
static bool restrict_to_split(run *R, bool *selected, mb_error *err) {
  const char *split = R->cfg->split;
  if (!split || R->cfg->resume) return true;
  const mb_catalogue *c = R->cat;
  sbuf b = {0};
  sb_printf(&b, "^(");
  int32_t kept = 0;
  for (int32_t i = 0; i < c->n_entries; i++) {
    if (!selected[i]) continue;
    selected[i] = !strcmp(c->entries[i].split, split);
    if (!selected[i]) continue;
    sb_printf(&b, "%s", kept++ ? "|" : "");
    for (const char *q = c->entries[i].name; *q; q++)
      sb_printf(&b, strchr("\\^$.|?*+()[]{}", *q) ? "\\%c" : "%c", *q);
  }
  sb_printf(&b, ")$");
  if (b.failed) {
    free(b.s);
    return mb_fail(err, "out of memory");
  }
  if (kept == 0) {
    free(b.s);
    return mb_fail(err, "--split %s: no selected catalogue entry is in split '%s'", split, split);
  }
  free(R->workloads_regex);
  R->workloads_regex = b.s;
  return true;
}

/* Which catalogue entries the run takes: selected[i] for each entry. */
static bool select_entries(run *R, bool *selected, mb_error *err) {
  const mb_catalogue *c = R->cat;
  const char *regex = R->workloads_regex;
  if (!*regex) {
    if (!strcmp(R->profile, "full")) {
      for (int32_t i = 0; i < c->n_entries; i++) selected[i] = true;
      return restrict_to_split(R, selected, err);
    }
    bool any = false;
    for (int32_t i = 0; i < c->n_entries; i++)
      any |= selected[i] = has_tag(c->entries[i].tags, "quick");
    if (any) return restrict_to_split(R, selected, err);
    /* No entry is tagged `quick`: fall back to the fixed list (stored, so resume agrees). */
    free(R->workloads_regex);
    R->workloads_regex = strdup(MB_QUICK_FALLBACK_REGEX);
    if (!R->workloads_regex) return mb_fail(err, "out of memory");
    regex = R->workloads_regex;
  }
  if (!mb_catalogue_select(c, regex, "--workloads", selected, err)) return false;
  return restrict_to_split(R, selected, err);
}

static bool resolve_solvers(run *R, mb_error *err) {
  int n_all = 0;
  const mb_solver *all = mb_solver_list(&n_all);
  R->n_solvers = 0;
  if (!R->solvers_list[0]) {
    for (int i = 0; i < n_all && i < MAX_SOLVERS; i++) {
      R->solvers[R->n_solvers++] = &all[i];
      if (i) strncat(R->solvers_list, ",", sizeof R->solvers_list - strlen(R->solvers_list) - 1);
      strncat(R->solvers_list, all[i].name, sizeof R->solvers_list - strlen(R->solvers_list) - 1);
    }
    return R->n_solvers > 0 || mb_fail(err, "no solver is registered");
  }
  char list[512];
  copy_str(list, sizeof list, R->solvers_list);
  char *save = NULL;
  for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    const mb_solver *s = mb_solver_find(tok);
    for (int i = 0; !s && i < R->cfg->n_extra_solvers; i++)
      if (!strcmp(R->cfg->extra_solvers[i].name, tok)) s = &R->cfg->extra_solvers[i];
    if (!s) {
      char names[512] = "";
      for (int i = 0; i < n_all; i++) {
        if (i) strncat(names, ", ", sizeof names - strlen(names) - 1);
        strncat(names, all[i].name, sizeof names - strlen(names) - 1);
      }
      return mb_fail(err, "--solvers: unknown solver '%s' (available: %s)", tok, names);
    }
    for (int i = 0; i < R->n_solvers; i++)
      if (R->solvers[i] == s) return mb_fail(err, "--solvers: '%s' is listed twice", tok);
    if (R->n_solvers == MAX_SOLVERS) return mb_fail(err, "--solvers: more than %d", MAX_SOLVERS);
    R->solvers[R->n_solvers++] = s;
  }
  return R->n_solvers > 0 || mb_fail(err, "--solvers: empty list");
}

static bool profile_file_sha(const char *name, char out[MB_RES_SHA]) {
  char path[4096];
  size_t n = strlen(name);
  if (strchr(name, '/') || (n > 4 && !strcmp(name + n - 4, ".txt")))
    copy_str(path, sizeof path, name);
  else if (snprintf(path, sizeof path, "%s/datasets/hardware/%s.txt", mb_source_dir(), name) >=
           (int)sizeof path)
    return false;
  return file_sha256(path, out);
}

/* Checks mallocMuZero's evaluation options (0 everywhere: the solvers' defaults). `stored`:
 * NULL for the caller's flags, else the file being resumed they were read from. */
static bool muzero_options_ok(int simulations, double c_scale, double finetune,
                              int64_t finetune_steps, int leaf_rollout, int search,
                              const char *stored, mb_error *err) {
  const char *where = stored ? stored : "", *sep = stored ? ": " : "";
  if (simulations < 0 || simulations > MB_SOLVER_MAX_SIMULATIONS)
    return mb_fail(err, "%s%s%s %d: expected an integer in 1..%d (0: the solvers' default)", where,
                   sep, stored ? "run_simulations" : "--simulations", simulations,
                   MB_SOLVER_MAX_SIMULATIONS);
  if (!(c_scale >= 0) || !isfinite(c_scale))
    return mb_fail(err, "%s%s%s %g: expected a finite number > 0 (0: the solvers' default)", where,
                   sep, stored ? "run_c_scale" : "--c-scale", c_scale);
  if (!(finetune >= 0) || !isfinite(finetune))
    return mb_fail(err, "%s%s%s %g: expected finite seconds >= 0", where, sep,
                   stored ? "run_finetune_s" : "--finetune", finetune);
  if (finetune_steps < 0 || finetune_steps > MB_SOLVER_MAX_FINETUNE_STEPS)
    return mb_fail(err, "%s%s%s %" PRId64 ": expected updates in 0..%d", where, sep,
                   stored ? "run_finetune_steps" : "--finetune-steps", finetune_steps,
                   MB_SOLVER_MAX_FINETUNE_STEPS);
  if (leaf_rollout != MB_SOLVER_NO_LEAF_ROLLOUT &&
      (leaf_rollout < 0 || leaf_rollout > MB_SOLVER_MAX_LEAF_ROLLOUT))
    return mb_fail(err, "%s%s%s %d: expected steps in 0..%d (stored: -1 for 0, none)", where, sep,
                   stored ? "run_leaf_rollout" : "--leaf-rollout", leaf_rollout,
                   MB_SOLVER_MAX_LEAF_ROLLOUT);
  if (!mb_solver_search_name(search))
    return mb_fail(err, "%s%s%s %d: expected %d (gumbel) or %d (puct)", where, sep,
                   stored ? "run_search" : "--search", search, MB_SOLVER_SEARCH_GUMBEL,
                   MB_SOLVER_SEARCH_PUCT);
  if (finetune > 0 && finetune_steps > 0)
    return mb_fail(err, "%s%s%s and %s: fine-tune by seconds or by updates, not both", where, sep,
                   stored ? "run_finetune_s" : "--finetune",
                   stored ? "run_finetune_steps" : "--finetune-steps");
  return true;
}

static bool muzero_options_set(const run *R) {
  return R->simulations != 0 || R->c_scale != 0 || R->finetune != 0 || R->finetune_steps != 0 ||
         R->leaf_rollout != 0 || R->search != MB_SOLVER_SEARCH_GUMBEL;
}

/* Options may come from a file being resumed: checked like flags. */
static bool check_plan_options(run *R, mb_error *err) {
  if (strcmp(R->profile, "quick") && strcmp(R->profile, "full"))
    return mb_fail(err, "profile '%s': expected quick or full", R->profile);
  if (R->seeds < 1 || R->seeds > 1000000)
    return mb_fail(err, "seeds %" PRId64 ": expected 1..1000000", R->seeds);
  if (!(R->budget >= 0)) return mb_fail(err, "budget %g: expected seconds >= 0", R->budget);
  if (!(R->bound_budget >= 0 && R->bound_budget <= MAX_BOUND_S))
    return mb_fail(err, "%s%sbound budget %g: expected seconds > 0, at most %g",
                   R->cfg->resume ? R->cfg->resume : "", R->cfg->resume ? ": the stored " : "",
                   R->bound_budget, MAX_BOUND_S);
  return muzero_options_ok(R->simulations, R->c_scale, R->finetune, R->finetune_steps,
                           R->leaf_rollout, R->search, R->cfg->resume ? R->cfg->resume : NULL, err);
}

/* --hardware: profiles that replace every entry's own (its capacity aside), loaded once. */
enum { MAX_HARDWARE_OVERRIDES = 16 };
typedef struct hardware_overrides {
  int n;
  mb_hardware hw[MAX_HARDWARE_OVERRIDES];
  char names[MAX_HARDWARE_OVERRIDES][MB_RES_HARDWARE], sha[MAX_HARDWARE_OVERRIDES][MB_RES_SHA];
} hardware_overrides;

static bool load_hardware_overrides(const char *csv, hardware_overrides *O, mb_error *err) {
  O->n = 0;
  if (!csv[0]) return true;
  char list[4096];
  if (strlen(csv) >= sizeof list)
    return mb_fail(err, "--hardware: the list is longer than %zu bytes", sizeof list - 1);
  copy_str(list, sizeof list, csv);
  char *save = NULL;
  for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (O->n == MAX_HARDWARE_OVERRIDES)
      return mb_fail(err, "--hardware: more than %d profiles", MAX_HARDWARE_OVERRIDES);
    if (!mb_hardware_find(tok, NULL, &O->hw[O->n], err)) return mb_fail_prefix(err, "--hardware");
    /* results are keyed by workload and hardware name: two profiles of one name would merge
     * their cases in every table */
    for (int k = 0; k < O->n; k++)
      if (!strcmp(O->names[k], O->hw[O->n].name))
        return mb_fail(err,
                       "--hardware: '%s' is a second profile named '%s' (cases are keyed by "
                       "workload and hardware name, so two profiles need two names)",
                       tok, O->names[k]);
    copy_str(O->names[O->n], MB_RES_HARDWARE, O->hw[O->n].name);
    if (!profile_file_sha(tok, O->sha[O->n])) O->sha[O->n][0] = '\0';
    O->n++;
  }
  return true;
}

/* Loads the selected entries' workloads into R->workloads; an entry whose external data is
 * missing is skipped with a note (R->skipped), any other failure is an error. */
static bool load_workloads(run *R, const bool *selected, mb_error *err) {
  char cache[4096];
  if (!mb_cache_dir(cache, sizeof cache)) return mb_fail(err, "cache path too long");
  for (int32_t i = 0; i < R->cat->n_entries; i++) {
    if (!selected[i]) continue;
    const mb_catalogue_entry *e = &R->cat->entries[i];
    bool missing = false;
    mb_error werr = {{0}};
    mb_workload *w = mb_catalogue_load_workload(e, R->data_dir, cache, &missing, &werr);
    if (!w && missing) {
      char line[MB_ERROR_MAX + 256];
      snprintf(line, sizeof line, "%s: %s\n", e->name, werr.message); /* kept raw in the file */
      mb_diag(R->log, "mallocbench run: skipping %s: %s", e->name, werr.message);
      if (!append_text(&R->skipped, line)) return mb_fail(err, "out of memory");
      R->n_skipped++;
      continue;
    }
    if (!w) {
      *err = werr;
      return mb_fail_prefix(err, "%s:%d: catalogue entry '%s'", R->cat->path, (int)e->line,
                            e->name);
    }
    loaded_workload *lw = &R->workloads[R->n_workloads++];
    lw->w = w;
    copy_str(lw->key, sizeof lw->key, e->name);
    copy_str(lw->split, sizeof lw->split, e->split);
    if (strlen(e->name) >= sizeof lw->key)
      return mb_fail(err, "%s:%d: entry name longer than %d bytes", R->cat->path, (int)e->line,
                     MB_RES_WORKLOAD - 1);
    if (!mb_workload_sha256_hex(w, lw->sha))
      return mb_fail(err, "out of memory hashing workload '%s'", e->name);
  }
  const char *data_note = R->n_skipped ? " with its data present (see the notes above)" : "";
  if (R->n_workloads == 0 && !R->cfg->workloads && !R->cfg->resume && !strcmp(R->profile, "quick"))
    return mb_fail(err,
                   "no workload to run: the quick profile takes %s's entries tagged 'quick', or "
                   "without any its fixed list of names, and none is there%s: tag entries "
                   "'quick', or give --profile full or --workloads REGEX",
                   R->cat->path, data_note);
  if (R->n_workloads == 0)
    return mb_fail(err, "no workload to run: %s selects none%s",
                   R->workloads_regex[0] ? "--workloads" : "the profile", data_note);
  return true;
}

/* One (workload, hardware) pair per workload and override profile (or the entry's own). */
static bool make_pairs(run *R, const hardware_overrides *O, mb_error *err) {
  int per_workload = O->n ? O->n : 1;
  R->pairs = calloc((size_t)R->n_workloads * (size_t)per_workload, sizeof *R->pairs);
  if (!R->pairs) return mb_fail(err, "out of memory");
  for (int32_t wi = 0; wi < R->n_workloads; wi++) {
    const mb_catalogue_entry *e = NULL;
    for (int32_t i = 0; i < R->cat->n_entries; i++)
      if (!strcmp(R->cat->entries[i].name, R->workloads[wi].key)) e = &R->cat->entries[i];
    for (int k = 0; k < per_workload; k++) {
      pair *p = &R->pairs[R->n_pairs++];
      p->workload = wi;
      if (O->n) {
        /* the entry sizes fast memory for its workload (datasets/CATALOGUE.md): keep that
         * capacity, take everything else from the override profile */
        p->hw = mb_hardware_with_capacity(&O->hw[k], e->capacity);
        copy_str(p->hw_name, sizeof p->hw_name, O->names[k]);
        copy_str(p->profile_sha, sizeof p->profile_sha, O->sha[k]);
      } else {
        if (!mb_catalogue_hardware(e, &p->hw, err))
          return mb_fail_prefix(err, "%s:%d: entry '%s'", R->cat->path, (int)e->line, e->name);
        copy_str(p->hw_name, sizeof p->hw_name, p->hw.name);
        if (!profile_file_sha(e->hardware, p->profile_sha)) p->profile_sha[0] = '\0';
      }
      if (!mb_cost_check_range(R->workloads[wi].w, &p->hw, err))
        return mb_fail_prefix(err, "%s:%d: entry '%s'", R->cat->path, (int)e->line, e->name);
    }
  }
  return true;
}

/* Per pair: its baseline, then every solver x seed. */
static bool make_tasks(run *R, mb_error *err) {
  R->n_jobs = (int64_t)R->n_pairs * R->n_solvers * R->seeds;
  R->n_tasks = R->n_pairs + R->n_jobs;
  R->tasks = calloc((size_t)R->n_tasks, sizeof *R->tasks);
  R->done_q = calloc((size_t)R->n_tasks, sizeof *R->done_q);
  if (!R->tasks || !R->done_q)
    return mb_fail(err, "out of memory planning %" PRId64 " tasks", R->n_tasks);
  int64_t t = 0;
  for (int32_t p = 0; p < R->n_pairs; p++) {
    R->tasks[t++] = (task){.kind = MB_TASK_BASELINE, .pair = p};
    for (int s = 0; s < R->n_solvers; s++)
      for (int64_t seed = 0; seed < R->seeds; seed++)
        R->tasks[t++] = (task){.kind = MB_TASK_JOB, .pair = p, .solver = s, .seed = seed};
  }
  return true;
}

/* The plan hash covers everything that decides the numbers: workload contents, hardware,
 * solvers, seeds, budget, mallocMuZero's evaluation options, the results format. Those options
 * enter the text only when set, so that plans made before they existed (and every plan that
 * leaves them at their defaults) keep their hash and their files still resume. */
static bool plan_hash(const run *R, const char *agent_sha, char out[MB_RES_SHA], mb_error *err) {
  mb_sha256 h;
  mb_sha256_init(&h);
  char line[1024], muzero[256] = "";
  if (muzero_options_set(R)) {
    int n = snprintf(muzero, sizeof muzero, " muzero sims %d c_scale %.17g finetune %.17g",
                     R->simulations, R->c_scale, R->finetune);
    /* finetune_steps enters only when set: plans made before it keep their hash */
    if (R->finetune_steps && n > 0 && n < (int)sizeof muzero)
      n += snprintf(muzero + n, sizeof muzero - (size_t)n, " finetune_steps %" PRId64,
                    R->finetune_steps);
    /* leaf_rollout too enters only when set: plans made before it keep their hash */
    if (R->leaf_rollout && n > 0 && n < (int)sizeof muzero)
      n += snprintf(muzero + n, sizeof muzero - (size_t)n, " leaf_rollout %d", R->leaf_rollout);
    /* and the search kind when it is not Gumbel */
    if (R->search != MB_SOLVER_SEARCH_GUMBEL && n > 0 && n < (int)sizeof muzero)
      snprintf(muzero + n, sizeof muzero - (size_t)n, " search %s",
               mb_solver_search_name(R->search));
  }
  int n = snprintf(line, sizeof line,
                   "format %d budget %.17g bound %.17g seeds %" PRId64 " solvers %s agent %s%s\n",
                   MB_RESULTS_FORMAT, R->budget, R->bound_budget, R->seeds, R->solvers_list,
                   agent_sha, muzero);
  if (n < 0 || n >= (int)sizeof line)
    return mb_fail(err, "internal error: plan hash line longer than %zu bytes", sizeof line);
  mb_sha256_update(&h, line, (size_t)n);
  for (int32_t p = 0; p < R->n_pairs; p++) {
    const pair *q = &R->pairs[p];
    const mb_hardware *hw = &q->hw;
    n = snprintf(
        line, sizeof line, "%s %s %s cap %" PRId64 " align %" PRId64 " %.17g %.17g %.17g %.17g\n",
        R->workloads[q->workload].key, R->workloads[q->workload].sha, q->hw_name, hw->capacity,
        hw->alignment, hw->slow_bandwidth, hw->fast_bandwidth, hw->peak_flops, hw->op_overhead_s);
    mb_sha256_update(&h, line, (size_t)n);
  }
  uint8_t d[32];
  mb_sha256_final(&h, d);
  mb_sha256_digest_hex(d, out);
  return true;
}

/* Whether a resumed file whose plan hash differs from this plan's differs only in the agent's
 * file, its networks the same: two trainings that end in the same networks write files that
 * differ in wall times, and play depends on the networks alone. The file's recorded agent SHA-256
 * then gives its plan hash back. When it does, this run takes the file's plan hash (the journal
 * and the stored rows keep it) and says so; resume_agent_sha256 records the file it plays. */
static bool same_plan_other_agent_file(run *R, mb_results *old, const char *stored, mb_error *err) {
  if (!R->agent_digest[0] || !mb_results_has_attr(old, "agent_networks_sha256") ||
      !mb_results_has_attr(old, "agent_sha256"))
    return false;
  char *digest = mb_results_get_attr_string(old, "agent_networks_sha256", err);
  char *file_sha = digest ? mb_results_get_attr_string(old, "agent_sha256", err) : NULL;
  char plan[MB_RES_SHA];
  bool same = file_sha && !strcmp(digest, R->agent_digest) && plan_hash(R, file_sha, plan, err) &&
              !strcmp(plan, stored);
  if (same) {
    fprintf(R->log,
            "mallocbench run: note: the agent %s is not the file %s was started with (SHA-256 "
            "%.12s, now %.12s) but holds the same networks (agent_networks_sha256 %.12s): the "
            "rows from here on are played with it (resume_agent_sha256 records it)\n",
            R->agent_path, R->out_path, file_sha, R->agent_sha, digest);
    copy_str(R->plan_sha, sizeof R->plan_sha, stored);
  }
  free(digest);
  free(file_sha);
  return same;
}

/* The LP bound's time limit of a profile: what a run without --bound-budget has. */
static double profile_bound_budget(const char *profile) {
  return !strcmp(profile, "full") ? FULL_BOUND_S : QUICK_BOUND_S;
}

static bool resolve_agent(run *R, mb_error *err);

/* Catalogue -> workloads -> pairs -> tasks, and the plan hash. */
static bool make_plan(run *R, mb_error *err) {
  if (!check_plan_options(R, err)) return false;
  R->cat = mb_catalogue_load(R->catalogue_path, err);
  if (!R->cat) return false;
  if (!mb_catalogue_hash(R->cat, R->catalogue_sha, err)) return false;
  if (!resolve_solvers(R, err)) return false;
  int32_t ne = R->cat->n_entries;
  bool *selected = calloc(ne ? (size_t)ne : 1, sizeof *selected);
  R->workloads = calloc(ne ? (size_t)ne : 1, sizeof *R->workloads);
  hardware_overrides overrides;
  bool ok = selected && R->workloads;
  if (!ok) mb_fail(err, "out of memory");
  ok = ok && select_entries(R, selected, err) &&
       load_hardware_overrides(R->hardware_list, &overrides, err) &&
       load_workloads(R, selected, err) && make_pairs(R, &overrides, err) && make_tasks(R, err);
  free(selected);
  if (!ok || !resolve_agent(R, err)) return false;
  if (R->bound_budget == 0) R->bound_budget = profile_bound_budget(R->profile);
  return plan_hash(R, R->agent_sha, R->plan_sha, err);
}

/* ---- computing a task (worker threads; no HDF5 here) ---- */

/* The LP lower bound on the program time (solvers/bound.h). A time-limited LP still gives a
 * valid (weaker) bound; its status says which. */
static bool lp_bound(const mb_workload *w, const mb_hardware *hw, double budget_s, mb_time_ps *t,
                     char status[MB_RES_STATUS], mb_error *err) {
  mb_bound_result b;
  if (!mb_bound_lp(w, hw, budget_s, &b, err)) return false;
  *t = b.bound_ps;
  copy_str(status, MB_RES_STATUS,
           b.status == MB_BOUND_SOLVED ? "ok" : mb_bound_status_name(b.status));
  return true;
}

/* The options every solve of the run gets (each solver reads the fields it knows). */
static void solver_options(const run *R, int64_t seed, mb_solver_options *opt) {
  mb_solver_options_default(opt);
  opt->seed = (uint64_t)seed;
  opt->budget_seconds = R->budget;
  opt->agent_path = R->agent_path[0] ? R->agent_path : NULL;
  opt->simulations = R->simulations;
  opt->c_scale = R->c_scale;
  opt->leaf_rollout = R->leaf_rollout;
  opt->search = R->search;
  opt->finetune_seconds = R->finetune;
  opt->finetune_steps = R->finetune_steps;
}

/* Replaces R->agent_path by `path` (copied). */
static bool set_agent_path(run *R, const char *path, mb_error *err) {
  char *copy = strdup(path);
  if (!copy) return mb_fail(err, "out of memory");
  free(R->agent_path);
  R->agent_path = copy;
  return true;
}

/* The agent checkpoint of the run, fixed before anything is solved:
 * - a new run stores its path absolute (--agent as given from the current directory, else the
 *   default agent when a solver plays one), so that `run --resume` from another directory
 *   reads the same file. A resumed file keeps what it stored: an older file's relative path
 *   is read from the current directory, and its "" (the default agent, whose content such
 *   files did not hash) stays "" so that its plan hash still matches;
 * - each selected solver's check runs once: a missing agent fails the run at once, with how to
 *   train one, instead of after every other solve as one error row per solve;
 * - the agent's content is part of the plan (it decides mallocMuZero's numbers); its networks'
 *   digest, which identical trainings share though their files differ, is recorded beside it. */
static bool resolve_agent(run *R, mb_error *err) {
  bool uses_agent = false;
  for (int i = 0; i < R->n_solvers; i++) uses_agent = uses_agent || R->solvers[i]->uses_agent;
  char path[4096];
  if (!R->cfg->resume && uses_agent && !R->agent_path[0]) {
    if (!mb_default_agent_path(path, sizeof path))
      return mb_fail(err, "the default agent's path is too long (source tree %s)", mb_source_dir());
    if (!set_agent_path(R, path, err)) return false;
  } else if (!R->cfg->resume && R->agent_path[0] && R->agent_path[0] != '/') {
    char cwd[2048];
    if (!getcwd(cwd, sizeof cwd))
      return mb_fail(err, "--agent %s: cannot read the current directory: %s", R->agent_path,
                     strerror(errno));
    if (!mb_path_join(path, sizeof path, cwd, R->agent_path))
      return mb_fail(err, "--agent %s: path too long", R->agent_path);
    if (!set_agent_path(R, path, err)) return false;
  }
  mb_solver_options opt;
  solver_options(R, 1, &opt);
  for (int i = 0; i < R->n_solvers; i++) {
    const mb_solver *s = R->solvers[i];
    bool checked = false; /* both mallocMuZero solvers share one check: load the agent once */
    for (int k = 0; k < i; k++) checked = checked || R->solvers[k]->check == s->check;
    if (s->check && !checked && !s->check(&opt, err)) return mb_fail_prefix(err, "%s", s->name);
  }
  if (uses_agent && !mb_mallocmuzero_agent_digest(&opt, R->agent_digest, err)) return false;
  if (!R->agent_path[0] || file_sha256(R->agent_path, R->agent_sha)) return true;
  if (R->cfg->resume)
    return mb_fail(err, "%s: its run's agent '%s' (attribute run_agent): cannot read: %s",
                   R->cfg->resume, R->agent_path, strerror(errno));
  return mb_fail(err, "--agent %s: cannot read: %s", R->agent_path, strerror(errno));
}

static void compute_baseline(run *R, task *t) {
  const pair *p = &R->pairs[t->pair];
  const mb_workload *w = R->workloads[p->workload].w;
  mb_task_record *o = &t->out;
  mb_error err = {{0}};
  o->t_slow = mb_slow_time(w, &p->hw);
  o->t_heur = -1;
  o->t_bound = -1;
  double t0 = mb_wall_seconds();
  mb_solver_options opt;
  solver_options(R, 0, &opt);
  mb_rng rng;
  mb_rng_seed(&rng, 0);
  mb_solver_stats st = {0};
  o->a = mb_assignment_new(w->n_buffers);
  bool *in_fast = calloc(w->n_buffers ? (size_t)w->n_buffers : 1, sizeof *in_fast);
  if (!o->a || !in_fast) {
    copy_str(o->note, sizeof o->note, "heuristic: out of memory");
  } else if (!mb_solve_heuristic(w, &p->hw, &opt, &rng, o->a, &st, &err)) {
    snprintf(o->note, sizeof o->note, "heuristic failed: %.200s", err.message);
  } else if (!mb_validate(w, &p->hw, o->a, &err)) {
    snprintf(o->note, sizeof o->note, "heuristic assignment invalid: %.200s", err.message);
  } else {
    mb_assignment_fast_flags(o->a, in_fast);
    o->t_heur = mb_program_time(w, &p->hw, in_fast);
  }
  mb_solver_stats_free(&st);
  free(in_fast);
  o->heur_wall_s = mb_wall_seconds() - t0;
  t0 = mb_wall_seconds();
  mb_error berr = {{0}};
  if (!lp_bound(w, &p->hw, R->bound_budget, &o->t_bound, o->bound_status, &berr)) {
    o->t_bound = -1;
    copy_str(o->bound_status, sizeof o->bound_status, "error");
    if (!o->note[0]) snprintf(o->note, sizeof o->note, "bound: %.200s", berr.message);
  }
  o->bound_wall_s = mb_wall_seconds() - t0;
}

static void compute_job(run *R, task *t) {
  const pair *p = &R->pairs[t->pair];
  const mb_workload *w = R->workloads[p->workload].w;
  const mb_solver *s = R->solvers[t->solver];
  mb_task_record *o = &t->out;
  mb_error err = {{0}};
  mb_solver_options opt;
  solver_options(R, t->seed, &opt);
  mb_rng rng;
  mb_rng_seed(&rng, (uint64_t)t->seed);
  mb_solver_stats st = {.curve_heuristic = NAN};
  o->t_solver = -1;
  o->a = mb_assignment_new(w->n_buffers);
  bool *in_fast = calloc(w->n_buffers ? (size_t)w->n_buffers : 1, sizeof *in_fast);
  double t0 = mb_wall_seconds();
  bool solved = o->a && in_fast && s->solve(w, &p->hw, &opt, &rng, o->a, &st, &err);
  o->wall_s = mb_wall_seconds() - t0;
  o->iterations = st.iterations;
  o->budget_hit = st.budget_hit;
  if (!o->a || !in_fast) {
    copy_str(o->status, sizeof o->status, "error");
    copy_str(o->note, sizeof o->note, "out of memory");
    mb_assignment_free(o->a);
    o->a = NULL;
  } else if (!solved) {
    copy_str(o->status, sizeof o->status, "error");
    copy_str(o->note, sizeof o->note, err.message);
    mb_assignment_free(o->a);
    o->a = NULL;
  } else if (o->a->n_buffers != w->n_buffers || !mb_validate(w, &p->hw, o->a, &err)) {
    copy_str(o->status, sizeof o->status, "invalid");
    snprintf(o->note, sizeof o->note, "validator: %.200s",
             o->a->n_buffers != w->n_buffers ? "wrong number of buffers" : err.message);
  } else {
    copy_str(o->status, sizeof o->status, "ok");
    o->valid = 1;
    copy_str(o->note, sizeof o->note, st.note);
    mb_assignment_fast_flags(o->a, in_fast);
    o->t_solver = mb_program_time(w, &p->hw, in_fast);
    o->n_fast = mb_assignment_n_fast(o->a);
    int64_t max_addr = 0;
    mb_assignment_usage(w, o->a, &o->fast_bytes, &max_addr);
  }
  if (st.curve_len > 0 && st.curve_step && st.curve_return) {
    /* keep the training curve: take ownership from the stats */
    o->curve_len = st.curve_len;
    o->curve_step = st.curve_step;
    o->curve_return = st.curve_return;
    o->curve_heuristic = st.curve_heuristic;
    st.curve_step = st.curve_return = NULL;
    st.curve_len = 0;
  }
  mb_solver_stats_free(&st);
  free(in_fast);
}

static void *worker(void *arg) {
  run *R = arg;
  for (;;) {
    pthread_mutex_lock(&R->mu);
    while (R->next < R->n_tasks && R->tasks[R->next].state != ST_PENDING) R->next++;
    if (R->stop || R->next >= R->n_tasks) {
      pthread_mutex_unlock(&R->mu);
      /* GLPK (the LP bound) keeps a thread-local environment; its manual asks every thread
       * that used it to free it before terminating */
      glp_free_env();
      return NULL;
    }
    int64_t i = R->next++;
    task *t = &R->tasks[i];
    t->state = ST_RUNNING;
    R->current = i;
    pthread_mutex_unlock(&R->mu);
    double t0 = mb_wall_seconds();
    if (t->kind == MB_TASK_BASELINE)
      compute_baseline(R, t);
    else
      compute_job(R, t);
    double dt = mb_wall_seconds() - t0;
    pthread_mutex_lock(&R->mu);
    t->compute_s = dt;
    t->state = ST_DONE;
    R->done_q[R->done_tail++ % R->n_tasks] = i;
    pthread_cond_signal(&R->cv);
    pthread_mutex_unlock(&R->mu);
  }
}

/* ---- the journal (suite/run_journal.h): one checksummed line per finished task ---- */

/* The plan options as the journal's header line holds them (borrowed from R). */
static mb_journal_header journal_header_of(const run *R) {
  mb_journal_header h = {
      .seeds = R->seeds,
      .budget = R->budget,
      .simulations = R->simulations,
      .c_scale = R->c_scale,
      .finetune = R->finetune,
      .finetune_steps = R->finetune_steps,
      .leaf_rollout = R->leaf_rollout,
      .search = R->search,
      /* only when not the profile's: a default run's header is unchanged */
      .bound_budget = R->bound_budget == profile_bound_budget(R->profile) ? 0 : R->bound_budget,
      .profile = R->profile,
      .workloads = R->workloads_regex,
      .solvers = R->solvers_list,
      .hardware = R->hardware_list,
      .agent = R->agent_path,
      .catalogue = R->catalogue_path,
      .data = R->data_dir};
  copy_str(h.plan, sizeof h.plan, R->plan_sha);
  return h;
}

/* Takes the plan options of a journal's header (a run whose HDF5 file does not open); a
 * catalogue or data directory given on the command line stays. */
static bool take_header_options(run *R, const mb_journal_header *h, mb_error *err) {
  R->seeds = h->seeds;
  R->budget = h->budget;
  /* out-of-range values are refused by make_plan's check */
  R->simulations = h->simulations;
  R->c_scale = h->c_scale;
  R->finetune = h->finetune;
  R->finetune_steps = h->finetune_steps;
  R->leaf_rollout = h->leaf_rollout;
  R->search = h->search;
  R->bound_budget = h->bound_budget; /* 0 (absent): the profile's, set by make_plan */
  copy_str(R->profile, sizeof R->profile, h->profile);
  copy_str(R->solvers_list, sizeof R->solvers_list, h->solvers);
  struct {
    char **dst;
    const char *value;
  } texts[] = {{&R->workloads_regex, h->workloads},
               {&R->hardware_list, h->hardware},
               {&R->agent_path, h->agent},
               {R->cfg->catalogue ? NULL : &R->catalogue_path, h->catalogue},
               {R->cfg->data_dir ? NULL : &R->data_dir, h->data}};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    if (!texts[i].dst) continue;
    free(*texts[i].dst);
    *texts[i].dst = strdup(texts[i].value);
    if (!*texts[i].dst) return mb_fail(err, "out of memory");
  }
  return true;
}

static bool journal_write(run *R, int64_t i, mb_error *err) {
  const task *t = &R->tasks[i];
  char *line = NULL;
  size_t len = 0;
  if (!mb_journal_encode_record(i, t->kind, &t->out, &line, &len, err))
    return mb_fail_prefix(err, "%s", R->journal_path);
  bool ok = mb_write_all(R->journal_fd, line, len);
  int e = errno;
  free(line);
  if (!ok)
    return mb_fail(err, "%s: cannot append task %" PRId64 ": %s", R->journal_path, i, strerror(e));
  /* not needed against kill -9 (the page cache survives the process) but against a crash of
   * the machine: then the journal still holds every finished task */
  if (fdatasync(R->journal_fd) != 0)
    return mb_fail(err, "%s: fdatasync: %s", R->journal_path, strerror(errno));
  return true;
}

static bool journal_create(run *R, mb_error *err) {
  R->journal_fd = open(R->journal_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0666);
  if (R->journal_fd < 0)
    return mb_fail(err, "%s: cannot create the journal: %s", R->journal_path, strerror(errno));
  mb_journal_header h = journal_header_of(R);
  char *head = NULL;
  size_t len = 0;
  if (!mb_journal_encode_header(&h, &head, &len, err))
    return mb_fail_prefix(err, "%s", R->journal_path);
  bool ok = mb_write_all(R->journal_fd, head, len) && fsync(R->journal_fd) == 0;
  free(head);
  if (!ok)
    return mb_fail(err, "%s: cannot write the journal: %s", R->journal_path, strerror(errno));
  return true;
}

/* Whether a journal record belongs to this plan: a task it has, of the same kind, with as many
 * buffers as its workload. One that does not is dropped like a damaged line. */
static bool record_fits_plan(const run *R, const mb_journal_entry *e, mb_journal_reader *rd) {
  if (e->task >= R->n_tasks) {
    mb_journal_reject(rd, "field 'task' %" PRId64 ": the plan has %" PRId64 " tasks", e->task,
                      R->n_tasks);
    return false;
  }
  const task *t = &R->tasks[e->task];
  if (e->kind != t->kind) {
    mb_journal_reject(rd, "field 'kind': task %" PRId64 " is a %s in the plan", e->task,
                      t->kind == MB_TASK_BASELINE ? "baseline" : "job");
    return false;
  }
  int32_t nb = R->workloads[R->pairs[t->pair].workload].w->n_buffers;
  if (e->r.a && e->r.a->n_buffers != nb) {
    mb_journal_reject(rd, "field 'n_buffers' %d: task %" PRId64 "'s workload has %d buffers",
                      (int)e->r.a->n_buffers, e->task, (int)nb);
    return false;
  }
  return true;
}

/* Replaces the journal by `text` (what its reader kept): a temporary file renamed over it, so
 * that a kill now leaves the old or the new one; and its directory fsynced, as the appends that
 * follow are, so that a crash of the machine does too. */
static bool journal_rewrite(run *R, const char *text, size_t len, mb_error *err) {
  if (mb_atomic_file_write(R->journal_path, text, len, &(mb_atomic_options){.sync_dir = true}, err))
    return true;
  return mb_fail_prefix(err, "cannot rewrite the journal");
}

/* Reads the journal of a resumed run: tasks found become ST_DONE. A torn last line (a kill
 * during its write) is dropped; a damaged complete line (checksum or fields wrong: the file was
 * edited or corrupted), or one of a task this plan does not have, is skipped with a note naming
 * it, and the lines after it are still read, since each carries its own checksum. The journal is
 * then rewritten without what was dropped, so that appends follow the last good line. */
static bool journal_resume(run *R, int64_t *n_found, mb_error *err) {
  *n_found = 0;
  mb_journal_reader rd;
  if (!mb_journal_open(&rd, R->journal_path, R->log, err)) {
    if (errno != ENOENT) return false;
    return journal_create(R, err); /* completed runs delete theirs; start a fresh one */
  }
  mb_journal_header head;
  mb_error head_err = {{0}};
  if (!mb_journal_read_header(&rd, &head, &head_err)) {
    mb_journal_close(&rd);
    return journal_create(R, err); /* header torn: nothing after it can be trusted anyway */
  }
  bool same_plan = !strcmp(head.plan, R->plan_sha);
  if (!same_plan)
    mb_fail(err,
            "%s: the journal belongs to another plan (hash %.12s, expected %.12s): move it "
            "away to resume from the rows the file holds",
            R->journal_path, head.plan, R->plan_sha);
  mb_journal_header_free(&head);
  if (!same_plan) {
    mb_journal_close(&rd);
    return false;
  }
  mb_journal_entry e;
  mb_journal_step step;
  while ((step = mb_journal_next(&rd, &e, err)) == MB_JOURNAL_RECORD) {
    if (!record_fits_plan(R, &e, &rd)) {
      mb_task_record_clear(&e.r);
      continue;
    }
    task *t = &R->tasks[e.task];
    mb_task_record_clear(&t->out);
    t->out = e.r;
    if (t->state != ST_DONE) (*n_found)++;
    t->state = ST_DONE;
    t->journaled = true;
  }
  size_t kept = 0;
  const char *text = mb_journal_kept(&rd, &kept);
  bool ok = step == MB_JOURNAL_END &&
            (mb_journal_finish(&rd) == 0 || journal_rewrite(R, text, kept, err));
  mb_journal_close(&rd);
  if (!ok) return false;
  R->journal_fd = open(R->journal_path, O_WRONLY | O_APPEND);
  if (R->journal_fd < 0 || ftruncate(R->journal_fd, (off_t)kept) != 0)
    return mb_fail(err, "%s: cannot reopen the journal: %s", R->journal_path, strerror(errno));
  return true;
}

/* ---- committing to HDF5 (main thread) ---- */

static void fill_row(run *R, int64_t i, mb_result_row *row) {
  const task *t = &R->tasks[i];
  const mb_task_record *o = &t->out;
  const pair *p = &R->pairs[t->pair];
  memset(row, 0, sizeof *row);
  row->task = i;
  copy_str(row->workload, sizeof row->workload, R->workloads[p->workload].key);
  copy_str(row->hardware, sizeof row->hardware, p->hw_name);
  copy_str(row->solver, sizeof row->solver, R->solvers[t->solver]->name);
  row->seed = t->seed;
  copy_str(row->status, sizeof row->status, o->status);
  row->valid = o->valid;
  row->capacity = p->hw.capacity;
  row->n_buffers = R->workloads[p->workload].w->n_buffers;
  row->n_fast = o->n_fast;
  row->fast_bytes = o->fast_bytes;
  row->t_slow_ps = p->t_slow;
  row->t_heuristic_ps = p->t_heur;
  row->t_solver_ps = o->t_solver;
  row->t_bound_ps = p->t_bound;
  row->wall_s = o->wall_s;
  row->iterations = o->iterations;
  row->budget_hit = o->budget_hit;
  copy_str(row->note, sizeof row->note, o->note);
  mb_result_row_derive(row);
}

static void fill_baseline(run *R, int64_t i, mb_baseline_row *row) {
  const task *t = &R->tasks[i];
  const mb_task_record *o = &t->out;
  const pair *p = &R->pairs[t->pair];
  memset(row, 0, sizeof *row);
  row->task = i;
  copy_str(row->workload, sizeof row->workload, R->workloads[p->workload].key);
  copy_str(row->hardware, sizeof row->hardware, p->hw_name);
  copy_str(row->profile_sha256, sizeof row->profile_sha256, p->profile_sha);
  row->capacity = p->hw.capacity;
  row->alignment = p->hw.alignment;
  row->slow_bandwidth = p->hw.slow_bandwidth;
  row->fast_bandwidth = p->hw.fast_bandwidth;
  row->peak_flops = p->hw.peak_flops;
  row->op_overhead_s = p->hw.op_overhead_s;
  row->t_slow_ps = o->t_slow;
  row->t_heuristic_ps = o->t_heur;
  row->t_bound_ps = o->t_bound;
  copy_str(row->bound_status, sizeof row->bound_status, o->bound_status);
  copy_str(row->bound_note, sizeof row->bound_note, o->note);
  row->heuristic_wall_s = o->heur_wall_s;
  row->bound_wall_s = o->bound_wall_s;
}

static bool commit(run *R, int64_t i, mb_error *err) {
  task *t = &R->tasks[i];
  pair *p = &R->pairs[t->pair];
  double t0 = mb_wall_seconds();
  bool ok;
  if (t->kind == MB_TASK_BASELINE) {
    mb_baseline_row row;
    fill_baseline(R, i, &row);
    ok = mb_results_append_baseline(R->res, &row, t->out.t_heur >= 0 ? t->out.a : NULL, err);
    p->t_slow = t->out.t_slow;
    p->t_heur = t->out.t_heur;
    p->t_bound = t->out.t_bound;
    if (ok) R->n_baseline_rows++;
  } else {
    mb_result_row row;
    fill_row(R, i, &row);
    ok = mb_results_append(R->res, &row, t->out.a, t->out.curve_step, t->out.curve_return,
                           t->out.curve_len, t->out.curve_heuristic, err);
    if (ok) R->n_results_rows++;
    if (!strcmp(row.status, "invalid")) R->stats->n_invalid++;
    if (!strcmp(row.status, "error")) R->stats->n_error++;
  }
  ok = ok && mb_results_flush(R->res, err);
  R->stats->store_s += mb_wall_seconds() - t0;
  if (!ok) return false;
  R->stats->commits++;
  t->state = ST_COMMITTED;
  mb_task_record_clear(&t->out);
  return true;
}

/* ---- progress ---- */

static void fmt_dur(char *out, size_t n, double s) {
  if (!(s >= 0) || s > 359999) {
    snprintf(out, n, "--:--");
    return;
  }
  int64_t x = (int64_t)(s + 0.5);
  if (x >= 3600)
    snprintf(out, n, "%" PRId64 ":%02" PRId64 ":%02" PRId64, x / 3600, x / 60 % 60, x % 60);
  else
    snprintf(out, n, "%02" PRId64 ":%02" PRId64, x / 60, x % 60);
}

/* The progress line counts finished tasks (reused, or computed and journaled here), not the
 * committed ones: rows are committed in plan order, so one long early task held the count
 * still while the workers finished everything after it. */
static void progress(run *R, int64_t current, double start, bool tty, bool final) {
  int64_t total = R->n_tasks, done = R->stats->tasks_reused + R->n_done_here;
  if (done < R->committed) done = R->committed;
  if (done > total) done = total;
  double el = mb_wall_seconds() - start;
  int64_t here = R->n_done_here, left = total - done;
  double eta = here > 0 ? el / (double)here * (double)left : -1;
  char e1[32], e2[32], cur[MB_RES_WORKLOAD + MB_RES_HARDWARE + 64] = "";
  fmt_dur(e1, sizeof e1, el);
  fmt_dur(e2, sizeof e2, eta);
  if (!final && current >= 0) {
    const task *t = &R->tasks[current];
    const pair *p = &R->pairs[t->pair];
    /* names from the catalogue and hardware files, escaped (error.h) and cut as before */
    char key[61], hw[31];
    mb_escape_text(key, sizeof key, R->workloads[p->workload].key);
    mb_escape_text(hw, sizeof hw, p->hw_name);
    if (t->kind == MB_TASK_BASELINE)
      snprintf(cur, sizeof cur, "baseline %s@%s", key, hw);
    else
      snprintf(cur, sizeof cur, "%s %s@%s seed %" PRId64, R->solvers[t->solver]->name, key, hw,
               t->seed);
  }
  fprintf(R->log, "%s[%" PRId64 "/%" PRId64 "] %3d%%  elapsed %s  ETA %s  %s%s", tty ? "\r" : "",
          done, total, total ? (int)(100 * done / total) : 100, e1, final ? "00:00" : e2, cur,
          tty ? "\033[K" : "\n");
  if (tty && final) fputc('\n', R->log);
  fflush(R->log);
}

/* ---- file setup ---- */

/* Appends item to the ';'-separated list in the file's string attribute key (created when
 * absent). */
static bool append_attr_item(mb_results *r, const char *key, const char *item, mb_error *err) {
  char *old = mb_results_has_attr(r, key) ? mb_results_get_attr_string(r, key, NULL) : NULL;
  char *line = NULL;
  bool ok =
      (!old || (append_text(&line, old) && append_text(&line, ";"))) && append_text(&line, item);
  free(old);
  if (!ok) {
    free(line);
    return mb_fail(err, "out of memory");
  }
  ok = mb_results_set_attr_string(r, key, line, err);
  free(line);
  return ok;
}

static bool write_provenance(run *R, bool fresh, mb_error *err) {
  mb_results *r = R->res;
  char host[256] = "unknown", stamp[64], hw_hashes[4096] = "", seeds[1024] = "", blas[256];
  gethostname(host, sizeof host - 1);
  mb_blas_describe(blas, sizeof blas); /* the kernel the agents' networks ran on */
  utc_stamp(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ");
  for (int32_t p = 0; p < R->n_pairs; p++) {
    char item[256];
    snprintf(item, sizeof item, "%s=%s", R->pairs[p].hw_name, R->pairs[p].profile_sha);
    if (strstr(hw_hashes, item)) continue;
    if (hw_hashes[0]) strncat(hw_hashes, ";", sizeof hw_hashes - strlen(hw_hashes) - 1);
    strncat(hw_hashes, item, sizeof hw_hashes - strlen(hw_hashes) - 1);
  }
  for (int64_t s = 0; s < R->seeds && strlen(seeds) < sizeof seeds - 24; s++)
    snprintf(seeds + strlen(seeds), sizeof seeds - strlen(seeds), "%s%" PRId64, s ? "," : "", s);
  const char *cmd = R->cfg->command_line ? R->cfg->command_line : "";
  if (!fresh) {
    /* a resume keeps the original provenance and records itself, with the build that resumed:
     * the rows stored from here on come from it */
    char build[128];
    snprintf(build, sizeof build, "%s%s", mb_git_commit(), mb_git_dirty() ? "+dirty" : "");
    char *started = mb_results_has_attr(r, "git_commit")
                        ? mb_results_get_attr_string(r, "git_commit", NULL)
                        : NULL;
    if (started && strcmp(started, mb_git_commit()) != 0)
      fprintf(R->log,
              "mallocbench run: note: %s was started by the build of commit %s; this build is "
              "%s, and the rows stored from here on come from it (resume_git_commit records "
              "it; 'mallocbench verify' rechecks every row)\n",
              R->out_path, started, build);
    free(started);
    return append_attr_item(r, "resumed_at", stamp, err) &&
           append_attr_item(r, "resume_git_commit", build, err) &&
           (!R->agent_sha[0] || append_attr_item(r, "resume_agent_sha256", R->agent_sha, err)) &&
           mb_results_set_attr_string(r, "resume_command_line", cmd, err) &&
           mb_results_set_attr_int(r, "complete", 0, err);
  }
  return mb_results_set_attr_string(r, "mallocbench_version", mb_version(), err) &&
         mb_results_set_attr_string(r, "git_commit", mb_git_commit(), err) &&
         mb_results_set_attr_int(r, "git_dirty", mb_git_dirty(), err) &&
         mb_results_set_attr_string(r, "compiler", mb_compiler(), err) &&
         mb_results_set_attr_string(r, "build_type", mb_build_type(), err) &&
         mb_results_set_attr_string(r, "blas", blas, err) &&
         mb_results_set_attr_string(r, "command_line", cmd, err) &&
         mb_results_set_attr_string(r, "host", host, err) &&
         mb_results_set_attr_string(r, "start_time", stamp, err) &&
         mb_results_set_attr_string(r, "end_time", "", err) &&
         mb_results_set_attr_int(r, "complete", 0, err) &&
         mb_results_set_attr_string(r, "catalogue_path", R->catalogue_path, err) &&
         mb_results_set_attr_string(r, "catalogue_sha256", R->catalogue_sha, err) &&
         mb_results_set_attr_string(r, "hardware_sha256", hw_hashes, err) &&
         mb_results_set_attr_string(r, "data_dir", R->data_dir, err) &&
         mb_results_set_attr_string(r, "seeds", seeds, err) &&
         mb_results_set_attr_string(r, "skipped", R->skipped ? R->skipped : "", err) &&
         mb_results_set_attr_string(r, "plan_sha256", R->plan_sha, err) &&
         mb_results_set_attr_int(r, "planned_tasks", R->n_tasks, err) &&
         mb_results_set_attr_int(r, "planned_jobs", R->n_jobs, err) &&
         mb_results_set_attr_string(r, "run_profile", R->profile, err) &&
         mb_results_set_attr_string(r, "run_workloads", R->workloads_regex, err) &&
         mb_results_set_attr_string(r, "run_solvers", R->solvers_list, err) &&
         mb_results_set_attr_int(r, "run_seeds", R->seeds, err) &&
         mb_results_set_attr_string(r, "run_hardware", R->hardware_list, err) &&
         mb_results_set_attr_string(r, "run_agent", R->agent_path, err) &&
         mb_results_set_attr_string(r, "agent_sha256", R->agent_sha, err) &&
         mb_results_set_attr_string(r, "agent_networks_sha256", R->agent_digest, err) &&
         mb_results_set_attr_double(r, "run_budget_s", R->budget, err) &&
         mb_results_set_attr_double(r, "run_bound_budget_s", R->bound_budget, err) &&
         mb_results_set_attr_int(r, "run_simulations", R->simulations, err) &&
         mb_results_set_attr_double(r, "run_c_scale", R->c_scale, err) &&
         mb_results_set_attr_double(r, "run_finetune_s", R->finetune, err) &&
         mb_results_set_attr_int(r, "run_finetune_steps", R->finetune_steps, err) &&
         mb_results_set_attr_int(r, "run_leaf_rollout", R->leaf_rollout, err) &&
         mb_results_set_attr_string(r, "run_search", mb_solver_search_name(R->search), err) &&
         mb_results_set_attr_string(r, "time_unit", "ps (simulated by the mallocbench cost model)",
                                    err);
}

/* Stores each workload's copy (once) and its catalogue split. The split is not part of the
 * plan (it decides no number), so a resume records the catalogue's current split, also on
 * copies stored before splits were recorded; a change is noted in the log. */
static bool store_workloads(run *R, mb_error *err) {
  for (int32_t i = 0; i < R->n_workloads; i++) {
    const loaded_workload *lw = &R->workloads[i];
    if (mb_results_has_workload(R->res, lw->key)) {
      char old[MB_RES_SPLIT];
      if (!mb_results_get_workload_split(R->res, lw->key, old, err)) return false;
      if (!strcmp(old, lw->split)) continue;
      if (old[0])
        mb_diag(R->log,
                "mallocbench run: note: workload '%s' is now in the %s split (was %s when %s "
                "was started)",
                lw->key, lw->split, old, R->out_path);
    } else if (!mb_results_put_workload(R->res, lw->key, lw->w, lw->sha, err)) {
      return false;
    }
    if (!mb_results_set_workload_split(R->res, lw->key, lw->split, err)) return false;
  }
  return mb_results_flush(R->res, err);
}

/* --out's directory, made when missing (as plot and report make theirs). */
static bool make_parent_dir(const char *path, mb_error *err) {
  char dir[4096];
  copy_str(dir, sizeof dir, path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return true;
  *slash = '\0';
  if (mb_mkdir_p(dir) != 0)
    return mb_fail(err, "--out %s: cannot create %s: %s", path, dir, strerror(errno));
  return true;
}

/* Default output: results/<profile>-<stamp>.h5 under the source tree, plus latest.h5. The name
 * is final only once the file is created (create_default_output). */
static bool default_out(run *R, mb_error *err) {
  char dir[4096], stamp[32];
  if (!mb_path_join(dir, sizeof dir, mb_source_dir(), "results"))
    return mb_fail(err, "results directory path too long");
  if (mb_mkdir_p(dir) != 0) return mb_fail(err, "%s: cannot create: %s", dir, strerror(errno));
  utc_stamp(stamp, sizeof stamp, "%Y%m%d-%H%M%S");
  if (snprintf(R->out_stem, sizeof R->out_stem, "%s/%s-%s", dir, R->profile, stamp) >=
          (int)sizeof R->out_stem ||
      snprintf(R->out_path, sizeof R->out_path, "%s.h5", R->out_stem) >= (int)sizeof R->out_path)
    return mb_fail(err, "results path too long");
  return true;
}

/* Creates the default output under the first free name: <stem>.h5, <stem>-2.h5, ... Runs started
 * in the same second would otherwise want the same file; creation is exclusive, so a name another
 * run took in the meantime is skipped, not shared. */
static mb_results *create_default_output(run *R, mb_error *err) {
  enum { MAX_SUFFIX = 100 };
  for (int k = 1; k <= MAX_SUFFIX; k++) {
    if (k > 1) snprintf(R->out_path, sizeof R->out_path, "%s-%d.h5", R->out_stem, k);
    if (access(R->out_path, F_OK) == 0) continue;
    mb_results *res = mb_results_create(R->out_path, false, err);
    if (res) {
      snprintf(R->journal_path, sizeof R->journal_path, "%s.journal", R->out_path);
      return res;
    }
    if (access(R->out_path, F_OK) != 0) return NULL; /* a real failure, not a lost race */
    mb_error_clear(err);
  }
  mb_fail(err, "%s.h5: this name and its suffixes -2 to -%d are all taken", R->out_stem,
          MAX_SUFFIX);
  return NULL;
}

static void link_latest(run *R) {
  char dir[4096], link[4200], tmp[4300];
  if (!mb_path_join(dir, sizeof dir, mb_source_dir(), "results")) return;
  snprintf(link, sizeof link, "%s/latest.h5", dir);
  snprintf(tmp, sizeof tmp, "%s/.latest.h5.%d", dir, (int)getpid());
  const char *base = strrchr(R->out_path, '/');
  base = base ? base + 1 : R->out_path;
  unlink(tmp);
  /* symlink + rename: latest.h5 always points at a complete name, never at nothing */
  if (symlink(base, tmp) != 0 || rename(tmp, link) != 0) {
    fprintf(R->log, "mallocbench run: note: cannot update %s: %s\n", link, strerror(errno));
    unlink(tmp);
  }
}

/* Reads the plan options of a file to resume. The HDF5 file is preferred; when it does not
 * open, the caller rebuilds it (the options must then come from the user's flags). */
static bool read_options(run *R, mb_results *r, mb_error *err) {
  char *prof = mb_results_get_attr_string(r, "run_profile", err);
  char *wl = prof ? mb_results_get_attr_string(r, "run_workloads", err) : NULL;
  char *sv = wl ? mb_results_get_attr_string(r, "run_solvers", err) : NULL;
  char *hw = sv ? mb_results_get_attr_string(r, "run_hardware", err) : NULL;
  char *cat = hw ? mb_results_get_attr_string(r, "catalogue_path", err) : NULL;
  char *data = cat ? mb_results_get_attr_string(r, "data_dir", err) : NULL;
  int64_t seeds = 0;
  bool ok = data && mb_results_get_attr_int(r, "run_seeds", &seeds, err);
  double budget = 0;
  ok = ok && mb_results_get_attr_double(r, "run_budget_s", &budget, err);
  /* files made before --bound-budget lack it: the profile's (0 here, resolved by make_plan) */
  double bound_budget = 0;
  if (ok && mb_results_has_attr(r, "run_bound_budget_s")) {
    ok = mb_results_get_attr_double(r, "run_bound_budget_s", &bound_budget, err) &&
         (bound_budget > 0 ||
          mb_fail(err, "%s: attribute run_bound_budget_s %g: expected seconds > 0", R->cfg->resume,
                  bound_budget));
  }
  /* files made before mallocMuZero's evaluation options lack them: the defaults (0) */
  int64_t sims = 0, finetune_steps = 0, leaf_rollout = 0;
  double c_scale = 0, finetune = 0;
  ok = ok && (!mb_results_has_attr(r, "run_simulations") ||
              mb_results_get_attr_int(r, "run_simulations", &sims, err));
  ok = ok && (!mb_results_has_attr(r, "run_c_scale") ||
              mb_results_get_attr_double(r, "run_c_scale", &c_scale, err));
  ok = ok && (!mb_results_has_attr(r, "run_finetune_s") ||
              mb_results_get_attr_double(r, "run_finetune_s", &finetune, err));
  ok = ok && (!mb_results_has_attr(r, "run_finetune_steps") ||
              mb_results_get_attr_int(r, "run_finetune_steps", &finetune_steps, err));
  ok = ok && (!mb_results_has_attr(r, "run_leaf_rollout") ||
              mb_results_get_attr_int(r, "run_leaf_rollout", &leaf_rollout, err));
  /* and before the search kind: Gumbel */
  int search_kind = MB_SOLVER_SEARCH_GUMBEL;
  char *search = NULL;
  if (ok && mb_results_has_attr(r, "run_search")) {
    search = mb_results_get_attr_string(r, "run_search", err);
    ok = search && (mb_solver_search_parse(search, &search_kind) ||
                    mb_fail(err, "%s: attribute run_search '%s': expected gumbel or puct",
                            R->cfg->resume, search));
  }
  char *agent = ok ? mb_results_get_attr_string(r, "run_agent", err) : NULL;
  ok = ok && agent;
  if (ok) {
    copy_str(R->profile, sizeof R->profile, prof);
    free(R->workloads_regex);
    R->workloads_regex = wl;
    wl = NULL;
    copy_str(R->solvers_list, sizeof R->solvers_list, sv);
    free(R->hardware_list);
    R->hardware_list = hw;
    hw = NULL;
    R->seeds = seeds;
    R->budget = budget;
    R->bound_budget = bound_budget;
    /* out-of-range values are refused by make_plan's check */
    R->simulations = sims >= 0 && sims <= INT32_MAX ? (int)sims : -1;
    R->c_scale = c_scale;
    R->finetune = finetune;
    R->finetune_steps = finetune_steps;
    R->leaf_rollout =
        leaf_rollout >= INT32_MIN && leaf_rollout <= INT32_MAX ? (int)leaf_rollout : -2;
    R->search = search_kind;
    free(R->agent_path);
    R->agent_path = agent;
    agent = NULL;
    if (!R->cfg->catalogue) {
      free(R->catalogue_path);
      R->catalogue_path = cat;
      cat = NULL;
    }
    if (!R->cfg->data_dir) {
      free(R->data_dir);
      R->data_dir = data;
      data = NULL;
    }
  }
  free(search);
  free(prof);
  free(wl);
  free(sv);
  free(hw);
  free(cat);
  free(data);
  free(agent);
  return ok;
}

/* Checks the committed rows of a resumed file against the plan; keeps the consistent prefix,
 * truncates the rest, and marks those tasks committed. */
static bool adopt_committed(run *R, mb_error *err) {
  mb_result_row *rows = NULL;
  mb_baseline_row *base = NULL;
  int64_t nr = 0, nb = 0;
  if (!mb_results_read_rows(R->res, &rows, &nr, err) ||
      !mb_results_read_baselines(R->res, &base, &nb, err)) {
    free(rows);
    return false;
  }
  int64_t ir = 0, ib = 0, i = 0;
  for (; i < R->n_tasks; i++) {
    task *t = &R->tasks[i];
    pair *p = &R->pairs[t->pair];
    const char *wkey = R->workloads[p->workload].key;
    if (t->kind == MB_TASK_BASELINE) {
      if (ib >= nb || base[ib].task != i || strcmp(base[ib].workload, wkey) ||
          strcmp(base[ib].hardware, p->hw_name))
        break;
      p->t_slow = base[ib].t_slow_ps;
      p->t_heur = base[ib].t_heuristic_ps;
      p->t_bound = base[ib].t_bound_ps;
      ib++;
    } else {
      if (ir >= nr || rows[ir].task != i || strcmp(rows[ir].workload, wkey) ||
          strcmp(rows[ir].solver, R->solvers[t->solver]->name) || rows[ir].seed != t->seed)
        break;
      ir++;
    }
    mb_task_record_clear(&t->out);
    t->state = ST_COMMITTED;
  }
  free(rows);
  free(base);
  R->committed = i;
  R->n_results_rows = ir;
  R->n_baseline_rows = ib;
  /* the readers skipped a torn tail (a kill during its write), but it is still in the tables:
   * shrink them too, or the next rows would land after it */
  int64_t dropped = (nr - ir) + (nb - ib) + mb_results_torn_rows(R->res);
  if (dropped > 0 && (!mb_results_truncate(R->res, ir, ib, err) || !mb_results_flush(R->res, err)))
    return false;
  if (dropped > 0)
    fprintf(R->log, "mallocbench run: dropped %" PRId64 " torn row(s) at the end of %s\n", dropped,
            R->out_path);
  return true;
}

/* The plan options of a run whose HDF5 file does not open: from the header of its journal,
 * `path`. */
static bool options_from_journal(run *R, const char *path, mb_error *err) {
  mb_journal_reader rd;
  if (!mb_journal_open(&rd, path, NULL, err))
    return mb_fail(err,
                   "--resume %s: the file does not open and its journal %s cannot be read "
                   "(%s): nothing to rebuild from; start a new run",
                   R->cfg->resume, path, strerror(errno));
  mb_journal_header h;
  bool ok = mb_journal_read_header(&rd, &h, err) && take_header_options(R, &h, err);
  mb_journal_header_free(&h);
  mb_journal_close(&rd);
  return ok;
}

/* The output of a resumed run. With a journal (every run that did not complete has one), the
 * file is rebuilt from it: the journal holds every finished task, while a file killed in the
 * middle of an HDF5 write may hold a torn structure. The new file is written beside the old
 * one and renamed over it once it holds the journal's tasks, so there is always a complete
 * copy of everything finished. Without a journal (it is deleted when a run completes, or the
 * run was killed before creating it), the file's own rows are adopted. */
static bool resume_output(run *R, mb_results **oldp, mb_error *err) {
  mb_results *old = *oldp;
  if (access(R->journal_path, F_OK) != 0) {
    if (!old) return mb_fail(err, "%s: does not open and has no journal", R->out_path);
    int64_t complete = 0;
    if (mb_results_get_attr_int(old, "complete", &complete, NULL) && complete) {
      fprintf(R->log, "mallocbench run: %s is complete: nothing to resume\n", R->out_path);
      R->stats->was_complete = true;
      R->stats->tasks_reused = R->n_tasks;
      return true;
    }
    mb_results_close(old, NULL);
    *oldp = NULL;
    R->res = mb_results_open(R->out_path, true, err);
    int64_t found = 0;
    bool ok = R->res && write_provenance(R, false, err) && store_workloads(R, err) &&
              adopt_committed(R, err) && journal_resume(R, &found, err);
    R->stats->tasks_reused = R->committed;
    if (ok)
      fprintf(R->log,
              "mallocbench run: resuming %s (no journal): %" PRId64 " of %" PRId64
              " tasks already done\n",
              R->out_path, R->committed, R->n_tasks);
    return ok;
  }
  char tmp[4300], stamp[64];
  snprintf(tmp, sizeof tmp, "%s.rebuild", R->out_path);
  R->res = mb_results_create(tmp, true, err);
  if (!R->res) return false;
  utc_stamp(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ");
  bool ok = old ? mb_results_copy_attrs(R->res, old, err)
                : write_provenance(R, true, err) &&
                      mb_results_set_attr_string(R->res, "rebuilt_from_journal", stamp, err);
  int64_t found = 0;
  ok = ok && write_provenance(R, false, err) && store_workloads(R, err) &&
       journal_resume(R, &found, err);
  R->stats->tasks_reused = found;
  while (ok && R->committed < R->n_tasks && R->tasks[R->committed].state == ST_DONE) {
    ok = commit(R, R->committed, err);
    if (ok) R->committed++;
  }
  ok = ok && mb_results_flush(R->res, err);
  if (ok && !old) {
    /* keep what no longer opens, for inspection */
    char aside[4300];
    utc_stamp(stamp, sizeof stamp, "%Y%m%d-%H%M%S");
    snprintf(aside, sizeof aside, "%s.damaged-%s", R->out_path, stamp);
    if (rename(R->out_path, aside) == 0)
      fprintf(R->log, "mallocbench run: the damaged file is kept as %s\n", aside);
  }
  ok = ok && mb_results_rename(R->res, R->out_path, err);
  if (!ok) {
    /* the old file and the journal are untouched: drop the half-built copy */
    mb_results_close(R->res, NULL);
    R->res = NULL;
    unlink(tmp);
    return false;
  }
  if (ok)
    fprintf(R->log, "mallocbench run: resuming %s: %" PRId64 " of %" PRId64 " tasks already done\n",
            R->out_path, found, R->n_tasks);
  return ok;
}

/* ---- the run ---- */

static bool execute(run *R, mb_error *err) {
  const mb_run_config *cfg = R->cfg;
  bool tty = cfg->progress && isatty(fileno(R->log));
  double start = mb_wall_seconds(), last = -1e9;
  int jobs = cfg->jobs > 0 ? cfg->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (jobs < 1) jobs = 1;
  int64_t pending = 0;
  for (int64_t i = 0; i < R->n_tasks; i++) pending += R->tasks[i].state == ST_PENDING;
  if (jobs > pending) jobs = pending > 0 ? (int)pending : 0;
  pthread_t th[256];
  if (jobs > 256) jobs = 256;
  R->next = 0;
  R->current = -1;
  int started = 0;
  for (; started < jobs; started++)
    if (pthread_create(&th[started], NULL, worker, R) != 0) break;
  if (jobs > 0 && started == 0) return mb_fail(err, "cannot start worker threads");
  bool ok = true;
  int64_t commits_here = 0;
  pthread_mutex_lock(&R->mu);
  while (ok && R->committed < R->n_tasks) {
    /* journal whatever finished (completion order), then commit in plan order */
    while (R->done_head < R->done_tail) {
      int64_t i = R->done_q[R->done_head++ % R->n_tasks];
      pthread_mutex_unlock(&R->mu);
      double t0 = mb_wall_seconds();
      ok = journal_write(R, i, err);
      R->stats->journal_s += mb_wall_seconds() - t0;
      R->stats->solve_s += R->tasks[i].compute_s;
      R->stats->tasks_run++;
      R->n_done_here++;
      pthread_mutex_lock(&R->mu);
      R->tasks[i].journaled = true;
      if (!ok) break;
    }
    while (ok && R->committed < R->n_tasks && R->tasks[R->committed].state == ST_DONE &&
           R->tasks[R->committed].journaled) {
      int64_t i = R->committed;
      pthread_mutex_unlock(&R->mu);
      ok = commit(R, i, err);
      pthread_mutex_lock(&R->mu);
      if (ok) {
        R->committed++;
        commits_here++;
        if (cfg->stop_after > 0 && commits_here >= cfg->stop_after) {
          R->stats->stopped = true;
          break;
        }
      }
    }
    if (!ok || R->stats->stopped || R->committed >= R->n_tasks) break;
    if (cfg->progress &&
        mb_wall_seconds() - last >= (tty ? PROGRESS_PERIOD_TTY : PROGRESS_PERIOD_LOG)) {
      int64_t cur = R->current;
      pthread_mutex_unlock(&R->mu);
      progress(R, cur, start, tty, false);
      last = mb_wall_seconds();
      pthread_mutex_lock(&R->mu);
    }
    if (R->done_head == R->done_tail) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 250 * 1000 * 1000;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&R->cv, &R->mu, &ts);
    }
  }
  R->stop = true;
  pthread_mutex_unlock(&R->mu);
  for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
  if (ok && !R->stats->stopped && R->committed < R->n_tasks)
    ok =
        mb_fail(err, "internal error: %" PRId64 " task(s) were not run", R->n_tasks - R->committed);
  if (cfg->progress && ok && !R->stats->stopped) progress(R, -1, start, tty, true);
  if (tty && !ok) fputc('\n', R->log);
  return ok;
}

static bool prepare_options(run *R, mb_error *err) {
  const mb_run_config *cfg = R->cfg;
  const char *profile = cfg->profile ? cfg->profile : "quick";
  if (strcmp(profile, "quick") && strcmp(profile, "full"))
    return mb_fail(err, "--profile '%s': expected quick or full", profile);
  copy_str(R->profile, sizeof R->profile, profile);
  bool quick = !strcmp(profile, "quick");
  R->workloads_regex = strdup(cfg->workloads ? cfg->workloads : "");
  R->hardware_list = strdup(cfg->hardware ? cfg->hardware : "");
  R->agent_path = strdup(cfg->agent ? cfg->agent : "");
  char default_catalogue[4096];
  const char *catalogue =
      cfg->catalogue ? cfg->catalogue
                     : mb_catalogue_default_path(default_catalogue, sizeof default_catalogue);
  if (!catalogue) return mb_fail(err, "the source tree's path is too long (%s)", mb_source_dir());
  R->catalogue_path = strdup(catalogue);
  R->data_dir = strdup(mb_data_dir(cfg->data_dir));
  if (!R->workloads_regex || !R->hardware_list || !R->agent_path || !R->catalogue_path ||
      !R->data_dir)
    return mb_fail(err, "out of memory");
  if (cfg->solvers) {
    if (strlen(cfg->solvers) >= sizeof R->solvers_list)
      return mb_fail(err, "--solvers: list too long");
    copy_str(R->solvers_list, sizeof R->solvers_list, cfg->solvers);
  }
  if (cfg->seeds < 0) return mb_fail(err, "--seeds %d: expected a positive count", cfg->seeds);
  R->seeds = cfg->seeds > 0 ? cfg->seeds : (quick ? QUICK_SEEDS : FULL_SEEDS);
  if (cfg->budget < 0 || isnan(cfg->budget))
    return mb_fail(err, "--budget %g: expected seconds >= 0", cfg->budget);
  /* 0 in both profiles: each solver's own default budget, a safety net that none of the
   * profiles' solves reaches on this machine, so that a rerun gives the same table */
  R->budget = cfg->budget;
  if (!(cfg->bound_budget >= 0 && cfg->bound_budget <= MAX_BOUND_S))
    return mb_fail(err, "--bound-budget %g: expected seconds > 0, at most %g", cfg->bound_budget,
                   MAX_BOUND_S);
  R->bound_budget = cfg->bound_budget; /* 0: the profile's, set by make_plan */
  if (!muzero_options_ok(cfg->simulations, cfg->c_scale, cfg->finetune, cfg->finetune_steps,
                         cfg->leaf_rollout, cfg->search, NULL, err))
    return false;
  R->simulations = cfg->simulations;
  R->c_scale = cfg->c_scale;
  R->finetune = cfg->finetune;
  R->finetune_steps = cfg->finetune_steps;
  R->leaf_rollout = cfg->leaf_rollout;
  R->search = cfg->search;
  return true;
}

bool mb_run(const mb_run_config *cfg, mb_run_stats *stats, mb_error *err) {
  memset(stats, 0, sizeof *stats);
  run R;
  memset(&R, 0, sizeof R);
  R.cfg = cfg;
  R.log = cfg->log ? cfg->log : stderr;
  R.stats = stats;
  R.journal_fd = -1;
  pthread_mutex_init(&R.mu, NULL);
  pthread_cond_init(&R.cv, NULL);
  double t_start = mb_wall_seconds();
  bool ok = prepare_options(&R, err);
  bool fresh = !cfg->resume;
  mb_results *old = NULL;
  if (ok && cfg->resume) {
    /* opened read-only: a resume with a journal writes a new file and renames it over */
    if (cfg->out && strcmp(cfg->out, cfg->resume))
      ok = mb_fail(err, "--resume %s: --out names another file (%s)", cfg->resume, cfg->out);
    copy_str(R.out_path, sizeof R.out_path, cfg->resume);
    if (ok) {
      /* only its root attributes are read here (the rows come from the journal, or from the
       * file reopened for writing when it has none); through a copy when unsealed, since this
       * process goes on to run the solvers (results.h) */
      old = mb_results_open_provenance(cfg->resume, err);
      /* a file that does not open at all is rebuilt from its journal below, using the
       * plan options given on the command line */
      if (old)
        ok = read_options(&R, old, err);
      else if (access(cfg->resume, F_OK) != 0)
        ok = false;
      else if (mb_results_is_foreign(cfg->resume))
        ok = mb_fail_prefix(err, "--resume: left as it is, since it is not a run's file");
      else {
        char journal[4200];
        snprintf(journal, sizeof journal, "%s.journal", cfg->resume);
        if (access(journal, F_OK) != 0) {
          /* said before anything is attempted: no journal, nothing to rebuild from */
          mb_error why = *err;
          ok = mb_fail(err,
                       "--resume %s: does not open (%s), and there is no journal %s to "
                       "rebuild it from",
                       cfg->resume, why.message, journal);
        } else {
          fprintf(R.log, "mallocbench run: %s does not open (%s); rebuilding it from %s\n",
                  cfg->resume, err->message, journal);
          mb_error_clear(err);
          ok = options_from_journal(&R, journal, err);
        }
      }
    }
  } else if (ok && cfg->out) {
    copy_str(R.out_path, sizeof R.out_path, cfg->out);
  } else if (ok) {
    ok = default_out(&R, err);
  }
  snprintf(R.journal_path, sizeof R.journal_path, "%s.journal", R.out_path);
  /* Everything that can fail on bad input happens before the output file is touched. */
  ok = ok && make_plan(&R, err);
  if (ok && old) {
    char *sha = mb_results_get_attr_string(old, "plan_sha256", err);
    if (!sha)
      ok = false;
    else if (strcmp(sha, R.plan_sha) && !same_plan_other_agent_file(&R, old, sha, err))
      ok = mb_fail(err,
                   "--resume %s: the plan changed since the run started (catalogue, "
                   "workload data, hardware profiles, solvers or the agent's networks differ; "
                   "plan hash %.12s, file has %.12s): start a new run",
                   R.out_path, R.plan_sha, sha);
    free(sha);
  }
  if (ok && fresh && !R.out_stem[0]) ok = make_parent_dir(R.out_path, err);
  if (ok && fresh) {
    R.res = R.out_stem[0] ? create_default_output(&R, err)
                          : mb_results_create(R.out_path, cfg->force, err);
    stats->wrote_output = R.res != NULL;
    ok = R.res && write_provenance(&R, true, err) && store_workloads(&R, err) &&
         journal_create(&R, err);
  } else if (ok) {
    stats->wrote_output = true; /* the user's own file, whatever happens to it now */
    ok = resume_output(&R, &old, err);
  }
  mb_results_close(old, NULL);
  old = NULL;
  copy_str(stats->out_path, sizeof stats->out_path, R.out_path);
  stats->tasks_total = R.n_tasks;
  stats->jobs_total = R.n_jobs;
  stats->n_pairs = R.n_pairs;
  stats->n_skipped = R.n_skipped;
  stats->prepare_s = mb_wall_seconds() - t_start;
  if (ok && !stats->was_complete) ok = execute(&R, err);
  if (ok && !stats->stopped && !stats->was_complete) {
    char stamp[64];
    utc_stamp(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ");
    ok = mb_results_set_attr_string(R.res, "end_time", stamp, err) &&
         mb_results_set_attr_int(R.res, "complete", 1, err) && mb_results_flush(R.res, err);
  }
  if (R.res) {
    mb_error cerr = {{0}};
    if (!mb_results_close(R.res, &cerr) && ok) {
      *err = cerr;
      ok = false;
    }
  }
  if (R.journal_fd >= 0) close(R.journal_fd);
  /* the journal is only needed until the HDF5 file is complete */
  if (ok && !stats->stopped && !stats->was_complete) {
    unlink(R.journal_path);
    if (!cfg->out && !cfg->resume) link_latest(&R);
  }
  stats->wall_s = mb_wall_seconds() - t_start;
  run_free(&R);
  pthread_mutex_destroy(&R.mu);
  pthread_cond_destroy(&R.cv);
  return ok;
}
