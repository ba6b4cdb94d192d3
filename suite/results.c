#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_seal.h"
#include "h5attr.h"
#include "isolated.h"
#include "paths.h"

struct mb_results {
  hid_t file;
  bool writable;
  char *path;
  int64_t torn_rows; /* trailing rows the readers dropped (mb_results_torn_rows) */
  bool seal;         /* the file has a seal block (file_seal.h): sealed again when closed */
};

#define SEAL_KIND "results" /* the seal block's kind */

#define CHUNK_ROWS 64 /* rows per chunk of the appendable tables */

/* Stored forms of the workload tables. */
typedef struct op_rec {
  char name[MB_NAME_MAX];
  char kind[MB_NAME_MAX];
  double flops;
} op_rec;

typedef struct buf_rec {
  char name[MB_NAME_MAX];
  int64_t size;
  int32_t start, end;
  int8_t pinned;
  int8_t has_benefit;
  int64_t benefit_ps;
} buf_rec;

typedef struct use_rec {
  int32_t op, buffer;
  int64_t bytes_read, bytes_written;
} use_rec;

typedef struct curve_rec {
  double step;
  double ret;
} curve_rec;

/* Fixed-length strings come back as stored; one that fills its field has no NUL in an unsealed
 * file whose terminator was damaged. Cut it at the field's end instead of reading past it. */
#define TERMINATE(s) ((s)[sizeof(s) - 1] = '\0')

/* Attribute of a curve table: the heuristic's mean return on the curve's episodes (its
 * reference); absent when unknown, and in files written before it was stored. */
#define CURVE_HEURISTIC "heuristic_return"

/* ---- errors: the innermost HDF5 message says why (e.g. "No space left on device") ---- */

static bool h5_fail(mb_error *err, const mb_results *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool h5_fail(mb_error *err, const mb_results *r, const char *fmt, ...) {
  char what[512], why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  mb_h5attr_reason(why, sizeof why);
  return mb_fail(err, "%s: %s%s%s", r ? r->path : "?", what, why[0] ? ": " : "", why);
}

static void quiet_hdf5(void) {
  /* HDF5 1.10 crashes in its exit-time cleanup when a file failed to close (e.g. after a
   * write hit a full disk): we close every file explicitly, so skip that cleanup. Only takes
   * effect before the library's first use; later calls fail harmlessly. */
  H5dont_atexit();
  /* The library prints its error stack by default; we turn it into one-line messages. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* ---- types ---- */

static hid_t str_type(size_t n) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, n);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  return t;
}

typedef struct type_builder {
  hid_t t;
  hid_t strs[16];
  int n_strs;
} type_builder;

static void tb_str(type_builder *b, const char *name, size_t off, size_t n) {
  hid_t s = str_type(n);
  H5Tinsert(b->t, name, off, s);
  b->strs[b->n_strs++] = s;
}

static hid_t tb_done(type_builder *b) {
  for (int i = 0; i < b->n_strs; i++) H5Tclose(b->strs[i]);
  return b->t;
}

#define F(T, field, h5t) H5Tinsert(b.t, #field, HOFFSET(T, field), h5t)
#define S(T, field) tb_str(&b, #field, HOFFSET(T, field), sizeof(((T *)0)->field))

static hid_t result_type(void) {
  type_builder b = {H5Tcreate(H5T_COMPOUND, sizeof(mb_result_row)), {0}, 0};
  F(mb_result_row, task, H5T_NATIVE_INT64);
  S(mb_result_row, workload);
  S(mb_result_row, hardware);
  S(mb_result_row, solver);
  F(mb_result_row, seed, H5T_NATIVE_INT64);
  S(mb_result_row, status);
  F(mb_result_row, valid, H5T_NATIVE_INT8);
  F(mb_result_row, capacity, H5T_NATIVE_INT64);
  F(mb_result_row, n_buffers, H5T_NATIVE_INT32);
  F(mb_result_row, n_fast, H5T_NATIVE_INT32);
  F(mb_result_row, fast_bytes, H5T_NATIVE_INT64);
  F(mb_result_row, t_slow_ps, H5T_NATIVE_INT64);
  F(mb_result_row, t_heuristic_ps, H5T_NATIVE_INT64);
  F(mb_result_row, t_solver_ps, H5T_NATIVE_INT64);
  F(mb_result_row, t_bound_ps, H5T_NATIVE_INT64);
  F(mb_result_row, t_solver_s, H5T_NATIVE_DOUBLE);
  F(mb_result_row, speedup_heuristic, H5T_NATIVE_DOUBLE);
  F(mb_result_row, speedup_slow, H5T_NATIVE_DOUBLE);
  F(mb_result_row, gap_to_bound, H5T_NATIVE_DOUBLE);
  F(mb_result_row, wall_s, H5T_NATIVE_DOUBLE);
  F(mb_result_row, iterations, H5T_NATIVE_INT64);
  F(mb_result_row, budget_hit, H5T_NATIVE_INT8);
  S(mb_result_row, note);
  return tb_done(&b);
}

static hid_t baseline_type(void) {
  type_builder b = {H5Tcreate(H5T_COMPOUND, sizeof(mb_baseline_row)), {0}, 0};
  F(mb_baseline_row, task, H5T_NATIVE_INT64);
  S(mb_baseline_row, workload);
  S(mb_baseline_row, hardware);
  S(mb_baseline_row, profile_sha256);
  F(mb_baseline_row, capacity, H5T_NATIVE_INT64);
  F(mb_baseline_row, alignment, H5T_NATIVE_INT64);
  F(mb_baseline_row, slow_bandwidth, H5T_NATIVE_DOUBLE);
  F(mb_baseline_row, fast_bandwidth, H5T_NATIVE_DOUBLE);
  F(mb_baseline_row, peak_flops, H5T_NATIVE_DOUBLE);
  F(mb_baseline_row, op_overhead_s, H5T_NATIVE_DOUBLE);
  F(mb_baseline_row, t_slow_ps, H5T_NATIVE_INT64);
  F(mb_baseline_row, t_heuristic_ps, H5T_NATIVE_INT64);
  F(mb_baseline_row, t_bound_ps, H5T_NATIVE_INT64);
  S(mb_baseline_row, bound_status);
  S(mb_baseline_row, bound_note);
  F(mb_baseline_row, heuristic_wall_s, H5T_NATIVE_DOUBLE);
  F(mb_baseline_row, bound_wall_s, H5T_NATIVE_DOUBLE);
  return tb_done(&b);
}

static hid_t op_type(void) {
  type_builder b = {H5Tcreate(H5T_COMPOUND, sizeof(op_rec)), {0}, 0};
  S(op_rec, name);
  S(op_rec, kind);
  F(op_rec, flops, H5T_NATIVE_DOUBLE);
  return tb_done(&b);
}

static hid_t buf_type(void) {
  type_builder b = {H5Tcreate(H5T_COMPOUND, sizeof(buf_rec)), {0}, 0};
  S(buf_rec, name);
  F(buf_rec, size, H5T_NATIVE_INT64);
  F(buf_rec, start, H5T_NATIVE_INT32);
  F(buf_rec, end, H5T_NATIVE_INT32);
  F(buf_rec, pinned, H5T_NATIVE_INT8);
  F(buf_rec, has_benefit, H5T_NATIVE_INT8);
  F(buf_rec, benefit_ps, H5T_NATIVE_INT64);
  return tb_done(&b);
}

static hid_t use_type(void) {
  type_builder b = {H5Tcreate(H5T_COMPOUND, sizeof(use_rec)), {0}, 0};
  F(use_rec, op, H5T_NATIVE_INT32);
  F(use_rec, buffer, H5T_NATIVE_INT32);
  F(use_rec, bytes_read, H5T_NATIVE_INT64);
  F(use_rec, bytes_written, H5T_NATIVE_INT64);
  return tb_done(&b);
}

static hid_t curve_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(curve_rec));
  H5Tinsert(t, "step", HOFFSET(curve_rec, step), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "return", HOFFSET(curve_rec, ret), H5T_NATIVE_DOUBLE);
  return t;
}

#undef F
#undef S

mb_hardware mb_baseline_hardware(const mb_baseline_row *b) {
  mb_hardware hw;
  memset(&hw, 0, sizeof hw);
  snprintf(hw.name, sizeof hw.name, "%s", b->hardware);
  hw.capacity = b->capacity;
  hw.alignment = b->alignment;
  hw.slow_bandwidth = b->slow_bandwidth;
  hw.fast_bandwidth = b->fast_bandwidth;
  hw.peak_flops = b->peak_flops;
  hw.op_overhead_s = b->op_overhead_s;
  return hw;
}

void mb_result_row_derive(mb_result_row *row) {
  bool ok = !strcmp(row->status, "ok") && row->t_solver_ps > 0;
  double ts = (double)row->t_solver_ps;
  row->t_solver_s = ok ? ts * 1e-12 : NAN;
  row->speedup_heuristic = ok && row->t_heuristic_ps > 0 ? (double)row->t_heuristic_ps / ts : NAN;
  row->speedup_slow = ok && row->t_slow_ps > 0 ? (double)row->t_slow_ps / ts : NAN;
  row->gap_to_bound = ok && row->t_bound_ps > 0
                          ? (double)(row->t_solver_ps - row->t_bound_ps) / (double)row->t_bound_ps
                          : NAN;
}

/* ---- names ---- */

