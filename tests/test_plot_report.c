/* Figures and reports on a small results file produced here by the driver: every expected file
 * exists, PNGs carry the PNG signature and are not blank, the numbers in the report equal
 * those computed independently from the HDF5 rows, LaTeX tables compile where pdflatex exists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "paths.h"
#include "plot.h"
#include "report.h"
#include "result_matrix.h"
#include "results.h"
#include "solver.h"
#include "support.h"

typedef struct fixture {
  char *dir;
  char results[1024];
} fixture;

static const char *CATALOGUE =
    "name kind source args hardware capacity split tags\n"
    "mlp_tiny native datasets/samples/mlp_tiny.wl - tpu-v4i 1048576 train mlp\n"
    "attention_block native datasets/samples/attention_block.wl - tpu-v4i 8388608 test attention\n"
    "conv_block native datasets/samples/conv_block.wl - tpu-v4i 3211264 train conv\n"
    "strassen2_1024_f32-gpu alphatensor builtin:strassen_squared n=1024,dtype=f32 gpu-l2 262144 "
    "test matmul\n";

/* A stand-in for an agent-based solver: the heuristic's answer plus a training curve that is
 * the same on every workload (one agent), so the curve figure must draw it once. */
static bool curve_solver(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                         mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err) {
  if (!mb_solve_heuristic(w, hw, opt, rng, out, stats, err)) return false;
  stats->curve_len = 20;
  stats->curve_step = malloc(20 * sizeof(double));
  stats->curve_return = malloc(20 * sizeof(double));
  for (int i = 0; i < 20; i++) {
    stats->curve_step[i] = 100.0 * i;
    stats->curve_return[i] = 0.1 * (1.0 - 1.0 / (1.0 + i));
  }
  return true;
}

static const mb_solver EXTRA[] = {{"with_curve", "heuristic plus a training curve", curve_solver}};

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  fx->dir = mb_test_temp_dir();
  char catalogue[1024];
  snprintf(catalogue, sizeof catalogue, "%s/catalogue.txt", fx->dir);
  FILE *f = fopen(catalogue, "w");
  fputs(CATALOGUE, f);
  fclose(f);
  snprintf(fx->results, sizeof fx->results, "%s/results.h5", fx->dir);
  char cache[1024];
  snprintf(cache, sizeof cache, "%s/cache", fx->dir);
  mb_run_config cfg = {.profile = "quick",
                       .workloads = ".",
                       .solvers = "heuristic,greedy,with_curve",
                       .extra_solvers = EXTRA,
                       .n_extra_solvers = 1,
                       .seeds = 2,
                       .jobs = 2,
                       .budget = 0.2,
                       .catalogue = catalogue,
                       .out = fx->results,
                       .command_line = "test_plot_report"};
  FILE *log = fopen("/dev/null", "w");
  cfg.log = log;
  mb_run_stats stats;
  mb_error err;
  bool ok = mb_run(&cfg, &stats, &err);
  fclose(log);
  if (!ok) {
    fprintf(stderr, "setup: mb_run failed: %s\n", err.message);
    return -1;
  }
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
  if (system(cmd) != 0) fprintf(stderr, "teardown: could not remove %s\n", fx->dir);
  free(fx->dir);
  free(fx);
  return 0;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_plot_writes_every_figure(void **state) {
  fixture *fx = *state;
  char out[1024];
  snprintf(out, sizeof out, "%s/figures", fx->dir);
  mb_plot_options opt = {.out_dir = out, .formats = MB_PLOT_PNG | MB_PLOT_SVG};
  mb_plot_outputs outputs;
  mb_error err;
  char gnuplot[1024];
  if (!mb_plot_find_gnuplot(gnuplot, sizeof gnuplot)) skip();
  if (!mb_plot_all(fx->results, &opt, &outputs, &err)) fail_msg("%s", err.message);
  const char *expected[] = {"speedup_per_workload", "speedup_distribution", "gap_to_bound",
                            "walltime_vs_size",     "training_curves",      "memory_map"};
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    char png[1200];
    snprintf(png, sizeof png, "%s/%s.png", out, expected[i]);
    FILE *f = fopen(png, "rb");
    if (!f) fail_msg("missing figure %s", png);
    unsigned char sig[8] = {0};
    assert_int_equal(fread(sig, 1, 8, f), 8);
    fclose(f);
    const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    assert_memory_equal(sig, png_sig, 8);
    /* a blank 1000x650 canvas compresses to a few KB; a drawn figure is far larger */
    if (file_size(png) < 12000) fail_msg("%s looks blank (%ld bytes)", png, file_size(png));
    char svg[1200];
    snprintf(svg, sizeof svg, "%s/%s.svg", out, expected[i]);
    assert_true(file_size(svg) > 2000);
  }
  assert_int_equal(outputs.n, 12);
  /* one agent's curve, reported by every job of the solver, is drawn once under both seeds */
  char svg[1200];
  snprintf(svg, sizeof svg, "%s/training_curves.svg", out);
  char *text = mb_read_file(svg, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "with_curve/seed0,with_curve/seed1"));
  free(text);
}

