#include "run_journal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "sha256.h"
#include "solver.h"

#define MAGIC "mallocbench-journal"
#define VERSION "1"
#define SUM_DIGITS 16      /* hex digits of the SHA-256 a task line ends with */
#define NOTED_ONE_BY_ONE 5 /* dropped lines noted each; the rest only counted */

mb_task_record mb_task_record_empty(void) { return (mb_task_record){.curve_heuristic = NAN}; }

void mb_task_record_clear(mb_task_record *r) {
  mb_assignment_free(r->a);
  free(r->curve_step);
  free(r->curve_return);
  *r = mb_task_record_empty();
}

/* ---- texts ---- */

/* One byte of a text as the journal writes it, into out (4 bytes); returns the bytes written.
 * Those that would end or break a token, and the escape character itself, become "%XX". */
static size_t escape_byte(unsigned char c, char out[4]) {
  if (c <= ' ' || c == '%' || c == '#' || c >= 0x7f) return (size_t)snprintf(out, 4, "%%%02X", c);
  out[0] = (char)c;
  return 1;
}

void mb_journal_escape(char *out, const char *text) {
  size_t j = 0;
  out[j++] = 's';
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) j += escape_byte(*p, out + j);
  out[j] = '\0';
}

/* The escaped token of text's first `cap` bytes at most (fixed-size fields need not end in NUL
 * to be written safely). */
static void put_text(FILE *f, const char *text, size_t cap) {
  char piece[4];
  fputc('s', f);
  for (size_t i = 0; i < cap && text[i]; i++)
    fwrite(piece, 1, escape_byte((unsigned char)text[i], piece), f);
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool mb_journal_unescape(const char *token, char *out, size_t cap, mb_error *err) {
  if (token[0] != 's') return mb_fail(err, "'%.40s': not a text (a text starts with 's')", token);
  size_t j = 0;
  for (const char *p = token + 1; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '%') {
      int hi = hex_value(p[1]), lo = hi < 0 ? -1 : hex_value(p[2]);
      if (lo < 0 || hi * 16 + lo == 0)
        return mb_fail(
            err, "'%.40s': the '%%' at byte %td is not followed by two hex digits other than 00",
            token, p - token);
      c = (unsigned char)(hi * 16 + lo);
      p += 2;
    }
    if (j + 1 >= cap)
      return mb_fail(err, "'%.40s': longer than the field's %zu bytes", token, cap - 1);
    out[j++] = (char)c;
  }
  out[j] = '\0';
  return true;
}

/* ---- numbers ---- */

static bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *v) {
  if (!(s[0] == '-' || isdigit((unsigned char)s[0]))) return false;
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (*end || errno == ERANGE || x < lo || x > hi) return false;
  *v = x;
  return true;
}

/* Any double "%.17g" writes, "nan" and "inf" included. Underflow is not an error: a subnormal
 * reads back to itself. */
static bool parse_real(const char *s, double *v) {
  if (!s[0] || isspace((unsigned char)s[0])) return false;
  char *end;
  *v = strtod(s, &end);
  return !*end;
}

/* ---- a line's fields, read left to right ---- */

typedef struct fields {
  char *save;   /* strtok_r's */
  char *tok;    /* the field just read */
  int64_t left; /* fields not yet read: a count in the line cannot ask for more */
  mb_error *err;
} fields;

static int64_t count_fields(const char *s) {
  int64_t n = 0;
  for (const char *p = s; *p; p++) n += *p != ' ' && (p == s || p[-1] == ' ');
  return n;
}

/* `name`, or name[index] when index >= 0: how a message names a field. */
static const char *field_name(char *buf, size_t n, const char *name, int64_t index) {
  if (index < 0) return name;
  snprintf(buf, n, "%s[%" PRId64 "]", name, index);
  return buf;
}

static bool next_field(fields *F, const char *name, int64_t index) {
  F->tok = strtok_r(NULL, " ", &F->save);
  if (F->tok) {
    F->left--;
    return true;
  }
  char b[64];
  return mb_fail(F->err, "field '%s': missing (the line ends before it)",
                 field_name(b, sizeof b, name, index));
}

static bool read_i64(fields *F, const char *name, int64_t index, int64_t lo, int64_t hi,
                     int64_t *v) {
  if (!next_field(F, name, index)) return false;
  if (parse_i64(F->tok, lo, hi, v)) return true;
  char b[64];
  return mb_fail(F->err, "field '%s' '%.40s': expected an integer in %" PRId64 "..%" PRId64,
                 field_name(b, sizeof b, name, index), F->tok, lo, hi);
}

