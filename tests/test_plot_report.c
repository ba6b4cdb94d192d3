/* Figures and reports on a small results file produced here by the driver: every expected file
 * exists, PNGs carry the PNG signature and are not blank, the numbers in the report equal
 * those computed independently from the HDF5 rows, LaTeX tables compile where pdflatex exists.
 * Splits: the summary of one catalogue split equals an independent computation from the rows,
 * `summary --split` refuses files without split information, and the test-split table is
 * written (and the paper builds with it) only when the file has both splits.
 * Workload families: the summary over the cases whose workload matches a pattern (alone or with
 * a split) equals the computation from the rows; bad patterns and empty selections are errors. */
#include <hdf5.h>
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
#include "summary.h"
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
 * the same on every workload (one agent), so the curve figure must draw it once, with its
 * heuristic reference line. */
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
  stats->curve_heuristic = 0.075; /* the reference line, crossed by the curve */
  return true;
}

/* The heuristic's answer (a tie, speedup exactly 1) except on attention_block, where it fails:
 * a missing result beside ties. */
static bool fails_on_attention(const mb_workload *w, const mb_hardware *hw,
                               const mb_solver_options *opt, mb_rng *rng, mb_assignment *out,
                               mb_solver_stats *stats, mb_error *err) {
  if (strstr(w->name, "attention")) return mb_fail(err, "fails_on_attention: as asked");
  return mb_solve_heuristic(w, hw, opt, rng, out, stats, err);
}

/* The heuristic's answer, reported as stopped by its budget on mlp_tiny. */
static bool stops_on_mlp(const mb_workload *w, const mb_hardware *hw, const mb_solver_options *opt,
                         mb_rng *rng, mb_assignment *out, mb_solver_stats *stats, mb_error *err) {
  if (!mb_solve_heuristic(w, hw, opt, rng, out, stats, err)) return false;
  stats->budget_hit = strstr(w->name, "mlp_tiny") != NULL;
  return true;
}

static const mb_solver EXTRA[] = {
    {"with_curve", "heuristic plus a training curve", curve_solver, NULL, false, 0}};

/* Runs cfg with its log to /dev/null; false with err set when the run fails. */
static bool run_quietly(mb_run_config *cfg, mb_error *err) {
  FILE *log = fopen("/dev/null", "w");
  cfg->log = log ? log : stderr;
  mb_run_stats stats;
  bool ok = mb_run(cfg, &stats, err);
  if (log) fclose(log);
  return ok;
}

static int teardown(void **state);

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  if (!fx) return -1;
  fx->dir = mb_test_temp_dir();
  if (!fx->dir) {
    free(fx);
    return -1;
  }
  char catalogue[1024];
  snprintf(catalogue, sizeof catalogue, "%s/catalogue.txt", fx->dir);
  *state = fx;
  FILE *f = fopen(catalogue, "w");
  if (!f) {
    fprintf(stderr, "setup: cannot write %s\n", catalogue);
    teardown(state);
    return -1;
  }
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
  mb_error err;
  if (!run_quietly(&cfg, &err)) {
    fprintf(stderr, "setup: mb_run failed: %s\n", err.message);
    teardown(state);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  mb_test_temp_remove(fx->dir);
  free(fx);
  return 0;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* The training-curve figure's SVG in dir (malloc'd), checked to draw the curve under the name
 * of the agent it belongs to (the fixture's run names none: the solvers' default) and of the
 * solver that plays it (the legend said "with_curve" alone, which names no agent). */
static char *read_curves_svg(const char *dir) {
  char svg[1300];
  snprintf(svg, sizeof svg, "%s/training_curves.svg", dir);
  char *text = mb_read_file(svg, NULL);
  assert_non_null(text);
  assert_non_null(
      strstr(text, ">default agent (results/agents/default.h5), played by with_curve<"));
  return text;
}

/* Occurrences of `needle` in `text`. */
static int count_in(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
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
  /* one agent's curve, reported by every job of the solver, is drawn once under the solver's
   * name (not once per seed, nor with a label listing every seed) */
  char *text = read_curves_svg(out);
  assert_null(strstr(text, "with_curve/seed"));
  /* its reference: one dashed line at the heuristic's return, labelled as such */
  const char *ref = strstr(text, ">heuristic (same eval set)<");
  assert_non_null(ref);
  assert_null(strstr(ref + strlen(">heuristic (same eval set)<"), "same eval set"));
  free(text);
}

/* PDF figures go into the paper at its text width (about 470-490 pt): a 1000 px figure is
 * drawn about that wide, so that its 8 pt labels are not shrunk to unreadable size. */
static void test_plot_pdf_fits_text_width(void **state) {
  fixture *fx = *state;
  char gnuplot[1024];
  if (!mb_plot_find_gnuplot(gnuplot, sizeof gnuplot)) skip();
  char out[1024];
  snprintf(out, sizeof out, "%s/figures-pdf", fx->dir);
  mb_plot_options opt = {.out_dir = out, .formats = MB_PLOT_PDF};
  mb_plot_outputs outputs;
  mb_error err;
  if (!mb_plot_all(fx->results, &opt, &outputs, &err)) fail_msg("%s", err.message);
  assert_int_equal(outputs.n, 6);
  char pdf[1200];
  snprintf(pdf, sizeof pdf, "%s/training_curves.pdf", out);
  size_t n = 0;
  char *bytes = mb_read_file(pdf, &n);
  assert_non_null(bytes);
  assert_memory_equal(bytes, "%PDF", 4);
  const char *box = NULL;
  for (size_t i = 0; i + 8 < n && !box; i++)
    if (!memcmp(bytes + i, "MediaBox", 8)) box = bytes + i;
  if (!box) fail_msg("%s: no MediaBox", pdf);
  double x0, y0, width, height;
  assert_int_equal(sscanf(box, "MediaBox [ %lf %lf %lf %lf", &x0, &y0, &width, &height), 4);
  assert_true(width >= 400 && width <= 500);
  assert_true(height > 250 && height < width);
  free(bytes);
}

/* A results file written before curves had references (the attribute removed from every curve
 * of a copy): the training-curve figure is drawn as it was, the curve without a reference line. */
