/* The catalogue: parsing, the capacity rule, materialising with the cache, and every entry of
 * datasets/catalogue.txt. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalogue.h"
#include "cost.h"
#include "paths.h"
#include "sha256.h"
#include "support.h"
#include "workload_io.h"

#define HEADER "name kind source args hardware capacity split tags\n"

static mb_catalogue *parse(const char *text, mb_error *err) {
  return mb_catalogue_parse(text, strlen(text), "cat.txt", err);
}

static void test_parse_good(void **state) {
  (void)state;
  mb_error err;
  const char *text =
      "# a comment\n"
      "\n" HEADER
      "bert-hlo   hlo   hlo/bert.hlo  -               tpu-v4i  64MiB   test  bert,training,real\n"
      "  strassen alphatensor builtin:strassen_squared n=8192,dtype=bf16 gpu-l2 profile train "
      "matmul,inference,generated  # trailing comment\n"
      "mm-a csv minimalloc/A.1048576.csv - tpu-v4i 524288 test -\n"
      "hlo-nofuse hlo hlo/x.hlo fusion=off,pin_outputs=on edge-npu 1KiB train x\n";
  mb_catalogue *c = parse(text, &err);
  if (!c) fail_msg("%s", err.message);
  assert_int_equal(c->n_entries, 4);
  assert_string_equal(c->entries[0].name, "bert-hlo");
  assert_string_equal(c->entries[0].kind, "hlo");
  assert_int_equal(c->entries[0].capacity, 64 << 20);
  assert_int_equal(c->entries[0].line, 4);
  assert_string_equal(c->entries[1].source, "builtin:strassen_squared");
  assert_string_equal(c->entries[1].args, "n=8192,dtype=bf16");
  assert_int_equal(c->entries[1].capacity, 0);
  assert_string_equal(c->entries[1].tags, "matmul,inference,generated");
  assert_int_equal(c->entries[2].capacity, 524288);
  assert_string_equal(c->entries[2].tags, "-");
  assert_int_equal(c->entries[3].capacity, 1024);
  mb_catalogue_free(c);
}

static void expect_error(const char *entry_line, const char *needle) {
  char text[2048];
  snprintf(text, sizeof text, "# c\n" HEADER "ok hlo hlo/a.hlo - tpu-v4i 1MiB test x\n%s\n",
           entry_line);
  mb_error err;
  mb_error_clear(&err);
  mb_catalogue *c = parse(text, &err);
  if (c) fail_msg("'%s' parsed; expected an error with '%s'", entry_line, needle);
  if (!strstr(err.message, needle)) fail_msg("'%s' lacks '%s'", err.message, needle);
}

static void test_parse_errors(void **state) {
  (void)state;
  expect_error("b@d hlo hlo/a.hlo - tpu-v4i 1MiB test x", "cat.txt:4:1: field 'name'");
  expect_error("ok hlo hlo/b.hlo - tpu-v4i 1MiB test x",
               "cat.txt:4:1: field 'name': 'ok' "
               "already defined on line 3");
  expect_error("w pdf hlo/a.hlo - tpu-v4i 1MiB test x", "cat.txt:4:3: field 'kind': 'pdf'");
  expect_error("w hlo hlo/a.hlo n=4 tpu-v4i 1MiB test x",
               "cat.txt:4:17: field 'args': unknown "
               "key 'n'");
  expect_error("w hlo hlo/a.hlo fusion=maybe tpu-v4i 1MiB test x", "fusion=maybe: expected on");
  expect_error("w hlo hlo/a.hlo loop_bodies=yes tpu-v4i 1MiB test x",
               "loop_bodies=yes: expected on");
  /* a repeated key is refused (the first used to win silently), at the second occurrence */
  expect_error("w hlo hlo/a.hlo fusion=off,fusion=on tpu-v4i 1MiB test x",
               "cat.txt:4:28: field 'args': duplicate key 'fusion'");
  expect_error("w alphatensor builtin:standard n=64,dtype=f32,n=8 tpu-v4i 1MiB test x",
               "cat.txt:4:47: field 'args': duplicate key 'n'");
  expect_error("w alphatensor builtin:standard n=64,dtype=f32,dtype=bf16 tpu-v4i 1MiB test x",
               "cat.txt:4:47: field 'args': duplicate key 'dtype'");
  expect_error("w csv a.csv n=4 tpu-v4i 1MiB test x", "kind 'csv' takes no arguments");
  expect_error("w alphatensor builtin:standard dtype=bf16 tpu-v4i 1MiB test x", "needs n=N");
  expect_error("w alphatensor builtin:standard n=10,dtype=bf16 tpu-v4i 1MiB test x", "n=10");
  expect_error("w alphatensor builtin:standard n=1048580,dtype=bf16 tpu-v4i 1MiB test x",
               "n=1048580: expected a multiple of 4 in [4, 1048576]");
  /* a key as long as an allowed one is still unknown */
  expect_error("w alphatensor builtin:standard m=64,dtype=f32 tpu-v4i 1MiB test x",
               "cat.txt:4:32: field 'args': unknown key 'm'");
  expect_error("w alphatensor builtin:standard n=8,dtype=i8 tpu-v4i 1MiB test x", "dtype=i8");
  expect_error("w alphatensor builtin:winograd n=8,dtype=bf16 tpu-v4i 1MiB test x",
               "cat.txt:4:15: field 'source'");
  expect_error("w hlo builtin:standard - tpu-v4i 1MiB test x", "'builtin:' sources are for");
  expect_error("w hlo hlo/a.hlo - tpu/v4i 1MiB test x", "cat.txt:4:19: field 'hardware'");
  expect_error("w hlo hlo/a.hlo - tpu-v4i 12XB test x", "cat.txt:4:27: field 'capacity'");
  expect_error("w hlo hlo/a.hlo - tpu-v4i 0 test x", "must be > 0");
  expect_error("w hlo hlo/a.hlo - tpu-v4i 999999999999GiB test x", "overflows");
  expect_error("w hlo hlo/a.hlo - tpu-v4i 8589934592GiB test x", /* (INT64_MAX >> 30) + 1 */
               "cat.txt:4:27: field 'capacity': '8589934592GiB' overflows 64 bits");
  expect_error("w hlo hlo/a.hlo - tpu-v4i 1MiB dev x", "cat.txt:4:32: field 'split': 'dev'");
  expect_error("w hlo hlo/a.hlo - tpu-v4i 1MiB test Bad", "cat.txt:4:37: field 'tags'");
  /* the column is the one after the line's end */
  expect_error("w hlo hlo/a.hlo - tpu-v4i 1MiB test",
               "cat.txt:4:36: 7 fields, expected 8: field 'tags' missing");
  expect_error("w hlo hlo/a.hlo - tpu-v4i 1MiB test x extra", "9 fields, expected 8");
  expect_error("w alphatensor builtin:standard n=8 tpu-v4i 1MiB test x",
               "cat.txt:4:32: field 'args': kind alphatensor needs dtype=bf16|f16|f32");
  expect_error("w hlo hlo/a.hlo fusion tpu-v4i 1MiB test x",
               "cat.txt:4:17: field 'args': 'fusion' is not '-' or comma-separated key=value");
  expect_error("w hlo hlo/a.hlo a=1,,b=2 tpu-v4i 1MiB test x",
               "cat.txt:4:17: field 'args': 'a=1,,b=2' is not '-' or comma-separated key=value");
  char long_tags[400];
  snprintf(long_tags, sizeof long_tags, "w hlo hlo/a.hlo - tpu-v4i 1MiB test %0300d", 0);
  expect_error(long_tags, "cat.txt:4:37: field 'tags': 300 characters, at most 255 allowed");
  snprintf(long_tags, sizeof long_tags, "w hlo hlo/a.hlo - tpu-v4i 1MiB test %0256d", 0);
  expect_error(long_tags, "cat.txt:4:37: field 'tags': 256 characters, at most 255 allowed");
  mb_error err;
  assert_null(parse("w hlo hlo/a.hlo - tpu-v4i 1MiB test x\n", &err));
  assert_non_null(strstr(err.message, "cat.txt:1:1: expected the header line"));
  assert_null(parse("# only comments\n", &err));
  assert_non_null(strstr(err.message, "no header line"));
  assert_null(mb_catalogue_parse(HEADER "a\0b", sizeof(HEADER "a\0b") - 1, "cat.txt", &err));
  assert_non_null(strstr(err.message, "cat.txt:2: NUL byte"));
  assert_null(mb_catalogue_load("/nonexistent/catalogue.txt", &err));
  assert_non_null(strstr(err.message, "/nonexistent/catalogue.txt"));
}

