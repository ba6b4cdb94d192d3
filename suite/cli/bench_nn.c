/* `mallocbench bench nn`: throughput of mallocMuZero's networks next to the machine's sgemm.
 *
 * Builds the three MuZero networks at the requested size (representation obs -> latent,
 * dynamics latent + one-hot action -> latent, prediction latent -> policy logits + value
 * atoms), times forward and forward + backward at batch 1 (search) and a training batch, and
 * reports GFLOP/s of their matrix products beside CBLAS sgemm at n = 1024 measured in the same
 * run (the practical peak), and the batch-1 forward through sgemv beside sgemm (the ratio and
 * the largest difference of their outputs). Wall-clock numbers; the machine is shared, so each
 * figure is the best of several timed repetitions. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "commands.h"
#include "error.h"
#include "nn.h"
#include "rng.h"
#include "tensor.h"

typedef struct bench_opts {
  int32_t width, layers, obs, actions, support, batch, threads;
  double seconds; /* per measurement */
} bench_opts;

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench bench nn [--width 256] [--layers 2] [--obs 600] [--actions 16]\n"
          "                            [--support 21] [--batch 256] [--threads 1] "
          "[--seconds 0.5]\n\n"
          "Times mallocMuZero's representation, dynamics and prediction networks (residual\n"
          "MLPs of --layers blocks at --width) forward and forward+backward at batch 1 and\n"
          "--batch, and prints GFLOP/s of their matrix products (2 per multiply-add;\n"
          "elementwise work not counted) next to CBLAS sgemm at n = 1024 in the same run,\n"
          "and the batch-1 forward through sgemv (as the solvers play) beside sgemm.\n"
          "--threads sets OpenBLAS's thread count (results are deterministic per count).\n"
          "--seconds is the wall-clock time spent per measurement, in seconds (fractional\n"
          "allowed; 0 < S <= 3600; best of 5 repetitions). All times are wall clock.\n");
}

static bool parse_args(int argc, char **argv, bench_opts *o) {
  *o = (bench_opts){256, 2, 600, 16, 21, 256, 1, 0.5};
  for (int i = 1; i < argc; i++) {
    mb_option_arg arg;
    mb_option_arg_read(argc, argv, i, &arg); /* every option takes a value */
    const char *a = arg.flag, *v = arg.value;
    bool ok;
    if (!strcmp(a, "--width"))
      ok = mb_option_i32("bench nn", a, v, 2, 8192, &o->width);
    else if (!strcmp(a, "--layers"))
      ok = mb_option_i32("bench nn", a, v, 0, 64, &o->layers);
    else if (!strcmp(a, "--obs"))
      ok = mb_option_i32("bench nn", a, v, 1, 1 << 20, &o->obs);
    else if (!strcmp(a, "--actions"))
      ok = mb_option_i32("bench nn", a, v, 2, 4096, &o->actions);
    else if (!strcmp(a, "--support"))
      ok = mb_option_i32("bench nn", a, v, 2, 4096, &o->support);
    else if (!strcmp(a, "--batch"))
      ok = mb_option_i32("bench nn", a, v, 1, 65536, &o->batch);
    else if (!strcmp(a, "--threads"))
      ok = mb_option_i32("bench nn", a, v, 1, 256, &o->threads);
    else if (!strcmp(a, "--seconds")) {
      ok = mb_option_number("bench nn", a, v, 0, true, 3600, &o->seconds);
    } else {
      mb_unknown_option("bench nn", argv[i]);
      return false;
    }
    if (!ok) return false;
    i = arg.last;
  }
  return true;
}

/* Best time per call of `run` over 5 repetitions of about seconds / 5 each. */
typedef bool (*bench_fn)(void *ctx);

static double best_time(bench_fn run, void *ctx, double seconds, bool *ok) {
  *ok = run(ctx); /* warm-up, and calibrates the repetition count */
  double t0 = mb_wall_seconds();
  *ok = *ok && run(ctx);
  double once = mb_wall_seconds() - t0;
  long reps = once > 0 ? (long)(seconds / 5 / once) : 1000;
  if (reps < 1) reps = 1;
  double best = 1e300;
  for (int r = 0; r < 5 && *ok; r++) {
    t0 = mb_wall_seconds();
    for (long k = 0; k < reps && *ok; k++) *ok = run(ctx);
    double t = (mb_wall_seconds() - t0) / (double)reps;
    if (t < best) best = t;
  }
  return best;
}

