#include "h5attr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reason_buf {
  char *out;
  size_t n;
} reason_buf;

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data) {
  reason_buf *b = data;
  if (n == 0 && e->desc) snprintf(b->out, b->n, "%s", e->desc);
  return 0;
}

const char *mb_h5attr_reason(char *out, size_t n) {
  out[0] = '\0';
  reason_buf b = {out, n};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &b);
  return out;
}

mb_h5attr_state mb_h5attr_find(hid_t obj, const char *key) {
  htri_t e = H5Aexists(obj, key);
  return e > 0 ? MB_H5ATTR_PRESENT : e == 0 ? MB_H5ATTR_ABSENT : MB_H5ATTR_ERROR;
}

bool mb_h5attr_remove(hid_t obj, const char *key) {
  mb_h5attr_state s = mb_h5attr_find(obj, key);
  return s == MB_H5ATTR_ABSENT || (s == MB_H5ATTR_PRESENT && H5Adelete(obj, key) >= 0);
}

/* "attribute 'K': cannot read it (damaged file?)", with HDF5's reason when it left one. */
static bool unreadable(mb_error *err, const char *key) {
  char why[256];
  mb_h5attr_reason(why, sizeof why);
  return mb_fail(err, "attribute '%s': cannot read it (damaged file?)%s%s", key, why[0] ? ": " : "",
                 why);
}

/* The text of an open attribute known to hold one string; NULL when HDF5 fails to read it. */
static char *read_one(hid_t a, hid_t ft, htri_t variable) {
  char *out = NULL;
  hid_t mt = H5Tcopy(H5T_C_S1);
  if (mt < 0) return NULL;
  if (variable) {
    char *v = NULL;
    if (H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &v) >= 0) {
      out = strdup(v ? v : "");
      if (v) H5free_memory(v);
    }
  } else {
    /* one byte more than stored, NUL-terminated whatever the file's padding */
    size_t n = H5Tget_size(ft);
    if (n > 0 && H5Tset_size(mt, n + 1) >= 0 && H5Tset_strpad(mt, H5T_STR_NULLTERM) >= 0)
      out = calloc(n + 2, 1);
    if (out && H5Aread(a, mt, out) < 0) {
      free(out);
      out = NULL;
    }
  }
  H5Tclose(mt);
  return out;
}

/* Why an open attribute that exists is not one readable string: NULL when it is one (and
 * *variable says whether of variable length), else after err, *damaged set when HDF5 failed. */
static bool check_one_string(hid_t a, hid_t ft, const char *key, htri_t *variable, bool *damaged,
                             mb_error *err) {
  *damaged = true;
  H5T_class_t cls = H5Tget_class(ft);
  if (cls == H5T_NO_CLASS) return unreadable(err, key);
  *damaged = false;
  if (cls != H5T_STRING) return mb_fail(err, "attribute '%s' is not a string", key);
  hid_t sp = H5Aget_space(a);
  if (sp < 0) return *damaged = true, unreadable(err, key);
  int rank = H5Sget_simple_extent_ndims(sp);
  hssize_t points = rank >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  bool ok = rank >= 0 && points >= 0;
  if (!ok) unreadable(err, key);
  H5Sclose(sp);
  if (!ok) return *damaged = true, false;
  if (rank > 1 || points != 1) return mb_fail(err, "attribute '%s' is not a single string", key);
  *variable = H5Tis_variable_str(ft);
  if (*variable < 0) return *damaged = true, unreadable(err, key);
  return true;
}

char *mb_h5attr_read_string(hid_t obj, const char *key, mb_h5attr_state *state, mb_error *err) {
  mb_h5attr_state s = mb_h5attr_find(obj, key);
  if (state) *state = s;
  if (s == MB_H5ATTR_ABSENT) return mb_fail(err, "attribute '%s' is missing", key), NULL;
  if (s == MB_H5ATTR_ERROR) return unreadable(err, key), NULL;
  char *out = NULL;
  bool damaged = true;
  hid_t a = H5Aopen(obj, key, H5P_DEFAULT);
  hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
  htri_t variable = 0;
  if (ft < 0)
    unreadable(err, key);
  else if (check_one_string(a, ft, key, &variable, &damaged, err) &&
           !(out = read_one(a, ft, variable)))
    unreadable(err, key), damaged = true;
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  if (state && !out) *state = damaged ? MB_H5ATTR_ERROR : MB_H5ATTR_PRESENT;
  return out;
}
