/* Native workload format: every rejection with its exact message, round trips (samples,
 * canonical text byte for byte, random workloads with awkward names), atomic save. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model_zoo.h"
#include "paths.h"
#include "rng.h"
#include "sha256.h"
#include "support.h"
#include "workload_io.h"

/* Two ops, so the schedule is [0, 2); buffers start on line 6. */
#define HEAD                                                                \
  "mallocbench-workload 1\nname w\nsource \"s\"\nop o0 kind=dot flops=10\n" \
  "op o1 kind=add flops=5\n"

/* an op kind one byte longer than a name may be (MB_NAME_MAX - 1 = 127) */
#define K16 "kkkkkkkkkkkkkkkk"
#define K128 K16 K16 K16 K16 K16 K16 K16 K16

typedef struct reject_case {
  const char *text;
  const char *message;
} reject_case;

static const reject_case REJECTS[] = {
    {"", "t.wl: missing header: the first line must be 'mallocbench-workload 1'"},
    {"# only a comment\n\n",
     "t.wl: missing header: the first line must be 'mallocbench-workload 1'"},
    {"name w\n", "t.wl:1: missing header: the first line must be 'mallocbench-workload 1'"},
    {"mallocbench-workload 2\n",
     "t.wl:1: unsupported format version '2' (this build reads version 1)"},
    {"mallocbench-workload 1\nmallocbench-workload 1\n",
     "t.wl:2: duplicate header (first on line 1)"},
    {HEAD "buffr x size=1\n", "t.wl:6: unknown directive 'buffr'"},
    {HEAD "buffer x size=4 start=0 end=1 colour=red\n", "t.wl:6: buffer 'x': unknown key 'colour'"},
    {HEAD "buffer x size=99999999999999999999 start=0 end=1\n",
     "t.wl:6: buffer 'x': size 99999999999999999999 is too large (max 9223372036854775807)"},
    {HEAD "buffer x size=-5 start=0 end=1\n", "t.wl:6: buffer 'x': size -5 must be > 0"},
    {HEAD "buffer x size=-99999999999999999999 start=0 end=1\n",
     "t.wl:6: buffer 'x': size -99999999999999999999 must be >= 1"},
    {HEAD "buffer x size=0 start=0 end=1\n", "t.wl:6: buffer 'x': size 0 must be > 0"},
    {HEAD "buffer x size=12ab start=0 end=1\n",
     "t.wl:6: buffer 'x': size '12ab' is not an integer"},
    {HEAD "buffer x size= start=0 end=1\n", "t.wl:6: buffer 'x': size '' is not an integer"},
    {HEAD "buffer x size=4 start=1 end=0\n", "t.wl:6: buffer 'x': end 0 < start 1"},
    {HEAD "buffer x size=4 start=0 end=2\n",
     "t.wl:6: buffer 'x': end 2 outside the schedule [0, 2)"},
    {HEAD "buffer x size=4 start=3 end=3\n",
     "t.wl:6: buffer 'x': start 3 outside the schedule [0, 2)"},
    {HEAD "buffer x size=4 start=3000000000 end=0\n",
     "t.wl:6: buffer 'x': start 3000000000 is too large (max 2147483647)"},
    {HEAD "buffer x size=4 start=-1 end=0\n", "t.wl:6: buffer 'x': start -1 must be >= 0"},
    {HEAD "buffer x size=4 start=0\n", "t.wl:6: buffer 'x': start= given without end="},
    {HEAD "buffer x size=4 end=0\n", "t.wl:6: buffer 'x': end= given without start="},
    {HEAD "buffer x size=4 start=0 end=0\nuse x op=1 read=4\n",
     "t.wl:7: buffer 'x': use by op 1 outside its live range [0, 0]"},
    {HEAD "buffer x size=4 start=0 end=1\nuse x op=5 read=4\n",
     "t.wl:7: buffer 'x': use by op 5 outside the schedule [0, 2)"},
    {HEAD "buffer x size=4 start=0 end=1\nuse x op=one read=4\n",
     "t.wl:7: buffer 'x': use op 'one' is not an integer"},
    {HEAD "buffer x size=4 start=0 end=1\nuse x op=0 read=-1\n",
     "t.wl:7: buffer 'x': read -1 must be >= 0"},
    {HEAD "buffer x size=4 start=0 end=1\nuse x read=4\n", "t.wl:7: buffer 'x': use without op="},
    {HEAD "buffer x size=9223372036854775807 start=0 end=1\nbuffer y size=1 start=0 end=1\n",
     "t.wl:7: buffer 'y': total size of all buffers overflows int64"},
    {HEAD "buffer x size=4 start=0 end=1\nuse x op=0 read=9223372036854775807 write=1\n",
     "t.wl:7: buffer 'x': bytes of op 0 overflow int64"},
    {HEAD "buffer x size=4 start=0 end=1\nbuffer y size=4 start=0 end=1\n"
          "use x op=1 read=9223372036854775807\nuse y op=1 write=1\n",
     "t.wl:9: buffer 'y': bytes of op 1 overflow int64"},
    {HEAD "buffer x size=4 start=0 end=1\nuse x op=0 read=4\nuse x op=0 write=4\n",
     "t.wl:8: buffer 'x': duplicate use by op 0 (first on line 7)"},
    {HEAD "buffer x size=4 start=0 end=1\nuse x op=1\nuse x op=0\nuse x op=1\n",
     "t.wl:9: buffer 'x': duplicate use by op 1 (first on line 7)"},
    {HEAD "use y op=0\n", "t.wl:6: use: unknown buffer 'y' (declare it with 'buffer' first)"},
    {HEAD "buffer x size=4 start=0 end=1\nbuffer x size=8 start=0 end=0\n",
     "t.wl:7: buffer 'x': duplicate name (first declared on line 6)"},
    {HEAD "op o0 kind=dot flops=1\n", "t.wl:6: op 'o0': duplicate name (first declared on line 4)"},
    {HEAD, "t.wl: empty workload (no buffers)"},
    {HEAD "op o2 kind=dot flops=1.2.3\n", "t.wl:6: op 'o2': flops '1.2.3' is not a number"},
    {HEAD "op o2 kind=dot flops=nan\n", "t.wl:6: op 'o2': flops 'nan' is not a number"},
    {HEAD "op o2 kind=dot flops=-1\n", "t.wl:6: op 'o2': flops -1 must be >= 0"},
    {HEAD "op o2 kind=dot flops=1e999\n", "t.wl:6: op 'o2': flops 1e999 is too large (max 1e30)"},
    {HEAD "op o2 flops=1\n", "t.wl:6: op 'o2': missing kind="},
    {HEAD "op o2 kind=dot\n", "t.wl:6: op 'o2': missing flops="},
    {HEAD "op o2 kind=dot flops=1 extra\n", "t.wl:6: op 'o2': unexpected field 'extra'"},
    {HEAD "buffer x size=4 size=5 start=0 end=1\n", "t.wl:6: buffer 'x': duplicate key 'size'"},
    {HEAD "buffer x start=0 end=1\n", "t.wl:6: buffer 'x': missing size="},
    {HEAD "buffer x size=4 start=0 end=0 pined\n", "t.wl:6: buffer 'x': unexpected field 'pined'"},
    {HEAD "buffer x size=4 start=0 end=0 pinned pinned\n",
     "t.wl:6: buffer 'x': duplicate flag 'pinned'"},
    {HEAD "buffer x size=4\n",
     "t.wl:6: buffer 'x': no start=/end= and no uses to derive its live range"},
    {HEAD "buffer x size=4 start=0 end=0\nop o2 kind=dot flops=1\n",
     "t.wl:7: op 'o2': ops must come before the first buffer (line 6)"},
    {HEAD "buffer x size=4 start=0 end=0\nname v\n",
     "t.wl:7: 'name' must come before the first op and buffer (line 4)"},
    {"mallocbench-workload 1\nname w\nname v\n", "t.wl:3: duplicate 'name' (first on line 2)"},
    {"mallocbench-workload 1\nop o0 kind=dot flops=1\n",
     "t.wl:2: 'name' must come before the first op or buffer"},
    {"mallocbench-workload 1\nname w\nbuffer x size=4 start=0 end=0 benefit=1\n",
     "t.wl:3: buffer 'x': no ops before the first buffer; a workload without ops needs "
     "'schedule N' and 'slow_time_ps T' before its buffers"},
    {"mallocbench-workload 1\nname w\nschedule 3\nslow_time_ps 100\nbuffer x size=4 start=0 "
     "end=0\n",
     "t.wl:5: buffer 'x': missing benefit= (required in a workload without ops)"},
    {"mallocbench-workload 1\nname w\nschedule 3\nslow_time_ps 100\nbuffer x size=4 benefit=1\n",
     "t.wl:5: buffer 'x': missing start= and end= (required in a workload without ops)"},
    {"mallocbench-workload 1\nname w\nschedule 3\nslow_time_ps 100\nbuffer x size=4 start=0 "
     "end=0 benefit=1\nuse x op=0\n",
     "t.wl:6: buffer 'x': use in a workload without ops"},
    {"mallocbench-workload 1\nname w\nschedule 0\n", "t.wl:3: schedule: length 0 must be > 0"},
    {"mallocbench-workload 1\nname w\nschedule 3\nslow_time_ps x\n",
     "t.wl:4: slow_time_ps: time 'x' is not an integer"},
    {"mallocbench-workload 1\nname w\nschedule 3\nop o0 kind=dot flops=1\n",
     "t.wl:4: op 'o0': a workload with ops takes its schedule from them; remove 'schedule' (line "
     "3)"},
    {"mallocbench-workload 1\nname w\nschedule\n", "t.wl:3: 'schedule' needs a value"},
    {"mallocbench-workload 1\nname w\nschedule 3 4\n", "t.wl:3: 'schedule': unexpected field '4'"},
    {"mallocbench-workload 1\nname w\nsource \"abc\n", "t.wl:3: unterminated string \"abc"},
    {"mallocbench-workload 1\nname \"a\\qb\"\n",
     "t.wl:2: string \"a\\qb\": bad escape '\\q' (use \\\\, \\\" or \\xHH)"},
    {"mallocbench-workload 1\nname \"a\\x00\"\n", "t.wl:2: string: \\x00 is not allowed"},
    {"mallocbench-workload 1\nname \"\"\n", "t.wl:2: workload: empty name"},
    {"mallocbench-workload 1\nname a=b\n", "t.wl:2: name: unknown key 'a'"},
    {"mallocbench-workload 1\nname w x=\"q\"y\n", "t.wl:2: malformed field 'x=\"q\"y'"},
    {"mallocbench-workload 1\nsize=4\n", "t.wl:2: expected a directive, found 'size=4'"},
    {"mallocbench-workload 1\n", "t.wl: missing 'name'"},
    {"mallocbench-workload 1 2\n", "t.wl:1: header: expected 'mallocbench-workload 1'"},
    {"mallocbench-workload\n", "t.wl:1: header: expected 'mallocbench-workload 1'"},
    {HEAD "op o2 kind=" K128 " flops=1\n", "t.wl:6: op 'o2': kind longer than 127 bytes"},
    {HEAD "op\n", "t.wl:6: op: missing name"},
    {HEAD "op kind=dot flops=1\n", "t.wl:6: op: missing name"},
    {HEAD "buffer\n", "t.wl:6: buffer: missing name"},
    {HEAD "buffer size=4 start=0 end=0\n", "t.wl:6: buffer: missing name"},
    {HEAD "buffer x size=4 start=2 end=2\n",
     "t.wl:6: buffer 'x': start 2 outside the schedule [0, 2)"},
    /* each check of a positional directive alone: too many values, or after the body */
    {"mallocbench-workload 1\nname w\nsource a b\n", "t.wl:3: 'source': unexpected field 'b'"},
    {"mallocbench-workload 1\nname w\nschedule 3\nslow_time_ps 1 2\n",
     "t.wl:4: 'slow_time_ps': unexpected field '2'"},
};

