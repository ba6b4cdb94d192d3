/* Random workloads (suite/random_workload.h): deterministic for a seed, valid, shaped as
 * documented (size range and quantum, range lengths, pinned share, compute-bound ops), and
 * bad options rejected with a message naming the option. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random_workload.h"
#include "support.h"
#include "validator.h"
#include "workload_io.h"

static void test_deterministic(void **state) {
  (void)state;
  mb_rng a, b;
  mb_rng_seed(&a, 3);
  mb_rng_seed(&b, 3);
  mb_error err;
  mb_workload *x = mb_random_workload(&a, 500, NULL, "r", &err);
  mb_workload *y = mb_random_workload(&b, 500, NULL, "r", &err);
  assert_non_null(x);
  assert_non_null(y);
  char why[256];
  if (!mb_workload_equal(x, y, why, sizeof why)) fail_msg("same seed, different: %s", why);
  mb_workload *z = mb_random_workload(&a, 500, NULL, "r", &err); /* the stream moved on */
  assert_false(mb_workload_equal(x, z, NULL, 0));
  mb_workload_free(x);
  mb_workload_free(y);
  mb_workload_free(z);
}

static void test_shape(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 4);
  mb_random_options o;
  mb_random_options_default(&o);
  mb_error err;
  const int32_t n = 20000;
  mb_workload *w = mb_random_workload(&rng, n, &o, NULL, &err);
  assert_non_null(w);
  assert_int_equal(w->n_buffers, n);
  assert_int_equal(w->n_ops, n / 2);
  assert_string_equal(w->name, "random-20000");
  int32_t pinned = 0, short_r = 0, long_r = 0, small = 0, large = 0;
  for (int32_t b = 0; b < n; b++) {
    const mb_buffer *buf = &w->buffers[b];
    assert_true(buf->size >= o.min_size && buf->size <= o.max_size + o.size_quantum);
    assert_int_equal(buf->size % o.size_quantum, 0);
    assert_true(buf->end - buf->start < o.long_max_ops);
    assert_true(buf->n_uses >= 1 && buf->n_uses <= o.extra_reads + 2);
    pinned += buf->pinned;
    short_r += buf->end - buf->start <= 3;
    long_r += buf->end - buf->start >= o.medium_max_ops - 1;
    small += buf->size < 4096;   /* log-uniform: 256 B .. 4 KiB is 4 of the 14 octaves */
    large += buf->size > 262144; /* and so is 256 KiB .. 4 MiB */
  }
  assert_true(fabs((double)pinned / n - o.pinned_fraction) < 0.01);
  assert_true(fabs((double)short_r / n - o.short_fraction) < 0.02);
  assert_true(fabs((double)long_r / n - o.long_fraction) < 0.01);
  assert_true(fabs((double)small / n - 4.0 / 14) < 0.02);
  assert_true(fabs((double)large / n - 4.0 / 14) < 0.02);
  /* Ops above the ridge point (compute-bound on the target hardware): about 20%. */
  int32_t compute_bound = 0, with_bytes = 0;
  for (int32_t op = 0; op < w->n_ops; op++) {
    int64_t bytes = 0;
    for (int32_t k = w->op_use_start[op]; k < w->op_use_start[op + 1]; k++) {
      const mb_use *u = &w->uses[w->op_uses[k]];
      bytes += u->bytes_read + u->bytes_written;
    }
    if (bytes == 0) continue;
    with_bytes++;
    compute_bound += w->ops[op].flops / (double)bytes > o.ridge_flops_per_byte;
  }
  assert_true(fabs((double)compute_bound / with_bytes - o.compute_bound_fraction) < 0.02);
  mb_workload_free(w);
}

