/* The validator: per-buffer checks, then a sweep over time with an ordered set of the address
 * intervals of the live fast buffers. The live intervals are pairwise disjoint (we stop at the
 * first collision), so a new interval can only collide with its neighbours in address order.
 * O(n log n): one sort by offset, sorts by time (counting sorts when the schedule is short), and
 * O(log_64 n) per set operation; memory O(n) whatever the schedule length. */
#include "validator.h"

#include <stdlib.h>
#include <string.h>

#include "time_intervals.h"

/* The ordered set: the fast buffers are ranked by (offset, index) once, and the live ones are
 * a set of ranks kept in a 64-ary bitmap tree (one bit per rank at the bottom level, one bit per
 * non-empty word above). Predecessor and successor queries walk O(log_64 n) words with
 * count-leading/trailing-zeros, so the sweep stays cache-friendly at 10^6 buffers. */
#define MAX_LEVELS 6 /* 64^6 > 2^31 ranks */

typedef struct rank_set {
  uint64_t *level[MAX_LEVELS];
  int64_t n_words[MAX_LEVELS];
  int depth;
} rank_set;

static bool rank_set_init(rank_set *s, int64_t n) {
  memset(s, 0, sizeof *s);
  do {
    n = (n + 63) / 64;
    s->n_words[s->depth] = n;
    s->level[s->depth] = calloc((size_t)n, sizeof(uint64_t));
    if (!s->level[s->depth++]) return false;
  } while (n > 1 && s->depth < MAX_LEVELS);
  return true;
}

static void rank_set_free(rank_set *s) {
  for (int d = 0; d < MAX_LEVELS; d++) free(s->level[d]);
}

static void rank_set_insert(rank_set *s, int64_t r) {
  for (int d = 0; d < s->depth; d++, r >>= 6) s->level[d][r >> 6] |= 1ULL << (r & 63);
}

static void rank_set_erase(rank_set *s, int64_t r) {
  for (int d = 0; d < s->depth; d++, r >>= 6) {
    s->level[d][r >> 6] &= ~(1ULL << (r & 63));
    if (s->level[d][r >> 6]) break; /* the word is still non-empty: parents keep their bit */
  }
}

/* Smallest member > r, or -1. */
static int64_t rank_set_succ(const rank_set *s, int64_t r) {
  int64_t i = r + 1;
  for (int d = 0; d < s->depth; d++) {
    int64_t w = i >> 6;
    if (w >= s->n_words[d]) return -1;
    uint64_t m = s->level[d][w] & (~0ULL << (i & 63));
    if (m) {
      int64_t pos = (w << 6) + __builtin_ctzll(m);
      for (int e = d - 1; e >= 0; e--) pos = (pos << 6) + __builtin_ctzll(s->level[e][pos]);
      return pos;
    }
    i = w + 1;
  }
  return -1;
}

/* Largest member < r, or -1. */
static int64_t rank_set_pred(const rank_set *s, int64_t r) {
  int64_t i = r - 1;
  for (int d = 0; d < s->depth; d++) {
    if (i < 0) return -1;
    int64_t w = i >> 6;
    int b = (int)(i & 63);
    uint64_t m = s->level[d][w] & (b == 63 ? ~0ULL : (1ULL << (b + 1)) - 1);
    if (m) {
      int64_t pos = (w << 6) + 63 - __builtin_clzll(m);
      for (int e = d - 1; e >= 0; e--) pos = (pos << 6) + 63 - __builtin_clzll(s->level[e][pos]);
      return pos;
    }
    i = w - 1;
  }
  return -1;
}

typedef struct by_offset {
  int64_t offset;
  int32_t buffer;
} by_offset;