static void test_rejections(void **state) {
  (void)state;
  size_t n = sizeof REJECTS / sizeof REJECTS[0];
  for (size_t i = 0; i < n; i++) {
    mb_error err;
    mb_error_clear(&err);
    mb_workload *w = mb_workload_read_text(REJECTS[i].text, strlen(REJECTS[i].text), "t.wl", &err);
    if (w || strcmp(err.message, REJECTS[i].message)) {
      print_error("case %zu: text\n%s\nexpected: %s\ngot:      %s\n", i, REJECTS[i].text,
                  REJECTS[i].message, w ? "(accepted)" : err.message);
      mb_workload_free(w);
      fail();
    }
  }
}

static void test_nul_byte(void **state) {
  (void)state;
  static const char text[] = "mallocbench-workload 1\nname w\0x\n";
  mb_error err;
  assert_null(mb_workload_read_text(text, sizeof text - 1, "t.wl", &err));
  assert_string_equal(err.message, "t.wl:2: NUL byte: not a text file");
}

/* Long fields tokenise (no regex stack exhaustion) and hit the documented limits. */
static void test_long_lines(void **state) {
  (void)state;
  size_t n = 200000;
  char *text = malloc(n + 200);
  int k = sprintf(text, "mallocbench-workload 1\nname w\nsource \"");
  memset(text + k, 'a', 4096);
  strcpy(text + k + 4096, "\"\nop o kind=k flops=1\nbuffer b size=1 start=0 end=0\n");
  mb_error err;
  mb_workload *w = mb_workload_read_text(text, strlen(text), "t.wl", &err);
  if (!w) print_error("%s\n", err.message);
  assert_non_null(w);
  assert_int_equal(strlen(w->source), 4096);
  mb_workload_free(w);
  memset(text + k, 'a', n);
  strcpy(text + k + n, "\"\n");
  assert_null(mb_workload_read_text(text, strlen(text), "t.wl", &err));
  assert_string_equal(err.message, "t.wl:3: source: longer than 4096 bytes");
  memset(text + k, 'a', n);
  strcpy(text + k + n, "\n"); /* unterminated */
  assert_null(mb_workload_read_text(text, strlen(text), "t.wl", &err));
  assert_non_null(strstr(err.message, "t.wl:3: unterminated string \"aaaa"));
  k = sprintf(text, "mallocbench-workload 1\nname ");
  memset(text + k, 'n', n);
  strcpy(text + k + n, "\n");
  assert_null(mb_workload_read_text(text, strlen(text), "t.wl", &err));
  assert_non_null(strstr(err.message, "name longer than 127 bytes"));
  free(text);
}

