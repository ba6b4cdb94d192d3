/* The HDF5 results store: round trips, appends after reopening, provenance (an HDF5 error on
 * an attribute is not its absence; missing, mistyped and multi-valued ones named), name encoding,
 * workload splits and curve references (and their absence in older files), refusing to clobber
 * files, and clear errors on files that are not results files. Damage: a sealed file with any
 * one byte changed is refused with the file named or reads exactly as it was written, and the
 * seal follows the file's life (open while written, sealed when closed, none when removed). */
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file_seal.h"
#include "paths.h"
#include "result_matrix.h"
#include "results.h"
#include "rng.h"
#include "summary.h"
#include "support.h"
#include "workload.h"
#include "workload_io.h"

/* A small workload with ops, uses, a pinned buffer and a name that needs encoding. */
static mb_workload *make_workload(const char *name) {
  mb_workload_builder *b = mb_builder_new(name, "test_results: hand-built");
  int32_t o0 = mb_builder_add_op(b, "matmul0", "dot", 2e6);
  int32_t o1 = mb_builder_add_op(b, "add1", "add", 1e3);
  int32_t o2 = mb_builder_add_op(b, "out2", "copy", 0);
  int32_t x = mb_builder_add_buffer(b, "x", 4096, 0, 1, false);
  int32_t y = mb_builder_add_buffer(b, "y/with%slash", 8192, 1, 2, false);
  int32_t z = mb_builder_add_buffer(b, "z", 512, 0, 2, true);
  mb_builder_add_use(b, x, o0, 4096, 0);
  mb_builder_add_use(b, x, o1, 4096, 0);
  mb_builder_add_use(b, y, o1, 0, 8192);
  mb_builder_add_use(b, y, o2, 8192, 0);
  mb_builder_add_use(b, z, o0, 512, 0);
  mb_builder_add_use(b, z, o2, 0, 512);
  mb_error err = {{0}};
  mb_workload *w = mb_builder_finish(b, &err);
  if (!w) fprintf(stderr, "builder: %s\n", err.message);
  return w;
}

static mb_result_row make_row(int64_t task, const char *solver, int64_t seed, int64_t t_solver) {
  mb_result_row r;
  memset(&r, 0, sizeof r);
  r.task = task;
  snprintf(r.workload, sizeof r.workload, "net/a%%b");
  snprintf(r.hardware, sizeof r.hardware, "tpu-v4i");
  snprintf(r.solver, sizeof r.solver, "%s", solver);
  r.seed = seed;
  snprintf(r.status, sizeof r.status, "ok");
  r.valid = 1;
  r.capacity = 1 << 20;
  r.n_buffers = 3;
  r.n_fast = 2;
  r.fast_bytes = 12288;
  r.t_slow_ps = 1000000;
  r.t_heuristic_ps = 800000;
  r.t_solver_ps = t_solver;
  r.t_bound_ps = 600000;
  r.wall_s = 0.125 * (double)(task + 1);
  r.iterations = 42 + task;
  r.budget_hit = (int8_t)(task & 1);
  snprintf(r.note, sizeof r.note, "note, with \"quotes\" %d", (int)task);
  mb_result_row_derive(&r);
  return r;
}

/* Appends greedy rows for tasks [from, to), seed = task, t_solver_ps = 700000 + task. */
static void append_rows(mb_results *r, int from, int to) {
  mb_error err = {{0}};
  for (int i = from; i < to; i++) {
    mb_result_row row = make_row(i, "greedy", i, 700000 + i);
    assert_true(mb_results_append(r, &row, NULL, NULL, NULL, 0, NAN, &err));
  }
}

static void test_round_trip(void **state) {
  (void)state;
  char *path = mb_test_temp_path("rt.h5");
  mb_error err = {{0}};
  mb_workload *w = make_workload("net/a%b");
  assert_non_null(w);
  char sha[65];
  assert_true(mb_workload_sha256_hex(w, sha));

  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_put_workload(r, "net/a%b", w, sha, &err));
  mb_baseline_row b;
  memset(&b, 0, sizeof b);
  snprintf(b.workload, sizeof b.workload, "net/a%%b");
  snprintf(b.hardware, sizeof b.hardware, "tpu-v4i");
  b.capacity = 1 << 20;
  b.alignment = 512;
  b.slow_bandwidth = 614e9;
  b.fast_bandwidth = 2e12;
  b.peak_flops = 1.38e14;
  b.op_overhead_s = 1e-6;
  b.t_slow_ps = 1000000;
  b.t_heuristic_ps = 800000;
  b.t_bound_ps = 600000;
  snprintf(b.bound_status, sizeof b.bound_status, "ok");
  mb_assignment *ha = mb_assignment_new(3);
  ha->offset[0] = 0;
  assert_true(mb_results_append_baseline(r, &b, ha, &err));

  mb_assignment *a = mb_assignment_new(3);
  a->offset[0] = 0;
  a->offset[1] = 4096;
  double steps[3] = {0, 100, 200}, rets[3] = {0.1, 0.25, 0.5};
  mb_result_row rows[2] = {make_row(1, "greedy", 0, 700000),
                           make_row(2, "mallocmuzero", 0, 650000)};
  assert_true(mb_results_append(r, &rows[0], a, NULL, NULL, 0, NAN, &err));
  assert_true(mb_results_append(r, &rows[1], a, steps, rets, 3, 0.375, &err));
  assert_true(mb_results_close(r, &err));

  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  mb_result_row *back = NULL;
  int64_t n = 0;
  assert_true(mb_results_read_rows(r, &back, &n, &err));
  assert_int_equal(n, 2);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(back[i].task, rows[i].task);
    assert_string_equal(back[i].workload, rows[i].workload);
    assert_string_equal(back[i].solver, rows[i].solver);
    assert_string_equal(back[i].note, rows[i].note);
    assert_int_equal(back[i].t_solver_ps, rows[i].t_solver_ps);
    assert_int_equal(back[i].budget_hit, rows[i].budget_hit);
    assert_true(back[i].speedup_heuristic == rows[i].speedup_heuristic);
    assert_true(back[i].gap_to_bound == rows[i].gap_to_bound);
    assert_true(back[i].wall_s == rows[i].wall_s);
  }
  /* derived fields follow the documented formulas */
  assert_true(fabs(back[0].speedup_heuristic - 800000.0 / 700000.0) < 1e-15);
  assert_true(fabs(back[0].gap_to_bound - 100000.0 / 600000.0) < 1e-15);

  bool absent = false;
  mb_assignment *a2 = mb_results_get_assignment(r, &back[1], &absent, &err);
  assert_non_null(a2);
  assert_int_equal(a2->n_buffers, 3);
  for (int i = 0; i < 3; i++) assert_int_equal(a2->offset[i], a->offset[i]);
  mb_assignment_free(a2);

  double *s2 = NULL, *r2 = NULL;
  int32_t len = -1;
  assert_true(mb_results_get_curve(r, &back[0], &s2, &r2, &len, &err));
  assert_int_equal(len, 0); /* greedy has no curve */
  assert_true(mb_results_get_curve(r, &back[1], &s2, &r2, &len, &err));
  assert_int_equal(len, 3);
  for (int i = 0; i < 3; i++) assert_true(s2[i] == steps[i] && r2[i] == rets[i]);
  free(s2);
  free(r2);
  double h = 0;
  assert_true(mb_results_get_curve_heuristic(r, &back[0], &h, &err));
  assert_true(isnan(h)); /* no curve, no reference */
  assert_true(mb_results_get_curve_heuristic(r, &back[1], &h, &err));
  assert_true(h == 0.375);

  mb_baseline_row *bb = NULL;
  assert_true(mb_results_read_baselines(r, &bb, &n, &err));
  assert_int_equal(n, 1);
  assert_true(bb[0].slow_bandwidth == 614e9);
  mb_assignment *hb = mb_results_get_baseline_assignment(r, &bb[0], &absent, &err);
  assert_non_null(hb);
  assert_int_equal(hb->offset[0], 0);
  assert_int_equal(hb->offset[1], MB_SLOW);
  mb_assignment_free(hb);
  free(bb);

  char sha2[MB_RES_SHA], why[256];
  mb_workload *w2 = mb_results_get_workload(r, "net/a%b", sha2, &err);
  assert_non_null(w2);
  assert_string_equal(sha2, sha);
  assert_true(mb_workload_equal(w, w2, why, sizeof why));
  char sha3[65];
  assert_true(mb_workload_sha256_hex(w2, sha3));
  assert_string_equal(sha3, sha);
  char **keys = NULL;
  int32_t nk = 0;
  assert_true(mb_results_workload_keys(r, &keys, &nk, &err));
  assert_int_equal(nk, 1);
  assert_string_equal(keys[0], "net/a%b");
  mb_results_free_strings(keys, nk);
  mb_workload_free(w2);
  assert_true(mb_results_close(r, &err));

  free(back);
  mb_assignment_free(a);
  mb_assignment_free(ha);
  mb_workload_free(w);
  mb_test_temp_remove(path);
}

