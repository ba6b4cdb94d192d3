/* mallocbench bench core [--max N] [--seed S]: per-buffer cost of the core machinery on random
 * workloads of 10^3 .. 10^6 buffers: writing and parsing the native format, the cost model
 * (full evaluation and incremental moves) and the validator. The per-buffer columns stay flat
 * (or grow like log n for the validator) when the code scales as n log n or better. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assignment.h"
#include "clock.h"
#include "commands.h"
#include "cost.h"
#include "error.h"
#include "hardware.h"
#include "heap.h"
#include "rng.h"
#include "validator.h"
#include "workload.h"
#include "workload_io.h"

#define LANE_BYTES (512 * 2048) /* largest random buffer: every lane can hold any buffer */

/* CPU time of the calling thread: compared with wall time it shows whether other work competed
 * for the CPU (the measured work runs on this thread alone, so an idle machine gives cpu/wall
 * close to 100%). Not the process clock: that also counts threads this benchmark does not run,
 * such as the worker threads OpenBLAS starts when the library loads, and read 3353 ns/buffer of
 * CPU against 2105 of wall for a single-threaded write. */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A random scheduled workload: n buffers over n/2 ops, short live ranges, a write at the start,
 * a read at the end and sometimes one in between; 5% pinned. */
static mb_workload *random_workload(int32_t n, mb_rng *rng, mb_error *err) {
  int32_t n_ops = n / 2 > 10 ? n / 2 : 10;
  mb_workload_builder *b =
      mb_builder_new("bench_core", "random workload of mallocbench bench core");
  if (!b) {
    mb_fail(err, "out of memory");
    return NULL;
  }
  char name[32];
  for (int32_t o = 0; o < n_ops; o++) {
    snprintf(name, sizeof name, "op%d", o);
    mb_builder_add_op(b, name, o % 3 ? "fusion" : "dot",
                      (double)mb_rng_range(rng, 1000000, 1000000000));
  }
  for (int32_t i = 0; i < n; i++) {
    int64_t size = 512 * mb_rng_range(rng, 1, 2048);
    int32_t start = (int32_t)mb_rng_below(rng, (uint64_t)n_ops);
    int32_t end = start + (int32_t)mb_rng_range(rng, 0, 15);
    if (end >= n_ops) end = n_ops - 1;
    snprintf(name, sizeof name, "b%d", i);
    int32_t id = mb_builder_add_buffer(b, name, size, start, end, mb_rng_below(rng, 20) == 0);
    mb_builder_add_use(b, id, start, 0, size);
    if (end > start) mb_builder_add_use(b, id, end, size, 0);
    if (end - start >= 2 && mb_rng_below(rng, 2))
      mb_builder_add_use(b, id, (int32_t)mb_rng_range(rng, start + 1, end - 1), size / 2, 0);
  }
  return mb_builder_finish(b, err);
}

typedef struct lane_end {
  int32_t end, lane;
} lane_end;

/* Busy lanes, earliest end on top. */
static bool lane_less(lane_end a, lane_end b) { return a.end < b.end; }
MB_HEAP_DEFINE(lane_heap, lane_end, lane_less);

