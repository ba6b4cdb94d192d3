/* error.h: mb_fail and mb_fail_prefix store one line of at most MB_ERROR_MAX - 1 bytes with
 * every control byte written as "\xHH" (printable ASCII and bytes >= 0x80 kept), cut only
 * between whole pieces (never inside an escape or a UTF-8 sequence); mb_escape_text and
 * mb_diag escape the same way. Expected texts are written out by hand, not by the code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "support.h"

enum { LAST = MB_ERROR_MAX - 1 }; /* the longest message */

/* n copies of c, NUL-terminated, in buf */
static char *fill(char *buf, char c, size_t n) {
  memset(buf, c, n);
  buf[n] = '\0';
  return buf;
}

static void test_plain_message(void **state) {
  (void)state;
  mb_error e;
  assert_false(mb_fail(&e, "%s:%d: buffer '%s': end %d < start %d", "ops.wl", 17, "x", 3, 5));
  assert_string_equal(e.message, "ops.wl:17: buffer 'x': end 3 < start 5");
  assert_false(mb_fail(NULL, "ignored %d", 1));
  assert_false(mb_fail_prefix(NULL, "ignored %d", 1));
  mb_error_clear(&e);
  assert_string_equal(e.message, "");
  mb_error_clear(NULL);
}

/* Each control byte on its own between two letters becomes backslash, x, two lowercase hex
 * digits; the table is written out, not computed with the same printf. */
static void test_every_control_byte_escaped(void **state) {
  (void)state;
  static const char *const want[32] = {
      NULL,    "\\x01", "\\x02", "\\x03", "\\x04", "\\x05", "\\x06", "\\x07",
      "\\x08", "\\x09", "\\x0a", "\\x0b", "\\x0c", "\\x0d", "\\x0e", "\\x0f",
      "\\x10", "\\x11", "\\x12", "\\x13", "\\x14", "\\x15", "\\x16", "\\x17",
      "\\x18", "\\x19", "\\x1a", "\\x1b", "\\x1c", "\\x1d", "\\x1e", "\\x1f"};
  for (int c = 1; c <= 0x7f; c++) {
    if (c >= 0x20 && c < 0x7f) continue;
    const char *esc = c == 0x7f ? "\\x7f" : want[c];
    char name[4] = {'a', (char)c, 'b', '\0'};
    char expect[64];
    snprintf(expect, sizeof expect, "buffer 'a%sb': bad", esc);
    mb_error e;
    mb_fail(&e, "buffer '%s': bad", name);
    if (strcmp(e.message, expect)) fail_msg("byte 0x%02x: '%s', want '%s'", c, e.message, expect);
    mb_fail(&e, "old");
    mb_fail_prefix(&e, "buffer '%s'", name);
    snprintf(expect, sizeof expect, "buffer 'a%sb': old", esc);
    if (strcmp(e.message, expect)) fail_msg("prefix 0x%02x: '%s', want '%s'", c, e.message, expect);
  }
  /* the format's own bytes are escaped too: a message is one line whoever wrote the '\n' */
  mb_error e;
  mb_fail(&e, "two\nlines\r\tand \x1b[31mred");
  assert_string_equal(e.message, "two\\x0alines\\x0d\\x09and \\x1b[31mred");
  assert_null(strchr(e.message, '\n'));
}

static void test_printable_and_high_bytes_kept(void **state) {
  (void)state;
  char ascii[0x7f - 0x20 + 1];
  for (int c = 0x20; c < 0x7f; c++) ascii[c - 0x20] = (char)c;
  ascii[sizeof ascii - 1] = '\0';
  mb_error e;
  mb_fail(&e, "%s", ascii);
  assert_string_equal(e.message, ascii); /* backslash and quotes included, not doubled */
  /* UTF-8 (2-, 3- and 4-byte sequences) and bytes that are not UTF-8 at all */
  const char *high = "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \x80\xff\xfe";
  mb_fail(&e, "workload '%s'", high);
  assert_string_equal(e.message,
                      "workload 'caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
                      "\xf0\x9f\x98\x80 \x80\xff\xfe'");
  assert_int_equal(strlen(e.message), strlen(high) + 11);
}

