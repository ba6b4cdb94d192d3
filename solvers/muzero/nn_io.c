#include "nn_io.h"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "file_seal.h"
#include "h5attr.h"
#include "sha256.h"

struct mb_nn_file {
  hid_t file;
  bool writing;
  char path[1024];     /* the target */
  mb_atomic_file *out; /* writing: the temporary file beside it (atomic_file.h) */
  H5E_auto2_t old_func;
  void *old_data;
  int64_t checked, unchecked; /* datasets read with a matching checksum, and without one */
};

static void quiet_hdf5(mb_nn_file *f) {
  /* As suite/results.c does: no exit-time cleanup, which HDF5 1.10 turns into a crash or an
   * "infinite loop closing library" dump after it failed to read a damaged file (every file is
   * closed explicitly). Only takes effect before the library's first use. */
  H5dont_atexit();
  H5Eget_auto2(H5E_DEFAULT, &f->old_func, &f->old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* "PATH: what", with HDF5's innermost message when the call that failed left one (a damaged
 * file: "incorrect metadata checksum after all read attempts"). */
static bool nn_fail(const mb_nn_file *f, mb_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool nn_fail(const mb_nn_file *f, mb_error *err, const char *fmt, ...) {
  char what[768], why[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  mb_h5attr_reason(why, sizeof why);
  return mb_fail(err, "%s: %s%s%s", f->path, what, why[0] ? ": " : "", why);
}

/* File access: closing the file closes every object still open in it (as in results.c), so an
 * error path that leaves one open cannot keep the file open. */
static hid_t file_access(bool create) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
    H5Pclose(fapl);
    return -1;
  }
  /* Written in HDF5 1.10's own format: a checksum on every piece of metadata (superblock v3, v2
   * object headers, fixed and extensible chunk indexes), so damage is an error, not parsed into
   * a crash. Its superblock's "open for writing" flag, which a kill leaves set, never reaches
   * the real name: only a closed file is renamed there. */
  if (fapl >= 0 && create && H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110) < 0) {
    H5Pclose(fapl);
    return -1;
  }
  return fapl;
}

/* Closes the file (a temporary not committed is removed) and frees f. */
static void release(mb_nn_file *f) {
  if (f->file >= 0) H5Fclose(f->file);
  mb_atomic_file_abort(f->out);
  H5Eset_auto2(H5E_DEFAULT, f->old_func, f->old_data);
  free(f);
}

static mb_nn_file *file_new(const char *path, mb_error *err) {
  if (!path || !*path || strlen(path) >= sizeof((mb_nn_file *)0)->path)
    return mb_fail(err, "checkpoint: path '%s' empty or too long", path ? path : ""), NULL;
  mb_nn_file *f = calloc(1, sizeof *f);
  if (!f) return mb_fail(err, "%s: out of memory", path), NULL;
  f->file = -1;
  snprintf(f->path, sizeof f->path, "%s", path);
  quiet_hdf5(f);
  return f;
}

mb_nn_file *mb_nn_file_create(const char *path, mb_error *err) {
  mb_nn_file *f = file_new(path, err);
  if (!f) return NULL;
  f->writing = true;
  /* a checkpoint is an ordinary, shareable result: the permissions of a new file (0666 & ~umask),
   * not mkstemp's 0600; and hours of training: its name is made durable too (sync_dir) */
  f->out = mb_atomic_file_open_named(path, &(mb_atomic_options){.sync_dir = true}, err);
  if (!f->out) {
    release(f);
    return NULL;
  }
  const char *tmp = mb_atomic_file_temp_path(f->out);
  hid_t fapl = file_access(true);
  if (fapl >= 0) f->file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (fapl >= 0) H5Pclose(fapl);
  if (f->file < 0) {
    nn_fail(f, err, "HDF5 cannot create '%s'", tmp);
    release(f);
    return NULL;
  }
  return f;
}

