#include "cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Seconds -> integer picoseconds, rounded to nearest. */
static mb_time_ps to_ps(double seconds) { return (mb_time_ps)llround(seconds * 1e12); }

static int64_t use_bytes(const mb_use *u) { return u->bytes_read + u->bytes_written; }

/* Total bytes an op moves (all of its uses). */
static int64_t op_total_bytes(const mb_workload *w, int32_t op) {
  int64_t total = 0;
  for (int32_t k = w->op_use_start[op]; k < w->op_use_start[op + 1]; k++)
    total += use_bytes(&w->uses[w->op_uses[k]]);
  return total;
}

mb_time_ps mb_op_time(const mb_workload *w, const mb_hardware *hw, int32_t op, int64_t fast_bytes) {
  double compute = w->ops[op].flops / hw->peak_flops;
  int64_t slow_bytes = op_total_bytes(w, op) - fast_bytes;
  double memory = (double)slow_bytes / hw->slow_bandwidth + (double)fast_bytes / hw->fast_bandwidth;
  return to_ps((compute > memory ? compute : memory) + hw->op_overhead_s);
}

/* Op time from precomputed totals (the hot path of incremental evaluation). */
static mb_time_ps op_time_split(const mb_workload *w, const mb_hardware *hw, int32_t op,
                                int64_t total_bytes, int64_t fast_bytes) {
  double compute = w->ops[op].flops / hw->peak_flops;
  double memory = (double)(total_bytes - fast_bytes) / hw->slow_bandwidth +
                  (double)fast_bytes / hw->fast_bandwidth;
  return to_ps((compute > memory ? compute : memory) + hw->op_overhead_s);
}

/* An op-less workload's times are slow_time_ps minus the benefits of the buffers in fast
 * memory: every placement stays above zero only if the benefits of all the buffers that may be
 * fast (not pinned) sum to less than slow_time_ps. */
static bool opless_check_range(const mb_workload *w, mb_error *err) {
  if (w->slow_time_ps <= 0 || w->slow_time_ps > MB_COST_MAX_PS)
    return mb_fail(err,
                   "workload '%s': slow_time_ps %lld is outside the cost model's range (1 ps to "
                   "2^62 ps)",
                   w->name, (long long)w->slow_time_ps);
  mb_time_ps sum = 0; /* each benefit is below slow_time_ps when checked: no overflow */
  for (int32_t b = 0; b < w->n_buffers; b++) {
    const mb_buffer *buf = &w->buffers[b];
    if (buf->pinned) continue;
    if (buf->benefit_ps > w->slow_time_ps - sum || buf->benefit_ps < 0)
      return mb_fail(err,
                     "workload '%s': buffer '%s' (index %d of %d): the benefits of the buffers "
                     "that may be fast reach %.6g ps with its %lld ps, more than the all-slow "
                     "time slow_time_ps %lld ps: some placements would take negative time; "
                     "check the benefits and slow_time_ps",
                     w->name, buf->name, (int)b, (int)w->n_buffers,
                     (double)sum + (double)buf->benefit_ps, (long long)buf->benefit_ps,
                     (long long)w->slow_time_ps);
    sum += buf->benefit_ps;
  }
  return true;
}

bool mb_cost_check_range(const mb_workload *w, const mb_hardware *hw, mb_error *err) {
  const double max_s = (double)MB_COST_MAX_PS * 1e-12;
  if (w->n_ops == 0) return opless_check_range(w, err);
  double total = 0; /* the slowest placement: each op at its slower extreme */
  for (int32_t o = 0; o < w->n_ops; o++) {
    double bytes = (double)op_total_bytes(w, o);
    double memory_slow = bytes / hw->slow_bandwidth, memory_fast = bytes / hw->fast_bandwidth;
    double memory = memory_slow > memory_fast ? memory_slow : memory_fast;
    double compute = w->ops[o].flops / hw->peak_flops;
    double t = (compute > memory ? compute : memory) + hw->op_overhead_s;
    total += t;
    if (!isfinite(t) || !(total <= max_s))
      return mb_fail(
          err,
          "workload '%s' on hardware '%s': op '%s' (index %d of %d ops): the simulated time "
          "reaches %.3g s, beyond the cost model's range of 2^62 ps (53 days); "
          "check its flops (%.3g) and bytes (%.3g) and the profile's bandwidths and "
          "op_overhead",
          w->name, hw->name, w->ops[o].name, (int)o, (int)w->n_ops, total, w->ops[o].flops, bytes);
  }
  if (mb_slow_time(w, hw) <= 0)
    return mb_fail(err,
                   "workload '%s' on hardware '%s': the simulated time with every buffer in slow "
                   "memory is 0 ps (no flops, no bytes, no op overhead): nothing to speed up",
                   w->name, hw->name);
  return true;
}

mb_time_ps mb_slow_time(const mb_workload *w, const mb_hardware *hw) {
  if (w->n_ops == 0) return w->slow_time_ps;
  mb_time_ps total = 0;
  for (int32_t o = 0; o < w->n_ops; o++) total += mb_op_time(w, hw, o, 0);
  return total;
}

mb_time_ps mb_program_time(const mb_workload *w, const mb_hardware *hw, const bool *in_fast) {
  if (w->n_ops == 0) {
    mb_time_ps total = w->slow_time_ps;
    for (int32_t b = 0; b < w->n_buffers; b++)
      if (in_fast[b]) total -= w->buffers[b].benefit_ps;
    return total;
  }
  mb_time_ps total = 0;
  for (int32_t o = 0; o < w->n_ops; o++) {
    int64_t fast = 0, all = 0;
    for (int32_t k = w->op_use_start[o]; k < w->op_use_start[o + 1]; k++) {
      const mb_use *u = &w->uses[w->op_uses[k]];
      all += use_bytes(u);
      if (in_fast[u->buffer]) fast += use_bytes(u);
    }
    total += op_time_split(w, hw, o, all, fast);
  }
  return total;
}

