#include "workload.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "time_intervals.h"

static char *dup_str(const char *s) {
  if (!s) s = "";
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

struct mb_workload_builder {
  char *name;
  char *source;
  mb_op *ops;
  int32_t n_ops, cap_ops;
  mb_buffer *buffers;
  int32_t n_buffers, cap_buffers;
  mb_use *uses;
  int32_t n_uses, cap_uses;
  int32_t schedule_length;
  mb_time_ps slow_time_ps;
  bool failed; /* an allocation failed: finish() reports it */
};

mb_workload_builder *mb_builder_new(const char *name, const char *source) {
  mb_workload_builder *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->name = dup_str(name);
  b->source = dup_str(source);
  if (!b->name || !b->source) {
    mb_builder_free(b);
    return NULL;
  }
  return b;
}

void mb_builder_free(mb_workload_builder *b) {
  if (!b) return;
  for (int32_t i = 0; i < b->n_ops; i++) {
    free(b->ops[i].name);
    free(b->ops[i].kind);
  }
  for (int32_t i = 0; i < b->n_buffers; i++) free(b->buffers[i].name);
  free(b->ops);
  free(b->buffers);
  free(b->uses);
  free(b->name);
  free(b->source);
  free(b);
}

int32_t mb_builder_add_op(mb_workload_builder *b, const char *name, const char *kind,
                          double flops) {
  if (!mb_array_reserve((void **)&b->ops, &b->cap_ops, b->n_ops + 1, sizeof *b->ops)) {
    b->failed = true;
    return -1;
  }
  mb_op *op = &b->ops[b->n_ops];
  op->name = dup_str(name);
  op->kind = dup_str(kind);
  op->flops = flops;
  if (!op->name || !op->kind) {
    free(op->name);
    free(op->kind);
    b->failed = true;
    return -1;
  }
  return b->n_ops++;
}

int32_t mb_builder_add_buffer(mb_workload_builder *b, const char *name, int64_t size, int32_t start,
                              int32_t end, bool pinned) {
  if (!mb_array_reserve((void **)&b->buffers, &b->cap_buffers, b->n_buffers + 1,
                        sizeof *b->buffers)) {
    b->failed = true;
    return -1;
  }
  mb_buffer *buf = &b->buffers[b->n_buffers];
  memset(buf, 0, sizeof *buf);
  buf->name = dup_str(name);
  if (!buf->name) {
    b->failed = true;
    return -1;
  }
  buf->size = size;
  buf->start = start;
  buf->end = end;
  buf->pinned = pinned;
  return b->n_buffers++;
}

bool mb_builder_add_use(mb_workload_builder *b, int32_t buffer, int32_t op, int64_t bytes_read,
                        int64_t bytes_written) {
  if (!mb_array_reserve((void **)&b->uses, &b->cap_uses, b->n_uses + 1, sizeof *b->uses)) {
    b->failed = true;
    return false;
  }
  b->uses[b->n_uses++] = (mb_use){
      .op = op, .buffer = buffer, .bytes_read = bytes_read, .bytes_written = bytes_written};
  return true;
}

void mb_builder_set_benefit(mb_workload_builder *b, int32_t buffer, mb_time_ps benefit_ps) {
  if (buffer < 0 || buffer >= b->n_buffers) return;
  b->buffers[buffer].has_benefit = true;
  b->buffers[buffer].benefit_ps = benefit_ps;
}

void mb_builder_set_schedule(mb_workload_builder *b, int32_t schedule_length,
                             mb_time_ps slow_time_ps) {
  b->schedule_length = schedule_length;
  b->slow_time_ps = slow_time_ps;
}

int32_t mb_builder_n_ops(const mb_workload_builder *b) { return b->n_ops; }
int32_t mb_builder_n_buffers(const mb_workload_builder *b) { return b->n_buffers; }

/* ---- finish: sort, merge and validate ---- */

static int cmp_use(const void *a, const void *b) {
  const mb_use *x = a, *y = b;
  if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
  if (x->op != y->op) return x->op < y->op ? -1 : 1;
  return 0;
}

typedef struct {
  const char *name;
  int32_t index;
} name_ref;

static int cmp_name_ref(const void *a, const void *b) {
  const name_ref *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return x->index < y->index ? -1 : (x->index > y->index);
}

/* Finds a duplicate name in O(n log n); returns the later index of a duplicate pair, -1 when
 * all names differ, -2 when out of memory. */
static int32_t find_duplicate(const char *const *names, size_t stride, int32_t n, int32_t *first) {
  if (n < 2) return -1;
  name_ref *refs = malloc((size_t)n * sizeof *refs);
  if (!refs) return -2;
  for (int32_t i = 0; i < n; i++) {
    refs[i].name = *(const char *const *)((const char *)names + (size_t)i * stride);
    refs[i].index = i;
  }
  qsort(refs, (size_t)n, sizeof *refs, cmp_name_ref);
  int32_t dup = -1;
  for (int32_t i = 1; i < n; i++) {
    if (!strcmp(refs[i - 1].name, refs[i].name)) {
      dup = refs[i].index;
      *first = refs[i - 1].index;
      break;
    }
  }
  free(refs);
  return dup;
}

static void free_workload_parts(mb_workload *w) {
  if (!w) return;
  for (int32_t i = 0; i < w->n_ops; i++) {
    free(w->ops[i].name);
    free(w->ops[i].kind);
  }
  for (int32_t i = 0; i < w->n_buffers; i++) free(w->buffers[i].name);
  free(w->ops);
  free(w->buffers);
  free(w->uses);
  free(w->op_use_start);
  free(w->op_uses);
  free(w->name);
  free(w->source);
}

void mb_workload_free(mb_workload *w) {
  if (!w) return;
  free_workload_parts(w);
  free(w);
}

static bool build_op_index(mb_workload *w) {
  w->op_use_start = calloc((size_t)w->n_ops + 1, sizeof *w->op_use_start);
  w->op_uses = malloc((size_t)(w->n_uses ? w->n_uses : 1) * sizeof *w->op_uses);
  if (!w->op_use_start || !w->op_uses) return false;
  for (int32_t u = 0; u < w->n_uses; u++) w->op_use_start[w->uses[u].op + 1]++;
  for (int32_t o = 0; o < w->n_ops; o++) w->op_use_start[o + 1] += w->op_use_start[o];
  int32_t *fill = malloc((size_t)(w->n_ops ? w->n_ops : 1) * sizeof *fill);
  if (!fill) return false;
  memcpy(fill, w->op_use_start, (size_t)w->n_ops * sizeof *fill);
  /* uses are sorted by buffer, so each op's list is sorted by buffer too */
  for (int32_t u = 0; u < w->n_uses; u++) w->op_uses[fill[w->uses[u].op]++] = u;
  free(fill);
  return true;
}

static bool overflow_add(int64_t a, int64_t b) { return b > 0 && a > INT64_MAX - b; }

/* Names are unique among ops and among buffers. */
static bool check_names(const mb_workload_builder *b, mb_error *err) {
  int32_t first = -1;
  int32_t dup = b->n_ops >= 2 ? find_duplicate((const char *const *)&b->ops[0].name, sizeof *b->ops,
                                               b->n_ops, &first)
                              : -1;
  if (dup >= 0)
    return mb_fail(err, "workload '%s': op '%s': duplicate name (ops %d and %d)", b->name,
                   b->ops[dup].name, first, dup);
  if (dup == -1 && b->n_buffers >= 2)
    dup = find_duplicate((const char *const *)&b->buffers[0].name, sizeof *b->buffers, b->n_buffers,
                         &first);
  if (dup >= 0)
    return mb_fail(err, "workload '%s': buffer '%s': duplicate name (buffers %d and %d)", b->name,
                   b->buffers[dup].name, first, dup);
  if (dup == -2) return mb_fail(err, "workload '%s': out of memory while checking names", b->name);
  return true;
}

/* Every op's flops are finite and >= 0; every use names a buffer and an op that exist, with byte
 * counts >= 0. */
static bool check_ops_and_uses(const mb_workload_builder *b, mb_error *err) {
  for (int32_t i = 0; i < b->n_ops; i++)
    if (!(b->ops[i].flops >= 0) || b->ops[i].flops > 1e30)
      return mb_fail(err, "workload '%s': op '%s': flops %g must be finite and >= 0", b->name,
                     b->ops[i].name, b->ops[i].flops);
  for (int32_t u = 0; u < b->n_uses; u++) {
    const mb_use *use = &b->uses[u];
    if (use->buffer < 0 || use->buffer >= b->n_buffers)
      return mb_fail(err, "workload '%s': use %d: buffer index %d out of range", b->name, u,
                     use->buffer);
    if (use->op < 0 || use->op >= b->n_ops)
      return mb_fail(err, "workload '%s': buffer '%s': use of op %d outside the schedule [0, %d)",
                     b->name, b->buffers[use->buffer].name, use->op, b->n_ops);
    if (use->bytes_read < 0 || use->bytes_written < 0)
      return mb_fail(err, "workload '%s': buffer '%s': use by op %d: negative byte count", b->name,
                     b->buffers[use->buffer].name, use->op);
  }
  return true;
}

/* Sorts the uses by (buffer, op) and merges the uses of one buffer by one op. */
static bool merge_uses(mb_workload_builder *b, mb_error *err) {
  /* uses is NULL when there are none (op-less workloads): qsort's pointer must not be */
  if (b->n_uses > 1) qsort(b->uses, (size_t)b->n_uses, sizeof *b->uses, cmp_use);
  int32_t n_merged = 0;
  for (int32_t u = 0; u < b->n_uses; u++) {
    if (n_merged > 0 && b->uses[n_merged - 1].buffer == b->uses[u].buffer &&
        b->uses[n_merged - 1].op == b->uses[u].op) {
      mb_use *m = &b->uses[n_merged - 1];
      if (overflow_add(m->bytes_read, b->uses[u].bytes_read) ||
          overflow_add(m->bytes_written, b->uses[u].bytes_written))
        return mb_fail(err, "workload '%s': buffer '%s': byte count overflows", b->name,
                       b->buffers[m->buffer].name);
      m->bytes_read += b->uses[u].bytes_read;
      m->bytes_written += b->uses[u].bytes_written;
    } else {
      b->uses[n_merged++] = b->uses[u];
    }
  }
  b->n_uses = n_merged;
  return true;
}

/* Links each buffer to its (sorted, merged) uses, takes a missing live range from them, and
 * checks size, live range inside the schedule of `length` steps, uses inside the live range
 * and the benefit. */
static bool check_buffers(mb_workload_builder *b, int32_t length, mb_error *err) {
  for (int32_t i = 0, u = 0; i < b->n_buffers; i++) {
    mb_buffer *buf = &b->buffers[i];
    buf->first_use = u;
    while (u < b->n_uses && b->uses[u].buffer == i) u++;
    buf->n_uses = u - buf->first_use;
    if (buf->size <= 0)
      return mb_fail(err, "workload '%s': buffer '%s': size %lld must be > 0", b->name, buf->name,
                     (long long)buf->size);
    if (buf->start < 0 && buf->end < 0 && buf->n_uses > 0) {
      buf->start = b->uses[buf->first_use].op;
      buf->end = b->uses[buf->first_use + buf->n_uses - 1].op;
    }
    if (buf->start < 0 || buf->start >= length)
      return mb_fail(err, "workload '%s': buffer '%s': start %d outside the schedule [0, %d)",
                     b->name, buf->name, buf->start, length);
    if (buf->end < 0 || buf->end >= length)
      return mb_fail(err, "workload '%s': buffer '%s': end %d outside the schedule [0, %d)",
                     b->name, buf->name, buf->end, length);
    if (buf->end < buf->start)
      return mb_fail(err, "workload '%s': buffer '%s': end %d < start %d", b->name, buf->name,
                     buf->end, buf->start);
    for (int32_t k = buf->first_use; k < buf->first_use + buf->n_uses; k++)
      if (b->uses[k].op < buf->start || b->uses[k].op > buf->end)
        return mb_fail(err,
                       "workload '%s': buffer '%s': use by op %d outside its live range [%d, %d]",
                       b->name, buf->name, b->uses[k].op, buf->start, buf->end);
    if (b->n_ops == 0 && !buf->has_benefit)
      return mb_fail(err, "workload '%s': buffer '%s': workloads without ops need a benefit",
                     b->name, buf->name);
    if (buf->has_benefit && buf->benefit_ps < 0)
      return mb_fail(err, "workload '%s': buffer '%s': benefit %lld must be >= 0", b->name,
                     buf->name, (long long)buf->benefit_ps);
  }
  return true;
}

/* Statistics add up buffer sizes and the cost model an op's bytes: every such sum must fit in
 * int64 (sizes near INT64_MAX are legal one by one but would overflow there). */
static bool check_sums(const mb_workload_builder *b, mb_error *err) {
  int64_t total_size = 0;
  for (int32_t i = 0; i < b->n_buffers; i++) {
    if (overflow_add(total_size, b->buffers[i].size))
      return mb_fail(err, "workload '%s': buffer '%s': total size of all buffers overflows int64",
                     b->name, b->buffers[i].name);
    total_size += b->buffers[i].size;
  }
  if (b->n_ops == 0) return true;
  int64_t *op_bytes = calloc((size_t)b->n_ops, sizeof *op_bytes);
  if (!op_bytes) return mb_fail(err, "workload '%s': out of memory", b->name);
  bool ok = true;
  for (int32_t u = 0; u < b->n_uses && ok; u++) {
    const mb_use *use = &b->uses[u];
    if (overflow_add(use->bytes_read, use->bytes_written) ||
        overflow_add(op_bytes[use->op], use->bytes_read + use->bytes_written))
      ok = mb_fail(err, "workload '%s': buffer '%s': bytes of op %d overflow int64", b->name,
                   b->buffers[use->buffer].name, use->op);
    else
      op_bytes[use->op] += use->bytes_read + use->bytes_written;
  }
  free(op_bytes);
  return ok;
}

/* Every rule of a workload (workload.h), in the order the messages are most useful. */
static bool check_builder(mb_workload_builder *b, int32_t length, mb_error *err) {
  if (b->failed) return mb_fail(err, "workload '%s': out of memory while building", b->name);
  if (b->n_buffers == 0) return mb_fail(err, "workload '%s': empty workload (no buffers)", b->name);
  if (!check_names(b, err)) return false;
  if (length <= 0) return mb_fail(err, "workload '%s': no ops and no schedule length", b->name);
  if (!check_ops_and_uses(b, err) || !merge_uses(b, err) || !check_buffers(b, length, err) ||
      !check_sums(b, err))
    return false;
  if (b->n_ops == 0 && b->slow_time_ps <= 0)
    return mb_fail(err, "workload '%s': workloads without ops need slow_time_ps > 0", b->name);
  return true;
}

mb_workload *mb_builder_finish(mb_workload_builder *b, mb_error *err) {
  int32_t length = b->n_ops > 0 ? b->n_ops : b->schedule_length;
  mb_workload *w = NULL;
  if (check_builder(b, length, err) && !(w = calloc(1, sizeof *w)))
    mb_fail(err, "workload '%s': out of memory", b->name);
  if (!w) {
    mb_builder_free(b);
    return NULL;
  }
  /* the workload takes the builder's arrays */
  w->name = b->name;
  w->source = b->source;
  w->ops = b->ops;
  w->n_ops = b->n_ops;
  w->buffers = b->buffers;
  w->n_buffers = b->n_buffers;
  w->uses = b->uses;
  w->n_uses = b->n_uses;
  w->schedule_length = length;
  w->slow_time_ps = b->n_ops > 0 ? 0 : b->slow_time_ps;
  b->name = b->source = NULL;
  b->ops = NULL;
  b->buffers = NULL;
  b->uses = NULL;
  b->n_ops = b->n_buffers = b->n_uses = 0;
  mb_builder_free(b);
  if (!build_op_index(w)) {
    mb_fail(err, "workload '%s': out of memory", w->name);
    mb_workload_free(w);
    return NULL;
  }
  return w;
}

/* ---- queries ---- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Peak by a per-step array of deltas: O(n + T) time, (T + 1) x 8 bytes. */
static bool peak_dense(const mb_workload *w, const bool *include, int64_t *peak, int32_t *time) {
  int64_t *delta = calloc((size_t)w->schedule_length + 1, sizeof *delta);
  if (!delta) return false;
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *b = &w->buffers[i];
    if (include && !include[i]) continue;
    delta[b->start] += b->size;
    delta[b->end + 1] -= b->size;
  }
  int64_t live = 0;
  for (int32_t t = 0; t < w->schedule_length; t++) {
    live += delta[t];
    if (live > *peak) {
      *peak = live;
      *time = t;
    }
  }
  free(delta);
  return true;
}

