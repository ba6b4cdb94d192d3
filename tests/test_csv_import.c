/* Tests of the MiniMalloc buffer CSV importer (suite/csv_import.h): the real CSVs, the live
 * range and benefit rules, T_slow, capacity from the file name, and exact error messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_import.h"
#include "support.h"
#include "workload.h"
#include "workload_io.h"

static mb_workload *import_str(const char *text, mb_error *err) {
  return mb_csv_import_text(text, strlen(text), "t.csv", err);
}

/* Imports text that must import; fails the test with the importer's message otherwise. */
static mb_workload *import_ok(const char *text) {
  mb_error err = {{0}};
  mb_workload *w = import_str(text, &err);
  if (!w) fail_msg("refused: %s", err.message);
  return w;
}

static void expect_error(const char *text, const char *message) {
  mb_error err = {{0}};
  mb_workload *w = import_str(text, &err);
  if (w || strcmp(err.message, message))
    fprintf(stderr, "expected error: %s\n     got error: %s\n", message,
            w ? "(none: imported)" : err.message);
  assert_null(w);
  assert_string_equal(err.message, message);
}

typedef struct golden {
  const char *file;
  int32_t buffers;
  int32_t schedule_length;
  int64_t total_bytes, peak;
} golden;

/* Derived independently with Python's csv module (rows; max upper; sum of sizes; max over t
 * of the sizes with lower <= t < upper). MiniMalloc's "challenging" instances A and B fill
 * their 1048576-byte capacity exactly at the peak, which is a check on the half-open rule. */
static const golden GOLDEN[] = {
    {"A.1048576.csv", 154, 1048576, 15071232, 1048576},
    {"B.1048576.csv", 170, 1048576, 17871872, 1048576},
    {"C.1048576.csv", 203, 1048576, 21476352, 1039360},
    {"input.12.csv", 5, 21, 20, 12},
};

static void test_real_files(void **state) {
  (void)state;
  char path[2048];
  for (size_t i = 0; i < sizeof GOLDEN / sizeof GOLDEN[0]; i++) {
    snprintf(path, sizeof path, "%s/minimalloc/%s", mb_test_data_dir(), GOLDEN[i].file);
    FILE *probe = fopen(path, "r");
    if (!probe) {
      fprintf(stderr, "skipping: %s missing (see ../shared/data/SOURCES.md)\n", path);
      skip();
    }
    fclose(probe);
    mb_error err = {{0}};
    mb_workload *w = mb_csv_import_file(path, &err);
    if (!w) fprintf(stderr, "%s\n", err.message);
    assert_non_null(w);
    mb_workload_stats st;
    mb_workload_stats_compute(w, &st);
    assert_int_equal(w->n_ops, 0);
    assert_int_equal(st.n_buffers, GOLDEN[i].buffers);
    assert_int_equal(w->schedule_length, GOLDEN[i].schedule_length);
    assert_int_equal(st.total_bytes, GOLDEN[i].total_bytes);
    assert_int_equal(st.peak_live_bytes, GOLDEN[i].peak);
    /* default benefit = size, T_slow = 2 * sum of benefits */
    assert_int_equal(w->slow_time_ps, 2 * GOLDEN[i].total_bytes);
    assert_int_equal(mb_csv_capacity_from_name(path),
                     strstr(GOLDEN[i].file, "1048576") ? 1048576 : 12);
    mb_workload_free(w);
  }
}

static void test_ranges_and_benefits(void **state) {
  (void)state;
  /* columns in any order, a benefit column, CRLF line ends, spaces around fields */
  mb_workload *w = import_ok(
      "size, id,lower,upper,benefit\r\n"
      "4, b1, 0, 3, 100\r\n"
      "8,b2,3,9,0\r\n"
      "\r\n");
  assert_int_equal(w->n_buffers, 2);
  assert_string_equal(w->buffers[0].name, "b1");
  /* [0, 3) -> [0, 2] inclusive */
  assert_int_equal(w->buffers[0].start, 0);
  assert_int_equal(w->buffers[0].end, 2);
  assert_int_equal(w->buffers[1].start, 3);
  assert_int_equal(w->buffers[1].end, 8);
  assert_int_equal(w->buffers[0].benefit_ps, 100);
  assert_int_equal(w->buffers[1].benefit_ps, 0);
  assert_int_equal(w->buffers[1].size, 8);
  assert_int_equal(w->schedule_length, 9);
  assert_int_equal(w->slow_time_ps, 200);
  assert_false(w->buffers[0].pinned);
  assert_string_equal(w->name, "t");
  mb_workload_free(w);
}

