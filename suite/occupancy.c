/* Fast-memory occupancy as a segment tree over time, its nodes made on demand on long
 * schedules.
 *
 * The tree is the classic one over [0, T) (T = schedule length, node [lo, hi] split at
 * mid = lo + (hi - lo) / 2), but only the nodes that a placed rectangle has reached exist: a
 * rectangle creates the O(log T) canonical nodes that cover its live range exactly and their
 * ancestors, so memory is O(n log T) for n rectangles placed, whatever T (up to 2^31 steps:
 * no array is indexed by time). On short schedules (at most ~4 steps per buffer) all the
 * nodes are made at once in heap order instead, the layout the walk is fastest on. Every node
 * counts the rectangles stored in its subtree. The rectangles live at some time in
 * [start, end] are those stored at nodes whose time range meets [start, end]: the query walks those
 * nodes, skipping empty subtrees, so it costs O(log T + k) for short ranges and O(k log T) at worst
 * (k = rectangles found; a rectangle stored at several of the nodes walked is reported at one of
 * them). Nodes hold copies of the rectangles' times and addresses, so the walk reads only the tree.
 * The address ranges found are then sorted and swept to produce the gaps: O(k log k). Nothing scans
 * all placed buffers.
 *
 * Why this shape and not a tree over compressed time (the distinct boundaries): the ids a
 * query reports come in the tree's walk order, and callers depend on that order (the greedy
 * evicts and re-inserts in it, the mallocGame sums its picture in it, in floating point). A
 * tree over the whole schedule with absent empty nodes walks exactly as the dense array tree
 * of earlier versions did, so every result stays bit for bit what it was.
 *
 * Queries share scratch arrays inside the occupancy (sized for all ids), so one occupancy
 * must not be queried from two threads at once. */
#include "occupancy.h"

#include <stdlib.h>
#include <string.h>

#include "time_intervals.h"

typedef struct rect {
  int32_t start, end;
  int64_t offset, size;
  bool placed;
} rect;

typedef struct span {
  int64_t lo, hi; /* address range [lo, hi) */
} span;

/* A rectangle as stored in a node: a copy of what queries need, so a query never touches the
 * per-id array (random accesses that miss the cache on large workloads). */
typedef struct entry {
  int32_t id, start;
  int64_t lo, hi; /* address range [lo, hi) */
} entry;

/* The rectangles stored at a node. A node's time range is implied by the path from the root. */
typedef struct node_list {
  entry *e;
  int32_t len, cap;
  int32_t starting; /* entries whose live range starts at the node's first time step */
} node_list;

struct mb_occupancy {
  int32_t schedule_length;
  int64_t capacity;
  int32_t max_id;
  int32_t count;
  int32_t leaves; /* schedule_length, at least 1 */
  rect *rects;    /* max_id entries */
  /* Nodes: n_nodes made so far (room for cap_nodes); node 0 is the root [0, leaves). */
  int32_t n_nodes, cap_nodes;
  node_list *lists; /* per node: the rectangles stored there */
  int32_t *subtree; /* per node: rectangles stored in its subtree (what a walk reads first) */
  /* per node: its children's indices, 0 = absent (the root is nobody's child); NULL when the
   * tree is dense: all 4 x leaves nodes made at once, the children of x at 2x + 1, 2x + 2 */
  int32_t (*child)[2];
  span *scratch; /* max_id entries: address ranges collected by a query */
  int32_t *ids;  /* max_id entries: ids collected by a query */
};

mb_occupancy *mb_occupancy_new(int32_t schedule_length, int64_t capacity, int32_t max_id) {
  if (schedule_length < 0 || capacity < 0 || max_id < 0) return NULL;
  mb_occupancy *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  size_t n = max_id > 0 ? (size_t)max_id : 1;
  o->leaves = schedule_length > 0 ? schedule_length : 1;
  /* Short schedules: the whole tree at once, laid out in heap order as earlier versions did,
   * which measured faster there than nodes made on demand (no child links to read); memory
   * stays O(max_id). */
  bool dense = mb_time_steps_dense(o->leaves, (int64_t)n);
  o->cap_nodes = dense ? 4 * o->leaves : 64;
  o->rects = calloc(n, sizeof *o->rects);
  o->lists = calloc((size_t)o->cap_nodes, sizeof *o->lists);
  o->subtree = calloc((size_t)o->cap_nodes, sizeof *o->subtree);
  o->child = dense ? NULL : calloc((size_t)o->cap_nodes, sizeof *o->child);
  o->scratch = malloc(n * sizeof *o->scratch);
  o->ids = malloc(n * sizeof *o->ids);
  if (!o->rects || !o->lists || !o->subtree || (!dense && !o->child) || !o->scratch || !o->ids) {
    mb_occupancy_free(o);
    return NULL;
  }
  o->n_nodes = dense ? o->cap_nodes : 1; /* (sparse: the root) */
  o->schedule_length = schedule_length;
  o->capacity = capacity;
  o->max_id = max_id;
  return o;
}

