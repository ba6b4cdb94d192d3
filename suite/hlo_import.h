/* XLA HLO text importer: turns an `--xla_dump_hlo_as_text` module into a workload.
 * Schedule = instruction order of the ENTRY computation, with inlined while loops (condition
 * and body after the while), calls (the callee in place of the call) and conditionals (the
 * most expensive branch in its place); buffers = array values defined by those instructions
 * (aliasing ops define none); other called computations count toward their caller's cost.
 * The rules (schedule, buffers, aliasing, uses and bytes, fusion, FLOPs, loops, calls and
 * conditionals, pinning) are documented in datasets/HLO_IMPORT.md. The text parser itself is
 * suite/hlo_parse.h. */
#ifndef MB_HLO_IMPORT_H
#define MB_HLO_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "workload.h"

typedef struct mb_hlo_options {
  bool fusion;         /* producer-consumer fusion of elementwise ops (default true) */
  bool pin_parameters; /* entry parameters stay in slow memory (default true) */
  bool pin_outputs;    /* the root's buffers stay in slow memory (default true) */
  /* while loops' conditions and bodies inlined into the schedule, their ops and bytes counted
   * as often as they run (default true); false: a loop is one op (datasets/HLO_IMPORT.md) */
  bool loop_bodies;
} mb_hlo_options;

/* Custom-call targets listed by name in a report (the first ones met, in text order). */
#define MB_HLO_MAX_TARGETS 8

typedef struct mb_hlo_target_count {
  char name[64]; /* the custom_call_target, without quotes (truncated to fit) */
  int32_t count;
} mb_hlo_target_count;

typedef struct mb_hlo_report {
  int32_t n_instructions; /* entry instructions parsed */
  int32_t n_computations;
  int32_t n_fused;              /* entry instructions fused into a consumer */
  int32_t n_unknown_opcodes;    /* imported with bytes only */
  char first_unknown[64];       /* one example of an unknown opcode, for the warning */
  int32_t n_unknown_attributes; /* attributes the parser does not know (skipped) */
  char first_unknown_attribute[64];
  /* custom-calls (in any computation) whose own cost is unknown: 0 FLOPs of their own (called
   * computations still count). Not counted: library GEMMs given 2*M*N*K FLOPs, kernels with a
   * cost_estimate and the data-movement targets of datasets/HLO_IMPORT.md ("Custom-calls"). */
  int32_t n_unknown_custom_calls;
  int32_t n_unknown_targets; /* entries used in unknown_targets (<= MB_HLO_MAX_TARGETS) */
  mb_hlo_target_count unknown_targets[MB_HLO_MAX_TARGETS]; /* distinct targets, first met first */
  int32_t n_gemm_custom_calls; /* library GEMM custom-calls given 2*M*N*K FLOPs */
  /* custom-calls given the FLOPs of their backend_config's cost_estimate (Pallas kernels) */
  int32_t n_estimated_kernels;
  /* buffers whose layout makes XLA allocate more than their elements' bits (tiles, L(n), a
   * sub-byte type without E(n): hlo_parse.h's mb_hlo_array_bytes), and the bytes added */
  int32_t n_padded_buffers;
  int64_t padding_bytes;
  /* buffers that XLA's own memory-space assignment put outside the default memory (a layout's
   * S(n), n > 0), and their bytes: reported, not taken as a placement */
  int32_t n_placed_buffers;
  int64_t placed_bytes;
  /* while loops met: each of the schedule (an inlined one each time it is inlined) and each in
   * the computations its ops call (inside a loop that stays one op, say), once; those of them
   * whose body and condition count as often as their backend_config's known_trip_count says;
   * and those inlined into the schedule (options.loop_bodies) */
  int32_t n_loops, n_counted_loops, n_inlined_loops;
  /* call and conditional instructions inlined into the schedule (each time one is inlined; a
   * conditional as its most expensive branch) */
  int32_t n_inlined_calls, n_inlined_conditionals;
  /* updates of the schedule (dynamic-update-slice, each operand of a scatter, fusion rooted in
   * a dynamic-update-slice; each time one is inlined): made in place in their operand's buffer
   * (a loop's state or a dying temporary), or copies (datasets/HLO_IMPORT.md, "Updates in
   * place") */
  int32_t n_updates_in_place, n_updates_copied;
  /* entry parameter arrays that the header donates (input_output_alias or buffer_donor:
   * datasets/HLO_IMPORT.md, "Donated parameters"), the updates in place into one of them (a
   * chain of updates counts each), and of the arrays those that hold their output (written in
   * place by updates or by the op that computes it) and those returned unchanged as their
   * output (the others and their outputs are two buffers) */
  int32_t n_donated_arrays, n_updates_into_donated, n_donated_holding, n_donated_returned;
  /* FLOPs of the schedule's while loops that are one op (not inlined; bodies and conditions,
   * trip counts applied), and of the whole program: inside such a loop, buffers are not
   * modelled */
  double loop_flops, total_flops;
  bool is_scheduled; /* the module header says is_scheduled=true */
} mb_hlo_report;

void mb_hlo_options_default(mb_hlo_options *opt);
/* The unknown custom-call targets as "__cublas$gemm x2, __onednn$matmul" (count shown when
 * above 1), then ", and N more" for custom-calls whose target is not listed; "" when none.
 * Truncated to fit out (size n); returns out. */
char *mb_hlo_report_targets(const mb_hlo_report *r, char *out, size_t n);
/* report may be NULL. `path` names the file in messages and in the workload's source. */
mb_workload *mb_hlo_import_text(const char *text, size_t len, const char *path,
                                const mb_hlo_options *opt, mb_hlo_report *report, mb_error *err);
mb_workload *mb_hlo_import_file(const char *path, const mb_hlo_options *opt, mb_hlo_report *report,
                                mb_error *err);

#endif