static void test_append_after_reopen_and_truncate(void **state) {
  (void)state;
  char *path = mb_test_temp_path("append.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  append_rows(r, 0, 3);
  assert_true(mb_results_close(r, &err));
  /* reopen and append more than one chunk's worth */
  r = mb_results_open(path, true, &err);
  assert_non_null(r);
  append_rows(r, 3, 100);
  assert_true(mb_results_close(r, &err));
  r = mb_results_open(path, true, &err);
  assert_non_null(r);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_int_equal(n, 100);
  for (int i = 0; i < 100; i++) {
    assert_int_equal(rows[i].task, i);
    assert_int_equal(rows[i].t_solver_ps, 700000 + i);
  }
  free(rows);
  /* a negative count leaves that table alone; one past the end too */
  assert_true(mb_results_truncate(r, -1, 0, &err));
  assert_true(mb_results_truncate(r, 200, 0, &err));
  assert_true(mb_results_close(r, &err));
  r = mb_results_open(path, true, &err);
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_int_equal(n, 100);
  assert_int_equal(mb_results_torn_rows(r), 0); /* not grown with rows of zeros */
  free(rows);
  assert_true(mb_results_truncate(r, 40, 0, &err));
  /* rewriting a row in place: the first and the last; none outside the table */
  mb_result_row first = make_row(7, "greedy", 7, 123), last = make_row(8, "greedy", 8, 456);
  assert_true(mb_results_write_row(r, 0, &first, &err));
  assert_true(mb_results_write_row(r, 39, &last, &err));
  assert_false(mb_results_write_row(r, 40, &last, &err));
  assert_non_null(strstr(err.message, "cannot rewrite row 40 of /results"));
  assert_false(mb_results_write_row(r, -1, &last, &err));
  assert_true(mb_results_close(r, &err));
  r = mb_results_open(path, false, &err);
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_int_equal(n, 40);
  assert_int_equal(rows[0].task, 7);
  assert_int_equal(rows[0].t_solver_ps, 123);
  assert_int_equal(rows[1].task, 1);
  assert_int_equal(rows[38].task, 38);
  assert_int_equal(rows[39].task, 8);
  assert_int_equal(rows[39].t_solver_ps, 456);
  free(rows);
  /* a read-only handle refuses writes with an error, not a crash */
  mb_result_row row = make_row(0, "greedy", 0, 1);
  assert_false(mb_results_append(r, &row, NULL, NULL, NULL, 0, NAN, &err));
  assert_non_null(strstr(err.message, path));
  assert_true(mb_results_close(r, &err));
  mb_test_temp_remove(path);
}

/* A kill inside the flush that appends a row into a new chunk can leave the table's extent one
 * row past its data, which then reads as zeros (tests/stress/hdf5_kill_stress.c): the readers
 * drop such a torn tail and count it; rows before it, and files without one, read unchanged. */
static void test_torn_tail(void **state) {
  (void)state;
  char *path = mb_test_temp_path("torn.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  append_rows(r, 0, 65); /* the 65th row starts a second chunk */
  mb_result_row *rows = NULL;
  int64_t n = 0;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_int_equal(n, 65);
  assert_int_equal(mb_results_torn_rows(r), 0);
  free(rows);
  mb_result_row zero;
  memset(&zero, 0, sizeof zero);
  assert_true(mb_results_write_row(r, 64, &zero, &err));
  assert_true(mb_results_close(r, &err));
  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_int_equal(n, 64);
  assert_int_equal(mb_results_torn_rows(r), 1);
  for (int i = 0; i < 64; i++) assert_int_equal(rows[i].task, i);
  free(rows);
  /* baselines have none */
  mb_baseline_row *base = NULL;
  assert_true(mb_results_read_baselines(r, &base, &n, &err));
  assert_int_equal(mb_results_torn_rows(r), 1);
  free(base);
  assert_true(mb_results_close(r, &err));
  mb_test_temp_remove(path);
}

/* A table of another shape than a list of rows (a file edited by another program: here /results
 * stored as one text) is refused as damaged, naming the file and the table; it read as a table
 * without rows. */
static void test_table_not_a_list(void **state) {
  (void)state;
  char *path = mb_test_temp_path("scalar_table.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  append_rows(r, 0, 3);
  assert_true(mb_results_close(r, &err));
  mb_test_h5_replace_with_text(path, "/results");
  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  mb_result_row *rows = NULL;
  int64_t n = -1;
  assert_false(mb_results_read_rows(r, &rows, &n, &err));
  assert_null(rows);
  char want[4400];
  snprintf(want, sizeof want, "%s: table results is not a list of rows (damaged file?)", path);
  if (strncmp(err.message, want, strlen(want))) fail_msg("%s", err.message);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

static void test_provenance(void **state) {
  (void)state;
  char *path = mb_test_temp_path("prov.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_set_attr_string(r, "command_line", "mallocbench run --jobs 2", &err));
  assert_true(mb_results_set_attr_string(r, "empty", "", &err));
  assert_true(mb_results_set_attr_int(r, "git_dirty", 1, &err));
  assert_true(mb_results_set_attr_double(r, "budget", 0.1, &err));
  /* overwriting an attribute replaces it (even with another length) */
  assert_true(mb_results_set_attr_string(r, "command_line", "x", &err));
  assert_true(mb_results_close(r, &err));

  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  char *s = mb_results_get_attr_string(r, "command_line", &err);
  assert_string_equal(s, "x");
  free(s);
  s = mb_results_get_attr_string(r, "empty", &err);
  assert_string_equal(s, "");
  free(s);
  int64_t v = 0;
  assert_true(mb_results_get_attr_int(r, "git_dirty", &v, &err));
  assert_int_equal(v, 1);
  double d = 0;
  assert_true(mb_results_get_attr_double(r, "budget", &d, &err));
  assert_true(d == 0.1);
  assert_null(mb_results_get_attr_string(r, "nope", &err));
  assert_non_null(strstr(err.message, "'nope'"));
  char **keys = NULL, **vals = NULL;
  int32_t n = 0;
  assert_true(mb_results_list_attrs(r, &keys, &vals, &n, &err));
  int found = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!strcmp(keys[i], "budget")) found += !strcmp(vals[i], "0.10000000000000001");
    if (!strcmp(keys[i], "git_dirty")) found += !strcmp(vals[i], "1");
    if (!strcmp(keys[i], "format_version")) found++;
  }
  assert_int_equal(found, 3);
  mb_results_free_strings(keys, n);
  mb_results_free_strings(vals, n);
  assert_true(mb_results_close(r, &err));
  mb_test_temp_remove(path);
}

/* Adds root attributes of two values each, a string and an integer one, with the raw HDF5 API
 * (no writer of the store makes them: a hand-made or damaged file). */
static void raw_add_pairs(const char *path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  hsize_t two[1] = {2};
  hid_t sp = H5Screate_simple(1, two, NULL);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, 8);
  hid_t a = H5Acreate2(f, "pair_str", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(a >= 0 && H5Awrite(a, t, "abcdefghijklmnop") >= 0);
  H5Aclose(a);
  int64_t v[2] = {1, 2};
  a = H5Acreate2(f, "pair_int", H5T_NATIVE_INT64, sp, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, v) >= 0);
  H5Aclose(a);
  /* an integer attribute with no value at all (a null dataspace: zero points) */
  hid_t none = H5Screate(H5S_NULL);
  a = H5Acreate2(f, "no_int", H5T_NATIVE_INT64, none, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(a >= 0);
  H5Aclose(a);
  H5Sclose(none);
  H5Tclose(t);
  H5Sclose(sp);
  assert_true(H5Fclose(f) >= 0);
  assert_true(mb_results_unseal(path, NULL));
}

/* An HDF5 error while looking for an attribute is not taken for its absence (h5attr.h):
 * mb_results_has_attr says present, as nn_io.h's mb_nn_file_has does, and the read that
 * follows fails saying so, with HDF5's reason. The error is provoked with an empty name, which
 * H5Aexists refuses as it refuses damaged metadata. Before, has_attr said absent (a resume
 * then took the defaults of options the file holds) and the reads said "missing". Missing, of
 * another type, and several values (read past the one value's buffer before) each say so. */
static void test_attr_errors(void **state) {
  (void)state;
  char *path = mb_test_temp_path("attrs.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_set_attr_int(r, "n", 7, &err));
  assert_true(mb_results_set_attr_string(r, "s", "text", &err));
  assert_true(mb_results_close(r, &err));
  raw_add_pairs(path);
  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_has_attr(r, "n"));
  assert_false(mb_results_has_attr(r, "nope"));
  assert_true(mb_results_has_attr(r, "")); /* HDF5 failed: not "absent" */
  char want[1200];
  snprintf(want, sizeof want, "%s: attribute '': cannot read it (damaged file?): ", path);
  assert_null(mb_results_get_attr_string(r, "", &err));
  assert_non_null(strstr(err.message, want));
  int64_t v = 0;
  double d = 0;
  assert_false(mb_results_get_attr_int(r, "", &v, &err));
  assert_non_null(strstr(err.message, want));
  assert_false(mb_results_get_attr_double(r, "", &d, &err));
  assert_non_null(strstr(err.message, want));

  snprintf(want, sizeof want, "%s: attribute 'nope' is missing", path);
  assert_null(mb_results_get_attr_string(r, "nope", &err));
  assert_string_equal(err.message, want);
  assert_false(mb_results_get_attr_int(r, "nope", &v, &err));
  assert_string_equal(err.message, want);
  snprintf(want, sizeof want, "%s: attribute 'n' is not a string", path);
  assert_null(mb_results_get_attr_string(r, "n", &err));
  assert_string_equal(err.message, want);
  snprintf(want, sizeof want, "%s: attribute 's' is not an integer", path);
  assert_false(mb_results_get_attr_int(r, "s", &v, &err));
  assert_string_equal(err.message, want);
  snprintf(want, sizeof want, "%s: attribute 's' is not a number", path);
  assert_false(mb_results_get_attr_double(r, "s", &d, &err));
  assert_string_equal(err.message, want);
  assert_true(mb_results_get_attr_double(r, "n", &d, &err) && d == 7);

  snprintf(want, sizeof want, "%s: attribute 'pair_str' is not a single string", path);
  assert_null(mb_results_get_attr_string(r, "pair_str", &err));
  assert_string_equal(err.message, want);
  snprintf(want, sizeof want, "%s: attribute 'pair_int' is not an integer", path);
  assert_false(mb_results_get_attr_int(r, "pair_int", &v, &err));
  assert_string_equal(err.message, want);
  assert_false(mb_results_get_attr_double(r, "pair_int", &d, &err));
  /* no value is a shape the attribute has, not an HDF5 error */
  snprintf(want, sizeof want, "%s: attribute 'no_int' is not an integer", path);
  assert_false(mb_results_get_attr_int(r, "no_int", &v, &err));
  assert_string_equal(err.message, want);
  /* listed all the same, the pairs as what they are */
  char **keys = NULL, **vals = NULL;
  int32_t n = 0;
  assert_true(mb_results_list_attrs(r, &keys, &vals, &n, &err));
  int found = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!strcmp(keys[i], "s")) found += !strcmp(vals[i], "text");
    if (!strncmp(keys[i], "pair_", 5)) found += !strcmp(vals[i], "(unsupported attribute type)");
  }
  assert_int_equal(found, 3);
  mb_results_free_strings(keys, n);
  mb_results_free_strings(vals, n);
  assert_true(mb_results_close(r, &err));
  mb_test_temp_remove(path);
}

static void test_refuses_and_reports(void **state) {
  (void)state;
  char *path = mb_test_temp_path("exists.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  mb_result_row row = make_row(0, "greedy", 0, 5);
  assert_true(mb_results_append(r, &row, NULL, NULL, NULL, 0, NAN, &err));
  assert_true(mb_results_close(r, &err));
  /* an existing file is never replaced without force, and stays intact */
  assert_null(mb_results_create(path, false, &err));
  assert_non_null(strstr(err.message, "exists"));
  r = mb_results_open(path, false, &err);
  mb_result_row *rows = NULL;
  int64_t n = 0;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_int_equal(n, 1);
  free(rows);
  mb_results_close(r, NULL);
  r = mb_results_create(path, true, &err);
  assert_non_null(r);
  assert_true(mb_results_close(r, &err));

  /* unwritable place: a directory that does not exist */
  assert_null(mb_results_create("/nonexistent-dir/x.h5", false, &err));
  assert_non_null(strstr(err.message, "/nonexistent-dir/x.h5"));
  assert_non_null(strstr(err.message, "No such file"));

  /* not HDF5 at all, and HDF5 but not ours */
  char *txt = mb_test_write_temp(".h5", "this is not hdf5\n");
  assert_null(mb_results_open(txt, false, &err));
  assert_non_null(strstr(err.message, "not an HDF5 file"));
  assert_null(mb_results_open("/nonexistent-dir/x.h5", false, &err));
  assert_non_null(strstr(err.message, "No such file"));
  mb_test_temp_remove(txt);
  mb_test_temp_remove(path);
}

static void test_truncated_file(void **state) {
  (void)state;
  char *path = mb_test_temp_path("trunc.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  for (int i = 0; i < 10; i++) {
    mb_result_row row = make_row(i, "greedy", 0, 5);
    assert_true(mb_results_append(r, &row, NULL, NULL, NULL, 0, NAN, &err));
  }
  assert_true(mb_results_close(r, &err));
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(truncate(path, st.st_size / 2), 0);
  /* a damaged file gives an error (open or read), never a crash */
  r = mb_results_open(path, false, &err);
  if (r) {
    mb_result_row *rows = NULL;
    int64_t n = 0;
    bool ok = mb_results_read_rows(r, &rows, &n, &err);
    if (ok) assert_true(n <= 10);
    free(rows);
    mb_results_close(r, NULL);
  } else {
    assert_non_null(strstr(err.message, path));
  }
  mb_test_temp_remove(path);
}

/* A file another process holds open (HDF5 flocks it: a run still writing) is refused with a
 * message that says so, not as a damaged file; once released it opens. */
static void test_busy_file(void **state) {
  (void)state;
  char *path = mb_test_temp_path("busy.h5");
  mb_error err = {{0}};
  mb_results *w = mb_results_create(path, false, &err);
  assert_non_null(w);
  mb_result_row row = make_row(1, "greedy", 0, 5);
  assert_true(mb_results_append(w, &row, NULL, NULL, NULL, 0, NAN, &err));
  /* the writer itself: HDF5's own lock */
  mb_results *r = mb_results_open(path, false, &err);
  if (r) { /* an HDF5 built without file locking: nothing to refuse */
    mb_results_close(r, NULL);
  } else {
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "open in another process"));
  }
  assert_true(mb_results_close(w, &err));
  /* any exclusive lock, as a writer in another process holds */
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  assert_int_equal(flock(fd, LOCK_EX), 0);
  assert_null(mb_results_open(path, false, &err));
  assert_non_null(strstr(err.message, "open in another process (a run still writing it?)"));
  assert_null(mb_results_open(path, true, &err));
  close(fd);
  r = mb_results_open(path, true, &err);
  assert_non_null(r);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

static void test_name_encoding(void **state) {
  (void)state;
  const char *names[] = {"plain", "a/b", "100%", ".hidden", "", "x.y/z%2F"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char enc[64], dec[64];
    assert_non_null(mb_results_encode_name(names[i], enc, sizeof enc));
    assert_null(strchr(enc, '/'));
    assert_true(enc[0] != '.' && enc[0] != '\0');
    assert_non_null(mb_results_decode_name(enc, dec, sizeof dec));
    assert_string_equal(dec, names[i]);
  }
  char small[4];
  assert_null(mb_results_encode_name("abcdef", small, sizeof small));

  /* what the escapes are, and the room each needs with its NUL */
  const struct {
    const char *name, *enc;
  } exact[] = {{"a/b", "a%2Fb"}, {".x", "%2Ex"}, {"x.", "x."}, {"%", "%25"}, {"", "%00"}};
  for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
    char enc[16], dec[16];
    size_t room = strlen(exact[i].enc) + 1;
    assert_non_null(mb_results_encode_name(exact[i].name, enc, room));
    assert_string_equal(enc, exact[i].enc);
    assert_null(mb_results_encode_name(exact[i].name, enc, room - 1));
    room = strlen(exact[i].name) + 1;
    assert_non_null(mb_results_decode_name(exact[i].enc, dec, room));
    assert_string_equal(dec, exact[i].name);
    assert_null(mb_results_decode_name(exact[i].enc, dec, room - 1));
  }

  /* every byte round-trips as the first character, where '.' is escaped too; and an escape
   * of any byte decodes, in upper- or lower-case hex (what another writer may have made) */
  for (int c = 1; c < 256; c++) {
    char name[3] = {(char)c, 'z', '\0'}, enc[16], dec[16];
    assert_non_null(mb_results_encode_name(name, enc, sizeof enc));
    assert_non_null(mb_results_decode_name(enc, dec, sizeof dec));
    assert_string_equal(dec, name);
    const char *cases[] = {"%%%02X", "%%%02x"};
    for (int k = 0; k < 2; k++) {
      snprintf(enc, sizeof enc, cases[k], c);
      assert_non_null(mb_results_decode_name(enc, dec, sizeof dec));
      assert_int_equal((unsigned char)dec[0], c);
      assert_int_equal(dec[1], '\0');
    }
  }
  /* what is not an escape stays as written */
  const char *raw[] = {"%", "%4", "%G1", "%1G", "50%", "%%41"};
  const char *want[] = {"%", "%4", "%G1", "%1G", "50%", "%A"};
  for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
    char dec[16];
    assert_non_null(mb_results_decode_name(raw[i], dec, sizeof dec));
    assert_string_equal(dec, want[i]);
  }
}

