/* The catalogue: parsing datasets/catalogue.txt, materialising entries (with a content-keyed
 * cache for generated workloads) and the capacity rule. Format: datasets/CATALOGUE.md. */
#include "catalogue.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alphatensor.h"
#include "atomic_file.h"
#include "csv_import.h"
#include "hlo_import.h"
#include "model_zoo.h"
#include "paths.h"
#include "sha256.h"
#include "text_lines.h"
#include "workload_io.h"

/* Bumped when the cache layout or key changes. */
#define CACHE_LAYOUT_VERSION 1

static const char *const COLUMNS[] = {"name",     "kind",     "source", "args",
                                      "hardware", "capacity", "split",  "tags"};
enum { N_COLUMNS = 8 };

const char *const mb_catalogue_splits[MB_CATALOGUE_N_SPLITS + 1] = {"train", "test", NULL};

bool mb_catalogue_split_known(const char *name) {
  for (int i = 0; i < MB_CATALOGUE_N_SPLITS; i++)
    if (!strcmp(name, mb_catalogue_splits[i])) return true;
  return false;
}

/* ---------------------------------------------------------------- patterns */

typedef struct patterns {
  pcre2_code *name, *hardware, *capacity, *args, *tags;
  pcre2_match_data *md;
} patterns;

static void patterns_free(patterns *p) {
  pcre2_code_free(p->name);
  pcre2_code_free(p->hardware);
  pcre2_code_free(p->capacity);
  pcre2_code_free(p->args);
  pcre2_code_free(p->tags);
  pcre2_match_data_free(p->md);
  memset(p, 0, sizeof *p);
}

static pcre2_code *compile(const char *re) {
  int code;
  PCRE2_SIZE off;
  return pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
}

static bool patterns_init(patterns *p) {
  memset(p, 0, sizeof *p);
  p->name = compile("^[A-Za-z0-9][A-Za-z0-9._+-]{0,126}$");
  p->hardware = compile("^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$");
  p->capacity = compile("^(?:profile|([0-9]{1,18})(B|KiB|MiB|GiB)?)$");
  p->args = compile("^(?:-|[a-z_][a-z0-9_]*=[^,=\\s]+(?:,[a-z_][a-z0-9_]*=[^,=\\s]+)*)$");
  p->tags = compile("^(?:-|[a-z0-9][a-z0-9_.+-]*(?:,[a-z0-9][a-z0-9_.+-]*)*)$");
  p->md = p->capacity ? pcre2_match_data_create_from_pattern(p->capacity, NULL) : NULL;
  if (p->name && p->hardware && p->capacity && p->args && p->tags && p->md) return true;
  patterns_free(p);
  return false;
}

static bool full_match(const pcre2_code *re, pcre2_match_data *md, const char *s) {
  return pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL) >= 0;
}

/* ---------------------------------------------------------------- args */

/* Finds key=value in a comma-separated args string ("-" = none). */
static bool args_get(const char *args, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  const char *p = args;
  while (p && *p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > kl && !strncmp(p, key, kl) && p[kl] == '=') {
      size_t vl = len - kl - 1;
      if (vl >= n) return false;
      memcpy(out, p + kl + 1, vl);
      out[vl] = '\0';
      return true;
    }
    p = end ? end + 1 : NULL;
  }
  return false;
}

/* Every key in args must be one of `allowed` (NULL-terminated). Returns the bad key or NULL. */
static const char *args_unknown_key(const char *args, const char *const *allowed, char *buf,
                                    size_t n) {
  if (!strcmp(args, "-")) return NULL;
  const char *p = args;
  while (p && *p) {
    const char *eq = strchr(p, '=');
    const char *end = strchr(p, ',');
    size_t kl = eq ? (size_t)(eq - p) : strlen(p);
    bool ok = false;
    for (int i = 0; allowed[i]; i++) ok |= strlen(allowed[i]) == kl && !strncmp(allowed[i], p, kl);
    if (!ok) {
      snprintf(buf, n, "%.*s", (int)kl, p);
      return buf;
    }
    p = end ? end + 1 : NULL;
  }
  return NULL;
}

