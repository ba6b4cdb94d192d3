/* Assignment CSV: round trip, RFC 4180 quoting, every rejection with file:line and field, and the
 * line of each buffer's row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "support.h"

static mb_workload *three_buffers(void) {
  mb_workload_builder *b = mb_builder_new("w", "test");
  mb_builder_add_op(b, "op", "add", 0);
  mb_builder_add_buffer(b, "x", 16, 0, 0, false);
  mb_builder_add_buffer(b, "y", 16, 0, 0, false);
  mb_builder_add_buffer(b, "z", 16, 0, 0, false);
  return mb_builder_finish(b, NULL);
}

static void test_round_trip(void **state) {
  (void)state;
  mb_workload *w = three_buffers();
  mb_assignment *a = mb_assignment_new(3);
  a->offset[0] = 0;
  a->offset[2] = 4096;
  char *dir = mb_test_temp_dir();
  char path[512];
  snprintf(path, sizeof path, "%s/a.csv", dir);
  mb_error err;
  assert_true(mb_assignment_save_csv(a, w, path, &err));
  mb_assignment *b = mb_assignment_load_csv(path, w, &err);
  assert_non_null(b);
  assert_memory_equal(a->offset, b->offset, 3 * sizeof *a->offset);
  assert_int_equal(mb_assignment_n_fast(b), 2);
  bool in_fast[3];
  mb_assignment_fast_flags(b, in_fast);
  assert_true(in_fast[0] && !in_fast[1] && in_fast[2]);
  mb_test_temp_remove(dir);
  mb_assignment_free(a);
  mb_assignment_free(b);
  mb_workload_free(w);
}

/* Names the native format holds (quoted there) but a bare CSV field cannot: a comma, a quote,
 * a line break, a carriage return, blanks at either end, a leading '#', a control byte. */
static const char *const AWKWARD[] = {"a,b",    "say \"hi\"", "two\nlines", "cr\r",    "#hash",
                                      " lead",  "trail ",     "tab\there",  "ctl\x01", "plain",
                                      "buffer", "\"",         ",",          "x\r\n"};
enum { N_AWKWARD = sizeof AWKWARD / sizeof *AWKWARD };

static mb_workload *awkward_names(void) {
  mb_workload_builder *b = mb_builder_new("awkward", "test");
  mb_builder_add_op(b, "op", "add", 0);
  for (int i = 0; i < N_AWKWARD; i++) mb_builder_add_buffer(b, AWKWARD[i], 16, 0, 0, false);
  mb_error err;
  mb_workload *w = mb_builder_finish(b, &err);
  if (!w) fail_msg("%s", err.message);
  return w;
}

/* Every name the workload formats can hold survives solve --out / check: the writer quotes
 * the awkward ones as RFC 4180 says and the reader reads them back, offsets and all (the
 * writer used to print them bare: "a,b,0" was refused, "#hash,32" silently read as a comment). */
static void test_awkward_names_round_trip(void **state) {
  (void)state;
  mb_workload *w = awkward_names();
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  for (int32_t i = 0; i < w->n_buffers; i++) a->offset[i] = i % 3 == 2 ? MB_SLOW : 64 * i;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  assert_true(mb_assignment_write_csv(a, w, f));
  assert_int_equal(fclose(f), 0);
  mb_error err;
  mb_assignment *b = mb_assignment_parse_csv(text, len, "a.csv", w, &err);
  if (!b) fail_msg("%s\n--- written:\n%s", err.message, text);
  assert_memory_equal(a->offset, b->offset, (size_t)w->n_buffers * sizeof *a->offset);
  /* plain names stay bare; the others are quoted, quotes inside doubled */
  const char *expect_rows[] = {"buffer,offset\n\"a,b\",0\n",
                               "\"say \"\"hi\"\"\",64\n",
                               "\"two\nlines\",slow\n",
                               "\"cr\r\",192\n",
                               "\"#hash\",256\n",
                               "\" lead\",slow\n",
                               "\"trail \",384\n",
                               "\"tab\there\",448\n",
                               "\"ctl\x01\",slow\n",
                               "\nplain,576\n",
                               "\nbuffer,640\n",
                               "\n\"\"\"\",slow\n",
                               "\n\",\",768\n",
                               "\"x\r\n\",832\n"};
  for (size_t i = 0; i < sizeof expect_rows / sizeof *expect_rows; i++)
    if (!strstr(text, expect_rows[i])) fail_msg("no row '%s' in:\n%s", expect_rows[i], text);
  mb_assignment_free(b);
  free(text);
  mb_assignment_free(a);
  mb_workload_free(w);
}

