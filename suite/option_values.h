/* The values of command-line options, read the same way by every mallocbench command: a decimal
 * integer, a finite number or a byte count that fills the whole argument (no trailing text, no
 * overflow, no empty string) and lies in a range. These only answer; the CLI's mb_option_*
 * helpers (suite/cli/commands.h) print what was expected. */
#ifndef MB_OPTION_VALUES_H
#define MB_OPTION_VALUES_H

#include <stdbool.h>
#include <stdint.h>

/* A decimal integer in [lo, hi] (an optional sign, no spaces): "64", "-1". */
bool mb_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* An unsigned decimal integer, 0 .. UINT64_MAX, digits only (a seed): "42". */
bool mb_parse_u64(const char *s, uint64_t *out);

/* A finite number in [lo, hi], or in (lo, hi] when lo_open: "0.25", "1e-4". */
bool mb_parse_number(const char *s, double lo, bool lo_open, double hi, double *out);

/* A byte count: "1048576", "64KiB", "128 MiB", "2MB" (units B, KiB, MiB, GiB, KB, MB, GB), in
 * [min, max] (min >= 0). */
bool mb_parse_bytes(const char *s, int64_t min, int64_t max, int64_t *out);

#endif