/* A key that appears twice in args (the second occurrence: the first would silently win).
 * Returns the key, copied into buf, and its offset in args in *at; NULL when every key is
 * distinct. */
static const char *args_duplicate_key(const char *args, char *buf, size_t n, size_t *at) {
  if (!strcmp(args, "-")) return NULL;
  const char *p = args;
  while (p) {
    size_t kl = strcspn(p, "=,");
    /* every earlier key q ends before p, so a comma follows it */
    for (const char *q = args; q < p; q = strchr(q, ',') + 1)
      if (strcspn(q, "=,") == kl && !strncmp(q, p, kl)) {
        snprintf(buf, n, "%.*s", (int)kl, p);
        *at = (size_t)(p - args);
        return buf;
      }
    const char *comma = strchr(p, ',');
    p = comma ? comma + 1 : NULL;
  }
  return NULL;
}

static bool parse_bool_word(const char *s, bool *out) {
  if (!strcmp(s, "on") || !strcmp(s, "true") || !strcmp(s, "1")) return (*out = true), true;
  if (!strcmp(s, "off") || !strcmp(s, "false") || !strcmp(s, "0")) return (*out = false), true;
  return false;
}

static const char *const KINDS[] = {"hlo", "model", "alphatensor", "csv", "native", NULL};
static const char *const HLO_KEYS[] = {"fusion", "pin_parameters", "pin_outputs", "loop_bodies",
                                       NULL};
static const char *const AT_KEYS[] = {"n", "dtype", NULL};
static const char *const NO_KEYS[] = {NULL};

/* Per-kind checks of the args column; `col` is the column of the field. */
static bool check_args(const mb_catalogue_entry *e, const char *path, int line, int col,
                       mb_error *err) {
  char bad[64], val[64];
  bool is_hlo = !strcmp(e->kind, "hlo"), is_at = !strcmp(e->kind, "alphatensor");
  const char *const *keys = is_hlo ? HLO_KEYS : is_at ? AT_KEYS : NO_KEYS;
  const char *unknown = args_unknown_key(e->args, keys, bad, sizeof bad);
  if (unknown) {
    if (keys == NO_KEYS)
      return mb_fail(err, "%s:%d:%d: field 'args': kind '%s' takes no arguments ('-'), found '%s'",
                     path, line, col, e->kind, e->args);
    return mb_fail(err, "%s:%d:%d: field 'args': unknown key '%s' for kind '%s' (expected %s)",
                   path, line, col, unknown, e->kind,
                   is_hlo ? "fusion, pin_parameters, pin_outputs, loop_bodies" : "n, dtype");
  }
  size_t at = 0;
  const char *twice = args_duplicate_key(e->args, bad, sizeof bad, &at);
  if (twice)
    return mb_fail(err, "%s:%d:%d: field 'args': duplicate key '%s' (each key may appear once)",
                   path, line, col + (int)at, twice);
  if (is_hlo) {
    for (int i = 0; HLO_KEYS[i]; i++) {
      bool b;
      if (args_get(e->args, HLO_KEYS[i], val, sizeof val) && !parse_bool_word(val, &b))
        return mb_fail(err, "%s:%d:%d: field 'args': %s=%s: expected on or off", path, line, col,
                       HLO_KEYS[i], val);
    }
  }
  if (is_at) {
    if (!args_get(e->args, "n", val, sizeof val))
      return mb_fail(err, "%s:%d:%d: field 'args': kind alphatensor needs n=N (matrix size)", path,
                     line, col);
    char *end;
    errno = 0;
    long long n = strtoll(val, &end, 10);
    if (end == val || *end || errno || n < 4 || n % 4 || n > (1 << 20))
      return mb_fail(err, "%s:%d:%d: field 'args': n=%s: expected a multiple of 4 in [4, 1048576]",
                     path, line, col, val);
    if (!args_get(e->args, "dtype", val, sizeof val))
      return mb_fail(err, "%s:%d:%d: field 'args': kind alphatensor needs dtype=bf16|f16|f32", path,
                     line, col);
    if (strcmp(val, "bf16") && strcmp(val, "f16") && strcmp(val, "f32"))
      return mb_fail(err, "%s:%d:%d: field 'args': dtype=%s: expected bf16, f16 or f32", path, line,
                     col, val);
  }
  return true;
}

