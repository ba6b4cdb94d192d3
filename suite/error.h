/* Error reporting: every fallible function takes an mb_error* and returns false (or NULL)
 * on failure after filling it with one line that names the file, line and field at fault,
 * e.g. "ops.txt:17: buffer 'x': end 3 < start 5". No global state: the caller owns it. */
#ifndef MB_ERROR_H
#define MB_ERROR_H

#include <stdbool.h>

#define MB_ERROR_MAX 1024

typedef struct mb_error {
  char message[MB_ERROR_MAX];
} mb_error;

/* Formats the message (printf-style) into err when err is not NULL. Returns false so that
 * callers can write `return mb_fail(err, ...)`. */
bool mb_fail(mb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes an existing message: "context: old message". Returns false. */
bool mb_fail_prefix(mb_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears err (message becomes ""). */
void mb_error_clear(mb_error *err);

#endif
