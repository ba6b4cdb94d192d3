/* The validator: exact messages, edge cases (touching in time or address), agreement with a
 * brute-force O(n^2) checker on thousands of small random cases (validity, and the reported
 * pair and earliest time, and the buffers blamed), valid random packings pass and planted
 * overlaps are caught. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "long_schedule.h"
#include "rng.h"
#include "support.h"
#include "validator.h"

typedef struct spec {
  int32_t start, end;
  int64_t size;
  bool pinned;
} spec;

/* A workload with `length` ops and buffers b0, b1, ... each used by the op at its start. */
static mb_workload *make(int32_t length, const spec *s, int32_t n) {
  mb_workload_builder *b = mb_builder_new("v", "test");
  char name[32];
  for (int32_t o = 0; o < length; o++) {
    snprintf(name, sizeof name, "o%d", o);
    mb_builder_add_op(b, name, "add", 1000);
  }
  for (int32_t i = 0; i < n; i++) {
    snprintf(name, sizeof name, "b%d", i);
    int32_t id = mb_builder_add_buffer(b, name, s[i].size, s[i].start, s[i].end, s[i].pinned);
    mb_builder_add_use(b, id, s[i].start, s[i].size, 0);
  }
  mb_error err;
  mb_workload *w = mb_builder_finish(b, &err);
  if (!w) print_error("builder: %s\n", err.message);
  return w;
}

static mb_hardware hw_with(int64_t capacity, int64_t alignment) {
  mb_hardware hw;
  memset(&hw, 0, sizeof hw);
  snprintf(hw.name, sizeof hw.name, "testhw");
  hw.capacity = capacity;
  hw.alignment = alignment;
  hw.slow_bandwidth = 1e11;
  hw.fast_bandwidth = 1e12;
  hw.peak_flops = 1e14;
  hw.op_overhead_s = 1e-6;
  return hw;
}

/* Also checks the buffers blamed (for check's CSV lines): blame0, blame1 (-1: none). */
static void expect_invalid(const mb_workload *w, const mb_hardware *hw, const int64_t *offsets,
                           int32_t blame0, int32_t blame1, const char *message) {
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  memcpy(a->offset, offsets, (size_t)w->n_buffers * sizeof *offsets);
  mb_error err;
  mb_error_clear(&err);
  bool ok = mb_validate(w, hw, a, &err);
  if (ok || strcmp(err.message, message)) {
    print_error("expected: %s\ngot:      %s\n", message, ok ? "(valid)" : err.message);
    fail();
  }
  int32_t blame[2] = {-5, -5};
  assert_false(mb_validate_blame(w, hw, a, blame, &err));
  assert_string_equal(err.message, message);
  assert_int_equal(blame[0], blame0);
  assert_int_equal(blame[1], blame1);
  mb_assignment_free(a);
}

static bool valid(const mb_workload *w, const mb_hardware *hw, const int64_t *offsets) {
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  memcpy(a->offset, offsets, (size_t)w->n_buffers * sizeof *offsets);
  mb_error err;
  bool ok = mb_validate(w, hw, a, &err);
  mb_assignment_free(a);
  return ok;
}

