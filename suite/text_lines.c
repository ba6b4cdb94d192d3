#include "text_lines.h"

#include <string.h>

void mb_text_lines_init(mb_text_lines *it, const char *text, size_t len) {
  *it = (mb_text_lines){.text = text, .len = len};
}

bool mb_text_lines_next(mb_text_lines *it, const char **line, size_t *line_len) {
  if (it->pos >= it->len) return false;
  const char *start = it->text + it->pos;
  size_t rest = it->len - it->pos;
  const char *nl = memchr(start, '\n', rest);
  size_t n = nl ? (size_t)(nl - start) : rest;
  it->pos += n + (nl ? 1 : 0);
  it->line_no++;
  if (n > 0 && start[n - 1] == '\r') n--;
  *line = start;
  *line_len = n;
  return true;
}

bool mb_text_check_no_nul(const char *text, size_t len, const char *path, mb_error *err) {
  const char *nul = memchr(text, '\0', len);
  if (!nul) return true;
  long long line = 1; /* a file of 2^31 lines is possible */
  for (const char *c = text; c < nul; c++) line += *c == '\n';
  return mb_fail(err, "%s:%lld: NUL byte: not a text file", path, line);
}