/* Quoted fields from other writers: blanks around the quotes, a quoted offset, CRLF ends. */
static void test_quoted_fields_read(void **state) {
  (void)state;
  mb_workload *w = awkward_names();
  const char *csv =
      "buffer,offset\r\n"
      "  \"a,b\"  ,  16 \r\n"
      "\"plain\",\"slow\"\r\n"
      "# \"a comment\", with quotes\r\n"
      "\"#hash\",32\r\n"
      "\"two\nlines\",48";
  mb_error err;
  mb_assignment *a = mb_assignment_parse_csv(csv, strlen(csv), "q.csv", w, &err);
  if (!a) fail_msg("%s", err.message);
  assert_int_equal(a->offset[0], 16);
  assert_int_equal(a->offset[9], MB_SLOW);
  assert_int_equal(a->offset[4], 32);
  assert_int_equal(a->offset[2], 48);
  assert_int_equal(mb_assignment_n_fast(a), 3);
  mb_assignment_free(a);
  mb_workload_free(w);
}

static void expect_error(const char *csv, const char *suffix_of_message) {
  mb_workload *w = three_buffers();
  char *path = mb_test_write_temp(".csv", csv);
  mb_error err;
  assert_null(mb_assignment_load_csv(path, w, &err));
  char expect[1024];
  snprintf(expect, sizeof expect, "%s%s", path, suffix_of_message);
  assert_string_equal(err.message, expect);
  mb_test_temp_remove(path);
  mb_workload_free(w);
}

static void test_rejections(void **state) {
  (void)state;
  expect_error("buffer,offset\nx,0\nq,8\n",
               ":3: field 'buffer': 'q' is not a buffer of workload 'w'");
  expect_error("buffer,offset\nx,0\nx,8\n",
               ":3: field 'buffer': 'x' listed twice (first on line 2)");
  expect_error("buffer,offset\nx,-5\n",
               ":2: field 'offset': '-5' must be a non-negative byte offset or 'slow'");
  expect_error("buffer,offset\nx;5\n",
               ":2: field 'offset': missing; expected 'buffer,offset' (offset a number or 'slow')");
  expect_error(
      "buffer,offset\nx,99999999999999999999\n",
      ":2: field 'offset': '99999999999999999999' must be a non-negative byte offset or 'slow'");
  expect_error("buffer,offset\nx,0,1\n",
               ":2: field 3: unexpected; expected 'buffer,offset' (offset a number or 'slow')");
  expect_error("buffer,offset\n,0\n",
               ":2: field 'buffer': empty; expected 'buffer,offset' (offset a number or 'slow')");
  expect_error("buffer,offset\nx,12ab\n",
               ":2: field 'offset': '12ab' must be a non-negative byte offset or 'slow'");
  /* quoting: every malformed quote is refused by line and field */
  expect_error("buffer,offset\ny,0\n\"x,0\n",
               ":3: field 'buffer': unterminated quoted field (no closing '\"')");
  expect_error(
      "buffer,offset\nx\"y,0\n",
      ":2: field 'buffer': a quote inside an unquoted field (quote the whole field and write each "
      "quote inside twice)");
  expect_error(
      "buffer,offset\n\"x\"y,0\n",
      ":2: field 'buffer': unexpected text after the closing quote (a quote inside a quoted "
      "field is written twice)");
  expect_error("buffer,offset\nx,\"0\n",
               ":2: field 'offset': unterminated quoted field (no closing '\"')");
  /* a quoted name over two lines: the lines after it are still counted; the message shows the
   * line break escaped (error.h), so it stays one line */
  expect_error("buffer,offset\n\"no\nsuch\",0\nz,zz\n",
               ":2: field 'buffer': 'no\\x0asuch' is not a buffer of workload 'w'");
  expect_error("buffer,offset\n\"x\",0\n\"y\n\",slow\nz,zz\n",
               ":3: field 'buffer': 'y\\x0a' is not a buffer of workload 'w'");
  mb_workload *w = awkward_names();
  mb_error err;
  const char *csv = "buffer,offset\n\"two\nlines\",0\nplain,zz\n";
  assert_null(mb_assignment_parse_csv(csv, strlen(csv), "a.csv", w, &err));
  assert_string_equal(err.message,
                      "a.csv:4: field 'offset': 'zz' must be a non-negative byte offset or 'slow'");
  /* a NUL byte would cut the name short ("x\0junk" read as "x"): refused */
  assert_null(mb_assignment_parse_csv("plain\0junk,0\n", 13, "a.csv", w, &err));
  assert_string_equal(err.message, "a.csv:1: NUL byte: not a text file");
  /* the line it is on, wherever it is (here in a comment) */
  static const char comment[] = "buffer,offset\n\n# a\0\n";
  assert_null(mb_assignment_parse_csv(comment, sizeof comment - 1, "a.csv", w, &err));
  assert_string_equal(err.message, "a.csv:3: NUL byte: not a text file");
  mb_workload_free(w);
}

