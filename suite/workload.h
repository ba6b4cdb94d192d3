/* The workload: a scheduled program whose buffers compete for fast memory.
 *
 * Time is the op index in schedule order: op i runs at time i. A buffer is live on the
 * inclusive range [start, end] (defined at start, last used at end). Each buffer lists its
 * uses: (op, bytes read, bytes written), at most one use per (buffer, op) pair, every use
 * inside the live range. Pinned buffers must stay in slow memory (entry parameters and
 * outputs, as XLA's memory-space assignment leaves them).
 *
 * A workload without ops (an imported buffer CSV) has `schedule_length` time steps, a
 * per-buffer `benefit_ps` (time saved when the buffer alone is in fast memory) and a
 * `slow_time_ps` (program time with everything slow). Workloads with ops derive both from the
 * cost model (suite/cost.h).
 *
 * Built with mb_workload_builder (importers and generators) or read from the native text
 * format (suite/workload_io.h). A finished mb_workload is immutable and owns all its memory. */
#ifndef MB_WORKLOAD_H
#define MB_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

/* Time in integer picoseconds: sums are exact, so incremental re-evaluation of the cost
 * model equals a full re-evaluation bit for bit. */
typedef int64_t mb_time_ps;

#define MB_NAME_MAX 128 /* longest op, buffer or workload name, including the NUL */

typedef struct mb_op {
  char *name;   /* unique within the workload */
  char *kind;   /* e.g. "dot", "convolution", "fusion", "add"; free text, no spaces */
  double flops; /* floating-point operations of this op (>= 0) */
} mb_op;

typedef struct mb_use {
  int32_t op;
  int32_t buffer;
  int64_t bytes_read;
  int64_t bytes_written;
} mb_use;

typedef struct mb_buffer {
  char *name;         /* unique within the workload */
  int64_t size;       /* bytes, > 0 */
  int32_t start, end; /* inclusive live range in op indices, start <= end */
  bool pinned;        /* must stay in slow memory */
  bool has_benefit;   /* benefit_ps given explicitly (op-less workloads) */
  mb_time_ps benefit_ps;
  int32_t first_use; /* this buffer's uses are uses[first_use .. first_use + n_uses) */
  int32_t n_uses;
} mb_buffer;

typedef struct mb_workload {
  char *name;
  char *source; /* provenance: where it came from, free text */
  int32_t n_ops;
  int32_t n_buffers;
  int32_t n_uses;
  int32_t schedule_length; /* number of time steps: n_ops when there are ops */
  mb_time_ps slow_time_ps; /* op-less workloads only (0 otherwise) */
  mb_op *ops;
  mb_buffer *buffers;
  mb_use *uses; /* sorted by (buffer, op) */
  /* Per-op index into uses (CSR): uses of op o are uses[op_uses[op_use_start[o] ..
   * op_use_start[o + 1])]; op_use_start has n_ops + 1 entries. */
  int32_t *op_use_start;
  int32_t *op_uses;
} mb_workload;

/* Statistics derived from the workload alone (no hardware). */
typedef struct mb_workload_stats {
  int32_t n_ops;
  int32_t n_buffers;
  int32_t n_pinned;
  int64_t total_bytes;     /* sum of buffer sizes */
  int64_t peak_live_bytes; /* max over time of the bytes of live buffers; -1 when unknown
                              (out of memory: O(n) bytes, whatever the schedule length) */
  int32_t peak_time;       /* first time at which peak_live_bytes is reached */
  int64_t largest_buffer;
  double total_flops;
} mb_workload_stats;

void mb_workload_free(mb_workload *w);
/* Deep copy; NULL on allocation failure. */
mb_workload *mb_workload_clone(const mb_workload *w);
void mb_workload_stats_compute(const mb_workload *w, mb_workload_stats *out);
/* Max over time of the bytes of the live buffers, counting buffer i only when include is NULL
 * or include[i] (0 when none counts), and the first time it is reached (0 when none). Memory
 * O(n) and time O(n log n) whatever the schedule length (a per-step array when the schedule
 * has at most 4 steps per buffer: O(n + T), the same figures). False on allocation failure
 * (the outputs are then left alone). */
bool mb_workload_peak_live(const mb_workload *w, const bool *include, int64_t *peak_bytes,
                           int32_t *peak_time);
/* Index of the buffer or op with that name, or -1. O(n) scan: for tools, not hot paths. */
int32_t mb_workload_find_buffer(const mb_workload *w, const char *name);
int32_t mb_workload_find_op(const mb_workload *w, const char *name);

/* ---- Builder: importers and generators add ops, buffers and uses in any order, then
 * finish() validates everything and produces the immutable workload. ---- */
typedef struct mb_workload_builder mb_workload_builder;

mb_workload_builder *mb_builder_new(const char *name, const char *source);
void mb_builder_free(mb_workload_builder *b);
/* Returns the new op's index (its time), or -1 on allocation failure. */
int32_t mb_builder_add_op(mb_workload_builder *b, const char *name, const char *kind, double flops);
/* Returns the new buffer's index. The live range may be left at (-1, -1): finish() then
 * derives it from the buffer's uses (first and last op that uses it). */
int32_t mb_builder_add_buffer(mb_workload_builder *b, const char *name, int64_t size, int32_t start,
                              int32_t end, bool pinned);
/* Adds (or merges into an existing) use of buffer by op. */
bool mb_builder_add_use(mb_workload_builder *b, int32_t buffer, int32_t op, int64_t bytes_read,
                        int64_t bytes_written);
void mb_builder_set_benefit(mb_workload_builder *b, int32_t buffer, mb_time_ps benefit_ps);
/* For op-less workloads: number of time steps and all-slow program time. */
void mb_builder_set_schedule(mb_workload_builder *b, int32_t schedule_length,
                             mb_time_ps slow_time_ps);
int32_t mb_builder_n_ops(const mb_workload_builder *b);
int32_t mb_builder_n_buffers(const mb_workload_builder *b);
/* Validates (non-empty, unique names, sizes > 0, ranges inside the schedule, uses inside
 * live ranges, benefits on op-less workloads) and returns the workload; NULL with err set
 * otherwise (messages name the buffer/op and field). The builder is consumed either way. */
mb_workload *mb_builder_finish(mb_workload_builder *b, mb_error *err);

#endif