static void test_plot_errors(void **state) {
  fixture *fx = *state;
  mb_error err;
  mb_plot_outputs outputs;
  char out[1024];
  snprintf(out, sizeof out, "%s/figures-bad", fx->dir);
  /* a template directory without the templates: the error names the template */
  mb_plot_options opt = {.out_dir = out, .formats = MB_PLOT_PNG, .templates_dir = fx->dir};
  assert_false(mb_plot_all(fx->results, &opt, &outputs, &err));
  assert_non_null(strstr(err.message, "plots/speedup_bars.gp: template not found"));
  /* a broken template: gnuplot's error is reported with the template's name */
  char tdir[1024], tpl[1200], cmd[3000];
  snprintf(tdir, sizeof tdir, "%s/broken-plots", fx->dir);
  mb_mkdir_p(tdir);
  snprintf(cmd, sizeof cmd, "cp '%s/plots/'*.gp '%s/'", mb_source_dir(), tdir);
  assert_int_equal(system(cmd), 0);
  snprintf(tpl, sizeof tpl, "%s/speedup_bars.gp", tdir);
  FILE *f = fopen(tpl, "a");
  fputs("plot this_is_not_a_function(x)\n", f);
  fclose(f);
  opt.templates_dir = tdir;
  assert_false(mb_plot_all(fx->results, &opt, &outputs, &err));
  assert_non_null(strstr(err.message, "plots/speedup_bars.gp: gnuplot failed"));
  unsigned formats;
  assert_false(mb_plot_parse_formats("png,gif", &formats, &err));
  assert_string_equal(err.message, "--format: unknown format 'gif' (expected png, pdf or svg)");
  /* a file that is not a results file */
  char bogus[1200];
  snprintf(bogus, sizeof bogus, "%s/catalogue.txt", fx->dir);
  opt.templates_dir = NULL;
  assert_false(mb_plot_all(bogus, &opt, &outputs, &err));
}

/* Finds the Markdown summary row of a solver and returns its geomean column. */
static double report_geomean(const char *md, const char *solver) {
  char key[128];
  snprintf(key, sizeof key, "\n| %s | ", solver);
  const char *row = strstr(md, key);
  if (!row) return NAN;
  int cases;
  double geomean;
  char rest[64];
  snprintf(key, sizeof key, "\n| %s | %%d | %%lf | %%63s", solver);
  if (sscanf(row, key, &cases, &geomean, rest) != 3) return NAN;
  return geomean;
}

