#include "assignment.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

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

mb_assignment *mb_assignment_clone(const mb_assignment *a) {
  mb_assignment *c = mb_assignment_new(a->n_buffers);
  if (c) mb_assignment_copy(c, a);
  return c;
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

bool mb_assignment_write_csv(const mb_assignment *a, const mb_workload *w, FILE *out) {
  if (fprintf(out, "buffer,offset\n") < 0) return false;
  for (int32_t i = 0; i < a->n_buffers; i++) {
    int r = a->offset[i] == MB_SLOW
                ? fprintf(out, "%s,slow\n", w->buffers[i].name)
                : fprintf(out, "%s,%lld\n", w->buffers[i].name, (long long)a->offset[i]);
    if (r < 0) return false;
  }
  return true;
}

bool mb_assignment_save_csv(const mb_assignment *a, const mb_workload *w, const char *path,
                            mb_error *err) {
  /* write to a temporary file and rename, so an existing file is never half-overwritten */
  if (!mb_path_check_replaceable(path, err)) return false;
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
    return mb_fail(err, "%s: path too long", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return mb_fail(err, "%s: cannot write: %s", tmp, strerror(errno));
  bool ok = mb_assignment_write_csv(a, w, f);
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    remove(tmp);
    return mb_fail(err, "%s: write failed (disk full?)", tmp);
  }
  if (rename(tmp, path) != 0) {
    remove(tmp);
    return mb_fail(err, "%s: cannot rename into place: %s", path, strerror(errno));
  }
  return true;
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
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) {
    mb_fail(err, "%s: cannot read assignment: %s", path, strerror(errno));
    return NULL;
  }
  mb_assignment *a = mb_assignment_parse_csv(text, len, path, w, err);
  free(text);
  return a;
}

mb_assignment *mb_assignment_parse_csv(const char *text, size_t len, const char *path,
                                       const mb_workload *w, mb_error *err) {
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  name_index *names = malloc((size_t)w->n_buffers * sizeof *names);
  bool *seen = calloc((size_t)w->n_buffers, sizeof *seen);
  int errcode;
  PCRE2_SIZE erroff;
  pcre2_code *re =
      pcre2_compile((PCRE2_SPTR) "^[ \\t]*([^,\\s]+)[ \\t]*,[ \\t]*(slow|-?[0-9]+)[ \\t]*$",
                    PCRE2_ZERO_TERMINATED, 0, &errcode, &erroff, NULL);
  pcre2_match_data *md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
  bool ok = a && names && seen && re && md;
  if (!ok) mb_fail(err, "%s: out of memory", path);
  for (int32_t i = 0; ok && i < w->n_buffers; i++) names[i] = (name_index){w->buffers[i].name, i};
  if (ok) qsort(names, (size_t)w->n_buffers, sizeof *names, cmp_name_index);
  const char *p = text;
  for (int lineno = 1; ok && p < text + len; lineno++) {
    const char *eol = memchr(p, '\n', len - (size_t)(p - text));
    size_t n = eol ? (size_t)(eol - p) : len - (size_t)(p - text);
    const char *next = eol ? eol + 1 : p + n; /* before trimming: the loop must advance */
    if (n > 0 && p[n - 1] == '\r') n--;
    size_t skip = 0;
    while (skip < n && (p[skip] == ' ' || p[skip] == '\t')) skip++;
    if (skip == n || p[skip] == '#' ||
        (lineno == 1 && n >= 13 && !memcmp(p, "buffer,offset", 13))) {
      p = next;
      continue;
    }
    if (pcre2_match(re, (PCRE2_SPTR)p, n, 0, 0, md, NULL) < 0) {
      ok =
          mb_fail(err, "%s:%d: expected 'buffer,offset' (offset a number or 'slow')", path, lineno);
      break;
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    char name[MB_NAME_MAX * 4], value[32];
    size_t nl = ov[3] - ov[2], vl = ov[5] - ov[4];
    if (nl >= sizeof name || vl >= sizeof value) {
      ok = mb_fail(err, "%s:%d: field too long", path, lineno);
      break;
    }
    memcpy(name, p + ov[2], nl);
    name[nl] = '\0';
    memcpy(value, p + ov[4], vl);
    value[vl] = '\0';
    name_index key = {name, 0};
    name_index *hit = bsearch(&key, names, (size_t)w->n_buffers, sizeof *names, cmp_name_index);
    if (!hit) {
      ok = mb_fail(err, "%s:%d: buffer: '%s' is not a buffer of workload '%s'", path, lineno, name,
                   w->name);
      break;
    }
    if (seen[hit->index]) {
      ok = mb_fail(err, "%s:%d: buffer: '%s' listed twice", path, lineno, name);
      break;
    }
    seen[hit->index] = true;
    if (strcmp(value, "slow")) {
      errno = 0;
      long long off = strtoll(value, NULL, 10);
      if (errno || off < 0) {
        ok = mb_fail(err, "%s:%d: offset: '%s' must be a non-negative byte offset or 'slow'", path,
                     lineno, value);
        break;
      }
      a->offset[hit->index] = off;
    }
    p = next;
  }
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  free(names);
  free(seen);
  if (!ok) {
    mb_assignment_free(a);
    return NULL;
  }
  return a;
}
