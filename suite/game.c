/* The mallocGame (contract and rules in game.h, observation fields in datasets/GAME.md).
 *
 * State = occupancy of fast memory (suite/occupancy.h) + incremental cost state (suite/cost.h)
 * + per-buffer offsets + an undo stack of decisions + the cursor in the visiting order. The
 * candidates of the current buffer are computed once when the game arrives at a decision (one
 * gap query) and cached, so mask, candidate_offset and observe do not query the occupancy
 * again (observe does one more query for the occupancy picture). Every array is sized in
 * mb_game_new from the workload, so nothing allocates afterwards. */
#include "game.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "occupancy.h"
#include "solver.h"

typedef struct candidate {
  int64_t offset;
  int64_t gap_offset, gap_size;
  bool top; /* the gap's top-aligned position (not its lowest one) */
} candidate;

typedef struct undo_entry {
  int32_t buffer;
  int32_t cursor; /* cursor of the decision (visit[cursor] == buffer) */
  int64_t offset; /* MB_SLOW for the slow action */
  uint64_t serial;
} undo_entry;

struct mb_game {
  const mb_workload *w;
  mb_hardware hw_copy;   /* the game's own copy: callers may pass a temporary */
  const mb_hardware *hw; /* == &hw_copy */
  mb_game_config cfg;
  int32_t n_slots; /* A - 1 candidate slots */

  /* Fixed per game. */
  int32_t n_visit;
  int32_t *visit;           /* visiting order */
  mb_time_ps *benefit;      /* standalone benefit per buffer */
  mb_time_ps *benefit_left; /* n_visit + 1: benefit of visit[i..] */
  double max_benefit_per_byte;
  int32_t max_uses;
  mb_time_ps t_slow;
  double t_norm; /* T_slow as the reward denominator (>= 1) */
  int32_t root_cursor;

  /* State. */
  mb_occupancy *occ;
  mb_cost_state cost;
  int64_t *offset; /* per buffer: offset or MB_SLOW */
  undo_entry *stack;
  int32_t depth;
  uint64_t last_serial; /* counter of steps ever taken (copied by mb_game_copy) */
  uint64_t salt;        /* per game: serials of two games never coincide after they diverge */
  int32_t cursor;

  /* Candidates of visit[cursor] (valid when cursor < n_visit). */
  int32_t n_cand;
  candidate *cand;
  int64_t free_bytes; /* total size of the free gaps over its live range */
  double potential;   /* Phi of this state (mb_game_potential) when potential_ok */
  bool potential_ok;

  /* Scratch. */
  mb_gap *gaps; /* n_buffers + 1 */
  int32_t n_gaps_max;
  int32_t *ids;     /* n_buffers */
  int64_t *la_size; /* lookahead */
  mb_time_ps *la_benefit;
  double *demand; /* MB_GAME_OBS_PER_DEMAND_BIN * demand_bins */
};

/* ---- config ---- */

void mb_game_config_default(mb_game_config *c) {
  c->n_actions = 16;
  c->order = MB_GAME_ORDER_HEURISTIC;
  c->addr_bins = 16;
  c->time_bins = 16;
  c->lookahead = 32;
  c->auto_slow = true;
  c->next_buffers = 0;
  c->gain_features = false;
  c->demand_bins = 0;
  c->shaping = 0;
}

bool mb_game_config_check(const mb_game_config *c, mb_error *err) {
  if (c->n_actions < 2 || c->n_actions > 1024)
    return mb_fail(err, "game config: n_actions %d outside [2, 1024]", (int)c->n_actions);
  if (c->order != MB_GAME_ORDER_HEURISTIC && c->order != MB_GAME_ORDER_START &&
      c->order != MB_GAME_ORDER_SIZE)
    return mb_fail(err, "game config: order %d is not heuristic, start or size", (int)c->order);
  if (c->addr_bins < 1 || c->addr_bins > 256)
    return mb_fail(err, "game config: addr_bins %d outside [1, 256]", (int)c->addr_bins);
  if (c->time_bins < 1 || c->time_bins > 256)
    return mb_fail(err, "game config: time_bins %d outside [1, 256]", (int)c->time_bins);
  if (c->lookahead < 0 || c->lookahead > 4096)
    return mb_fail(err, "game config: lookahead %d outside [0, 4096]", (int)c->lookahead);
  if (c->next_buffers < 0 || c->next_buffers > 64)
    return mb_fail(err, "game config: next_buffers %d outside [0, 64]", (int)c->next_buffers);
  if (c->demand_bins < 0 || c->demand_bins > 256)
    return mb_fail(err, "game config: demand_bins %d outside [0, 256]", (int)c->demand_bins);
  if (!(c->shaping >= 0 && c->shaping <= 100))
    return mb_fail(err, "game config: shaping %g outside [0, 100]", c->shaping);
  return true;
}

