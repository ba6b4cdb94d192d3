/* MiniMalloc buffer CSV -> op-less workload. Rules (documented in datasets/HLO_IMPORT.md, merged
 * into datasets/README.md): live range [lower, upper) becomes the inclusive [lower, upper - 1];
 * benefit defaults to size (picoseconds); schedule length = max upper; slow_time_ps = 2 * sum
 * of benefits, i.e. the assumption that half of the all-slow time is removable memory stall. */
#include "csv_import.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "text_lines.h"
#include "workload_io.h"

enum { COL_ID, COL_LOWER, COL_UPPER, COL_SIZE, COL_BENEFIT, N_COLS };
static const char *const COL_NAMES[N_COLS] = {"id", "lower", "upper", "size", "benefit"};
#define MAX_FIELDS 16

typedef struct field {
  const char *s;
  size_t n;
} field;

/* Splits one line (without its newline and trailing blanks) on commas, trimming spaces and
 * tabs around each field. */
static int split(const char *line, size_t len, field *out, int max) {
  int n = 0;
  size_t i = 0;
  for (;;) {
    size_t j = i;
    while (j < len && line[j] != ',') j++;
    size_t a = i, b = j;
    while (a < b && (line[a] == ' ' || line[a] == '\t')) a++;
    while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t')) b--;
    if (n < max) out[n] = (field){line + a, b - a};
    n++;
    if (j >= len) break;
    i = j + 1;
  }
  return n;
}

static bool field_is(field f, const char *lit) {
  return f.n == strlen(lit) && !memcmp(f.s, lit, f.n);
}

