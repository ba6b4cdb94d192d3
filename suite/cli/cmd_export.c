/* mallocbench export FILE --csv DIR: one CSV per table of a results file, for spreadsheets,
 * pandas and gnuplot, with everything `summary` and its --split/--workloads filters read (the
 * columns are documented in results/README.md, "CSV export"). Each CSV is written to a
 * temporary file and renamed over its name (atomic_file.h), so an existing export is never left
 * half-overwritten.
 *
 * Missing numbers (NaN: a speedup of a row that is not ok, a curve without a reference) are
 * written as an empty field in every file: pandas reads it as NaN, R as NA, spreadsheets as an
 * empty cell (a literal 'nan' would be text to a spreadsheet and not NA to R's read.csv). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "commands.h"
#include "error.h"
#include "paths.h"
#include "results.h"

/* RFC 4180 field: quoted when it holds a comma, quote, or line break. */
static void csv_str(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* A double, exactly (17 significant digits); NaN as an empty field. */
static void csv_dbl(FILE *f, double v) {
  if (!isnan(v)) fprintf(f, "%.17g", v);
}

/* One CSV being written: through a temporary renamed over the target at the end
 * (atomic_file.h), so that an existing export is never left half-overwritten. */
typedef struct out_file {
  mb_atomic_file *a; /* NULL when not open */
  FILE *f;           /* its stream */
} out_file;

static bool out_open(out_file *o, const char *dir, const char *name, mb_error *err) {
  char path[4200];
  *o = (out_file){0};
  if (!mb_path_join(path, sizeof path, dir, name))
    return mb_fail(err, "%s/%s: path too long", dir, name);
  if (!(o->a = mb_atomic_file_open(path, NULL, err))) return false;
  o->f = mb_atomic_file_stream(o->a);
  return true;
}

static bool out_close(out_file *o, mb_error *err) {
  bool ok = mb_atomic_file_commit(o->a, err);
  *o = (out_file){0};
  return ok;
}

/* Drops the CSV being written (if any), leaving the target as it was. */
static void out_abort(out_file *o) {
  mb_atomic_file_abort(o->a);
  *o = (out_file){0};
}

static bool export_results(mb_results *r, const char *dir, const mb_result_row *rows, int64_t n,
                           mb_error *err) {
  out_file o;
  if (!out_open(&o, dir, "results.csv", err)) return false;
  fprintf(o.f,
          "task,workload,hardware,solver,seed,status,valid,capacity,n_buffers,n_fast,"
          "fast_bytes,t_slow_ps,t_heuristic_ps,t_solver_ps,t_bound_ps,t_solver_s,"
          "speedup_heuristic,speedup_slow,gap_to_bound,wall_s,iterations,budget_hit,note\n");
  for (int64_t i = 0; i < n; i++) {
    const mb_result_row *x = &rows[i];
    fprintf(o.f, "%" PRId64 ",", x->task);
    csv_str(o.f, x->workload);
    fputc(',', o.f);
    csv_str(o.f, x->hardware);
    fputc(',', o.f);
    csv_str(o.f, x->solver);
    fprintf(o.f, ",%" PRId64 ",", x->seed);
    csv_str(o.f, x->status);
    fprintf(o.f,
            ",%d,%" PRId64 ",%d,%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",",
            (int)x->valid, x->capacity, (int)x->n_buffers, (int)x->n_fast, x->fast_bytes,
            x->t_slow_ps, x->t_heuristic_ps, x->t_solver_ps, x->t_bound_ps);
    csv_dbl(o.f, x->t_solver_s);
    fputc(',', o.f);
    csv_dbl(o.f, x->speedup_heuristic);
    fputc(',', o.f);
    csv_dbl(o.f, x->speedup_slow);
    fputc(',', o.f);
    csv_dbl(o.f, x->gap_to_bound);
    fputc(',', o.f);
    csv_dbl(o.f, x->wall_s);
    fprintf(o.f, ",%" PRId64 ",%d,", x->iterations, (int)x->budget_hit);
    csv_str(o.f, x->note);
    fputc('\n', o.f);
  }
  return out_close(&o, err);
}

static bool export_baselines(mb_results *r, const char *dir, mb_error *err) {
  mb_baseline_row *b = NULL;
  int64_t n = 0;
  if (!mb_results_read_baselines(r, &b, &n, err)) return false;
  out_file o;
  if (!out_open(&o, dir, "baselines.csv", err)) {
    free(b);
    return false;
  }
  fprintf(o.f,
          "task,workload,hardware,profile_sha256,capacity,alignment,slow_bandwidth,"
          "fast_bandwidth,peak_flops,op_overhead_s,t_slow_ps,t_heuristic_ps,t_bound_ps,"
          "bound_status,heuristic_wall_s,bound_wall_s,bound_note\n");
  for (int64_t i = 0; i < n; i++) {
    const mb_baseline_row *x = &b[i];
    fprintf(o.f, "%" PRId64 ",", x->task);
    csv_str(o.f, x->workload);
    fputc(',', o.f);
    csv_str(o.f, x->hardware);
    fprintf(o.f, ",%s,%" PRId64 ",%" PRId64 ",", x->profile_sha256, x->capacity, x->alignment);
    const double profile[] = {x->slow_bandwidth, x->fast_bandwidth, x->peak_flops,
                              x->op_overhead_s};
    for (size_t k = 0; k < sizeof profile / sizeof *profile; k++) {
      csv_dbl(o.f, profile[k]);
      fputc(',', o.f);
    }
    fprintf(o.f, "%" PRId64 ",%" PRId64 ",%" PRId64 ",", x->t_slow_ps, x->t_heuristic_ps,
            x->t_bound_ps);
    csv_str(o.f, x->bound_status);
    fputc(',', o.f);
    csv_dbl(o.f, x->heuristic_wall_s);
    fputc(',', o.f);
    csv_dbl(o.f, x->bound_wall_s);
    fputc(',', o.f);
    csv_str(o.f, x->bound_note); /* free text last: columns before it never hold commas */
    fputc('\n', o.f);
  }
  free(b);
  return out_close(&o, err);
}

static bool export_workloads(mb_results *r, const char *dir, mb_error *err) {
  char **keys = NULL;
  int32_t n = 0;
  if (!mb_results_workload_keys(r, &keys, &n, err)) return false;
  out_file o;
  bool ok = out_open(&o, dir, "workloads.csv", err);
  /* split: the catalogue split summary --split filters on, empty when the file predates
   * stored splits; before the free-text source, which stays last */
  if (ok)
    fprintf(o.f,
            "workload,name,sha256,n_ops,n_buffers,n_uses,schedule_length,total_bytes,split,"
            "source\n");
  for (int32_t i = 0; ok && i < n; i++) {
    char sha[MB_RES_SHA], split[MB_RES_SPLIT];
    mb_workload *w = mb_results_get_workload(r, keys[i], sha, err);
    if (!w) {
      ok = false;
      break;
    }
    if (!mb_results_get_workload_split(r, keys[i], split, err)) {
      mb_workload_free(w);
      ok = false;
      break;
    }
    int64_t total = 0;
    for (int32_t b = 0; b < w->n_buffers; b++) total += w->buffers[b].size;
    csv_str(o.f, keys[i]);
    fputc(',', o.f);
    csv_str(o.f, w->name);
    fprintf(o.f, ",%s,%d,%d,%d,%d,%" PRId64 ",", sha, (int)w->n_ops, (int)w->n_buffers,
            (int)w->n_uses, (int)w->schedule_length, total);
    csv_str(o.f, split);
    fputc(',', o.f);
    csv_str(o.f, w->source ? w->source : "");
    fputc('\n', o.f);
    mb_workload_free(w);
  }
  mb_results_free_strings(keys, n);
  if (!ok) {
    out_abort(&o);
    return false;
  }
  return out_close(&o, err);
}

static bool export_provenance(mb_results *r, const char *dir, mb_error *err) {
  char **keys = NULL, **vals = NULL;
  int32_t n = 0;
  if (!mb_results_list_attrs(r, &keys, &vals, &n, err)) return false;
  out_file o;
  bool ok = out_open(&o, dir, "provenance.csv", err);
  if (ok) {
    fprintf(o.f, "key,value\n");
    for (int32_t i = 0; i < n; i++) {
      csv_str(o.f, keys[i]);
      fputc(',', o.f);
      csv_str(o.f, vals[i]);
      fputc('\n', o.f);
    }
    ok = out_close(&o, err);
  }
  mb_results_free_strings(keys, n);
  mb_results_free_strings(vals, n);
  return ok;
}

static bool export_curves(mb_results *r, const char *dir, const mb_result_row *rows, int64_t n,
                          mb_error *err) {
  out_file o;
  if (!out_open(&o, dir, "curves.csv", err)) return false;
  /* heuristic_return: the curve's reference on the same episodes, empty when unknown (NaN) */
  fprintf(o.f, "workload,hardware,solver,seed,step,return,heuristic_return\n");
  for (int64_t i = 0; i < n; i++) {
    double *step = NULL, *ret = NULL, heuristic = NAN;
    int32_t len = 0;
    if (!mb_results_get_curve(r, &rows[i], &step, &ret, &len, err) ||
        (len > 0 && !mb_results_get_curve_heuristic(r, &rows[i], &heuristic, err))) {
      free(step);
      free(ret);
      out_abort(&o);
      return false;
    }
    for (int32_t k = 0; k < len; k++) {
      csv_str(o.f, rows[i].workload);
      fputc(',', o.f);
      csv_str(o.f, rows[i].hardware);
      fputc(',', o.f);
      csv_str(o.f, rows[i].solver);
      fprintf(o.f, ",%" PRId64 ",", rows[i].seed);
      csv_dbl(o.f, step[k]);
      fputc(',', o.f);
      csv_dbl(o.f, ret[k]);
      fputc(',', o.f);
      csv_dbl(o.f, heuristic);
      fputc('\n', o.f);
    }
    free(step);
    free(ret);
  }
  return out_close(&o, err);
}

int mb_cmd_export(int argc, char **argv) {
  const char *file = NULL, *dir = NULL;
  bool help = mb_wants_help(argc, argv), bad = false;
  for (int i = 1; i < argc && !help && !bad; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--csv")) {
      bad = !mb_option_path("export", a, i + 1 < argc ? argv[i + 1] : NULL, &dir);
      i++;
    } else if (!strncmp(a, "--csv=", 6)) {
      bad = !mb_option_path("export", "--csv", a + 6, &dir);
    } else if (a[0] == '-' && a[1]) {
      return mb_unknown_option("export", a);
    } else if (file) {
      mb_diag(stderr, "mallocbench export: one results file only ('%s' is extra)", a);
      bad = true;
    } else {
      file = a;
    }
  }
  if (!help && !bad && (!file || !dir)) {
    mb_diag(stderr, "mallocbench export: %s is required", !file ? "FILE" : "--csv DIR");
    bad = true;
  }
  if (help || bad) {
    FILE *out = help ? stdout : stderr;
    fprintf(out,
            "usage: mallocbench export FILE --csv DIR\n\n"
            "Writes one CSV per table of a results file into DIR (created if needed):\n"
            "results.csv, baselines.csv, workloads.csv, provenance.csv, curves.csv.\n"
            "Times in *_ps columns are integer picoseconds simulated by the mallocbench cost\n"
            "model, *_s columns seconds (wall_s, heuristic_wall_s, bound_wall_s: wall clock).\n"
            "Missing numbers (NaN, e.g. the speedups of rows that are not ok) are written as an\n"
            "empty field in every file; -1 in a *_ps column means unavailable. workloads.csv\n"
            "has each workload's catalogue split (empty in files written before splits were\n"
            "stored), so that summary --split can be recomputed from the CSVs. Every column:\n"
            "results/README.md, \"CSV export\".\n");
    return help ? 0 : 2;
  }
  mb_error err = {{0}};
  mb_results *r = mb_results_open(file, false, &err);
  if (!r) {
    mb_diag(stderr, "mallocbench export: %s", err.message);
    return 2;
  }
  mb_result_row *rows = NULL;
  int64_t n = 0;
  bool ok = true;
  if (mb_mkdir_p(dir) != 0) ok = mb_fail(&err, "%s: cannot create: %s", dir, strerror(errno));
  ok = ok && mb_results_read_rows(r, &rows, &n, &err) && export_results(r, dir, rows, n, &err) &&
       export_baselines(r, dir, &err) && export_workloads(r, dir, &err) &&
       export_provenance(r, dir, &err) && export_curves(r, dir, rows, n, &err);
  free(rows);
  mb_results_close(r, NULL);
  if (!ok) {
    mb_diag(stderr, "mallocbench export: %s", err.message);
    return 2;
  }
  printf("exported %" PRId64
         " result rows of %s to %s/{results,baselines,workloads,provenance,"
         "curves}.csv\n",
         n, file, dir);
  return 0;
}