static void test_name_too_long(void **state) {
  (void)state;
  char text[512];
  char name[200];
  memset(name, 'n', 150);
  name[150] = '\0';
  snprintf(text, sizeof text, HEAD "buffer %s size=4 start=0 end=0\n", name);
  mb_error err;
  assert_null(mb_workload_read_text(text, strlen(text), "t.wl", &err));
  assert_string_equal(err.message,
                      "t.wl:6: buffer 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...': name longer than 127 "
                      "bytes");
}

static mb_workload *read_str(const char *text) {
  mb_error err;
  mb_workload *w = mb_workload_read_text(text, strlen(text), "t.wl", &err);
  if (!w) print_error("unexpected error: %s\n", err.message);
  return w;
}

static void test_accepts_layout_comments_crlf_and_derives_ranges(void **state) {
  (void)state;
  const char *text =
      "# leading comment\r\n"
      "\r\n"
      "  mallocbench-workload   1   # trailing comment\r\n"
      "name\tw\r\n"
      "op a kind=dot flops=1.5e3\r\n"
      "op b kind=add flops=0\r\n"
      "op c kind=add flops=.5\r\n"
      "buffer \"my buf #1\" size=4096\r\n"
      "use \"my buf #1\" op=2 write=4096\r\n"
      "use \"my buf #1\" op=1 read=10   # out of order is fine\r\n"
      "buffer p size=8 start=0 end=2 pinned\r\n";
  mb_workload *w = read_str(text);
  assert_non_null(w);
  assert_string_equal(w->name, "w");
  assert_string_equal(w->source, "");
  assert_int_equal(w->n_ops, 3);
  assert_true(w->ops[0].flops == 1500.0);
  assert_true(w->ops[2].flops == 0.5);
  assert_string_equal(w->buffers[0].name, "my buf #1");
  assert_int_equal(w->buffers[0].start, 1); /* derived from the uses */
  assert_int_equal(w->buffers[0].end, 2);
  assert_int_equal(w->buffers[0].n_uses, 2);
  assert_int_equal(w->uses[w->buffers[0].first_use].op, 1); /* sorted by op */
  assert_true(w->buffers[1].pinned);
  assert_false(w->buffers[0].pinned);
  mb_workload_free(w);
}

