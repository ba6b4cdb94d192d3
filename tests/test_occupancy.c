/* Tests of the fast-memory occupancy (suite/occupancy.h): hand-made cases, and every query
 * against a brute-force model (elementary address segments checked one by one against every
 * placed rectangle) over long random sequences of placements and removals. */
#include "support.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "long_schedule.h"
#include "occupancy.h"
#include "rng.h"

typedef struct rect {
  bool placed;
  int32_t start, end;
  int64_t offset, size;
} rect;

static bool live_overlap(const rect *r, int32_t s, int32_t e) {
  return r->placed && r->start <= e && r->end >= s;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Brute-force gaps: split [0, capacity) at every rectangle edge, mark each elementary segment
 * free or occupied by scanning all rectangles, merge adjacent free segments. */
static int32_t brute_gaps(const rect *rs, int32_t n, int64_t capacity, int32_t s, int32_t e,
                          mb_gap *out) {
  int64_t *cuts = malloc(sizeof *cuts * (size_t)(2 * n + 2));
  int32_t nc = 0;
  cuts[nc++] = 0;
  cuts[nc++] = capacity;
  for (int32_t i = 0; i < n; i++) {
    if (!live_overlap(&rs[i], s, e)) continue;
    if (rs[i].offset < capacity) cuts[nc++] = rs[i].offset;
    if (rs[i].offset + rs[i].size < capacity) cuts[nc++] = rs[i].offset + rs[i].size;
  }
  qsort(cuts, (size_t)nc, sizeof *cuts, cmp_i64);
  int32_t ng = 0;
  for (int32_t c = 0; c + 1 < nc; c++) {
    int64_t lo = cuts[c], hi = cuts[c + 1];
    if (lo == hi) continue;
    bool busy = false;
    for (int32_t i = 0; i < n && !busy; i++)
      busy = live_overlap(&rs[i], s, e) && rs[i].offset < hi && lo < rs[i].offset + rs[i].size;
    if (busy) continue;
    if (ng > 0 && out[ng - 1].offset + out[ng - 1].size == lo)
      out[ng - 1].size += hi - lo;
    else
      out[ng++] = (mb_gap){lo, hi - lo};
  }
  free(cuts);
  return ng;
}

static void test_hand_made(void **state) {
  (void)state;
  mb_occupancy *o = mb_occupancy_new(10, 100, 4);
  assert_non_null(o);
  /* a: t[0,4] bytes [0,30); b: t[3,9] bytes [50,60); c: t[6,9] bytes [0,20). */
  assert_true(mb_occupancy_place(o, 0, 0, 4, 0, 30));
  assert_true(mb_occupancy_place(o, 1, 3, 9, 50, 10));
  assert_true(mb_occupancy_place(o, 2, 6, 9, 0, 20));
  assert_false(mb_occupancy_place(o, 1, 0, 0, 90, 1));  /* id taken */
  assert_false(mb_occupancy_place(o, 4, 0, 0, 90, 1));  /* id out of range */
  assert_false(mb_occupancy_place(o, 3, 0, 0, 90, 0));  /* size 0 */
  assert_false(mb_occupancy_place(o, 3, 0, 0, -1, 1));  /* offset < 0 */
  assert_false(mb_occupancy_place(o, 3, 5, 4, 90, 1));  /* start > end */
  assert_false(mb_occupancy_place(o, 3, -1, 0, 90, 1)); /* before the schedule */
  assert_false(mb_occupancy_place(o, 3, 0, 10, 90, 1)); /* past it */
  assert_int_equal(mb_occupancy_count(o), 3);

  mb_gap g[8];
  /* Over [0,2] only a is live: one gap [30,100). */
  assert_int_equal(mb_occupancy_gaps(o, 0, 2, g, 8), 1);
  assert_int_equal(g[0].offset, 30);
  assert_int_equal(g[0].size, 70);
  /* Over [4,6]: a, b, c: gaps [30,50) and [60,100). */
  assert_int_equal(mb_occupancy_gaps(o, 4, 6, g, 8), 2);
  assert_int_equal(g[0].offset, 30);
  assert_int_equal(g[0].size, 20);
  assert_int_equal(g[1].offset, 60);
  assert_int_equal(g[1].size, 40);
  /* Over [7,9]: b, c: gaps [20,50) and [60,100). */
  assert_int_equal(mb_occupancy_gaps(o, 7, 9, g, 1), 2); /* count exceeds max */
  assert_int_equal(g[0].offset, 20);
  /* A query range is clipped to the schedule [0, 9]: past its end, b and c still count, and
   * before its start a. */
  assert_int_equal(mb_occupancy_gaps(o, 9, 1000, g, 8), 2);
  assert_int_equal(g[0].offset, 20);
  assert_int_equal(g[1].offset, 60);
  assert_int_equal(mb_occupancy_gaps(o, -5, 0, g, 8), 1);
  assert_int_equal(g[0].offset, 30);
  assert_int_equal(mb_occupancy_gaps(o, 10, 1000, g, 8), 1); /* nothing of the schedule: free */
  assert_int_equal(g[0].size, 100);

  int64_t off = -1;
  /* Best fit of 15 bytes over [4,6]: the 20-byte gap at 30 beats the 40-byte one. */
  assert_true(mb_occupancy_best_fit(o, 4, 6, 15, 1, &off));
  assert_int_equal(off, 30);
  /* Aligned to 16: offset 32 leaves 18 bytes in the first gap: 15 still fits there. */
  assert_true(mb_occupancy_best_fit(o, 4, 6, 15, 16, &off));
  assert_int_equal(off, 32);
  /* 19 bytes aligned to 16 do not fit at 32 (only 18 left): the gap at 60 -> offset 64. */
  assert_true(mb_occupancy_best_fit(o, 4, 6, 19, 16, &off));
  assert_int_equal(off, 64);
  assert_true(mb_occupancy_lowest_fit(o, 4, 6, 19, 1, &off));
  assert_int_equal(off, 30);
  assert_false(mb_occupancy_best_fit(o, 4, 6, 41, 1, &off));
  assert_false(mb_occupancy_lowest_fit(o, 4, 6, 41, 1, &off));
  /* an alignment near INT64_MAX fits only at offset 0, which no gap here has (UBSan: the
   * aligned offset was computed as offset + alignment - 1) */
  assert_false(mb_occupancy_best_fit(o, 4, 6, 1, INT64_MAX, &off));
  assert_false(mb_occupancy_lowest_fit(o, 4, 6, 1, INT64_MAX, &off));

  int32_t ids[4];
  /* Over [4,4], bytes [25,55): a (0..30) and b (50..60) collide; c is not live at 4. */
  assert_int_equal(mb_occupancy_conflicts(o, 4, 4, 25, 30, ids, 4), 2);
  assert_true((ids[0] == 0 && ids[1] == 1) || (ids[0] == 1 && ids[1] == 0));
  assert_int_equal(mb_occupancy_conflicts(o, 0, 9, 30, 20, ids, 4), 0);

  assert_true(mb_occupancy_remove(o, 0));
  assert_false(mb_occupancy_remove(o, 0));
  assert_false(mb_occupancy_is_placed(o, 0));
  assert_true(mb_occupancy_is_placed(o, 1));
  assert_false(mb_occupancy_is_placed(o, -1)); /* ids out of range: never placed */
  assert_false(mb_occupancy_is_placed(o, 4));
  assert_int_equal(mb_occupancy_gaps(o, 0, 2, g, 8), 1);
  assert_int_equal(g[0].offset, 0);
  assert_int_equal(g[0].size, 100);
  mb_occupancy_clear(o);
  assert_int_equal(mb_occupancy_count(o), 0);
  assert_true(mb_occupancy_place(o, 0, 0, 9, 0, 100));
  assert_int_equal(mb_occupancy_gaps(o, 5, 5, g, 8), 0);
  assert_false(mb_occupancy_lowest_fit(o, 5, 5, 1, 1, &off));
  mb_occupancy_free(o);
}

/* A time of grid step g (of a schedule of T grid steps): g itself, or on a long schedule
 * (spread) a time inside g's block of MB_TEST_SPREAD_K steps: its first, its last or any. */
static int32_t grid_time(mb_rng *rng, bool spread, int32_t g, int which) {
  if (!spread) return g;
  if (which == 0) return mb_test_spread_start(g);
  if (which == 1) return mb_test_spread_end(g);
  return mb_test_spread_start(g) + (int32_t)mb_rng_below(rng, MB_TEST_SPREAD_K);
}

/* Random placements (into gaps, as callers do) and removals; every query checked against the
 * brute-force model. With `spread` the schedule is near 2^31 steps (each of up to 40 grid
 * steps a block of 2^21), under an address-space limit: nothing may cost memory per step. */
static void random_rounds(uint64_t seed, bool spread) {
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  struct rlimit saved;
  bool limited = spread && mb_test_memory_limit(256u << 20, &saved);
  for (int round = 0; round < 20; round++) {
    const int32_t TG = (int32_t)mb_rng_range(&rng, 1, 40);
    const int32_t T = spread ? mb_test_spread_start(TG) : TG;
    const int32_t N = (int32_t)mb_rng_range(&rng, 1, 60);
    const int64_t cap = mb_rng_range(&rng, 16, 1000);
    mb_occupancy *o = mb_occupancy_new(T, cap, N);
    assert_non_null(o);
    rect *rs = calloc((size_t)N, sizeof *rs);
    mb_gap *g1 = malloc(sizeof *g1 * (size_t)(2 * N + 2));
    mb_gap *g2 = malloc(sizeof *g2 * (size_t)(2 * N + 2));
    int32_t *ids = malloc(sizeof *ids * (size_t)N);
    for (int step = 0; step < 400; step++) {
      int32_t id = (int32_t)mb_rng_below(&rng, (uint64_t)N);
      int32_t gs = (int32_t)mb_rng_below(&rng, (uint64_t)TG);
      int32_t ge = gs + (int32_t)mb_rng_below(&rng, (uint64_t)(TG - gs));
      /* buffers span whole blocks, as a spread workload's do */
      int32_t s = grid_time(&rng, spread, gs, 0), e = grid_time(&rng, spread, ge, 1);
      if (rs[id].placed && mb_rng_below(&rng, 3) == 0) {
        assert_true(mb_occupancy_remove(o, id));
        rs[id].placed = false;
      } else if (!rs[id].placed) {
        int64_t size = mb_rng_range(&rng, 1, cap / 3);
        int64_t align = (int64_t)1 << mb_rng_below(&rng, 4);
        int64_t off;
        bool use_best = mb_rng_below(&rng, 2);
        bool ok = use_best ? mb_occupancy_best_fit(o, s, e, size, align, &off)
                           : mb_occupancy_lowest_fit(o, s, e, size, align, &off);
        /* Expected answer from the brute-force gaps. */
        int32_t ng = brute_gaps(rs, N, cap, s, e, g2);
        int64_t want = -1, want_gap = -1;
        for (int32_t i = 0; i < ng; i++) {
          int64_t a = (g2[i].offset + align - 1) / align * align;
          if (a + size > g2[i].offset + g2[i].size) continue;
          if (want < 0 || (use_best && g2[i].size < want_gap)) {
            want = a;
            want_gap = g2[i].size;
          }
        }
        assert_int_equal(ok, want >= 0);
        if (!ok) continue;
        assert_int_equal(off, want);
        assert_int_equal(off % align, 0);
        assert_int_equal(mb_occupancy_conflicts(o, s, e, off, size, ids, N), 0);
        assert_true(mb_occupancy_place(o, id, s, e, off, size));
        rs[id] = (rect){true, s, e, off, size};
      }
      /* A random query of every kind (on a long schedule, from and to any time of a block). */
      int32_t gq = (int32_t)mb_rng_below(&rng, (uint64_t)TG);
      int32_t ge2 = gq + (int32_t)mb_rng_below(&rng, (uint64_t)(TG - gq));
      int32_t qs = grid_time(&rng, spread, gq, (int)mb_rng_below(&rng, 3));
      int32_t qe = grid_time(&rng, spread, ge2, (int)mb_rng_below(&rng, 3));
      if (qe < qs) {
        int32_t t = qs;
        qs = qe;
        qe = t;
      }
      int32_t n1 = mb_occupancy_gaps(o, qs, qe, g1, 2 * N + 2);
      int32_t n2 = brute_gaps(rs, N, cap, qs, qe, g2);
      assert_int_equal(n1, n2);
      for (int32_t i = 0; i < n1; i++) {
        assert_int_equal(g1[i].offset, g2[i].offset);
        assert_int_equal(g1[i].size, g2[i].size);
      }
      int64_t qo = mb_rng_range(&rng, 0, cap - 1), qz = mb_rng_range(&rng, 1, cap);
      int32_t nc = mb_occupancy_conflicts(o, qs, qe, qo, qz, ids, N);
      int32_t want_nc = 0;
      for (int32_t i = 0; i < N; i++)
        if (live_overlap(&rs[i], qs, qe) && rs[i].offset < qo + qz &&
            qo < rs[i].offset + rs[i].size)
          want_nc++;
      assert_int_equal(nc, want_nc);
      for (int32_t i = 0; i < nc; i++) assert_true(live_overlap(&rs[ids[i]], qs, qe));
      int32_t count = 0;
      for (int32_t i = 0; i < N; i++) count += rs[i].placed;
      assert_int_equal(mb_occupancy_count(o), count);
    }
    free(rs);
    free(g1);
    free(g2);
    free(ids);
    mb_occupancy_free(o);
  }
  mb_test_memory_unlimit(limited, &saved);
}

static void test_random_against_brute_force(void **state) {
  (void)state;
  random_rounds(42, false);
}

/* The same on schedules of up to 2^31 - 2 steps (a dense tree over them would need ~100 GB). */
static void test_long_schedule_against_brute_force(void **state) {
  (void)state;
  random_rounds(43, true);
}

/* Placements and queries on a schedule of 2^31 - 2 steps give what they give on the same
 * buffers with their times compressed by hand (and the occupancy stays small: it runs under an
 * address-space limit of 64 MiB above the current size). */
static void test_long_schedule_hand_made(void **state) {
  (void)state;
  struct rlimit saved;
  bool limited = mb_test_memory_limit(64u << 20, &saved);
  const int32_t L = INT32_MAX - 1;
  mb_occupancy *o = mb_occupancy_new(L, 100, 4);
  assert_non_null(o);
  /* as test_hand_made's a [0,4], b [3,9], c [6,9] with times 0, 3, 5, 6, 9 -> far apart */
  const int32_t t0 = 0, t3 = 1000000, t5 = 700000000, t6 = 700000001, t9 = L - 1;
  assert_true(mb_occupancy_place(o, 0, t0, t5 - 1, 0, 30));
  assert_true(mb_occupancy_place(o, 1, t3, t9, 50, 10));
  assert_true(mb_occupancy_place(o, 2, t6, t9, 0, 20));
  assert_false(mb_occupancy_place(o, 3, 0, L, 90, 1)); /* end beyond the schedule */
  mb_gap g[8];
  assert_int_equal(mb_occupancy_gaps(o, t0, t3 - 1, g, 8), 1);
  assert_int_equal(g[0].offset, 30);
  assert_int_equal(mb_occupancy_gaps(o, t5 - 1, t6, g, 8), 2);
  assert_int_equal(g[0].offset, 30);
  assert_int_equal(g[0].size, 20);
  assert_int_equal(g[1].offset, 60);
  assert_int_equal(mb_occupancy_gaps(o, t9, t9, g, 8), 2);
  assert_int_equal(g[0].offset, 20);
  int64_t off = -1;
  assert_true(mb_occupancy_best_fit(o, t5 - 1, t6, 15, 16, &off));
  assert_int_equal(off, 32);
  assert_true(mb_occupancy_lowest_fit(o, t5 - 1, t6, 19, 1, &off));
  assert_int_equal(off, 30);
  int32_t ids[4];
  assert_int_equal(mb_occupancy_conflicts(o, t5 - 1, t5 - 1, 25, 30, ids, 4), 2);
  assert_int_equal(mb_occupancy_conflicts(o, t5, t5, 25, 30, ids, 4), 1);
  assert_int_equal(ids[0], 1);
  assert_true(mb_occupancy_remove(o, 1));
  assert_int_equal(mb_occupancy_gaps(o, t3, t5 - 1, g, 8), 1);
  mb_occupancy_clear(o);
  assert_true(mb_occupancy_place(o, 3, 0, L - 1, 0, 100));
  assert_false(mb_occupancy_lowest_fit(o, L - 1, L - 1, 1, 1, &off));
  mb_occupancy_free(o);
  mb_test_memory_unlimit(limited, &saved);
}

/* Many placed buffers, short queries: results stay right when the tree is deep. */
static void test_many_buffers(void **state) {
  (void)state;
  const int32_t N = 20000;
  mb_occupancy *o = mb_occupancy_new(N + 3, 1 << 20, N);
  assert_non_null(o);
  /* Buffer i lives on [i, i+3] at offset (i % 4) * 64: a staircase that reuses four slots. */
  for (int32_t i = 0; i < N; i++) {
    int64_t off;
    assert_true(mb_occupancy_lowest_fit(o, i, i + 3, 64, 64, &off));
    assert_int_equal(off, (i % 4) * 64);
    assert_true(mb_occupancy_place(o, i, i, i + 3, off, 64));
  }
  mb_gap g[4];
  assert_int_equal(mb_occupancy_gaps(o, 100, 100, g, 4), 1);
  assert_int_equal(g[0].offset, 256);
  for (int32_t i = 0; i < N; i += 2) assert_true(mb_occupancy_remove(o, i));
  assert_int_equal(mb_occupancy_count(o), N / 2);
  assert_int_equal(mb_occupancy_gaps(o, 100, 100, g, 4), 3); /* [0,64) [128,192) [256,cap) */
  mb_occupancy_free(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_made),
      cmocka_unit_test(test_random_against_brute_force),
      cmocka_unit_test(test_long_schedule_against_brute_force),
      cmocka_unit_test(test_long_schedule_hand_made),
      cmocka_unit_test(test_many_buffers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