static void test_plot_curves_without_reference(void **state) {
  fixture *fx = *state;
  char gnuplot[1024];
  if (!mb_plot_find_gnuplot(gnuplot, sizeof gnuplot)) skip();
  char old[1200], cmd[2600];
  snprintf(old, sizeof old, "%s/old-results.h5", fx->dir);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", fx->results, old);
  assert_int_equal(system(cmd), 0);
  mb_error err;
  mb_results *r = mb_results_open(old, false, &err);
  assert_non_null(r);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  mb_results_close(r, NULL);
  hid_t f = H5Fopen(old, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  int removed = 0;
  for (int64_t i = 0; i < n; i++) {
    if (strcmp(rows[i].solver, "with_curve")) continue;
    char w[512], hw[256], path[1024];
    assert_non_null(mb_results_encode_name(rows[i].workload, w, sizeof w));
    assert_non_null(mb_results_encode_name(rows[i].hardware, hw, sizeof hw));
    snprintf(path, sizeof path, "/curves/%s/%s/with_curve/%lld", w, hw, (long long)rows[i].seed);
    hid_t o = H5Oopen(f, path, H5P_DEFAULT);
    assert_true(o >= 0);
    assert_true(H5Adelete(o, "heuristic_return") >= 0);
    H5Oclose(o);
    removed++;
  }
  assert_true(H5Fclose(f) >= 0);
  assert_true(mb_results_unseal(old, NULL)); /* an older writer left no seal */
  free(rows);
  assert_true(removed > 0);
  char out[1200];
  snprintf(out, sizeof out, "%s/figures-old", fx->dir);
  mb_plot_options opt = {.out_dir = out, .formats = MB_PLOT_SVG};
  mb_plot_outputs outputs;
  if (!mb_plot_all(old, &opt, &outputs, &err)) fail_msg("%s", err.message);
  char *text = read_curves_svg(out);
  assert_null(strstr(text, "same eval set"));
  assert_null(strstr(text, "gnuplot_plot_2")); /* one plot, not an empty second one */
  free(text);
}

/* The paths of a run of its own: <fixture>/<name>/, its catalogue.txt and results.h5. */
typedef struct own_run {
  char dir[1100], catalogue[1200], results[1200];
} own_run;

/* Makes <fixture>/<name>/ with a catalogue.txt holding `catalogue_text`. */
static void own_run_make(const fixture *fx, const char *name, const char *catalogue_text,
                         own_run *o) {
  snprintf(o->dir, sizeof o->dir, "%s/%s", fx->dir, name);
  assert_int_equal(mb_mkdir_p(o->dir), 0);
  snprintf(o->catalogue, sizeof o->catalogue, "%s/catalogue.txt", o->dir);
  snprintf(o->results, sizeof o->results, "%s/results.h5", o->dir);
  FILE *f = fopen(o->catalogue, "w");
  assert_non_null(f);
  fputs(catalogue_text, f);
  fclose(f);
}

/* A run of its own: with_curve ties the heuristic everywhere (speedup exactly 1, a bar of length
 * zero), fails_on_attention fails on one workload (no result), the agent is a named file.
 * - the speedup and gap figures draw a dot at every result, so a tie is seen, and a cross with
 *   its key entry for the missing one (a tie and a missing result both looked like an empty
 *   row);
 * - the training curve is named by its agent: the checkpoint's file name (a quote in it kept)
 *   and its networks' digest prefix (the file's SHA-256 when none is recorded), and the solver
 *   that plays it;
 * - the report lists the files it wrote, and a test split of one case reads "the 1 case". */
static void test_ties_missing_results_and_agent(void **state) {
  fixture *fx = *state;
  char gnuplot[1024];
  if (!mb_plot_find_gnuplot(gnuplot, sizeof gnuplot)) skip();
  own_run o;
  own_run_make(fx, "ties",
               "name kind source args hardware capacity split tags\n"
               "mlp_tiny native datasets/samples/mlp_tiny.wl - tpu-v4i 1048576 train mlp\n"
               "attention_block native datasets/samples/attention_block.wl - tpu-v4i 8388608 "
               "test attention\n",
               &o);
  const char *dir = o.dir, *catalogue = o.catalogue, *results = o.results;
  char agent[1200];
  snprintf(agent, sizeof agent, "%s/my'agent.h5", dir);
  FILE *f = fopen(agent, "w");
  assert_non_null(f);
  fputs("stands for an agent checkpoint: only its name and hash are recorded\n", f);
  fclose(f);
  const mb_solver extra[] = {
      {.name = "with_curve", .summary = "heuristic plus a training curve", .solve = curve_solver},
      {.name = "fails_on_attention",
       .summary = "heuristic, fails on attention_block",
       .solve = fails_on_attention}};
  mb_run_config cfg = {.profile = "quick",
                       .workloads = ".",
                       .solvers = "heuristic,greedy,with_curve,fails_on_attention",
                       .extra_solvers = extra,
                       .n_extra_solvers = 2,
                       .seeds = 1,
                       .jobs = 2,
                       .budget = 0.2,
                       .agent = agent,
                       .catalogue = catalogue,
                       .out = results,
                       .command_line = "test_plot_report"};
  mb_error err;
  if (!run_quietly(&cfg, &err)) fail_msg("mb_run: %s", err.message);

  char out[1200];
  snprintf(out, sizeof out, "%s/figures", dir);
  mb_plot_options opt = {.out_dir = out, .formats = MB_PLOT_SVG};
  mb_plot_outputs outputs;
  if (!mb_plot_all(results, &opt, &outputs, &err)) fail_msg("%s", err.message);
  char path[1300];
  /* speedups: greedy, with_curve and fails_on_attention on two workloads, one missing: five
   * dots (gnuplot's filled circle, gpPt6), and crosses (gpPt1) for the missing one and its key */
  snprintf(path, sizeof path, "%s/speedup_per_workload.svg", out);
  char *text = mb_read_file(path, NULL);
  assert_non_null(text);
  assert_int_equal(count_in(text, "href='#gpPt6'"), 5);
  assert_int_equal(count_in(text, "href='#gpPt1'"), 2);
  assert_non_null(strstr(text, ">no valid result<"));
  free(text);
  /* gaps: the heuristic too, and the missing result without a gap */
  snprintf(path, sizeof path, "%s/gap_to_bound.svg", out);
  text = mb_read_file(path, NULL);
  assert_non_null(text);
  assert_true(count_in(text, "href='#gpPt6'") >= 5);
  assert_non_null(strstr(text, ">no result or no bound<"));
  free(text);
  /* the curve's legend names the agent by file name and the file's SHA-256 (this stand-in
   * holds no networks), and by its networks' digest (what `show` prints) once one is recorded */
  mb_results *r = mb_results_open(results, false, &err);
  assert_non_null(r);
  char *sha = mb_results_get_attr_string(r, "agent_sha256", &err);
  assert_non_null(sha);
  assert_int_equal(strlen(sha), 64);
  char *none = mb_results_get_attr_string(r, "agent_networks_sha256", &err);
  assert_string_equal(none, ""); /* no solver here loads the agent */
  free(none);
  mb_results_close(r, NULL);
  const char *digest = "0123456789abfedcba9876543210";
  char legend[256];
  snprintf(path, sizeof path, "%s/training_curves.svg", out);
  for (int by_networks = 0; by_networks < 2; by_networks++) {
    if (by_networks) {
      r = mb_results_open(results, true, &err);
      assert_non_null(r);
      assert_true(mb_results_set_attr_string(r, "agent_networks_sha256", digest, &err));
      mb_results_close(r, NULL);
      if (!mb_plot_all(results, &opt, &outputs, &err)) fail_msg("%s", err.message);
    }
    snprintf(legend, sizeof legend, ">agent my'agent.h5 (%s %.12s), played by with_curve<",
             by_networks ? "networks" : "sha256", by_networks ? digest : sha);
    text = mb_read_file(path, NULL);
    assert_non_null(text);
    if (!strstr(text, legend)) fail_msg("training_curves.svg lacks '%s'", legend);
    free(text);
  }
  free(sha);

  /* the report lists what it wrote, in order; a test split of one case is "the 1 case" */
  char md[1200], tex[1200];
  snprintf(md, sizeof md, "%s/REPORT.md", dir);
  snprintf(tex, sizeof tex, "%s/tex", dir);
  mb_report_options ropt = {.markdown_path = md, .tex_dir = tex, .figures_dir = out};
  mb_report_outputs *listed = malloc(sizeof *listed);
  assert_non_null(listed);
  if (!mb_report_write(results, &ropt, listed, &err)) fail_msg("%s", err.message);
  const char *files[] = {"summary.tex",     "summary_test.tex", "workloads.tex",
                         "alphatensor.tex", "provenance.tex",   "macros.tex"};
  assert_int_equal(listed->n, 7);
  assert_string_equal(listed->paths[0], md);
  for (int i = 0; i < 6; i++) {
    snprintf(path, sizeof path, "%s/%s", tex, files[i]);
    assert_string_equal(listed->paths[i + 1], path);
  }
  snprintf(path, sizeof path, "%s/alphatensor.tex", tex);
  text = mb_read_file(path, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "\n% no AlphaTensor traces in this results file\n"));
  assert_null(strstr(text, "tabular"));
  free(text);
  ropt.formats = MB_REPORT_MD;
  if (!mb_report_write(results, &ropt, listed, &err)) fail_msg("%s", err.message);
  assert_int_equal(listed->n, 1);
  free(listed);
  text = mb_read_file(md, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "All 2 cases: 1 of the train split, 1 of the test split."));
  assert_null(strstr(text, "AlphaTensor")); /* no trace, no section */
  assert_non_null(strstr(text,
                         "The same table over the 1 case whose workload is in the "
                         "catalogue's test split;"));
  free(text);
  /* figure links: a PNG in the figures folder is linked, relative to the report's folder
   * when below it (links that work wherever the results folder goes), else by its path */
  snprintf(path, sizeof path, "%s/speedup_per_workload.png", out);
  mb_test_write_bytes(path, "png", 3);
  if (!mb_report_write(results, &ropt, NULL, &err)) fail_msg("%s", err.message);
  text = mb_read_file(md, NULL);
  assert_non_null(text);
  const char *link =
      "\n![Speedup over the heuristic per workload](figures/speedup_per_workload.png)\n";
  if (!strstr(text, link)) fail_msg("REPORT.md lacks '%s':\n%s", link, text);
  assert_null(strstr(text, "memory_map.png")); /* no PNG, no link */
  free(text);
  char *elsewhere = mb_test_temp_dir();
  assert_non_null(elsewhere);
  snprintf(path, sizeof path, "%s/gap_to_bound.png", elsewhere);
  mb_test_write_bytes(path, "png", 3);
  ropt.figures_dir = elsewhere;
  if (!mb_report_write(results, &ropt, NULL, &err)) fail_msg("%s", err.message);
  text = mb_read_file(md, NULL);
  assert_non_null(text);
  char want_link[1500];
  snprintf(want_link, sizeof want_link, "](%s)\n", path);
  if (!strstr(text, want_link)) fail_msg("REPORT.md lacks '%s':\n%s", want_link, text);
  assert_null(strstr(text, "speedup_per_workload.png"));
  free(text);
  mb_test_temp_remove(elsewhere);
  /* a folder beside the report's whose path is as long and differs before its slash is not
   * below it: linked by its path */
  char beside[1200];
  snprintf(beside, sizeof beside, "%s/tieZ", fx->dir);
  assert_int_equal(strlen(beside), strlen(dir));
  assert_int_equal(mb_mkdir_p(beside), 0);
  snprintf(path, sizeof path, "%s/gap_to_bound.png", beside);
  mb_test_write_bytes(path, "png", 3);
  ropt.figures_dir = beside;
  if (!mb_report_write(results, &ropt, NULL, &err)) fail_msg("%s", err.message);
  text = mb_read_file(md, NULL);
  assert_non_null(text);
  snprintf(want_link, sizeof want_link, "](%s)\n", path);
  if (!strstr(text, want_link)) fail_msg("REPORT.md lacks '%s':\n%s", want_link, text);
  free(text);
}

/* The summary says which numbers are weaker than the rest: solves stopped by their wall-clock
 * budget, per solver, with their count (a rerun may differ there); nothing when none did. (LP
 * bounds cut short by their time limit: tests/e2e/run_bound_budget.sh.) */
static void test_summary_caveats(void **state) {
  fixture *fx = *state;
  own_run o;
  own_run_make(fx, "caveats",
               "name kind source args hardware capacity split tags\n"
               "mlp_tiny native datasets/samples/mlp_tiny.wl - tpu-v4i 1048576 train mlp\n"
               "conv_block native datasets/samples/conv_block.wl - tpu-v4i 3211264 test conv\n",
               &o);
  const char *dir = o.dir, *catalogue = o.catalogue, *results = o.results;
  const mb_solver extra[] = {{.name = "stops_on_mlp",
                              .summary = "heuristic, budget hit on mlp_tiny",
                              .solve = stops_on_mlp}};
  mb_run_config cfg = {.profile = "quick",
                       .workloads = ".",
                       .solvers = "heuristic,stops_on_mlp",
                       .extra_solvers = extra,
                       .n_extra_solvers = 1,
                       .seeds = 2,
                       .jobs = 2,
                       .catalogue = catalogue,
                       .out = results,
                       .command_line = "test_plot_report"};
  mb_error err;
  if (!run_quietly(&cfg, &err)) fail_msg("mb_run: %s", err.message);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  mb_results *r = mb_results_open(results, false, &err);
  assert_non_null(r);
  assert_true(mb_summary_print(r, out, &err));
  mb_results_close(r, NULL);
  fclose(out);
  const char *want =
      "\nSolves stopped by their wall-clock budget (budget_hit), whose results "
      "depend on the machine's speed:\nstops_on_mlp 2 of 4.\n";
  if (!strstr(text, want)) fail_msg("summary lacks the budget line:\n%s", text);
  assert_null(strstr(text, "did not solve in its time limit"));
  free(text);
  /* REPORT.md says the same under its summary table */
  char md[1300], tex[1300];
  snprintf(md, sizeof md, "%s/REPORT.md", dir);
  snprintf(tex, sizeof tex, "%s/tex", dir);
  mb_report_options ropt = {.markdown_path = md, .tex_dir = tex};
  if (!mb_report_write(results, &ropt, NULL, &err)) fail_msg("%s", err.message);
  text = mb_read_file(md, &len);
  assert_non_null(text);
  if (!strstr(text, want)) fail_msg("REPORT.md lacks the budget line:\n%s", text);
  free(text);
  /* the fixture's run: no solve hit its budget, no bound was cut short */
  text = NULL;
  out = open_memstream(&text, &len);
  r = mb_results_open(fx->results, false, &err);
  assert_true(r && mb_summary_print(r, out, &err));
  mb_results_close(r, NULL);
  fclose(out);
  assert_null(strstr(text, "budget_hit"));
  assert_null(strstr(text, "did not solve in its time limit"));
  free(text);
  /* nor does its report */
  char md_plain[1300];
  snprintf(md_plain, sizeof md_plain, "%s/caveats/REPORT-none.md", fx->dir);
  mb_report_options plain = {.markdown_path = md_plain, .tex_dir = tex};
  if (!mb_report_write(fx->results, &plain, NULL, &err)) fail_msg("%s", err.message);
  text = mb_read_file(md_plain, &len);
  assert_non_null(text);
  assert_null(strstr(text, "budget_hit"));
  free(text);
}

/* A copy of plots/ in dir/NAME (its path into tdir) where each template dumped[i][0] is
 * replaced by dumped[i][1]: templates that draw nothing but write, into the figure's file (a text
 * file then), what they were given, so that a test can read what a figure is drawn from. */
static void dumping_templates(const fixture *fx, const char *name, const char *const (*dumped)[2],
                              int n, char *tdir, size_t cap) {
  snprintf(tdir, cap, "%s/%s", fx->dir, name);
  mb_mkdir_p(tdir);
  char cmd[3000];
  snprintf(cmd, sizeof cmd, "cp '%s/plots/'*.gp '%s/'", mb_source_dir(), tdir);
  assert_int_equal(system(cmd), 0);
  for (int i = 0; i < n; i++) {
    char tpl[1200];
    snprintf(tpl, sizeof tpl, "%s/%s", tdir, dumped[i][0]);
    FILE *f = fopen(tpl, "w");
    assert_non_null(f);
    fputs(dumped[i][1], f);
    fclose(f);
  }
}

