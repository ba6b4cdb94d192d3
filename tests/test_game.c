/* Tests of the mallocGame (suite/game.h).
 *
 * Every property is checked against an independent model, never against recorded numbers:
 *   - offered candidates == the canonical positions recomputed by brute force from the
 *     placement (every fast buffer scanned), in the documented ranking; each one is legal by a
 *     brute-force overlap check; candidate 0 == mb_occupancy_best_fit on a separate occupancy;
 *   - the final assignment passes mb_validate, and the sum of the step rewards equals the
 *     return recomputed from scratch with mb_program_time;
 *   - snapshot/restore, copy and clone reproduce observation, mask, assignment and time;
 *   - the heuristic policy reproduces the heuristic solver's time (and its offsets);
 *   - two runs with the same seed are identical;
 *   - the observation's current buffer, picture, next buffers and progress blocks equal their
 *     definitions recomputed from the placement, the visiting order its documented ranking,
 *     and every config range is accepted at its ends and refused one past them.
 * Workloads: small random ones (with ops and op-less), datasets/samples/ and the real HLO and
 * MiniMalloc files of the data directory (skipped when missing). */
#include "support.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "cost.h"
#include "game.h"
#include "hardware.h"
#include "long_schedule.h"
#include "occupancy.h"
#include "paths.h"
#include "random_workload.h"
#include "rng.h"
#include "solver.h"
#include "validator.h"
#include "workload.h"
#include "workload_io.h"

/* ---- random workloads ---- */

static mb_hardware test_hardware(mb_rng *rng) {
  mb_hardware hw;
  memset(&hw, 0, sizeof hw);
  snprintf(hw.name, sizeof hw.name, "test");
  static const int64_t aligns[] = {1, 4, 16, 64};
  hw.capacity = mb_rng_range(rng, 256, 4096);
  hw.alignment = aligns[mb_rng_below(rng, 4)];
  hw.slow_bandwidth = 1e9;
  hw.fast_bandwidth = 4e9;
  hw.peak_flops = 1e12;
  hw.op_overhead_s = 1e-9;
  return hw;
}

/* A scheduled program whose buffers crowd a fast memory of `capacity` bytes; some buffers are
 * pinned, some larger than capacity. Op-less (benefit per buffer) when `opless`. */
static mb_workload *random_workload(mb_rng *rng, int64_t capacity, bool opless) {
  mb_workload_builder *b = mb_builder_new("random", "test_game");
  int32_t n_ops = (int32_t)mb_rng_range(rng, 4, 40);
  int32_t n_buf = (int32_t)mb_rng_range(rng, 3, 60);
  char name[32];
  if (!opless) {
    for (int32_t o = 0; o < n_ops; o++) {
      snprintf(name, sizeof name, "op%d", o);
      mb_builder_add_op(b, name, "fusion", (double)mb_rng_range(rng, 0, 4000));
    }
  } else {
    mb_builder_set_schedule(b, n_ops, 1000000);
  }
  for (int32_t i = 0; i < n_buf; i++) {
    snprintf(name, sizeof name, "b%d", i);
    int64_t size = mb_rng_below(rng, 10) == 0 ? capacity + mb_rng_range(rng, 1, 100)
                                              : mb_rng_range(rng, 1, capacity / 3);
    int32_t s = (int32_t)mb_rng_below(rng, (uint64_t)n_ops);
    int32_t e = s + (int32_t)mb_rng_below(rng, 8);
    if (e >= n_ops) e = n_ops - 1;
    bool pinned = mb_rng_below(rng, 8) == 0;
    int32_t id = mb_builder_add_buffer(b, name, size, s, e, pinned);
    if (opless) {
      /* Some zero benefits: such buffers are never visited. */
      mb_builder_set_benefit(b, id, mb_rng_below(rng, 6) == 0 ? 0 : mb_rng_range(rng, 1, 50000));
    } else {
      mb_builder_add_use(b, id, s, 0, size);
      for (int32_t t = s + 1; t <= e; t++)
        if (t == e || mb_rng_below(rng, 2)) mb_builder_add_use(b, id, t, size, 0);
    }
  }
  mb_error err;
  mb_workload *w = mb_builder_finish(b, &err);
  if (!w) fail_msg("random workload: %s", err.message);
  return w;
}

/* ---- brute-force model ---- */

typedef struct span {
  int64_t lo, hi;
} span;

static int cmp_span(const void *a, const void *b) {
  const span *x = a, *y = b;
  return (x->lo > y->lo) - (x->lo < y->lo);
}

typedef struct cand {
  int64_t gap, off;
  int64_t gap_off; /* where the gap starts */
  bool top;        /* the gap's top-aligned position */
} cand;

static int cmp_cand(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->gap != y->gap) return (x->gap > y->gap) - (x->gap < y->gap);
  return (x->off > y->off) - (x->off < y->off);
}

/* Canonical positions of buffer b given the offsets of every buffer, ranked; returns count. */
static int32_t brute_candidates(const mb_workload *w, const mb_hardware *hw, const int64_t *off,
                                int32_t b, cand *out) {
  const mb_buffer *buf = &w->buffers[b];
  span *sp = malloc(sizeof *sp * (size_t)(w->n_buffers + 1));
  int32_t n = 0;
  for (int32_t r = 0; r < w->n_buffers; r++) {
    const mb_buffer *o = &w->buffers[r];
    if (off[r] != MB_SLOW && o->start <= buf->end && buf->start <= o->end)
      sp[n++] = (span){off[r], off[r] + o->size};
  }
  qsort(sp, (size_t)n, sizeof *sp, cmp_span);
  int32_t nc = 0;
  int64_t cur = 0, a = hw->alignment;
  for (int32_t i = 0; i <= n; i++) {
    int64_t lo = i < n ? sp[i].lo : hw->capacity;
    if (lo > hw->capacity) lo = hw->capacity;
    if (lo > cur) {
      int64_t gap = lo - cur;
      int64_t low = (cur + a - 1) / a * a;
      if (low + buf->size <= lo) {
        out[nc++] = (cand){gap, low, cur, false};
        int64_t top = (lo - buf->size) / a * a;
        if (top > low) out[nc++] = (cand){gap, top, cur, true};
      }
    }
    if (i < n && sp[i].hi > cur) cur = sp[i].hi;
  }
  free(sp);
  qsort(out, (size_t)nc, sizeof *out, cmp_cand);
  return nc;
}

/* True when b at offset overlaps no fast buffer live at a common time (scan of all). */
static bool brute_free(const mb_workload *w, const int64_t *off, int32_t b, int64_t offset) {
  const mb_buffer *buf = &w->buffers[b];
  for (int32_t r = 0; r < w->n_buffers; r++) {
    const mb_buffer *o = &w->buffers[r];
    if (r == b || off[r] == MB_SLOW) continue;
    if (o->start <= buf->end && buf->start <= o->end && off[r] < offset + buf->size &&
        offset < off[r] + o->size)
      return false;
  }
  return true;
}

static mb_time_ps time_of(const mb_workload *w, const mb_hardware *hw, const mb_assignment *a) {
  bool *fast = malloc(sizeof *fast * (size_t)(w->n_buffers ? w->n_buffers : 1));
  mb_assignment_fast_flags(a, fast);
  mb_time_ps t = mb_program_time(w, hw, fast);
  free(fast);
  return t;
}

/* ---- episode checks ---- */

typedef enum policy { RANDOM, HEURISTIC } policy;

static int32_t pick(mb_game *g, policy p, mb_rng *rng, const uint8_t *mask) {
  if (p == HEURISTIC) return mb_game_heuristic_action(g);
  int32_t A = mb_game_n_actions(g), k = (int32_t)mb_rng_below(rng, (uint64_t)A);
  while (!mask[k]) k = (k + 1) % A;
  return k;
}

static int32_t random_legal(mb_game *g, mb_rng *rng, uint8_t *mask) {
  mb_game_legal_mask(g, mask);
  return pick(g, RANDOM, rng, mask);
}

/* Checks the current decision against the brute-force model and a separate occupancy. */
static void check_decision(mb_game *g, const mb_workload *w, const mb_hardware *hw,
                           mb_assignment *a, const mb_occupancy *occ, uint8_t *mask,
                           cand *scratch) {
  int32_t A = mb_game_n_actions(g), b = mb_game_current_buffer(g);
  assert_true(b >= 0);
  assert_true(mb_game_assignment(g, a, NULL));
  int32_t n_legal = mb_game_legal_mask(g, mask);
  assert_int_equal(mask[A - 1], 1);
  assert_int_equal(mb_game_candidate_offset(g, A - 1), MB_SLOW);
  int32_t nc = brute_candidates(w, hw, a->offset, b, scratch);
  int32_t expect = nc < A - 1 ? nc : A - 1;
  /* The heuristic's move: best fit (action 0) when some offset is offered, else slow. */
  assert_int_equal(mb_game_heuristic_action(g), expect > 0 ? 0 : A - 1);
  assert_int_equal(mb_game_n_candidates(g), expect);
  assert_int_equal(n_legal, expect + 1);
  /* auto_slow: a decision is never forced (some offset is offered). */
  if (mb_game_get_config(g)->auto_slow) assert_true(expect > 0);
  for (int32_t k = 0; k < A - 1; k++) {
    int64_t off = mb_game_candidate_offset(g, k);
    if (k >= expect) {
      assert_int_equal(mask[k], 0);
      assert_int_equal(off, MB_GAME_ILLEGAL);
      continue;
    }
    assert_int_equal(mask[k], 1);
    assert_int_equal(off, scratch[k].off);
    assert_int_equal(off % hw->alignment, 0);
    assert_true(off >= 0 && off + w->buffers[b].size <= hw->capacity);
    assert_true(brute_free(w, a->offset, b, off));
  }
  int64_t best;
  const mb_buffer *buf = &w->buffers[b];
  if (mb_occupancy_best_fit(occ, buf->start, buf->end, buf->size, hw->alignment, &best))
    assert_int_equal(mb_game_candidate_offset(g, 0), best);
  else
    assert_int_equal(expect, 0);
}

/* Checks the candidate block of the observation against its definition (datasets/GAME.md),
 * recomputed from the brute-force candidates and the visiting order. */