static void test_report_numbers_match_hdf5(void **state) {
  fixture *fx = *state;
  char md[1200], tex[1024];
  snprintf(md, sizeof md, "%s/REPORT.md", fx->dir);
  snprintf(tex, sizeof tex, "%s/generated", fx->dir);
  mb_report_options opt = {.markdown_path = md, .tex_dir = tex};
  mb_error err;
  if (!mb_report_write(fx->results, &opt, &err)) fail_msg("%s", err.message);
  char *text = mb_read_file(md, NULL);
  assert_non_null(text);

  /* independent computation from the raw rows: geometric mean over cases of the per-case
   * geometric mean over seeds */
  mb_results *r = mb_results_open(fx->results, false, &err);
  assert_non_null(r);
  mb_result_row *rows;
  int64_t n;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  mb_results_close(r, NULL);
  double log_sum = 0;
  int cases = 0;
  for (int64_t i = 0; i < n; i++) {
    if (strcmp(rows[i].solver, "greedy") || rows[i].seed != 0) continue;
    double case_log = 0;
    int seeds = 0;
    for (int64_t j = 0; j < n; j++)
      if (!strcmp(rows[j].solver, "greedy") && !strcmp(rows[j].workload, rows[i].workload) &&
          !strcmp(rows[j].hardware, rows[i].hardware)) {
        case_log += log(rows[j].t_heuristic_ps / (double)rows[j].t_solver_ps);
        seeds++;
      }
    log_sum += case_log / seeds;
    cases++;
  }
  free(rows);
  assert_int_equal(cases, 4);
  double expect = exp(log_sum / cases);
  double shown = report_geomean(text, "greedy");
  assert_false(isnan(shown));
  assert_true(fabs(shown - expect) <= 0.0005 + 1e-12); /* printed with 3 decimals */
  assert_true(fabs(report_geomean(text, "heuristic") - 1.0) < 1e-12);
  assert_non_null(strstr(text, "## AlphaTensor matrix multiplication"));
  assert_non_null(strstr(text, "| Strassen-squared | gpu-l2 | 1024 | f32 |"));
  assert_non_null(strstr(text, "## Provenance"));
  free(text);

  const char *tables[] = {"summary.tex", "workloads.tex", "alphatensor.tex", "provenance.tex",
                          "macros.tex"};
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", tex, tables[i]);
    assert_true(file_size(path) > 40);
  }
  /* the tables compile where pdflatex exists */
  if (system("command -v pdflatex >/dev/null 2>&1") != 0) {
    fprintf(stderr, "note: pdflatex not installed: LaTeX compile check skipped\n");
    return;
  }
  char doc[1200], cmd[4096];
  snprintf(doc, sizeof doc, "%s/check.tex", tex);
  FILE *f = fopen(doc, "w");
  fprintf(f,
          "\\documentclass{article}\\usepackage{booktabs,longtable}\\begin{document}\n"
          "\\input{macros.tex}\\input{summary.tex}\\input{alphatensor.tex}\\input{workloads.tex}"
          "\\input{provenance.tex}\\GeomeanGreedy\n\\end{document}\n");
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && pdflatex -interaction=nonstopmode -halt-on-error check.tex >/dev/null 2>&1",
           tex);
  assert_int_equal(system(cmd), 0);
}

static void test_report_errors(void **state) {
  fixture *fx = *state;
  mb_error err;
  unsigned formats;
  assert_false(mb_report_parse_formats("md,html", &formats, &err));
  assert_string_equal(err.message, "--format: unknown format 'html' (expected md or tex)");
  mb_report_options opt = {.markdown_path = "/proc/no/such/dir/REPORT.md", .formats = MB_REPORT_MD};
  assert_false(mb_report_write(fx->results, &opt, &err));
  assert_non_null(strstr(err.message, "/proc/no/such/dir"));
}

static void test_alphatensor_names(void **state) {
  (void)state;
  char fact[64], dtype[16];
  long n;
  assert_true(mb_report_parse_alphatensor_name("at_tpu_8192_bf16-tpu", fact, sizeof fact, &n, dtype,
                                               sizeof dtype));
  assert_string_equal(fact, "AlphaTensor (TPU)");
  assert_int_equal(n, 8192);
  assert_string_equal(dtype, "bf16");
  assert_true(mb_report_parse_alphatensor_name("standard_4096_f32", fact, sizeof fact, &n, dtype,
                                               sizeof dtype));
  assert_string_equal(fact, "standard (64 products)");
  assert_false(mb_report_parse_alphatensor_name("mlp_inf_b256-tpu", fact, sizeof fact, &n, dtype,
                                                sizeof dtype));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plot_writes_every_figure),  cmocka_unit_test(test_plot_errors),
      cmocka_unit_test(test_report_numbers_match_hdf5), cmocka_unit_test(test_report_errors),
      cmocka_unit_test(test_alphatensor_names),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
