#include "report.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"
#include "paths.h"
#include "result_matrix.h"
#include "results.h"
#include "stats.h"
#include "summary.h"

/* The figures the Markdown report links, in the order plot.h draws them. */
static const struct {
  const char *file;
  const char *caption;
} FIGURES[] = {
    {"speedup_per_workload", "Speedup over the heuristic per workload"},
    {"speedup_distribution", "Distribution of speedups per solver"},
    {"gap_to_bound", "Gap to the LP bound per workload"},
    {"walltime_vs_size", "Solver wall time against workload size"},
    {"training_curves", "mallocMuZero training curves"},
    {"memory_map", "Memory maps: heuristic vs the best solver"},
};

bool mb_report_parse_formats(const char *list, unsigned *formats, mb_error *err) {
  *formats = 0;
  const char *p = list;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 2 && !strncmp(p, "md", 2))
      *formats |= MB_REPORT_MD;
    else if (len == 3 && !strncmp(p, "tex", 3))
      *formats |= MB_REPORT_TEX;
    else
      return mb_fail(err, "--format: unknown format '%.*s' (expected md or tex)", (int)len, p);
    p += len + (comma ? 1 : 0);
    if (comma && !*p) return mb_fail(err, "--format: '%s' ends with a comma", list);
  }
  if (!*formats) return mb_fail(err, "--format: no format given");
  return true;
}