bool mb_game_order_parse(const char *s, mb_game_order *out) {
  if (!strcmp(s, "heuristic"))
    *out = MB_GAME_ORDER_HEURISTIC;
  else if (!strcmp(s, "start"))
    *out = MB_GAME_ORDER_START;
  else if (!strcmp(s, "size"))
    *out = MB_GAME_ORDER_SIZE;
  else
    return false;
  return true;
}

const char *mb_game_order_name(mb_game_order order) {
  switch (order) {
    case MB_GAME_ORDER_HEURISTIC:
      return "heuristic";
    case MB_GAME_ORDER_START:
      return "start";
    case MB_GAME_ORDER_SIZE:
      return "size";
  }
  return "?";
}

int32_t mb_game_observation_size(const mb_game_config *c) {
  return MB_GAME_OBS_BUFFER + c->addr_bins * c->time_bins +
         (c->n_actions - 1) * MB_GAME_OBS_PER_CANDIDATE + c->next_buffers * MB_GAME_OBS_PER_NEXT +
         c->demand_bins * MB_GAME_OBS_PER_DEMAND_BIN + mb_game_gain_block_size(c) +
         MB_GAME_OBS_PROGRESS;
}

int32_t mb_game_candidate_block_offset(const mb_game_config *c) {
  return MB_GAME_OBS_BUFFER + c->addr_bins * c->time_bins;
}

int32_t mb_game_gain_block_size(const mb_game_config *c) {
  return c->gain_features ? MB_GAME_OBS_GAIN + c->next_buffers : 0;
}

/* ---- visiting order ---- */

/* qsort has no context argument in C11: sort (key, id) records instead. */
typedef struct order_key {
  int64_t k1, k2;
  int32_t id;
} order_key;