char *mb_results_encode_name(const char *name, char *out, size_t n) {
  size_t j = 0;
  for (size_t i = 0; name[i]; i++) {
    char c = name[i];
    bool esc = c == '/' || c == '%' || (i == 0 && c == '.');
    if (j + (esc ? 3 : 1) >= n) return NULL;
    if (esc) {
      snprintf(out + j, 4, "%%%02X", (unsigned char)c);
      j += 3;
    } else {
      out[j++] = c;
    }
  }
  if (j == 0) { /* an empty name is not a valid link name */
    if (n < 4) return NULL;
    memcpy(out, "%00", 4);
    return out;
  }
  out[j] = '\0';
  return out;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

char *mb_results_decode_name(const char *enc, char *out, size_t n) {
  if (!strcmp(enc, "%00")) {
    if (n < 1) return NULL;
    out[0] = '\0';
    return out;
  }
  size_t j = 0;
  for (size_t i = 0; enc[i]; i++) {
    if (j + 1 >= n) return NULL;
    int h, l;
    if (enc[i] == '%' && (h = hexval(enc[i + 1])) >= 0 && (l = hexval(enc[i + 2])) >= 0) {
      out[j++] = (char)(h * 16 + l);
      i += 2;
    } else {
      out[j++] = enc[i];
    }
  }
  out[j] = '\0';
  return out;
}

/* "/prefix/<w>/<hw>/<solver>/<seed>" with encoded components (NULL components are left out). */
static bool object_path(char *out, size_t n, const char *prefix, const char *w, const char *hw,
                        const char *solver, const char *leaf) {
  char ew[3 * MB_RES_WORKLOAD], eh[3 * MB_RES_HARDWARE], es[3 * MB_RES_SOLVER],
      el[3 * MB_RES_SOLVER];
  if (!mb_results_encode_name(w, ew, sizeof ew) || !mb_results_encode_name(hw, eh, sizeof eh))
    return false;
  int k;
  if (solver) {
    if (!mb_results_encode_name(solver, es, sizeof es) ||
        !mb_results_encode_name(leaf, el, sizeof el))
      return false;
    k = snprintf(out, n, "%s/%s/%s/%s/%s", prefix, ew, eh, es, el);
  } else {
    if (!mb_results_encode_name(leaf, el, sizeof el)) return false;
    k = snprintf(out, n, "%s/%s/%s/%s", prefix, ew, eh, el);
  }
  return k > 0 && (size_t)k < n;
}

/* H5Lexists on a path whose intermediate groups may be missing. */
static bool path_exists(hid_t file, const char *path) {
  char buf[1024];
  size_t len = strlen(path);
  if (len >= sizeof buf) return false;
  memcpy(buf, path, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      if (H5Lexists(file, buf, H5P_DEFAULT) <= 0) return false;
      buf[i] = c;
    }
  }
  return true;
}

/* ---- groups: created so that a kill -9 inside H5Fflush does not cut committed links ----
 *
 * Every committed task adds a link (/assignments/<w>/<hw>/<solver>/<seed>, its curve, and the
 * groups above them on first use), and H5Fflush writes the changed structures with separate
 * pwrite calls, any of which a SIGKILL can also cut at a page boundary. HDF5's default groups
 * in these EARLIEST-format files are symbol tables: a v1 B-tree, leaf nodes of 8 links and a
 * local heap of names, of which one insert may change three, and which split (9th link) and
 * move (heap full) as a group grows. A kill between those writes left whole groups unreadable:
 * tests/stress/hdf5_kill_stress.c (4 workloads x 2 solvers x 50 seeds) found a committed row
 * whose assignment was unreachable in 25 of 1000 killed files. Larger leaves (H5Pset_sym_k
 * 16/32) with a large name heap (H5Pset_local_heap_size_hint 1024) still lost some (1.6 per
 * 1000: the heap's header and its names, one write, cut at a page boundary).
 *
 * So groups are created "compact" (HDF5 1.8 format, read by every HDF5 >= 1.8; the
 * superblock stays version 0): the links are messages in the group's object header, space
 * for them is reserved when the group is created (H5Pset_est_link_info), and the group never
 * converts to the indexed "dense" form (H5Pset_link_phase_change), so an insert rewrites that
 * one header in place. The stress test then found no committed task damaged in 10000 kills.
 * A group that outgrows its reservation gets header continuation blocks, several writes again
 * (with every reservation cut to 4 links: 9 damaged per 1000 kills), so the reservations below
 * cover the shapes runs have; they cost the quick profile's file 7% (1.10 -> 1.18 MB).
 * Creation order is tracked only because that is what makes HDF5 1.10 create a compact group
 * in an EARLIEST-format file. Intermediate groups made by H5Pset_create_intermediate_group
 * would get default properties, so every group is created here. Reading does not depend on
 * any of this: files written before (symbol-table groups) read the same. */

/* Links (and their typical name length) reserved in a group at depth 1 (/assignments,
 * /curves, /workloads: one link per workload; the full profile has 85), 2 (a workload's
 * hardware, or its three tables), 3 (a pair's solvers and baseline) and 4 (a solver's seeds:
 * 1 in the quick profile, 3 in the full one, 50 in tests/e2e/run_resume.sh). */
static const struct {
  unsigned links, name_len;
} group_reserve[5] = {{0, 0}, {128, 32}, {8, 16}, {16, 16}, {64, 2}};

static hid_t group_create_plist(int depth) {
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  int d = depth < 1 ? 1 : depth > 4 ? 4 : depth;
  if (gcpl >= 0 &&
      (H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED) < 0 ||
       H5Pset_link_phase_change(gcpl, 65535, 6) < 0 ||
       H5Pset_est_link_info(gcpl, group_reserve[d].links, group_reserve[d].name_len) < 0)) {
    H5Pclose(gcpl);
    gcpl = -1;
  }
  return gcpl;
}

/* Creates the group at an absolute path (its parent exists) with the properties above. */
static hid_t group_create(hid_t file, const char *path, int depth) {
  hid_t gcpl = group_create_plist(depth);
  hid_t g = gcpl >= 0 ? H5Gcreate2(file, path, H5P_DEFAULT, gcpl, H5P_DEFAULT) : -1;
  if (gcpl >= 0) H5Pclose(gcpl);
  return g;
}

/* Creates the missing groups above the object at an absolute path. */
static bool make_parents(hid_t file, const char *path) {
  char buf[1024];
  size_t len = strlen(path);
  if (path[0] != '/' || len >= sizeof buf) return false;
  memcpy(buf, path, len + 1);
  int depth = 0;
  for (size_t i = 1; i < len; i++) {
    if (buf[i] != '/') continue;
    depth++;
    buf[i] = '\0';
    htri_t e = H5Lexists(file, buf, H5P_DEFAULT);
    hid_t g = e == 0 ? group_create(file, buf, depth) : -1;
    buf[i] = '/';
    if (e < 0 || (e == 0 && g < 0)) return false;
    if (g >= 0) H5Gclose(g);
  }
  return true;
}

/* ---- attributes ---- */

static bool set_str_attr(hid_t obj, const char *key, const char *value) {
  if (!mb_h5attr_remove(obj, key)) return false;
  size_t n = strlen(value) + 1;
  hid_t t = str_type(n);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, key, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = a >= 0 && H5Awrite(a, t, value) >= 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return ok;
}

static bool set_num_attr(hid_t obj, const char *key, hid_t type, const void *value) {
  if (!mb_h5attr_remove(obj, key)) return false;
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, key, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = a >= 0 && H5Awrite(a, type, value) >= 0;
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return ok;
}

/* Reads a string attribute (h5attr.h: one string, fixed or variable length) into a malloc'd
 * string; NULL when it is missing, not one string or unreadable. */
static char *get_str_attr(hid_t obj, const char *key) {
  return mb_h5attr_read_string(obj, key, NULL, NULL);
}

/* Reads a numeric attribute holding one value into *v: an integer as int64 (`as_double` false),
 * or an integer or float as a double. Whether it did; *state (h5attr.h) tells a missing
 * attribute and an HDF5 error from one of another type or shape (MB_H5ATTR_PRESENT). */
static bool get_num_attr(hid_t obj, const char *key, bool as_double, void *v,
                         mb_h5attr_state *state) {
  *state = mb_h5attr_find(obj, key);
  if (*state != MB_H5ATTR_PRESENT) return false;
  hid_t a = H5Aopen(obj, key, H5P_DEFAULT);
  hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
  hid_t sp = ft >= 0 ? H5Aget_space(a) : -1;
  H5T_class_t c = sp >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
  hssize_t points = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  bool failed = c == H5T_NO_CLASS || points < 0; /* an HDF5 call, not the attribute */
  /* one value of a number type (several would overflow v) */
  bool fits = !failed && (c == H5T_INTEGER || (as_double && c == H5T_FLOAT)) && points == 1;
  bool ok = fits && H5Aread(a, as_double ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64, v) >= 0;
  if (failed || (fits && !ok)) *state = MB_H5ATTR_ERROR;
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  return ok;
}

static bool get_int_attr(hid_t obj, const char *key, int64_t *v) {
  mb_h5attr_state state;
  return get_num_attr(obj, key, false, v, &state);
}

bool mb_results_set_attr_string(mb_results *r, const char *key, const char *value, mb_error *err) {
  if (!set_str_attr(r->file, key, value))
    return h5_fail(err, r, "cannot write attribute '%s'", key);
  return true;
}