/* Time saved on its op when use u alone is in fast memory. */
static mb_time_ps use_benefit(const mb_workload *w, const mb_hardware *hw, int32_t u) {
  const mb_use *use = &w->uses[u];
  int64_t all = op_total_bytes(w, use->op);
  return op_time_split(w, hw, use->op, all, 0) - op_time_split(w, hw, use->op, all, use_bytes(use));
}

void mb_use_benefits(const mb_workload *w, const mb_hardware *hw, mb_time_ps *out) {
  for (int32_t u = 0; u < w->n_uses; u++) out[u] = use_benefit(w, hw, u);
}

void mb_standalone_benefits(const mb_workload *w, const mb_hardware *hw, mb_time_ps *out) {
  for (int32_t b = 0; b < w->n_buffers; b++) {
    const mb_buffer *buf = &w->buffers[b];
    if (w->n_ops == 0) {
      out[b] = buf->benefit_ps;
      continue;
    }
    /* At most one use per (buffer, op) pair, so the buffer's standalone benefit is the sum of
     * its uses' benefits, each evaluated with only this buffer fast. */
    mb_time_ps saved = 0;
    for (int32_t u = buf->first_use; u < buf->first_use + buf->n_uses; u++)
      saved += use_benefit(w, hw, u);
    out[b] = saved;
  }
}

/* ---- incremental state ---- */

bool mb_cost_state_init(mb_cost_state *s, const mb_workload *w, const mb_hardware *hw) {
  memset(s, 0, sizeof *s);
  s->w = w;
  s->hw = hw;
  size_t nb = (size_t)(w->n_buffers ? w->n_buffers : 1);
  size_t no = (size_t)(w->n_ops ? w->n_ops : 1);
  s->in_fast = calloc(nb, sizeof *s->in_fast);
  s->fast_bytes = calloc(no, sizeof *s->fast_bytes);
  s->op_time = calloc(no, sizeof *s->op_time);
  s->op_bytes = calloc(no, sizeof *s->op_bytes);
  if (!s->in_fast || !s->fast_bytes || !s->op_time || !s->op_bytes) {
    mb_cost_state_free(s);
    return false;
  }
  mb_time_ps total = 0;
  for (int32_t o = 0; o < w->n_ops; o++) {
    s->op_bytes[o] = op_total_bytes(w, o);
    s->op_time[o] = op_time_split(w, hw, o, s->op_bytes[o], 0);
    total += s->op_time[o];
  }
  if (w->n_ops == 0) total = w->slow_time_ps;
  s->total = total;
  s->slow_total = total;
  return true;
}

void mb_cost_state_free(mb_cost_state *s) {
  free(s->in_fast);
  free(s->fast_bytes);
  free(s->op_time);
  free(s->op_bytes);
  s->in_fast = NULL;
  s->fast_bytes = NULL;
  s->op_time = NULL;
  s->op_bytes = NULL;
}

mb_time_ps mb_cost_delta(const mb_cost_state *s, int32_t b, bool to_fast) {
  if (s->in_fast[b] == to_fast) return 0;
  const mb_workload *w = s->w;
  const mb_buffer *buf = &w->buffers[b];
  if (w->n_ops == 0) return to_fast ? -buf->benefit_ps : buf->benefit_ps;
  mb_time_ps delta = 0;
  for (int32_t u = buf->first_use; u < buf->first_use + buf->n_uses; u++) {
    const mb_use *use = &w->uses[u];
    int64_t moved = use_bytes(use);
    int64_t fast = s->fast_bytes[use->op] + (to_fast ? moved : -moved);
    delta += op_time_split(w, s->hw, use->op, s->op_bytes[use->op], fast) - s->op_time[use->op];
  }
  return delta;
}

mb_time_ps mb_cost_move(mb_cost_state *s, int32_t b, bool to_fast) {
  if (s->in_fast[b] == to_fast) return 0;
  const mb_workload *w = s->w;
  const mb_buffer *buf = &w->buffers[b];
  s->in_fast[b] = to_fast;
  mb_time_ps delta = 0;
  if (w->n_ops == 0) {
    delta = to_fast ? -buf->benefit_ps : buf->benefit_ps;
  } else {
    for (int32_t u = buf->first_use; u < buf->first_use + buf->n_uses; u++) {
      const mb_use *use = &w->uses[u];
      int64_t moved = use_bytes(use);
      s->fast_bytes[use->op] += to_fast ? moved : -moved;
      mb_time_ps t = op_time_split(w, s->hw, use->op, s->op_bytes[use->op], s->fast_bytes[use->op]);
      delta += t - s->op_time[use->op];
      s->op_time[use->op] = t;
    }
  }
  s->total += delta;
  return delta;
}

void mb_cost_state_copy(mb_cost_state *dst, const mb_cost_state *src) {
  const mb_workload *w = src->w;
  memcpy(dst->in_fast, src->in_fast, (size_t)w->n_buffers * sizeof *dst->in_fast);
  memcpy(dst->fast_bytes, src->fast_bytes, (size_t)w->n_ops * sizeof *dst->fast_bytes);
  memcpy(dst->op_time, src->op_time, (size_t)w->n_ops * sizeof *dst->op_time);
  dst->total = src->total;
  dst->slow_total = src->slow_total;
}