static void test_messages(void **state) {
  (void)state;
  spec s[] = {{0, 5, 4096, false}, {3, 4, 4096, false}, {0, 0, 512, true}};
  mb_workload *w = make(6, s, 3);
  assert_non_null(w);
  mb_hardware hw = hw_with(1 << 20, 512);
  expect_invalid(w, &hw, (int64_t[]){0, 2048, MB_SLOW}, 0, 1,
                 "buffer 'b0' [0, 4096) and buffer 'b1' [2048, 6144) overlap in fast memory at "
                 "time 3");
  /* reported in address order whichever was placed first */
  expect_invalid(w, &hw, (int64_t[]){2048, 0, MB_SLOW}, 1, 0,
                 "buffer 'b1' [0, 4096) and buffer 'b0' [2048, 6144) overlap in fast memory at "
                 "time 3");
  expect_invalid(w, &hw, (int64_t[]){0, 4096, 8192}, 2, -1,
                 "buffer 'b2': pinned (must stay in slow memory) but assigned offset 8192");
  expect_invalid(w, &hw, (int64_t[]){100, MB_SLOW, MB_SLOW}, 0, -1,
                 "buffer 'b0': offset 100 is not a multiple of the alignment 512");
  expect_invalid(w, &hw, (int64_t[]){-7, MB_SLOW, MB_SLOW}, 0, -1,
                 "buffer 'b0': offset -7 is negative (and not slow)");
  expect_invalid(w, &hw, (int64_t[]){(1 << 20) - 512, MB_SLOW, MB_SLOW}, 0, -1,
                 "buffer 'b0': offset 1048064 + size 4096 exceeds the fast-memory capacity "
                 "1048576 of 'testhw'");
  expect_invalid(w, &hw, (int64_t[]){INT64_MAX - 511, MB_SLOW, MB_SLOW}, 0, -1,
                 "buffer 'b0': offset 9223372036854775296 + size 4096 exceeds the fast-memory "
                 "capacity 1048576 of 'testhw'");
  mb_assignment *a = mb_assignment_new(2);
  mb_error err;
  assert_false(mb_validate(w, &hw, a, &err));
  assert_string_equal(err.message, "assignment has 2 buffers but workload 'v' has 3");
  int32_t blame[2];
  assert_false(mb_validate_blame(w, &hw, a, blame, &err));
  assert_int_equal(blame[0], -1);
  assert_int_equal(blame[1], -1);
  mb_assignment_free(a);
  mb_workload_free(w);
}

static void test_touching_is_valid(void **state) {
  (void)state;
  /* b0 ends at 2, b1 starts at 3: same addresses are fine; b2 is adjacent in address. */
  spec s[] = {{0, 2, 4096, false}, {3, 5, 4096, false}, {0, 5, 1024, false}};
  mb_workload *w = make(6, s, 3);
  mb_hardware hw = hw_with(8192, 1024);
  assert_true(valid(w, &hw, (int64_t[]){0, 0, 4096}));
  assert_true(valid(w, &hw, (int64_t[]){4096, 4096, 0}));
  assert_true(valid(w, &hw, (int64_t[]){MB_SLOW, MB_SLOW, MB_SLOW}));
  assert_false(valid(w, &hw, (int64_t[]){0, 0, 3072}));
  /* exactly at capacity is fine, one alignment unit beyond is not */
  assert_true(valid(w, &hw, (int64_t[]){0, 0, 7168}));
  assert_false(valid(w, &hw, (int64_t[]){0, 0, 8192}));
  mb_workload_free(w);
  /* to the byte, on alignment 1: two live buffers of 10 bytes overlap by one byte at 0 and 9
   * (either one below), touch at 0 and 10; at capacity 100 one ends at 100, not at 101 */
  spec t[] = {{0, 3, 10, false}, {2, 5, 10, false}};
  w = make(6, t, 2);
  hw = hw_with(100, 1);
  assert_false(valid(w, &hw, (int64_t[]){0, 9}));
  assert_false(valid(w, &hw, (int64_t[]){9, 0}));
  assert_true(valid(w, &hw, (int64_t[]){0, 10}));
  assert_true(valid(w, &hw, (int64_t[]){10, 0}));
  assert_true(valid(w, &hw, (int64_t[]){90, 0}));
  assert_false(valid(w, &hw, (int64_t[]){91, 0}));
  mb_workload_free(w);
}

static void test_usage(void **state) {
  (void)state;
  spec s[] = {{0, 2, 4096, false}, {3, 5, 4096, false}, {0, 5, 1024, false}, {1, 1, 100, false}};
  mb_workload *w = make(6, s, 4);
  mb_assignment *a = mb_assignment_new(4);
  a->offset[0] = 0;
  a->offset[1] = 0;
  a->offset[2] = 8192;
  int64_t peak, top;
  mb_assignment_usage(w, a, &peak, &top);
  assert_int_equal(peak, 4096 + 1024);
  assert_int_equal(top, 8192 + 1024);
  a->offset[3] = 20000;
  mb_assignment_usage(w, a, &peak, &top);
  assert_int_equal(peak, 4096 + 1024 + 100);
  assert_int_equal(top, 20100);
  /* the top is offset + size of a fast buffer, whatever its offset; slow buffers never count */
  for (int i = 0; i < 4; i++) a->offset[i] = MB_SLOW;
  a->offset[3] = 0;
  mb_assignment_usage(w, a, &peak, &top);
  assert_int_equal(peak, 100);
  assert_int_equal(top, 100);
  a->offset[3] = MB_SLOW;
  a->offset[0] = 100;
  mb_assignment_usage(w, a, &peak, &top);
  assert_int_equal(peak, 4096);
  assert_int_equal(top, 4196);
  mb_assignment_free(a);
  mb_workload_free(w);
}

