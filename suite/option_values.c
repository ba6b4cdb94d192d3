#include "option_values.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool mb_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  /* strtoll skips leading spaces; an option's value is the number alone */
  if (!s || !*s || isspace((unsigned char)*s)) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool mb_parse_u64(const char *s, uint64_t *out) {
  /* strtoull would accept a sign ("-1" wraps to UINT64_MAX) and leading spaces */
  if (!s || *s < '0' || *s > '9') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

bool mb_parse_number(const char *s, double lo, bool lo_open, double hi, double *out) {
  if (!s || !*s || isspace((unsigned char)*s)) return false;
  char *end;
  double v = strtod(s, &end);
  /* not errno: strtod's ERANGE also flags an underflow to a denormal, a fine value; a result
   * outside the doubles (+-HUGE_VAL) is refused by isfinite */
  if (*end || !isfinite(v) || !(lo_open ? v > lo : v >= lo) || !(v <= hi)) return false;
  *out = v;
  return true;
}

bool mb_parse_bytes(const char *s, int64_t min, int64_t max, int64_t *out) {
  static const struct {
    const char *unit;
    int64_t scale;
  } UNITS[] = {{"", 1},          {"B", 1},           {"KiB", 1024},
               {"MiB", 1 << 20}, {"GiB", 1LL << 30}, {"KB", 1000},
               {"MB", 1000000},  {"GB", 1000000000}};
  if (!s || !*s || isspace((unsigned char)*s)) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || v < 0) return false;
  while (*end == ' ') end++;
  for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++) {
    if (strcmp(end, UNITS[i].unit)) continue;
    if (v > max / UNITS[i].scale || v * UNITS[i].scale < min) return false;
    *out = v * UNITS[i].scale;
    return true;
  }
  return false;
}