/* The largest values each bounded field takes. */
static void test_parse_limits(void **state) {
  (void)state;
  char text[1024];
  snprintf(text, sizeof text,
           HEADER
           "small alphatensor builtin:standard n=4,dtype=f32 tpu-v4i 8589934591GiB test "
           "%0255d\n"
           "large alphatensor builtin:standard n=1048576,dtype=f32 tpu-v4i "
           "9007199254740991KiB test x\n",
           0);
  mb_error err;
  mb_catalogue *c = parse(text, &err);
  if (!c) fail_msg("%s", err.message);
  assert_int_equal(c->n_entries, 2);
  assert_int_equal(c->entries[0].capacity, (int64_t)8589934591 << 30);
  assert_int_equal(strlen(c->entries[0].tags), 255);
  assert_int_equal(c->entries[1].capacity, INT64_MAX - 1023); /* (INT64_MAX >> 10) << 10 */
  mb_catalogue_free(c);
}

/* --workloads: a regex searched (not anchored) in every entry's name. */
static void test_select(void **state) {
  (void)state;
  mb_error err;
  mb_catalogue *c = parse(HEADER
                          "bert hlo hlo/a.hlo - tpu-v4i 1MiB test x\n"
                          "gpt2 hlo hlo/b.hlo - tpu-v4i 1MiB test x\n"
                          "mm-a csv a.csv - tpu-v4i 1MiB test x\n"
                          "albert hlo hlo/c.hlo - tpu-v4i 1MiB test x\n",
                          &err);
  assert_non_null(c);
  bool selected[4];
  assert_true(mb_catalogue_select(c, "^mm-|bert$", "--workloads", selected, &err));
  assert_true(selected[0] && !selected[1] && selected[2] && selected[3]);
  assert_true(mb_catalogue_select(c, "pt", "--workloads", selected, &err));
  assert_true(!selected[0] && selected[1] && !selected[2] && !selected[3]);
  assert_true(mb_catalogue_select(c, NULL, "--workloads", selected, &err));
  assert_true(selected[0] && selected[1] && selected[2] && selected[3]);
  assert_false(mb_catalogue_select(c, "bert(", "--workloads", selected, &err));
  assert_non_null(strstr(err.message, "--workloads 'bert(': column 6: "));
  mb_catalogue_free(c);
  /* the same over any array of structs holding names */
  struct {
    int pad;
    char name[12];
  } rows[3] = {{1, "train-a"}, {2, "test-b"}, {3, "train-c"}};
  assert_true(mb_names_select(rows[0].name, sizeof *rows, 3, "^train", "--x", selected, &err));
  assert_true(selected[0] && !selected[1] && selected[2]);
}

