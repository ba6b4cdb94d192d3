#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool mb_fail(mb_error *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return false;
}

bool mb_fail_prefix(mb_error *err, const char *fmt, ...) {
  if (err) {
    char old[MB_ERROR_MAX];
    memcpy(old, err->message, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n;
    if (used < sizeof err->message) {
      size_t room = sizeof err->message - used;
      size_t len = strlen(old);
      /* ": " then as much of the old message as fits, NUL-terminated */
      if (room > 3) {
        memcpy(err->message + used, ": ", 2);
        if (len > room - 3) len = room - 3;
        memcpy(err->message + used + 2, old, len);
        err->message[used + 2 + len] = '\0';
      }
    }
  }
  return false;
}

void mb_error_clear(mb_error *err) {
  if (err) err->message[0] = '\0';
}