/* Names longer than the store's fields are refused naming the workload and the limit; the
 * longest that fit are stored. */
static void test_long_names(void **state) {
  (void)state;
  char *path = mb_test_temp_path("long.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  mb_workload *w = make_workload("w");
  assert_non_null(w);
  /* the key: at most 3 * MB_RES_WORKLOAD - 1 bytes once encoded */
  char key[3 * MB_RES_WORKLOAD + 1];
  memset(key, 'k', sizeof key - 1);
  key[sizeof key - 1] = '\0';
  assert_false(mb_results_put_workload(r, key, w, "", &err));
  assert_non_null(strstr(err.message, "' is too long"));
  key[3 * MB_RES_WORKLOAD - 1] = '\0';
  assert_true(mb_results_put_workload(r, key, w, "", &err));
  char sha[MB_RES_SHA];
  mb_workload *back = mb_results_get_workload(r, key, sha, &err);
  assert_non_null(back);
  assert_int_equal(back->n_buffers, w->n_buffers);
  mb_workload_free(back);
  /* an op's name or kind, a buffer's name: at most MB_NAME_MAX - 1 bytes */
  char name[MB_NAME_MAX + 1];
  memset(name, 'n', MB_NAME_MAX);
  name[MB_NAME_MAX] = '\0';
  char want[256];
  for (int part = 0; part < 3; part++) {
    for (int len = MB_NAME_MAX - 1; len <= MB_NAME_MAX; len++) {
      name[len] = '\0';
      mb_workload_builder *b = mb_builder_new("long", "test_results");
      int32_t o = mb_builder_add_op(b, part == 0 ? name : "op", part == 1 ? name : "dot", 1);
      int32_t x = mb_builder_add_buffer(b, part == 2 ? name : "x", 64, 0, 0, false);
      mb_builder_add_use(b, x, o, 64, 0);
      mb_workload *lw = mb_builder_finish(b, &err);
      assert_non_null(lw);
      bool stored = mb_results_put_workload(r, "long", lw, "", &err);
      mb_workload_free(lw);
      name[len] = 'n';
      if (len < MB_NAME_MAX) {
        assert_true(stored);
        continue;
      }
      assert_false(stored);
      snprintf(want, sizeof want, "workload 'long': %s 0: name%s longer than %d bytes",
               part == 2 ? "buffer" : "op", part == 2 ? "" : " or kind", MB_NAME_MAX - 1);
      assert_non_null(strstr(err.message, want));
    }
  }
  mb_workload_free(w);
  assert_true(mb_results_close(r, &err));
  mb_test_temp_remove(path);
}

/* Sets attribute `key` of the object at `object` ("/" for the root) of a closed HDF5 file with
 * the raw API, replacing one of that name: a string, or an integer when `text` is NULL. */
static void raw_set_attr(const char *path, const char *object, const char *key, const char *text,
                         int64_t value) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t o = H5Oopen(f, object, H5P_DEFAULT);
  assert_true(o >= 0);
  if (H5Aexists(o, key) > 0) assert_true(H5Adelete(o, key) >= 0);
  hid_t sp = H5Screate(H5S_SCALAR), t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, text ? strlen(text) + 1 : 1);
  hid_t a = text ? H5Acreate2(o, key, t, sp, H5P_DEFAULT, H5P_DEFAULT)
                 : H5Acreate2(o, key, H5T_NATIVE_INT64, sp, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(a >= 0);
  assert_true(text ? H5Awrite(a, t, text) >= 0 : H5Awrite(a, H5T_NATIVE_INT64, &value) >= 0);
  H5Aclose(a);
  H5Tclose(t);
  H5Sclose(sp);
  H5Oclose(o);
  assert_true(H5Fclose(f) >= 0);
}

/* A raw HDF5 file (no writer of the store's): with a user block for a seal when `block`, the
 * root attribute mallocbench_file = `kind` unless NULL, and an empty dataset /results when
 * `table`. */