/* Writes the x range, then the data table. */
static const char DUMP_RANGE_AND_DATA[] =
    "set print OUT\nprint sprintf(\"XMIN %.9g XMAX %.9g\", XMIN, XMAX)\nunset print\n"
    "system sprintf(\"cat '%s' >> '%s'\", DATA, OUT)\n";

/* The speedup CDF's table and both speedup figures' x ranges: per solver but the heuristic
 * (identically 1), the sorted speedups at heights 1/n .. 1 after a first point at 0; ranges
 * around [min(lo, 1), max(hi, 1)] with margins of 5% + 0.005 (CDF) and 8% + 0.02 (bars),
 * never below 0 (the figures' variables are written with 6 digits: compared to 2e-5). */
static void test_plot_data_and_ranges(void **state) {
  fixture *fx = *state;
  char out[1024], tdir[1024];
  snprintf(out, sizeof out, "%s/figures-dumped", fx->dir);
  const char *const dumped[][2] = {
      {"speedup_cdf.gp", DUMP_RANGE_AND_DATA},
      {"speedup_bars.gp", DUMP_RANGE_AND_DATA},
      {"memory_map.gp",
       "set print OUT\nprint LEFT_TITLE\nprint CAPACITY\nunset print\n"
       "system sprintf(\"cat '%s' >> '%s'\", LEFT, OUT)\nset print OUT append\n"
       "print RIGHT_TITLE\nunset print\nsystem sprintf(\"cat '%s' >> '%s'\", RIGHT, OUT)\n"}};
  dumping_templates(fx, "dumping-plots", dumped, 3, tdir, sizeof tdir);
  mb_plot_options opt = {.out_dir = out, .formats = MB_PLOT_SVG, .templates_dir = tdir};
  mb_plot_outputs outputs;
  mb_error err;
  char gnuplot[1024];
  if (!mb_plot_find_gnuplot(gnuplot, sizeof gnuplot)) skip();
  if (!mb_plot_all(fx->results, &opt, &outputs, &err)) fail_msg("%s", err.message);
  char path[1200];
  snprintf(path, sizeof path, "%s/speedup_distribution.svg", out);
  char *text = mb_read_file(path, NULL);
  assert_non_null(text);
  double xmin, xmax, lo = 1.0, hi = 1.0;
  int used = 0;
  assert_int_equal(sscanf(text, "XMIN %lf XMAX %lf\n%n", &xmin, &xmax, &used), 2);
  int blocks = 0;
  for (char *p = strstr(text, "# "); p; p = strstr(p, "# ")) {
    p = strchr(p + 1, '\n') + 1; /* past "# SOLVER" */
    double v[64], y[64];
    int n = 0, adv = 0;
    while (n < 64 && sscanf(p, "%lf %lf\n%n", &v[n], &y[n], &adv) == 2) {
      p += adv;
      n++;
    }
    assert_true(n >= 2);
    assert_true(v[0] == v[1] && y[0] == 0); /* the first point, at height 0 */
    for (int i = 1; i < n; i++) {
      assert_true(v[i] >= v[i - 1]);
      if (!(fabs(y[i] - (double)i / (n - 1)) <= 1e-9))
        fail_msg("point %d of %d: height %g, expected %g", i, n - 1, y[i], (double)i / (n - 1));
    }
    lo = fmin(lo, v[0]);
    hi = fmax(hi, v[n - 1]);
    blocks++;
  }
  assert_int_equal(blocks, 2); /* greedy and with_curve */
  double pad = (hi - lo) * 0.05 + 0.005;
  assert_true(fabs(xmin - fmax(0.0, lo - pad)) <= 2e-5 && fabs(xmax - (hi + pad)) <= 2e-5);
  free(text);
  snprintf(path, sizeof path, "%s/speedup_per_workload.svg", out);
  text = mb_read_file(path, NULL);
  assert_non_null(text);
  assert_int_equal(sscanf(text, "XMIN %lf XMAX %lf", &xmin, &xmax), 2);
  pad = (hi - lo) * 0.08 + 0.02;
  if (!(fabs(xmin - fmax(0.0, lo - pad)) <= 2e-5 && fabs(xmax - (hi + pad)) <= 2e-5))
    fail_msg("bars: x range [%g, %g], expected [%g, %g]", xmin, xmax, fmax(0.0, lo - pad),
             hi + pad);
  free(text);
  /* the memory maps: one row "start end offset size benefit" per buffer in fast memory, as many
   * as each title counts ("1 buffer", "N buffers"), each inside the capacity */
  snprintf(path, sizeof path, "%s/memory_map.svg", out);
  text = mb_read_file(path, NULL);
  assert_non_null(text);
  double capacity = 0;
  char *line = strchr(text, '\n') + 1;
  assert_int_equal(sscanf(line, "%lf", &capacity), 1);
  line = strchr(line, '\n') + 1;
  for (int side = 0; side < 2; side++) {
    char *title = side ? line : text;
    int counted = 0, rows = 0;
    char word[16] = "";
    const char *count = side ? strstr(title, "): ") + 3 : strstr(title, ": ") + 2;
    assert_int_equal(sscanf(count, "%d %15[a-z]", &counted, word), 2);
    assert_string_equal(word, counted == 1 ? "buffer" : "buffers");
    if (side) line = strchr(line, '\n') + 1;
    double start, end, offset, size, benefit;
    while (sscanf(line, "%lf %lf %lf %lf %lf", &start, &end, &offset, &size, &benefit) == 5) {
      assert_true(offset >= 0 && offset + size <= capacity * (1 + 1e-9));
      rows++;
      line = strchr(line, '\n') + 1;
    }
    if (counted == 0)
      assert_int_equal(rows, 1); /* the placeholder of an empty map */
    else if (rows != counted)
      fail_msg("map %d: %d rows, its title counts %d", side, rows, counted);
  }
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
  /* a failure known from the exit status alone (nothing on stderr) */
  f = fopen(tpl, "w");
  fputs("exit status 3\n", f);
  fclose(f);
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

/* Every Markdown table of `text` is well formed: each row (a line starting with '|') has as many
 * cells as its table's header, counting the '|' that md_cell has not escaped; and the header's
 * second line is the separator ("---" cells). Returns the number of tables. */
static int assert_tables_well_formed(const char *text, const char *what) {
  int tables = 0, header_cells = -1, row = 0;
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len > 0 && line[0] == '|') {
      int cells = 0;
      for (size_t i = 0; i < len; i++) cells += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
      if (row == 0) header_cells = cells, tables++;
      if (row == 1 && strncmp(line, "|---", 4))
        fail_msg("%s: table %d has no separator line: '%.*s'", what, tables, (int)len, line);
      if (cells != header_cells)
        fail_msg("%s: table %d, row %d has %d cell borders, its header %d: '%.*s'", what, tables,
                 row, cells, header_cells, (int)len, line);
      row++;
    } else {
      row = 0;
    }
    line += len + (end ? 1 : 0);
  }
  return tables;
}

/* Every tabular and longtable of the LaTeX `text` is well formed: each row (a line ending in
 * "\\\\") has as many cells, counting the '&' not escaped, as the column spec has columns (l,
 * r, c, or p{...}). Returns the number of tables. */
static int assert_tex_tables_well_formed(const char *text, const char *what) {
  int tables = 0;
  for (const char *t = text; (t = strstr(t, "\\begin{"));) {
    t += strlen("\\begin{");
    if (strncmp(t, "tabular}{", 9) && strncmp(t, "longtable}{", 11)) continue;
    const char *spec = strchr(t, '}') + 2;
    int columns = 0, depth = 0;
    for (; *spec && (depth > 0 || *spec != '}'); spec++) {
      if (*spec == '{')
        depth++;
      else if (*spec == '}')
        depth--;
      else if (depth == 0 && strchr("lrcp", *spec))
        columns++;
    }
    tables++;
    const char *end = strstr(spec, "\\end{");
    assert_non_null(end);
    for (const char *line = strchr(spec, '\n') + 1; line < end;) {
      const char *eol = strchr(line, '\n');
      size_t len = (size_t)(eol - line);
      if (len >= 2 && line[0] != '\\' && !strncmp(line + len - 2, "\\\\", 2)) {
        int cells = 1;
        for (size_t i = 0; i < len; i++) cells += line[i] == '&' && (i == 0 || line[i - 1] != '\\');
        if (cells != columns)
          fail_msg("%s: table %d has %d columns, a row %d cells: '%.*s'", what, tables, columns,
                   cells, (int)len, line);
      }
      line = eol + 1;
    }
    t = end;
  }
  return tables;
}

/* Column k (0: the first) of the Markdown table row at `line`: the text after its k-th pipe
 * up to and including the next pipe (" greedy |"); "" past the row's end. */
static void md_column(const char *line, int k, char *out, size_t n) {
  const char *p = line, *end = strchr(line, '\n');
  if (!end) end = line + strlen(line);
  for (int i = 0; i <= k && p && p < end; i++) p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
  const char *q = p && p < end ? strchr(p, '|') : NULL;
  if (!q || q > end) {
    out[0] = '\0';
    return;
  }
  snprintf(out, n, "%.*s", (int)(q - p + 1), p);
}