bool mb_results_set_attr_int(mb_results *r, const char *key, int64_t value, mb_error *err) {
  if (!set_num_attr(r->file, key, H5T_NATIVE_INT64, &value))
    return h5_fail(err, r, "cannot write attribute '%s'", key);
  return true;
}

bool mb_results_set_attr_double(mb_results *r, const char *key, double value, mb_error *err) {
  if (!set_num_attr(r->file, key, H5T_NATIVE_DOUBLE, &value))
    return h5_fail(err, r, "cannot write attribute '%s'", key);
  return true;
}

char *mb_results_get_attr_string(mb_results *r, const char *key, mb_error *err) {
  char *s = mb_h5attr_read_string(r->file, key, NULL, err);
  if (!s) mb_fail_prefix(err, "%s", r->path);
  return s;
}

/* The error of a numeric attribute that did not read: HDF5's reason when it failed. */
static bool num_attr_fail(mb_results *r, const char *key, mb_h5attr_state state, const char *kind,
                          mb_error *err) {
  if (state == MB_H5ATTR_ERROR)
    return h5_fail(err, r, "attribute '%s': cannot read it (damaged file?)", key);
  if (state == MB_H5ATTR_ABSENT) return mb_fail(err, "%s: attribute '%s' is missing", r->path, key);
  return mb_fail(err, "%s: attribute '%s' is not %s", r->path, key, kind);
}

bool mb_results_get_attr_int(mb_results *r, const char *key, int64_t *value, mb_error *err) {
  mb_h5attr_state state;
  return get_num_attr(r->file, key, false, value, &state) ||
         num_attr_fail(r, key, state, "an integer", err);
}

bool mb_results_get_attr_double(mb_results *r, const char *key, double *value, mb_error *err) {
  mb_h5attr_state state;
  return get_num_attr(r->file, key, true, value, &state) ||
         num_attr_fail(r, key, state, "a number", err);
}

/* An error counts as present (h5attr.h): the read that follows says what failed, where
 * "absent" would silently take an older file's default (a resume's options). */
bool mb_results_has_attr(mb_results *r, const char *key) {
  return mb_h5attr_find(r->file, key) != MB_H5ATTR_ABSENT;
}

typedef struct attr_list {
  char **keys;
  int32_t n, cap;
} attr_list;

static herr_t collect_attr(hid_t obj, const char *name, const H5A_info_t *info, void *data) {
  attr_list *l = data;
  if (l->n == l->cap) {
    int32_t cap = l->cap ? l->cap * 2 : 32;
    char **k = realloc(l->keys, (size_t)cap * sizeof *k);
    if (!k) return -1;
    l->keys = k;
    l->cap = cap;
  }
  l->keys[l->n] = strdup(name);
  if (!l->keys[l->n]) return -1;
  l->n++;
  return 0;
}

static char *attr_text(hid_t obj, const char *key) {
  hid_t a = H5Aopen(obj, key, H5P_DEFAULT);
  if (a < 0) return NULL;
  hid_t ft = H5Aget_type(a);
  hid_t sp = H5Aget_space(a);
  H5T_class_t cls = H5Tget_class(ft);
  hssize_t npoints = H5Sget_simple_extent_npoints(sp);
  char buf[64];
  char *out = NULL;
  if (cls == H5T_STRING && npoints == 1) {
    out = get_str_attr(obj, key);
  } else if (npoints == 1 && cls == H5T_INTEGER) {
    int64_t v;
    if (H5Aread(a, H5T_NATIVE_INT64, &v) >= 0) {
      snprintf(buf, sizeof buf, "%" PRId64, v);
      out = strdup(buf);
    }
  } else if (npoints == 1 && cls == H5T_FLOAT) {
    double v;
    if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0) {
      snprintf(buf, sizeof buf, "%.17g", v);
      out = strdup(buf);
    }
  } else {
    out = strdup("(unsupported attribute type)");
  }
  H5Sclose(sp);
  H5Tclose(ft);
  H5Aclose(a);
  return out;
}

bool mb_results_list_attrs(mb_results *r, char ***keys, char ***values, int32_t *n, mb_error *err) {
  attr_list l = {0};
  hsize_t idx = 0;
  if (H5Aiterate2(r->file, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &l) < 0) {
    mb_results_free_strings(l.keys, l.n);
    return h5_fail(err, r, "cannot list the root attributes");
  }
  char **vals = calloc(l.n ? (size_t)l.n : 1, sizeof *vals);
  if (!vals) {
    mb_results_free_strings(l.keys, l.n);
    return mb_fail(err, "%s: out of memory listing attributes", r->path);
  }
  for (int32_t i = 0; i < l.n; i++) {
    vals[i] = attr_text(r->file, l.keys[i]);
    if (!vals[i]) {
      h5_fail(err, r, "cannot read attribute '%s'", l.keys[i]); /* before the name is freed */
      mb_results_free_strings(l.keys, l.n);
      mb_results_free_strings(vals, l.n);
      return false;
    }
  }
  *keys = l.keys;
  *values = vals;
  *n = l.n;
  return true;
}

bool mb_results_copy_attrs(mb_results *dst, mb_results *src, mb_error *err) {
  attr_list l = {0};
  hsize_t idx = 0;
  if (H5Aiterate2(src->file, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &l) < 0) {
    mb_results_free_strings(l.keys, l.n);
    return h5_fail(err, src, "cannot list the root attributes");
  }
  bool ok = true;
  for (int32_t i = 0; ok && i < l.n; i++) {
    hid_t a = H5Aopen(src->file, l.keys[i], H5P_DEFAULT);
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
    hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    /* fixed-size types only (the store writes no variable-length data) */
    bool fixed = ft >= 0 && H5Tis_variable_str(ft) == 0 && H5Tget_class(ft) != H5T_VLEN;
    size_t size = fixed && np >= 0 ? H5Tget_size(ft) * (size_t)np : 0;
    void *buf = fixed ? calloc(size ? size : 1, 1) : NULL;
    ok = buf && H5Aread(a, ft, buf) >= 0;
    if (ok) {
      mb_h5attr_remove(dst->file, l.keys[i]); /* on failure, the create below fails */
      hid_t b = H5Acreate2(dst->file, l.keys[i], ft, sp, H5P_DEFAULT, H5P_DEFAULT);
      ok = b >= 0 && H5Awrite(b, ft, buf) >= 0;
      if (b >= 0) H5Aclose(b);
      if (!ok) h5_fail(err, dst, "cannot write attribute '%s'", l.keys[i]);
    } else {
      h5_fail(err, src, "cannot copy attribute '%s'", l.keys[i]);
    }
    free(buf);
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    if (a >= 0) H5Aclose(a);
  }
  mb_results_free_strings(l.keys, l.n);
  return ok;
}

void mb_results_free_strings(char **s, int32_t n) {
  if (!s) return;
  for (int32_t i = 0; i < n; i++) free(s[i]);
  free(s);
}

/* ---- tables ---- */

/* `compress`: gzip (deflate, a filter every HDF5 build and h5py read) for tables written once,
 * whose fixed-length name fields are mostly NUL padding; appendable tables stay plain. */
static hid_t create_table(hid_t loc, const char *name, hid_t type, hsize_t rows, bool compress) {
  hsize_t dims[1] = {rows}, maxdims[1] = {H5S_UNLIMITED};
  hsize_t chunk[1] = {rows > CHUNK_ROWS ? (rows < 4096 ? rows : 4096) : CHUNK_ROWS};
  hid_t sp = H5Screate_simple(1, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  if (compress && rows > 0) H5Pset_deflate(dcpl, 6);
  hid_t d = name[0] != '/' || make_parents(loc, name)
                ? H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)
                : -1;
  H5Pclose(dcpl);
  H5Sclose(sp);
  return d;
}

static hsize_t table_rows(hid_t d) {
  hid_t sp = H5Dget_space(d);
  hsize_t dims[1] = {0};
  if (sp < 0 || H5Sget_simple_extent_ndims(sp) != 1)
    dims[0] = 0;
  else
    H5Sget_simple_extent_dims(sp, dims, NULL);
  if (sp >= 0) H5Sclose(sp);
  return dims[0];
}

/* Writes `count` rows at row `at` of an open table, extending it when needed. */
static bool write_rows(hid_t d, hid_t type, hsize_t at, hsize_t count, const void *data) {
  if (count == 0) return true;
  hsize_t rows = table_rows(d);
  if (at + count > rows) {
    hsize_t nd[1] = {at + count};
    if (H5Dset_extent(d, nd) < 0) return false;
  }
  hid_t fs = H5Dget_space(d);
  hsize_t start[1] = {at}, cnt[1] = {count};
  bool ok = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0;
  hid_t ms = H5Screate_simple(1, cnt, NULL);
  ok = ok && H5Dwrite(d, type, ms, fs, H5P_DEFAULT, data) >= 0;
  H5Sclose(ms);
  H5Sclose(fs);
  return ok;
}

static bool append_to(mb_results *r, const char *name, hid_t type, const void *row, mb_error *err) {
  hid_t d = H5Dopen2(r->file, name, H5P_DEFAULT);
  if (d < 0) return h5_fail(err, r, "table %s is missing", name);
  bool ok = write_rows(d, type, table_rows(d), 1, row);
  H5Dclose(d);
  if (!ok) return h5_fail(err, r, "cannot append a row to %s", name);
  return true;
}

/* Reads a whole table at `name` (under loc) into a malloc'd array of `size`-byte rows. */
static bool all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