static bool read_i32(fields *F, const char *name, int32_t lo, int32_t hi, int32_t *v) {
  int64_t x;
  if (!read_i64(F, name, -1, lo, hi, &x)) return false;
  *v = (int32_t)x;
  return true;
}

static bool read_i8(fields *F, const char *name, int8_t *v) {
  int64_t x;
  if (!read_i64(F, name, -1, INT8_MIN, INT8_MAX, &x)) return false;
  *v = (int8_t)x;
  return true;
}

static bool read_real(fields *F, const char *name, int64_t index, double *v) {
  if (!next_field(F, name, index)) return false;
  if (parse_real(F->tok, v)) return true;
  char b[64];
  return mb_fail(F->err, "field '%s' '%.40s': expected a number",
                 field_name(b, sizeof b, name, index), F->tok);
}

static bool read_text(fields *F, const char *name, char *out, size_t cap) {
  return next_field(F, name, -1) && (mb_journal_unescape(F->tok, out, cap, F->err) ||
                                     mb_fail_prefix(F->err, "field '%s'", name));
}

/* ---- task lines ---- */

static void put_offsets(FILE *f, const mb_assignment *a) {
  if (!a) {
    fputs(" -1", f);
    return;
  }
  fprintf(f, " %d", (int)a->n_buffers);
  for (int32_t i = 0; i < a->n_buffers; i++) fprintf(f, " %" PRId64, a->offset[i]);
}

/* Ends a line being written: the checksum of everything before it, then '\n'. */
static bool finish_line(FILE *f, char **s, size_t *n, bool with_sum) {
  bool ok = fflush(f) == 0 && !ferror(f);
  if (ok && with_sum) {
    char sum[65];
    mb_sha256_hex(*s, *n, sum);
    fprintf(f, " #%.*s", SUM_DIGITS, sum);
  }
  fputc('\n', f);
  ok = ok && !ferror(f);
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    free(*s);
    *s = NULL;
  }
  return ok;
}

bool mb_journal_encode_record(int64_t task, mb_task_kind kind, const mb_task_record *r, char **line,
                              size_t *len, mb_error *err) {
  *line = NULL;
  *len = 0;
  FILE *f = open_memstream(line, len);
  if (!f) return mb_fail(err, "task %" PRId64 ": out of memory writing its journal line", task);
  if (kind == MB_TASK_BASELINE) {
    fprintf(f, "B %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " ", task, r->t_slow, r->t_heur,
            r->t_bound);
    put_text(f, r->bound_status, sizeof r->bound_status);
    fprintf(f, " %.17g %.17g ", r->heur_wall_s, r->bound_wall_s);
    put_text(f, r->note, sizeof r->note);
    put_offsets(f, r->a);
  } else {
    fprintf(f, "J %" PRId64 " ", task);
    put_text(f, r->status, sizeof r->status);
    fprintf(f, " %d %d %" PRId64 " %" PRId64 " %.17g %" PRId64 " %d ", (int)r->valid,
            (int)r->n_fast, r->fast_bytes, r->t_solver, r->wall_s, r->iterations,
            (int)r->budget_hit);
    put_text(f, r->note, sizeof r->note);
    put_offsets(f, r->a);
    fprintf(f, " %d", (int)r->curve_len);
    for (int32_t k = 0; k < r->curve_len; k++)
      fprintf(f, " %.17g %.17g", r->curve_step[k], r->curve_return[k]);
    /* only when known: lines without it (and those written before it) read as NaN */
    if (r->curve_len > 0 && isfinite(r->curve_heuristic))
      fprintf(f, " heuristic %.17g", r->curve_heuristic);
  }
  if (!finish_line(f, line, len, true))
    return mb_fail(err, "task %" PRId64 ": out of memory writing its journal line", task);
  return true;
}

static bool read_offsets(fields *F, mb_assignment **a, bool *no_memory) {
  int64_t n;
  if (!read_i64(F, "n_buffers", -1, -1, INT32_MAX, &n)) return false;
  if (n < 0) return true; /* -1: no assignment */
  if (n > F->left)
    return mb_fail(F->err, "field 'n_buffers' %" PRId64 ": the line holds %" PRId64 " more fields",
                   n, F->left);
  *a = mb_assignment_new((int32_t)n);
  if (!*a) {
    *no_memory = true;
    return mb_fail(F->err, "field 'n_buffers' %" PRId64 ": out of memory", n);
  }
  for (int32_t k = 0; k < n; k++)
    if (!read_i64(F, "offset", k, INT64_MIN, INT64_MAX, &(*a)->offset[k])) return false;
  return true;
}

