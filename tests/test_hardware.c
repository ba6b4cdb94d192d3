/* Hardware profiles: the shipped profiles parse, and every malformed line is rejected with
 * file:line and the key at fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hardware.h"
#include "support.h"

static const char *GOOD =
    "# a profile\n"
    "name = test-hw\n"
    "capacity = 2 MiB  # comment\n"
    "alignment = 64 B\n"
    "slow_bandwidth = 25.6 GB/s\n"
    "fast_bandwidth = 1 TB/s\n"
    "peak_flops = 4 TFLOP/s\n"
    "op_overhead = 2 us\n";

static void test_parse_good(void **state) {
  (void)state;
  mb_hardware hw;
  mb_error err;
  assert_true(mb_hardware_parse(GOOD, "good.txt", &hw, &err));
  assert_string_equal(hw.name, "test-hw");
  assert_int_equal(hw.capacity, 2 * 1048576);
  assert_int_equal(hw.alignment, 64);
  assert_true(hw.slow_bandwidth == 25.6e9);
  assert_true(hw.fast_bandwidth == 1e12);
  assert_true(hw.peak_flops == 4e12);
  assert_true(hw.op_overhead_s > 1.999e-6 && hw.op_overhead_s < 2.001e-6);
  /* indented keys, and the smallest alignment */
  const char *indented =
      "name = x\n  capacity = 3 KiB\n\talignment = 1 B\n"
      "slow_bandwidth = 1 GB/s\nfast_bandwidth = 2 GB/s\n"
      "peak_flops = 1 TFLOP/s\nop_overhead = 1 us\n";
  if (!mb_hardware_parse(indented, "i.txt", &hw, &err)) fail_msg("%s", err.message);
  assert_int_equal(hw.capacity, 3 * 1024);
  assert_int_equal(hw.alignment, 1);
}

/* Replaces line `line` (1-based) of GOOD with `text` and expects `message`. */
static void expect_error(int line, const char *text, const char *message) {
  char buf[2048] = "";
  const char *p = GOOD;
  for (int l = 1; *p; l++) {
    const char *eol = strchr(p, '\n');
    size_t n = (size_t)(eol - p) + 1;
    if (l == line) {
      strcat(buf, text);
      strcat(buf, "\n");
    } else {
      strncat(buf, p, n);
    }
    p += n;
  }
  mb_hardware hw;
  mb_error err;
  assert_false(mb_hardware_parse(buf, "hw.txt", &hw, &err));
  assert_string_equal(err.message, message);
}

static void test_rejections(void **state) {
  (void)state;
  expect_error(
      3, "capacity = 2 MiBB",
      "hw.txt:3: capacity: unknown unit 'MiBB' (expected one of B, KiB, MiB, GiB, KB, MB, GB)");
  expect_error(3, "capacity = -2 MiB",
               "hw.txt:3: capacity: expected a non-negative number and a unit (B, KiB, MiB, GiB, "
               "KB, MB, GB), got '-2 MiB'");
  expect_error(3, "capacty = 2 MiB", "hw.txt:3: unknown key 'capacty'");
  expect_error(4, "capacity = 3 MiB", "hw.txt:4: key 'capacity' repeated (first on line 3)");
  expect_error(
      5, "slow_bandwidth = 25.6 GB",
      "hw.txt:5: slow_bandwidth: unknown unit 'GB' (expected one of B/s, KB/s, MB/s, GB/s, TB/s)");
  expect_error(7, "just words", "hw.txt:7: expected 'key = value  # comment'");
  expect_error(7, "# no peak", "hw.txt: missing key 'peak_flops'");
  expect_error(3, "capacity = 0 B", "hw.txt:3: capacity must be > 0");
  expect_error(3, "capacity = 1e300 GiB", "hw.txt:3: capacity: value '1e300 GiB' out of range");
}

/* The refusals test_rejections leaves out: over-long keys and values, a key without a value, a
 * name that is not one word, and zero alignment, bandwidths and peak (each names its line). */