/* Reads the first `count` rows of an open table into data. */
static bool read_first_rows(hid_t d, hid_t type, hsize_t count, void *data) {
  hsize_t start[1] = {0}, cnt[1] = {count};
  hid_t fs = H5Dget_space(d);
  hid_t ms = H5Screate_simple(1, cnt, NULL);
  bool ok = fs >= 0 && ms >= 0 &&
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0 &&
            H5Dread(d, type, ms, fs, H5P_DEFAULT, data) >= 0;
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  return ok;
}

/* Reads a whole table. A kill -9 inside the flush that appends a row into a new chunk can leave
 * the table one row longer than what was written (HDF5 writes the new extent, the chunk index
 * entry and the end-of-file address separately; tests/stress/hdf5_kill_stress.c): that last
 * row then reads as fill values (all zero bytes: no real row is, every row names its workload)
 * or does not read at all. Such a torn tail is dropped here and counted in r->torn_rows; the
 * rows before it are intact, and `run --resume` restores the row from the journal. */
static bool read_table(mb_results *r, hid_t loc, const char *name, hid_t type, size_t size,
                       void **rows, int64_t *n, mb_error *err) {
  *rows = NULL;
  *n = 0;
  hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
  if (d < 0) return h5_fail(err, r, "table %s is missing", name);
  /* every table is a list of rows: any other shape would read as an empty table */
  hid_t space = H5Dget_space(d);
  bool listed = space >= 0 && H5Sget_simple_extent_ndims(space) == 1;
  if (space >= 0) H5Sclose(space);
  if (!listed) {
    H5Dclose(d);
    return h5_fail(err, r, "table %s is not a list of rows (damaged file?)", name);
  }
  hsize_t count = table_rows(d);
  bool ok = true;
  if (count > 0) {
    unsigned char *data = calloc(count, size);
    if (!data) {
      H5Dclose(d);
      return mb_fail(err, "%s: out of memory reading %s (%llu rows)", r->path, name,
                     (unsigned long long)count);
    }
    hsize_t got = count;
    bool read = H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
    if (!read && count > 1 && read_first_rows(d, type, count - 1, data)) {
      read = true;
      got = count - 1;
    }
    if (!read) {
      free(data);
      ok = h5_fail(err, r, "cannot read table %s", name);
    } else {
      while (got > 0 && all_zero(data + (got - 1) * size, size)) got--;
      r->torn_rows += (int64_t)(count - got);
      *rows = data;
      *n = (int64_t)got;
    }
  }
  H5Dclose(d);
  return ok;
}

/* ---- open/create/close ---- */

static mb_results *handle(const char *path, hid_t file, bool writable) {
  mb_results *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    H5Fclose(file);
    return NULL;
  }
  r->file = file;
  r->writable = writable;
  return r;
}

static hid_t file_access(bool writing) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  /* Closing the file closes every object still open in it: no leaked handles on error paths. */
  H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
  /* Default (earliest) format bounds: superblock v0 has no "file is open for writing" flag, so
   * a file left by kill -9 opens again without h5clear. Reading needs no bounds, and the upper
   * one would refuse a newer file outright (an agent checkpoint, HDF5 1.10's format), which
   * mb_results_open names and mb_results_is_foreign must open. */
  if (writing) H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_V18);
  return fapl;
}

mb_results *mb_results_create(const char *path, bool force, mb_error *err) {
  quiet_hdf5();
  struct stat st;
  if (stat(path, &st) == 0 && !force) {
    mb_fail(err, "%s: file exists (use --resume to continue it, or --force to replace it)", path);
    return NULL;
  }
  if (!mb_path_check_replaceable(path, err)) return NULL;
  /* Probe with open(2) first: its errno names the reason (permission, missing directory). */
  int fd = open(path, O_WRONLY | O_CREAT | (force ? 0 : O_EXCL), 0666);
  if (fd < 0) {
    mb_fail(err, "%s: cannot create the results file: %s", path, strerror(errno));
    return NULL;
  }
  close(fd);
  hid_t fapl = file_access(true);
  /* room for the seal block before the HDF5 data (file_seal.h) */
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_userblock(fcpl, MB_SEAL_BLOCK);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
  H5Pclose(fcpl);
  H5Pclose(fapl);
  if (file < 0) {
    mb_results tmp = {.path = (char *)path};
    h5_fail(err, &tmp, "cannot create the HDF5 file");
    return NULL;
  }
  mb_results *r = handle(path, file, true);
  if (!r) {
    mb_fail(err, "%s: out of memory", path);
    return NULL;
  }
  hid_t rt = result_type(), bt = baseline_type();
  hid_t d1 = create_table(file, "results", rt, 0, false);
  hid_t d2 = create_table(file, "baselines", bt, 0, false);
  H5Tclose(rt);
  H5Tclose(bt);
  bool ok = d1 >= 0 && d2 >= 0;
  if (d1 >= 0) H5Dclose(d1);
  if (d2 >= 0) H5Dclose(d2);
  const char *groups[] = {"workloads", "assignments", "curves"};
  for (int i = 0; ok && i < 3; i++) {
    hid_t g = group_create(file, groups[i], 1);
    ok = g >= 0;
    if (ok) H5Gclose(g);
  }
  int64_t fmt = MB_RESULTS_FORMAT;
  ok = ok && set_str_attr(file, "mallocbench_file", "results") &&
       set_num_attr(file, "format_version", H5T_NATIVE_INT64, &fmt);
  if (!ok || !mb_results_flush(r, err) || !mb_seal_mark_open(path, SEAL_KIND, err)) {
    if (!ok) h5_fail(err, r, "cannot create the results layout");
    mb_results_close(r, NULL);
    return NULL;
  }
  r->seal = true;
  return r;
}

bool mb_results_unseal(const char *path, mb_error *err) { return mb_seal_remove(path, err); }

static mb_results *open_hdf5(const char *path, bool writable, bool sealable, mb_error *err);

/* is_foreign's test once the seal is known: 1 when the file is foreign, 0 when not (also when it
 * does not open), so that it can run isolated. */
static int foreign_hdf5(void *path_arg, mb_error *err) {
  (void)err;
  const char *path = path_arg;
  if (H5Fis_hdf5(path) <= 0) return 0;
  hid_t fapl = file_access(false);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (file < 0) return 0;
  char *kind = get_str_attr(file, "mallocbench_file");
  bool results_kind = kind && !strcmp(kind, "results");
  free(kind);
  bool foreign = !results_kind && H5Lexists(file, "results", H5P_DEFAULT) <= 0;
  H5Fclose(file);
  return foreign;
}

bool mb_results_is_foreign(const char *path) {
  quiet_hdf5();
  mb_seal_state seal;
  char seal_kind[MB_SEAL_KIND_MAX];
  /* a damaged sealed file is not known to be intact; a sealed results file is no other kind */
  if (!mb_seal_check(path, &seal, seal_kind, NULL) || !strcmp(seal_kind, SEAL_KIND)) return false;
  if (seal == MB_SEAL_OK) return foreign_hdf5((void *)path, NULL);
  /* no seal vouches for it: a file libhdf5 crashes on is damaged, not known to be intact */
  int foreign = 0;
  return mb_isolated_run(foreign_hdf5, (void *)path, &foreign, NULL) == MB_ISOLATED_RETURNED &&
         foreign;
}

/* Reads, in a child, everything a reader of the file may read; it returns 0 whether the reads
 * succeed or fail cleanly (the caller's own reads then fail the same way). */
static int read_everything_isolated(void *path_arg, mb_error *err) {
  (void)err;
  /* libhdf5's own free lists hand out blocks with what they held before: emptied, its next
   * blocks come from malloc, which perturbs them in this child (isolated.h). Measured on 1,200
   * damaged copies (tests/test_results.c's, 3 seeds): the caller crashed on 3 after a child
   * that survived, on 3 with the perturbation alone, on 10 with this alone, on none with both. */
  H5garbage_collect();
  mb_results *r = open_hdf5(path_arg, false, false, NULL);
  if (r) {
    mb_results_read_all(r, NULL);
    mb_results_close(r, NULL);
  }
  return 0;
}

bool mb_results_unchecked(const char *path) {
  quiet_hdf5();
  /* only a regular file can be one (H5Fis_hdf5 would wait on a FIFO for a writer) */
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return !mb_seal_says_sealed(path) && H5Fis_hdf5(path) > 0;
}

bool mb_results_fail_crashed(mb_error *err, const char *path) {
  if (!err) return false;
  return mb_fail(err,
                 "%s: the file is damaged: libhdf5 reading it %s (the file has no seal, which "
                 "would have caught the damage: a killed run's file, or one written before "
                 "seals; 'mallocbench run --resume %s' rebuilds a killed run's file from its "
                 "journal)",
                 path, err->message, path);
}

/* A file no seal vouches for (a killed run's, or one written before seals) is read first in a
 * child: libhdf5 may crash on its damaged metadata, and then only the child dies. */
static bool survives_reading(const char *path, mb_error *err) {
  int code = 0;
  switch (mb_isolated_run(read_everything_isolated, (void *)path, &code, err)) {
    case MB_ISOLATED_RETURNED:
      return true;
    case MB_ISOLATED_DIED:
      return mb_results_fail_crashed(err, path);
    case MB_ISOLATED_NOT_RUN:
      break;
  }
  return mb_fail_prefix(err, "%s: not read, since it has no seal and is read first in a child",
                        path);
}

/* What mb_results_open checks before libhdf5 sees the file: that no other process is writing
 * it, and its seal (*sealable: it has a results seal block, to be kept when written). */