/* A canonical file: the writer reproduces it byte for byte. */
static const char CANONICAL[] =
    "mallocbench-workload 1\n"
    "name   canon\n"
    "source \"hand \\\"quoted\\\" \\\\ text\\x09tab\"\n"
    "op     matmul0 kind=dot flops=2097152\n"
    "op     \"odd name\" kind=add flops=0.1\n"
    "op     big kind=fusion flops=1.2345678901234568e+29\n"
    "buffer x size=65536 start=0 end=1 pinned\n"
    "use    x op=0 read=65536 write=0\n"
    "use    x op=1 read=65536 write=0\n"
    "buffer \"y=1\" size=9223372036854000000 start=1 end=2\n"
    "use    \"y=1\" op=1 read=0 write=12\n"
    "use    \"y=1\" op=2 read=3 write=0\n"
    "buffer z size=1 start=2 end=2 benefit=77\n";

static const char CANONICAL_OPLESS[] =
    "mallocbench-workload 1\n"
    "name   csvlike\n"
    "source \"\"\n"
    "schedule 5\n"
    "slow_time_ps 1000\n"
    "buffer 0 size=4 start=0 end=4 benefit=10\n"
    "buffer 1 size=4 start=2 end=2 benefit=0 pinned\n";

static void check_canonical(const char *text) {
  mb_workload *w = read_str(text);
  assert_non_null(w);
  size_t len;
  char *out = mb_workload_to_text(w, &len);
  assert_non_null(out);
  assert_int_equal(len, strlen(text));
  assert_string_equal(out, text);
  free(out);
  mb_workload_free(w);
}