static int cmp_offset(const void *a, const void *b) {
  const by_offset *x = a, *y = b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return (x->buffer > y->buffer) - (x->buffer < y->buffer);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int32_t time_key(const mb_workload *w, int32_t i, bool by_end) {
  return by_end ? w->buffers[i].end + 1 : w->buffers[i].start;
}

/* Fast buffers in order of `key` (start or end + 1), ties by index, into out. With `count`
 * (schedule_length + 2 entries) a counting sort over the schedule, O(n + T); else, with `keys`
 * (one per fast buffer), a sort of (key << 32 | index), O(n log n): the same order, in memory
 * that does not grow with the schedule. */
static void order_by_time(const mb_workload *w, const mb_assignment *a, bool by_end, int32_t *count,
                          uint64_t *keys, int32_t *out) {
  if (count) {
    int32_t T = w->schedule_length + 1;
    memset(count, 0, ((size_t)T + 1) * sizeof *count);
    for (int32_t i = 0; i < w->n_buffers; i++)
      if (a->offset[i] != MB_SLOW) count[time_key(w, i, by_end) + 1]++;
    for (int32_t t = 0; t < T; t++) count[t + 1] += count[t];
    for (int32_t i = 0; i < w->n_buffers; i++)
      if (a->offset[i] != MB_SLOW) out[count[time_key(w, i, by_end)]++] = i;
    return;
  }
  size_t n = 0;
  for (int32_t i = 0; i < w->n_buffers; i++)
    if (a->offset[i] != MB_SLOW)
      keys[n++] = (uint64_t)(uint32_t)time_key(w, i, by_end) << 32 | (uint32_t)i;
  qsort(keys, n, sizeof *keys, cmp_u64);
  for (size_t k = 0; k < n; k++) out[k] = (int32_t)(keys[k] & 0xffffffffu);
}

static bool collision(const mb_workload *w, const mb_assignment *a, int32_t x, int32_t y,
                      int32_t time, int32_t blame[2], mb_error *err) {
  const int64_t *off = a->offset;
  if (off[y] < off[x] || (off[y] == off[x] && y < x)) {
    int32_t t = x;
    x = y;
    y = t;
  }
  blame[0] = x;
  blame[1] = y;
  return mb_fail(err,
                 "buffer '%s' [%lld, %lld) and buffer '%s' [%lld, %lld) overlap in fast memory "
                 "at time %d",
                 w->buffers[x].name, (long long)off[x], (long long)(off[x] + w->buffers[x].size),
                 w->buffers[y].name, (long long)off[y], (long long)(off[y] + w->buffers[y].size),
                 time);
}

bool mb_validate(const mb_workload *w, const mb_hardware *hw, const mb_assignment *a,
                 mb_error *err) {
  int32_t blame[2];
  return mb_validate_blame(w, hw, a, blame, err);
}

bool mb_validate_blame(const mb_workload *w, const mb_hardware *hw, const mb_assignment *a,
                       int32_t blame[2], mb_error *err) {
  blame[0] = blame[1] = -1;
  if (a->n_buffers != w->n_buffers)
    return mb_fail(err, "assignment has %d buffers but workload '%s' has %d", a->n_buffers, w->name,
                   w->n_buffers);
  int64_t align = hw->alignment > 0 ? hw->alignment : 1;
  int32_t n_fast = 0;
  for (int32_t i = 0; i < w->n_buffers; i++) {
    int64_t off = a->offset[i];
    const mb_buffer *b = &w->buffers[i];
    if (off == MB_SLOW) continue;
    blame[0] = i; /* each check below is about buffer i alone */
    if (off < 0)
      return mb_fail(err, "buffer '%s': offset %lld is negative (and not slow)", b->name,
                     (long long)off);
    if (b->pinned)
      return mb_fail(err, "buffer '%s': pinned (must stay in slow memory) but assigned offset %lld",
                     b->name, (long long)off);
    if (off % align)
      return mb_fail(err, "buffer '%s': offset %lld is not a multiple of the alignment %lld",
                     b->name, (long long)off, (long long)align);
    if (b->size > hw->capacity || off > hw->capacity - b->size)
      return mb_fail(err,
                     "buffer '%s': offset %lld + size %lld exceeds the fast-memory capacity %lld "
                     "of '%s'",
                     b->name, (long long)off, (long long)b->size, (long long)hw->capacity,
                     hw->name);
    n_fast++;
  }
  blame[0] = -1;
  if (n_fast < 2) return true;

  /* Removals at end + 1 come before insertions at the same time: a buffer that ends at t - 1
   * and one that starts at t may share addresses. */
  int32_t *ins = malloc((size_t)n_fast * sizeof *ins);
  int32_t *rem = malloc((size_t)n_fast * sizeof *rem);
  /* A counting sort by time on short schedules, a comparison sort beyond */
  bool dense = mb_time_steps_dense((int64_t)w->schedule_length + 2, n_fast);
  int32_t *count = dense ? malloc(((size_t)w->schedule_length + 2) * sizeof *count) : NULL;
  uint64_t *keys = dense ? NULL : malloc((size_t)n_fast * sizeof *keys);
  int32_t *rank = malloc((size_t)w->n_buffers * sizeof *rank);
  by_offset *sorted = malloc((size_t)n_fast * sizeof *sorted);
  rank_set set;
  memset(&set, 0, sizeof set); /* freed below even when an earlier allocation failed */
  bool ok = ins && rem && (count || keys) && rank && sorted && rank_set_init(&set, n_fast);
  if (!ok) mb_fail(err, "validator: out of memory for %d fast buffers", n_fast);
  if (ok) {
    for (int32_t i = 0, k = 0; i < w->n_buffers; i++)
      if (a->offset[i] != MB_SLOW) sorted[k++] = (by_offset){a->offset[i], i};
    qsort(sorted, (size_t)n_fast, sizeof *sorted, cmp_offset);
    for (int32_t r = 0; r < n_fast; r++) rank[sorted[r].buffer] = r;
    order_by_time(w, a, false, count, keys, ins);
    order_by_time(w, a, true, count, keys, rem);
  }
  for (int32_t i = 0, r = 0; ok && i < n_fast; i++) {
    int32_t b = ins[i], now = w->buffers[b].start;
    for (; r < n_fast && w->buffers[rem[r]].end < now; r++) rank_set_erase(&set, rank[rem[r]]);
    int64_t pr = rank_set_pred(&set, rank[b]), sr = rank_set_succ(&set, rank[b]);
    int32_t pred = pr >= 0 ? sorted[pr].buffer : -1, succ = sr >= 0 ? sorted[sr].buffer : -1;
    int64_t off = a->offset[b];
    if (pred >= 0 && a->offset[pred] + w->buffers[pred].size > off)
      ok = collision(w, a, pred, b, now, blame, err);
    else if (succ >= 0 && a->offset[succ] < off + w->buffers[b].size)
      ok = collision(w, a, succ, b, now, blame, err);
    else
      rank_set_insert(&set, rank[b]);
  }
  free(ins);
  free(rem);
  free(count);
  free(keys);
  free(rank);
  free(sorted);
  rank_set_free(&set);
  return ok;
}

void mb_assignment_usage(const mb_workload *w, const mb_assignment *a, int64_t *peak_fast_bytes,
                         int64_t *max_address) {
  int64_t peak = 0, top = 0;
  bool *fast = malloc((size_t)w->n_buffers * sizeof *fast + 1);
  for (int32_t i = 0; i < w->n_buffers; i++) {
    bool in = i < a->n_buffers && a->offset[i] >= 0;
    if (fast) fast[i] = in;
    if (in && a->offset[i] + w->buffers[i].size > top) top = a->offset[i] + w->buffers[i].size;
  }
  bool counted = fast && mb_workload_peak_live(w, fast, &peak, NULL);
  free(fast);
  /* -1: no memory for the sweep (the figure is then unknown, not zero) */
  if (peak_fast_bytes) *peak_fast_bytes = counted ? peak : -1;
  if (max_address) *max_address = top;
}
