/* Random workloads: valid scheduled programs with ops, buffers and uses, drawn from a
 * distribution shaped like compiled ML programs, for solver tests, scaling benchmarks and
 * mallocMuZero's synthetic training curriculum.
 *
 * The shape (each knob in mb_random_options):
 *  - buffer sizes log-uniform in [min_size, max_size] (ML tensors span orders of magnitude),
 *    rounded up to a multiple of size_quantum;
 *  - live ranges of mixed lengths: mostly short (activations consumed by the next few ops),
 *    some medium (skip connections), a few long (weights, values kept for the backward pass).
 *    Lengths are bounded in ops, not in fractions of the program, so the number of buffers
 *    live at once stays the same as programs grow longer (as in real schedules, where it is
 *    set by the model's structure), which is what scaling benchmarks need;
 *  - each buffer is written by the op at its start and read by the op at its end, plus up to
 *    extra_reads reads in between (so every buffer has 1 to extra_reads + 2 uses);
 *  - a fraction of ops is compute-bound: their arithmetic intensity (FLOP per byte moved) is
 *    drawn above the ridge point `ridge_flops_per_byte` (peak FLOP/s over slow bandwidth of the
 *    target hardware), the others below it, so the roofline max() matters;
 *  - a fraction of buffers is pinned (entry parameters and outputs in XLA).
 * Deterministic: the same rng state and options give the same workload on every platform. */
#ifndef MB_RANDOM_WORKLOAD_H
#define MB_RANDOM_WORKLOAD_H

#include <stdint.h>

#include "error.h"
#include "rng.h"
#include "workload.h"

typedef struct mb_random_options {
  int32_t n_ops;              /* schedule length; 0: max(2, n_buffers / 2) */
  int64_t min_size, max_size; /* bytes, log-uniform */
  int64_t size_quantum;       /* sizes are multiples of this (>= 1) */
  double short_fraction;      /* live range of 1..4 ops */
  double long_fraction;       /* live range of medium_max_ops..long_max_ops ops; the rest:
                                 medium, 5..medium_max_ops ops (all clipped to n_ops) */
  int32_t medium_max_ops;
  int32_t long_max_ops;
  int32_t extra_reads;           /* at most this many reads between start and end */
  double compute_bound_fraction; /* ops with intensity above the ridge point */
  double ridge_flops_per_byte;   /* the target hardware's peak_flops / slow_bandwidth */
  double pinned_fraction;
} mb_random_options;

/* Defaults sized for a TPU-v4-like profile: sizes 256 B .. 4 MiB in multiples of 256 B,
 * 70% short / 25% medium (up to 64 ops) / 5% long (up to 1024 ops) ranges, up to 2 extra
 * reads, 20% compute-bound ops, ridge 225 FLOP/B, 5% pinned. */
void mb_random_options_default(mb_random_options *opt);

/* A workload named `name` (NULL: "random-N") with n_buffers >= 1 buffers. NULL with err set on
 * bad options or allocation failure. */
mb_workload *mb_random_workload(mb_rng *rng, int32_t n_buffers, const mb_random_options *opt,
                                const char *name, mb_error *err);

/* Random packing instances, shaped like MiniMalloc's "challenging" sets: op-less workloads
 * (buffer lifetimes and sizes only, benefit = size, as the CSV importer defines them) made by
 * cutting the rectangle [0, length) x [0, height) of time x address into n_buffers rectangles,
 * so that all of them fit exactly in `height` bytes (a perfect packing exists by
 * construction). Each cut splits the largest-area rectangle that can still be cut (the earliest
 * made among equal areas; O(N log N) with a heap), along time
 * or address (chosen at random among the cuttable ones), at a uniform point in its middle 80%
 * rounded to `quantum` (addresses) or to a step (time). The buffers are listed in random
 * order, so their order says nothing about the packing. */
typedef struct mb_packing_options {
  int64_t height;  /* bytes; the capacity of the perfect packing */
  int64_t quantum; /* sizes are multiples of this; height must be one */
  int32_t length;  /* time steps (the schedule length) */
} mb_packing_options;

/* MiniMalloc's sets: height 1 MiB in multiples of 1 KiB, 1,048,576 time steps. */
void mb_packing_options_default(mb_packing_options *opt);

/* A packing workload named `name` (NULL: "packing-N"), n_buffers >= 1. When `offsets` is not
 * NULL (n_buffers entries) it receives the perfect packing: buffer b's offset in `height` bytes.
 * NULL with err set on bad options (n_buffers more than the rectangle can be cut into, too) or
 * allocation failure. */
mb_workload *mb_random_packing_workload(mb_rng *rng, int32_t n_buffers,
                                        const mb_packing_options *opt, const char *name,
                                        int64_t *offsets, mb_error *err);

#endif
