/* The workload builder and statistics (suite/workload.c): validation messages, derived live
 * ranges, use merging, the per-op use index, clone, and stats against a brute-force count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "long_schedule.h"
#include "rng.h"
#include "support.h"
#include "workload.h"
#include "workload_io.h"

static mb_workload_builder *with_ops(int32_t n_ops) {
  mb_workload_builder *b = mb_builder_new("w", "test");
  char name[16];
  for (int32_t o = 0; o < n_ops; o++) {
    snprintf(name, sizeof name, "o%d", o);
    assert_int_equal(mb_builder_add_op(b, name, "add", 10.0 * o), o);
  }
  return b;
}

static void expect_error(mb_workload_builder *b, const char *message) {
  mb_error err;
  mb_error_clear(&err);
  mb_workload *w = mb_builder_finish(b, &err);
  if (w || strcmp(err.message, message)) {
    print_error("expected: %s\ngot:      %s\n", message, w ? "(accepted)" : err.message);
    mb_workload_free(w);
    fail();
  }
}

static void test_peak_live_bytes(void **state) {
  (void)state;
  mb_workload_builder *b = with_ops(4);
  mb_builder_add_buffer(b, "a", 100, 0, 1, true);
  mb_builder_add_buffer(b, "b", 50, 1, 2, false);
  mb_builder_add_buffer(b, "c", 200, 2, 2, false);
  mb_builder_add_buffer(b, "d", 10, 3, 3, false);
  mb_workload *w = mb_builder_finish(b, NULL);
  assert_non_null(w);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  assert_int_equal(st.n_ops, 4);
  assert_int_equal(st.n_buffers, 4);
  assert_int_equal(st.n_pinned, 1);
  assert_int_equal(st.total_bytes, 360);
  assert_int_equal(st.peak_live_bytes, 250); /* t=2: b + c */
  assert_int_equal(st.peak_time, 2);
  assert_int_equal(st.largest_buffer, 200);
  assert_true(st.total_flops == 0 + 10 + 20 + 30);
  mb_workload_free(w);

  /* ties: the first time the peak is reached */
  b = with_ops(3);
  mb_builder_add_buffer(b, "a", 100, 1, 1, false);
  mb_builder_add_buffer(b, "b", 100, 2, 2, false);
  w = mb_builder_finish(b, NULL);
  mb_workload_stats_compute(w, &st);
  assert_int_equal(st.peak_live_bytes, 100);
  assert_int_equal(st.peak_time, 1);
  mb_workload_free(w);
}

/* Peak live bytes by brute force (every time step of a short schedule), counting buffer i
 * when include is NULL or include[i]. */
static int64_t brute_peak(const mb_workload *w, const bool *include, int32_t *peak_time) {
  int64_t peak = 0;
  *peak_time = 0;
  for (int32_t t = 0; t < w->schedule_length; t++) {
    int64_t live = 0;
    for (int32_t i = 0; i < w->n_buffers; i++)
      if ((!include || include[i]) && w->buffers[i].start <= t && t <= w->buffers[i].end)
        live += w->buffers[i].size;
    if (live > peak) peak = live, *peak_time = t;
  }
  return peak;
}

/* An op-less workload of 2^31 - 2 steps (tests/e2e/import.sh's big.csv): the statistics are right
 * and cost no memory per step (an address-space limit of 64 MiB above the current size). */
static void test_long_schedule_stats(void **state) {
  (void)state;
  struct rlimit saved;
  bool limited = mb_test_memory_limit(64u << 20, &saved);
  mb_workload *w = mb_test_big_schedule_workload();
  assert_non_null(w);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  assert_int_equal(st.peak_live_bytes, 3584);
  assert_int_equal(st.peak_time, 100);
  assert_int_equal(st.total_bytes, 3584);
  bool include[3] = {true, false, true};
  int64_t peak = 0;
  int32_t t = -1;
  assert_true(mb_workload_peak_live(w, include, &peak, &t));
  assert_int_equal(peak, 1536);
  assert_int_equal(t, 100);
  include[2] = false;
  assert_true(mb_workload_peak_live(w, include, &peak, &t));
  assert_int_equal(peak, 1024);
  assert_int_equal(t, 0);
  mb_workload_free(w);
  mb_test_memory_unlimit(limited, &saved);
}

