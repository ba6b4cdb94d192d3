/* The native workload text format: plain text, human-writable, one record per line, so that
 * workloads can be written by hand, reviewed in diffs and hashed for provenance.
 *
 *   mallocbench-workload 1
 *   name   mlp_tiny
 *   source "hand-written sample"
 *   op     matmul0 kind=dot flops=2097152
 *   buffer x size=65536 start=0 end=1 pinned
 *   use    x op=0 read=65536 write=0
 *
 * The full grammar (directives, keys, quoting, ordering rules, op-less workloads with
 * `schedule N` / `slow_time_ps T` / `benefit=`) is specified in datasets/README.md, section
 * "Native workload format". In short: ops come first and are numbered by their order (op i
 * runs at time i); each buffer is declared before its uses; `#` starts a comment.
 *
 * The reader checks every line as it goes, so an error names the file, the line and the field:
 *   "ops.wl:17: buffer 'x': end 3 < start 5".
 * The writer produces the canonical form: for a canonical file write(read(x)) == x byte for
 * byte, and for any workload read(write(w)) == w field by field. */
#ifndef MB_WORKLOAD_IO_H
#define MB_WORKLOAD_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "workload.h"

#define MB_WORKLOAD_FORMAT_VERSION 1

/* Bounds of the reader. Importers that write what it must read back refuse what it would
 * (suite/csv_import.c), so that an imported file always loads. */
#define MB_WORKLOAD_MAX_SCHEDULE (INT32_MAX - 1) /* longest schedule, time steps */
#define MB_WORKLOAD_MAX_LINES (INT32_MAX - 1)    /* longest file, lines */
/* Most buffers of an op-less workload whose canonical text reads back: one line each after
 * the five of the header, name, source, schedule and slow_time_ps. */
#define MB_WORKLOAD_MAX_OPLESS_BUFFERS (MB_WORKLOAD_MAX_LINES - 5)

/* Parses native text of `len` bytes (need not be NUL-terminated). `path` names the input in
 * error messages. NULL with err set on any error. */
mb_workload *mb_workload_read_text(const char *text, size_t len, const char *path, mb_error *err);
/* Reads a native file. */
mb_workload *mb_workload_load(const char *path, mb_error *err);
/* Loads any supported input by extension: .hlo (XLA HLO text, default import options), .csv
 * (MiniMalloc buffer CSV), .spec (a model-zoo spec, generated as `generate model` does),
 * anything else the native format. */
mb_workload *mb_workload_load_any(const char *path, mb_error *err);

/* Writes the canonical text. False on an I/O error. */
bool mb_workload_write(const mb_workload *w, FILE *out);
/* The canonical text in a malloc'd NUL-terminated buffer (length in *len when not NULL);
 * NULL on allocation failure. */
char *mb_workload_to_text(const mb_workload *w, size_t *len);
/* Writes through a temporary renamed over path (atomic_file.h), so an existing file is never
 * left half-overwritten. */
bool mb_workload_save(const mb_workload *w, const char *path, mb_error *err);
/* SHA-256 of the canonical text (lowercase hex, 65 bytes with the NUL): the workload's
 * content hash, independent of comments and layout of the file it came from. False on
 * allocation failure. */
bool mb_workload_sha256_hex(const mb_workload *w, char out[65]);

/* Field-by-field equality (names, sizes, ranges, flags, benefits, uses, ops, schedule);
 * for round-trip tests and for `verify`. When different and `why` is not NULL, writes the
 * first difference into it (size `why_size`). */
bool mb_workload_equal(const mb_workload *a, const mb_workload *b, char *why, size_t why_size);

#endif
