/* The benchmark driver end to end, in process: determinism across --jobs, resume after an
 * interruption, skipping entries with missing data, errors that leave files intact, and the
 * verify/export commands on the files it writes, mallocMuZero's evaluation options (they reach
 * the solvers, survive every resume path, and leave default plans as they were), each stored
 * workload's catalogue split (on fresh runs and on both resume paths), curves' heuristic
 * references (through the journal, and absent in journals written before them). Uses the built-in
 * samples through a catalogue written to a temporary directory, so it needs no external data. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "paths.h"
#include "results.h"
#include "sha256.h"
#include "solver.h"
#include "summary.h"
#include "support.h"
#include "version.h"

typedef struct fixture {
  char *dir;
  char catalogue[4096];
} fixture;

static int teardown(void **state);

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  f->dir = mb_test_temp_dir();
  if (!f->dir) {
    free(f);
    return -1;
  }
  snprintf(f->catalogue, sizeof f->catalogue, "%s/catalogue.txt", f->dir);
  *state = f;
  FILE *c = fopen(f->catalogue, "w");
  if (!c) {
    teardown(state);
    return -1;
  }
  const char *src = mb_source_dir();
  fprintf(c, "name kind source args hardware capacity split tags\n");
  fprintf(c, "mlp_tiny native %s/datasets/samples/mlp_tiny.wl - tpu-v4i 2MiB test quick\n", src);
  fprintf(c, "attention native %s/datasets/samples/attention_block.wl - tpu-v4i 4MiB train quick\n",
          src);
  fprintf(c, "conv native %s/datasets/samples/conv_block.wl - edge-npu profile test -\n", src);
  fprintf(c, "buffers native %s/datasets/samples/buffers_only.wl - tpu-v4i profile test quick\n",
          src);
  fprintf(c, "ghost hlo no/such/dump.hlo - tpu-v4i profile test quick\n");
  fclose(c);
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  mb_test_temp_remove(f->dir);
  free(f);
  return 0;
}

static void base_config(const fixture *f, mb_run_config *cfg, const char *out) {
  memset(cfg, 0, sizeof *cfg);
  cfg->profile = "quick";
  cfg->workloads = "^(mlp_tiny|attention|buffers|ghost)$";
  cfg->solvers = "heuristic,greedy";
  cfg->seeds = 2;
  cfg->jobs = 2;
  cfg->budget = 0.2;
  cfg->catalogue = f->catalogue;
  cfg->out = out;
  cfg->command_line = "test_driver";
  cfg->log = fopen("/dev/null", "w");
}

/* Turns a config into a resume of `file`: the plan (workloads, solvers, seeds, budget) comes
 * from the file or its journal, none is given. */
static void as_resume(mb_run_config *cfg, const char *file) {
  cfg->workloads = cfg->solvers = NULL;
  cfg->seeds = 0;
  cfg->budget = 0;
  cfg->resume = file;
}

static char *path_in(const fixture *f, const char *name) {
  size_t n = strlen(f->dir) + strlen(name) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", f->dir, name);
  unlink(p);
  return p;
}

typedef struct tables {
  mb_result_row *rows;
  int64_t n_rows;
  mb_baseline_row *base;
  int64_t n_base;
} tables;

static void read_tables(const char *path, tables *t) {
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  assert_true(mb_results_read_rows(r, &t->rows, &t->n_rows, &err));
  assert_true(mb_results_read_baselines(r, &t->base, &t->n_base, &err));
  int64_t complete = 0;
  assert_true(mb_results_get_attr_int(r, "complete", &complete, &err));
  assert_int_equal(complete, 1);
  mb_results_close(r, NULL);
}

static void free_tables(tables *t) {
  free(t->rows);
  free(t->base);
}

/* Equal except wall-clock fields and solver notes: byte comparison after blanking them. */
static void assert_same_tables(const tables *a, const tables *b) {
  assert_int_equal(a->n_rows, b->n_rows);
  assert_int_equal(a->n_base, b->n_base);
  for (int64_t i = 0; i < a->n_rows; i++) {
    mb_result_row x = a->rows[i], y = b->rows[i];
    x.wall_s = y.wall_s = 0;
    /* the solver's note is free text for humans and may quote timings */
    memset(x.note, 0, sizeof x.note);
    memset(y.note, 0, sizeof y.note);
    /* iterations and budget_hit depend on time when a solver stops on its budget */
    if (x.budget_hit || y.budget_hit) x.iterations = y.iterations = 0;
    if (memcmp(&x, &y, sizeof x) != 0)
      fail_msg("row %lld differs: %s %s seed %lld: t_solver %lld vs %lld", (long long)i, x.workload,
               x.solver, (long long)x.seed, (long long)x.t_solver_ps, (long long)y.t_solver_ps);
  }
  for (int64_t i = 0; i < a->n_base; i++) {
    mb_baseline_row x = a->base[i], y = b->base[i];
    x.heuristic_wall_s = y.heuristic_wall_s = x.bound_wall_s = y.bound_wall_s = 0;
    if (memcmp(&x, &y, sizeof x) != 0) fail_msg("baseline %lld differs", (long long)i);
  }
}

static void run_ok(const mb_run_config *cfg, mb_run_stats *st) {
  mb_error err = {{0}};
  if (!mb_run(cfg, st, &err)) fail_msg("mb_run: %s", err.message);
}

/* The fixture catalogue's splits are stored with the workload copies. */
static void assert_splits(const char *path, const char *mlp_tiny, const char *attention,
                          const char *buffers) {
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  const char *keys[3] = {"mlp_tiny", "attention", "buffers"};
  const char *want[3] = {mlp_tiny, attention, buffers};
  for (int i = 0; i < 3; i++) {
    char split[MB_RES_SPLIT];
    if (!mb_results_get_workload_split(r, keys[i], split, &err)) fail_msg("%s", err.message);
    if (strcmp(split, want[i]))
      fail_msg("%s: workload %s: split '%s', expected '%s'", path, keys[i], split, want[i]);
  }
  mb_results_close(r, NULL);
}

static void test_determinism_and_skip(void **state) {
  fixture *f = *state;
  char *p1 = path_in(f, "a.h5"), *p2 = path_in(f, "b.h5");
  mb_run_config cfg;
  mb_run_stats st;
  base_config(f, &cfg, p1);
  run_ok(&cfg, &st);
  assert_int_equal(st.n_skipped, 1); /* ghost: its HLO file does not exist */
  assert_int_equal(st.n_pairs, 3);
  assert_int_equal(st.jobs_total, 3 * 2 * 2);
  assert_int_equal(st.tasks_total, 3 + 12);
  assert_int_equal(st.n_invalid + st.n_error, 0);
  fclose(cfg.log);
  base_config(f, &cfg, p2);
  cfg.jobs = 1;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  tables a = {0}, b = {0};
  read_tables(p1, &a);
  read_tables(p2, &b);
  assert_same_tables(&a, &b);
  assert_splits(p1, "test", "train", "test");
  /* rows are in plan order, every speedup refers to the heuristic baseline */
  for (int64_t i = 0; i < a.n_rows; i++) {
    if (i) assert_true(a.rows[i].task > a.rows[i - 1].task);
    assert_string_equal(a.rows[i].status, "ok");
    if (!strcmp(a.rows[i].solver, "heuristic")) assert_true(a.rows[i].speedup_heuristic == 1.0);
    assert_true(a.rows[i].t_solver_ps <= a.rows[i].t_slow_ps);
  }
  mb_error err = {{0}};
  mb_results *r = mb_results_open(p1, false, &err);
  char *skipped = mb_results_get_attr_string(r, "skipped", &err);
  assert_non_null(strstr(skipped, "ghost"));
  free(skipped);
  const char *attrs[] = {"mallocbench_version",
                         "git_commit",
                         "compiler",
                         "build_type",
                         "command_line",
                         "catalogue_sha256",
                         "hardware_sha256",
                         "seeds",
                         "host",
                         "start_time",
                         "end_time",
                         "plan_sha256",
                         "blas"};
  for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
    char *v = mb_results_get_attr_string(r, attrs[i], &err);
    if (!v) fail_msg("provenance attribute %s: %s", attrs[i], err.message);
    assert_true(v[0] != '\0');
    free(v);
  }
  int64_t dirty = -1;
  assert_true(mb_results_get_attr_int(r, "git_dirty", &dirty, &err));
  assert_true(dirty == 0 || dirty == 1);
  mb_results_close(r, NULL);
  /* the journal is gone once the run completed */
  char j[4200];
  snprintf(j, sizeof j, "%s.journal", p1);
  assert_int_not_equal(access(j, F_OK), 0);
  free_tables(&a);
  free_tables(&b);
  free(p1);
  free(p2);
}

