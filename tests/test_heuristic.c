/* The XLA-style heuristic: a hand-traced example, order rules, and validity on random
 * workloads (the validator is independent of the solver). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "long_schedule.h"
#include "random_workload.h"
#include "solver.h"
#include "support.h"
#include "validator.h"

/* The hand-traced example: an op-less workload (benefits given), 4 time steps, capacity 100,
 * alignment 1.
 *
 *   buffer  size  live   benefit  score = benefit / sqrt(size)
 *   a       40    [0,3]  400      63.2
 *   b       20    [0,1]  250      55.9
 *   q       30    [0,3]  270      49.3
 *   r        8    [2,3]  100      35.4
 *   s       15    [3,3]  100      25.8
 *   t       15    [3,3]  100      25.8  (ties s on score, size and range: id decides, s first)
 *   pin      5    [0,0]  1000     pinned: skipped
 *   big    101    [0,0]  1e6      larger than the capacity: skipped
 *   zero     5    [1,1]  0        no benefit: skipped
 *
 * Trace (gaps over the buffer's live range, best fit = smallest gap that holds it):
 *   a over [0,3]: free [0,100)                      -> 0
 *   b over [0,1]: a=[0,40) -> gap [40,100)          -> 40
 *   q over [0,3]: a, b=[40,60) -> gap [60,100)      -> 60
 *   r over [2,3]: a, q=[60,90) -> gaps [40,60) (20) and [90,100) (10): the smaller -> 90
 *   s over [3,3]: a, q, r=[90,98) -> gaps [40,60) (20), [98,100) (2)             -> 40
 *   t over [3,3]: a, s=[40,55), q, r -> gaps [55,60) (5), [98,100) (2)           -> slow */
static mb_workload *traced_workload(void) {
  static const mb_test_buffer bufs[] = {
      {"a", 40, 0, 3, 400, false},  {"b", 20, 0, 1, 250, false},        {"q", 30, 0, 3, 270, false},
      {"r", 8, 2, 3, 100, false},   {"s", 15, 3, 3, 100, false},        {"t", 15, 3, 3, 100, false},
      {"pin", 5, 0, 0, 1000, true}, {"big", 101, 0, 0, 1000000, false}, {"zero", 5, 1, 1, 0, false},
  };
  return mb_test_workload("traced", bufs, sizeof bufs / sizeof bufs[0], 4, 1000000);
}

static void test_hand_traced(void **state) {
  (void)state;
  mb_workload *w = traced_workload();
  assert_non_null(w);
  mb_hardware hw = mb_test_hardware(100, 1);
  int32_t order[16];
  int32_t n = mb_heuristic_order(w, &hw, order);
  const char *want_order[] = {"a", "b", "q", "r", "s", "t"};
  assert_int_equal(n, 6);
  for (int32_t i = 0; i < n; i++) assert_string_equal(w->buffers[order[i]].name, want_order[i]);

  mb_assignment *a = mb_assignment_new(w->n_buffers);
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_solver_stats st;
  memset(&st, 0, sizeof st);
  mb_error err;
  assert_true(mb_solve_heuristic(w, &hw, &opt, &rng, a, &st, &err));
  struct {
    const char *name;
    int64_t offset;
  } want[] = {{"a", 0},       {"b", 40},        {"q", 60},        {"r", 90},        {"s", 40},
              {"t", MB_SLOW}, {"pin", MB_SLOW}, {"big", MB_SLOW}, {"zero", MB_SLOW}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    int32_t id = mb_workload_find_buffer(w, want[i].name);
    assert_true(id >= 0);
    if (a->offset[id] != want[i].offset)
      fail_msg("buffer %s: offset %lld, hand trace says %lld", want[i].name,
               (long long)a->offset[id], (long long)want[i].offset);
  }
  assert_true(mb_validate(w, &hw, a, &err));
  mb_solver_stats_free(&st);
  mb_assignment_free(a);
  mb_workload_free(w);
}

/* Alignment: the same example with alignment 16: every fast offset is a multiple of 16 and
 * the assignment is valid. */
static void test_alignment(void **state) {
  (void)state;
  mb_workload *w = traced_workload();
  mb_hardware hw = mb_test_hardware(100, 16);
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  mb_error err;
  assert_true(mb_solve_heuristic(w, &hw, &opt, &rng, a, NULL, &err));
  for (int32_t b = 0; b < w->n_buffers; b++)
    if (a->offset[b] != MB_SLOW) assert_int_equal(a->offset[b] % 16, 0);
  assert_true(mb_validate(w, &hw, a, &err));
  mb_assignment_free(a);
  mb_workload_free(w);
}