void mb_occupancy_free(mb_occupancy *o) {
  if (!o) return;
  if (o->lists)
    for (int32_t i = 0; i < o->n_nodes; i++) free(o->lists[i].e);
  free(o->lists);
  free(o->subtree);
  free(o->child);
  free(o->rects);
  free(o->scratch);
  free(o->ids);
  free(o);
}

/* Keeps the nodes made so far (and their lists' memory) for the next placements. */
void mb_occupancy_clear(mb_occupancy *o) {
  for (int32_t i = 0; i < o->max_id; i++) o->rects[i].placed = false;
  for (int32_t i = 0; i < o->n_nodes; i++) o->lists[i].len = o->lists[i].starting = 0;
  memset(o->subtree, 0, (size_t)o->n_nodes * sizeof *o->subtree);
  o->count = 0;
}

/* ---- the segment tree ---- */

/* Child `side` (0 left, 1 right) of the internal node x, or 0 when it was never made. */
static inline int32_t child_of(const mb_occupancy *o, int32_t x, int side) {
  return o->child ? o->child[x][side] : 2 * x + 1 + side;
}

static inline int32_t subtree_of(const mb_occupancy *o, int32_t x) { return x ? o->subtree[x] : 0; }

/* Makes child `side` of the sparse tree's node x; its index, or 0 when the arrays cannot
 * grow. */
static int32_t new_child(mb_occupancy *o, int32_t x, int side) {
  if (o->n_nodes == o->cap_nodes) {
    if (o->cap_nodes > INT32_MAX / 2) return 0;
    size_t cap = 2 * (size_t)o->cap_nodes;
    node_list *l = realloc(o->lists, sizeof *l * cap);
    if (l) o->lists = l;
    int32_t *t = l ? realloc(o->subtree, sizeof *t * cap) : NULL;
    if (t) o->subtree = t;
    int32_t(*c)[2] = t ? realloc(o->child, sizeof *c * cap) : NULL;
    if (!c) return 0;
    o->child = c;
    o->cap_nodes = (int32_t)cap;
  }
  int32_t y = o->n_nodes++;
  memset(&o->lists[y], 0, sizeof *o->lists);
  o->subtree[y] = 0;
  o->child[y][0] = o->child[y][1] = 0;
  o->child[x][side] = y;
  return y;
}

/* Adds (delta = +1) or removes (-1) rectangle r at the canonical nodes of [a, b] below node x
 * (time range [lo, hi], meeting [a, b]), making the nodes it needs on insertion. False when a
 * node or a list cannot grow (allocation failure) on insertion. */
static bool tree_update(mb_occupancy *o, int32_t x, int32_t lo, int32_t hi, int32_t a, int32_t b,
                        const entry *r, int delta) {
  node_list *l = &o->lists[x];
  if (a <= lo && hi <= b) {
    if (delta > 0) {
      if (l->len == l->cap) {
        int32_t cap = l->cap ? 2 * l->cap : 4;
        entry *e = realloc(l->e, sizeof *e * (size_t)cap);
        if (!e) return false;
        l->e = e;
        l->cap = cap;
      }
      l->e[l->len++] = *r;
      l->starting += r->start == lo;
    } else {
      for (int32_t i = 0; i < l->len; i++)
        if (l->e[i].id == r->id) {
          l->starting -= l->e[i].start == lo;
          l->e[i] = l->e[--l->len];
          break;
        }
    }
    o->subtree[x] =
        l->len +
        (lo < hi ? subtree_of(o, child_of(o, x, 0)) + subtree_of(o, child_of(o, x, 1)) : 0);
    return true;
  }
  int32_t mid = lo + (hi - lo) / 2;
  for (int side = 0; side < 2; side++) {
    int32_t clo = side ? mid + 1 : lo, chi = side ? hi : mid;
    if (b < clo || chi < a) continue;
    int32_t c = child_of(o, x, side);
    if (!c && delta < 0) continue; /* nothing was stored there */
    if (!c && !(c = new_child(o, x, side))) return false;
    if (!tree_update(o, c, clo, chi, a, b, r, delta)) return false;
  }
  o->subtree[x] = o->lists[x].len + subtree_of(o, child_of(o, x, 0)) +
                  subtree_of(o, child_of(o, x, 1)); /* (lists may have moved) */
  return true;
}