static void test_canonical_byte_exact(void **state) {
  (void)state;
  check_canonical(CANONICAL);
  check_canonical(CANONICAL_OPLESS);
}

static void test_canonical_fields(void **state) {
  (void)state;
  mb_workload *w = read_str(CANONICAL);
  assert_non_null(w);
  assert_string_equal(w->source, "hand \"quoted\" \\ text\ttab");
  assert_string_equal(w->ops[1].name, "odd name");
  assert_true(w->ops[1].flops == 0.1);
  assert_int_equal(w->buffers[1].size, 9223372036854000000LL);
  assert_string_equal(w->buffers[1].name, "y=1");
  assert_true(w->buffers[2].has_benefit);
  assert_int_equal(w->buffers[2].benefit_ps, 77);
  assert_int_equal(w->n_uses, 4);
  mb_workload_free(w);
}

/* read(write(w)) == w, then write(read(write(w))) == write(w) byte for byte. */
static void check_round_trip(const mb_workload *w) {
  size_t len;
  char *text = mb_workload_to_text(w, &len);
  assert_non_null(text);
  mb_error err;
  mb_workload *back = mb_workload_read_text(text, len, "rt.wl", &err);
  if (!back) print_error("re-read failed: %s\n%s\n", err.message, text);
  assert_non_null(back);
  char why[256];
  if (!mb_workload_equal(w, back, why, sizeof why)) {
    print_error("round trip differs: %s\n", why);
    fail();
  }
  size_t len2;
  char *text2 = mb_workload_to_text(back, &len2);
  assert_int_equal(len, len2);
  assert_memory_equal(text, text2, len);
  free(text);
  free(text2);
  mb_workload_free(back);
}

static void test_samples_round_trip(void **state) {
  (void)state;
  char dir[4096];
  assert_non_null(mb_path_join(dir, sizeof dir, mb_source_dir(), "datasets/samples"));
  DIR *d = opendir(dir);
  assert_non_null(d);
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 4 || strcmp(e->d_name + n - 3, ".wl")) continue;
    char path[4096 + 256];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    mb_error err;
    mb_workload *w = mb_workload_load(path, &err);
    if (!w) print_error("%s\n", err.message);
    assert_non_null(w);
    check_round_trip(w);
    /* the content hash ignores comments and layout: it equals the hash of the canonical text */
    char h1[65], h2[65];
    size_t len;
    char *text = mb_workload_to_text(w, &len);
    assert_true(mb_workload_sha256_hex(w, h1));
    mb_sha256_hex(text, len, h2);
    assert_string_equal(h1, h2);
    free(text);
    mb_workload_free(w);
    count++;
  }
  closedir(d);
  assert_true(count >= 4);
}