bool mb_report_parse_alphatensor_name(const char *name, char *factorization, size_t fn, long *n,
                                      char *dtype, size_t dn) {
  static const char *const NAMES[][2] = {{"at_tpu", "AlphaTensor (TPU)"},
                                         {"at_gpu", "AlphaTensor (GPU)"},
                                         {"strassen2", "Strassen-squared"},
                                         {"standard", "standard (64 products)"}};
  int errcode;
  PCRE2_SIZE erroff;
  pcre2_code *re = pcre2_compile(
      (PCRE2_SPTR) "^(at_tpu|at_gpu|strassen2|standard)_([0-9]+)_(bf16|f16|f32)(?:-[A-Za-z0-9_.-]+)?$",
      PCRE2_ZERO_TERMINATED, 0, &errcode, &erroff, NULL);
  if (!re) return false;
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  bool ok = md && pcre2_match(re, (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) > 0;
  if (ok) {
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
      if (strlen(NAMES[i][0]) == ov[3] - ov[2] && !strncmp(name, NAMES[i][0], ov[3] - ov[2]))
        snprintf(factorization, fn, "%s", NAMES[i][1]);
    *n = strtol(name + ov[4], NULL, 10);
    snprintf(dtype, dn, "%.*s", (int)(ov[7] - ov[6]), name + ov[6]);
  }
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  return ok;
}

/* ---- formatting helpers: one place decides how each kind of number is printed ---- */

static void fmt_speedup(double v, char *out, size_t n) {
  if (isnan(v))
    snprintf(out, n, "–");
  else
    snprintf(out, n, "%.3f", v);
}

/* A summary's 95% interval of its geomean speedup, "[1.001, 1.019]", or "–" without one. */
static void fmt_ci(const mb_solver_summary *x, char *out, size_t n) {
  if (isnan(x->geomean_ci_low))
    snprintf(out, n, "–");
  else
    snprintf(out, n, "[%.3f, %.3f]", x->geomean_ci_low, x->geomean_ci_high);
}

static void fmt_percent(double v, char *out, size_t n) {
  if (isnan(v))
    snprintf(out, n, "–");
  else
    snprintf(out, n, "%.1f%%", 100.0 * v);
}

static void fmt_ms(int64_t ps, char *out, size_t n) {
  if (ps < 0)
    snprintf(out, n, "–");
  else
    snprintf(out, n, "%.4g", (double)ps / 1e9);
}

static void fmt_wall(double s, char *out, size_t n) {
  if (isnan(s))
    snprintf(out, n, "–");
  else if (s < 0.01)
    snprintf(out, n, "%.1f ms", s * 1e3);
  else
    snprintf(out, n, "%.2f s", s);
}

/* LaTeX's spelling of a character that is special to it, or NULL for one that is not. A
 * control byte (a name from a file may hold any byte but NUL) would stop TeX ("invalid
 * character", or a blank line ending the cell's paragraph): it is spelled "\xHH" as in
 * messages (error.h), written into buf. */
enum { TEX_REP_MAX = 24 };
static const char *tex_replacement(char c, char buf[TEX_REP_MAX]) {
  unsigned char u = (unsigned char)c;
  if (u < 0x20 || u == 0x7f) {
    snprintf(buf, TEX_REP_MAX, "\\textbackslash{}x%02x", u);
    return buf;
  }
  switch (c) {
    case '_':
      return "\\_";
    case '%':
      return "\\%";
    case '&':
      return "\\&";
    case '#':
      return "\\#";
    case '$':
      return "\\$";
    case '{':
      return "\\{";
    case '}':
      return "\\}";
    case '~':
      return "\\textasciitilde{}";
    case '^':
      return "\\textasciicircum{}";
    case '\\':
      return "\\textbackslash{}";
    default:
      return NULL;
  }
}

/* Writes s LaTeX-escaped, whole (workload names have underscores; an escape may take 19
 * bytes for 1, so no fixed buffer would hold every name a results file allows). */
static void tex_put(FILE *f, const char *s) {
  char buf[TEX_REP_MAX];
  for (; *s; s++) {
    const char *rep = tex_replacement(*s, buf);
    if (rep)
      fputs(rep, f);
    else
      fputc(*s, f);
  }
}

/* Writes s LaTeX-escaped, whole, for a \texttt cell of a paragraph column. Provenance values
 * (hashes, workload lists, command lines) can run for hundreds of characters without a
 * space, which TeX will not break: a break opportunity follows every separator and every
 * TEX_BREAK_RUN characters without one (never inside a UTF-8 sequence). */
enum { TEX_BREAK_RUN = 16 };
static void tex_write_breakable(FILE *f, const char *s) {
  int run = 0;
  char buf[TEX_REP_MAX];
  for (; *s; s++) {
    const char *rep = tex_replacement(*s, buf);
    int width = rep == buf ? 4 : 1; /* a control byte is set as the 4 characters "\xHH" */
    if (run > 0 && run + width > TEX_BREAK_RUN) {
      fputs("\\allowbreak{}", f);
      run = 0;
    }
    if (rep)
      fputs(rep, f);
    else
      fputc(*s, f);
    run = *s == ' ' ? 0 : run + width;
    bool separator = strchr("|,;:=/-", *s) != NULL;
    bool inside_utf8 = ((unsigned char)s[1] & 0xC0) == 0x80;
    if ((separator || run >= TEX_BREAK_RUN) && s[1] && !inside_utf8) {
      fputs("\\allowbreak{}", f);
      run = 0;
    }
  }
}

/* Writes a formatted value: in LaTeX, the en dash used for "no value" and "%" need their own
 * spelling. */
static void tex_put_value(FILE *f, const char *v) {
  if (!strcmp(v, "–"))
    fputs("--", f);
  else
    tex_put(f, v);
}

/* \newcommand{\<what><macro>}{<value>}, the value a formatted one (tex_put_value). */
static void tex_put_macro(FILE *f, const char *what, const char *macro, const char *value) {
  fprintf(f, "\\newcommand{\\%s%s}{", what, macro);
  tex_put_value(f, value);
  fputs("}\n", f);
}

/* A LaTeX macro name from a solver name: letters only, CamelCase ("mallocmuzero-exact" ->
 * "MallocmuzeroExact"). */
static void tex_macro_name(const char *s, char *out, size_t n) {
  size_t j = 0;
  bool upper = true;
  for (; *s && j + 1 < n; s++) {
    if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) {
      out[j++] = upper && *s >= 'a' ? (char)(*s - 'a' + 'A') : *s;
      upper = false;
    } else {
      upper = true;
    }
  }
  out[j] = '\0';
}

