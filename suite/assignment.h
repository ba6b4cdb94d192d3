/* An assignment: per buffer, an offset in fast memory or slow memory.
 *
 * CSV form (read by `mallocbench check`, written by `mallocbench solve --out`):
 *   buffer,offset
 *   x,0
 *   y,slow
 * One row per buffer of the workload (by name, any order); buffers not listed are slow.
 * Fields follow RFC 4180: the writer quotes a name that holds a comma, a quote, a line break or
 * another control byte, a blank, or starts with '#' ("a,b" -> "\"a,b\"", a quote inside written
 * twice), so every name the native format holds round-trips; other names are written bare, as
 * before. The reader takes quoted and bare fields, trims blanks around bare ones, skips blank
 * lines and lines starting with '#', and takes an optional header 'buffer,offset' as the first
 * row. */
#ifndef MB_ASSIGNMENT_H
#define MB_ASSIGNMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "workload.h"

#define MB_SLOW (-1) /* offset value of a buffer in slow memory */

typedef struct mb_assignment {
  int32_t n_buffers;
  int64_t *offset; /* per buffer: byte offset in fast memory, or MB_SLOW */
} mb_assignment;

/* All slow. NULL on allocation failure. */
mb_assignment *mb_assignment_new(int32_t n_buffers);
void mb_assignment_free(mb_assignment *a);
void mb_assignment_copy(mb_assignment *dst, const mb_assignment *src);
/* Per-buffer flags for the cost model: in_fast[b] = offset[b] != MB_SLOW. */
void mb_assignment_fast_flags(const mb_assignment *a, bool *in_fast);
int32_t mb_assignment_n_fast(const mb_assignment *a);

bool mb_assignment_write_csv(const mb_assignment *a, const mb_workload *w, FILE *out);
bool mb_assignment_save_csv(const mb_assignment *a, const mb_workload *w, const char *path,
                            mb_error *err);
/* Reads a CSV for workload w; every error names path:line and the field, e.g.
 * "a.csv:17: field 'offset': '-5' must be a non-negative byte offset or 'slow'" (unknown
 * buffer, bad offset, duplicate row, malformed quoting). */
mb_assignment *mb_assignment_load_csv(const char *path, const mb_workload *w, mb_error *err);
/* The same from text in memory (len bytes; need not be NUL-terminated); `path` names it in
 * messages. */
mb_assignment *mb_assignment_parse_csv(const char *text, size_t len, const char *path,
                                       const mb_workload *w, mb_error *err);
/* The same, and row_line[i] (w->n_buffers entries; NULL for none) receives the line where
 * buffer i's row starts, 0 when it is not listed (slow): for messages about the rows of an
 * invalid assignment (check). */
mb_assignment *mb_assignment_load_csv_rows(const char *path, const mb_workload *w,
                                           int32_t *row_line, mb_error *err);
mb_assignment *mb_assignment_parse_csv_rows(const char *text, size_t len, const char *path,
                                            const mb_workload *w, int32_t *row_line, mb_error *err);

#endif
