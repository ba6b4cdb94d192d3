/* mallocbench import: an XLA HLO text dump or a MiniMalloc buffer CSV -> the native workload
 * format, with a one-line summary. The import rules are in datasets/HLO_IMPORT.md ("HLO
 * import", "Buffer CSV import"). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "commands.h"
#include "csv_import.h"
#include "error.h"
#include "hlo_import.h"
#include "paths.h"
#include "workload.h"
#include "workload_io.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench import hlo FILE -o OUT [--no-fusion] [--no-pin-params] "
          "[--no-pin-outputs] [--loops-as-ops]\n"
          "       mallocbench import csv FILE -o OUT [--capacity BYTES]\n\n"
          "Imports an XLA HLO text dump (--xla_dump_hlo_as_text) or a MiniMalloc buffer CSV\n"
          "(id,lower,upper,size[,benefit]) into the native workload format and prints a\n"
          "one-line summary. Rules: datasets/HLO_IMPORT.md, sections \"HLO import\" and\n"
          "\"Buffer CSV import\". An HLO module's while loops, calls and conditionals are\n"
          "inlined into the schedule, a conditional as its most expensive branch. A\n"
          "parameter that the header donates (input_output_alias, buffer_donor) holds its\n"
          "output when XLA would write it there: it is then a parameter and an output.\n\n"
          "  -o, --output OUT   native workload file to write (required)\n"
          "  --no-fusion        keep elementwise/broadcast/convert/constant producers as ops\n"
          "  --no-pin-params    let entry parameters be placed in fast memory\n"
          "  --no-pin-outputs   let the root's outputs be placed in fast memory\n"
          "  --loops-as-ops     make each while loop one op, instead of inlining its condition\n"
          "                     and body into the schedule (their ops counted as often as\n"
          "                     they run)\n"
          "  --capacity BYTES   (csv) fast-memory capacity to report; default: the number in\n"
          "                     the file name (A.1048576.csv -> 1048576)\n"
          "  --repeat N         also time N more imports of the file (read once) and print the\n"
          "                     median wall time and throughput in MB/s\n");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Times `repeat` imports of the file's text (read once, so disk I/O is excluded). */
static int time_imports(const char *in, bool is_hlo, const mb_hlo_options *opt, int repeat) {
  size_t len = 0;
  char *text = mb_read_file(in, &len);
  double *t = malloc((size_t)repeat * sizeof *t);
  if (!text || !t) {
    mb_diag(stderr, "mallocbench import: %s: cannot read: %s", in, strerror(errno));
    free(text);
    free(t);
    return 2;
  }
  for (int r = 0; r < repeat; r++) {
    mb_error err = {{0}};
    double t0 = mb_wall_seconds();
    mb_workload *w = is_hlo ? mb_hlo_import_text(text, len, in, opt, NULL, &err)
                            : mb_csv_import_text(text, len, in, &err);
    t[r] = mb_wall_seconds() - t0;
    mb_workload_free(w);
  }
  qsort(t, (size_t)repeat, sizeof *t, cmp_double);
  printf(
      "  wall time (not simulated): %zu bytes, median %.3f ms, min %.3f ms over %d imports "
      "= %.1f MB/s (median)\n",
      len, t[repeat / 2] * 1e3, t[0] * 1e3, repeat, (double)len / t[repeat / 2] / 1e6);
  free(text);
  free(t);
  return 0;
}

static void print_summary(const mb_workload *w, const char *out) {
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  printf(
      "imported %s: %d ops, %d buffers (%d pinned), %lld bytes total, peak live %lld bytes "
      "at t=%d, %.6g FLOPs -> %s\n",
      w->name, st.n_ops, st.n_buffers, st.n_pinned, (long long)st.total_bytes,
      (long long)st.peak_live_bytes, st.peak_time, st.total_flops, out);
}