static void check_candidate_features(mb_game *g, const mb_workload *w, const mb_hardware *hw,
                                     const cand *cands, const float *obs) {
  const mb_game_config *c = mb_game_get_config(g);
  int32_t b = mb_game_current_buffer(g), n = mb_game_n_candidates(g);
  const mb_buffer *buf = &w->buffers[b];
  mb_time_ps *benefit = malloc(sizeof *benefit * (size_t)w->n_buffers);
  mb_standalone_benefits(w, hw, benefit);
  const int32_t *visit = mb_game_visit_order(g);
  int32_t nv = mb_game_n_visitable(g), pos = 0;
  while (visit[pos] != b) pos++;
  double total = 0;
  for (int32_t i = pos + 1; i < nv && i <= pos + c->lookahead; i++)
    total += (double)benefit[visit[i]];
  const float *cf = obs + MB_GAME_OBS_BUFFER + c->addr_bins * c->time_bins;
  double cap = (double)hw->capacity;
  for (int32_t k = 0; k < c->n_actions - 1; k++, cf += MB_GAME_OBS_PER_CANDIDATE) {
    if (k >= n) {
      for (int32_t f = 0; f < MB_GAME_OBS_PER_CANDIDATE; f++) assert_true(cf[f] == 0.0f);
      continue;
    }
    const cand *cd = &cands[k];
    int64_t left = cd->off - cd->gap_off, right = cd->gap_off + cd->gap - (cd->off + buf->size);
    int64_t rest = left > right ? left : right;
    double blocked = 0;
    for (int32_t i = pos + 1; i < nv && i <= pos + c->lookahead; i++) {
      const mb_buffer *r = &w->buffers[visit[i]];
      if (r->start <= buf->end && buf->start <= r->end && r->size <= cd->gap && r->size > rest)
        blocked += (double)benefit[visit[i]];
    }
    assert_true(cf[MB_GAME_C_LEGAL] == 1.0f);
    assert_float_equal(cf[MB_GAME_C_OFFSET], (double)cd->off / cap, 1e-6);
    assert_float_equal(cf[MB_GAME_C_GAP], (double)cd->gap / cap, 1e-6);
    assert_float_equal(cf[MB_GAME_C_WASTE], (double)(cd->gap - buf->size) / cap, 1e-6);
    assert_true(cf[MB_GAME_C_TOP] == (cd->top ? 1.0f : 0.0f));
    assert_float_equal(cf[MB_GAME_C_BLOCKING], total > 0 ? blocked / total : 0.0, 1e-6);
  }
  free(benefit);
}

/* Plays one episode, checking every decision; returns the final time. */
static mb_time_ps play_checked(mb_game *g, const mb_workload *w, const mb_hardware *hw, policy p,
                               mb_rng *rng, mb_assignment *out) {
  int32_t A = mb_game_n_actions(g);
  uint8_t *mask = malloc((size_t)A);
  cand *scratch = malloc(sizeof *scratch * (size_t)(2 * w->n_buffers + 2));
  mb_occupancy *occ = mb_occupancy_new(w->schedule_length, hw->capacity, w->n_buffers);
  float *obs = malloc(sizeof *obs * (size_t)mb_game_observation_size(mb_game_get_config(g)));
  int32_t obs_n = mb_game_observation_size(mb_game_get_config(g));
  mb_game_reset(g);
  double sum = 0;
  int32_t steps = 0;
  while (!mb_game_done(g)) {
    check_decision(g, w, hw, out, occ, mask, scratch);
    mb_game_observe(g, obs);
    check_candidate_features(g, w, hw, scratch, obs);
    for (int32_t i = 0; i < obs_n; i++) assert_true(obs[i] >= 0.0f && obs[i] <= 1.0f);
    int32_t b = mb_game_current_buffer(g);
    int32_t act = pick(g, p, rng, mask);
    int64_t off = mb_game_candidate_offset(g, act);
    double r = -1;
    mb_error err;
    if (!mb_game_step(g, act, &r, &err)) fail_msg("step: %s", err.message);
    assert_true(r >= 0);
    sum += r;
    steps++;
    if (off != MB_SLOW)
      assert_true(mb_occupancy_place(occ, b, w->buffers[b].start, w->buffers[b].end, off,
                                     w->buffers[b].size));
  }
  assert_int_equal(mb_game_depth(g), steps);
  assert_int_equal(mb_game_current_buffer(g), -1);
  assert_int_equal(mb_game_heuristic_action(g), -1);
  mb_game_legal_mask(g, mask);
  for (int32_t k = 0; k < A; k++) assert_int_equal(mask[k], 0);
  mb_error err;
  assert_true(mb_game_assignment(g, out, &err));
  if (!mb_validate(w, hw, out, &err)) fail_msg("invalid assignment: %s", err.message);
  mb_time_ps t = time_of(w, hw, out);
  assert_int_equal(t, mb_game_time(g));
  mb_time_ps ts = mb_slow_time(w, hw);
  assert_int_equal(ts, mb_game_slow_time(g));
  double ret = ts > 0 ? (double)(ts - t) / (double)ts : 0;
  assert_true(mb_game_return(g) == ret);
  assert_true(fabs(sum - ret) <= 1e-9);
  free(mask);
  free(scratch);
  free(obs);
  mb_occupancy_free(occ);
  return t;
}

/* The heuristic policy against the heuristic solver: same time, same offsets on every buffer
 * the game visits (the solver may also place zero-benefit buffers, which change no time). */
static void check_heuristic(const mb_workload *w, const mb_hardware *hw) {
  mb_game_config c;
  mb_game_config_default(&c);
  mb_error err;
  mb_game *g = mb_game_new(w, hw, &c, &err);
  if (!g) fail_msg("game: %s", err.message);
  mb_assignment *ga = mb_assignment_new(w->n_buffers), *ha = mb_assignment_new(w->n_buffers);
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_time_ps t_game = play_checked(g, w, hw, HEURISTIC, &rng, ga);
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  mb_solver_stats st;
  memset(&st, 0, sizeof st);
  if (!mb_solve_heuristic(w, hw, &opt, &rng, ha, &st, &err)) fail_msg("heuristic: %s", err.message);
  mb_solver_stats_free(&st);
  assert_int_equal(t_game, time_of(w, hw, ha));
  const int32_t *visit = mb_game_visit_order(g);
  for (int32_t i = 0; i < mb_game_n_visitable(g); i++)
    assert_int_equal(ga->offset[visit[i]], ha->offset[visit[i]]);
  mb_assignment_free(ga);
  mb_assignment_free(ha);
  mb_game_free(g);
}

/* ---- tests ---- */

static void test_config(void **state) {
  (void)state;
  mb_game_config c;
  mb_game_config_default(&c);
  assert_int_equal(c.n_actions, 16);
  assert_int_equal(mb_game_observation_size(&c), 10 + 16 * 16 + 15 * 6 + 5);
  mb_error err;
  assert_true(mb_game_config_check(&c, &err));
  c.n_actions = 1;
  assert_false(mb_game_config_check(&c, &err));
  assert_non_null(strstr(err.message, "n_actions"));
  mb_game_config_default(&c);
  c.time_bins = 0;
  assert_false(mb_game_config_check(&c, &err));
  assert_non_null(strstr(err.message, "time_bins"));
  mb_game_order o;
  assert_true(mb_game_order_parse("size", &o));
  assert_int_equal(o, MB_GAME_ORDER_SIZE);
  assert_string_equal(mb_game_order_name(o), "size");
  assert_false(mb_game_order_parse("bogus", &o));
  /* Every range of game.h at both ends: the bounds are accepted, one past them is refused with
   * a message naming the field. */
  static const struct {
    const char *field;
    int32_t lo, hi;
  } ranges[] = {{"n_actions", 2, 1024}, {"addr_bins", 1, 256},   {"time_bins", 1, 256},
                {"lookahead", 0, 4096}, {"next_buffers", 0, 64}, {"demand_bins", 0, 256},
                {"order", 0, 2}};
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
    for (int32_t v = ranges[i].lo - 1; v <= ranges[i].hi + 1; v++) {
      if (v > ranges[i].lo + 1 && v < ranges[i].hi - 1) v = ranges[i].hi - 1;
      mb_game_config_default(&c);
      int32_t *f = !strcmp(ranges[i].field, "n_actions")      ? &c.n_actions
                   : !strcmp(ranges[i].field, "addr_bins")    ? &c.addr_bins
                   : !strcmp(ranges[i].field, "time_bins")    ? &c.time_bins
                   : !strcmp(ranges[i].field, "lookahead")    ? &c.lookahead
                   : !strcmp(ranges[i].field, "next_buffers") ? &c.next_buffers
                   : !strcmp(ranges[i].field, "demand_bins")  ? &c.demand_bins
                                                              : NULL;
      if (f)
        *f = v;
      else
        c.order = (mb_game_order)v;
      bool inside = v >= ranges[i].lo && v <= ranges[i].hi;
      if (mb_game_config_check(&c, &err) != inside)
        fail_msg("%s = %d: expected %s", ranges[i].field, (int)v, inside ? "valid" : "refused");
      if (!inside) assert_non_null(strstr(err.message, ranges[i].field));
    }
  }
  static const double shapings[] = {-0.01, 0, 100, 100.01, NAN};
  for (size_t i = 0; i < sizeof shapings / sizeof shapings[0]; i++) {
    mb_game_config_default(&c);
    c.shaping = shapings[i];
    bool inside = shapings[i] >= 0 && shapings[i] <= 100;
    assert_true(mb_game_config_check(&c, &err) == inside);
    if (!inside) assert_non_null(strstr(err.message, "shaping"));
  }
}

/* The next-buffers block: with N = 3 the layout grows by 18 floats before the progress block,
 * and (auto_slow off, so every buffer of the order is a decision) the block's first entry is
 * exactly the next observation's current buffer, while the last decision sees none. */
static void test_next_buffers(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  mb_game_config c;
  mb_game_config_default(&c);
  int32_t base = mb_game_observation_size(&c);
  c.next_buffers = 3;
  c.auto_slow = false;
  assert_int_equal(mb_game_observation_size(&c), base + 3 * MB_GAME_OBS_PER_NEXT);
  mb_error err;
  c.next_buffers = 65;
  assert_false(mb_game_config_check(&c, &err));
  assert_non_null(strstr(err.message, "next_buffers"));
  c.next_buffers = 3;
  int32_t n = mb_game_observation_size(&c);
  int32_t next_at = MB_GAME_OBS_BUFFER + c.addr_bins * c.time_bins +
                    (c.n_actions - 1) * MB_GAME_OBS_PER_CANDIDATE;
  float *obs = malloc(sizeof *obs * (size_t)n), *prev = malloc(sizeof *prev * (size_t)n);
  assert_non_null(obs);
  assert_non_null(prev);
  int64_t checked = 0;
  for (int iter = 0; iter < 40; iter++) {
    mb_hardware hw = test_hardware(&rng);
    mb_workload *w = random_workload(&rng, hw.capacity, false);
    mb_game *g = mb_game_new(w, &hw, &c, &err);
    if (!g) fail_msg("game: %s", err.message);
    uint8_t mask[16];
    while (!mb_game_done(g)) {
      mb_game_observe(g, prev);
      mb_game_legal_mask(g, mask);
      int32_t act = mb_rng_pick(&rng, mask, c.n_actions, -1);
      double r;
      assert_true(mb_game_step(g, act, &r, &err));
      const float *next = prev + next_at;
      if (mb_game_done(g)) {
        for (int32_t i = 0; i < 3 * MB_GAME_OBS_PER_NEXT; i++) assert_true(next[i] == 0.0f);
        break;
      }
      mb_game_observe(g, obs);
      assert_true(next[MB_GAME_N_PRESENT] == 1.0f);
      assert_true(next[MB_GAME_N_SIZE] == obs[MB_GAME_F_SIZE]);
      assert_true(next[MB_GAME_N_START] == obs[MB_GAME_F_START]);
      assert_true(next[MB_GAME_N_END] == obs[MB_GAME_F_END]);
      assert_true(next[MB_GAME_N_BENEFIT] == obs[MB_GAME_F_BENEFIT]);
      /* the block shifts: what was second is now first */
      assert_memory_equal(obs + next_at, next + MB_GAME_OBS_PER_NEXT,
                          MB_GAME_OBS_PER_NEXT * sizeof(float) - sizeof(float));
      checked++;
    }
    mb_game_free(g);
    mb_workload_free(w);
  }
  assert_true(checked > 100);
  free(obs);
  free(prev);
}