/* Peak by sorting the start and end + 1 events: O(n log n) time, 16 bytes per buffer. Each
 * event is (time << 32 | buffer << 1 | is_end); the live bytes are read after the last event
 * of each time, as the per-step sweep reads them after applying that step's deltas. */
static bool peak_events(const mb_workload *w, const bool *include, int64_t *peak, int32_t *time) {
  uint64_t *ev = malloc((2 * (size_t)w->n_buffers + 1) * sizeof *ev);
  if (!ev) return false;
  size_t n = 0;
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *b = &w->buffers[i];
    if (include && !include[i]) continue;
    ev[n++] = (uint64_t)(uint32_t)b->start << 32 | (uint64_t)i << 1;
    ev[n++] = (uint64_t)((uint32_t)b->end + 1) << 32 | (uint64_t)i << 1 | 1;
  }
  qsort(ev, n, sizeof *ev, cmp_u64);
  int64_t live = 0;
  for (size_t k = 0; k < n; k++) {
    const mb_buffer *b = &w->buffers[(ev[k] & 0xffffffffu) >> 1];
    live += ev[k] & 1 ? -b->size : b->size;
    uint32_t t = (uint32_t)(ev[k] >> 32);
    if ((k + 1 == n || (uint32_t)(ev[k + 1] >> 32) != t) && live > *peak &&
        t < (uint32_t)w->schedule_length) {
      *peak = live;
      *time = (int32_t)t;
    }
  }
  free(ev);
  return true;
}

