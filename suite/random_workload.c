/* Random workloads (see random_workload.h for the distribution and why). */
#include "random_workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "heap.h"

void mb_random_options_default(mb_random_options *opt) {
  opt->n_ops = 0;
  opt->min_size = 256;
  opt->max_size = 4 << 20;
  opt->size_quantum = 256;
  opt->short_fraction = 0.70;
  opt->long_fraction = 0.05;
  opt->medium_max_ops = 64;
  opt->long_max_ops = 1024;
  opt->extra_reads = 2;
  opt->compute_bound_fraction = 0.20;
  opt->ridge_flops_per_byte = 225.0; /* 138 TFLOP/s / 614 GB/s, the TPU-v4-like profile */
  opt->pinned_fraction = 0.05;
}

static double log_uniform(mb_rng *rng, double lo, double hi) {
  return exp(log(lo) + (log(hi) - log(lo)) * mb_rng_uniform(rng));
}

typedef struct draft_use {
  int32_t buffer, op;
  int64_t read, written;
} draft_use;

static bool check_options(int32_t n_buffers, const mb_random_options *o, mb_error *err) {
  if (n_buffers < 1) return mb_fail(err, "random workload: n_buffers %d < 1", n_buffers);
  if (o->n_ops < 0) return mb_fail(err, "random workload: n_ops %d < 0", o->n_ops);
  if (o->min_size < 1 || o->max_size < o->min_size)
    return mb_fail(err, "random workload: size range [%lld, %lld] is empty or not positive",
                   (long long)o->min_size, (long long)o->max_size);
  if (o->size_quantum < 1)
    return mb_fail(err, "random workload: size_quantum %lld < 1", (long long)o->size_quantum);
  if (!(o->short_fraction >= 0 && o->long_fraction >= 0 &&
        o->short_fraction + o->long_fraction <= 1))
    return mb_fail(err, "random workload: short_fraction %g + long_fraction %g not in [0, 1]",
                   o->short_fraction, o->long_fraction);
  if (o->medium_max_ops < 5 || o->long_max_ops < o->medium_max_ops)
    return mb_fail(err, "random workload: need 5 <= medium_max_ops %d <= long_max_ops %d",
                   o->medium_max_ops, o->long_max_ops);
  if (o->extra_reads < 0)
    return mb_fail(err, "random workload: extra_reads %d < 0", o->extra_reads);
  if (!(o->compute_bound_fraction >= 0 && o->compute_bound_fraction <= 1))
    return mb_fail(err, "random workload: compute_bound_fraction %g not in [0, 1]",
                   o->compute_bound_fraction);
  if (!(o->ridge_flops_per_byte > 0))
    return mb_fail(err, "random workload: ridge_flops_per_byte %g <= 0", o->ridge_flops_per_byte);
  if (!(o->pinned_fraction >= 0 && o->pinned_fraction <= 1))
    return mb_fail(err, "random workload: pinned_fraction %g not in [0, 1]", o->pinned_fraction);
  return true;
}