static void test_more_rejections(void **state) {
  (void)state;
  char line[256];
  /* the key buffer holds 63 characters: a 64-character key is refused, not cut */
  snprintf(line, sizeof line, "capacity%056d = 2 MiB", 0);
  expect_error(3, line, "hw.txt:3: key or value too long");
  /* the value buffer holds 127 characters */
  snprintf(line, sizeof line, "capacity = %0126d B", 2);
  expect_error(3, line, "hw.txt:3: key or value too long");
  expect_error(3, "capacity =", "hw.txt:3: capacity: missing value");
  expect_error(4, "alignment =   # none", "hw.txt:4: alignment: missing value");
  expect_error(2, "name = test hw",
               "hw.txt:2: name: 'test hw' must be one word of < 64 characters");
  expect_error(2, "name = tpu/v4", "hw.txt:2: name: 'tpu/v4' must be one word of < 64 characters");
  char message[256];
  snprintf(line, sizeof line, "name = %064d", 7);
  snprintf(message, sizeof message, "hw.txt:2: name: '%064d' must be one word of < 64 characters",
           7);
  expect_error(2, line, message);
  /* 63 characters is the longest name accepted, 127 the longest value */
  char text[1024];
  snprintf(text, sizeof text, "name = %063d%s", 7, strstr(GOOD, "\ncapacity"));
  mb_hardware hw;
  mb_error err;
  if (!mb_hardware_parse(text, "hw.txt", &hw, &err)) fail_msg("%s", err.message);
  assert_int_equal(strlen(hw.name), 63);
  snprintf(text, sizeof text, "name = x\ncapacity = %0125d B%s", 2, strstr(GOOD, "\nalignment"));
  if (!mb_hardware_parse(text, "hw.txt", &hw, &err)) fail_msg("%s", err.message);
  assert_int_equal(hw.capacity, 2);
  expect_error(4, "alignment = 0 B", "hw.txt:4: alignment must be >= 1 B");
  /* sizes are whole bytes: not rounded (0.4 B used to become 0, 1.5 B 2) */
  expect_error(4, "alignment = 0.4 B",
               "hw.txt:4: alignment: '0.4 B' is not a whole number of bytes");
  expect_error(3, "capacity = 1.5 B", "hw.txt:3: capacity: '1.5 B' is not a whole number of bytes");
  /* a fraction of a larger unit that is whole bytes is fine */
  snprintf(text, sizeof text, "name = x\ncapacity = 1.5 KiB%s", strstr(GOOD, "\nalignment"));
  if (!mb_hardware_parse(text, "hw.txt", &hw, &err)) fail_msg("%s", err.message);
  assert_int_equal(hw.capacity, 1536);
  snprintf(text, sizeof text, "name = x\ncapacity = 2.01 KB%s", strstr(GOOD, "\nalignment"));
  if (!mb_hardware_parse(text, "hw.txt", &hw, &err)) fail_msg("%s", err.message);
  assert_int_equal(hw.capacity, 2010); /* 2009.9999999999998 in binary */
  expect_error(5, "slow_bandwidth = 0 GB/s", "hw.txt:5: slow_bandwidth must be > 0");
  expect_error(6, "fast_bandwidth = 0.0 TB/s", "hw.txt:6: fast_bandwidth must be > 0");
  expect_error(7, "peak_flops = 0 TFLOP/s", "hw.txt:7: peak_flops must be > 0");
}

static void test_shipped_profiles(void **state) {
  (void)state;
  const char *names[] = {"tpu-v4i", "edge-npu", "gpu-l2"};
  for (int i = 0; i < 3; i++) {
    mb_hardware hw;
    mb_error err;
    if (!mb_hardware_find(names[i], NULL, &hw, &err)) fail_msg("%s", err.message);
    assert_string_equal(hw.name, names[i]);
    assert_true(hw.fast_bandwidth > hw.slow_bandwidth);
  }
  mb_hardware hw;
  mb_error err;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &hw, &err));
  assert_int_equal(hw.capacity, 128LL << 20);
  assert_false(mb_hardware_find("no-such-chip", NULL, &hw, &err));
  assert_non_null(strstr(err.message, "hardware profile 'no-such-chip' not found"));
  mb_hardware small = mb_hardware_with_capacity(&hw, 4096);
  assert_int_equal(small.capacity, 4096);
  assert_true(small.peak_flops == hw.peak_flops);
  /* 0 (and below) keeps the profile's capacity */
  assert_int_equal(mb_hardware_with_capacity(&hw, 0).capacity, 128LL << 20);
  assert_int_equal(mb_hardware_with_capacity(&hw, -1).capacity, 128LL << 20);
  /* a name ending in .txt is a path (here relative, and missing); ".txt" alone is a name */
  assert_false(mb_hardware_find("no-such-chip.txt", NULL, &hw, &err));
  assert_non_null(strstr(err.message, "no-such-chip.txt: cannot read hardware profile"));
  assert_false(mb_hardware_find(".txt", NULL, &hw, &err));
  assert_non_null(strstr(err.message, "hardware profile '.txt' not found"));
}

/* A last line without a newline but with a carriage return once made the parser loop forever
 * (found by fuzz_hardware). */
static void test_trailing_carriage_return(void **state) {
  (void)state;
  char text[1024];
  snprintf(text, sizeof text, "%sname2 = x\r", GOOD);
  mb_hardware hw;
  mb_error err;
  assert_false(mb_hardware_parse(text, "cr.txt", &hw, &err));
  assert_string_equal(err.message, "cr.txt:9: unknown key 'name2'");
  snprintf(text, sizeof text, "%s\r", GOOD);
  assert_true(mb_hardware_parse(text, "cr.txt", &hw, &err));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_good),
      cmocka_unit_test(test_rejections),
      cmocka_unit_test(test_more_rejections),
      cmocka_unit_test(test_shipped_profiles),
      cmocka_unit_test(test_trailing_carriage_return),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
