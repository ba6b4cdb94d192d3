/* Random workloads (suite/random_workload.h): deterministic for a seed, valid, shaped as
 * documented (size range and quantum, range lengths, pinned share, compute-bound ops), and
 * bad options rejected with a message naming the option; each knob at its ends, buffer by
 * buffer. */
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

/* Bytes op `op` of w moves: its uses' reads and writes. */
static int64_t op_bytes(const mb_workload *w, int32_t op) {
  int64_t bytes = 0;
  for (int32_t k = w->op_use_start[op]; k < w->op_use_start[op + 1]; k++) {
    const mb_use *u = &w->uses[w->op_uses[k]];
    bytes += u->bytes_read + u->bytes_written;
  }
  return bytes;
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
    int64_t bytes = op_bytes(w, op);
    if (bytes == 0) continue;
    with_bytes++;
    compute_bound += w->ops[op].flops / (double)bytes > o.ridge_flops_per_byte;
  }
  assert_true(fabs((double)compute_bound / with_bytes - o.compute_bound_fraction) < 0.02);
  mb_workload_free(w);
}

/* A random workload of n buffers with options o changed by the caller (the test fails if it is
 * refused). */
static mb_workload *workload_with(const mb_random_options *o, int32_t n, uint64_t seed) {
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  mb_error err = {{0}};
  mb_workload *w = mb_random_workload(&rng, n, o, NULL, &err);
  if (!w) fail_msg("refused: %s", err.message);
  return w;
}

/* Each knob at its ends, checked buffer by buffer: sizes rounded up to the quantum (one byte
 * over a quantum takes two), each class of live range over exactly its documented lengths
 * (short 1..4 ops, medium 5..medium_max_ops, long medium_max_ops..long_max_ops; every length
 * drawn), clipped to the schedule; no extra reads; all or no ops compute-bound, all or no
 * buffers pinned. Fractions past 1 are refused. */
