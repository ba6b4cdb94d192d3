/* The cost model (the simulator): the ground truth of every number mallocbench prints.
 *
 * Roofline per op: t(op) = max(flops / peak, sum over uses of bytes / bw(space of buffer))
 *                          + overhead,
 * program time T = sum t(op). Each op's time is rounded to integer picoseconds once, so
 * sums are exact and incremental re-evaluation equals full re-evaluation bit for bit.
 * T_slow = T with everything in slow memory. A buffer's standalone benefit = the time saved
 * when it alone moves to fast memory (XLA's memory-space assignment ranks by this).
 *
 * Op-less workloads (buffer CSVs): T_slow = workload->slow_time_ps and T = T_slow minus the
 * benefits of the fast buffers (benefits are additive by definition there). */
#ifndef MB_COST_H
#define MB_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "hardware.h"
#include "workload.h"

/* Time of one op given how many of its bytes are in fast memory. */
mb_time_ps mb_op_time(const mb_workload *w, const mb_hardware *hw, int32_t op, int64_t fast_bytes);
/* The longest program time the model represents: 2^62 ps (53 days), so that sums and
 * differences of times never overflow int64. */
#define MB_COST_MAX_PS ((mb_time_ps)1 << 62)
/* Whether the model can time this workload on this hardware: every placement's program time
 * is finite, at most MB_COST_MAX_PS, and the all-slow time is above zero; for an op-less
 * workload, no placement's time is negative (the benefits of the buffers that are not pinned
 * sum to at most slow_time_ps). False, with an error naming the workload, the hardware and the
 * op or buffer at fault, otherwise (e.g. flops = 1e30, a bandwidth of 1e-300 B/s, benefits
 * above the all-slow time); callers check it before timing anything. */
bool mb_cost_check_range(const mb_workload *w, const mb_hardware *hw, mb_error *err);
/* Program time with every buffer in slow memory. */
mb_time_ps mb_slow_time(const mb_workload *w, const mb_hardware *hw);
/* Program time for a placement: in_fast[b] says whether buffer b is in fast memory. */
mb_time_ps mb_program_time(const mb_workload *w, const mb_hardware *hw, const bool *in_fast);
/* Standalone benefit of each buffer (time saved when it alone is fast), written to out[]
 * (n_buffers entries). Pinned buffers get their benefit too: callers skip them. */
void mb_standalone_benefits(const mb_workload *w, const mb_hardware *hw, mb_time_ps *out);
/* Benefit of each use alone: out[u] = t(op) all slow - t(op) with only use u's bytes fast.
 * (n_uses entries; zero for op-less workloads.) The heuristic's memory-boundedness sums these. */
void mb_use_benefits(const mb_workload *w, const mb_hardware *hw, mb_time_ps *out);

/* Incremental evaluation: the state of a placement, updated one buffer at a time in
 * O(uses of that buffer). */
typedef struct mb_cost_state {
  const mb_workload *w;
  const mb_hardware *hw;
  bool *in_fast;       /* per buffer */
  int64_t *fast_bytes; /* per op: bytes of its uses that are in fast memory */
  mb_time_ps *op_time; /* per op */
  int64_t *op_bytes;   /* per op: all bytes it moves (constant, cached) */
  mb_time_ps total;    /* current program time */
  mb_time_ps slow_total;
} mb_cost_state;

/* All slow initially. False on allocation failure. */
bool mb_cost_state_init(mb_cost_state *s, const mb_workload *w, const mb_hardware *hw);
void mb_cost_state_free(mb_cost_state *s);
/* Time change (new - old, negative = faster) if buffer b moved to `to_fast`; no change made. */
mb_time_ps mb_cost_delta(const mb_cost_state *s, int32_t b, bool to_fast);
/* Moves buffer b and returns the time change. */
mb_time_ps mb_cost_move(mb_cost_state *s, int32_t b, bool to_fast);
/* Copies src's placement into dst (same workload and hardware, both initialised). */
void mb_cost_state_copy(mb_cost_state *dst, const mb_cost_state *src);

#endif