/* Blanks: spaces and tabs around any field, and trailing '\r's past the one of a CRLF. */
static void test_blanks(void **state) {
  (void)state;
  mb_workload *w = import_ok(
      "id\t,lower ,upper,\tsize\r\r\n"
      " \t\r\n"
      "a\t , 0\t,2 , 4 \t\r\r\n"
      "b,1,3,8\t\r\n"
      "\t \n");
  assert_int_equal(w->n_buffers, 2);
  assert_string_equal(w->buffers[0].name, "a");
  assert_int_equal(w->buffers[0].end, 1);
  assert_int_equal(w->buffers[0].size, 4);
  assert_int_equal(w->buffers[1].size, 8);
  mb_workload_free(w);
}

/* The benefit column may come first (field 0). */
static void test_benefit_first(void **state) {
  (void)state;
  mb_workload *w = import_ok("benefit,id,lower,upper,size\n7,a,0,1,4\n");
  assert_int_equal(w->buffers[0].benefit_ps, 7);
  assert_int_equal(w->slow_time_ps, 14);
  mb_workload_free(w);
}

static void expect_name(const char *path, const char *name) {
  mb_error err = {{0}};
  const char *text = "id,lower,upper,size\na,0,1,4\n";
  mb_workload *w = mb_csv_import_text(text, strlen(text), path, &err);
  if (!w) fail_msg("%s: %s", path, err.message);
  if (strcmp(w->name, name)) fail_msg("%s: named '%s', expected '%s'", path, w->name, name);
  mb_workload_free(w);
}

static void test_names(void **state) {
  (void)state;
  expect_name("dir/A.1048576.csv", "A.1048576");
  expect_name("x.csv.txt", "x.csv.txt");
  /* the first and last of each kept range stay; their neighbours outside become '_' */
  expect_name("aAzZ09_.-`{@[:+ \xc3\xa9.csv", "aAzZ09_.-_________");
  expect_name("d/.csv", "csv");
  expect_name("d/", "csv");
  expect_name("c.csv", "c");
}

/* Duplicates are found past the id set's growths (at 32 and 64 entries), every id checked.
 * With these ids, id21 sits in the set's last slot at both growths (FNV-1a, simulated), so a
 * rehash that skipped the last slot would lose it. */
static void test_duplicate_after_growth(void **state) {
  (void)state;
  char text[4096] = "id,lower,upper,size\n";
  for (int i = 0; i < 100; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text), "id%d,0,1,4\n", i);
  for (int i = 0; i < 100; i++) {
    char dup[4096], message[128];
    snprintf(dup, sizeof dup, "%sid%d,0,1,4\n", text, i);
    snprintf(message, sizeof message, "t.csv:102:id: duplicate id 'id%d' (first on line %d)", i,
             i + 2);
    expect_error(dup, message);
  }
  mb_workload *w = import_ok(text);
  assert_int_equal(w->n_buffers, 100);
  mb_workload_free(w);
}

