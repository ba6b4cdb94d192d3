#include "hardware.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"
#include "text_lines.h"

typedef enum { VALUE_NAME, VALUE_SIZE, VALUE_BANDWIDTH, VALUE_FLOPS, VALUE_TIME } value_kind;

typedef struct {
  const char *unit;
  double scale;
} unit_scale;

static const unit_scale SIZE_UNITS[] = {
    {"B", 1},    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    {"KB", 1e3}, {"MB", 1e6},     {"GB", 1e9},        {NULL, 0}};
static const unit_scale BANDWIDTH_UNITS[] = {{"B/s", 1},    {"KB/s", 1e3},  {"MB/s", 1e6},
                                             {"GB/s", 1e9}, {"TB/s", 1e12}, {NULL, 0}};
static const unit_scale FLOPS_UNITS[] = {
    {"FLOP/s", 1}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}, {NULL, 0}};
static const unit_scale TIME_UNITS[] = {
    {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {NULL, 0}};

typedef struct {
  const char *key;
  value_kind kind;
} key_spec;

/* The keys of a profile, in the order of KEYS[] (a key's index is its entry there). */
typedef enum {
  KEY_NAME,
  KEY_CAPACITY,
  KEY_ALIGNMENT,
  KEY_SLOW_BANDWIDTH,
  KEY_FAST_BANDWIDTH,
  KEY_PEAK_FLOPS,
  KEY_OP_OVERHEAD,
  N_KEYS
} key_id;

static const key_spec KEYS[N_KEYS] = {
    [KEY_NAME] = {"name", VALUE_NAME},
    [KEY_CAPACITY] = {"capacity", VALUE_SIZE},
    [KEY_ALIGNMENT] = {"alignment", VALUE_SIZE},
    [KEY_SLOW_BANDWIDTH] = {"slow_bandwidth", VALUE_BANDWIDTH},
    [KEY_FAST_BANDWIDTH] = {"fast_bandwidth", VALUE_BANDWIDTH},
    [KEY_PEAK_FLOPS] = {"peak_flops", VALUE_FLOPS},
    [KEY_OP_OVERHEAD] = {"op_overhead", VALUE_TIME},
};

static const unit_scale *units_for(value_kind kind) {
  switch (kind) {
    case VALUE_SIZE:
      return SIZE_UNITS;
    case VALUE_BANDWIDTH:
      return BANDWIDTH_UNITS;
    case VALUE_FLOPS:
      return FLOPS_UNITS;
    case VALUE_TIME:
      return TIME_UNITS;
    default:
      return NULL;
  }
}

static void unit_list(const unit_scale *units, char *out, size_t n) {
  out[0] = '\0';
  for (int i = 0; units[i].unit; i++) {
    size_t len = strlen(out);
    snprintf(out + len, n - len, "%s%s", i ? ", " : "", units[i].unit);
  }
}

/* Stores one parsed value into the profile. */
static bool set_value(mb_hardware *hw, key_id key, double v) {
  switch (key) {
    case KEY_CAPACITY:
      if (v > 9e18) return false;
      hw->capacity = (int64_t)llround(v);
      return true;
    case KEY_ALIGNMENT:
      if (v > 9e18) return false;
      hw->alignment = (int64_t)llround(v);
      return true;
    case KEY_SLOW_BANDWIDTH:
      hw->slow_bandwidth = v;
      return true;
    case KEY_FAST_BANDWIDTH:
      hw->fast_bandwidth = v;
      return true;
    case KEY_PEAK_FLOPS:
      hw->peak_flops = v;
      return true;
    case KEY_OP_OVERHEAD:
      hw->op_overhead_s = v;
      return true;
    default: /* KEY_NAME is text, set by the parser */
      return false;
  }
}

bool mb_hardware_parse(const char *text, const char *path, mb_hardware *out, mb_error *err) {
  memset(out, 0, sizeof *out);
  int errcode;
  PCRE2_SIZE erroff;
  /* key = value [# comment], or a blank/comment line */
  pcre2_code *line_re = pcre2_compile(
      (PCRE2_SPTR) "^[ \\t]*(?:([A-Za-z_][A-Za-z0-9_]*)[ \\t]*=[ \\t]*([^#]*?))?[ \\t]*(?:#.*)?$",
      PCRE2_ZERO_TERMINATED, 0, &errcode, &erroff, NULL);
  pcre2_code *value_re =
      pcre2_compile((PCRE2_SPTR) "^([0-9]+(?:\\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)[ \\t]*([A-Za-z/]+)$",
                    PCRE2_ZERO_TERMINATED, 0, &errcode, &erroff, NULL);
  pcre2_match_data *md = line_re ? pcre2_match_data_create_from_pattern(line_re, NULL) : NULL;
  pcre2_match_data *vmd = value_re ? pcre2_match_data_create_from_pattern(value_re, NULL) : NULL;
  bool ok = line_re && value_re && md && vmd;
  if (!ok) mb_fail(err, "%s: internal error: cannot compile patterns", path);
  int seen_line[N_KEYS] = {0};
  mb_text_lines it;
  mb_text_lines_init(&it, text, strlen(text));
  const char *p;
  size_t len;
  while (ok && mb_text_lines_next(&it, &p, &len)) {
    int lineno = (int)it.line_no;
    int rc = pcre2_match(line_re, (PCRE2_SPTR)p, len, 0, 0, md, NULL);
    if (rc < 0) {
      ok = mb_fail(err, "%s:%d: expected 'key = value  # comment'", path, lineno);
      break;
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    if (rc >= 3 && ov[2] != PCRE2_UNSET) {
      char key[64], value[128];
      size_t klen = ov[3] - ov[2], vlen = ov[5] - ov[4];
      if (klen >= sizeof key || vlen >= sizeof value) {
        ok = mb_fail(err, "%s:%d: key or value too long", path, lineno);
        break;
      }
      memcpy(key, p + ov[2], klen);
      key[klen] = '\0';
      memcpy(value, p + ov[4], vlen);
      value[vlen] = '\0';
      key_id k = 0;
      while (k < N_KEYS && strcmp(KEYS[k].key, key)) k++;
      if (k == N_KEYS) {
        ok = mb_fail(err, "%s:%d: unknown key '%s'", path, lineno, key);
        break;
      }
      if (seen_line[k]) {
        ok = mb_fail(err, "%s:%d: key '%s' repeated (first on line %d)", path, lineno, key,
                     seen_line[k]);
        break;
      }
      seen_line[k] = lineno;
      if (vlen == 0) {
        ok = mb_fail(err, "%s:%d: %s: missing value", path, lineno, key);
        break;
      }
      if (KEYS[k].kind == VALUE_NAME) {
        if (vlen >= sizeof out->name || strpbrk(value, " \t/")) {
          ok = mb_fail(err, "%s:%d: name: '%s' must be one word of < %zu characters", path, lineno,
                       value, sizeof out->name);
          break;
        }
        memcpy(out->name, value, vlen + 1);
        continue;
      }
      const unit_scale *units = units_for(KEYS[k].kind);
      char allowed[128];
      unit_list(units, allowed, sizeof allowed);
      if (pcre2_match(value_re, (PCRE2_SPTR)value, vlen, 0, 0, vmd, NULL) < 0) {
        ok = mb_fail(err, "%s:%d: %s: expected a non-negative number and a unit (%s), got '%s'",
                     path, lineno, key, allowed, value);
        break;
      }
      PCRE2_SIZE *vo = pcre2_get_ovector_pointer(vmd);
      char unit[32];
      size_t ulen = vo[5] - vo[4];
      if (ulen >= sizeof unit) ulen = sizeof unit - 1;
      memcpy(unit, value + vo[4], ulen);
      unit[ulen] = '\0';
      int u = 0;
      while (units[u].unit && strcmp(units[u].unit, unit)) u++;
      if (!units[u].unit) {
        ok = mb_fail(err, "%s:%d: %s: unknown unit '%s' (expected one of %s)", path, lineno, key,
                     unit, allowed);
        break;
      }
      errno = 0;
      double v = strtod(value, NULL) * units[u].scale;
      if (errno || !isfinite(v) || !set_value(out, k, v)) {
        ok = mb_fail(err, "%s:%d: %s: value '%s' out of range", path, lineno, key, value);
        break;
      }
      /* a size is a whole number of bytes (1.5 KiB is; 0.4 B or 1.5 B is not, and rounding it
       * would change what the profile says); the tolerance is for decimal units, whose products
       * are inexact in binary (2.01 KB is 2009.9999999999998) */
      if (KEYS[k].kind == VALUE_SIZE && fabs(v - nearbyint(v)) > 1e-9 * fmax(1.0, v)) {
        ok = mb_fail(err, "%s:%d: %s: '%s' is not a whole number of bytes", path, lineno, key,
                     value);
        break;
      }
    }
  }
  for (key_id k = 0; ok && k < N_KEYS; k++)
    if (!seen_line[k]) ok = mb_fail(err, "%s: missing key '%s'", path, KEYS[k].key);
  if (ok) {
    /* every numeric key must be positive; alignment must be at least one byte */
    if (out->capacity <= 0)
      ok = mb_fail(err, "%s:%d: capacity must be > 0", path, seen_line[KEY_CAPACITY]);
    else if (out->alignment < 1)
      ok = mb_fail(err, "%s:%d: alignment must be >= 1 B", path, seen_line[KEY_ALIGNMENT]);
    else if (out->slow_bandwidth <= 0)
      ok = mb_fail(err, "%s:%d: slow_bandwidth must be > 0", path, seen_line[KEY_SLOW_BANDWIDTH]);
    else if (out->fast_bandwidth <= 0)
      ok = mb_fail(err, "%s:%d: fast_bandwidth must be > 0", path, seen_line[KEY_FAST_BANDWIDTH]);
    else if (out->peak_flops <= 0)
      ok = mb_fail(err, "%s:%d: peak_flops must be > 0", path, seen_line[KEY_PEAK_FLOPS]);
  }
  pcre2_match_data_free(md);
  pcre2_match_data_free(vmd);
  pcre2_code_free(line_re);
  pcre2_code_free(value_re);
  return ok;
}

bool mb_hardware_load(const char *path, mb_hardware *out, mb_error *err) {
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) return mb_fail(err, "%s: cannot read hardware profile: %s", path, strerror(errno));
  bool ok = mb_text_check_no_nul(text, len, path, err) && mb_hardware_parse(text, path, out, err);
  free(text);
  return ok;
}

bool mb_hardware_find(const char *name_or_path, const char *dir, mb_hardware *out, mb_error *err) {
  size_t n = strlen(name_or_path);
  if (strchr(name_or_path, '/') || (n > 4 && !strcmp(name_or_path + n - 4, ".txt")))
    return mb_hardware_load(name_or_path, out, err);
  char base[4096], path[4096];
  if (!dir) {
    /* MALLOCBENCH_HOME relocates the whole source tree, profiles included */
    if (!mb_path_join(base, sizeof base, mb_source_dir(), "datasets/hardware"))
      return mb_fail(err, "hardware profile '%s': path too long", name_or_path);
    dir = base;
  }
  if (snprintf(path, sizeof path, "%s/%s.txt", dir, name_or_path) >= (int)sizeof path)
    return mb_fail(err, "hardware profile '%s': path too long", name_or_path);
  if (access(path, F_OK) != 0)
    return mb_fail(err, "hardware profile '%s' not found (looked for %s)", name_or_path, path);
  return mb_hardware_load(path, out, err);
}

mb_hardware mb_hardware_with_capacity(const mb_hardware *hw, int64_t capacity) {
  mb_hardware copy = *hw;
  if (capacity > 0) copy.capacity = capacity;
  return copy;
}
