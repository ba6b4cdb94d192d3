/* Native workload text format: reader (PCRE2 tokenizer, per-line checks), canonical writer,
 * atomic save, content hash and field-by-field equality. Grammar: datasets/README.md. */
#include "workload_io.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "array.h"
#include "atomic_file.h"
#include "csv_import.h"
#include "hlo_import.h"
#include "model_zoo.h"
#include "paths.h"
#include "sha256.h"
#include "text_lines.h"

#define HEADER_WORD "mallocbench-workload"
#define MAX_TOKENS 32
#define MAX_SOURCE 4096 /* longest source string, bytes */
#define MAX_FLOPS 1e30  /* the builder's bound on one op's FLOPs */
#define SHOWN 60        /* longest piece of raw input quoted in a message */

/* ---- string arena: names outlive single lines, freed at the end of the parse ---- */

typedef struct arena_block {
  struct arena_block *next;
  size_t used, cap;
  char data[];
} arena_block;

typedef struct arena {
  arena_block *head;
} arena;

static char *arena_dup(arena *a, const char *s, size_t n) {
  if (!a->head || a->head->cap - a->head->used < n + 1) {
    size_t cap = n + 1 > 65536 ? n + 1 : 65536;
    arena_block *blk = malloc(sizeof *blk + cap);
    if (!blk) return NULL;
    blk->next = a->head;
    blk->used = 0;
    blk->cap = cap;
    a->head = blk;
  }
  char *d = a->head->data + a->head->used;
  memcpy(d, s, n);
  d[n] = '\0';
  a->head->used += n + 1;
  return d;
}

static void arena_free(arena *a) {
  while (a->head) {
    arena_block *next = a->head->next;
    free(a->head);
    a->head = next;
  }
}

/* ---- name -> index map (open addressing, FNV-1a) for duplicate checks and use lookup ---- */

typedef struct name_map {
  const char **keys; /* arena strings */
  int32_t *vals;
  size_t cap, n;
} name_map;

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static int32_t map_get(const name_map *m, const char *key) {
  if (!m->cap) return -1;
  for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return -1;
    if (!strcmp(m->keys[i], key)) return m->vals[i];
  }
}

static bool map_put(name_map *m, const char *key, int32_t val) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 256;
    const char **keys = calloc(ncap, sizeof *keys);
    int32_t *vals = malloc(ncap * sizeof *vals);
    if (!keys || !vals) {
      free(keys);
      free(vals);
      return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = hash_str(m->keys[i]) & (ncap - 1);
      while (keys[j]) j = (j + 1) & (ncap - 1);
      keys[j] = m->keys[i];
      vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = ncap;
  }
  size_t i = hash_str(key) & (m->cap - 1);
  while (m->keys[i]) i = (i + 1) & (m->cap - 1);
  m->keys[i] = key;
  m->vals[i] = val;
  m->n++;
  return true;
}

static void map_free(name_map *m) {
  free(m->keys);
  free(m->vals);
}

/* ---- the parser ---- */

typedef struct token {
  const char *key; /* NULL for a positional token */
  const char *value;
  const char *raw; /* the token as written, for messages */
  int raw_len;
  bool quoted;
} token;

typedef struct buffer_info {
  const char *name;   /* arena copy */
  int32_t start, end; /* -1, -1 when derived from uses */
  int32_t line;
  int32_t last_op; /* op of the latest use, to detect out-of-order uses cheaply */
  int32_t n_uses;
} buffer_info;

typedef struct use_ref {
  int32_t buffer, op, line;
} use_ref;

typedef struct parser {
  const char *path;
  mb_error *err;
  int line;
  pcre2_code *re_token, *re_int, *re_real;
  pcre2_match_data *md;
  char *scratch; /* decoded tokens of the current line */
  size_t scratch_cap;
  token tok[MAX_TOKENS];
  int n_tok;
  arena names;
  name_map ops, buffers;
  int32_t *op_line; /* per op: its line, for duplicate messages */
  int32_t cap_op_line;
  int64_t *op_bytes; /* per op: bytes of its uses so far (their sum must fit in int64) */
  int32_t cap_op_bytes;
  int64_t total_size; /* of the buffers so far (must fit in int64) */
  buffer_info *binfo;
  int32_t cap_binfo;
  use_ref *uses;
  int32_t n_uses, cap_uses;
  bool uses_unordered; /* some buffer's uses are not in increasing op order */
  mb_workload_builder *b;
  int header_line, name_line, source_line, schedule_line, slow_line;
  int first_op_line, first_buffer_line;
  char *name, *source;
  int32_t schedule;
  int64_t slow_time;
  int32_t n_ops, n_buffers;
} parser;

