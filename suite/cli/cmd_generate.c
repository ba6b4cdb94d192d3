/* mallocbench generate: writes a generated workload in the native format.
 *   generate alphatensor (FILE | --builtin NAME) --n N [--dtype D] -o OUT [--name NAME]
 *   generate model SPEC -o OUT [--name NAME]
 *   generate packing --buffers N [--seed S] [--height B] [--quantum B] [--length T] -o OUT
 *                    [--name NAME] [--solution FILE.csv]
 * packing is MiniMalloc-like (suite/random_workload.h): op-less, benefit = size, and a perfect
 * packing in --height bytes exists; --solution writes it as an assignment CSV for `check`. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alphatensor.h"
#include "assignment.h"
#include "commands.h"
#include "error.h"
#include "model_zoo.h"
#include "paths.h"
#include "random_workload.h"
#include "rng.h"
#include "workload.h"
#include "workload_io.h"

/* Packing bounds. Buffers: the generator is O(N log N) (a heap of the rectangles left to cut);
 * 10^6 buffers take about 2 s in Release and write ~60 MB. Height x length: the
 * generator multiplies (height / quantum) by length; 2^40 x 2^22 stays below 2^63. */
#define PACKING_MAX_BUFFERS 1000000
#define PACKING_MAX_HEIGHT (INT64_C(1) << 40)
#define PACKING_MAX_LENGTH (1 << 22)

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench generate alphatensor (FILE | --builtin NAME) --n N [--dtype D]\n"
          "                                        -o OUT [--name NAME]\n"
          "       mallocbench generate model SPEC -o OUT [--name NAME]\n"
          "       mallocbench generate packing --buffers N [--seed S] [--height B] [--quantum B]\n"
          "                                    [--length T] -o OUT [--name NAME]\n"
          "                                    [--solution FILE.csv]\n\n"
          "alphatensor: the trace of the 4x4 block algorithm of a factorization of the 4x4x4\n"
          "  matrix-multiplication tensor (file format in datasets/CATALOGUE.md) on N x N\n"
          "  matrices: 16 A and 16 B input blocks of N/4 x N/4 (pinned), per rank-one term the\n"
          "  linear combinations L_r, R_r and the product M_r = L_r @ R_r, and the accumulations\n"
          "  into the 16 C blocks (outputs, pinned). Rules: datasets/CATALOGUE.md.\n"
          "  FILE              a factorization file (U, V, W blocks)\n"
          "  --builtin NAME    standard (rank 64) or strassen_squared (rank 49)\n"
          "  --n N             matrix size, a multiple of 4\n"
          "  --dtype D         bf16 (default), f16 or f32\n"
          "model: a model-zoo workload from a spec file (datasets/models/*.spec).\n"
          "packing: a random MiniMalloc-like packing instance (like its \"challenging\" sets):\n"
          "  N op-less buffers (benefit = size) cut from a HEIGHT-byte x T-step rectangle, so a\n"
          "  perfect packing in HEIGHT bytes exists; --solution writes it as an assignment CSV\n"
          "  ('mallocbench check OUT FILE.csv --capacity HEIGHT' accepts it).\n"
          "  --buffers N       number of buffers, 1..%d (a million: ~2 s, ~60 MB)\n"
          "  --seed S          random seed (default 0); the same seed gives the same files\n"
          "  --height B        bytes of the packing (default 1048576; units B, KiB, MiB, GiB,\n"
          "                    KB, MB, GB)\n"
          "  --quantum B       sizes and offsets are multiples of it (default 1024); check\n"
          "                    needs it a multiple of the profile's alignment (tpu-v4i: 512)\n"
          "  --length T        time steps (default 1048576, at most %d)\n"
          "  --solution FILE   write the perfect packing (rows 'buffer,offset')\n"
          "  -o OUT            output file in the native format ('-' for stdout)\n"
          "  --name NAME       workload name (default: derived from the source; packing:\n"
          "                    packing_n<N>_s<S>)\n",
          PACKING_MAX_BUFFERS, PACKING_MAX_LENGTH);
}

/* "path/to/tpu_v2_8192_bf16.txt" -> "tpu_v2_8192_bf16" */
static void stem(const char *path, char *out, size_t n) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  snprintf(out, n, "%s", base);
  char *dot = strrchr(out, '.');
  if (dot && dot != out) *dot = '\0';
}

static int write_out(const mb_workload *w, const char *out) {
  mb_error err;
  if (!strcmp(out, "-")) {
    if (!mb_workload_write(w, stdout) || fflush(stdout) != 0) {
      fprintf(stderr, "mallocbench generate: cannot write to stdout\n");
      return 1;
    }
    return 0;
  }
  if (!mb_workload_save(w, out, &err)) {
    mb_diag(stderr, "mallocbench generate: %s", err.message);
    return 1;
  }
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  mb_diag(stdout,
          "wrote %s: workload '%s', %d ops, %d buffers (%d pinned), %.6g FLOPs, peak live %lld B",
          out, w->name, st.n_ops, st.n_buffers, st.n_pinned, st.total_flops,
          (long long)st.peak_live_bytes);
  return 0;
}