static void test_long_message_truncated(void **state) {
  (void)state;
  char big[3000], want[MB_ERROR_MAX];
  fill(big, 'a', 2000);
  mb_error e;
  mb_fail(&e, "%s", big);
  assert_int_equal(strlen(e.message), LAST);
  assert_string_equal(e.message, fill(want, 'a', LAST));
  /* escapes count 4 bytes each: 300 line breaks need 1200 bytes, 255 whole ones fit (1020) */
  char nl[301];
  fill(nl, '\n', 300);
  mb_fail(&e, "%s", nl);
  assert_int_equal(strlen(e.message), 1020);
  for (size_t i = 0; i < 1020; i += 4) assert_memory_equal(e.message + i, "\\x0a", 4);
}

/* An escape straddling the end is left out whole: k letters then ESC keeps the escape only
 * when k + 4 <= LAST. */
static void test_no_split_escape_at_end(void **state) {
  (void)state;
  char text[MB_ERROR_MAX + 16], want[MB_ERROR_MAX + 16];
  for (size_t k = LAST - 8; k <= LAST; k++) {
    fill(text, 'a', k);
    strcat(text, "\x1bzzzz"); /* 'z' is not a hex digit: ESC then four z */
    mb_error e;
    mb_fail(&e, "%s", text);
    size_t len = k;
    memset(want, 'a', k);
    if (k + 4 <= LAST) {
      memcpy(want + len, "\\x1b", 4);
      len += 4;
      size_t z = LAST - len < 4 ? LAST - len : 4;
      memset(want + len, 'z', z);
      len += z;
    }
    want[len] = '\0';
    if (strcmp(e.message, want))
      fail_msg("k=%zu: got %zu bytes, want %zu", k, strlen(e.message), strlen(want));
  }
}

/* A UTF-8 sequence straddling the end is left out whole, also when vsnprintf's own cut falls
 * inside it. */
static void test_no_split_utf8_at_end(void **state) {
  (void)state;
  static const char *const seq[] = {"\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80"};
  char text[MB_ERROR_MAX + 16], want[MB_ERROR_MAX + 16];
  for (int s = 0; s < 3; s++) {
    size_t w = strlen(seq[s]);
    for (size_t k = LAST - 6; k <= LAST + 2; k++) {
      fill(text, 'a', k);
      strcat(text, seq[s]);
      mb_error e;
      mb_fail(&e, "%s", text);
      size_t keep = k < LAST ? k : LAST;
      fill(want, 'a', keep);
      if (k + w <= LAST) strcat(want, seq[s]);
      if (strcmp(e.message, want))
        fail_msg("%zu-byte sequence after %zu letters: got %zu bytes, want %zu", w, k,
                 strlen(e.message), strlen(want));
    }
  }
}

static void test_arguments_may_point_into_the_message(void **state) {
  (void)state;
  mb_error e;
  mb_fail(&e, "inner %d", 7);
  mb_fail(&e, "outer (%s)", e.message);
  assert_string_equal(e.message, "outer (inner 7)");
  mb_fail_prefix(&e, "[%s]", e.message);
  assert_string_equal(e.message, "[outer (inner 7)]: outer (inner 7)");
}

static void test_prefix(void **state) {
  (void)state;
  mb_error e;
  mb_fail(&e, "line 3: field 'size': -1 < 0");
  mb_fail_prefix(&e, "%s", "w.wl");
  assert_string_equal(e.message, "w.wl: line 3: field 'size': -1 < 0");
  mb_fail_prefix(&e, "catalogue entry '%s'", "x\ny");
  assert_string_equal(e.message, "catalogue entry 'x\\x0ay': w.wl: line 3: field 'size': -1 < 0");
  /* an old message's escapes stay single: no backslash doubled by a second pass */
  mb_fail(&e, "name 'a\x1b' bad");
  mb_fail_prefix(&e, "p");
  mb_fail_prefix(&e, "q");
  assert_string_equal(e.message, "q: p: name 'a\\x1b' bad");
}