typedef struct report_data {
  mb_results *r;
  mb_result_matrix *m;
  mb_solver_summary *summary;
  /* the test split's cases alone, when the file has cases of both splits (else NULL) */
  mb_solver_summary *summary_test;
  int32_t n_train, n_test;
  char **attr_keys;
  char **attr_values;
  int32_t n_attrs;
  const char *results_path;
  mb_report_outputs *outputs; /* the files written so far (NULL: not listed) */
} report_data;

/* Every file is written to a temporary renamed into place by close_listed (atomic_file.h), so a
 * failed report never leaves a half-written file where a good one was; then the file joins the
 * list of those written. */
static bool close_listed(const report_data *d, mb_atomic_file *af, const char *path,
                         mb_error *err) {
  if (!mb_atomic_file_commit(af, err)) return false;
  mb_report_outputs *out = d->outputs;
  if (out && out->n < MB_REPORT_MAX_OUTPUTS)
    snprintf(out->paths[out->n++], sizeof out->paths[0], "%s", path);
  return true;
}

/* ---- Markdown ---- */

/* REPORT.md is read by people, in an editor or a terminal, and names and attributes come from
 * files that may hold any byte but NUL: every text taken from the results file is written with
 * its control bytes spelled "\xHH" as in messages (mb_escape_text, error.h), so that no ESC
 * sequence reaches a terminal and no line break ends a table row. md_put writes s so escaped. */
static void md_put(FILE *f, const char *s) {
  char small[256];
  size_t cap = 4 * strlen(s) + 1; /* an escape is 4 bytes for 1 */
  char *buf = cap <= sizeof small ? small : malloc(cap);
  if (!buf) { /* the first bytes: cut short beats none */
    buf = small;
    cap = sizeof small;
  }
  mb_escape_text(buf, cap, s);
  fputs(buf, f);
  if (buf != small) free(buf);
}

/* One table cell after its opening pipe: " s |", s as md_put writes it. */
static void md_cell(FILE *f, const char *s) {
  fputc(' ', f);
  md_put(f, s);
  fputs(" |", f);
}

/* One summary table from `sum` (over every case, or over one split's cases). */
static void md_summary_table(FILE *f, const report_data *d, const mb_solver_summary *sum) {
  fprintf(f,
          "| solver | workloads | geomean speedup | 95%% CI | max speedup | wins / ties / losses "
          "| sign p | mean gap to bound | failed | total wall time |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int32_t s = 0; s < d->m->n_solvers; s++) {
    const mb_solver_summary *x = &sum[s];
    char g[32], ci[64], mx[32], gap[32], wall[32], p[32];
    fmt_speedup(x->geomean_speedup, g, sizeof g);
    fmt_ci(x, ci, sizeof ci);
    fmt_speedup(x->max_speedup, mx, sizeof mx);
    fmt_percent(x->mean_gap_to_bound, gap, sizeof gap);
    fmt_wall(x->total_wall_s, wall, sizeof wall);
    mb_format_p(p, sizeof p, x->sign_p);
    fputc('|', f);
    md_cell(f, x->solver);
    fprintf(f, " %d | %s | %s | %s | %d / %d / %d | %s | %s | %d | %s |\n", x->n_cases, g, ci, mx,
            x->wins, x->ties, x->losses, p, gap, x->n_failed, wall);
  }
  fprintf(f, "\n");
}