typedef struct sgemm_ctx {
  mb_tensor a, b, c;
} sgemm_ctx;

static bool run_sgemm(void *p) {
  sgemm_ctx *s = p;
  return mb_gemm(false, false, 1.0f, &s->a, &s->b, 0.0f, &s->c, NULL);
}

typedef struct net_ctx {
  mb_nn_tape tape;
  mb_tensor x, dy, dx;
  bool backward, input_grad;
  mb_error err;
} net_ctx;

static bool run_net(void *p) {
  net_ctx *n = p;
  if (!mb_nn_forward(&n->tape, &n->x, &n->err)) return false;
  return !n->backward || mb_nn_backward(&n->tape, &n->dy, n->input_grad ? &n->dx : NULL, &n->err);
}

/* The largest difference between the batch-1 outputs through sgemv and through sgemm, over
 * the largest output magnitude (into *rel); leaves the tape on sgemm. */
static bool gemv_difference(net_ctx *n, double *rel) {
  const mb_tensor *y;
  mb_nn_tape_use_gemv(&n->tape, true);
  if (!(y = mb_nn_forward(&n->tape, &n->x, &n->err))) return false;
  int64_t len = mb_tensor_size(y);
  float *via_gemv = malloc((size_t)len * sizeof *via_gemv);
  if (!via_gemv) return mb_fail(&n->err, "out of memory");
  memcpy(via_gemv, y->data, (size_t)len * sizeof *via_gemv);
  mb_nn_tape_use_gemv(&n->tape, false);
  bool ok = (y = mb_nn_forward(&n->tape, &n->x, &n->err)) != NULL;
  double diff = 0, scale = 0;
  for (int64_t i = 0; ok && i < len; i++) {
    double d = fabs((double)via_gemv[i] - y->data[i]);
    if (d > diff) diff = d;
    if (fabs(y->data[i]) > scale) scale = fabs(y->data[i]);
  }
  *rel = scale > 0 ? diff / scale : diff;
  free(via_gemv);
  return ok;
}