mb_nn_file *mb_nn_file_open(const char *path, mb_error *err) {
  mb_nn_file *f = file_new(path, err);
  if (!f) return NULL;
  if (access(path, R_OK) != 0) {
    mb_fail(err, "%s: cannot read the file", path);
    release(f);
    return NULL;
  }
  /* a sealed file (a results file given as a checkpoint) is checked before HDF5 parses it */
  mb_seal_state seal;
  if (!mb_seal_check(path, &seal, NULL, err)) {
    release(f);
    return NULL;
  }
  hid_t fapl = file_access(false);
  if (fapl >= 0) f->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  if (fapl >= 0) H5Pclose(fapl);
  if (f->file < 0) {
    char why[160];
    mb_fail(err, "%s: not an HDF5 file (or damaged)%s%s", path,
            mb_h5attr_reason(why, sizeof why)[0] ? ": " : "", why);
    release(f);
    return NULL;
  }
  return f;
}

const char *mb_nn_file_path(const mb_nn_file *f) { return f->path; }

void mb_nn_file_close(mb_nn_file *f) {
  if (f) release(f);
}

bool mb_nn_file_commit(mb_nn_file *f, mb_error *err) {
  if (!f->writing) {
    release(f);
    return true;
  }
  bool ok = H5Fclose(f->file) >= 0;
  f->file = -1;
  if (!ok) nn_fail(f, err, "HDF5 failed to close '%s'", mb_atomic_file_temp_path(f->out));
  /* fsynced before the rename makes it the checkpoint */
  if (ok) ok = mb_atomic_file_commit(f->out, err);
  if (ok) f->out = NULL; /* committed and freed; else release removes the temporary */
  release(f);
  return ok;
}

/* ---------------------------------------------------------------- checksums */

/* Every dataset carries the string attribute CHECKSUM: the SHA-256 (hex) of its elements as
 * little-endian bytes in row-major order. Checked after every read; a dataset without it (a
 * checkpoint written before checksums) loads unchecked. */
#define CHECKSUM "sha256"

static bool set_checksum(hid_t loc, const char *name, const void *x, int64_t n, size_t size) {
  char hex[65];
  mb_sha256_le_hex(x, n, size, hex);
  return H5LTset_attribute_string(loc, name, CHECKSUM, hex) >= 0;
}

/* After reading x (n elements of `size` bytes) from dataset `name`: false, naming it, when its
 * CHECKSUM attribute is not a 64-digit string or does not match; true without the attribute. */
static bool check_checksum(const mb_nn_file *f, hid_t loc, const char *where, const char *name,
                           const void *x, int64_t n, size_t size, mb_error *err) {
  htri_t has = H5Aexists_by_name(loc, name, CHECKSUM, H5P_DEFAULT);
  if (has == 0) {
    ((mb_nn_file *)f)->unchecked++; /* a counter, not the file's state */
    return true;
  }
  char stored[65] = "", hex[65];
  hid_t a = has > 0 ? H5Aopen_by_name(loc, name, CHECKSUM, H5P_DEFAULT, H5P_DEFAULT) : -1;
  hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
  hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
  bool ok = ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) == 0 &&
            H5Tget_size(ft) == sizeof stored && H5Sget_simple_extent_npoints(sp) == 1;
  if (ok) {
    hid_t mt = H5Tcopy(H5T_C_S1);
    ok = mt >= 0 && H5Tset_size(mt, sizeof stored) >= 0 && H5Aread(a, mt, stored) >= 0;
    if (mt >= 0) H5Tclose(mt);
    stored[64] = '\0';
  }
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  if (!ok || strlen(stored) != 64)
    return nn_fail(f, err, "%s/%s: attribute '%s' is not a SHA-256: the file is damaged", where,
                   name, CHECKSUM);
  mb_sha256_le_hex(x, n, size, hex);
  if (strcmp(hex, stored))
    return nn_fail(f, err, "%s/%s: the data do not match their SHA-256: the file is damaged", where,
                   name);
  ((mb_nn_file *)f)->checked++;
  return true;
}

void mb_nn_file_checksum_counts(const mb_nn_file *f, int64_t *checked, int64_t *unchecked) {
  *checked = f->checked;
  *unchecked = f->unchecked;
}

/* ---------------------------------------------------------------- tensors */

static bool link_exists(hid_t loc, const char *name) {
  return H5Lexists(loc, name, H5P_DEFAULT) > 0;
}