/* Brute force: returns -1 when valid, else the earliest time at which two fast buffers overlap
 * (or -2 for a per-buffer violation). */
static int32_t brute_force(const mb_workload *w, const mb_hardware *hw, const int64_t *off) {
  for (int32_t i = 0; i < w->n_buffers; i++) {
    if (off[i] == MB_SLOW) continue;
    if (off[i] < 0 || w->buffers[i].pinned || off[i] % hw->alignment ||
        off[i] + w->buffers[i].size > hw->capacity)
      return -2;
  }
  int32_t earliest = -1;
  for (int32_t i = 0; i < w->n_buffers; i++)
    for (int32_t j = i + 1; j < w->n_buffers; j++) {
      if (off[i] == MB_SLOW || off[j] == MB_SLOW) continue;
      const mb_buffer *x = &w->buffers[i], *y = &w->buffers[j];
      bool time = x->start <= y->end && y->start <= x->end;
      bool addr = off[i] < off[j] + y->size && off[j] < off[i] + x->size;
      int32_t t = x->start > y->start ? x->start : y->start;
      if (time && addr && (earliest < 0 || t < earliest)) earliest = t;
    }
  return earliest;
}

static void test_agrees_with_brute_force(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  int n_valid = 0, n_overlap = 0, n_other = 0;
  /* 5,000 cases on 4-byte alignment with sizes and offsets in whole units, then 5,000 on
   * alignment 1 with any sizes and offsets: only there do one-byte overlaps and a buffer one
   * byte past the capacity occur (off-by-one mutants of the overlap and capacity checks
   * survived the first half alone) */
  for (int iter = 0; iter < 10000; iter++) {
    bool unit = iter >= 5000;
    int32_t length = (int32_t)mb_rng_range(&rng, 1, 8);
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 12);
    spec s[12];
    int64_t off[12];
    for (int32_t i = 0; i < n; i++) {
      s[i].start = (int32_t)mb_rng_below(&rng, (uint64_t)length);
      s[i].end = (int32_t)mb_rng_range(&rng, s[i].start, length - 1);
      s[i].size = unit ? mb_rng_range(&rng, 1, 32) : 4 * mb_rng_range(&rng, 1, 8);
      s[i].pinned = mb_rng_below(&rng, 40) == 0;
      off[i] = mb_rng_below(&rng, 3) == 0 ? MB_SLOW
               : unit                     ? mb_rng_range(&rng, 0, 70)
                                          : 4 * mb_rng_range(&rng, 0, 16);
      if (!unit && mb_rng_below(&rng, 100) == 0) off[i] += 2; /* misaligned */
    }
    mb_workload *w = make(length, s, n);
    mb_hardware hw = hw_with(96, unit ? 1 : 4);
    int32_t expect = brute_force(w, &hw, off);
    mb_assignment *a = mb_assignment_new(n);
    memcpy(a->offset, off, (size_t)n * sizeof *off);
    mb_error err;
    int32_t blame[2];
    bool ok = mb_validate_blame(w, &hw, a, blame, &err);
    if (ok != (expect == -1)) {
      print_error("iter %d: validator %s, brute force %d (%s)\n", iter, ok ? "valid" : "invalid",
                  expect, ok ? "" : err.message);
      fail();
    }
    if (expect >= 0) {
      /* the reported pair overlaps, at the earliest overlapping time */
      int bx, by, t;
      long long ax, ex, ay, ey;
      int got = sscanf(err.message,
                       "buffer 'b%d' [%lld, %lld) and buffer 'b%d' [%lld, %lld) overlap in fast "
                       "memory at time %d",
                       &bx, &ax, &ex, &by, &ay, &ey, &t);
      assert_int_equal(got, 7);
      assert_int_equal(t, expect);
      assert_true(ax <= ay && ax == off[bx] && ay == off[by] && ax < ey && ay < ex);
      assert_true(w->buffers[bx].start <= t && t <= w->buffers[bx].end);
      assert_true(w->buffers[by].start <= t && t <= w->buffers[by].end);
      assert_int_equal(blame[0], bx); /* the pair blamed is the pair named */
      assert_int_equal(blame[1], by);
      n_overlap++;
    } else if (expect == -2) {
      int bi = -1;
      assert_int_equal(sscanf(err.message, "buffer 'b%d'", &bi), 1);
      assert_int_equal(blame[0], bi);
      assert_int_equal(blame[1], -1);
      n_other++;
    } else {
      n_valid++;
    }
    mb_assignment_free(a);
    mb_workload_free(w);
  }
  /* the generator exercises all three outcomes substantially */
  assert_true(n_valid > 500 && n_overlap > 500 && n_other > 100);
}