static void test_malformed(void **state) {
  (void)state;
  expect_error("", "t.csv:1: expected a header row id,lower,upper,size");
  expect_error("0,1,2,3\n",
               "t.csv:1: expected a header row with columns id,lower,upper,size[,benefit]; "
               "column 1 is '0'");
  expect_error("mallocbench-workload 1\nname x\n",
               "t.csv:1: this is a mallocbench workload in the native format (its first line "
               "starts 'mallocbench-workload'), not a buffer CSV: name it .wl");
  /* the native format's magic is the first field's prefix, all of it */
  expect_error("mallocbench-workload,x\n",
               "t.csv:1: this is a mallocbench workload in the native format (its first line "
               "starts 'mallocbench-workload'), not a buffer CSV: name it .wl");
  expect_error("mallocbench-workloax\n",
               "t.csv:1: expected a header row with columns id,lower,upper,size[,benefit]; "
               "column 1 is 'mallocbench-workloax'");
  expect_error("id,lower,size\n",
               "t.csv:1: expected a header row with columns id,lower,upper,size; 'upper' is "
               "missing");
  expect_error("id,lower,upper,size,lower\n",
               "t.csv:1: column 'lower' appears twice in the header");
  expect_error("id,lower,upper,size,a,b,c,d,e,f,g,h,i,j,k,l,m\n",
               "t.csv:1: expected at most 16 columns in the header, got 17");
  /* 16 columns are read: the first unknown one is named */
  expect_error("id,lower,upper,size,a,b,c,d,e,f,g,h,i,j,k,l\n",
               "t.csv:1: expected a header row with columns id,lower,upper,size[,benefit]; "
               "column 5 is 'a'");
  expect_error("lower,id,upper,size,lower\n",
               "t.csv:1: column 'lower' appears twice in the header");
  expect_error("id,lower,upper,size\n",
               "t.csv:1: expected at least one buffer row after the header");
  expect_error("id,lower,upper,size\na,0,1\n", "t.csv:2: expected 4 fields like the header, got 3");
  expect_error("id,lower,upper,size\na,0,x1,4\n",
               "t.csv:2:upper: expected a non-negative integer below 2^62, got 'x1'");
  expect_error("id,lower,upper,size\na,-1,2,4\n",
               "t.csv:2:lower: expected a non-negative integer below 2^62, got '-1'");
  expect_error("id,lower,upper,size\na,0,2,4\nb,5,5,4\n",
               "t.csv:3:upper: expected upper > lower (5), got 5");
  expect_error("id,lower,upper,size\na,0,2,0\n", "t.csv:2:size: expected a size > 0, got 0");
  expect_error("id,lower,upper,size\na,0,2,9999999999999999999\n",
               "t.csv:2:size: expected a non-negative integer below 2^62, got "
               "'9999999999999999999'");
  expect_error("id,lower,upper,size\na,0,2,4\n\nb,0,1,1\na,3,4,1\n",
               "t.csv:5:id: duplicate id 'a' (first on line 2)");
  expect_error("id,lower,upper,size\n,0,2,4\n",
               "t.csv:2:id: expected a name of 1 to 127 characters");
  expect_error("id,lower,upper,size\na, \t,2,4\n",
               "t.csv:2:lower: expected a non-negative integer below 2^62, got ''");
  char longest[256], too_long[256];
  snprintf(longest, sizeof longest, "id,lower,upper,size\n%0127d,0,1,4\n", 7);
  snprintf(too_long, sizeof too_long, "id,lower,upper,size\n%0128d,0,1,4\n", 7);
  mb_workload *w = import_ok(longest);
  assert_int_equal(strlen(w->buffers[0].name), 127);
  mb_workload_free(w);
  expect_error(too_long, "t.csv:2:id: expected a name of 1 to 127 characters");
  expect_error("id,lower,upper,size\na b,0,2,4\n",
               "t.csv:2:id: expected no spaces, quotes or '#' in 'a b'");
  expect_error("id,lower,upper,size\na,0,3000000000,4\n",
               "t.csv:2:upper: expected at most 2147483646 (the longest schedule), got 3000000000");
  expect_error("id,lower,upper,size,benefit\na,0,1,4,0\n",
               "t.csv: expected a positive sum of benefits (all-slow time would be 0)");
}

/* The importer accepts exactly what the native reader reads back: at each bound, the largest
 * accepted value imports and its canonical text (what `import csv` writes) loads again, equal,
 * and one past the bound is refused by the importer with file:line:column. */
static void expect_round_trip(const char *text) {
  mb_error err = {{0}};
  mb_workload *w = import_str(text, &err);
  if (!w) fail_msg("'%s' refused: %s", text, err.message);
  size_t len = 0;
  char *wl = mb_workload_to_text(w, &len);
  assert_non_null(wl);
  mb_workload *back = mb_workload_read_text(wl, len, "t.wl", &err);
  if (!back) fail_msg("'%s' imported, but its .wl does not load: %s", text, err.message);
  char why[256];
  if (!mb_workload_equal(w, back, why, sizeof why)) fail_msg("'%s': %s", text, why);
  free(wl);
  mb_workload_free(back);
  mb_workload_free(w);
}