static hid_t open_or_create_group(hid_t loc, const char *name) {
  if (link_exists(loc, name)) return H5Gopen2(loc, name, H5P_DEFAULT);
  return H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

static bool write_tensor(const mb_nn_file *f, hid_t group, const char *where, const char *name,
                         const mb_tensor *t, mb_error *err) {
  hsize_t dims[2] = {(hsize_t)t->rows, (hsize_t)t->cols};
  long long shape[2] = {t->rows, t->cols};
  if (H5LTmake_dataset_float(group, name, 2, dims, t->data) < 0 ||
      H5LTset_attribute_long_long(group, name, "shape", shape, 2) < 0 ||
      !set_checksum(group, name, t->data, mb_tensor_size(t), sizeof *t->data))
    return nn_fail(f, err, "%s/%s: HDF5 write failed", where, name);
  return true;
}

/* Checks that dataset `name` exists in `group` with shape rows x cols (dataspace and "shape"
 * attribute agree). */
static bool check_tensor(const mb_nn_file *f, hid_t group, const char *where, const char *name,
                         const mb_tensor *t, mb_error *err) {
  htri_t e = H5Lexists(group, name, H5P_DEFAULT);
  if (e == 0)
    return nn_fail(f, err, "%s/%s: tensor missing from the file (the model has %dx%d)", where, name,
                   t->rows, t->cols);
  int rank = 0;
  /* HDF5 fails these calls on a damaged file, and says why (the checksum that did not match) */
  if (e < 0 || H5LTget_dataset_ndims(group, name, &rank) < 0)
    return nn_fail(f, err, "%s/%s: cannot read the tensor's header (damaged file?)", where, name);
  if (rank != 2) return nn_fail(f, err, "%s/%s: not a 2-D dataset (rank %d)", where, name, rank);
  hsize_t dims[2];
  H5T_class_t cls;
  size_t size;
  if (H5LTget_dataset_info(group, name, dims, &cls, &size) < 0)
    return nn_fail(f, err, "%s/%s: cannot read the tensor's header (damaged file?)", where, name);
  if (cls != H5T_FLOAT) return nn_fail(f, err, "%s/%s: not a floating-point dataset", where, name);
  if (dims[0] != (hsize_t)t->rows || dims[1] != (hsize_t)t->cols)
    return nn_fail(f, err, "%s/%s: shape %llux%llu in the file, %dx%d in the model", where, name,
                   (unsigned long long)dims[0], (unsigned long long)dims[1], t->rows, t->cols);
  long long shape[2] = {-1, -1};
  hsize_t adims = 0;
  if (H5Aexists_by_name(group, name, "shape", H5P_DEFAULT) <= 0 ||
      H5LTget_attribute_ndims(group, name, "shape", &rank) < 0 || rank != 1 ||
      H5LTget_attribute_info(group, name, "shape", &adims, &cls, &size) < 0 || adims != 2 ||
      cls != H5T_INTEGER || H5LTget_attribute_long_long(group, name, "shape", shape) < 0 ||
      shape[0] != t->rows || shape[1] != t->cols)
    return nn_fail(f, err, "%s/%s: attribute 'shape' missing or not %dx%d", where, name, t->rows,
                   t->cols);
  return true;
}

/* Fails when `group` holds a tensor the model lacks (a file of a deeper network), naming it. */
static bool check_no_extra(const mb_nn_file *f, hid_t group, const char *where,
                           const mb_nn_module *m, const char *arch, mb_error *err) {
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) return nn_fail(f, err, "%s: cannot list", where);
  for (hsize_t k = 0; k < info.nlinks; k++) {
    char name[64] = "";
    if (H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof name,
                           H5P_DEFAULT) < 0)
      return nn_fail(f, err, "%s: cannot list", where);
    bool known = false;
    for (int32_t i = 0; i < m->n_params && !known; i++) known = !strcmp(name, m->params[i].name);
    if (!known)
      return nn_fail(f, err, "%s/%s: tensor in the file is not in the model (file: %s)", where,
                     name, arch);
  }
  return true;
}

