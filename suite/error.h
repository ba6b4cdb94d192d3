/* Error reporting: every fallible function takes an mb_error* and returns false (or NULL)
 * on failure after filling it with one line that names the file, line and field at fault,
 * e.g. "ops.txt:17: buffer 'x': end 3 < start 5". No global state: the caller owns it.
 *
 * Names in messages come from user files (a .wl name may hold any byte but NUL), so a message
 * is escaped when it is stored: every control byte (0x00-0x1f and 0x7f) becomes "\xHH", a
 * backslash, an 'x' and two lowercase hex digits, the escape the .wl writer uses in quoted
 * strings ("\x0a" for a line break, "\x1b" for ESC). Every other byte is kept: printable ASCII
 * (the backslash too: it is not doubled, so "\x0a" in a message is either an escaped line
 * break or those four characters of a name; messages are for reading, not for parsing) and
 * bytes >= 0x80, so UTF-8 names read as they are. A stored message is therefore one line with
 * no terminal control sequences in it. Diagnostics printed directly (notes, warnings) go
 * through mb_diag or mb_escape_text, the same escaping. */
#ifndef MB_ERROR_H
#define MB_ERROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define MB_ERROR_MAX 1024

typedef struct mb_error {
  char message[MB_ERROR_MAX];
} mb_error;

/* Formats the message (printf-style), escaped as above, into err when err is not NULL. A
 * message longer than MB_ERROR_MAX - 1 bytes is cut before the first escape, "\xHH" or UTF-8
 * sequence that does not fit whole. Arguments may point into err->message. Returns false so
 * that callers can write `return mb_fail(err, ...)`. */
bool mb_fail(mb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes an existing message: "context: old message", the context escaped as in mb_fail,
 * the old message cut (as in mb_fail) to what fits after it; no ": " when the context alone
 * fills the message. Returns false. */
bool mb_fail_prefix(mb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __clang_analyzer__
/* The static analyzer (scripts/analyze.sh) sees each file alone: tell it that both return
 * false, so that it does not follow failure paths as if they went on. */
#define mb_fail(...) (mb_fail(__VA_ARGS__), false)
#define mb_fail_prefix(...) (mb_fail_prefix(__VA_ARGS__), false)
#endif

/* Clears err (message becomes ""). */
void mb_error_clear(mb_error *err);

/* Writes `text` escaped as above into dst (cap bytes, cap >= 1), always NUL-terminated, and
 * stops before the first piece that does not fit whole: an escape, a "\xHH" already in the
 * text, or a UTF-8 sequence is never cut. Returns the length written (strlen(dst)). */
size_t mb_escape_text(char *dst, size_t cap, const char *text);

/* Writes one diagnostic line to `out` (nothing when out is NULL): the formatted text, escaped
 * as above and not truncated, then '\n'. For notes and warnings that carry names from files;
 * the format must not end in '\n' (it would be written as "\x0a"). */
void mb_diag(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
