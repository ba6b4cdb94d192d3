/* The exact packer (see packer.h for the search and why it is complete).
 *
 * Search state, all undone exactly on backtrack through one log:
 *  - minoff[i]: the canonical offset of unplaced item i, the aligned top of the highest placed
 *    item overlapping it in time (kept up to date through per-item overlap lists);
 *  - floor[s], rem[s]: per time section, the lowest offset any unplaced item live there can
 *    still take (tops of placed items, raised to the smallest minoff of the unplaced items live
 *    there), and the bytes of those unplaced items.
 * A node tries the unplaced items in increasing (minoff, static rank), starting after its
 * parent's (offset, rank); it prunes an item whose offset is at or above some unplaced item's
 * minoff + size (that item fits below: an earlier branch placed it there), and a child in which
 * some section cannot hold its unplaced bytes above max(floor, offset).
 *
 * Static orders differ a lot in how fast they find a packing, so the search runs several in
 * turn with a node limit that doubles each round; any of them exhausting its tree proves
 * infeasibility (each is complete). States proven dead are remembered per run. */
#include "packer.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "occupancy.h"
#include "time_intervals.h"

enum { R_SOLVED = 0, R_FAIL = 1, R_STOP = 2, R_LIMIT = 3 };

#define DEAD_SLOTS (1u << 16)

typedef struct packer {
  const mb_pack_item *items;
  int32_t n;
  int64_t cap, align;
  int32_t n_sec;
  int32_t *sl, *sr;     /* per item: first and last section it is live in */
  int64_t *floor, *rem; /* per section */
  int32_t *sec_first;   /* CSR (n_sec + 1): items live in each section */
  int32_t *sec_items;
  int32_t *ov_first; /* CSR (n + 1): items overlapping each item in time */
  int32_t *ov_items;
  int64_t *minoff;         /* per item */
  int32_t *klass;          /* per item: items with equal (start, end, size) share a class */
  int32_t *rank, *by_rank; /* static order of the current run */
  bool *placed;
  int64_t *off;
  int32_t n_placed;
  uint32_t *stamp; /* per section: scratch marks for affected sections */
  uint32_t stamp_now;
  /* Undo log: (kind, index, old value); kind 0 = floor[index], 1 = minoff[index]. */
  int8_t *log_kind;
  int32_t *log_idx;
  int64_t *log_val;
  size_t log_len, log_cap;
  /* Dead states (placed set, floors of live sections, (offset, rank) threshold) under two
   * independent 64-bit hashes: a false match needs a 128-bit collision. */
  uint64_t placed_hash[2];
  uint64_t *dead; /* 2 words per slot; 0 = empty */
  int64_t nodes, run_nodes, run_limit, max_nodes;
  double deadline; /* monotonic seconds, 0: none */
  bool stop, oom;
  /* Stack arena of per-node candidate lists (at most n (n + 1) / 2 entries in use). */
  int32_t *arena;
  size_t arena_top, arena_cap;
  int32_t *tmp; /* n entries: merge-sort scratch */
} packer;

static int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

const char *mb_pack_status_name(mb_pack_status s) {
  switch (s) {
    case MB_PACK_SOLVED:
      return "solved";
    case MB_PACK_INFEASIBLE:
      return "infeasible";
    case MB_PACK_BUDGET:
      return "budget exhausted";
  }
  return "?";
}

static bool check_items(const mb_pack_item *items, int32_t n, mb_error *err) {
  for (int32_t i = 0; i < n; i++) {
    if (items[i].size <= 0)
      return mb_fail(err, "pack: item %d: size %lld <= 0", i, (long long)items[i].size);
    if (items[i].size > MB_PACK_MAX_BYTES)
      return mb_fail(err, "pack: item %d: size %lld > 2^61 bytes", i, (long long)items[i].size);
    if (items[i].end < items[i].start)
      return mb_fail(err, "pack: item %d: end %d < start %d", i, items[i].end, items[i].start);
  }
  return true;
}

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t item_key(int32_t i, int which) {
  return mix64((uint64_t)(uint32_t)i * 2 + (uint64_t)which + 0x51ed270b27a1f2c3ULL);
}

