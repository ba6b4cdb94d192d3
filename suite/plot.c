#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cost.h"
#include "paths.h"
#include "result_matrix.h"
#include "results.h"

extern char **environ;

/* ---- running gnuplot ---- */

bool mb_plot_find_gnuplot(char *out, size_t n) {
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  const char *p = path;
  while (*p) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    if (len > 0 && len + 9 < n) {
      memcpy(out, p, len);
      memcpy(out + len, "/gnuplot", 9);
      if (access(out, X_OK) == 0) return true;
    }
    p += len + (colon ? 1 : 0);
  }
  return false;
}

typedef struct plot_job {
  char gnuplot[1024];
  char templates[1024];
  char tmp[1024]; /* temporary directory for data files and gnuplot's stderr */
  char out_dir[1024];
  unsigned formats;
  mb_plot_outputs *outputs;
} plot_job;

/* gnuplot strings are single-quoted: refuse paths that would break the quoting. */
static bool quotable(const char *s) { return !strchr(s, '\'') && !strchr(s, '\n'); }

/* "buffer" or "buffers" for a count: titles say "1 buffer", "0 buffers", "2 buffers". */
static const char *plural(long long n, const char *one, const char *many) {
  return n == 1 ? one : many;
}

/* Text from a file (an agent's name) as the contents of a single-quoted gnuplot string: control
 * bytes spelled "\xHH" as in messages (error.h), a quote doubled (gnuplot's escape for it). */
static void gnuplot_text(const char *s, char *out, size_t n) {
  char escaped[1024];
  mb_escape_text(escaped, sizeof escaped, s);
  size_t j = 0;
  for (const char *p = escaped; *p && j + 2 < n; p++) {
    if (*p == '\'') out[j++] = '\'';
    out[j++] = *p;
  }
  out[j] = '\0';
}