/* ---------------------------------------------------------------- parsing */

typedef struct field {
  const char *s;
  int col; /* 1-based column of the first character */
} field;

/* Splits a line in place at whitespace; a '#' at a field start begins a comment. */
static int split_fields(char *line, field *f, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (!*p || *p == '#') break;
    char *start = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r') p++;
    if (n < max) f[n] = (field){start, (int)(start - line) + 1};
    n++;
    if (!*p) break;
    *p++ = '\0';
  }
  return n;
}

static bool copy_field(char *dst, size_t n, const field *f, const char *column, const char *path,
                       int line, mb_error *err) {
  size_t len = strlen(f->s);
  if (len >= n)
    return mb_fail(err, "%s:%d:%d: field '%s': %zu characters, at most %zu allowed", path, line,
                   f->col, column, len, n - 1);
  memcpy(dst, f->s, len + 1);
  return true;
}

static bool parse_capacity(const patterns *pt, const field *f, const char *path, int line,
                           int64_t *out, mb_error *err) {
  if (!full_match(pt->capacity, pt->md, f->s))
    return mb_fail(err,
                   "%s:%d:%d: field 'capacity': '%s' is not a byte count (an integer with "
                   "optional unit B, KiB, MiB or GiB, or 'profile')",
                   path, line, f->col, f->s);
  if (!strcmp(f->s, "profile")) {
    *out = 0;
    return true;
  }
  long long v = strtoll(f->s, NULL, 10); /* at most 18 digits: no overflow */
  const char *unit = f->s + strspn(f->s, "0123456789");
  int shift = !strcmp(unit, "KiB") ? 10 : !strcmp(unit, "MiB") ? 20 : !strcmp(unit, "GiB") ? 30 : 0;
  if (v > (INT64_MAX >> shift))
    return mb_fail(err, "%s:%d:%d: field 'capacity': '%s' overflows 64 bits", path, line, f->col,
                   f->s);
  if (v <= 0)
    return mb_fail(err, "%s:%d:%d: field 'capacity': must be > 0 (or 'profile')", path, line,
                   f->col);
  *out = (int64_t)v << shift;
  return true;
}