/* mb_game_window: at every decision the current buffer's live range lies inside a window of
 * at least min(time_bins, schedule) ops, three times the live range where the schedule allows,
 * inside the schedule, and the observation's window fields locate the live range in it; length
 * 0 once the episode is over. */
static void test_window(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  mb_game_config c;
  mb_game_config_default(&c);
  c.time_bins = 8;
  int32_t n = mb_game_observation_size(&c);
  float *obs = malloc(sizeof *obs * (size_t)n);
  assert_non_null(obs);
  mb_error err;
  int64_t checked = 0, centred = 0;
  for (int iter = 0; iter < 40; iter++) {
    mb_hardware hw = test_hardware(&rng);
    mb_workload *w = random_workload(&rng, hw.capacity, iter % 4 == 3);
    mb_game *g = mb_game_new(w, &hw, &c, &err);
    if (!g) fail_msg("game: %s", err.message);
    assert_ptr_equal(mb_game_workload(g), w);
    int32_t L = w->schedule_length > 0 ? w->schedule_length : 1;
    uint8_t mask[16];
    while (!mb_game_done(g)) {
      int32_t ws, wl;
      mb_game_window(g, &ws, &wl);
      const mb_buffer *b = &w->buffers[mb_game_current_buffer(g)];
      int32_t len = b->end - b->start + 1;
      assert_true(ws >= 0 && wl >= 1 && ws + wl <= L);
      assert_true(ws <= b->start && b->end < ws + wl);
      assert_true(wl >= (c.time_bins < L ? c.time_bins : L));
      assert_true(wl == (3 * len > c.time_bins ? 3 * len : c.time_bins) || wl == L);
      /* Centred on the live range (the spare ops split evenly, the odd one after it), unless
       * shifted to stay inside the schedule: then the window touches that end. */
      int32_t before = b->start - ws, after = ws + wl - (b->end + 1);
      if (ws > 0 && ws + wl < L) assert_true(after == before || after == before + 1);
      if (before > after) assert_true(ws + wl == L);
      if (after > before + 1) assert_true(ws == 0);
      centred += ws > 0 && ws + wl < L && before > 0;
      mb_game_observe(g, obs);
      assert_float_equal(obs[MB_GAME_F_WINDOW_START], (double)(b->start - ws) / wl, 1e-6);
      assert_float_equal(obs[MB_GAME_F_WINDOW_END], (double)(b->end + 1 - ws) / wl, 1e-6);
      assert_true(mb_game_step(g, random_legal(g, &rng, mask), NULL, &err));
      checked++;
    }
    int32_t ws = -1, wl = -1;
    mb_game_window(g, &ws, &wl);
    assert_int_equal(wl, 0);
    mb_game_free(g);
    mb_workload_free(w);
  }
  assert_true(checked > 100);
  assert_true(centred > 20);
  free(obs);
}

/* A random-play episode with what a brute force of the observation needs beside the game:
 * which buffers are fast, each buffer's standalone benefit, the visiting order with a cursor
 * at the current buffer, and the summed standalone benefit of the visitable buffers. Owns the
 * workload. */
typedef struct brute_episode {
  mb_workload *w;
  mb_game *g;
  mb_time_ps *benefit;
  bool *fast;
  const int32_t *visit;
  int32_t n_visit, cursor;
  double total;
} brute_episode;

static void brute_episode_start(brute_episode *e, mb_workload *w, const mb_hardware *hw,
                                const mb_game_config *c) {
  mb_error err;
  e->w = w;
  e->g = mb_game_new(w, hw, c, &err);
  if (!e->g) fail_msg("game: %s", err.message);
  e->benefit = malloc(sizeof *e->benefit * (size_t)w->n_buffers);
  e->fast = calloc((size_t)w->n_buffers, sizeof *e->fast);
  assert_non_null(e->benefit);
  assert_non_null(e->fast);
  mb_standalone_benefits(w, hw, e->benefit);
  e->visit = mb_game_visit_order(e->g);
  e->n_visit = mb_game_n_visitable(e->g);
  e->cursor = 0;
  e->total = 0;
  for (int32_t i = 0; i < e->n_visit; i++) e->total += (double)e->benefit[e->visit[i]];
}

/* The current buffer, with the cursor moved to it (auto_slow skips some). */
static int32_t brute_episode_current(brute_episode *e) {
  int32_t b = mb_game_current_buffer(e->g);
  while (e->visit[e->cursor] != b) e->cursor++;
  return b;
}

/* Plays act on the current buffer b and records where it went. */
static void brute_episode_step(brute_episode *e, int32_t b, int32_t act) {
  mb_error err;
  assert_true(mb_game_step(e->g, act, NULL, &err));
  e->fast[b] = act != mb_game_slow_action(e->g);
}

static void brute_episode_end(brute_episode *e) {
  free(e->benefit);
  free(e->fast);
  mb_game_free(e->g);
  mb_workload_free(e->w);
}

/* The gain block: 2 + next_buffers floats before the progress block; at every decision the gain
 * equals the time a from-scratch evaluation (mb_program_time) saves by adding the buffer to the
 * current placement, and the shares equal the standalone benefits of the buffer and of the next
 * ones of the order, all over the summed standalone benefit of the visitable buffers; the block
 * is zero once the episode is over. */
static void test_gain_features(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  mb_game_config c;
  mb_game_config_default(&c);
  assert_false(c.gain_features);
  assert_int_equal(mb_game_gain_block_size(&c), 0);
  int64_t checked = 0, positive = 0, reduced = 0;
  for (int iter = 0; iter < 40; iter++) {
    mb_game_config_default(&c);
    int32_t base = mb_game_observation_size(&c);
    c.gain_features = true;
    c.next_buffers = iter % 4 == 1 ? 3 : 0;
    int32_t n = mb_game_observation_size(&c), gsize = MB_GAME_OBS_GAIN + c.next_buffers;
    assert_int_equal(mb_game_gain_block_size(&c), gsize);
    assert_int_equal(n, base + c.next_buffers * MB_GAME_OBS_PER_NEXT + gsize);
    int32_t gain_at = n - MB_GAME_OBS_PROGRESS - gsize;
    float *obs = malloc(sizeof *obs * (size_t)n);
    assert_non_null(obs);
    mb_hardware hw = test_hardware(&rng);
    /* a slow compute peak makes ops compute-bound once part of their bytes are fast: the gain
     * of a buffer then depends on what is already placed (less than its standalone benefit) */
    if (iter % 2) hw.peak_flops = 2e9;
    brute_episode e;
    brute_episode_start(&e, random_workload(&rng, hw.capacity, iter % 3 == 0), &hw, &c);
    uint8_t mask[16];
    while (!mb_game_done(e.g)) {
      mb_game_observe(e.g, obs);
      int32_t b = brute_episode_current(&e);
      mb_time_ps before = mb_program_time(e.w, &hw, e.fast);
      e.fast[b] = true;
      mb_time_ps after = mb_program_time(e.w, &hw, e.fast);
      e.fast[b] = false;
      const float *gf = obs + gain_at;
      assert_true(fabs(gf[MB_GAME_G_GAIN] - (double)(before - after) / e.total) < 1e-6);
      for (int32_t k = 0; k <= c.next_buffers; k++) {
        double want =
            e.cursor + k < e.n_visit ? (double)e.benefit[e.visit[e.cursor + k]] / e.total : 0;
        assert_true(fabs(gf[MB_GAME_G_SHARE + k] - want) < 1e-6);
      }
      positive += gf[MB_GAME_G_GAIN] > 0;
      reduced += gf[MB_GAME_G_GAIN] < gf[MB_GAME_G_SHARE] - 1e-6f;
      checked++;
      mb_game_legal_mask(e.g, mask);
      int32_t act = mb_rng_pick(&rng, mask, c.n_actions, -1);
      brute_episode_step(&e, b, act);
    }
    mb_game_observe(e.g, obs);
    for (int32_t i = 0; i < gsize; i++) assert_true(obs[gain_at + i] == 0.0f);
    free(obs);
    brute_episode_end(&e);
  }
  assert_true(checked > 100);
  assert_true(positive > checked / 2);
  assert_true(reduced > 10);
}

/* Brute force of the demand profile (game.h) at one decision: per op, the fast bytes placed and
 * the bytes and benefit per op of the buffers after visit[cursor]; each bin the ops' mean over
 * its span (op t covers [t, t + 1)), then normalised and squashed as the game does. */
static void brute_demand(const mb_workload *w, const mb_hardware *hw, const bool *fast,
                         const int32_t *visit, int32_t n_visit, int32_t cursor,
                         const mb_time_ps *benefit, double total, int32_t D, double *want) {
  int32_t L = w->schedule_length > 0 ? w->schedule_length : 1;
  double *per_op = calloc((size_t)L * 3, sizeof *per_op);
  assert_non_null(per_op);
  for (int32_t r = 0; r < w->n_buffers; r++)
    if (fast[r])
      for (int32_t t = w->buffers[r].start; t <= w->buffers[r].end; t++)
        per_op[3 * t] += (double)w->buffers[r].size;
  for (int32_t i = cursor + 1; i < n_visit; i++) {
    const mb_buffer *b = &w->buffers[visit[i]];
    for (int32_t t = b->start; t <= b->end; t++) {
      per_op[3 * t + 1] += (double)b->size;
      per_op[3 * t + 2] += (double)benefit[visit[i]] / (b->end - b->start + 1);
    }
  }
  double binw = (double)L / D, cap = (double)hw->capacity;
  for (int32_t k = 0; k < D; k++) {
    double lo = k * binw, hi = lo + binw, sum[3] = {0, 0, 0};
    for (int32_t t = 0; t < L; t++) {
      double ov = (t + 1 < hi ? t + 1 : hi) - (t > lo ? t : lo);
      if (ov > 0)
        for (int j = 0; j < 3; j++) sum[j] += per_op[3 * t + j] * ov;
    }
    double used = sum[0] / binw / cap, need = sum[1] / binw / cap, share = sum[2] / total * D;
    want[3 * k + MB_GAME_D_USED] = used > 1 ? 1 : used;
    want[3 * k + MB_GAME_D_DEMAND] = need / (1 + need);
    want[3 * k + MB_GAME_D_BENEFIT] = share / (1 + share);
  }
  free(per_op);
}