static bool check_before_parsing(const char *path, bool writable, mb_seal_state *seal,
                                 bool *sealable, mb_error *err) {
  /* O_NONBLOCK: a FIFO's open would wait for a writer; the seal check below refuses it */
  int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK);
  if (fd < 0) return mb_fail(err, "%s: cannot open the results file: %s", path, strerror(errno));
  /* HDF5 flocks the files it opens (exclusively for writing): a file a run is still writing
   * cannot be opened elsewhere until that run ends. Say so, rather than let HDF5's refusal read
   * like a damaged file. */
  bool busy = flock(fd, (writable ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd); /* closing drops the probe's lock */
  if (busy)
    return mb_fail(err,
                   "%s: the file is open in another process (a run still writing it?); HDF5 "
                   "locks it until that process ends: read it then, or read a copy (cp) of it",
                   path);
  /* A sealed file is checked before libhdf5 parses anything in it (file_seal.h); one opened for
   * writing is marked open until it is closed and sealed again. */
  char seal_kind[MB_SEAL_KIND_MAX];
  if (!mb_seal_check(path, seal, seal_kind, err)) return false;
  *sealable = *seal != MB_SEAL_NONE && !strcmp(seal_kind, SEAL_KIND);
  return true;
}

/* mb_results_open once the file may be given to libhdf5 in this process. */
static mb_results *open_parsable(const char *path, bool writable, bool sealable, mb_error *err) {
  if (H5Fis_hdf5(path) <= 0) {
    mb_fail(err, "%s: not an HDF5 file (or damaged beyond opening)", path);
    return NULL;
  }
  if (writable && sealable && !mb_seal_mark_open(path, SEAL_KIND, err)) return NULL;
  return open_hdf5(path, writable, sealable, err);
}

mb_results *mb_results_open(const char *path, bool writable, mb_error *err) {
  quiet_hdf5();
  mb_seal_state seal;
  bool sealable = false;
  if (!check_before_parsing(path, writable, &seal, &sealable, err)) return NULL;
  if (seal != MB_SEAL_OK && !survives_reading(path, err)) return NULL;
  return open_parsable(path, writable, sealable, err);
}

typedef struct provenance_copy {
  const char *path; /* the file no seal vouches for */
  const char *copy; /* the new file its root attributes go to */
} provenance_copy;

/* In a child (mb_isolated_run): copies the root attributes of a results file no seal vouches
 * for into a new sealed results file. 0 when copied; 1 with err set when not. */
static int copy_provenance_isolated(void *arg, mb_error *err) {
  const provenance_copy *c = arg;
  H5garbage_collect(); /* as in read_everything_isolated */
  mb_results *src = open_parsable(c->path, false, false, err);
  if (!src) return 1;
  mb_results *dst = mb_results_create(c->copy, true, err);
  bool ok = dst && mb_results_copy_attrs(dst, src, err);
  mb_results_close(src, NULL);
  ok = mb_results_close(dst, ok ? err : NULL) && ok;
  return ok ? 0 : 1;
}

mb_results *mb_results_open_provenance(const char *path, mb_error *err) {
  quiet_hdf5();
  mb_seal_state seal;
  bool sealable = false;
  if (!check_before_parsing(path, false, &seal, &sealable, err)) return NULL;
  if (seal == MB_SEAL_OK) return open_parsable(path, false, sealable, err);
  size_t n = strlen(path) + sizeof ".provenance";
  char *copy = malloc(n);
  if (!copy) {
    mb_fail(err, "%s: out of memory", path);
    return NULL;
  }
  snprintf(copy, n, "%s.provenance", path);
  provenance_copy c = {.path = path, .copy = copy};
  int code = 0;
  mb_results *r = NULL;
  mb_error why = {{0}};
  switch (mb_isolated_run(copy_provenance_isolated, &c, &code, &why)) {
    case MB_ISOLATED_RETURNED:
      /* the copy was sealed by its writer: opened checked, never parsed unchecked */
      if (code == 0)
        r = mb_results_open(copy, false, err);
      else if (why.message[0] && err)
        *err = why;
      else
        mb_fail(err, "%s: its root attributes could not be read", path);
      break;
    case MB_ISOLATED_DIED:
      if (err) *err = why;
      mb_results_fail_crashed(err, path);
      break;
    case MB_ISOLATED_NOT_RUN:
      if (err) *err = why;
      mb_fail_prefix(err, "%s: not read, since it has no seal and is read only in a child", path);
      break;
  }
  unlink(copy); /* an open handle keeps reading it */
  free(copy);
  char *own = r ? strdup(path) : NULL;
  if (r && !own) {
    mb_results_close(r, NULL);
    mb_fail(err, "%s: out of memory", path);
    return NULL;
  }
  if (r) {
    /* messages about the handle name the file the attributes came from */
    free(r->path);
    r->path = own;
  }
  return r;
}

/* mb_results_open once the file may be given to libhdf5: opens it and checks that it is a
 * results file of this format. */
