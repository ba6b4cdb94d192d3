/* The benchmark driver end to end, in process: determinism across --jobs, resume after an
 * interruption, skipping entries with missing data, errors that leave files intact, and the
 * verify/export commands on the files it writes. Uses the built-in samples through a
 * catalogue written to a temporary directory, so it needs no external data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "paths.h"
#include "results.h"
#include "solver.h"
#include "support.h"

typedef struct fixture {
  char *dir;
  char catalogue[4096];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = mb_test_temp_dir();
  if (!f->dir) return -1;
  snprintf(f->catalogue, sizeof f->catalogue, "%s/catalogue.txt", f->dir);
  FILE *c = fopen(f->catalogue, "w");
  if (!c) return -1;
  const char *src = mb_source_dir();
  fprintf(c, "name kind source args hardware capacity split tags\n");
  fprintf(c, "mlp_tiny native %s/datasets/samples/mlp_tiny.wl - tpu-v4i 2MiB test quick\n", src);
  fprintf(c, "attention native %s/datasets/samples/attention_block.wl - tpu-v4i 4MiB test quick\n",
          src);
  fprintf(c, "conv native %s/datasets/samples/conv_block.wl - edge-npu profile test -\n", src);
  fprintf(c, "buffers native %s/datasets/samples/buffers_only.wl - tpu-v4i profile test quick\n",
          src);
  fprintf(c, "ghost hlo no/such/dump.hlo - tpu-v4i profile test quick\n");
  fclose(c);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  free(f->dir);
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
  const char *attrs[] = {"mallocbench_version", "git_commit",   "compiler",
                         "build_type",          "command_line", "catalogue_sha256",
                         "hardware_sha256",     "seeds",        "host",
                         "start_time",          "end_time",     "plan_sha256"};
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
  fclose(cfg.log);
  for (int k = 0; k < 2; k++) {
    mb_run_config rc;
    base_config(f, &rc, NULL);
    rc.workloads = rc.solvers = NULL;
    rc.seeds = 0;
    rc.budget = 0;
    rc.resume = part;
    rc.stop_after = k == 0 ? 3 : 0;
    run_ok(&rc, &st);
    assert_true(st.tasks_reused >= 4);
    fclose(rc.log);
  }
  tables a = {0}, b = {0};
  read_tables(full, &a);
  read_tables(part, &b);
  assert_same_tables(&a, &b);
  free_tables(&a);
  free_tables(&b);
  /* resuming a complete file changes nothing */
  struct stat s1, s2;
  assert_int_equal(stat(part, &s1), 0);
  mb_run_config rc;
  base_config(f, &rc, NULL);
  rc.workloads = rc.solvers = NULL;
  rc.seeds = 0;
  rc.budget = 0;
  rc.resume = part;
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
  rc.workloads = rc.solvers = NULL;
  rc.seeds = 0;
  rc.budget = 0;
  rc.resume = p;
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
  snprintf(path, sizeof path, "%s/workloads.csv", dir);
  in = fopen(path, "r");
  int lines = 0;
  while (fgets(line, sizeof line, in)) lines++;
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
    {"fake_curve", "heuristic plus a training curve", fake_curve},
    {"fake_invalid", "an assignment past capacity", fake_invalid},
    {"fake_error", "always fails", fake_error},
};

static void fake_config(const fixture *f, mb_run_config *cfg, const char *out) {
  base_config(f, cfg, out);
  cfg->solvers = "heuristic,fake_curve,fake_invalid,fake_error";
  cfg->extra_solvers = FAKES;
  cfg->n_extra_solvers = 3;
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
  fake_config(f, &cfg, NULL);
  cfg.workloads = cfg.solvers = NULL;
  cfg.seeds = 0;
  cfg.budget = 0;
  cfg.resume = part;
  run_ok(&cfg, &st);
  fclose(cfg.log);
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
  mb_results_close(r, NULL);
  /* a file with invalid and failed rows is still consistent: verify passes */
  char args[4200];
  snprintf(args, sizeof args, "verify %s", part);
  assert_int_equal(cli(args), 0);
  free_tables(&a);
  free_tables(&b);
  free(full);
  free(part);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_determinism_and_skip),
      cmocka_unit_test(test_resume_equals_uninterrupted),
      cmocka_unit_test(test_errors_leave_files_intact),
      cmocka_unit_test(test_verify_detects_tampering),
      cmocka_unit_test(test_export_csv),
      cmocka_unit_test(test_curves_invalid_and_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