static uint64_t section_key(int32_t s, int64_t floor, int which) {
  return mix64(mix64((uint64_t)(uint32_t)s * 2 + (uint64_t)which) ^ (uint64_t)floor);
}

static bool dead_find(const packer *p, uint64_t a, uint64_t b) {
  uint32_t slot = (uint32_t)a & (DEAD_SLOTS - 1);
  for (uint32_t k = 0; k < 4; k++) {
    const uint64_t *e = &p->dead[2 * ((slot + k) & (DEAD_SLOTS - 1))];
    if (e[0] == a && e[1] == b) return true;
    if (e[0] == 0) return false;
  }
  return false;
}

static void dead_insert(packer *p, uint64_t a, uint64_t b) {
  uint32_t slot = (uint32_t)a & (DEAD_SLOTS - 1);
  uint64_t *victim = &p->dead[2 * slot];
  for (uint32_t k = 0; k < 4; k++) {
    uint64_t *e = &p->dead[2 * ((slot + k) & (DEAD_SLOTS - 1))];
    if (e[0] == 0) {
      victim = e;
      break;
    }
  }
  victim[0] = a;
  victim[1] = b;
}

/* ---- static orders ---- */

typedef struct order_key {
  int64_t pressure; /* T: most bytes live at once over the item's lifetime */
  int64_t area;     /* A: size x lifetime */
  int64_t size;     /* Z */
  int32_t width;    /* W: lifetime */
  int32_t start, end, index;
} order_key;

/* The static orders tried in turn, each a string of criteria (all descending). */
static const char *const ORDERS[] = {"TZW", "TAW", "WAT", "TWA"};
#define N_ORDERS ((int)(sizeof ORDERS / sizeof ORDERS[0]))