/* The demand profile: 3 * demand_bins floats after the next buffers; at every decision of random
 * play it equals the brute force above; bins change as buffers are placed and passed; the block
 * is zero once the episode is over. */
static void test_demand_profile(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 13);
  mb_game_config c;
  mb_game_config_default(&c);
  assert_int_equal(c.demand_bins, 0);
  mb_error err;
  c.demand_bins = 257;
  assert_false(mb_game_config_check(&c, &err));
  assert_non_null(strstr(err.message, "demand_bins"));
  int64_t checked = 0, used_seen = 0, demand_seen = 0;
  for (int iter = 0; iter < 40; iter++) {
    mb_game_config_default(&c);
    int32_t base = mb_game_observation_size(&c);
    c.demand_bins = 1 + iter % 24;
    c.next_buffers = iter % 3 == 1 ? 2 : 0;
    c.gain_features = iter % 2;
    int32_t D = c.demand_bins, n = mb_game_observation_size(&c);
    assert_int_equal(n, base + c.next_buffers * MB_GAME_OBS_PER_NEXT + mb_game_gain_block_size(&c) +
                            D * MB_GAME_OBS_PER_DEMAND_BIN);
    int32_t at = MB_GAME_OBS_BUFFER + c.addr_bins * c.time_bins +
                 (c.n_actions - 1) * MB_GAME_OBS_PER_CANDIDATE +
                 c.next_buffers * MB_GAME_OBS_PER_NEXT;
    float *obs = malloc(sizeof *obs * (size_t)n);
    double *want = malloc(sizeof *want * (size_t)D * MB_GAME_OBS_PER_DEMAND_BIN);
    assert_non_null(obs);
    assert_non_null(want);
    mb_hardware hw = test_hardware(&rng);
    brute_episode e;
    brute_episode_start(&e, random_workload(&rng, hw.capacity, iter % 3 == 0), &hw, &c);
    uint8_t mask[16];
    while (!mb_game_done(e.g)) {
      mb_game_observe(e.g, obs);
      int32_t b = brute_episode_current(&e);
      brute_demand(e.w, &hw, e.fast, e.visit, e.n_visit, e.cursor, e.benefit, e.total, D, want);
      for (int32_t i = 0; i < D * MB_GAME_OBS_PER_DEMAND_BIN; i++) {
        if (!(fabs(obs[at + i] - want[i]) <= 1e-5))
          fail_msg("iter %d decision %ld: demand value %d is %g, expected %g", iter, (long)checked,
                   (int)i, (double)obs[at + i], want[i]);
        int32_t field = i % MB_GAME_OBS_PER_DEMAND_BIN;
        used_seen += field == MB_GAME_D_USED && obs[at + i] > 0;
        demand_seen += field == MB_GAME_D_DEMAND && obs[at + i] > 0;
      }
      checked++;
      brute_episode_step(&e, b, random_legal(e.g, &rng, mask));
    }
    mb_game_observe(e.g, obs);
    for (int32_t i = 0; i < D * MB_GAME_OBS_PER_DEMAND_BIN; i++) assert_true(obs[at + i] == 0.0f);
    free(obs);
    free(want);
    brute_episode_end(&e);
  }
  assert_true(checked > 100);
  assert_true(used_seen > checked);
  assert_true(demand_seen > checked);
}

/* The visiting order against its definition (datasets/GAME.md, "Episode"): exactly the buffers
 * that are not pinned, fit the capacity (size == capacity included) and have a positive
 * standalone benefit, each once, and every consecutive pair strictly ranked by the order's keys
 * (start: earlier start, then longer live range, then lower id; size: larger, then earlier
 * start, then lower id); the heuristic order is mb_heuristic_order's without the others. Sizes
 * and live ranges take a few values, so that ties on the first two keys are common. */
static int cmp_visit(const mb_workload *w, mb_game_order order, int32_t x, int32_t y) {
  const mb_buffer *a = &w->buffers[x], *b = &w->buffers[y];
  int64_t ka[2], kb[2];
  if (order == MB_GAME_ORDER_START) {
    ka[0] = a->start, ka[1] = -(int64_t)(a->end - a->start); /* longer first */
    kb[0] = b->start, kb[1] = -(int64_t)(b->end - b->start);
  } else {
    ka[0] = -a->size, ka[1] = a->start; /* larger first */
    kb[0] = -b->size, kb[1] = b->start;
  }
  for (int i = 0; i < 2; i++)
    if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
  return 2 * ((x > y) - (x < y)); /* +-2: decided by the id */
}

static void test_visit_order(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 17);
  int64_t ties = 0, full = 0;
  for (int iter = 0; iter < 60; iter++) {
    mb_hardware hw = test_hardware(&rng);
    const int64_t sizes[] = {hw.capacity, hw.capacity / 2, hw.capacity / 4, hw.capacity + 1};
    mb_workload_builder *bl = mb_builder_new("order", "test_game");
    int32_t n_ops = (int32_t)mb_rng_range(&rng, 2, 6), n_buf = (int32_t)mb_rng_range(&rng, 2, 40);
    mb_builder_set_schedule(bl, n_ops, 1000000);
    for (int32_t i = 0; i < n_buf; i++) {
      char name[32];
      snprintf(name, sizeof name, "b%d", (int)i);
      int32_t s = (int32_t)mb_rng_below(&rng, (uint64_t)n_ops),
              e = s + (int32_t)mb_rng_below(&rng, 2);
      int32_t id = mb_builder_add_buffer(bl, name, sizes[mb_rng_below(&rng, 4)], s,
                                         e < n_ops ? e : n_ops - 1, mb_rng_below(&rng, 8) == 0);
      mb_builder_set_benefit(bl, id, mb_rng_below(&rng, 6) == 0 ? 0 : mb_rng_range(&rng, 1, 100));
    }
    mb_error err;
    mb_workload *w = mb_builder_finish(bl, &err);
    if (!w) fail_msg("workload: %s", err.message);
    mb_time_ps *benefit = malloc(sizeof *benefit * (size_t)n_buf);
    int32_t *heur = malloc(sizeof *heur * (size_t)n_buf);
    bool *seen = malloc((size_t)n_buf);
    assert_non_null(benefit);
    assert_non_null(heur);
    assert_non_null(seen);
    mb_standalone_benefits(w, &hw, benefit);
    int32_t n_heur = mb_heuristic_order(w, &hw, heur), expect = 0;
    for (int32_t b = 0; b < n_buf; b++)
      expect += !w->buffers[b].pinned && w->buffers[b].size <= hw.capacity && benefit[b] > 0;
    for (int order = 0; order < 3; order++) {
      mb_game_config c;
      mb_game_config_default(&c);
      c.order = (mb_game_order)order;
      mb_game *g = mb_game_new(w, &hw, &c, &err);
      if (!g) fail_msg("game: %s", err.message);
      const int32_t *visit = mb_game_visit_order(g);
      int32_t n = mb_game_n_visitable(g);
      assert_int_equal(n, expect);
      memset(seen, 0, (size_t)n_buf);
      for (int32_t i = 0; i < n; i++) {
        const mb_buffer *b = &w->buffers[visit[i]];
        assert_false(seen[visit[i]]);
        seen[visit[i]] = true;
        assert_true(!b->pinned && b->size <= hw.capacity && benefit[visit[i]] > 0);
        full += b->size == hw.capacity;
        if (i == 0 || order == MB_GAME_ORDER_HEURISTIC) continue;
        int cmp = cmp_visit(w, (mb_game_order)order, visit[i - 1], visit[i]);
        if (cmp >= 0)
          fail_msg("order %s: '%s' before '%s'", mb_game_order_name((mb_game_order)order),
                   w->buffers[visit[i - 1]].name, b->name);
        ties += cmp == -2;
      }
      if (order == MB_GAME_ORDER_HEURISTIC) {
        int32_t k = 0;
        for (int32_t i = 0; i < n_heur; i++)
          if (seen[heur[i]]) assert_int_equal(visit[k++], heur[i]);
        assert_int_equal(k, n);
      }
      mb_game_free(g);
    }
    free(benefit);
    free(heur);
    free(seen);
    mb_workload_free(w);
  }
  assert_true(ties > 50);
  assert_true(full > 10);
}

/* Bytes of [0, capacity) taken over [start, end] by the buffers with an offset (the union of
 * their address ranges). */
static int64_t brute_used_bytes(const mb_workload *w, const mb_hardware *hw, const int64_t *off,
                                int32_t start, int32_t end) {
  span *sp = malloc(sizeof *sp * (size_t)(w->n_buffers + 1));
  assert_non_null(sp);
  int32_t n = 0;
  for (int32_t r = 0; r < w->n_buffers; r++)
    if (off[r] != MB_SLOW && w->buffers[r].start <= end && start <= w->buffers[r].end)
      sp[n++] = (span){off[r], off[r] + w->buffers[r].size};
  qsort(sp, (size_t)n, sizeof *sp, cmp_span);
  int64_t used = 0, cur = 0;
  for (int32_t i = 0; i < n; i++) {
    int64_t lo = sp[i].lo > cur ? sp[i].lo : cur,
            hi = sp[i].hi < hw->capacity ? sp[i].hi : hw->capacity;
    if (hi > lo) used += hi - lo;
    if (sp[i].hi > cur) cur = sp[i].hi;
  }
  free(sp);
  return used;
}

static double overlap(double lo1, double hi1, double lo2, double hi2) {
  double lo = lo1 > lo2 ? lo1 : lo2, hi = hi1 < hi2 ? hi1 : hi2;
  return hi > lo ? hi - lo : 0;
}

static void expect_near(const char *what, int32_t i, float got, double want) {
  if (!(fabs((double)got - want) <= 1e-5))
    fail_msg("%s %d: %.9g, expected %.9g", what, (int)i, (double)got, want);
}

/* The current buffer, occupancy picture, next buffers and progress blocks of obs against their
 * definitions (datasets/GAME.md), from the workload, the game's placement (checked by the
 * validator in play_checked) and the brute-force candidates: fields as the ratios the tables
 * give, each picture cell the fraction of its area (1/B of the capacity by 1/T of the window)
 * that fast buffers cover. Once the episode is over, zeros but the progress block. */