bool mb_occupancy_place(mb_occupancy *o, int32_t id, int32_t start, int32_t end, int64_t offset,
                        int64_t size) {
  if (id < 0 || id >= o->max_id || start > end || start < 0 || end >= o->leaves || size <= 0 ||
      offset < 0 || o->rects[id].placed)
    return false;
  const entry r = {id, start, offset, offset + size};
  if (!tree_update(o, 0, 0, o->leaves - 1, start, end, &r, +1)) {
    tree_update(o, 0, 0, o->leaves - 1, start, end, &r, -1); /* drop the partial insertion */
    return false;
  }
  o->rects[id] = (rect){start, end, offset, size, true};
  o->count++;
  return true;
}

bool mb_occupancy_remove(mb_occupancy *o, int32_t id) {
  if (id < 0 || id >= o->max_id || !o->rects[id].placed) return false;
  const entry r = {id, o->rects[id].start, 0, 0};
  tree_update(o, 0, 0, o->leaves - 1, o->rects[id].start, o->rects[id].end, &r, -1);
  o->rects[id].placed = false;
  o->count--;
  return true;
}

bool mb_occupancy_is_placed(const mb_occupancy *o, int32_t id) {
  return id >= 0 && id < o->max_id && o->rects[id].placed;
}

int32_t mb_occupancy_count(const mb_occupancy *o) { return o->count; }

/* ---- queries ---- */

/* Appends every rectangle live at some time in [s, e] to ids[] and its address range to
 * scratch[], each once: a rectangle [a, b] is stored at disjoint canonical nodes, and is
 * reported only at the node containing max(a, s), its first time inside the query. Nodes that
 * store it lie inside [a, b], so a <= lo, and node x (time range [lo, hi]) exists and meets
 * [s, e], so s <= hi. Hence at a node with lo <= s every stored rectangle is reported (its
 * first time inside the query is s), and past the query's start (s < lo) only those with
 * a == lo: the node's `starting` count says how many to look for, so most nodes a long query
 * walks are passed without reading their lists. */
static void report(const mb_occupancy *o, const entry *r, int32_t *k) {
  o->ids[*k] = r->id;
  o->scratch[*k].lo = r->lo;
  o->scratch[*k].hi = r->hi;
  (*k)++;
}

static void collect_rec(const mb_occupancy *o, int32_t x, int32_t lo, int32_t hi, int32_t s,
                        int32_t e, int32_t *k) {
  if (o->subtree[x] == 0) return;
  const node_list *l = &o->lists[x];
  if (lo <= s) {
    for (int32_t i = 0; i < l->len; i++) report(o, &l->e[i], k);
  } else {
    for (int32_t i = 0, left = l->starting; left > 0 && i < l->len; i++)
      if (l->e[i].start == lo) {
        report(o, &l->e[i], k);
        left--;
      }
  }
  if (lo == hi) return;
  int32_t mid = lo + (hi - lo) / 2;
  int32_t c0 = child_of(o, x, 0), c1 = child_of(o, x, 1);
  if (c0 && s <= mid) collect_rec(o, c0, lo, mid, s, e, k);
  if (c1 && mid < e) collect_rec(o, c1, mid + 1, hi, s, e, k);
}

/* (Writes through the pointer members only: see the thread note at the top.) */
static int32_t collect(const mb_occupancy *o, int32_t s, int32_t e) {
  if (s < 0) s = 0;
  if (e > o->leaves - 1) e = o->leaves - 1;
  if (s > e) return 0;
  int32_t k = 0;
  collect_rec(o, 0, 0, o->leaves - 1, s, e, &k);
  return k;
}

static bool span_less(const span *x, const span *y) {
  return x->lo < y->lo || (x->lo == y->lo && x->hi < y->hi);
}

/* Sorts spans by (lo, hi): quicksort with an inlined comparison (qsort's indirect calls were a
 * quarter of a placement's time), insertion sort below 16 elements. */