/* Random op-less workloads (schedules shorter and longer than 4 steps per buffer, the two
 * ways of counting) and the same spread over ~2^31 steps: the peak is the brute-force one,
 * reached first at the spread image of the same step; with random include masks too. */
static void test_spread_stats(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  struct rlimit saved;
  bool limited = mb_test_memory_limit(256u << 20, &saved);
  for (int iter = 0; iter < 200; iter++) {
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 40);
    int32_t T = (int32_t)mb_rng_range(&rng, 1, iter % 2 ? 4 * n : 300);
    mb_workload *w = mb_test_random_opless(&rng, n, T);
    assert_non_null(w);
    mb_workload *sw = mb_test_spread_workload(w);
    assert_non_null(sw);
    mb_workload_stats st, sst;
    mb_workload_stats_compute(w, &st);
    mb_workload_stats_compute(sw, &sst);
    int32_t bt;
    assert_int_equal(st.peak_live_bytes, brute_peak(w, NULL, &bt));
    assert_int_equal(st.peak_time, bt);
    assert_int_equal(sst.peak_live_bytes, st.peak_live_bytes);
    assert_int_equal(sst.peak_time, mb_test_spread_start(st.peak_time));
    bool include[40];
    for (int32_t i = 0; i < n; i++) include[i] = mb_rng_below(&rng, 2);
    int64_t p1 = -1, p2 = -1;
    int32_t t1 = -1, t2 = -1;
    assert_true(mb_workload_peak_live(w, include, &p1, &t1));
    assert_true(mb_workload_peak_live(sw, include, &p2, &t2));
    assert_int_equal(p1, brute_peak(w, include, &bt));
    assert_int_equal(t1, bt);
    assert_int_equal(p2, p1);
    assert_int_equal(t2, p1 > 0 ? mb_test_spread_start(t1) : 0);
    mb_workload_free(w);
    mb_workload_free(sw);
  }
  mb_test_memory_unlimit(limited, &saved);
}

static void test_stats_against_brute_force(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 3);
  for (int iter = 0; iter < 500; iter++) {
    int32_t n_ops = (int32_t)mb_rng_range(&rng, 1, 15);
    mb_workload_builder *b = with_ops(n_ops);
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 20);
    char name[16];
    for (int32_t i = 0; i < n; i++) {
      int32_t s = (int32_t)mb_rng_below(&rng, (uint64_t)n_ops);
      snprintf(name, sizeof name, "b%d", i);
      mb_builder_add_buffer(b, name, mb_rng_range(&rng, 1, 1000), s,
                            (int32_t)mb_rng_range(&rng, s, n_ops - 1), mb_rng_below(&rng, 3) == 0);
    }
    mb_workload *w = mb_builder_finish(b, NULL);
    assert_non_null(w);
    mb_workload_stats st;
    mb_workload_stats_compute(w, &st);
    int64_t peak = 0, total = 0, largest = 0;
    int32_t peak_t = 0, pinned = 0;
    for (int32_t t = 0; t < n_ops; t++) {
      int64_t live = 0;
      for (int32_t i = 0; i < n; i++)
        if (w->buffers[i].start <= t && t <= w->buffers[i].end) live += w->buffers[i].size;
      if (live > peak) peak = live, peak_t = t;
    }
    for (int32_t i = 0; i < n; i++) {
      total += w->buffers[i].size;
      pinned += w->buffers[i].pinned;
      if (w->buffers[i].size > largest) largest = w->buffers[i].size;
    }
    assert_int_equal(st.peak_live_bytes, peak);
    assert_int_equal(st.peak_time, peak_t);
    assert_int_equal(st.total_bytes, total);
    assert_int_equal(st.largest_buffer, largest);
    assert_int_equal(st.n_pinned, pinned);
    mb_workload_free(w);
  }
}