/* A chain of buffers: sizes[i] live on [i, i+1], plus a pinned giant that must not count. */
static mb_workload *chain(const int64_t *sizes, int n) {
  mb_workload_builder *b = mb_builder_new("chain", "test");
  for (int i = 0; i <= n; i++) {
    char name[16];
    snprintf(name, sizeof name, "op%d", i);
    mb_builder_add_op(b, name, "add", 1.0);
  }
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "b%d", i);
    int32_t id = mb_builder_add_buffer(b, name, sizes[i], i, i + 1, false);
    mb_builder_add_use(b, id, i, 0, sizes[i]);
    mb_builder_add_use(b, id, i + 1, sizes[i], 0);
  }
  int32_t pin = mb_builder_add_buffer(b, "param", (int64_t)1 << 40, 0, n, true);
  mb_builder_add_use(b, pin, 0, (int64_t)1 << 40, 0);
  mb_error err;
  mb_workload *w = mb_builder_finish(b, &err);
  if (!w) fail_msg("%s", err.message);
  return w;
}

static void test_capacity_rule(void **state) {
  (void)state;
  mb_hardware hw = {.capacity = 128 << 20, .alignment = 512};
  const int64_t MiB = 1 << 20;
  /* peak = 2 MiB + 2 MiB = 4 MiB (two neighbours overlap at one time): quarter = 1 MiB */
  int64_t s1[] = {2 * MiB, 2 * MiB, MiB};
  mb_workload *w = chain(s1, 3);
  assert_int_equal(mb_catalogue_placeable_peak(w), 4 * MiB);
  assert_int_equal(mb_catalogue_auto_capacity(w, &hw), MiB);
  mb_workload_free(w);
  /* peak 3 MiB: quarter 768 KiB rounds down to 512 KiB (512 B * 2^10) */
  int64_t s2[] = {2 * MiB, MiB, MiB / 4};
  w = chain(s2, 3);
  assert_int_equal(mb_catalogue_auto_capacity(w, &hw), 512 * 1024);
  /* a small profile: peak > 2x capacity keeps the profile's capacity */
  mb_hardware small = {.capacity = MiB, .alignment = 64};
  assert_int_equal(mb_catalogue_auto_capacity(w, &small), MiB);
  mb_workload_free(w);
  /* never below the smallest non-pinned buffer, rounded up to the alignment */
  int64_t s3[] = {1000000, 1000001};
  w = chain(s3, 2);
  assert_int_equal(mb_catalogue_auto_capacity(w, &hw), 1000448); /* 1954 * 512 */
  mb_workload_free(w);
  /* a quarter that is a power of two times the alignment is taken whole; peak exactly 2x the
   * profile's capacity still takes the quarter */
  int64_t s4[] = {2 * MiB, 2 * MiB, 4096};
  w = chain(s4, 3);
  assert_int_equal(mb_catalogue_auto_capacity(w, &hw), MiB);
  mb_hardware half = {.capacity = 2 * MiB, .alignment = 512};
  assert_int_equal(mb_catalogue_auto_capacity(w, &half), MiB);
  half.capacity = 2 * MiB - 1;
  assert_int_equal(mb_catalogue_auto_capacity(w, &half), 2 * MiB - 1);
  mb_workload_free(w);
}