static void test_prefix_truncation(void **state) {
  (void)state;
  char old[MB_ERROR_MAX], ctx[2000], want[MB_ERROR_MAX + 16];
  mb_error e;
  /* the old message is cut to what fits after "context: " */
  mb_fail(&e, "%s", fill(old, 'o', 900));
  mb_fail_prefix(&e, "%s", fill(ctx, 'c', 200));
  assert_int_equal(strlen(e.message), LAST);
  fill(want, 'c', 200);
  strcat(want, ": ");
  memset(want + 202, 'o', LAST - 202);
  want[LAST] = '\0';
  assert_string_equal(e.message, want);
  /* a context that fills the message alone: no ": " and nothing of the old message */
  mb_fail(&e, "old");
  mb_fail_prefix(&e, "%s", fill(ctx, 'c', 1500));
  assert_string_equal(e.message, fill(want, 'c', LAST));
  /* a context that fits but leaves no room for one byte of the old message */
  mb_fail(&e, "old");
  mb_fail_prefix(&e, "%s", fill(ctx, 'c', LAST - 2));
  assert_string_equal(e.message, fill(want, 'c', LAST - 2));
  /* a context cut inside an escape loses the escape whole and adds no ": " */
  mb_fail(&e, "old");
  fill(ctx, 'c', LAST - 2);
  strcat(ctx, "\n");
  mb_fail_prefix(&e, "%s", ctx);
  assert_string_equal(e.message, fill(want, 'c', LAST - 2));
  /* the cut of the old message never falls inside one of its escapes */
  for (size_t k = 0; k < 8; k++) {
    fill(old, 'o', 30);
    strcat(old, "\x1b");
    mb_fail(&e, "%s", old); /* stored as 30 o's then \x1b */
    size_t c = LAST - 2 - 30 - k;
    mb_fail_prefix(&e, "%s", fill(ctx, 'c', c));
    fill(want, 'c', c);
    strcat(want, ": ");
    strcat(want, fill(old, 'o', 30));
    if (k >= 4) strcat(want, "\\x1b");
    if (strcmp(e.message, want))
      fail_msg("k=%zu: got '%s'", k,
               e.message + (strlen(e.message) > 40 ? strlen(e.message) - 40 : 0));
  }
}