/* Every message starts with "path:line: ". */
static bool fail_at(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail_at(parser *p, const char *fmt, ...) {
  if (!p->err) return false;
  char msg[MB_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (p->line > 0)
    mb_fail(p->err, "%s:%d: %s", p->path, p->line, msg);
  else
    mb_fail(p->err, "%s: %s", p->path, msg);
  return false;
}

static bool oom(parser *p) { return fail_at(p, "out of memory"); }

/* Token patterns. A token is a comment (rest of line), key=value (value bare or quoted), a
 * quoted string or a bare word; anything else is malformed. Anchored: matched at the current
 * position after skipping blanks. Quoted strings allow \\ \" and \xHH escapes. */
/* possessive quantifiers: no backtracking state, so long strings cannot exhaust the JIT stack */
#define QUOTED "\"(?:[^\"\\\\]++|\\\\.)*+\""
static const char TOKEN_PATTERN[] =
    "(?:(#.*)" /* 1: comment */
    "|([A-Za-z_][A-Za-z0-9_]*)=(" QUOTED
    "|[^\\s\"#]*)(?=[ \\t#]|$)" /* 2, 3: key=value */
    "|(" QUOTED
    ")(?=[ \\t#]|$)"               /* 4: quoted */
    "|([^\\s\"#=]++)(?=[ \\t#]|$)" /* 5: bare */
    "|(\\S+))";                    /* 6: malformed */
static const char INT_PATTERN[] = "^-?[0-9]+$";
static const char REAL_PATTERN[] = "^-?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?$";

static pcre2_code *compile(const char *pattern, uint32_t options) {
  int code;
  PCRE2_SIZE offset;
  pcre2_code *re =
      pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, options, &code, &offset, NULL);
  if (re) pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* optional speed-up; falls back */
  return re;
}

static bool parser_init(parser *p, const char *path, mb_error *err) {
  memset(p, 0, sizeof *p);
  p->path = path ? path : "<input>";
  p->err = err;
  p->re_token = compile(TOKEN_PATTERN, PCRE2_ANCHORED);
  p->re_int = compile(INT_PATTERN, 0);
  p->re_real = compile(REAL_PATTERN, 0);
  p->md = pcre2_match_data_create(8, NULL);
  if (!p->re_token || !p->re_int || !p->re_real || !p->md)
    return fail_at(p, "internal error: cannot compile the token patterns");
  return true;
}

static void parser_free(parser *p) {
  pcre2_code_free(p->re_token);
  pcre2_code_free(p->re_int);
  pcre2_code_free(p->re_real);
  pcre2_match_data_free(p->md);
  free(p->scratch);
  arena_free(&p->names);
  map_free(&p->ops);
  map_free(&p->buffers);
  free(p->op_line);
  free(p->op_bytes);
  free(p->binfo);
  free(p->uses);
  mb_builder_free(p->b);
}

static bool matches(parser *p, const pcre2_code *re, const char *s) {
  return pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, p->md, NULL) >= 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes a quoted string (with its quotes) into out; false with a message on a bad escape. */
static bool decode_quoted(parser *p, const char *s, size_t n, char *out) {
  size_t k = 0;
  /* s[0] and s[n - 1] are the quotes; the pattern guarantees a character after each '\\'. */
  for (size_t i = 1; i + 1 < n; i++) {
    if (s[i] != '\\') {
      out[k++] = s[i];
      continue;
    }
    char c = s[++i];
    if (c == '\\' || c == '"') {
      out[k++] = c;
    } else if (c == 'x' && i + 2 < n - 1 && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
      int v = hexval(s[i + 1]) * 16 + hexval(s[i + 2]);
      if (v == 0) return fail_at(p, "string: \\x00 is not allowed");
      out[k++] = (char)v;
      i += 2;
    } else {
      return fail_at(p, "string %.*s: bad escape '\\%c' (use \\\\, \\\" or \\xHH)",
                     n > SHOWN ? SHOWN : (int)n, s, c);
    }
  }
  out[k] = '\0';
  return true;
}

/* Splits one line (no newline) into tokens. */
static bool tokenize(parser *p, const char *line, size_t len) {
  p->n_tok = 0;
  if (p->scratch_cap < 2 * len + 2) {
    size_t cap = 2 * len + 2 > 4096 ? 2 * len + 2 : 4096;
    char *s = realloc(p->scratch, cap);
    if (!s) return oom(p);
    p->scratch = s;
    p->scratch_cap = cap;
  }
  char *out = p->scratch;
  size_t pos = 0;
  for (;;) {
    while (pos < len && (line[pos] == ' ' || line[pos] == '\t')) pos++;
    if (pos >= len) break;
    int rc = pcre2_match(p->re_token, (PCRE2_SPTR)line, len, pos, 0, p->md, NULL);
    if (rc < 0) return fail_at(p, "cannot split the line into fields");
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(p->md);
    size_t end = ov[1];
#define GROUP_SET(g) (rc > (g) && ov[2 * (g)] != PCRE2_UNSET)
    if (GROUP_SET(1)) break; /* comment: rest of line */
    if (GROUP_SET(6)) {
      size_t n = ov[13] - ov[12];
      const char *t = line + ov[12];
      if (t[0] == '"') return fail_at(p, "unterminated string %.*s", n > SHOWN ? SHOWN : (int)n, t);
      return fail_at(p, "malformed field '%.*s'", n > SHOWN ? SHOWN : (int)n, t);
    }
    if (p->n_tok == MAX_TOKENS) return fail_at(p, "too many fields (more than %d)", MAX_TOKENS);
    token *tk = &p->tok[p->n_tok++];
    tk->raw = line + pos;
    tk->raw_len = (int)(end - pos > SHOWN ? SHOWN : end - pos);
    size_t vs, ve;
    if (GROUP_SET(2)) {
      size_t kn = ov[5] - ov[4];
      memcpy(out, line + ov[4], kn);
      out[kn] = '\0';
      tk->key = out;
      out += kn + 1;
      vs = ov[6];
      ve = ov[7];
    } else {
      tk->key = NULL;
      int g = GROUP_SET(4) ? 4 : 5;
      vs = ov[2 * g];
      ve = ov[2 * g + 1];
    }
#undef GROUP_SET
    tk->quoted = ve > vs && line[vs] == '"';
    if (tk->quoted) {
      if (!decode_quoted(p, line + vs, ve - vs, out)) return false;
    } else {
      memcpy(out, line + vs, ve - vs);
      out[ve - vs] = '\0';
    }
    tk->value = out;
    out += strlen(out) + 1;
    pos = end;
  }
  return true;
}

/* ---- field helpers ---- */

static bool parse_int(parser *p, const char *subject, const char *field, const char *s, int64_t lo,
                      int64_t hi, int64_t *out) {
  if (!matches(p, p->re_int, s))
    return fail_at(p, "%s: %s '%.*s' is not an integer", subject, field, SHOWN, s);
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  bool range = errno == ERANGE;
  if (!range && v < lo) {
    if (lo == 1) return fail_at(p, "%s: %s %lld must be > 0", subject, field, v);
    return fail_at(p, "%s: %s %lld must be >= %lld", subject, field, v, (long long)lo);
  }
  if (s[0] == '-' && range)
    return fail_at(p, "%s: %s %.*s must be >= %lld", subject, field, SHOWN, s, (long long)lo);
  if (range || v > hi)
    return fail_at(p, "%s: %s %.*s is too large (max %lld)", subject, field, SHOWN, s,
                   (long long)hi);
  *out = v;
  return true;
}

static bool check_name(parser *p, const char *what, const token *t) {
  size_t n = strlen(t->value);
  if (n == 0) return fail_at(p, "%s: empty name", what);
  if (n >= MB_NAME_MAX)
    return fail_at(p, "%s '%.*s...': name longer than %d bytes", what, 32, t->value,
                   MB_NAME_MAX - 1);
  return true;
}

/* Key=value fields of a record. Each allowed key may appear once. */
typedef struct field {
  const char *key;
  const char *value; /* NULL when absent */
} field;

static bool collect_fields(parser *p, const char *subject, field *fields, int n_fields,
                           int first_token, const char *const *flags, bool *flag_set, int n_flags) {
  for (int i = first_token; i < p->n_tok; i++) {
    const token *t = &p->tok[i];
    if (!t->key) {
      int f = 0;
      while (f < n_flags && (t->quoted || strcmp(flags[f], t->value))) f++;
      if (f == n_flags)
        return fail_at(p, "%s: unexpected field '%.*s'", subject, t->raw_len, t->raw);
      if (flag_set[f]) return fail_at(p, "%s: duplicate flag '%s'", subject, flags[f]);
      flag_set[f] = true;
      continue;
    }
    int f = 0;
    while (f < n_fields && strcmp(fields[f].key, t->key)) f++;
    if (f == n_fields) return fail_at(p, "%s: unknown key '%s'", subject, t->key);
    if (fields[f].value) return fail_at(p, "%s: duplicate key '%s'", subject, t->key);
    fields[f].value = t->value;
  }
  return true;
}

/* ---- directives ---- */

static bool want_positional(parser *p, const char *directive, int n) {
  if (p->n_tok - 1 < n)
    return fail_at(p, "'%s' needs %s", directive, n == 1 ? "a value" : "more values");
  for (int i = 1; i < p->n_tok; i++)
    if (p->tok[i].key) return fail_at(p, "%s: unknown key '%s'", directive, p->tok[i].key);
  if (p->n_tok - 1 > n)
    return fail_at(p, "'%s': unexpected field '%.*s'", directive, p->tok[n + 1].raw_len,
                   p->tok[n + 1].raw);
  return true;
}

static bool once(parser *p, int *line, const char *directive) {
  if (*line) return fail_at(p, "duplicate '%s' (first on line %d)", directive, *line);
  *line = p->line;
  return true;
}

static bool not_after_body(parser *p, const char *directive) {
  if (p->first_op_line || p->first_buffer_line)
    return fail_at(p, "'%s' must come before the first op and buffer (line %d)", directive,
                   p->first_op_line ? p->first_op_line : p->first_buffer_line);
  return true;
}

static bool start_body(parser *p) {
  if (p->b) return true;
  if (!p->name_line) return fail_at(p, "'name' must come before the first op or buffer");
  p->b = mb_builder_new(p->name, p->source ? p->source : "");
  return p->b ? true : oom(p);
}

static bool do_name(parser *p) {
  if (!want_positional(p, "name", 1) || !not_after_body(p, "name") ||
      !check_name(p, "workload", &p->tok[1]) || !once(p, &p->name_line, "name"))
    return false;
  p->name = arena_dup(&p->names, p->tok[1].value, strlen(p->tok[1].value));
  return p->name ? true : oom(p);
}

static bool do_source(parser *p) {
  if (!want_positional(p, "source", 1) || !not_after_body(p, "source")) return false;
  size_t n = strlen(p->tok[1].value);
  if (n > MAX_SOURCE) return fail_at(p, "source: longer than %d bytes", MAX_SOURCE);
  if (!once(p, &p->source_line, "source")) return false;
  p->source = arena_dup(&p->names, p->tok[1].value, n);
  return p->source ? true : oom(p);
}

static bool do_schedule(parser *p) {
  if (!want_positional(p, "schedule", 1) || !not_after_body(p, "schedule")) return false;
  int64_t v;
  if (!parse_int(p, "schedule", "length", p->tok[1].value, 1, MB_WORKLOAD_MAX_SCHEDULE, &v))
    return false;
  if (!once(p, &p->schedule_line, "schedule")) return false;
  p->schedule = (int32_t)v;
  return true;
}

static bool do_slow_time(parser *p) {
  if (!want_positional(p, "slow_time_ps", 1) || !not_after_body(p, "slow_time_ps")) return false;
  int64_t v;
  if (!parse_int(p, "slow_time_ps", "time", p->tok[1].value, 1, INT64_MAX, &v)) return false;
  if (!once(p, &p->slow_line, "slow_time_ps")) return false;
  p->slow_time = v;
  return true;
}

static bool do_op(parser *p) {
  if (p->n_tok < 2 || p->tok[1].key) return fail_at(p, "op: missing name");
  const char *name = p->tok[1].value;
  char subject[MB_NAME_MAX + 16];
  snprintf(subject, sizeof subject, "op '%s'", name);
  if (!check_name(p, "op", &p->tok[1])) return false;
  if (p->first_buffer_line)
    return fail_at(p, "%s: ops must come before the first buffer (line %d)", subject,
                   p->first_buffer_line);
  if (p->schedule_line || p->slow_line)
    return fail_at(p, "%s: a workload with ops takes its schedule from them; remove '%s' (line %d)",
                   subject, p->schedule_line ? "schedule" : "slow_time_ps",
                   p->schedule_line ? p->schedule_line : p->slow_line);
  field f[] = {{"kind", NULL}, {"flops", NULL}};
  if (!collect_fields(p, subject, f, 2, 2, NULL, NULL, 0)) return false;
  if (!f[0].value) return fail_at(p, "%s: missing kind=", subject);
  if (!f[1].value) return fail_at(p, "%s: missing flops=", subject);
  if (!f[0].value[0]) return fail_at(p, "%s: empty kind", subject);
  if (strlen(f[0].value) >= MB_NAME_MAX)
    return fail_at(p, "%s: kind longer than %d bytes", subject, MB_NAME_MAX - 1);
  if (!matches(p, p->re_real, f[1].value))
    return fail_at(p, "%s: flops '%.*s' is not a number", subject, SHOWN, f[1].value);
  double flops = strtod(f[1].value, NULL);
  if (flops < 0) return fail_at(p, "%s: flops %.*s must be >= 0", subject, SHOWN, f[1].value);
  if (!(flops <= MAX_FLOPS))
    return fail_at(p, "%s: flops %.*s is too large (max 1e30)", subject, SHOWN, f[1].value);
  int32_t prev = map_get(&p->ops, name);
  if (prev >= 0)
    return fail_at(p, "%s: duplicate name (first declared on line %d)", subject, p->op_line[prev]);
  if (p->n_ops == INT32_MAX - 1) return fail_at(p, "%s: too many ops", subject);
  if (!start_body(p)) return false;
  const char *key = arena_dup(&p->names, name, strlen(name));
  if (!key || !map_put(&p->ops, key, p->n_ops) ||
      !mb_array_reserve((void **)&p->op_line, &p->cap_op_line, p->n_ops + 1, sizeof *p->op_line) ||
      !mb_array_reserve((void **)&p->op_bytes, &p->cap_op_bytes, p->n_ops + 1, sizeof *p->op_bytes))
    return oom(p);
  if (mb_builder_add_op(p->b, name, f[0].value, flops) < 0) return oom(p);
  p->op_bytes[p->n_ops] = 0;
  p->op_line[p->n_ops++] = p->line;
  if (!p->first_op_line) p->first_op_line = p->line;
  return true;
}

static bool do_buffer(parser *p) {
  if (p->n_tok < 2 || p->tok[1].key) return fail_at(p, "buffer: missing name");
  const char *name = p->tok[1].value;
  char subject[MB_NAME_MAX + 16];
  snprintf(subject, sizeof subject, "buffer '%s'", name);
  if (!check_name(p, "buffer", &p->tok[1])) return false;
  if (!p->n_ops && !(p->schedule_line && p->slow_line))
    return fail_at(p,
                   "%s: no ops before the first buffer; a workload without ops needs "
                   "'schedule N' and 'slow_time_ps T' before its buffers",
                   subject);
  field f[] = {{"size", NULL}, {"start", NULL}, {"end", NULL}, {"benefit", NULL}};
  static const char *const flags[] = {"pinned"};
  bool pinned = false;
  if (!collect_fields(p, subject, f, 4, 2, flags, &pinned, 1)) return false;
  int32_t length = p->n_ops ? p->n_ops : p->schedule;
  int64_t size, start = -1, end = -1, benefit = -1;
  if (!f[0].value) return fail_at(p, "%s: missing size=", subject);
  if (!parse_int(p, subject, "size", f[0].value, 1, INT64_MAX, &size)) return false;
  if (!f[1].value != !f[2].value)
    return fail_at(p, "%s: %s= given without %s=", subject, f[1].value ? "start" : "end",
                   f[1].value ? "end" : "start");
  if (f[1].value) {
    if (!parse_int(p, subject, "start", f[1].value, 0, INT32_MAX, &start) ||
        !parse_int(p, subject, "end", f[2].value, 0, INT32_MAX, &end))
      return false;
    if (start >= length)
      return fail_at(p, "%s: start %lld outside the schedule [0, %d)", subject, (long long)start,
                     length);
    if (end >= length)
      return fail_at(p, "%s: end %lld outside the schedule [0, %d)", subject, (long long)end,
                     length);
    if (end < start)
      return fail_at(p, "%s: end %lld < start %lld", subject, (long long)end, (long long)start);
  } else if (!p->n_ops) {
    return fail_at(p, "%s: missing start= and end= (required in a workload without ops)", subject);
  }
  if (f[3].value && !parse_int(p, subject, "benefit", f[3].value, 0, INT64_MAX, &benefit))
    return false;
  if (!p->n_ops && benefit < 0)
    return fail_at(p, "%s: missing benefit= (required in a workload without ops)", subject);
  int32_t prev = map_get(&p->buffers, name);
  if (prev >= 0)
    return fail_at(p, "%s: duplicate name (first declared on line %d)", subject,
                   p->binfo[prev].line);
  if (size > INT64_MAX - p->total_size)
    return fail_at(p, "%s: total size of all buffers overflows int64", subject);
  p->total_size += size;
  if (p->n_buffers == INT32_MAX - 1) return fail_at(p, "%s: too many buffers", subject);
  if (!start_body(p)) return false;
  const char *key = arena_dup(&p->names, name, strlen(name));
  if (!key || !map_put(&p->buffers, key, p->n_buffers) ||
      !mb_array_reserve((void **)&p->binfo, &p->cap_binfo, p->n_buffers + 1, sizeof *p->binfo))
    return oom(p);
  int32_t idx = mb_builder_add_buffer(p->b, name, size, (int32_t)start, (int32_t)end, pinned);
  if (idx < 0) return oom(p);
  if (benefit >= 0) mb_builder_set_benefit(p->b, idx, benefit);
  p->binfo[p->n_buffers++] = (buffer_info){.name = key,
                                           .start = (int32_t)start,
                                           .end = (int32_t)end,
                                           .line = p->line,
                                           .last_op = -1,
                                           .n_uses = 0};
  if (!p->first_buffer_line) p->first_buffer_line = p->line;
  return true;
}

static bool do_use(parser *p) {
  if (p->n_tok < 2 || p->tok[1].key) return fail_at(p, "use: missing buffer name");
  const char *name = p->tok[1].value;
  int32_t bi = map_get(&p->buffers, name);
  if (bi < 0)
    return fail_at(p, "use: unknown buffer '%.*s' (declare it with 'buffer' first)", MB_NAME_MAX,
                   name);
  char subject[MB_NAME_MAX + 16];
  snprintf(subject, sizeof subject, "buffer '%s'", name);
  field f[] = {{"op", NULL}, {"read", NULL}, {"write", NULL}};
  if (!collect_fields(p, subject, f, 3, 2, NULL, NULL, 0)) return false;
  if (!f[0].value) return fail_at(p, "%s: use without op=", subject);
  if (!p->n_ops) return fail_at(p, "%s: use in a workload without ops", subject);
  int64_t op, rd = 0, wr = 0;
  if (!parse_int(p, subject, "use op", f[0].value, 0, INT32_MAX, &op)) return false;
  if (op >= p->n_ops)
    return fail_at(p, "%s: use by op %lld outside the schedule [0, %d)", subject, (long long)op,
                   p->n_ops);
  if (f[1].value && !parse_int(p, subject, "read", f[1].value, 0, INT64_MAX, &rd)) return false;
  if (f[2].value && !parse_int(p, subject, "write", f[2].value, 0, INT64_MAX, &wr)) return false;
  if (rd > INT64_MAX - wr || rd + wr > INT64_MAX - p->op_bytes[op])
    return fail_at(p, "%s: bytes of op %lld overflow int64", subject, (long long)op);
  buffer_info *bi_info = &p->binfo[bi];
  if (bi_info->start >= 0 && (op < bi_info->start || op > bi_info->end))
    return fail_at(p, "%s: use by op %lld outside its live range [%d, %d]", subject, (long long)op,
                   bi_info->start, bi_info->end);
  if (op <= bi_info->last_op) p->uses_unordered = true;
  bi_info->last_op = (int32_t)op;
  bi_info->n_uses++;
  if (!mb_array_reserve((void **)&p->uses, &p->cap_uses, p->n_uses + 1, sizeof *p->uses))
    return oom(p);
  p->uses[p->n_uses++] = (use_ref){bi, (int32_t)op, p->line};
  if (!mb_builder_add_use(p->b, bi, (int32_t)op, rd, wr)) return oom(p);
  p->op_bytes[op] += rd + wr;
  return true;
}

static int cmp_use_ref(const void *a, const void *b) {
  const use_ref *x = a, *y = b;
  if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
  if (x->op != y->op) return x->op < y->op ? -1 : 1;
  return (x->line > y->line) - (x->line < y->line);
}

/* Checks that need the whole file: duplicate uses and buffers with nothing to derive a range. */
static bool finish_checks(parser *p) {
  if (!p->header_line) {
    p->line = 0; /* no line is at fault: there is none with content */
    return fail_at(p, "missing header: the first line must be '" HEADER_WORD " 1'");
  }
  if (!p->name_line) {
    p->line = 0;
    return fail_at(p, "missing 'name'");
  }
  if (!p->n_buffers) {
    p->line = 0;
    return fail_at(p, "empty workload (no buffers)");
  }
  for (int32_t i = 0; i < p->n_buffers; i++) {
    if (p->binfo[i].start < 0 && p->binfo[i].n_uses == 0) {
      p->line = p->binfo[i].line;
      return fail_at(p, "buffer '%s': no start=/end= and no uses to derive its live range",
                     p->binfo[i].name);
    }
  }
  if (p->uses_unordered) {
    qsort(p->uses, (size_t)p->n_uses, sizeof *p->uses, cmp_use_ref);
    int best = -1; /* report the earliest offending line */
    int32_t best_k = -1;
    for (int32_t k = 1; k < p->n_uses; k++) {
      if (p->uses[k].buffer == p->uses[k - 1].buffer && p->uses[k].op == p->uses[k - 1].op &&
          (best < 0 || p->uses[k].line < best)) {
        best = p->uses[k].line;
        best_k = k;
      }
    }
    if (best_k >= 0) {
      p->line = best;
      return fail_at(p, "buffer '%s': duplicate use by op %d (first on line %d)",
                     p->binfo[p->uses[best_k].buffer].name, p->uses[best_k].op,
                     p->uses[best_k - 1].line);
    }
  }
  return true;
}

mb_workload *mb_workload_read_text(const char *text, size_t len, const char *path, mb_error *err) {
  parser p;
  if (!parser_init(&p, path, err)) {
    parser_free(&p);
    return NULL;
  }
  bool ok = mb_text_check_no_nul(text, len, p.path, err);
  mb_text_lines it;
  mb_text_lines_init(&it, text, len);
  const char *line;
  size_t n;
  while (ok && mb_text_lines_next(&it, &line, &n)) {
    p.line = (int)it.line_no; /* stops at MB_WORKLOAD_MAX_LINES + 1 = INT32_MAX, an int */
    if (it.line_no > MB_WORKLOAD_MAX_LINES) {
      ok = fail_at(&p, "too many lines");
      break;
    }
    if (!(ok = tokenize(&p, line, n))) break;
    if (p.n_tok == 0) continue;
    const token *d = &p.tok[0];
    if (d->key || d->quoted) {
      ok = p.header_line
               ? fail_at(&p, "expected a directive, found '%.*s'", d->raw_len, d->raw)
               : fail_at(&p, "missing header: the first line must be '" HEADER_WORD " 1'");
      break;
    }
    if (!p.header_line) {
      if (strcmp(d->value, HEADER_WORD)) {
        ok = fail_at(&p, "missing header: the first line must be '" HEADER_WORD " 1'");
      } else if (p.n_tok != 2 || p.tok[1].key || p.tok[1].quoted) {
        ok = fail_at(&p, "header: expected '" HEADER_WORD " 1'");
      } else if (strcmp(p.tok[1].value, "1")) {
        ok = fail_at(&p, "unsupported format version '%.*s' (this build reads version 1)",
                     p.tok[1].raw_len, p.tok[1].raw);
      } else {
        p.header_line = p.line;
      }
      continue;
    }
    if (!strcmp(d->value, "op"))
      ok = do_op(&p);
    else if (!strcmp(d->value, "buffer"))
      ok = do_buffer(&p);
    else if (!strcmp(d->value, "use"))
      ok = do_use(&p);
    else if (!strcmp(d->value, "name"))
      ok = do_name(&p);
    else if (!strcmp(d->value, "source"))
      ok = do_source(&p);
    else if (!strcmp(d->value, "schedule"))
      ok = do_schedule(&p);
    else if (!strcmp(d->value, "slow_time_ps"))
      ok = do_slow_time(&p);
    else if (!strcmp(d->value, HEADER_WORD))
      ok = fail_at(&p, "duplicate header (first on line %d)", p.header_line);
    else
      ok = fail_at(&p, "unknown directive '%.*s'", d->raw_len, d->raw);
  }
  mb_workload *w = NULL;
  if (ok && finish_checks(&p)) {
    if (p.schedule_line) mb_builder_set_schedule(p.b, p.schedule, p.slow_time);
    mb_workload_builder *b = p.b;
    p.b = NULL;
    w = mb_builder_finish(b, err);
    if (!w) mb_fail_prefix(err, "%s", p.path);
  }
  parser_free(&p);
  return w;
}

mb_workload *mb_workload_load(const char *path, mb_error *err) {
  size_t len;
  char *text = mb_read_file(path, &len);
  if (!text) {
    mb_fail(err, "%s: cannot read: %s", path, strerror(errno));
    return NULL;
  }
  mb_workload *w = mb_workload_read_text(text, len, path, err);
  free(text);
  return w;
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcasecmp(s + n - k, suffix);
}

mb_workload *mb_workload_load_any(const char *path, mb_error *err) {
  if (has_suffix(path, ".hlo")) {
    mb_hlo_options opt;
    mb_hlo_options_default(&opt);
    return mb_hlo_import_file(path, &opt, NULL, err);
  }
  if (has_suffix(path, ".csv")) return mb_csv_import_file(path, err);
  if (has_suffix(path, ".spec")) return mb_model_generate_file(path, err);
  return mb_workload_load(path, err);
}

/* ---- writer ---- */

/* A name is written bare when it is a non-empty run of characters that cannot be confused
 * with syntax; otherwise quoted with \\, \" and \xHH escapes. */
static bool is_bare(const char *s) {
  if (!*s) return false;
  for (const unsigned char *c = (const unsigned char *)s; *c; c++)
    if (*c <= ' ' || *c == 0x7f || *c == '"' || *c == '#' || *c == '=' || *c == '\\') return false;
  return true;
}

static void put_quoted(const char *s, FILE *out) {
  putc('"', out);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(out, "\\%c", *c);
    else if (*c < ' ' || *c == 0x7f)
      fprintf(out, "\\x%02x", *c);
    else
      putc(*c, out);
  }
  putc('"', out);
}

