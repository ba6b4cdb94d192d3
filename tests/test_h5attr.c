/* Tests of the shared HDF5 attribute helpers (suite/h5attr.h) on a file made here with the plain
 * HDF5 API: a string read back whether fixed or variable length, a scalar or a one-element
 * array; an array of two strings, a string of no element (a null dataspace), a 1 x 1 string
 * matrix and a number each refused as the header says, with the state it gives; a missing
 * attribute; removal; and the innermost message of HDF5's error stack as the reason. */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "h5attr.h"
#include "support.h"

/* A string attribute `key` of obj: fixed length (the text's, NUL-padded) or variable, in a
 * dataspace of `rank` dimensions (0: a scalar; -1: a null dataspace) each of `dim` elements,
 * every element the text. */
static void write_string(hid_t obj, const char *key, const char *text, bool variable, int rank,
                         hsize_t dim) {
  hid_t type = H5Tcopy(H5T_C_S1);
  assert_true(type >= 0);
  assert_true(H5Tset_size(type, variable ? H5T_VARIABLE : strlen(text)) >= 0);
  hsize_t dims[2] = {dim, dim};
  hid_t space = rank < 0    ? H5Screate(H5S_NULL)
                : rank == 0 ? H5Screate(H5S_SCALAR)
                            : H5Screate_simple(rank, dims, NULL);
  assert_true(space >= 0);
  hid_t a = H5Acreate2(obj, key, type, space, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(a >= 0);
  if (rank >= 0) {
    size_t n = rank == 0 ? 1 : (size_t)dim * (rank == 2 ? (size_t)dim : 1);
    if (variable) {
      const char **v = malloc(n * sizeof *v);
      assert_non_null(v);
      for (size_t i = 0; i < n; i++) v[i] = text;
      assert_true(H5Awrite(a, type, v) >= 0);
      free(v);
    } else {
      size_t len = strlen(text);
      char *buf = malloc(n * len + 1);
      assert_non_null(buf);
      for (size_t i = 0; i < n; i++) memcpy(buf + i * len, text, len);
      assert_true(H5Awrite(a, type, buf) >= 0);
      free(buf);
    }
  }
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
}

static void write_int(hid_t obj, const char *key, int value) {
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, key, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(space >= 0 && a >= 0);
  assert_true(H5Awrite(a, H5T_NATIVE_INT, &value) >= 0);
  H5Aclose(a);
  H5Sclose(space);
}

/* reads `key`: the text (or NULL) and the state and message it gives */
static char *read_string(hid_t obj, const char *key, mb_h5attr_state *state, mb_error *err) {
  *state = (mb_h5attr_state)42;
  err->message[0] = '\0';
  return mb_h5attr_read_string(obj, key, state, err);
}

static hid_t create_file(char **path) {
  *path = mb_test_temp_path("attributes.h5");
  hid_t f = H5Fcreate(*path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(f >= 0);
  return f;
}

static void test_strings_read(void **state) {
  (void)state;
  char *path;
  hid_t f = create_file(&path);
  write_string(f, "fixed", "a fixed-length text", false, 0, 1);
  write_string(f, "variable", "a variable-length text", true, 0, 1);
  write_string(f, "fixed_array", "in a one-element array", false, 1, 1);
  write_string(f, "variable_array", "variable, in an array", true, 1, 1);
  write_string(f, "empty", "", true, 0, 1);
  const char *key[] = {"fixed", "variable", "fixed_array", "variable_array", "empty"};
  const char *want[] = {"a fixed-length text", "a variable-length text", "in a one-element array",
                        "variable, in an array", ""};
  for (size_t i = 0; i < sizeof key / sizeof key[0]; i++) {
    mb_error err;
    mb_h5attr_state st;
    char *text = read_string(f, key[i], &st, &err);
    if (!text) fail_msg("%s: %s", key[i], err.message);
    assert_string_equal(text, want[i]);
    assert_int_equal(st, MB_H5ATTR_PRESENT);
    assert_int_equal(mb_h5attr_find(f, key[i]), MB_H5ATTR_PRESENT);
    free(text);
  }
  H5Fclose(f);
  mb_test_temp_remove(path);
}

static void test_not_one_string(void **state) {
  (void)state;
  char *path;
  hid_t f = create_file(&path);
  write_string(f, "two", "ab", false, 1, 2);
  write_string(f, "none", "ab", false, -1, 0);
  write_string(f, "matrix", "ab", true, 2, 1);
  write_int(f, "number", 7);
  const struct {
    const char *key, *message;
    mb_h5attr_state state;
  } cases[] = {
      {"two", "attribute 'two' is not a single string", MB_H5ATTR_PRESENT},
      {"none", "attribute 'none' is not a single string", MB_H5ATTR_PRESENT},
      {"matrix", "attribute 'matrix' is not a single string", MB_H5ATTR_PRESENT},
      {"number", "attribute 'number' is not a string", MB_H5ATTR_PRESENT},
      {"missing", "attribute 'missing' is missing", MB_H5ATTR_ABSENT},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mb_error err;
    mb_h5attr_state st;
    assert_null(read_string(f, cases[i].key, &st, &err));
    assert_string_equal(err.message, cases[i].message);
    assert_int_equal(st, cases[i].state);
    /* the state is optional: the same refusal without one */
    err.message[0] = '\0';
    assert_null(mb_h5attr_read_string(f, cases[i].key, NULL, &err));
    assert_string_equal(err.message, cases[i].message);
  }
  assert_int_equal(mb_h5attr_find(f, "missing"), MB_H5ATTR_ABSENT);

  /* removal: of an attribute that is there, then of one that is not (nothing to do) */
  assert_true(mb_h5attr_remove(f, "number"));
  assert_int_equal(mb_h5attr_find(f, "number"), MB_H5ATTR_ABSENT);
  assert_true(mb_h5attr_remove(f, "number"));
  H5Fclose(f);
  mb_test_temp_remove(path);
}

enum { MAX_ENTRIES = 32 };
typedef struct stack_texts {
  char desc[MAX_ENTRIES][256];
  unsigned n;
} stack_texts;

static herr_t collect(unsigned n, const H5E_error2_t *e, void *data) {
  stack_texts *s = data;
  if (n < MAX_ENTRIES && e->desc) snprintf(s->desc[n], sizeof s->desc[n], "%s", e->desc);
  if (n + 1 > s->n) s->n = n + 1;
  return 0;
}

/* The reason is the innermost message (the first an upward walk of the stack meets), not the
 * API call's own; "" when the last call left none. */
static void test_reason_is_the_innermost(void **state) {
  (void)state;
  char *path;
  hid_t f = create_file(&path);
  H5E_auto2_t old_func;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  assert_true(H5Aopen(f, "no such attribute", H5P_DEFAULT) < 0);
  stack_texts s = {0};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, &s);
  assert_true(s.n >= 2); /* the API call's message and at least one below it */
  assert_string_not_equal(s.desc[0], s.desc[s.n - 1]);
  char why[256];
  assert_string_equal(mb_h5attr_reason(why, sizeof why), s.desc[0]);
  char small[8];
  mb_h5attr_reason(small, sizeof small); /* cut to its buffer */
  assert_int_equal(strlen(small), strlen(s.desc[0]) < 7 ? strlen(s.desc[0]) : 7);
  H5Eclear2(H5E_DEFAULT);
  assert_string_equal(mb_h5attr_reason(why, sizeof why), "");
  H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
  H5Fclose(f);
  mb_test_temp_remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strings_read),
      cmocka_unit_test(test_not_one_string),
      cmocka_unit_test(test_reason_is_the_innermost),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