static void test_resume_equals_uninterrupted(void **state) {
  fixture *f = *state;
  char *full = path_in(f, "full.h5"), *part = path_in(f, "part.h5");
  mb_run_config cfg;
  mb_run_stats st;
  base_config(f, &cfg, full);
  run_ok(&cfg, &st);
  fclose(cfg.log);
  /* interrupted twice, then finished */
  base_config(f, &cfg, part);
  cfg.stop_after = 4;
  run_ok(&cfg, &st);
  assert_true(st.stopped);
  assert_int_equal(st.commits, 4); /* exactly stop_after */
  fclose(cfg.log);
  for (int k = 0; k < 2; k++) {
    mb_run_config rc;
    base_config(f, &rc, NULL);
    as_resume(&rc, part);
    rc.stop_after = k == 0 ? 3 : 0;
    run_ok(&rc, &st);
    assert_true(st.tasks_reused >= 4);
    fclose(rc.log);
  }
  tables a = {0}, b = {0};
  read_tables(full, &a);
  read_tables(part, &b);
  assert_same_tables(&a, &b);
  assert_splits(part, "test", "train", "test"); /* the file rebuilt from its journal */
  free_tables(&a);
  free_tables(&b);
  /* resuming a complete file changes nothing */
  struct stat s1, s2;
  assert_int_equal(stat(part, &s1), 0);
  mb_run_config rc;
  base_config(f, &rc, NULL);
  as_resume(&rc, part);
  run_ok(&rc, &st);
  fclose(rc.log);
  assert_true(st.was_complete);
  assert_int_equal(st.tasks_run, 0);
  assert_int_equal(stat(part, &s2), 0);
  assert_int_equal(s1.st_size, s2.st_size);
  assert_true(s1.st_mtim.tv_sec == s2.st_mtim.tv_sec && s1.st_mtim.tv_nsec == s2.st_mtim.tv_nsec);
  free(full);
  free(part);
}

/* A damaged line in the journal of an interrupted run is skipped with a note, and the journal is
 * rewritten without it (appends then follow the last good line); a resume of a file without torn
 * rows says nothing about dropping rows. */
static void test_resume_rewrites_damaged_journal(void **state) {
  fixture *f = *state;
  char *part = path_in(f, "damaged_journal.h5");
  mb_run_config cfg;
  mb_run_stats st;
  base_config(f, &cfg, part);
  cfg.stop_after = 1;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  /* its header, a damaged line, and its first task's line: the resume computes the other tasks
   * again (the file's rows are not taken when a journal exists) */
  char journal[4200];
  snprintf(journal, sizeof journal, "%s.journal", part);
  char *head = mb_read_file(journal, NULL);
  assert_non_null(head);
  char *first = strchr(head, '\n') + 1, *rest = strchr(first, '\n') + 1;
  *rest = '\0';
  char good[4096];
  snprintf(good, sizeof good, "%s", first);
  *first = '\0';
  FILE *j = fopen(journal, "w");
  assert_non_null(j);
  fprintf(j, "%sJ 3 damaged by a test #0123456789abcdef\n%s", head, good);
  fclose(j);
  free(head);
  base_config(f, &cfg, NULL);
  as_resume(&cfg, part);
  cfg.jobs = 1;
  cfg.stop_after = 1;
  fclose(cfg.log);
  cfg.log = tmpfile();
  assert_non_null(cfg.log);
  run_ok(&cfg, &st);
  assert_true(st.stopped);
  char *log = mb_test_stream_text(cfg.log);
  fclose(cfg.log);
  if (!strstr(log, "damaged line skipped")) fail_msg("no note of the damaged line in: %s", log);
  if (strstr(log, "dropped")) fail_msg("a clean file, yet: %s", log);
  free(log);
  char *text = mb_read_file(journal, NULL);
  assert_non_null(text);
  assert_null(strstr(text, "damaged by a test"));
  assert_non_null(strstr(text, good)); /* moved up, not cut off */
  free(text);
  free(part);
}

/* A resume records the commit of its build (resume_git_commit, one entry per resume) and says
 * when that is not the build that started the file: the rows it stores come from another one. */
static void test_resume_records_its_build(void **state) {
  fixture *f = *state;
  char *part = path_in(f, "builds.h5");
  mb_run_config cfg;
  mb_run_stats st;
  base_config(f, &cfg, part);
  cfg.stop_after = 1;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  mb_error err = {{0}};
  mb_results *r = mb_results_open(part, true, &err);
  assert_non_null(r);
  assert_true(mb_results_set_attr_string(r, "git_commit", "0123456789abcdef", &err));
  assert_true(mb_results_close(r, &err));
  char build[128];
  snprintf(build, sizeof build, "%s%s", mb_git_commit(), mb_git_dirty() ? "+dirty" : "");
  base_config(f, &cfg, NULL);
  as_resume(&cfg, part);
  fclose(cfg.log);
  cfg.log = tmpfile();
  run_ok(&cfg, &st);
  char log[8192] = "";
  rewind(cfg.log);
  size_t n = fread(log, 1, sizeof log - 1, cfg.log);
  log[n] = '\0';
  fclose(cfg.log);
  char note[512];
  snprintf(note, sizeof note,
           "was started by the build of commit 0123456789abcdef; this build is %s, and the rows "
           "stored from here on come from it",
           build);
  if (!strstr(log, note)) fail_msg("no note of the other build in: %s", log);
  r = mb_results_open(part, false, &err);
  assert_non_null(r);
  char *recorded = mb_results_get_attr_string(r, "resume_git_commit", &err);
  assert_non_null(recorded);
  assert_string_equal(recorded, build); /* e2e run_resume checks the list of several */
  free(recorded);
  char *started = mb_results_get_attr_string(r, "git_commit", &err);
  assert_string_equal(started, "0123456789abcdef"); /* the original provenance stays */
  free(started);
  assert_true(mb_results_close(r, &err));
  free(part);
}

static void test_errors_leave_files_intact(void **state) {
  fixture *f = *state;
  char *p = path_in(f, "keep.h5");
  mb_run_config cfg;
  mb_run_stats st;
  mb_error err = {{0}};
  base_config(f, &cfg, p);
  cfg.workloads = "^mlp_tiny$";
  run_ok(&cfg, &st);
  struct stat s1, s2;
  assert_int_equal(stat(p, &s1), 0);
  /* --out to an existing file without --resume/--force */
  assert_false(mb_run(&cfg, &st, &err));
  assert_non_null(strstr(err.message, "exists"));
  /* bad regex, unknown solver, bad profile: errors before the file is touched */
  cfg.workloads = "(unclosed";
  assert_false(mb_run(&cfg, &st, &err));
  assert_non_null(strstr(err.message, "--workloads"));
  cfg.workloads = "^mlp_tiny$";
  cfg.solvers = "heuristic,nosuch";
  assert_false(mb_run(&cfg, &st, &err));
  assert_non_null(strstr(err.message, "nosuch"));
  cfg.solvers = "heuristic";
  cfg.workloads = "^nothing-matches$";
  assert_false(mb_run(&cfg, &st, &err));
  assert_non_null(strstr(err.message, "no workload"));
  assert_int_equal(stat(p, &s2), 0);
  assert_int_equal(s1.st_size, s2.st_size);
  assert_int_equal(s1.st_mtime, s2.st_mtime);
  /* resume of a file whose plan no longer matches (another catalogue) */
  char *cat2 = path_in(f, "cat2.txt");
  FILE *c = fopen(cat2, "w");
  fprintf(c, "name kind source args hardware capacity split tags\n");
  fprintf(c, "mlp_tiny native %s/datasets/samples/mlp_tiny.wl - tpu-v4i 1MiB test quick\n",
          mb_source_dir());
  fclose(c);
  mb_run_config rc;
  base_config(f, &rc, NULL);
  as_resume(&rc, p);
  rc.catalogue = cat2;
  assert_false(mb_run(&rc, &st, &err));
  assert_non_null(strstr(err.message, "plan changed"));
  fclose(rc.log);
  fclose(cfg.log);
  free(cat2);
  free(p);
}