/* A buffer live at one time only (start == end) counts toward the placeable peak. */
static void test_peak_of_one_step_buffer(void **state) {
  (void)state;
  mb_workload_builder *b = mb_builder_new("one-step", "test");
  mb_builder_add_op(b, "op0", "add", 1.0);
  mb_builder_add_op(b, "op1", "add", 1.0);
  int32_t id = mb_builder_add_buffer(b, "t", 3000, 1, 1, false);
  mb_builder_add_use(b, id, 1, 0, 3000);
  mb_error err;
  mb_workload *w = mb_builder_finish(b, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(mb_catalogue_placeable_peak(w), 3000);
  mb_workload_free(w);
}

static int count_files(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  size_t sl = strlen(suffix);
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    n += l > sl && !strcmp(e->d_name + l - sl, suffix);
  }
  closedir(d);
  return n;
}

static bool first_file(const char *dir, const char *suffix, char *out, size_t n) {
  DIR *d = opendir(dir);
  if (!d) return false;
  struct dirent *e;
  size_t sl = strlen(suffix);
  bool found = false;
  while (!found && (e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l > sl && !strcmp(e->d_name + l - sl, suffix)) {
      mb_path_join(out, n, dir, e->d_name);
      found = true;
    }
  }
  closedir(d);
  return found;
}

