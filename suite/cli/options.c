/* The CLI's reading of option values: suite/option_values.h plus one error line. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "catalogue.h"
#include "commands.h"
#include "error.h"
#include "solver.h"

static bool missing_value(const char *command, const char *flag) {
  mb_diag(stderr, "mallocbench %s: %s needs a value", command, flag);
  return false;
}

bool mb_option_int(const char *command, const char *flag, const char *value, int64_t lo, int64_t hi,
                   int64_t *out) {
  if (!value) return missing_value(command, flag);
  if (mb_parse_int(value, lo, hi, out)) return true;
  mb_diag(stderr, "mallocbench %s: %s '%s': expected an integer in %" PRId64 "..%" PRId64, command,
          flag, value, lo, hi);
  return false;
}

bool mb_option_i32(const char *command, const char *flag, const char *value, int32_t lo, int32_t hi,
                   int32_t *out) {
  int64_t v;
  if (!mb_option_int(command, flag, value, lo, hi, &v)) return false;
  *out = (int32_t)v;
  return true;
}

bool mb_option_bytes(const char *command, const char *flag, const char *value, int64_t min,
                     int64_t max, int64_t *out) {
  if (!value) return missing_value(command, flag);
  if (mb_parse_bytes(value, min, max, out)) return true;
  char range[64] = "";
  if (min == 1 && max == INT64_MAX)
    snprintf(range, sizeof range, " > 0");
  else if (min > 0 || max < INT64_MAX)
    snprintf(range, sizeof range, " in %" PRId64 "..%" PRId64, min, max);
  mb_diag(stderr, "mallocbench %s: %s '%s': expected bytes%s, e.g. 1048576 or 4MiB", command, flag,
          value, range);
  return false;
}

bool mb_option_u64(const char *command, const char *flag, const char *value, uint64_t *out) {
  if (!value) return missing_value(command, flag);
  if (mb_parse_u64(value, out)) return true;
  mb_diag(stderr, "mallocbench %s: %s '%s': expected an integer in 0..%" PRIu64, command, flag,
          value, UINT64_MAX);
  return false;
}

bool mb_option_number(const char *command, const char *flag, const char *value, double lo,
                      bool lo_open, double hi, double *out) {
  if (!value) return missing_value(command, flag);
  if (mb_parse_number(value, lo, lo_open, hi, out)) return true;
  mb_diag(stderr, "mallocbench %s: %s '%s': expected a number in %c%g, %g]", command, flag, value,
          lo_open ? '(' : '[', lo, hi);
  return false;
}

bool mb_option_text(const char *command, const char *flag, const char *value, const char **out) {
  if (!value) return missing_value(command, flag);
  *out = value;
  return true;
}

bool mb_option_path(const char *command, const char *flag, const char *value, const char **out) {
  if (value && !*value) {
    mb_diag(stderr, "mallocbench %s: %s '': expected a file path", command, flag);
    return false;
  }
  return mb_option_text(command, flag, value, out);
}

bool mb_option_choice(const char *command, const char *flag, const char *value,
                      const char *const *choices, int n_choices, int *index) {
  if (!value) return missing_value(command, flag);
  for (int k = 0; k < n_choices; k++) {
    if (!strcmp(value, choices[k])) {
      *index = k;
      return true;
    }
  }
  char list[512] = "";
  size_t n = 0;
  for (int k = 0; k < n_choices && n < sizeof list; k++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s",
                          k == 0               ? ""
                          : k == n_choices - 1 ? " or "
                                               : ", ",
                          choices[k]);
  mb_diag(stderr, "mallocbench %s: %s '%s': expected %s", command, flag, value, list);
  return false;
}

bool mb_option_split(const char *command, const char *flag, const char *value, const char **split) {
  int k;
  if (!mb_option_choice(command, flag, value, mb_catalogue_splits, MB_CATALOGUE_N_SPLITS, &k))
    return false;
  *split = mb_catalogue_splits[k];
  return true;
}

bool mb_option_search(const char *command, const char *flag, const char *value, int *out) {
  static const char *const searches[] = {"gumbel", "puct"};
  int k;
  return mb_option_choice(command, flag, value, searches, 2, &k) &&
         mb_solver_search_parse(searches[k], out);
}

void mb_option_arg_read(int argc, char **argv, int i, mb_option_arg *o) {
  const char *arg = argv[i], *eq = strchr(arg, '=');
  size_t n = eq ? (size_t)(eq - arg) : 0;
  if (!strncmp(arg, "--", 2) && eq && n < sizeof o->name) {
    memcpy(o->name, arg, n);
    o->name[n] = '\0';
    o->flag = o->name;
    o->value = eq + 1;
    o->last = i;
  } else {
    o->flag = arg;
    o->value = i + 1 < argc ? argv[i + 1] : NULL;
    o->last = i + 1;
  }
}

int mb_unknown_option(const char *command, const char *arg) {
  mb_diag(stderr, "mallocbench %s: unknown option '%s' (see mallocbench %s --help)", command, arg,
          command);
  return 2;
}
