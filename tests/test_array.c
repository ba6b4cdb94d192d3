/* array.h: mb_array_reserve doubles from 64 until `need` fits, refuses more than INT32_MAX
 * elements and leaves the array (pointer, capacity, contents) untouched when it fails. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "support.h"

/* The out-of-memory case asks for about 2^62 bytes: under AddressSanitizer malloc must return
 * NULL, as it does without the sanitizer, instead of reporting the request. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static void test_first_reserve_is_64(void **state) {
  (void)state;
  int32_t *data = NULL;
  int32_t cap = 0;
  assert_true(mb_array_reserve((void **)&data, &cap, 1, sizeof *data));
  assert_non_null(data);
  assert_int_equal(cap, 64);
  for (int32_t i = 0; i < cap; i++) data[i] = i; /* all 64 are usable (ASan checks) */
  free(data);
  /* a first need above 64 doubles from 64: 64 -> 128 -> 256 */
  data = NULL;
  cap = 0;
  assert_true(mb_array_reserve((void **)&data, &cap, 200, sizeof *data));
  assert_int_equal(cap, 256);
  data[255] = 1;
  free(data);
  /* exactly a power of two times 64 is not doubled once more */
  data = NULL;
  cap = 0;
  assert_true(mb_array_reserve((void **)&data, &cap, 128, sizeof *data));
  assert_int_equal(cap, 128);
  free(data);
}

static void test_doubling_keeps_contents(void **state) {
  (void)state;
  int64_t *data = NULL;
  int32_t cap = 0;
  int32_t n = 0;
  int32_t seen[8], n_seen = 0;
  for (int64_t v = 0; v < 5000; v++) {
    int32_t before = cap;
    assert_true(mb_array_reserve((void **)&data, &cap, n + 1, sizeof *data));
    if (cap != before) {
      assert_true(n_seen < 8);
      seen[n_seen++] = cap;
    }
    data[n++] = v * 7;
  }
  /* 64, then each growth doubles: 128, ..., 8192 covers 5000 */
  const int32_t want[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192};
  assert_int_equal(n_seen, 8);
  for (int i = 0; i < 8; i++) assert_int_equal(seen[i], want[i]);
  for (int32_t i = 0; i < n; i++) assert_int_equal(data[i], (int64_t)i * 7);
  /* a jump from 64 to 1000 doubles as often as needed in one call */
  int32_t *small = NULL;
  int32_t scap = 0;
  assert_true(mb_array_reserve((void **)&small, &scap, 10, sizeof *small));
  assert_true(mb_array_reserve((void **)&small, &scap, 1000, sizeof *small));
  assert_int_equal(scap, 1024);
  free(small);
  free(data);
}

static void test_need_within_capacity_is_a_no_op(void **state) {
  (void)state;
  char *data = NULL;
  int32_t cap = 0;
  /* zero and negative needs: nothing to do, nothing allocated */
  assert_true(mb_array_reserve((void **)&data, &cap, 0, 1));
  assert_null(data);
  assert_int_equal(cap, 0);
  assert_true(mb_array_reserve((void **)&data, &cap, -5, 1));
  assert_true(mb_array_reserve((void **)&data, &cap, INT64_MIN, 1));
  assert_null(data);
  assert_int_equal(cap, 0);
  assert_true(mb_array_reserve((void **)&data, &cap, 64, 1));
  char *p = data;
  assert_int_equal(cap, 64);
  assert_true(mb_array_reserve((void **)&data, &cap, 64, 1));
  assert_true(mb_array_reserve((void **)&data, &cap, 3, 1));
  assert_true(mb_array_reserve((void **)&data, &cap, -1, 1));
  assert_ptr_equal(data, p);
  assert_int_equal(cap, 64);
  free(data);
}

/* Each refusal leaves pointer, capacity and contents as they were. */
static void test_refusals_leave_the_array_alone(void **state) {
  (void)state;
  char *data = NULL;
  int32_t cap = 0;
  assert_true(mb_array_reserve((void **)&data, &cap, 10, 1));
  memcpy(data, "unchanged", 10);
  char *p = data;
  /* more than INT32_MAX elements, even of one byte */
  assert_false(mb_array_reserve((void **)&data, &cap, (int64_t)INT32_MAX + 1, 1));
  assert_false(mb_array_reserve((void **)&data, &cap, INT64_MAX, 1));
  assert_ptr_equal(data, p);
  assert_int_equal(cap, 64);
  assert_string_equal(data, "unchanged");
  /* a capacity whose byte count does not fit size_t: 128 elements of 2^57 + 1 bytes, whose
   * product wraps around to 128 bytes, which would be allocated without the check */
  assert_false(mb_array_reserve((void **)&data, &cap, 65, ((size_t)1 << 57) + 1));
  assert_ptr_equal(data, p);
  assert_int_equal(cap, 64);
  assert_string_equal(data, "unchanged");
  /* out of memory: 128 elements of 2^55 bytes (2^62 bytes) cannot be allocated */
  assert_false(mb_array_reserve((void **)&data, &cap, 65, (size_t)1 << 55));
  assert_ptr_equal(data, p);
  assert_int_equal(cap, 64);
  assert_string_equal(data, "unchanged");
  free(data);
  /* the same refusals on an empty array leave it empty */
  void *none = NULL;
  int32_t zero = 0;
  assert_false(mb_array_reserve(&none, &zero, (int64_t)INT32_MAX + 1, 1));
  assert_false(mb_array_reserve(&none, &zero, 1, ((size_t)1 << 58) + 1)); /* 64 x: wraps to 64 */
  assert_null(none);
  assert_int_equal(zero, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_first_reserve_is_64),
      cmocka_unit_test(test_doubling_keeps_contents),
      cmocka_unit_test(test_need_within_capacity_is_a_no_op),
      cmocka_unit_test(test_refusals_leave_the_array_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