/* Runs the CLI; returns its exit status. */
static int cli(const char *args) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>&1", MB_TEST_BINARY, args);
  int rc = system(cmd);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void test_verify_detects_tampering(void **state) {
  fixture *f = *state;
  char *p = path_in(f, "tamper.h5");
  mb_run_config cfg;
  mb_run_stats st;
  base_config(f, &cfg, p);
  cfg.seeds = 1;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  char args[4200];
  snprintf(args, sizeof args, "verify %s", p);
  assert_int_equal(cli(args), 0);

  mb_error err = {{0}};
  mb_results *r = mb_results_open(p, true, &err);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_true(n > 1);
  /* a time off by one picosecond */
  mb_result_row bad = rows[1];
  bad.t_solver_ps += 1;
  assert_true(mb_results_write_row(r, 1, &bad, &err));
  mb_results_close(r, NULL);
  assert_int_equal(cli(args), 1);
  r = mb_results_open(p, true, &err);
  assert_true(mb_results_write_row(r, 1, &rows[1], &err));
  mb_results_close(r, NULL);
  assert_int_equal(cli(args), 0);

  /* an assignment whose fast buffers overlap (or exceed capacity) */
  r = mb_results_open(p, true, &err);
  int64_t k = -1;
  for (int64_t i = 0; i < n && k < 0; i++)
    if (rows[i].n_fast > 0) k = i;
  assert_true(k >= 0);
  bool absent = false;
  mb_assignment *a = mb_results_get_assignment(r, &rows[k], &absent, &err);
  assert_non_null(a);
  for (int32_t b = 0; b < a->n_buffers; b++)
    if (a->offset[b] != MB_SLOW) a->offset[b] = rows[k].capacity; /* past the end */
  assert_true(mb_results_put_assignment(r, &rows[k], a, &err));
  mb_assignment_free(a);
  mb_results_close(r, NULL);
  assert_int_equal(cli(args), 1);
  free(rows);
  free(p);
}

static void test_export_csv(void **state) {
  fixture *f = *state;
  char *p = path_in(f, "export.h5");
  mb_run_config cfg;
  mb_run_stats st;
  base_config(f, &cfg, p);
  cfg.seeds = 1;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  char args[8400], dir[4200];
  snprintf(dir, sizeof dir, "%s/csv", f->dir);
  snprintf(args, sizeof args, "export %s --csv %s", p, dir);
  assert_int_equal(cli(args), 0);
  tables t = {0};
  read_tables(p, &t);
  char path[4300];
  snprintf(path, sizeof path, "%s/results.csv", dir);
  FILE *in = fopen(path, "r");
  assert_non_null(in);
  char line[4096];
  assert_non_null(fgets(line, sizeof line, in));
  assert_true(!strncmp(line, "task,workload,hardware,solver,seed,status,", 42));
  int64_t n = 0;
  while (fgets(line, sizeof line, in)) {
    assert_true(n < t.n_rows);
    char expect[512];
    const mb_result_row *x = &t.rows[n];
    snprintf(expect, sizeof expect, "%lld,%s,%s,%s,%lld,%s,%d,", (long long)x->task, x->workload,
             x->hardware, x->solver, (long long)x->seed, x->status, (int)x->valid);
    assert_true(!strncmp(line, expect, strlen(expect)));
    char tps[64];
    snprintf(tps, sizeof tps, ",%lld,", (long long)x->t_solver_ps);
    assert_non_null(strstr(line, tps));
    n++;
  }
  fclose(in);
  assert_int_equal(n, t.n_rows);
  const char *others[] = {"baselines.csv", "workloads.csv", "provenance.csv", "curves.csv"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, others[i]);
    assert_int_equal(access(path, R_OK), 0);
  }
  /* workloads.csv: each workload's catalogue split (the fixture's catalogue has both), the
   * column summary --split filters on */
  snprintf(path, sizeof path, "%s/workloads.csv", dir);
  in = fopen(path, "r");
  assert_non_null(in);
  assert_non_null(fgets(line, sizeof line, in));
  assert_string_equal(line,
                      "workload,name,sha256,n_ops,n_buffers,n_uses,schedule_length,"
                      "total_bytes,split,source\n");
  const char *split_of[][2] = {{"mlp_tiny", "test"}, {"attention", "train"}, {"buffers", "test"}};
  int lines = 1;
  while (fgets(line, sizeof line, in)) {
    lines++;
    const char *field = line; /* the 9th field; the 8 before it hold no comma */
    for (int k = 0; k < 8 && field; k++) field = strchr(field, ',') ? strchr(field, ',') + 1 : NULL;
    assert_non_null(field);
    bool known = false;
    for (size_t k = 0; k < 3; k++) {
      size_t len = strlen(split_of[k][0]), n_split = strlen(split_of[k][1]);
      if (strncmp(line, split_of[k][0], len) || line[len] != ',') continue;
      known = true;
      if (strncmp(field, split_of[k][1], n_split) || field[n_split] != ',')
        fail_msg("workloads.csv: %s: split field '%.8s', expected %s", split_of[k][0], field,
                 split_of[k][1]);
    }
    if (!known) fail_msg("workloads.csv: unexpected row %s", line);
  }
  fclose(in);
  assert_int_equal(lines, 1 + 3); /* header + mlp_tiny, attention, buffers */
  snprintf(path, sizeof path, "%s/provenance.csv", dir);
  in = fopen(path, "r");
  bool has_commit = false;
  while (fgets(line, sizeof line, in)) has_commit |= !strncmp(line, "git_commit,", 11);
  fclose(in);
  assert_true(has_commit);
  free_tables(&t);
  free(p);
}

/* ---- fake solvers: a training curve, an invalid assignment, a failure ---- */

/* fake_curve's heuristic reference on a seed that has one (not a short decimal) */
static double fake_reference(uint64_t seed) { return 0.5 + (double)seed / 7.0; }

/* The stored heuristic reference of fake_curve's rows: fake_reference on odd seeds, none (NaN)
 * on even ones, and also NaN on the tasks listed in `stripped` (n of them: their journal lines
 * were made old-format). */
static void assert_fake_references(const char *path, const int64_t *stripped, int n) {
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  mb_result_row *rows = NULL;
  int64_t nr = 0;
  assert_true(mb_results_read_rows(r, &rows, &nr, &err));
  int with = 0;
  for (int64_t i = 0; i < nr; i++) {
    if (strcmp(rows[i].solver, "fake_curve")) continue;
    bool old = false;
    for (int k = 0; k < n; k++) old |= stripped[k] == rows[i].task;
    double h = 0;
    if (!mb_results_get_curve_heuristic(r, &rows[i], &h, &err)) fail_msg("%s", err.message);
    if (rows[i].seed % 2 && !old) {
      if (h != fake_reference((uint64_t)rows[i].seed)) /* exact through the journal's text */
        fail_msg("task %lld: reference %.17g", (long long)rows[i].task, h);
      with++;
    } else if (!isnan(h)) {
      fail_msg("task %lld: reference %.17g, expected none", (long long)rows[i].task, h);
    }
  }
  assert_int_equal(with, 3 - n); /* 3 workloads, seed 1 */
  free(rows);
  mb_results_close(r, NULL);
}

static bool fake_curve(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                       mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err) {
  if (!mb_solve_heuristic(w, hw, opt, rng, out, stats, err)) return false;
  stats->curve_len = 3;
  stats->curve_step = malloc(3 * sizeof(double));
  stats->curve_return = malloc(3 * sizeof(double));
  for (int i = 0; i < 3; i++) {
    stats->curve_step[i] = 10.0 * i;
    stats->curve_return[i] = (double)opt->seed + 0.1 * i + 1.0 / 3.0; /* not a short decimal */
  }
  /* a heuristic reference on odd seeds only (the driver's default: NaN, none) */
  if (opt->seed % 2) stats->curve_heuristic = fake_reference(opt->seed);
  snprintf(stats->note, sizeof stats->note, "fake, with a comma and \"quotes\"");
  return true;
}