static void put_name(const char *s, FILE *out) {
  if (is_bare(s))
    fputs(s, out);
  else
    put_quoted(s, out);
}

/* Shortest decimal that reads back to the same double. Integers below 2^53 print exactly as
 * integers; otherwise %.15g is already the shortest whenever 15 digits suffice (every decimal
 * of <= 15 significant digits survives a round trip through a double), so only 15..17 are
 * tried. */
static void put_double(double v, FILE *out) {
  char buf[40];
  if (v == floor(v) && fabs(v) < 9007199254740992.0 && (v != 0 || !signbit(v))) {
    fprintf(out, "%.0f", v);
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  fputs(buf, out);
}

bool mb_workload_write(const mb_workload *w, FILE *out) {
  fprintf(out, HEADER_WORD " %d\nname   ", MB_WORKLOAD_FORMAT_VERSION);
  put_name(w->name, out);
  fputs("\nsource ", out);
  put_quoted(w->source ? w->source : "", out);
  putc('\n', out);
  if (w->n_ops == 0)
    fprintf(out, "schedule %d\nslow_time_ps %lld\n", w->schedule_length,
            (long long)w->slow_time_ps);
  for (int32_t o = 0; o < w->n_ops; o++) {
    fputs("op     ", out);
    put_name(w->ops[o].name, out);
    fputs(" kind=", out);
    put_name(w->ops[o].kind, out);
    fputs(" flops=", out);
    put_double(w->ops[o].flops, out);
    putc('\n', out);
  }
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *b = &w->buffers[i];
    fputs("buffer ", out);
    put_name(b->name, out);
    fprintf(out, " size=%lld start=%d end=%d", (long long)b->size, b->start, b->end);
    if (b->has_benefit) fprintf(out, " benefit=%lld", (long long)b->benefit_ps);
    if (b->pinned) fputs(" pinned", out);
    putc('\n', out);
    for (int32_t k = b->first_use; k < b->first_use + b->n_uses; k++) {
      const mb_use *u = &w->uses[k];
      fputs("use    ", out);
      put_name(b->name, out);
      fprintf(out, " op=%d read=%lld write=%lld\n", u->op, (long long)u->bytes_read,
              (long long)u->bytes_written);
    }
  }
  return !ferror(out);
}