/* --name: what the workload reader accepts, 1..MB_NAME_MAX - 1 bytes (any bytes: the writer
 * quotes and escapes), so that a generated file always reads back. False after an error line. */
static bool read_name(const char *command, const char *flag, const char *value, const char **name) {
  if (!mb_option_text(command, flag, value, &value)) return false;
  if (!*value || strlen(value) >= MB_NAME_MAX) {
    mb_diag(stderr, "mallocbench %s: %s '%s': expected a name of 1..%d bytes", command, flag, value,
            MB_NAME_MAX - 1);
    return false;
  }
  *name = value;
  return true;
}

static int generate_alphatensor(int argc, char **argv) {
  const char *file = NULL, *builtin = NULL, *dtype = "bf16", *out = NULL, *name = NULL;
  long long n = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      if (file) {
        mb_diag(stderr,
                "mallocbench generate alphatensor: one factorization at a time ('%s', "
                "'%s')",
                file, a);
        return 2;
      }
      file = a;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *flag = o.flag, *v = o.value;
    if (!strcmp(flag, "--builtin")) {
      if (!mb_option_text("generate alphatensor", flag, v, &builtin)) return 2;
    } else if (!strcmp(flag, "--dtype")) {
      if (!mb_option_text("generate alphatensor", flag, v, &dtype)) return 2;
    } else if (!strcmp(flag, "-o")) {
      if (!mb_option_path("generate alphatensor", flag, v, &out)) return 2;
    } else if (!strcmp(flag, "--name")) {
      if (!read_name("generate alphatensor", flag, v, &name)) return 2;
    } else if (!strcmp(flag, "--n")) {
      /* the trace checks the rest (a multiple of 4) */
      int64_t size;
      if (!mb_option_int("generate alphatensor", flag, v, 4, 1 << 20, &size)) return 2;
      n = size;
    } else {
      return mb_unknown_option("generate alphatensor", a);
    }
    i = o.last;
  }
  if ((file != NULL) == (builtin != NULL) || !out || n == 0) {
    fprintf(stderr,
            "mallocbench generate alphatensor: need exactly one of FILE or --builtin, "
            "and --n and -o\n");
    usage(stderr);
    return 2;
  }
  mb_error err;
  mb_factorization f;
  bool ok =
      builtin ? mb_factorization_builtin(builtin, &f, &err) : mb_factorization_load(file, &f, &err);
  if (!ok) {
    mb_diag(stderr, "mallocbench generate alphatensor: %s", err.message);
    return 2;
  }
  char def[160], base[128];
  if (!name) {
    stem(builtin ? builtin : file, base, sizeof base);
    snprintf(def, sizeof def, "%s_n%lld_%s", base, n, dtype);
    name = def;
  }
  mb_workload *w = mb_alphatensor_trace(&f, name, n, dtype, &err);
  mb_factorization_free(&f);
  if (!w) {
    mb_diag(stderr, "mallocbench generate alphatensor: %s", err.message);
    return 2;
  }
  int rc = write_out(w, out);
  mb_workload_free(w);
  return rc;
}

static int generate_model(int argc, char **argv) {
  const char *spec = NULL, *out = NULL, *name = NULL;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      if (spec) {
        mb_diag(stderr, "mallocbench generate model: one spec at a time ('%s', '%s')", spec, a);
        return 2;
      }
      spec = a;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    if (!strcmp(o.flag, "-o")) {
      if (!mb_option_path("generate model", o.flag, o.value, &out)) return 2;
    } else if (!strcmp(o.flag, "--name")) {
      if (!read_name("generate model", o.flag, o.value, &name)) return 2;
    } else {
      return mb_unknown_option("generate model", a);
    }
    i = o.last;
  }
  if (!spec || !out) {
    fprintf(stderr, "mallocbench generate model: need SPEC and -o OUT\n");
    usage(stderr);
    return 2;
  }
  mb_error err;
  mb_workload *w = mb_model_generate_file(spec, &err);
  if (!w) {
    mb_diag(stderr, "mallocbench generate model: %s", err.message);
    return 2;
  }
  if (name) {
    char *copy = strdup(name);
    if (!copy) {
      mb_workload_free(w);
      fprintf(stderr, "mallocbench generate model: out of memory\n");
      return 1;
    }
    free(w->name);
    w->name = copy;
  }
  int rc = write_out(w, out);
  mb_workload_free(w);
  return rc;
}

