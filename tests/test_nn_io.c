/* Tests of HDF5 checkpoints (solvers/muzero/nn_io): bit-exact round trips of weights, optimiser
 * state and metadata; clear failures on another architecture, a missing or damaged file; the
 * temporary-file-and-rename commit; typed arrays (every element type, empty ones) and counters
 * round-trip, and another type, length or a missing array is refused with the name. Damage: any
 * one byte changed is refused with the file named or loads exactly as written; changed data
 * are refused naming the dataset; checkpoints written before checksums still load. */
#include <dirent.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adam.h"
#include "nn.h"
#include "nn_io.h"
#include "paths.h"
#include "rng.h"
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
  /* the text and its NUL fill the buffer exactly; one byte less does not do */
  int fits = (int)strlen("{\"simulations\": 32, \"K\": 5}") + 1;
  assert_true(mb_nn_file_get_string(f, "config", s, fits, &e));
  assert_false(mb_nn_file_get_string(f, "config", s, fits - 1, &e));
  char room[64];
  snprintf(room, sizeof room, "'config': %d characters, room for %d", fits - 1, fits - 2);
  assert_non_null(strstr(e.message, room));
  assert_false(mb_nn_file_get_double(f, "nope", &d, &e));
  assert_non_null(strstr(e.message, "attribute 'nope' is missing"));
  assert_false(mb_nn_file_get_string(f, "nope", s, sizeof s, &e)); /* worded as results.c does */
  assert_non_null(strstr(e.message, "attribute 'nope' is missing"));
  assert_false(mb_nn_file_has(f, "nope"));
  assert_true(mb_nn_file_has(f, "config"));
  assert_true(mb_nn_file_has_series(f, "curve_return"));
  assert_true(mb_nn_file_has_series(f, "empty"));
  assert_false(mb_nn_file_has_series(f, "nope"));
  assert_false(mb_nn_file_write_module(f, &a.repr, &e)); /* opened for reading */
  mb_nn_file_close(f);
  /* a file without any series (no /series group) has none */
  char *bare = mb_test_temp_path("no-series.h5");
  CHECK((f = mb_nn_file_create(bare, err)) != NULL);
  CHECK(mb_nn_file_write_module(f, &a.repr, err));
  CHECK(mb_nn_file_commit(f, err));
  CHECK((f = mb_nn_file_open(bare, err)) != NULL);
  assert_false(mb_nn_file_has_series(f, "curve_return"));
  mb_nn_file_close(f);
  mb_test_temp_remove(bare);
  /* Training continues identically from the loaded state. */
  for (int i = 0; i < a.opt.n; i++) {
    mb_tensor_fill(&a.opt.slots[i].param->grad, 0.25f);
    mb_tensor_fill(&b.opt.slots[i].param->grad, 0.25f);
  }
  CHECK(mb_adam_step(&a.opt, err));
  CHECK(mb_adam_step(&b.opt, err));
  for (int i = 0; i < a.opt.n; i++)
    assert_true(mb_tensor_equal(&a.opt.slots[i].param->value, &b.opt.slots[i].param->value));
  /* an optimiser saved before its first step loads with step 0 */
  agent c;
  agent_build(&c, 8, 2, 3, 0);
  save(&c, path, 1.0);
  b.opt.step = 7;
  CHECK((f = mb_nn_file_open(path, err)) != NULL);
  CHECK(mb_nn_file_read_adam(f, &b.opt, err));
  assert_int_equal(b.opt.step, 0);
  mb_nn_file_close(f);
  agent_free(&c);
  agent_free(&a);
  agent_free(&b);
  mb_test_temp_remove(path);
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
  char arch[4096], want[4200];
  mb_nn_describe(&a.repr, arch, sizeof arch);
  snprintf(want, sizeof want, "(file: %s)", arch);
  assert_non_null(strstr(e.message, want)); /* the file's own architecture, from its attribute */
  mb_nn_module other;
  CHECK(mb_nn_build_resmlp(&other, "value", 8, 8, 0, 3, MB_INIT_ZERO, err));
  assert_false(mb_nn_file_read_module(f, &other, &e));
  assert_non_null(strstr(e.message, "/value: no network of that name"));
  mb_nn_module_free(&other);
  mb_nn_file_close(f);
  /* an architecture attribute that is not a string is not read as one */
  hid_t h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(H5Adelete_by_name(h, "/repr", "architecture", H5P_DEFAULT) >= 0);
  int not_text = 7;
  assert_true(H5LTset_attribute_int(h, "/repr", "architecture", &not_text, 1) >= 0);
  H5Fclose(h);
  CHECK((f = mb_nn_file_open(path, err)) != NULL);
  assert_false(mb_nn_file_read_module(f, &shallow.repr, &e));
  assert_non_null(strstr(e.message, "not in the model (file: unknown)"));
  mb_nn_file_close(f);
  mb_tensor_free(&keep);
  agent_free(&a);
  agent_free(&wide);
  agent_free(&deep);
  agent_free(&shallow);
  mb_test_temp_remove(path);
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
  mb_test_temp_remove(path);
}