static bool read_curve(fields *F, mb_task_record *r, bool *no_memory) {
  int64_t n;
  if (!read_i64(F, "curve_len", -1, 0, INT32_MAX - 1, &n)) return false;
  if (n == 0) return true;
  if (2 * n > F->left)
    return mb_fail(F->err, "field 'curve_len' %" PRId64 ": the line holds %" PRId64 " more fields",
                   n, F->left);
  r->curve_step = malloc((size_t)n * sizeof *r->curve_step);
  r->curve_return = malloc((size_t)n * sizeof *r->curve_return);
  if (!r->curve_step || !r->curve_return) {
    *no_memory = true;
    return mb_fail(F->err, "field 'curve_len' %" PRId64 ": out of memory", n);
  }
  r->curve_len = (int32_t)n;
  for (int32_t k = 0; k < n; k++)
    if (!read_real(F, "curve_step", k, &r->curve_step[k]) ||
        !read_real(F, "curve_return", k, &r->curve_return[k]))
      return false;
  /* the curve's heuristic reference, optional (absent: NaN) */
  if (F->left == 0) return true;
  if (!next_field(F, "heuristic", -1)) return false;
  if (strcmp(F->tok, "heuristic"))
    return mb_fail(F->err, "field '%.40s' after the curve: expected 'heuristic' or the line's end",
                   F->tok);
  return read_real(F, "heuristic", -1, &r->curve_heuristic);
}

static bool read_baseline(fields *F, mb_task_record *r, bool *no_memory) {
  return read_i64(F, "t_slow", -1, INT64_MIN, INT64_MAX, &r->t_slow) &&
         read_i64(F, "t_heur", -1, INT64_MIN, INT64_MAX, &r->t_heur) &&
         read_i64(F, "t_bound", -1, INT64_MIN, INT64_MAX, &r->t_bound) &&
         read_text(F, "bound_status", r->bound_status, sizeof r->bound_status) &&
         read_real(F, "heur_wall_s", -1, &r->heur_wall_s) &&
         read_real(F, "bound_wall_s", -1, &r->bound_wall_s) &&
         read_text(F, "note", r->note, sizeof r->note) && read_offsets(F, &r->a, no_memory);
}

static bool read_job(fields *F, mb_task_record *r, bool *no_memory) {
  return read_text(F, "status", r->status, sizeof r->status) && read_i8(F, "valid", &r->valid) &&
         read_i32(F, "n_fast", INT32_MIN, INT32_MAX, &r->n_fast) &&
         read_i64(F, "fast_bytes", -1, INT64_MIN, INT64_MAX, &r->fast_bytes) &&
         read_i64(F, "t_solver", -1, INT64_MIN, INT64_MAX, &r->t_solver) &&
         read_real(F, "wall_s", -1, &r->wall_s) &&
         read_i64(F, "iterations", -1, INT64_MIN, INT64_MAX, &r->iterations) &&
         read_i8(F, "budget_hit", &r->budget_hit) &&
         read_text(F, "note", r->note, sizeof r->note) && read_offsets(F, &r->a, no_memory) &&
         read_curve(F, r, no_memory);
}

/* The fields of a task line whose checksum matched (s: the line before " #", modified). */
static bool read_task_fields(char *s, mb_journal_entry *out, bool *no_memory, mb_error *err) {
  fields F = {.left = count_fields(s), .err = err};
  char *kind = strtok_r(s, " ", &F.save);
  if (!kind) return mb_fail(err, "field 'kind': missing (the line is empty)");
  F.left--;
  if (strcmp(kind, "B") && strcmp(kind, "J"))
    return mb_fail(err, "field 'kind' '%.40s': expected B (a baseline) or J (a job)", kind);
  out->kind = kind[0] == 'B' ? MB_TASK_BASELINE : MB_TASK_JOB;
  if (!read_i64(&F, "task", -1, 0, INT64_MAX, &out->task)) return false;
  bool ok = out->kind == MB_TASK_BASELINE ? read_baseline(&F, &out->r, no_memory)
                                          : read_job(&F, &out->r, no_memory);
  if (!ok) return false;
  if (F.left > 0) {
    next_field(&F, "", -1);
    return mb_fail(err, "field '%.40s': after the last field of a %s line", F.tok,
                   out->kind == MB_TASK_BASELINE ? "baseline" : "job");
  }
  return true;
}

