/* Tests of HDF5 checkpoints (solvers/muzero/nn_io): bit-exact round trips of weights, optimiser
 * state and metadata; clear failures on another architecture, a missing or damaged file; the
 * temporary-file-and-rename commit; typed arrays (every element type, empty ones) and counters
 * round-trip, and another type, length or a missing array is refused with the name. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adam.h"
#include "nn.h"
#include "nn_io.h"
#include "support.h"

#define CHECK(call)                                     \
  do {                                                  \
    mb_error e_ = {{0}};                                \
    mb_error *err = &e_;                                \
    if (!(call)) fail_msg("%s: %s", #call, e_.message); \
    (void)err;                                          \
  } while (0)

/* A small agent: two modules and an optimiser that has taken a few steps (non-zero moments). */
typedef struct agent {
  mb_nn_module repr, pred;
  mb_adam opt;
} agent;

static void agent_build(agent *a, int32_t width, int32_t blocks, uint64_t seed, int steps) {
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  CHECK(mb_nn_build_resmlp(&a->repr, "repr", 12, width, blocks, 0, MB_INIT_XAVIER, err));
  CHECK(mb_nn_build_resmlp(&a->pred, "pred", width, width, 1, 5, MB_INIT_XAVIER, err));
  mb_nn_module_init_params(&a->repr, &rng);
  mb_nn_module_init_params(&a->pred, &rng);
  mb_adam_config cfg;
  mb_adam_config_default(&cfg);
  mb_nn_module *mods[] = {&a->repr, &a->pred};
  CHECK(mb_adam_create(&a->opt, mods, 2, &cfg, err));
  for (int s = 0; s < steps; s++) {
    for (int i = 0; i < a->opt.n; i++) {
      mb_tensor *g = &a->opt.slots[i].param->grad;
      for (int64_t k = 0; k < mb_tensor_size(g); k++) g->data[k] = (float)mb_rng_normal(&rng);
    }
    CHECK(mb_adam_step(&a->opt, err));
  }
}

static void agent_free(agent *a) {
  mb_adam_free(&a->opt);
  mb_nn_module_free(&a->repr);
  mb_nn_module_free(&a->pred);
}

static void save(const agent *a, const char *path, double curve_scale) {
  mb_nn_file *f;
  CHECK((f = mb_nn_file_create(path, err)) != NULL);
  CHECK(mb_nn_file_write_module(f, &a->repr, err));
  CHECK(mb_nn_file_write_module(f, &a->pred, err));
  CHECK(mb_nn_file_write_adam(f, &a->opt, err));
  CHECK(mb_nn_file_set_string(f, "config", "{\"simulations\": 32, \"K\": 5}", err));
  CHECK(mb_nn_file_set_double(f, "discount", 0.997, err));
  CHECK(mb_nn_file_set_double(f, "discount", 0.999, err)); /* replaced, not duplicated */
  double curve[4] = {0.1 * curve_scale, 0.2, 0.25, 0.31};
  CHECK(mb_nn_file_write_series(f, "curve_return", curve, 4, err));
  CHECK(mb_nn_file_write_series(f, "empty", NULL, 0, err));
  CHECK(mb_nn_file_commit(f, err));
}

static void test_round_trip(void **state) {
  (void)state;
  char *path = mb_test_temp_path("agent.h5");
  agent a, b;
  agent_build(&a, 8, 2, 1, 3);
  agent_build(&b, 8, 2, 2, 0); /* other weights, fresh optimiser */
  save(&a, path, 1.0);
  mb_nn_file *f;
  CHECK((f = mb_nn_file_open(path, err)) != NULL);
  CHECK(mb_nn_file_read_module(f, &b.repr, err));
  CHECK(mb_nn_file_read_module(f, &b.pred, err));
  CHECK(mb_nn_file_read_adam(f, &b.opt, err));
  for (int i = 0; i < a.opt.n; i++) {
    assert_true(mb_tensor_equal(&a.opt.slots[i].param->value, &b.opt.slots[i].param->value));
    assert_true(mb_tensor_equal(&a.opt.slots[i].m, &b.opt.slots[i].m));
    assert_true(mb_tensor_equal(&a.opt.slots[i].v, &b.opt.slots[i].v));
  }
  assert_int_equal(b.opt.step, 3);
  assert_true(b.opt.cfg.lr == a.opt.cfg.lr && b.opt.cfg.weight_decay == a.opt.cfg.weight_decay);
  char s[128];
  double d;
  CHECK(mb_nn_file_get_string(f, "config", s, sizeof s, err));
  assert_string_equal(s, "{\"simulations\": 32, \"K\": 5}");
  CHECK(mb_nn_file_get_double(f, "discount", &d, err));
  assert_true(d == 0.999);
  double *x;
  int64_t n;
  CHECK(mb_nn_file_read_series(f, "curve_return", &x, &n, err));
  assert_int_equal(n, 4);
  assert_true(x[0] == 0.1 && x[3] == 0.31);
  free(x);
  CHECK(mb_nn_file_read_series(f, "empty", &x, &n, err));
  assert_int_equal(n, 0);
  assert_null(x);
  mb_error e;
  assert_false(mb_nn_file_get_double(f, "config", &d, &e)); /* a string, not a number */
  assert_non_null(strstr(e.message, "'config' is not a number"));
  assert_false(mb_nn_file_get_string(f, "config", s, 8, &e)); /* does not fit */
  assert_false(mb_nn_file_get_double(f, "nope", &d, &e));
  assert_non_null(strstr(e.message, "attribute 'nope' missing"));
  assert_false(mb_nn_file_write_module(f, &a.repr, &e)); /* opened for reading */
  mb_nn_file_close(f);
  /* Training continues identically from the loaded state. */
  for (int i = 0; i < a.opt.n; i++) {
    mb_tensor_fill(&a.opt.slots[i].param->grad, 0.25f);
    mb_tensor_fill(&b.opt.slots[i].param->grad, 0.25f);
  }
  CHECK(mb_adam_step(&a.opt, err));
  CHECK(mb_adam_step(&b.opt, err));
  for (int i = 0; i < a.opt.n; i++)
    assert_true(mb_tensor_equal(&a.opt.slots[i].param->value, &b.opt.slots[i].param->value));
  agent_free(&a);
  agent_free(&b);
  unlink(path);
  free(path);
}

