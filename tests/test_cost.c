/* Cost model: hand-computed roofline examples and incremental == full re-evaluation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "rng.h"
#include "support.h"

/* 1 GB/s slow, 4 GB/s fast, 1 GFLOP/s, 10 ns overhead: numbers easy to do by hand. */
static mb_hardware simple_hw(void) {
  mb_hardware hw;
  memset(&hw, 0, sizeof hw);
  strcpy(hw.name, "simple");
  hw.capacity = 1 << 20;
  hw.alignment = 1;
  hw.slow_bandwidth = 1e9;
  hw.fast_bandwidth = 4e9;
  hw.peak_flops = 1e9;
  hw.op_overhead_s = 10e-9;
  return hw;
}

/* op0 "compute": 1e6 FLOPs reading buffer a (1000 B): compute 1 ms >> memory 1 us.
 * op1 "memory": 10 FLOPs reading a (1000 B) and writing b (4000 B): memory-bound. */
static mb_workload *two_op_workload(void) {
  mb_workload_builder *b = mb_builder_new("two_ops", "test");
  mb_builder_add_op(b, "compute", "dot", 1e6);
  mb_builder_add_op(b, "memory", "add", 10);
  int32_t a = mb_builder_add_buffer(b, "a", 1000, 0, 1, false);
  int32_t c = mb_builder_add_buffer(b, "b", 4000, 1, 1, false);
  mb_builder_add_use(b, a, 0, 1000, 0);
  mb_builder_add_use(b, a, 1, 1000, 0);
  mb_builder_add_use(b, c, 1, 0, 4000);
  mb_error err;
  mb_workload *w = mb_builder_finish(b, &err);
  assert_non_null(w);
  return w;
}

static void test_hand_computed_times(void **state) {
  (void)state;
  mb_hardware hw = simple_hw();
  mb_workload *w = two_op_workload();
  /* op0: max(1e6/1e9 s = 1 ms, 1000/1e9 = 1 us) + 10 ns = 1,000,010,000 ps */
  assert_int_equal(mb_op_time(w, &hw, 0, 0), 1000010000LL);
  /* op1: max(10 ns, 5000 B / 1 GB/s = 5 us) + 10 ns = 5,010,000 ps */
  assert_int_equal(mb_op_time(w, &hw, 1, 0), 5010000LL);
  assert_int_equal(mb_slow_time(w, &hw), 1000010000LL + 5010000LL);
  /* op1 with b's 4000 B fast: 1000 B / 1 GB/s + 4000 B / 4 GB/s = 2 us, + 10 ns */
  assert_int_equal(mb_op_time(w, &hw, 1, 4000), 2010000LL);
  /* each use alone in fast memory: a's read by op0 saves nothing (compute-bound), by op1
   * 1000 * (1/1e9 - 1/4e9) s = 750 ns; b's write by op1 4000 * (1/1e9 - 1/4e9) s = 3 us */
  mb_time_ps use_benefit[3];
  mb_use_benefits(w, &hw, use_benefit);
  for (int32_t u = 0; u < 3; u++) {
    const mb_use *use = &w->uses[u];
    mb_time_ps want = use->op == 0 ? 0 : use->buffer == 0 ? 750000LL : 3000000LL;
    assert_int_equal(use_benefit[u], want);
  }

  mb_time_ps benefit[2];
  mb_standalone_benefits(w, &hw, benefit);
  /* a: op0 is compute-bound and gains nothing; op1 gains 1000*(1/1e9 - 1/4e9) s = 750 ns. */
  assert_int_equal(benefit[0], 750000LL);
  /* b: 4000 * (1/1e9 - 1/4e9) = 3 us */
  assert_int_equal(benefit[1], 3000000LL);

  bool fast[2] = {true, true};
  /* op1 with everything fast: 5000 / 4e9 = 1.25 us + 10 ns */
  assert_int_equal(mb_program_time(w, &hw, fast), 1000010000LL + 1260000LL);
  mb_workload_free(w);
}