static mb_results *open_hdf5(const char *path, bool writable, bool sealable, mb_error *err) {
  hid_t fapl = file_access(writable);
  hid_t file = H5Fopen(path, writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (file < 0) {
    mb_results tmp = {.path = (char *)path};
    h5_fail(err, &tmp, "cannot open the HDF5 file (truncated or damaged?)");
    return NULL;
  }
  mb_results *r = handle(path, file, writable);
  if (!r) {
    mb_fail(err, "%s: out of memory", path);
    return NULL;
  }
  r->seal = writable && sealable;
  char *kind = get_str_attr(file, "mallocbench_file");
  int64_t fmt = 0;
  bool is_results = kind && !strcmp(kind, "results");
  bool ok = is_results && get_int_attr(file, "format_version", &fmt);
  if (!ok) {
    /* the other HDF5 files mallocbench writes: say which one it is */
    char *format = kind ? NULL : get_str_attr(file, "format");
    if (format && !strcmp(format, MB_AGENT_FORMAT))
      mb_fail(err,
              "%s: a mallocMuZero agent checkpoint, not a results file ('mallocbench show' "
              "describes it)",
              path);
    else if (is_results)
      mb_fail(err,
              "%s: damaged results file: root attribute 'format_version' is missing or not an "
              "integer",
              path);
    else if (kind)
      mb_fail(err,
              "%s: not a mallocbench results file (root attribute 'mallocbench_file' is not "
              "'results')",
              path);
    else
      mb_fail(err, "%s: not a mallocbench results file (root attribute 'mallocbench_file' missing)",
              path);
    free(format);
  }
  free(kind);
  if (ok && fmt != MB_RESULTS_FORMAT)
    ok = mb_fail(err, "%s: results format %" PRId64 ", this mallocbench reads format %d", path, fmt,
                 MB_RESULTS_FORMAT);
  else if (ok && (H5Lexists(file, "results", H5P_DEFAULT) <= 0 ||
                  H5Lexists(file, "baselines", H5P_DEFAULT) <= 0))
    ok = mb_fail(err, "%s: damaged results file: table /results or /baselines is missing", path);
  if (!ok) {
    mb_results_close(r, NULL);
    return NULL;
  }
  return r;
}

bool mb_results_flush(mb_results *r, mb_error *err) {
  if (r->writable && H5Fflush(r->file, H5F_SCOPE_LOCAL) < 0)
    return h5_fail(err, r, "cannot flush the file");
  return true;
}

bool mb_results_close(mb_results *r, mb_error *err) {
  if (!r) return true;
  bool ok = true;
  if (r->writable && H5Fflush(r->file, H5F_SCOPE_LOCAL) < 0)
    ok = h5_fail(err, r, "cannot flush the file");
  if (H5Fclose(r->file) < 0 && ok) ok = h5_fail(err, r, "cannot close the file");
  /* a file whose last write failed stays marked open (its readers then check it as HDF5) */
  if (ok && r->writable && r->seal) ok = mb_seal_close(r->path, SEAL_KIND, err);
  free(r->path);
  free(r);
  return ok;
}

const char *mb_results_path(const mb_results *r) { return r->path; }

bool mb_results_rename(mb_results *r, const char *path, mb_error *err) {
  char *p = strdup(path);
  if (!p) return mb_fail(err, "%s: out of memory", r->path);
  if (rename(r->path, path) != 0) {
    int e = errno;
    free(p);
    return mb_fail(err, "%s: cannot rename to %s: %s", r->path, path, strerror(e));
  }
  free(r->path);
  r->path = p;
  return true;
}

/* ---- workloads ---- */

static bool copy_name(char *dst, size_t n, const char *src) {
  size_t len = strlen(src);
  if (len >= n) return false;
  memcpy(dst, src, len + 1);
  return true;
}

bool mb_results_put_workload(mb_results *r, const char *key, const mb_workload *w,
                             const char *sha256, mb_error *err) {
  char enc[3 * MB_RES_WORKLOAD], path[4 * MB_RES_WORKLOAD];
  if (!mb_results_encode_name(key, enc, sizeof enc) ||
      snprintf(path, sizeof path, "/workloads/%s", enc) >= (int)sizeof path)
    return mb_fail(err, "%s: workload name '%s' is too long", r->path, key);
  if (H5Lexists(r->file, path, H5P_DEFAULT) > 0 && H5Ldelete(r->file, path, H5P_DEFAULT) < 0)
    return h5_fail(err, r, "cannot replace %s", path);
  op_rec *ops = calloc(w->n_ops ? (size_t)w->n_ops : 1, sizeof *ops);
  buf_rec *bufs = calloc(w->n_buffers ? (size_t)w->n_buffers : 1, sizeof *bufs);
  use_rec *uses = calloc(w->n_uses ? (size_t)w->n_uses : 1, sizeof *uses);
  bool ok = ops && bufs && uses;
  if (!ok) mb_fail(err, "%s: out of memory storing workload '%s'", r->path, key);
  for (int32_t i = 0; ok && i < w->n_ops; i++) {
    if (!copy_name(ops[i].name, sizeof ops[i].name, w->ops[i].name) ||
        !copy_name(ops[i].kind, sizeof ops[i].kind, w->ops[i].kind))
      ok = mb_fail(err, "%s: workload '%s': op %d: name or kind longer than %d bytes", r->path, key,
                   (int)i, MB_NAME_MAX - 1);
    ops[i].flops = w->ops[i].flops;
  }
  for (int32_t i = 0; ok && i < w->n_buffers; i++) {
    const mb_buffer *b = &w->buffers[i];
    if (!copy_name(bufs[i].name, sizeof bufs[i].name, b->name))
      ok = mb_fail(err, "%s: workload '%s': buffer %d: name longer than %d bytes", r->path, key,
                   (int)i, MB_NAME_MAX - 1);
    bufs[i].size = b->size;
    bufs[i].start = b->start;
    bufs[i].end = b->end;
    bufs[i].pinned = b->pinned;
    bufs[i].has_benefit = b->has_benefit;
    bufs[i].benefit_ps = b->benefit_ps;
  }
  for (int32_t i = 0; ok && i < w->n_uses; i++) {
    uses[i].op = w->uses[i].op;
    uses[i].buffer = w->uses[i].buffer;
    uses[i].bytes_read = w->uses[i].bytes_read;
    uses[i].bytes_written = w->uses[i].bytes_written;
  }
  hid_t g = -1;
  if (ok) {
    g = make_parents(r->file, path) ? group_create(r->file, path, 2) : -1;
    if (g < 0) ok = h5_fail(err, r, "cannot create %s", path);
  }
  struct {
    const char *name;
    hid_t (*type)(void);
    hsize_t n;
    const void *data;
  } tabs[3] = {{"ops", op_type, (hsize_t)w->n_ops, ops},
               {"buffers", buf_type, (hsize_t)w->n_buffers, bufs},
               {"uses", use_type, (hsize_t)w->n_uses, uses}};
  for (int i = 0; ok && i < 3; i++) {
    hid_t t = tabs[i].type();
    hid_t d = create_table(g, tabs[i].name, t, tabs[i].n, true);
    ok = d >= 0 && write_rows(d, t, 0, tabs[i].n, tabs[i].data);
    if (d >= 0) H5Dclose(d);
    H5Tclose(t);
    if (!ok) h5_fail(err, r, "cannot write %s/%s", path, tabs[i].name);
  }
  if (ok) {
    int64_t sched = w->schedule_length, slow = w->slow_time_ps;
    ok = set_str_attr(g, "name", key) && set_str_attr(g, "workload_name", w->name) &&
         set_str_attr(g, "source", w->source ? w->source : "") &&
         set_str_attr(g, "sha256", sha256 ? sha256 : "") &&
         set_num_attr(g, "schedule_length", H5T_NATIVE_INT64, &sched) &&
         set_num_attr(g, "slow_time_ps", H5T_NATIVE_INT64, &slow);
    if (!ok) h5_fail(err, r, "cannot write the attributes of %s", path);
  }
  if (g >= 0) H5Gclose(g);
  free(ops);
  free(bufs);
  free(uses);
  return ok;
}

bool mb_results_has_workload(mb_results *r, const char *key) {
  char enc[3 * MB_RES_WORKLOAD], path[4 * MB_RES_WORKLOAD];
  if (!mb_results_encode_name(key, enc, sizeof enc)) return false;
  snprintf(path, sizeof path, "/workloads/%s", enc);
  return path_exists(r->file, path);
}

mb_workload *mb_results_get_workload(mb_results *r, const char *key, char sha256[MB_RES_SHA],
                                     mb_error *err) {
  char enc[3 * MB_RES_WORKLOAD], path[4 * MB_RES_WORKLOAD];
  if (!mb_results_encode_name(key, enc, sizeof enc)) {
    mb_fail(err, "%s: workload name '%s' is too long", r->path, key);
    return NULL;
  }
  snprintf(path, sizeof path, "/workloads/%s", enc);
  if (!path_exists(r->file, path)) {
    mb_fail(err, "%s: no stored copy of workload '%s' (%s)", r->path, key, path);
    return NULL;
  }
  hid_t g = H5Gopen2(r->file, path, H5P_DEFAULT);
  if (g < 0) {
    h5_fail(err, r, "cannot open %s", path);
    return NULL;
  }
  op_rec *ops = NULL;
  buf_rec *bufs = NULL;
  use_rec *uses = NULL;
  int64_t n_ops = 0, n_bufs = 0, n_uses = 0, sched = 0, slow = 0;
  hid_t ot = op_type(), bt = buf_type(), ut = use_type();
  /* the tables by their full paths, which the errors then name */
  char ops_path[sizeof path + 8], bufs_path[sizeof path + 8], uses_path[sizeof path + 8];
  snprintf(ops_path, sizeof ops_path, "%s/ops", path);
  snprintf(bufs_path, sizeof bufs_path, "%s/buffers", path);
  snprintf(uses_path, sizeof uses_path, "%s/uses", path);
  bool ok = read_table(r, r->file, ops_path, ot, sizeof *ops, (void **)&ops, &n_ops, err) &&
            read_table(r, r->file, bufs_path, bt, sizeof *bufs, (void **)&bufs, &n_bufs, err) &&
            read_table(r, r->file, uses_path, ut, sizeof *uses, (void **)&uses, &n_uses, err);
  H5Tclose(ot);
  H5Tclose(bt);
  H5Tclose(ut);
  char *name = ok ? get_str_attr(g, "workload_name") : NULL;
  char *source = ok ? get_str_attr(g, "source") : NULL;
  char *sha = ok ? get_str_attr(g, "sha256") : NULL;
  if (ok && (!name || !source || !sha || !get_int_attr(g, "schedule_length", &sched) ||
             !get_int_attr(g, "slow_time_ps", &slow)))
    ok = mb_fail(err,
                 "%s: %s: attribute workload_name, source, sha256, schedule_length or "
                 "slow_time_ps is missing",
                 r->path, path);
  else if (ok && strlen(sha) >= MB_RES_SHA) /* not cut to fit: a cut hash could match */
    ok = mb_fail(err, "%s: %s: attribute 'sha256' is longer than %d bytes", r->path, path,
                 MB_RES_SHA - 1);
  for (int64_t i = 0; ok && i < n_ops; i++) {
    TERMINATE(ops[i].name);
    TERMINATE(ops[i].kind);
  }
  for (int64_t i = 0; ok && i < n_bufs; i++) TERMINATE(bufs[i].name);
  if (ok && (n_ops > INT32_MAX || n_bufs > INT32_MAX || n_uses > INT32_MAX))
    ok = mb_fail(err, "%s: %s: tables too large", r->path, path);
  mb_workload *w = NULL;
  if (ok) {
    mb_workload_builder *b = mb_builder_new(name, source);
    ok = b != NULL;
    for (int64_t i = 0; ok && i < n_ops; i++)
      ok = mb_builder_add_op(b, ops[i].name, ops[i].kind, ops[i].flops) == (int32_t)i;
    for (int64_t i = 0; ok && i < n_bufs; i++) {
      ok = mb_builder_add_buffer(b, bufs[i].name, bufs[i].size, bufs[i].start, bufs[i].end,
                                 bufs[i].pinned != 0) == (int32_t)i;
      if (ok && bufs[i].has_benefit) mb_builder_set_benefit(b, (int32_t)i, bufs[i].benefit_ps);
    }
    for (int64_t i = 0; ok && i < n_uses; i++) {
      const use_rec *u = &uses[i];
      if (u->buffer < 0 || u->buffer >= n_bufs || u->op < 0 || u->op >= n_ops) {
        ok = mb_fail(err, "%s: %s/uses row %" PRId64 ": op %d or buffer %d out of range", r->path,
                     path, i, (int)u->op, (int)u->buffer);
        break;
      }
      ok = mb_builder_add_use(b, u->buffer, u->op, u->bytes_read, u->bytes_written);
    }
    if (ok && n_ops == 0) {
      if (sched < 0 || sched > INT32_MAX)
        ok = mb_fail(err, "%s: %s: schedule_length %" PRId64 " out of range", r->path, path, sched);
      else
        mb_builder_set_schedule(b, (int32_t)sched, slow);
    }
    if (ok) {
      w = mb_builder_finish(b, err);
      b = NULL;
      if (!w) mb_fail_prefix(err, "%s: stored workload %s", r->path, path);
    } else if (b && err && !err->message[0]) {
      mb_fail(err, "%s: %s: out of memory rebuilding the workload", r->path, path);
    }
    mb_builder_free(b);
  }
  if (w && sha256) snprintf(sha256, MB_RES_SHA, "%s", sha);
  free(name);
  free(source);
  free(sha);
  free(ops);
  free(bufs);
  free(uses);
  H5Gclose(g);
  return w;
}

static herr_t collect_link(hid_t g, const char *name, const H5L_info_t *info, void *data) {
  attr_list *l = data;
  if (l->n == l->cap) {
    int32_t cap = l->cap ? l->cap * 2 : 32;
    char **k = realloc(l->keys, (size_t)cap * sizeof *k);
    if (!k) return -1;
    l->keys = k;
    l->cap = cap;
  }
  char dec[MB_RES_WORKLOAD * 3];
  if (!mb_results_decode_name(name, dec, sizeof dec)) return -1;
  l->keys[l->n] = strdup(dec);
  if (!l->keys[l->n]) return -1;
  l->n++;
  return 0;
}

bool mb_results_workload_keys(mb_results *r, char ***keys, int32_t *n, mb_error *err) {
  attr_list l = {0};
  hid_t g = H5Gopen2(r->file, "/workloads", H5P_DEFAULT);
  if (g < 0) return h5_fail(err, r, "group /workloads is missing");
  hsize_t idx = 0;
  herr_t st = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_link, &l);
  H5Gclose(g);
  if (st < 0) {
    mb_results_free_strings(l.keys, l.n);
    return h5_fail(err, r, "cannot list /workloads");
  }
  *keys = l.keys;
  *n = l.n;
  return true;
}