static int cmp_key_by(const order_key *x, const order_key *y, const char *how) {
  for (const char *c = how; *c; c++) {
    int64_t a = 0, b = 0;
    switch (*c) {
      case 'T':
        a = x->pressure, b = y->pressure;
        break;
      case 'A':
        a = x->area, b = y->area;
        break;
      case 'Z':
        a = x->size, b = y->size;
        break;
      case 'W':
        a = x->width, b = y->width;
        break;
    }
    if (a != b) return a > b ? -1 : 1;
  }
  /* Then interval and size, so interchangeable items end up adjacent, then index. */
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* qsort has no context argument: sort with a small merge sort instead. */
static void sort_keys(order_key *k, order_key *tmp, int32_t n, const char *how) {
  if (n < 2) return;
  int32_t h = n / 2;
  sort_keys(k, tmp, h, how);
  sort_keys(k + h, tmp, n - h, how);
  int32_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = cmp_key_by(&k[j], &k[i], how) < 0 ? k[j++] : k[i++];
  while (i < h) tmp[o++] = k[i++];
  while (j < n) tmp[o++] = k[j++];
  memcpy(k, tmp, sizeof *k * (size_t)n);
}

static void packer_free(packer *p) {
  free(p->sl);
  free(p->sr);
  free(p->floor);
  free(p->rem);
  free(p->sec_first);
  free(p->sec_items);
  free(p->ov_first);
  free(p->ov_items);
  free(p->minoff);
  free(p->klass);
  free(p->rank);
  free(p->by_rank);
  free(p->placed);
  free(p->stamp);
  free(p->log_kind);
  free(p->log_idx);
  free(p->log_val);
  free(p->dead);
  free(p->arena);
  free(p->tmp);
}

typedef struct by_start {
  int32_t start, index;
} by_start;

static int cmp_by_start(const void *a, const void *b) {
  const by_start *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Overlap lists: pairs of items live at a common time, found by sorting on start. */
static bool build_overlaps(packer *p) {
  int32_t n = p->n;
  by_start *v = malloc(sizeof *v * (size_t)n);
  p->ov_first = calloc((size_t)n + 1, sizeof *p->ov_first);
  if (!v || !p->ov_first) {
    free(v);
    return false;
  }
  for (int32_t i = 0; i < n; i++) v[i] = (by_start){p->items[i].start, i};
  qsort(v, (size_t)n, sizeof *v, cmp_by_start);
  size_t pairs = 0;
  for (int pass = 0; pass < 2; pass++) {
    int32_t *fill = NULL;
    if (pass == 1) {
      for (int32_t i = 0; i < n; i++) p->ov_first[i + 1] += p->ov_first[i];
      p->ov_items = malloc(sizeof *p->ov_items * (pairs ? pairs : 1));
      fill = malloc(sizeof *fill * (size_t)n);
      if (!p->ov_items || !fill) {
        free(fill);
        free(v);
        return false;
      }
      memcpy(fill, p->ov_first, sizeof *fill * (size_t)n);
    }
    for (int32_t a = 0; a < n; a++) {
      int32_t i = v[a].index;
      for (int32_t b = a + 1; b < n && v[b].start <= p->items[i].end; b++) {
        int32_t j = v[b].index;
        if (pass == 0) {
          p->ov_first[i + 1]++;
          p->ov_first[j + 1]++;
          pairs += 2;
        } else {
          p->ov_items[fill[i]++] = j;
          p->ov_items[fill[j]++] = i;
        }
      }
    }
    free(fill);
  }
  free(v);
  return true;
}

/* Sections, per-section item lists, overlap lists, classes. False on allocation failure. */
static bool packer_init(packer *p, const mb_pack_item *items, int32_t n, int64_t *offsets) {
  memset(p, 0, sizeof *p);
  p->items = items;
  p->n = n;
  p->off = offsets;
  size_t nn = (size_t)n;
  p->sl = malloc(sizeof *p->sl * nn);
  p->sr = malloc(sizeof *p->sr * nn);
  p->klass = malloc(sizeof *p->klass * nn);
  p->rank = malloc(sizeof *p->rank * nn);
  p->by_rank = malloc(sizeof *p->by_rank * nn);
  p->minoff = calloc(nn, sizeof *p->minoff);
  p->placed = calloc(nn, sizeof *p->placed);
  p->tmp = malloc(sizeof *p->tmp * nn);
  p->dead = calloc(2 * (size_t)DEAD_SLOTS, sizeof *p->dead);
  bool ok = p->sl && p->sr && p->klass && p->rank && p->by_rank && p->minoff && p->placed &&
            p->tmp && p->dead && build_overlaps(p);
  if (ok) {
    /* sections: the elementary time intervals of the items' live ranges */
    for (int32_t i = 0; i < n; i++) {
      p->sl[i] = items[i].start;
      p->sr[i] = items[i].end;
    }
    p->n_sec = mb_time_intervals(p->sl, p->sr, n); /* >= 1 for n >= 1 */
    ok = p->n_sec >= 0;
  }
  if (ok) {
    p->floor = calloc((size_t)p->n_sec, sizeof *p->floor);
    p->rem = calloc((size_t)p->n_sec + 1, sizeof *p->rem);
    p->sec_first = calloc((size_t)p->n_sec + 1, sizeof *p->sec_first);
    p->stamp = calloc((size_t)p->n_sec, sizeof *p->stamp);
    ok = p->floor && p->rem && p->sec_first && p->stamp;
  }
  if (ok) {
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) {
      for (int32_t s = p->sl[i]; s <= p->sr[i]; s++) {
        p->rem[s] += items[i].size;
        p->sec_first[s + 1]++;
      }
      total += (size_t)(p->sr[i] - p->sl[i] + 1);
    }
    for (int32_t s = 0; s < p->n_sec; s++) p->sec_first[s + 1] += p->sec_first[s];
    p->sec_items = malloc(sizeof *p->sec_items * (total ? total : 1));
    int32_t *fill = malloc(sizeof *fill * (size_t)p->n_sec);
    ok = p->sec_items && fill;
    if (ok) {
      memcpy(fill, p->sec_first, sizeof *fill * (size_t)p->n_sec);
      for (int32_t i = 0; i < n; i++)
        for (int32_t s = p->sl[i]; s <= p->sr[i]; s++) p->sec_items[fill[s]++] = i;
    }
    free(fill);
  }
  if (!ok) packer_free(p);
  return ok;
}

/* Static order `how`: fills rank, by_rank and klass. False on allocation failure. */
static bool set_order(packer *p, const char *how) {
  order_key *keys = malloc(sizeof *keys * (size_t)p->n);
  order_key *tmp = malloc(sizeof *tmp * (size_t)p->n);
  if (!keys || !tmp) {
    free(keys);
    free(tmp);
    return false;
  }
  for (int32_t i = 0; i < p->n; i++) {
    const mb_pack_item *it = &p->items[i];
    int64_t pr = 0;
    for (int32_t s = p->sl[i]; s <= p->sr[i]; s++)
      if (p->rem[s] > pr) pr = p->rem[s]; /* rem = all live bytes before the search */
    int32_t width = it->end - it->start + 1;
    /* saturated: a buffer of more than 4 GiB over a schedule near 2^31 steps would overflow */
    int64_t area = it->size > INT64_MAX / width ? INT64_MAX : it->size * width;
    keys[i] = (order_key){pr, area, it->size, width, it->start, it->end, i};
  }
  sort_keys(keys, tmp, p->n, how);
  int32_t k = -1;
  for (int32_t r = 0; r < p->n; r++) {
    int32_t i = keys[r].index;
    p->rank[i] = r;
    p->by_rank[r] = i;
    if (r == 0 || keys[r].start != keys[r - 1].start || keys[r].end != keys[r - 1].end ||
        keys[r].size != keys[r - 1].size)
      k++;
    p->klass[i] = k;
  }
  free(keys);
  free(tmp);
  return true;
}

static void log_push(packer *p, int8_t kind, int32_t idx, int64_t val) {
  if (p->log_len == p->log_cap) {
    size_t cap = p->log_cap ? 2 * p->log_cap : 4096;
    int8_t *a = realloc(p->log_kind, sizeof *a * cap);
    if (a) p->log_kind = a;
    int32_t *b = realloc(p->log_idx, sizeof *b * cap);
    if (b) p->log_idx = b;
    int64_t *c = realloc(p->log_val, sizeof *c * cap);
    if (c) p->log_val = c;
    if (!a || !b || !c) {
      p->oom = p->stop = true;
      return;
    }
    p->log_cap = cap;
  }
  p->log_kind[p->log_len] = kind;
  p->log_idx[p->log_len] = idx;
  p->log_val[p->log_len++] = val;
}

static void undo_to(packer *p, size_t mark) {
  while (p->log_len > mark) {
    p->log_len--;
    if (p->log_kind[p->log_len] == 0)
      p->floor[p->log_idx[p->log_len]] = p->log_val[p->log_len];
    else
      p->minoff[p->log_idx[p->log_len]] = p->log_val[p->log_len];
  }
}

static void mark_sections(packer *p, int32_t i) {
  for (int32_t s = p->sl[i]; s <= p->sr[i]; s++) p->stamp[s] = p->stamp_now;
}

/* Places item c at offset o and propagates minoff and floors (all logged). */
static void place(packer *p, int32_t c, int64_t o) {
  const int64_t top = o + p->items[c].size, atop = align_up(top, p->align);
  p->placed[c] = true;
  p->placed_hash[0] ^= item_key(c, 0);
  p->placed_hash[1] ^= item_key(c, 1);
  p->off[c] = o;
  p->n_placed++;
  if (++p->stamp_now == 0) { /* wrapped: clear old marks */
    memset(p->stamp, 0, sizeof *p->stamp * (size_t)p->n_sec);
    p->stamp_now = 1;
  }
  for (int32_t s = p->sl[c]; s <= p->sr[c]; s++) {
    p->rem[s] -= p->items[c].size;
    if (p->floor[s] < top) {
      log_push(p, 0, s, p->floor[s]);
      p->floor[s] = top;
    }
    p->stamp[s] = p->stamp_now;
  }
  for (int32_t k = p->ov_first[c]; k < p->ov_first[c + 1]; k++) {
    int32_t j = p->ov_items[k];
    if (p->placed[j] || p->minoff[j] >= atop) continue;
    log_push(p, 1, j, p->minoff[j]);
    p->minoff[j] = atop;
    mark_sections(p, j);
  }
  /* Unallocated floor: a section's floor is at least the smallest minoff of its unplaced
   * items (only sections whose items changed need a look). */
  for (int32_t s = 0; s < p->n_sec; s++) {
    if (p->stamp[s] != p->stamp_now || p->rem[s] <= 0) continue;
    int64_t m = INT64_MAX;
    for (int32_t k = p->sec_first[s]; k < p->sec_first[s + 1]; k++) {
      int32_t j = p->sec_items[k];
      if (!p->placed[j] && p->minoff[j] < m) m = p->minoff[j];
    }
    if (m != INT64_MAX && p->floor[s] < m) {
      log_push(p, 0, s, p->floor[s]);
      p->floor[s] = m;
    }
  }
}

static void unplace(packer *p, int32_t c, size_t mark) {
  undo_to(p, mark);
  p->placed[c] = false;
  p->placed_hash[0] ^= item_key(c, 0);
  p->placed_hash[1] ^= item_key(c, 1);
  p->n_placed--;
  for (int32_t s = p->sl[c]; s <= p->sr[c]; s++) p->rem[s] += p->items[c].size;
}

static bool arena_reserve(packer *p, int32_t m) {
  if (p->arena_top + (size_t)m <= p->arena_cap) return true;
  size_t cap = p->arena_cap ? 2 * p->arena_cap : 4096;
  while (cap < p->arena_top + (size_t)m) cap *= 2;
  int32_t *a = realloc(p->arena, sizeof *a * cap);
  if (!a) {
    p->oom = p->stop = true;
    return false;
  }
  p->arena = a;
  p->arena_cap = cap;
  return true;
}

/* Stable merge sort of ids by minoff (the input is in rank order, so ties stay by rank). */
static void sort_by_minoff(packer *p, int32_t *v, int32_t n) {
  if (n < 2) return;
  if (n <= 16) { /* insertion sort, stable */
    for (int32_t i = 1; i < n; i++) {
      int32_t x = v[i], j = i;
      while (j > 0 && p->minoff[v[j - 1]] > p->minoff[x]) {
        v[j] = v[j - 1];
        j--;
      }
      v[j] = x;
    }
    return;
  }
  int32_t h = n / 2;
  sort_by_minoff(p, v, h);
  sort_by_minoff(p, v + h, n - h);
  int32_t i = 0, j = h, o = 0;
  while (i < h && j < n) p->tmp[o++] = p->minoff[v[j]] < p->minoff[v[i]] ? v[j++] : v[i++];
  while (i < h) p->tmp[o++] = v[i++];
  while (j < n) p->tmp[o++] = v[j++];
  memcpy(v, p->tmp, sizeof *v * (size_t)n);
}

/* One node: see the comment at the top. */
static int search(packer *p, int64_t min_off, int32_t min_rank) {
  if (p->n_placed == p->n) return R_SOLVED;
  p->nodes++;
  if ((p->nodes & 255) == 0 && p->deadline > 0 && mb_wall_seconds() > p->deadline) p->stop = true;
  if (p->max_nodes > 0 && p->nodes >= p->max_nodes) p->stop = true;
  if (p->stop) return R_STOP;
  if (++p->run_nodes > p->run_limit) return R_LIMIT;

  uint64_t ha = p->placed_hash[0] ^ mix64((uint64_t)min_off ^ ((uint64_t)min_rank << 40));
  uint64_t hb = p->placed_hash[1] ^ mix64((uint64_t)min_off * 31 + (uint64_t)min_rank + 7);
  for (int32_t s = 0; s < p->n_sec; s++) {
    if (p->rem[s] <= 0) continue;
    ha ^= section_key(s, p->floor[s], 0);
    hb ^= section_key(s, p->floor[s], 1);
  }
  ha |= 1; /* 0 marks an empty slot */
  if (dead_find(p, ha, hb)) return R_FAIL;

  /* This node's candidates: the unplaced items in (minoff, rank) order, on a stack arena
   * (children restore minoff exactly, so the order stays valid for the whole loop). */
  if (!arena_reserve(p, p->n - p->n_placed)) return R_STOP;
  const size_t base = p->arena_top;
  int32_t m = 0;
  int64_t min_height = INT64_MAX;
  for (int32_t r = 0; r < p->n; r++) {
    int32_t i = p->by_rank[r];
    if (p->placed[i]) continue;
    p->arena[base + (size_t)m++] = i;
    if (p->minoff[i] + p->items[i].size < min_height) min_height = p->minoff[i] + p->items[i].size;
  }
  sort_by_minoff(p, p->arena + base, m);
  p->arena_top = base + (size_t)m;

  int64_t last_off = min_off;
  int32_t last_class = -1;
  int r = R_FAIL;
  for (int32_t pos = 0; pos < m; pos++) {
    int32_t c = p->arena[base + (size_t)pos];
    /* Only after the parent's (offset, rank): see the comment at the top. */
    if (p->minoff[c] < min_off || (p->minoff[c] == min_off && p->rank[c] < min_rank)) continue;
    /* Dominance: at or above min_height, the item defining it would fit below. */
    if (p->minoff[c] >= min_height) break;
    const int64_t o = p->minoff[c];
    const bool same_class = p->klass[c] == last_class && o == last_off;
    last_off = o;
    last_class = p->klass[c];
    if (same_class || o + p->items[c].size > p->cap) continue; /* interchangeable: tried */

    size_t mark = p->log_len;
    place(p, c, o);
    bool fits = !p->stop;
    for (int32_t s = 0; s < p->n_sec && fits; s++)
      if (p->rem[s] > 0 && (p->floor[s] > o ? p->floor[s] : o) + p->rem[s] > p->cap) fits = false;
    r = fits ? search(p, o, p->rank[c]) : R_FAIL;
    if (r == R_SOLVED) break;
    unplace(p, c, mark);
    if (r != R_FAIL) break;
  }
  p->arena_top = base;
  if (r == R_FAIL) dead_insert(p, ha, hb);
  return r;
}

bool mb_pack(const mb_pack_item *items, int32_t n, const mb_pack_options *opt, int64_t *offsets,
             mb_pack_result *res, mb_error *err) {
  double t0 = mb_wall_seconds();
  memset(res, 0, sizeof *res);
  if (opt->capacity < 0) return mb_fail(err, "pack: capacity %lld < 0", (long long)opt->capacity);
  if (opt->alignment < 1)
    return mb_fail(err, "pack: alignment %lld < 1", (long long)opt->alignment);
  if (n < 0) return mb_fail(err, "pack: item count %d < 0", n);
  if (!check_items(items, n, err)) return false;
  if (opt->capacity > MB_PACK_MAX_BYTES)
    return mb_fail(err, "pack: capacity %lld > 2^61 bytes", (long long)opt->capacity);
  if (n == 0) {
    res->status = MB_PACK_SOLVED;
    return true;
  }
  packer p;
  if (!packer_init(&p, items, n, offsets))
    return mb_fail(err, "pack: out of memory for %d items", n);
  p.cap = opt->capacity;
  /* an alignment above the capacity allows offset 0 only, as capacity + 1 does; the search's
   * sums (offset + size, aligned up) then stay far inside int64 */
  p.align = opt->alignment <= p.cap ? opt->alignment : p.cap + 1;
  p.max_nodes = opt->max_nodes;
  p.deadline = opt->budget_seconds > 0 ? t0 + opt->budget_seconds : 0;
  /* Quick infeasibility: a section whose live bytes already exceed the capacity. */
  int r = R_FAIL;
  bool possible = true;
  for (int32_t s = 0; s < p.n_sec; s++)
    if (p.rem[s] > p.cap) possible = false;
  /* Round robin over static orders with a doubling node limit. */
  for (int64_t limit = 2 * (int64_t)n; possible; limit *= 2) {
    for (int k = 0; k < N_ORDERS; k++) {
      if (!set_order(&p, ORDERS[k])) {
        p.oom = true;
        break;
      }
      memset(p.dead, 0, sizeof *p.dead * 2 * (size_t)DEAD_SLOTS); /* ranks changed */
      p.run_nodes = 0;
      p.run_limit = limit;
      r = search(&p, 0, 0);
      if (r != R_LIMIT) break;
    }
    if (r != R_LIMIT || p.oom) break;
  }
  bool oom = p.oom;
  res->nodes = p.nodes;
  packer_free(&p);
  if (oom) return mb_fail(err, "pack: out of memory during search (%d items)", n);
  res->status = r == R_SOLVED ? MB_PACK_SOLVED : r == R_FAIL ? MB_PACK_INFEASIBLE : MB_PACK_BUDGET;
  if (r == R_SOLVED)
    for (int32_t i = 0; i < n; i++)
      if (offsets[i] + items[i].size > res->height) res->height = offsets[i] + items[i].size;
  res->seconds = mb_wall_seconds() - t0;
  return true;
}

/* ---- best fit, for comparison ---- */

typedef struct bf_key {
  int64_t size;
  int32_t lifetime, index;
} bf_key;

static int cmp_bf(const void *a, const void *b) {
  const bf_key *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->lifetime != y->lifetime) return x->lifetime > y->lifetime ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

static bool best_fit_run(const mb_pack_item *items, const bf_key *order, int32_t n, int32_t horizon,
                         int64_t capacity, int64_t alignment, int64_t *offsets, int32_t *left_out,
                         int64_t *height) {
  mb_occupancy *occ = mb_occupancy_new(horizon, capacity, n);
  if (!occ) return false;
  *left_out = 0;
  *height = 0;
  for (int32_t r = 0; r < n; r++) {
    int32_t i = order[r].index;
    int64_t off;
    if (mb_occupancy_best_fit(occ, items[i].start, items[i].end, items[i].size, alignment, &off)) {
      mb_occupancy_place(occ, i, items[i].start, items[i].end, off, items[i].size);
      if (offsets) offsets[i] = off;
      if (off + items[i].size > *height) *height = off + items[i].size;
    } else {
      if (offsets) offsets[i] = -1;
      (*left_out)++;
    }
  }
  mb_occupancy_free(occ);
  return true;
}

bool mb_pack_best_fit(const mb_pack_item *items, int32_t n, int64_t capacity, int64_t alignment,
                      int64_t *offsets, int32_t *left_out, int64_t *unbounded_height,
                      mb_error *err) {
  if (alignment < 1) return mb_fail(err, "pack: alignment %lld < 1", (long long)alignment);
  if (n < 0 || !check_items(items, n, err))
    return n < 0 ? mb_fail(err, "pack: n %d < 0", n) : false;
  bf_key *order = malloc(sizeof *order * (size_t)(n > 0 ? n : 1));
  if (!order) return mb_fail(err, "pack: out of memory for %d items", n);
  int32_t horizon = 0;
  int64_t total = 0;
  for (int32_t i = 0; i < n; i++) {
    order[i] = (bf_key){items[i].size, items[i].end - items[i].start, i};
    if (items[i].end + 1 > horizon) horizon = items[i].end + 1;
    total = items[i].size <= INT64_MAX - total ? total + items[i].size : INT64_MAX;
  }
  qsort(order, (size_t)n, sizeof *order, cmp_bf);
  int64_t h;
  int32_t lo;
  /* Unbounded: every item fits below the sum of all sizes plus alignment slack (INT64_MAX when
   * that does not fit in 64 bits: an alignment near it leaves room for one item only anyway) */
  int64_t slack = alignment <= (INT64_MAX - total) / (n > 0 ? n : 1) ? (int64_t)n * alignment
                                                                     : INT64_MAX - total;
  bool ok =
      best_fit_run(items, order, n, horizon, capacity, alignment, offsets, left_out, &h) &&
      best_fit_run(items, order, n, horizon, total + slack, alignment, NULL, &lo, unbounded_height);
  free(order);
  if (!ok) return mb_fail(err, "pack: out of memory for %d items", n);
  return true;
}