static void test_compute_bound_op_gains_nothing(void **state) {
  (void)state;
  mb_hardware hw = simple_hw();
  mb_workload_builder *b = mb_builder_new("cb", "test");
  mb_builder_add_op(b, "matmul", "dot", 1e9); /* 1 s of compute */
  int32_t x = mb_builder_add_buffer(b, "x", 1 << 20, 0, 0, false);
  mb_builder_add_use(b, x, 0, 1 << 20, 0);
  mb_workload *w = mb_builder_finish(b, NULL);
  assert_non_null(w);
  mb_time_ps benefit;
  mb_standalone_benefits(w, &hw, &benefit);
  assert_int_equal(benefit, 0);
  mb_workload_free(w);
}

static void test_memory_bound_gain_is_exact(void **state) {
  (void)state;
  mb_hardware hw = simple_hw();
  hw.op_overhead_s = 0;
  const int64_t bytes = 123456;
  mb_workload_builder *b = mb_builder_new("mb", "test");
  mb_builder_add_op(b, "copy", "copy", 0);
  int32_t x = mb_builder_add_buffer(b, "x", bytes, 0, 0, false);
  mb_builder_add_use(b, x, 0, bytes, 0);
  mb_workload *w = mb_builder_finish(b, NULL);
  mb_time_ps benefit;
  mb_standalone_benefits(w, &hw, &benefit);
  double expect = (double)bytes * (1.0 / hw.slow_bandwidth - 1.0 / hw.fast_bandwidth) * 1e12;
  assert_true(llabs(benefit - llround(expect)) <= 1);
  mb_workload_free(w);
}

static void test_opless_workload(void **state) {
  (void)state;
  mb_hardware hw = simple_hw();
  mb_workload_builder *b = mb_builder_new("csv", "test");
  mb_builder_set_schedule(b, 10, 1000);
  mb_builder_add_buffer(b, "a", 8, 0, 4, false);
  mb_builder_add_buffer(b, "b", 8, 2, 9, false);
  mb_builder_set_benefit(b, 0, 100);
  mb_builder_set_benefit(b, 1, 250);
  mb_error err;
  mb_workload *w = mb_builder_finish(b, &err);
  assert_non_null(w);
  assert_int_equal(mb_slow_time(w, &hw), 1000);
  bool fast[2] = {true, false};
  assert_int_equal(mb_program_time(w, &hw, fast), 900);
  mb_cost_state s;
  assert_true(mb_cost_state_init(&s, w, &hw));
  assert_int_equal(mb_cost_delta(&s, 1, true), -250);
  assert_int_equal(mb_cost_move(&s, 1, true), -250);
  assert_int_equal(s.total, 750);
  mb_cost_state_free(&s);
  mb_workload_free(w);
}

/* A random workload with mixed compute- and memory-bound ops. */
static mb_workload *random_workload(mb_rng *rng, int n_ops, int n_buffers) {
  mb_workload_builder *b = mb_builder_new("random", "test");
  for (int o = 0; o < n_ops; o++) {
    char name[32];
    snprintf(name, sizeof name, "op%d", o);
    double flops = mb_rng_uniform(rng) < 0.3 ? 1e3 * (double)mb_rng_range(rng, 1, 1000000) : 0;
    mb_builder_add_op(b, name, "op", flops);
  }
  for (int i = 0; i < n_buffers; i++) {
    char name[32];
    snprintf(name, sizeof name, "b%d", i);
    int32_t start = (int32_t)mb_rng_range(rng, 0, n_ops - 1);
    int32_t end = (int32_t)mb_rng_range(rng, start, n_ops - 1);
    int64_t size = mb_rng_range(rng, 1, 1 << 20);
    int32_t id = mb_builder_add_buffer(b, name, size, start, end, false);
    mb_builder_add_use(b, id, start, 0, size);
    int extra = (int)mb_rng_range(rng, 0, 3);
    for (int k = 0; k < extra; k++)
      mb_builder_add_use(b, id, (int32_t)mb_rng_range(rng, start, end), size, 0);
  }
  mb_error err;
  mb_workload *w = mb_builder_finish(b, &err);
  assert_non_null(w);
  return w;
}

/* The model refuses what it cannot time: a sum past 2^62 ps, a non-finite op time, a program
 * that takes no time; a workload within range passes on the same hardware. */
