#include "error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

static bool is_hex(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Length in bytes of the piece of text starting at s (s[0] != '\0') and of its escaped form:
 * a control byte (1 byte, escaped to 4), a "\xHH" already written (4, kept), a UTF-8 lead
 * byte with the continuation bytes that follow it (up to 4, kept), or any other byte. */
static size_t piece(const unsigned char *s, size_t *out_len) {
  if (is_control(s[0])) {
    *out_len = 4;
    return 1;
  }
  size_t n = 1;
  if (s[0] == '\\' && s[1] == 'x' && is_hex(s[2]) && is_hex(s[3]))
    n = 4;
  else if (s[0] >= 0xc0)
    while (n < 4 && s[n] >= 0x80 && s[n] <= 0xbf) n++;
  *out_len = n;
  return n;
}

static void put_piece(char *dst, const unsigned char *s, size_t n, size_t out_len) {
  static const char hex[] = "0123456789abcdef";
  if (out_len == n) {
    memcpy(dst, s, n);
  } else {
    dst[0] = '\\';
    dst[1] = 'x';
    dst[2] = hex[s[0] >> 4];
    dst[3] = hex[s[0] & 15];
  }
}

/* mb_escape_text that also says whether all of the text fit. */
static size_t escape_into(char *dst, size_t cap, const char *text, bool *complete) {
  const unsigned char *s = (const unsigned char *)text;
  size_t len = 0;
  *complete = true;
  while (*s) {
    size_t out_len;
    size_t n = piece(s, &out_len);
    if (out_len > cap - 1 - len) {
      *complete = false;
      break;
    }
    put_piece(dst + len, s, n, out_len);
    len += out_len;
    s += n;
  }
  dst[len] = '\0';
  return len;
}

size_t mb_escape_text(char *dst, size_t cap, const char *text) {
  bool complete;
  return escape_into(dst, cap, text, &complete);
}

/* The raw text is formatted 4 bytes longer than a message can be: escaping never shortens a
 * piece and a piece is at most 4 bytes, so a piece cut by vsnprintf's truncation lies wholly
 * past what the message can hold and is never copied. */
enum { RAW_MAX = MB_ERROR_MAX + 4 };

bool mb_fail(mb_error *err, const char *fmt, ...) {
  if (err) {
    char raw[RAW_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    if (n < 0) raw[0] = '\0';
    mb_escape_text(err->message, sizeof err->message, raw);
  }
  return false;
}

bool mb_fail_prefix(mb_error *err, const char *fmt, ...) {
  if (err) {
    char old[MB_ERROR_MAX];
    memcpy(old, err->message, sizeof old);
    old[sizeof old - 1] = '\0';
    char raw[RAW_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    if (n < 0) raw[0] = '\0';
    bool complete;
    size_t len = escape_into(err->message, sizeof err->message, raw, &complete);
    /* ": " then as much of the old message as fits */
    if (complete && sizeof err->message - len > 3) {
      memcpy(err->message + len, ": ", 2);
      len += 2;
      escape_into(err->message + len, sizeof err->message - len, old, &complete);
    }
  }
  return false;
}

void mb_error_clear(mb_error *err) {
  if (err) err->message[0] = '\0';
}

void mb_diag(FILE *out, const char *fmt, ...) {
  if (!out) return;
  char small[512];
  char *text = small;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    small[0] = '\0';
  } else if ((size_t)n >= sizeof small) {
    char *big = malloc((size_t)n + 1);
    if (big) { /* else the first bytes: a diagnostic cut short beats none */
      va_start(ap, fmt);
      vsnprintf(big, (size_t)n + 1, fmt, ap);
      va_end(ap);
      text = big;
    }
  }
  const unsigned char *s = (const unsigned char *)text;
  while (*s) {
    size_t out_len;
    size_t k = piece(s, &out_len);
    char buf[4];
    put_piece(buf, s, k, out_len);
    fwrite(buf, 1, out_len, out);
    s += k;
  }
  putc('\n', out);
  if (text != small) free(text);
}