static void test_duplicates(void **state) {
  (void)state;
  mb_workload_builder *b = with_ops(2);
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  mb_builder_add_buffer(b, "y", 4, 0, 0, false);
  mb_builder_add_buffer(b, "x", 4, 1, 1, false);
  expect_error(b, "workload 'w': buffer 'x': duplicate name (buffers 0 and 2)");
  b = with_ops(3);
  mb_builder_add_op(b, "o1", "dot", 1);
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  expect_error(b, "workload 'w': op 'o1': duplicate name (ops 1 and 3)");
  /* two ops, the first one's name again */
  b = with_ops(1);
  mb_builder_add_op(b, "o0", "dot", 1);
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  expect_error(b, "workload 'w': op 'o0': duplicate name (ops 0 and 1)");
}

static void test_derived_ranges_and_merged_uses(void **state) {
  (void)state;
  mb_workload_builder *b = with_ops(6);
  int32_t x = mb_builder_add_buffer(b, "x", 64, -1, -1, false);
  int32_t y = mb_builder_add_buffer(b, "y", 32, 0, 5, false);
  mb_builder_add_use(b, x, 4, 10, 0);
  mb_builder_add_use(b, x, 1, 0, 64);
  mb_builder_add_use(b, x, 4, 5, 1); /* merged with the first */
  mb_builder_add_use(b, y, 2, 32, 0);
  mb_workload *w = mb_builder_finish(b, NULL);
  assert_non_null(w);
  assert_int_equal(w->buffers[x].start, 1);
  assert_int_equal(w->buffers[x].end, 4);
  assert_int_equal(w->buffers[x].n_uses, 2);
  assert_int_equal(w->n_uses, 3);
  const mb_use *u = &w->uses[w->buffers[x].first_use];
  assert_int_equal(u[0].op, 1);
  assert_int_equal(u[1].op, 4);
  assert_int_equal(u[1].bytes_read, 15);
  assert_int_equal(u[1].bytes_written, 1);
  /* the per-op index lists exactly the uses of each op */
  for (int32_t o = 0; o < w->n_ops; o++)
    for (int32_t k = w->op_use_start[o]; k < w->op_use_start[o + 1]; k++)
      assert_int_equal(w->uses[w->op_uses[k]].op, o);
  assert_int_equal(w->op_use_start[w->n_ops], w->n_uses);
  assert_int_equal(w->op_use_start[2] - w->op_use_start[1], 1);
  assert_int_equal(w->op_use_start[5] - w->op_use_start[4], 1);
  assert_int_equal(mb_workload_find_buffer(w, "y"), y);
  assert_int_equal(mb_workload_find_buffer(w, "nope"), -1);
  assert_int_equal(mb_workload_find_op(w, "o3"), 3);
  assert_int_equal(mb_workload_find_op(w, "nope"), -1);
  mb_workload *c = mb_workload_clone(w);
  assert_non_null(c);
  char why[128];
  if (!mb_workload_equal(w, c, why, sizeof why)) print_error("clone: %s\n", why);
  assert_true(mb_workload_equal(w, c, NULL, 0));
  mb_workload_free(c);
  mb_workload_free(w);
}