/* The order's ties, op-less, capacity 100, alignment 1 (score = benefit / sqrt(size)):
 *
 *   buffer  size  live   benefit  score
 *   small      4  [0,0]  200      200 / 2  = 100
 *   large     16  [0,0]  400      400 / 4  = 100  (ties small on score: larger size first)
 *   early     25  [0,3]  500      500 / 5  = 100  (live 4 steps)
 *   late      25  [3,5]  500      100             (live 3 steps: after early; by end + start,
 *                                                  3 + 0 = 3 < 5 + 3 = 8, it would come first)
 *   whole    100  [6,6]  1000     1000 / 10 = 100 (exactly the capacity: a candidate)
 *
 * Order: whole (size 100), early and late (size 25; early lives longer), large, small. Each
 * lives alone or with buffers that fit beside it (small, large and early at t = 0: 45 bytes;
 * early and late at t = 3: 50), so all are fast; whole at offset 0. */
static void test_order_ties(void **state) {
  (void)state;
  static const mb_test_buffer bufs[] = {{"small", 4, 0, 0, 200, false},
                                        {"large", 16, 0, 0, 400, false},
                                        {"late", 25, 3, 5, 500, false},
                                        {"early", 25, 0, 3, 500, false},
                                        {"whole", 100, 6, 6, 1000, false}};
  mb_workload *w = mb_test_workload("ties", bufs, sizeof bufs / sizeof bufs[0], 7, 1000000);
  mb_error err;
  mb_hardware hw = mb_test_hardware(100, 1);
  int32_t order[8];
  const char *want[] = {"whole", "early", "late", "large", "small"};
  assert_int_equal(mb_heuristic_order(w, &hw, order), 5);
  for (int32_t i = 0; i < 5; i++)
    if (strcmp(w->buffers[order[i]].name, want[i]) != 0)
      fail_msg("order[%d] is %s, the ties say %s", i, w->buffers[order[i]].name, want[i]);
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  assert_true(mb_solve_heuristic(w, &hw, &opt, NULL, a, NULL, &err));
  for (int32_t i = 0; i < w->n_buffers; i++) assert_true(a->offset[i] != MB_SLOW);
  assert_int_equal(a->offset[mb_workload_find_buffer(w, "whole")], 0);
  assert_true(mb_validate(w, &hw, a, &err));
  mb_assignment_free(a);
  mb_workload_free(w);
}

/* Out of memory: a workload whose use count asks for 16 GiB of use benefits under an
 * address-space limit of 256 MiB more than the process has. The order says -1 and the solver
 * fails with a message instead of going on (with an empty order, or past a NULL array). Only
 * the counts are read before the allocation fails, so the workload needs no uses behind them.
 * Not under AddressSanitizer, where no limit is set. */
static void test_out_of_memory(void **state) {
  (void)state;
  char name[] = "huge";
  mb_buffer buf = {.size = 8};
  mb_workload w = {.name = name, .n_buffers = 1, .n_uses = INT32_MAX, .schedule_length = 1};
  w.buffers = &buf;
  mb_hardware hw = mb_test_hardware(100, 1);
  mb_assignment *a = mb_assignment_new(1);
  assert_non_null(a);
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  struct rlimit saved;
  bool limited = mb_test_memory_limit(256u << 20, &saved);
  if (!limited) {
    mb_assignment_free(a);
    skip();
  }
  int32_t order[1];
  int32_t n = mb_heuristic_order(&w, &hw, order);
  mb_error err;
  bool solved = mb_solve_heuristic(&w, &hw, &opt, NULL, a, NULL, &err);
  mb_test_memory_unlimit(limited, &saved);
  assert_int_equal(n, -1);
  assert_false(solved);
  assert_non_null(strstr(err.message, "out of memory"));
  mb_assignment_free(a);
}

/* Hundreds of random workloads with ops: the output is valid, never slower than all-slow,
 * and the order puts higher memory-boundedness first. */