/* Checks the " #SUM" a task line ends with and cuts it off. False (why set) when it is missing
 * or does not match the line: a line torn by a kill, edited or damaged. */
static bool cut_checksum(char *s, mb_error *why) {
  char *hash = strstr(s, " #"); /* no field holds a '#': the first is the checksum's */
  if (!hash) return mb_fail(why, "field 'checksum': missing (a line torn or edited)");
  const char *given = hash + 2;
  if (strlen(given) != SUM_DIGITS)
    return mb_fail(why, "field 'checksum' '%.40s': expected %d hex digits", given, SUM_DIGITS);
  char sum[65];
  mb_sha256_hex(s, (size_t)(hash - s), sum);
  if (strncmp(sum, given, SUM_DIGITS))
    return mb_fail(why, "field 'checksum' %s: the line's is %.*s (it was edited or damaged)", given,
                   SUM_DIGITS, sum);
  *hash = '\0';
  return true;
}

typedef enum decoded { DECODED, DAMAGED, NO_MEMORY } decoded;

/* Decodes a task line; `why` (no location) says what is wrong when it is DAMAGED. */
static decoded decode_record(const char *line, size_t len, mb_journal_entry *out, mb_error *why) {
  out->task = -1;
  out->kind = MB_TASK_JOB;
  out->r = mb_task_record_empty();
  const char *nul = memchr(line, '\0', len);
  if (nul) {
    mb_fail(why, "byte %td: a NUL byte (the line was damaged)", nul - line);
    return DAMAGED;
  }
  char *s = malloc(len + 1);
  if (!s) {
    mb_fail(why, "out of memory");
    return NO_MEMORY;
  }
  memcpy(s, line, len);
  s[len] = '\0';
  bool no_memory = false;
  bool ok = cut_checksum(s, why) && read_task_fields(s, out, &no_memory, why);
  free(s);
  if (ok) return DECODED;
  mb_task_record_clear(&out->r);
  return no_memory ? NO_MEMORY : DAMAGED;
}

bool mb_journal_decode_record(const char *line, size_t len, const char *file, int64_t line_no,
                              mb_journal_entry *out, mb_error *err) {
  if (decode_record(line, len, out, err) == DECODED) return true;
  return mb_fail_prefix(err, "%s:%" PRId64, file, line_no);
}

/* ---- the header line ---- */

/* mallocMuZero's options are written, all three, when any is not the default. */
static bool muzero_options_set(const mb_journal_header *h) {
  return h->simulations != 0 || h->c_scale != 0 || h->finetune != 0 || h->finetune_steps != 0 ||
         h->leaf_rollout != 0 || h->search != MB_SOLVER_SEARCH_GUMBEL;
}

bool mb_journal_encode_header(const mb_journal_header *h, char **line, size_t *len, mb_error *err) {
  *line = NULL;
  *len = 0;
  const char *search = mb_solver_search_name(h->search);
  if (!search) return mb_fail(err, "journal header: field 'search' %d: no search kind", h->search);
  FILE *f = open_memstream(line, len);
  if (!f) return mb_fail(err, "journal header: out of memory");
  fprintf(f, MAGIC " " VERSION " seeds %" PRId64 " budget %.17g", h->seeds, h->budget);
  if (muzero_options_set(h))
    fprintf(f, " simulations %d c_scale %.17g finetune %.17g", h->simulations, h->c_scale,
            h->finetune);
  if (h->finetune_steps) fprintf(f, " finetune_steps %" PRId64, h->finetune_steps);
  if (h->leaf_rollout) fprintf(f, " leaf_rollout %d", h->leaf_rollout);
  if (h->search != MB_SOLVER_SEARCH_GUMBEL) fprintf(f, " search %s", search);
  if (h->bound_budget != 0) fprintf(f, " bound_budget %.17g", h->bound_budget);
  const char *texts[][2] = {{"plan", h->plan},           {"profile", h->profile},
                            {"workloads", h->workloads}, {"solvers", h->solvers},
                            {"hardware", h->hardware},   {"agent", h->agent},
                            {"catalogue", h->catalogue}, {"data", h->data}};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    fprintf(f, " %s ", texts[i][0]);
    put_text(f, texts[i][1], SIZE_MAX);
  }
  if (!finish_line(f, line, len, false)) return mb_fail(err, "journal header: out of memory");
  return true;
}