static void md_summary(FILE *f, const report_data *d) {
  fprintf(f,
          "## Summary per solver\n\n"
          "Speedup = T_heuristic / T_solver (simulated), geometric mean over workloads with its "
          "95%% confidence interval (Student t on the log speedups); "
          "wins/ties/losses against the heuristic, with the two-sided exact sign test of wins "
          "against losses (sign p: the chance of counts at least this unequal if losing a case "
          "were as likely as winning it); gap = (T_solver - T_bound) / T_bound "
          "against the LP bound; wall time is wall clock on the machine of the run.");
  if (d->n_train + d->n_test > 0) {
    if (d->m->n_cases == 1)
      fprintf(f, " The 1 case:");
    else
      fprintf(f, " All %d cases:", d->m->n_cases);
    fprintf(f, " %d of the train split, %d of the test split.", d->n_train, d->n_test);
  }
  fprintf(f, "\n\n");
  md_summary_table(f, d, d->summary);
  /* the summary's caveats, a paragraph under the table (they hold no Markdown syntax) */
  mb_summary_print_caveats(f, d->m, d->summary);
  if (!d->summary_test) return;
  fprintf(f,
          "## Test split (workloads unseen in mallocMuZero's training)\n\n"
          "The same table over the %d %s in the catalogue's test split; "
          "mallocMuZero is trained on the train split only, so this is where its quality is "
          "judged.\n\n",
          d->n_test, d->n_test == 1 ? "case whose workload is" : "cases whose workload is");
  md_summary_table(f, d, d->summary_test);
}

static void md_workloads(FILE *f, const report_data *d) {
  const mb_result_matrix *m = d->m;
  bool splits = d->n_train + d->n_test > 0; /* a split column when the file records splits */
  fprintf(f,
          "## Per workload\n\n"
          "Times in ms (simulated). Per solver: speedup over the heuristic / gap to the LP bound "
          "/ wall time. \"–\" marks a missing or failed result.\n\n"
          "| workload | hardware |%s buffers | T_slow | T_heuristic | T_bound |",
          splits ? " split |" : "");
  for (int32_t s = 0; s < m->n_solvers; s++) md_cell(f, m->solvers[s]);
  fprintf(f, "\n|---|---|%s---:|---:|---:|---:|", splits ? "---|" : "");
  for (int32_t s = 0; s < m->n_solvers; s++) fprintf(f, "---:|");
  fprintf(f, "\n");
  for (int32_t c = 0; c < m->n_cases; c++) {
    const mb_matrix_case *k = &m->cases[c];
    char ts[32], th[32], tb[32];
    fmt_ms(k->t_slow_ps, ts, sizeof ts);
    fmt_ms(k->t_heuristic_ps, th, sizeof th);
    fmt_ms(k->t_bound_ps, tb, sizeof tb);
    fputc('|', f);
    md_cell(f, k->workload);
    md_cell(f, k->hardware);
    if (splits) md_cell(f, k->split[0] ? k->split : "–");
    fprintf(f, " %d | %s | %s | %s |", k->n_buffers, ts, th, tb);
    for (int32_t s = 0; s < m->n_solvers; s++) {
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      char sp[32], gap[32], wall[32];
      fmt_speedup(cell->present ? cell->speedup_heuristic : NAN, sp, sizeof sp);
      fmt_percent(cell->present ? cell->gap_to_bound : NAN, gap, sizeof gap);
      fmt_wall(cell->present ? cell->wall_s : NAN, wall, sizeof wall);
      fprintf(f, " %s / %s / %s |", sp, gap, wall);
    }
    fprintf(f, "\n");
  }
  fprintf(f, "\n");
}

/* The AlphaTensor table, Markdown or LaTeX (tex): a row per case whose workload is an
 * AlphaTensor trace. Without one, no section in Markdown and a comment in LaTeX (the paper
 * inputs the file either way). */
