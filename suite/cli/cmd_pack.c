/* mallocbench pack FILE.csv --capacity C: the allocation problem (MiniMalloc's): place every
 * buffer within the capacity or declare failure, with the exact packer (solvers/packer.h),
 * and show how far plain best fit gets on the same input. Exit 0 packed (and validated),
 * 1 infeasible or out of budget, 2 bad usage or bad input. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assignment.h"
#include "commands.h"
#include "csv_import.h"
#include "error.h"
#include "hardware.h"
#include "packer.h"
#include "paths.h"
#include "validator.h"
#include "workload_io.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mallocbench pack FILE [--capacity C] [--alignment A] [--budget SEC]\n"
          "                        [--out ASSIGNMENT.csv]\n\n"
          "Places ALL buffers of FILE within C bytes or declares failure (the allocation\n"
          "problem), with an exact search over canonical placements. Also reports plain best\n"
          "fit on the same input: buffers it leaves out at C, and the height it needs to fit all.\n"
          "Exit status: 0 packed, 1 infeasible or budget exhausted, 2 bad usage or input.\n\n"
          "FILE            a MiniMalloc CSV (id,lower,upper,size) or any workload file\n"
          "--capacity C    bytes (default: the number in a name like A.1048576.csv)\n"
          "--alignment A   offset alignment in bytes (default 1)\n"
          "--budget SEC    wall-clock budget (default 60)\n"
          "--out FILE      write the placement as an assignment CSV\n");
}

int mb_cmd_pack(int argc, char **argv) {
  if (mb_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  const char *path = NULL, *out_path = NULL;
  int64_t capacity = 0, alignment = 1;
  double budget = 60;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      if (path) {
        mb_diag(stderr, "mallocbench pack: unexpected argument '%s'", a);
        return 2;
      }
      path = a;
      continue;
    }
    mb_option_arg o;
    mb_option_arg_read(argc, argv, i, &o);
    const char *flag = o.flag, *v = o.value;
    if (!strcmp(flag, "--capacity")) {
      if (!mb_option_bytes("pack", flag, v, 1, INT64_MAX, &capacity)) return 2;
    } else if (!strcmp(flag, "--alignment")) {
      if (!mb_option_int("pack", flag, v, 1, INT64_MAX, &alignment)) return 2;
    } else if (!strcmp(flag, "--budget")) {
      if (!mb_option_number("pack", flag, v, 0, true, 1e9, &budget)) return 2;
    } else if (!strcmp(flag, "--out")) {
      if (!mb_option_path("pack", flag, v, &out_path)) return 2;
    } else {
      return mb_unknown_option("pack", a);
    }
    i = o.last;
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  if (capacity == 0) capacity = mb_csv_capacity_from_name(path);
  if (capacity <= 0) {
    mb_diag(stderr, "mallocbench pack: %s: no --capacity and none in the file name", path);
    return 2;
  }
  mb_error err;
  if (!mb_path_check_distinct(out_path, path, "the input", &err)) {
    mb_diag(stderr, "mallocbench pack: --out %s", err.message);
    return 2;
  }
  mb_workload *w = mb_workload_load_any(path, &err);
  if (!w) {
    mb_diag(stderr, "mallocbench pack: %s", err.message);
    return 2;
  }
  int rc = 2;
  mb_pack_item *items = malloc(sizeof *items * (size_t)(w->n_buffers ? w->n_buffers : 1));
  int64_t *off = malloc(sizeof *off * (size_t)(w->n_buffers ? w->n_buffers : 1));
  mb_assignment *asg = mb_assignment_new(w->n_buffers);
  if (!items || !off || !asg) {
    mb_diag(stderr, "mallocbench pack: out of memory for '%s'", path);
    goto done;
  }
  for (int32_t i = 0; i < w->n_buffers; i++)
    items[i] = (mb_pack_item){w->buffers[i].start, w->buffers[i].end, w->buffers[i].size};
  mb_workload_stats ws;
  mb_workload_stats_compute(w, &ws);
  mb_diag(stdout,
          "input       %s: %d buffers, peak live %" PRId64 " B, capacity %" PRId64
          " B (slack at peak %" PRId64 " B)",
          path, w->n_buffers, ws.peak_live_bytes, capacity, capacity - ws.peak_live_bytes);

  int32_t left_out;
  int64_t bf_height;
  if (!mb_pack_best_fit(items, w->n_buffers, capacity, alignment, off, &left_out, &bf_height,
                        &err)) {
    mb_diag(stderr, "mallocbench pack: %s: %s", path, err.message);
    goto done;
  }
  printf("best fit    %d of %d buffers left out at capacity; needs %" PRId64
         " B to fit all (%.1f%% of capacity)\n",
         left_out, w->n_buffers, bf_height, 100.0 * (double)bf_height / (double)capacity);

  mb_pack_options po = {capacity, alignment, budget, 0};
  mb_pack_result res;
  if (!mb_pack(items, w->n_buffers, &po, off, &res, &err)) {
    mb_diag(stderr, "mallocbench pack: %s: %s", path, err.message);
    goto done;
  }
  printf("packer      %s in %.3f s wall (%" PRId64 " search nodes)",
         mb_pack_status_name(res.status), res.seconds, res.nodes);
  if (res.status == MB_PACK_SOLVED) printf(", height %" PRId64 " B", res.height);
  printf("\n");
  if (res.status != MB_PACK_SOLVED) {
    rc = 1;
    goto done;
  }
  /* Independent check: the validator on the placement as an all-fast assignment. */
  mb_hardware hw;
  memset(&hw, 0, sizeof hw);
  snprintf(hw.name, sizeof hw.name, "pack");
  hw.capacity = capacity;
  hw.alignment = alignment;
  for (int32_t i = 0; i < w->n_buffers; i++)
    asg->offset[i] = w->buffers[i].pinned ? MB_SLOW : off[i];
  if (!mb_validate(w, &hw, asg, &err)) {
    printf("valid       NO: %s\n", err.message);
    rc = 1;
    goto done;
  }
  printf("valid       yes (independent validator)\n");
  rc = 0;
  if (out_path) {
    if (!mb_assignment_save_csv(asg, w, out_path, &err)) {
      mb_diag(stderr, "mallocbench pack: %s", err.message);
      rc = 2;
    } else {
      mb_diag(stdout, "placement   written to %s", out_path);
    }
  }
done:
  free(items);
  free(off);
  mb_assignment_free(asg);
  mb_workload_free(w);
  return rc;
}