static void test_check_range(void **state) {
  (void)state;
  mb_hardware hw = simple_hw();
  mb_workload *w = two_op_workload();
  mb_error err;
  assert_true(mb_cost_check_range(w, &hw, &err));

  mb_hardware slow = hw; /* 1e-300 B/s: 1000 B take 1e303 s */
  slow.slow_bandwidth = 1e-300;
  assert_false(mb_cost_check_range(w, &slow, &err));
  assert_non_null(strstr(err.message, "workload 'two_ops' on hardware 'simple': op 'compute'"));
  assert_non_null(strstr(err.message, "2^62 ps"));
  mb_hardware fast_slower = hw; /* a fast memory slower than the slow one bounds the time too */
  fast_slower.fast_bandwidth = 1e-300;
  assert_false(mb_cost_check_range(w, &fast_slower, &err));
  mb_hardware overhead = hw; /* 1e6 s per op: 2e6 s in all, within 53 days; 3e6 s per op not */
  overhead.op_overhead_s = 1e6;
  assert_true(mb_cost_check_range(w, &overhead, &err));
  overhead.op_overhead_s = 3e6;
  assert_false(mb_cost_check_range(w, &overhead, &err));
  assert_non_null(
      strstr(err.message, "op 'memory' (index 1 of 2 ops)")); /* the sum passes it at op 1 */
  mb_workload_free(w);

  mb_workload_builder *b = mb_builder_new("huge", "test"); /* 1e30 FLOPs at 1 GFLOP/s */
  mb_builder_add_op(b, "big", "dot", 1e30);
  int32_t a = mb_builder_add_buffer(b, "a", 8, 0, 0, false);
  mb_builder_add_use(b, a, 0, 8, 0);
  w = mb_builder_finish(b, &err);
  assert_non_null(w);
  assert_false(mb_cost_check_range(w, &hw, &err));
  assert_non_null(strstr(err.message, "op 'big' (index 0 of 1 ops)"));
  mb_workload_free(w);

  mb_hardware instant = hw; /* no flops, no bytes, no overhead: T_slow = 0 */
  instant.op_overhead_s = 0;
  b = mb_builder_new("empty", "test");
  mb_builder_add_op(b, "nop", "add", 0);
  a = mb_builder_add_buffer(b, "a", 8, 0, 0, false);
  mb_builder_add_use(b, a, 0, 0, 0);
  w = mb_builder_finish(b, &err);
  assert_non_null(w);
  assert_false(mb_cost_check_range(w, &instant, &err));
  assert_non_null(strstr(err.message, "0 ps"));
  assert_true(mb_cost_check_range(w, &hw, &err)); /* the overhead alone is time enough */
  mb_workload_free(w);
  /* op-less: the benefits of the buffers that may be fast must fit in the all-slow time; a
   * pinned buffer's never counts */
  b = mb_builder_new("opless", "test");
  mb_builder_set_schedule(b, 4, 1000);
  int32_t ids[3];
  ids[0] = mb_builder_add_buffer(b, "a", 8, 0, 1, false);
  ids[1] = mb_builder_add_buffer(b, "b", 8, 1, 3, false);
  ids[2] = mb_builder_add_buffer(b, "p", 8, 0, 3, true);
  mb_builder_set_benefit(b, ids[0], 600);
  mb_builder_set_benefit(b, ids[1], 400);
  mb_builder_set_benefit(b, ids[2], 5000);
  w = mb_builder_finish(b, &err);
  assert_non_null(w);
  assert_true(mb_cost_check_range(w, &hw, &err)); /* 600 + 400 = 1000: all fast takes 0 ps */
  w->buffers[1].benefit_ps = 401;                 /* all fast would take -1 ps */
  assert_false(mb_cost_check_range(w, &hw, &err));
  assert_non_null(strstr(err.message, "workload 'opless': buffer 'b' (index 1 of 3)"));
  assert_non_null(strstr(err.message, "slow_time_ps 1000"));
  assert_non_null(strstr(err.message, "reach 1001 ps with its 401 ps"));
  w->buffers[1].benefit_ps = INT64_MAX; /* no overflow in the sum */
  assert_false(mb_cost_check_range(w, &hw, &err));
  w->buffers[1].benefit_ps = 0; /* a buffer that saves nothing is valid */
  assert_true(mb_cost_check_range(w, &hw, &err));
  w->buffers[1].benefit_ps = -1;
  assert_false(mb_cost_check_range(w, &hw, &err));
  w->buffers[1].benefit_ps = 400;
  /* the all-slow time itself: 1 ps to 2^62 ps */
  w->slow_time_ps = 0;
  assert_false(mb_cost_check_range(w, &hw, &err));
  assert_non_null(strstr(err.message, "slow_time_ps 0 is outside the cost model's range"));
  w->slow_time_ps = MB_COST_MAX_PS;
  assert_true(mb_cost_check_range(w, &hw, &err));
  w->slow_time_ps = MB_COST_MAX_PS + 1;
  assert_false(mb_cost_check_range(w, &hw, &err));
  mb_workload_free(w);
}