static void alphatensor_table(FILE *f, const report_data *d, bool tex) {
  const mb_result_matrix *m = d->m;
  int rows = 0;
  for (int32_t c = 0; c < m->n_cases; c++) {
    char fact[64], dtype[16];
    long n;
    if (!mb_report_parse_alphatensor_name(m->cases[c].workload, fact, sizeof fact, &n, dtype,
                                          sizeof dtype))
      continue;
    if (rows++ == 0) {
      if (tex) {
        fprintf(f, "\\begin{tabular}{llrl");
        for (int32_t s = 0; s < m->n_solvers; s++) fprintf(f, "r");
        fprintf(f, "}\n\\toprule\nfactorization & hardware & $N$ & dtype");
        for (int32_t s = 0; s < m->n_solvers; s++) {
          fputs(" & ", f);
          tex_put(f, m->solvers[s]);
        }
        fprintf(f, " \\\\\n\\midrule\n");
      } else {
        fprintf(f,
                "## AlphaTensor matrix multiplication\n\n"
                "Speedup over the heuristic (simulated) of the 4x4 block algorithm of each "
                "factorization.\n\n| factorization | hardware | N | dtype |");
        for (int32_t s = 0; s < m->n_solvers; s++) md_cell(f, m->solvers[s]);
        fprintf(f, "\n|---|---|---:|---|");
        for (int32_t s = 0; s < m->n_solvers; s++) fprintf(f, "---:|");
        fprintf(f, "\n");
      }
    }
    if (tex) {
      tex_put(f, fact);
      fputs(" & ", f);
      tex_put(f, m->cases[c].hardware);
      fprintf(f, " & %ld & %s", n, dtype);
    } else {
      fputc('|', f);
      md_cell(f, fact);
      md_cell(f, m->cases[c].hardware);
      fprintf(f, " %ld |", n);
      md_cell(f, dtype);
    }
    for (int32_t s = 0; s < m->n_solvers; s++) {
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      char sp[32];
      fmt_speedup(cell->present ? cell->speedup_heuristic : NAN, sp, sizeof sp);
      if (tex) {
        fputs(" & ", f);
        tex_put_value(f, sp);
      } else {
        fprintf(f, " %s |", sp);
      }
    }
    fprintf(f, tex ? " \\\\\n" : "\n");
  }
  if (tex && rows) fprintf(f, "\\bottomrule\n\\end{tabular}\n");
  if (!tex && rows) fprintf(f, "\n");
  if (tex && !rows) fprintf(f, "%% no AlphaTensor traces in this results file\n");
}

/* Writes s, whole, inside a code span of a Markdown table cell: a pipe would end the cell, so
 * it is escaped (GitHub's tables read "\\|" as a pipe inside code spans too), and a control
 * byte is spelled "\xHH" as md_put does (a line break would end the row). */
static void md_write_code_cell(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|') {
      fputs("\\|", f);
    } else {
      char one[2] = {*s, '\0'}, esc[8];
      mb_escape_text(esc, sizeof esc, one);
      fputs(esc, f);
    }
  }
}

static void md_provenance(FILE *f, const report_data *d) {
  fputs("## Provenance\n\nResults file: `", f);
  md_put(f, d->results_path);
  fputs("`\n\n| attribute | value |\n|---|---|\n", f);
  for (int32_t i = 0; i < d->n_attrs; i++) {
    if (!d->attr_values[i][0]) { /* an empty code span would show its two backticks */
      fputc('|', f);
      md_cell(f, d->attr_keys[i]);
      fputs(" |\n", f);
      continue;
    }
    fputc('|', f);
    md_cell(f, d->attr_keys[i]);
    fputs(" `", f);
    md_write_code_cell(f, d->attr_values[i]);
    fprintf(f, "` |\n");
  }
  fprintf(f, "\n");
}

/* `target` relative to the directory of `from` when it lies below it (so the report's figure
 * links work wherever the results folder is moved), else `target` unchanged. */
static const char *relative_to(const char *target, const char *from) {
  const char *slash = strrchr(from, '/');
  size_t dir_len = slash ? (size_t)(slash - from) : 0;
  if (dir_len == 0) return target;
  if (!strncmp(target, from, dir_len) && target[dir_len] == '/') return target + dir_len + 1;
  return target;
}