static void check_observation(mb_game *g, const mb_workload *w, const mb_hardware *hw,
                              const float *obs) {
  const mb_game_config *c = mb_game_get_config(g);
  int32_t obs_n = mb_game_observation_size(c), B = c->addr_bins, T = c->time_bins;
  const float *prog = obs + obs_n - MB_GAME_OBS_PROGRESS;
  mb_time_ps *benefit = malloc(sizeof *benefit * (size_t)w->n_buffers);
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  cand *cands = malloc(sizeof *cands * (size_t)(2 * w->n_buffers + 2));
  assert_non_null(benefit);
  assert_non_null(a);
  assert_non_null(cands);
  mb_standalone_benefits(w, hw, benefit);
  assert_true(mb_game_assignment(g, a, NULL));
  const int32_t *visit = mb_game_visit_order(g);
  int32_t nv = mb_game_n_visitable(g), cur = 0, b = mb_game_current_buffer(g);
  while (cur < nv && visit[cur] != b) cur++;
  double total = 0, left = 0, max_bpb = 0;
  int32_t max_uses = 0;
  for (int32_t i = 0; i < nv; i++) {
    const mb_buffer *r = &w->buffers[visit[i]];
    total += (double)benefit[visit[i]];
    if (i >= cur) left += (double)benefit[visit[i]];
    double bpb = (double)benefit[visit[i]] / (double)r->size;
    if (bpb > max_bpb) max_bpb = bpb;
    if (r->n_uses > max_uses) max_uses = r->n_uses;
  }
  mb_time_ps ts = mb_slow_time(w, hw), t = time_of(w, hw, a);
  double t_norm = ts > 0 ? (double)ts : 1, cap = (double)hw->capacity;
  double ret = (double)(ts - t) / t_norm;
  expect_near("return", 0, prog[MB_GAME_P_RETURN], ret > 1 ? 1 : ret < 0 ? 0 : ret);
  if (b < 0) {
    for (int32_t i = 0; i < obs_n - MB_GAME_OBS_PROGRESS; i++) assert_true(obs[i] == 0.0f);
    assert_true(prog[MB_GAME_P_VISITED] == 1.0f);
    assert_true(prog[MB_GAME_P_BENEFIT_LEFT] == 0.0f);
    assert_true(prog[MB_GAME_P_IN_USE] == 0.0f);
    assert_true(prog[MB_GAME_P_CANDIDATES] == 0.0f);
  } else {
    const mb_buffer *buf = &w->buffers[b];
    int32_t L = w->schedule_length, ws, wl, A = c->n_actions;
    mb_game_window(g, &ws, &wl);
    int32_t nc = brute_candidates(w, hw, a->offset, b, cands);
    expect_near("visited", 0, prog[MB_GAME_P_VISITED], (double)cur / nv);
    expect_near("benefit left", 0, prog[MB_GAME_P_BENEFIT_LEFT], left / total);
    expect_near("in use", 0, prog[MB_GAME_P_IN_USE],
                (double)brute_used_bytes(w, hw, a->offset, buf->start, buf->end) / cap);
    expect_near("candidates", 0, prog[MB_GAME_P_CANDIDATES],
                (double)(nc < A - 1 ? nc : A - 1) / (A - 1));
    /* The current buffer. */
    expect_near("size", 0, obs[MB_GAME_F_SIZE], (double)buf->size / cap);
    expect_near("log size", 0, obs[MB_GAME_F_LOG_SIZE],
                cap >= 2 ? log2((double)buf->size) / log2(cap) : 0);
    expect_near("length", 0, obs[MB_GAME_F_LENGTH], (double)(buf->end - buf->start + 1) / L);
    expect_near("start", 0, obs[MB_GAME_F_START], (double)buf->start / L);
    expect_near("end", 0, obs[MB_GAME_F_END], (double)(buf->end + 1) / L);
    expect_near("benefit", 0, obs[MB_GAME_F_BENEFIT], (double)benefit[b] / t_norm);
    expect_near("benefit per byte", 0, obs[MB_GAME_F_BENEFIT_PER_BYTE],
                (double)benefit[b] / (double)buf->size / max_bpb);
    expect_near("uses", 0, obs[MB_GAME_F_USES], max_uses > 0 ? (double)buf->n_uses / max_uses : 0);
    /* The picture: cell (i, j) covers addresses [i cap / B, (i + 1) cap / B) and the times
     * [ws + j wl / T, ws + (j + 1) wl / T); buffer r covers [offset, offset + size) over
     * [start, end + 1). */
    double ah = cap / B, th = (double)wl / T;
    for (int32_t i = 0; i < B; i++)
      for (int32_t j = 0; j < T; j++) {
        double cover = 0;
        for (int32_t r = 0; r < w->n_buffers; r++) {
          const mb_buffer *rb = &w->buffers[r];
          if (a->offset[r] == MB_SLOW) continue;
          cover += overlap((double)a->offset[r], (double)(a->offset[r] + rb->size), i * ah,
                           (i + 1) * ah) /
                   ah * overlap(rb->start, rb->end + 1.0, ws + j * th, ws + (j + 1) * th) / th;
        }
        expect_near("picture cell", i * T + j, obs[MB_GAME_OBS_BUFFER + i * T + j],
                    cover > 1 ? 1 : cover);
      }
    /* The next buffers. */
    const float *nf = obs + mb_game_candidate_block_offset(c) + (A - 1) * MB_GAME_OBS_PER_CANDIDATE;
    for (int32_t k = 1; k <= c->next_buffers; k++, nf += MB_GAME_OBS_PER_NEXT) {
      if (cur + k >= nv) {
        for (int32_t f = 0; f < MB_GAME_OBS_PER_NEXT; f++) assert_true(nf[f] == 0.0f);
        continue;
      }
      const mb_buffer *rb = &w->buffers[visit[cur + k]];
      bool overlaps = !(rb->end < buf->start || buf->end < rb->start);
      assert_true(nf[MB_GAME_N_PRESENT] == 1.0f);
      expect_near("next size", k, nf[MB_GAME_N_SIZE], (double)rb->size / cap);
      expect_near("next start", k, nf[MB_GAME_N_START], (double)rb->start / L);
      expect_near("next end", k, nf[MB_GAME_N_END], (double)(rb->end + 1) / L);
      expect_near("next benefit", k, nf[MB_GAME_N_BENEFIT],
                  (double)benefit[visit[cur + k]] / t_norm);
      assert_true(nf[MB_GAME_N_OVERLAPS] == (overlaps ? 1.0f : 0.0f));
    }
  }
  free(benefit);
  free(cands);
  mb_assignment_free(a);
}

/* check_observation at every decision of random play and after it, over random configs
 * (picture sizes that do not divide the capacity or the window, next buffers, a demand profile
 * and the gain block around the checked blocks). */
static void test_observation(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 29);
  int64_t checked = 0;
  for (int iter = 0; iter < 40; iter++) {
    mb_game_config c;
    mb_game_config_default(&c);
    c.order = (mb_game_order)(iter % 3);
    c.addr_bins = (int32_t)mb_rng_range(&rng, 1, 20);
    c.time_bins = (int32_t)mb_rng_range(&rng, 1, 20);
    c.n_actions = (int32_t)mb_rng_range(&rng, 2, 9);
    c.next_buffers = iter % 2 ? 3 : 0;
    c.demand_bins = iter % 4 < 2 ? 5 : 0;
    c.gain_features = iter % 4 == 1;
    c.auto_slow = iter % 5 != 0;
    int32_t obs_n = mb_game_observation_size(&c);
    float *obs = malloc(sizeof *obs * (size_t)obs_n);
    uint8_t *mask = malloc((size_t)c.n_actions);
    assert_non_null(obs);
    assert_non_null(mask);
    mb_hardware hw = test_hardware(&rng);
    mb_workload *w = random_workload(&rng, hw.capacity, iter % 3 == 2);
    mb_error err;
    mb_game *g = mb_game_new(w, &hw, &c, &err);
    if (!g) fail_msg("game: %s", err.message);
    while (!mb_game_done(g)) {
      mb_game_observe(g, obs);
      check_observation(g, w, &hw, obs);
      assert_true(mb_game_step(g, random_legal(g, &rng, mask), NULL, &err));
      checked++;
    }
    mb_game_observe(g, obs);
    check_observation(g, w, &hw, obs);
    mb_game_free(g);
    mb_workload_free(w);
    free(obs);
    free(mask);
  }
  assert_true(checked > 200);
}

/* Snapshots by hand. Capacity 100, alignment 1, one op; x (60 bytes), y (50), z (10), visited
 * by size. With x fast, y fits nowhere (100 - 60 < 50) and auto_slow skips it: depth 1 is z's
 * decision (cursor 2); with x slow it is y's (cursor 1). The state, a finished one included, is
 * its own ancestor; a snapshot with any field off is refused and changes nothing. */
static void test_restore_checks(void **state) {
  (void)state;
  mb_workload_builder *bl = mb_builder_new("snap", "test_game");
  mb_builder_set_schedule(bl, 1, 1000);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "x", 60, 0, 0, false), 60);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "y", 50, 0, 0, false), 50);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "z", 10, 0, 0, false), 10);
  mb_error err;
  mb_workload *w = mb_builder_finish(bl, &err);
  assert_non_null(w);
  mb_hardware hw = mb_test_hardware(100, 1);
  mb_game_config c;
  mb_game_config_default(&c);
  c.order = MB_GAME_ORDER_SIZE;
  mb_game *g = mb_game_new(w, &hw, &c, &err);
  assert_non_null(g);
  mb_game_snapshot root = mb_game_snapshot_take(g);
  assert_true(root.depth == 0 && root.cursor == 0 && root.serial == 0);
  assert_true(mb_game_restore(g, root, &err));
  assert_int_equal(mb_game_current_buffer(g), 0);
  /* x fast (offset 0, candidate 0), z slow: the episode is over at depth 2. */
  assert_true(mb_game_step(g, 0, NULL, &err));
  assert_int_equal(mb_game_current_buffer(g), 2);
  assert_int_equal(mb_game_depth(g), 1);
  assert_true(mb_game_step(g, mb_game_slow_action(g), NULL, &err));
  assert_true(mb_game_done(g));
  mb_game_snapshot end = mb_game_snapshot_take(g);
  assert_true(end.depth == 2 && end.cursor == 3);
  assert_true(mb_game_restore(g, end, &err));
  assert_true(mb_game_done(g));
  /* Back to the root, x slow: depth 1 again, now at y (cursor 1). */
  assert_true(mb_game_restore(g, root, &err));
  assert_true(mb_game_step(g, mb_game_slow_action(g), NULL, &err));
  assert_int_equal(mb_game_current_buffer(g), 1);
  mb_game_snapshot here = mb_game_snapshot_take(g);
  assert_true(here.depth == 1 && here.cursor == 1);
  if (!mb_game_restore(g, here, &err)) fail_msg("restore of the current state: %s", err.message);
  assert_false(mb_game_restore(g, end, &err)); /* a replaced branch */
  mb_game_snapshot bad[] = {
      {-1, 0, 0},          {2, 1, here.serial},     {1, -1, here.serial}, {1, 4, here.serial},
      {0, 0, here.serial}, {1, 1, here.serial ^ 1}, {1, 2, here.serial}, /* depth 1's cursor is 1 on
                                                                            this branch */
      {0, 1, 0},                                                         /* the root's is 0 */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err.message[0] = 0;
    if (mb_game_restore(g, bad[i], &err)) fail_msg("snapshot %d restored", (int)i);
    assert_true(strstr(err.message, "ancestor") || strstr(err.message, "cursor"));
    assert_int_equal(mb_game_depth(g), 1);
    assert_int_equal(mb_game_current_buffer(g), 1);
  }
  mb_game_free(g);
  mb_workload_free(w);
}