static void test_knobs_at_their_ends(void **state) {
  (void)state;
  enum { N = 400 };
  mb_random_options o;
  /* sizes: [s, s] in quanta of q */
  const int64_t sizes[][3] = {{256, 256, 256}, {257, 256, 512}, {1, 1, 1}, {1000, 1, 1000}};
  for (int c = 0; c < 4; c++) {
    mb_random_options_default(&o);
    o.min_size = o.max_size = sizes[c][0];
    o.size_quantum = sizes[c][1];
    mb_workload *w = workload_with(&o, 50, 1);
    for (int32_t b = 0; b < w->n_buffers; b++)
      if (w->buffers[b].size != sizes[c][2])
        fail_msg("size %lld in quanta of %lld: buffer %d has %lld bytes, expected %lld",
                 (long long)sizes[c][0], (long long)sizes[c][1], b, (long long)w->buffers[b].size,
                 (long long)sizes[c][2]);
    mb_workload_free(w);
  }
  /* live ranges: short, long, medium alone (end - start = ops - 1) */
  const struct {
    double short_fraction, long_fraction;
    int32_t lo, hi; /* ops */
  } classes[] = {{1, 0, 1, 4}, {0, 1, 6, 9}, {0, 0, 5, 6}};
  for (int c = 0; c < 3; c++) {
    mb_random_options_default(&o);
    o.n_ops = 1000;
    o.short_fraction = classes[c].short_fraction;
    o.long_fraction = classes[c].long_fraction;
    o.medium_max_ops = 6;
    o.long_max_ops = 9;
    o.extra_reads = 0;
    mb_workload *w = workload_with(&o, N, 2);
    int32_t seen[10] = {0};
    for (int32_t b = 0; b < N; b++) {
      const mb_buffer *buf = &w->buffers[b];
      int32_t ops = buf->end - buf->start + 1;
      if (ops < classes[c].lo || ops > classes[c].hi)
        fail_msg("class %d: buffer %d lives %d ops, not %d..%d", c, b, ops, classes[c].lo,
                 classes[c].hi);
      seen[ops]++;
      assert_true(buf->n_uses <= 2); /* no extra reads */
    }
    for (int32_t ops = classes[c].lo; ops <= classes[c].hi; ops++)
      if (seen[ops] == 0) fail_msg("class %d: no buffer lives %d ops", c, ops);
    mb_workload_free(w);
  }
  /* long ranges in a 3-op schedule: clipped to all of it */
  mb_random_options_default(&o);
  o.n_ops = 3;
  o.short_fraction = 0;
  o.long_fraction = 1;
  mb_workload *w = workload_with(&o, 20, 3);
  for (int32_t b = 0; b < 20; b++) assert_true(w->buffers[b].start == 0 && w->buffers[b].end == 2);
  mb_workload_free(w);
  /* ops all compute-bound or none; buffers all pinned or none */
  for (int all = 0; all <= 1; all++) {
    mb_random_options_default(&o);
    o.compute_bound_fraction = all;
    o.pinned_fraction = all;
    w = workload_with(&o, 200, 4);
    for (int32_t b = 0; b < w->n_buffers; b++) assert_int_equal(w->buffers[b].pinned, all);
    for (int32_t op = 0; op < w->n_ops; op++) {
      int64_t bytes = op_bytes(w, op);
      /* kinds by what an op does: a dot above the ridge, a fusion below, a copy of nothing */
      assert_string_equal(w->ops[op].kind, bytes == 0 ? "copy" : all ? "dot" : "fusion");
      if (bytes > 0)
        assert_int_equal(w->ops[op].flops / (double)bytes > o.ridge_flops_per_byte, all);
    }
    mb_workload_free(w);
  }
  /* fractions past 1 (and short + long past 1) refused, naming the knob */
  const char *knob[] = {"compute_bound_fraction", "pinned_fraction", "short_fraction",
                        "short_fraction"};
  for (int c = 0; c < 4; c++) {
    mb_random_options_default(&o);
    if (c == 0) o.compute_bound_fraction = 1.5;
    if (c == 1) o.pinned_fraction = 1.5;
    if (c == 2) o.long_fraction = 1.5, o.short_fraction = 0;
    if (c == 3) o.short_fraction = 0.5, o.long_fraction = 0.51;
    mb_rng rng;
    mb_rng_seed(&rng, 5);
    mb_error err = {{0}};
    assert_null(mb_random_workload(&rng, 10, &o, NULL, &err));
    if (!strstr(err.message, knob[c]))
      fail_msg("case %d: '%s' does not name %s", c, err.message, knob[c]);
  }
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

/* A packing instance is op-less with benefit = size, its sizes are in quanta, it fills the
 * height x length rectangle exactly (every time step carries `height` live bytes), and the
 * independent validator accepts its offsets in exactly `height` bytes, aligned to quanta. */
static void assert_perfect_packing(const mb_workload *w, const int64_t *off,
                                   const mb_packing_options *o) {
  assert_int_equal(w->n_ops, 0);
  assert_int_equal(w->schedule_length, o->length);
  int64_t *delta = calloc((size_t)o->length + 1, sizeof *delta); /* live bytes, differenced */
  assert_non_null(delta);
  int64_t total = 0, area = 0;
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *buf = &w->buffers[i];
    assert_true(buf->has_benefit);
    assert_int_equal(buf->benefit_ps, buf->size);
    assert_int_equal(buf->size % o->quantum, 0);
    assert_true(buf->start >= 0 && buf->end < o->length);
    total += buf->size;
    area += buf->size * (buf->end - buf->start + 1);
    delta[buf->start] += buf->size;
    delta[buf->end + 1] -= buf->size;
  }
  assert_int_equal(w->slow_time_ps, 2 * total);
  assert_int_equal(area, o->height * o->length);
  int64_t live = 0;
  for (int32_t t = 0; t < o->length; t++) {
    live += delta[t];
    if (live != o->height) fail_msg("step %d: %lld live bytes, not the height", t, (long long)live);
  }
  free(delta);

  mb_error err;
  mb_hardware hw;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &hw, &err));
  hw = mb_hardware_with_capacity(&hw, o->height);
  hw.alignment = o->quantum; /* offsets are in quanta (some cases use 1-byte ones) */
  mb_assignment *as = mb_assignment_new(w->n_buffers);
  assert_non_null(as);
  for (int32_t i = 0; i < w->n_buffers; i++) as->offset[i] = off[i];
  if (!mb_validate(w, &hw, as, &err)) fail_msg("the generated packing is invalid: %s", err.message);
  mb_assignment_free(as);
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
  for (int32_t i = 0; i < n; i++) assert_int_equal(w->buffers[i].size, v->buffers[i].size);
  assert_perfect_packing(w, off, &o);

  mb_hardware hw;
  assert_true(mb_hardware_find("tpu-v4i", NULL, &hw, &err));
  hw = mb_hardware_with_capacity(&hw, o.height);
  mb_assignment *as = mb_assignment_new(n);
  assert_non_null(as);
  for (int32_t i = 0; i < n; i++) as->offset[i] = off[i];
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