static void raw_hdf5_file(const char *path, bool block, const char *kind, bool table) {
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (block) H5Pset_userblock(fcpl, MB_SEAL_BLOCK);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  H5Pclose(fcpl);
  assert_true(f >= 0);
  if (table) {
    hsize_t one[1] = {1};
    hid_t sp = H5Screate_simple(1, one, NULL);
    hid_t d = H5Dcreate2(f, "results", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    H5Dclose(d);
    H5Sclose(sp);
  }
  assert_true(H5Fclose(f) >= 0);
  if (kind) raw_set_attr(path, "/", "mallocbench_file", kind, 0);
}

/* HDF5 files that are not results files, each refused saying what it is or what is wrong with
 * its root attributes. */
static void test_not_results_files(void **state) {
  (void)state;
  char *path = mb_test_temp_path("other.h5");
  mb_error err = {{0}};
  char want[1200];
  raw_hdf5_file(path, false, NULL, false);
  assert_null(mb_results_open(path, false, &err));
  snprintf(want, sizeof want,
           "%s: not a mallocbench results file (root attribute 'mallocbench_file' missing)", path);
  assert_string_equal(err.message, want);
  raw_set_attr(path, "/", "format", MB_AGENT_FORMAT, 0);
  assert_null(mb_results_open(path, false, &err));
  snprintf(want, sizeof want,
           "%s: a mallocMuZero agent checkpoint, not a results file ('mallocbench show' "
           "describes it)",
           path);
  assert_string_equal(err.message, want);
  raw_set_attr(path, "/", "mallocbench_file", "catalogue", 0);
  assert_null(mb_results_open(path, false, &err));
  snprintf(want, sizeof want,
           "%s: not a mallocbench results file (root attribute 'mallocbench_file' is not "
           "'results')",
           path);
  assert_string_equal(err.message, want);
  raw_set_attr(path, "/", "mallocbench_file", "results", 0);
  snprintf(want, sizeof want,
           "%s: damaged results file: root attribute 'format_version' is missing or not an "
           "integer",
           path);
  assert_null(mb_results_open(path, false, &err));
  assert_string_equal(err.message, want);
  raw_set_attr(path, "/", "format_version", "1", 0);
  assert_null(mb_results_open(path, false, &err));
  assert_string_equal(err.message, want);
  raw_set_attr(path, "/", "format_version", NULL, MB_RESULTS_FORMAT + 1);
  assert_null(mb_results_open(path, false, &err));
  snprintf(want, sizeof want, "%s: results format %d, this mallocbench reads format %d", path,
           MB_RESULTS_FORMAT + 1, MB_RESULTS_FORMAT);
  assert_string_equal(err.message, want);
  raw_set_attr(path, "/", "format_version", NULL, MB_RESULTS_FORMAT);
  assert_null(mb_results_open(path, false, &err));
  snprintf(want, sizeof want, "%s: damaged results file: table /results or /baselines is missing",
           path);
  assert_string_equal(err.message, want);
  mb_test_temp_remove(path);
}

/* A workload without ops (an imported buffer CSV, a packing instance) is stored and rebuilt with
 * its own schedule length and all-slow time, hashing as before. */
static void test_opless_workload(void **state) {
  (void)state;
  char *path = mb_test_temp_path("opless.h5");
  mb_error err = {{0}};
  const mb_test_buffer bufs[] = {
      {"a", 4096, 0, 9, 700, false}, {"b", 1024, 3, 20, 300, true}, {"c", 64, 15, 29, 5, false}};
  mb_workload *w = mb_test_workload("packing", bufs, 3, 30, 123456);
  assert_int_equal(w->n_ops, 0);
  char sha[65], back_sha[MB_RES_SHA], again[65];
  assert_true(mb_workload_sha256_hex(w, sha));
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_put_workload(r, "packing", w, sha, &err));
  assert_true(mb_results_close(r, &err));
  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  mb_workload *back = mb_results_get_workload(r, "packing", back_sha, &err);
  if (!back) fail_msg("%s", err.message);
  assert_int_equal(back->n_ops, 0);
  assert_int_equal(back->n_buffers, 3);
  assert_int_equal(back->schedule_length, 30);
  assert_true(mb_workload_sha256_hex(back, again));
  assert_string_equal(again, sha);
  assert_string_equal(back_sha, sha);
  mb_workload_free(back);
  mb_workload_free(w);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* An assignment written again replaces the stored one (as tests/stress/tamper.c relies on). */
static void test_put_assignment(void **state) {
  (void)state;
  char *path = mb_test_temp_path("put.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  mb_result_row row = make_row(0, "greedy", 0, 5);
  mb_assignment *a = mb_assignment_new(3);
  a->offset[0] = 0;
  a->offset[1] = -1;
  a->offset[2] = 64;
  assert_true(mb_results_append(r, &row, a, NULL, NULL, 0, NAN, &err));
  a->offset[1] = 128;
  assert_true(mb_results_put_assignment(r, &row, a, &err));
  assert_true(mb_results_close(r, &err));
  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  bool absent = true;
  mb_assignment *back = mb_results_get_assignment(r, &row, &absent, &err);
  assert_non_null(back);
  assert_false(absent);
  assert_int_equal(back->n_buffers, 3);
  for (int i = 0; i < 3; i++) assert_int_equal(back->offset[i], a->offset[i]);
  mb_assignment_free(back);
  mb_assignment_free(a);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* mb_results_is_foreign: which files `run --resume` leaves alone. Either mark of a results file
 * (its root attribute, its table) makes it not foreign; a damaged file is not known to be
 * foreign, whatever its seal's kind says. */
static void test_is_foreign(void **state) {
  (void)state;
  char *path = mb_test_temp_path("foreign.h5");
  mb_error err = {{0}};
  const struct {
    const char *kind;
    bool table, foreign;
  } raw[] = {{NULL, false, true}, {"agent", false, true}, {"results", false, false},
             {NULL, true, false}, {"agent", true, false}, {"results", true, false}};
  for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
    raw_hdf5_file(path, false, raw[i].kind, raw[i].table);
    assert_int_equal(mb_results_is_foreign(path), raw[i].foreign);
  }
  /* a file of another kind sealed by its writer, then damaged past the block */
  raw_hdf5_file(path, true, "agent", false);
  assert_true(mb_seal_mark_open(path, "agent", &err));
  assert_true(mb_seal_close(path, "agent", &err));
  assert_true(mb_results_is_foreign(path));
  size_t size = 0;
  unsigned char *bytes = (unsigned char *)mb_read_file(path, &size);
  assert_non_null(bytes);
  bytes[size - 1] ^= 0x5a;
  mb_test_write_bytes(path, bytes, size);
  free(bytes);
  mb_seal_state seal;
  assert_false(mb_seal_check(path, &seal, NULL, &err));
  assert_false(mb_results_is_foreign(path));
  /* results files, sealed or not; what is not HDF5; nothing */
  mb_results *r = mb_results_create(path, true, &err);
  assert_non_null(r);
  assert_true(mb_results_close(r, &err));
  assert_false(mb_results_is_foreign(path));
  assert_true(mb_results_unseal(path, &err));
  assert_false(mb_results_is_foreign(path));
  mb_test_temp_remove(path);
  assert_false(mb_results_is_foreign(path));
  char *txt = mb_test_write_temp(".h5", "not hdf5\n");
  assert_false(mb_results_is_foreign(txt));
  mb_test_temp_remove(txt);
}

/* A closed results file edited with the raw HDF5 API (a damaged or hand-made file): the link
 * `name` deleted, and replaced by a 2 x 2 integer dataset when `as_matrix`; then unsealed, as
 * an edit outside mallocbench leaves it. */
static void raw_replace_table(const char *path, const char *name, bool as_matrix) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
  if (as_matrix) {
    hsize_t dims[2] = {2, 2};
    int v[4] = {1, 2, 3, 4};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
  }
  assert_true(H5Fclose(f) >= 0);
  assert_true(mb_results_unseal(path, NULL));
}

/* Damaged or hand-made files, each refused with what is wrong or read without a crash: either
 * table missing; a table of two dimensions (read as empty, never past the one dimension the
 * reader holds); a workload's checksum longer than its field. Many root attributes are all
 * listed. A FIFO is never waited on. */
static void test_damaged_tables(void **state) {
  (void)state;
  char *path = mb_test_temp_path("tables.h5");
  mb_error err = {{0}};
  char want[1200];
  const char *tables[] = {"results", "baselines"};
  for (int t = 0; t < 2; t++) {
    mb_results *r = mb_results_create(path, true, &err);
    assert_non_null(r);
    assert_true(mb_results_close(r, &err));
    raw_replace_table(path, tables[t], false);
    assert_null(mb_results_open(path, false, &err));
    snprintf(want, sizeof want, "%s: damaged results file: table /results or /baselines is missing",
             path);
    assert_string_equal(err.message, want);
  }
  mb_results *r = mb_results_create(path, true, &err);
  assert_non_null(r);
  assert_true(mb_results_close(r, &err));
  raw_replace_table(path, "baselines", true);
  r = mb_results_open(path, false, &err);
  if (r) {
    mb_baseline_row *base = NULL;
    int64_t nb = -1;
    if (mb_results_read_baselines(r, &base, &nb, &err)) assert_int_equal(nb, 0);
    free(base);
    mb_results_close(r, NULL);
  }

  /* a checksum that does not fit sha256[MB_RES_SHA] */
  r = mb_results_create(path, true, &err);
  assert_non_null(r);
  mb_workload *w = make_workload("w");
  assert_non_null(w);
  char sha[MB_RES_SHA + 1];
  memset(sha, 'a', MB_RES_SHA - 1);
  sha[MB_RES_SHA - 1] = '\0';
  assert_true(mb_results_put_workload(r, "w", w, sha, &err));
  char back[MB_RES_SHA];
  mb_workload *got = mb_results_get_workload(r, "w", back, &err);
  assert_non_null(got);
  assert_string_equal(back, sha);
  mb_workload_free(got);
  memset(back, 'x', sizeof back);
  assert_true(mb_results_get_workload_sha256(r, "w", back, &err));
  assert_string_equal(back, sha);
  /* as many root attributes as a long provenance has, every one listed */
  for (int i = 0; i < 100; i++) {
    char key[16];
    snprintf(key, sizeof key, "k%03d", i);
    assert_true(mb_results_set_attr_int(r, key, i, &err));
  }
  char **keys = NULL, **vals = NULL;
  int32_t n = 0, found = 0;
  assert_true(mb_results_list_attrs(r, &keys, &vals, &n, &err));
  for (int32_t i = 0; i < n; i++) {
    int k = -1;
    if (sscanf(keys[i], "k%d", &k) == 1 && k >= 0 && k < 100) {
      char v[16];
      snprintf(v, sizeof v, "%d", k);
      found += !strcmp(vals[i], v);
    }
  }
  assert_int_equal(found, 100);
  mb_results_free_strings(keys, n);
  mb_results_free_strings(vals, n);
  assert_true(mb_results_close(r, &err));
  sha[MB_RES_SHA - 1] = 'a';
  sha[MB_RES_SHA] = '\0';
  raw_set_attr(path, "/workloads/w", "sha256", sha, 0);
  assert_true(mb_results_unseal(path, NULL));
  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  assert_false(mb_results_get_workload_sha256(r, "w", back, &err));
  snprintf(want, sizeof want, "attribute 'sha256' is missing or longer than %d bytes",
           MB_RES_SHA - 1);
  assert_non_null(strstr(err.message, want));
  /* nor is the workload rebuilt with it: cut to fit, it would read as the checksum first
   * stored, and verify would find nothing wrong */
  assert_null(mb_results_get_workload(r, "w", back, &err));
  snprintf(want, sizeof want, "/workloads/w: attribute 'sha256' is longer than %d bytes",
           MB_RES_SHA - 1);
  assert_non_null(strstr(err.message, want));
  mb_results_close(r, NULL);
  mb_workload_free(w);
  mb_test_temp_remove(path);

  /* a FIFO: not a file a run left unchecked, and said at once (libhdf5 would wait for a
   * writer); the alarm fails the test instead of hanging it */
  char *fifo = mb_test_temp_path("fifo.h5");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(20);
  assert_false(mb_results_unchecked(fifo));
  alarm(0);
  mb_test_temp_remove(fifo);
}

/* Opens /workloads/<enc> of a closed file with the raw HDF5 API (to play an older writer). */
static void raw_split_edit(const char *path, const char *group, bool delete_it, bool as_int) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  assert_true(g >= 0);
  if (delete_it) assert_true(H5Adelete(g, "split") >= 0);
  if (as_int) {
    int64_t v = 7;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, "split", H5T_NATIVE_INT64, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, &v) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
  }
  H5Gclose(g);
  assert_true(H5Fclose(f) >= 0);
  assert_true(mb_results_unseal(path, NULL)); /* an older writer left no seal */
}