void mb_journal_header_free(mb_journal_header *h) {
  free(h->storage);
  h->storage = NULL;
}

/* The options every header has (every version has written them all). */
static const char *const REQUIRED[] = {"seeds",   "budget",   "plan",  "profile",   "workloads",
                                       "solvers", "hardware", "agent", "catalogue", "data"};
#define N_REQUIRED (sizeof REQUIRED / sizeof REQUIRED[0])

/* One "key value" option of a header into h, its text (if it is one) into h->storage[*used...],
 * which has cap bytes. */
static bool read_option(fields *F, const char *key, mb_journal_header *h, size_t cap,
                        size_t *used) {
  int64_t x;
  if (!strcmp(key, "seeds")) return read_i64(F, key, -1, INT64_MIN, INT64_MAX, &h->seeds);
  if (!strcmp(key, "budget")) return read_real(F, key, -1, &h->budget);
  if (!strcmp(key, "c_scale")) return read_real(F, key, -1, &h->c_scale);
  if (!strcmp(key, "finetune")) return read_real(F, key, -1, &h->finetune);
  if (!strcmp(key, "bound_budget")) return read_real(F, key, -1, &h->bound_budget);
  if (!strcmp(key, "finetune_steps"))
    return read_i64(F, key, -1, INT64_MIN, INT64_MAX, &h->finetune_steps);
  if (!strcmp(key, "simulations")) {
    if (!read_i64(F, key, -1, INT_MIN, INT_MAX, &x)) return false;
    h->simulations = (int)x;
    return true;
  }
  if (!strcmp(key, "leaf_rollout")) {
    if (!read_i64(F, key, -1, INT_MIN, INT_MAX, &x)) return false;
    h->leaf_rollout = (int)x;
    return true;
  }
  if (!strcmp(key, "search")) {
    if (!next_field(F, key, -1)) return false;
    if (mb_solver_search_parse(F->tok, &h->search)) return true;
    return mb_fail(F->err, "field 'search' '%.40s': expected gumbel or puct", F->tok);
  }
  if (!strcmp(key, "plan")) {
    if (!read_text(F, key, h->plan, sizeof h->plan)) return false;
    return h->plan[0] || mb_fail(F->err, "field 'plan': empty");
  }
  /* a text: one of the run's, or an option of a later version, read and then left */
  char *out = h->storage + *used;
  if (!read_text(F, key, out, cap - *used)) return false;
  *used += strlen(out) + 1;
  const char **dst = !strcmp(key, "profile")     ? &h->profile
                     : !strcmp(key, "workloads") ? &h->workloads
                     : !strcmp(key, "solvers")   ? &h->solvers
                     : !strcmp(key, "hardware")  ? &h->hardware
                     : !strcmp(key, "agent")     ? &h->agent
                     : !strcmp(key, "catalogue") ? &h->catalogue
                     : !strcmp(key, "data")      ? &h->data
                                                 : NULL;
  if (dst) *dst = out;
  return true;
}

/* The fields of a header line (s, modified); its texts go to h->storage (cap bytes). */
static bool read_header_fields(char *s, mb_journal_header *h, size_t cap, mb_error *err) {
  fields F = {.left = count_fields(s), .err = err};
  char *magic = strtok_r(s, " ", &F.save);
  if (!magic || strcmp(magic, MAGIC))
    return mb_fail(err, "not a mallocbench journal header (it starts '%.20s')", magic ? magic : "");
  F.left--;
  if (!next_field(&F, "version", -1)) return false;
  if (strcmp(F.tok, VERSION))
    return mb_fail(err, "field 'version' '%.20s': expected " VERSION, F.tok);
  bool seen[N_REQUIRED] = {false};
  size_t used = 0;
  while (F.left > 0) {
    next_field(&F, "", -1);
    const char *key = F.tok; /* stays valid: strtok_r cuts the line in place */
    for (size_t i = 0; i < N_REQUIRED; i++) seen[i] = seen[i] || !strcmp(key, REQUIRED[i]);
    if (!read_option(&F, key, h, cap, &used)) return false;
  }
  for (size_t i = 0; i < N_REQUIRED; i++)
    if (!seen[i]) return mb_fail(err, "field '%s': missing", REQUIRED[i]);
  return true;
}