static void test_cache(void **state) {
  (void)state;
  mb_error err;
  mb_catalogue *c = parse(HEADER
                          "at alphatensor builtin:strassen_squared n=256,dtype=f32 tpu-v4i "
                          "profile test x\n",
                          &err);
  assert_non_null(c);
  char *cache = mb_test_temp_dir();
  bool missing = true;
  mb_workload *a = mb_catalogue_load_workload(&c->entries[0], NULL, cache, &missing, &err);
  if (!a) fail_msg("%s", err.message);
  assert_false(missing);
  assert_string_equal(a->name, "at");
  assert_int_equal(count_files(cache, ".wl"), 1);
  assert_int_equal(count_files(cache, ".sha256"), 1);
  /* A hit gives the same workload. */
  mb_workload *b = mb_catalogue_load_workload(&c->entries[0], NULL, cache, &missing, &err);
  assert_non_null(b);
  char why[256];
  if (!mb_workload_equal(a, b, why, sizeof why)) fail_msg("cache hit differs: %s", why);
  mb_workload_free(b);
  /* A corrupt file (truncated: it may still parse) is detected and regenerated. */
  char file[4096];
  assert_true(first_file(cache, ".wl", file, sizeof file));
  size_t len = 0;
  char *text = mb_read_file(file, &len);
  assert_non_null(text);
  FILE *f = fopen(file, "wb");
  fwrite(text, 1, len / 2, f);
  fclose(f);
  b = mb_catalogue_load_workload(&c->entries[0], NULL, cache, &missing, &err);
  assert_non_null(b);
  if (!mb_workload_equal(a, b, why, sizeof why)) fail_msg("regenerated differs: %s", why);
  mb_workload_free(b);
  size_t len2 = 0;
  char *text2 = mb_read_file(file, &len2);
  assert_int_equal(len2, len); /* rewritten whole */
  assert_memory_equal(text, text2, len);
  free(text);
  free(text2);
  /* Other arguments are another key. */
  mb_catalogue *c2 = parse(HEADER
                           "at alphatensor builtin:strassen_squared n=256,dtype=bf16 "
                           "tpu-v4i profile test x\n",
                           &err);
  b = mb_catalogue_load_workload(&c2->entries[0], NULL, cache, &missing, &err);
  assert_non_null(b);
  assert_int_equal(count_files(cache, ".wl"), 2);
  assert_int_equal(b->buffers[0].size * 2, a->buffers[0].size);
  mb_workload_free(b);
  /* A cache directory that does not exist yet is made, parents too. */
  char nested[4200];
  snprintf(nested, sizeof nested, "%s/new/cache", cache);
  b = mb_catalogue_load_workload(&c2->entries[0], NULL, nested, &missing, &err);
  assert_non_null(b);
  assert_int_equal(count_files(nested, ".wl"), 1);
  mb_workload_free(b);
  /* No cache dir: generates without writing. */
  b = mb_catalogue_load_workload(&c2->entries[0], NULL, NULL, &missing, &err);
  assert_non_null(b);
  mb_workload_free(b);
  mb_workload_free(a);
  mb_catalogue_free(c);
  mb_catalogue_free(c2);
  mb_test_temp_remove(cache);
}

/* Copies src to dir/rel, making dir/rel's parent directories (one level below dir). */
static void copy_into(const char *src, const char *dir, const char *sub, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, sub);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
  size_t len = 0;
  char *text = mb_read_file(src, &len);
  assert_non_null(text);
  mb_test_write_bytes(path, text, len);
  free(text);
}

/* A catalogue workload's source names its file as the catalogue does, not by the absolute path
 * this machine found it at: its SHA-256 (in every results file) is the same wherever the
 * checkout or the data directory is, also when a model comes from a cache made elsewhere. */
static void test_sha256_independent_of_location(void **state) {
  (void)state;
  char *home = getenv("MALLOCBENCH_HOME") ? strdup(getenv("MALLOCBENCH_HOME")) : NULL;
  char *tree[2] = {mb_test_temp_dir(), mb_test_temp_dir()};
  char *data[2] = {mb_test_temp_dir(), mb_test_temp_dir()};
  char *cache = mb_test_temp_dir();
  char csv[4096];
  snprintf(csv, sizeof csv, "%s/minimalloc/A.1048576.csv", mb_test_data_dir());
  bool have_csv = access(csv, R_OK) == 0;
  for (int k = 0; k < 2; k++) {
    char dst[4096];
    snprintf(dst, sizeof dst, "%s/datasets", tree[k]);
    mkdir(dst, 0755);
    copy_into("datasets/models/mlp_inf_b256.spec", dst, "models", "mlp_inf_b256.spec");
    if (have_csv) copy_into(csv, data[k], "minimalloc", "A.1048576.csv");
  }
  mb_error err;
  mb_catalogue *c = parse(HEADER
                          "m model datasets/models/mlp_inf_b256.spec - tpu-v4i profile test x\n"
                          "a csv minimalloc/A.1048576.csv - tpu-v4i profile test x\n",
                          &err);
  assert_non_null(c);
  const char *want_source[2] = {"model zoo v1: datasets/models/mlp_inf_b256.spec",
                                "MiniMalloc buffer CSV minimalloc/A.1048576.csv"};
  for (int i = 0; i < (have_csv ? 2 : 1); i++) {
    char sha[2][65];
    for (int k = 0; k < 2; k++) {
      setenv("MALLOCBENCH_HOME", tree[k], 1);
      bool missing = false;
      mb_workload *w = mb_catalogue_load_workload(&c->entries[i], data[k], cache, &missing, &err);
      if (!w) fail_msg("%s", err.message);
      assert_string_equal(w->source, want_source[i]);
      assert_true(mb_workload_sha256_hex(w, sha[k]));
      mb_workload_free(w);
    }
    assert_string_equal(sha[0], sha[1]);
  }
  if (!have_csv) fprintf(stderr, "note: no %s: the csv entry was not checked\n", csv);
  if (home)
    setenv("MALLOCBENCH_HOME", home, 1);
  else
    unsetenv("MALLOCBENCH_HOME");
  free(home);
  mb_catalogue_free(c);
  for (int k = 0; k < 2; k++) {
    mb_test_temp_remove(tree[k]);
    mb_test_temp_remove(data[k]);
  }
  mb_test_temp_remove(cache);
}