int mb_cmd_import(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *format = argv[1], *in = NULL, *out = NULL;
  mb_hlo_options opt;
  mb_hlo_options_default(&opt);
  int64_t capacity = 0, repeat = 0;
  bool is_hlo = !strcmp(format, "hlo"), is_csv = !strcmp(format, "csv");
  if (!is_hlo && !is_csv) {
    mb_diag(stderr, "mallocbench import: unknown format '%s' (expected hlo or csv)", format);
    return 2;
  }
  const char *command = is_hlo ? "import hlo" : "import csv";
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    /* --flag VALUE or --flag=VALUE (commands.h); switches are compared with a itself */
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *flag = o.flag, *v = o.value;
    bool ok = true, takes_value = true;
    if (!strcmp(flag, "-o") || !strcmp(flag, "--output")) {
      ok = mb_option_path(command, flag, v, &out);
    } else if (is_hlo && !strcmp(a, "--no-fusion")) {
      opt.fusion = false;
      takes_value = false;
    } else if (is_hlo && !strcmp(a, "--no-pin-params")) {
      opt.pin_parameters = false;
      takes_value = false;
    } else if (is_hlo && !strcmp(a, "--no-pin-outputs")) {
      opt.pin_outputs = false;
      takes_value = false;
    } else if (is_hlo && !strcmp(a, "--loops-as-ops")) {
      opt.loop_bodies = false;
      takes_value = false;
    } else if (is_csv && !strcmp(flag, "--capacity")) {
      ok = mb_option_bytes(command, flag, v, 1, INT64_MAX, &capacity);
    } else if (!strcmp(flag, "--repeat")) {
      ok = mb_option_int(command, flag, v, 1, 100000, &repeat);
    } else if (a[0] == '-' && a[1]) {
      return mb_unknown_option(command, a);
    } else if (in) {
      mb_diag(stderr, "mallocbench %s: one FILE only ('%s' is extra)", command, a);
      return 2;
    } else {
      in = a;
      takes_value = false;
    }
    if (!ok) return 2;
    if (takes_value) i = o.last;
  }
  if (!in || !out) {
    mb_diag(stderr, "mallocbench %s: %s is required; see mallocbench import --help", command,
            !in ? "FILE" : "-o OUT");
    return 2;
  }
  mb_error err = {{0}};
  if (!mb_path_check_distinct(out, in, "the input FILE", &err)) {
    mb_diag(stderr, "mallocbench %s: %s", command, err.message);
    return 2;
  }
  mb_workload *w = NULL;
  if (is_hlo) {
    mb_hlo_report rep;
    w = mb_hlo_import_file(in, &opt, &rep, &err);
    if (!w) {
      mb_diag(stderr, "mallocbench import: %s", err.message);
      return 2;
    }
    if (rep.n_unknown_opcodes > 0)
      mb_diag(stderr,
              "warning: %s: %d instructions with unknown opcodes (e.g. '%s') imported with bytes "
              "only (0 FLOPs)",
              in, rep.n_unknown_opcodes, rep.first_unknown);
    if (rep.n_unknown_custom_calls > 0) {
      char targets[1024];
      mb_diag(stderr,
              "warning: %s: %d custom-calls with unknown cost counted as 0 FLOPs (targets: %s)", in,
              rep.n_unknown_custom_calls, mb_hlo_report_targets(&rep, targets, sizeof targets));
    }
    if (rep.loop_flops > 0.5 * rep.total_flops)
      mb_diag(stderr,
              "warning: %s: %.0f%% of the FLOPs are in while loops that are one op, whose "
              "bodies' buffers are not modelled: the workload holds little of the program's "
              "memory traffic; without --loops-as-ops, loops whose body and condition take the "
              "loop's state as their one parameter are inlined",
              in, 100.0 * rep.loop_flops / rep.total_flops);
    if (rep.n_unknown_attributes > 0)
      mb_diag(stderr, "warning: %s: %d unknown attributes (e.g. '%s') skipped", in,
              rep.n_unknown_attributes, rep.first_unknown_attribute);
    if (!mb_workload_save(w, out, &err)) {
      mb_diag(stderr, "mallocbench import: %s", err.message);
      mb_workload_free(w);
      return 2;
    }
    print_summary(w, out);
    printf(
        "  %d entry instructions, %d computations, %d fused, %d unknown opcodes, %d custom-calls "
        "of unknown cost, %d GEMM custom-calls estimated, %d kernels with a cost_estimate, %d "
        "unknown attributes%s\n",
        rep.n_instructions, rep.n_computations, rep.n_fused, rep.n_unknown_opcodes,
        rep.n_unknown_custom_calls, rep.n_gemm_custom_calls, rep.n_estimated_kernels,
        rep.n_unknown_attributes, rep.is_scheduled ? ", is_scheduled" : "");
    if (rep.n_loops > 0)
      printf(
          "  while loops: %d, %d of them counted as often as their known_trip_count says, the "
          "others once; %d inlined into the schedule\n",
          rep.n_loops, rep.n_counted_loops, rep.n_inlined_loops);
    if (rep.n_inlined_calls > 0)
      printf("  calls: %d inlined into the schedule, their callees' ops in place of each call\n",
             rep.n_inlined_calls);
    if (rep.n_inlined_conditionals > 0)
      printf(
          "  conditionals: %d inlined into the schedule as their most expensive branch (by "
          "FLOPs); the other branches' buffers are not in the workload\n",
          rep.n_inlined_conditionals);
    if (rep.n_donated_arrays > 0) {
      int held = rep.n_donated_holding;
      int apart = rep.n_donated_arrays - held - rep.n_donated_returned;
      printf(
          "  donations: %d entry parameter array%s donated to outputs (input_output_alias, "
          "buffer_donor): %d %s, %d %s, %d %s (two buffers)\n",
          rep.n_donated_arrays, rep.n_donated_arrays == 1 ? "" : "s", held,
          held == 1 ? "holds the output written into it" : "hold the output written into them",
          rep.n_donated_returned,
          rep.n_donated_returned == 1 ? "is returned unchanged" : "are returned unchanged", apart,
          apart == 1 ? "stays apart from its output" : "stay apart from their output");
    }
    if (rep.n_updates_in_place + rep.n_updates_copied > 0) {
      char donated[96] = "";
      if (rep.n_updates_into_donated > 0)
        snprintf(donated, sizeof donated, " (%d of them into a donated entry parameter)",
                 rep.n_updates_into_donated);
      printf(
          "  updates (dynamic-update-slice, scatter): %d in place in their operand's buffer%s, "
          "%d copies\n",
          rep.n_updates_in_place, donated, rep.n_updates_copied);
    }
    if (rep.n_placed_buffers > 0)
      printf("  memory spaces: %d buffer%s (%" PRId64
             " B) in a memory space S(n) by XLA's own assignment; solvers here place every "
             "buffer afresh\n",
             rep.n_placed_buffers, rep.n_placed_buffers == 1 ? "" : "s", rep.placed_bytes);
    if (rep.n_padded_buffers > 0)
      printf(
          "  layouts: %d buffer%s sized as XLA allocates %s (tiles, L(n), sub-byte types), "
          "%" PRId64 " B more than %s elements take\n",
          rep.n_padded_buffers, rep.n_padded_buffers == 1 ? "" : "s",
          rep.n_padded_buffers == 1 ? "it" : "them", rep.padding_bytes,
          rep.n_padded_buffers == 1 ? "its" : "their");
  } else {
    w = mb_csv_import_file(in, &err);
    if (!w) {
      mb_diag(stderr, "mallocbench import: %s", err.message);
      return 2;
    }
    const char *capacity_from = "--capacity";
    if (capacity == 0) {
      capacity = mb_csv_capacity_from_name(in);
      capacity_from = "the file name";
    }
    if (!mb_workload_save(w, out, &err)) {
      mb_diag(stderr, "mallocbench import: %s", err.message);
      mb_workload_free(w);
      return 2;
    }
    print_summary(w, out);
    if (capacity > 0)
      printf("  capacity %lld bytes (from %s); slow_time_ps %lld = 2 x sum of benefits\n",
             (long long)capacity, capacity_from, (long long)w->slow_time_ps);
    else
      printf("  capacity unknown (no --capacity, no number before .csv); slow_time_ps %lld\n",
             (long long)w->slow_time_ps);
  }
  mb_workload_free(w);
  return repeat > 0 ? time_imports(in, is_hlo, &opt, (int)repeat) : 0;
}
