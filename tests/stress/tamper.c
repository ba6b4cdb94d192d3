/* tamper FILE WHAT: changes one thing in a finished results file, as a hand edit, a buggy writer
 * or a doctored file would, so that verify_tampered.sh can check that `mallocbench verify` finds
 * it: each WHAT below is caught by one check of suite/cli/cmd_verify.c, and the script matches
 * the MISMATCH line that check prints.
 *   row-time          the first ok row's t_solver_ps + 1000 (a stored field off its recomputation)
 *   row-speedup       the first ok row's speedup_heuristic x 1.5 (a stored derived number)
 *   row-invalid       the first ok row gets an assignment with two buffers overlapping in fast
 *                     memory while live at the same time; its row still says ok
 *   row-valid-but-marked-invalid  the first ok row is stored as "invalid" (valid 0,
 *                     t_solver_ps -1, as the driver writes a rejected row) while its assignment
 *                     still validates
 *   row-error-with-assignment  the first ok row is stored as "error" (the solver failed),
 *                     its good assignment kept: a result hidden as a failure
 *   row-unknown-status  the same with status "bogus"
 *   row-invalid-marked-valid  row-invalid, then stored as "invalid" but with valid 1
 *   row-no-baseline   the last baseline row is dropped: that pair's result rows have none
 *   baseline-slow     baseline row 0's t_slow_ps + 1000
 *   baseline-heuristic  baseline row 0's t_heuristic_ps + 1000
 *   baseline-invalid  baseline row 0's heuristic assignment overlaps in fast memory
 *   workload-table    the stored copy of baseline row 0's workload: its first pinned buffer (the
 *                     first buffer when none is) grows by 512 bytes; its sha256 is kept. A pinned
 *                     buffer's size changes no time and no validation, only the hash.
 *   row-speedup-nan   the first ok row's speedup_heuristic becomes NaN (a number lost)
 *   row-seconds-ulp   the first ok row's t_solver_s x (1 + 1e-9): far below any rounding of a
 *                     time's unit, far above the 1e-12 relative tolerance of the comparison
 *   row-assignment-missing  the first ok row's assignment is deleted, its row kept
 *   every-row         every result row's stored numbers, each changed: more mismatches than
 *                     verify prints
 *   workload-broken   the stored copy of baseline row 0's workload: its first use names buffer
 *                     9999, so that it can no longer be rebuilt
 * Result rows, their assignments, the length of /baselines and workload copies are changed
 * through suite/results.h; baseline rows and baseline assignments, which it cannot rewrite, with
 * the raw HDF5 API. The file is then unsealed (mb_results_unseal), as one changed
 * by another HDF5 program must be to be read at all: its readers then parse it unchecked.
 * Prints what it changed on stdout. Exit status: 0 done, 1 the file could not be changed
 * (message on stderr). */
#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "hardware.h"
#include "results.h"
#include "validator.h"

/* A change the results API cannot make, applied with raw HDF5 once the file is closed: one
 * int64 field of one row of a table, or a whole int64 dataset of offsets. */
typedef struct raw_edit {
  char dataset[1024]; /* "" when there is none */
  int64_t row;
  const char *field; /* NULL: write `offsets` over the whole dataset */
  int64_t value;
  mb_assignment *offsets;
  bool delete_it; /* instead: delete the dataset */
} raw_edit;

typedef struct tamper {
  const char *path;
  mb_results *r;
  raw_edit raw;
} tamper;

static bool first_ok_row(tamper *t, mb_result_row **rows, int64_t *i, mb_error *err) {
  int64_t n = 0;
  if (!mb_results_read_rows(t->r, rows, &n, err)) return false;
  for (*i = 0; *i < n; (*i)++)
    if (!strcmp((*rows)[*i].status, "ok")) return true;
  return mb_fail(err, "%s: no result row with status ok", t->path);
}

static bool baseline0(tamper *t, mb_baseline_row *b, mb_error *err) {
  mb_baseline_row *base = NULL;
  int64_t n = 0;
  if (!mb_results_read_baselines(t->r, &base, &n, err)) return false;
  bool ok = n > 0 || mb_fail(err, "%s: no baseline rows", t->path);
  if (ok) *b = base[0];
  free(base);
  return ok;
}