static void test_bad_files(void **state) {
  (void)state;
  mb_error e;
  assert_null(mb_nn_file_open("/nonexistent/dir/x.h5", &e));
  assert_non_null(strstr(e.message, "/nonexistent/dir/x.h5: cannot read"));
  /* paths of up to 1023 bytes are taken (this one then does not exist), longer ones refused */
  char long_path[1026];
  memset(long_path, 'p', sizeof long_path - 1);
  long_path[0] = '/';
  long_path[1023] = '\0';
  assert_null(mb_nn_file_open(long_path, &e));
  assert_memory_equal(e.message, "/ppp", 4); /* "PATH: cannot read the file", cut */
  long_path[1023] = 'p';
  long_path[1024] = '\0';
  assert_null(mb_nn_file_open(long_path, &e));
  assert_memory_equal(e.message, "checkpoint: path '/ppp", 22); /* "... empty or too long" */
  char *junk = mb_test_write_temp(".h5", "this is not HDF5\n");
  assert_null(mb_nn_file_open(junk, &e));
  assert_non_null(strstr(e.message, "not an HDF5 file"));
  mb_test_temp_remove(junk);
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
  mb_test_temp_remove(path);
}

/* A checkpoint gets the permissions a new file gets (0666 & ~umask), as every output does
 * (atomic_file.h); before, a fixed 0644 whatever the umask. */
static void test_checkpoint_mode(void **state) {
  (void)state;
  char *path = mb_test_temp_path("mode.h5");
  agent a;
  agent_build(&a, 8, 1, 3, 0);
  mode_t old = umask(077);
  save(&a, path, 1.0);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0600);
  umask(002);
  save(&a, path, 1.0);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0664);
  umask(old);
  agent_free(&a);
  mb_test_temp_remove(path);
}

/* An attribute that a damaged file cannot say it has is not taken for absent (h5attr.h): with
 * more than 8 root attributes HDF5 keeps them in "dense" storage, whose name index (a v2 B-tree
 * leaf, "BTLF") is checksummed; one byte changed in that leaf leaves the file opening and the
 * lookup failing. mb_nn_file_has then says present (as results.h's mb_results_has_attr does)
 * and the read that follows names the attribute and HDF5's reason. */
