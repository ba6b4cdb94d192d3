/* mallocbench check WORKLOAD ASSIGNMENT.csv [--hardware NAME] [--capacity BYTES] [--catalogue
 * FILE] [--data DIR]: validates
 * an assignment with the solver-independent validator and prints its simulated time and speedup
 * over all-slow. --capacity replaces the profile's fast-memory size (as the catalogue does per
 * workload, and as a generated packing's height). Exit 0 valid, 1 invalid (the validator's
 * message names the buffers), 2 bad input. Every message about the assignment names the CSV
 * file, line and field: "a.csv:17: field 'offset': ..."; an invalid assignment names the line
 * of the row at fault, and for an overlap both rows' lines. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "commands.h"
#include "cost.h"
#include "error.h"
#include "hardware.h"
#include "validator.h"
#include "workload.h"
#include "workload_io.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench check WORKLOAD ASSIGNMENT.csv [--hardware NAME] [--capacity BYTES]\n"
          "                         [--catalogue FILE] [--data DIR]\n\n"
          "Validates an assignment (alignment, capacity, pinned buffers in slow memory, no two\n"
          "fast buffers overlapping in time and address) and prints its program time and its\n"
          "speedup over all-slow, both simulated by mallocbench's roofline cost model.\n"
          "Exit status: 0 valid, 1 invalid, 2 bad usage or unreadable input.\n\n"
          "WORKLOAD          a native workload (.wl), an HLO text dump (.hlo), a buffer CSV\n"
          "                  (.csv) or a model-zoo spec (.spec); or, when no file has that\n"
          "                  name, a catalogue entry's name ('mallocbench list')\n"
          "ASSIGNMENT.csv    rows 'buffer,offset' (offset in bytes or 'slow'); unlisted = slow\n"
          "--capacity BYTES  fast-memory bytes instead of the profile's, e.g. a catalogue entry's\n"
          "                  capacity or a generated packing's --height (units B, KiB, MiB, GiB,\n"
          "                  KB, MB, GB)\n");
  mb_workload_arg_usage(out);
}

/* The validator's message about an invalid assignment, led by the CSV line of the row at fault
 * (the later one of an overlapping pair: the row that collides with one above it) and, for an
 * overlap, followed by the lines of both rows in the order the message names the buffers. */
static void print_invalid(const char *path, const mb_workload *w, const mb_hardware *hw,
                          const int32_t *row_line, const int32_t blame[2], const char *why) {
  int32_t first = blame[0] >= 0 ? row_line[blame[0]] : 0;
  int32_t second = blame[1] >= 0 ? row_line[blame[1]] : 0;
  int32_t lead = first > second ? first : second;
  /* the workload's and the hardware's names come from files: mb_diag keeps the line one line */
  if (lead <= 0) { /* no row to blame (cannot happen for a CSV that was read) */
    mb_diag(stderr, "mallocbench check: %s: invalid assignment for '%s' on %s: %s", path, w->name,
            hw->name, why);
    return;
  }
  char rows[64] = "";
  if (first > 0 && second > 0)
    snprintf(rows, sizeof rows, " (rows on lines %d and %d)", first, second);
  mb_diag(stderr,
          "mallocbench check: %s:%d: field 'offset': invalid assignment for '%s' on %s: %s%s", path,
          lead, w->name, hw->name, why, rows);
}

int mb_cmd_check(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  const char *paths[2] = {NULL, NULL};
  mb_workload_arg wa = {0};
  int n_paths = 0;
  int64_t capacity = 0; /* 0: the profile's */
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (arg[0] != '-' || !arg[1]) {
      if (n_paths == 2) {
        mb_diag(stderr, "mallocbench check: unexpected argument '%s'", arg);
        return 2;
      }
      paths[n_paths++] = arg;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    int read = mb_option_workload_arg("check", o.flag, o.value, &wa);
    if (read < 0) return 2;
    if (!read && strcmp(o.flag, "--capacity")) return mb_unknown_option("check", arg);
    if (!read && !mb_option_bytes("check", o.flag, o.value, 1, INT64_MAX, &capacity)) return 2;
    i = o.last;
  }
  if (n_paths != 2) {
    usage(stderr);
    return 2;
  }
  mb_error err;
  mb_hardware hw;
  mb_workload *w = mb_cli_workload(paths[0], &wa, &hw, NULL, &err);
  if (!w) {
    mb_diag(stderr, "mallocbench check: %s", err.message);
    return 2;
  }
  if (capacity > 0) hw = mb_hardware_with_capacity(&hw, capacity);
  if (!mb_cost_check_range(w, &hw, &err)) {
    mb_diag(stderr, "mallocbench check: %s: %s", paths[0], err.message);
    mb_workload_free(w);
    return 2;
  }
  int32_t *row_line = malloc((size_t)w->n_buffers * sizeof *row_line);
  mb_assignment *a = row_line ? mb_assignment_load_csv_rows(paths[1], w, row_line, &err) : NULL;
  if (!a) {
    if (!row_line) snprintf(err.message, sizeof err.message, "out of memory");
    mb_diag(stderr, "mallocbench check: %s", err.message);
    free(row_line);
    mb_workload_free(w);
    return 2;
  }
  int status = 0;
  int32_t blame[2];
  if (!mb_validate_blame(w, &hw, a, blame, &err)) {
    print_invalid(paths[1], w, &hw, row_line, blame, err.message);
    status = 1;
  } else {
    bool *in_fast = malloc((size_t)w->n_buffers * sizeof *in_fast);
    if (!in_fast) {
      fprintf(stderr, "mallocbench check: out of memory\n");
      status = 2;
    } else {
      mb_assignment_fast_flags(a, in_fast);
      mb_time_ps t_slow = mb_slow_time(w, &hw), t = mb_program_time(w, &hw, in_fast);
      int64_t peak, top;
      mb_assignment_usage(w, a, &peak, &top);
      mb_diag(stdout, "workload   %s on %s", w->name, hw.name); /* names escaped (error.h) */
      printf("valid      yes: %d of %d buffers in fast memory\n", mb_assignment_n_fast(a),
             w->n_buffers);
      printf("fast bytes peak live %" PRId64 " B, highest address %" PRId64 " B, capacity %" PRId64
             " B\n",
             peak, top, hw.capacity);
      printf("T_slow     %.6f ms (simulated)\n", (double)t_slow / 1e9);
      printf("T          %.6f ms (simulated)\n", (double)t / 1e9);
      printf("speedup    %.4fx over all-slow (simulated: T_slow / T)\n",
             t > 0 ? (double)t_slow / (double)t : 0.0);
      free(in_fast);
    }
  }
  mb_assignment_free(a);
  free(row_line);
  mb_workload_free(w);
  return status;
}
