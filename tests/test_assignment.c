/* Assignment CSV: round trip and every rejection with file:line and field. */
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
  remove(path);
  free(dir);
  mb_assignment_free(a);
  mb_assignment_free(b);
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
  remove(path);
  free(path);
  mb_workload_free(w);
}

static void test_rejections(void **state) {
  (void)state;
  expect_error("buffer,offset\nx,0\nq,8\n", ":3: buffer: 'q' is not a buffer of workload 'w'");
  expect_error("buffer,offset\nx,0\nx,8\n", ":3: buffer: 'x' listed twice");
  expect_error("buffer,offset\nx,-5\n",
               ":2: offset: '-5' must be a non-negative byte offset or 'slow'");
  expect_error("buffer,offset\nx;5\n", ":2: expected 'buffer,offset' (offset a number or 'slow')");
  expect_error("buffer,offset\nx,99999999999999999999\n",
               ":2: offset: '99999999999999999999' must be a non-negative byte offset or 'slow'");
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
  remove(path);
  free(path);
  mb_assignment_free(a);
  mb_workload_free(w);
}

/* A last row ending in a carriage return without a newline must not hang the reader. */
static void test_trailing_carriage_return(void **state) {
  (void)state;
  mb_workload *w = three_buffers();
  char *path = mb_test_write_temp(".csv", "buffer,offset\r\nx,16\r");
  mb_error err;
  mb_assignment *a = mb_assignment_load_csv(path, w, &err);
  assert_non_null(a);
  assert_int_equal(a->offset[0], 16);
  remove(path);
  free(path);
  mb_assignment_free(a);
  mb_workload_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_rejections),
      cmocka_unit_test(test_missing_rows_are_slow),
      cmocka_unit_test(test_trailing_carriage_return),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
