/* text_lines.h: splitting a (text, len) buffer into lines, and the NUL-byte check. */
#include <stdio.h>
#include <string.h>

#include "support.h"
#include "text_lines.h"

/* The lines of text[0, len), each written as "NUMBER:[BYTES]" (a '\r' as "\r", a NUL as "\0")
 * and joined by spaces into out, so that one comparison checks every line, its bytes, its
 * number and where the iteration stops. */
static const char *lines_of(const char *text, size_t len, char *out, size_t n) {
  mb_text_lines it;
  mb_text_lines_init(&it, text, len);
  size_t at = 0;
  out[0] = '\0';
  const char *line;
  size_t line_len;
  int64_t count = 0;
  while (mb_text_lines_next(&it, &line, &line_len)) {
    count++;
    assert_int_equal(it.line_no, count);
    assert_true(line >= text && line + line_len <= text + len); /* inside the text */
    at += (size_t)snprintf(out + at, n - at, "%s%lld:[", at ? " " : "", (long long)it.line_no);
    for (size_t i = 0; i < line_len; i++)
      at += (size_t)snprintf(out + at, n - at, "%s",
                             line[i] == '\r'   ? "\\r"
                             : line[i] == '\0' ? "\\0"
                                               : (char[]){line[i], '\0'});
    at += (size_t)snprintf(out + at, n - at, "]");
    assert_true(at < n);
  }
  /* the end stays the end */
  assert_false(mb_text_lines_next(&it, &line, &line_len));
  assert_int_equal(it.line_no, count);
  return out;
}

#define LINES(literal) lines_of(literal, sizeof(literal) - 1, buf, sizeof buf)

static void test_empty(void **state) {
  (void)state;
  char buf[256];
  assert_string_equal(LINES(""), "");
  /* a NULL text of length 0 is an empty text */
  assert_string_equal(lines_of(NULL, 0, buf, sizeof buf), "");
  assert_string_equal(LINES("\n"), "1:[]");
}

static void test_final_newline(void **state) {
  (void)state;
  char buf[256];
  assert_string_equal(LINES("a\nbc\n"), "1:[a] 2:[bc]");
  assert_string_equal(LINES("a\nbc"), "1:[a] 2:[bc]"); /* no final newline: the same lines */
  assert_string_equal(LINES("abc"), "1:[abc]");
}

static void test_blank_lines(void **state) {
  (void)state;
  char buf[256];
  assert_string_equal(LINES("\n\na\n\n"), "1:[] 2:[] 3:[a] 4:[]");
  assert_string_equal(LINES("a\n\n\nb"), "1:[a] 2:[] 3:[] 4:[b]");
  assert_string_equal(LINES("  \n\t\n"), "1:[  ] 2:[\t]"); /* blanks are kept */
}

static void test_crlf(void **state) {
  (void)state;
  char buf[256];
  assert_string_equal(LINES("a\r\nb\r\n"), "1:[a] 2:[b]");
  assert_string_equal(LINES("a\r\nb\r"), "1:[a] 2:[b]"); /* a '\r' ending the text */
  assert_string_equal(LINES("\r\n\r\n"), "1:[] 2:[]");
  assert_string_equal(LINES("a\r\r\n"), "1:[a\\r]");            /* only one '\r' */
  assert_string_equal(LINES("a\nb\r\nc"), "1:[a] 2:[b] 3:[c]"); /* mixed endings */
}

static void test_embedded_cr(void **state) {
  (void)state;
  char buf[256];
  /* a '\r' not at a line's end is a byte of the line, not a line break */
  assert_string_equal(LINES("a\rb\nc"), "1:[a\\rb] 2:[c]");
  assert_string_equal(LINES("\ra\n"), "1:[\\ra]");
  assert_string_equal(LINES("\r"), "1:[]");
}

static void test_len_bounds(void **state) {
  (void)state;
  char buf[256];
  /* only text[0, len) counts: no NUL termination needed, nothing read past len */
  const char text[] = {'a', '\n', 'b', 'c', '\n', 'd'};
  assert_string_equal(lines_of(text, 4, buf, sizeof buf), "1:[a] 2:[bc]");
  assert_string_equal(lines_of(text, 5, buf, sizeof buf), "1:[a] 2:[bc]");
  assert_string_equal(lines_of(text, 6, buf, sizeof buf), "1:[a] 2:[bc] 3:[d]");
  /* a '\r' past len does not count, one at len - 1 does */
  const char cr[] = {'a', '\r', '\r'};
  assert_string_equal(lines_of(cr, 1, buf, sizeof buf), "1:[a]");
  assert_string_equal(lines_of(cr, 2, buf, sizeof buf), "1:[a]");
  assert_string_equal(lines_of(cr, 3, buf, sizeof buf), "1:[a\\r]");
  /* a NUL is an ordinary byte to the iterator */
  assert_string_equal(LINES("a\0b\n\0"), "1:[a\\0b] 2:[\\0]");
}

static void test_line_numbers(void **state) {
  (void)state;
  /* line_no is 0 before the first line and the number of the line last returned after */
  const char *text = "x\n\ny\r\nz";
  mb_text_lines it;
  mb_text_lines_init(&it, text, strlen(text));
  assert_int_equal(it.line_no, 0);
  const char *line;
  size_t n;
  const char *want[] = {"x", "", "y", "z"};
  for (int i = 0; i < 4; i++) {
    assert_true(mb_text_lines_next(&it, &line, &n));
    assert_int_equal(it.line_no, i + 1);
    assert_int_equal(n, strlen(want[i]));
    assert_memory_equal(line, want[i], n);
  }
  assert_false(mb_text_lines_next(&it, &line, &n));
  assert_int_equal(it.line_no, 4);
}

static void test_no_nul(void **state) {
  (void)state;
  mb_error err;
  assert_true(mb_text_check_no_nul("a\nb\n", 4, "f.txt", &err));
  assert_true(mb_text_check_no_nul("", 0, "f.txt", &err));
  assert_true(mb_text_check_no_nul("a\0", 1, "f.txt", &err)); /* only text[0..len) counts */
  /* the line the NUL is on */
  assert_false(mb_text_check_no_nul("a\nb\nc\0d", 7, "f.txt", &err));
  assert_string_equal(err.message, "f.txt:3: NUL byte: not a text file");
  assert_false(mb_text_check_no_nul("\0", 1, "g", &err));
  assert_string_equal(err.message, "g:1: NUL byte: not a text file");
  /* in the middle of a line, after CRLF and blank lines; the first NUL counts */
  assert_false(mb_text_check_no_nul("a\r\n\n\r\nbc\0d\n\0", 12, "h.csv", &err));
  assert_string_equal(err.message, "h.csv:4: NUL byte: not a text file");
  /* at the start of a line: the line after the '\n' */
  assert_false(mb_text_check_no_nul("a\n\0", 3, "f", &err));
  assert_string_equal(err.message, "f:2: NUL byte: not a text file");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty),        cmocka_unit_test(test_final_newline),
      cmocka_unit_test(test_blank_lines),  cmocka_unit_test(test_crlf),
      cmocka_unit_test(test_embedded_cr),  cmocka_unit_test(test_len_bounds),
      cmocka_unit_test(test_line_numbers), cmocka_unit_test(test_no_nul),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