static void test_escape_text(void **state) {
  (void)state;
  char out[16];
  assert_int_equal(mb_escape_text(out, 1, "abc"), 0);
  assert_string_equal(out, "");
  assert_int_equal(mb_escape_text(out, 4, "\n"), 0); /* "\x0a" needs 5 bytes with the NUL */
  assert_string_equal(out, "");
  assert_int_equal(mb_escape_text(out, 5, "\n"), 4);
  assert_string_equal(out, "\\x0a");
  assert_int_equal(mb_escape_text(out, sizeof out, "a\tb\x7f"), 10);
  assert_string_equal(out, "a\\x09b\\x7f");
  assert_int_equal(mb_escape_text(out, 3, "\xc3\xa9x"), 2);
  assert_string_equal(out, "\xc3\xa9");
  assert_int_equal(mb_escape_text(out, 2, "\xc3\xa9x"), 0);

  /* "\xHH" already in a text is one piece for every hex digit at either end of its ranges (two
   * bytes of room keep none of it); a near miss on either side of a range is not, and keeps
   * its "\x" */
  static const char *const escapes[] = {"\\x09", "\\x90", "\\xaf", "\\xfa", "\\xAF", "\\xFA"};
  for (size_t i = 0; i < sizeof escapes / sizeof *escapes; i++) {
    assert_int_equal(mb_escape_text(out, 3, escapes[i]), 0);
    assert_int_equal(mb_escape_text(out, 5, escapes[i]), 4);
    assert_string_equal(out, escapes[i]);
  }
  static const char *const near[] = {"\\x/0", "\\x:0", "\\x`0", "\\xg0",
                                     "\\x@0", "\\xG0", "\\x0/", "\\x0G"};
  for (size_t i = 0; i < sizeof near / sizeof *near; i++) {
    assert_int_equal(mb_escape_text(out, 3, near[i]), 2);
    assert_string_equal(out, "\\x");
  }
  /* a control byte after "\x" is escaped, not taken as a hex digit */
  assert_int_equal(mb_escape_text(out, sizeof out,
                                  "\\x\x01"
                                  "0"),
                   7);
  assert_string_equal(out, "\\x\\x010");

  /* UTF-8 sequences from the first lead byte (0xc0) to the last continuation byte (0xbf) are
   * one piece; 0xbf alone is no lead */
  assert_int_equal(mb_escape_text(out, 2, "\xc2\xbf"), 0);
  assert_int_equal(mb_escape_text(out, 3, "\xc2\xbf"), 2);
  assert_int_equal(mb_escape_text(out, 2, "\xc0\x80"), 0);
  assert_int_equal(mb_escape_text(out, 2, "\xbf\x80"), 1);
  assert_string_equal(out, "\xbf");
  /* a piece is at most 4 bytes: a fifth continuation byte starts a piece of its own */
  assert_int_equal(mb_escape_text(out, 5, "\xf8\x80\x80\x80\x80"), 4);
  assert_string_equal(out, "\xf8\x80\x80\x80");
}

/* Reads what mb_diag wrote to a temporary file. */
static char *diag_text(FILE *f) {
  long n = ftell(f);
  assert_true(n >= 0);
  rewind(f);
  char *s = malloc((size_t)n + 1);
  assert_non_null(s);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = '\0';
  return s;
}

static void test_diag(void **state) {
  (void)state;
  FILE *f = tmpfile();
  assert_non_null(f);
  mb_diag(f, "note: skipping %s: %s", "w\n\x1b]0;title\x07", "caf\xc3\xa9");
  char *s = diag_text(f);
  assert_string_equal(s, "note: skipping w\\x0a\\x1b]0;title\\x07: caf\xc3\xa9\n");
  free(s);
  fclose(f);
  /* not cut at MB_ERROR_MAX or at its own first buffer */
  f = tmpfile();
  assert_non_null(f);
  char *big = malloc(5001);
  assert_non_null(big);
  fill(big, 'n', 5000);
  big[2500] = '\r';
  mb_diag(f, "warning: %s", big);
  s = diag_text(f);
  assert_int_equal(strlen(s), 9 + 5000 + 3 + 1);
  assert_memory_equal(s + 9 + 2500, "\\x0dn", 5);
  assert_int_equal(s[strlen(s) - 1], '\n');
  assert_null(strchr(s, '\r'));
  free(s);
  fclose(f);
  /* texts of 511, 512 and 513 bytes, about the first buffer's size, whole */
  for (size_t n = 511; n <= 513; n++) {
    f = tmpfile();
    assert_non_null(f);
    fill(big, 'm', n);
    mb_diag(f, "%s", big);
    s = diag_text(f);
    assert_int_equal(strlen(s), n + 1);
    assert_int_equal(strspn(s, "m"), n);
    free(s);
    fclose(f);
  }
  free(big);
  mb_diag(NULL, "nothing %d", 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain_message),
      cmocka_unit_test(test_every_control_byte_escaped),
      cmocka_unit_test(test_printable_and_high_bytes_kept),
      cmocka_unit_test(test_long_message_truncated),
      cmocka_unit_test(test_no_split_escape_at_end),
      cmocka_unit_test(test_no_split_utf8_at_end),
      cmocka_unit_test(test_arguments_may_point_into_the_message),
      cmocka_unit_test(test_prefix),
      cmocka_unit_test(test_prefix_truncation),
      cmocka_unit_test(test_escape_text),
      cmocka_unit_test(test_diag),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