static bool fake_invalid(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                         mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err) {
  for (int32_t b = 0; b < w->n_buffers; b++)
    if (!w->buffers[b].pinned) {
      out->offset[b] = hw->capacity; /* past the end of fast memory */
      break;
    }
  return true;
}

static bool fake_error(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                       mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err) {
  return mb_fail(err, "fake_error: out of ideas on '%s'", w->name);
}

static const mb_solver FAKES[] = {
    {"fake_curve", "heuristic plus a training curve", fake_curve, NULL, false, 0},
    {"fake_invalid", "an assignment past capacity", fake_invalid, NULL, false, 0},
    {"fake_error", "always fails", fake_error, NULL, false, 0},
};

static void fake_config(const fixture *f, mb_run_config *cfg, const char *out) {
  base_config(f, cfg, out);
  cfg->solvers = "heuristic,fake_curve,fake_invalid,fake_error";
  cfg->extra_solvers = FAKES;
  cfg->n_extra_solvers = 3;
}

/* H5Ovisit: the path of the first curve dataset (under /curves) into data; stops there. */
static herr_t first_curve(hid_t obj, const char *name, const H5O_info_t *info, void *data) {
  (void)obj;
  if (info->type != H5O_TYPE_DATASET || strncmp(name, "curves/", 7)) return 0;
  snprintf(data, 1024, "/%s", name);
  return 1;
}

/* Resumes the fake-solver run in `file`. */
static void fake_resume(const fixture *f, const char *file, mb_run_stats *st) {
  mb_run_config cfg;
  fake_config(f, &cfg, NULL);
  as_resume(&cfg, file);
  run_ok(&cfg, st);
  fclose(cfg.log);
}

static void test_curves_invalid_and_errors(void **state) {
  fixture *f = *state;
  char *full = path_in(f, "fake_full.h5"), *part = path_in(f, "fake_part.h5");
  mb_run_config cfg;
  mb_run_stats st;
  fake_config(f, &cfg, full);
  run_ok(&cfg, &st);
  fclose(cfg.log);
  assert_int_equal(st.n_invalid, 3 * 2); /* 3 workloads x 2 seeds */
  assert_int_equal(st.n_error, 3 * 2);
  /* the same through an interruption: curves and failures come back from the journal */
  fake_config(f, &cfg, part);
  cfg.stop_after = 7;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  fake_resume(f, part, &st);
  assert_true(st.tasks_reused >= 7);

  tables a = {0}, b = {0};
  read_tables(full, &a);
  read_tables(part, &b);
  assert_same_tables(&a, &b);
  mb_error err = {{0}};
  mb_results *r = mb_results_open(part, false, &err);
  int curves = 0;
  for (int64_t i = 0; i < b.n_rows; i++) {
    const mb_result_row *x = &b.rows[i];
    bool absent = false;
    mb_assignment *as = mb_results_get_assignment(r, x, &absent, &err);
    if (!strcmp(x->solver, "fake_curve")) {
      assert_string_equal(x->status, "ok");
      assert_non_null(strstr(x->note, "comma"));
      double *step = NULL, *ret = NULL;
      int32_t len = 0;
      assert_true(mb_results_get_curve(r, x, &step, &ret, &len, &err));
      assert_int_equal(len, 3);
      for (int k = 0; k < 3; k++) {
        assert_true(step[k] == 10.0 * k);
        assert_true(ret[k] == (double)x->seed + 0.1 * k + 1.0 / 3.0); /* exact through text */
      }
      free(step);
      free(ret);
      curves++;
    } else if (!strcmp(x->solver, "fake_invalid")) {
      assert_string_equal(x->status, "invalid");
      assert_int_equal(x->valid, 0);
      assert_true(isnan(x->speedup_heuristic) && x->t_solver_ps == -1);
      assert_non_null(as); /* kept for diagnosis */
      assert_non_null(strstr(x->note, "validator"));
    } else if (!strcmp(x->solver, "fake_error")) {
      assert_string_equal(x->status, "error");
      assert_null(as);
      assert_true(absent);
      assert_non_null(strstr(x->note, "out of ideas"));
    }
    mb_assignment_free(as);
  }
  assert_int_equal(curves, 3 * 2);
  /* the run's account of its failures: one line per solver and status, with the first row's
   * workload and note, in row order */
  const mb_result_row *first_invalid = NULL, *first_error = NULL;
  for (int64_t i = 0; i < b.n_rows; i++) {
    const mb_result_row *x = &b.rows[i];
    if (!first_invalid && !strcmp(x->status, "invalid")) first_invalid = x;
    if (!first_error && !strcmp(x->status, "error")) first_error = x;
  }
  assert_non_null(first_invalid);
  assert_non_null(first_error);
  char invalid_line[1024], error_line[1024], got[2048] = "";
  snprintf(invalid_line, sizeof invalid_line,
           "run: fake_invalid: 6 row(s) 'invalid', first (%s): %s\n", first_invalid->workload,
           first_invalid->note);
  snprintf(error_line, sizeof error_line,
           "run: fake_error: 6 row(s) 'error', first (%s): fake_error: out of ideas on '%s'\n",
           first_error->workload, first_error->workload);
  FILE *account = tmpfile();
  assert_non_null(account);
  assert_true(mb_summary_print_failures(r, "run", account, &err));
  rewind(account);
  size_t got_len = fread(got, 1, sizeof got - 1, account);
  got[got_len] = '\0';
  fclose(account);
  assert_int_equal(got_len, strlen(invalid_line) + strlen(error_line)); /* these two lines only */
  assert_non_null(strstr(got, invalid_line));
  assert_non_null(strstr(got, error_line));
  mb_results_close(r, NULL);
  /* a run whose rows are all ok has nothing to account for */
  char *all_ok = path_in(f, "fake_all_ok.h5");
  base_config(f, &cfg, all_ok);
  run_ok(&cfg, &st);
  fclose(cfg.log);
  r = mb_results_open(all_ok, false, &err);
  account = tmpfile();
  assert_true(r && account && mb_summary_print_failures(r, "run", account, &err));
  assert_int_equal(ftell(account), 0);
  fclose(account);
  mb_results_close(r, NULL);
  free(all_ok);
  assert_fake_references(full, NULL, 0);
  assert_fake_references(part, NULL, 0); /* through the journal */
  /* a file with invalid and failed rows is still consistent: verify passes */
  char args[4200];
  snprintf(args, sizeof args, "verify %s", part);
  assert_int_equal(cli(args), 0);
  /* export: curves.csv has a point per row and step, with the reference on odd seeds only */
  char dir[4200], path[4300], line[1024];
  snprintf(dir, sizeof dir, "%s/fake_csv", f->dir);
  snprintf(args, sizeof args, "export %s --csv %s", part, dir);
  assert_int_equal(cli(args), 0);
  snprintf(path, sizeof path, "%s/curves.csv", dir);
  FILE *in = fopen(path, "r");
  assert_non_null(in);
  assert_non_null(fgets(line, sizeof line, in));
  assert_string_equal(line, "workload,hardware,solver,seed,step,return,heuristic_return\n");
  int points = 0;
  while (fgets(line, sizeof line, in)) {
    char *seed = strstr(line, ",fake_curve,");
    assert_non_null(seed);
    long s = strtol(seed + strlen(",fake_curve,"), NULL, 10);
    const char *ref = strrchr(line, ',') + 1;
    if (s % 2) {
      char want[64];
      snprintf(want, sizeof want, "%.17g\n", fake_reference((uint64_t)s));
      assert_string_equal(ref, want);
    } else {
      assert_string_equal(ref, "\n");
    }
    points++;
  }
  fclose(in);
  assert_int_equal(points, 3 * 2 * 3); /* 3 workloads x 2 seeds x 3 points */
  /* one NaN convention in every CSV: an empty field, never 'nan' (which spreadsheets take for
   * text and R's read.csv not for NA): the speedups and gap of the invalid and failed rows */
  snprintf(path, sizeof path, "%s/results.csv", dir);
  in = fopen(path, "r");
  assert_non_null(in);
  assert_non_null(fgets(line, sizeof line, in));
  const char *columns =
      "task,workload,hardware,solver,seed,status,valid,capacity,n_buffers,"
      "n_fast,fast_bytes,t_slow_ps,t_heuristic_ps,t_solver_ps,t_bound_ps,"
      "t_solver_s,speedup_heuristic,speedup_slow,gap_to_bound,wall_s,";
  assert_true(!strncmp(line, columns, strlen(columns)));
  int not_ok = 0;
  while (fgets(line, sizeof line, in)) {
    if (!strstr(line, ",fake_invalid,") && !strstr(line, ",fake_error,")) continue;
    not_ok++;
    const char *field = line; /* t_solver_s, the 16th field; the 15 before it hold no comma */
    for (int k = 0; k < 15 && field; k++)
      field = strchr(field, ',') ? strchr(field, ',') + 1 : NULL;
    assert_non_null(field);
    if (strncmp(field, ",,,,", 4)) /* t_solver_s, both speedups and the gap: empty */
      fail_msg("results.csv: a row that is not ok has numbers where NaN is: %s", line);
  }
  fclose(in);
  assert_true(not_ok > 0);
  const char *csvs[] = {"results.csv", "baselines.csv", "workloads.csv", "provenance.csv",
                        "curves.csv"};
  for (size_t i = 0; i < sizeof csvs / sizeof *csvs; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, csvs[i]);
    in = fopen(path, "r");
    assert_non_null(in);
    while (fgets(line, sizeof line, in)) {
      char *nan_at = strstr(line, "nan");
      for (; nan_at; nan_at = strstr(nan_at + 1, "nan"))
        if ((nan_at == line || nan_at[-1] == ',') && (nan_at[3] == ',' || nan_at[3] == '\n'))
          fail_msg("%s: a field 'nan' (NaN is an empty field): %s", csvs[i], line);
    }
    fclose(in);
  }
  /* A curve that does not read (the file edited by another program after its seal was removed:
   * here a curve stored as text) fails the export, and curves.csv stays as the last export
   * wrote it. */
  snprintf(path, sizeof path, "%s/curves.csv", dir);
  size_t len_before = 0, len_after = 0;
  char *curves_before = mb_read_file(path, &len_before);
  assert_non_null(curves_before);
  hid_t h = H5Fopen(part, H5F_ACC_RDONLY, H5P_DEFAULT);
  char curve[1024] = "";
  assert_true(h >= 0 && H5Ovisit(h, H5_INDEX_NAME, H5_ITER_INC, first_curve, curve) >= 0);
  H5Fclose(h);
  assert_true(curve[0]);
  mb_test_h5_replace_with_text(part, curve);
  assert_int_equal(cli(args), 2);
  char *curves_after = mb_read_file(path, &len_after);
  assert_non_null(curves_after);
  assert_true(len_after == len_before && !memcmp(curves_after, curves_before, len_before));
  free(curves_before);
  free(curves_after);
  free_tables(&a);
  free_tables(&b);
  free(full);
  free(part);
}