static void test_report_numbers_match_hdf5(void **state) {
  fixture *fx = *state;
  char md[1200], tex[1024];
  snprintf(md, sizeof md, "%s/REPORT.md", fx->dir);
  snprintf(tex, sizeof tex, "%s/generated", fx->dir);
  mb_report_options opt = {.markdown_path = md, .tex_dir = tex};
  mb_error err;
  if (!mb_report_write(fx->results, &opt, NULL, &err)) fail_msg("%s", err.message);
  char *text = mb_read_file(md, NULL);
  assert_non_null(text);
  assert_true(assert_tables_well_formed(text, "REPORT.md") >= 2);

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
  /* each case's greedy cell in the per-workload table: "speedup / gap / wall", the means over
   * seeds, a gap in percent with one decimal, a wall time under 10 ms in ms */
  int cells_in_ms = 0;
  const char *header = strstr(text, "\n| workload | hardware |");
  assert_non_null(header);
  int greedy_column = -1;
  for (int k = 0; k < 20 && greedy_column < 0; k++) {
    char name[128];
    md_column(header + 1, k, name, sizeof name);
    if (!strcmp(name, " greedy |")) greedy_column = k;
  }
  assert_true(greedy_column > 2);
  for (int64_t i = 0; i < n; i++) {
    if (strcmp(rows[i].solver, "greedy") || rows[i].seed != 0) continue;
    double case_log = 0, gap = 0, wall = 0;
    int seeds = 0;
    for (int64_t j = 0; j < n; j++)
      if (!strcmp(rows[j].solver, "greedy") && !strcmp(rows[j].workload, rows[i].workload)) {
        case_log += log(rows[j].t_heuristic_ps / (double)rows[j].t_solver_ps);
        gap += rows[j].gap_to_bound;
        wall += rows[j].wall_s;
        seeds++;
      }
    char want[128], line[256];
    wall /= seeds;
    if (wall < 0.01)
      snprintf(want, sizeof want, " %.3f / %.1f%% / %.1f ms |", exp(case_log / seeds),
               100.0 * gap / seeds, 1e3 * wall);
    else
      snprintf(want, sizeof want, " %.3f / %.1f%% / %.2f s |", exp(case_log / seeds),
               100.0 * gap / seeds, wall);
    cells_in_ms += wall < 0.01;
    snprintf(line, sizeof line, "\n| %s | %s |", rows[i].workload, rows[i].hardware);
    const char *row = strstr(text, line);
    assert_non_null(row);
    char cell[128];
    md_column(row + 1, greedy_column, cell, sizeof cell);
    if (strcmp(cell, want)) fail_msg("%s: greedy's cell is '%s', not '%s'", line + 1, cell, want);
  }
  assert_true(cells_in_ms > 0); /* the fixture's solves take milliseconds */
  free(rows);
  assert_int_equal(cases, 4);
  double expect = exp(log_sum / cases);
  double shown = report_geomean(text, "greedy");
  assert_false(isnan(shown));
  assert_true(fabs(shown - expect) <= 0.0005 + 1e-12); /* printed with 3 decimals */
  assert_true(fabs(report_geomean(text, "heuristic") - 1.0) < 1e-12);
  assert_non_null(strstr(text, "## AlphaTensor matrix multiplication"));
  assert_non_null(strstr(text, "| Strassen-squared | gpu-l2 | 1024 | f32 |"));
  assert_null(strstr(text, "\\bottomrule")); /* no LaTeX in the Markdown */
  assert_null(strstr(text, "no AlphaTensor traces"));
  assert_non_null(strstr(text, "## Provenance"));
  free(text);

  const char *tables[] = {"summary.tex", "workloads.tex", "alphatensor.tex", "provenance.tex",
                          "macros.tex"};
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", tex, tables[i]);
    assert_true(file_size(path) > 40);
    if (strcmp(tables[i], "macros.tex")) {
      char *tt = mb_read_file(path, NULL);
      assert_non_null(tt);
      assert_int_equal(assert_tex_tables_well_formed(tt, tables[i]), 1);
      assert_null(strstr(tt, "no AlphaTensor traces"));
      free(tt);
    }
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

/* One character of a \texttt{...} provenance cell at p: its byte (0 at the cell's end, '\f'
 * for \allowbreak, which a cell never holds raw: control bytes are spelled "\xHH") and its
 * length in the TeX text. */
static char tex_cell_token(const char *p, size_t *len) {
  static const struct {
    const char *macro;
    char c;
  } words[] = {{"\\allowbreak{}", '\f'},
               {"\\textasciicircum{}", '^'},
               {"\\textasciitilde{}", '~'},
               {"\\textbackslash{}", '\\'}};
  if (!*p || !strncmp(p, "}\\tabularnewline", 16)) {
    *len = 0;
    return 0;
  }
  for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
    if (!strncmp(p, words[w].macro, strlen(words[w].macro))) {
      *len = strlen(words[w].macro);
      return words[w].c;
    }
  *len = *p == '\\' ? 2 : 1; /* \_ \% \& \# \$ \{ \} */
  return *p == '\\' ? p[1] : *p;
}

/* Decodes one \texttt{...} provenance cell back to its text; *longest_run is the most
 * characters TeX would have to set without a break opportunity (a space or \allowbreak). */
static char *decode_tex_cell(const char *cell, int *longest_run) {
  char *out = malloc(strlen(cell) + 1);
  assert_non_null(out);
  size_t j = 0, len;
  int run = 0;
  *longest_run = 0;
  char c;
  for (const char *p = cell; (c = tex_cell_token(p, &len)) != 0; p += len) {
    if (c == '\f') {
      run = 0;
      continue;
    }
    out[j++] = c;
    if (c == ' ')
      run = 0;
    else if (((unsigned char)c & 0xC0) != 0x80) /* a UTF-8 sequence counts once */
      run++;
    if (run > *longest_run) *longest_run = run;
  }
  out[j] = '\0';
  return out;
}

/* The writer's rule for break opportunities in a provenance cell, checked at each: one after
 * every separator (|,;:=/-) but the last character, and otherwise only where the run since the
 * last break or space (counted in bytes, a control byte's "\xHH" as 4) could not take the next
 * character within 16; never at a cell's ends, never inside a UTF-8 sequence. */
static void assert_breaks_where_needed(const char *cell) {
  int run = 0;
  char prev = 0, c;
  size_t len;
  for (const char *p = cell; (c = tex_cell_token(p, &len)) != 0; p += len) {
    size_t next_len;
    char next = tex_cell_token(p + len, &next_len);
    bool separator = prev && strchr("|,;:=/-", prev);
    if (c == '\f') {
      int width = next == '\\' && p[len + next_len] == 'x' ? 4 : 1; /* "\xHH" or one byte */
      if (!prev || !next) fail_msg("a break at a cell's end: %.60s", cell);
      if (((unsigned char)next & 0xC0) == 0x80) fail_msg("a break inside UTF-8: %.60s", p);
      if (!separator && run < 16 && run + width <= 16)
        fail_msg("a break after %d bytes, not needed: %.60s", run, p);
      run = 0;
    } else {
      bool continuation = ((unsigned char)c & 0xC0) == 0x80;
      if (separator && !continuation) fail_msg("no break after '%c': %.60s", prev, p);
      run = c == ' ' ? 0 : run + 1;
    }
    prev = c == '\f' ? 0 : c;
  }
}

/* Compiles TEX/provenance.tex alone in a small document with pdflatex, asserting that it
 * compiles (its log is TEX/check.log); false, with a note, when pdflatex is not installed. */
static bool compile_provenance_table(const char *tex, const char *what) {
  if (system("command -v pdflatex >/dev/null 2>&1") != 0) {
    fprintf(stderr, "note: pdflatex not installed: %s skipped\n", what);
    return false;
  }
  char path[1400], cmd[2600];
  snprintf(path, sizeof path, "%s/check.tex", tex);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f,
          "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{booktabs,longtable}"
          "\\begin{document}\\small\\input{provenance.tex}\\end{document}\n");
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && pdflatex -interaction=nonstopmode -halt-on-error check.tex >/dev/null 2>&1",
           tex);
  assert_int_equal(system(cmd), 0);
  return true;
}

/* Provenance values can be long: a run over a catalogue split stores its workload names in one
 * regex (992 bytes for the 46 of the test split), and hashes have no spaces. Both reports keep
 * every character, and the LaTeX table gives TeX a break opportunity at least every 16 characters,
 * so the paper's column does not overflow. */
static void test_report_long_provenance(void **state) {
  fixture *fx = *state;
  char copy[1200], cmd[2600];
  snprintf(copy, sizeof copy, "%s/long.h5", fx->dir);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", fx->results, copy);
  assert_int_equal(system(cmd), 0);
  char value[6000] = "^(";
  for (int i = 0; i < 150; i++)
    snprintf(value + strlen(value), sizeof value - strlen(value), "%sworkload_%03d_bf16-tpu",
             i ? "|" : "", i);
  strcat(value, ")$ 0123456789abcdef0123456789abcdef0123456789abcdef \xe2\x80\x93 {~\\#%&}");
  assert_true(strlen(value) > 3000);
  mb_error err;
  mb_results *r = mb_results_open(copy, true, &err);
  if (!r) fail_msg("%s", err.message);
  if (!mb_results_set_attr_string(r, "zz_long_value", value, &err)) fail_msg("%s", err.message);
  assert_true(mb_results_close(r, &err));

  char md[1300], tex[1300];
  snprintf(md, sizeof md, "%s/long.md", fx->dir);
  snprintf(tex, sizeof tex, "%s/long-tex", fx->dir);
  mb_report_options opt = {.markdown_path = md, .tex_dir = tex};
  if (!mb_report_write(copy, &opt, NULL, &err)) fail_msg("%s", err.message);

  /* Markdown: the whole value in a code span, pipes escaped for the table */
  char *expect = malloc(2 * strlen(value) + 1), *e = expect;
  assert_non_null(expect);
  for (const char *c = value; *c; c++) {
    if (*c == '|') *e++ = '\\';
    *e++ = *c;
  }
  *e = '\0';
  char *text = mb_read_file(md, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, expect));
  assert_null(strstr(text, "``")); /* empty values (the fixture's run_hardware) as empty cells */
  free(expect);
  free(text);

  /* LaTeX: the whole value, with a break opportunity at least every 16 characters, in
   * every provenance cell (the fixture's own hashes too) */
  char path[1400];
  snprintf(path, sizeof path, "%s/provenance.tex", tex);
  text = mb_read_file(path, NULL);
  assert_non_null(text);
  int cells = 0;
  bool found = false;
  for (const char *p = strstr(text, "\\texttt{"); p; p = strstr(p + 1, "\\texttt{")) {
    int longest;
    char *decoded = decode_tex_cell(p + 8, &longest);
    if (longest > 16) fail_msg("%d characters without a break in: %.60s", longest, decoded);
    assert_breaks_where_needed(p + 8);
    if (!strcmp(decoded, value)) found = true;
    free(decoded);
    cells++;
  }
  assert_true(cells > 5);
  assert_true(found);
  free(text);

  /* and TeX agrees: the table overflows neither the column nor the page */
  if (!compile_provenance_table(tex, "LaTeX overflow check")) return;
  snprintf(path, sizeof path, "%s/check.log", tex);
  text = mb_read_file(path, NULL);
  assert_non_null(text);
  if (strstr(text, "Overfull \\")) fail_msg("%s", strstr(text, "Overfull \\"));
  free(text);
}

/* Names from files may hold any byte but NUL. copy_with_names: a copy of the fixture's results
 * at `copy` whose rows call mlp_tiny `workload` and greedy `solver`. copy_renamed: names with
 * line breaks and ESC sequences (CTL_WORKLOAD, CTL_SOLVER), or, with `ctl` false, names of the
 * same length without control bytes (PLAIN_WORKLOAD, PLAIN_SOLVER): the two print the same
 * number of lines when control bytes are escaped. */
#define CTL_WORKLOAD "mlp\n\x1b[2Jt\r"
#define PLAIN_WORKLOAD "mlp_x_y2Jt_"
#define CTL_SOLVER "gr\x1b[31m\ned"
#define PLAIN_SOLVER "gr_y31m_ed"
static void copy_with_names(const fixture *fx, const char *copy, const char *workload,
                            const char *solver) {
  char cmd[2600];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", fx->results, copy);
  assert_int_equal(system(cmd), 0);
  mb_error err;
  mb_results *r = mb_results_open(copy, true, &err);
  if (!r) fail_msg("%s", err.message);
  mb_result_row *rows;
  int64_t n;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  int renamed = 0;
  for (int64_t i = 0; i < n; i++) {
    bool wl = !strcmp(rows[i].workload, "mlp_tiny"), sv = !strcmp(rows[i].solver, "greedy");
    if (wl) snprintf(rows[i].workload, sizeof rows[i].workload, "%s", workload);
    if (sv) snprintf(rows[i].solver, sizeof rows[i].solver, "%s", solver);
    if (wl || sv) {
      assert_true(mb_results_write_row(r, i, &rows[i], &err));
      renamed++;
    }
  }
  assert_true(renamed > 0);
  free(rows);
  assert_true(mb_results_close(r, &err));
}