static bool find_baseline(tamper *t, const char *workload, const char *hardware, mb_baseline_row *b,
                          mb_error *err) {
  mb_baseline_row *base = NULL;
  int64_t n = 0;
  if (!mb_results_read_baselines(t->r, &base, &n, err)) return false;
  int64_t k = 0;
  while (k < n && (strcmp(base[k].workload, workload) || strcmp(base[k].hardware, hardware))) k++;
  bool ok = k < n || mb_fail(err, "%s: no baseline for %s@%s", t->path, workload, hardware);
  if (ok) *b = base[k];
  free(base);
  return ok;
}

/* An assignment of w that the validator refuses for an overlap: every buffer slow but two that
 * may be fast (not pinned, fitting the capacity) and are live at a common time, both at 0. */
static mb_assignment *overlapping(const tamper *t, const char *key, const mb_hardware *hw,
                                  mb_error *err) {
  mb_workload *w = mb_results_get_workload(t->r, key, NULL, err);
  if (!w) return NULL;
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  bool found = false;
  for (int32_t i = 0; a && !found && i < w->n_buffers; i++) {
    const mb_buffer *x = &w->buffers[i];
    for (int32_t j = i + 1; !found && j < w->n_buffers; j++) {
      const mb_buffer *y = &w->buffers[j];
      if (x->pinned || y->pinned || x->size > hw->capacity || y->size > hw->capacity ||
          x->start > y->end || y->start > x->end)
        continue;
      a->offset[i] = a->offset[j] = 0;
      found = true;
    }
  }
  mb_error why = {{0}};
  if (!a) {
    mb_fail(err, "out of memory");
  } else if (!found) {
    mb_fail(err, "%s: workload '%s' has no two unpinned buffers live at a common time", t->path,
            key);
  } else if (mb_validate(w, hw, a, &why)) {
    mb_fail(err, "%s: workload '%s': the overlapping assignment validates", t->path, key);
  } else {
    mb_workload_free(w);
    return a;
  }
  mb_assignment_free(a);
  mb_workload_free(w);
  return NULL;
}

static bool row_time(tamper *t, mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t i = 0;
  bool ok = first_ok_row(t, &rows, &i, err);
  if (ok) {
    mb_result_row row = rows[i];
    row.t_solver_ps += 1000;
    printf("results row %" PRId64 ": t_solver_ps %" PRId64 " -> %" PRId64 "\n", i,
           rows[i].t_solver_ps, row.t_solver_ps);
    ok = mb_results_write_row(t->r, i, &row, err);
  }
  free(rows);
  return ok;
}

/* The first ok row with its double `name` (at `offset` in the row) replaced by change(old). */
static bool change_first_ok(tamper *t, const char *name, size_t offset, double (*change)(double),
                            mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t i = 0;
  bool ok = first_ok_row(t, &rows, &i, err);
  if (ok) {
    mb_result_row row = rows[i];
    double *field = (double *)((char *)&row + offset), old = *field;
    *field = change(old);
    printf("results row %" PRId64 ": %s %.17g -> %.17g\n", i, name, old, *field);
    ok = mb_results_write_row(t->r, i, &row, err);
  }
  free(rows);
  return ok;
}

static double times_one_and_a_half(double x) { return x * 1.5; }
static double not_a_number(double x) {
  (void)x;
  return NAN;
}
static double one_billionth_more(double x) { return x * (1 + 1e-9); }

static bool row_speedup(tamper *t, mb_error *err) {
  return change_first_ok(t, "speedup_heuristic", offsetof(mb_result_row, speedup_heuristic),
                         times_one_and_a_half, err);
}

static bool row_speedup_nan(tamper *t, mb_error *err) {
  return change_first_ok(t, "speedup_heuristic", offsetof(mb_result_row, speedup_heuristic),
                         not_a_number, err);
}

static bool row_seconds_ulp(tamper *t, mb_error *err) {
  return change_first_ok(t, "t_solver_s", offsetof(mb_result_row, t_solver_s), one_billionth_more,
                         err);
}