/* The documented cut rule, written as plainly as possible: before each cut, scan for the first
 * rectangle of largest area (in cells of one quantum by one step) that can still be cut. The
 * generator keeps the cuttable rectangles in a heap instead; the instances must be the same
 * draw for draw, ties and uncuttable pieces included. Fills r[0..n) in cut order; false when
 * nothing is left to cut. */
typedef struct ref_rect {
  int64_t t0, t1, a0, a1;
} ref_rect;

static int64_t ref_cut_point(mb_rng *rng, int64_t extent) {
  int64_t margin = extent / 10 > 1 ? extent / 10 : 1;
  return mb_rng_range(rng, margin, extent - margin > margin ? extent - margin : margin);
}

static bool reference_cuts(mb_rng *rng, int32_t n, const mb_packing_options *o, ref_rect *r) {
  const int64_t q = o->quantum;
  r[0] = (ref_rect){0, o->length, 0, o->height};
  for (int32_t k = 1; k < n; k++) {
    int32_t best = -1;
    int64_t best_area = 0;
    for (int32_t i = 0; i < k; i++) {
      bool by_time = r[i].t1 - r[i].t0 >= 2, by_address = r[i].a1 - r[i].a0 >= 2 * q;
      int64_t area = (r[i].t1 - r[i].t0) * ((r[i].a1 - r[i].a0) / q);
      if ((by_time || by_address) && area > best_area) best = i, best_area = area;
    }
    if (best < 0) return false;
    ref_rect *c = &r[best];
    bool by_time = c->t1 - c->t0 >= 2;
    if (by_time && c->a1 - c->a0 >= 2 * q) by_time = mb_rng_below(rng, 2) == 0;
    r[k] = *c;
    if (by_time)
      c->t1 = r[k].t0 = c->t0 + ref_cut_point(rng, c->t1 - c->t0);
    else
      c->a1 = r[k].a0 = c->a0 + q * ref_cut_point(rng, (c->a1 - c->a0) / q);
  }
  return true;
}