static void copy_renamed(const fixture *fx, const char *copy, bool ctl) {
  copy_with_names(fx, copy, ctl ? CTL_WORKLOAD : PLAIN_WORKLOAD, ctl ? CTL_SOLVER : PLAIN_SOLVER);
}

/* Fails when text holds a control byte other than the line break. */
static void assert_no_control_bytes(const char *text, const char *what) {
  for (const char *p = text; *p; p++)
    if (((unsigned char)*p < 0x20 && *p != '\n') || *p == 0x7f)
      fail_msg("raw control byte 0x%02x in %s: %.40s", (unsigned char)*p, what, p);
}

static int count_lines(const char *text) {
  int n = 0;
  for (const char *p = text; *p; p++) n += *p == '\n';
  return n;
}

/* The report of results whose names and attributes hold control bytes (see copy_renamed), with
 * the attribute zz_control set to `value`, written as ctl.md and ctl-tex/ (plain.md with `ctl`
 * false). */
static void report_renamed(const fixture *fx, bool ctl, const char *value) {
  char copy[1200];
  snprintf(copy, sizeof copy, "%s/%s.h5", fx->dir, ctl ? "ctl" : "plain");
  copy_renamed(fx, copy, ctl);
  mb_error err;
  mb_results *r = mb_results_open(copy, true, &err);
  if (!r) fail_msg("%s", err.message);
  if (!mb_results_set_attr_string(r, "zz_control", value, &err)) fail_msg("%s", err.message);
  assert_true(mb_results_close(r, &err));
  char md[1300], tex[1300];
  snprintf(md, sizeof md, "%s/%s.md", fx->dir, ctl ? "ctl" : "plain");
  snprintf(tex, sizeof tex, "%s/%s-tex", fx->dir, ctl ? "ctl" : "plain");
  mb_report_options opt = {.markdown_path = md, .tex_dir = tex};
  if (!mb_report_write(copy, &opt, NULL, &err)) fail_msg("%s", err.message);
}

/* Names and attributes come from files and may hold control bytes: the LaTeX tables spell
 * each as "\xHH" (\textbackslash{}xHH), as messages do, instead of passing it raw, which TeX
 * refuses (ESC is an invalid character; a blank line ends the cell's paragraph). REPORT.md,
 * read by people too, spells them "\xHH" (a raw ESC would reach a terminal, a line break end a
 * table row) and keeps its table escaping: it has the lines of the same report on plain names. */
static void test_report_control_bytes(void **state) {
  fixture *fx = *state;
  const char *value = "a\x1b[2Jb\n\nc\td\x7f_e\x01\x02\x03\x04\x05\x06|f";
  report_renamed(fx, true, value);
  report_renamed(fx, false, "a_y2Jb_______c_d__e_________________|f");
  char tex[1300], path[1400];
  snprintf(tex, sizeof tex, "%s/ctl-tex", fx->dir);

  snprintf(path, sizeof path, "%s/ctl.md", fx->dir);
  char *md = mb_read_file(path, NULL);
  assert_non_null(md);
  snprintf(path, sizeof path, "%s/plain.md", fx->dir);
  char *plain = mb_read_file(path, NULL);
  assert_non_null(plain);
  assert_no_control_bytes(md, "REPORT.md");
  assert_int_equal(count_lines(md), count_lines(plain));
  const char *want[] = {
      "| zz_control | `a\\x1b[2Jb\\x0a\\x0ac\\x09d\\x7f_e\\x01\\x02\\x03\\x04\\x05\\x06\\|f` |\n",
      "\n| mlp\\x0a\\x1b[2Jt\\x0d | tpu-v4i |", /* per-workload row */
      " gr\\x1b[31m\\x0aed |",                  /* solver column */
      "\n| gr\\x1b[31m\\x0aed | ",              /* summary row */
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(md, want[i])) fail_msg("REPORT.md lacks '%s':\n%s", want[i], md);
  free(md);
  free(plain);

  snprintf(path, sizeof path, "%s/provenance.tex", tex);
  char *text = mb_read_file(path, NULL);
  assert_non_null(text);
  for (const char *p = text; *p; p++)
    if (((unsigned char)*p < 0x20 && *p != '\n') || *p == 0x7f)
      fail_msg("raw control byte 0x%02x in provenance.tex: %.40s", (unsigned char)*p, p);
  const char *cell = strstr(text, "zz\\_control");
  assert_non_null(cell);
  cell = strstr(cell, "\\texttt{");
  assert_non_null(cell);
  int longest;
  char *decoded = decode_tex_cell(cell + 8, &longest);
  assert_string_equal(decoded,
                      "a\\x1b[2Jb\\x0a\\x0ac\\x09d\\x7f_e\\x01\\x02\\x03\\x04\\x05\\x06|f");
  if (longest > 16) fail_msg("%d characters without a break in: %s", longest, decoded);
  assert_breaks_where_needed(cell + 8);
  free(decoded);
  free(text);
  compile_provenance_table(tex, "LaTeX compile check");
}

/* The longest names a results file holds (a 127-byte workload, a 31-byte solver), made of
 * characters LaTeX escapes, reach every LaTeX table whole: the tables once escaped names into
 * fixed buffers and cut these short. */
static void test_report_longest_names(void **state) {
  fixture *fx = *state;
  char workload[MB_RES_WORKLOAD], solver[MB_RES_SOLVER], tex_workload[512], tex_solver[128];
  memset(workload, '_', sizeof workload - 1);
  memset(solver, '_', sizeof solver - 1);
  workload[0] = 'w';
  workload[sizeof workload - 2] = 'z';
  workload[sizeof workload - 1] = '\0';
  solver[0] = 'g';
  solver[sizeof solver - 2] = 'd';
  solver[sizeof solver - 1] = '\0';
  snprintf(tex_workload, sizeof tex_workload, "w");
  for (size_t i = 1; i + 2 < sizeof workload; i++) strcat(tex_workload, "\\_");
  strcat(tex_workload, "z");
  snprintf(tex_solver, sizeof tex_solver, "g");
  for (size_t i = 1; i + 2 < sizeof solver; i++) strcat(tex_solver, "\\_");
  strcat(tex_solver, "d");
  char copy[1200], tex[1300], path[1400];
  snprintf(copy, sizeof copy, "%s/longest.h5", fx->dir);
  copy_with_names(fx, copy, workload, solver);
  snprintf(tex, sizeof tex, "%s/longest-tex", fx->dir);
  mb_report_options opt = {.tex_dir = tex, .formats = MB_REPORT_TEX};
  mb_error err;
  if (!mb_report_write(copy, &opt, NULL, &err)) fail_msg("%s", err.message);
  const struct {
    const char *file, *name;
  } want[] = {{"workloads.tex", tex_workload},
              {"workloads.tex", tex_solver},
              {"summary.tex", tex_solver},
              {"alphatensor.tex", tex_solver}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", tex, want[i].file);
    char *text = mb_read_file(path, NULL);
    assert_non_null(text);
    if (!strstr(text, want[i].name))
      fail_msg("%s lacks '%s':\n%s", want[i].file, want[i].name, text);
    free(text);
  }
}

/* A solver's LaTeX macros are named by its letters in CamelCase: a letter after a non-letter
 * (or first) upper case, the others as they are; digits and punctuation dropped. The name's
 * letters include both ends of both ranges (a, z, A, Z). */
static void test_report_macro_names(void **state) {
  fixture *fx = *state;
  char copy[1200], tex[1300], path[1400];
  snprintf(copy, sizeof copy, "%s/macro-names.h5", fx->dir);
  copy_with_names(fx, copy, "mlp_tiny", "az_zA-Z9a");
  snprintf(tex, sizeof tex, "%s/macro-names-tex", fx->dir);
  mb_report_options opt = {.tex_dir = tex, .formats = MB_REPORT_TEX};
  mb_error err;
  if (!mb_report_write(copy, &opt, NULL, &err)) fail_msg("%s", err.message);
  snprintf(path, sizeof path, "%s/macros.tex", tex);
  char *text = mb_read_file(path, NULL);
  assert_non_null(text);
  if (!strstr(text, "\\newcommand{\\GeomeanAzZAZA}{"))
    fail_msg("macros.tex lacks \\GeomeanAzZAZA:\n%s", text);
  free(text);
}