/* Opens /workloads/<key>; -1 with err set when the copy is missing. */
static hid_t open_workload_group(mb_results *r, const char *key, char *path, size_t n,
                                 mb_error *err) {
  char enc[3 * MB_RES_WORKLOAD];
  if (!mb_results_encode_name(key, enc, sizeof enc) ||
      snprintf(path, n, "/workloads/%s", enc) >= (int)n) {
    mb_fail(err, "%s: workload name '%s' is too long", r->path, key);
    return -1;
  }
  if (!path_exists(r->file, path)) {
    mb_fail(err, "%s: no stored copy of workload '%s' (%s)", r->path, key, path);
    return -1;
  }
  hid_t g = H5Gopen2(r->file, path, H5P_DEFAULT);
  if (g < 0) h5_fail(err, r, "cannot open %s", path);
  return g;
}

bool mb_results_set_workload_split(mb_results *r, const char *key, const char *split,
                                   mb_error *err) {
  char path[4 * MB_RES_WORKLOAD];
  if (strlen(split) >= MB_RES_SPLIT)
    return mb_fail(err, "%s: workload '%s': split '%s' is longer than %d bytes", r->path, key,
                   split, MB_RES_SPLIT - 1);
  hid_t g = open_workload_group(r, key, path, sizeof path, err);
  if (g < 0) return false;
  bool ok = set_str_attr(g, "split", split);
  H5Gclose(g);
  if (!ok) return h5_fail(err, r, "cannot write attribute 'split' of %s", path);
  return true;
}

bool mb_results_get_workload_split(mb_results *r, const char *key, char split[MB_RES_SPLIT],
                                   mb_error *err) {
  char path[4 * MB_RES_WORKLOAD];
  split[0] = '\0';
  hid_t g = open_workload_group(r, key, path, sizeof path, err);
  if (g < 0) return false;
  bool ok = true;
  mb_h5attr_state state;
  char *v = mb_h5attr_read_string(g, "split", &state, err);
  if (state == MB_H5ATTR_ERROR) { /* not taken for absent: a split would be lost unnoticed */
    ok = mb_fail_prefix(err, "%s: %s", r->path, path);
  } else if (state == MB_H5ATTR_PRESENT) { /* absent in files written before splits */
    if (!v || strlen(v) >= MB_RES_SPLIT)
      ok = mb_fail(err, "%s: %s: attribute 'split' is not a string of at most %d bytes", r->path,
                   path, MB_RES_SPLIT - 1);
    else
      memcpy(split, v, strlen(v) + 1);
  }
  free(v);
  H5Gclose(g);
  return ok;
}

bool mb_results_get_workload_sha256(mb_results *r, const char *key, char sha256[MB_RES_SHA],
                                    mb_error *err) {
  char path[4 * MB_RES_WORKLOAD];
  sha256[0] = '\0';
  hid_t g = open_workload_group(r, key, path, sizeof path, err);
  if (g < 0) return false;
  char *v = get_str_attr(g, "sha256");
  bool ok = v && strlen(v) < MB_RES_SHA;
  if (ok)
    memcpy(sha256, v, strlen(v) + 1);
  else
    mb_fail(err, "%s: %s: attribute 'sha256' is missing or longer than %d bytes", r->path, path,
            MB_RES_SHA - 1);
  free(v);
  H5Gclose(g);
  return ok;
}

/* ---- assignments and curves ---- */

static bool write_offsets(mb_results *r, const char *path, const mb_assignment *a, mb_error *err) {
  if (path_exists(r->file, path) && H5Ldelete(r->file, path, H5P_DEFAULT) < 0)
    return h5_fail(err, r, "cannot replace %s", path);
  hsize_t dims[1] = {(hsize_t)a->n_buffers};
  hid_t sp = H5Screate_simple(1, dims, NULL);
  hid_t d = make_parents(r->file, path) ? H5Dcreate2(r->file, path, H5T_STD_I64LE, sp, H5P_DEFAULT,
                                                     H5P_DEFAULT, H5P_DEFAULT)
                                        : -1;
  bool ok = d >= 0 && (a->n_buffers == 0 || H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL,
                                                     H5P_DEFAULT, a->offset) >= 0);
  if (d >= 0) H5Dclose(d);
  H5Sclose(sp);
  if (!ok) return h5_fail(err, r, "cannot write %s", path);
  return true;
}

static mb_assignment *read_offsets(mb_results *r, const char *path, bool *absent, mb_error *err) {
  if (absent) *absent = false;
  if (!path_exists(r->file, path)) {
    if (absent) *absent = true;
    mb_fail(err, "%s: %s is missing", r->path, path);
    return NULL;
  }
  hid_t d = H5Dopen2(r->file, path, H5P_DEFAULT);
  if (d < 0) {
    h5_fail(err, r, "cannot open %s", path);
    return NULL;
  }
  hsize_t n = table_rows(d);
  mb_assignment *a = n <= INT32_MAX ? mb_assignment_new((int32_t)n) : NULL;
  if (!a) {
    mb_fail(err, "%s: %s: cannot hold %llu offsets", r->path, path, (unsigned long long)n);
  } else if (n > 0 && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, a->offset) < 0) {
    h5_fail(err, r, "cannot read %s", path);
    mb_assignment_free(a);
    a = NULL;
  }
  H5Dclose(d);
  return a;
}

static bool row_path(const mb_results *r, const mb_result_row *row, const char *prefix, char *out,
                     size_t n, mb_error *err) {
  char seed[32];
  snprintf(seed, sizeof seed, "%" PRId64, row->seed);
  if (!object_path(out, n, prefix, row->workload, row->hardware, row->solver, seed))
    return mb_fail(err, "%s: row %" PRId64 ": names too long for a path", r->path, row->task);
  return true;
}

bool mb_results_append_baseline(mb_results *r, const mb_baseline_row *row,
                                const mb_assignment *heuristic, mb_error *err) {
  if (heuristic) {
    char path[1024];
    if (!object_path(path, sizeof path, "/assignments", row->workload, row->hardware, NULL,
                     "baseline"))
      return mb_fail(err, "%s: baseline %s/%s: names too long", r->path, row->workload,
                     row->hardware);
    if (!write_offsets(r, path, heuristic, err) || !mb_results_flush(r, err)) return false;
  }
  hid_t t = baseline_type();
  bool ok = append_to(r, "baselines", t, row, err);
  H5Tclose(t);
  return ok;
}

bool mb_results_append(mb_results *r, const mb_result_row *row, const mb_assignment *a,
                       const double *curve_step, const double *curve_return, int32_t curve_len,
                       double curve_heuristic, mb_error *err) {
  char path[1024];
  if (a) {
    if (!row_path(r, row, "/assignments", path, sizeof path, err) ||
        !write_offsets(r, path, a, err))
      return false;
  }
  if (curve_len > 0) {
    if (!row_path(r, row, "/curves", path, sizeof path, err)) return false;
    if (path_exists(r->file, path) && H5Ldelete(r->file, path, H5P_DEFAULT) < 0)
      return h5_fail(err, r, "cannot replace %s", path);
    curve_rec *c = malloc((size_t)curve_len * sizeof *c);
    if (!c) return mb_fail(err, "%s: out of memory writing %s", r->path, path);
    for (int32_t i = 0; i < curve_len; i++) {
      c[i].step = curve_step[i];
      c[i].ret = curve_return[i];
    }
    hid_t t = curve_type();
    hid_t d = create_table(r->file, path, t, (hsize_t)curve_len, true);
    bool ok = d >= 0 && write_rows(d, t, 0, (hsize_t)curve_len, c);
    if (ok && isfinite(curve_heuristic))
      ok = set_num_attr(d, CURVE_HEURISTIC, H5T_NATIVE_DOUBLE, &curve_heuristic);
    if (d >= 0) H5Dclose(d);
    H5Tclose(t);
    free(c);
    if (!ok) return h5_fail(err, r, "cannot write %s", path);
  }
  /* The row goes last, after a flush: a kill then leaves at worst an assignment without its
   * row (replaced when the row is written again), never a row without its assignment. */
  if ((a || curve_len > 0) && !mb_results_flush(r, err)) return false;
  hid_t t = result_type();
  bool ok = append_to(r, "results", t, row, err);
  H5Tclose(t);
  return ok;
}