/* Random workloads, names drawn from an alphabet with every awkward character. */
static void random_name(mb_rng *rng, char *out, int idx) {
  static const char ALPHA[] = "ab_.-%:/[]@\"\\#= \t\x01\x7f\xc3\xa9Z9";
  int n = (int)mb_rng_range(rng, 1, 12);
  int k = snprintf(out, 40, "%d", idx); /* unique prefix */
  for (int i = 0; i < n; i++) out[k++] = ALPHA[mb_rng_below(rng, sizeof ALPHA - 1)];
  out[k] = '\0';
}

static void test_random_round_trip(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 42);
  for (int iter = 0; iter < 300; iter++) {
    char name[64], kind[64];
    random_name(&rng, name, iter);
    mb_workload_builder *b = mb_builder_new(name, iter % 3 ? "random \"source\"\n" : "");
    bool opless = iter % 4 == 0;
    int32_t n_ops = opless ? 0 : (int32_t)mb_rng_range(&rng, 1, 20);
    for (int32_t o = 0; o < n_ops; o++) {
      random_name(&rng, name, o);
      random_name(&rng, kind, o);
      double flops = mb_rng_below(&rng, 2) ? (double)mb_rng_range(&rng, 0, 1 << 30)
                                           : mb_rng_uniform(&rng) * 1e12;
      mb_builder_add_op(b, name, kind, flops);
    }
    int32_t length = opless ? (int32_t)mb_rng_range(&rng, 1, 30) : n_ops;
    int32_t n_buf = (int32_t)mb_rng_range(&rng, 1, 25);
    for (int32_t i = 0; i < n_buf; i++) {
      random_name(&rng, name, i);
      int32_t s = (int32_t)mb_rng_below(&rng, (uint64_t)length);
      int32_t e = (int32_t)mb_rng_range(&rng, s, length - 1);
      int64_t size = mb_rng_below(&rng, 8) ? mb_rng_range(&rng, 1, 1 << 20) : INT64_MAX / 32;
      mb_builder_add_buffer(b, name, size, s, e, mb_rng_below(&rng, 3) == 0);
      if (opless || mb_rng_below(&rng, 4) == 0)
        mb_builder_set_benefit(b, i, mb_rng_range(&rng, 0, INT64_MAX / 2));
      for (int32_t o = s; !opless && o <= e; o++)
        if (mb_rng_below(&rng, 2))
          mb_builder_add_use(b, i, o, mb_rng_range(&rng, 0, 1 << 20), mb_rng_range(&rng, 0, 99));
    }
    if (opless) mb_builder_set_schedule(b, length, mb_rng_range(&rng, 1, INT64_MAX));
    mb_error err;
    mb_workload *w = mb_builder_finish(b, &err);
    if (!w) print_error("builder: %s\n", err.message);
    assert_non_null(w);
    check_round_trip(w);
    mb_workload_free(w);
  }
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  if (d) closedir(d);
  return n;
}

static void test_save_and_load(void **state) {
  (void)state;
  char *dir = mb_test_temp_dir();
  assert_non_null(dir);
  char path[512], sub[512];
  snprintf(path, sizeof path, "%s/w.wl", dir);
  mb_workload *w = read_str(CANONICAL);
  mb_error err;
  assert_true(mb_workload_save(w, path, &err));
  assert_true(mb_workload_save(w, path, &err)); /* replaces the existing file */
  assert_int_equal(count_entries(dir), 1);      /* no temporary left behind */
  mb_workload *back = mb_workload_load(path, &err);
  assert_non_null(back);
  assert_true(mb_workload_equal(w, back, NULL, 0));
  mb_workload_free(back);
  back = mb_workload_load_any(path, &err); /* native by extension */
  assert_non_null(back);
  mb_workload_free(back);

  /* a directory or a FIFO is never replaced by the rename: error naming it, it survives, no
   * temporary left (a device such as /dev/null would be deleted otherwise) */
  snprintf(sub, sizeof sub, "%s/adir", dir);
  assert_int_equal(mb_mkdir_p(sub), 0);
  assert_false(mb_workload_save(w, sub, &err));
  assert_non_null(strstr(err.message, "exists and is not a regular file (a directory)"));
  assert_non_null(strstr(err.message, sub));
  assert_int_equal(count_entries(dir), 2);
  snprintf(sub, sizeof sub, "%s/afifo", dir);
  assert_int_equal(mkfifo(sub, 0600), 0);
  assert_false(mb_workload_save(w, sub, &err));
  assert_non_null(strstr(err.message, "(a FIFO)"));
  struct stat st;
  assert_int_equal(stat(sub, &st), 0);
  assert_true(S_ISFIFO(st.st_mode));
  assert_int_equal(count_entries(dir), 3);
  remove(sub);

  snprintf(sub, sizeof sub, "%s/missing/w.wl", dir);
  assert_false(mb_workload_save(w, sub, &err));
  assert_non_null(strstr(err.message, "cannot create"));

  snprintf(sub, sizeof sub, "%s/nope.wl", dir);
  assert_null(mb_workload_load(sub, &err));
  char expect[600];
  snprintf(expect, sizeof expect, "%s: cannot read: No such file or directory", sub);
  assert_string_equal(err.message, expect);
  mb_workload_free(w);
  mb_test_temp_remove(dir);
}