static void sort_spans(span *v, int32_t n) {
  while (n > 16) {
    span *m = &v[n / 2], *z = &v[n - 1]; /* median of three as pivot */
    if (span_less(m, v)) {
      span t = *m;
      *m = *v;
      *v = t;
    }
    if (span_less(z, m)) {
      span t = *z;
      *z = *m;
      *m = t;
    }
    if (span_less(m, v)) {
      span t = *m;
      *m = *v;
      *v = t;
    }
    span pivot = *m;
    int32_t i = 0, j = n - 1;
    for (;;) {
      while (span_less(&v[i], &pivot)) i++;
      while (span_less(&pivot, &v[j])) j--;
      if (i >= j) break;
      span t = v[i];
      v[i++] = v[j];
      v[j--] = t;
    }
    /* Recurse into the smaller part, loop on the larger: O(log n) stack. */
    if (j + 1 < n - j - 1) {
      sort_spans(v, j + 1);
      v += j + 1;
      n -= j + 1;
    } else {
      sort_spans(v + j + 1, n - j - 1);
      n = j + 1;
    }
  }
  for (int32_t i = 1; i < n; i++) {
    span x = v[i];
    int32_t j = i;
    while (j > 0 && span_less(&x, &v[j - 1])) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
}

/* Collects the occupied address ranges over [s, e] into o->scratch, sorted by offset.
 * (Writes through the pointer members only: see the thread note at the top.) */
static int32_t occupied_spans(const mb_occupancy *o, int32_t s, int32_t e) {
  int32_t k = collect(o, s, e);
  sort_spans(o->scratch, k);
  return k;
}

/* Iterates the free gaps given sorted spans: returns false when there are no more. */
typedef struct gap_iter {
  const span *spans;
  int32_t n, i;
  int64_t cursor, capacity;
} gap_iter;

static bool next_gap(gap_iter *it, mb_gap *g) {
  while (it->cursor < it->capacity) {
    if (it->i >= it->n) {
      g->offset = it->cursor;
      g->size = it->capacity - it->cursor;
      it->cursor = it->capacity;
      return true;
    }
    const span *sp = &it->spans[it->i++];
    int64_t lo = sp->lo < it->capacity ? sp->lo : it->capacity;
    if (lo > it->cursor) {
      g->offset = it->cursor;
      g->size = lo - it->cursor;
      if (sp->hi > it->cursor) it->cursor = sp->hi;
      return true;
    }
    if (sp->hi > it->cursor) it->cursor = sp->hi;
  }
  return false;
}

static gap_iter gaps_begin(const mb_occupancy *o, int32_t start, int32_t end) {
  gap_iter it = {o->scratch, 0, 0, 0, o->capacity};
  if (start <= end)
    it.n = occupied_spans(o, start, end);
  else
    it.cursor = o->capacity; /* empty time range: no gaps */
  return it;
}

int32_t mb_occupancy_gaps(const mb_occupancy *o, int32_t start, int32_t end, mb_gap *out,
                          int32_t max) {
  gap_iter it = gaps_begin(o, start, end);
  int32_t n = 0;
  mb_gap g;
  while (next_gap(&it, &g)) {
    if (n < max) out[n] = g;
    n++;
  }
  return n;
}

/* The aligned offset inside gap g where `size` bytes go, or -1 if they do not fit. */
static int64_t fit_in_gap(const mb_gap *g, int64_t size, int64_t alignment) {
  int64_t a = alignment > 1 ? alignment : 1;
  /* the padding up to the next multiple of a, computed without offset + a - 1, which overflows
   * for an alignment near INT64_MAX */
  int64_t rem = g->offset % a, pad = rem ? a - rem : 0;
  if (pad > g->size || g->size - pad < size) return -1;
  return g->offset + pad;
}

bool mb_occupancy_best_fit(const mb_occupancy *o, int32_t start, int32_t end, int64_t size,
                           int64_t alignment, int64_t *offset) {
  if (size <= 0) return false;
  gap_iter it = gaps_begin(o, start, end);
  mb_gap g;
  int64_t best_size = -1, best_off = -1;
  while (next_gap(&it, &g)) {
    int64_t off = fit_in_gap(&g, size, alignment);
    /* Strictly smaller only: gaps come in offset order, so ties keep the lowest offset. */
    if (off >= 0 && (best_size < 0 || g.size < best_size)) {
      best_size = g.size;
      best_off = off;
    }
  }
  if (best_off < 0) return false;
  *offset = best_off;
  return true;
}

bool mb_occupancy_lowest_fit(const mb_occupancy *o, int32_t start, int32_t end, int64_t size,
                             int64_t alignment, int64_t *offset) {
  if (size <= 0) return false;
  gap_iter it = gaps_begin(o, start, end);
  mb_gap g;
  while (next_gap(&it, &g)) {
    int64_t off = fit_in_gap(&g, size, alignment);
    if (off >= 0) {
      *offset = off;
      return true;
    }
  }
  return false;
}

int32_t mb_occupancy_conflicts(const mb_occupancy *o, int32_t start, int32_t end, int64_t offset,
                               int64_t size, int32_t *out, int32_t max) {
  if (start > end) return 0;
  int32_t k = collect(o, start, end);
  int32_t n = 0;
  for (int32_t i = 0; i < k; i++) {
    const span *x = &o->scratch[i];
    if (x->lo < offset + size && offset < x->hi) {
      if (n < max) out[n] = o->ids[i];
      n++;
    }
  }
  return n;
}