mb_workload *mb_random_workload(mb_rng *rng, int32_t n_buffers, const mb_random_options *opt,
                                const char *name, mb_error *err) {
  mb_random_options def;
  if (!opt) {
    mb_random_options_default(&def);
    opt = &def;
  }
  if (!check_options(n_buffers, opt, err)) return NULL;
  int32_t n_ops = opt->n_ops > 0 ? opt->n_ops : (n_buffers / 2 > 2 ? n_buffers / 2 : 2);
  char wname[MB_NAME_MAX];
  if (name)
    snprintf(wname, sizeof wname, "%s", name);
  else
    snprintf(wname, sizeof wname, "random-%d", n_buffers);

  size_t max_uses = (size_t)n_buffers * (size_t)(opt->extra_reads + 2);
  draft_use *uses = malloc(sizeof *uses * max_uses);
  int64_t *op_bytes = calloc((size_t)n_ops, sizeof *op_bytes);
  int64_t *size = malloc(sizeof *size * (size_t)n_buffers);
  int32_t *start = malloc(sizeof *start * (size_t)n_buffers);
  int32_t *end = malloc(sizeof *end * (size_t)n_buffers);
  bool *pinned = malloc(sizeof *pinned * (size_t)n_buffers);
  mb_workload_builder *b = mb_builder_new(wname, "mb_random_workload (suite/random_workload.c)");
  mb_workload *w = NULL;
  if (!uses || !op_bytes || !size || !start || !end || !pinned || !b) {
    mb_fail(err, "random workload '%s': out of memory for %d buffers", wname, n_buffers);
    goto done;
  }

  size_t n_uses = 0;
  for (int32_t i = 0; i < n_buffers; i++) {
    double bytes = log_uniform(rng, (double)opt->min_size, (double)opt->max_size);
    int64_t q = opt->size_quantum;
    size[i] = ((int64_t)ceil(bytes) + q - 1) / q * q;
    double kind = mb_rng_uniform(rng);
    int64_t len; /* end - start */
    if (kind < opt->short_fraction)
      len = mb_rng_range(rng, 0, 3);
    else if (kind < opt->short_fraction + opt->long_fraction)
      len = mb_rng_range(rng, opt->medium_max_ops - 1, opt->long_max_ops - 1);
    else
      len = mb_rng_range(rng, 4, opt->medium_max_ops - 1);
    if (len > n_ops - 1) len = n_ops - 1;
    start[i] = (int32_t)mb_rng_range(rng, 0, n_ops - 1 - len);
    end[i] = start[i] + (int32_t)len;
    pinned[i] = mb_rng_uniform(rng) < opt->pinned_fraction;
    /* Written where it is defined, read where it dies, a few reads in between (a use per op
     * at most: the builder merges repeats). */
    uses[n_uses++] = (draft_use){i, start[i], 0, size[i]};
    op_bytes[start[i]] += size[i];
    if (end[i] > start[i]) {
      uses[n_uses++] = (draft_use){i, end[i], size[i], 0};
      op_bytes[end[i]] += size[i];
      int32_t extra = (int32_t)mb_rng_range(rng, 0, opt->extra_reads);
      for (int32_t k = 0; k < extra && end[i] - start[i] > 1; k++) {
        int32_t op = (int32_t)mb_rng_range(rng, start[i] + 1, end[i] - 1);
        uses[n_uses++] = (draft_use){i, op, size[i], 0};
        op_bytes[op] += size[i];
      }
    }
  }
  char nm[MB_NAME_MAX];
  for (int32_t o = 0; o < n_ops; o++) {
    bool compute_bound = mb_rng_uniform(rng) < opt->compute_bound_fraction;
    double intensity = opt->ridge_flops_per_byte *
                       (compute_bound ? log_uniform(rng, 2.0, 20.0) : log_uniform(rng, 0.01, 0.5));
    const char *kind = op_bytes[o] == 0 ? "copy" : compute_bound ? "dot" : "fusion";
    snprintf(nm, sizeof nm, "op%d", o);
    if (mb_builder_add_op(b, nm, kind, (double)op_bytes[o] * intensity) < 0) {
      mb_fail(err, "random workload '%s': out of memory adding op %d", wname, o);
      goto done;
    }
  }
  for (int32_t i = 0; i < n_buffers; i++) {
    snprintf(nm, sizeof nm, "b%d", i);
    if (mb_builder_add_buffer(b, nm, size[i], start[i], end[i], pinned[i]) < 0) {
      mb_fail(err, "random workload '%s': out of memory adding buffer %d", wname, i);
      goto done;
    }
  }
  for (size_t u = 0; u < n_uses; u++) {
    if (!mb_builder_add_use(b, uses[u].buffer, uses[u].op, uses[u].read, uses[u].written)) {
      mb_fail(err, "random workload '%s': out of memory adding a use", wname);
      goto done;
    }
  }
  w = mb_builder_finish(b, err);
  b = NULL; /* consumed */
done:
  mb_builder_free(b);
  free(uses);
  free(op_bytes);
  free(size);
  free(start);
  free(end);
  free(pinned);
  return w;
}

void mb_packing_options_default(mb_packing_options *opt) {
  opt->height = 1 << 20;
  opt->quantum = 1024;
  opt->length = 1 << 20;
}

typedef struct rect {
  int64_t t0, t1, a0, a1; /* time [t0, t1), address [a0, a1) */
} rect;

/* A cut point in units of 1..extent-1, uniform in the middle 80% of the extent. */
static int64_t cut_point(mb_rng *rng, int64_t extent) {
  int64_t margin = extent / 10 > 1 ? extent / 10 : 1;
  int64_t lo = margin, hi = extent - margin;
  if (hi < lo) hi = lo;
  return mb_rng_range(rng, lo, hi);
}

/* A rectangle can be cut when it spans two time steps or two quanta of address. */
static bool cuttable(const rect *c, int64_t q) {
  return c->t1 - c->t0 >= 2 || c->a1 - c->a0 >= 2 * q;
}

/* Area in cells of one quantum by one step (the caller checked the whole rectangle's fits). */
static int64_t cells(const rect *c, int64_t q) { return (c->t1 - c->t0) * ((c->a1 - c->a0) / q); }

/* The cuttable rectangles, as a binary max-heap (heap.h) ordered by area descending, then rectangle
 * index ascending. That is a strict total order, so the top is always the rectangle a scan
 * for the first largest one picks (the original O(N^2) generator; the instances stay the
 * same for every seed), at O(log N) a cut. Entries carry their key: comparing them reads the
 * heap array only, not the rectangles scattered over memory (1.8x faster at 10^6 buffers). */
typedef struct cut_key {
  int64_t area;
  int32_t rect;
} cut_key;

static bool key_above(cut_key x, cut_key y) {
  return x.area > y.area || (x.area == y.area && x.rect < y.rect);
}
MB_HEAP_DEFINE(cut_heap, cut_key, key_above);