static void test_incremental_equals_full(void **state) {
  (void)state;
  mb_hardware hw = simple_hw();
  mb_rng rng;
  mb_rng_seed(&rng, 42);
  for (int trial = 0; trial < 50; trial++) {
    mb_workload *w =
        random_workload(&rng, 1 + (int)mb_rng_below(&rng, 40), 1 + (int)mb_rng_below(&rng, 60));
    mb_cost_state s;
    assert_true(mb_cost_state_init(&s, w, &hw));
    assert_int_equal(s.total, mb_slow_time(w, &hw));
    bool *fast = calloc((size_t)w->n_buffers, sizeof *fast);
    for (int move = 0; move < 200; move++) {
      int32_t b = (int32_t)mb_rng_below(&rng, (uint64_t)w->n_buffers);
      bool to = !s.in_fast[b];
      mb_time_ps predicted = mb_cost_delta(&s, b, to);
      mb_time_ps before = s.total;
      mb_time_ps applied = mb_cost_move(&s, b, to);
      fast[b] = to;
      assert_int_equal(predicted, applied);
      assert_int_equal(s.total, before + applied);
      /* exact, not approximately: integer picoseconds per op */
      assert_int_equal(s.total, mb_program_time(w, &hw, fast));
    }
    free(fast);
    mb_cost_state_free(&s);
    mb_workload_free(w);
  }
}

static void test_state_copy(void **state) {
  (void)state;
  mb_hardware hw = simple_hw();
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  mb_workload *w = random_workload(&rng, 20, 30);
  mb_cost_state a, b;
  assert_true(mb_cost_state_init(&a, w, &hw));
  assert_true(mb_cost_state_init(&b, w, &hw));
  for (int32_t i = 0; i < w->n_buffers; i += 2) mb_cost_move(&a, i, true);
  mb_cost_state_copy(&b, &a);
  assert_int_equal(a.total, b.total);
  assert_memory_equal(a.in_fast, b.in_fast, (size_t)w->n_buffers);
  assert_int_equal(mb_cost_move(&a, 1, true), mb_cost_move(&b, 1, true));
  mb_cost_state_free(&a);
  mb_cost_state_free(&b);
  mb_workload_free(w);
}

/* The saving of a set is at most the sum of standalone savings (sub-additivity: the saving
 * on one op, min(x, max(0, m - c)), is concave in the bytes x moved). The LP bound relies on it. */
static void test_savings_subadditive(void **state) {
  (void)state;
  mb_hardware hw = simple_hw();
  mb_rng rng;
  mb_rng_seed(&rng, 99);
  for (int trial = 0; trial < 30; trial++) {
    mb_workload *w = random_workload(&rng, 15, 25);
    mb_time_ps *benefit = malloc((size_t)w->n_buffers * sizeof *benefit);
    mb_standalone_benefits(w, &hw, benefit);
    bool *fast = calloc((size_t)w->n_buffers, sizeof *fast);
    mb_time_ps sum = 0;
    for (int32_t i = 0; i < w->n_buffers; i++)
      if (mb_rng_uniform(&rng) < 0.5) {
        fast[i] = true;
        sum += benefit[i];
      }
    mb_time_ps saving = mb_slow_time(w, &hw) - mb_program_time(w, &hw, fast);
    /* rounding to ps per op may add at most one ps per op */
    assert_true(saving <= sum + w->n_ops);
    free(fast);
    free(benefit);
    mb_workload_free(w);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_computed_times),
      cmocka_unit_test(test_compute_bound_op_gains_nothing),
      cmocka_unit_test(test_memory_bound_gain_is_exact),
      cmocka_unit_test(test_opless_workload),
      cmocka_unit_test(test_check_range),
      cmocka_unit_test(test_incremental_equals_full),
      cmocka_unit_test(test_state_copy),
      cmocka_unit_test(test_savings_subadditive),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