static bool parse_entry(const patterns *pt, field *f, const char *path, int line,
                        mb_catalogue_entry *e, mb_error *err) {
  memset(e, 0, sizeof *e);
  e->line = line;
  if (!copy_field(e->name, sizeof e->name, &f[0], "name", path, line, err)) return false;
  if (!full_match(pt->name, pt->md, e->name))
    return mb_fail(err,
                   "%s:%d:%d: field 'name': '%s' is not a valid name (letters, digits and "
                   "._+- , starting with a letter or digit)",
                   path, line, f[0].col, e->name);
  if (!copy_field(e->kind, sizeof e->kind, &f[1], "kind", path, line, err)) return false;
  bool kind_ok = false;
  for (int i = 0; KINDS[i]; i++) kind_ok |= !strcmp(KINDS[i], e->kind);
  if (!kind_ok)
    return mb_fail(err,
                   "%s:%d:%d: field 'kind': '%s' unknown (expected hlo, model, alphatensor, "
                   "csv or native)",
                   path, line, f[1].col, e->kind);
  if (!copy_field(e->source, sizeof e->source, &f[2], "source", path, line, err)) return false;
  if (!strncmp(e->source, "builtin:", 8)) {
    if (strcmp(e->kind, "alphatensor"))
      return mb_fail(err, "%s:%d:%d: field 'source': 'builtin:' sources are for kind alphatensor",
                     path, line, f[2].col);
    const char *b = e->source + 8;
    if (strcmp(b, "standard") && strcmp(b, "strassen_squared"))
      return mb_fail(err,
                     "%s:%d:%d: field 'source': builtin factorization '%s' unknown (expected "
                     "builtin:standard or builtin:strassen_squared)",
                     path, line, f[2].col, b);
  }
  if (!copy_field(e->args, sizeof e->args, &f[3], "args", path, line, err)) return false;
  if (!full_match(pt->args, pt->md, e->args))
    return mb_fail(err, "%s:%d:%d: field 'args': '%s' is not '-' or comma-separated key=value",
                   path, line, f[3].col, e->args);
  if (!check_args(e, path, line, f[3].col, err)) return false;
  if (!copy_field(e->hardware, sizeof e->hardware, &f[4], "hardware", path, line, err))
    return false;
  if (!full_match(pt->hardware, pt->md, e->hardware))
    return mb_fail(err, "%s:%d:%d: field 'hardware': '%s' is not a profile name", path, line,
                   f[4].col, e->hardware);
  if (!parse_capacity(pt, &f[5], path, line, &e->capacity, err)) return false;
  if (!copy_field(e->split, sizeof e->split, &f[6], "split", path, line, err)) return false;
  if (!mb_catalogue_split_known(e->split))
    return mb_fail(err, "%s:%d:%d: field 'split': '%s' (expected train or test)", path, line,
                   f[6].col, e->split);
  if (!copy_field(e->tags, sizeof e->tags, &f[7], "tags", path, line, err)) return false;
  if (!full_match(pt->tags, pt->md, e->tags))
    return mb_fail(err,
                   "%s:%d:%d: field 'tags': '%s' is not '-' or comma-separated lowercase "
                   "tags",
                   path, line, f[7].col, e->tags);
  return true;
}

mb_catalogue *mb_catalogue_parse(const char *text, size_t len, const char *path, mb_error *err) {
  if (!path) path = "<catalogue>";
  patterns pt;
  if (!patterns_init(&pt)) {
    mb_fail(err, "%s: cannot compile the catalogue patterns (out of memory)", path);
    return NULL;
  }
  mb_catalogue *c = calloc(1, sizeof *c);
  char *line = NULL;
  int32_t cap = 0;
  bool ok = false, header = false;
  if (!c || !(c->path = strdup(path))) {
    mb_fail(err, "%s: out of memory", path);
    goto done;
  }
  if (!mb_text_check_no_nul(text, len, path, err)) goto done;
  mb_text_lines it;
  mb_text_lines_init(&it, text, len);
  const char *start;
  size_t ll;
  while (mb_text_lines_next(&it, &start, &ll)) {
    int lineno = (int)it.line_no;
    free(line);
    line = malloc(ll + 1);
    if (!line) {
      mb_fail(err, "%s:%d: out of memory", path, lineno);
      goto done;
    }
    memcpy(line, start, ll);
    line[ll] = '\0';
    field f[N_COLUMNS];
    int n = split_fields(line, f, N_COLUMNS);
    if (n == 0) continue;
    if (!header) {
      bool same = n == N_COLUMNS;
      for (int i = 0; same && i < N_COLUMNS; i++) same = !strcmp(f[i].s, COLUMNS[i]);
      if (!same) {
        mb_fail(err,
                "%s:%d:1: expected the header line 'name kind source args hardware capacity "
                "split tags' before the first entry",
                path, lineno);
        goto done;
      }
      header = true;
      continue;
    }
    if (n != N_COLUMNS) {
      if (n < N_COLUMNS) {
        /* the column after the line's end (a CRLF line's '\r' is not part of it) */
        mb_fail(err, "%s:%d:%zu: %d fields, expected %d: field '%s' missing", path, lineno, ll + 1,
                n, N_COLUMNS, COLUMNS[n]);
      } else {
        mb_fail(err,
                "%s:%d: %d fields, expected %d (name kind source args hardware capacity "
                "split tags)",
                path, lineno, n, N_COLUMNS);
      }
      goto done;
    }
    if (c->n_entries == cap) {
      int32_t ncap = cap ? cap * 2 : 64;
      mb_catalogue_entry *ne = realloc(c->entries, (size_t)ncap * sizeof *ne);
      if (!ne) {
        mb_fail(err, "%s:%d: out of memory", path, lineno);
        goto done;
      }
      c->entries = ne;
      cap = ncap;
    }
    mb_catalogue_entry *e = &c->entries[c->n_entries];
    if (!parse_entry(&pt, f, path, lineno, e, err)) goto done;
    for (int32_t i = 0; i < c->n_entries; i++)
      if (!strcmp(c->entries[i].name, e->name)) {
        mb_fail(err, "%s:%d:%d: field 'name': '%s' already defined on line %d", path, lineno,
                f[0].col, e->name, c->entries[i].line);
        goto done;
      }
    c->n_entries++;
  }
  if (!header) {
    mb_fail(err, "%s:%d: no header line 'name kind source args hardware capacity split tags'", path,
            (int)it.line_no);
    goto done;
  }
  ok = true;
done:
  free(line);
  patterns_free(&pt);
  if (!ok) {
    mb_catalogue_free(c);
    return NULL;
  }
  return c;
}