static void test_rejections(void **state) {
  (void)state;
  mb_workload_builder *b = with_ops(2);
  expect_error(b, "workload 'w': empty workload (no buffers)");

  b = with_ops(2);
  mb_builder_add_buffer(b, "x", 4, -1, -1, false);
  expect_error(b, "workload 'w': buffer 'x': start -1 outside the schedule [0, 2)");

  b = with_ops(2);
  mb_builder_add_buffer(b, "x", 0, 0, 0, false);
  expect_error(b, "workload 'w': buffer 'x': size 0 must be > 0");

  b = with_ops(2);
  mb_builder_add_buffer(b, "x", 4, 1, 0, false);
  expect_error(b, "workload 'w': buffer 'x': end 0 < start 1");

  b = with_ops(2);
  mb_builder_add_buffer(b, "x", 4, 0, 2, false);
  expect_error(b, "workload 'w': buffer 'x': end 2 outside the schedule [0, 2)");

  b = with_ops(3);
  mb_builder_add_buffer(b, "x", 4, 0, 1, false);
  mb_builder_add_use(b, 0, 2, 4, 0);
  expect_error(b, "workload 'w': buffer 'x': use by op 2 outside its live range [0, 1]");

  b = with_ops(2);
  mb_builder_add_buffer(b, "x", 4, 0, 1, false);
  mb_builder_add_use(b, 0, 7, 4, 0);
  expect_error(b, "workload 'w': buffer 'x': use of op 7 outside the schedule [0, 2)");

  b = with_ops(2);
  mb_builder_add_buffer(b, "x", 4, 0, 1, false);
  mb_builder_add_use(b, 0, 1, -4, 0);
  expect_error(b, "workload 'w': buffer 'x': use by op 1: negative byte count");

  b = with_ops(2);
  mb_builder_add_buffer(b, "x", 4, 0, 1, false);
  mb_builder_add_use(b, 0, 1, INT64_MAX, 0);
  mb_builder_add_use(b, 0, 1, 1, 0);
  expect_error(b, "workload 'w': buffer 'x': byte count overflows");

  b = with_ops(1);
  mb_builder_add_op(b, "bad", "dot", NAN);
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  expect_error(b, "workload 'w': op 'bad': flops nan must be finite and >= 0");

  b = mb_builder_new("w", "");
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  expect_error(b, "workload 'w': no ops and no schedule length");

  b = mb_builder_new("w", "");
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  mb_builder_set_schedule(b, 3, 1000);
  expect_error(b, "workload 'w': buffer 'x': workloads without ops need a benefit");

  b = mb_builder_new("w", "");
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  mb_builder_set_benefit(b, 0, 5);
  mb_builder_set_schedule(b, 3, 0);
  expect_error(b, "workload 'w': workloads without ops need slow_time_ps > 0");

  /* sums of sizes and of an op's bytes must fit in int64 (statistics and the cost model add
   * them up) */
  b = with_ops(1);
  mb_builder_add_buffer(b, "x", INT64_MAX, 0, 0, false);
  mb_builder_add_buffer(b, "y", 1, 0, 0, false);
  expect_error(b, "workload 'w': buffer 'y': total size of all buffers overflows int64");

  b = with_ops(1);
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  mb_builder_add_use(b, 0, 0, INT64_MAX, 1);
  expect_error(b, "workload 'w': buffer 'x': bytes of op 0 overflow int64");
  /* over two uses: read and written bytes both count (2^62 + 2^61, then 2^61 + 2^61) */
  b = with_ops(1);
  mb_builder_add_buffer(b, "x", 4, 0, 0, false);
  mb_builder_add_buffer(b, "y", 4, 0, 0, false);
  mb_builder_add_use(b, 0, 0, (int64_t)1 << 62, (int64_t)1 << 61);
  mb_builder_add_use(b, 1, 0, (int64_t)1 << 61, (int64_t)1 << 61);
  expect_error(b, "workload 'w': buffer 'y': bytes of op 0 overflow int64");
}

static void test_opless(void **state) {
  (void)state;
  mb_workload_builder *b = mb_builder_new("csv", "x.csv");
  mb_builder_add_buffer(b, "0", 8, 0, 3, false);
  mb_builder_add_buffer(b, "1", 4, 2, 4, true);
  mb_builder_set_benefit(b, 0, 7);
  mb_builder_set_benefit(b, 1, 0);
  mb_builder_set_schedule(b, 5, 99);
  mb_workload *w = mb_builder_finish(b, NULL);
  assert_non_null(w);
  assert_int_equal(w->schedule_length, 5);
  assert_int_equal(w->slow_time_ps, 99);
  assert_int_equal(w->n_ops, 0);
  assert_int_equal(w->op_use_start[0], 0);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  assert_int_equal(st.peak_live_bytes, 12);
  assert_int_equal(st.peak_time, 2);
  mb_workload *c = mb_workload_clone(w);
  assert_true(mb_workload_equal(w, c, NULL, 0));
  mb_workload_free(c);
  mb_workload_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_peak_live_bytes),
      cmocka_unit_test(test_stats_against_brute_force),
      cmocka_unit_test(test_long_schedule_stats),
      cmocka_unit_test(test_spread_stats),
      cmocka_unit_test(test_duplicates),
      cmocka_unit_test(test_derived_ranges_and_merged_uses),
      cmocka_unit_test(test_rejections),
      cmocka_unit_test(test_opless),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