bool mb_workload_peak_live(const mb_workload *w, const bool *include, int64_t *peak_bytes,
                           int32_t *peak_time) {
  int64_t peak = 0;
  int32_t time = 0;
  bool dense = mb_time_steps_dense(w->schedule_length, w->n_buffers);
  bool ok = dense ? peak_dense(w, include, &peak, &time) : peak_events(w, include, &peak, &time);
  if (!ok) return false;
  if (peak_bytes) *peak_bytes = peak;
  if (peak_time) *peak_time = time;
  return true;
}

void mb_workload_stats_compute(const mb_workload *w, mb_workload_stats *out) {
  memset(out, 0, sizeof *out);
  out->n_ops = w->n_ops;
  out->n_buffers = w->n_buffers;
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *b = &w->buffers[i];
    out->n_pinned += b->pinned;
    out->total_bytes += b->size;
    if (b->size > out->largest_buffer) out->largest_buffer = b->size;
  }
  if (!mb_workload_peak_live(w, NULL, &out->peak_live_bytes, &out->peak_time))
    out->peak_live_bytes = -1; /* unknown (out of memory), not zero */
  for (int32_t o = 0; o < w->n_ops; o++) out->total_flops += w->ops[o].flops;
}

int32_t mb_workload_find_buffer(const mb_workload *w, const char *name) {
  for (int32_t i = 0; i < w->n_buffers; i++)
    if (!strcmp(w->buffers[i].name, name)) return i;
  return -1;
}

int32_t mb_workload_find_op(const mb_workload *w, const char *name) {
  for (int32_t i = 0; i < w->n_ops; i++)
    if (!strcmp(w->ops[i].name, name)) return i;
  return -1;
}

mb_workload *mb_workload_clone(const mb_workload *w) {
  mb_workload_builder *b = mb_builder_new(w->name, w->source);
  if (!b) return NULL;
  for (int32_t o = 0; o < w->n_ops; o++)
    mb_builder_add_op(b, w->ops[o].name, w->ops[o].kind, w->ops[o].flops);
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *buf = &w->buffers[i];
    mb_builder_add_buffer(b, buf->name, buf->size, buf->start, buf->end, buf->pinned);
    if (buf->has_benefit) mb_builder_set_benefit(b, i, buf->benefit_ps);
  }
  for (int32_t u = 0; u < w->n_uses; u++)
    mb_builder_add_use(b, w->uses[u].buffer, w->uses[u].op, w->uses[u].bytes_read,
                       w->uses[u].bytes_written);
  mb_builder_set_schedule(b, w->schedule_length, w->slow_time_ps);
  return mb_builder_finish(b, NULL);
}