static bool row_invalid(tamper *t, mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t i = 0;
  mb_baseline_row b;
  mb_hardware hw;
  mb_assignment *a = NULL;
  bool ok = first_ok_row(t, &rows, &i, err) &&
            find_baseline(t, rows[i].workload, rows[i].hardware, &b, err);
  if (ok) {
    hw = mb_baseline_hardware(&b);
    a = overlapping(t, rows[i].workload, &hw, err);
    ok = a && mb_results_put_assignment(t->r, &rows[i], a, err);
  }
  if (ok) printf("results row %" PRId64 ": an overlapping assignment, still ok\n", i);
  mb_assignment_free(a);
  free(rows);
  return ok;
}

static bool row_marked_invalid(tamper *t, mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t i = 0;
  bool ok = first_ok_row(t, &rows, &i, err);
  if (ok) {
    mb_result_row row = rows[i];
    snprintf(row.status, sizeof row.status, "invalid");
    snprintf(row.note, sizeof row.note, "validator: tampered");
    row.valid = 0;
    row.t_solver_ps = -1;
    mb_result_row_derive(&row);
    printf("results row %" PRId64 ": status ok -> invalid\n", i);
    ok = mb_results_write_row(t->r, i, &row, err);
  }
  free(rows);
  return ok;
}

/* The first ok row relabelled with `status` (valid 0, no time, as the driver writes a row that
 * is not ok), its assignment kept. */
static bool relabel_first_ok(tamper *t, const char *status, mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t i = 0;
  bool ok = first_ok_row(t, &rows, &i, err);
  if (ok) {
    mb_result_row row = rows[i];
    snprintf(row.status, sizeof row.status, "%s", status);
    snprintf(row.note, sizeof row.note, "tampered");
    row.valid = 0;
    row.t_solver_ps = -1;
    mb_result_row_derive(&row);
    printf("results row %" PRId64 ": status ok -> %s, assignment kept\n", i, status);
    ok = mb_results_write_row(t->r, i, &row, err);
  }
  free(rows);
  return ok;
}

static bool row_error_with_assignment(tamper *t, mb_error *err) {
  return relabel_first_ok(t, "error", err);
}

static bool row_unknown_status(tamper *t, mb_error *err) {
  return relabel_first_ok(t, "bogus", err);
}

/* row-invalid, then stored as the driver stores a rejected row but with valid 1 */
static bool row_invalid_marked_valid(tamper *t, mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t i = 0;
  bool ok = row_invalid(t, err) && first_ok_row(t, &rows, &i, err);
  if (ok) {
    mb_result_row row = rows[i];
    snprintf(row.status, sizeof row.status, "invalid");
    row.valid = 1;
    row.t_solver_ps = -1;
    mb_result_row_derive(&row);
    printf("results row %" PRId64 ": status invalid, valid 1\n", i);
    ok = mb_results_write_row(t->r, i, &row, err);
  }
  free(rows);
  return ok;
}

static bool row_no_baseline(tamper *t, mb_error *err) {
  mb_baseline_row *base = NULL;
  int64_t n = 0;
  bool ok = mb_results_read_baselines(t->r, &base, &n, err) &&
            (n > 0 || mb_fail(err, "%s: no baseline rows", t->path));
  if (ok) {
    printf("baselines row %" PRId64 " (%s@%s) dropped\n", n - 1, base[n - 1].workload,
           base[n - 1].hardware);
    ok = mb_results_truncate(t->r, -1, n - 1, err);
  }
  free(base);
  return ok;
}

static bool baseline_field(tamper *t, const char *field, mb_error *err) {
  mb_baseline_row b;
  if (!baseline0(t, &b, err)) return false;
  int64_t old = !strcmp(field, "t_slow_ps") ? b.t_slow_ps : b.t_heuristic_ps;
  snprintf(t->raw.dataset, sizeof t->raw.dataset, "/baselines");
  t->raw.row = 0;
  t->raw.field = field;
  t->raw.value = old + 1000;
  printf("baselines row 0: %s %" PRId64 " -> %" PRId64 "\n", field, old, t->raw.value);
  return true;
}

static bool baseline_slow(tamper *t, mb_error *err) { return baseline_field(t, "t_slow_ps", err); }
static bool baseline_heuristic(tamper *t, mb_error *err) {
  return baseline_field(t, "t_heuristic_ps", err);
}