/* A journal written before curves had a heuristic reference (job lines end with the curve's
 * points) still resumes: its lines are taken, not dropped as torn, and their curves have no
 * reference (NaN). Made here by removing the reference from a new journal's lines and
 * re-hashing them. */
static void test_old_journal_without_reference(void **state) {
  fixture *f = *state;
  char *part = path_in(f, "fake_oldj.h5");
  mb_run_config cfg;
  mb_run_stats st;
  fake_config(f, &cfg, part);
  cfg.stop_after = 20;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  assert_true(st.stopped);
  char j[4200];
  snprintf(j, sizeof j, "%s.journal", part);
  char *text = mb_read_file(j, NULL);
  assert_non_null(text);
  FILE *o = fopen(j, "w");
  assert_non_null(o);
  int64_t stripped[8];
  int n = 0, lines = 0;
  for (char *line = text, *next; *line; line = next) {
    char *nl = strchr(line, '\n');
    assert_non_null(nl);
    *nl = '\0';
    next = nl + 1;
    char *ref = strstr(line, " heuristic "), *hash = strstr(line, " #");
    if (ref && hash) {
      assert_true(n < 8);
      stripped[n++] = strtoll(line + 2, NULL, 10); /* "J <task> ..." */
      *ref = '\0';
      char sha[65];
      mb_sha256_hex(line, strlen(line), sha);
      fprintf(o, "%s #%.16s\n", line, sha);
    } else {
      fprintf(o, "%s\n", line);
    }
    lines++;
  }
  fclose(o);
  free(text);
  assert_true(lines >= 1 + 20); /* the header and every finished task */
  assert_true(n >= 1);          /* the new journal has references to remove */
  fake_resume(f, part, &st);
  assert_int_equal(st.tasks_reused, lines - 1); /* every line taken, none dropped as torn */
  assert_fake_references(part, stripped, n);
  free(part);
}

/* ---- mallocMuZero's evaluation options: plumbing, storage, resume, compatibility ---- */

/* Says in its note which mallocMuZero options it was given (placement: the heuristic's). */
static bool fake_opts(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                      mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err) {
  if (!mb_solve_heuristic(w, hw, opt, rng, out, stats, err)) return false;
  snprintf(stats->note, sizeof stats->note,
           "sims %d c_scale %.17g finetune %.17g steps %lld leaf %d search %d", opt->simulations,
           opt->c_scale, opt->finetune_seconds, (long long)opt->finetune_steps, opt->leaf_rollout,
           opt->search);
  return true;
}

static const mb_solver OPTS_SOLVER[] = {
    {"fake_opts", "reports its mallocMuZero options", fake_opts, NULL, false, 0}};

/* 2 workloads x 1 solver x 2 seeds */
static void opts_config(const fixture *f, mb_run_config *cfg, const char *out) {
  base_config(f, cfg, out);
  cfg->workloads = "^(mlp_tiny|attention)$";
  cfg->solvers = "fake_opts";
  cfg->extra_solvers = OPTS_SOLVER;
  cfg->n_extra_solvers = 1;
  cfg->jobs = 1;
}

/* muzero options: 1 sets them with fine-tuning by seconds, 2 by updates, 3 by updates with a
 * leaf rollout of 7 steps, 4 with none, 5 by updates with pUCT search (0: the defaults) */
static void set_muzero(mb_run_config *cfg, int muzero) {
  if (!muzero) return;
  cfg->simulations = 4;
  cfg->c_scale = 2.5;
  cfg->finetune = muzero == 1 ? 0.25 : 0;
  cfg->finetune_steps = muzero >= 2 ? 300 : 0;
  cfg->leaf_rollout = muzero == 3 ? 7 : muzero == 4 ? MB_SOLVER_NO_LEAF_ROLLOUT : 0;
  cfg->search = muzero == 5 ? MB_SOLVER_SEARCH_PUCT : MB_SOLVER_SEARCH_GUMBEL;
}

/* The plan options come from the file (or its journal) on resume: none given here. */
static void opts_resume_config(const fixture *f, mb_run_config *cfg, const char *file) {
  opts_config(f, cfg, NULL);
  as_resume(cfg, file);
}

/* Interrupts a run into `out` after one commit and cuts its journal to the header line
 * (returned, malloc'd): a resume then computes every task again, with the options it restored
 * (the file's rows are not taken when a journal exists). */
static char *interrupted_with(const fixture *f, const char *out, int muzero, double bound_budget) {
  mb_run_config cfg;
  mb_run_stats st;
  opts_config(f, &cfg, out);
  set_muzero(&cfg, muzero);
  cfg.bound_budget = bound_budget;
  cfg.stop_after = 1;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  assert_true(st.stopped);
  char j[4200];
  snprintf(j, sizeof j, "%s.journal", out);
  FILE *in = fopen(j, "r");
  assert_non_null(in);
  char *line = malloc(1 << 16);
  assert_non_null(line);
  assert_non_null(fgets(line, 1 << 16, in));
  fclose(in);
  FILE *o = fopen(j, "w");
  assert_non_null(o);
  fputs(line, o);
  fclose(o);
  return line;
}

static char *interrupted(const fixture *f, const char *out, int muzero) {
  return interrupted_with(f, out, muzero, 0);
}

static void resume_all(const fixture *f, const char *file) {
  mb_run_config cfg;
  mb_run_stats st;
  opts_resume_config(f, &cfg, file);
  run_ok(&cfg, &st);
  fclose(cfg.log);
  assert_int_equal(st.tasks_run, st.tasks_total);
}