/* A last decision that sees as many gaps as the workload has buffers (the most there can be:
 * placed buffers + 1). Capacity 104, alignment 10, five 5-byte buffers live at op 0, each but
 * the last put at its gap's top-aligned offset: align_down(104 - 5) = 90, then in [0, 90)
 * align_down(85) = 80, then 70, 60. The last one sees the gaps [0, 60), [65, 70), [75, 80),
 * [85, 90), [95, 104): only [0, 60) holds it at an aligned offset (70, 80, 90 and 100 would end
 * past the small gaps), at 0 or align_down(55) = 50; in use 104 - (60 + 5 + 5 + 5 + 9) = 20
 * bytes. */
static void test_many_gaps(void **state) {
  (void)state;
  mb_workload_builder *bl = mb_builder_new("gaps", "test_game");
  mb_builder_set_schedule(bl, 1, 1000);
  for (int i = 0; i < 5; i++) {
    char name[8];
    snprintf(name, sizeof name, "b%d", i);
    mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, name, 5, 0, 0, false), 10);
  }
  mb_error err;
  mb_workload *w = mb_builder_finish(bl, &err);
  assert_non_null(w);
  mb_hardware hw = mb_test_hardware(104, 10);
  mb_game_config c;
  mb_game_config_default(&c);
  c.order = MB_GAME_ORDER_SIZE; /* all ties: by id */
  mb_game *g = mb_game_new(w, &hw, &c, &err);
  assert_non_null(g);
  for (int32_t i = 0; i < 4; i++) {
    assert_int_equal(mb_game_current_buffer(g), i);
    assert_int_equal(mb_game_n_candidates(g), 2);
    assert_int_equal(mb_game_candidate_offset(g, 0), 0);
    assert_int_equal(mb_game_candidate_offset(g, 1), 90 - 10 * i);
    assert_true(mb_game_step(g, 1, NULL, &err));
  }
  assert_int_equal(mb_game_current_buffer(g), 4);
  assert_int_equal(mb_game_n_candidates(g), 2);
  assert_int_equal(mb_game_candidate_offset(g, 0), 0);
  assert_int_equal(mb_game_candidate_offset(g, 1), 50);
  float *obs = malloc(sizeof *obs * (size_t)mb_game_observation_size(&c));
  assert_non_null(obs);
  mb_game_observe(g, obs);
  const float *prog = obs + mb_game_observation_size(&c) - MB_GAME_OBS_PROGRESS;
  assert_float_equal(prog[MB_GAME_P_IN_USE], 20.0 / 104.0, 1e-6);
  free(obs);
  mb_game_free(g);
  mb_workload_free(w);
}

/* A hand-made case whose candidates are worked out on paper. Capacity 100, alignment 10.
 * a [0,2] size 30 at 0 and c [0,2] size 20 at 60 leave gaps [30,60) and [80,100) over [1,1]:
 * for b (size 15): gap 20 -> low 80, top 80 (deduplicated); gap 30 -> low 30, top 40. */
static void test_hand_made(void **state) {
  (void)state;
  mb_workload_builder *bl = mb_builder_new("hand", "test");
  mb_builder_set_schedule(bl, 3, 1000);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "a", 30, 0, 2, false), 300);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "c", 20, 0, 2, false), 200);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "b", 15, 1, 1, false), 100);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "p", 15, 1, 1, true), 100);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "z", 15, 1, 1, false), 0);
  mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "big", 101, 1, 1, false), 100);
  mb_error err;
  mb_workload *w = mb_builder_finish(bl, &err);
  assert_non_null(w);
  mb_hardware hw = {.name = "hand",
                    .capacity = 100,
                    .alignment = 10,
                    .slow_bandwidth = 1,
                    .fast_bandwidth = 1,
                    .peak_flops = 1,
                    .op_overhead_s = 0};
  mb_game_config c;
  mb_game_config_default(&c);
  c.order = MB_GAME_ORDER_SIZE;
  c.n_actions = 4;
  mb_game *g = mb_game_new(w, &hw, &c, &err);
  assert_non_null(g);
  /* Pinned, zero-benefit and over-capacity buffers are not visited. */
  assert_int_equal(mb_game_n_visitable(g), 3);
  assert_int_equal(mb_game_current_buffer(g), 0); /* a: largest */
  assert_int_equal(mb_game_candidate_offset(g, 0), 0);
  assert_int_equal(mb_game_candidate_offset(g, 1), 70);
  double r;
  assert_true(mb_game_step(g, 0, &r, &err));
  assert_true(r == 300.0 / 1000.0);
  assert_int_equal(mb_game_current_buffer(g), 1); /* c */
  /* Gap [30, 100) of size 70: low 30, top 80; slot 2 is empty. */
  assert_int_equal(mb_game_candidate_offset(g, 0), 30);
  assert_int_equal(mb_game_candidate_offset(g, 1), 80);
  assert_int_equal(mb_game_candidate_offset(g, 2), MB_GAME_ILLEGAL);
  assert_false(mb_game_step(g, 2, &r, &err)); /* illegal slot */
  assert_non_null(strstr(err.message, "illegal"));
  assert_false(mb_game_step(g, 7, &r, &err));
  assert_int_equal(mb_game_current_buffer(g), 1);
  /* Place c at 80 instead, then b sees gaps [30,80) only: low 30, top 60. */
  assert_true(mb_game_step(g, 1, &r, &err));
  assert_int_equal(mb_game_current_buffer(g), 2);
  assert_int_equal(mb_game_candidate_offset(g, 0), 30);
  assert_int_equal(mb_game_candidate_offset(g, 1), 60);
  float obs[10 + 256 + 3 * 6 + 5];
  assert_int_equal(mb_game_observation_size(&c), (int32_t)(sizeof obs / sizeof obs[0]));
  mb_game_observe(g, obs);
  const float *cf = obs + 10 + 256;
  assert_true(cf[MB_GAME_C_LEGAL] == 1.0f && cf[6 + MB_GAME_C_LEGAL] == 1.0f);
  assert_true(cf[12 + MB_GAME_C_LEGAL] == 0.0f);
  assert_true(fabsf(cf[MB_GAME_C_GAP] - 0.5f) < 1e-6f);
  assert_true(fabsf(cf[MB_GAME_C_WASTE] - 0.35f) < 1e-6f);
  assert_true(cf[6 + MB_GAME_C_TOP] == 1.0f);
  assert_true(fabsf(obs[MB_GAME_F_SIZE] - 0.15f) < 1e-6f);
  const float *prog = obs + sizeof obs / sizeof obs[0] - 5;
  assert_true(fabsf(prog[MB_GAME_P_IN_USE] - 0.5f) < 1e-6f);
  assert_true(fabsf(prog[MB_GAME_P_VISITED] - 2.0f / 3.0f) < 1e-6f);
  assert_true(fabsf(prog[MB_GAME_P_RETURN] - 0.5f) < 1e-6f);
  /* The picture: a fills addresses [0, 30), c [80, 100) over the whole (3-step) schedule. */
  float pic_total = 0;
  for (int32_t i = 0; i < 256; i++) pic_total += obs[10 + i];
  assert_true(fabsf(pic_total / 256.0f - 0.5f) < 1e-4f);
  assert_true(mb_game_step(g, mb_game_slow_action(g), &r, &err));
  assert_true(r == 0.0);
  assert_true(mb_game_done(g));
  assert_false(mb_game_step(g, 0, &r, &err));
  assert_true(mb_game_return(g) == 0.5);
  mb_game_free(g);
  mb_workload_free(w);
}

static void test_random_workloads(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 20261121);
  for (int32_t iter = 0; iter < 300; iter++) {
    mb_hardware hw = test_hardware(&rng);
    mb_workload *w;
    if (iter % 2 == 0) {
      /* The suite's generator, scaled to this fast memory. */
      mb_random_options ro;
      mb_random_options_default(&ro);
      ro.min_size = 8;
      ro.max_size = hw.capacity;
      ro.size_quantum = 1;
      ro.ridge_flops_per_byte = hw.peak_flops / hw.slow_bandwidth;
      mb_error rerr;
      int32_t n = iter % 50 == 0 ? 400 : (int32_t)mb_rng_range(&rng, 1, 120);
      w = mb_random_workload(&rng, n, &ro, NULL, &rerr);
      if (!w) fail_msg("mb_random_workload: %s", rerr.message);
    } else {
      w = random_workload(&rng, hw.capacity, iter % 4 == 3);
    }
    mb_game_config c;
    mb_game_config_default(&c);
    c.order = (mb_game_order)(iter % 3);
    c.n_actions = (int32_t)mb_rng_range(&rng, 2, 9);
    c.auto_slow = iter % 5 != 0;
    mb_error err;
    mb_game *g = mb_game_new(w, &hw, &c, &err);
    if (!g) fail_msg("game: %s", err.message);
    mb_assignment *a = mb_assignment_new(w->n_buffers);
    for (int ep = 0; ep < 3; ep++) play_checked(g, w, &hw, RANDOM, &rng, a);
    mb_assignment_free(a);
    mb_game_free(g);
    check_heuristic(w, &hw);
    mb_workload_free(w);
  }
}

/* Everything observable about a state, for equality checks. */
typedef struct state_copy {
  float *obs;
  uint8_t *mask;
  mb_assignment *a;
  mb_time_ps t;
  int32_t cur, depth;
} state_copy;

static void capture(mb_game *g, state_copy *s) {
  mb_game_observe(g, s->obs);
  mb_game_legal_mask(g, s->mask);
  mb_game_assignment(g, s->a, NULL);
  s->t = mb_game_time(g);
  s->cur = mb_game_current_buffer(g);
  s->depth = mb_game_depth(g);
}

static void assert_same(const state_copy *x, const state_copy *y, int32_t obs_n, int32_t A) {
  assert_memory_equal(x->obs, y->obs, sizeof *x->obs * (size_t)obs_n);
  assert_memory_equal(x->mask, y->mask, (size_t)A);
  assert_memory_equal(x->a->offset, y->a->offset, sizeof *x->a->offset * (size_t)x->a->n_buffers);
  assert_int_equal(x->t, y->t);
  assert_int_equal(x->cur, y->cur);
  assert_int_equal(x->depth, y->depth);
}

static state_copy state_new(const mb_workload *w, int32_t obs_n, int32_t A) {
  state_copy s = {malloc(sizeof(float) * (size_t)obs_n),
                  malloc((size_t)A),
                  mb_assignment_new(w->n_buffers),
                  0,
                  0,
                  0};
  return s;
}

static void state_free(state_copy *s) {
  free(s->obs);
  free(s->mask);
  mb_assignment_free(s->a);
}