/* The time at the end of a collision message ("... at time T"), or -1. */
static int32_t message_time(const char *m) {
  const char *p = strstr(m, " at time ");
  return p ? (int32_t)atol(p + 9) : -1;
}

/* Random op-less workloads and assignments (valid, colliding, misaligned, beyond capacity),
 * and the same spread over ~2^31 steps under an address-space limit: the same verdict, the
 * same message but for the time (the spread image of the same step), the same buffers
 * blamed, the same usage figures. */
static void test_spread_agrees(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 17);
  struct rlimit saved;
  bool limited = mb_test_memory_limit(256u << 20, &saved);
  int n_valid = 0, n_overlap = 0;
  for (int iter = 0; iter < 1000; iter++) {
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 30);
    int32_t T = (int32_t)mb_rng_range(&rng, 1, iter % 2 ? 2 * n : 200);
    mb_workload *w = mb_test_random_opless(&rng, n, T);
    mb_workload *sw = mb_test_spread_workload(w);
    assert_non_null(w);
    assert_non_null(sw);
    mb_hardware hw = hw_with(512 * 128, 512);
    mb_assignment *a = mb_assignment_new(n);
    for (int32_t i = 0; i < n; i++) {
      bool fast = !w->buffers[i].pinned && mb_rng_below(&rng, 3) != 0;
      a->offset[i] = fast ? 512 * mb_rng_range(&rng, 0, 64) : MB_SLOW;
      if (fast && mb_rng_below(&rng, 200) == 0) a->offset[i] += 1;
    }
    mb_error e1, e2;
    mb_error_clear(&e1);
    mb_error_clear(&e2);
    int32_t b1[2], b2[2];
    bool ok1 = mb_validate_blame(w, &hw, a, b1, &e1), ok2 = mb_validate_blame(sw, &hw, a, b2, &e2);
    assert_int_equal(ok1, ok2);
    assert_int_equal(b1[0], b2[0]);
    assert_int_equal(b1[1], b2[1]);
    if (!ok1) {
      int32_t t1 = message_time(e1.message), t2 = message_time(e2.message);
      assert_int_equal(t2, t1 < 0 ? -1 : mb_test_spread_start(t1));
      const char *p = strstr(e1.message, " at time "); /* the rest is the same */
      size_t k = p ? (size_t)(p - e1.message) : strlen(e1.message) + 1;
      assert_int_equal(strncmp(e1.message, e2.message, k), 0);
      n_overlap += t1 >= 0;
    } else {
      n_valid++;
    }
    int64_t p1, p2, top1, top2;
    mb_assignment_usage(w, a, &p1, &top1);
    mb_assignment_usage(sw, a, &p2, &top2);
    assert_true(p1 >= 0);
    assert_int_equal(p1, p2);
    assert_int_equal(top1, top2);
    mb_assignment_free(a);
    mb_workload_free(w);
    mb_workload_free(sw);
  }
  assert_true(n_valid > 50 && n_overlap > 200);
  mb_test_memory_unlimit(limited, &saved);
}

/* tests/e2e/import.sh's big.csv (2^31 - 2 steps, 3 buffers) under an address-space limit of 64 MiB
 * above the current size: a valid assignment passes, a collision is found at the right time, and
 * the usage figures are right. */