/* load_any dispatches by extension: a buffer CSV has no ops, an HLO dump has ops, and the
 * result round-trips through the native format like any workload. */
static void test_load_any_dispatch(void **state) {
  (void)state;
  char csv[4096], hlo[4096];
  snprintf(csv, sizeof csv, "%s/minimalloc/input.12.csv", mb_test_data_dir());
  snprintf(hlo, sizeof hlo, "%s/hlo/mlp_pt_xla.hlo", mb_test_data_dir());
  if (access(csv, R_OK) || access(hlo, R_OK)) skip(); /* external data not present */
  mb_error err;
  mb_workload *w = mb_workload_load_any(csv, &err);
  if (!w) print_error("%s\n", err.message);
  assert_non_null(w);
  assert_int_equal(w->n_ops, 0);
  assert_int_equal(w->n_buffers, 5);
  check_round_trip(w);
  mb_workload_free(w);
  w = mb_workload_load_any(hlo, &err);
  if (!w) print_error("%s\n", err.message);
  assert_non_null(w);
  assert_true(w->n_ops > 0);
  check_round_trip(w);
  mb_workload_free(w);
  /* a native file read as such: the CSV is not valid native text */
  assert_null(mb_workload_load(csv, &err));
  assert_non_null(strstr(err.message, "input.12.csv:1: missing header"));
}

/* A model-zoo spec is generated as `generate model` does (the same workload), so that show,
 * solve, check and play take one directly (it was read as native text: "malformed field"). */
static void test_load_any_spec(void **state) {
  (void)state;
  char spec[4096];
  assert_non_null(
      mb_path_join(spec, sizeof spec, mb_source_dir(), "datasets/models/mlp_inf_b256.spec"));
  mb_error err;
  mb_workload *w = mb_workload_load_any(spec, &err);
  if (!w) print_error("%s\n", err.message);
  assert_non_null(w);
  mb_workload *generated = mb_model_generate_file(spec, &err);
  assert_non_null(generated);
  char why[256];
  assert_true(mb_workload_equal(w, generated, why, sizeof why));
  assert_true(w->n_ops > 0);
  check_round_trip(w);
  mb_workload_free(w);
  mb_workload_free(generated);
}

static void test_equal_reports_difference(void **state) {
  (void)state;
  mb_workload *a = read_str(CANONICAL);
  char text[sizeof CANONICAL];
  memcpy(text, CANONICAL, sizeof CANONICAL);
  char *p = strstr(text, "size=65536");
  p[5] = '7'; /* size=75536 */
  mb_workload *b = read_str(text);
  char why[128];
  assert_false(mb_workload_equal(a, b, why, sizeof why));
  assert_string_equal(why, "buffer 0 ('x') differs");
  mb_workload_free(a);
  mb_workload_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rejections),
      cmocka_unit_test(test_nul_byte),
      cmocka_unit_test(test_long_lines),
      cmocka_unit_test(test_name_too_long),
      cmocka_unit_test(test_accepts_layout_comments_crlf_and_derives_ranges),
      cmocka_unit_test(test_canonical_byte_exact),
      cmocka_unit_test(test_canonical_fields),
      cmocka_unit_test(test_samples_round_trip),
      cmocka_unit_test(test_random_round_trip),
      cmocka_unit_test(test_save_and_load),
      cmocka_unit_test(test_load_any_dispatch),
      cmocka_unit_test(test_load_any_spec),
      cmocka_unit_test(test_equal_reports_difference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