static void test_snapshot_restore(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  for (int32_t iter = 0; iter < 40; iter++) {
    mb_hardware hw = test_hardware(&rng);
    mb_workload *w = random_workload(&rng, hw.capacity, iter % 4 == 1);
    mb_game_config c;
    mb_game_config_default(&c);
    c.order = (mb_game_order)(iter % 3);
    c.n_actions = 6;
    c.auto_slow = iter % 3 != 0;
    mb_error err;
    mb_game *g = mb_game_new(w, &hw, &c, &err);
    assert_non_null(g);
    int32_t obs_n = mb_game_observation_size(&c), A = c.n_actions;
    state_copy before = state_new(w, obs_n, A), after = state_new(w, obs_n, A);
    uint8_t *mask = malloc((size_t)A);
    while (!mb_game_done(g)) {
      /* Branch: snapshot, play a few random moves, restore, compare. */
      capture(g, &before);
      mb_game_snapshot snap = mb_game_snapshot_take(g);
      int32_t k = (int32_t)mb_rng_range(&rng, 1, 5);
      for (int32_t i = 0; i < k && !mb_game_done(g); i++)
        assert_true(mb_game_step(g, random_legal(g, &rng, mask), NULL, &err));
      mb_game_snapshot deep = mb_game_snapshot_take(g);
      /* A clone and a copy of the deep state are identical to it. */
      mb_game *cl = mb_game_clone(g, &err);
      assert_non_null(cl);
      capture(g, &after);
      state_copy other = state_new(w, obs_n, A);
      capture(cl, &other);
      assert_same(&after, &other, obs_n, A);
      if (!mb_game_restore(g, snap, &err)) fail_msg("restore: %s", err.message);
      capture(g, &after);
      assert_same(&before, &after, obs_n, A);
      /* The clone is independent and snapshots carry over to it. */
      assert_true(mb_game_restore(cl, snap, &err));
      capture(cl, &other);
      assert_same(&before, &other, obs_n, A);
      state_free(&other);
      /* Games stepping on their own (even with the same move) refuse each other's new
       * snapshots; the history they share stays restorable. */
      if (!mb_game_done(cl)) {
        mb_game *twin = mb_game_clone(cl, &err);
        assert_true(mb_game_step(cl, mb_game_slow_action(cl), NULL, &err));
        assert_true(mb_game_step(twin, mb_game_slow_action(twin), NULL, &err));
        mb_game_snapshot mine = mb_game_snapshot_take(cl);
        assert_false(mb_game_restore(twin, mine, &err));
        assert_true(mb_game_restore(twin, snap, &err)); /* the shared past stays valid */
        mb_game_free(twin);
      }
      mb_game_free(cl);
      /* A branch that was undone cannot be restored once replaced. */
      if (!mb_game_done(g) && deep.depth > snap.depth) {
        assert_true(mb_game_step(g, mb_game_slow_action(g), NULL, &err));
        assert_false(mb_game_restore(g, deep, &err));
        assert_non_null(strstr(err.message, "ancestor"));
        assert_true(mb_game_restore(g, snap, &err));
      }
      /* Move on along the main line. */
      assert_true(mb_game_step(g, random_legal(g, &rng, mask), NULL, &err));
    }
    /* Reset equals a fresh game; copy from a finished game equals it. */
    mb_game *fresh = mb_game_new(w, &hw, &c, &err);
    mb_game *mid = mb_game_clone(g, &err);
    mb_game_reset(g);
    capture(g, &before);
    capture(fresh, &after);
    assert_same(&before, &after, obs_n, A);
    assert_true(mb_game_copy(fresh, mid, &err));
    assert_true(mb_game_copy(g, mid, &err));
    capture(g, &before);
    capture(fresh, &after);
    assert_same(&before, &after, obs_n, A);
    assert_true(mb_game_done(g));
    mb_game_free(mid);
    mb_game_free(fresh);
    free(mask);
    state_free(&before);
    state_free(&after);
    mb_game_free(g);
    mb_workload_free(w);
  }
}

/* Phi of the game's current state, from scratch: the benefit / T_slow of the next `lookahead`
 * buffers of the order (the current one included) that have a candidate position. */
static double brute_potential(const mb_game *g, const mb_workload *w, const mb_hardware *hw,
                              const mb_time_ps *benefit, int32_t lookahead) {
  if (mb_game_done(g)) return 0;
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  assert_true(mb_game_assignment(g, a, NULL));
  const int32_t *visit = mb_game_visit_order(g);
  int32_t n = mb_game_n_visitable(g), cur = 0;
  while (visit[cur] != mb_game_current_buffer(g)) cur++;
  cand *c = malloc(sizeof *c * (size_t)(2 * w->n_buffers + 2));
  double sum = 0;
  for (int32_t i = cur; i < n && i < cur + lookahead; i++)
    if (brute_candidates(w, hw, a->offset, visit[i], c) > 0) sum += (double)benefit[visit[i]];
  free(c);
  mb_assignment_free(a);
  double t_slow = (double)mb_game_slow_time(g);
  return sum / (t_slow > 0 ? t_slow : 1.0);
}

/* Reward shaping: every shaped reward is the unshaped one plus lambda (Phi(s') - Phi(s)) with
 * Phi from scratch, a restored state gives the same shaped rewards again, the shaped rewards
 * of an episode sum to its return minus lambda Phi(start), and the return is unshaped. */
static void test_shaping(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 23);
  for (int32_t iter = 0; iter < 60; iter++) {
    mb_hardware hw = test_hardware(&rng);
    mb_workload *w = random_workload(&rng, hw.capacity, iter % 3 == 1);
    mb_game_config plain, shaped;
    mb_game_config_default(&plain);
    plain.n_actions = 6;
    plain.order = (mb_game_order)(iter % 3);
    plain.auto_slow = iter % 4 != 0;
    /* 0: no buffer, Phi is always 0; 1: the current buffer alone */
    plain.lookahead = iter % 8 == 2 ? 0 : iter % 5 == 4 ? 1 : iter % 2 ? 3 : 32;
    shaped = plain;
    shaped.shaping = 0.75;
    mb_error err;
    mb_game *g0 = mb_game_new(w, &hw, &plain, &err), *g1 = mb_game_new(w, &hw, &shaped, &err);
    assert_non_null(g0);
    assert_non_null(g1);
    assert_false(mb_game_copy(g1, g0, &err)); /* configs differ */
    mb_time_ps *benefit = malloc(sizeof *benefit * (size_t)(w->n_buffers + 1));
    mb_standalone_benefits(w, &hw, benefit);
    uint8_t mask[6];
    double phi = brute_potential(g1, w, &hw, benefit, plain.lookahead), phi0 = phi;
    if (plain.lookahead == 0) assert_true(mb_game_potential(g1) == 0);
    double sum0 = 0, sum1 = 0;
    while (!mb_game_done(g1)) {
      int32_t a = random_legal(g1, &rng, mask);
      /* A branch first: the same move after a restore earns the same shaped reward. */
      mb_game_snapshot snap = mb_game_snapshot_take(g1);
      double r_branch = 0, r0 = 0, r1 = 0;
      assert_true(mb_game_step(g1, a, &r_branch, &err));
      if (!mb_game_done(g1)) assert_true(mb_game_step(g1, mb_game_slow_action(g1), NULL, &err));
      assert_true(mb_game_restore(g1, snap, &err));
      assert_true(mb_game_step(g0, a, &r0, &err));
      assert_true(mb_game_step(g1, a, &r1, &err));
      assert_true(r1 == r_branch);
      double next = brute_potential(g1, w, &hw, benefit, plain.lookahead);
      assert_true(fabs(r1 - (r0 + 0.75 * (next - phi))) <= 1e-12);
      assert_true(fabs(mb_game_potential(g1) - next) <= 1e-12);
      assert_true(mb_game_potential(g0) == 0); /* no shaping, no potential */
      phi = next;
      sum0 += r0;
      sum1 += r1;
    }
    assert_true(mb_game_done(g0));
    assert_true(phi == 0);
    assert_true(mb_game_return(g1) == mb_game_return(g0));
    assert_true(fabs(sum0 - mb_game_return(g0)) <= 1e-9);
    assert_true(fabs(sum1 - (mb_game_return(g1) - 0.75 * phi0)) <= 1e-9);
    /* After a reset the potential is the start's again; after an episode played without
     * asking for rewards (no potential computed on the way), it is 0. */
    mb_game_reset(g1);
    double phi_start = mb_game_potential(g1);
    assert_true(fabs(phi_start - phi0) <= 1e-12);
    while (!mb_game_done(g1))
      assert_true(mb_game_step(g1, random_legal(g1, &rng, mask), NULL, &err));
    assert_true(mb_game_potential(g1) == 0);
    free(benefit);
    mb_game_free(g0);
    mb_game_free(g1);
    mb_workload_free(w);
  }
}

/* Same seed, same game: identical observation streams; another seed differs somewhere. */
static uint64_t episode_hash(const mb_workload *w, const mb_hardware *hw, uint64_t seed) {
  mb_game_config c;
  mb_game_config_default(&c);
  mb_game *g = mb_game_new(w, hw, &c, NULL);
  int32_t n = mb_game_observation_size(&c);
  float *obs = malloc(sizeof *obs * (size_t)n);
  uint8_t mask[16];
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  uint64_t h = 1469598103934665603ULL;
  while (!mb_game_done(g)) {
    mb_game_observe(g, obs);
    const unsigned char *p = (const unsigned char *)obs;
    for (size_t i = 0; i < sizeof *obs * (size_t)n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    assert_true(mb_game_step(g, random_legal(g, &rng, mask), NULL, NULL));
  }
  h ^= (uint64_t)mb_game_time(g);
  free(obs);
  mb_game_free(g);
  return h;
}

static void test_determinism(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 99);
  int differ = 0;
  for (int i = 0; i < 10; i++) {
    mb_hardware hw = test_hardware(&rng);
    mb_workload *w = random_workload(&rng, hw.capacity, false);
    assert_true(episode_hash(w, &hw, 5) == episode_hash(w, &hw, 5));
    differ += episode_hash(w, &hw, 5) != episode_hash(w, &hw, 6);
    mb_workload_free(w);
  }
  assert_true(differ > 0);
}

