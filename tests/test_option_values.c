/* Command-line option values: whole-argument numbers in range, nothing else. */
#include <stdint.h>

#include "option_values.h"
#include "support.h"

static void test_int(void **state) {
  (void)state;
  int64_t v = 7;
  assert_true(mb_parse_int("64", 1, 64, &v));
  assert_int_equal(v, 64);
  assert_true(mb_parse_int("-1", -1, 0, &v));
  assert_int_equal(v, -1);
  assert_true(mb_parse_int("+3", 0, 9, &v));
  assert_int_equal(v, 3);
  assert_true(mb_parse_int("9223372036854775807", 0, INT64_MAX, &v));
  assert_int_equal(v, INT64_MAX);
  v = 7;
  /* out of range, trailing text, empty, spaces, not decimal, overflow: refused, out untouched */
  const char *bad[] = {"65",
                       "0",
                       "",
                       " 5",
                       "5 ",
                       "5x",
                       "x",
                       "1.5",
                       "1e3",
                       "0x10",
                       "99999999999999999999",
                       "-99999999999999999999",
                       "--5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_false(mb_parse_int(bad[i], 1, 64, &v));
    assert_int_equal(v, 7);
  }
  assert_false(mb_parse_int(NULL, 0, 1, &v));
  assert_false(mb_parse_int("99999999999999999999", 0, INT64_MAX, &v));
}

static void test_u64(void **state) {
  (void)state;
  uint64_t v = 7;
  assert_true(mb_parse_u64("0", &v));
  assert_true(v == 0);
  assert_true(mb_parse_u64("18446744073709551615", &v));
  assert_true(v == UINT64_MAX);
  assert_true(mb_parse_u64("9", &v)); /* each end of the leading digit's range */
  assert_true(v == 9);
  v = 7;
  const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1x", "18446744073709551616", "1e3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_false(mb_parse_u64(bad[i], &v));
    assert_true(v == 7);
  }
  assert_false(mb_parse_u64(NULL, &v));
}

static void test_number(void **state) {
  (void)state;
  double v = 7;
  assert_true(mb_parse_number("0.25", 0, false, 1, &v));
  assert_true(v == 0.25);
  assert_true(mb_parse_number("1e-4", 0, true, 1, &v));
  assert_true(v == 1e-4);
  assert_true(mb_parse_number("0", 0, false, 1, &v));
  assert_true(v == 0);
  assert_true(mb_parse_number("1", 0, false, 1, &v));
  assert_true(mb_parse_number("1e-320", 0, true, 1, &v)); /* a denormal is a number */
  v = 7;
  const char *bad[] = {"", " 1", "1 ", "0.5x", "x", "nan", "inf", "-inf", "1e999", "1.5", "-0.1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_false(mb_parse_number(bad[i], 0, false, 1, &v));
    assert_true(v == 7);
  }
  /* the open lower end */
  assert_false(mb_parse_number("0", 0, true, 1, &v));
  assert_false(mb_parse_number(NULL, 0, false, 1, &v));
}

static void test_bytes(void **state) {
  (void)state;
  int64_t v = 7;
  assert_true(mb_parse_bytes("1048576", 1, INT64_MAX, &v));
  assert_int_equal(v, 1048576);
  assert_true(mb_parse_bytes("64KiB", 1, INT64_MAX, &v));
  assert_int_equal(v, 65536);
  assert_true(mb_parse_bytes("128 MiB", 1, INT64_MAX, &v));
  assert_int_equal(v, 128LL << 20);
  assert_true(mb_parse_bytes("2MB", 1, INT64_MAX, &v));
  assert_int_equal(v, 2000000);
  assert_true(mb_parse_bytes("1GiB", 1, INT64_MAX, &v));
  assert_int_equal(v, 1LL << 30);
  assert_true(mb_parse_bytes("0", 0, 10, &v));
  assert_int_equal(v, 0);
  v = 7;
  const char *bad[] = {
      "", " 64", "64 KB x", "64kib", "-1", "1.5MiB", "MiB", "64TiB", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_false(mb_parse_bytes(bad[i], 0, INT64_MAX, &v));
    assert_int_equal(v, 7);
  }
  /* the range is in bytes, after the unit */
  assert_false(mb_parse_bytes("2KiB", 0, 2047, &v));
  assert_true(mb_parse_bytes("2KiB", 0, 2048, &v)); /* the largest value allowed, in units */
  assert_int_equal(v, 2048);
  assert_false(mb_parse_bytes("1KB", 1001, INT64_MAX, &v));
  assert_false(mb_parse_bytes("9000000000GiB", 0, INT64_MAX, &v)); /* would overflow */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int),
      cmocka_unit_test(test_u64),
      cmocka_unit_test(test_number),
      cmocka_unit_test(test_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