/* Asserts that `run --resume file` fails with a message containing `why`. */
static void resume_refused(const fixture *f, const char *file, const char *why) {
  mb_run_config cfg;
  mb_run_stats st;
  mb_error err = {{0}};
  opts_resume_config(f, &cfg, file);
  assert_false(mb_run(&cfg, &st, &err));
  if (!strstr(err.message, why)) fail_msg("resume of %s: '%s' lacks '%s'", file, err.message, why);
  fclose(cfg.log);
}

static char *attr_string(const char *path, const char *key) {
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  char *v = mb_results_get_attr_string(r, key, &err);
  if (!v) fail_msg("%s: %s", key, err.message);
  mb_results_close(r, NULL);
  return v;
}

/* Whether two files record the same plan hash. */
static bool same_plan(const char *a, const char *b) {
  char *ha = attr_string(a, "plan_sha256"), *hb = attr_string(b, "plan_sha256");
  bool same = !strcmp(ha, hb);
  free(ha);
  free(hb);
  return same;
}

/* Every row was computed with these options. */
static void assert_solved_with(const char *path, int sims, double c_scale, double finetune,
                               int64_t steps, int leaf, int search) {
  tables t = {0};
  read_tables(path, &t);
  char want[256];
  snprintf(want, sizeof want, "sims %d c_scale %.17g finetune %.17g steps %lld leaf %d search %d",
           sims, c_scale, finetune, (long long)steps, leaf, search);
  assert_int_equal(t.n_rows, 2 * 2);
  for (int64_t i = 0; i < t.n_rows; i++) assert_string_equal(t.rows[i].note, want);
  free_tables(&t);
}

/* The file records these options. */
static void assert_stored(const char *path, int sims, double c_scale, double finetune,
                          int64_t steps, int leaf, int search) {
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  int64_t s = -1, fs = -1, lr = -2;
  double c = -1, ft = -1;
  assert_true(mb_results_get_attr_int(r, "run_simulations", &s, &err));
  assert_true(mb_results_get_attr_double(r, "run_c_scale", &c, &err));
  assert_true(mb_results_get_attr_double(r, "run_finetune_s", &ft, &err));
  assert_true(mb_results_get_attr_int(r, "run_finetune_steps", &fs, &err));
  assert_true(mb_results_get_attr_int(r, "run_leaf_rollout", &lr, &err));
  char *kind = mb_results_get_attr_string(r, "run_search", &err);
  mb_results_close(r, NULL);
  assert_non_null(kind);
  assert_string_equal(kind, mb_solver_search_name(search));
  free(kind);
  assert_int_equal(s, sims);
  assert_true(c == c_scale && ft == finetune);
  assert_int_equal(fs, steps);
  assert_int_equal(lr, leaf);
}

static const char *const MUZERO_ATTRS[] = {"run_simulations",  "run_c_scale",
                                           "run_finetune_s",   "run_finetune_steps",
                                           "run_leaf_rollout", "run_search"};

/* Makes a file look like one written before the options existed. */
static void delete_muzero_attrs(const char *path) {
  hid_t fid = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(fid >= 0);
  for (size_t i = 0; i < sizeof MUZERO_ATTRS / sizeof *MUZERO_ATTRS; i++)
    assert_true(H5Adelete(fid, MUZERO_ATTRS[i]) >= 0);
  assert_true(H5Fclose(fid) >= 0);
  assert_true(mb_results_unseal(path, NULL)); /* an older writer left no seal */
}

static void test_muzero_options_reach_solvers_and_resume(void **state) {
  fixture *f = *state;
  char *full = path_in(f, "mz_full.h5"), *plain = path_in(f, "mz_plain.h5"),
       *part = path_in(f, "mz_part.h5"), *wreck = path_in(f, "mz_wreck.h5");
  mb_run_config cfg;
  mb_run_stats st;
  /* a fresh run: the solvers get the options, the file stores them */
  opts_config(f, &cfg, full);
  set_muzero(&cfg, 1);
  run_ok(&cfg, &st);
  fclose(cfg.log);
  assert_solved_with(full, 4, 2.5, 0.25, 0, 0, MB_SOLVER_SEARCH_GUMBEL);
  assert_stored(full, 4, 2.5, 0.25, 0, 0, MB_SOLVER_SEARCH_GUMBEL);
  /* they are part of the plan: the same run at the defaults hashes differently */
  opts_config(f, &cfg, plain);
  run_ok(&cfg, &st);
  fclose(cfg.log);
  assert_solved_with(plain, 0, 0, 0, 0, 0, MB_SOLVER_SEARCH_GUMBEL);
  assert_stored(plain, 0, 0, 0, 0, 0, MB_SOLVER_SEARCH_GUMBEL);
  assert_false(same_plan(full, plain));

  /* resumed from the file's attributes */
  char *head = interrupted(f, part, 1);
  assert_non_null(strstr(head,
                         " budget 0.20000000000000001 simulations 4 c_scale 2.5 "
                         "finetune 0.25 plan s"));
  free(head);
  resume_all(f, part);
  assert_solved_with(part, 4, 2.5, 0.25, 0, 0, MB_SOLVER_SEARCH_GUMBEL);
  assert_stored(part, 4, 2.5, 0.25, 0, 0, MB_SOLVER_SEARCH_GUMBEL);
  assert_true(same_plan(part, full));

  /* resumed from the journal's header alone: the HDF5 file no longer opens */
  free(interrupted(f, wreck, 1));
  assert_int_equal(truncate(wreck, 2048), 0);
  resume_all(f, wreck);
  assert_solved_with(wreck, 4, 2.5, 0.25, 0, 0, MB_SOLVER_SEARCH_GUMBEL);
  assert_stored(wreck, 4, 2.5, 0.25, 0, 0, MB_SOLVER_SEARCH_GUMBEL);
  assert_true(same_plan(wreck, full));
  free(full);
  free(plain);
  free(part);
  free(wreck);
}

/* Each mallocMuZero option alone makes another plan than the defaults, and no two of them make
 * the same: every one enters the plan hash when set (and only then, so that a default plan keeps
 * the hash of plans made before the options existed). */
static void test_each_muzero_option_changes_the_plan(void **state) {
  fixture *f = *state;
  enum { N_VARIANTS = 7 };
  char *files[N_VARIANTS];
  for (int v = 0; v < N_VARIANTS; v++) {
    char name[32];
    snprintf(name, sizeof name, "mz_alone%d.h5", v);
    files[v] = path_in(f, name);
    mb_run_config cfg;
    mb_run_stats st;
    opts_config(f, &cfg, files[v]);
    if (v == 1) cfg.simulations = 4;
    if (v == 2) cfg.c_scale = 2.5;
    if (v == 3) cfg.finetune = 0.25;
    if (v == 4) cfg.finetune_steps = 300;
    if (v == 5) cfg.leaf_rollout = 7;
    if (v == 6) cfg.search = MB_SOLVER_SEARCH_PUCT;
    run_ok(&cfg, &st);
    fclose(cfg.log);
  }
  for (int a = 0; a < N_VARIANTS; a++)
    for (int b = a + 1; b < N_VARIANTS; b++)
      if (same_plan(files[a], files[b])) fail_msg("variants %d and %d: the same plan", a, b);
  /* The hashes of the default plan and of one with only the oldest option (simulations), pinned:
   * neither may change when an option is added (nor by anything else not meant to stop older
   * files from resuming: a change of the results or workload format, of a built-in workload, of
   * this fixture). Mutants that made the default plan hash its options, an option alone leave
   * them out, or the search kind enter every plan with options, all kept the variants distinct. */
  const char *pinned[2] = {"e85332b417e2f9fa2e3e24d3d77fcd0417b5ced46cd53395691373b264bf1135",
                           "dc3bbf34aa919da50c3f89fb71a4288022b28679f9157bd3c61d2193695ce9a3"};
  for (int v = 0; v < 2; v++) {
    char *plan = attr_string(files[v], "plan_sha256");
    if (strcmp(plan, pinned[v])) fail_msg("variant %d: plan %s, pinned %s", v, plan, pinned[v]);
    free(plan);
  }
  for (int v = 0; v < N_VARIANTS; v++) free(files[v]);
}