static int generate_packing(int argc, char **argv) {
  const char *out = NULL, *name = NULL, *solution = NULL;
  const char *height_arg = "1048576", *quantum_arg = "1024";
  int64_t n = 0;
  uint64_t seed = 0;
  mb_packing_options opt;
  mb_packing_options_default(&opt);
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      mb_diag(stderr, "mallocbench generate packing: unexpected argument '%s'", a);
      return 2;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *flag = o.flag, *v = o.value;
    if (!strcmp(flag, "--buffers")) {
      if (!mb_option_int("generate packing", flag, v, 1, PACKING_MAX_BUFFERS, &n)) return 2;
    } else if (!strcmp(flag, "--seed")) {
      if (!mb_option_u64("generate packing", flag, v, &seed)) return 2;
    } else if (!strcmp(flag, "--height")) {
      if (!mb_option_bytes("generate packing", flag, v, 1, PACKING_MAX_HEIGHT, &opt.height))
        return 2;
      height_arg = v;
    } else if (!strcmp(flag, "--quantum")) {
      if (!mb_option_bytes("generate packing", flag, v, 1, PACKING_MAX_HEIGHT, &opt.quantum))
        return 2;
      quantum_arg = v;
    } else if (!strcmp(flag, "--length")) {
      if (!mb_option_i32("generate packing", flag, v, 1, PACKING_MAX_LENGTH, &opt.length)) return 2;
    } else if (!strcmp(flag, "-o")) {
      if (!mb_option_path("generate packing", flag, v, &out)) return 2;
    } else if (!strcmp(flag, "--solution")) {
      if (!mb_option_path("generate packing", flag, v, &solution)) return 2;
      if (!strcmp(solution, "-")) {
        mb_diag(stderr,
                "mallocbench generate packing: %s '-': expected a file path (the solution is "
                "not written to stdout)",
                flag);
        return 2;
      }
    } else if (!strcmp(flag, "--name")) {
      if (!read_name("generate packing", flag, v, &name)) return 2;
    } else {
      return mb_unknown_option("generate packing", a);
    }
    i = o.last;
  }
  if (n == 0 || !out) {
    fprintf(stderr, "mallocbench generate packing: need --buffers N and -o OUT\n");
    usage(stderr);
    return 2;
  }
  if (solution && (!strcmp(solution, out) || mb_path_same_file(solution, out))) {
    mb_diag(stderr,
            "mallocbench generate packing: --solution '%s' and -o '%s' name the same file: the "
            "solution would replace the workload",
            solution, out);
    return 2;
  }
  if (opt.height % opt.quantum != 0) {
    mb_diag(stderr,
            "mallocbench generate packing: --height '%s' (%" PRId64
            " B): expected a multiple of --quantum '%s' (%" PRId64 " B)",
            height_arg, opt.height, quantum_arg, opt.quantum);
    return 2;
  }
  /* The rectangle holds (height / quantum) x length cells of one quantum by one step, and
   * the generator can cut it into any number of buffers up to that. */
  int64_t rows = opt.height / opt.quantum;
  if (rows < (n + opt.length - 1) / opt.length) {
    fprintf(stderr,
            "mallocbench generate packing: --buffers '%" PRId64 "': expected at most %" PRId64
            " (the %" PRId64
            " B x %d step rectangle holds "
            "(--height / --quantum) x --length = %" PRId64
            " x %d buffers of at least one quantum "
            "by one step)\n",
            n, rows * opt.length, opt.height, opt.length, rows, opt.length);
    return 2;
  }
  char def[MB_NAME_MAX];
  if (!name) {
    snprintf(def, sizeof def, "packing_n%" PRId64 "_s%" PRIu64, n, seed);
    name = def;
  }
  int64_t *offsets = malloc(sizeof *offsets * (size_t)n);
  if (!offsets) {
    fprintf(stderr, "mallocbench generate packing: out of memory for %" PRId64 " buffers\n", n);
    return 1;
  }
  mb_rng rng;
  mb_rng_seed(&rng, seed);
  mb_error err;
  mb_workload *w = mb_random_packing_workload(&rng, (int32_t)n, &opt, name, offsets, &err);
  if (!w) {
    mb_diag(stderr, "mallocbench generate packing: %s", err.message);
    free(offsets);
    return 1; /* the options were checked above: out of memory */
  }
  int rc = write_out(w, out);
  if (rc == 0 && solution) {
    mb_assignment *sol = mb_assignment_new(w->n_buffers);
    if (!sol) {
      fprintf(stderr, "mallocbench generate packing: out of memory for the solution\n");
      rc = 1;
    } else {
      /* buffer i of the workload is the generator's buffer i (the builder keeps the order) */
      memcpy(sol->offset, offsets, sizeof *offsets * (size_t)w->n_buffers);
      if (!mb_assignment_save_csv(sol, w, solution, &err)) {
        mb_diag(stderr, "mallocbench generate packing: --solution: %s", err.message);
        rc = 1;
      } else if (strcmp(out, "-") != 0) {
        mb_diag(stdout,
                "wrote %s: the perfect packing, all %d buffers in fast memory within %" PRId64 " B",
                solution, w->n_buffers, opt.height);
      }
      mb_assignment_free(sol);
    }
  }
  mb_workload_free(w);
  free(offsets);
  return rc;
}

int mb_cmd_generate(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "alphatensor")) return generate_alphatensor(argc, argv);
  if (!strcmp(argv[1], "model")) return generate_model(argc, argv);
  if (!strcmp(argv[1], "packing")) return generate_packing(argc, argv);
  mb_diag(stderr,
          "mallocbench generate: unknown generator '%s' (expected alphatensor, model or "
          "packing)",
          argv[1]);
  return 2;
}
