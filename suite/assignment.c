#include "assignment.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "paths.h"
#include "text_lines.h"

mb_assignment *mb_assignment_new(int32_t n_buffers) {
  mb_assignment *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->n_buffers = n_buffers;
  a->offset = malloc((size_t)(n_buffers > 0 ? n_buffers : 1) * sizeof *a->offset);
  if (!a->offset) {
    free(a);
    return NULL;
  }
  for (int32_t i = 0; i < n_buffers; i++) a->offset[i] = MB_SLOW;
  return a;
}

void mb_assignment_free(mb_assignment *a) {
  if (!a) return;
  free(a->offset);
  free(a);
}

void mb_assignment_copy(mb_assignment *dst, const mb_assignment *src) {
  memcpy(dst->offset, src->offset, (size_t)src->n_buffers * sizeof *dst->offset);
}

void mb_assignment_fast_flags(const mb_assignment *a, bool *in_fast) {
  for (int32_t i = 0; i < a->n_buffers; i++) in_fast[i] = a->offset[i] != MB_SLOW;
}

int32_t mb_assignment_n_fast(const mb_assignment *a) {
  int32_t n = 0;
  for (int32_t i = 0; i < a->n_buffers; i++) n += a->offset[i] != MB_SLOW;
  return n;
}

/* A name is written as it is unless the reader would take it apart or change it: a comma, a
 * quote, a line break or any other control byte, a blank (the reader trims blanks around a
 * field), a leading '#' (a comment line) or nothing at all. Those are quoted as RFC 4180 says:
 * in double quotes, each quote inside doubled. */
static bool needs_quotes(const char *s) {
  if (!*s || *s == '#') return true;
  for (const unsigned char *c = (const unsigned char *)s; *c; c++)
    if (*c <= ' ' || *c == ',' || *c == '"' || *c == 0x7f) return true;
  return false;
}

static void put_name(const char *s, FILE *out) {
  if (!needs_quotes(s)) {
    fputs(s, out);
    return;
  }
  putc('"', out);
  for (; *s; s++) {
    if (*s == '"') putc('"', out);
    putc(*s, out);
  }
  putc('"', out);
}

bool mb_assignment_write_csv(const mb_assignment *a, const mb_workload *w, FILE *out) {
  fputs("buffer,offset\n", out);
  for (int32_t i = 0; i < a->n_buffers; i++) {
    put_name(w->buffers[i].name, out);
    if (a->offset[i] == MB_SLOW)
      fputs(",slow\n", out);
    else
      fprintf(out, ",%lld\n", (long long)a->offset[i]);
  }
  return !ferror(out);
}

bool mb_assignment_save_csv(const mb_assignment *a, const mb_workload *w, const char *path,
                            mb_error *err) {
  /* a temporary file renamed over path, so an existing file is never half-overwritten */
  mb_atomic_file *out = mb_atomic_file_open(path, NULL, err);
  if (!out) return false;
  mb_assignment_write_csv(a, w, mb_atomic_file_stream(out)); /* a write error fails the commit */
  return mb_atomic_file_commit(out, err);
}

/* Sorted (name, index) table for O(log n) name lookup. */
typedef struct {
  const char *name;
  int32_t index;
} name_index;

static int cmp_name_index(const void *a, const void *b) {
  return strcmp(((const name_index *)a)->name, ((const name_index *)b)->name);
}

mb_assignment *mb_assignment_load_csv(const char *path, const mb_workload *w, mb_error *err) {
  return mb_assignment_load_csv_rows(path, w, NULL, err);
}

mb_assignment *mb_assignment_load_csv_rows(const char *path, const mb_workload *w,
                                           int32_t *row_line, mb_error *err) {
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) {
    mb_fail(err, "%s: cannot read assignment: %s", path, strerror(errno));
    return NULL;
  }
  mb_assignment *a = mb_assignment_parse_csv_rows(text, len, path, w, row_line, err);
  free(text);
  return a;
}