int mb_bench_nn(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  bench_opts o;
  if (!parse_args(argc, argv, &o)) return 2;
  mb_blas_set_threads(o.threads);
  char blas[256];
  mb_blas_describe(blas, sizeof blas);

  mb_error err = {{0}};
  mb_rng rng;
  mb_rng_seed(&rng, 1);
  sgemm_ctx sg = {0};
  mb_nn_module nets[3] = {0};
  const char *names[3] = {"representation", "dynamics", "prediction"};
  bool ok = mb_tensor_init(&sg.a, 1024, 1024, &err) && mb_tensor_init(&sg.b, 1024, 1024, &err) &&
            mb_tensor_init(&sg.c, 1024, 1024, &err) &&
            mb_nn_build_resmlp(&nets[0], "representation", o.obs, o.width, o.layers, 0,
                               MB_INIT_XAVIER, &err) &&
            mb_nn_build_resmlp(&nets[1], "dynamics", o.width + o.actions, o.width, o.layers, 0,
                               MB_INIT_XAVIER, &err) &&
            mb_nn_build_resmlp(&nets[2], "prediction", o.width, o.width, o.layers,
                               o.actions + o.support, MB_INIT_XAVIER, &err);
  if (!ok) {
    mb_diag(stderr, "mallocbench bench nn: %s", err.message);
    return 2;
  }
  for (int64_t i = 0; i < mb_tensor_size(&sg.a); i++) {
    sg.a.data[i] = (float)mb_rng_uniform(&rng);
    sg.b.data[i] = (float)mb_rng_uniform(&rng);
  }
  for (int k = 0; k < 3; k++) mb_nn_module_init_params(&nets[k], &rng);

  double t_sgemm = best_time(run_sgemm, &sg, o.seconds, &ok);
  double peak = 2.0 * 1024.0 * 1024.0 * 1024.0 / t_sgemm / 1e9;
  printf("mallocbench bench nn: wall-clock throughput of mallocMuZero's networks\n");
  printf("BLAS: %s, %d thread(s)\n", blas, mb_blas_threads());
  printf("Networks: width %d, %d residual blocks, observation %d, actions %d, value atoms %d\n",
         o.width, o.layers, o.obs, o.actions, o.support);
  for (int k = 0; k < 3; k++)
    printf("  %-14s %8lld parameters\n", names[k], (long long)mb_nn_param_count(&nets[k]));
  printf("CBLAS sgemm n=1024: %.1f GFLOP/s (practical peak, this run)\n\n", peak);
  printf("%-15s %6s %-9s %12s %14s %10s %8s\n", "network", "batch", "pass", "us/call", "samples/s",
         "GFLOP/s", "% peak");

  int batches[2] = {1, o.batch};
  double t_gemm[3] = {0}, t_gemv[3] = {0}, rel_diff[3] = {0};
  for (int k = 0; k < 3 && ok; k++)
    for (int b = 0; b < 2 && ok; b++) {
      net_ctx n = {0};
      int32_t B = batches[b];
      n.input_grad = k > 0; /* dynamics and prediction pass gradients back (BPTT) */
      ok = mb_nn_tape_create(&n.tape, &nets[k], B, &n.err) &&
           mb_tensor_init(&n.x, B, nets[k].in_dim, &n.err) &&
           mb_tensor_init(&n.dy, B, nets[k].out_dim, &n.err) &&
           mb_tensor_init(&n.dx, B, nets[k].in_dim, &n.err);
      for (int64_t i = 0; ok && i < mb_tensor_size(&n.x); i++)
        n.x.data[i] = (float)mb_rng_uniform(&rng);
      for (int64_t i = 0; ok && i < mb_tensor_size(&n.dy); i++)
        n.dy.data[i] = (float)(mb_rng_uniform(&rng) - 0.5);
      /* passes: forward, forward + backward, and at batch 1 the forward through sgemv (the
       * players' setting, nn.h: mb_nn_tape_use_gemv) */
      for (int pass = 0; pass < (B == 1 ? 3 : 2) && ok; pass++) {
        n.backward = pass == 1;
        mb_nn_tape_use_gemv(&n.tape, pass == 2);
        mb_nn_zero_grad(&nets[k]);
        double t = best_time(run_net, &n, o.seconds, &ok);
        double flops = (double)mb_nn_gemm_flops(&nets[k], B, n.backward, n.input_grad);
        if (pass == 0 && B == 1) t_gemm[k] = t;
        if (pass == 2) t_gemv[k] = t;
        if (ok)
          printf("%-15s %6d %-9s %12.1f %14.0f %10.2f %7.1f%%\n", names[k], B,
                 pass == 2    ? "fwd sgemv"
                 : n.backward ? "fwd+bwd"
                              : "forward",
                 t * 1e6, B / t, flops / t / 1e9, 100.0 * flops / t / 1e9 / peak);
      }
      if (ok && B == 1) ok = gemv_difference(&n, &rel_diff[k]);
      if (!ok) mb_diag(stderr, "mallocbench bench nn: %s", n.err.message);
      mb_nn_tape_free(&n.tape);
      mb_tensor_free(&n.x);
      mb_tensor_free(&n.dy);
      mb_tensor_free(&n.dx);
    }
  if (ok)
    printf(
        "\nBatch-1 forward through sgemv instead of sgemm, measured side by side above "
        "(sgemm packs\nthe whole weight matrix at every call): representation %.2fx, "
        "dynamics %.2fx, prediction\n%.2fx faster; outputs differ by at most %.1e, %.1e, "
        "%.1e of their largest magnitude\n(float rounding: the sums run in another order).\n",
        t_gemm[0] / t_gemv[0], t_gemm[1] / t_gemv[1], t_gemm[2] / t_gemv[2], rel_diff[0],
        rel_diff[1], rel_diff[2]);
  /* The machine is shared: a second sgemm measurement shows how far the load drifted. */
  double t_end = ok ? best_time(run_sgemm, &sg, o.seconds, &ok) : 0;
  if (ok)
    printf(
        "\nCBLAS sgemm n=1024 again after the table: %.1f GFLOP/s (%+.0f%% against the "
        "start;\nthe difference is load drift on this machine during the run).\n",
        2.0 * 1024.0 * 1024.0 * 1024.0 / t_end / 1e9, 100.0 * (t_sgemm / t_end - 1.0));
  printf(
      "\nGFLOP/s counts the matrix products only (2 per multiply-add); backward counts dW and\n"
      "dx (dx skipped for the representation's first layer). Best of 5 repetitions.\n");
  for (int k = 0; k < 3; k++) mb_nn_module_free(&nets[k]);
  mb_tensor_free(&sg.a);
  mb_tensor_free(&sg.b);
  mb_tensor_free(&sg.c);
  return ok ? 0 : 1;
}