/* Options `muzero` (set_muzero, fine-tuned by updates: finetune 0, 300 steps) survive an
 * interruption: the journal header has `header`; resumed from the file (`part`) and from the
 * journal alone (`wreck`, whose HDF5 file no longer opens), every row was solved with them and
 * the file stores them. */
static void resume_from_file_and_journal(const fixture *f, const char *part, const char *wreck,
                                         int muzero, const char *header, int leaf, int search) {
  char *head = interrupted(f, part, muzero);
  if (!strstr(head, header)) fail_msg("journal header '%s' lacks '%s'", head, header);
  free(head);
  resume_all(f, part);
  assert_solved_with(part, 4, 2.5, 0, 300, leaf, search);
  assert_stored(part, 4, 2.5, 0, 300, leaf, search);
  free(interrupted(f, wreck, muzero));
  assert_int_equal(truncate(wreck, 2048), 0);
  resume_all(f, wreck);
  assert_solved_with(wreck, 4, 2.5, 0, 300, leaf, search);
  assert_stored(wreck, 4, 2.5, 0, 300, leaf, search);
}

/* Fine-tuning by updates: a plan option like the others, stored, in the journal header only
 * when set (so the header of a run fine-tuned by seconds is unchanged), restored on resume from
 * the file or from the journal alone. */
static void test_finetune_steps_plan_and_resume(void **state) {
  fixture *f = *state;
  char *part = path_in(f, "fs_part.h5"), *wreck = path_in(f, "fs_wreck.h5"),
       *secs = path_in(f, "fs_secs.h5");
  resume_from_file_and_journal(f, part, wreck, 2,
                               " simulations 4 c_scale 2.5 finetune 0 finetune_steps 300 plan s", 0,
                               MB_SOLVER_SEARCH_GUMBEL);
  /* a different plan from the same options fine-tuned by seconds (and no steps in its header) */
  char *head = interrupted(f, secs, 1);
  assert_null(strstr(head, "finetune_steps"));
  free(head);
  assert_true(same_plan(part, wreck));
  assert_false(same_plan(part, secs));
  free(part);
  free(wreck);
  free(secs);
}

/* The leaf rollout: a plan option like the others, in the journal header only when set, stored,
 * restored on resume from the file or from the journal alone; "none" (MB_SOLVER_NO_LEAF_ROLLOUT)
 * is a plan of its own, neither the default's nor a rollout's. */
static void test_leaf_rollout_plan_and_resume(void **state) {
  fixture *f = *state;
  char *part = path_in(f, "lr_part.h5"), *wreck = path_in(f, "lr_wreck.h5"),
       *none = path_in(f, "lr_none.h5"), *steps = path_in(f, "lr_steps.h5");
  resume_from_file_and_journal(f, part, wreck, 3, " finetune_steps 300 leaf_rollout 7 plan s", 7,
                               MB_SOLVER_SEARCH_GUMBEL);
  char *head = interrupted(f, none, 4);
  assert_non_null(strstr(head, " leaf_rollout -1 plan s"));
  free(head);
  resume_all(f, none);
  assert_solved_with(none, 4, 2.5, 0, 300, MB_SOLVER_NO_LEAF_ROLLOUT, MB_SOLVER_SEARCH_GUMBEL);
  assert_stored(none, 4, 2.5, 0, 300, MB_SOLVER_NO_LEAF_ROLLOUT, MB_SOLVER_SEARCH_GUMBEL);
  head = interrupted(f, steps, 2);
  assert_null(strstr(head, "leaf_rollout"));
  free(head);
  assert_true(same_plan(part, wreck));
  assert_false(same_plan(part, none));
  assert_false(same_plan(part, steps));
  assert_false(same_plan(none, steps));
  free(part);
  free(wreck);
  free(none);
  free(steps);
}

/* The search kind: a plan option like the others, in the journal header only when it is not
 * Gumbel (the default), stored by name, restored on resume from the file or from the journal
 * alone; a file naming an unknown kind does not resume. */