static void test_wrong_architecture(void **state) {
  (void)state;
  char *path = mb_test_temp_path("agent.h5");
  agent a, wide, deep, shallow;
  agent_build(&a, 8, 2, 1, 1);
  agent_build(&wide, 16, 2, 1, 0);
  agent_build(&deep, 8, 3, 1, 0);
  agent_build(&shallow, 8, 1, 1, 0);
  save(&a, path, 1.0);
  mb_nn_file *f;
  CHECK((f = mb_nn_file_open(path, err)) != NULL);
  mb_error e;
  mb_tensor keep;
  CHECK(mb_tensor_init(&keep, 12, 16, err));
  CHECK(mb_tensor_copy(&keep, &wide.repr.params[0].value, err));
  assert_false(mb_nn_file_read_module(f, &wide.repr, &e));
  assert_non_null(strstr(e.message, path));
  assert_non_null(strstr(e.message, "/repr/l0.weight: shape 12x8 in the file, 12x16 in the model"));
  assert_true(mb_tensor_equal(&keep, &wide.repr.params[0].value)); /* untouched */
  assert_false(mb_nn_file_read_adam(f, &wide.opt, &e));
  assert_non_null(strstr(e.message, "/adam/repr/l0.weight.m: shape 12x8 in the file, 12x16"));
  assert_false(mb_nn_file_read_module(f, &deep.repr, &e)); /* the file lacks block 3 */
  assert_non_null(strstr(e.message, "tensor missing from the file"));
  assert_false(mb_nn_file_read_module(f, &shallow.repr, &e)); /* the file has more */
  assert_non_null(strstr(e.message, "tensor in the file is not in the model"));
  mb_nn_module other;
  CHECK(mb_nn_build_resmlp(&other, "value", 8, 8, 0, 3, MB_INIT_ZERO, err));
  assert_false(mb_nn_file_read_module(f, &other, &e));
  assert_non_null(strstr(e.message, "/value: no network of that name"));
  mb_nn_module_free(&other);
  mb_nn_file_close(f);
  mb_tensor_free(&keep);
  agent_free(&a);
  agent_free(&wide);
  agent_free(&deep);
  agent_free(&shallow);
  unlink(path);
  free(path);
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

/* A commit replaces the target atomically; an abandoned write leaves the old checkpoint and no
 * temporary file behind. */
static void test_commit_is_atomic(void **state) {
  (void)state;
  char *path = mb_test_temp_path("ckpt.h5");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  *strrchr(dir, '/') = '\0';
  agent a;
  agent_build(&a, 8, 1, 3, 0);
  save(&a, path, 1.0);
  assert_int_equal(count_entries(dir), 1);
  mb_nn_file *f;
  CHECK((f = mb_nn_file_create(path, err)) != NULL);
  CHECK(mb_nn_file_set_double(f, "discount", 0.5, err));
  assert_int_equal(count_entries(dir), 2); /* the temporary file */
  mb_nn_file_close(f);                     /* abandoned: e.g. an error while saving */
  assert_int_equal(count_entries(dir), 1);
  double d;
  CHECK((f = mb_nn_file_open(path, err)) != NULL);
  CHECK(mb_nn_file_get_double(f, "discount", &d, err));
  assert_true(d == 0.999);
  mb_nn_file_close(f);
  save(&a, path, 2.0); /* overwrite through rename */
  assert_int_equal(count_entries(dir), 1);
  agent_free(&a);
  unlink(path);
  rmdir(dir);
  free(path);
}

static void test_bad_files(void **state) {
  (void)state;
  mb_error e;
  assert_null(mb_nn_file_open("/nonexistent/dir/x.h5", &e));
  assert_non_null(strstr(e.message, "/nonexistent/dir/x.h5: cannot read"));
  char *junk = mb_test_write_temp(".h5", "this is not HDF5\n");
  assert_null(mb_nn_file_open(junk, &e));
  assert_non_null(strstr(e.message, "not an HDF5 file"));
  unlink(junk);
  free(junk);
  assert_null(mb_nn_file_create("/nonexistent/dir/x.h5", &e));
  assert_non_null(strstr(e.message, "temporary file"));
  char *path = mb_test_temp_path("meta.h5");
  mb_nn_file *f = mb_nn_file_create(path, &e);
  assert_non_null(f);
  assert_false(mb_nn_file_set_double(f, "bad key", 1.0, &e));
  assert_non_null(strstr(e.message, "character ' '"));
  assert_false(mb_nn_file_write_series(f, "s", NULL, -1, &e));
  mb_nn_file_close(f);
  *strrchr(path, '/') = '\0';
  assert_int_equal(count_entries(path), 0); /* the abandoned temporary file is gone */
  rmdir(path);
  free(path);
}

static void test_arrays_and_counts(void **state) {
  (void)state;
  char *path = mb_test_temp_path("arrays.h5");
  mb_error err = {{0}};
  uint8_t u8[5] = {0, 1, 2, 254, 255}, u8b[5];
  int32_t i32[4] = {-7, 0, 3, 2147483647}, i32b[4];
  float f32[3] = {0.5f, -1e30f, 3.25f}, f32b[3];
  double f64[2] = {1e-300, -2.5}, f64b[2];
  mb_nn_file *f = mb_nn_file_create(path, &err);
  assert_non_null(f);
  assert_true(mb_nn_file_write_array(f, "a.u8", MB_NN_U8, u8, 5, &err));
  assert_true(mb_nn_file_write_array(f, "a.i32", MB_NN_I32, i32, 4, &err));
  assert_true(mb_nn_file_write_array(f, "a.f32", MB_NN_F32, f32, 3, &err));
  assert_true(mb_nn_file_write_array(f, "a.f64", MB_NN_F64, f64, 2, &err));
  assert_true(mb_nn_file_write_array(f, "a.empty", MB_NN_F32, NULL, 0, &err));
  assert_false(mb_nn_file_write_array(f, "a.u8", MB_NN_U8, u8, 5, &err)); /* twice */
  assert_non_null(strstr(err.message, "/arrays/a.u8"));
  assert_false(mb_nn_file_write_array(f, "bad/name", MB_NN_U8, u8, 5, &err));
  assert_true(mb_nn_file_set_double(f, "n.ok", 12345, &err));
  assert_true(mb_nn_file_set_double(f, "n.neg", -1, &err));
  assert_true(mb_nn_file_set_double(f, "n.frac", 2.5, &err));
  assert_true(mb_nn_file_commit(f, &err));

  f = mb_nn_file_open(path, &err);
  assert_non_null(f);
  assert_true(mb_nn_file_read_array(f, "a.u8", MB_NN_U8, u8b, 5, &err));
  assert_true(mb_nn_file_read_array(f, "a.i32", MB_NN_I32, i32b, 4, &err));
  assert_true(mb_nn_file_read_array(f, "a.f32", MB_NN_F32, f32b, 3, &err));
  assert_true(mb_nn_file_read_array(f, "a.f64", MB_NN_F64, f64b, 2, &err));
  assert_memory_equal(u8, u8b, sizeof u8);
  assert_memory_equal(i32, i32b, sizeof i32);
  assert_memory_equal(f32, f32b, sizeof f32);
  assert_memory_equal(f64, f64b, sizeof f64);
  assert_true(mb_nn_file_read_array(f, "a.empty", MB_NN_F32, NULL, 0, &err));
  /* another element type (signedness and width count), another length, a missing array */
  assert_false(mb_nn_file_read_array(f, "a.u8", MB_NN_I32, i32b, 5, &err));
  assert_non_null(strstr(err.message, "a.u8: expected int32 elements"));
  assert_false(mb_nn_file_read_array(f, "a.i32", MB_NN_F32, f32b, 4, &err));
  assert_non_null(strstr(err.message, "expected float32"));
  assert_false(mb_nn_file_read_array(f, "a.f32", MB_NN_F32, f32b, 2, &err));
  assert_non_null(strstr(err.message, "a.f32: 3 elements, expected 2"));
  assert_false(mb_nn_file_read_array(f, "a.none", MB_NN_F32, f32b, 2, &err));
  assert_non_null(strstr(err.message, "a.none: missing"));
  assert_non_null(strstr(err.message, path));
  int64_t n = 0;
  assert_true(mb_nn_file_get_count(f, "n.ok", &n, &err));
  assert_int_equal(n, 12345);
  assert_false(mb_nn_file_get_count(f, "n.neg", &n, &err));
  assert_non_null(strstr(err.message, "n.neg = -1: expected an integer >= 0"));
  assert_false(mb_nn_file_get_count(f, "n.frac", &n, &err));
  assert_false(mb_nn_file_get_count(f, "n.none", &n, &err));
  assert_non_null(strstr(err.message, "missing"));
  mb_nn_file_close(f);
  unlink(path);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),        cmocka_unit_test(test_wrong_architecture),
      cmocka_unit_test(test_commit_is_atomic),  cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_arrays_and_counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