static void test_bad_options(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 5);
  mb_random_options o;
  mb_error err;
  assert_null(mb_random_workload(&rng, 0, NULL, NULL, &err));
  assert_non_null(strstr(err.message, "n_buffers"));
  mb_random_options_default(&o);
  o.min_size = 0;
  assert_null(mb_random_workload(&rng, 10, &o, NULL, &err));
  assert_non_null(strstr(err.message, "size range"));
  mb_random_options_default(&o);
  o.short_fraction = 0.99;
  assert_null(mb_random_workload(&rng, 10, &o, NULL, &err));
  assert_non_null(strstr(err.message, "short_fraction"));
  mb_random_options_default(&o);
  o.long_max_ops = 10;
  assert_null(mb_random_workload(&rng, 10, &o, NULL, &err));
  assert_non_null(strstr(err.message, "long_max_ops"));
  mb_random_options_default(&o);
  o.ridge_flops_per_byte = 0;
  assert_null(mb_random_workload(&rng, 10, &o, NULL, &err));
  assert_non_null(strstr(err.message, "ridge"));
  /* Tiny programs: one buffer, explicit two ops. */
  mb_random_options_default(&o);
  o.n_ops = 2;
  mb_workload *w = mb_random_workload(&rng, 1, &o, NULL, &err);
  assert_non_null(w);
  assert_int_equal(w->n_ops, 2);
  mb_workload_free(w);
}

/* Packing instances: deterministic, op-less with benefit = size, sizes in quanta, and the
 * packing they were cut from is valid in exactly `height` bytes (checked by the independent
 * validator), filling every time step completely. */
static void test_packing(void **state) {
  (void)state;
  mb_packing_options o = {.height = 64 * 1024, .quantum = 1024, .length = 97};
  const int32_t n = 150;
  int64_t off[150], off2[150];
  mb_rng a, b;
  mb_rng_seed(&a, 6);
  mb_rng_seed(&b, 6);
  mb_error err;
  mb_workload *w = mb_random_packing_workload(&a, n, &o, NULL, off, &err);
  mb_workload *v = mb_random_packing_workload(&b, n, &o, "p", off2, &err);
  assert_non_null(w);
  assert_non_null(v);
  assert_string_equal(w->name, "packing-150");
  assert_memory_equal(off, off2, sizeof off);
  assert_int_equal(w->n_buffers, n);
  assert_int_equal(w->n_ops, 0);
  assert_int_equal(w->schedule_length, o.length);
  int64_t total = 0, area = 0, live[97] = {0};
  for (int32_t i = 0; i < n; i++) {
    const mb_buffer *buf = &w->buffers[i];
    assert_true(buf->has_benefit);
    assert_int_equal(buf->benefit_ps, buf->size);
    assert_int_equal(buf->size % o.quantum, 0);
    assert_int_equal(buf->size, v->buffers[i].size);
    total += buf->size;
    area += buf->size * (buf->end - buf->start + 1);
    for (int32_t t = buf->start; t <= buf->end; t++) live[t] += buf->size;
  }
  assert_int_equal(w->slow_time_ps, 2 * total);
  assert_int_equal(area, o.height * o.length);
  for (int32_t t = 0; t < o.length; t++) assert_int_equal(live[t], o.height);

  mb_hardware hw;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &hw, &err));
  hw = mb_hardware_with_capacity(&hw, o.height);
  mb_assignment *as = mb_assignment_new(n);
  assert_non_null(as);
  for (int32_t i = 0; i < n; i++) as->offset[i] = off[i];
  if (!mb_validate(w, &hw, as, &err)) fail_msg("the generated packing is invalid: %s", err.message);
  as->offset[0] = off[0] == 0 ? o.quantum : off[0] - o.quantum; /* moved: now it must collide */
  assert_false(mb_validate(w, &hw, as, &err));
  mb_assignment_free(as);

  /* Rectangles that cannot be cut further, and bad options. */
  mb_packing_options tiny = {.height = 2048, .quantum = 1024, .length = 2};
  mb_workload *full = mb_random_packing_workload(&a, 4, &tiny, NULL, NULL, &err);
  assert_non_null(full);
  assert_null(mb_random_packing_workload(&a, 5, &tiny, NULL, NULL, &err));
  assert_non_null(strstr(err.message, "cannot be cut into 5 buffers"));
  tiny.height = 1500;
  assert_null(mb_random_packing_workload(&a, 2, &tiny, NULL, NULL, &err));
  assert_non_null(strstr(err.message, "multiple of quantum"));
  assert_null(mb_random_packing_workload(&a, 0, NULL, NULL, NULL, &err));
  assert_non_null(strstr(err.message, "n_buffers"));
  mb_workload_free(full);
  mb_workload_free(w);
  mb_workload_free(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_shape),
      cmocka_unit_test(test_bad_options),
      cmocka_unit_test(test_packing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