mb_catalogue *mb_catalogue_load(const char *path, mb_error *err) {
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) {
    mb_fail(err, "%s: cannot read the catalogue: %s", path, strerror(errno));
    return NULL;
  }
  mb_catalogue *c = mb_catalogue_parse(text, len, path, err);
  free(text);
  return c;
}

void mb_catalogue_free(mb_catalogue *c) {
  if (!c) return;
  free(c->path);
  free(c->entries);
  free(c);
}

char *mb_catalogue_default_path(char *out, size_t n) {
  return mb_path_join(out, n, mb_source_dir(), "datasets/catalogue.txt");
}

bool mb_catalogue_hash(const mb_catalogue *c, char out[65], mb_error *err) {
  size_t len = 0;
  char *text = mb_read_file(c->path, &len);
  if (!text) return mb_fail(err, "%s: cannot read the catalogue: %s", c->path, strerror(errno));
  mb_sha256_hex(text, len, out);
  free(text);
  return true;
}

bool mb_catalogue_hardware(const mb_catalogue_entry *e, mb_hardware *out, mb_error *err) {
  mb_hardware hw;
  if (!mb_hardware_find(e->hardware, NULL, &hw, err))
    return mb_fail_prefix(err, "workload '%s' (catalogue line %d): field 'hardware'", e->name,
                          e->line);
  *out = mb_hardware_with_capacity(&hw, e->capacity);
  return true;
}

/* ---------------------------------------------------------------- capacity rule */

int64_t mb_catalogue_placeable_peak(const mb_workload *w) {
  int32_t T = w->schedule_length > 0 ? w->schedule_length : 1;
  bool *placeable = malloc((size_t)w->n_buffers * sizeof *placeable + 1);
  if (!placeable) return -1;
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *b = &w->buffers[i];
    placeable[i] = !b->pinned && b->start >= 0 && b->end >= b->start && b->end < T;
  }
  int64_t peak = 0;
  bool ok = mb_workload_peak_live(w, placeable, &peak, NULL);
  free(placeable);
  return ok ? peak : -1;
}

int64_t mb_catalogue_auto_capacity(const mb_workload *w, const mb_hardware *hw) {
  int64_t align = hw->alignment > 0 ? hw->alignment : 1;
  int64_t peak = mb_catalogue_placeable_peak(w);
  int64_t smallest = 0;
  for (int32_t i = 0; i < w->n_buffers; i++)
    if (!w->buffers[i].pinned && (smallest == 0 || w->buffers[i].size < smallest))
      smallest = w->buffers[i].size;
  if (peak <= 0 || smallest == 0) return hw->capacity; /* nothing placeable: any size is moot */
  int64_t cap;
  if (peak / 2 > hw->capacity) {
    cap = hw->capacity; /* the real fast memory already makes a hard problem */
  } else {
    int64_t quarter = peak / 4;
    cap = align;
    while (cap <= INT64_MAX / 2 && cap * 2 <= quarter) cap *= 2;
  }
  int64_t floor_cap = (smallest + align - 1) / align * align;
  return cap < floor_cap ? floor_cap : cap;
}