/* A non-negative decimal integer below 2^62 filling the whole field. */
static bool parse_count(field f, int64_t *out) {
  const int64_t limit = (int64_t)1 << 62;
  if (f.n == 0) return false;
  int64_t v = 0;
  for (size_t i = 0; i < f.n; i++) {
    if (f.s[i] < '0' || f.s[i] > '9') return false;
    int d = f.s[i] - '0';
    if (v > (limit - 1 - d) / 10) return false; /* v * 10 + d would reach 2^62 */
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

typedef struct row_ref {
  const char *id;
  size_t n;
  int32_t line;
} row_ref;

/* Open-addressing set of ids for duplicate detection with the first line in the message. */
typedef struct id_set {
  row_ref *slots;
  size_t mask;
  size_t count;
} id_set;

static bool id_set_insert(id_set *s, row_ref r, int32_t *first_line) {
  if ((s->count + 1) * 2 > s->mask + 1) {
    size_t ncap = (s->mask + 1) * 2;
    row_ref *ns = calloc(ncap, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i <= s->mask; i++) {
      if (!s->slots[i].id) continue;
      size_t h = hash_bytes(s->slots[i].id, s->slots[i].n) & (ncap - 1);
      while (ns[h].id) h = (h + 1) & (ncap - 1);
      ns[h] = s->slots[i];
    }
    free(s->slots);
    s->slots = ns;
    s->mask = ncap - 1;
  }
  size_t h = hash_bytes(r.id, r.n) & s->mask;
  while (s->slots[h].id) {
    if (s->slots[h].n == r.n && !memcmp(s->slots[h].id, r.id, r.n)) {
      *first_line = s->slots[h].line;
      return true;
    }
    h = (h + 1) & s->mask;
  }
  s->slots[h] = r;
  s->count++;
  *first_line = 0;
  return true;
}

/* The workload's name (csv_import.h). */
static void name_from_path(const char *path, char *out, size_t n) {
  const char *slash = strrchr(path, '/');
  const char *b = slash ? slash + 1 : path;
  snprintf(out, n, "%s", b);
  size_t len = strlen(out);
  if (len >= 4 && !strcmp(out + len - 4, ".csv")) out[len - 4] = '\0';
  for (char *c = out; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '_' || *c == '.' || *c == '-'))
      *c = '_';
  if (!out[0]) snprintf(out, n, "csv");
}

/* The state of one import: where the columns are, the ids seen, the workload being built. */
typedef struct csv_reader {
  const char *path;
  int col[N_COLS]; /* field index of each column, -1 when absent (only benefit may be) */
  int n_header;    /* fields in the header; every row has as many */
  id_set ids;
  mb_workload_builder *b;
  int64_t max_upper, total_benefit, total_size;
} csv_reader;

/* The header row: every column known, none twice, id/lower/upper/size present. */
static bool read_header(csv_reader *r, const field *f, int nf, int32_t line_no, mb_error *err) {
  const char *path = r->path;
  if (nf > MAX_FIELDS)
    return mb_fail(err, "%s:%d: expected at most %d columns in the header, got %d", path, line_no,
                   MAX_FIELDS, nf);
  /* `generate` and `import` write the native format whatever -o's extension is */
  static const char native[] = "mallocbench-workload";
  if (nf > 0 && f[0].n >= sizeof native - 1 && !memcmp(f[0].s, native, sizeof native - 1))
    return mb_fail(err,
                   "%s:%d: this is a mallocbench workload in the native format (its first line "
                   "starts '%s'), not a buffer CSV: name it .wl",
                   path, line_no, native);
  for (int k = 0; k < nf; k++) {
    int c = -1;
    for (int j = 0; j < N_COLS; j++)
      if (field_is(f[k], COL_NAMES[j])) c = j;
    if (c < 0)
      return mb_fail(err,
                     "%s:%d: expected a header row with columns id,lower,upper,size[,benefit]; "
                     "column %d is '%.*s'",
                     path, line_no, k + 1, (int)(f[k].n > 40 ? 40 : f[k].n), f[k].s);
    if (r->col[c] >= 0)
      return mb_fail(err, "%s:%d: column '%s' appears twice in the header", path, line_no,
                     COL_NAMES[c]);
    r->col[c] = k;
  }
  for (int c = 0; c < COL_BENEFIT; c++)
    if (r->col[c] < 0)
      return mb_fail(
          err, "%s:%d: expected a header row with columns id,lower,upper,size; '%s' is missing",
          path, line_no, COL_NAMES[c]);
  r->n_header = nf;
  return true;
}

/* One buffer row: checks every field and adds the buffer (live range [lower, upper - 1]). */
static bool add_row(csv_reader *r, const field *f, int nf, int32_t line_no, mb_error *err) {
  const char *path = r->path;
  const int *col = r->col;
  if (nf != r->n_header)
    return mb_fail(err, "%s:%d: expected %d fields like the header, got %d", path, line_no,
                   r->n_header, nf);
  field id = f[col[COL_ID]];
  if (id.n == 0 || id.n >= MB_NAME_MAX)
    return mb_fail(err, "%s:%d:id: expected a name of 1 to %d characters", path, line_no,
                   MB_NAME_MAX - 1);
  for (size_t i = 0; i < id.n; i++)
    if ((unsigned char)id.s[i] <= ' ' || id.s[i] == '"' || id.s[i] == '#' || id.s[i] == 127)
      return mb_fail(err, "%s:%d:id: expected no spaces, quotes or '#' in '%.*s'", path, line_no,
                     (int)id.n, id.s);
  int64_t v[N_COLS] = {0};
  for (int c = COL_LOWER; c < N_COLS; c++) {
    if (col[c] < 0) continue;
    if (!parse_count(f[col[c]], &v[c]))
      return mb_fail(err, "%s:%d:%s: expected a non-negative integer below 2^62, got '%.*s'", path,
                     line_no, COL_NAMES[c], (int)(f[col[c]].n > 40 ? 40 : f[col[c]].n),
                     f[col[c]].s);
  }
  if (v[COL_UPPER] <= v[COL_LOWER])
    return mb_fail(err, "%s:%d:upper: expected upper > lower (%lld), got %lld", path, line_no,
                   (long long)v[COL_LOWER], (long long)v[COL_UPPER]);
  /* The workload's schedule is the largest upper: the .wl reader's bound applies. */
  if (v[COL_UPPER] > MB_WORKLOAD_MAX_SCHEDULE)
    return mb_fail(err, "%s:%d:upper: expected at most %d (the longest schedule), got %lld", path,
                   line_no, MB_WORKLOAD_MAX_SCHEDULE, (long long)v[COL_UPPER]);
  if (v[COL_SIZE] <= 0)
    return mb_fail(err, "%s:%d:size: expected a size > 0, got 0", path, line_no);
  if (v[COL_SIZE] > INT64_MAX - r->total_size)
    return mb_fail(err, "%s:%d:size: the total size of all buffers overflows int64", path, line_no);
  if (mb_builder_n_buffers(r->b) >= MB_WORKLOAD_MAX_OPLESS_BUFFERS)
    return mb_fail(err, "%s:%d: expected at most %d buffer rows (the most a workload file holds)",
                   path, line_no, MB_WORKLOAD_MAX_OPLESS_BUFFERS);
  int64_t benefit = col[COL_BENEFIT] >= 0 ? v[COL_BENEFIT] : v[COL_SIZE];
  if (benefit > ((int64_t)1 << 60) - r->total_benefit)
    return mb_fail(err, "%s:%d:benefit: the sum of benefits exceeds 2^60 ps", path, line_no);
  int32_t first = 0;
  if (!id_set_insert(&r->ids, (row_ref){id.s, id.n, line_no}, &first))
    return mb_fail(err, "%s: out of memory", path);
  if (first > 0)
    return mb_fail(err, "%s:%d:id: duplicate id '%.*s' (first on line %d)", path, line_no,
                   (int)id.n, id.s, first);
  char name[MB_NAME_MAX];
  memcpy(name, id.s, id.n);
  name[id.n] = '\0';
  int32_t buf = mb_builder_add_buffer(r->b, name, v[COL_SIZE], (int32_t)v[COL_LOWER],
                                      (int32_t)v[COL_UPPER] - 1, false);
  if (buf < 0) return mb_fail(err, "%s: out of memory", path);
  mb_builder_set_benefit(r->b, buf, benefit);
  r->total_benefit += benefit;
  r->total_size += v[COL_SIZE];
  if (v[COL_UPPER] > r->max_upper) r->max_upper = v[COL_UPPER];
  return true;
}

/* Reads every line: the first non-blank one is the header, the others buffer rows. */
static bool read_lines(csv_reader *r, const char *text, size_t len, mb_error *err) {
  mb_text_lines it;
  mb_text_lines_init(&it, text, len);
  bool header_seen = false;
  field f[MAX_FIELDS];
  const char *line;
  size_t ll;
  while (mb_text_lines_next(&it, &line, &ll)) {
    if (it.line_no >= INT32_MAX) return mb_fail(err, "%s: more than 2^31 lines", r->path);
    int32_t line_no = (int32_t)it.line_no;
    /* trailing blanks: spaces, tabs and '\r's (text_lines drops only the one of a CRLF) */
    size_t t = ll;
    while (t > 0 && (line[t - 1] == '\r' || line[t - 1] == ' ' || line[t - 1] == '\t')) t--;
    if (t == 0) continue; /* blank lines (e.g. the last newline) */
    int nf = split(line, t, f, MAX_FIELDS);
    if (!(header_seen ? add_row(r, f, nf, line_no, err) : read_header(r, f, nf, line_no, err)))
      return false;
    header_seen = true;
  }
  if (!header_seen) return mb_fail(err, "%s:1: expected a header row id,lower,upper,size", r->path);
  if (mb_builder_n_buffers(r->b) == 0)
    return mb_fail(err, "%s:%d: expected at least one buffer row after the header", r->path,
                   (int32_t)it.line_no);
  if (r->total_benefit == 0)
    return mb_fail(err, "%s: expected a positive sum of benefits (all-slow time would be 0)",
                   r->path);
  return true;
}

mb_workload *mb_csv_import_text(const char *text, size_t len, const char *path, mb_error *err) {
  if (!path) path = "<csv>";
  if (!mb_text_check_no_nul(text, len, path, err)) return NULL;
  char wname[MB_NAME_MAX], source[512];
  name_from_path(path, wname, sizeof wname);
  snprintf(source, sizeof source, "MiniMalloc buffer CSV %s", path);
  csv_reader r = {.path = path,
                  .ids = {.slots = calloc(64, sizeof(row_ref)), .mask = 63},
                  .b = mb_builder_new(wname, source)};
  for (int c = 0; c < N_COLS; c++) r.col[c] = -1;
  if (!r.b || !r.ids.slots) {
    mb_builder_free(r.b);
    free(r.ids.slots);
    mb_fail(err, "%s: out of memory", path);
    return NULL;
  }
  bool ok = read_lines(&r, text, len, err);
  free(r.ids.slots);
  if (!ok) {
    mb_builder_free(r.b);
    return NULL;
  }
  /* Assumption (documented): half of the all-slow time is memory stall removable by fast
   * memory, so T_slow = 2 * sum of standalone benefits. */
  mb_builder_set_schedule(r.b, (int32_t)r.max_upper, 2 * r.total_benefit);
  mb_workload *w = mb_builder_finish(r.b, err);
  if (!w) mb_fail_prefix(err, "%s", path);
  return w;
}

mb_workload *mb_csv_import_file(const char *path, mb_error *err) {
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) {
    mb_fail(err, "%s: cannot read: %s", path, strerror(errno));
    return NULL;
  }
  mb_workload *w = mb_csv_import_text(text, len, path, err);
  free(text);
  return w;
}

int64_t mb_csv_capacity_from_name(const char *path) {
  if (!path) return 0;
  size_t n = strlen(path);
  if (n < 5 || strcmp(path + n - 4, ".csv")) return 0;
  size_t end = n - 4, i = end;
  while (i > 0 && path[i - 1] >= '0' && path[i - 1] <= '9') i--;
  if (i == end || i == 0 || path[i - 1] != '.' || end - i > 18) return 0;
  int64_t v = 0;
  for (size_t k = i; k < end; k++) v = v * 10 + (path[k] - '0');
  return v;
}