static bool baseline_invalid(tamper *t, mb_error *err) {
  mb_baseline_row b;
  if (!baseline0(t, &b, err)) return false;
  mb_hardware hw = mb_baseline_hardware(&b);
  char w[3 * MB_RES_WORKLOAD], h[3 * MB_RES_HARDWARE];
  if (!mb_results_encode_name(b.workload, w, sizeof w) ||
      !mb_results_encode_name(b.hardware, h, sizeof h))
    return mb_fail(err, "%s: baseline names too long", t->path);
  snprintf(t->raw.dataset, sizeof t->raw.dataset, "/assignments/%s/%s/baseline", w, h);
  t->raw.offsets = overlapping(t, b.workload, &hw, err);
  if (!t->raw.offsets) return false;
  printf("baselines row 0: an overlapping heuristic assignment in %s\n", t->raw.dataset);
  return true;
}

static bool workload_table(tamper *t, mb_error *err) {
  mb_baseline_row b;
  if (!baseline0(t, &b, err)) return false;
  char sha[MB_RES_SHA], split[MB_RES_SPLIT];
  mb_workload *w = mb_results_get_workload(t->r, b.workload, sha, err);
  bool ok = w && mb_results_get_workload_split(t->r, b.workload, split, err);
  if (ok) {
    int32_t k = 0;
    while (k < w->n_buffers && !w->buffers[k].pinned) k++;
    if (k == w->n_buffers) k = 0;
    ok = w->n_buffers > 0 || mb_fail(err, "%s: workload '%s' has no buffers", t->path, b.workload);
    if (ok) {
      printf("workload '%s': buffer '%s' size %" PRId64 " -> %" PRId64 ", sha256 kept\n",
             b.workload, w->buffers[k].name, w->buffers[k].size, w->buffers[k].size + 512);
      w->buffers[k].size += 512;
      /* replaces the copy's tables with the changed ones under the old hash; the split is an
         attribute of the group it replaces */
      ok = mb_results_put_workload(t->r, b.workload, w, sha, err) &&
           (!split[0] || mb_results_set_workload_split(t->r, b.workload, split, err));
    }
  }
  mb_workload_free(w);
  return ok;
}

static bool row_assignment_missing(tamper *t, mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t i = 0;
  bool ok = first_ok_row(t, &rows, &i, err);
  if (ok) {
    const mb_result_row *row = &rows[i];
    char w[3 * MB_RES_WORKLOAD], h[3 * MB_RES_HARDWARE], s[3 * MB_RES_SOLVER];
    ok = (mb_results_encode_name(row->workload, w, sizeof w) &&
          mb_results_encode_name(row->hardware, h, sizeof h) &&
          mb_results_encode_name(row->solver, s, sizeof s)) ||
         mb_fail(err, "%s: row names too long", t->path);
    if (ok) {
      snprintf(t->raw.dataset, sizeof t->raw.dataset, "/assignments/%s/%s/%s/%" PRId64, w, h, s,
               row->seed);
      t->raw.delete_it = true;
      printf("results row %" PRId64 ": %s deleted\n", i, t->raw.dataset);
    }
  }
  free(rows);
  return ok;
}

/* Every stored number a result row holds, each off what verify recomputes or copies: 12 checks
 * per row (5 copies from its baseline row and workload, 3 integers and 4 doubles recomputed). */
static bool every_row(tamper *t, mb_error *err) {
  mb_result_row *rows = NULL;
  int64_t n = 0;
  bool ok = mb_results_read_rows(t->r, &rows, &n, err);
  for (int64_t i = 0; ok && i < n; i++) {
    mb_result_row row = rows[i];
    if (strcmp(row.status, "ok")) {
      ok = mb_fail(err, "%s: row %" PRId64 " is not ok", t->path, i);
      break;
    }
    row.capacity += 1;
    row.n_buffers += 1;
    row.t_slow_ps += 1000;
    row.t_heuristic_ps += 1000;
    row.t_bound_ps += 1000;
    row.t_solver_ps += 1000;
    row.n_fast += 1;
    row.fast_bytes += 1;
    row.t_solver_s *= 2;
    row.speedup_heuristic *= 2;
    row.speedup_slow *= 2;
    row.gap_to_bound = isfinite(row.gap_to_bound) ? 2 * row.gap_to_bound + 1 : 1;
    ok = mb_results_write_row(t->r, i, &row, err);
  }
  if (ok) printf("every result row (%" PRId64 "): 12 stored numbers changed\n", n);
  free(rows);
  return ok;
}