static void test_search_plan_and_resume(void **state) {
  fixture *f = *state;
  char *part = path_in(f, "sk_part.h5"), *wreck = path_in(f, "sk_wreck.h5"),
       *gumbel = path_in(f, "sk_gumbel.h5"), *unknown = path_in(f, "sk_unknown.h5");
  resume_from_file_and_journal(f, part, wreck, 5, " finetune_steps 300 search puct plan s", 0,
                               MB_SOLVER_SEARCH_PUCT);
  char *head = interrupted(f, gumbel, 2);
  assert_null(strstr(head, "search"));
  free(head);
  assert_true(same_plan(part, wreck));
  assert_false(same_plan(part, gumbel));

  /* an unknown kind in the file: refused by name */
  free(interrupted(f, unknown, 5));
  mb_error err = {{0}};
  mb_results *r = mb_results_open(unknown, true, &err);
  if (!r) fail_msg("%s", err.message);
  assert_true(mb_results_set_attr_string(r, "run_search", "mcts", &err));
  mb_results_close(r, NULL);
  resume_refused(f, unknown, "run_search 'mcts': expected gumbel or puct");
  /* stored numbers past their ranges: refused with the file and the attribute named */
  const struct {
    const char *attr;
    int64_t value;
    const char *why;
  } bad[] = {
      {"run_simulations", MB_SOLVER_MAX_SIMULATIONS + 1, "run_simulations 1000001: expected"},
      {"run_finetune_steps", MB_SOLVER_MAX_FINETUNE_STEPS + 1,
       "run_finetune_steps 100000001: expected updates in 0..100000000"},
      {"run_leaf_rollout", MB_SOLVER_MAX_LEAF_ROLLOUT + 1,
       "run_leaf_rollout 100001: expected steps in 0..100000"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    r = mb_results_open(unknown, true, &err);
    if (!r) fail_msg("%s", err.message);
    assert_true(mb_results_set_attr_string(r, "run_search", "gumbel", &err));
    assert_true(mb_results_set_attr_int(r, bad[i].attr, bad[i].value, &err));
    mb_results_close(r, NULL);
    char why[256];
    snprintf(why, sizeof why, "%s: %s", unknown, bad[i].why);
    resume_refused(f, unknown, why);
    r = mb_results_open(unknown, true, &err);
    if (!r) fail_msg("%s", err.message);
    assert_true(mb_results_set_attr_int(r, bad[i].attr, 0, &err));
    mb_results_close(r, NULL);
  }
  free(part);
  free(wreck);
  free(gumbel);
  free(unknown);
}

/* At the defaults the journal header is the one runs wrote before these options existed, and a
 * file without their attributes (written before) resumes at the defaults. A file whose options
 * were set and then lost does not resume: the plan hash covers them. Bad values are refused
 * before any file is created. */
static void test_muzero_options_defaults_keep_old_plans(void **state) {
  fixture *f = *state;
  char *old = path_in(f, "mz_old.h5"), *lost = path_in(f, "mz_lost.h5");
  char *head = interrupted(f, old, 0);
  char want[256];
  snprintf(want, sizeof want, "mallocbench-journal 1 seeds %d budget %.17g plan s", 2, 0.2);
  if (strncmp(head, want, strlen(want))) fail_msg("journal header: %s", head);
  assert_null(strstr(head, "simulations"));
  assert_null(strstr(head, "c_scale"));
  assert_null(strstr(head, "finetune"));
  free(head);
  delete_muzero_attrs(old);
  resume_all(f, old);
  assert_solved_with(old, 0, 0, 0, 0, 0, MB_SOLVER_SEARCH_GUMBEL);

  free(interrupted(f, lost, 1));
  delete_muzero_attrs(lost);
  resume_refused(f, lost, "plan changed");

  mb_run_config cfg;
  mb_run_stats st;
  mb_error err = {{0}};
  char *bad = path_in(f, "mz_bad.h5");
  struct {
    int sims;
    double c_scale, finetune;
    int64_t steps;
    int leaf, search;
    const char *field;
  } cases[] = {{-1, 0, 0, 0, 0, 0, "--simulations -1"},
               {2000000, 0, 0, 0, 0, 0, "--simulations 2000000"},
               {0, -1, 0, 0, 0, 0, "--c-scale -1"},
               {0, NAN, 0, 0, 0, 0, "--c-scale nan"},
               {0, INFINITY, 0, 0, 0, 0, "--c-scale inf"},
               {0, 0, -0.5, 0, 0, 0, "--finetune -0.5"},
               {0, 0, NAN, 0, 0, 0, "--finetune nan"},
               {0, 0, 0, -1, 0, 0, "--finetune-steps -1"},
               {0, 0, 0, 200000000, 0, 0, "--finetune-steps 200000000"},
               {0, 0, 5, 100, 0, 0, "--finetune and --finetune-steps"},
               {0, 0, 0, 0, -5, 0, "--leaf-rollout -5"},
               {0, 0, 0, 0, 200000, 0, "--leaf-rollout 200000"},
               {0, 0, 0, 0, 0, 2, "--search 2"},
               {0, 0, 0, 0, 0, -1, "--search -1"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    opts_config(f, &cfg, bad);
    cfg.simulations = cases[i].sims;
    cfg.c_scale = cases[i].c_scale;
    cfg.finetune = cases[i].finetune;
    cfg.finetune_steps = cases[i].steps;
    cfg.leaf_rollout = cases[i].leaf;
    cfg.search = cases[i].search;
    assert_false(mb_run(&cfg, &st, &err));
    if (!strstr(err.message, cases[i].field))
      fail_msg("case %zu: '%s' does not name '%s'", i, err.message, cases[i].field);
    fclose(cfg.log);
    assert_int_not_equal(access(bad, F_OK), 0);
  }
  free(bad);
  free(old);
  free(lost);
}

static double attr_double(const char *path, const char *key) {
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  double v = NAN;
  if (!mb_results_get_attr_double(r, key, &v, &err)) fail_msg("%s", err.message);
  mb_results_close(r, NULL);
  return v;
}

/* Makes a file look like one written before --bound-budget existed. */
static void delete_bound_budget_attr(const char *path) {
  hid_t fid = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(fid >= 0);
  assert_true(H5Adelete(fid, "run_bound_budget_s") >= 0);
  assert_true(H5Fclose(fid) >= 0);
  assert_true(mb_results_unseal(path, NULL));
}

/* The LP bound's time limit (--bound-budget): a plan option, stored as run_bound_budget_s (the
 * profile's when not given), in the journal header only when it is not the profile's, restored
 * on resume from the file or from the journal alone. A file written before it existed resumes
 * with the profile's; one whose value was set and then lost does not (the plan hash has it). */
static void test_bound_budget_plan_and_resume(void **state) {
  fixture *f = *state;
  char *def = path_in(f, "bb_default.h5"), *ten = path_in(f, "bb_ten.h5"),
       *part = path_in(f, "bb_part.h5"), *wreck = path_in(f, "bb_wreck.h5"),
       *lost = path_in(f, "bb_lost.h5");
  /* the quick profile's 10 s: not in the header, stored, and given explicitly the same plan */
  char *head = interrupted_with(f, def, 0, 0);
  assert_null(strstr(head, "bound_budget"));
  free(head);
  assert_true(attr_double(def, "run_bound_budget_s") == 10);
  head = interrupted_with(f, ten, 0, 10);
  assert_null(strstr(head, "bound_budget"));
  free(head);
  assert_true(same_plan(def, ten));
  /* written before the option existed: resumes with the profile's (the plan hash agrees) */
  delete_bound_budget_attr(def);
  resume_all(f, def);
  /* another value: in the header, stored, another plan, restored from the file... */
  head = interrupted_with(f, part, 0, 0.25);
  assert_non_null(strstr(head, " budget 0.20000000000000001 bound_budget 0.25 plan s"));
  free(head);
  assert_false(same_plan(part, ten));
  resume_all(f, part);
  assert_true(attr_double(part, "run_bound_budget_s") == 0.25);
  /* ...and from the journal's header alone */
  free(interrupted_with(f, wreck, 0, 0.25));
  assert_int_equal(truncate(wreck, 2048), 0);
  resume_all(f, wreck);
  assert_true(attr_double(wreck, "run_bound_budget_s") == 0.25);
  assert_true(same_plan(part, wreck));
  /* set, then lost from the file: the plan changed */
  free(interrupted_with(f, lost, 0, 0.25));
  delete_bound_budget_attr(lost);
  resume_refused(f, lost, "plan changed");
  /* bad values are refused before any file is created */
  mb_run_config cfg;
  mb_run_stats st;
  mb_error err = {{0}};
  char *bad = path_in(f, "bb_bad.h5");
  const double values[] = {-1, NAN, INFINITY, 2e9};
  for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
    opts_config(f, &cfg, bad);
    cfg.bound_budget = values[i];
    mb_error_clear(&err);
    assert_false(mb_run(&cfg, &st, &err));
    if (!strstr(err.message, "--bound-budget "))
      fail_msg("bound budget %g: '%s' does not name the option", values[i], err.message);
    fclose(cfg.log);
    assert_int_not_equal(access(bad, F_OK), 0);
  }
  free(def);
  free(ten);
  free(part);
  free(wreck);
  free(lost);
  free(bad);
}

/* A run resumed without its journal adopts the file's rows and records the catalogue's split
 * on copies stored before splits existed; a split changed in the catalogue since is recorded
 * with a note in the log. */
static void test_split_on_resume_without_journal(void **state) {
  fixture *f = *state;
  char *p = path_in(f, "split_old.h5"), *cat3 = path_in(f, "cat_split.txt"),
       *log = path_in(f, "split_resume.log");
  mb_run_config cfg;
  mb_run_stats st;
  base_config(f, &cfg, p);
  cfg.stop_after = 4;
  run_ok(&cfg, &st);
  fclose(cfg.log);
  assert_true(st.stopped);
  char j[4200];
  snprintf(j, sizeof j, "%s.journal", p);
  assert_int_equal(unlink(j), 0);
  /* mlp_tiny's copy as an older writer left it; attention keeps "train" */
  hid_t fid = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(fid >= 0);
  assert_true(H5Adelete_by_name(fid, "/workloads/mlp_tiny", "split", H5P_DEFAULT) >= 0);
  assert_true(H5Fclose(fid) >= 0);
  assert_true(mb_results_unseal(p, NULL)); /* an older writer left no seal */
  assert_splits(p, "", "train", "test");
  /* the same catalogue with attention moved to the test split (splits are not in the plan) */
  char *text = mb_read_file(f->catalogue, NULL);
  assert_non_null(text);
  char *at = strstr(text, "4MiB train quick");
  assert_non_null(at);
  memcpy(at + 5, "test ", 5);
  FILE *c = fopen(cat3, "w");
  fputs(text, c);
  fclose(c);
  free(text);
  mb_run_config rc;
  base_config(f, &rc, NULL);
  fclose(rc.log);
  rc.log = fopen(log, "w");
  as_resume(&rc, p);
  rc.catalogue = cat3;
  run_ok(&rc, &st);
  fclose(rc.log);
  assert_true(st.tasks_reused >= 4);
  assert_splits(p, "test", "test", "test");
  char *logged = mb_read_file(log, NULL);
  assert_non_null(logged);
  if (!strstr(logged, "workload 'attention' is now in the test split (was train"))
    fail_msg("no note of the changed split in the log:\n%s", logged);
  assert_null(strstr(logged, "'mlp_tiny' is now")); /* a missing split is no change */
  free(logged);
  free(p);
  free(cat3);
  free(log);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_determinism_and_skip),
      cmocka_unit_test(test_resume_equals_uninterrupted),
      cmocka_unit_test(test_resume_rewrites_damaged_journal),
      cmocka_unit_test(test_resume_records_its_build),
      cmocka_unit_test(test_errors_leave_files_intact),
      cmocka_unit_test(test_verify_detects_tampering),
      cmocka_unit_test(test_export_csv),
      cmocka_unit_test(test_curves_invalid_and_errors),
      cmocka_unit_test(test_old_journal_without_reference),
      cmocka_unit_test(test_muzero_options_reach_solvers_and_resume),
      cmocka_unit_test(test_each_muzero_option_changes_the_plan),
      cmocka_unit_test(test_finetune_steps_plan_and_resume),
      cmocka_unit_test(test_leaf_rollout_plan_and_resume),
      cmocka_unit_test(test_search_plan_and_resume),
      cmocka_unit_test(test_muzero_options_defaults_keep_old_plans),
      cmocka_unit_test(test_bound_budget_plan_and_resume),
      cmocka_unit_test(test_split_on_resume_without_journal),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