bool mb_nn_file_write_module(mb_nn_file *f, const mb_nn_module *m, mb_error *err) {
  if (!f->writing) return nn_fail(f, err, "opened for reading");
  char where[64], arch[4096];
  snprintf(where, sizeof where, "/%s", m->name);
  if (link_exists(f->file, m->name)) return nn_fail(f, err, "%s: written twice", where);
  hid_t g = H5Gcreate2(f->file, m->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return nn_fail(f, err, "%s: cannot create group", where);
  mb_nn_describe(m, arch, sizeof arch);
  int in = m->in_dim, out = m->out_dim;
  bool ok = H5LTset_attribute_string(g, ".", "architecture", arch) >= 0 &&
            H5LTset_attribute_int(g, ".", "in_dim", &in, 1) >= 0 &&
            H5LTset_attribute_int(g, ".", "out_dim", &out, 1) >= 0;
  if (!ok) nn_fail(f, err, "%s: cannot write attributes", where);
  for (int32_t i = 0; ok && i < m->n_params; i++)
    ok = write_tensor(f, g, where, m->params[i].name, &m->params[i].value, err);
  H5Gclose(g);
  return ok;
}

static void read_arch(hid_t g, char *arch, size_t n) {
  snprintf(arch, n, "unknown");
  hsize_t dims;
  H5T_class_t cls;
  size_t size;
  if (H5Aexists(g, "architecture") > 0 &&
      H5LTget_attribute_info(g, ".", "architecture", &dims, &cls, &size) >= 0 &&
      cls == H5T_STRING && size < n)
    H5LTget_attribute_string(g, ".", "architecture", arch);
}

bool mb_nn_file_read_module(mb_nn_file *f, mb_nn_module *m, mb_error *err) {
  char where[64], arch[4096];
  snprintf(where, sizeof where, "/%s", m->name);
  if (!link_exists(f->file, m->name))
    return nn_fail(f, err, "%s: no network of that name in the file", where);
  hid_t g = H5Gopen2(f->file, m->name, H5P_DEFAULT);
  if (g < 0) return nn_fail(f, err, "%s: not a group", where);
  read_arch(g, arch, sizeof arch);
  bool ok = true;
  for (int32_t i = 0; ok && i < m->n_params; i++)
    ok = check_tensor(f, g, where, m->params[i].name, &m->params[i].value, err);
  ok = ok && check_no_extra(f, g, where, m, arch, err);
  for (int32_t i = 0; ok && i < m->n_params; i++) {
    mb_tensor *t = &m->params[i].value;
    if (H5LTread_dataset_float(g, m->params[i].name, t->data) < 0)
      ok = nn_fail(f, err, "%s/%s: read failed (the module is partly loaded)", where,
                   m->params[i].name);
    else
      ok = check_checksum(f, g, where, m->params[i].name, t->data, mb_tensor_size(t),
                          sizeof *t->data, err);
  }
  H5Gclose(g);
  if (ok) mb_nn_zero_grad(m);
  return ok;
}

/* ---------------------------------------------------------------- optimiser */

static const char *ADAM_DOUBLES[] = {"lr", "beta1", "beta2", "eps", "weight_decay"};

static double *adam_field(mb_adam *opt, int i) {
  double *fields[] = {&opt->cfg.lr, &opt->cfg.beta1, &opt->cfg.beta2, &opt->cfg.eps,
                      &opt->cfg.weight_decay};
  return fields[i];
}

bool mb_nn_file_write_adam(mb_nn_file *f, const mb_adam *opt, mb_error *err) {
  if (!f->writing) return nn_fail(f, err, "opened for reading");
  if (link_exists(f->file, "adam")) return nn_fail(f, err, "/adam: written twice");
  hid_t g = H5Gcreate2(f->file, "adam", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return nn_fail(f, err, "/adam: cannot create group");
  long long step = opt->step;
  bool ok = H5LTset_attribute_long_long(g, ".", "step", &step, 1) >= 0;
  for (int i = 0; ok && i < 5; i++)
    ok = H5LTset_attribute_double(g, ".", ADAM_DOUBLES[i], adam_field((mb_adam *)opt, i), 1) >= 0;
  if (!ok) nn_fail(f, err, "/adam: cannot write attributes");
  for (int32_t i = 0; ok && i < opt->n; i++) {
    const mb_adam_slot *s = &opt->slots[i];
    char where[64], name[48];
    snprintf(where, sizeof where, "/adam/%s", s->module);
    hid_t mg = open_or_create_group(g, s->module);
    if (mg < 0) {
      ok = nn_fail(f, err, "%s: cannot create group", where);
      break;
    }
    snprintf(name, sizeof name, "%s.m", s->param->name);
    ok = write_tensor(f, mg, where, name, &s->m, err);
    snprintf(name, sizeof name, "%s.v", s->param->name);
    ok = ok && write_tensor(f, mg, where, name, &s->v, err);
    H5Gclose(mg);
  }
  H5Gclose(g);
  return ok;
}

bool mb_nn_file_read_adam(mb_nn_file *f, mb_adam *opt, mb_error *err) {
  if (!link_exists(f->file, "adam"))
    return nn_fail(f, err, "/adam: no optimiser state in the file");
  hid_t g = H5Gopen2(f->file, "adam", H5P_DEFAULT);
  if (g < 0) return nn_fail(f, err, "/adam: not a group");
  long long step = 0;
  double vals[5];
  bool ok = H5Aexists(g, "step") > 0 && H5LTget_attribute_long_long(g, ".", "step", &step) >= 0 &&
            step >= 0;
  if (!ok) nn_fail(f, err, "/adam: attribute 'step' missing or negative");
  for (int i = 0; ok && i < 5; i++)
    if (H5Aexists(g, ADAM_DOUBLES[i]) <= 0 ||
        H5LTget_attribute_double(g, ".", ADAM_DOUBLES[i], &vals[i]) < 0)
      ok = nn_fail(f, err, "/adam: attribute '%s' missing", ADAM_DOUBLES[i]);
  /* Two passes: every shape first, so a mismatch leaves the optimiser untouched. */
  for (int pass = 0; ok && pass < 2; pass++)
    for (int32_t i = 0; ok && i < opt->n; i++) {
      mb_adam_slot *s = &opt->slots[i];
      char where[64], name[48];
      snprintf(where, sizeof where, "/adam/%s", s->module);
      if (!link_exists(g, s->module)) {
        ok = nn_fail(f, err, "%s: no optimiser state for that network", where);
        break;
      }
      hid_t mg = H5Gopen2(g, s->module, H5P_DEFAULT);
      for (int k = 0; ok && k < 2; k++) {
        mb_tensor *t = k ? &s->v : &s->m;
        snprintf(name, sizeof name, "%s.%s", s->param->name, k ? "v" : "m");
        if (pass == 0)
          ok = check_tensor(f, mg, where, name, t, err);
        else if (H5LTread_dataset_float(mg, name, t->data) < 0)
          ok = nn_fail(f, err, "%s/%s: read failed", where, name);
        else
          ok = check_checksum(f, mg, where, name, t->data, mb_tensor_size(t), sizeof *t->data, err);
      }
      H5Gclose(mg);
    }
  H5Gclose(g);
  if (!ok) return false;
  opt->step = step;
  for (int i = 0; i < 5; i++) *adam_field(opt, i) = vals[i];
  return true;
}

/* ---------------------------------------------------------------- metadata */

static bool check_key(const mb_nn_file *f, const char *what, const char *key, mb_error *err) {
  size_t n = key ? strlen(key) : 0;
  if (n == 0 || n > 200)
    return nn_fail(f, err, "%s key '%s': 1..200 characters", what, key ? key : "");
  for (size_t i = 0; i < n; i++) {
    char c = key[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.'))
      return nn_fail(f, err, "%s key '%s': character '%c' not in [A-Za-z0-9_.-]", what, key, c);
  }
  return true;
}

bool mb_nn_file_set_string(mb_nn_file *f, const char *key, const char *value, mb_error *err) {
  if (!f->writing) return nn_fail(f, err, "opened for reading");
  if (!check_key(f, "metadata", key, err)) return false;
  if (!mb_h5attr_remove(f->file, key) ||
      H5LTset_attribute_string(f->file, "/", key, value ? value : "") < 0)
    return nn_fail(f, err, "attribute '%s': HDF5 write failed", key);
  return true;
}

bool mb_nn_file_set_double(mb_nn_file *f, const char *key, double value, mb_error *err) {
  if (!f->writing) return nn_fail(f, err, "opened for reading");
  if (!check_key(f, "metadata", key, err)) return false;
  if (!mb_h5attr_remove(f->file, key) || H5LTset_attribute_double(f->file, "/", key, &value, 1) < 0)
    return nn_fail(f, err, "attribute '%s': HDF5 write failed", key);
  return true;
}

static bool attr_info(mb_nn_file *f, const char *key, H5T_class_t want, hsize_t *dims, size_t *size,
                      mb_error *err) {
  if (!check_key(f, "metadata", key, err)) return false;
  H5T_class_t cls;
  int rank = -1;
  mb_h5attr_state e = mb_h5attr_find(f->file, key);
  if (e == MB_H5ATTR_ERROR)
    return nn_fail(f, err, "attribute '%s': cannot read it (damaged file?)", key);
  if (e == MB_H5ATTR_ABSENT) return nn_fail(f, err, "attribute '%s' is missing", key);
  if (H5LTget_attribute_ndims(f->file, "/", key, &rank) < 0 || rank > 1 ||
      H5LTget_attribute_info(f->file, "/", key, dims, &cls, size) < 0 || cls != want)
    return nn_fail(f, err, "attribute '%s' is not a %s", key,
                   want == H5T_STRING ? "string" : "number");
  if (rank == 0) *dims = 1;
  return true;
}

/* A string attribute's text, allocated (NULL after err): h5attr.h's reader, which results.c
 * shares (one string, fixed or variable length). */
static char *read_string(mb_nn_file *f, const char *key, mb_error *err) {
  if (!check_key(f, "metadata", key, err)) return NULL;
  char *s = mb_h5attr_read_string(f->file, key, NULL, err);
  if (!s) mb_fail_prefix(err, "%s", f->path);
  return s;
}

bool mb_nn_file_get_string(mb_nn_file *f, const char *key, char *out, int n, mb_error *err) {
  char *buf = read_string(f, key, err);
  if (!buf) return false;
  size_t size = strlen(buf);
  bool ok = size + 1 <= (size_t)n;
  if (ok) snprintf(out, (size_t)n, "%s", buf);
  free(buf);
  return ok || nn_fail(f, err, "attribute '%s': %zu characters, room for %d", key, size, n - 1);
}

char *mb_nn_file_get_string_alloc(mb_nn_file *f, const char *key, mb_error *err) {
  return read_string(f, key, err);
}

bool mb_nn_file_get_double(mb_nn_file *f, const char *key, double *value, mb_error *err) {
  hsize_t dims = 0;
  size_t size = 0;
  if (!attr_info(f, key, H5T_FLOAT, &dims, &size, err)) return false;
  if (dims != 1)
    return nn_fail(f, err, "attribute '%s': %llu values, expected 1", key,
                   (unsigned long long)dims);
  if (H5LTget_attribute_double(f->file, "/", key, value) < 0)
    return nn_fail(f, err, "attribute '%s': read failed", key);
  return true;
}

bool mb_nn_file_get_count(mb_nn_file *f, const char *key, int64_t *value, mb_error *err) {
  double v;
  if (!mb_nn_file_get_double(f, key, &v, err)) return false;
  if (!(v >= 0 && v <= 9007199254740992.0) || v != floor(v))
    return nn_fail(f, err, "attribute %s = %g: expected an integer >= 0", key, v);
  *value = (int64_t)v;
  return true;
}

/* An error (a damaged file) counts as present: the read that follows then says what failed,
 * where "absent" would silently take an older file's default (h5attr.h; results.c's
 * mb_results_has_attr answers the same). */
bool mb_nn_file_has(mb_nn_file *f, const char *key) {
  return f->file >= 0 && mb_h5attr_find(f->file, key) != MB_H5ATTR_ABSENT;
}

bool mb_nn_file_write_series(mb_nn_file *f, const char *name, const double *x, int64_t n,
                             mb_error *err) {
  if (!f->writing) return nn_fail(f, err, "opened for reading");
  if (!check_key(f, "series", name, err)) return false;
  if (n < 0) return nn_fail(f, err, "/series/%s: length %lld < 0", name, (long long)n);
  hid_t g = open_or_create_group(f->file, "series");
  if (g < 0) return nn_fail(f, err, "/series: cannot create group");
  hsize_t dims[1] = {(hsize_t)n};
  double dummy = 0;
  bool ok = !link_exists(g, name) &&
            H5LTmake_dataset_double(g, name, 1, dims, n ? x : &dummy) >= 0 &&
            set_checksum(g, name, x, n, sizeof *x);
  H5Gclose(g);
  return ok || nn_fail(f, err, "/series/%s: HDF5 write failed (or written twice)", name);
}

bool mb_nn_file_has_series(mb_nn_file *f, const char *name) {
  if (f->file < 0) return false;
  htri_t e = H5Lexists(f->file, "series", H5P_DEFAULT);
  if (e <= 0) return e < 0; /* as mb_nn_file_has: an error counts as present */
  hid_t g = H5Gopen2(f->file, "series", H5P_DEFAULT);
  if (g < 0) return true;
  bool has = H5Lexists(g, name, H5P_DEFAULT) != 0;
  H5Gclose(g);
  return has;
}

bool mb_nn_file_read_series(mb_nn_file *f, const char *name, double **x, int64_t *n,
                            mb_error *err) {
  *x = NULL;
  *n = 0;
  if (!check_key(f, "series", name, err)) return false;
  if (!link_exists(f->file, "series")) return nn_fail(f, err, "/series/%s: missing", name);
  hid_t g = H5Gopen2(f->file, "series", H5P_DEFAULT);
  if (g < 0) return nn_fail(f, err, "/series: not a group");
  int rank = 0;
  hsize_t dims[1] = {0};
  H5T_class_t cls;
  size_t size;
  bool ok = link_exists(g, name) && H5LTget_dataset_ndims(g, name, &rank) >= 0 && rank == 1 &&
            H5LTget_dataset_info(g, name, dims, &cls, &size) >= 0 && cls == H5T_FLOAT;
  if (!ok) {
    H5Gclose(g);
    return nn_fail(f, err, "/series/%s: missing or not a 1-D float dataset", name);
  }
  if (dims[0] > 0) {
    *x = malloc((size_t)dims[0] * sizeof **x);
    ok = *x && H5LTread_dataset_double(g, name, *x) >= 0;
  }
  if (!ok) nn_fail(f, err, "/series/%s: read failed", name);
  ok = ok && check_checksum(f, g, "/series", name, *x, (int64_t)dims[0], sizeof **x, err);
  H5Gclose(g);
  if (!ok) {
    free(*x);
    *x = NULL;
    return false;
  }
  *n = (int64_t)dims[0];
  return true;
}

/* ---------------------------------------------------------------- arrays */

static const struct {
  const char *name;
  size_t size;
  H5T_class_t cls;
  bool is_signed;
} DTYPES[] = {{"uint8", 1, H5T_INTEGER, false},
              {"int32", 4, H5T_INTEGER, true},
              {"float32", 4, H5T_FLOAT, true},
              {"float64", 8, H5T_FLOAT, true}};

static hid_t dtype_hdf5(mb_nn_dtype t) {
  switch (t) {
    case MB_NN_U8:
      return H5T_NATIVE_UINT8;
    case MB_NN_I32:
      return H5T_NATIVE_INT32;
    case MB_NN_F32:
      return H5T_NATIVE_FLOAT;
    case MB_NN_F64:
      return H5T_NATIVE_DOUBLE;
  }
  return -1;
}

static bool dtype_ok(mb_nn_dtype t) { return t >= MB_NN_U8 && t <= MB_NN_F64; }

bool mb_nn_file_write_array(mb_nn_file *f, const char *name, mb_nn_dtype type, const void *x,
                            int64_t n, mb_error *err) {
  if (!f->writing) return nn_fail(f, err, "opened for reading");
  if (!check_key(f, "array", name, err)) return false;
  if (!dtype_ok(type)) return nn_fail(f, err, "/arrays/%s: unknown type %d", name, type);
  if (n < 0) return nn_fail(f, err, "/arrays/%s: length %lld < 0", name, (long long)n);
  hid_t g = open_or_create_group(f->file, "arrays");
  if (g < 0) return nn_fail(f, err, "/arrays: cannot create group");
  hsize_t dims[1] = {(hsize_t)n};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  bool ok = space >= 0 && dcpl >= 0 && !link_exists(g, name);
  if (ok && n > 0) {
    /* chunks of about 1 MiB: small enough for deflate's window to matter, few enough to index */
    hsize_t chunk[1] = {(hsize_t)(((int64_t)1 << 20) / (int64_t)DTYPES[type].size)};
    if ((int64_t)chunk[0] > n) chunk[0] = (hsize_t)n;
    ok = H5Pset_chunk(dcpl, 1, chunk) >= 0 && H5Pset_shuffle(dcpl) >= 0 &&
         H5Pset_deflate(dcpl, 1) >= 0;
  }
  hid_t ds = ok ? H5Dcreate2(g, name, dtype_hdf5(type), space, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
  ok = ds >= 0 && (n == 0 || H5Dwrite(ds, dtype_hdf5(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
  if (ds >= 0) H5Dclose(ds);
  ok = ok && set_checksum(g, name, x, n, DTYPES[type].size);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  H5Gclose(g);
  return ok || nn_fail(f, err, "/arrays/%s: HDF5 write failed (or written twice)", name);
}

bool mb_nn_file_read_array(mb_nn_file *f, const char *name, mb_nn_dtype type, void *x, int64_t n,
                           mb_error *err) {
  if (!check_key(f, "array", name, err)) return false;
  if (!dtype_ok(type)) return nn_fail(f, err, "/arrays/%s: unknown type %d", name, type);
  if (f->file < 0 || !link_exists(f->file, "arrays"))
    return nn_fail(f, err, "/arrays/%s: missing", name);
  hid_t g = H5Gopen2(f->file, "arrays", H5P_DEFAULT);
  if (g < 0) return nn_fail(f, err, "/arrays: not a group");
  hid_t ds = link_exists(g, name) ? H5Dopen2(g, name, H5P_DEFAULT) : -1;
  hid_t space = ds >= 0 ? H5Dget_space(ds) : -1;
  hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
  hsize_t dims[1] = {0};
  bool found = ds >= 0 && space >= 0 && ft >= 0 && H5Sget_simple_extent_ndims(space) == 1 &&
               H5Sget_simple_extent_dims(space, dims, NULL) == 1;
  bool typed =
      found && H5Tget_class(ft) == DTYPES[type].cls && H5Tget_size(ft) == DTYPES[type].size &&
      (DTYPES[type].cls != H5T_INTEGER || (H5Tget_sign(ft) == H5T_SGN_2) == DTYPES[type].is_signed);
  bool ok = typed && (int64_t)dims[0] == n &&
            (n == 0 || H5Dread(ds, dtype_hdf5(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
  if (ft >= 0) H5Tclose(ft);
  if (space >= 0) H5Sclose(space);
  if (ds >= 0) H5Dclose(ds);
  mb_error sum_err = {{0}};
  bool intact = !ok || check_checksum(f, g, "/arrays", name, x, n, DTYPES[type].size, &sum_err);
  H5Gclose(g);
  if (!found) return nn_fail(f, err, "/arrays/%s: missing or not 1-D", name);
  if (!typed) return nn_fail(f, err, "/arrays/%s: expected %s elements", name, DTYPES[type].name);
  if ((int64_t)dims[0] != n)
    return nn_fail(f, err, "/arrays/%s: %llu elements, expected %lld", name,
                   (unsigned long long)dims[0], (long long)n);
  if (!ok) return nn_fail(f, err, "/arrays/%s: read failed", name);
  return intact || mb_fail(err, "%s", sum_err.message);
}