/* ---------------------------------------------------------------- cache */

typedef mb_workload *(*generate_fn)(const void *ctx, mb_error *err);

/* Reads path; true with *text set when it exists, false with *text NULL when absent. */
static char *read_if_exists(const char *path, size_t *len, bool *exists) {
  char *t = mb_read_file(path, len);
  *exists = t != NULL || errno != ENOENT;
  return t;
}

/* Looks the key up in cache_dir; on a miss (or a corrupt file, with a note) generates and
 * stores the result. The cache file's SHA-256 sits beside it (FILE.sha256), so a truncated
 * or edited file is detected even when it would still parse. */
static mb_workload *cached_generate(const char *cache_dir, const char *kind, const char *key,
                                    generate_fn gen, const void *ctx, mb_error *err) {
  char file[4096], side[4200], rel[128];
  snprintf(rel, sizeof rel, "%s-%.32s.wl", kind, key);
  bool use_cache = cache_dir && *cache_dir && mb_path_join(file, sizeof file, cache_dir, rel) &&
                   snprintf(side, sizeof side, "%s.sha256", file) < (int)sizeof side;
  if (use_cache) {
    size_t len = 0, slen = 0;
    bool exists = false, sexists = false;
    char *text = read_if_exists(file, &len, &exists);
    if (exists) {
      char *stored = read_if_exists(side, &slen, &sexists);
      char digest[65];
      if (text) mb_sha256_hex(text, len, digest);
      mb_error lerr;
      mb_workload *w = NULL;
      if (!text || !stored || slen < 64 || memcmp(stored, digest, 64))
        mb_fail(&lerr, "its SHA-256 does not match %s", side);
      else
        w = mb_workload_read_text(text, len, file, &lerr);
      free(text);
      free(stored);
      if (w) return w;
      mb_diag(stderr, "note: cache file %s is corrupt (%s); regenerating", file, lerr.message);
    }
  }
  mb_workload *w = gen(ctx, err);
  if (!w || !use_cache) return w;
  size_t len = 0;
  char *text = mb_workload_to_text(w, &len);
  char digest[65];
  mb_error werr;
  bool stored = text && mb_mkdir_p(cache_dir) == 0;
  if (!stored) {
    mb_fail(&werr, "%s: %s", text ? cache_dir : file, strerror(text ? errno : ENOMEM));
  } else {
    mb_sha256_hex(text, len, digest);
    /* written atomically (atomic_file.h): concurrent runs filling one cache each write their own
     * temporary; the sidecar last, so a reader that sees the new file with an old sidecar
     * regenerates */
    stored = mb_atomic_file_write(file, text, len, NULL, &werr) &&
             mb_atomic_file_write(side, digest, 64, NULL, &werr);
  }
  if (!stored)
    mb_diag(stderr, "note: cannot write cache file %s (%s); continuing without the cache", file,
            werr.message);
  free(text);
  return w;
}

/* Cache key: SHA-256 of the layout version, kind, generator and format versions, the
 * arguments and the full source content. */
static void cache_key(const char *kind, int generator_version, const char *args,
                      const char *content, size_t len, char out[65]) {
  mb_sha256 h;
  char head[512];
  int n = snprintf(head, sizeof head,
                   "mallocbench-cache %d\nkind %s\ngenerator %d\nformat %d\nargs %s\nbytes %zu\n",
                   CACHE_LAYOUT_VERSION, kind, generator_version, MB_WORKLOAD_FORMAT_VERSION, args,
                   len);
  mb_sha256_init(&h);
  mb_sha256_update(&h, head, (size_t)(n < (int)sizeof head ? n : (int)sizeof head - 1));
  mb_sha256_update(&h, content, len);
  uint8_t d[32];
  mb_sha256_final(&h, d);
  mb_sha256_digest_hex(d, out);
}