static int cmp_key(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* A valid random packing: ~70% of the unpinned buffers go to fast memory, each into a lane of
 * LANE_BYTES that is free over its live range (interval-graph colouring in start order). The
 * lane count sets the capacity. */
static mb_assignment *random_packing(const mb_workload *w, mb_rng *rng, int64_t *capacity) {
  mb_assignment *a = mb_assignment_new(w->n_buffers);
  int32_t *order = malloc((size_t)w->n_buffers * sizeof *order);
  uint64_t *key = malloc((size_t)w->n_buffers * sizeof *key);
  lane_end *heap = malloc((size_t)w->n_buffers * sizeof *heap);
  int32_t *free_lanes = malloc((size_t)w->n_buffers * sizeof *free_lanes);
  if (!a || !order || !key || !heap || !free_lanes) {
    mb_assignment_free(a);
    a = NULL;
    goto done;
  }
  /* by start, ties by index (a sort, not a count per time step: memory O(n)) */
  for (int32_t i = 0; i < w->n_buffers; i++)
    key[i] = (uint64_t)(uint32_t)w->buffers[i].start << 32 | (uint32_t)i;
  qsort(key, (size_t)w->n_buffers, sizeof *key, cmp_key);
  for (int32_t i = 0; i < w->n_buffers; i++) order[i] = (int32_t)(key[i] & 0xffffffffu);
  int32_t n_heap = 0, n_free = 0, n_lanes = 0;
  for (int32_t k = 0; k < w->n_buffers; k++) {
    int32_t i = order[k];
    const mb_buffer *b = &w->buffers[i];
    if (b->pinned || mb_rng_below(rng, 10) >= 7) continue;
    while (n_heap > 0 && heap[0].end < b->start)
      free_lanes[n_free++] = lane_heap_pop(heap, &n_heap).lane;
    int32_t lane = n_free > 0 ? free_lanes[--n_free] : n_lanes++;
    a->offset[i] = (int64_t)lane * LANE_BYTES;
    lane_heap_push(heap, &n_heap, (lane_end){b->end, lane});
  }
  *capacity = (int64_t)(n_lanes ? n_lanes : 1) * LANE_BYTES;
done:
  free(order);
  free(key);
  free(heap);
  free(free_lanes);
  return a;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench bench core [--max N] [--seed S]\n\n"
          "Random workloads of 10^3, 10^4, ... up to N buffers (default 1000000): per-buffer\n"
          "wall-clock time of writing and parsing the native text format, of the cost model\n"
          "(full evaluation, and incremental moves per moved buffer) and of the validator.\n\n"
          "Each size prints two lines: 'wall' (wall clock, CLOCK_MONOTONIC) and 'cpu' (CPU time\n"
          "of the measuring thread, CLOCK_THREAD_CPUTIME_ID; the work is single-threaded, so on\n"
          "an idle machine the two agree, and when other processes compete for the CPU the wall\n"
          "line is inflated and the cpu line is the better guide). Columns:\n"
          "  buffers    n, the random workload's buffer count (n/2 ops)\n"
          "  fast       buffers the random valid packing puts in fast memory (~70%% of the\n"
          "             unpinned ones; the capacity is what that packing needs)\n"
          "  clock      wall or cpu\n"
          "  write, parse, full, validate   ns per buffer\n"
          "  move       ns per incremental move of one buffer\n"
          "  val/log2n  validate / log2(n): flat means n log n\n"
          "  check      ok, or FAILED when a consistency check failed (then exit 1)\n"
          "Options: --max N (largest size, 1000..10000000; default 1000000), --seed S.\n");
}