static void test_packing_matches_scan(void **state) {
  (void)state;
  /* Many equal areas (a single row, a single step, 1-byte quanta), rectangles cut down to
   * single cells (the rectangle full or nearly), and the default proportions. */
  const struct {
    mb_packing_options o;
    int32_t n;
  } cases[] = {
      {{.height = 16384, .quantum = 1024, .length = 8}, 100},
      {{.height = 16384, .quantum = 1024, .length = 8}, 128},
      {{.height = 1024, .quantum = 1024, .length = 500}, 400},
      {{.height = 1000, .quantum = 1, .length = 1}, 700},
      {{.height = 1000, .quantum = 1, .length = 3}, 2000},
      {{.height = 64 * 1024, .quantum = 1024, .length = 40}, 2500},
      {{.height = 1 << 20, .quantum = 1024, .length = 1 << 20}, 1500},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const mb_packing_options *o = &cases[k].o;
    const int32_t n = cases[k].n;
    ref_rect *r = malloc(sizeof *r * (size_t)n);
    int32_t *order = malloc(sizeof *order * (size_t)n);
    int64_t *off = malloc(sizeof *off * (size_t)n);
    assert_true(r && order && off);
    mb_rng a, b;
    mb_rng_seed(&a, 100 + k);
    mb_rng_seed(&b, 100 + k);
    mb_error err;
    mb_workload *w = mb_random_packing_workload(&a, n, o, NULL, off, &err);
    if (!w) fail_msg("case %zu: %s", k, err.message);
    assert_true(reference_cuts(&b, n, o, r));
    for (int32_t i = 0; i < n; i++) order[i] = i; /* the generator's Fisher-Yates */
    for (int32_t i = n - 1; i > 0; i--) {
      int32_t j = (int32_t)mb_rng_below(&b, (uint64_t)i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (int32_t i = 0; i < n; i++) {
      const ref_rect *c = &r[order[i]];
      const mb_buffer *buf = &w->buffers[i];
      if (off[i] != c->a0 || buf->size != c->a1 - c->a0 || buf->start != c->t0 ||
          buf->end != c->t1 - 1)
        fail_msg(
            "case %zu, buffer %d: [%d, %d] x %lld B at %lld, the scan cut [%lld, %lld) x "
            "[%lld, %lld)",
            k, i, buf->start, buf->end, (long long)buf->size, (long long)off[i], (long long)c->t0,
            (long long)c->t1, (long long)c->a0, (long long)c->a1);
    }
    assert_int_equal(mb_rng_next(&a), mb_rng_next(&b)); /* and as many draws */
    assert_perfect_packing(w, off, o);
    mb_workload_free(w);
    free(r);
    free(order);
    free(off);
  }
}

/* A large instance, nearly saturated (50,000 buffers in 64 x 1,000 cells, so most rectangles
 * end up uncuttable): still a perfect packing, and quick to make (the heap's O(N log N); the
 * former scan, O(N^2), took seconds here). */
static void test_packing_large(void **state) {
  (void)state;
  mb_packing_options o = {.height = 64 * 1024, .quantum = 1024, .length = 1000};
  const int32_t n = 50000;
  int64_t *off = malloc(sizeof *off * (size_t)n);
  assert_non_null(off);
  mb_rng rng;
  mb_rng_seed(&rng, 7);
  mb_error err;
  mb_workload *w = mb_random_packing_workload(&rng, n, &o, NULL, off, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(w->n_buffers, n);
  assert_perfect_packing(w, off, &o);
  mb_workload_free(w);
  /* 64,000 cells hold 64,000 buffers of one cell at most */
  assert_null(mb_random_packing_workload(&rng, 64001, &o, NULL, NULL, &err));
  assert_non_null(strstr(err.message, "cannot be cut into 64001 buffers"));
  /* areas in cells must fit in int64: (2^62 / 1) x 4 does not */
  mb_packing_options huge = {.height = INT64_C(1) << 62, .quantum = 1, .length = 4};
  assert_null(mb_random_packing_workload(&rng, 2, &huge, NULL, NULL, &err));
  assert_non_null(strstr(err.message, "overflows"));
  free(off);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deterministic),        cmocka_unit_test(test_shape),
      cmocka_unit_test(test_bad_options),          cmocka_unit_test(test_packing),
      cmocka_unit_test(test_packing_matches_scan), cmocka_unit_test(test_packing_large),
      cmocka_unit_test(test_knobs_at_their_ends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