typedef struct model_ctx {
  const char *text;
  size_t len;
  const char *path;
} model_ctx;

static mb_workload *gen_model(const void *ctx, mb_error *err) {
  const model_ctx *m = ctx;
  return mb_model_generate_text(m->text, m->len, m->path, err);
}

typedef struct at_ctx {
  const char *text; /* factorization text, or NULL for a builtin */
  const char *builtin;
  const char *path;
  const char *name;
  int64_t n;
  const char *dtype;
} at_ctx;

static mb_workload *gen_alphatensor(const void *ctx, mb_error *err) {
  const at_ctx *a = ctx;
  mb_factorization f;
  bool ok = a->builtin ? mb_factorization_builtin(a->builtin, &f, err)
                       : mb_factorization_parse(a->text, a->path, &f, err);
  if (!ok) return NULL;
  mb_workload *w = mb_alphatensor_trace(&f, a->name, a->n, a->dtype, err);
  mb_factorization_free(&f);
  return w;
}

/* ---------------------------------------------------------------- materialising */

static bool file_missing(const char *path) {
  struct stat st;
  return stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

static mb_workload *missing_data(const mb_catalogue_entry *e, const char *path, bool *missing,
                                 mb_error *err) {
  if (missing) *missing = true;
  mb_fail(err,
          "workload '%s': missing data file %s; datasets/README.md says where each comes "
          "from; set MALLOCBENCH_DATA or --data to its directory",
          e->name, path);
  return NULL;
}

static bool rename_workload(mb_workload *w, const char *name) {
  char *n = strdup(name);
  if (!n) return false;
  free(w->name);
  w->name = n;
  return true;
}

/* Replaces, in the workload's source, the absolute path this machine resolved the entry's file to
 * by the catalogue's own source field (relative to the source tree, or to the data directory for
 * external kinds): a workload's SHA-256 covers its source, and must not depend on where the
 * checkout or the data directory is. A model's source is written anew: the generated workload
 * may come from the cache, made when the tree was elsewhere. False when out of memory. */
static bool portable_source(mb_workload *w, const mb_catalogue_entry *e, const char *path) {
  char *source = NULL;
  if (!strcmp(e->kind, "model")) {
    size_t n = strlen(e->source) + 32;
    source = malloc(n);
    if (source) mb_model_source(source, n, e->source);
  } else {
    const char *at = strstr(w->source, path);
    if (!at) return true;
    size_t head = (size_t)(at - w->source), tail = strlen(at + strlen(path));
    size_t n = head + strlen(e->source) + tail + 1;
    source = malloc(n);
    if (source) snprintf(source, n, "%.*s%s%s", (int)head, w->source, e->source, at + strlen(path));
  }
  if (!source) return false;
  free(w->source);
  w->source = source;
  return true;
}

mb_workload *mb_catalogue_load_workload(const mb_catalogue_entry *e, const char *data_dir,
                                        const char *cache_dir, bool *missing, mb_error *err) {
  if (missing) *missing = false;
  if (!data_dir) data_dir = mb_data_dir(NULL);
  bool external = !strcmp(e->kind, "hlo") || !strcmp(e->kind, "csv") ||
                  (!strcmp(e->kind, "alphatensor") && strncmp(e->source, "builtin:", 8));
  char path[4096];
  const char *builtin = !strncmp(e->source, "builtin:", 8) ? e->source + 8 : NULL;
  if (!builtin &&
      !mb_path_join(path, sizeof path, external ? data_dir : mb_source_dir(), e->source)) {
    mb_fail(err, "workload '%s' (catalogue line %d): field 'source': path too long", e->name,
            e->line);
    return NULL;
  }
  if (!builtin && external && file_missing(path)) return missing_data(e, path, missing, err);

  mb_workload *w = NULL;
  char *text = NULL;
  size_t len = 0;
  if (!strcmp(e->kind, "hlo")) {
    mb_hlo_options opt;
    mb_hlo_options_default(&opt);
    char val[16];
    if (args_get(e->args, "fusion", val, sizeof val)) parse_bool_word(val, &opt.fusion);
    if (args_get(e->args, "pin_parameters", val, sizeof val))
      parse_bool_word(val, &opt.pin_parameters);
    if (args_get(e->args, "pin_outputs", val, sizeof val)) parse_bool_word(val, &opt.pin_outputs);
    if (args_get(e->args, "loop_bodies", val, sizeof val)) parse_bool_word(val, &opt.loop_bodies);
    w = mb_hlo_import_file(path, &opt, NULL, err);
  } else if (!strcmp(e->kind, "csv")) {
    w = mb_csv_import_file(path, err);
  } else if (!strcmp(e->kind, "native")) {
    w = mb_workload_load(path, err);
  } else if (!strcmp(e->kind, "model") || !strcmp(e->kind, "alphatensor")) {
    bool model = !strcmp(e->kind, "model");
    if (builtin) {
      text = strdup(builtin);
      len = text ? strlen(text) : 0;
    } else {
      text = mb_read_file(path, &len);
    }
    if (!text) {
      mb_fail(err, "%s: cannot read: %s", builtin ? e->source : path, strerror(errno));
    } else if (model) {
      char key[65];
      cache_key("model", MB_MODEL_ZOO_VERSION, e->args, text, len, key);
      model_ctx ctx = {text, len, path};
      w = cached_generate(cache_dir, "model", key, gen_model, &ctx, err);
    } else {
      char n[32] = "", dtype[16] = "";
      args_get(e->args, "n", n, sizeof n);
      args_get(e->args, "dtype", dtype, sizeof dtype);
      char key[65];
      /* builtins hash their name; files hash their content (a renamed file still hits) */
      cache_key(builtin ? "alphatensor-builtin" : "alphatensor", MB_ALPHATENSOR_VERSION, e->args,
                text, len, key);
      at_ctx ctx = {builtin ? NULL : text, builtin, builtin ? e->source : path, e->name,
                    strtoll(n, NULL, 10),  dtype};
      if (mb_text_check_no_nul(text, len, path, err))
        w = cached_generate(cache_dir, "alphatensor", key, gen_alphatensor, &ctx, err);
    }
  } else {
    mb_fail(err, "kind '%s' unknown", e->kind);
  }
  free(text);
  if (!w) {
    mb_fail_prefix(err, "workload '%s' (catalogue line %d)", e->name, e->line);
    return NULL;
  }
  if (!rename_workload(w, e->name) || (!builtin && !portable_source(w, e, path))) {
    mb_workload_free(w);
    mb_fail(err, "workload '%s': out of memory", e->name);
    return NULL;
  }
  return w;
}

bool mb_catalogue_select(const mb_catalogue *c, const char *regex, const char *option,
                         bool *selected, mb_error *err) {
  return mb_names_select(c->n_entries > 0 ? c->entries[0].name : NULL, sizeof *c->entries,
                         c->n_entries, regex, option, selected, err);
}

bool mb_names_select(const char *first, size_t stride, int32_t n, const char *regex,
                     const char *option, bool *selected, mb_error *err) {
  if (!regex) {
    for (int32_t i = 0; i < n; i++) selected[i] = true;
    return true;
  }
  int code;
  PCRE2_SIZE off;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)regex, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
  if (!re) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof msg);
    return mb_fail(err, "%s '%s': column %zu: %s", option, regex, (size_t)off + 1, (char *)msg);
  }
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  for (int32_t i = 0; md && i < n; i++)
    selected[i] = pcre2_match(re, (PCRE2_SPTR)(first + (size_t)i * stride), PCRE2_ZERO_TERMINATED,
                              0, 0, md, NULL) >= 0;
  bool ok = md != NULL;
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  return ok || mb_fail(err, "%s: out of memory", option);
}
