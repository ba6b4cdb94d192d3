/* mallocbench generate: writes a generated workload in the native format.
 *   generate alphatensor (FILE | --builtin NAME) --n N [--dtype D] -o OUT [--name NAME]
 *   generate model SPEC -o OUT [--name NAME] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alphatensor.h"
#include "commands.h"
#include "model_zoo.h"
#include "workload.h"
#include "workload_io.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench generate alphatensor (FILE | --builtin NAME) --n N [--dtype D]\n"
          "                                        -o OUT [--name NAME]\n"
          "       mallocbench generate model SPEC -o OUT [--name NAME]\n\n"
          "alphatensor: the trace of the 4x4 block algorithm of a factorization of the 4x4x4\n"
          "  matrix-multiplication tensor (file format in ../shared/data/SOURCES.md) on N x N\n"
          "  matrices: 16 A and 16 B input blocks of N/4 x N/4 (pinned), per rank-one term the\n"
          "  linear combinations L_r, R_r and the product M_r = L_r @ R_r, and the accumulations\n"
          "  into the 16 C blocks (outputs, pinned). Rules: datasets/CATALOGUE.md.\n"
          "  FILE              a factorization file (U, V, W blocks)\n"
          "  --builtin NAME    standard (rank 64) or strassen_squared (rank 49)\n"
          "  --n N             matrix size, a multiple of 4\n"
          "  --dtype D         bf16 (default), f16 or f32\n"
          "model: a model-zoo workload from a spec file (datasets/models/*.spec).\n"
          "  -o OUT            output file in the native format ('-' for stdout)\n"
          "  --name NAME       workload name (default: derived from the source)\n");
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
    fprintf(stderr, "mallocbench generate: %s\n", err.message);
    return 1;
  }
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  printf("wrote %s: workload '%s', %d ops, %d buffers (%d pinned), %.6g FLOPs, peak live %lld B\n",
         out, w->name, st.n_ops, st.n_buffers, st.n_pinned, st.total_flops,
         (long long)st.peak_live_bytes);
  return 0;
}

static int generate_alphatensor(int argc, char **argv) {
  const char *file = NULL, *builtin = NULL, *dtype = "bf16", *out = NULL, *name = NULL;
  long long n = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--builtin") || !strcmp(a, "--n") || !strcmp(a, "--dtype") || !strcmp(a, "-o") ||
        !strcmp(a, "--name")) {
      if (!has_value) {
        fprintf(stderr, "mallocbench generate alphatensor: %s needs a value\n", a);
        return 2;
      }
      const char *v = argv[++i];
      if (!strcmp(a, "--builtin"))
        builtin = v;
      else if (!strcmp(a, "--dtype"))
        dtype = v;
      else if (!strcmp(a, "-o"))
        out = v;
      else if (!strcmp(a, "--name"))
        name = v;
      else {
        char *end;
        n = strtoll(v, &end, 10);
        if (end == v || *end) {
          fprintf(stderr, "mallocbench generate alphatensor: --n '%s' is not an integer\n", v);
          return 2;
        }
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "mallocbench generate alphatensor: unknown option '%s'\n", a);
      return 2;
    } else if (file) {
      fprintf(stderr,
              "mallocbench generate alphatensor: one factorization at a time ('%s', "
              "'%s')\n",
              file, a);
      return 2;
    } else {
      file = a;
    }
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
    fprintf(stderr, "mallocbench generate alphatensor: %s\n", err.message);
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
    fprintf(stderr, "mallocbench generate alphatensor: %s\n", err.message);
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
    if (!strcmp(a, "-o") || !strcmp(a, "--name")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "mallocbench generate model: %s needs a value\n", a);
        return 2;
      }
      if (!strcmp(a, "-o"))
        out = argv[++i];
      else
        name = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "mallocbench generate model: unknown option '%s'\n", a);
      return 2;
    } else if (spec) {
      fprintf(stderr, "mallocbench generate model: one spec at a time ('%s', '%s')\n", spec, a);
      return 2;
    } else {
      spec = a;
    }
  }
  if (!spec || !out) {
    fprintf(stderr, "mallocbench generate model: need SPEC and -o OUT\n");
    usage(stderr);
    return 2;
  }
  mb_error err;
  mb_workload *w = mb_model_generate_file(spec, &err);
  if (!w) {
    fprintf(stderr, "mallocbench generate model: %s\n", err.message);
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
  fprintf(stderr, "mallocbench generate: unknown generator '%s' (expected alphatensor or model)\n",
          argv[1]);
  return 2;
}