int mb_bench_core(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  int64_t max_n = 1000000;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o); /* every option takes a value */
    if (!strcmp(o.flag, "--max")) {
      if (!mb_option_int("bench core", o.flag, o.value, 1000, 10000000, &max_n)) return 2;
    } else if (!strcmp(o.flag, "--seed")) {
      if (!mb_option_u64("bench core", o.flag, o.value, &seed)) return 2;
    } else {
      return mb_unknown_option("bench core", argv[i]);
    }
    i = o.last;
  }
  mb_error err;
  mb_hardware base;
  if (!mb_hardware_find("tpu-v4i", NULL, &base, &err)) {
    mb_diag(stderr, "mallocbench bench core: %s", err.message);
    return 2;
  }
  printf(
      "mallocbench bench core: wall-clock times on this machine (CLOCK_MONOTONIC), one run, with\n"
      "the measuring thread's CPU time beside them (CLOCK_THREAD_CPUTIME_ID; the work is\n"
      "single-threaded: on an idle machine they agree; when other processes compete for the\n"
      "CPU, the wall times are inflated and the cpu line is the better guide). No simulated\n"
      "time is reported. Random workloads: n buffers, n/2 ops, ~2.3 uses per buffer, seed %" PRIu64
      ";\n"
      "hardware tpu-v4i with the capacity of a random valid packing of ~70%% of the buffers;\n"
      "'fast' is the number of buffers that packing puts in fast memory.\n"
      "Columns: ns per buffer (move: ns per incremental move of one buffer); 'val/log2n' is the\n"
      "validator's ns per buffer divided by log2(n): flat means n log n.\n\n",
      seed);
  printf("%9s %8s %5s %7s %8s %8s %8s %9s %9s %6s\n", "buffers", "fast", "clock", "write", "parse",
         "full", "move", "validate", "val/log2n", "check");
  int status = 0;
  mb_rng root;
  mb_rng_seed(&root, seed);
  for (int64_t n = 1000; n <= max_n && status == 0; n *= 10) {
    mb_rng rng = mb_rng_split(&root, (uint64_t)n);
    mb_workload *w = random_workload((int32_t)n, &rng, &err);
    int64_t capacity = 0;
    mb_assignment *a = w ? random_packing(w, &rng, &capacity) : NULL;
    bool *in_fast = w ? malloc((size_t)w->n_buffers * sizeof *in_fast) : NULL;
    if (!w || !a || !in_fast) {
      fprintf(stderr, "mallocbench bench core: n=%" PRId64 ": %s\n", n,
              w ? "out of memory" : err.message);
      mb_assignment_free(a);
      mb_workload_free(w);
      free(in_fast);
      return 2;
    }
    mb_hardware hw = mb_hardware_with_capacity(&base, capacity);
    mb_assignment_fast_flags(a, in_fast);
    int reps = n >= 100000 ? 1 : (int)(100000 / n);
    const char *problem = NULL;
    /* [0] wall, [1] cpu: seconds per repetition of each phase */
    double t_write[2], t_parse[2], t_full[2], t_move[2] = {0, 0}, t_val[2];
    double w0, c0;

    w0 = mb_wall_seconds(), c0 = cpu_s();
    size_t len = 0;
    char *text = NULL;
    for (int r = 0; r < reps; r++) {
      free(text);
      text = mb_workload_to_text(w, &len);
    }
    t_write[0] = (mb_wall_seconds() - w0) / reps, t_write[1] = (cpu_s() - c0) / reps;
    mb_workload *back = NULL;
    w0 = mb_wall_seconds(), c0 = cpu_s();
    for (int r = 0; r < reps && text; r++) {
      mb_workload_free(back);
      back = mb_workload_read_text(text, len, "bench.wl", &err);
    }
    t_parse[0] = (mb_wall_seconds() - w0) / reps, t_parse[1] = (cpu_s() - c0) / reps;
    if (!text || !back || !mb_workload_equal(w, back, NULL, 0)) problem = "round trip failed";

    mb_time_ps full = 0;
    w0 = mb_wall_seconds(), c0 = cpu_s();
    for (int r = 0; r < reps; r++) full = mb_program_time(w, &hw, in_fast);
    t_full[0] = (mb_wall_seconds() - w0) / reps, t_full[1] = (cpu_s() - c0) / reps;

    mb_cost_state cs;
    int64_t moves = 0;
    if (mb_cost_state_init(&cs, w, &hw)) {
      w0 = mb_wall_seconds(), c0 = cpu_s();
      for (int r = 0; r < reps; r++) {
        bool to_fast = r % 2 == 0;
        for (int32_t i = 0; i < w->n_buffers; i++)
          if (in_fast[i]) mb_cost_move(&cs, i, to_fast), moves++;
      }
      t_move[0] = mb_wall_seconds() - w0, t_move[1] = cpu_s() - c0;
      if (reps % 2 == 0)
        for (int32_t i = 0; i < w->n_buffers; i++)
          if (in_fast[i]) mb_cost_move(&cs, i, true);
      if (!problem && cs.total != full) problem = "incremental != full evaluation";
      mb_cost_state_free(&cs);
    } else {
      problem = "out of memory";
    }

    bool valid = true;
    w0 = mb_wall_seconds(), c0 = cpu_s();
    for (int r = 0; r < reps; r++) valid = mb_validate(w, &hw, a, &err);
    t_val[0] = (mb_wall_seconds() - w0) / reps, t_val[1] = (cpu_s() - c0) / reps;
    if (!problem && !valid) problem = err.message;

    double per = 1e9 / (double)n;
    for (int c = 0; c < 2; c++) {
      if (c == 0)
        printf("%9" PRId64 " %8d", n, mb_assignment_n_fast(a));
      else
        printf("%9s %8s", "", "");
      printf(" %5s %7.0f %8.0f %8.1f %8.1f %9.1f %9.2f %6s\n", c ? "cpu" : "wall", t_write[c] * per,
             t_parse[c] * per, t_full[c] * per, moves ? 1e9 * t_move[c] / (double)moves : 0.0,
             t_val[c] * per, t_val[c] * per / log2((double)n),
             c         ? ""
             : problem ? "FAILED"
                       : "ok");
    }
    fflush(stdout);
    if (problem) {
      fprintf(stderr, "mallocbench bench core: n=%" PRId64 ": %s\n", n, problem);
      status = 1;
    }
    free(text);
    mb_workload_free(back);
    free(in_fast);
    mb_assignment_free(a);
    mb_workload_free(w);
  }
  printf("\ncheck: round trip write->parse equal, incremental cost == full cost, packing valid.\n");
  return status;
}