static void test_damaged_attribute_index(void **state) {
  (void)state;
  char *path = mb_test_temp_path("dense.h5");
  mb_nn_file *f;
  CHECK((f = mb_nn_file_create(path, err)) != NULL);
  for (int i = 0; i < 12; i++) {
    char key[32];
    snprintf(key, sizeof key, "meta.%d", i);
    CHECK(mb_nn_file_set_double(f, key, i, err));
  }
  CHECK(mb_nn_file_commit(f, err));
  size_t size = 0;
  unsigned char *bytes = (unsigned char *)mb_read_file(path, &size);
  assert_non_null(bytes);
  size_t at = 0;
  for (size_t i = 0; i + 4 <= size && !at; i++)
    if (!memcmp(bytes + i, "BTLF", 4)) at = i;
  if (!at) fail_msg("%s: no B-tree leaf: the attributes are not in dense storage", path);
  bytes[at + 8] ^= 0x5a; /* a record: after signature, version and type */
  mb_test_write_bytes(path, bytes, size);
  free(bytes);
  CHECK((f = mb_nn_file_open(path, err)) != NULL);
  assert_true(mb_nn_file_has(f, "meta.3"));
  assert_true(mb_nn_file_has(f, "absent")); /* cannot tell: not "absent" */
  double d = -1;
  mb_error e;
  assert_false(mb_nn_file_get_double(f, "meta.3", &d, &e));
  char want[1200];
  snprintf(want, sizeof want, "%s: attribute 'meta.3': cannot read it (damaged file?): ", path);
  if (!strstr(e.message, want)) fail_msg("'%s' does not contain '%s'", e.message, want);
  assert_false(mb_nn_file_get_string(f, "meta.3", want, sizeof want, &e));
  assert_non_null(strstr(e.message, "cannot read it (damaged file?)"));
  mb_nn_file_close(f);
  mb_test_temp_remove(path);
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
  assert_true(mb_nn_file_set_double(f, "n.zero", 0, &err));
  assert_true(mb_nn_file_set_double(f, "n.neg", -1, &err));
  assert_true(mb_nn_file_set_double(f, "n.frac", 2.5, &err));
  assert_true(mb_nn_file_set_double(f, "n.max", 9007199254740992.0, &err)); /* 2^53 */
  assert_true(mb_nn_file_set_double(f, "n.past", 9007199254740994.0, &err));
  /* an element type outside the enum; keys of 200 characters taken, 201 refused */
  assert_false(mb_nn_file_write_array(f, "a.odd", (mb_nn_dtype)4, u8, 5, &err));
  assert_non_null(strstr(err.message, "/arrays/a.odd: unknown type 4"));
  char key[202];
  memset(key, 'k', 201);
  key[201] = '\0';
  assert_false(mb_nn_file_write_array(f, key, MB_NN_U8, u8, 5, &err));
  assert_non_null(strstr(err.message, "1..200 characters"));
  key[200] = '\0';
  assert_true(mb_nn_file_write_array(f, key, MB_NN_U8, u8, 5, &err));
  /* every end of the allowed ranges taken; the characters just outside them refused */
  assert_true(mb_nn_file_write_array(f, "AZaz09_.-", MB_NN_U8, u8, 5, &err));
  const char *outside[] = {"a@", "a[", "a`", "a{", "a/", "a:", "a,"};
  for (size_t i = 0; i < sizeof outside / sizeof *outside; i++) {
    assert_false(mb_nn_file_write_array(f, outside[i], MB_NN_U8, u8, 5, &err));
    assert_non_null(strstr(err.message, "not in [A-Za-z0-9_.-]"));
  }
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
  assert_true(mb_nn_file_get_count(f, "n.zero", &n, &err));
  assert_int_equal(n, 0);
  assert_false(mb_nn_file_get_count(f, "n.neg", &n, &err));
  assert_non_null(strstr(err.message, "n.neg = -1: expected an integer >= 0"));
  assert_false(mb_nn_file_get_count(f, "n.frac", &n, &err));
  assert_true(mb_nn_file_get_count(f, "n.max", &n, &err)); /* the largest exact count */
  assert_true(n == 9007199254740992LL);
  assert_false(mb_nn_file_get_count(f, "n.past", &n, &err));
  assert_true(mb_nn_file_read_array(f, key, MB_NN_U8, u8b, 5, &err));
  assert_memory_equal(u8, u8b, sizeof u8);
  assert_true(mb_nn_file_read_array(f, "AZaz09_.-", MB_NN_U8, u8b, 5, &err));
  assert_false(mb_nn_file_get_count(f, "n.none", &n, &err));
  assert_non_null(strstr(err.message, "missing"));
  mb_nn_file_close(f);
  /* a file without any array: each is missing */
  f = mb_nn_file_create(path, &err);
  assert_true(mb_nn_file_set_double(f, "n.ok", 1, &err));
  assert_true(mb_nn_file_commit(f, &err));
  /* numbers as other writers store them: a scalar (rank 0) is one value, a pair is not */
  hid_t h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t scalar = H5Screate(H5S_SCALAR);
  double half = 0.5, pair[2] = {1, 2};
  hid_t at = H5Acreate2(h, "n.scalar", H5T_NATIVE_DOUBLE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(at >= 0 && H5Awrite(at, H5T_NATIVE_DOUBLE, &half) >= 0);
  H5Aclose(at);
  H5Sclose(scalar);
  assert_true(H5LTset_attribute_double(h, "/", "n.pair", pair, 2) >= 0);
  H5Fclose(h);
  f = mb_nn_file_open(path, &err);
  assert_non_null(f);
  assert_false(mb_nn_file_read_array(f, "a.u8", MB_NN_U8, u8b, 5, &err));
  assert_non_null(strstr(err.message, "/arrays/a.u8: missing"));
  double got = 0;
  assert_true(mb_nn_file_get_double(f, "n.scalar", &got, &err));
  assert_true(got == 0.5);
  assert_false(mb_nn_file_get_double(f, "n.pair", &got, &err));
  assert_non_null(strstr(err.message, "attribute 'n.pair': 2 values, expected 1"));
  mb_nn_file_close(f);
  mb_test_temp_remove(path);
}

/* Everything save() wrote, loaded through b (same shapes) and the metadata readers, as bytes;
 * NULL with err set when a read fails. */
static char *load_all(const char *path, agent *b, size_t *len, mb_error *err) {
  char *out = NULL;
  FILE *s = open_memstream(&out, len);
  mb_nn_file *f = mb_nn_file_open(path, err);
  char config[128];
  double discount = 0, *curve = NULL, *empty = NULL;
  int64_t n_curve = 0, n_empty = 0;
  bool ok = f && mb_nn_file_read_module(f, &b->repr, err) &&
            mb_nn_file_read_module(f, &b->pred, err) && mb_nn_file_read_adam(f, &b->opt, err) &&
            mb_nn_file_get_string(f, "config", config, sizeof config, err) &&
            mb_nn_file_get_double(f, "discount", &discount, err) &&
            mb_nn_file_read_series(f, "curve_return", &curve, &n_curve, err) &&
            mb_nn_file_read_series(f, "empty", &empty, &n_empty, err);
  if (ok) {
    for (int i = 0; i < b->opt.n; i++) {
      const mb_adam_slot *sl = &b->opt.slots[i];
      size_t k = (size_t)mb_tensor_size(&sl->m);
      fwrite(sl->param->value.data, sizeof(float), k, s);
      fwrite(sl->m.data, sizeof(float), k, s);
      fwrite(sl->v.data, sizeof(float), k, s);
    }
    fprintf(s, "step %lld lr %a wd %a config %s discount %a curve", (long long)b->opt.step,
            b->opt.cfg.lr, b->opt.cfg.weight_decay, config, discount);
    for (int64_t i = 0; i < n_curve; i++) fprintf(s, " %a", curve[i]);
    fprintf(s, " empty %lld", (long long)n_empty);
  }
  fclose(s);
  free(curve);
  free(empty);
  mb_nn_file_close(f);
  if (!ok) {
    free(out);
    return NULL;
  }
  return out;
}

/* Loads a damaged copy in a child process: 0 it loaded what `want` holds, 1 it loaded something
 * else without an error, 2 it was refused with the file named, 3 refused without; -1 the child
 * crashed. A child, so that a crash is counted as this test's failure, and because libhdf5
 * 1.10.8 leaks about 400 bytes inside the library (H5O_protect's error path) for each object
 * header that fails its checksum, which the sanitizer build's leak check would report at exit
 * (the child leaves with _exit, unchecked; the parent is checked as every test is). */
static int load_in_child(const char *bad, agent *b, const char *want, size_t want_len,
                         char *message, size_t n) {
  int pipe_fd[2];
  assert_int_equal(pipe(pipe_fd), 0);
  fflush(stdout);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(pipe_fd[0]);
    mb_error e = {{0}};
    size_t len = 0;
    char *got = load_all(bad, b, &len, &e);
    if (!got) {
      ssize_t w = write(pipe_fd[1], e.message, strlen(e.message));
      (void)w;
      _exit(strstr(e.message, bad) ? 2 : 3);
    }
    _exit(len == want_len && !memcmp(got, want, want_len) ? 0 : 1);
  }
  close(pipe_fd[1]);
  ssize_t k = read(pipe_fd[0], message, n - 1);
  message[k > 0 ? k : 0] = '\0';
  close(pipe_fd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* One byte changed at 400 seeded places of a checkpoint (weights, optimiser moments, metadata
 * and the HDF5 structure around them): every load fails with an error naming the file, or
 * loads exactly what was written. Before checksums 16 of 40 such checkpoints loaded with
 * changed weights and no error. */
static void test_damaged_byte_never_loads_silently(void **state) {
  (void)state;
  char *path = mb_test_temp_path("whole.h5");
  agent a, b;
  agent_build(&a, 8, 2, 1, 3);
  agent_build(&b, 8, 2, 2, 0);
  save(&a, path, 1.0);
  mb_error err = {{0}};
  size_t want_len = 0, size = 0;
  char *want = load_all(path, &b, &want_len, &err);
  if (!want) fail_msg("%s", err.message);
  unsigned char *bytes = (unsigned char *)mb_read_file(path, &size);
  assert_non_null(bytes);
  char bad[1200];
  snprintf(bad, sizeof bad, "%s.bad", path);
  mb_rng rng;
  mb_rng_seed(&rng, 20261129);
  int refused = 0, intact = 0;
  for (int i = 0; i < 400; i++) {
    size_t at = (size_t)mb_rng_below(&rng, size);
    unsigned char flip = (unsigned char)(1 + mb_rng_below(&rng, 255));
    bytes[at] ^= flip;
    mb_test_write_bytes(bad, bytes, size);
    bytes[at] ^= flip;
    char message[MB_ERROR_MAX];
    int got = load_in_child(bad, &b, want, want_len, message, sizeof message);
    if (got < 0) fail_msg("byte %zu ^ %d: the load crashed", at, flip);
    if (got == 1) fail_msg("byte %zu ^ %d: loaded changed, no error", at, flip);
    if (got == 3) fail_msg("byte %zu: error without the file: %s", at, message);
    refused += got == 2;
    intact += got == 0; /* unused bytes: free space, padding */
  }
  printf("one-byte damage: %d refused, %d loaded intact\n", refused, intact);
  assert_true(refused > 300);
  free(bytes);
  free(want);
  agent_free(&a);
  agent_free(&b);
  mb_test_temp_remove(path);
}

/* Rewrites a dataset's values with the raw HDF5 API (its sha256 attribute left as it was). */
static void raw_overwrite(const char *path, const char *dataset, double value) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(f >= 0);
  hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
  assert_true(d >= 0);
  hid_t sp = H5Dget_space(d);
  hssize_t n = H5Sget_simple_extent_npoints(sp);
  double *x = calloc((size_t)n, sizeof *x);
  assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
  x[n - 1] = value;
  assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
  free(x);
  H5Sclose(sp);
  H5Dclose(d);
  assert_true(H5Fclose(f) >= 0);
}

static herr_t drop_checksum(hid_t obj, const char *name, const H5O_info_t *info, void *data) {
  (void)data;
  if (info->type == H5O_TYPE_DATASET && H5Aexists_by_name(obj, name, "sha256", H5P_DEFAULT) > 0)
    return H5Adelete_by_name(obj, name, "sha256", H5P_DEFAULT);
  return 0;
}

/* Reads the representation network of `path` into b: how many of its datasets had a matching
 * checksum, and how many none. */
static void repr_checksum_counts(const char *path, agent *b, int64_t *checked, int64_t *unchecked) {
  mb_error err;
  mb_nn_file *f = mb_nn_file_open(path, &err);
  assert_non_null(f);
  assert_true(mb_nn_file_read_module(f, &b->repr, &err));
  mb_nn_file_checksum_counts(f, checked, unchecked);
  mb_nn_file_close(f);
}

/* Values changed behind the checksums are refused naming the file and the dataset (weights,
 * moments, series, arrays); a checksum that is not one is refused too; a checkpoint written
 * before checksums (no sha256 attributes) loads as before. */
static void test_checksums(void **state) {
  (void)state;
  char *path = mb_test_temp_path("sums.h5");
  agent a, b;
  agent_build(&a, 8, 1, 1, 2);
  agent_build(&b, 8, 1, 2, 0);
  save(&a, path, 1.0);
  mb_error err = {{0}};
  size_t want_len = 0, got_len = 0;
  char *want = load_all(path, &b, &want_len, &err);
  assert_non_null(want);
  int64_t checked = -1, unchecked = -1;
  repr_checksum_counts(path, &b, &checked, &unchecked);
  assert_int_equal(checked, b.repr.n_params);
  assert_int_equal(unchecked, 0);
  raw_overwrite(path, "/repr/l0.weight", 0.5);
  mb_nn_file *f = mb_nn_file_open(path, &err);
  assert_non_null(f);
  assert_false(mb_nn_file_read_module(f, &b.repr, &err));
  assert_non_null(strstr(err.message, path));
  assert_non_null(strstr(err.message, "/repr/l0.weight: the data do not match their SHA-256"));
  mb_nn_file_close(f);
  save(&a, path, 1.0);
  raw_overwrite(path, "/adam/pred/l0.weight.v", 2.0);
  raw_overwrite(path, "/series/curve_return", 7.0);
  f = mb_nn_file_open(path, &err);
  assert_false(mb_nn_file_read_adam(f, &b.opt, &err));
  assert_non_null(strstr(err.message, "/adam/pred/l0.weight.v: the data do not match"));
  double *x = NULL;
  int64_t n = 0;
  assert_false(mb_nn_file_read_series(f, "curve_return", &x, &n, &err));
  assert_non_null(strstr(err.message, "/series/curve_return: the data do not match"));
  assert_null(x);
  mb_nn_file_close(f);
  /* a typed array, and a checksum that is not a SHA-256 */
  float v[4] = {1, 2, 3, 4}, back[4];
  f = mb_nn_file_create(path, &err);
  assert_true(mb_nn_file_write_array(f, "x", MB_NN_F32, v, 4, &err));
  assert_true(mb_nn_file_write_array(f, "y", MB_NN_F32, v, 4, &err));
  assert_true(mb_nn_file_write_array(f, "z", MB_NN_F32, v, 4, &err));
  assert_true(mb_nn_file_commit(f, &err));
  raw_overwrite(path, "/arrays/x", -1.0);
  hid_t h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  /* z's checksum the right string type, one hex digit short */
  assert_true(H5Adelete_by_name(h, "/arrays/z", "sha256", H5P_DEFAULT) >= 0);
  char short_sum[65];
  memset(short_sum, '0', 63);
  short_sum[63] = short_sum[64] = '\0';
  hid_t st = H5Tcopy(H5T_C_S1);
  assert_true(st >= 0 && H5Tset_size(st, sizeof short_sum) >= 0);
  hid_t ssp = H5Screate(H5S_SCALAR);
  hid_t sat =
      H5Acreate_by_name(h, "/arrays/z", "sha256", st, ssp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  assert_true(sat >= 0 && H5Awrite(sat, st, short_sum) >= 0);
  H5Aclose(sat);
  H5Sclose(ssp);
  H5Tclose(st);
  assert_true(H5Adelete_by_name(h, "/arrays/y", "sha256", H5P_DEFAULT) >= 0);
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t at = H5Acreate_by_name(h, "/arrays/y", "sha256", H5T_NATIVE_INT, sp, H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT);
  int one = 1;
  assert_true(at >= 0 && H5Awrite(at, H5T_NATIVE_INT, &one) >= 0);
  H5Aclose(at);
  H5Sclose(sp);
  H5Fclose(h);
  f = mb_nn_file_open(path, &err);
  assert_false(mb_nn_file_read_array(f, "x", MB_NN_F32, back, 4, &err));
  assert_non_null(strstr(err.message, "/arrays/x: the data do not match their SHA-256"));
  assert_false(mb_nn_file_read_array(f, "y", MB_NN_F32, back, 4, &err));
  assert_non_null(strstr(err.message, "/arrays/y: attribute 'sha256' is not a SHA-256"));
  assert_false(mb_nn_file_read_array(f, "z", MB_NN_F32, back, 4, &err));
  assert_non_null(strstr(err.message, "/arrays/z: attribute 'sha256' is not a SHA-256"));
  mb_nn_file_close(f);
  /* written before checksums: every sha256 attribute gone, the checkpoint loads the same */
  save(&a, path, 1.0);
  h = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  assert_true(H5Ovisit(h, H5_INDEX_NAME, H5_ITER_INC, drop_checksum, NULL) >= 0);
  H5Fclose(h);
  h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  assert_int_equal(H5Aexists_by_name(h, "/repr/l0.weight", "sha256", H5P_DEFAULT), 0);
  H5Fclose(h);
  repr_checksum_counts(path, &b, &checked, &unchecked); /* counted, for show to report */
  assert_int_equal(checked, 0);
  assert_int_equal(unchecked, b.repr.n_params);
  char *got = load_all(path, &b, &got_len, &err);
  if (!got) fail_msg("%s", err.message);
  assert_true(got_len == want_len && !memcmp(got, want, want_len));
  free(got);
  free(want);
  agent_free(&a);
  agent_free(&b);
  mb_test_temp_remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_wrong_architecture),
      cmocka_unit_test(test_commit_is_atomic),
      cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_arrays_and_counts),
      cmocka_unit_test(test_checkpoint_mode),
      cmocka_unit_test(test_damaged_attribute_index),
      cmocka_unit_test(test_damaged_byte_never_loads_silently),
      cmocka_unit_test(test_checksums),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