static bool write_markdown(const report_data *d, const char *path, const char *figures_dir,
                           const char *command, mb_error *err) {
  mb_atomic_file *af = mb_atomic_file_open(path, NULL, err);
  if (!af) return false;
  FILE *f = mb_atomic_file_stream(af);
  fputs("# mallocbench report\n\nGenerated by `mallocbench report` from `", f);
  md_put(f, d->results_path);
  fputs(
      "`. Every time is simulated by mallocbench's roofline cost model unless it says wall "
      "clock. Regenerate with `",
      f);
  if (command) {
    md_put(f, command);
  } else {
    fputs("mallocbench report ", f);
    md_put(f, d->results_path);
  }
  fputs("`.\n\n", f);
  md_summary(f, d);
  alphatensor_table(f, d, false);
  fprintf(f, "## Figures\n\n");
  for (size_t i = 0; i < sizeof FIGURES / sizeof FIGURES[0]; i++) {
    char png[4096];
    snprintf(png, sizeof png, "%s/%s.png", figures_dir, FIGURES[i].file);
    if (access(png, R_OK) == 0)
      fprintf(f, "### %s\n\n![%s](%s)\n\n", FIGURES[i].caption, FIGURES[i].caption,
              relative_to(png, path));
  }
  md_workloads(f, d);
  md_provenance(f, d);
  return close_listed(d, af, path, err);
}

/* ---- LaTeX ---- */

/* Starts dir/name (its path into path, size pn): *af the file, *f its stream. */
static bool tex_file(const char *dir, const char *name, mb_atomic_file **af, FILE **f, char *path,
                     size_t pn, mb_error *err) {
  snprintf(path, pn, "%s/%s", dir, name);
  *af = mb_atomic_file_open(path, NULL, err);
  *f = *af ? mb_atomic_file_stream(*af) : NULL;
  if (*f) fprintf(*f, "%% generated by mallocbench report; do not edit\n");
  return *f != NULL;
}

/* A summary table in LaTeX (the paper's Table 1 format), from `sum`. */
static bool tex_summary(const report_data *d, const char *dir, const char *file,
                        const mb_solver_summary *sum, mb_error *err) {
  char path[4096];
  mb_atomic_file *af;
  FILE *f;
  if (!tex_file(dir, file, &af, &f, path, sizeof path, err)) return false;
  fprintf(f,
          "\\begin{tabular}{lrrcrcrrr}\n\\toprule\n"
          "solver & workloads & geomean & 95\\%% CI & max & W/T/L & sign $p$ & gap to bound & "
          "wall (s) \\\\\n\\midrule\n");
  for (int32_t s = 0; s < d->m->n_solvers; s++) {
    const mb_solver_summary *x = &sum[s];
    char g[32], ci[64], mx[32], gap[32], p[32];
    fmt_ci(x, ci, sizeof ci);
    fmt_speedup(x->geomean_speedup, g, sizeof g);
    fmt_speedup(x->max_speedup, mx, sizeof mx);
    fmt_percent(x->mean_gap_to_bound, gap, sizeof gap);
    mb_format_p(p, sizeof p, x->sign_p);
    tex_put(f, x->solver);
    fprintf(f, " & %d & ", x->n_cases);
    tex_put_value(f, g);
    fprintf(f, " & %s & ", ci);
    tex_put_value(f, mx);
    fprintf(f, " & %d/%d/%d & %s & ", x->wins, x->ties, x->losses, p);
    tex_put_value(f, gap);
    fprintf(f, " & %.1f \\\\\n", x->total_wall_s);
  }
  fprintf(f, "\\bottomrule\n\\end{tabular}\n");
  return close_listed(d, af, path, err);
}