char *mb_workload_to_text(const mb_workload *w, size_t *len) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f) return NULL;
  bool ok = mb_workload_write(w, f);
  if (fclose(f) != 0) ok = false;
  if (!ok) {
    free(buf);
    return NULL;
  }
  if (len) *len = n;
  return buf;
}

bool mb_workload_save(const mb_workload *w, const char *path, mb_error *err) {
  mb_atomic_file *out = mb_atomic_file_open(path, NULL, err);
  if (!out) return false;
  mb_workload_write(w, mb_atomic_file_stream(out)); /* a write error fails the commit */
  return mb_atomic_file_commit(out, err);
}

bool mb_workload_sha256_hex(const mb_workload *w, char out[65]) {
  size_t n;
  char *text = mb_workload_to_text(w, &n);
  if (!text) return false;
  mb_sha256_hex(text, n, out);
  free(text);
  return true;
}

/* ---- equality ---- */

static bool differ(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool differ(char *why, size_t n, const char *fmt, ...) {
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return false;
}

static bool str_eq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

bool mb_workload_equal(const mb_workload *a, const mb_workload *b, char *why, size_t n) {
  if (!str_eq(a->name, b->name)) return differ(why, n, "name '%s' != '%s'", a->name, b->name);
  if (!str_eq(a->source, b->source)) return differ(why, n, "source differs");
  if (a->n_ops != b->n_ops) return differ(why, n, "n_ops %d != %d", a->n_ops, b->n_ops);
  if (a->n_buffers != b->n_buffers)
    return differ(why, n, "n_buffers %d != %d", a->n_buffers, b->n_buffers);
  if (a->n_uses != b->n_uses) return differ(why, n, "n_uses %d != %d", a->n_uses, b->n_uses);
  if (a->schedule_length != b->schedule_length)
    return differ(why, n, "schedule_length %d != %d", a->schedule_length, b->schedule_length);
  if (a->slow_time_ps != b->slow_time_ps) return differ(why, n, "slow_time_ps differs");
  for (int32_t o = 0; o < a->n_ops; o++) {
    const mb_op *x = &a->ops[o], *y = &b->ops[o];
    /* flops bit for bit: the text the SHA-256 hashes tells -0 from 0 too (never NaN) */
    if (!str_eq(x->name, y->name) || !str_eq(x->kind, y->kind) ||
        memcmp(&x->flops, &y->flops, sizeof x->flops))
      return differ(why, n, "op %d ('%s') differs", o, x->name);
  }
  for (int32_t i = 0; i < a->n_buffers; i++) {
    const mb_buffer *x = &a->buffers[i], *y = &b->buffers[i];
    if (!str_eq(x->name, y->name) || x->size != y->size || x->start != y->start ||
        x->end != y->end || x->pinned != y->pinned || x->has_benefit != y->has_benefit ||
        (x->has_benefit && x->benefit_ps != y->benefit_ps) || x->first_use != y->first_use ||
        x->n_uses != y->n_uses)
      return differ(why, n, "buffer %d ('%s') differs", i, x->name);
  }
  for (int32_t u = 0; u < a->n_uses; u++) {
    const mb_use *x = &a->uses[u], *y = &b->uses[u];
    if (x->op != y->op || x->buffer != y->buffer || x->bytes_read != y->bytes_read ||
        x->bytes_written != y->bytes_written)
      return differ(why, n, "use %d differs", u);
  }
  return true;
}