static void test_random_valid(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  mb_random_options ro;
  mb_random_options_default(&ro);
  for (int round = 0; round < 300; round++) {
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 120);
    mb_error err;
    mb_workload *w = mb_random_workload(&rng, n, &ro, NULL, &err);
    assert_non_null(w);
    mb_workload_stats ws;
    mb_workload_stats_compute(w, &ws);
    int64_t cap = (int64_t)((double)ws.peak_live_bytes * mb_rng_uniform(&rng)) + 1;
    mb_hardware hw = mb_test_hardware(cap, (int64_t)1 << mb_rng_below(&rng, 10));
    mb_assignment *a = mb_assignment_new(w->n_buffers);
    mb_solver_options opt;
    mb_solver_options_default(&opt);
    if (!mb_solve_heuristic(w, &hw, &opt, &rng, a, NULL, &err)) fail_msg("%s", err.message);
    if (!mb_validate(w, &hw, a, &err)) fail_msg("round %d: %s", round, err.message);
    bool *fast = malloc(sizeof *fast * (size_t)w->n_buffers);
    mb_assignment_fast_flags(a, fast);
    assert_true(mb_program_time(w, &hw, fast) <= mb_slow_time(w, &hw));
    free(fast);
    /* Order: non-increasing score. */
    int32_t *order = malloc(sizeof *order * (size_t)w->n_buffers);
    mb_time_ps *ub = malloc(sizeof *ub * (size_t)w->n_uses);
    mb_use_benefits(w, &hw, ub);
    int32_t m = mb_heuristic_order(w, &hw, order);
    /* every candidate is in it: not pinned, not larger than the capacity, a use that saves */
    int32_t candidates = 0;
    for (int32_t i = 0; i < w->n_buffers; i++) {
      const mb_buffer *buf = &w->buffers[i];
      bool saves = false;
      for (int32_t u = 0; u < w->n_uses; u++) saves |= w->uses[u].buffer == i && ub[u] > 0;
      candidates += !buf->pinned && buf->size <= hw.capacity && saves;
    }
    if (m != candidates) fail_msg("round %d: order of %d, %d candidates", round, m, candidates);
    double prev = INFINITY;
    for (int32_t i = 0; i < m; i++) {
      const mb_buffer *buf = &w->buffers[order[i]];
      assert_false(buf->pinned);
      assert_true(buf->size <= hw.capacity);
      mb_time_ps sum = 0;
      for (int32_t u = buf->first_use; u < buf->first_use + buf->n_uses; u++)
        if (ub[u] > 0) sum += ub[u];
      double score = (double)sum / sqrt((double)buf->size);
      assert_true(sum > 0);
      assert_true(score <= prev);
      prev = score;
    }
    free(order);
    free(ub);
    mb_assignment_free(a);
    mb_workload_free(w);
  }
}

/* Random op-less workloads crowding their fast memory, and the same spread over ~2^31 steps
 * (under an address-space limit): the same order and the same assignment, valid. And the
 * hand-traced example spread out gives the hand-traced offsets. */
static void test_spread_schedule(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 29);
  struct rlimit saved;
  bool limited = mb_test_memory_limit(256u << 20, &saved);
  mb_solver_options opt;
  mb_solver_options_default(&opt);
  mb_error err;
  for (int iter = 0; iter < 200; iter++) {
    int32_t n = (int32_t)mb_rng_range(&rng, 1, 80);
    int32_t T = (int32_t)mb_rng_range(&rng, 1, iter % 2 ? 3 * n : 500);
    mb_workload *w = mb_test_random_opless(&rng, n, T);
    mb_workload *sw = mb_test_spread_workload(w);
    assert_non_null(w);
    assert_non_null(sw);
    mb_workload_stats ws;
    mb_workload_stats_compute(w, &ws);
    int64_t cap = (int64_t)((double)ws.peak_live_bytes * mb_rng_uniform(&rng)) + 1;
    mb_hardware hw = mb_test_hardware(cap, (int64_t)1 << mb_rng_below(&rng, 10));
    mb_assignment *a = mb_assignment_new(n), *b = mb_assignment_new(n);
    if (!mb_solve_heuristic(w, &hw, &opt, &rng, a, NULL, &err)) fail_msg("%s", err.message);
    if (!mb_solve_heuristic(sw, &hw, &opt, &rng, b, NULL, &err)) fail_msg("%s", err.message);
    assert_memory_equal(a->offset, b->offset, sizeof *a->offset * (size_t)n);
    if (!mb_validate(sw, &hw, b, &err)) fail_msg("iter %d: %s", iter, err.message);
    mb_assignment_free(a);
    mb_assignment_free(b);
    mb_workload_free(w);
    mb_workload_free(sw);
  }
  mb_workload *w = traced_workload();
  mb_workload *sw = mb_test_spread_workload(w);
  assert_non_null(sw);
  mb_hardware hw = mb_test_hardware(100, 1);
  mb_assignment *a = mb_assignment_new(sw->n_buffers);
  if (!mb_solve_heuristic(sw, &hw, &opt, &rng, a, NULL, &err)) fail_msg("%s", err.message);
  const int64_t want[] = {0, 40, 60, 90, 40, MB_SLOW, MB_SLOW, MB_SLOW, MB_SLOW};
  assert_memory_equal(a->offset, want, sizeof want);
  mb_assignment_free(a);
  mb_workload_free(w);
  mb_workload_free(sw);
  mb_test_memory_unlimit(limited, &saved);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_traced),  cmocka_unit_test(test_alignment),
      cmocka_unit_test(test_order_ties),   cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_random_valid), cmocka_unit_test(test_spread_schedule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