static bool write_tex(const report_data *d, const char *dir, mb_error *err) {
  const mb_result_matrix *m = d->m;
  char path[4096];
  mb_atomic_file *af;
  FILE *f;
  /* summary.tex; summary_test.tex only when the file has both splits (a stale one from an
   * earlier report would show numbers of another run) */
  if (!tex_summary(d, dir, "summary.tex", d->summary, err)) return false;
  if (d->summary_test) {
    if (!tex_summary(d, dir, "summary_test.tex", d->summary_test, err)) return false;
  } else {
    snprintf(path, sizeof path, "%s/summary_test.tex", dir);
    if (remove(path) != 0 && errno != ENOENT)
      return mb_fail(err, "%s: cannot remove the stale table: %s", path, strerror(errno));
  }

  /* workloads.tex: a longtable, speedup (gap) per solver */
  if (!tex_file(dir, "workloads.tex", &af, &f, path, sizeof path, err)) return false;
  fprintf(f, "\\begin{longtable}{llr");
  for (int32_t s = 0; s < m->n_solvers; s++) fprintf(f, "r");
  fprintf(f, "}\n\\toprule\nworkload & hardware & $T_\\mathrm{slow}$ (ms)");
  for (int32_t s = 0; s < m->n_solvers; s++) {
    fputs(" & ", f);
    tex_put(f, m->solvers[s]);
  }
  fprintf(f, " \\\\\n\\midrule\n\\endhead\n");
  for (int32_t c = 0; c < m->n_cases; c++) {
    char ts[32];
    fmt_ms(m->cases[c].t_slow_ps, ts, sizeof ts);
    tex_put(f, m->cases[c].workload);
    fputs(" & ", f);
    tex_put(f, m->cases[c].hardware);
    fprintf(f, " & %s", ts);
    for (int32_t s = 0; s < m->n_solvers; s++) {
      const mb_matrix_cell *cell = mb_matrix_cell_at(m, c, s);
      char sp[32], gap[32];
      fmt_speedup(cell->present ? cell->speedup_heuristic : NAN, sp, sizeof sp);
      fmt_percent(cell->present ? cell->gap_to_bound : NAN, gap, sizeof gap);
      fputs(" & ", f);
      tex_put_value(f, sp);
      fputs(" (", f);
      tex_put_value(f, gap);
      fputc(')', f);
    }
    fprintf(f, " \\\\\n");
  }
  fprintf(f, "\\bottomrule\n\\end{longtable}\n");
  if (!close_listed(d, af, path, err)) return false;

  if (!tex_file(dir, "alphatensor.tex", &af, &f, path, sizeof path, err)) return false;
  alphatensor_table(f, d, true);
  if (!close_listed(d, af, path, err)) return false;

  if (!tex_file(dir, "provenance.tex", &af, &f, path, sizeof path, err)) return false;
  /* a longtable: the wrapped values make the table taller than a page */
  fprintf(f,
          "\\begin{longtable}{lp{0.62\\linewidth}}\n\\toprule\nattribute & value \\\\\n"
          "\\midrule\n\\endhead\n");
  for (int32_t i = 0; i < d->n_attrs; i++) {
    tex_put(f, d->attr_keys[i]);
    /* ragged right: a broken hash or list leaves no spaces to stretch; \tabularnewline ends
     * the row because \raggedright redefines \\ */
    fprintf(f, " & \\raggedright\\texttt{");
    tex_write_breakable(f, d->attr_values[i]);
    fprintf(f, "}\\tabularnewline\n");
  }
  fprintf(f, "\\bottomrule\n\\end{longtable}\n");
  if (!close_listed(d, af, path, err)) return false;

  /* macros.tex: numbers quoted in the paper's text */
  if (!tex_file(dir, "macros.tex", &af, &f, path, sizeof path, err)) return false;
  fprintf(f, "\\newcommand{\\NumWorkloads}{%d}\n\\newcommand{\\NumSolvers}{%d}\n", m->n_cases,
          m->n_solvers);
  /* cases per catalogue split (0 and 0 when the file records no splits) */
  fprintf(f, "\\newcommand{\\NumTrainCases}{%d}\n\\newcommand{\\NumTestCases}{%d}\n", d->n_train,
          d->n_test);
  for (int32_t s = 0; s < m->n_solvers; s++) {
    const mb_solver_summary *x = &d->summary[s];
    char macro[64], g[32], mx[32], gap[32];
    tex_macro_name(x->solver, macro, sizeof macro);
    fmt_speedup(x->geomean_speedup, g, sizeof g);
    fmt_speedup(x->max_speedup, mx, sizeof mx);
    fmt_percent(x->mean_gap_to_bound, gap, sizeof gap);
    tex_put_macro(f, "Geomean", macro, g);
    tex_put_macro(f, "Max", macro, mx);
    fprintf(f,
            "\\newcommand{\\Wins%s}{%d}\n\\newcommand{\\Ties%s}{%d}\n"
            "\\newcommand{\\Losses%s}{%d}\n",
            macro, x->wins, macro, x->ties, macro, x->losses);
    tex_put_macro(f, "Gap", macro, gap);
  }
  return close_listed(d, af, path, err);
}