/* Runs gnuplot on a template with `vars` (gnuplot statements, e.g. "X='a'; N=3"). */
static bool run_template(plot_job *job, const char *template_name, const char *vars,
                         mb_error *err) {
  char template_path[2048], log_path[2048];
  snprintf(template_path, sizeof template_path, "%s/%s", job->templates, template_name);
  snprintf(log_path, sizeof log_path, "%s/gnuplot-stderr.txt", job->tmp);
  if (access(template_path, R_OK) != 0)
    return mb_fail(err, "plots/%s: template not found at %s", template_name, template_path);
  char *argv[] = {job->gnuplot, "-e", (char *)vars, template_path, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, job->gnuplot, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return mb_fail(err, "plots/%s: cannot start gnuplot: %s", template_name, strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  size_t len = 0;
  char *log = mb_read_file(log_path, &len);
  bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  /* gnuplot reports some data problems as warnings with exit status 0: treat those that
   * mean a missing figure ("all points ... undefined", "No data") as failures too */
  if (!failed && log && (strstr(log, "undefined") || strstr(log, "No data"))) failed = true;
  if (failed) {
    /* the first line(s) of gnuplot's complaint, without the trailing newline */
    char excerpt[600] = "";
    if (log) {
      snprintf(excerpt, sizeof excerpt, "%s", log);
      for (char *c = excerpt; *c; c++)
        if (*c == '\n') *c = ' ';
    }
    free(log);
    return mb_fail(err, "plots/%s: gnuplot failed (%s): %s", template_name,
                   WIFEXITED(status) ? "exit status" : "killed",
                   excerpt[0] ? excerpt : "no message");
  }
  free(log);
  return true;
}

static const struct {
  unsigned bit;
  const char *ext;
} FORMATS[] = {{MB_PLOT_PNG, "png"}, {MB_PLOT_PDF, "pdf"}, {MB_PLOT_SVG, "svg"}};

bool mb_plot_parse_formats(const char *list, unsigned *formats, mb_error *err) {
  *formats = 0;
  const char *p = list;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    bool known = false;
    for (size_t i = 0; i < sizeof FORMATS / sizeof FORMATS[0]; i++)
      if (strlen(FORMATS[i].ext) == len && !strncmp(p, FORMATS[i].ext, len)) {
        *formats |= FORMATS[i].bit;
        known = true;
      }
    if (!known)
      return mb_fail(err, "--format: unknown format '%.*s' (expected png, pdf or svg)", (int)len,
                     p);
    p += len + (comma ? 1 : 0);
  }
  if (!*formats) return mb_fail(err, "--format: no format given");
  return true;
}

/* Terminal for a format at a size in pixels. PDF: 150 px per inch, so that a 1000-1100 px
 * figure is about a page's text width and its 8 pt labels stay 8 pt in the paper. */
static void terminal_for(unsigned bit, int width, int height, char *out, size_t n) {
  switch (bit) {
    case MB_PLOT_PNG:
      snprintf(out, n, "pngcairo size %d,%d font \"Sans,11\" background rgb \"white\"", width,
               height);
      break;
    case MB_PLOT_PDF:
      snprintf(out, n, "pdfcairo size %.2fin,%.2fin font \"Sans,8\"", width / 150.0,
               height / 150.0);
      break;
    default:
      snprintf(out, n, "svg size %d,%d font \"Sans,11\" background rgb \"white\"", width, height);
  }
}

/* Draws one figure in every requested format. `vars` holds the figure's own variables. */
static bool draw(plot_job *job, const char *template_name, const char *figure, int width,
                 int height, const char *vars, mb_error *err) {
  for (size_t i = 0; i < sizeof FORMATS / sizeof FORMATS[0]; i++) {
    if (!(job->formats & FORMATS[i].bit)) continue;
    char out[2048], term[256];
    snprintf(out, sizeof out, "%s/%s.%s", job->out_dir, figure, FORMATS[i].ext);
    terminal_for(FORMATS[i].bit, width, height, term, sizeof term);
    size_t n = strlen(vars) + strlen(out) + strlen(term) + strlen(job->templates) + 128;
    char *all = malloc(n);
    if (!all) return mb_fail(err, "out of memory");
    snprintf(all, n, "TERMINAL='%s'; OUT='%s'; PLOTS='%s'; %s", term, out, job->templates, vars);
    bool ok = run_template(job, template_name, all, err);
    free(all);
    if (!ok) return false;
    /* gnuplot exits 0 when its output device fails (a full disk): an empty figure is an error */
    struct stat st;
    if (stat(out, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
      return mb_fail(err, "%s: gnuplot wrote no figure there (disk full, or not a regular file?)",
                     out);
    if (job->outputs->n < MB_PLOT_MAX_OUTPUTS)
      snprintf(job->outputs->paths[job->outputs->n++], sizeof job->outputs->paths[0], "%s", out);
  }
  return true;
}

/* ---- data export ---- */

static FILE *open_data(plot_job *job, const char *name, char *path, size_t n, mb_error *err) {
  snprintf(path, n, "%s/%s", job->tmp, name);
  FILE *f = fopen(path, "w");
  if (!f) mb_fail(err, "%s: cannot write: %s", path, strerror(errno));
  return f;
}

/* Case order for per-workload figures: by the best present speedup, ascending. */
typedef struct {
  int32_t c;
  double key;
} case_key;

static int cmp_case_key(const void *a, const void *b) {
  const case_key *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->c - y->c;
}

static case_key *sorted_cases(const mb_result_matrix *m) {
  case_key *keys = malloc((size_t)(m->n_cases ? m->n_cases : 1) * sizeof *keys);
  if (!keys) return NULL;
  for (int32_t c = 0; c < m->n_cases; c++) {
    double best = 1.0;
    for (int32_t s = 0; s < m->n_solvers; s++) {
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      if (cell->present && cell->speedup_heuristic > best) best = cell->speedup_heuristic;
    }
    keys[c] = (case_key){c, best};
  }
  qsort(keys, (size_t)m->n_cases, sizeof *keys, cmp_case_key);
  return keys;
}

/* Horizontal bar charts grow in height with the number of workloads, so every label stays
 * readable: a few pixels per bar. */
static int bars_height(int32_t n_cases, int32_t n_bars) {
  int h = 160 + n_cases * (8 + 6 * (n_bars > 1 ? n_bars : 1));
  return h < 500 ? 500 : (h > 8000 ? 8000 : h);
}

/* Writes a per-case table of one cell field (gaps in %), NaN where there is no value; gives its
 * range, its columns' solver names and how many cells are NaN (*missing). */
static bool write_case_table(plot_job *job, const mb_result_matrix *m, const case_key *order,
                             bool gaps, const char *name, char *path, size_t n, double *maxv,
                             double *minv, int *columns, int *missing, char *names, size_t names_n,
                             mb_error *err) {
  FILE *f = open_data(job, name, path, n, err);
  if (!f) return false;
  /* speedups of the heuristic are 1 by definition: the dashed line at 1 stands for it */
  int32_t skip = gaps ? -1 : mb_matrix_solver_index(m, "heuristic");
  *columns = 0;
  names[0] = '\0';
  for (int32_t s = 0; s < m->n_solvers; s++)
    if (s != skip) {
      size_t len = strlen(names);
      snprintf(names + len, names_n - len, "%s%s", len ? " " : "", m->solvers[s]);
      ++*columns;
    }
  *maxv = -INFINITY;
  *minv = INFINITY;
  *missing = 0;
  for (int32_t k = 0; k < m->n_cases; k++) {
    int32_t c = order[k].c;
    fprintf(f, "%s", m->cases[c].label);
    for (int32_t s = 0; s < m->n_solvers; s++) {
      if (s == skip) continue;
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      double v = !cell->present ? NAN : gaps ? 100.0 * cell->gap_to_bound : cell->speedup_heuristic;
      if (isnan(v)) {
        fprintf(f, " NaN");
        ++*missing;
      } else {
        fprintf(f, " %.9g", v);
        if (v > *maxv) *maxv = v;
        if (v < *minv) *minv = v;
      }
    }
    fprintf(f, "\n");
  }
  return fclose(f) == 0 || mb_fail(err, "%s: write failed", path);
}

static bool figure_speedups(plot_job *job, const mb_result_matrix *m, const case_key *order,
                            mb_error *err) {
  char path[2048];
  double maxv, minv;
  int columns, missing;
  char names[1024];
  if (!write_case_table(job, m, order, false, "speedup.dat", path, sizeof path, &maxv, &minv,
                        &columns, &missing, names, sizeof names, err))
    return false;
  if (!isfinite(maxv)) return true; /* no valid result at all: nothing to draw */
  /* x range: include 1 and a margin, never starting below 0 */
  double xmin = fmin(minv, 1.0), xmax = fmax(maxv, 1.0);
  double pad = (xmax - xmin) * 0.08 + 0.02;
  char vars[4096];
  snprintf(vars, sizeof vars,
           "DATA='%s'; NSOLVERS=%d; SOLVERS='%s'; NCASES=%d; NMISSING=%d; XMIN=%.6g; XMAX=%.6g",
           path, columns, names, m->n_cases, missing, fmax(0.0, xmin - pad), xmax + pad);
  return draw(job, "speedup_bars.gp", "speedup_per_workload", 1100,
              bars_height(m->n_cases, columns), vars, err);
}

static bool figure_gaps(plot_job *job, const mb_result_matrix *m, const case_key *order,
                        mb_error *err) {
  char path[2048];
  double maxv, minv;
  int columns, missing;
  char names[1024];
  if (!write_case_table(job, m, order, true, "gap.dat", path, sizeof path, &maxv, &minv, &columns,
                        &missing, names, sizeof names, err))
    return false;
  if (!isfinite(maxv)) return true; /* no bounds in this file */
  char vars[4096];
  snprintf(vars, sizeof vars,
           "DATA='%s'; NSOLVERS=%d; SOLVERS='%s'; NCASES=%d; NMISSING=%d; XMAX=%.6g", path, columns,
           names, m->n_cases, missing, fmax(maxv * 1.05, 0.1));
  return draw(job, "gap_bound.gp", "gap_to_bound", 1100, bars_height(m->n_cases, columns), vars,
              err);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static bool figure_distribution(plot_job *job, const mb_result_matrix *m, mb_error *err) {
  char path[2048], solvers[1024] = "";
  FILE *f = open_data(job, "cdf.dat", path, sizeof path, err);
  if (!f) return false;
  double *v = malloc((size_t)(m->n_cases ? m->n_cases : 1) * sizeof *v);
  int blocks = 0;
  double lo = 1.0, hi = 1.0;
  for (int32_t s = 0; v && s < m->n_solvers; s++) {
    if (!strcmp(m->solvers[s], "heuristic")) continue; /* identically 1 */
    int32_t n = 0;
    for (int32_t c = 0; c < m->n_cases; c++) {
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      if (cell->present) v[n++] = cell->speedup_heuristic;
    }
    if (n == 0) continue;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    lo = fmin(lo, v[0]);
    hi = fmax(hi, v[n - 1]);
    if (blocks++) fprintf(f, "\n\n");
    fprintf(f, "# %s\n%.9g 0\n", m->solvers[s], v[0]);
    for (int32_t i = 0; i < n; i++) fprintf(f, "%.9g %.9g\n", v[i], (double)(i + 1) / n);
    size_t len = strlen(solvers);
    snprintf(solvers + len, sizeof solvers - len, "%s%s", len ? " " : "", m->solvers[s]);
  }
  free(v);
  if (fclose(f) != 0) return mb_fail(err, "%s: write failed", path);
  if (blocks == 0) return true;
  char vars[4096];
  double pad = (hi - lo) * 0.05 + 0.005;
  snprintf(vars, sizeof vars, "DATA='%s'; SOLVERS='%s'; XMIN=%.6g; XMAX=%.6g", path, solvers,
           fmax(0.0, lo - pad), hi + pad);
  return draw(job, "speedup_cdf.gp", "speedup_distribution", 1000, 650, vars, err);
}

static bool figure_walltime(plot_job *job, const mb_result_matrix *m, mb_error *err) {
  char path[2048], solvers[1024] = "";
  FILE *f = open_data(job, "walltime.dat", path, sizeof path, err);
  if (!f) return false;
  int blocks = 0;
  for (int32_t s = 0; s < m->n_solvers; s++) {
    int32_t n = 0;
    for (int32_t c = 0; c < m->n_cases; c++) {
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      if (!cell->present) continue;
      if (n++ == 0) {
        if (blocks++) fprintf(f, "\n\n");
        fprintf(f, "# %s\n", m->solvers[s]);
      }
      /* log axes: clamp wall times to a microsecond */
      fprintf(f, "%d %.9g\n", m->cases[c].n_buffers, fmax(cell->wall_s, 1e-6));
    }
    if (n) {
      size_t len = strlen(solvers);
      snprintf(solvers + len, sizeof solvers - len, "%s%s", len ? " " : "", m->solvers[s]);
    }
  }
  if (fclose(f) != 0) return mb_fail(err, "%s: write failed", path);
  if (blocks == 0) return true;
  char vars[4096];
  snprintf(vars, sizeof vars, "DATA='%s'; SOLVERS='%s'", path, solvers);
  return draw(job, "walltime.gp", "walltime_vs_size", 1000, 650, vars, err);
}

/* True when `label` is one of the comma-separated names in `list`. */
static bool name_listed(const char *list, const char *label) {
  size_t n = strlen(label);
  for (const char *p = list; (p = strstr(p, label)) != NULL; p += n)
    if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return true;
  return false;
}

/* True when some curve already carries the solver's name. */
static bool curve_named(char names[][256], int n, const char *solver) {
  for (int k = 0; k < n; k++)
    if (name_listed(names[k], solver)) return true;
  return false;
}

/* True when two curves are the same series (the same agent reported by several solvers), with
 * the same heuristic reference (h, NaN: none). */
static bool same_curve(const double *s1, const double *r1, int32_t n1, double h1, const double *s2,
                       const double *r2, int32_t n2, double h2) {
  if (n1 != n2 || (isnan(h1) ? !isnan(h2) : h1 != h2)) return false;
  for (int32_t k = 0; k < n1; k++)
    if (s1[k] != s2[k] || r1[k] != r2[k]) return false;
  return true;
}

/* A text attribute of the run, or NULL when it is absent or shorter than `min_len` (the
 * driver records an empty agent_networks_sha256 when no solver loads the agent). */
static char *run_text(mb_results *r, const char *key, size_t min_len) {
  mb_error ignored;
  char *v = mb_results_has_attr(r, key) ? mb_results_get_attr_string(r, key, &ignored) : NULL;
  if (v && strlen(v) < min_len) {
    free(v);
    return NULL;
  }
  return v;
}

/* Whose training curve it is: the run's agent checkpoint (every mallocMuZero solver of a run
 * plays the one --agent, recorded as run_agent), by its file name and the first 12 hex digits of
 * its networks' digest (agent_networks_sha256: what `show` and run.sh print, equal for equal
 * networks), else of the file's SHA-256 (agent_sha256); an empty run_agent is the solvers'
 * default checkpoint (no hash recorded). A file without these attributes says "agent" alone. */
static void describe_agent(mb_results *r, char *out, size_t n) {
  char *path = run_text(r, "run_agent", 0);
  char *digest = run_text(r, "agent_networks_sha256", 12);
  char *sha = digest ? NULL : run_text(r, "agent_sha256", 12);
  if (!path) {
    snprintf(out, n, "agent");
  } else if (!path[0]) {
    snprintf(out, n, "default agent (results/agents/default.h5)");
  } else {
    const char *slash = strrchr(path, '/');
    const char *base = slash && slash[1] ? slash + 1 : path;
    if (digest)
      snprintf(out, n, "agent %s (networks %.12s)", base, digest);
    else if (sha)
      snprintf(out, n, "agent %s (sha256 %.12s)", base, sha);
    else
      snprintf(out, n, "agent %s", base);
  }
  free(path);
  free(digest);
  free(sha);
}

/* A curve's legend: the agent, then the solvers that report it ("a,b,c" in `solvers`), as
 * "AGENT, played by a, b and c", quoted for a single-quoted gnuplot string. */
static void curve_title(const char *agent, const char *solvers, char *out, size_t n) {
  char text[1024];
  int len = snprintf(text, sizeof text, "%s, played by ", agent);
  int items = 1;
  for (const char *p = solvers; *p; p++) items += *p == ',';
  int item = 0;
  for (const char *p = solvers; *p && len < (int)sizeof text;) {
    size_t l = strcspn(p, ",");
    const char *sep = item == 0 ? "" : item == items - 1 ? " and " : ", ";
    len += snprintf(text + len, sizeof text - (size_t)len, "%s%.*s", sep, (int)l, p);
    item++;
    p += l + (p[l] == ',');
  }
  gnuplot_text(text, out, n);
}

static bool figure_curves(plot_job *job, mb_results *r, const mb_result_matrix *m, mb_error *err) {
  enum { MAX_CURVES = 8 };
  char path[2048];
  double *steps[MAX_CURVES] = {0}, *rets[MAX_CURVES] = {0};
  int32_t lens[MAX_CURVES] = {0};
  double heur[MAX_CURVES]; /* each curve's heuristic reference (NaN: none) */
  char names[MAX_CURVES][256];
  int n = 0;
  bool ok = true;
  /* one block per distinct curve: solvers sharing an agent share its curve, and a curve
   * repeats on every workload, so identical series are drawn once under all their names */
  for (int64_t i = 0; ok && i < m->n_rows; i++) {
    const mb_result_row *row = &m->rows[i];
    double *step = NULL, *ret = NULL;
    int32_t len = 0;
    double h = NAN;
    if (!mb_results_get_curve(r, row, &step, &ret, &len, err) ||
        (len > 0 && !mb_results_get_curve_heuristic(r, row, &h, err))) {
      free(step);
      free(ret);
      ok = false;
      break;
    }
    int k = 0;
    while (k < n && !same_curve(steps[k], rets[k], lens[k], heur[k], step, ret, len, h)) k++;
    /* named by solver: the seeds of one solver play with the same agent, so its curve is the
     * same; seeds only distinguish curves that differ (their own entries below) */
    char label[128];
    if (k < n || n == 0 || !curve_named(names, n, row->solver))
      snprintf(label, sizeof label, "%s", row->solver);
    else
      snprintf(label, sizeof label, "%s/seed%lld", row->solver, (long long)row->seed);
    if (len > 0 && k < n) {
      if (!name_listed(names[k], label)) {
        size_t used = strlen(names[k]);
        snprintf(names[k] + used, sizeof names[k] - used, ",%s", label);
      }
    } else if (len > 0 && n < MAX_CURVES) {
      steps[n] = step;
      rets[n] = ret;
      lens[n] = len;
      heur[n] = h;
      snprintf(names[n], sizeof names[n], "%s", label);
      n++;
      continue;
    }
    free(step);
    free(ret);
  }
  /* the legend names each curve by its agent and the solvers playing it, as one array */
  char agent[512], curves[MAX_CURVES * 2200], refs[MAX_CURVES * 4] = "";
  describe_agent(r, agent, sizeof agent);
  snprintf(curves, sizeof curves, "array CURVE_TITLE[%d] = [", n);
  FILE *f = ok && n > 0 ? open_data(job, "curves.dat", path, sizeof path, err) : NULL;
  if (ok && n > 0 && !f) ok = false;
  for (int k = 0; f && k < n; k++) {
    if (k) fprintf(f, "\n\n");
    for (int32_t j = 0; j < lens[k]; j++) fprintf(f, "%.9g %.9g\n", steps[k][j], rets[k][j]);
    char title[2100];
    curve_title(agent, names[k], title, sizeof title);
    size_t used = strlen(curves);
    snprintf(curves + used, sizeof curves - used, "%s'%s'", k ? ", " : "", title);
  }
  size_t used_curves = strlen(curves);
  snprintf(curves + used_curves, sizeof curves - used_curves, "]");
  /* then one block per reference: a horizontal segment over its curve's steps; REFS lists the
   * (1-based) curves that have one, in block order */
  for (int k = 0; f && k < n; k++) {
    if (!isfinite(heur[k])) continue;
    double lo = steps[k][0], hi = steps[k][0];
    for (int32_t j = 1; j < lens[k]; j++) {
      if (steps[k][j] < lo) lo = steps[k][j];
      if (steps[k][j] > hi) hi = steps[k][j];
    }
    fprintf(f, "\n\n%.9g %.9g\n%.9g %.9g\n", lo, heur[k], hi, heur[k]);
    size_t used = strlen(refs);
    snprintf(refs + used, sizeof refs - used, "%s%d", used ? " " : "", k + 1);
  }
  if (f && fclose(f) != 0) ok = mb_fail(err, "%s: write failed", path);
  for (int k = 0; k < n; k++) {
    free(steps[k]);
    free(rets[k]);
  }
  if (!ok || n == 0) return ok;
  char vars[sizeof curves + 4096];
  snprintf(vars, sizeof vars, "DATA='%s'; %s; REFS='%s'", path, curves, refs);
  return draw(job, "training_curves.gp", "training_curves", 1000, 650, vars, err);
}

/* ---- memory map ---- */

static bool write_map(const char *path, const mb_workload *w, const mb_assignment *a,
                      const mb_time_ps *benefit, double *bmax, mb_error *err) {
  FILE *f = fopen(path, "w");
  if (!f) return mb_fail(err, "%s: cannot write: %s", path, strerror(errno));
  int rows = 0;
  for (int32_t b = 0; b < w->n_buffers; b++) {
    if (a->offset[b] == MB_SLOW) continue;
    double us = (double)benefit[b] / 1e6;
    if (us > *bmax) *bmax = us;
    fprintf(f, "%d %d %.9g %.9g %.9g\n", w->buffers[b].start, w->buffers[b].end,
            (double)a->offset[b] / 1048576.0, (double)w->buffers[b].size / 1048576.0, us);
    rows++;
  }
  /* gnuplot refuses an empty file: an invisible zero-size box stands for "nothing placed" */
  if (rows == 0) fprintf(f, "0 -1 0 0 0\n");
  return fclose(f) == 0 || mb_fail(err, "%s: write failed", path);
}

/* The case and solver of the memory map, into *case_index and *solver_index (-1: none to draw):
 * by option, else the largest gain over the heuristic among workloads small enough to draw
 * (each fast buffer is a rectangle). Chosen before any figure is drawn, so that a map asked for
 * and not found stops the command before it writes anything. */
static bool choose_memory_map(const mb_results *r, const mb_result_matrix *m,
                              const mb_plot_options *opt, int32_t *case_index,
                              int32_t *solver_index, mb_error *err) {
  int32_t best_c = -1, best_s = -1;
  double best = -INFINITY;
  for (int32_t c = 0; c < m->n_cases; c++) {
    if (opt->memory_map_workload && strcmp(m->cases[c].workload, opt->memory_map_workload))
      continue;
    if (!opt->memory_map_workload && m->cases[c].n_buffers > 20000) continue;
    for (int32_t s = 0; s < m->n_solvers; s++) {
      if (!strcmp(m->solvers[s], "heuristic")) continue;
      if (opt->memory_map_solver && strcmp(m->solvers[s], opt->memory_map_solver)) continue;
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      if (cell->present && cell->speedup_heuristic > best) {
        best = cell->speedup_heuristic;
        best_c = c;
        best_s = s;
      }
    }
  }
  *case_index = best_c;
  *solver_index = best_s;
  if (best_c >= 0) return true;
  if (opt->memory_map_workload)
    return mb_fail(err, "--map-workload: no valid non-heuristic result for workload '%s'%s%s",
                   opt->memory_map_workload, opt->memory_map_solver ? " and solver " : "",
                   opt->memory_map_solver ? opt->memory_map_solver : "");
  if (opt->memory_map_solver) { /* asked for: say so rather than leave the map out */
    char names[512] = "";
    for (int32_t s = 0, len = 0; s < m->n_solvers && len < (int32_t)sizeof names; s++)
      if (strcmp(m->solvers[s], "heuristic"))
        len += snprintf(names + len, sizeof names - (size_t)len, "%s%s", len ? ", " : "",
                        m->solvers[s]);
    return mb_fail(err, "--map-solver: no valid result for solver '%s' in %s (solvers: %s)",
                   opt->memory_map_solver, mb_results_path(r), names[0] ? names : "none");
  }
  return true; /* nothing to draw: no solver beside the heuristic */
}

/* The memory map of case best_c, the heuristic beside solver best_s (nothing if best_c < 0). */
static bool figure_memory_map(plot_job *job, mb_results *r, const mb_result_matrix *m,
                              int32_t best_c, int32_t best_s, mb_error *err) {
  if (best_c < 0) return true;
  const mb_matrix_case *mc = &m->cases[best_c];
  mb_baseline_row *baselines = NULL;
  int64_t nb = 0;
  if (!mb_results_read_baselines(r, &baselines, &nb, err)) return false;
  const mb_baseline_row *base = NULL;
  for (int64_t i = 0; i < nb; i++)
    if (!strcmp(baselines[i].workload, mc->workload) &&
        !strcmp(baselines[i].hardware, mc->hardware))
      base = &baselines[i];
  bool ok = true;
  mb_workload *w = NULL;
  mb_assignment *ah = NULL, *as = NULL;
  mb_time_ps *benefit = NULL;
  if (!base) {
    ok = mb_fail(err, "%s: no baseline row for workload '%s' on '%s'", mb_results_path(r),
                 mc->workload, mc->hardware);
    goto done;
  }
  bool absent = false;
  w = mb_results_get_workload(r, mc->workload, NULL, err);
  if (!w) {
    ok = false;
    goto done;
  }
  ah = mb_results_get_baseline_assignment(r, base, &absent, err);
  const mb_result_row *row = &m->rows[mb_matrix_cell_at(m, best_c, best_s)->first_row];
  as = ah ? mb_results_get_assignment(r, row, &absent, err) : NULL;
  benefit = malloc((size_t)w->n_buffers * sizeof *benefit);
  if (!ah || !as || !benefit) {
    ok = ah && as ? mb_fail(err, "out of memory") : false;
    goto done;
  }
  mb_hardware hw = mb_baseline_hardware(base);
  mb_standalone_benefits(w, &hw, benefit);
  char left[2048], right[2048];
  snprintf(left, sizeof left, "%s/map_heuristic.dat", job->tmp);
  snprintf(right, sizeof right, "%s/map_solver.dat", job->tmp);
  double bmax = 0;
  if (!write_map(left, w, ah, benefit, &bmax, err) ||
      !write_map(right, w, as, benefit, &bmax, err)) {
    ok = false;
    goto done;
  }
  char vars[8192];
  int32_t n_left = mb_assignment_n_fast(ah), n_right = mb_assignment_n_fast(as);
  snprintf(vars, sizeof vars,
           "LEFT='%s'; RIGHT='%s'; LEFT_TITLE='heuristic: %d %s in fast memory'; "
           "RIGHT_TITLE='%s (seed %lld): %d %s, %.3fx over heuristic'; CAPACITY=%.9g; "
           "TMAX=%d; BMAX=%.9g; WORKLOAD='%s on %s'",
           left, right, n_left, plural(n_left, "buffer", "buffers"), row->solver,
           (long long)row->seed, n_right, plural(n_right, "buffer", "buffers"),
           mb_matrix_cell_at(m, best_c, best_s)->speedup_heuristic,
           (double)base->capacity / 1048576.0, w->schedule_length, bmax, mc->workload,
           mc->hardware);
  ok = quotable(mc->workload)
           ? draw(job, "memory_map.gp", "memory_map", 1600, 650, vars, err)
           : mb_fail(err, "workload name '%s' cannot be quoted for gnuplot", mc->workload);
done:
  free(benefit);
  mb_assignment_free(ah);
  mb_assignment_free(as);
  mb_workload_free(w);
  free(baselines);
  return ok;
}

/* ---- driver ---- */

static void remove_tree(const char *dir) {
  static const char *const FILES[] = {"speedup.dat",    "gap.dat",           "cdf.dat",
                                      "walltime.dat",   "curves.dat",        "map_heuristic.dat",
                                      "map_solver.dat", "gnuplot-stderr.txt"};
  char path[2048];
  for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, FILES[i]);
    remove(path);
  }
  rmdir(dir);
}

bool mb_plot_all(const char *results_path, const mb_plot_options *opt, mb_plot_outputs *outputs,
                 mb_error *err) {
  plot_job job;
  memset(&job, 0, sizeof job);
  outputs->n = 0;
  job.outputs = outputs;
  job.formats = opt->formats ? opt->formats : (MB_PLOT_PNG | MB_PLOT_PDF);
  if (!mb_plot_find_gnuplot(job.gnuplot, sizeof job.gnuplot))
    return mb_fail(err,
                   "gnuplot not found on PATH: install the Debian package gnuplot-nox "
                   "(./scripts/setup.sh does)");
  if (opt->templates_dir)
    snprintf(job.templates, sizeof job.templates, "%s", opt->templates_dir);
  else
    snprintf(job.templates, sizeof job.templates, "%s/plots", mb_source_dir());
  if (opt->out_dir)
    snprintf(job.out_dir, sizeof job.out_dir, "%s", opt->out_dir);
  else
    snprintf(job.out_dir, sizeof job.out_dir, "%s/results/figures", mb_source_dir());
  if (!quotable(job.templates) || !quotable(job.out_dir))
    return mb_fail(err, "%s: paths with quotes or newlines cannot be passed to gnuplot",
                   job.out_dir);
  if (mb_mkdir_p(job.out_dir) != 0)
    return mb_fail(err, "%s: cannot create output directory: %s", job.out_dir, strerror(errno));
  const char *tmp = getenv("TMPDIR");
  snprintf(job.tmp, sizeof job.tmp, "%s/mallocbench-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(job.tmp)) return mb_fail(err, "%s: cannot create temporary directory", job.tmp);

  bool ok = false;
  mb_result_matrix *m = NULL;
  case_key *order = NULL;
  mb_results *r = mb_results_open(results_path, false, err);
  if (!r) goto done;
  m = mb_result_matrix_load(r, err);
  if (!m) goto done;
  if (m->n_rows == 0) {
    mb_fail(err, "%s: the results table is empty: nothing to plot", results_path);
    goto done;
  }
  order = sorted_cases(m);
  if (!order) {
    mb_fail(err, "out of memory");
    goto done;
  }
  int32_t map_case, map_solver;
  ok = choose_memory_map(r, m, opt, &map_case, &map_solver, err) &&
       figure_speedups(&job, m, order, err) && figure_distribution(&job, m, err) &&
       figure_gaps(&job, m, order, err) && figure_walltime(&job, m, err) &&
       figure_curves(&job, r, m, err) && figure_memory_map(&job, r, m, map_case, map_solver, err);
done:
  free(order);
  mb_result_matrix_free(m);
  if (r) mb_results_close(r, NULL);
  remove_tree(job.tmp);
  return ok;
}