static void test_bounds_match_the_reader(void **state) {
  (void)state;
  /* upper: the schedule length; 2^31 - 1 used to import into a file the reader refused */
  expect_round_trip("id,lower,upper,size\na,2147483645,2147483646,4\n");
  expect_error("id,lower,upper,size\na,0,2147483647,4\n",
               "t.csv:2:upper: expected at most 2147483646 (the longest schedule), got 2147483647");
  expect_error("id,lower,upper,size\na,2147483646,2147483647,4\n",
               "t.csv:2:upper: expected at most 2147483646 (the longest schedule), got 2147483647");
  /* numbers: up to 2^62 - 1 (which the message promises; 2^62 - 1 itself used to be refused) */
  expect_round_trip("id,lower,upper,size,benefit\na,0,1,4611686018427387903,1\n");
  expect_error("id,lower,upper,size,benefit\na,0,1,4611686018427387904,1\n",
               "t.csv:2:size: expected a non-negative integer below 2^62, got "
               "'4611686018427387904'");
  /* the total size must fit in int64, as the reader requires: named by line and column */
  expect_round_trip(
      "id,lower,upper,size,benefit\n"
      "a,0,1,4611686018427387903,1\nb,0,1,4611686018427387903,1\nc,0,1,1,1\n");
  expect_error(
      "id,lower,upper,size,benefit\n"
      "a,0,1,4611686018427387903,1\nb,0,1,4611686018427387903,1\nc,0,1,2,1\n",
      "t.csv:4:size: the total size of all buffers overflows int64");
  /* benefits: their sum at most 2^60 ps, so T_slow = twice it fits */
  expect_round_trip("id,lower,upper,size,benefit\na,0,1,4,1152921504606846975\nb,0,1,4,1\n");
  expect_error("id,lower,upper,size,benefit\na,0,1,4,1152921504606846975\nb,0,1,4,2\n",
               "t.csv:3:benefit: the sum of benefits exceeds 2^60 ps");
  /* ids: every byte the importer accepts survives the .wl quoting */
  expect_round_trip(
      "id,lower,upper,size\na=b,0,1,4\nc\\d,0,1,4\n\xc3\xa9\xa0\x85\xff,0,1,4\n"
      "e'f;g|h,0,1,4\n");
}

static void test_capacity_from_name(void **state) {
  (void)state;
  assert_int_equal(mb_csv_capacity_from_name("A.1048576.csv"), 1048576);
  assert_int_equal(mb_csv_capacity_from_name("/x/y/input.12.csv"), 12);
  assert_int_equal(mb_csv_capacity_from_name("A.csv"), 0);
  assert_int_equal(mb_csv_capacity_from_name("1048576.csv"), 0);
  assert_int_equal(mb_csv_capacity_from_name("A.12x.csv"), 0);
  assert_int_equal(mb_csv_capacity_from_name("A.12.txt"), 0);
  assert_int_equal(mb_csv_capacity_from_name("A.90.csv"), 90);
  assert_int_equal(mb_csv_capacity_from_name(".5.csv"), 5);
  /* up to 18 digits (below 10^18 < 2^63) */
  assert_int_equal(mb_csv_capacity_from_name("A.999999999999999999.csv"), 999999999999999999);
  assert_int_equal(mb_csv_capacity_from_name("A.1000000000000000000.csv"), 0);
  assert_int_equal(mb_csv_capacity_from_name("A.99999999999999999999.csv"), 0);
  assert_int_equal(mb_csv_capacity_from_name(NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_real_files),
      cmocka_unit_test(test_ranges_and_benefits),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_bounds_match_the_reader),
      cmocka_unit_test(test_capacity_from_name),
      cmocka_unit_test(test_blanks),
      cmocka_unit_test(test_benefit_first),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_duplicate_after_growth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