mb_workload *mb_random_packing_workload(mb_rng *rng, int32_t n_buffers,
                                        const mb_packing_options *opt, const char *name,
                                        int64_t *offsets, mb_error *err) {
  mb_packing_options def;
  if (!opt) {
    mb_packing_options_default(&def);
    opt = &def;
  }
  if (n_buffers < 1) {
    mb_fail(err, "packing workload: n_buffers %d < 1", n_buffers);
    return NULL;
  }
  if (opt->quantum < 1 || opt->height < opt->quantum || opt->height % opt->quantum != 0) {
    mb_fail(err, "packing workload: height %lld is not a positive multiple of quantum %lld",
            (long long)opt->height, (long long)opt->quantum);
    return NULL;
  }
  if (opt->length < 1) {
    mb_fail(err, "packing workload: length %d < 1", opt->length);
    return NULL;
  }
  /* Areas are counted in cells of one quantum by one step: the whole rectangle's must fit. */
  if (opt->height / opt->quantum > INT64_MAX / opt->length) {
    mb_fail(err, "packing workload: (height %lld / quantum %lld) x length %d overflows int64",
            (long long)opt->height, (long long)opt->quantum, opt->length);
    return NULL;
  }
  char wname[MB_NAME_MAX];
  if (name)
    snprintf(wname, sizeof wname, "%s", name);
  else
    snprintf(wname, sizeof wname, "packing-%d", n_buffers);

  rect *r = malloc(sizeof *r * (size_t)n_buffers);
  int32_t *order = malloc(sizeof *order * (size_t)n_buffers);
  cut_key *keys = malloc(sizeof *keys * (size_t)n_buffers);
  mb_workload_builder *b =
      mb_builder_new(wname, "mb_random_packing_workload (suite/random_workload.c)");
  mb_workload *w = NULL;
  if (!r || !order || !keys || !b) {
    mb_fail(err, "packing workload '%s': out of memory for %d buffers", wname, n_buffers);
    goto done;
  }
  const int64_t q = opt->quantum;
  int32_t n_keys = 0; /* keys[0 .. n_keys): the heap, room for every rectangle */
  r[0] = (rect){0, opt->length, 0, opt->height};
  if (cuttable(&r[0], q)) cut_heap_push(keys, &n_keys, (cut_key){cells(&r[0], q), 0});
  /* Each cut splits the largest cuttable rectangle c in two: c keeps the lower part, the new
   * rectangle n takes the upper one. */
  for (int32_t n = 1; n < n_buffers; n++) {
    if (n_keys == 0) {
      mb_fail(
          err,
          "packing workload '%s': %lld x %d cannot be cut into %d buffers of at least %lld bytes",
          wname, (long long)opt->height, opt->length, n_buffers, (long long)q);
      goto done;
    }
    int32_t best = keys[0].rect;
    rect *c = &r[best];
    bool by_time = c->t1 - c->t0 >= 2, by_address = c->a1 - c->a0 >= 2 * q;
    if (by_time && by_address) by_time = mb_rng_below(rng, 2) == 0;
    r[n] = *c;
    if (by_time) {
      int64_t t = c->t0 + cut_point(rng, c->t1 - c->t0);
      c->t1 = t;
      r[n].t0 = t;
    } else {
      int64_t a = c->a0 + q * cut_point(rng, (c->a1 - c->a0) / q);
      c->a1 = a;
      r[n].a0 = a;
    }
    /* c shrank: it moves down from the top, or leaves the heap if it cannot be cut again */
    if (cuttable(c, q))
      cut_heap_replace_top(keys, n_keys, (cut_key){cells(c, q), best});
    else
      cut_heap_pop(keys, &n_keys);
    if (cuttable(&r[n], q)) cut_heap_push(keys, &n_keys, (cut_key){cells(&r[n], q), n});
  }
  for (int32_t i = 0; i < n_buffers; i++) order[i] = i;
  for (int32_t i = n_buffers - 1; i > 0; i--) { /* Fisher-Yates */
    int32_t j = (int32_t)mb_rng_below(rng, (uint64_t)i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  int64_t total = 0;
  char nm[MB_NAME_MAX];
  for (int32_t i = 0; i < n_buffers; i++) {
    const rect *c = &r[order[i]];
    snprintf(nm, sizeof nm, "b%d", i);
    int32_t buf =
        mb_builder_add_buffer(b, nm, c->a1 - c->a0, (int32_t)c->t0, (int32_t)c->t1 - 1, false);
    if (buf < 0) {
      mb_fail(err, "packing workload '%s': out of memory adding buffer %d", wname, i);
      goto done;
    }
    mb_builder_set_benefit(b, buf, c->a1 - c->a0); /* as the CSV importer: benefit = size */
    if (offsets) offsets[i] = c->a0;
    total += c->a1 - c->a0;
  }
  /* As for MiniMalloc CSVs (csv_import.h): half of the all-slow time is removable stall. */
  mb_builder_set_schedule(b, opt->length, 2 * total);
  w = mb_builder_finish(b, err);
  b = NULL; /* consumed */
done:
  mb_builder_free(b);
  free(r);
  free(order);
  free(keys);
  return w;
}