bool mb_results_read_rows(mb_results *r, mb_result_row **rows, int64_t *n, mb_error *err) {
  hid_t t = result_type();
  bool ok = read_table(r, r->file, "results", t, sizeof **rows, (void **)rows, n, err);
  H5Tclose(t);
  for (int64_t i = 0; ok && i < *n; i++) {
    mb_result_row *x = &(*rows)[i];
    TERMINATE(x->workload);
    TERMINATE(x->hardware);
    TERMINATE(x->solver);
    TERMINATE(x->status);
    TERMINATE(x->note);
  }
  return ok;
}

bool mb_results_read_baselines(mb_results *r, mb_baseline_row **rows, int64_t *n, mb_error *err) {
  hid_t t = baseline_type();
  bool ok = read_table(r, r->file, "baselines", t, sizeof **rows, (void **)rows, n, err);
  H5Tclose(t);
  for (int64_t i = 0; ok && i < *n; i++) {
    mb_baseline_row *x = &(*rows)[i];
    TERMINATE(x->workload);
    TERMINATE(x->hardware);
    TERMINATE(x->profile_sha256);
    TERMINATE(x->bound_status);
    TERMINATE(x->bound_note);
  }
  return ok;
}

bool mb_results_write_row(mb_results *r, int64_t i, const mb_result_row *row, mb_error *err) {
  hid_t d = H5Dopen2(r->file, "results", H5P_DEFAULT);
  if (d < 0) return h5_fail(err, r, "table /results is missing");
  hsize_t rows = table_rows(d);
  hid_t t = result_type();
  bool ok = i >= 0 && (hsize_t)i < rows && write_rows(d, t, (hsize_t)i, 1, row);
  H5Tclose(t);
  H5Dclose(d);
  if (!ok) return h5_fail(err, r, "cannot rewrite row %" PRId64 " of /results", i);
  return true;
}

bool mb_results_truncate(mb_results *r, int64_t n_results, int64_t n_baselines, mb_error *err) {
  const char *names[2] = {"results", "baselines"};
  int64_t ns[2] = {n_results, n_baselines};
  for (int i = 0; i < 2; i++) {
    hid_t d = H5Dopen2(r->file, names[i], H5P_DEFAULT);
    if (d < 0) return h5_fail(err, r, "table /%s is missing", names[i]);
    hsize_t rows = table_rows(d);
    bool ok = true;
    if (ns[i] >= 0 && (hsize_t)ns[i] < rows) {
      hsize_t nd[1] = {(hsize_t)ns[i]};
      ok = H5Dset_extent(d, nd) >= 0;
    }
    H5Dclose(d);
    if (!ok) return h5_fail(err, r, "cannot shrink /%s to %" PRId64 " rows", names[i], ns[i]);
  }
  return true;
}

mb_assignment *mb_results_get_assignment(mb_results *r, const mb_result_row *row, bool *absent,
                                         mb_error *err) {
  char path[1024];
  if (!row_path(r, row, "/assignments", path, sizeof path, err)) return NULL;
  return read_offsets(r, path, absent, err);
}

mb_assignment *mb_results_get_baseline_assignment(mb_results *r, const mb_baseline_row *row,
                                                  bool *absent, mb_error *err) {
  char path[1024];
  if (!object_path(path, sizeof path, "/assignments", row->workload, row->hardware, NULL,
                   "baseline")) {
    mb_fail(err, "%s: baseline %s/%s: names too long", r->path, row->workload, row->hardware);
    return NULL;
  }
  return read_offsets(r, path, absent, err);
}

bool mb_results_put_assignment(mb_results *r, const mb_result_row *row, const mb_assignment *a,
                               mb_error *err) {
  char path[1024];
  return row_path(r, row, "/assignments", path, sizeof path, err) && write_offsets(r, path, a, err);
}

bool mb_results_get_curve(mb_results *r, const mb_result_row *row, double **step, double **ret,
                          int32_t *len, mb_error *err) {
  *step = *ret = NULL;
  *len = 0;
  char path[1024];
  if (!row_path(r, row, "/curves", path, sizeof path, err)) return false;
  if (!path_exists(r->file, path)) return true;
  curve_rec *c = NULL;
  int64_t n = 0;
  hid_t t = curve_type();
  bool ok = read_table(r, r->file, path, t, sizeof *c, (void **)&c, &n, err);
  H5Tclose(t);
  if (!ok) return false;
  if (n > INT32_MAX) {
    free(c);
    return mb_fail(err, "%s: %s: too many points", r->path, path);
  }
  if (n > 0) {
    *step = malloc((size_t)n * sizeof **step);
    *ret = malloc((size_t)n * sizeof **ret);
    if (!*step || !*ret) {
      free(*step);
      free(*ret);
      *step = *ret = NULL;
      free(c);
      return mb_fail(err, "%s: out of memory reading %s", r->path, path);
    }
    for (int64_t i = 0; i < n; i++) {
      (*step)[i] = c[i].step;
      (*ret)[i] = c[i].ret;
    }
  }
  *len = (int32_t)n;
  free(c);
  return true;
}

bool mb_results_get_curve_heuristic(mb_results *r, const mb_result_row *row, double *heuristic,
                                    mb_error *err) {
  *heuristic = NAN;
  char path[1024];
  if (!row_path(r, row, "/curves", path, sizeof path, err)) return false;
  if (!path_exists(r->file, path)) return true;
  hid_t d = H5Dopen2(r->file, path, H5P_DEFAULT);
  if (d < 0) return h5_fail(err, r, "cannot open %s", path);
  /* absent in files written before it was stored (NaN); an error is not taken for that */
  bool ok = true;
  mb_h5attr_state state = mb_h5attr_find(d, CURVE_HEURISTIC);
  if (state == MB_H5ATTR_ERROR) {
    h5_fail(err, r, "%s: attribute '%s': cannot read it (damaged file?)", path, CURVE_HEURISTIC);
    H5Dclose(d);
    return false;
  }
  if (state == MB_H5ATTR_PRESENT) {
    hid_t a = H5Aopen(d, CURVE_HEURISTIC, H5P_DEFAULT);
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
    hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
    ok = ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_FLOAT &&
         H5Sget_simple_extent_npoints(sp) == 1 && H5Aread(a, H5T_NATIVE_DOUBLE, heuristic) >= 0;
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    if (a >= 0) H5Aclose(a);
    if (!ok) *heuristic = NAN;
  }
  H5Dclose(d);
  if (!ok)
    return mb_fail(err, "%s: %s: attribute '%s' is not a number", r->path, path, CURVE_HEURISTIC);
  return true;
}

int64_t mb_results_torn_rows(const mb_results *r) { return r->torn_rows; }

/* ---- everything at once ---- */

/* The outcome of reading many parts: whether all read, and the first failure's message. */
typedef struct read_tally {
  bool ok;
  mb_error first, last; /* last: where each read puts its error */
} read_tally;

static bool tally(read_tally *t, bool part_ok) {
  if (!part_ok && t->ok) t->first = t->last;
  t->ok = t->ok && part_ok;
  return part_ok;
}

bool mb_results_read_all(mb_results *r, mb_error *err) {
  /* every part is read even after one failed, as a reader that skips the failed part reads the
   * others; the attributes last, as export and report do (in a child of mb_results_open, the
   * attributes listed first made libhdf5 miss crashes that export then met) */
  read_tally t = {.ok = true};
  char **keys = NULL, **values = NULL, **workloads = NULL;
  int32_t n_attrs = 0, n_workloads = 0;
  mb_result_row *rows = NULL;
  int64_t n_rows = 0;
  if (tally(&t, mb_results_read_rows(r, &rows, &n_rows, &t.last))) {
    for (int64_t i = 0; i < n_rows; i++) {
      bool absent = false;
      mb_assignment *a = mb_results_get_assignment(r, &rows[i], &absent, &t.last);
      tally(&t, a || absent);
      mb_assignment_free(a);
      double *step = NULL, *ret = NULL, heuristic = 0;
      int32_t len = 0;
      tally(&t, mb_results_get_curve(r, &rows[i], &step, &ret, &len, &t.last));
      tally(&t, mb_results_get_curve_heuristic(r, &rows[i], &heuristic, &t.last));
      free(step);
      free(ret);
    }
    free(rows);
  }
  mb_baseline_row *base = NULL;
  int64_t n_base = 0;
  if (tally(&t, mb_results_read_baselines(r, &base, &n_base, &t.last))) {
    for (int64_t i = 0; i < n_base; i++) {
      bool absent = false;
      mb_assignment *a = mb_results_get_baseline_assignment(r, &base[i], &absent, &t.last);
      tally(&t, a || absent);
      mb_assignment_free(a);
    }
    free(base);
  }
  if (tally(&t, mb_results_workload_keys(r, &workloads, &n_workloads, &t.last))) {
    for (int32_t i = 0; i < n_workloads; i++) {
      char sha[MB_RES_SHA], split[MB_RES_SPLIT];
      mb_workload *w = mb_results_get_workload(r, workloads[i], sha, &t.last);
      tally(&t, w != NULL);
      mb_workload_free(w);
      tally(&t, mb_results_get_workload_split(r, workloads[i], split, &t.last));
    }
    mb_results_free_strings(workloads, n_workloads);
  }
  if (tally(&t, mb_results_list_attrs(r, &keys, &values, &n_attrs, &t.last))) {
    mb_results_free_strings(keys, n_attrs);
    mb_results_free_strings(values, n_attrs);
  }
  if (!t.ok && err) *err = t.first;
  return t.ok;
}