static void test_long_schedule(void **state) {
  (void)state;
  struct rlimit saved;
  bool limited = mb_test_memory_limit(64u << 20, &saved);
  mb_workload *w = mb_test_big_schedule_workload();
  assert_non_null(w);
  mb_hardware hw = hw_with(4096, 512);
  assert_true(valid(w, &hw, (int64_t[]){0, 1024, 3072}));
  expect_invalid(w, &hw, (int64_t[]){0, 1024, 2048}, 1, 2,
                 "buffer '1' [1024, 3072) and buffer '2' [2048, 2560) overlap in fast memory at "
                 "time 100");
  mb_assignment *a = mb_assignment_new(3);
  a->offset[0] = 0;
  a->offset[1] = 1024;
  a->offset[2] = 3072;
  int64_t peak = 0, top = 0;
  mb_assignment_usage(w, a, &peak, &top);
  assert_int_equal(peak, 3584);
  assert_int_equal(top, 3584);
  a->offset[1] = MB_SLOW;
  mb_assignment_usage(w, a, &peak, &top);
  assert_int_equal(peak, 1536);
  mb_assignment_free(a);
  mb_workload_free(w);
  mb_test_memory_unlimit(limited, &saved);
}

/* Lane packing: each fast buffer gets the lowest lane free over its live range. */
static mb_assignment *lane_packing(const mb_workload *w, int64_t lane_bytes, mb_rng *rng) {
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  int32_t n_lanes = 64;
  int32_t *busy_until = calloc((size_t)n_lanes, sizeof *busy_until);
  for (int32_t l = 0; l < n_lanes; l++) busy_until[l] = -1;
  /* buffers were generated in start order */
  for (int32_t i = 0; i < w->n_buffers; i++) {
    if (w->buffers[i].pinned || mb_rng_below(rng, 4) == 0) continue;
    for (int32_t l = 0; l < n_lanes; l++) {
      if (busy_until[l] < w->buffers[i].start) {
        busy_until[l] = w->buffers[i].end;
        a->offset[i] = l * lane_bytes;
        break;
      }
    }
  }
  free(busy_until);
  return a;
}

static void test_random_packings_and_planted_overlaps(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  const int32_t n = 20000, length = 5000;
  spec *s = malloc((size_t)n * sizeof *s);
  for (int32_t i = 0; i < n; i++) {
    s[i].start = (int32_t)((int64_t)i * length / n);
    s[i].end = s[i].start + (int32_t)mb_rng_range(&rng, 0, 6);
    if (s[i].end >= length) s[i].end = length - 1;
    s[i].size = 256 * mb_rng_range(&rng, 1, 16);
    s[i].pinned = mb_rng_below(&rng, 20) == 0;
  }
  mb_workload *w = make(length, s, n);
  mb_hardware hw = hw_with(64 * 4096, 256);
  mb_rng prng = mb_rng_split(&rng, 1);
  mb_assignment *a = lane_packing(w, 4096, &prng);
  mb_error err;
  if (!mb_validate(w, &hw, a, &err)) print_error("%s\n", err.message);
  assert_true(mb_validate(w, &hw, a, &err));
  assert_true(mb_assignment_n_fast(a) > n / 2);
  int caught = 0;
  for (int trial = 0; trial < 200; trial++) {
    /* plant: move a fast buffer x onto another fast buffer y live at a common time */
    int32_t y = (int32_t)mb_rng_below(&rng, (uint64_t)n);
    if (a->offset[y] == MB_SLOW) continue;
    int32_t x = -1;
    for (int32_t k = y + 1; k < n && w->buffers[k].start <= w->buffers[y].end; k++)
      if (a->offset[k] != MB_SLOW) {
        x = k;
        break;
      }
    if (x < 0) continue;
    int64_t saved = a->offset[x];
    a->offset[x] = a->offset[y] + 256 * mb_rng_range(&rng, 0, w->buffers[y].size / 256 - 1);
    if (a->offset[x] + w->buffers[x].size > hw.capacity) a->offset[x] = a->offset[y];
    assert_false(mb_validate(w, &hw, a, &err));
    assert_non_null(strstr(err.message, "overlap in fast memory"));
    int32_t t;
    const char *at = strstr(err.message, "at time ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "at time %d", &t), 1);
    assert_true(t <= w->buffers[x].start); /* no later than the planted collision */
    a->offset[x] = saved;
    caught++;
  }
  assert_true(caught > 100);
  assert_true(mb_validate(w, &hw, a, &err));
  mb_assignment_free(a);
  mb_workload_free(w);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_messages),
      cmocka_unit_test(test_touching_is_valid),
      cmocka_unit_test(test_usage),
      cmocka_unit_test(test_agrees_with_brute_force),
      cmocka_unit_test(test_random_packings_and_planted_overlaps),
      cmocka_unit_test(test_spread_agrees),
      cmocka_unit_test(test_long_schedule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