static void test_report_errors(void **state) {
  fixture *fx = *state;
  mb_error err;
  unsigned formats;
  assert_false(mb_report_parse_formats("md,html", &formats, &err));
  assert_string_equal(err.message, "--format: unknown format 'html' (expected md or tex)");
  /* each name exactly: another of the same length, a prefix or an empty item is refused */
  const char *bad[] = {"pdf", "mdx", "te", "md,", "", "md,,tex", "MD"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (mb_report_parse_formats(bad[i], &formats, &err))
      fail_msg("--format '%s' accepted (formats %u)", bad[i], formats);
  assert_false(mb_report_parse_formats("md,", &formats, &err));
  assert_string_equal(err.message, "--format: 'md,' ends with a comma");
  assert_true(mb_report_parse_formats("tex", &formats, &err));
  assert_int_equal(formats, MB_REPORT_TEX);
  assert_true(mb_report_parse_formats("tex,md", &formats, &err));
  assert_int_equal(formats, MB_REPORT_TEX | MB_REPORT_MD);
  mb_report_options opt = {.markdown_path = "/proc/no/such/dir/REPORT.md", .formats = MB_REPORT_MD};
  assert_false(mb_report_write(fx->results, &opt, NULL, &err));
  assert_non_null(strstr(err.message, "/proc/no/such/dir"));
}

/* ---- catalogue splits ---- */

/* The fixture catalogue's split of a workload. */
static const char *catalogue_split(const char *workload) {
  if (!strcmp(workload, "mlp_tiny") || !strcmp(workload, "conv_block")) return "train";
  if (!strcmp(workload, "attention_block") || !strcmp(workload, "strassen2_1024_f32-gpu"))
    return "test";
  return NULL;
}

/* Per-solver summary of one split computed from the raw rows alone (not through the matrix):
 * per case the geometric mean over seeds, then the geometric mean over cases. */
typedef struct split_expect {
  int cases, wins, ties, losses;
  double geomean, wall;
} split_expect;

/* Whether `workload` is in the NULL-terminated list `names` (a NULL list holds every name). */
static bool listed(const char *const *names, const char *workload) {
  if (!names) return true;
  for (; *names; names++)
    if (!strcmp(*names, workload)) return true;
  return false;
}

/* The same over the cases whose workload is in `names` (NULL: every workload) and, unless `split`
 * is NULL, in that split. */
static split_expect expect_from_rows_in(const mb_result_row *rows, int64_t n, const char *solver,
                                        const char *split, const char *const *names) {
  split_expect e = {0};
  double log_sum = 0;
  for (int64_t i = 0; i < n; i++) {
    if (strcmp(rows[i].solver, solver) || !listed(names, rows[i].workload) ||
        (split && strcmp(catalogue_split(rows[i].workload), split)))
      continue;
    e.wall += rows[i].wall_s;
    if (rows[i].seed != 0) continue;
    double case_log = 0;
    int seeds = 0;
    for (int64_t j = 0; j < n; j++)
      if (!strcmp(rows[j].solver, solver) && !strcmp(rows[j].workload, rows[i].workload) &&
          !strcmp(rows[j].hardware, rows[i].hardware)) {
        case_log += log((double)rows[j].t_heuristic_ps / (double)rows[j].t_solver_ps);
        seeds++;
      }
    double sp = exp(case_log / seeds);
    log_sum += log(sp);
    e.cases++;
    if (fabs(sp - 1.0) <= 1e-9)
      e.ties++;
    else if (sp > 1.0)
      e.wins++;
    else
      e.losses++;
  }
  e.geomean = e.cases ? exp(log_sum / e.cases) : NAN;
  return e;
}

static split_expect expect_from_rows(const mb_result_row *rows, int64_t n, const char *solver,
                                     const char *split) {
  return expect_from_rows_in(rows, n, solver, split, NULL);
}

static void read_all_rows(const char *path, mb_result_row **rows, int64_t *n) {
  mb_error err;
  mb_results *r = mb_results_open(path, false, &err);
  if (!r) fail_msg("%s", err.message);
  assert_true(mb_results_read_rows(r, rows, n, &err));
  mb_results_close(r, NULL);
}

static void test_split_summary_matches_rows(void **state) {
  fixture *fx = *state;
  mb_error err;
  mb_results *r = mb_results_open(fx->results, false, &err);
  assert_non_null(r);
  /* the driver stored each workload's catalogue split */
  char **keys = NULL;
  int32_t nk = 0;
  assert_true(mb_results_workload_keys(r, &keys, &nk, &err));
  assert_int_equal(nk, 4);
  for (int32_t i = 0; i < nk; i++) {
    char split[MB_RES_SPLIT];
    assert_true(mb_results_get_workload_split(r, keys[i], split, &err));
    assert_non_null(catalogue_split(keys[i]));
    assert_string_equal(split, catalogue_split(keys[i]));
  }
  mb_results_free_strings(keys, nk);
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  assert_non_null(m);
  mb_results_close(r, NULL);
  mb_result_row *rows;
  int64_t n;
  read_all_rows(fx->results, &rows, &n);
  mb_solver_summary *sum = calloc((size_t)m->n_solvers, sizeof *sum);
  const char *splits[2] = {"train", "test"};
  for (int k = 0; k < 2; k++) {
    assert_int_equal(mb_result_matrix_count_split(m, splits[k]), 2);
    mb_result_matrix_summarise_split(m, splits[k], sum);
    for (int32_t s = 0; s < m->n_solvers; s++) {
      split_expect e = expect_from_rows(rows, n, sum[s].solver, splits[k]);
      assert_int_equal(sum[s].n_cases, e.cases);
      assert_int_equal(e.cases, 2);
      assert_int_equal(sum[s].wins, e.wins);
      assert_int_equal(sum[s].ties, e.ties);
      assert_int_equal(sum[s].losses, e.losses);
      assert_true(fabs(sum[s].geomean_speedup - e.geomean) <= 1e-12 * e.geomean);
      assert_true(fabs(sum[s].total_wall_s - e.wall) <= 1e-9);
    }
  }
  /* the printed table: the header names the split, the greedy row shows the test geomean */
  split_expect g = expect_from_rows(rows, n, "greedy", "test");
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  r = mb_results_open(fx->results, false, &err);
  assert_true(mb_summary_print_split(r, "test", out, &err));
  mb_results_close(r, NULL);
  fclose(out);
  assert_non_null(strstr(text, "test split: 2 of 4 cases;"));
  char want[128], gm[32];
  snprintf(gm, sizeof gm, "%.4fx", g.geomean);
  snprintf(want, sizeof want, "\n%-20s %6d %9s ", "greedy", 2, gm); /* summary.c's layout */
  if (!strstr(text, want)) fail_msg("summary --split test lacks '%s':\n%s", want + 1, text);
  free(text);
  /* the footer counts the cases whose heuristic is already at the LP bound (from the rows): none
   * in the test split, one in the train split */
  const char *footer_splits[3] = {"test", "train", NULL};
  int at_bound_all = 0;
  for (int k = 0; k < 3; k++) {
    int at_bound = 0, cases = 0;
    for (int64_t i = 0; i < n; i++) {
      if (strcmp(rows[i].solver, "heuristic") || rows[i].seed != 0 ||
          (footer_splits[k] && strcmp(catalogue_split(rows[i].workload), footer_splits[k])))
        continue;
      cases++;
      at_bound += rows[i].t_bound_ps > 0 && (double)(rows[i].t_heuristic_ps - rows[i].t_bound_ps) <=
                                                1e-5 * (double)rows[i].t_bound_ps;
    }
    out = open_memstream(&text, &len);
    r = mb_results_open(fx->results, false, &err);
    assert_true(mb_summary_print_split(r, footer_splits[k], out, &err));
    mb_results_close(r, NULL);
    fclose(out);
    snprintf(want, sizeof want, "In %d of these %d cases the heuristic is within 0.001%% of the LP",
             at_bound, cases);
    if (at_bound > 0 ? !strstr(text, want) : strstr(text, "of the LP bound") != NULL)
      fail_msg("summary: %d of %d case(s) at the bound, footer:\n%s", at_bound, cases, text);
    if (at_bound > 0) {
      int room = cases - at_bound; /* a count of one, or none, is said in words */
      if (room > 1)
        snprintf(want, sizeof want, "the other %d leave room for a win.", room);
      else
        snprintf(want, sizeof want, "%s",
                 room ? "the other one leaves room for a win." : "no case leaves room for a win.");
      if (!strstr(text, want)) fail_msg("summary lacks '%s':\n%s", want, text);
    }
    at_bound_all += at_bound;
    free(text);
  }
  assert_true(at_bound_all > 0); /* the fixture exercises the footer */
  free(sum);
  free(rows);
  mb_result_matrix_free(m);
}

/* Copies the fixture's results file to dir/name and rewrites each workload's split: NULL
 * deletes the attribute (a file written before splits were stored). */
static void split_variant(const fixture *fx, const char *name, const char *split, char *out,
                          size_t n) {
  snprintf(out, n, "%s/%s", fx->dir, name);
  char cmd[3000];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", fx->results, out);
  assert_int_equal(system(cmd), 0);
  mb_error err;
  mb_results *r = mb_results_open(out, true, &err);
  assert_non_null(r);
  char **keys = NULL;
  int32_t nk = 0;
  assert_true(mb_results_workload_keys(r, &keys, &nk, &err));
  if (split)
    for (int32_t i = 0; i < nk; i++)
      assert_true(mb_results_set_workload_split(r, keys[i], split, &err));
  assert_true(mb_results_close(r, &err));
  if (!split) {
    hid_t f = H5Fopen(out, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    for (int32_t i = 0; i < nk; i++) {
      char enc[512], path[600];
      assert_non_null(mb_results_encode_name(keys[i], enc, sizeof enc));
      snprintf(path, sizeof path, "/workloads/%s", enc);
      assert_true(H5Adelete_by_name(f, path, "split", H5P_DEFAULT) >= 0);
    }
    assert_true(H5Fclose(f) >= 0);
    assert_true(mb_results_unseal(out, NULL)); /* an older writer left no seal */
  }
  mb_results_free_strings(keys, nk);
}

/* Runs the CLI with stderr to dir/cli.err; returns the exit status. */
static int cli(const fixture *fx, const char *args, char **err_text) {
  char cmd[4096], errp[1100];
  snprintf(errp, sizeof errp, "%s/cli.err", fx->dir);
  snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>'%s'", MB_TEST_BINARY, args, errp);
  int rc = system(cmd);
  *err_text = mb_read_file(errp, NULL);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void test_summary_split_errors(void **state) {
  fixture *fx = *state;
  char old[1024], args[2048];
  split_variant(fx, "nosplit.h5", NULL, old, sizeof old);
  mb_error err;
  mb_results *r = mb_results_open(old, false, &err);
  FILE *out = fopen("/dev/null", "w");
  assert_false(mb_summary_print_split(r, "test", out, &err));
  assert_non_null(strstr(err.message, old));
  assert_non_null(strstr(err.message, "no split information"));
  /* without --split it still reads, as every older file */
  assert_true(mb_summary_print_split(r, NULL, out, &err));
  fclose(out);
  mb_results_close(r, NULL);

  char *e = NULL;
  snprintf(args, sizeof args, "summary '%s' --split test", old);
  assert_int_equal(cli(fx, args, &e), 2);
  assert_non_null(strstr(e, "no split information"));
  assert_non_null(strstr(e, "nosplit.h5"));
  free(e);
  snprintf(args, sizeof args, "summary '%s'", old);
  assert_int_equal(cli(fx, args, &e), 0);
  free(e);
  snprintf(args, sizeof args, "summary --split=train '%s'", fx->results);
  assert_int_equal(cli(fx, args, &e), 0);
  free(e);
  snprintf(args, sizeof args, "summary '%s' --split validation", fx->results);
  assert_int_equal(cli(fx, args, &e), 2);
  assert_non_null(strstr(e, "--split 'validation': expected train or test"));
  free(e);
  snprintf(args, sizeof args, "summary '%s' --split", fx->results);
  assert_int_equal(cli(fx, args, &e), 2);
  assert_non_null(strstr(e, "--split needs a value"));
  free(e);
  snprintf(args, sizeof args, "summary '%s' '%s'", fx->results, old);
  assert_int_equal(cli(fx, args, &e), 2);
  assert_non_null(strstr(e, "one results file expected"));
  free(e);
  assert_int_equal(cli(fx, "summary", &e), 2);
  assert_non_null(strstr(e, "usage: mallocbench summary FILE [--split train|test]"));
  free(e);
}

/* ---- summary of a workload family (--workloads) ---- */

/* mb_summary_print_filtered's output for the results file at `path`; NULL with err set when it
 * fails, after checking it printed nothing. */
static char *summary_text(const char *path, const char *split, const char *workloads,
                          mb_error *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  mb_results *r = mb_results_open(path, false, err);
  if (!r) fail_msg("%s", err->message);
  bool ok = mb_summary_print_filtered(r, split, workloads, out, err);
  mb_results_close(r, NULL);
  fclose(out);
  if (ok) return text;
  if (len != 0) fail_msg("failed summary printed:\n%s", text);
  free(text);
  return NULL;
}

/* Solver and workload names come from the results file: `mallocbench summary` (and run's closing
 * summary) prints them with control bytes spelled "\xHH" (error.h), so the table has the lines of
 * the same file with plain names and no byte of an ESC sequence reaches the terminal. */
static void test_summary_control_bytes(void **state) {
  fixture *fx = *state;
  char ctl[1200], plain[1200];
  snprintf(ctl, sizeof ctl, "%s/summary_ctl.h5", fx->dir);
  snprintf(plain, sizeof plain, "%s/summary_plain.h5", fx->dir);
  copy_renamed(fx, ctl, true);
  copy_renamed(fx, plain, false);
  mb_error err;
  char *text = summary_text(ctl, NULL, NULL, &err);
  if (!text) fail_msg("%s", err.message);
  char *plain_text = summary_text(plain, NULL, NULL, &err);
  if (!plain_text) fail_msg("%s", err.message);
  assert_no_control_bytes(text, "summary");
  assert_int_equal(count_lines(text), count_lines(plain_text));
  if (!strstr(text, "\ngr\\x1b[31m\\x0aed "))
    fail_msg("summary lacks the escaped solver:\n%s", text);
  free(text);
  free(plain_text);
  /* a workload filter: the pattern (with its ESC) in the header, the case of the renamed
   * workload selected by its raw name */
  text = summary_text(ctl, NULL, "^mlp\n\x1b", &err);
  if (!text) fail_msg("%s", err.message);
  assert_no_control_bytes(text, "summary --workloads");
  if (!strstr(text, "workloads matching '^mlp\\x0a\\x1b': 1 of 4 cases"))
    fail_msg("summary --workloads header:\n%s", text);
  plain_text = summary_text(plain, NULL, "^mlp_x", &err);
  if (!plain_text) fail_msg("%s", err.message);
  assert_int_equal(count_lines(text), count_lines(plain_text));
  free(text);
  free(plain_text);
  /* a pattern that matches nothing lists the workload names, escaped, in one line */
  assert_null(summary_text(ctl, NULL, "^no_such", &err));
  assert_no_control_bytes(err.message, "the message");
  assert_null(strchr(err.message, '\n'));
  if (!strstr(err.message, "mlp\\x0a\\x1b[2Jt\\x0d")) fail_msg("%s", err.message);
}

/* Two-sided exact sign test computed here by counting outcomes, independently of stats.c. */
static double sign_test_by_counting(int up, int down) {
  int m = up + down, k = up < down ? up : down;
  if (m == 0) return 1;
  double choose = 1, tail = 0; /* C(m, i), small m only */
  for (int i = 0; i <= k; i++) {
    tail += choose;
    choose = choose * (m - i) / (i + 1);
  }
  double p = 2 * tail / pow(2, m);
  return p > 1 ? 1 : p;
}

/* The table's row of `solver` shows the cases, geomean (4 decimals) and its interval,
 * wins/ties/losses of e and the sign test of those wins and losses. */
static void assert_summary_row(const char *text, const char *solver, split_expect e) {
  char key[64];
  snprintf(key, sizeof key, "\n%-20s ", solver); /* summary.c's layout */
  const char *row = strstr(text, key);
  if (!row) fail_msg("no row of %s in:\n%s", solver, text);
  int cases, wins, ties, losses;
  double geomean, sign_p, lo = NAN, hi = NAN;
  const char *at = row + strlen(key);
  if (sscanf(at, "%d %lfx [%lf, %lf] %*s %d %d %d %lf", &cases, &geomean, &lo, &hi, &wins, &ties,
             &losses, &sign_p) != 8 &&
      sscanf(at, "%d %lfx - %*s %d %d %d %lf", &cases, &geomean, &wins, &ties, &losses, &sign_p) !=
          6)
    fail_msg("unreadable row of %s in:\n%s", solver, text);
  /* the interval: shown from 2 cases on, holds the geomean, symmetric about it in log space */
  if ((e.cases >= 2) != !isnan(lo))
    fail_msg("%s: interval shown or not for %d cases:\n%s", solver, e.cases, text);
  if (!isnan(lo) &&
      !(lo <= geomean + 1e-4 && geomean <= hi + 1e-4 && fabs(lo * hi - geomean * geomean) <= 5e-4))
    fail_msg("%s: interval [%g, %g] around %g:\n%s", solver, lo, hi, geomean, text);
  if (!(fabs(sign_p - sign_test_by_counting(e.wins, e.losses)) <= 0.00005 + 1e-12))
    fail_msg("%s: sign p %g, expected %g for %d wins and %d losses:\n%s", solver, sign_p,
             sign_test_by_counting(e.wins, e.losses), e.wins, e.losses, text);
  if (cases != e.cases || wins != e.wins || ties != e.ties || losses != e.losses ||
      !(fabs(geomean - e.geomean) <= 0.00005 + 1e-12))
    fail_msg("%s: table shows %d cases %.4fx %d/%d/%d, rows give %d cases %.6fx %d/%d/%d:\n%s",
             solver, cases, geomean, wins, ties, losses, e.cases, e.geomean, e.wins, e.ties,
             e.losses, text);
}

static void test_workloads_summary_matches_rows(void **state) {
  fixture *fx = *state;
  mb_result_row *rows;
  int64_t n;
  read_all_rows(fx->results, &rows, &n);
  const char *solvers[] = {"heuristic", "greedy", "with_curve"};
  const char *blocks[] = {"attention_block", "conv_block", NULL};
  const char *test_att_str[] = {"attention_block", "strassen2_1024_f32-gpu", NULL};
  struct {
    const char *split, *regex, *header;
    const char *const *names;
    int cases;
  } cases[] = {
      {NULL, "_block$", "\nworkloads matching '_block$': 2 of 4 cases\nTimes", blocks, 2},
      {"train", "_block$", "\ntrain split, workloads matching '_block$': 1 of 4 cases\nTimes",
       blocks, 1},
      {"test", "^(att|str)",
       "\ntest split, workloads matching '^(att|str)': 2 of 4 cases; workloads mallocMuZero "
       "never saw in training\nTimes",
       test_att_str, 2},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mb_error err;
    char *text = summary_text(fx->results, cases[k].split, cases[k].regex, &err);
    if (!text) fail_msg("%s", err.message);
    if (!strstr(text, cases[k].header)) fail_msg("lacks '%s':\n%s", cases[k].header + 1, text);
    if (!cases[k].split) assert_null(strstr(text, "split"));
    for (size_t s = 0; s < sizeof solvers / sizeof solvers[0]; s++) {
      split_expect e = expect_from_rows_in(rows, n, solvers[s], cases[k].split, cases[k].names);
      assert_int_equal(e.cases, cases[k].cases);
      assert_summary_row(text, solvers[s], e);
    }
    free(text);
  }
  free(rows);
  /* a pattern that matches every case prints the unfiltered table */
  mb_error err;
  char *all = summary_text(fx->results, NULL, NULL, &err);
  char *dot = summary_text(fx->results, NULL, ".", &err);
  assert_non_null(all);
  assert_non_null(dot);
  assert_non_null(strstr(dot, "\nworkloads matching '.': 4 of 4 cases\n"));
  assert_string_equal(strstr(all, "Times are"), strstr(dot, "Times are"));
  free(all);
  free(dot);
}

static void test_workloads_summary_errors(void **state) {
  fixture *fx = *state;
  mb_error err;
  assert_null(summary_text(fx->results, NULL, "x(", &err));
  assert_string_equal(err.message, "--workloads 'x(': column 3: missing closing parenthesis");
  assert_null(summary_text(fx->results, "test", "a{2,1}", &err));
  assert_non_null(strstr(err.message, "--workloads 'a{2,1}': column "));
  assert_null(summary_text(fx->results, NULL, "^zzz", &err));
  char want[1400];
  snprintf(want, sizeof want,
           "%s: --workloads '^zzz' matches no workload name of the file's 4 case(s) (workloads: ",
           fx->results);
  if (strncmp(err.message, want, strlen(want))) fail_msg("message: %s", err.message);
  assert_non_null(strstr(err.message, "mlp_tiny"));
  assert_non_null(strstr(err.message, "strassen2_1024_f32-gpu"));
  assert_null(summary_text(fx->results, "test", "^(mlp|conv)", &err));
  snprintf(want, sizeof want,
           "%s: --workloads '^(mlp|conv)' matches 2 case(s), none of them in the test split (2 in "
           "the train split)",
           fx->results);
  assert_string_equal(err.message, want);
  assert_null(summary_text(fx->results, "dev", ".", &err));
  assert_string_equal(err.message, "split 'dev': expected train or test");
  /* a file without split information: --workloads alone works, with --split it is refused */
  char old[1024];
  split_variant(fx, "nosplit-workloads.h5", NULL, old, sizeof old);
  char *text = summary_text(old, NULL, "_block$", &err);
  if (!text) fail_msg("%s", err.message);
  assert_non_null(strstr(text, "\nworkloads matching '_block$': 2 of 4 cases\n"));
  free(text);
  assert_null(summary_text(old, "train", "_block$", &err));
  assert_non_null(strstr(err.message, "no split information"));

  /* the CLI: exit 2 and the message */
  char args[2048], *e = NULL;
  snprintf(args, sizeof args, "summary '%s' --workloads 'x('", fx->results);
  assert_int_equal(cli(fx, args, &e), 2);
  assert_non_null(
      strstr(e, "mallocbench summary: --workloads 'x(': column 3: missing closing parenthesis"));
  free(e);
  snprintf(args, sizeof args, "summary '%s' --split=train --workloads=attention", fx->results);
  assert_int_equal(cli(fx, args, &e), 2);
  assert_non_null(strstr(e, "none of them in the train split (1 in the test split)"));
  free(e);
  snprintf(args, sizeof args, "summary '%s' --workloads", fx->results);
  assert_int_equal(cli(fx, args, &e), 2);
  assert_non_null(strstr(e, "--workloads needs a value"));
  free(e);
  snprintf(args, sizeof args, "summary --workloads=_block --split test '%s'", fx->results);
  assert_int_equal(cli(fx, args, &e), 0);
  free(e);
}

/* Builds a copy of paper/main.tex against the tables in tex_dir; true when pdflatex succeeds. */
static bool paper_builds(const fixture *fx, const char *tex_dir) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "rm -rf '%s/paper' && mkdir -p '%s/paper' && cp '%s/paper/main.tex' '%s/paper/' && "
           "cp -r '%s' '%s/paper/generated' && cd '%s/paper' && "
           "pdflatex -interaction=nonstopmode -halt-on-error main.tex >/dev/null 2>&1",
           fx->dir, fx->dir, mb_source_dir(), fx->dir, tex_dir, fx->dir, fx->dir);
  return system(cmd) == 0;
}

static void test_report_test_split_table(void **state) {
  fixture *fx = *state;
  char md[1200], tex[1024], st[1100], macros[1100];
  snprintf(md, sizeof md, "%s/REPORT-split.md", fx->dir);
  snprintf(tex, sizeof tex, "%s/generated-split", fx->dir);
  snprintf(st, sizeof st, "%s/summary_test.tex", tex);
  snprintf(macros, sizeof macros, "%s/macros.tex", tex);
  mb_report_options opt = {.markdown_path = md, .tex_dir = tex};
  mb_error err;
  /* both splits: a second table in the Markdown and summary_test.tex */
  if (!mb_report_write(fx->results, &opt, NULL, &err)) fail_msg("%s", err.message);
  char *text = mb_read_file(md, NULL);
  assert_true(assert_tables_well_formed(text, "REPORT-split.md") >= 3);
  const char *head = "## Test split (workloads unseen in mallocMuZero's training)";
  const char *sec = strstr(text, head);
  assert_non_null(sec);
  assert_non_null(strstr(text, "2 of the train split, 2 of the test split"));
  mb_result_row *rows;
  int64_t n;
  read_all_rows(fx->results, &rows, &n);
  split_expect g = expect_from_rows(rows, n, "greedy", "test");
  free(rows);
  double shown = report_geomean(sec, "greedy");
  assert_false(isnan(shown));
  assert_true(fabs(shown - g.geomean) <= 0.0005 + 1e-12);
  free(text);
  char *t = mb_read_file(st, NULL);
  assert_non_null(t);
  char want[128];
  snprintf(want, sizeof want, "greedy & 2 & %.3f & ", g.geomean);
  if (!strstr(t, want)) fail_msg("summary_test.tex lacks '%s':\n%s", want, t);
  free(t);
  t = mb_read_file(macros, NULL);
  assert_non_null(strstr(t, "\\newcommand{\\NumTestCases}{2}"));
  assert_non_null(strstr(t, "\\newcommand{\\NumTrainCases}{2}"));
  /* per solver, named in CamelCase of its letters ("with_curve": WithCurve) */
  const char *named[] = {"\\newcommand{\\GeomeanHeuristic}{1.000}",
                         "\\newcommand{\\GeomeanGreedy}{", "\\newcommand{\\GeomeanWithCurve}{",
                         "\\newcommand{\\WinsWithCurve}{"};
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
    if (!strstr(t, named[i])) fail_msg("macros.tex lacks '%s':\n%s", named[i], t);
  free(t);
  bool latex = system("command -v pdflatex >/dev/null 2>&1") == 0;
  if (latex) {
    char doc[1200], cmd[4096];
    snprintf(doc, sizeof doc, "%s/check.tex", tex);
    FILE *f = fopen(doc, "w");
    fprintf(f,
            "\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
            "\\input{macros.tex}\\input{summary_test.tex} \\NumTestCases\n\\end{document}\n");
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && pdflatex -interaction=nonstopmode -halt-on-error check.tex >/dev/null "
             "2>&1",
             tex);
    assert_int_equal(system(cmd), 0);
    assert_true(paper_builds(fx, tex));
  } else {
    fprintf(stderr, "note: pdflatex not installed: LaTeX compile check skipped\n");
  }

  /* one split only, or none recorded: no test table, and a stale one is removed; the summary
   * counts the cases per split and the per-workload table has a split column only when the
   * file records splits */
  const char *variants[3] = {"train", "test", NULL};
  const char *files[3] = {"trainonly.h5", "testonly.h5", "nosplit2.h5"};
  const char *counts[3] = {" All 4 cases: 4 of the train split, 0 of the test split.\n",
                           " All 4 cases: 0 of the train split, 4 of the test split.\n", NULL};
  const char *macro[3] = {"\\newcommand{\\NumTrainCases}{4}\n\\newcommand{\\NumTestCases}{0}",
                          "\\newcommand{\\NumTrainCases}{0}\n\\newcommand{\\NumTestCases}{4}",
                          "\\newcommand{\\NumTrainCases}{0}\n\\newcommand{\\NumTestCases}{0}"};
  for (int v = 0; v < 3; v++) {
    char file[1024];
    split_variant(fx, files[v], variants[v], file, sizeof file);
    assert_true(access(st, F_OK) == 0);
    if (!mb_report_write(file, &opt, NULL, &err)) fail_msg("%s", err.message);
    assert_int_not_equal(access(st, F_OK), 0);
    text = mb_read_file(md, NULL);
    assert_null(strstr(text, head));
    assert_non_null(strstr(text, "## Summary per solver"));
    if (counts[v] && !strstr(text, counts[v])) fail_msg("%s lacks '%s'", files[v], counts[v]);
    if (!counts[v]) assert_null(strstr(text, " of the train split"));
    bool split_column = strstr(text, "\n| workload | hardware | split | buffers |") != NULL;
    assert_int_equal(split_column, variants[v] != NULL);
    if (variants[v]) {
      char row[64];
      snprintf(row, sizeof row, "\n| mlp_tiny | tpu-v4i | %s | ", variants[v]);
      if (!strstr(text, row)) fail_msg("%s lacks '%s'", files[v], row);
    }
    free(text);
    t = mb_read_file(macros, NULL);
    if (!strstr(t, macro[v])) fail_msg("%s: macros.tex lacks '%s':\n%s", files[v], macro[v], t);
    free(t);
    if (latex) assert_true(paper_builds(fx, tex));
    /* put the full file's tables back for the next variant */
    if (!mb_report_write(fx->results, &opt, NULL, &err)) fail_msg("%s", err.message);
  }
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

/* A results file without rows (a run killed before its first task finished): summary says so,
 * report and plot refuse it by name, and the output directories they cannot use are named. */
static void test_empty_file_and_bad_directories(void **state) {
  fixture *fx = *state;
  mb_error err;
  char empty[1200];
  snprintf(empty, sizeof empty, "%s/empty.h5", fx->dir);
  mb_results *r = mb_results_create(empty, true, &err);
  if (!r) fail_msg("%s", err.message);
  assert_true(mb_results_close(r, &err));
  r = mb_results_open(empty, false, &err);
  if (!r) fail_msg("%s", err.message);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_true(mb_summary_print(r, out, &err));
  fclose(out);
  assert_non_null(strstr(text, "(no results yet)\n"));
  free(text);
  out = open_memstream(&text, &len);
  assert_false(mb_summary_print_filtered(r, NULL, "^mlp", out, &err));
  fclose(out);
  free(text);
  char want[1500];
  snprintf(want, sizeof want,
           "%s: --workloads '^mlp': the file holds no result yet, no case to match", empty);
  assert_string_equal(err.message, want);
  mb_results_close(r, NULL);
  char md[1200];
  snprintf(md, sizeof md, "%s/empty.md", fx->dir);
  mb_report_options ropt = {.markdown_path = md, .formats = MB_REPORT_MD};
  assert_false(mb_report_write(empty, &ropt, NULL, &err));
  snprintf(want, sizeof want, "%s: the results table is empty: nothing to report", empty);
  assert_string_equal(err.message, want);
  mb_plot_outputs outputs;
  char figs[1200];
  snprintf(figs, sizeof figs, "%s/empty-figures", fx->dir);
  mb_plot_options popt = {.out_dir = figs, .formats = MB_PLOT_PNG};
  assert_false(mb_plot_all(empty, &popt, &outputs, &err));
  snprintf(want, sizeof want, "%s: the results table is empty: nothing to plot", empty);
  assert_string_equal(err.message, want);

  /* directories: one below a regular file cannot be made; a quote cannot reach gnuplot */
  char below_file[1300];
  snprintf(below_file, sizeof below_file, "%s/figs", fx->results);
  popt.out_dir = below_file;
  assert_false(mb_plot_all(fx->results, &popt, &outputs, &err));
  snprintf(want, sizeof want, "%s: cannot create output directory: ", below_file);
  assert_non_null(strstr(err.message, want));
  char quoted[1300];
  snprintf(quoted, sizeof quoted, "%s/it's", fx->dir);
  popt.out_dir = quoted;
  assert_false(mb_plot_all(fx->results, &popt, &outputs, &err));
  snprintf(want, sizeof want, "%s: paths with quotes or newlines cannot be passed to gnuplot",
           quoted);
  assert_string_equal(err.message, want);
  ropt.formats = MB_REPORT_TEX;
  ropt.tex_dir = below_file;
  assert_false(mb_report_write(fx->results, &ropt, NULL, &err));
  snprintf(want, sizeof want, "%s: cannot create directory: ", below_file);
  assert_non_null(strstr(err.message, want));
}

/* One agent's curve played by two or by three solvers is drawn once, its legend naming them
 * "a and b" or "a, b and c". */
static void test_curve_shared_by_solvers(void **state) {
  fixture *fx = *state;
  char gnuplot[1024];
  if (!mb_plot_find_gnuplot(gnuplot, sizeof gnuplot)) skip();
  const mb_solver extra[] = {
      {.name = "with_curve", .summary = "heuristic plus a training curve", .solve = curve_solver},
      {.name = "curve_b", .summary = "the same", .solve = curve_solver},
      {.name = "curve_c", .summary = "the same", .solve = curve_solver}};
  const char *solvers[] = {"heuristic,with_curve,curve_b", "heuristic,with_curve,curve_b,curve_c"};
  const char *legends[] = {"played by with_curve and curve_b<",
                           "played by with_curve, curve_b and curve_c<"};
  for (int k = 0; k < 2; k++) {
    own_run o;
    char name[16], out[1200], path[1300];
    snprintf(name, sizeof name, "shared%d", k);
    own_run_make(fx, name,
                 "name kind source args hardware capacity split tags\n"
                 "mlp_tiny native datasets/samples/mlp_tiny.wl - tpu-v4i 1048576 train mlp\n",
                 &o);
    snprintf(out, sizeof out, "%s/figures", o.dir);
    mb_run_config cfg = {.profile = "quick",
                         .workloads = ".",
                         .solvers = solvers[k],
                         .extra_solvers = extra,
                         .n_extra_solvers = 3,
                         .seeds = 1,
                         .jobs = 1,
                         .budget = 0.2,
                         .catalogue = o.catalogue,
                         .out = o.results,
                         .command_line = "test_plot_report"};
    mb_error err;
    if (!run_quietly(&cfg, &err)) fail_msg("mb_run: %s", err.message);
    mb_plot_options opt = {.out_dir = out, .formats = MB_PLOT_SVG};
    mb_plot_outputs outputs;
    if (!mb_plot_all(o.results, &opt, &outputs, &err)) fail_msg("%s", err.message);
    snprintf(path, sizeof path, "%s/training_curves.svg", out);
    char *text = mb_read_file(path, NULL);
    assert_non_null(text);
    if (!strstr(text, legends[k])) fail_msg("training_curves.svg lacks '%s'", legends[k]);
    assert_int_equal(count_in(text, "played by "), 1);
    free(text);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plot_writes_every_figure),
      cmocka_unit_test(test_plot_curves_without_reference),
      cmocka_unit_test(test_plot_pdf_fits_text_width),
      cmocka_unit_test(test_summary_caveats),
      cmocka_unit_test(test_plot_data_and_ranges),
      cmocka_unit_test(test_plot_errors),
      cmocka_unit_test(test_ties_missing_results_and_agent),
      cmocka_unit_test(test_curve_shared_by_solvers),
      cmocka_unit_test(test_report_numbers_match_hdf5),
      cmocka_unit_test(test_report_errors),
      cmocka_unit_test(test_report_long_provenance),
      cmocka_unit_test(test_report_longest_names),
      cmocka_unit_test(test_report_macro_names),
      cmocka_unit_test(test_report_control_bytes),
      cmocka_unit_test(test_alphatensor_names),
      cmocka_unit_test(test_split_summary_matches_rows),
      cmocka_unit_test(test_summary_split_errors),
      cmocka_unit_test(test_workloads_summary_matches_rows),
      cmocka_unit_test(test_workloads_summary_errors),
      cmocka_unit_test(test_summary_control_bytes),
      cmocka_unit_test(test_report_test_split_table),
      cmocka_unit_test(test_empty_file_and_bad_directories),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