static void test_degenerate(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  mb_hardware hw = test_hardware(&rng);
  mb_workload *w = random_workload(&rng, hw.capacity, false);
  mb_game_config c;
  mb_game_config_default(&c);
  mb_error err;
  /* No fast memory: nothing to decide, return 0. */
  mb_hardware none = hw;
  none.capacity = 0;
  mb_game *g = mb_game_new(w, &none, &c, &err);
  assert_non_null(g);
  assert_true(mb_game_done(g));
  assert_int_equal(mb_game_n_visitable(g), 0);
  assert_true(mb_game_return(g) == 0.0);
  int32_t n = mb_game_observation_size(&c);
  float *obs = malloc(sizeof *obs * (size_t)n);
  mb_game_observe(g, obs);
  for (int32_t i = 0; i < n - MB_GAME_OBS_PROGRESS; i++) assert_true(obs[i] == 0.0f);
  /* Progress of an episode without decisions: all visited (0 of 0), no benefit left, return 0. */
  const float *prog = obs + n - MB_GAME_OBS_PROGRESS;
  assert_true(prog[MB_GAME_P_VISITED] == 1.0f);
  for (int32_t i = MB_GAME_P_BENEFIT_LEFT; i < MB_GAME_OBS_PROGRESS; i++)
    assert_true(prog[i] == 0.0f);
  mb_game_free(g);
  /* A program whose all-slow time is 0 (one op without flops or bytes, no overhead): nothing
   * to decide, and the return and the observation are 0, not 0 / 0. */
  mb_workload_builder *bl = mb_builder_new("idle", "test_game");
  mb_builder_add_op(bl, "nop", "fusion", 0);
  mb_builder_add_buffer(bl, "unused", 8, 0, 0, false);
  mb_workload *idle = mb_builder_finish(bl, &err);
  assert_non_null(idle);
  mb_hardware free_ops = hw;
  free_ops.op_overhead_s = 0;
  g = mb_game_new(idle, &free_ops, &c, &err);
  assert_non_null(g);
  assert_int_equal(mb_game_slow_time(g), 0);
  assert_true(mb_game_done(g));
  assert_true(mb_game_return(g) == 0.0);
  mb_game_observe(g, obs);
  assert_true(prog[MB_GAME_P_VISITED] == 1.0f);
  for (int32_t i = 0; i < n; i++)
    if (i != n - MB_GAME_OBS_PROGRESS + MB_GAME_P_VISITED) assert_true(obs[i] == 0.0f);
  mb_game_free(g);
  mb_workload_free(idle);
  /* Fast memories of 1 and 2 bytes holding a buffer of their size: size / capacity = 1, and
   * log2(size) / log2(capacity) = 1 / 1 for 2 bytes, 0 for 1 byte ("0 when capacity < 2"). */
  for (int64_t cap = 1; cap <= 2; cap++) {
    bl = mb_builder_new("tiny", "test_game");
    mb_builder_set_schedule(bl, 1, 1000);
    mb_builder_set_benefit(bl, mb_builder_add_buffer(bl, "b", cap, 0, 0, false), 10);
    mb_workload *tiny = mb_builder_finish(bl, &err);
    assert_non_null(tiny);
    mb_hardware thw = mb_test_hardware(cap, 1);
    g = mb_game_new(tiny, &thw, &c, &err);
    assert_non_null(g);
    assert_int_equal(mb_game_current_buffer(g), 0);
    mb_game_observe(g, obs);
    assert_true(obs[MB_GAME_F_SIZE] == 1.0f);
    assert_true(obs[MB_GAME_F_LOG_SIZE] == (cap == 2 ? 1.0f : 0.0f));
    check_observation(g, tiny, &thw, obs);
    mb_game_free(g);
    mb_workload_free(tiny);
  }
  free(obs);
  /* The game keeps its own copy of the hardware: the caller's may change or go away. */
  mb_hardware tmp = hw;
  mb_game *own = mb_game_new(w, &tmp, &c, &err);
  assert_non_null(own);
  int32_t visitable = mb_game_n_visitable(own);
  tmp.capacity = 0;
  tmp.alignment = 3;
  mb_game_reset(own);
  assert_int_equal(mb_game_n_visitable(own), visitable);
  mb_assignment *oa = mb_assignment_new(w->n_buffers);
  play_checked(own, w, &hw, RANDOM, &rng, oa);
  mb_assignment_free(oa);
  mb_game_free(own);
  /* Bad hardware and config are errors naming the field. */
  mb_hardware bad = hw;
  bad.alignment = 0;
  assert_null(mb_game_new(w, &bad, &c, &err));
  assert_non_null(strstr(err.message, "alignment 0 < 1"));
  bad = hw;
  bad.capacity = -1;
  assert_null(mb_game_new(w, &bad, &c, &err));
  assert_non_null(strstr(err.message, "capacity -1 < 0"));
  c.lookahead = -1;
  assert_null(mb_game_new(w, &hw, &c, &err));
  assert_non_null(strstr(err.message, "lookahead"));
  /* Copy between games of different configs is refused. */
  mb_game_config_default(&c);
  mb_game *g1 = mb_game_new(w, &hw, &c, &err);
  c.n_actions = 5;
  mb_game *g2 = mb_game_new(w, &hw, &c, &err);
  assert_false(mb_game_copy(g2, g1, &err));
  mb_assignment *small = mb_assignment_new(w->n_buffers + 1);
  assert_false(mb_game_assignment(g1, small, &err));
  assert_non_null(strstr(err.message, "buffers"));
  mb_assignment_free(small);
  mb_game_free(g1);
  mb_game_free(g2);
  mb_workload_free(w);
}

/* ---- real workloads ---- */

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

/* Plays random and heuristic episodes on every matching file of dir; returns files played and
 * adds the decisions of the random episodes to *decisions. */
static int play_dir(const char *dir, const char *suffix, const char *hw_name, int64_t capacity,
                    int64_t *decisions) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int played = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' || !has_suffix(e->d_name, suffix) || has_suffix(e->d_name, ".md"))
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    mb_error err;
    mb_workload *w = mb_workload_load_any(path, &err);
    if (!w) fail_msg("%s: %s", path, err.message);
    mb_hardware hw;
    if (!mb_hardware_find(hw_name, NULL, &hw, &err)) fail_msg("hardware: %s", err.message);
    /* A fast memory a tenth of the peak live bytes (MiniMalloc: the file's capacity / 2), so
     * that placements compete. */
    mb_workload_stats st;
    mb_workload_stats_compute(w, &st);
    hw.capacity = capacity > 0 ? capacity : st.peak_live_bytes / 10 + 1;
    mb_game_config c;
    mb_game_config_default(&c);
    mb_game *g = mb_game_new(w, &hw, &c, &err);
    if (!g) fail_msg("%s: %s", path, err.message);
    mb_assignment *a = mb_assignment_new(w->n_buffers);
    mb_rng rng;
    mb_rng_seed(&rng, 11);
    play_checked(g, w, &hw, RANDOM, &rng, a);
    *decisions += mb_game_depth(g);
    mb_assignment_free(a);
    mb_game_free(g);
    check_heuristic(w, &hw);
    mb_workload_free(w);
    played++;
  }
  closedir(d);
  return played;
}

static void test_samples(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/datasets/samples", mb_source_dir());
  int64_t decisions = 0;
  int n = play_dir(dir, "", "tpu-v4i", 0, &decisions);
  if (n == 0) {
    print_message("no workloads in %s\n", dir);
    skip();
  }
  assert_true(decisions > 0); /* the capacity leaves something to decide */
}

static void test_real_data(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/hlo", mb_test_data_dir());
  int64_t decisions = 0;
  int n = play_dir(dir, ".hlo", "tpu-v4i", 0, &decisions);
  snprintf(dir, sizeof dir, "%s/minimalloc", mb_test_data_dir());
  n += play_dir(dir, ".1048576.csv", "edge-npu", 1048576 / 2, &decisions);
  if (n == 0) {
    print_message("no HLO or MiniMalloc files under %s: fetch them (see SOURCES.md)\n",
                  mb_test_data_dir());
    skip();
  }
  assert_true(decisions > 0);
}

/* Random op-less workloads, and the same spread over ~2^31 steps (under an address-space
 * limit): the same decisions offer the same candidates (and masks), the same actions earn the
 * same shaped rewards, and episodes end with the same time and assignment. The observations
 * differ only where they are fractions of the schedule; they stay in [0, 1]. */
static void test_spread_schedule(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 31);
  struct rlimit saved;
  bool limited = mb_test_memory_limit(512u << 20, &saved);
  mb_game_config c;
  mb_game_config_default(&c);
  c.demand_bins = 8;
  c.shaping = 0.5;
  int32_t obs_n = mb_game_observation_size(&c);
  float *obs = malloc(sizeof *obs * (size_t)obs_n);
  uint8_t *m1 = malloc((size_t)c.n_actions), *m2 = malloc((size_t)c.n_actions);
  int decisions = 0;
  for (int iter = 0; iter < 40; iter++) {
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 60);
    int32_t T = (int32_t)mb_rng_range(&rng, 1, iter % 2 ? 3 * n : 300);
    mb_workload *w = mb_test_random_opless(&rng, n, T);
    mb_workload *sw = mb_test_spread_workload(w);
    assert_non_null(w);
    assert_non_null(sw);
    mb_workload_stats ws;
    mb_workload_stats_compute(w, &ws);
    mb_hardware hw = mb_test_hardware(ws.peak_live_bytes / 3 + 512, 512);
    mb_error err;
    mb_game *g1 = mb_game_new(w, &hw, &c, &err), *g2 = mb_game_new(sw, &hw, &c, &err);
    assert_non_null(g1);
    assert_non_null(g2);
    while (!mb_game_done(g1)) {
      assert_false(mb_game_done(g2));
      assert_int_equal(mb_game_current_buffer(g1), mb_game_current_buffer(g2));
      assert_int_equal(mb_game_legal_mask(g1, m1), mb_game_legal_mask(g2, m2));
      assert_memory_equal(m1, m2, (size_t)c.n_actions);
      for (int32_t a = 0; a < c.n_actions; a++)
        assert_int_equal(mb_game_candidate_offset(g1, a), mb_game_candidate_offset(g2, a));
      mb_game_observe(g2, obs);
      for (int32_t i = 0; i < obs_n; i++) assert_true(obs[i] >= 0 && obs[i] <= 1);
      int32_t a = random_legal(g1, &rng, m1);
      double r1 = 0, r2 = 0;
      assert_true(mb_game_step(g1, a, &r1, &err));
      assert_true(mb_game_step(g2, a, &r2, &err));
      assert_true(r1 == r2);
      decisions++;
    }
    assert_true(mb_game_done(g2));
    assert_int_equal(mb_game_time(g1), mb_game_time(g2));
    mb_assignment *a1 = mb_assignment_new(n), *a2 = mb_assignment_new(n);
    assert_true(mb_game_assignment(g1, a1, &err));
    assert_true(mb_game_assignment(g2, a2, &err));
    assert_memory_equal(a1->offset, a2->offset, sizeof *a1->offset * (size_t)n);
    assert_true(mb_validate(sw, &hw, a2, &err));
    mb_assignment_free(a1);
    mb_assignment_free(a2);
    mb_game_free(g1);
    mb_game_free(g2);
    mb_workload_free(w);
    mb_workload_free(sw);
  }
  assert_true(decisions > 100);
  free(obs);
  free(m1);
  free(m2);
  mb_test_memory_unlimit(limited, &saved);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_config),           cmocka_unit_test(test_next_buffers),
      cmocka_unit_test(test_window),           cmocka_unit_test(test_gain_features),
      cmocka_unit_test(test_demand_profile),   cmocka_unit_test(test_hand_made),
      cmocka_unit_test(test_random_workloads), cmocka_unit_test(test_snapshot_restore),
      cmocka_unit_test(test_determinism),      cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_samples),          cmocka_unit_test(test_real_data),
      cmocka_unit_test(test_shaping),          cmocka_unit_test(test_spread_schedule),
      cmocka_unit_test(test_visit_order),      cmocka_unit_test(test_observation),
      cmocka_unit_test(test_restore_checks),   cmocka_unit_test(test_many_gaps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
