/* Hardware profiles: the fast memory and the roofline parameters of the cost model.
 *
 * Profiles are small text files in datasets/hardware/NAME.txt, one `key = value` per line with
 * a unit, and a `#` comment on each saying where the number comes from or "assumption":
 *
 *   name          = tpu-v4i
 *   capacity      = 128 MiB     # CMEM size, ...
 *   alignment     = 512 B
 *   slow_bandwidth = 614 GB/s   # HBM2 ...
 *   fast_bandwidth = 2000 GB/s  # assumption ...
 *   peak_flops    = 138 TFLOP/s # bf16 ...
 *   op_overhead   = 1 us        # assumption ...
 *
 * Units: B, KiB, MiB, GiB (and KB, MB, GB as powers of ten) for sizes; B/s, GB/s, TB/s;
 * FLOP/s, GFLOP/s, TFLOP/s; ns, us, ms, s. A size is a whole number of bytes (1.5 KiB, not
 * 1.5 B). Unknown keys, missing keys, bad units and fractional bytes are errors naming
 * file:line and key. */
#ifndef MB_HARDWARE_H
#define MB_HARDWARE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

typedef struct mb_hardware {
  char name[64];
  int64_t capacity;      /* bytes of fast memory */
  int64_t alignment;     /* bytes; every fast offset is a multiple of it (>= 1) */
  double slow_bandwidth; /* bytes per second */
  double fast_bandwidth; /* bytes per second */
  double peak_flops;     /* FLOP per second */
  double op_overhead_s;  /* fixed seconds per op */
} mb_hardware;

/* Parses a profile file. */
bool mb_hardware_load(const char *path, mb_hardware *out, mb_error *err);
/* Parses profile text; `path` is used in messages only. */
bool mb_hardware_parse(const char *text, const char *path, mb_hardware *out, mb_error *err);
/* Finds a profile by name (datasets/hardware/NAME.txt under mb_source_dir(), or under `dir`
 * when not NULL) or by path (when `name_or_path` contains a '/' or ends in .txt). */
bool mb_hardware_find(const char *name_or_path, const char *dir, mb_hardware *out, mb_error *err);
/* A copy of `hw` with another capacity (the catalogue sizes fast memory per workload). */
mb_hardware mb_hardware_with_capacity(const mb_hardware *hw, int64_t capacity);

#endif