static int cmp_order_key(const void *a, const void *b) {
  const order_key *x = a, *y = b;
  if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
  if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

static bool visitable(const mb_game *g, int32_t b) {
  const mb_buffer *buf = &g->w->buffers[b];
  return !buf->pinned && buf->size <= g->hw->capacity && g->benefit[b] > 0;
}

static bool build_order(mb_game *g, mb_error *err) {
  const mb_workload *w = g->w;
  int32_t n = 0;
  if (g->cfg.order == MB_GAME_ORDER_HEURISTIC) {
    int32_t m = mb_heuristic_order(w, g->hw, g->visit);
    if (m < 0)
      return mb_fail(err, "mallocGame: out of memory ordering %d buffers", (int)w->n_buffers);
    for (int32_t i = 0; i < m; i++)
      if (visitable(g, g->visit[i])) g->visit[n++] = g->visit[i];
  } else {
    order_key *keys = malloc((size_t)(w->n_buffers ? w->n_buffers : 1) * sizeof *keys);
    if (!keys) return mb_fail(err, "mallocGame: out of memory for %d buffers", (int)w->n_buffers);
    for (int32_t b = 0; b < w->n_buffers; b++) {
      if (!visitable(g, b)) continue;
      const mb_buffer *buf = &w->buffers[b];
      if (g->cfg.order == MB_GAME_ORDER_START)
        keys[n] = (order_key){buf->start, -(int64_t)(buf->end - buf->start), b};
      else
        keys[n] = (order_key){-buf->size, buf->start, b};
      n++;
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_order_key);
    for (int32_t i = 0; i < n; i++) g->visit[i] = keys[i].id;
    free(keys);
  }
  g->n_visit = n;
  return true;
}

/* ---- candidates ---- */

static int64_t align_up(int64_t x, int64_t a) { return x % a ? x + (a - x % a) : x; }
static int64_t align_down(int64_t x, int64_t a) { return x - x % a; }

/* Inserts c into the ranked slots (gap size, then offset), keeping the best n_slots. */
static void insert_candidate(mb_game *g, candidate c) {
  int32_t pos = g->n_cand;
  while (pos > 0) {
    const candidate *p = &g->cand[pos - 1];
    if (p->gap_size < c.gap_size || (p->gap_size == c.gap_size && p->offset < c.offset)) break;
    pos--;
  }
  if (pos >= g->n_slots) return;
  int32_t last = g->n_cand < g->n_slots ? g->n_cand : g->n_slots - 1;
  memmove(&g->cand[pos + 1], &g->cand[pos], (size_t)(last - pos) * sizeof *g->cand);
  g->cand[pos] = c;
  if (g->n_cand < g->n_slots) g->n_cand++;
}

static void compute_candidates(mb_game *g) {
  const mb_buffer *buf = &g->w->buffers[g->visit[g->cursor]];
  int64_t a = g->hw->alignment;
  int32_t n = mb_occupancy_gaps(g->occ, buf->start, buf->end, g->gaps, g->n_gaps_max);
  if (n > g->n_gaps_max) n = g->n_gaps_max; /* not reached: gaps <= placed buffers + 1 */
  g->n_cand = 0;
  g->free_bytes = 0;
  for (int32_t i = 0; i < n; i++) {
    const mb_gap *gap = &g->gaps[i];
    int64_t gap_end = gap->offset + gap->size;
    g->free_bytes += gap->size;
    if (gap->size < buf->size) continue;
    int64_t low = align_up(gap->offset, a);
    if (low > gap_end - buf->size) continue;
    insert_candidate(g, (candidate){low, gap->offset, gap->size, false});
    int64_t top = align_down(gap_end - buf->size, a);
    if (top > low) insert_candidate(g, (candidate){top, gap->offset, gap->size, true});
  }
}

/* Phi of the current state from scratch (mb_game_step): the benefit / T_slow of the next
 * `lookahead` buffers of the order, the current one included, that fit somewhere now. Needs the
 * current candidates. */
static double potential(const mb_game *g) {
  mb_time_ps sum = 0;
  int32_t end = g->cursor + g->cfg.lookahead; /* lookahead 0: none, Phi = 0 */
  if (end > g->n_visit) end = g->n_visit;
  for (int32_t i = g->cursor; i < end; i++) {
    int32_t b = g->visit[i];
    const mb_buffer *buf = &g->w->buffers[b];
    int64_t off;
    bool fits = i == g->cursor ? g->n_cand > 0
                               : mb_occupancy_lowest_fit(g->occ, buf->start, buf->end, buf->size,
                                                         g->hw->alignment, &off);
    if (fits) sum += g->benefit[b];
  }
  return (double)sum / g->t_norm;
}

/* Moves the cursor to the next decision (auto_slow skips buffers without a candidate). */
static void arrive(mb_game *g) {
  g->n_cand = 0;
  g->free_bytes = 0;
  while (g->cursor < g->n_visit) {
    compute_candidates(g);
    if (g->n_cand > 0 || !g->cfg.auto_slow) break;
    g->cursor++;
  }
  g->potential_ok = false;
}

/* Computed on first use in a state and kept until the state changes (arrive, restore): a caller
 * that only needs a path's shaped total skips the gap queries at its inner steps. */
double mb_game_potential(mb_game *g) {
  if (g->cfg.shaping == 0) return 0;
  if (!g->potential_ok) {
    g->potential = potential(g);
    g->potential_ok = true;
  }
  return g->potential;
}

/* ---- lifetime ---- */

/* splitmix64's finaliser: spreads a game's address over 64 bits for its serial salt. */
static uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

mb_game *mb_game_new(const mb_workload *w, const mb_hardware *hw, const mb_game_config *c,
                     mb_error *err) {
  if (!mb_game_config_check(c, err)) return NULL;
  if (hw->capacity < 0) {
    mb_fail(err, "mallocGame: hardware '%s': capacity %lld < 0", hw->name, (long long)hw->capacity);
    return NULL;
  }
  if (hw->alignment < 1) {
    mb_fail(err, "mallocGame: hardware '%s': alignment %lld < 1", hw->name,
            (long long)hw->alignment);
    return NULL;
  }
  mb_game *g = calloc(1, sizeof *g);
  if (!g) {
    mb_fail(err, "mallocGame: out of memory");
    return NULL;
  }
  g->salt = mix64((uint64_t)(uintptr_t)g);
  g->w = w;
  g->hw_copy = *hw;
  g->hw = &g->hw_copy;
  g->cfg = *c;
  g->n_slots = c->n_actions - 1;
  size_t nb = (size_t)(w->n_buffers > 0 ? w->n_buffers : 1);
  g->n_gaps_max = w->n_buffers + 1;
  g->visit = malloc(nb * sizeof *g->visit);
  g->benefit = malloc(nb * sizeof *g->benefit);
  g->benefit_left = malloc((nb + 1) * sizeof *g->benefit_left);
  g->offset = malloc(nb * sizeof *g->offset);
  g->stack = malloc(nb * sizeof *g->stack);
  g->cand = malloc((size_t)g->n_slots * sizeof *g->cand);
  g->gaps = malloc((nb + 1) * sizeof *g->gaps);
  g->ids = malloc(nb * sizeof *g->ids);
  size_t la = (size_t)(c->lookahead > 0 ? c->lookahead : 1);
  g->la_size = malloc(la * sizeof *g->la_size);
  g->la_benefit = malloc(la * sizeof *g->la_benefit);
  g->demand = calloc((size_t)(c->demand_bins > 0 ? c->demand_bins : 1) * MB_GAME_OBS_PER_DEMAND_BIN,
                     sizeof *g->demand);
  g->occ = mb_occupancy_new(w->schedule_length, g->hw->capacity, w->n_buffers);
  bool cost_ok = mb_cost_state_init(&g->cost, w, g->hw);
  if (!g->visit || !g->benefit || !g->benefit_left || !g->offset || !g->stack || !g->cand ||
      !g->gaps || !g->ids || !g->la_size || !g->la_benefit || !g->demand || !g->occ || !cost_ok) {
    mb_game_free(g);
    mb_fail(err, "mallocGame: out of memory for workload '%s' (%d buffers)", w->name,
            (int)w->n_buffers);
    return NULL;
  }
  mb_standalone_benefits(w, g->hw, g->benefit);
  if (!build_order(g, err)) {
    mb_game_free(g);
    return NULL;
  }
  g->benefit_left[g->n_visit] = 0;
  for (int32_t i = g->n_visit - 1; i >= 0; i--)
    g->benefit_left[i] = g->benefit_left[i + 1] + g->benefit[g->visit[i]];
  for (int32_t i = 0; i < g->n_visit; i++) {
    const mb_buffer *buf = &w->buffers[g->visit[i]];
    double bpb = (double)g->benefit[g->visit[i]] / (double)buf->size;
    if (bpb > g->max_benefit_per_byte) g->max_benefit_per_byte = bpb;
    if (buf->n_uses > g->max_uses) g->max_uses = buf->n_uses;
  }
  for (int32_t b = 0; b < w->n_buffers; b++) g->offset[b] = MB_SLOW;
  g->t_slow = g->cost.slow_total;
  g->t_norm = g->t_slow > 0 ? (double)g->t_slow : 1.0;
  g->cursor = 0;
  arrive(g);
  g->root_cursor = g->cursor;
  return g;
}

void mb_game_free(mb_game *g) {
  if (!g) return;
  free(g->visit);
  free(g->benefit);
  free(g->benefit_left);
  free(g->offset);
  free(g->stack);
  free(g->cand);
  free(g->gaps);
  free(g->ids);
  free(g->la_size);
  free(g->demand);
  free(g->la_benefit);
  mb_occupancy_free(g->occ);
  mb_cost_state_free(&g->cost);
  free(g);
}

/* Undoes the top decision. */
static void pop(mb_game *g) {
  const undo_entry *e = &g->stack[--g->depth];
  if (e->offset != MB_SLOW) {
    mb_occupancy_remove(g->occ, e->buffer);
    mb_cost_move(&g->cost, e->buffer, false);
    g->offset[e->buffer] = MB_SLOW;
  }
  g->cursor = e->cursor;
}

void mb_game_reset(mb_game *g) {
  while (g->depth > 0) pop(g);
  g->cursor = g->root_cursor;
  arrive(g);
}

static bool same_hardware(const mb_hardware *a, const mb_hardware *b) {
  return a->capacity == b->capacity && a->alignment == b->alignment &&
         a->slow_bandwidth == b->slow_bandwidth && a->fast_bandwidth == b->fast_bandwidth &&
         a->peak_flops == b->peak_flops && a->op_overhead_s == b->op_overhead_s;
}

static bool same_config(const mb_game_config *a, const mb_game_config *b) {
  return a->n_actions == b->n_actions && a->order == b->order && a->addr_bins == b->addr_bins &&
         a->time_bins == b->time_bins && a->lookahead == b->lookahead &&
         a->auto_slow == b->auto_slow && a->next_buffers == b->next_buffers &&
         a->gain_features == b->gain_features && a->demand_bins == b->demand_bins &&
         a->shaping == b->shaping;
}

bool mb_game_copy(mb_game *dst, const mb_game *src, mb_error *err) {
  if (dst == src) return true;
  if (dst->w != src->w || !same_hardware(dst->hw, src->hw) || !same_config(&dst->cfg, &src->cfg))
    return mb_fail(err, "mallocGame copy: games differ in workload, hardware or config");
  while (dst->depth > 0) pop(dst);
  for (int32_t i = 0; i < src->depth; i++) {
    const undo_entry *e = &src->stack[i];
    if (e->offset != MB_SLOW) {
      const mb_buffer *buf = &src->w->buffers[e->buffer];
      mb_occupancy_place(dst->occ, e->buffer, buf->start, buf->end, e->offset, buf->size);
      mb_cost_move(&dst->cost, e->buffer, true);
      dst->offset[e->buffer] = e->offset;
    }
    dst->stack[i] = *e;
  }
  dst->depth = src->depth;
  dst->last_serial = src->last_serial;
  dst->cursor = src->cursor;
  dst->n_cand = src->n_cand;
  dst->free_bytes = src->free_bytes;
  dst->potential = src->potential;
  dst->potential_ok = src->potential_ok;
  memcpy(dst->cand, src->cand, (size_t)src->n_cand * sizeof *dst->cand);
  return true;
}

mb_game *mb_game_clone(const mb_game *g, mb_error *err) {
  mb_game *c = mb_game_new(g->w, &g->hw_copy, &g->cfg, err);
  if (c && !mb_game_copy(c, g, err)) {
    mb_game_free(c);
    return NULL;
  }
  return c;
}

/* ---- queries ---- */

bool mb_game_done(const mb_game *g) { return g->cursor >= g->n_visit; }
int32_t mb_game_current_buffer(const mb_game *g) {
  return g->cursor < g->n_visit ? g->visit[g->cursor] : -1;
}
const mb_game_config *mb_game_get_config(const mb_game *g) { return &g->cfg; }
const mb_workload *mb_game_workload(const mb_game *g) { return g->w; }

void mb_game_window(const mb_game *g, int32_t *start, int32_t *length) {
  *start = *length = 0;
  if (mb_game_done(g)) return;
  const mb_buffer *buf = &g->w->buffers[g->visit[g->cursor]];
  int32_t L = g->w->schedule_length > 0 ? g->w->schedule_length : 1;
  int32_t len = buf->end - buf->start + 1;
  int64_t want = 3 * (int64_t)len > g->cfg.time_bins ? 3 * (int64_t)len : g->cfg.time_bins;
  int32_t wl = want < L ? (int32_t)want : L;
  int32_t ws = buf->start - (wl - len) / 2;
  if (ws > L - wl) ws = L - wl;
  if (ws < 0) ws = 0;
  *start = ws;
  *length = wl;
}
int32_t mb_game_n_actions(const mb_game *g) { return g->cfg.n_actions; }
int32_t mb_game_slow_action(const mb_game *g) { return g->n_slots; }
int32_t mb_game_n_candidates(const mb_game *g) { return mb_game_done(g) ? 0 : g->n_cand; }

bool mb_game_is_legal(const mb_game *g, int32_t action) {
  if (mb_game_done(g) || action < 0 || action > g->n_slots) return false;
  return action == g->n_slots || action < g->n_cand;
}

int32_t mb_game_legal_mask(const mb_game *g, uint8_t *mask) {
  int32_t n = 0;
  for (int32_t a = 0; a <= g->n_slots; a++) {
    mask[a] = mb_game_is_legal(g, a) ? 1 : 0;
    n += mask[a];
  }
  return n;
}

int64_t mb_game_candidate_offset(const mb_game *g, int32_t action) {
  if (!mb_game_is_legal(g, action)) return MB_GAME_ILLEGAL;
  return action == g->n_slots ? MB_SLOW : g->cand[action].offset;
}

int32_t mb_game_heuristic_action(const mb_game *g) {
  if (mb_game_done(g)) return -1;
  return g->n_cand > 0 ? 0 : g->n_slots;
}

int32_t mb_game_depth(const mb_game *g) { return g->depth; }
int32_t mb_game_n_visitable(const mb_game *g) { return g->n_visit; }
const int32_t *mb_game_visit_order(const mb_game *g) { return g->visit; }
mb_time_ps mb_game_time(const mb_game *g) { return g->cost.total; }
mb_time_ps mb_game_slow_time(const mb_game *g) { return g->t_slow; }
double mb_game_return(const mb_game *g) { return (double)(g->t_slow - g->cost.total) / g->t_norm; }

bool mb_game_assignment(const mb_game *g, mb_assignment *out, mb_error *err) {
  if (out->n_buffers != g->w->n_buffers)
    return mb_fail(err, "mallocGame: assignment has %d buffers, workload '%s' has %d",
                   (int)out->n_buffers, g->w->name, (int)g->w->n_buffers);
  memcpy(out->offset, g->offset, (size_t)g->w->n_buffers * sizeof *out->offset);
  return true;
}

/* ---- step, snapshot, restore ---- */

bool mb_game_step(mb_game *g, int32_t action, double *reward, mb_error *err) {
  if (mb_game_done(g)) return mb_fail(err, "mallocGame: step %d after the episode ended", action);
  if (!mb_game_is_legal(g, action))
    return mb_fail(err, "mallocGame: buffer '%s': action %d is illegal (%d candidates, slow = %d)",
                   g->w->buffers[g->visit[g->cursor]].name, action, g->n_cand, g->n_slots);
  double before = reward ? mb_game_potential(g) : 0; /* Phi(s), before the placement */
  int32_t b = g->visit[g->cursor];
  int64_t off = action == g->n_slots ? MB_SLOW : g->cand[action].offset;
  mb_time_ps delta = 0;
  if (off != MB_SLOW) {
    const mb_buffer *buf = &g->w->buffers[b];
    mb_occupancy_place(g->occ, b, buf->start, buf->end, off, buf->size);
    delta = mb_cost_move(&g->cost, b, true);
    g->offset[b] = off;
  }
  uint64_t serial = ++g->last_serial ^ g->salt;
  if (serial == 0) serial = 1; /* 0 means "root" in a snapshot */
  g->stack[g->depth++] = (undo_entry){b, g->cursor, off, serial};
  g->cursor++;
  arrive(g);
  if (reward)
    *reward = (double)(-delta) / g->t_norm + g->cfg.shaping * (mb_game_potential(g) - before);
  return true;
}

mb_game_snapshot mb_game_snapshot_take(const mb_game *g) {
  mb_game_snapshot s = {g->depth, g->cursor, g->depth > 0 ? g->stack[g->depth - 1].serial : 0};
  return s;
}

bool mb_game_restore(mb_game *g, mb_game_snapshot snap, mb_error *err) {
  if (snap.depth < 0 || snap.depth > g->depth || snap.cursor < 0 || snap.cursor > g->n_visit ||
      (snap.depth > 0 && g->stack[snap.depth - 1].serial != snap.serial) ||
      (snap.depth == 0 && snap.serial != 0))
    return mb_fail(err,
                   "mallocGame: snapshot (depth %d, serial %llu) is not an ancestor of the "
                   "current state (depth %d)",
                   snap.depth, (unsigned long long)snap.serial, g->depth);
  /* A state's cursor is determined by its stack: the next decision's cursor. */
  int32_t expected = snap.depth < g->depth ? g->stack[snap.depth].cursor : g->cursor;
  if (snap.cursor != expected)
    return mb_fail(err, "mallocGame: snapshot cursor %d, expected %d at depth %d", snap.cursor,
                   expected, snap.depth);
  if (snap.depth == g->depth) return true;
  while (g->depth > snap.depth) pop(g);
  g->n_cand = 0;
  g->free_bytes = 0;
  if (g->cursor < g->n_visit) compute_candidates(g);
  g->potential_ok = false;
  return true;
}

/* ---- observation ---- */

static float clamp01(double x) { return x < 0 ? 0.0f : x > 1 ? 1.0f : (float)x; }

/* Adds the placed rectangles live in [ws, ws + wl) to the address x time picture. */
static void occupancy_picture(mb_game *g, int32_t ws, int32_t wl, float *pic) {
  int32_t nb = g->cfg.addr_bins, nt = g->cfg.time_bins;
  double cap = (double)g->hw->capacity;
  double abin = cap / nb, tbin = (double)wl / nt;
  int32_t k =
      mb_occupancy_conflicts(g->occ, ws, ws + wl - 1, 0, g->hw->capacity, g->ids, g->w->n_buffers);
  if (k > g->w->n_buffers) k = g->w->n_buffers;
  for (int32_t i = 0; i < k; i++) {
    int32_t r = g->ids[i];
    const mb_buffer *buf = &g->w->buffers[r];
    /* Continuous coordinates: op t covers [t, t + 1); addresses [offset, offset + size). */
    double t0 = (buf->start > ws ? buf->start : ws) - ws;
    double t1 = (buf->end + 1 < ws + wl ? buf->end + 1 : ws + wl) - ws;
    double a0 = (double)g->offset[r], a1 = (double)(g->offset[r] + buf->size);
    if (a1 > cap) a1 = cap;
    int32_t tb0 = (int32_t)(t0 / tbin), tb1 = (int32_t)ceil(t1 / tbin);
    int32_t ab0 = (int32_t)(a0 / abin), ab1 = (int32_t)ceil(a1 / abin);
    if (tb1 > nt) tb1 = nt;
    if (ab1 > nb) ab1 = nb;
    for (int32_t ab = ab0; ab < ab1; ab++) {
      double lo = ab * abin, hi = lo + abin;
      double fa = ((a1 < hi ? a1 : hi) - (a0 > lo ? a0 : lo)) / abin;
      if (fa <= 0) continue;
      for (int32_t tb = tb0; tb < tb1; tb++) {
        double tlo = tb * tbin, thi = tlo + tbin;
        double ft = ((t1 < thi ? t1 : thi) - (t0 > tlo ? t0 : tlo)) / tbin;
        if (ft > 0) pic[ab * nt + tb] += (float)(fa * ft);
      }
    }
  }
  for (int32_t i = 0; i < nb * nt; i++) pic[i] = clamp01(pic[i]);
}

/* Adds `per_op` for every op of [start, end] to the D bins of [0, L) (every `stride`-th double),
 * each op in proportion to its overlap with the bin (op t covers [t, t + 1)). */
static void add_over_bins(double *bins, int32_t stride, int32_t D, int32_t L, int32_t start,
                          int32_t end, double per_op) {
  double binw = (double)L / D, t0 = start, t1 = (double)end + 1;
  int32_t b0 = (int32_t)(t0 / binw), b1 = (int32_t)ceil(t1 / binw);
  if (b0 < 0) b0 = 0;
  if (b1 > D) b1 = D;
  for (int32_t b = b0; b < b1; b++) {
    double lo = b * binw, hi = lo + binw;
    double ov = (t1 < hi ? t1 : hi) - (t0 > lo ? t0 : lo);
    if (ov > 0) bins[b * stride] += per_op * ov;
  }
}

/* The demand profile (game.h): the whole schedule in demand_bins time bins. Bytes count
 * size / bin width per op, so that a bin sums to the mean bytes live over it. */
static void demand_profile(mb_game *g, float *out) {
  int32_t D = g->cfg.demand_bins, L = g->w->schedule_length > 0 ? g->w->schedule_length : 1;
  const int32_t S = MB_GAME_OBS_PER_DEMAND_BIN;
  double cap = (double)g->hw->capacity, binw = (double)L / D;
  double total = (double)g->benefit_left[0];
  memset(g->demand, 0, (size_t)(S * D) * sizeof *g->demand);
  for (int32_t r = 0; r < g->w->n_buffers; r++) {
    const mb_buffer *buf = &g->w->buffers[r];
    if (g->offset[r] >= 0)
      add_over_bins(g->demand + MB_GAME_D_USED, S, D, L, buf->start, buf->end,
                    (double)buf->size / binw);
  }
  for (int32_t i = g->cursor + 1; i < g->n_visit; i++) {
    int32_t r = g->visit[i];
    const mb_buffer *buf = &g->w->buffers[r];
    add_over_bins(g->demand + MB_GAME_D_DEMAND, S, D, L, buf->start, buf->end,
                  (double)buf->size / binw);
    add_over_bins(g->demand + MB_GAME_D_BENEFIT, S, D, L, buf->start, buf->end,
                  (double)g->benefit[r] / (buf->end - buf->start + 1));
  }
  for (int32_t b = 0; b < D; b++) {
    const double *d = g->demand + S * b;
    float *o = out + S * b;
    double need = cap > 0 ? d[MB_GAME_D_DEMAND] / cap : 0;
    double share = total > 0 ? d[MB_GAME_D_BENEFIT] / total * D : 0;
    o[MB_GAME_D_USED] = cap > 0 ? clamp01(d[MB_GAME_D_USED] / cap) : 0.0f;
    o[MB_GAME_D_DEMAND] = clamp01(need / (1 + need));
    o[MB_GAME_D_BENEFIT] = clamp01(share / (1 + share));
  }
}

void mb_game_observe(mb_game *g, float *obs) {
  const mb_game_config *c = &g->cfg;
  int32_t size = mb_game_observation_size(c);
  memset(obs, 0, (size_t)size * sizeof *obs);
  float *prog = obs + size - MB_GAME_OBS_PROGRESS;
  double cap = (double)g->hw->capacity;
  prog[MB_GAME_P_VISITED] = g->n_visit > 0 ? clamp01((double)g->cursor / g->n_visit) : 1.0f;
  prog[MB_GAME_P_BENEFIT_LEFT] =
      g->benefit_left[0] > 0
          ? clamp01((double)g->benefit_left[g->cursor] / (double)g->benefit_left[0])
          : 0.0f;
  prog[MB_GAME_P_RETURN] = clamp01(mb_game_return(g));
  if (mb_game_done(g)) return;
  prog[MB_GAME_P_IN_USE] = cap > 0 ? clamp01(1.0 - (double)g->free_bytes / cap) : 0.0f;
  prog[MB_GAME_P_CANDIDATES] = clamp01((double)g->n_cand / g->n_slots);

  int32_t b = g->visit[g->cursor];
  const mb_buffer *buf = &g->w->buffers[b];
  int32_t L = g->w->schedule_length > 0 ? g->w->schedule_length : 1;
  int32_t len = buf->end - buf->start + 1;
  int32_t ws, wl;
  mb_game_window(g, &ws, &wl);

  float *f = obs;
  f[MB_GAME_F_SIZE] = cap > 0 ? clamp01((double)buf->size / cap) : 0.0f;
  f[MB_GAME_F_LOG_SIZE] = cap >= 2 ? clamp01(log2((double)buf->size) / log2(cap)) : 0.0f;
  f[MB_GAME_F_LENGTH] = clamp01((double)len / L);
  f[MB_GAME_F_START] = clamp01((double)buf->start / L);
  f[MB_GAME_F_END] = clamp01((double)(buf->end + 1) / L);
  f[MB_GAME_F_WINDOW_START] = clamp01((double)(buf->start - ws) / wl);
  f[MB_GAME_F_WINDOW_END] = clamp01((double)(buf->end + 1 - ws) / wl);
  f[MB_GAME_F_BENEFIT] = clamp01((double)g->benefit[b] / g->t_norm);
  f[MB_GAME_F_BENEFIT_PER_BYTE] =
      g->max_benefit_per_byte > 0
          ? clamp01((double)g->benefit[b] / (double)buf->size / g->max_benefit_per_byte)
          : 0.0f;
  f[MB_GAME_F_USES] = g->max_uses > 0 ? clamp01((double)buf->n_uses / g->max_uses) : 0.0f;

  if (cap > 0) occupancy_picture(g, ws, wl, obs + MB_GAME_OBS_BUFFER);

  /* Lookahead: the next buffers of the order whose live ranges overlap this one. */
  int32_t n_la = 0;
  double la_total = 0;
  for (int32_t i = g->cursor + 1; i < g->n_visit && i <= g->cursor + c->lookahead; i++) {
    int32_t r = g->visit[i];
    const mb_buffer *rb = &g->w->buffers[r];
    la_total += (double)g->benefit[r];
    if (rb->start <= buf->end && buf->start <= rb->end) {
      g->la_size[n_la] = rb->size;
      g->la_benefit[n_la] = g->benefit[r];
      n_la++;
    }
  }
  /* The next buffers of the order (whether or not auto_slow will skip them). */
  float *next_block =
      obs + mb_game_candidate_block_offset(c) + (c->n_actions - 1) * MB_GAME_OBS_PER_CANDIDATE;
  float *nf = next_block;
  for (int32_t k = 1; k <= c->next_buffers && g->cursor + k < g->n_visit;
       k++, nf += MB_GAME_OBS_PER_NEXT) {
    int32_t r = g->visit[g->cursor + k];
    const mb_buffer *rb = &g->w->buffers[r];
    nf[MB_GAME_N_PRESENT] = 1.0f;
    nf[MB_GAME_N_SIZE] = cap > 0 ? clamp01((double)rb->size / cap) : 0.0f;
    nf[MB_GAME_N_START] = clamp01((double)rb->start / L);
    nf[MB_GAME_N_END] = clamp01((double)(rb->end + 1) / L);
    nf[MB_GAME_N_BENEFIT] = clamp01((double)g->benefit[r] / g->t_norm);
    nf[MB_GAME_N_OVERLAPS] = rb->start <= buf->end && buf->start <= rb->end ? 1.0f : 0.0f;
  }
  if (c->demand_bins > 0) demand_profile(g, next_block + c->next_buffers * MB_GAME_OBS_PER_NEXT);
  if (c->gain_features && g->benefit_left[0] > 0) {
    float *gf = prog - mb_game_gain_block_size(c);
    double total = (double)g->benefit_left[0];
    gf[MB_GAME_G_GAIN] = clamp01((double)-mb_cost_delta(&g->cost, b, true) / total);
    gf[MB_GAME_G_SHARE] = clamp01((double)g->benefit[b] / total);
    for (int32_t k = 1; k <= c->next_buffers && g->cursor + k < g->n_visit; k++)
      gf[MB_GAME_G_SHARE + k] = clamp01((double)g->benefit[g->visit[g->cursor + k]] / total);
  }
  float *cf = obs + mb_game_candidate_block_offset(c);
  for (int32_t i = 0; i < g->n_cand; i++, cf += MB_GAME_OBS_PER_CANDIDATE) {
    const candidate *cd = &g->cand[i];
    cf[MB_GAME_C_LEGAL] = 1.0f;
    cf[MB_GAME_C_OFFSET] = clamp01((double)cd->offset / cap);
    cf[MB_GAME_C_GAP] = clamp01((double)cd->gap_size / cap);
    cf[MB_GAME_C_WASTE] = clamp01((double)(cd->gap_size - buf->size) / cap);
    cf[MB_GAME_C_TOP] = cd->top ? 1.0f : 0.0f;
    /* Blocked: would fit in the gap now, fits in neither remainder after this placement. */
    int64_t left = cd->offset - cd->gap_offset;
    int64_t right = cd->gap_offset + cd->gap_size - (cd->offset + buf->size);
    int64_t rest = left > right ? left : right;
    double blocked = 0;
    for (int32_t j = 0; j < n_la; j++)
      if (g->la_size[j] <= cd->gap_size && g->la_size[j] > rest)
        blocked += (double)g->la_benefit[j];
    cf[MB_GAME_C_BLOCKING] = la_total > 0 ? clamp01(blocked / la_total) : 0.0f;
  }
}