static bool workload_broken(tamper *t, mb_error *err) {
  mb_baseline_row b;
  if (!baseline0(t, &b, err)) return false;
  char w[3 * MB_RES_WORKLOAD];
  if (!mb_results_encode_name(b.workload, w, sizeof w))
    return mb_fail(err, "%s: workload name too long", t->path);
  snprintf(t->raw.dataset, sizeof t->raw.dataset, "/workloads/%s/uses", w);
  t->raw.row = 0;
  t->raw.field = "buffer";
  t->raw.value = 9999;
  printf("workload '%s': uses row 0 names buffer 9999\n", b.workload);
  return true;
}

static bool apply_raw(const char *path, const raw_edit *e, mb_error *err) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return mb_fail(err, "%s: H5Fopen failed", path);
  if (e->delete_it) {
    bool ok = H5Ldelete(f, e->dataset, H5P_DEFAULT) >= 0;
    if (H5Fclose(f) < 0) ok = false;
    return ok || mb_fail(err, "%s: cannot delete %s", path, e->dataset);
  }
  hid_t d = H5Dopen2(f, e->dataset, H5P_DEFAULT);
  bool ok = d >= 0;
  if (ok && e->field) {
    /* a compound of the one member: HDF5 writes that member of the row and keeps the others */
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(int64_t));
    H5Tinsert(mt, e->field, 0, H5T_NATIVE_INT64);
    hid_t fs = H5Dget_space(d);
    hsize_t start[1] = {(hsize_t)e->row}, count[1] = {1};
    hid_t ms = H5Screate_simple(1, count, NULL);
    ok = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
         H5Dwrite(d, mt, ms, fs, H5P_DEFAULT, &e->value) >= 0;
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(mt);
  } else if (ok) {
    hid_t fs = H5Dget_space(d);
    ok = H5Sget_simple_extent_npoints(fs) == e->offsets->n_buffers &&
         H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, e->offsets->offset) >= 0;
    H5Sclose(fs);
  }
  if (d >= 0) H5Dclose(d);
  if (H5Fclose(f) < 0) ok = false;
  if (!ok)
    return mb_fail(err, "%s: cannot write %s%s%s", path, e->dataset, e->field ? " field " : "",
                   e->field ? e->field : "");
  return true;
}

static const struct {
  const char *name;
  bool (*run)(tamper *, mb_error *);
} tamperings[] = {
    {"row-time", row_time},
    {"row-speedup", row_speedup},
    {"row-invalid", row_invalid},
    {"row-valid-but-marked-invalid", row_marked_invalid},
    {"row-error-with-assignment", row_error_with_assignment},
    {"row-unknown-status", row_unknown_status},
    {"row-invalid-marked-valid", row_invalid_marked_valid},
    {"row-no-baseline", row_no_baseline},
    {"baseline-slow", baseline_slow},
    {"baseline-heuristic", baseline_heuristic},
    {"baseline-invalid", baseline_invalid},
    {"workload-table", workload_table},
    {"row-speedup-nan", row_speedup_nan},
    {"row-seconds-ulp", row_seconds_ulp},
    {"row-assignment-missing", row_assignment_missing},
    {"every-row", every_row},
    {"workload-broken", workload_broken},
};

int main(int argc, char **argv) {
  size_t n = sizeof tamperings / sizeof tamperings[0], k = 0;
  while (argc == 3 && k < n && strcmp(tamperings[k].name, argv[2])) k++;
  if (argc != 3 || k == n) {
    fprintf(stderr, "usage: tamper RESULTS.h5 WHAT, WHAT one of:");
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %s", tamperings[i].name);
    fprintf(stderr, "\n");
    return 1;
  }
  mb_error err = {{0}};
  tamper t = {.path = argv[1]};
  t.r = mb_results_open(argv[1], true, &err);
  bool ok = t.r && tamperings[k].run(&t, &err);
  ok = mb_results_close(t.r, ok ? &err : NULL) && ok;
  if (ok && t.raw.dataset[0]) ok = apply_raw(argv[1], &t.raw, &err);
  if (ok) ok = mb_results_unseal(argv[1], &err);
  mb_assignment_free(t.raw.offsets);
  if (!ok) {
    fprintf(stderr, "tamper %s: %s\n", argv[2], err.message);
    return 1;
  }
  return 0;
}