static void test_missing_data(void **state) {
  (void)state;
  mb_error err;
  mb_catalogue *c = parse(HEADER
                          "h hlo hlo/none.hlo - tpu-v4i profile test x\n"
                          "f alphatensor alphatensor/none.txt n=8,dtype=bf16 tpu-v4i "
                          "profile test x\n",
                          &err);
  assert_non_null(c);
  char *empty = mb_test_temp_dir();
  for (int i = 0; i < 2; i++) {
    bool missing = false;
    assert_null(mb_catalogue_load_workload(&c->entries[i], empty, NULL, &missing, &err));
    assert_true(missing);
    assert_non_null(strstr(err.message, "missing data file"));
    assert_non_null(strstr(err.message, "none."));
    assert_non_null(strstr(err.message, "datasets/README.md says where each comes from"));
    assert_null(strchr(err.message, '\n'));
  }
  mb_test_temp_remove(empty);
  mb_catalogue_free(c);
  /* a file that is there is found, whatever errno an earlier call left */
  char *dir = mb_test_temp_dir();
  char file[4200];
  snprintf(file, sizeof file, "%s/there.csv", dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fputs("id,lower,upper,size\n0,0,10,64\n", f);
  fclose(f);
  c = parse(HEADER "t csv there.csv - tpu-v4i profile test x\n", &err);
  assert_non_null(c);
  bool missing = true;
  errno = ENOENT;
  mb_workload *w = mb_catalogue_load_workload(&c->entries[0], dir, NULL, &missing, &err);
  if (!w) fail_msg("%s", err.message);
  assert_false(missing);
  assert_int_equal(w->n_buffers, 1);
  mb_workload_free(w);
  mb_catalogue_free(c);
  /* an HLO entry's loop_bodies: its while loop inlined (the while, the condition's compare and
   * the body's negate are ops) or one op */
  snprintf(file, sizeof file, "%s/loop.hlo", dir);
  f = fopen(file, "w");
  assert_non_null(f);
  fputs(
      "HloModule l\ncond {\n  c = f32[4] parameter(0)\n  z = f32[4] constant({0,0,0,0})\n"
      "  ROOT t = pred[4] compare(c, z), direction=LT\n}\n"
      "body {\n  b = f32[4] parameter(0)\n  ROOT n = f32[4] negate(b)\n}\n"
      "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT w = f32[4] while(p), condition=cond, "
      "body=body\n}\n",
      f);
  fclose(f);
  c = parse(HEADER
            "in hlo loop.hlo - tpu-v4i profile test x\n"
            "op hlo loop.hlo loop_bodies=off tpu-v4i profile test x\n",
            &err);
  if (!c) fail_msg("%s", err.message);
  for (int i = 0; i < 2; i++) {
    w = mb_catalogue_load_workload(&c->entries[i], dir, NULL, &missing, &err);
    if (!w) fail_msg("%s", err.message);
    assert_int_equal(w->n_ops, i == 0 ? 3 : 1);
    mb_workload_free(w);
  }
  mb_catalogue_free(c);
  mb_test_temp_remove(dir);
}

/* The split names every command's --split accepts: exactly the catalogue's, no prefix or case. */
static void test_split_names(void **state) {
  (void)state;
  assert_int_equal(MB_CATALOGUE_N_SPLITS, 2);
  assert_string_equal(mb_catalogue_splits[0], "train");
  assert_string_equal(mb_catalogue_splits[1], "test");
  assert_null(mb_catalogue_splits[MB_CATALOGUE_N_SPLITS]);
  assert_true(mb_catalogue_split_known("train"));
  assert_true(mb_catalogue_split_known("test"));
  const char *const wrong[] = {"", "Train", "tes", "tests", "validation", "train "};
  for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++)
    assert_false(mb_catalogue_split_known(wrong[i]));
}