/* ---- the reader: RFC 4180 records of two fields ---- */

typedef struct csv_in {
  const char *text, *path;
  size_t len, pos; /* pos: the next byte to read */
  int32_t line;    /* the line of text[pos] */
  mb_error *err;
} csv_in;

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static bool fail_line(csv_in *in, int32_t line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail_line(csv_in *in, int32_t line, const char *what, const char *fmt, ...) {
  char msg[MB_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mb_fail(in->err, "%s:%d: field '%s': %s", in->path, line, what, msg);
}

/* Counts a line break read at in->pos; false past the lines an int32_t numbers. */
static bool next_line(csv_in *in) {
  if (in->line == INT32_MAX) return mb_fail(in->err, "%s: more than 2^31 lines", in->path);
  in->line++;
  return true;
}

/* Reads one field (quoted or not, blanks around it trimmed) into out[cap] and stops at the
 * ',' or line break after it, which it leaves unread. A field of cap bytes or more sets
 * *too_long and is cut. `what` names the field in messages. */
static bool read_field(csv_in *in, const char *what, char *out, size_t cap, bool *quoted,
                       bool *too_long) {
  const char *t = in->text;
  size_t i = in->pos, k = 0, len = in->len;
  int32_t first_line = in->line;
  *too_long = false;
  while (i < len && is_blank(t[i])) i++;
  *quoted = i < len && t[i] == '"';
  if (*quoted) {
    for (i++;; i++) {
      if (i >= len)
        return fail_line(in, first_line, what, "unterminated quoted field (no closing '\"')");
      char c = t[i];
      if (c == '"') {
        if (i + 1 >= len || t[i + 1] != '"') {
          i++;
          break;
        }
        i++; /* a doubled quote stands for one */
      } else if (c == '\n') {
        if (!next_line(in)) return false;
      }
      if (k + 1 < cap)
        out[k++] = c;
      else
        *too_long = true;
    }
    while (i < len && is_blank(t[i])) i++;
    if (i < len && t[i] == '\r' && (i + 1 == len || t[i + 1] == '\n')) i++;
    if (i < len && t[i] != ',' && t[i] != '\n')
      return fail_line(in, in->line, what,
                       "unexpected text after the closing quote (a quote inside a quoted field "
                       "is written twice)");
  } else {
    size_t start = i;
    for (; i < len && t[i] != ',' && t[i] != '\n'; i++) {
      if (t[i] == '"')
        return fail_line(in, in->line, what,
                         "a quote inside an unquoted field (quote the whole field and write "
                         "each quote inside twice)");
    }
    size_t end = i;
    if (end > start && t[end - 1] == '\r' && (end == len || t[end] == '\n')) end--;
    while (end > start && is_blank(t[end - 1])) end--;
    for (size_t j = start; j < end; j++) {
      if (k + 1 < cap)
        out[k++] = t[j];
      else
        *too_long = true;
    }
  }
  out[k] = '\0';
  in->pos = i;
  return true;
}

/* Skips blank lines and comment lines ('#' first after blanks); false at the end of text. */
static bool skip_to_record(csv_in *in, bool *ok) {
  const char *t = in->text;
  while (in->pos < in->len) {
    size_t i = in->pos;
    while (i < in->len && (is_blank(t[i]) || t[i] == '\r')) i++;
    if (i < in->len && t[i] != '\n' && t[i] != '#') return true;
    const char *nl = memchr(t + i, '\n', in->len - i);
    if (!nl) {
      in->pos = in->len;
      break;
    }
    in->pos = (size_t)(nl - t) + 1;
    if (!(*ok = next_line(in))) return false;
  }
  return false;
}

mb_assignment *mb_assignment_parse_csv(const char *text, size_t len, const char *path,
                                       const mb_workload *w, mb_error *err) {
  return mb_assignment_parse_csv_rows(text, len, path, w, NULL, err);
}

#define EXPECTED "expected 'buffer,offset' (offset a number or 'slow')"

mb_assignment *mb_assignment_parse_csv_rows(const char *text, size_t len, const char *path,
                                            const mb_workload *w, int32_t *row_line,
                                            mb_error *err) {
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  name_index *names = malloc((size_t)w->n_buffers * sizeof *names);
  /* seen[i]: the line of buffer i's row, 0 while unlisted */
  int32_t *seen = row_line ? row_line : malloc((size_t)w->n_buffers * sizeof *seen);
  if (seen) memset(seen, 0, (size_t)w->n_buffers * sizeof *seen);
  bool ok = a && names && seen;
  if (!ok) mb_fail(err, "%s: out of memory", path);
  /* a NUL byte would cut a name short ("x\0junk" read as "x") */
  ok = ok && mb_text_check_no_nul(text, len, path, err);
  for (int32_t i = 0; ok && i < w->n_buffers; i++) names[i] = (name_index){w->buffers[i].name, i};
  if (ok) qsort(names, (size_t)w->n_buffers, sizeof *names, cmp_name_index);
  csv_in in = {.text = text, .path = path, .len = len, .pos = 0, .line = 1, .err = err};
  bool first = true;
  while (ok && skip_to_record(&in, &ok)) {
    int32_t line = in.line;
    char name[MB_NAME_MAX], value[64];
    bool name_quoted, value_quoted, name_long, value_long;
    if (!(ok = read_field(&in, "buffer", name, sizeof name, &name_quoted, &name_long))) break;
    if (in.pos >= len || text[in.pos] != ',') {
      ok = mb_fail(err, "%s:%d: field 'offset': missing; " EXPECTED, path, in.line);
      break;
    }
    in.pos++;
    if (!(ok = read_field(&in, "offset", value, sizeof value, &value_quoted, &value_long))) break;
    int32_t value_line = in.line;
    if (in.pos < len && text[in.pos] == ',') {
      ok = mb_fail(err, "%s:%d: field 3: unexpected; " EXPECTED, path, in.line);
      break;
    }
    if (in.pos < len) { /* the line break */
      in.pos++;
      if (!(ok = next_line(&in))) break;
    }
    bool header = first && !name_quoted && !value_quoted && !strcmp(name, "buffer") &&
                  !strcmp(value, "offset");
    first = false;
    if (header) continue;
    if (!name[0]) {
      ok = mb_fail(err, "%s:%d: field 'buffer': empty; " EXPECTED, path, line);
      break;
    }
    if (name_long) {
      ok = mb_fail(err, "%s:%d: field 'buffer': too long (buffer names have at most %d bytes)",
                   path, line, MB_NAME_MAX - 1);
      break;
    }
    name_index key = {name, 0};
    name_index *hit = bsearch(&key, names, (size_t)w->n_buffers, sizeof *names, cmp_name_index);
    if (!hit) {
      ok = mb_fail(err, "%s:%d: field 'buffer': '%s' is not a buffer of workload '%s'", path, line,
                   name, w->name);
      break;
    }
    if (seen[hit->index]) {
      ok = mb_fail(err, "%s:%d: field 'buffer': '%s' listed twice (first on line %d)", path, line,
                   name, seen[hit->index]);
      break;
    }
    seen[hit->index] = line;
    if (strcmp(value, "slow")) {
      size_t digits = strspn(value + (value[0] == '-'), "0123456789");
      bool number = digits > 0 && value[(value[0] == '-') + digits] == '\0';
      errno = 0;
      long long off = number ? strtoll(value, NULL, 10) : -1;
      if (!number || value_long || errno || off < 0) {
        ok = mb_fail(err,
                     "%s:%d: field 'offset': '%s%s' must be a non-negative byte offset or 'slow'",
                     path, value_line, value, value_long ? "..." : "");
        break;
      }
      a->offset[hit->index] = off;
    }
  }
  free(names);
  if (seen != row_line) free(seen);
  if (!ok) {
    mb_assignment_free(a);
    return NULL;
  }
  return a;
}