bool mb_journal_decode_header(const char *line, size_t len, const char *file, mb_journal_header *h,
                              mb_error *err) {
  *h = (mb_journal_header){.search = MB_SOLVER_SEARCH_GUMBEL};
  const char *nul = memchr(line, '\0', len);
  if (nul)
    return mb_fail(err, "%s:1: byte %td: a NUL byte (the line was damaged)", file, nul - line);
  /* the texts decode no longer than the line: len + 1 bytes hold them all */
  char *s = malloc(len + 1);
  h->storage = malloc(len + 1);
  bool ok = s && h->storage;
  if (!ok) {
    mb_fail(err, "out of memory");
  } else {
    memcpy(s, line, len);
    s[len] = '\0';
    ok = read_header_fields(s, h, len + 1, err);
  }
  free(s);
  if (ok) return true;
  mb_journal_header_free(h);
  *h = (mb_journal_header){.search = MB_SOLVER_SEARCH_GUMBEL};
  return mb_fail_prefix(err, "%s:1", file);
}

/* ---- reading a journal file ---- */

bool mb_journal_open(mb_journal_reader *rd, const char *path, FILE *log, mb_error *err) {
  *rd = (mb_journal_reader){.path = path, .log = log};
  rd->text = mb_read_file(path, &rd->len);
  if (rd->text) return true;
  int e = errno;
  mb_fail(err, "%s: cannot read the journal: %s", path, strerror(e));
  errno = e;
  return false;
}

bool mb_journal_read_header(mb_journal_reader *rd, mb_journal_header *h, mb_error *err) {
  *h = (mb_journal_header){.search = MB_SOLVER_SEARCH_GUMBEL};
  rd->line_no = 1;
  const char *nl = memchr(rd->text, '\n', rd->len);
  if (!nl)
    return mb_fail(err, "%s:1: the header line is torn (no line break: a kill during its write)",
                   rd->path);
  size_t n = (size_t)(nl - rd->text);
  if (!mb_journal_decode_header(rd->text, n, rd->path, h, err)) return false;
  rd->pos = rd->kept = n + 1;
  return true;
}

static void drop_line(mb_journal_reader *rd, const char *why) {
  if (rd->damaged++ < NOTED_ONE_BY_ONE)
    mb_diag(rd->log,
            "mallocbench run: %s:%" PRId64 ": damaged line skipped (%s); its task runs again",
            rd->path, rd->line_no, why);
}

mb_journal_step mb_journal_next(mb_journal_reader *rd, mb_journal_entry *out, mb_error *err) {
  rd->last_len = 0;
  while (rd->pos < rd->len) {
    char *line = rd->text + rd->pos;
    char *end = memchr(line, '\n', rd->len - rd->pos);
    rd->line_no++;
    if (!end) {
      mb_diag(rd->log,
              "mallocbench run: %s:%" PRId64 ": torn last line dropped (a kill during its write)",
              rd->path, rd->line_no);
      rd->pos = rd->len;
      break;
    }
    size_t n = (size_t)(end - line) + 1;
    rd->pos += n;
    mb_error why = {{0}};
    decoded d = decode_record(line, n - 1, out, &why);
    if (d == NO_MEMORY) {
      mb_fail(err, "%s:%" PRId64 ": %s", rd->path, rd->line_no, why.message);
      return MB_JOURNAL_FAILED;
    }
    if (d == DAMAGED) {
      drop_line(rd, why.message);
      continue;
    }
    /* kept lines move down over dropped ones: text[0, kept) stays the journal to keep */
    memmove(rd->text + rd->kept, line, n);
    rd->kept += n;
    rd->last_len = n;
    return MB_JOURNAL_RECORD;
  }
  return MB_JOURNAL_END;
}

void mb_journal_reject(mb_journal_reader *rd, const char *why, ...) {
  char text[MB_ERROR_MAX];
  va_list ap;
  va_start(ap, why);
  vsnprintf(text, sizeof text, why, ap);
  va_end(ap);
  rd->kept -= rd->last_len;
  rd->last_len = 0;
  drop_line(rd, text);
}

int64_t mb_journal_finish(mb_journal_reader *rd) {
  if (rd->damaged > NOTED_ONE_BY_ONE)
    mb_diag(rd->log, "mallocbench run: %s: %" PRId64 " damaged lines skipped in all", rd->path,
            rd->damaged);
  return rd->damaged;
}

const char *mb_journal_kept(const mb_journal_reader *rd, size_t *len) {
  *len = rd->kept;
  return rd->text;
}

void mb_journal_close(mb_journal_reader *rd) {
  free(rd->text);
  rd->text = NULL;
  rd->len = rd->pos = rd->kept = rd->last_len = 0;
}