/* Every error names the file, the line and the field; too long a field is named too. */
static void test_rejections_name_the_field(void **state) {
  (void)state;
  char csv[512];
  snprintf(csv, sizeof csv, "buffer,offset\n%0200d,0\n", 7);
  expect_error(csv, ":2: field 'buffer': too long (buffer names have at most 127 bytes)");
  snprintf(csv, sizeof csv, "buffer,offset\nx,%0100d\n", 7);
  expect_error(
      csv,
      ":2: field 'offset': '000000000000000000000000000000000000000000000000000000000000000...' "
      "must be a non-negative byte offset or 'slow'");
}

/* The rows' lines, for messages about an invalid assignment (check). */
static void test_row_lines(void **state) {
  (void)state;
  mb_workload *w = three_buffers();
  const char *csv = "buffer,offset\n# z stays slow\n\nz,slow\n  x , 16\n";
  int32_t line[3] = {-1, -1, -1};
  mb_error err;
  mb_assignment *a = mb_assignment_parse_csv_rows(csv, strlen(csv), "a.csv", w, line, &err);
  if (!a) fail_msg("%s", err.message);
  assert_int_equal(line[0], 5); /* x */
  assert_int_equal(line[1], 0); /* y: not listed */
  assert_int_equal(line[2], 4); /* z: listed, slow */
  mb_assignment_free(a);
  mb_workload_free(w);
}

static void test_missing_rows_are_slow(void **state) {
  (void)state;
  mb_workload *w = three_buffers();
  char *path = mb_test_write_temp(".csv", "buffer,offset\n# comment\n\ny,32\n");
  mb_error err;
  mb_assignment *a = mb_assignment_load_csv(path, w, &err);
  assert_non_null(a);
  assert_int_equal(a->offset[0], MB_SLOW);
  assert_int_equal(a->offset[1], 32);
  assert_int_equal(a->offset[2], MB_SLOW);
  mb_test_temp_remove(path);
  mb_assignment_free(a);
  mb_workload_free(w);
}

/* A last row ending in a carriage return without a newline must not hang the reader. */
static void test_trailing_carriage_return(void **state) {
  (void)state;
  mb_workload *w = three_buffers();
  /* after a closing quote too, at the end of the text and before a line break */
  const char *quoted = "buffer,offset\r\n\"y\" ,\"32\"\r\nz,\"48\"\r";
  mb_error qerr;
  mb_assignment *q = mb_assignment_parse_csv(quoted, strlen(quoted), "q.csv", w, &qerr);
  if (!q) fail_msg("%s", qerr.message);
  assert_int_equal(q->offset[1], 32);
  assert_int_equal(q->offset[2], 48);
  mb_assignment_free(q);
  char *path = mb_test_write_temp(".csv", "buffer,offset\r\nx,16\r");
  mb_error err;
  mb_assignment *a = mb_assignment_load_csv(path, w, &err);
  assert_non_null(a);
  assert_int_equal(a->offset[0], 16);
  mb_test_temp_remove(path);
  mb_assignment_free(a);
  mb_workload_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_awkward_names_round_trip),
      cmocka_unit_test(test_quoted_fields_read),
      cmocka_unit_test(test_rejections),
      cmocka_unit_test(test_rejections_name_the_field),
      cmocka_unit_test(test_row_lines),
      cmocka_unit_test(test_missing_rows_are_slow),
      cmocka_unit_test(test_trailing_carriage_return),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