static void test_hash(void **state) {
  (void)state;
  char *path = mb_test_write_temp(".txt", HEADER
                                  "a native datasets/samples/mlp_tiny.wl - "
                                  "tpu-v4i profile test x\n");
  mb_error err;
  mb_catalogue *c = mb_catalogue_load(path, &err);
  assert_non_null(c);
  char h[65], want[65];
  assert_true(mb_catalogue_hash(c, h, &err));
  size_t len;
  char *text = mb_read_file(path, &len);
  mb_sha256_hex(text, len, want);
  assert_string_equal(h, want);
  free(text);
  mb_catalogue_free(c);
  mb_test_temp_remove(path);
}

static bool has_tag(const char *tags, const char *tag) {
  size_t n = strlen(tag);
  for (const char *p = tags; *p;) {
    size_t l = strcspn(p, ",");
    if (l == n && !strncmp(p, tag, n)) return true;
    p += l + (p[l] == ',');
  }
  return false;
}

/* Every entry of the real catalogue whose data exists loads, validates, and poses a
 * non-trivial, non-empty problem; the split keeps the rules of datasets/CATALOGUE.md. */
static void test_every_entry_loads(void **state) {
  (void)state;
  char path[4096];
  mb_path_join(path, sizeof path, mb_source_dir(), "datasets/catalogue.txt");
  mb_error err;
  mb_catalogue *c = mb_catalogue_load(path, &err);
  if (!c) fail_msg("%s", err.message);
  assert_true(c->n_entries >= 60);
  char *cache = mb_test_temp_dir();
  int loaded = 0, missing_n = 0, train = 0;
  time_t t0 = time(NULL);
  for (int32_t i = 0; i < c->n_entries; i++) {
    const mb_catalogue_entry *e = &c->entries[i];
    train += !strcmp(e->split, "train");
    if ((!strcmp(e->kind, "alphatensor") || has_tag(e->tags, "real")) && strcmp(e->split, "test"))
      fail_msg("%s: AlphaTensor and real workloads belong to the test split", e->name);
    mb_hardware hw;
    if (!mb_catalogue_hardware(e, &hw, &err)) fail_msg("%s", err.message);
    bool missing = false;
    mb_workload *w = mb_catalogue_load_workload(e, mb_test_data_dir(), cache, &missing, &err);
    if (!w && missing) {
      missing_n++;
      continue;
    }
    if (!w) fail_msg("%s", err.message);
    loaded++;
    int64_t peak = mb_catalogue_placeable_peak(w);
    int64_t smallest = INT64_MAX;
    for (int32_t b = 0; b < w->n_buffers; b++)
      if (!w->buffers[b].pinned && w->buffers[b].size < smallest) smallest = w->buffers[b].size;
    bool exempt = has_tag(e->tags, "packing") || has_tag(e->tags, "degenerate");
    if (!exempt && hw.capacity >= peak)
      fail_msg("%s: capacity %lld >= placeable peak %lld: trivial", e->name, (long long)hw.capacity,
               (long long)peak);
    if (!exempt && hw.capacity < smallest)
      fail_msg("%s: capacity %lld below the smallest buffer %lld: empty", e->name,
               (long long)hw.capacity, (long long)smallest);
    if (mb_slow_time(w, &hw) <= 0) fail_msg("%s: T_slow <= 0", e->name);
    mb_workload_free(w);
  }
  printf("# %d entries: %d loaded, %d skipped (missing data), %d train, %lds\n", c->n_entries,
         loaded, missing_n, train, (long)(time(NULL) - t0));
  mb_test_temp_remove(cache);
  if (missing_n == c->n_entries) {
    mb_catalogue_free(c);
    skip();
  }
  assert_true(train * 10 >= c->n_entries * 3 && train * 10 <= c->n_entries * 7);
  mb_catalogue_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_good),    cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_parse_limits),  cmocka_unit_test(test_select),
      cmocka_unit_test(test_capacity_rule), cmocka_unit_test(test_peak_of_one_step_buffer),
      cmocka_unit_test(test_cache),         cmocka_unit_test(test_sha256_independent_of_location),
      cmocka_unit_test(test_missing_data),  cmocka_unit_test(test_hash),
      cmocka_unit_test(test_split_names),   cmocka_unit_test(test_every_entry_loads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