bool mb_report_write(const char *results_path, const mb_report_options *opt,
                     mb_report_outputs *outputs, mb_error *err) {
  if (outputs) outputs->n = 0;
  unsigned formats = opt->formats ? opt->formats : (MB_REPORT_MD | MB_REPORT_TEX);
  char md_path[4096], tex_dir[4096], figures_dir[4096];
  if (opt->markdown_path)
    snprintf(md_path, sizeof md_path, "%s", opt->markdown_path);
  else
    snprintf(md_path, sizeof md_path, "%s/results/REPORT.md", mb_source_dir());
  if (opt->tex_dir)
    snprintf(tex_dir, sizeof tex_dir, "%s", opt->tex_dir);
  else
    snprintf(tex_dir, sizeof tex_dir, "%s/paper/generated", mb_source_dir());
  if (opt->figures_dir)
    snprintf(figures_dir, sizeof figures_dir, "%s", opt->figures_dir);
  else
    snprintf(figures_dir, sizeof figures_dir, "%s/results/figures", mb_source_dir());

  report_data d = {.results_path = results_path, .outputs = outputs};
  bool ok = false;
  d.r = mb_results_open(results_path, false, err);
  if (!d.r) return false;
  d.m = mb_result_matrix_load(d.r, err);
  if (!d.m) goto done;
  if (d.m->n_rows == 0) {
    mb_fail(err, "%s: the results table is empty: nothing to report", results_path);
    goto done;
  }
  d.summary = calloc((size_t)d.m->n_solvers, sizeof *d.summary);
  if (!d.summary) {
    mb_fail(err, "out of memory");
    goto done;
  }
  mb_result_matrix_summarise(d.m, d.summary);
  d.n_train = mb_result_matrix_count_split(d.m, "train");
  d.n_test = mb_result_matrix_count_split(d.m, "test");
  if (d.n_train > 0 && d.n_test > 0) {
    d.summary_test = calloc((size_t)d.m->n_solvers, sizeof *d.summary_test);
    if (!d.summary_test) {
      mb_fail(err, "out of memory");
      goto done;
    }
    mb_result_matrix_summarise_split(d.m, "test", d.summary_test);
  }
  if (!mb_results_list_attrs(d.r, &d.attr_keys, &d.attr_values, &d.n_attrs, err)) goto done;
  if (formats & MB_REPORT_MD) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", md_path);
    char *slash = strrchr(dir, '/');
    if (slash) {
      *slash = '\0';
      if (dir[0] && mb_mkdir_p(dir) != 0) {
        mb_fail(err, "%s: cannot create directory: %s", dir, strerror(errno));
        goto done;
      }
    }
    if (!write_markdown(&d, md_path, figures_dir, opt->command, err)) goto done;
  }
  if (formats & MB_REPORT_TEX) {
    if (mb_mkdir_p(tex_dir) != 0) {
      mb_fail(err, "%s: cannot create directory: %s", tex_dir, strerror(errno));
      goto done;
    }
    if (!write_tex(&d, tex_dir, err)) goto done;
  }
  ok = true;
done:
  mb_results_free_strings(d.attr_keys, d.n_attrs);
  mb_results_free_strings(d.attr_values, d.n_attrs);
  free(d.summary);
  free(d.summary_test);
  mb_result_matrix_free(d.m);
  mb_results_close(d.r, NULL);
  return ok;
}