static void test_workload_split(void **state) {
  (void)state;
  char *path = mb_test_temp_path("split.h5");
  mb_error err = {{0}};
  mb_workload *w = make_workload("net/a%b");
  assert_non_null(w);
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_put_workload(r, "net/a%b", w, "", &err));
  assert_true(mb_results_put_workload(r, "plain", w, "", &err));
  char split[MB_RES_SPLIT] = "junk";
  /* a copy without the attribute reads as "" */
  assert_true(mb_results_get_workload_split(r, "net/a%b", split, &err));
  assert_string_equal(split, "");
  assert_true(mb_results_set_workload_split(r, "net/a%b", "test", &err));
  assert_true(mb_results_set_workload_split(r, "plain", "train", &err));
  /* refused: a workload without a copy, a value that does not fit */
  assert_false(mb_results_set_workload_split(r, "nosuch", "test", &err));
  assert_non_null(strstr(err.message, "no stored copy of workload 'nosuch'"));
  assert_non_null(strstr(err.message, path));
  assert_false(mb_results_set_workload_split(r, "plain", "validation", &err));
  assert_non_null(strstr(err.message, "split 'validation'"));
  /* the longest that fits: MB_RES_SPLIT - 1 bytes */
  assert_false(mb_results_set_workload_split(r, "plain", "holdouts", &err));
  assert_non_null(strstr(err.message, "longer than 7 bytes"));
  assert_true(mb_results_set_workload_split(r, "plain", "holdout", &err));
  assert_true(mb_results_get_workload_split(r, "plain", split, &err));
  assert_string_equal(split, "holdout");
  assert_true(mb_results_set_workload_split(r, "plain", "train", &err));
  assert_false(mb_results_get_workload_split(r, "nosuch", split, &err));
  assert_non_null(strstr(err.message, "'nosuch'"));
  assert_true(mb_results_close(r, &err));

  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_get_workload_split(r, "net/a%b", split, &err));
  assert_string_equal(split, "test");
  assert_true(mb_results_get_workload_split(r, "plain", split, &err));
  assert_string_equal(split, "train");
  /* the tables are untouched: the copy still rebuilds */
  mb_workload *back = mb_results_get_workload(r, "net/a%b", NULL, &err);
  assert_non_null(back);
  mb_workload_free(back);
  mb_results_close(r, NULL);

  /* replacing a value keeps one attribute */
  r = mb_results_open(path, true, &err);
  assert_true(mb_results_set_workload_split(r, "plain", "test", &err));
  assert_true(mb_results_get_workload_split(r, "plain", split, &err));
  assert_string_equal(split, "test");
  assert_true(mb_results_close(r, &err));

  /* a file from before splits were stored: no attribute, reads as "" */
  raw_split_edit(path, "/workloads/net%2Fa%25b", true, false);
  r = mb_results_open(path, false, &err);
  assert_true(mb_results_get_workload_split(r, "net/a%b", split, &err));
  assert_string_equal(split, "");
  assert_true(mb_results_get_workload_split(r, "plain", split, &err));
  assert_string_equal(split, "test");
  mb_results_close(r, NULL);

  /* a damaged attribute (not a string) is an error naming the file and the group */
  raw_split_edit(path, "/workloads/plain", true, true);
  r = mb_results_open(path, false, &err);
  assert_false(mb_results_get_workload_split(r, "plain", split, &err));
  assert_non_null(strstr(err.message, path));
  assert_non_null(strstr(err.message, "/workloads/plain: attribute 'split'"));
  mb_results_close(r, NULL);
  mb_workload_free(w);
  mb_test_temp_remove(path);
}

/* A curve's heuristic reference: stored only when known (NaN: no attribute), read back as
 * NaN from a curve without it (files written before it was stored), and a damaged attribute
 * is an error naming the file, the curve and the attribute. */
static void raw_curve_edit(const char *path, const char *curve, bool as_string) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t o = H5Oopen(f, curve, H5P_DEFAULT);
  assert_true(o >= 0);
  assert_true(H5Adelete(o, "heuristic_return") >= 0);
  if (as_string) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 4);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(o, "heuristic_return", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0 && H5Awrite(a, t, "0.5") >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
  }
  H5Oclose(o);
  assert_true(H5Fclose(f) >= 0);
  assert_true(mb_results_unseal(path, NULL)); /* an older writer left no seal */
}

static void test_curve_heuristic(void **state) {
  (void)state;
  char *path = mb_test_temp_path("curve_ref.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  double steps[2] = {0, 50}, rets[2] = {0.125, 0.25};
  mb_result_row rows[4] = {
      make_row(0, "mallocmuzero", 0, 650000), make_row(1, "mallocmuzero", 1, 650000),
      make_row(2, "mallocmuzero", 2, 650000), make_row(3, "mallocmuzero", 3, 650000)};
  assert_true(mb_results_append(r, &rows[0], NULL, steps, rets, 2, 1.0 / 3.0, &err));
  assert_true(mb_results_append(r, &rows[1], NULL, steps, rets, 2, NAN, &err));
  assert_true(mb_results_append(r, &rows[2], NULL, steps, rets, 2, 0.5, &err));
  /* curve_len 0: no curve at all, not an empty one */
  assert_true(mb_results_append(r, &rows[3], NULL, steps, rets, 0, 0.5, &err));
  assert_true(mb_results_close(r, &err));
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_int_equal(H5Lexists(f, "/curves/net%2Fa%25b/tpu-v4i/mallocmuzero", H5P_DEFAULT), 1);
  assert_int_equal(H5Lexists(f, "/curves/net%2Fa%25b/tpu-v4i/mallocmuzero/3", H5P_DEFAULT), 0);
  assert_int_equal(H5Aexists_by_name(f, "/curves/net%2Fa%25b/tpu-v4i/mallocmuzero/0",
                                     "heuristic_return", H5P_DEFAULT),
                   1);
  assert_int_equal(H5Aexists_by_name(f, "/curves/net%2Fa%25b/tpu-v4i/mallocmuzero/1",
                                     "heuristic_return", H5P_DEFAULT),
                   0);
  H5Fclose(f);
  r = mb_results_open(path, false, &err);
  double h = 0;
  assert_true(mb_results_get_curve_heuristic(r, &rows[0], &h, &err));
  assert_true(h == 1.0 / 3.0);
  assert_true(mb_results_get_curve_heuristic(r, &rows[1], &h, &err));
  assert_true(isnan(h));
  mb_results_close(r, NULL);

  /* an older file: the curve without the attribute reads as NaN, the curve itself unchanged */
  raw_curve_edit(path, "/curves/net%2Fa%25b/tpu-v4i/mallocmuzero/0", false);
  r = mb_results_open(path, false, &err);
  h = 0;
  assert_true(mb_results_get_curve_heuristic(r, &rows[0], &h, &err));
  assert_true(isnan(h));
  double *s2 = NULL, *r2 = NULL;
  int32_t len = 0;
  assert_true(mb_results_get_curve(r, &rows[0], &s2, &r2, &len, &err));
  assert_int_equal(len, 2);
  assert_true(s2[1] == 50 && r2[1] == 0.25);
  free(s2);
  free(r2);
  assert_true(mb_results_get_curve_heuristic(r, &rows[2], &h, &err));
  assert_true(h == 0.5);
  mb_results_close(r, NULL);

  /* a damaged attribute (a string) */
  raw_curve_edit(path, "/curves/net%2Fa%25b/tpu-v4i/mallocmuzero/2", true);
  r = mb_results_open(path, false, &err);
  assert_false(mb_results_get_curve_heuristic(r, &rows[2], &h, &err));
  assert_true(isnan(h));
  assert_non_null(strstr(err.message, path));
  assert_non_null(strstr(err.message, "/curves/net%2Fa%25b/tpu-v4i/mallocmuzero/2"));
  assert_non_null(strstr(err.message, "'heuristic_return'"));
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* The result matrix gives each case its workload's split ("" without one) and summarises one
 * split's cases alone. */
static void test_matrix_split(void **state) {
  (void)state;
  char *path = mb_test_temp_path("msplit.h5");
  mb_error err = {{0}};
  mb_workload *w = make_workload("w");
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  const char *names[3] = {"tr", "te", "none"};
  const char *splits[3] = {"train", "test", NULL};
  const int64_t t_solver[3] = {400000, 1000000, 500000}; /* heuristic: 800000 */
  for (int i = 0; i < 3; i++) {
    assert_true(mb_results_put_workload(r, names[i], w, "", &err));
    if (splits[i]) assert_true(mb_results_set_workload_split(r, names[i], splits[i], &err));
    mb_result_row row = make_row(i, "greedy", 0, t_solver[i]);
    snprintf(row.workload, sizeof row.workload, "%s", names[i]);
    mb_result_row_derive(&row);
    assert_true(mb_results_append(r, &row, NULL, NULL, NULL, 0, NAN, &err));
  }
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  assert_non_null(m);
  assert_int_equal(m->n_cases, 3);
  for (int i = 0; i < 3; i++) assert_string_equal(m->cases[i].split, splits[i] ? splits[i] : "");
  assert_int_equal(mb_result_matrix_count_split(m, "train"), 1);
  assert_int_equal(mb_result_matrix_count_split(m, "test"), 1);
  assert_int_equal(mb_result_matrix_count_split(m, ""), 1);
  mb_solver_summary all, tr, te;
  mb_result_matrix_summarise(m, &all);
  mb_result_matrix_summarise_split(m, "train", &tr);
  mb_result_matrix_summarise_split(m, "test", &te);
  assert_int_equal(all.n_cases, 3);
  assert_int_equal(tr.n_cases, 1);
  assert_int_equal(te.n_cases, 1);
  assert_true(fabs(tr.geomean_speedup - 2.0) < 1e-12);
  assert_true(fabs(te.geomean_speedup - 0.8) < 1e-12);
  assert_true(fabs(all.geomean_speedup - cbrt(2.0 * 0.8 * 1.6)) < 1e-12);
  assert_int_equal(tr.wins, 1);
  assert_int_equal(te.losses, 1);
  assert_true(te.total_wall_s == 0.125 * 2); /* the test case's row alone (task 1) */
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_workload_free(w);
  mb_test_temp_remove(path);
}

/* Appends one greedy row of workload `wl` with the given seed, status, valid flag and times
 * (speedups derived from them). */
static void append_case_row(mb_results *r, int64_t task, const char *wl, int64_t seed,
                            const char *status, int8_t valid, int64_t t_heuristic,
                            int64_t t_solver) {
  mb_error err = {{0}};
  mb_result_row row = make_row(task, "greedy", seed, t_solver);
  snprintf(row.workload, sizeof row.workload, "%s", wl);
  snprintf(row.status, sizeof row.status, "%s", status);
  row.valid = valid;
  row.t_heuristic_ps = t_heuristic;
  mb_result_row_derive(&row);
  assert_true(mb_results_append(r, &row, NULL, NULL, NULL, 0, NAN, &err));
}

/* A cell is present only when every seed's row is "ok" and valid: a case where one seed
 * failed is left out of the solver's summary (a geomean over the seeds that succeeded would
 * inflate the speedup), and an "ok" row the validator rejected counts as failed. */
static void test_matrix_failed_seed(void **state) {
  (void)state;
  char *path = mb_test_temp_path("mfailed.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  append_case_row(r, 0, "a", 0, "ok", 1, 800000, 400000); /* speedup 2 ... */
  append_case_row(r, 1, "a", 1, "error", 0, 800000, -1);  /* ... and a failed seed */
  append_case_row(r, 2, "b", 0, "ok", 1, 800000, 500000); /* speedup 1.6 */
  append_case_row(r, 3, "c", 0, "ok", 0, 800000, 200000); /* ok but not valid */
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  assert_non_null(m);
  assert_int_equal(m->n_cases, 3);
  assert_int_equal(m->n_solvers, 1);
  const mb_matrix_cell *a = mb_matrix_cell_at(m, 0, 0);
  assert_int_equal(a->n_seeds, 1);
  assert_int_equal(a->n_failed, 1);
  assert_false(a->present);
  assert_true(mb_matrix_cell_at(m, 1, 0)->present);
  const mb_matrix_cell *c = mb_matrix_cell_at(m, 2, 0);
  assert_int_equal(c->n_failed, 1);
  assert_int_equal(c->n_seeds, 0);
  assert_false(c->present);
  mb_solver_summary sum;
  mb_result_matrix_summarise(m, &sum);
  assert_int_equal(sum.n_cases, 1); /* "b" alone */
  assert_int_equal(sum.n_failed, 2);
  assert_true(fabs(sum.geomean_speedup - 1.6) < 1e-12);
  assert_int_equal(sum.wins, 1);
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* A case whose heuristic baseline failed (t_heuristic -1) has no speedup: its cell is not
 * present, so the summary neither counts it as a loss nor takes a NaN into the geomean, and the
 * caveats say how many such cases there are. */
static void test_matrix_without_baseline(void **state) {
  (void)state;
  char *path = mb_test_temp_path("mnobase.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  append_case_row(r, 0, "a", 0, "ok", 1, 800000, 400000); /* speedup 2 */
  append_case_row(r, 1, "b", 0, "ok", 1, -1, 500000);     /* the baseline failed */
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  assert_non_null(m);
  assert_int_equal(m->n_cases, 2);
  const mb_matrix_cell *b = mb_matrix_cell_at(m, 1, 0);
  assert_int_equal(b->n_seeds, 1);
  assert_int_equal(b->n_failed, 0);
  assert_false(b->present);
  mb_solver_summary sum;
  mb_result_matrix_summarise(m, &sum);
  assert_int_equal(sum.n_cases, 1);
  assert_int_equal(sum.losses, 0);
  assert_int_equal(sum.wins, 1);
  assert_true(fabs(sum.geomean_speedup - 2.0) < 1e-12);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  assert_non_null(out);
  mb_summary_print_caveats(out, m, &sum);
  fclose(out);
  assert_non_null(strstr(text, "In 1 of these 2 cases the heuristic baseline failed"));
  free(text);
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* Wins, ties and losses against the heuristic: a tie is a speedup within 1e-9 of 1, so a
 * speedup of 1.0005 is a win and one of exactly 1 a tie. */
static void test_matrix_tie_tolerance(void **state) {
  (void)state;
  char *path = mb_test_temp_path("mties.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  append_case_row(r, 0, "x", 0, "ok", 1, 1000500, 1000000); /* speedup 1.0005 */
  mb_result_matrix *m = mb_result_matrix_load(r, &err);
  assert_non_null(m);
  mb_solver_summary sum;
  mb_result_matrix_summarise(m, &sum);
  assert_int_equal(sum.n_cases, 1);
  assert_int_equal(sum.wins, 1);
  assert_int_equal(sum.ties, 0);
  assert_int_equal(sum.losses, 0);
  mb_result_matrix_free(m);
  append_case_row(r, 1, "y", 0, "ok", 1, 800000, 800000); /* speedup exactly 1 */
  m = mb_result_matrix_load(r, &err);
  assert_non_null(m);
  mb_result_matrix_summarise(m, &sum);
  assert_int_equal(sum.n_cases, 2);
  assert_int_equal(sum.wins, 1);
  assert_int_equal(sum.ties, 1);
  assert_int_equal(sum.losses, 0);
  mb_result_matrix_free(m);
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* A row that is not "ok" has no derived numbers, whatever its times say: an "invalid" row
 * with a solver time and valid baselines gets NaN speedups, gap and solver seconds. */
static void test_derive_not_ok(void **state) {
  (void)state;
  mb_result_row row = make_row(0, "greedy", 0, 5);
  /* "ok": derived, each from its own times */
  assert_true(row.t_solver_s == 5 * 1e-12);
  assert_true(row.speedup_heuristic == 800000.0 / 5);
  assert_true(row.speedup_slow == 1000000.0 / 5);
  assert_true(row.gap_to_bound == (5.0 - 600000) / 600000);
  /* a missing time leaves its number NaN, the others stay */
  row.t_heuristic_ps = 0;
  row.t_slow_ps = 0;
  row.t_bound_ps = 0;
  mb_result_row_derive(&row);
  assert_true(isnan(row.speedup_heuristic) && isnan(row.speedup_slow) && isnan(row.gap_to_bound));
  assert_true(row.t_solver_s == 5 * 1e-12);
  row = make_row(0, "greedy", 0, 5);
  snprintf(row.status, sizeof row.status, "invalid");
  row.valid = 0;
  row.t_solver_ps = 5;
  mb_result_row_derive(&row);
  assert_true(isnan(row.speedup_heuristic));
  assert_true(isnan(row.speedup_slow));
  assert_true(isnan(row.gap_to_bound));
  assert_true(isnan(row.t_solver_s));
}

/* Reads one int64 field of every row of /results by its HDF5 name, with a memory type that
 * names only that field (as h5py or h5dump would see the column). */
static void raw_read_column(const char *path, const char *field, int64_t *out, int64_t n) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t d = H5Dopen2(f, "/results", H5P_DEFAULT);
  assert_true(d >= 0);
  hid_t sp = H5Dget_space(d);
  hsize_t dims[1] = {0};
  assert_int_equal(H5Sget_simple_extent_ndims(sp), 1);
  H5Sget_simple_extent_dims(sp, dims, NULL);
  assert_int_equal((int64_t)dims[0], n);
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(int64_t));
  assert_true(H5Tinsert(t, field, 0, H5T_NATIVE_INT64) >= 0);
  assert_true(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
  H5Tclose(t);
  H5Sclose(sp);
  H5Dclose(d);
  assert_true(H5Fclose(f) >= 0);
}

/* The columns of /results carry the names of their fields: t_bound_ps and t_heuristic_ps read
 * by name with the raw HDF5 API are the values written through mb_results_append (a round
 * trip through the store alone would not see two names swapped). */
static void test_result_field_names(void **state) {
  (void)state;
  char *path = mb_test_temp_path("fields.h5");
  mb_error err = {{0}};
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  mb_result_row rows[2] = {make_row(0, "greedy", 0, 700000), make_row(1, "greedy", 1, 650000)};
  rows[1].t_heuristic_ps = 900001;
  rows[1].t_bound_ps = 500003;
  mb_result_row_derive(&rows[1]);
  for (int i = 0; i < 2; i++)
    assert_true(mb_results_append(r, &rows[i], NULL, NULL, NULL, 0, NAN, &err));
  assert_true(mb_results_close(r, &err));
  int64_t col[2] = {0, 0};
  raw_read_column(path, "t_bound_ps", col, 2);
  assert_int_equal(col[0], 600000);
  assert_int_equal(col[1], 500003);
  raw_read_column(path, "t_heuristic_ps", col, 2);
  assert_int_equal(col[0], 800000);
  assert_int_equal(col[1], 900001);
  raw_read_column(path, "t_solver_ps", col, 2);
  assert_int_equal(col[0], 700000);
  assert_int_equal(col[1], 650000);
  mb_test_temp_remove(path);
}

/* Everything the readers can get from a results file, as text; NULL with err set when a read
 * fails. */
static char *dump_results(const char *path, mb_error *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  mb_results *r = mb_results_open(path, false, err);
  mb_result_row *rows = NULL;
  mb_baseline_row *base = NULL;
  char **keys = NULL, **vals = NULL, **wk = NULL;
  int64_t n = 0, nb = 0;
  int32_t na = 0, nw = 0;
  bool ok = r && mb_results_read_rows(r, &rows, &n, err) &&
            mb_results_read_baselines(r, &base, &nb, err) &&
            mb_results_list_attrs(r, &keys, &vals, &na, err) &&
            mb_results_workload_keys(r, &wk, &nw, err);
  for (int32_t i = 0; ok && i < na; i++) fprintf(out, "attr %s=%s\n", keys[i], vals[i]);
  for (int64_t i = 0; ok && i < n; i++) {
    const mb_result_row *x = &rows[i];
    fprintf(
        out,
        "row %lld %s %s %s %lld %s %d %lld %d %d %lld %lld %lld %lld %lld %a %a %a %a %lld %d %s\n",
        (long long)x->task, x->workload, x->hardware, x->solver, (long long)x->seed, x->status,
        x->valid, (long long)x->capacity, x->n_buffers, x->n_fast, (long long)x->fast_bytes,
        (long long)x->t_slow_ps, (long long)x->t_heuristic_ps, (long long)x->t_solver_ps,
        (long long)x->t_bound_ps, x->speedup_heuristic, x->speedup_slow, x->gap_to_bound, x->wall_s,
        (long long)x->iterations, x->budget_hit, x->note);
    bool absent = false;
    mb_error e2 = {{0}};
    mb_assignment *a = mb_results_get_assignment(r, x, &absent, &e2);
    if (!a && !absent) ok = mb_fail(err, "%s", e2.message);
    for (int32_t k = 0; a && k < a->n_buffers; k++) fprintf(out, " %lld", (long long)a->offset[k]);
    mb_assignment_free(a);
    double *s = NULL, *v = NULL, h = 0;
    int32_t len_c = 0;
    ok = ok && mb_results_get_curve(r, x, &s, &v, &len_c, err) &&
         mb_results_get_curve_heuristic(r, x, &h, err);
    for (int32_t k = 0; ok && k < len_c; k++) fprintf(out, " (%a %a)", s[k], v[k]);
    fprintf(out, " ref %a\n", h);
    free(s);
    free(v);
  }
  for (int64_t i = 0; ok && i < nb; i++) {
    const mb_baseline_row *x = &base[i];
    fprintf(out, "baseline %lld %s %s %s %lld %lld %a %a %a %a %lld %lld %lld %s %s %a %a:",
            (long long)x->task, x->workload, x->hardware, x->profile_sha256, (long long)x->capacity,
            (long long)x->alignment, x->slow_bandwidth, x->fast_bandwidth, x->peak_flops,
            x->op_overhead_s, (long long)x->t_slow_ps, (long long)x->t_heuristic_ps,
            (long long)x->t_bound_ps, x->bound_status, x->bound_note, x->heuristic_wall_s,
            x->bound_wall_s);
    bool absent = false;
    mb_assignment *a = mb_results_get_baseline_assignment(r, x, &absent, err);
    ok = a != NULL;
    for (int32_t k = 0; a && k < a->n_buffers; k++) fprintf(out, " %lld", (long long)a->offset[k]);
    fprintf(out, "\n");
    mb_assignment_free(a);
  }
  for (int32_t i = 0; ok && i < nw; i++) {
    char sha[MB_RES_SHA], split[MB_RES_SPLIT], text_sha[65];
    mb_workload *w = mb_results_get_workload(r, wk[i], sha, err);
    ok = w && mb_results_get_workload_split(r, wk[i], split, err) &&
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

/* A results file with something in every kind of place: provenance, a workload copy and its
 * split, a baseline and its assignment, rows with and without assignments and curves. */
static void write_full_file(const char *path) {
  mb_error err = {{0}};
  mb_workload *w = make_workload("net/a%b");
  char sha[65];
  assert_true(mb_workload_sha256_hex(w, sha));
  mb_results *r = mb_results_create(path, true, &err);
  assert_non_null(r);
  assert_true(mb_results_set_attr_string(r, "command_line", "mallocbench run --seeds 3", &err));
  assert_true(mb_results_set_attr_double(r, "budget", 0.25, &err));
  assert_true(mb_results_put_workload(r, "net/a%b", w, sha, &err));
  assert_true(mb_results_set_workload_split(r, "net/a%b", "test", &err));
  mb_baseline_row b;
  memset(&b, 0, sizeof b);
  snprintf(b.workload, sizeof b.workload, "net/a%%b");
  snprintf(b.hardware, sizeof b.hardware, "tpu-v4i");
  b.capacity = 1 << 20;
  b.t_heuristic_ps = 800000;
  snprintf(b.bound_status, sizeof b.bound_status, "ok");
  mb_assignment *a = mb_assignment_new(3);
  a->offset[0] = 0;
  a->offset[2] = 4096;
  assert_true(mb_results_append_baseline(r, &b, a, &err));
  double steps[3] = {0, 100, 200}, rets[3] = {0.1, 0.25, 0.5};
  for (int i = 0; i < 4; i++) {
    mb_result_row row = make_row(i, i < 2 ? "greedy" : "mallocmuzero", i, 700000 + i);
    assert_true(mb_results_append(r, &row, i == 3 ? NULL : a, i >= 2 ? steps : NULL,
                                  i >= 2 ? rets : NULL, i >= 2 ? 3 : 0, 0.375, &err));
  }
  assert_true(mb_results_close(r, &err));
  mb_assignment_free(a);
  mb_workload_free(w);
}

/* One byte changed anywhere in a sealed results file (the seal block, the superblock, object
 * headers, tables, the last byte, and 100 seeded places): every read either fails with an
 * error naming the file or gives back exactly what was written. Before seals, 2 of 40 such
 * files crashed `verify` or `export` inside libhdf5 and some loaded silently changed. */
static void test_damaged_byte_never_loads_silently(void **state) {
  (void)state;
  char *path = mb_test_temp_path("whole.h5");
  write_full_file(path);
  mb_error err = {{0}};
  char *want = dump_results(path, &err);
  if (!want) fail_msg("%s", err.message);
  size_t size = 0;
  unsigned char *bytes = (unsigned char *)mb_read_file(path, &size);
  assert_non_null(bytes);
  char bad[1200];
  snprintf(bad, sizeof bad, "%s.bad", path);
  size_t fixed[] = {0,   5,   18,  19,  25,  40,  60,  200,      431,     432,
                    447, 500, 511, 512, 513, 520, 600, size / 2, size - 1};
  enum { SEEDED = 100 };
  size_t n_fixed = sizeof fixed / sizeof *fixed;
  mb_rng rng;
  mb_rng_seed(&rng, 20261129);
  int refused = 0, intact = 0;
  for (size_t i = 0; i < n_fixed + SEEDED; i++) {
    size_t at = i < n_fixed ? fixed[i] : (size_t)mb_rng_below(&rng, size);
    unsigned char flip = (unsigned char)(1 + mb_rng_below(&rng, 255));
    bytes[at] ^= flip;
    mb_test_write_bytes(bad, bytes, size);
    bytes[at] ^= flip;
    mb_error e = {{0}};
    char *got = dump_results(bad, &e);
    if (!got) {
      if (!strstr(e.message, bad)) fail_msg("byte %zu: error without the file: %s", at, e.message);
      refused++;
    } else {
      if (strcmp(got, want)) fail_msg("byte %zu ^ %d: read back changed, no error", at, flip);
      intact++;
      free(got);
    }
  }
  /* only the seal block's first 17 bytes ("mallocbench-seal ") may be hit harmlessly: the file
   * then reads as one without a seal, with its contents intact */
  printf("one-byte damage: %d refused, %d read back intact\n", refused, intact);
  assert_true(intact <= 4);
  /* a sealed file cut short or extended is refused too, naming both sizes */
  mb_test_write_bytes(bad, bytes, size - 100);
  assert_null(dump_results(bad, &err));
  assert_non_null(strstr(err.message, "the file is damaged"));
  free(bytes);
  free(want);
  mb_test_temp_remove(path);
}

/* The root attributes as mb_results_open_provenance reads them, in dump_results' lines. */
static char *dump_provenance(const char *path, mb_error *err) {
  mb_results *r = mb_results_open_provenance(path, err);
  char **keys = NULL, **vals = NULL;
  int32_t n = 0;
  if (!r || !mb_results_list_attrs(r, &keys, &vals, &n, err)) {
    mb_results_close(r, NULL);
    return NULL;
  }
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  for (int32_t i = 0; i < n; i++) fprintf(out, "attr %s=%s\n", keys[i], vals[i]);
  fclose(out);
  mb_results_free_strings(keys, n);
  mb_results_free_strings(vals, n);
  mb_results_close(r, NULL);
  return text;
}

/* mb_results_open_provenance gives the root attributes that mb_results_open gives, sealed or
 * not; an unsealed file's come through a copy that is gone once the handle is open, and the
 * handle names the file itself. Files that do not open give mb_results_open's error. */
static void test_provenance_copy(void **state) {
  (void)state;
  char *path = mb_test_temp_path("provenance.h5");
  write_full_file(path);
  mb_error err = {{0}};
  char *whole = dump_results(path, &err);
  assert_non_null(whole);
  char *sealed = dump_provenance(path, &err);
  assert_non_null(sealed);
  assert_true(strlen(sealed) > 100);
  /* dump_results writes the attributes first, then the rows */
  assert_memory_equal(whole, sealed, strlen(sealed));
  assert_true(strncmp(whole + strlen(sealed), "attr ", 5) != 0);
  assert_true(mb_results_unseal(path, &err));
  assert_true(mb_results_unchecked(path));
  size_t size_before = 0, size_after = 0;
  char *before = mb_read_file(path, &size_before);
  assert_non_null(before);
  /* a copy left by a resume killed while making it is replaced */
  char copy[1200];
  snprintf(copy, sizeof copy, "%s.provenance", path);
  mb_test_write_bytes(copy, (const unsigned char *)"left over\n", 10);
  char *unsealed = dump_provenance(path, &err);
  assert_non_null(unsealed);
  assert_string_equal(unsealed, sealed);
  assert_int_equal(access(copy, F_OK), -1);
  char *after = mb_read_file(path, &size_after);
  assert_non_null(after);
  assert_int_equal(size_after, size_before); /* the file itself is not written */
  assert_memory_equal(after, before, size_before);
  free(before);
  free(after);
  mb_results *r = mb_results_open_provenance(path, &err);
  assert_non_null(r);
  assert_string_equal(mb_results_path(r), path);
  mb_result_row *rows = NULL;
  int64_t n = -1;
  assert_true(mb_results_read_rows(r, &rows, &n, &err));
  assert_int_equal(n, 0); /* the copy holds attributes only */
  free(rows);
  assert_false(mb_results_has_attr(r, "no_such_attribute"));
  assert_null(mb_results_get_attr_string(r, "no_such_attribute", &err));
  assert_non_null(strstr(err.message, path));
  assert_null(strstr(err.message, ".provenance"));
  mb_results_close(r, NULL);
  /* still unsealed once the handle is closed */
  assert_true(mb_results_unchecked(path));
  free(whole);
  free(sealed);
  free(unsealed);

  /* files that do not open: the same error as mb_results_open's, from the child */
  char *txt = mb_test_write_temp(".h5", "this is not hdf5\n");
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(truncate(path, st.st_size / 2), 0);
  const char *bad[] = {txt, path, "/nonexistent-dir/x.h5"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    mb_error e1 = {{0}}, e2 = {{0}};
    assert_null(mb_results_open(bad[i], false, &e1));
    assert_null(mb_results_open_provenance(bad[i], &e2));
    assert_string_equal(e2.message, e1.message);
    assert_non_null(strstr(e2.message, bad[i]));
  }
  mb_test_temp_remove(txt);
  mb_test_temp_remove(path);
}

/* How one read of a damaged unsealed copy ended, as the exit code of the child that read it. */
enum { READ_OK = 10, REFUSED_NAMED, REFUSED_CHILD_CRASHED, REFUSED_UNNAMED };

/* One byte changed in the root group's attributes of a file without a seal (a killed run's, or
 * one written before seals), which libhdf5 parses unchecked: every read gives data or an error
 * naming the file, never a crash. Each copy is read in a child of the test, so that a crash is
 * counted instead of ending the test. Without mb_results_open's reading in a child, 2 of these
 * 100 copies crashed dump_results inside libhdf5 (HDF5 1.10.8); the test requires at least one
 * such copy, so that it fails rather than passes untested if the layout or the library changes.
 * Some of libhdf5's crashes depend on memory it reads without having written it, and so on what
 * the process did before: with the test's TMPDIR at a path of another length (the file's layout
 * changes with it), one copy crashed dump_results though the child had read it whole, until the
 * child emptied libhdf5's free lists and its malloc filled new blocks with garbage
 * (read_everything_isolated in results.c, isolated.h). Each copy is also read as `run --resume`
 * reads it, its root attributes alone through mb_results_open_provenance, whose child must crash
 * on at least one copy too. */
static void test_unsealed_damage_never_crashes(void **state) {
  (void)state;
  char *path = mb_test_temp_path("unsealed.h5");
  write_full_file(path);
  assert_true(mb_results_unseal(path, NULL));
  size_t size = 0;
  unsigned char *bytes = (unsigned char *)mb_read_file(path, &size);
  assert_non_null(bytes);
  /* the root's attribute messages start near the first one's name */
  const char *first_attr = "mallocbench_file";
  size_t name_len = strlen(first_attr), from = 0;
  while (from + name_len <= size && memcmp(bytes + from, first_attr, name_len)) from++;
  assert_true(from + name_len <= size);
  size_t span = size - from < 2500 ? size - from : 2500;
  char bad[1200];
  snprintf(bad, sizeof bad, "%s.bad", path);
  mb_rng rng;
  mb_rng_seed(&rng, 20261129);
  /* per reader: dump_results (everything), dump_provenance (the root attributes, for resume) */
  int count[2][REFUSED_UNNAMED + 1] = {{0}};
  char copy[1300];
  snprintf(copy, sizeof copy, "%s.provenance", bad);
  enum { COPIES = 100 };
  for (int i = 0; i < COPIES; i++) {
    size_t at = from + (size_t)mb_rng_below(&rng, span);
    unsigned char flip = (unsigned char)(1 + mb_rng_below(&rng, 255));
    bytes[at] ^= flip;
    mb_test_write_bytes(bad, bytes, size);
    bytes[at] ^= flip;
    for (int reader = 0; reader < 2; reader++) {
      fflush(NULL);
      pid_t pid = fork();
      assert_true(pid >= 0);
      if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* cmocka's handler would go on running the tests here */
        signal(SIGBUS, SIG_DFL);
        mb_error e = {{0}};
        char *got = reader == 0 ? dump_results(bad, &e) : dump_provenance(bad, &e);
        _exit(got                                       ? READ_OK
              : strstr(e.message, "in a child process") ? REFUSED_CHILD_CRASHED
              : strstr(e.message, bad)                  ? REFUSED_NAMED
                                                        : REFUSED_UNNAMED);
      }
      int status = 0;
      assert_true(waitpid(pid, &status, 0) == pid);
      if (!WIFEXITED(status) || WEXITSTATUS(status) < READ_OK)
        fail_msg("byte %zu ^ 0x%02x, reader %d: the read crashed (wait status %d)", at, flip,
                 reader, status);
      if (WEXITSTATUS(status) == REFUSED_UNNAMED)
        fail_msg("byte %zu ^ 0x%02x, reader %d: an error without the file's name", at, flip,
                 reader);
      if (access(copy, F_OK) == 0) fail_msg("byte %zu ^ 0x%02x: %s left behind", at, flip, copy);
      count[reader][WEXITSTATUS(status)]++;
    }
  }
  for (int reader = 0; reader < 2; reader++) {
    printf(
        "unsealed, one byte of the root's attributes changed, %s: %d read, %d refused, %d "
        "refused after libhdf5 crashed in the child\n",
        reader == 0 ? "everything" : "the provenance", count[reader][READ_OK],
        count[reader][REFUSED_NAMED], count[reader][REFUSED_CHILD_CRASHED]);
    if (count[reader][REFUSED_CHILD_CRASHED] < 1)
      fail_msg(
          "no damaged copy crashed libhdf5, so the child's guard went untested (another HDF5 "
          "version or file layout? choose other bytes)");
  }
  free(bytes);
  mb_test_temp_remove(path);
}

/* A baseline row's hardware: its name and every number of the cost model, nothing else. */
static void test_baseline_hardware(void **state) {
  (void)state;
  mb_baseline_row b;
  memset(&b, 0x5a, sizeof b); /* fields the profile does not take stay out of it */
  snprintf(b.hardware, sizeof b.hardware, "edge-npu");
  b.capacity = 4 << 20;
  b.alignment = 64;
  b.slow_bandwidth = 3e10;
  b.fast_bandwidth = 2e11;
  b.peak_flops = 1e13;
  b.op_overhead_s = 2e-6;
  mb_hardware hw = mb_baseline_hardware(&b);
  assert_string_equal(hw.name, "edge-npu");
  assert_int_equal(hw.capacity, 4 << 20);
  assert_int_equal(hw.alignment, 64);
  assert_true(hw.slow_bandwidth == 3e10 && hw.fast_bandwidth == 2e11);
  assert_true(hw.peak_flops == 1e13 && hw.op_overhead_s == 2e-6);
}

/* mb_results_read_all reads every part and reports the first one that fails, after reading
 * the rest. */
static void test_read_all(void **state) {
  (void)state;
  char *path = mb_test_temp_path("read_all.h5");
  write_full_file(path);
  mb_error err = {{0}};
  mb_results *r = mb_results_open(path, false, &err);
  assert_non_null(r);
  assert_true(mb_results_read_all(r, &err));
  mb_results_close(r, NULL);
  /* a stored workload copy without its ops table, as another program might leave it */
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  assert_true(H5Ldelete(f, "/workloads/net%2Fa%25b/ops", H5P_DEFAULT) >= 0);
  assert_true(H5Fclose(f) >= 0);
  assert_true(mb_results_unseal(path, NULL));
  r = mb_results_open(path, false, &err);
  assert_non_null(r);
  assert_false(mb_results_read_all(r, &err));
  assert_non_null(strstr(err.message, path));
  assert_non_null(strstr(err.message, "table /workloads/net%2Fa%25b/ops is missing"));
  mb_results_close(r, NULL);
  mb_test_temp_remove(path);
}

/* The seal follows the file: open while a writer has it, sealed when closed, re-sealed after a
 * writable reopen; a file whose block says open (a killed writer) or that has none (an older
 * file, or mb_results_unseal after an edit with another program) is read as HDF5 alone. */
static void test_seal_states(void **state) {
  (void)state;
  char *path = mb_test_temp_path("seal.h5");
  mb_error err = {{0}};
  mb_seal_state st;
  char kind[MB_SEAL_KIND_MAX];
  mb_results *r = mb_results_create(path, false, &err);
  assert_non_null(r);
  append_rows(r, 0, 2);
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_OPEN);
  assert_string_equal(kind, "results");
  assert_true(mb_results_close(r, &err));
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_OK);
  /* reopened for writing: open until closed, then sealed with the new contents */
  r = mb_results_open(path, true, &err);
  assert_non_null(r);
  assert_true(mb_seal_check(path, &st, NULL, &err));
  assert_int_equal(st, MB_SEAL_OPEN);
  append_rows(r, 2, 3);
  assert_true(mb_results_close(r, &err));
  assert_true(mb_seal_check(path, &st, NULL, &err));
  assert_int_equal(st, MB_SEAL_OK);
  char *want = dump_results(path, &err);
  assert_non_null(want);
  /* as a killed writer leaves it: not checked, read as HDF5 */
  assert_true(mb_seal_mark_open(path, "results", &err));
  char *got = dump_results(path, &err);
  assert_non_null(got);
  assert_string_equal(got, want);
  free(got);
  /* no seal at all: the same, and a writable reopen does not add one */
  assert_true(mb_results_unseal(path, &err));
  assert_true(mb_seal_check(path, &st, kind, &err));
  assert_int_equal(st, MB_SEAL_NONE);
  assert_string_equal(kind, "");
  r = mb_results_open(path, true, &err);
  assert_non_null(r);
  assert_true(mb_results_close(r, &err));
  assert_true(mb_seal_check(path, &st, NULL, &err));
  assert_int_equal(st, MB_SEAL_NONE);
  got = dump_results(path, &err);
  assert_non_null(got);
  assert_string_equal(got, want);
  free(got);
  assert_true(mb_results_unseal(path, &err)); /* nothing to remove: a no-op */
  /* a file without the block is never written into */
  char *junk = mb_test_write_temp(".h5", "0123456789");
  assert_false(mb_seal_close(junk, "results", &err));
  assert_non_null(strstr(err.message, "not sealed"));
  mb_test_temp_remove(junk);
  free(want);
  mb_test_temp_remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_append_after_reopen_and_truncate),
      cmocka_unit_test(test_torn_tail),
      cmocka_unit_test(test_provenance),
      cmocka_unit_test(test_attr_errors),
      cmocka_unit_test(test_refuses_and_reports),
      cmocka_unit_test(test_truncated_file),
      cmocka_unit_test(test_busy_file),
      cmocka_unit_test(test_name_encoding),
      cmocka_unit_test(test_long_names),
      cmocka_unit_test(test_is_foreign),
      cmocka_unit_test(test_damaged_tables),
      cmocka_unit_test(test_not_results_files),
      cmocka_unit_test(test_put_assignment),
      cmocka_unit_test(test_opless_workload),
      cmocka_unit_test(test_table_not_a_list),
      cmocka_unit_test(test_workload_split),
      cmocka_unit_test(test_curve_heuristic),
      cmocka_unit_test(test_matrix_split),
      cmocka_unit_test(test_matrix_failed_seed),
      cmocka_unit_test(test_matrix_without_baseline),
      cmocka_unit_test(test_matrix_tie_tolerance),
      cmocka_unit_test(test_derive_not_ok),
      cmocka_unit_test(test_result_field_names),
      cmocka_unit_test(test_damaged_byte_never_loads_silently),
      cmocka_unit_test(test_seal_states),
      cmocka_unit_test(test_unsealed_damage_never_crashes),
      cmocka_unit_test(test_provenance_copy),
      cmocka_unit_test(test_read_all),
      cmocka_unit_test(test_baseline_hardware),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
