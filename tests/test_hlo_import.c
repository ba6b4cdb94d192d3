/* Tests of the XLA HLO text importer (suite/hlo_import.h, suite/hlo_parse.h): golden counts on
 * the five real dumps, the buffer/aliasing/fusion/FLOP/pinning rules on small hand-checked
 * modules, and exact error messages for malformed text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_import.h"
#include "hlo_parse.h"
#include "paths.h"
#include "support.h"
#include "workload.h"

/* ---- helpers ---- */

static mb_workload *import_str(const char *text, bool fusion, mb_hlo_report *rep, mb_error *err) {
  mb_hlo_options opt;
  mb_hlo_options_default(&opt);
  opt.fusion = fusion;
  return mb_hlo_import_text(text, strlen(text), "t.hlo", &opt, rep, err);
}

/* With while loops as one op each (--loops-as-ops), fusion on. */
static mb_workload *import_loops_as_ops(const char *text, mb_hlo_report *rep, mb_error *err) {
  mb_hlo_options opt;
  mb_hlo_options_default(&opt);
  opt.loop_bodies = false;
  return mb_hlo_import_text(text, strlen(text), "t.hlo", &opt, rep, err);
}

static void expect_error(const char *text, const char *message) {
  mb_error err = {{0}};
  mb_workload *w = import_str(text, true, NULL, &err);
  if (w || strcmp(err.message, message)) {
    fprintf(stderr, "expected error: %s\n     got error: %s\n", message,
            w ? "(none: imported)" : err.message);
  }
  assert_null(w);
  assert_string_equal(err.message, message);
}

static const mb_buffer *buffer(const mb_workload *w, const char *name) {
  int32_t i = mb_workload_find_buffer(w, name);
  if (i < 0) fprintf(stderr, "no buffer '%s'\n", name);
  assert_true(i >= 0);
  return &w->buffers[i];
}

static const mb_use *use_of(const mb_workload *w, const char *buf, const char *op) {
  const mb_buffer *b = buffer(w, buf);
  int32_t o = mb_workload_find_op(w, op);
  assert_true(o >= 0);
  for (int32_t u = b->first_use; u < b->first_use + b->n_uses; u++)
    if (w->uses[u].op == o) return &w->uses[u];
  return NULL;
}

static double op_flops(const mb_workload *w, const char *op) {
  int32_t o = mb_workload_find_op(w, op);
  if (o < 0) fprintf(stderr, "no op '%s'\n", op);
  assert_true(o >= 0);
  return w->ops[o].flops;
}

/* ---- golden tests on the real dumps ---- */

typedef struct golden {
  const char *file;
  int32_t entry_instructions;
  int32_t ops, buffers;
  int64_t peak;
  int32_t ops_fused, buffers_fused;
  int64_t peak_fused;
  int32_t custom_calls; /* all custom-calls of unknown cost (their targets are AWS Neuron's) */
  const char *targets;
  int32_t updates_in_place; /* none is a copy */
  /* donated parameter arrays that hold the output computed into them, and that are returned
   * unchanged */
  int32_t donated_outputs, donated_returned;
} golden;

/* How these numbers were derived, independently of this C code:
 * - entry_instructions: `awk '/^ENTRY/{e=1;next} e&&/^}/{e=0} e' F | grep -c ' = '`.
 * - ops without fusion: entry instructions minus those matching
 *   ` (parameter|constant|tuple|get-tuple-element|bitcast|reshape)\(` (grep -cE): e.g. bert
 *   929 - 195 = 734, gpt2 176 - 57 = 119, graphsage 126 - 57 = 69, mlp 156 - 35 = 121,
 *   ssd 508 - 219 = 289. (All reshapes in these files keep element type and count.)
 * - buffers and peak live bytes (both modes) and ops with fusion: a separate line-based Python
 *   re-implementation of the rules in datasets/HLO_IMPORT.md, written from the rules rather
 *   than from this code, agreed on every number below. Sanity: buffers without fusion = non-
 *   aliasing entry instructions + 2 extra leaves for each of gpt2's 3 batch-norm-training
 *   tuples, less one for each update in place outside a loop and for each output held by its
 *   donated parameter (119 + 26 params + 17 constants - 2 scatters = 160 for gpt2).
 * - custom-calls: `grep -oE ' custom-call\(.*custom_call_target="[^"]*"' F` with the targets
 *   counted by `sort | uniq -c`.
 * - updates in place: `grep -cE ' (dynamic-update-slice|scatter)\(' F` (only gpt2's two
 *   KV-cache scatters, each the last use of a transfer's result).
 * - donated outputs (2026-12-06): the header's input_output_alias names 91 outputs of bert, 2 of
 *   gpt2 and 8 of mlp. gpt2's two are scatters into a transfer's copy of the parameter (the
 *   transfer, a custom-call, reads it whole: two buffers); mlp returns 2 parameters unchanged;
 *   bert donates parameter 127 to output 30, a constant, and returns it at outputs 91 and 92
 *   (two buffers). The others, each an add of the parameter as the Adam step's last
 *   read of it, hold their output. A
 *   separate Python script read the header, the root tuple and the workload imported before
 *   the rule, applied the rule (the output's op at or after the parameter's last read, an
 *   elementwise path of the parameter's shape between them when at it), merged each pair and
 *   recomputed buffers and peak live bytes: it agreed on every number below (bert 898 -> 808
 *   and 252 -> 162 buffers, peak 14532208 -> 16485484 without fusion, since the parameter now
 *   lives to the end, and 12578668 -> 10625496 with it; mlp 155 -> 149 and 52 -> 46). */
static const golden GOLDEN[] = {
    {"bert_pt_xla_adam_step.hlo", 929, 734, 808, 16485484, 122, 162, 10625496, 0, "", 0, 90, 0},
    {"gpt2_pt_xla.hlo", 176, 119, 160, 340294728, 47, 77, 340294684, 23,
     "AwsNeuronTransferWithStaticRing x22, AwsNeuronGelu", 2, 0, 0},
    {"graphsage_tf.hlo", 126, 69, 104, 23027764, 32, 46, 23027730, 0, "", 0, 0, 0},
    {"mlp_pt_xla.hlo", 156, 121, 149, 1705252, 43, 46, 1328560, 12,
     "AwsNeuronTransferWithStaticRing x12", 0, 6, 2},
    {"ssd_mobilenet_tf.hlo", 508, 289, 467, 37033396, 59, 160, 17954970, 0, "", 0, 0, 0},
};

static void test_real_files_golden(void **state) {
  (void)state;
  char path[2048], dir[1024];
  snprintf(dir, sizeof dir, "%s/hlo", mb_test_data_dir());
  snprintf(path, sizeof path, "%s/%s", dir, GOLDEN[0].file);
  FILE *probe = fopen(path, "r");
  if (!probe) {
    fprintf(stderr, "skipping: %s missing (see ../shared/data/SOURCES.md)\n", path);
    skip();
  }
  fclose(probe);
  for (size_t i = 0; i < sizeof GOLDEN / sizeof GOLDEN[0]; i++) {
    const golden *g = &GOLDEN[i];
    snprintf(path, sizeof path, "%s/%s", dir, g->file);
    for (int fusion = 0; fusion <= 1; fusion++) {
      mb_hlo_options opt;
      mb_hlo_options_default(&opt);
      opt.fusion = fusion;
      mb_hlo_report rep;
      mb_error err = {{0}};
      mb_workload *w = mb_hlo_import_file(path, &opt, &rep, &err);
      if (!w) fprintf(stderr, "%s\n", err.message);
      assert_non_null(w);
      mb_workload_stats st;
      mb_workload_stats_compute(w, &st);
      fprintf(stderr, "%s fusion=%d: ops %d buffers %d peak %lld\n", g->file, fusion, st.n_ops,
              st.n_buffers, (long long)st.peak_live_bytes);
      assert_int_equal(rep.n_instructions, g->entry_instructions);
      assert_int_equal(rep.n_unknown_opcodes, 0);
      assert_int_equal(rep.n_unknown_attributes, 0);
      char targets[256];
      assert_int_equal(rep.n_unknown_custom_calls, g->custom_calls);
      assert_int_equal(rep.n_gemm_custom_calls, 0);
      assert_int_equal(rep.n_updates_in_place, g->updates_in_place);
      assert_int_equal(rep.n_updates_copied, 0);
      assert_int_equal(rep.n_donated_holding, g->donated_outputs);
      assert_int_equal(rep.n_donated_returned, g->donated_returned);
      assert_string_equal(mb_hlo_report_targets(&rep, targets, sizeof targets), g->targets);
      assert_int_equal(st.n_ops, fusion ? g->ops_fused : g->ops);
      assert_int_equal(st.n_buffers, fusion ? g->buffers_fused : g->buffers);
      assert_int_equal(st.peak_live_bytes, fusion ? g->peak_fused : g->peak);
      /* every op that disappeared was fused (fused scalar constants were never ops) */
      if (fusion) assert_true(rep.n_fused >= g->ops - g->ops_fused);
      if (!fusion) assert_int_equal(rep.n_fused, 0);
      assert_true(st.total_flops > 0);
      mb_workload_free(w);
    }
  }
}

/* ---- rules on small modules ---- */

/* Hand-checked: see the comments of test_fusion_rule. */
static const char *REDUCE_MODULE =
    "HloModule t, is_scheduled=true\n"
    "\n"
    "%add_f32 (x: f32[], y: f32[]) -> f32[] {\n"
    "  %x = f32[] parameter(0)\n"
    "  %y = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n"
    "}\n"
    "\n"
    "ENTRY %main (p0: f32[4,8], p1: f32[8]) -> f32[4] {\n"
    "  %p0 = f32[4,8]{1,0} parameter(0)\n"
    "  %p1 = f32[8]{0} parameter(1)\n"
    "  %b = f32[4,8]{1,0} broadcast(f32[8]{0} %p1), dimensions={1}\n"
    "  %m = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %p0, f32[4,8]{1,0} %b)\n"
    "  %zero = f32[] constant(0)\n"
    "  ROOT %r = f32[4]{0} reduce(f32[4,8]{1,0} %m, f32[] %zero), dimensions={1}, "
    "to_apply=%add_f32\n"
    "}\n";

static void test_no_fusion_buffers_and_flops(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(REDUCE_MODULE, false, &rep, &err);
  assert_non_null(w);
  assert_true(rep.is_scheduled);
  assert_int_equal(rep.n_computations, 2);
  /* ops: b, m, r (parameters and constants are not ops); buffers: p0 p1 b m zero r */
  assert_int_equal(w->n_ops, 3);
  assert_int_equal(w->n_buffers, 6);
  assert_string_equal(w->ops[0].name, "b");
  assert_string_equal(w->ops[2].kind, "reduce");
  /* FLOPs: broadcast 0; multiply 32 elements; reduce 32 input elements x 1 add */
  assert_true(w->ops[0].flops == 0);
  assert_true(w->ops[1].flops == 32);
  assert_true(w->ops[2].flops == 32);
  /* sizes: f32[4,8] = 128 bytes, f32[8] = 32, f32[] = 4, f32[4] = 16 */
  assert_int_equal(buffer(w, "p0")->size, 128);
  assert_int_equal(buffer(w, "zero")->size, 4);
  assert_int_equal(buffer(w, "r")->size, 16);
  /* parameters and constants live from time 0; pinned: parameters and the root */
  assert_int_equal(buffer(w, "p1")->start, 0);
  assert_int_equal(buffer(w, "p1")->end, 0);
  assert_int_equal(buffer(w, "zero")->end, 2);
  assert_true(buffer(w, "p0")->pinned);
  assert_true(buffer(w, "r")->pinned);
  assert_false(buffer(w, "m")->pinned);
  /* the definer writes, each user reads the whole buffer */
  assert_int_equal(use_of(w, "b", "b")->bytes_written, 128);
  assert_int_equal(use_of(w, "b", "m")->bytes_read, 128);
  assert_int_equal(use_of(w, "p1", "b")->bytes_read, 32);
  mb_workload_stats st;
  mb_workload_stats_compute(w, &st);
  /* t=1: p0 128 + b 128 + m 128 + zero 4 */
  assert_int_equal(st.peak_live_bytes, 388);
  assert_int_equal(st.peak_time, 1);
  mb_workload_free(w);
}

static void test_fusion_rule(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(REDUCE_MODULE, true, &rep, &err);
  assert_non_null(w);
  /* zero (scalar constant), m (elementwise) and b (broadcast) fuse into the reduce:
   * one op reading p0 and p1 directly, with the multiply's 32 FLOPs added to its own 32 */
  assert_int_equal(rep.n_fused, 3);
  assert_int_equal(w->n_ops, 1);
  assert_int_equal(w->n_buffers, 3);
  assert_true(w->ops[0].flops == 64);
  assert_int_equal(use_of(w, "p0", "r")->bytes_read, 128);
  assert_int_equal(use_of(w, "p1", "r")->bytes_read, 32);
  assert_int_equal(use_of(w, "r", "r")->bytes_written, 16);
  assert_int_equal(mb_workload_find_buffer(w, "b"), -1);
  mb_workload_free(w);
}

static void test_fusion_keeps_outputs_and_large_constants(void **state) {
  (void)state;
  const char *text =
      "HloModule t\n"
      "ENTRY main {\n"
      "  p = f32[16] parameter(0)\n"
      "  big = f32[16] constant({...})\n"
      "  a = f32[16] add(p, big)\n"
      "  n = f32[16] negate(a)\n"
      "  e = f32[16] exponential(a)\n"
      "  ROOT t = (f32[16], f32[16]) tuple(n, e)\n"
      "}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, true, &rep, &err);
  assert_non_null(w);
  /* n and e are outputs (through the tuple): never fused. a feeds two consumers: fused into
   * both (FLOPs duplicated as XLA duplicates). The 16-element constant stays a buffer. */
  assert_int_equal(rep.n_fused, 1);
  assert_int_equal(w->n_ops, 2);
  assert_true(w->ops[0].flops == 32 && w->ops[1].flops == 32);
  assert_non_null(use_of(w, "big", "n"));
  assert_non_null(use_of(w, "big", "e"));
  assert_true(buffer(w, "n")->pinned && buffer(w, "e")->pinned);
  assert_int_equal(buffer(w, "big")->start, 0);
  mb_workload_free(w);
}

static void test_shapes_and_aliasing(void **state) {
  (void)state;
  const char *text =
      "HloModule shapes, entry_computation_layout={(bf16[3,5]{1,0})->s32[3]{0}}\n"
      "ENTRY %e (a: bf16[3,5], b: s4[3], c: pred[7], d: f8e4m3fn[10], g: c64[2], f: f8e5m2[4]) "
      "-> s32[3] {\n"
      "  %a = bf16[3,5]{1,0:T(8,128)(2,1)} parameter(0)\n"
      "  %b = s4[3]{0:E(4)} parameter(1)\n"
      "  %c = pred[7]{0} parameter(2)\n"
      "  %d = f8e4m3fn[10]{0} parameter(3)\n"
      "  %g = c64[2]{0} parameter(4)\n"
      "  %f = f8e5m2[4]{0} parameter(5)\n"
      "  %tok = token[] after-all()\n"
      "  %t = (f32[2]{0}, (s32[3]{0}, u4[5]{0}), token[]) custom-call(%a, %b, %c, %d, %g, "
      "/*index=5*/%f, %tok), custom_call_target=\"foo\", backend_config=\"{\\\"k\\\": 1}\"\n"
      "  %inner = (s32[3]{0}, u4[5]{0}) get-tuple-element(%t), index=1\n"
      "  %x = s32[3]{0} get-tuple-element(%inner), index=0\n"
      "  %xb = s32[1,3]{1,0} reshape(%x)\n"
      "  %xc = s32[3]{0} bitcast(%xb)\n"
      "  ROOT %r = s32[3]{0} negate(%xc)\n"
      "}\n";
  mb_error err = {{0}};
  mb_workload *w = import_str(text, true, NULL, &err);
  if (!w) fprintf(stderr, "%s\n", err.message);
  assert_non_null(w);
  /* bytes as XLA allocates them: bf16 3x5 tiled (8,128) = 8 * 128 * 2 = 2048; s4[3] packed by
   * E(4) = 12 bits -> 2, pred[7] = 7, f8[10] = 10, c64[2] = 16, f8e5m2[4] = 4; tuple leaves
   * t#0 f32[2] = 8, t#1 s32[3] = 12, t#2 u4[5] without E(4) one byte each = 5; the token
   * defines no buffer */
  assert_int_equal(buffer(w, "a")->size, 2048);
  assert_int_equal(buffer(w, "b")->size, 2);
  assert_int_equal(buffer(w, "c")->size, 7);
  assert_int_equal(buffer(w, "d")->size, 10);
  assert_int_equal(buffer(w, "g")->size, 16);
  assert_int_equal(buffer(w, "f")->size, 4);
  assert_int_equal(buffer(w, "t#0")->size, 8);
  assert_int_equal(buffer(w, "t#1")->size, 12);
  assert_int_equal(buffer(w, "t#2")->size, 5);
  assert_int_equal(w->n_buffers, 10);
  /* ops: after-all, custom-call, negate; get-tuple-element/reshape/bitcast alias t#1 */
  assert_int_equal(w->n_ops, 3);
  assert_int_equal(use_of(w, "t#1", "r")->bytes_read, 12);
  assert_int_equal(buffer(w, "t#1")->end, 2);
  assert_int_equal(use_of(w, "a", "t")->bytes_read, 2048);
  mb_workload_free(w);

  /* an empty tuple is what a computation returning nothing returns: no buffer, no op */
  w = import_str(
      "HloModule m\nENTRY e {\n  p = f32[16]{0} parameter(0)\n"
      "  a = f32[16]{0} add(p, p)\n  ROOT t = () tuple()\n}\n",
      true, NULL, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(w->n_buffers, 2); /* p and a */
  assert_int_equal(w->n_ops, 1);
  assert_false(buffer(w, "a")->pinned); /* not the program's output */
  mb_workload_free(w);
  /* the other aliasing opcodes need their operand */
  expect_error("HloModule m\nENTRY e {\n  ROOT t = () tuple()\n  g = f32[2] bitcast()\n}\n",
               "t.hlo:4: 'g': expected an operand to bitcast");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
      "  ROOT g = (f32[2], f32[2]) bitcast(p)\n}\n",
      "t.hlo:4: bitcast 'g': expected the same number of arrays as its operand");
}

/* mb_hlo_array_bytes against sizes worked out by hand from XLA's ShapeUtil::ArraySize. */
static void test_layout_bytes_rule(void **state) {
  (void)state;
  int64_t bytes = -1;
  int64_t d35[] = {3, 5}, d20[] = {20}, d3x200[] = {3, 200}, d2x3x5[] = {2, 3, 5};
  /* no layout, and an untiled one: elements * whole bytes (s4 and pred take a byte each) */
  assert_true(mb_hlo_array_bytes(MB_HLO_F32, d35, 2, NULL, &bytes));
  assert_int_equal(bytes, 60);
  assert_true(mb_hlo_array_bytes(MB_HLO_S4, d35, 2, NULL, &bytes));
  assert_int_equal(bytes, 15);
  mb_hlo_layout row = {.rank = 2, .minor_to_major = {1, 0}, .tail_alignment = 1};
  assert_true(mb_hlo_array_bytes(MB_HLO_PRED, d35, 2, &row, &bytes));
  assert_int_equal(bytes, 15);
  /* L(n) without a tile changes nothing (XLA's ArraySize pads only tiled shapes) */
  mb_hlo_layout aligned = row;
  aligned.tail_alignment = 8;
  assert_true(mb_hlo_array_bytes(MB_HLO_F32, d35, 2, &aligned, &bytes));
  assert_int_equal(bytes, 60);
  /* E(4) packs s4 two to a byte: 15 * 4 bits = 60 bits -> 8 bytes */
  mb_hlo_layout packed = row;
  packed.element_bits = 4;
  assert_true(mb_hlo_array_bytes(MB_HLO_S4, d35, 2, &packed, &bytes));
  assert_int_equal(bytes, 8);
  /* T(8,128) on f32[3,5]{1,0}: 5 -> 128 (minor), 3 -> 8: 1024 elements, 4096 B */
  mb_hlo_layout tiled = {
      .rank = 2, .minor_to_major = {1, 0}, .tile_rank = 2, .tile = {8, 128}, .tail_alignment = 1};
  assert_true(mb_hlo_array_bytes(MB_HLO_F32, d35, 2, &tiled, &bytes));
  assert_int_equal(bytes, 4096);
  /* the same tile on {0,1}: dim 0 (3) is minor -> 128, dim 1 (200) -> 200: 102400 B */
  mb_hlo_layout col = tiled;
  col.minor_to_major[0] = 0;
  col.minor_to_major[1] = 1;
  assert_true(mb_hlo_array_bytes(MB_HLO_F32, d3x200, 2, &col, &bytes));
  assert_int_equal(bytes, 128 * 200 * 4);
  /* a tile with more dims than the shape: f32[20] under T(8,128) is 8 x 128 elements (the
   * missing major dim counts as 1, padded to 8) */
  mb_hlo_layout one = {
      .rank = 1, .minor_to_major = {0}, .tile_rank = 2, .tile = {8, 128}, .tail_alignment = 1};
  assert_true(mb_hlo_array_bytes(MB_HLO_F32, d20, 1, &one, &bytes));
  assert_int_equal(bytes, 4096);
  /* a tile with fewer dims: the major dim 2 of {2,1,0} stays as it is: 2 * 8 * 128 * 2 B */
  mb_hlo_layout three = {.rank = 3,
                         .minor_to_major = {2, 1, 0},
                         .tile_rank = 2,
                         .tile = {8, 128},
                         .tail_alignment = 1};
  assert_true(mb_hlo_array_bytes(MB_HLO_BF16, d2x3x5, 3, &three, &bytes));
  assert_int_equal(bytes, 2 * 8 * 128 * 2);
  /* '*' (stored as 1) pads nothing; L(1000) rounds 15 elements up to 1000; E(4) after tiling */
  mb_hlo_layout star = {.rank = 2,
                        .minor_to_major = {1, 0},
                        .tile_rank = 2,
                        .tile = {1, 8},
                        .tail_alignment = 1000,
                        .element_bits = 4};
  assert_true(mb_hlo_array_bytes(MB_HLO_S4, d35, 2, &star, &bytes));
  assert_int_equal(bytes, 1000 * 4 / 8);
  /* too large once padded: refused, where the elements alone would fit */
  int64_t huge[] = {(int64_t)1 << 55, 3}; /* 3 * 2^55 B; padded 2^55 * 128 = 2^62 */
  assert_true(mb_hlo_array_bytes(MB_HLO_S8, huge, 2, NULL, &bytes));
  assert_false(mb_hlo_array_bytes(MB_HLO_S8, huge, 2, &tiled, &bytes));
  /* no data: token */
  assert_true(mb_hlo_array_bytes(MB_HLO_TOKEN, NULL, 0, NULL, &bytes));
  assert_int_equal(bytes, 0);
}

/* Layouts as printed in dumps: what the parser reads from them, the import's report of the
 * bytes they add, and the items it skips. */
static void test_layouts_in_text(void **state) {
  (void)state;
  const char *text =
      "HloModule tpu, is_scheduled=true\n"
      "ENTRY %e {\n"
      "  %a = f32[3,5]{1,0:T(8,128)S(1)} parameter(0)\n"
      "  %b = bf16[1024]{0:T(1024)(128)(2,1)} parameter(1)\n"
      "  %c = f32[3,5]{0,1:T(2,2)} exponential(f32[3,5]{1,0:T(8,128)S(1)} %a)\n"
      "  %d = f32[3,5]{1,0:(2,2)L(32)#(s64)*(s64)SC(0:4)P(f32[4,6]{1,0})M(8)} negate(%c)\n"
      "  %s = s4[5]{0:E(4)} convert(%d)\n"
      "  %e1024 = s8[8]{0:E(1024)} convert(%d)\n"
      "  %l2000 = f32[3]{0:T(2)L(2000)} convert(%d)\n"
      "  %l1 = f32[3]{0:T(2)L(1)} convert(%d)\n"
      "  %t1 = f32[3,5]{1,0:T(1,128)} convert(%d)\n"
      "  %e0 = s4[5]{0:E(0)} convert(%d)\n"
      "  ROOT %r = (f32[3,5]{1,0}, s4[5]{0:E(4)}) tuple(%d, %s)\n"
      "}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  /* a: 8 x 128 x 4; b: 1024 bf16, its tiles exact; c: {0,1} puts dim 0 (3) minor: 4 x 6 x 4;
   * d: (2,2) as older XLA printed tiles, 24 elements up to L(32): 128 B; s: 20 bits -> 3 B;
   * e1024: the largest E, 8 x 1024 bits; l2000: 3 -> 4 by the tile, then up to L(2000); l1:
   * the tile's 4 elements, L(1) the smallest alignment; t1: a tile dim of 1 pads nothing;
   * e0: E(0) is no E, s4 a byte each */
  assert_int_equal(buffer(w, "a")->size, 4096);
  assert_int_equal(buffer(w, "b")->size, 2048);
  assert_int_equal(buffer(w, "c")->size, 96);
  assert_int_equal(buffer(w, "d")->size, 128);
  assert_int_equal(buffer(w, "s")->size, 3);
  assert_int_equal(buffer(w, "e1024")->size, 1024);
  assert_int_equal(buffer(w, "l2000")->size, 2000 * 4);
  assert_int_equal(buffer(w, "l1")->size, 16);
  assert_int_equal(buffer(w, "t1")->size, 3 * 128 * 4);
  assert_int_equal(buffer(w, "e0")->size, 5);
  assert_int_equal(rep.n_padded_buffers, 8);
  /* XLA's own placement: a is in S(1); the operand's S(1) of c is a's layout again */
  assert_int_equal(rep.n_placed_buffers, 1);
  assert_int_equal(rep.placed_bytes, 4096);
  assert_int_equal(rep.padding_bytes, (4096 - 60) + (96 - 60) + (128 - 60) + (1024 - 8) +
                                          (8000 - 12) + (16 - 12) + (1536 - 60) + (5 - 3));
  mb_workload_free(w);
  /* refusals name the line and what was expected, quoting the layout up to its '}' */
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,} parameter(0)\n  q = f32[3,5] "
      "negate(p)\n}\n",
      "t.hlo:3: expected a dimension number below 2 in the layout's minor-to-major "
      "list, got '}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1x0} parameter(0)\n  q = f32[3,5] "
      "negate(p)\n}\n",
      "t.hlo:3: expected a dimension number below 2 in the layout's minor-to-major "
      "list, got 'x0}'");
  expect_error("HloModule m\nENTRY e {\n  p = f32[3,5]{1,}x\n}\n",
               "t.hlo:3: expected a dimension number below 2 in the layout's minor-to-major "
               "list, got '}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{,1,0} parameter(0)\n  q = f32[3,5] "
      "negate(p)\n}\n",
      "t.hlo:3: expected a dimension number below 2 in the layout's minor-to-major "
      "list, got ',1,0}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:S(1025)} parameter(0)\n  q = "
      "f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected a memory space number (0..1024) in the layout's S(...), got "
      "'1025)}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:E(1025)} parameter(0)\n  q = "
      "f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected a number of bits (0..1024) in the layout's E(...), got "
      "'1025)}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1} parameter(0)\n  q = f32[3,5] "
      "negate(p)\n}\n",
      "t.hlo:3: expected a layout of the shape's 2 dimensions, got 1");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,1} parameter(0)\n  q = f32[3,5] "
      "negate(p)\n}\n",
      "t.hlo:3: expected each dimension once in the layout, got 1 twice");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{2,0} parameter(0)\n  q = f32[3,5] "
      "negate(p)\n}\n",
      "t.hlo:3: expected a dimension number below 2 in the layout's minor-to-major "
      "list, got '2,0}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:T(8,0)} parameter(0)\n  q = "
      "f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected a positive tile dimension, got '0)}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:T(8;128)} parameter(0)\n  q = "
      "f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected ',' or ')' in the tile, got ';128)}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:L(0)} parameter(0)\n  q = "
      "f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected a positive element count in the layout's L(...), got '0)}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:E(x)} parameter(0)\n  q = "
      "f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected a number of bits (0..1024) in the layout's E(...), got 'x)}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:T} parameter(0)\n  q = "
      "f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected a layout item like T(8,128) or S(1), got 'T}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:T((8,128)} parameter(0)\n  q = "
      "f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected ')' closing the layout item 'T((8,128)}'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = s8[36028797018963968,3]{1,0:T(8,128)} "
      "parameter(0)\n  q = s8[1] negate(p)\n}\n",
      "t.hlo:3: expected a shape below 2^62 bytes as laid out");
  /* a long layout is quoted from the fault, cut at the quote's 24 characters */
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[3,5]{9,0:T(8,128)L(1024)#(s64)*(s64)S(1)} "
      "parameter(0)\n  q = f32[3,5] negate(p)\n}\n",
      "t.hlo:3: expected a dimension number below 2 in the layout's minor-to-major "
      "list, got '9,0:T(8,128)L(1024)#(s64'");
  /* 64 dims in a layout and in a tile are read, 65 refused */
  for (int n = 64; n <= 65; n++) {
    char module[2048], dims[512] = "", order[512] = "", tile[512] = "";
    for (int d = 0; d < n; d++) {
      snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s1", d ? "," : "");
      snprintf(order + strlen(order), sizeof order - strlen(order), "%s%d", d ? "," : "",
               n - 1 - d);
      snprintf(tile + strlen(tile), sizeof tile - strlen(tile), "%s1", d ? "," : "");
    }
    snprintf(module, sizeof module,
             "HloModule m\nENTRY e {\n  p = f32[%s]{%s} parameter(0)\n  q = f32[1] "
             "negate(p)\n}\n",
             dims, order);
    if (n == 65) {
      expect_error(module, "t.hlo:3: expected a layout of at most 64 dimensions");
    } else {
      mb_workload *ok = import_str(module, true, NULL, &err);
      if (!ok) fail_msg("64 dims: %s", err.message);
      mb_workload_free(ok);
    }
    snprintf(module, sizeof module,
             "HloModule m\nENTRY e {\n  p = s8[1]{0:T(%s)} parameter(0)\n  q = s8[1] "
             "negate(p)\n}\n",
             tile);
    if (n == 65) {
      expect_error(module, "t.hlo:3: expected a tile of at most 64 dimensions");
    } else {
      mb_workload *ok = import_str(module, true, NULL, &err);
      if (!ok) fail_msg("64-dim tile: %s", err.message);
      assert_int_equal(buffer(ok, "p")->size, 1);
      mb_workload_free(ok);
    }
  }
  /* a layout cut off by the end of the text: refused without reading past it (the buffer has
   * no NUL; ASan checks) */
  const char *cut = "HloModule m\nENTRY e {\n  p = f32[2]{0";
  size_t cut_len = strlen(cut);
  char *exact = malloc(cut_len);
  assert_non_null(exact);
  memcpy(exact, cut, cut_len);
  mb_hlo_module *cut_module = mb_hlo_parse(exact, cut_len, "t.hlo", &err);
  assert_null(cut_module);
  assert_string_equal(err.message, "t.hlo:3: expected '}' closing the layout");
  free(exact);
  /* 2^62 elements are refused even when E(1) would pack them into 2^59 bytes */
  expect_error(
      "HloModule m\nENTRY e {\n  p = s8[36028797018963968,3]{1,0:T(8,128)E(1)} "
      "parameter(0)\n  q = s8[1] negate(p)\n}\n",
      "t.hlo:3: expected a shape below 2^62 bytes as laid out");
  expect_error("HloModule m\nENTRY e {\n  p = f32[3,5]{1,0:T(8,128)\n  q = f32[3,5] negate(p)\n}\n",
               "t.hlo:3: expected '}' closing the layout");
}

static void test_dot_and_convolution_flops(void **state) {
  (void)state;
  const char *text =
      "HloModule flops\n"
      "%fused (q: f32[4,8], k: f32[8,16]) -> f32[4,16] {\n"
      "  %q = f32[4,8] parameter(0)\n"
      "  %k = f32[8,16] parameter(1)\n"
      "  ROOT %d = f32[4,16] dot(%q, %k), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "}\n"
      "ENTRY %main {\n"
      "  %a = f32[4,8] parameter(0)\n"
      "  %b = f32[8,16] parameter(1)\n"
      "  %dot = f32[2,4,16] dot(f32[2,4,8] %a3, f32[2,8,16] %b3), lhs_batch_dims={0}, "
      "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
      "  %img = bf16[1,10,10,32] parameter(2)\n"
      "  %ker = bf16[3,3,1,32] parameter(3)\n"
      "  %conv = bf16[1,10,10,32] convolution(%img, %ker), window={size=3x3 pad=1_1x1_1}, "
      "dim_labels=b01f_01io->b01f, feature_group_count=32, metadata={op_type=\"a{b\" "
      "op_name=\"x\\\"}y\"}\n"
      "  ROOT %fu = f32[4,16] fusion(%a, %b), kind=kOutput, calls=%fused\n"
      "}\n";
  /* %a3/%b3 are not defined: first check the message, then define them */
  expect_error(text, "t.hlo:10: operand 'a3' of 'dot' is not defined in computation 'main'");
  char fixed[4096];
  snprintf(fixed, sizeof fixed, "%s", text);
  char *at = strstr(fixed, "  %dot");
  const char *defs = "  %a3 = f32[2,4,8] parameter(4)\n  %b3 = f32[2,8,16] parameter(5)\n";
  memmove(at + strlen(defs), at, strlen(at) + 1);
  memcpy(at, defs, strlen(defs));
  mb_error err = {{0}};
  mb_workload *w = import_str(fixed, true, NULL, &err);
  if (!w) fprintf(stderr, "%s\n", err.message);
  assert_non_null(w);
  /* batched dot: 2 * (2*4*16 = 128 outputs) * 8 contracted = 2048 */
  assert_true(w->ops[mb_workload_find_op(w, "dot")].flops == 2048);
  /* depthwise conv: 2 * 3200 outputs * 3x3 window * 32 input features / 32 groups = 57600 */
  assert_true(w->ops[mb_workload_find_op(w, "conv")].flops == 57600);
  /* fusion: the called computation's dot, 2 * 64 * 8 = 1024 */
  assert_true(w->ops[mb_workload_find_op(w, "fu")].flops == 1024);
  mb_workload_free(w);
  /* two contracting dimensions: 2 * (2*5 = 10 outputs) * 3*7 contracted = 420 */
  const char *two =
      "HloModule two\nENTRY %main {\n  %l = f32[2,3,7] parameter(0)\n"
      "  %r = f32[3,7,5] parameter(1)\n"
      "  ROOT %d = f32[2,5] dot(%l, %r), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}\n"
      "}\n";
  w = import_str(two, true, NULL, &err);
  if (!w) fail_msg("%s", err.message);
  assert_true(w->ops[mb_workload_find_op(w, "d")].flops == 420);
  mb_workload_free(w);
}

/* Ops that call a computation per element: flops = elements visited x the computation's flops
 * (here an add: 1). reduce visits its input, reduce-window each output element's window, map
 * its output, scatter its updates. */
static void test_called_computation_flops(void **state) {
  (void)state;
  const char *text =
      "HloModule pools\n"
      "%add (x: f32[], y: f32[]) -> f32[] {\n"
      "  %x = f32[] parameter(0)\n"
      "  %y = f32[] parameter(1)\n"
      "  ROOT %s = f32[] add(%x, %y)\n"
      "}\n"
      "ENTRY %main {\n"
      "  %img = f32[1,8,8,4] parameter(0)\n"
      "  %zero = f32[] constant(0)\n"
      "  %pool = f32[1,4,4,4] reduce-window(%img, %zero), window={size=1x2x2x1 stride=1x2x2x1}, "
      "to_apply=%add\n"
      "  %m = f32[4,8] parameter(1)\n"
      "  %rowsum = f32[4] reduce(%m, %zero), dimensions={1}, to_apply=%add\n"
      "  %v = f32[16] parameter(2)\n"
      "  %w = f32[16] parameter(3)\n"
      "  %mapped = f32[16] map(%v, %w), dimensions={0}, to_apply=%add\n"
      "  %idx = s32[3,1] parameter(4)\n"
      "  %upd = f32[3,8] parameter(5)\n"
      "  %sc = f32[4,8] scatter(%m, %idx, %upd), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add\n"
      "  ROOT %out = (f32[1,4,4,4], f32[4], f32[16], f32[4,8]) tuple(%pool, %rowsum, %mapped, "
      "%sc)\n"
      "}\n";
  mb_error err = {{0}};
  mb_workload *w = import_str(text, false, NULL, &err);
  if (!w) fprintf(stderr, "%s\n", err.message);
  assert_non_null(w);
  /* 2x2 max-pool-like window: 64 outputs x 4 elements each */
  assert_true(w->ops[mb_workload_find_op(w, "pool")].flops == 256);
  assert_true(w->ops[mb_workload_find_op(w, "rowsum")].flops == 32); /* 4 x 8 inputs */
  assert_true(w->ops[mb_workload_find_op(w, "mapped")].flops == 16);
  assert_true(w->ops[mb_workload_find_op(w, "sc")].flops == 24); /* 3 x 8 updates */
  mb_workload_free(w);
}

static void test_control_flow(void **state) {
  (void)state;
  /* as one op, a while is a tuple-shaped definer (one buffer per leaf); FLOPs = body +
   * condition once. The conditional is inlined as its most expensive branch. (Inlined loops
   * and conditionals: below.) */
  const char *text =
      "HloModule cf\n"
      "%cond (c: (s32[], f32[8])) -> pred[] {\n"
      "  %c = (s32[], f32[8]) parameter(0)\n"
      "  %i = s32[] get-tuple-element(%c), index=0\n"
      "  %n = s32[] constant(10)\n"
      "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n"
      "}\n"
      "%body (b: (s32[], f32[8])) -> (s32[], f32[8]) {\n"
      "  %b = (s32[], f32[8]) parameter(0)\n"
      "  %j = s32[] get-tuple-element(%b), index=0\n"
      "  %v = f32[8] get-tuple-element(%b), index=1\n"
      "  %e = f32[8] exponential(%v)\n"
      "  %m = f32[8] multiply(%e, %v)\n"
      "  ROOT %t = (s32[], f32[8]) tuple(%j, %m)\n"
      "}\n"
      "%small (x: f32[8]) -> f32[8] {\n"
      "  %x = f32[8] parameter(0)\n"
      "  ROOT %y = f32[8] negate(%x)\n"
      "}\n"
      "%large (x: f32[8]) -> f32[8] {\n"
      "  %x = f32[8] parameter(0)\n"
      "  %y = f32[8] negate(%x)\n"
      "  ROOT %z = f32[8] add(%y, %x)\n"
      "}\n"
      "ENTRY %main (p: pred[], v: f32[8]) -> f32[8] {\n"
      "  %p = pred[] parameter(0)\n"
      "  %v = f32[8] parameter(1)\n"
      "  %zero = s32[] constant(0)\n"
      "  %init = (s32[], f32[8]) tuple(%zero, %v)\n"
      "  %w = (s32[], f32[8]) while(%init), condition=%cond, body=%body\n"
      "  %out = f32[8] get-tuple-element(%w), index=1\n"
      "  ROOT %c = f32[8] conditional(%p, %out, %out), true_computation=%small, "
      "false_computation=%large\n"
      "}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_loops_as_ops(text, &rep, &err);
  if (!w) fprintf(stderr, "%s\n", err.message);
  assert_non_null(w);
  assert_int_equal(rep.n_computations, 5);
  /* ops: the while, then the large branch's add with its negate fused in; the scalar constant
   * is not fused into the while (a loop cannot host a fusion), so it stays a 4-byte buffer
   * read by the while */
  assert_int_equal(w->n_ops, 2);
  /* body: exp 8 + multiply 8; condition: compare 1 */
  assert_true(w->ops[0].flops == 17);
  /* branches: 8 (negate) and 16 (negate + add): the larger one's ops */
  assert_string_equal(w->ops[1].name, "large/z");
  assert_true(w->ops[1].flops == 16);
  assert_int_equal(rep.n_inlined_conditionals, 1);
  assert_int_equal(buffer(w, "w#0")->size, 4);
  assert_int_equal(buffer(w, "w#1")->size, 32);
  assert_non_null(use_of(w, "zero", "w"));
  assert_non_null(use_of(w, "v", "w"));
  assert_int_equal(use_of(w, "w#1", "large/z")->bytes_read, 32);
  /* w#0 (the loop counter) has no reader after the loop: live only at its definition */
  assert_int_equal(buffer(w, "w#0")->end, 0);
  assert_int_equal(rep.n_loops, 1);
  assert_int_equal(rep.n_counted_loops, 0);
  assert_true(rep.loop_flops == 17 && rep.total_flops == 17 + 16);
  mb_workload_free(w);

  /* with XLA's known_trip_count (as JSON, or inside a JSON string, count a string or a number):
   * the body 10 times, the condition 11 times, whichever order the attributes come in */
  const char *configs[] = {
      "condition=%cond, body=%body, backend_config={\"known_trip_count\":{\"n\":\"10\"}}",
      ("body=%body, condition=%cond, "
       "backend_config=\"{\\\"known_trip_count\\\":{\\\"n\\\":\\\"10\\\"}}\""),
      "condition=%cond, body=%body, backend_config={\"known_trip_count\": {\"n\": 10}}",
  };
  for (int c = 0; c < 3; c++) {
    char with_count[4096];
    const char *at = strstr(text, "condition=%cond, body=%body");
    assert_non_null(at);
    snprintf(with_count, sizeof with_count, "%.*s%s%s", (int)(at - text), text, configs[c],
             at + strlen("condition=%cond, body=%body"));
    w = import_loops_as_ops(with_count, &rep, &err);
    if (!w) fail_msg("%s", err.message);
    assert_true(w->ops[0].flops == 10 * 16 + 11 * 1);
    assert_int_equal(rep.n_loops, 1);
    assert_int_equal(rep.n_counted_loops, 1);
    /* the loop's FLOPs against the program's (the conditional adds its 16) */
    assert_true(rep.loop_flops == 171 && rep.total_flops == 171 + 16);
    mb_workload_free(w);
  }
}

/* Inlined while loops (the default; datasets/HLO_IMPORT.md, "While loops"): the while is an op
 * that copies in the state its body changes, then the condition (trip count + 1 runs) and the
 * body (trip count runs) follow it in the schedule; a value the body computes as its result's
 * element k is written into state buffer k, an element it passes on is the operand's buffer
 * itself, and what is read in the loop but defined before it lives to the loop's end. */
static const char *SCAN_MODULE =
    "HloModule scan\n"
    "cond {\n"
    "  c = (s32[], f32[8], f32[8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(c), index=0\n"
    "  n = s32[] constant(3)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  b = (s32[], f32[8], f32[8]) parameter(0)\n"
    "  j = s32[] get-tuple-element(b), index=0\n"
    "  one = s32[] constant(1)\n"
    "  j1 = s32[] add(j, one)\n"
    "  h = f32[8] get-tuple-element(b), index=1\n"
    "  wts = f32[8] get-tuple-element(b), index=2\n"
    "  t = f32[8] exponential(h)\n"
    "  m = f32[8] multiply(t, wts)\n"
    "  ROOT res = (s32[], f32[8], f32[8]) tuple(j1, m, wts)\n"
    "}\n"
    "ENTRY e {\n"
    "  W = f32[8] parameter(1)\n"
    "  x = f32[8] parameter(0)\n"
    "  z = s32[] constant(0)\n"
    "  x2 = f32[8] negate(x)\n"
    "  init = (s32[], f32[8], f32[8]) tuple(z, x2, W)\n"
    "  w = (s32[], f32[8], f32[8]) while(init), condition=cond, body=body, "
    "backend_config={\"known_trip_count\":{\"n\":\"3\"}}\n"
    "  hout = f32[8] get-tuple-element(w), index=1\n"
    "  ROOT r = f32[8] add(hout, x2)\n"
    "}\n";

static void expect_buffer(const mb_workload *w, const char *name, int64_t size, int32_t start,
                          int32_t end) {
  const mb_buffer *b = buffer(w, name);
  if (b->size != size || b->start != start || b->end != end)
    fail_msg("buffer %s: size %lld, live [%d, %d]; expected %lld, [%d, %d]", name,
             (long long)b->size, b->start, b->end, (long long)size, start, end);
}

static void expect_use(const mb_workload *w, const char *buf, const char *op, int64_t read,
                       int64_t written) {
  const mb_use *u = use_of(w, buf, op);
  if (!u) fail_msg("no use of %s by %s", buf, op);
  if (u->bytes_read != read || u->bytes_written != written)
    fail_msg("use of %s by %s: read %lld, written %lld; expected %lld, %lld", buf, op,
             (long long)u->bytes_read, (long long)u->bytes_written, (long long)read,
             (long long)written);
}

static void test_loop_inlining(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(SCAN_MODULE, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  /* ops: x2 0, w 1, cond/lt 2, body/j1 3, body/t 4, body/m 5, r 6 */
  const char *ops[] = {"x2", "w", "cond/lt", "body/j1", "body/t", "body/m", "r"};
  assert_int_equal(w->n_ops, 7);
  for (int i = 0; i < 7; i++) assert_string_equal(w->ops[i].name, ops[i]);
  /* FLOPs as often as each runs: compare 4 x 1; add 3 x 1, exp and multiply 3 x 8 */
  const double flops[] = {8, 0, 4, 3, 24, 24, 8};
  for (int i = 0; i < 7; i++) assert_true(w->ops[i].flops == flops[i]);
  assert_true(rep.total_flops == 71 && rep.loop_flops == 0);
  assert_int_equal(rep.n_loops, 1);
  assert_int_equal(rep.n_inlined_loops, 1);
  /* buffers: no w#2 (the weights pass through: their state is W itself), no buffer of the
   * body's results j1 and m (written into the state w#0 and w#1) */
  assert_int_equal(w->n_buffers, 11);
  assert_int_equal(mb_workload_find_buffer(w, "w#2"), -1);
  assert_int_equal(mb_workload_find_buffer(w, "body/j1"), -1);
  assert_int_equal(mb_workload_find_buffer(w, "body/m"), -1);
  expect_buffer(w, "x", 32, 0, 0);
  expect_buffer(w, "W", 32, 0, 5); /* read in the body: to the loop's end */
  expect_buffer(w, "z", 4, 0, 1);
  expect_buffer(w, "x2", 32, 0, 6);
  expect_buffer(w, "w#0", 4, 1, 5); /* the counter: to the loop's end */
  expect_buffer(w, "w#1", 32, 1, 6);
  expect_buffer(w, "cond/n", 4, 0, 5); /* a constant read in the loop */
  expect_buffer(w, "cond/lt", 1, 2, 2);
  expect_buffer(w, "body/one", 4, 0, 5);
  expect_buffer(w, "body/t", 32, 4, 5); /* inside the body: one run's range */
  expect_buffer(w, "r", 32, 6, 6);
  /* the while copies in the changed state (z, x2), not the weights */
  expect_use(w, "z", "w", 4, 0);
  expect_use(w, "x2", "w", 32, 0);
  expect_use(w, "w#0", "w", 0, 4);
  expect_use(w, "w#1", "w", 0, 32);
  assert_null(use_of(w, "W", "w"));
  /* the condition 4 times, the body 3 times; results written in place */
  expect_use(w, "w#0", "cond/lt", 16, 0);
  expect_use(w, "cond/n", "cond/lt", 16, 0);
  expect_use(w, "cond/lt", "cond/lt", 0, 4);
  expect_use(w, "w#0", "body/j1", 12, 12);
  expect_use(w, "w#1", "body/t", 96, 0);
  expect_use(w, "body/t", "body/t", 0, 96);
  expect_use(w, "body/t", "body/m", 96, 0);
  expect_use(w, "W", "body/m", 96, 0);
  expect_use(w, "w#1", "body/m", 0, 96);
  expect_use(w, "w#1", "r", 32, 0);
  expect_use(w, "x2", "r", 32, 0);
  assert_true(buffer(w, "W")->pinned && buffer(w, "r")->pinned && !buffer(w, "w#1")->pinned);
  mb_workload_free(w);

  /* with fusion: t into m and the scalar constants into their readers in the loop; nothing
   * fuses into the while or across the loop's edge, and no result written into the state */
  w = import_str(SCAN_MODULE, true, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(rep.n_fused, 3);
  assert_int_equal(w->n_ops, 6); /* x2, w, cond/lt, body/j1, body/m, r */
  assert_true(w->ops[4].flops == 48);
  assert_int_equal(mb_workload_find_buffer(w, "body/t"), -1);
  expect_use(w, "w#1", "body/m", 96, 96);
  mb_workload_free(w);

  /* an unknown trip count: condition and body once each; the loops-as-ops import keeps the
   * loop one op, its FLOPs the loop's */
  char text[4096];
  const char *cfg = strstr(SCAN_MODULE, ", backend_config");
  snprintf(text, sizeof text, "%.*s\n%s", (int)(cfg - SCAN_MODULE), SCAN_MODULE,
           strstr(cfg, "\n") + 1);
  w = import_str(text, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_true(w->ops[2].flops == 1 && w->ops[5].flops == 8);
  expect_use(w, "w#1", "body/m", 0, 32);
  assert_int_equal(rep.n_counted_loops, 0);
  mb_workload_free(w);
  w = import_loops_as_ops(SCAN_MODULE, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(w->n_ops, 3); /* x2, w, r */
  assert_true(w->ops[1].flops == 4 + 3 * 17 && rep.loop_flops == 55);
  assert_int_equal(rep.n_inlined_loops, 0);
  mb_workload_free(w);
}

/* Loops that are not inlined (a body of two parameters, shapes that do not match) stay one op;
 * a body or condition inlined twice gets "@2" names; a loop whose body holds itself is an
 * error either way. */
static void test_loop_inlining_limits(void **state) {
  (void)state;
  const char *text =
      "HloModule two\n"
      "cond {\n  c = f32[4] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
      "body {\n  b = f32[4] parameter(0)\n  ROOT n = f32[4] negate(b)\n}\n"
      "odd {\n  b = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n  ROOT n = f32[4] "
      "negate(b)\n}\n"
      "ENTRY e {\n  p = f32[4] parameter(0)\n"
      "  w1 = f32[4] while(p), condition=cond, body=body\n"
      "  w2 = f32[4] while(w1), condition=cond, body=body\n"
      "  w3 = f32[4] while(w2), condition=cond, body=odd\n"
      "  ROOT r = f32[4] negate(w3)\n}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, true, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  /* w1, body/n, w2, body/n@2, w3 (one op: its body has two parameters), r */
  const char *ops[] = {"w1", "body/n", "w2", "body/n@2", "w3", "r"};
  assert_int_equal(w->n_ops, 6);
  for (int i = 0; i < 6; i++) assert_string_equal(w->ops[i].name, ops[i]);
  assert_int_equal(rep.n_loops, 3);
  assert_int_equal(rep.n_inlined_loops, 2);
  assert_true(rep.loop_flops == 4 && rep.total_flops == 16);
  /* each body's negate writes its loop's state; w1's state is copied in from p */
  expect_use(w, "w1", "body/n", 16, 16);
  expect_use(w, "p", "w1", 16, 0);
  mb_workload_free(w);
  /* a body that swaps two elements of its state computes nothing: both state buffers are
   * copied in and neither is merged into the other */
  w = import_str(
      "HloModule swap\n"
      "cond {\n  c = (f32[4], f32[4]) parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
      "body {\n  b = (f32[4], f32[4]) parameter(0)\n"
      "  x = f32[4] get-tuple-element(b), index=0\n"
      "  y = f32[4] get-tuple-element(b), index=1\n"
      "  ROOT s = (f32[4], f32[4]) tuple(y, x)\n}\n"
      "ENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
      "  i = (f32[4], f32[4]) tuple(p, q)\n"
      "  w = (f32[4], f32[4]) while(i), condition=cond, body=body\n"
      "  ROOT r = f32[4] get-tuple-element(w), index=0\n}\n",
      true, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  expect_use(w, "w#0", "w", 0, 16);
  expect_use(w, "w#1", "w", 0, 16);
  expect_use(w, "p", "w", 16, 0);
  expect_use(w, "q", "w", 16, 0);
  mb_workload_free(w);
  /* more loops that stay one op: a body whose one parameter is numbered 1, and (first in the
   * module, so that its first parameter is the module's instruction 0) one with two
   * parameters numbered 0 */
  w = import_str(
      "HloModule notinlined\n"
      "dup {\n  b = f32[4] parameter(0)\n  q = f32[4] parameter(0)\n"
      "  ROOT n = f32[4] negate(b)\n}\n"
      "cond {\n  c = f32[4] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
      "one {\n  b = f32[4] parameter(1)\n  ROOT n = f32[4] negate(b)\n}\n"
      "ENTRY e {\n  p = f32[4] parameter(0)\n"
      "  w1 = f32[4] while(p), condition=cond, body=one\n"
      "  ROOT w2 = f32[4] while(w1), condition=cond, body=dup\n}\n",
      true, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(w->n_ops, 2);
  assert_int_equal(rep.n_inlined_loops, 0);
  mb_workload_free(w);
  /* body= before condition=; a state element the body writes and nothing reads lives to the
   * loop's end all the same (the next run writes it again); a state element whose result in
   * the body is an empty array (a body that does not fit its state) keeps its copy; the
   * program's output includes the first parameter */
  w = import_str(
      "HloModule order\n"
      "cond {\n  c = (f32[4], f32[4], f32[2]) parameter(0)\n"
      "  ROOT t = pred[] constant(true)\n}\n"
      "body {\n  b = (f32[4], f32[4], f32[2]) parameter(0)\n"
      "  a = f32[4] get-tuple-element(b), index=0\n  n = f32[4] negate(a)\n"
      "  z = f32[0] constant({})\n"
      "  ROOT s = (f32[4], f32[4], f32[0]) tuple(a, n, z)\n}\n"
      "ENTRY e {\n  q = f32[2] parameter(1)\n  p = f32[4] parameter(0)\n"
      "  i = (f32[4], f32[4], f32[2]) tuple(p, p, q)\n"
      "  w = (f32[4], f32[4], f32[2]) while(i), body=body, condition=cond\n"
      "  x = f32[4] get-tuple-element(w), index=0\n  y = f32[4] negate(x)\n"
      "  ROOT r = (f32[4], f32[2]) tuple(y, q)\n}\n",
      true, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  /* ops: w 0, body/n 1, y 2 (the condition computes nothing) */
  assert_int_equal(w->n_ops, 3);
  assert_string_equal(w->ops[1].name, "body/n");
  expect_use(w, "w#1", "body/n", 0, 16);
  expect_buffer(w, "w#1", 16, 0, 1);
  expect_use(w, "q", "w", 8, 0);
  expect_use(w, "w#2", "w", 0, 8);
  assert_int_equal(buffer(w, "q")->end, 2); /* an output: to the end */
  mb_workload_free(w);
  /* trip counts multiply to at most 2^40 runs: a condition run 2^40 times imports, one more
   * is refused */
  for (int more = 0; more <= 1; more++) {
    char big[1024];
    snprintf(big, sizeof big,
             "HloModule big\n"
             "cond {\n  c = f32[4] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
             "body {\n  b = f32[4] parameter(0)\n  ROOT n = f32[4] negate(b)\n}\n"
             "ENTRY e {\n  p = f32[4] parameter(0)\n"
             "  ROOT w = f32[4] while(p), condition=cond, body=body, "
             "backend_config={\"known_trip_count\":{\"n\":\"%lld\"}}\n}\n",
             (1ll << 40) - 1 + more);
    w = import_str(big, true, &rep, &err);
    if (more) {
      assert_null(w);
      assert_string_equal(err.message,
                          "t.hlo:12: while 'w': expected the trip counts of its "
                          "loops to multiply to at most 1099511627776 runs");
    } else {
      if (!w) fail_msg("%s", err.message);
      expect_use(w, "w", "body/n", 16 * ((1ll << 40) - 1), 16 * ((1ll << 40) - 1));
      mb_workload_free(w);
    }
  }
  /* a body's bytes times its runs must fit in 63 bits: 2^24 bytes 2^40 - 1 times do not */
  char huge[1024];
  snprintf(huge, sizeof huge,
           "HloModule huge\n"
           "cond {\n  c = f32[4194304] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
           "body {\n  b = f32[4194304] parameter(0)\n  ROOT n = f32[4194304] negate(b)\n}\n"
           "ENTRY e {\n  p = f32[4194304] parameter(0)\n"
           "  ROOT w = f32[4194304] while(p), condition=cond, body=body, "
           "backend_config={\"known_trip_count\":{\"n\":\"%lld\"}}\n}\n",
           (1ll << 40) - 1);
  expect_error(huge,
               "t.hlo:8: 'body/n': expected its bytes times its 1099511627775 runs to fit "
               "in 63 bits");
  /* a loop whose body is the computation holding it */
  expect_error(
      "HloModule self\n"
      "cond {\n  c = f32[4] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n"
      "body {\n  b = f32[4] parameter(0)\n"
      "  ROOT w = f32[4] while(b), condition=cond, body=body\n}\n"
      "ENTRY e {\n  p = f32[4] parameter(0)\n"
      "  ROOT w = f32[4] while(p), condition=cond, body=body\n}\n",
      "t.hlo:6: computation 'body' calls itself (directly or through others)");
}

/* a select-and-scatter's select= computation */
#define GE_COMPUTATION                                 \
  "%ge (a: f32[], b: f32[]) -> pred[] {\n"             \
  "  %a = f32[] parameter(0)\n"                        \
  "  %b = f32[] parameter(1)\n"                        \
  "  ROOT %g = pred[] compare(%a, %b), direction=GE\n" \
  "}\n"

/* select-and-scatter (a max-pool's gradient): per element of the source (operand 1), the select
 * computation window - 1 times and the scatter computation once, as XLA's cost analysis
 * counts it; the window, source and computations are given by hand here. */
/* Calls are inlined (datasets/HLO_IMPORT.md, "Calls"): the callee's instructions take the call's
 * place in the schedule, its parameters being the call's operands and the call's value its
 * root's, as XLA's CallInliner leaves a program. */
static const char *CALL_MODULE =
    "HloModule calls\n"
    "layer {\n"
    "  x = f32[8] parameter(0)\n"
    "  w = f32[8] parameter(1)\n"
    "  m = f32[8] multiply(x, w)\n"
    "  ROOT t = f32[8] tanh(m)\n"
    "}\n"
    "pair {\n"
    "  b = f32[4] parameter(1)\n"
    "  a = f32[8] parameter(0)\n"
    "  n = f32[4] negate(b)\n"
    "  ROOT r = (f32[8], f32[4]) tuple(a, n)\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[8] parameter(0)\n"
    "  w = f32[8] parameter(1)\n"
    "  v = f32[4] parameter(2)\n"
    "  h1 = f32[8] call(x, w), to_apply=layer\n"
    "  h2 = f32[8] call(h1, w), to_apply=layer\n"
    "  p = (f32[8], f32[4]) call(h2, v), to_apply=pair\n"
    "  q = f32[8] get-tuple-element(p), index=0\n"
    "  s = f32[4] get-tuple-element(p), index=1\n"
    "  ROOT o = (f32[8], f32[4]) tuple(q, s)\n"
    "}\n";

static void test_call_inlining(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(CALL_MODULE, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  const char *ops[] = {"layer/m", "layer/t", "layer/m@2", "layer/t@2", "pair/n"};
  assert_int_equal(w->n_ops, 5);
  for (int i = 0; i < 5; i++) assert_string_equal(w->ops[i].name, ops[i]);
  assert_int_equal(rep.n_inlined_calls, 3);
  assert_true(op_flops(w, "layer/m") == 8 && op_flops(w, "layer/t@2") == 8 &&
              op_flops(w, "pair/n") == 4);
  assert_true(rep.total_flops == 36);
  /* the calls define nothing: their values are their callees' roots' buffers (the pair's
   * element 0 is its parameter, h2's buffer), and its parameters are the call's operands */
  assert_int_equal(w->n_buffers, 3 + 5);
  assert_true(mb_workload_find_buffer(w, "h1") < 0 && mb_workload_find_buffer(w, "p#0") < 0);
  expect_buffer(w, "x", 32, 0, 0);
  expect_buffer(w, "w", 32, 0, 2); /* read by both layers */
  expect_buffer(w, "v", 16, 0, 4);
  expect_buffer(w, "layer/m", 32, 0, 1);
  expect_buffer(w, "layer/t", 32, 1, 2);
  expect_buffer(w, "layer/t@2", 32, 3, 4); /* an output, through the pair */
  expect_buffer(w, "pair/n", 16, 4, 4);
  assert_true(buffer(w, "layer/t@2")->pinned && buffer(w, "pair/n")->pinned);
  expect_use(w, "x", "layer/m", 32, 0);
  expect_use(w, "w", "layer/m@2", 32, 0);
  expect_use(w, "layer/t", "layer/m@2", 32, 0);
  expect_use(w, "v", "pair/n", 16, 0);
  expect_use(w, "pair/n", "pair/n", 0, 16);
  mb_workload_free(w);

  /* fusion sees through calls, as XLA fuses after inlining: the first layer's multiply and
   * tanh and the second's multiply all into the second's tanh (each read of w once) */
  w = import_str(CALL_MODULE, true, &rep, &err);
  if (!w) fail_msg("fused: %s", err.message);
  assert_int_equal(w->n_ops, 2);
  assert_true(op_flops(w, "layer/t@2") == 32 && op_flops(w, "pair/n") == 4);
  expect_use(w, "x", "layer/t@2", 32, 0);
  expect_use(w, "w", "layer/t@2", 32, 0);
  mb_workload_free(w);

  /* a call in a loop's body runs as often as the body, and its root's value is written into
   * the loop's state; a call that is not in XLA's form (its callee's root another shape, a
   * parameter numbered twice, fewer parameters than operands, or a parameter number past its
   * operands) stays one op with its callee's FLOPs */
  const char *text =
      "HloModule loopcall\n"
      "step {\n"
      "  h = f32[8] parameter(0)\n"
      "  ROOT e = f32[8] exponential(h)\n"
      "}\n"
      "two {\n"
      "  h = f32[8] parameter(0)\n"
      "  e = f32[8] exponential(h)\n"
      "  ROOT r = (f32[8], f32[8]) tuple(e, e)\n"
      "}\n"
      "twice {\n"
      "  a = f32[8] parameter(0)\n"
      "  b = f32[8] parameter(0)\n"
      "  ROOT s = f32[8] add(a, b)\n"
      "}\n"
      "gap {\n"
      "  a = f32[8] parameter(1)\n"
      "  ROOT s = f32[8] negate(a)\n"
      "}\n"
      "cond {\n"
      "  c = (s32[], f32[8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(c), index=0\n"
      "  n = s32[] constant(3)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n"
      "}\n"
      "body {\n"
      "  b = (s32[], f32[8]) parameter(0)\n"
      "  j = s32[] get-tuple-element(b), index=0\n"
      "  h = f32[8] get-tuple-element(b), index=1\n"
      "  one = s32[] constant(1)\n"
      "  j1 = s32[] add(j, one)\n"
      "  e = f32[8] call(h), to_apply=step\n"
      "  ROOT res = (s32[], f32[8]) tuple(j1, e)\n"
      "}\n"
      "ENTRY main {\n"
      "  x = f32[8] parameter(0)\n"
      "  z = s32[] constant(0)\n"
      "  init = (s32[], f32[8]) tuple(z, x)\n"
      "  w = (s32[], f32[8]) while(init), condition=cond, body=body, "
      "backend_config={\"known_trip_count\":{\"n\":\"3\"}}\n"
      "  y = f32[8] get-tuple-element(w), index=1\n"
      "  u = f32[8] call(y), to_apply=two\n"
      "  d = f32[8] call(y, y), to_apply=twice\n"
      "  f = f32[8] call(y, y), to_apply=step\n"
      "  g = f32[8] call(y), to_apply=gap\n"
      "  ROOT o = (f32[8], f32[8], f32[8], f32[8]) tuple(u, d, f, g)\n"
      "}\n";
  w = import_str(text, false, &rep, &err);
  if (!w) fail_msg("loop: %s", err.message);
  assert_int_equal(rep.n_inlined_calls, 1);
  assert_int_equal(rep.n_inlined_loops, 1);
  assert_true(op_flops(w, "step/e") == 24); /* 3 runs x 8 */
  assert_true(mb_workload_find_buffer(w, "step/e") < 0);
  expect_use(w, "w#1", "step/e", 3 * 32, 3 * 32);
  assert_true(op_flops(w, "u") == 8 && op_flops(w, "d") == 8 && op_flops(w, "f") == 8 &&
              op_flops(w, "g") == 8);
  assert_int_equal(buffer(w, "u")->size, 32);
  mb_workload_free(w);
}

/* Conditionals are inlined as their most expensive branch (datasets/HLO_IMPORT.md, "Calls and
 * conditionals"): its instructions take the conditional's place, its parameter being the
 * branch's operand and the conditional's value its root's. */
static const char *BRANCHES =
    "both {\n"
    "  t = (f32[8], f32[8]) parameter(0)\n"
    "  a = f32[8] get-tuple-element(t), index=0\n"
    "  b = f32[8] get-tuple-element(t), index=1\n"
    "  ROOT s = f32[8] add(a, b)\n"
    "}\n"
    "cheap {\n"
    "  p = f32[8] parameter(0)\n"
    "  ROOT n = f32[8] negate(p)\n"
    "}\n"
    "dear {\n"
    "  q = f32[8] parameter(0)\n"
    "  e = f32[8] exponential(q)\n"
    "  ROOT m = f32[8] multiply(e, q)\n"
    "}\n"
    "same {\n"
    "  r = f32[8] parameter(0)\n"
    "  ROOT s = f32[8] sine(r)\n"
    "}\n"
    "lc {\n"
    "  c = f32[8] parameter(0)\n"
    "  ROOT t = pred[] constant(true)\n"
    "}\n"
    "lb {\n"
    "  b = f32[8] parameter(0)\n"
    "  ROOT k = f32[8] negate(b)\n"
    "}\n"
    "looping {\n"
    "  l = f32[8] parameter(0)\n"
    "  ROOT w = f32[8] while(l), condition=lc, body=lb, "
    "backend_config={\"known_trip_count\":{\"n\":\"%d\"}}\n"
    "}\n";

static mb_workload *import_with_branches(const char *entry, int trips, bool fusion,
                                         mb_hlo_report *rep, mb_error *err) {
  char text[4096];
  int k = snprintf(text, sizeof text, "HloModule conds\n");
  k += snprintf(text + k, sizeof text - (size_t)k, BRANCHES, trips);
  snprintf(text + k, sizeof text - (size_t)k, "ENTRY main {\n%s}\n", entry);
  return import_str(text, fusion, rep, err);
}

static void test_conditional_inlining(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hlo_report rep;
  /* branch k takes operand k + 1: dear (exp + multiply, 16 FLOPs) is the most expensive */
  const char *indexed =
      "  i = s32[] parameter(0)\n"
      "  a = f32[8] parameter(1)\n"
      "  b = f32[8] parameter(2)\n"
      "  c = f32[8] parameter(3)\n"
      "  ROOT x = f32[8] conditional(i, a, b, c), branch_computations={cheap, dear, same}\n";
  mb_workload *w = import_with_branches(indexed, 1, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(w->n_ops, 2);
  assert_string_equal(w->ops[0].name, "dear/e");
  assert_string_equal(w->ops[1].name, "dear/m");
  assert_true(rep.total_flops == 16);
  assert_int_equal(rep.n_inlined_conditionals, 1);
  expect_use(w, "b", "dear/e", 32, 0);
  expect_use(w, "b", "dear/m", 32, 0);
  expect_buffer(w, "b", 32, 0, 1);
  expect_buffer(w, "a", 32, 0, 0); /* the other branches' operands: read by nothing */
  assert_null(use_of(w, "a", "dear/e"));
  expect_buffer(w, "dear/m", 32, 1, 1);
  assert_true(buffer(w, "dear/m")->pinned); /* the conditional's value: the program's output */
  assert_true(mb_workload_find_buffer(w, "x") < 0);
  mb_workload_free(w);

  /* one branch: inlined too */
  const char *single =
      "  i = s32[] parameter(0)\n"
      "  a = f32[8] parameter(1)\n"
      "  ROOT x = f32[8] conditional(i, a), branch_computations={cheap}\n";
  w = import_with_branches(single, 1, false, &rep, &err);
  if (!w) fail_msg("single: %s", err.message);
  assert_int_equal(rep.n_inlined_conditionals, 1);
  assert_string_equal(w->ops[0].name, "cheap/n");
  mb_workload_free(w);

  /* branches of different operands, each matched with its own: a tuple for the second */
  const char *mixed =
      "  i = s32[] parameter(0)\n"
      "  a = f32[8] parameter(1)\n"
      "  t = (f32[8], f32[8]) tuple(a, a)\n"
      "  ROOT x = f32[8] conditional(i, a, t), branch_computations={cheap, both}\n";
  w = import_with_branches(mixed, 1, false, &rep, &err);
  if (!w) fail_msg("mixed: %s", err.message);
  assert_int_equal(rep.n_inlined_conditionals, 1);
  assert_string_equal(w->ops[0].name, "cheap/n"); /* 8 FLOPs each: the first */
  mb_workload_free(w);

  /* equal FLOPs: the first branch (true_computation) */
  const char *tie =
      "  i = pred[] parameter(0)\n"
      "  a = f32[8] parameter(1)\n"
      "  ROOT x = f32[8] conditional(i, a, a), true_computation=cheap, false_computation=same\n";
  w = import_with_branches(tie, 1, false, &rep, &err);
  if (!w) fail_msg("tie: %s", err.message);
  assert_int_equal(w->n_ops, 1);
  assert_string_equal(w->ops[0].name, "cheap/n");
  mb_workload_free(w);

  /* the looping branch, once it costs the most (4 runs of its body: 4 x 8 + 5 x 0 > 16), is
   * taken with its loop inlined; a conditional in a loop's body runs as often as the body */
  const char *looping =
      "  i = s32[] parameter(0)\n"
      "  a = f32[8] parameter(1)\n"
      "  ROOT x = f32[8] conditional(i, a, a), branch_computations={dear, looping}\n";
  w = import_with_branches(looping, 4, false, &rep, &err);
  if (!w) fail_msg("looping: %s", err.message);
  assert_int_equal(w->n_ops, 2); /* the while and its body's negate */
  assert_string_equal(w->ops[0].name, "looping/w");
  assert_string_equal(w->ops[1].name, "lb/k");
  assert_true(w->ops[1].flops == 32);
  assert_int_equal(rep.n_loops, 1);
  assert_int_equal(rep.n_counted_loops, 1);
  assert_int_equal(rep.n_inlined_loops, 1);
  mb_workload_free(w);
  w = import_with_branches(looping, 1, false, &rep, &err);
  if (!w) fail_msg("looping once: %s", err.message);
  assert_string_equal(w->ops[0].name, "dear/e"); /* 8 + 2 x 0 < 16 */
  assert_int_equal(rep.n_loops, 0); /* the while of the branch not taken is not in the program */
  mb_workload_free(w);

  /* not in XLA's form (fewer operands than branches; a branch's root of another shape): one op
   * with its most expensive branch's FLOPs, as before */
  const char *odd[] = {
      "  i = s32[] parameter(0)\n"
      "  a = f32[8] parameter(1)\n"
      "  ROOT x = f32[8] conditional(i, a), branch_computations={cheap, dear}\n",
      "  i = s32[] parameter(0)\n"
      "  a = f32[8] parameter(1)\n"
      "  ROOT x = (f32[8], f32[8]) conditional(i, a, a), branch_computations={cheap, dear}\n",
  };
  for (int k = 0; k < 2; k++) {
    w = import_with_branches(odd[k], 1, false, &rep, &err);
    if (!w) fail_msg("odd %d: %s", k, err.message);
    assert_int_equal(w->n_ops, 1);
    assert_string_equal(w->ops[0].name, "x");
    assert_true(w->ops[0].flops == 16);
    assert_int_equal(rep.n_inlined_conditionals, 0);
    mb_workload_free(w);
  }
}

/* Sliced reads (datasets/HLO_IMPORT.md, "Uses and bytes"), as XLA's cost analysis counts them:
 * a dynamic-slice reads its slice of its operand, a dynamic-update-slice that updates a loop's
 * state in place reads nothing of it and writes its update's bytes, and a fusion reads of a
 * parameter that only dynamic-slices use the slices they take. Here a JAX-style scan: each of
 * 4 runs slices one layer's row of the stacked weights and writes one row of the stacked
 * outputs. */
static void test_sliced_reads(void **state) {
  (void)state;
  const char *scan =
      "HloModule slices\n"
      "cond {\n"
      "  c = (s32[], f32[8], f32[4,8], f32[4,8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(c), index=0\n"
      "  n = s32[] constant(4)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n"
      "}\n"
      "body {\n"
      "  b = (s32[], f32[8], f32[4,8], f32[4,8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(b), index=0\n"
      "  h = f32[8] get-tuple-element(b), index=1\n"
      "  ws = f32[4,8] get-tuple-element(b), index=2\n"
      "  ys = f32[4,8] get-tuple-element(b), index=3\n"
      "  z = s32[] constant(0)\n"
      "  wi = f32[1,8] dynamic-slice(ws, i, z), dynamic_slice_sizes={1,8}\n"
      "  w = f32[8] reshape(wi)\n"
      "  m = f32[8] multiply(h, w)\n"
      "  m2 = f32[1,8] reshape(m)\n"
      "  ys1 = f32[4,8] dynamic-update-slice(ys, m2, i, z)\n"
      "  one = s32[] constant(1)\n"
      "  i1 = s32[] add(i, one)\n"
      "  ROOT r = (s32[], f32[8], f32[4,8], f32[4,8]) tuple(i1, m, ws, ys1)\n"
      "}\n"
      "ENTRY main {\n"
      "  x = f32[8] parameter(0)\n"
      "  ws = f32[4,8] parameter(1)\n"
      "  ys0 = f32[4,8] parameter(2)\n"
      "  z = s32[] constant(0)\n"
      "  init = (s32[], f32[8], f32[4,8], f32[4,8]) tuple(z, x, ws, ys0)\n"
      "  l = (s32[], f32[8], f32[4,8], f32[4,8]) while(init), condition=cond, body=body, "
      "backend_config={\"known_trip_count\":{\"n\":\"4\"}}\n"
      "  o = f32[4,8] get-tuple-element(l), index=3\n"
      "  r0 = f32[1,8] reshape(x)\n"
      "  u = f32[4,8] dynamic-update-slice(ys0, r0, z, z)\n"
      "  ROOT t = (f32[4,8], f32[4,8]) tuple(o, u)\n"
      "}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(scan, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  /* the slice: one 32-byte row of the 128-byte weights per run, and the two indices */
  expect_use(w, "ws", "body/wi", 4 * 32, 0);
  expect_use(w, "l#0", "body/wi", 4 * 4, 0);
  expect_use(w, "body/wi", "body/wi", 0, 4 * 32);
  /* the update, in place in the loop's state l#3: the row it writes, the row it reads (m, in
   * state l#1), nothing of the rest */
  expect_use(w, "l#3", "body/ys1", 0, 4 * 32);
  expect_use(w, "l#1", "body/ys1", 4 * 32, 0);
  assert_true(mb_workload_find_buffer(w, "body/ys1") < 0);
  /* outside a loop the update is a copy: the whole operand read, the whole result written */
  assert_int_equal(rep.n_updates_in_place, 1);
  assert_int_equal(rep.n_updates_copied, 1);
  expect_use(w, "ys0", "u", 128, 0);
  expect_use(w, "u", "u", 0, 128);
  mb_workload_free(w);

  /* an update computed from the whole state by a producer fused into it reads the state whole,
   * in place or not */
  {
    char text[8192];
    const char *line = "  ys1 = f32[4,8] dynamic-update-slice(ys, m2, i, z)\n";
    const char *at = strstr(scan, line);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - scan), scan,
             "  nys = f32[4,8] negate(ys)\n"
             "  ys1 = f32[4,8] dynamic-update-slice(ys, nys, z, z)\n",
             at + strlen(line));
    w = import_str(text, true, &rep, &err);
    if (!w) fail_msg("fused producer: %s", err.message);
    assert_true(mb_workload_find_op(w, "body/nys") < 0); /* fused into the update */
    expect_use(w, "l#3", "body/ys1", 4 * 128, 4 * 128);
    mb_workload_free(w);
  }

  /* the update as XLA:TPU fuses it, in place too; a fusion that also reads the state in
   * another way, and one whose root is not an update, which are not */
  const char *fusions[] = {
      "fused_dus {\n"
      "  p0 = f32[4,8] parameter(0)\n"
      "  p1 = f32[1,8] parameter(1)\n"
      "  p2 = s32[] parameter(2)\n"
      "  z = s32[] constant(0)\n"
      "  ROOT d = f32[4,8] dynamic-update-slice(p0, p1, p2, z)\n"
      "}\n",
      "fused_dus {\n"
      "  p0 = f32[4,8] parameter(0)\n"
      "  p1 = f32[1,8] parameter(1)\n"
      "  p2 = s32[] parameter(2)\n"
      "  z = s32[] constant(0)\n"
      "  row = f32[1,8] dynamic-slice(p0, p2, z), dynamic_slice_sizes={1,8}\n"
      "  s = f32[1,8] add(p1, row)\n"
      "  ROOT d = f32[4,8] dynamic-update-slice(p0, s, p2, z)\n"
      "}\n",
      "fused_dus {\n"
      "  p0 = f32[4,8] parameter(0)\n"
      "  p1 = f32[1,8] parameter(1)\n"
      "  p2 = s32[] parameter(2)\n"
      "  b = f32[4,8] broadcast(p1), dimensions={0,1}\n"
      "  ROOT d = f32[4,8] add(p0, b)\n"
      "}\n",
  };
  /* (the last: the in-place fusion's computation called by a custom-call, which is not a
   * fusion) */
  for (int f = 0; f < 4; f++) {
    char text[8192];
    const char *at = strstr(scan, "  ys1 = f32[4,8] dynamic-update-slice(ys, m2, i, z)\n");
    const char *body = strstr(scan, "cond {");
    assert_non_null(at);
    assert_non_null(body);
    snprintf(text, sizeof text, "%.*s%s%.*s%s%s", (int)(body - scan), scan, fusions[f % 3],
             (int)(at - body), body,
             f < 3 ? "  ys1 = f32[4,8] fusion(ys, m2, i), kind=kLoop, calls=fused_dus\n"
                   : "  ys1 = f32[4,8] custom-call(ys, m2, i), custom_call_target=\"k\", "
                     "called_computations={fused_dus}\n",
             at + strlen("  ys1 = f32[4,8] dynamic-update-slice(ys, m2, i, z)\n"));
    w = import_str(text, false, &rep, &err);
    if (!w) fail_msg("fused update %d: %s", f, err.message);
    expect_use(w, "l#3", "body/ys1", f == 0 ? 0 : 4 * 128, f == 0 ? 4 * 32 : 4 * 128);
    expect_use(w, "l#1", "body/ys1", 4 * 32, 0);
    mb_workload_free(w);
  }

  const char *fused =
      "HloModule fslices\n"
      "fused_two {\n"
      "  p0 = f32[4,8] parameter(0)\n"
      "  p1 = s32[] parameter(1)\n"
      "  p2 = f32[4,8] parameter(2)\n"
      "  p3 = f32[4,8] parameter(3)\n"
      "  z = s32[] constant(0)\n"
      "  a = f32[1,8] dynamic-slice(p0, p1, z), dynamic_slice_sizes={1,8}\n"
      "  b = f32[1,8] dynamic-slice(p0, z, z), dynamic_slice_sizes={1,8}\n"
      "  c = f32[1,8] dynamic-slice(p2, p1, z), dynamic_slice_sizes={1,8}\n"
      "  n = f32[4,8] negate(p2)\n"
      "  s = f32[1,8] add(a, b)\n"
      "  ROOT t = (f32[1,8], f32[1,8], f32[4,8]) tuple(s, c, n)\n"
      "}\n"
      "ENTRY main {\n"
      "  ws = f32[4,8] parameter(0)\n"
      "  k = s32[] parameter(1)\n"
      "  ys = f32[4,8] parameter(2)\n"
      "  unused = f32[4,8] parameter(3)\n"
      "  f = (f32[1,8], f32[1,8], f32[4,8]) fusion(ws, k, ys, unused), kind=kLoop, "
      "calls=fused_two\n"
      "  g = (f32[1,8], f32[1,8], f32[4,8]) fusion(ws, k, ws, unused), kind=kLoop, "
      "calls=fused_two\n"
      "  ROOT o = ((f32[1,8], f32[1,8], f32[4,8]), (f32[1,8], f32[1,8], f32[4,8])) tuple(f, g)\n"
      "}\n";
  w = import_str(fused, false, &rep, &err);
  if (!w) fail_msg("fused: %s", err.message);
  /* p0: two slices; p2: a slice and a negate, so read whole; p3, which nothing in the fusion
   * uses: whole, as any operand; ws passed as both p0 and p2: whole */
  expect_use(w, "ws", "f", 64, 0);
  expect_use(w, "k", "f", 4, 0);
  expect_use(w, "ys", "f", 128, 0);
  expect_use(w, "unused", "f", 128, 0);
  expect_use(w, "ws", "g", 128, 0);
  mb_workload_free(w);

  /* what a slice reads through a producer fused into it (its index, here) it reads whole */
  const char *through =
      "HloModule through\n"
      "ENTRY main {\n"
      "  ws = f32[4,8] parameter(0)\n"
      "  k = s32[] parameter(1)\n"
      "  k2 = s32[] add(k, k)\n"
      "  z = s32[] constant(0)\n"
      "  ROOT d = f32[1,8] dynamic-slice(ws, k2, z), dynamic_slice_sizes={1,8}\n"
      "}\n";
  w = import_str(through, true, &rep, &err);
  if (!w) fail_msg("through: %s", err.message);
  assert_int_equal(w->n_ops, 1);
  expect_use(w, "ws", "d", 32, 0);
  expect_use(w, "k", "d", 4, 0);
  mb_workload_free(w);
}

/* A slice and a gather read their result's bytes of operand 0, as XLA's cost analysis counts
 * them (HandleSlice, HandleGather): a gather's indices whole, and at most the operand's size;
 * in a fusion, slices of a parameter they alone read count as dynamic-slices do, and a gather
 * there reads its parameter whole (FusionParameterReadBytes). */
static void test_slice_and_gather_reads(void **state) {
  (void)state;
  const char *text =
      "HloModule sg\n"
      "fused_slices {\n"
      "  p0 = f32[4,8] parameter(0)\n"
      "  p1 = f32[100,8] parameter(1)\n"
      "  p2 = s32[5,1] parameter(2)\n"
      "  p3 = f32[4,8] parameter(3)\n"
      "  n3 = f32[4,8] negate(p3)\n"
      "  c = f32[1,8] slice(p3), slice={[0:1], [0:8]}\n"
      "  a = f32[1,8] slice(p0), slice={[0:1], [0:8]}\n"
      "  b = f32[2,8] slice(p0), slice={[2:4], [0:8]}\n"
      "  s = f32[1,8] add(a, a)\n"
      "  g = f32[5,8] gather(p1, p2), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n"
      "  ROOT t = (f32[1,8], f32[2,8], f32[5,8], f32[4,8], f32[1,8]) tuple(s, b, g, n3, c)\n"
      "}\n"
      "ENTRY main {\n"
      "  x = f32[4,8] parameter(0)\n"
      "  table = f32[100,8] parameter(1)\n"
      "  idx = s32[5,1] parameter(2)\n"
      "  small = f32[2,8] parameter(3)\n"
      "  many = s32[16,1] parameter(4)\n"
      "  small4 = f32[4,8] parameter(5)\n"
      "  row = f32[1,8] slice(x), slice={[1:2], [0:8]}\n"
      "  rows = f32[5,8] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n"
      "  more = f32[16,8] gather(small, many), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n"
      "  nx = f32[4,8] negate(x)\n"
      "  last = f32[1,8] slice(nx), slice={[3:4], [0:8]}\n"
      "  f = (f32[1,8], f32[2,8], f32[5,8], f32[4,8], f32[1,8]) fusion(x, table, idx, small4), "
      "kind=kLoop, calls=fused_slices\n"
      "  ROOT o = (f32[1,8], f32[5,8], f32[16,8], f32[1,8], (f32[1,8], f32[2,8], f32[5,8], "
      "f32[4,8], f32[1,8])) tuple(row, rows, more, last, f)\n"
      "}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, true, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(rep.n_unknown_attributes, 0);
  expect_use(w, "x", "row", 32, 0); /* one row of 4 */
  expect_use(w, "row", "row", 0, 32);
  expect_use(w, "table", "rows", 5 * 32, 0); /* 5 rows of 100 */
  expect_use(w, "idx", "rows", 20, 0);       /* the indices whole */
  expect_use(w, "small", "more", 64, 0);     /* 16 rows of a 2-row table: at most its size */
  expect_use(w, "many", "more", 64, 0);
  /* through the negate fused into it the slice reads x whole */
  assert_true(mb_workload_find_op(w, "nx") < 0);
  expect_use(w, "x", "last", 128, 0);
  /* the fusion: p0's two slices (1 + 2 rows), p1 gathered inside: whole */
  expect_use(w, "x", "f", 3 * 32, 0);
  expect_use(w, "table", "f", 3200, 0);
  expect_use(w, "idx", "f", 20, 0);
  /* p3, negated before it is sliced: whole */
  expect_use(w, "small4", "f", 128, 0);
  mb_workload_free(w);
}

/* A scatter of one operand that updates a loop's state in place reads and writes its updates'
 * bytes of that state, as XLA counts a scatter (HandleScatter: operand 0 and the result the
 * updates' size); outside a loop it is a copy, as a dynamic-update-slice there. */
static void test_scatter_in_place(void **state) {
  (void)state;
  const char *text =
      "HloModule sc\n"
      "add {\n"
      "  a = f32[] parameter(0)\n"
      "  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n"
      "}\n"
      "cond {\n"
      "  c = (s32[], f32[4,8], f32[1,8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(c), index=0\n"
      "  n = s32[] constant(3)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n"
      "}\n"
      "body {\n"
      "  b = (s32[], f32[4,8], f32[1,8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(b), index=0\n"
      "  ys = f32[4,8] get-tuple-element(b), index=1\n"
      "  u = f32[1,8] get-tuple-element(b), index=2\n"
      "  ix = s32[1,1] reshape(i)\n"
      "  ys1 = f32[4,8] scatter(ys, ix, u), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
      "  one = s32[] constant(1)\n"
      "  i1 = s32[] add(i, one)\n"
      "  ROOT r = (s32[], f32[4,8], f32[1,8]) tuple(i1, ys1, u)\n"
      "}\n"
      "ENTRY main {\n"
      "  ys0 = f32[4,8] parameter(0)\n"
      "  u0 = f32[1,8] parameter(1)\n"
      "  k = s32[1,1] parameter(2)\n"
      "  z = s32[] constant(0)\n"
      "  init = (s32[], f32[4,8], f32[1,8]) tuple(z, ys0, u0)\n"
      "  l = (s32[], f32[4,8], f32[1,8]) while(init), condition=cond, body=body, "
      "backend_config={\"known_trip_count\":{\"n\":\"3\"}}\n"
      "  o = f32[4,8] get-tuple-element(l), index=1\n"
      "  c = f32[4,8] scatter(ys0, k, u0), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
      "  ROOT t = (f32[4,8], f32[4,8]) tuple(o, c)\n"
      "}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(rep.n_unknown_attributes, 0);
  /* in the loop's state l#1: one 32-byte row read and written per run; the update (the state
   * the loop passes on unchanged: u0 itself) and the index (a reshape of the counter l#0) read
   * whole */
  expect_use(w, "l#1", "body/ys1", 3 * 32, 3 * 32);
  expect_use(w, "u0", "body/ys1", 3 * 32, 0);
  expect_use(w, "l#0", "body/ys1", 3 * 4, 0);
  assert_true(mb_workload_find_buffer(w, "body/ys1") < 0);
  /* outside a loop, a copy: the whole operand read, the whole result written */
  expect_use(w, "ys0", "c", 128, 0);
  expect_use(w, "c", "c", 0, 128);
  expect_use(w, "u0", "c", 32, 0);
  mb_workload_free(w);
}

/* The computations the update tests call: a scatter's combiner and an update fused as XLA:TPU
 * fuses it. */
#define UPDATE_COMPUTATIONS                                  \
  "add {\n"                                                  \
  "  a = f32[] parameter(0)\n"                               \
  "  b = f32[] parameter(1)\n"                               \
  "  ROOT s = f32[] add(a, b)\n"                             \
  "}\n"                                                      \
  "fused_dus {\n"                                            \
  "  p0 = f32[4,8] parameter(0)\n"                           \
  "  p1 = f32[1,8] parameter(1)\n"                           \
  "  z = s32[] constant(0)\n"                                \
  "  ROOT d = f32[4,8] dynamic-update-slice(p0, p1, z, z)\n" \
  "}\n"
/* A scatter's attributes: one row per index, combined by add. */
#define SCATTER_ROWS_BY(COMBINER)                                                        \
  "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, " \
  "index_vector_dim=1, to_apply=" COMBINER "\n"
#define SCATTER_ROW_ATTRIBUTES SCATTER_ROWS_BY("add")

/* An update outside a loop's state (a dynamic-update-slice, a scatter, a fusion rooted in a
 * dynamic-update-slice) updates its operand's buffer in place when XLA's buffer assignment can
 * share it: computed in the update's loop (or outside every loop), not a parameter, a constant
 * or an output, and read by nothing after the update. Else it is a copy. */
static void test_update_in_place_outside_loops(void **state) {
  (void)state;
  const char *head = "HloModule ip\n" UPDATE_COMPUTATIONS
                     "ENTRY main {\n"
                     "  p = f32[8,4] parameter(0)\n"
                     "  q = f32[1,8] parameter(1)\n"
                     "  i = s32[] parameter(2)\n"
                     "  z = s32[] constant(0)\n"
                     "  ix = s32[1,1] reshape(i)\n";
  const char *scatter = SCATTER_ROW_ATTRIBUTES;
  char text[4096];
  /* a chain of three updates of a transpose's buffer, then its last read */
  snprintf(text, sizeof text,
           "%s  t = f32[4,8] transpose(p), dimensions={1,0}\n"
           "  u = f32[4,8] dynamic-update-slice(t, q, i, z)\n"
           "  s = f32[4,8] scatter(u, ix, q), %s"
           "  f = f32[4,8] fusion(s, q), kind=kLoop, calls=fused_dus\n"
           "  ROOT n = f32[4,8] negate(f)\n}\n",
           head, scatter);
  mb_error err = {{0}};
  mb_hlo_report rep;
  for (int fusion = 0; fusion <= 1; fusion++) {
    mb_workload *w = import_str(text, fusion, &rep, &err);
    if (!w) fail_msg("chain: %s", err.message);
    assert_int_equal(w->n_ops, 5); /* t, u, s, f, n: nothing here is fused */
    assert_int_equal(rep.n_updates_in_place, 3);
    assert_int_equal(rep.n_updates_copied, 0);
    expect_buffer(w, "t", 128, 0, 4);
    assert_true(mb_workload_find_buffer(w, "u") < 0);
    assert_true(mb_workload_find_buffer(w, "s") < 0);
    assert_true(mb_workload_find_buffer(w, "f") < 0);
    expect_use(w, "t", "t", 0, 128);
    expect_use(w, "t", "u", 0, 32); /* writes its row, reads nothing of the rest */
    expect_use(w, "q", "u", 32, 0);
    expect_use(w, "t", "s", 32, 32); /* combines its row with what it replaces */
    expect_use(w, "i", "s", 4, 0);
    expect_use(w, "t", "f", 0, 32);
    expect_use(w, "t", "n", 128, 0);
    expect_use(w, "n", "n", 0, 128);
    mb_workload_free(w);
  }

  /* copies: the operand read after the update, an output, a parameter */
  const char *copies[] = {
      "  t = f32[4,8] transpose(p), dimensions={1,0}\n"
      "  u = f32[4,8] dynamic-update-slice(t, q, i, z)\n"
      "  ROOT a = f32[4,8] add(u, t)\n",
      "  t = f32[4,8] transpose(p), dimensions={1,0}\n"
      "  u = f32[4,8] dynamic-update-slice(t, q, i, z)\n"
      "  ROOT r = (f32[4,8], f32[4,8]) tuple(u, t)\n",
      ("  t = f32[4,8] parameter(3)\n"
       "  ROOT u = f32[4,8] dynamic-update-slice(t, q, i, z)\n"),
  };
  for (int k = 0; k < 3; k++) {
    snprintf(text, sizeof text, "%s%s}\n", head, copies[k]);
    mb_workload *w = import_str(text, false, &rep, &err);
    if (!w) fail_msg("copy %d: %s", k, err.message);
    assert_int_equal(rep.n_updates_in_place, 0);
    assert_int_equal(rep.n_updates_copied, 1);
    expect_use(w, "t", "u", 128, 0);
    expect_use(w, "u", "u", 0, 128);
    mb_workload_free(w);
  }

  /* the importer's first buffer (its first instruction's: an iota, not fused into the update
   * either), updated in place; and copied when read after the update, directly or through a
   * tuple */
  const char *first[] = {
      "  ROOT u = f32[4,8] dynamic-update-slice(t, q, i, z)\n",
      ("  u = f32[4,8] dynamic-update-slice(t, q, i, z)\n"
       "  ROOT a = f32[4,8] add(u, t)\n"),
      "  u = f32[4,8] dynamic-update-slice(t, q, i, z)\n"
      "  tp = (f32[1,8], f32[4,8]) tuple(q, t)\n"
      "  ROOT c = f32[4,8] custom-call(tp), custom_call_target=\"keep\"\n",
  };
  for (int k = 0; k < 3; k++) {
    snprintf(text, sizeof text,
             "HloModule first\nENTRY main {\n  t = f32[4,8] iota(), iota_dimension=0\n"
             "  q = f32[1,8] parameter(0)\n  i = s32[] parameter(1)\n  z = s32[] constant(0)\n"
             "%s}\n",
             first[k]);
    mb_workload *w = import_str(text, k == 0, &rep, &err); /* a copied iota would be fused */
    if (!w) fail_msg("first %d: %s", k, err.message);
    assert_int_equal(rep.n_updates_in_place, k == 0);
    assert_int_equal(rep.n_updates_copied, k != 0);
    expect_use(w, "t", "u", k == 0 ? 0 : 128, k == 0 ? 32 : 0);
    assert_true((mb_workload_find_buffer(w, "u") < 0) == (k == 0));
    mb_workload_free(w);
  }

  /* an elementwise producer updated in place stays a buffer: it is not fused into the update */
  snprintf(text, sizeof text,
           "%s  t = f32[4,8] parameter(3)\n"
           "  e = f32[4,8] exponential(t)\n"
           "  u = f32[4,8] dynamic-update-slice(e, q, i, z)\n"
           "  ROOT n = f32[4,8] negate(u)\n}\n",
           head);
  mb_workload *w = import_str(text, true, &rep, &err);
  if (!w) fail_msg("elementwise: %s", err.message);
  expect_use(w, "e", "e", 0, 128);
  expect_use(w, "e", "u", 0, 32);
  expect_use(w, "e", "n", 128, 0);
  assert_true(mb_workload_find_buffer(w, "u") < 0);
  mb_workload_free(w);

  /* in a loop's body: a buffer the body computes is updated in place, one computed before the
   * loop (read by every run) is copied */
  const char *loop =
      "HloModule ipl\n"
      "cond {\n"
      "  c = (s32[], f32[4,8], f32[4,8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(c), index=0\n"
      "  n = s32[] constant(3)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n"
      "}\n"
      "body {\n"
      "  b = (s32[], f32[4,8], f32[4,8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(b), index=0\n"
      "  t = f32[4,8] get-tuple-element(b), index=1\n"
      "  acc = f32[4,8] get-tuple-element(b), index=2\n"
      "  z = s32[] constant(0)\n"
      "  r = f32[1,8] slice(acc), slice={[0:1], [0:8]}\n"
      "  v = f32[4,8] dynamic-update-slice(t, r, i, z)\n"
      "  c = f32[4,8] copy(acc)\n"
      "  c2 = f32[4,8] dynamic-update-slice(c, r, i, z)\n"
      "  s = f32[4,8] add(v, c2)\n"
      "  one = s32[] constant(1)\n"
      "  i1 = s32[] add(i, one)\n"
      "  ROOT o = (s32[], f32[4,8], f32[4,8]) tuple(i1, t, s)\n"
      "}\n"
      "ENTRY main {\n"
      "  p = f32[4,8] parameter(0)\n"
      "  z = s32[] constant(0)\n"
      "  tt = f32[4,8] copy(p)\n"
      "  init = (s32[], f32[4,8], f32[4,8]) tuple(z, tt, p)\n"
      "  l = (s32[], f32[4,8], f32[4,8]) while(init), condition=cond, body=body, "
      "backend_config={\"known_trip_count\":{\"n\":\"3\"}}\n"
      "  ROOT g = f32[4,8] get-tuple-element(l), index=2\n"
      "}\n";
  w = import_str(loop, false, &rep, &err);
  if (!w) fail_msg("loop: %s", err.message);
  assert_int_equal(rep.n_inlined_loops, 1);
  assert_int_equal(rep.n_updates_in_place, 1); /* c2, once: the body is inlined once */
  assert_int_equal(rep.n_updates_copied, 1);   /* v */
  expect_use(w, "tt", "body/v", 3 * 128, 0);
  expect_use(w, "body/v", "body/v", 0, 3 * 128);
  expect_use(w, "body/c", "body/c2", 0, 3 * 32);
  assert_true(mb_workload_find_buffer(w, "body/c2") < 0);
  expect_use(w, "body/c", "body/s", 3 * 128, 0);
  mb_workload_free(w);
}

/* The computations and the start of the entry of the donation tests: parameters q (a row), i (an
 * index), c and d (two 4 x 8 arrays), e (a tuple whose element 1 is one), nt (one at shape index
 * {1,1}); each case adds its instructions. */
static const char DONATION_COMPUTATIONS[] = UPDATE_COMPUTATIONS
    "ENTRY main {\n"
    "  q = f32[1,8] parameter(0)\n"
    "  i = s32[] parameter(1)\n"
    "  c = f32[4,8] parameter(2)\n"
    "  d = f32[4,8] parameter(3)\n"
    "  e = (s32[], f32[4,8]) parameter(4)\n"
    "  nt = (s32[], (s32[], f32[4,8])) parameter(5)\n"
    "  z = s32[] constant(0)\n"
    "  ix = s32[1,1] reshape(i)\n";

static void donation_text(char *out, size_t n, const char *header, const char *body) {
  snprintf(out, n, "HloModule dn%s\n%s%s}\n", header, DONATION_COMPUTATIONS, body);
}

/* An entry parameter that the header donates to an output (input_output_alias, or buffer_donor:
 * any output of its size) is updated in place when the update's value is that output, itself or
 * through a chain of updates, and nothing reads the parameter after the update: XLA writes the
 * output into the donated buffer. Otherwise, and without a donation, the update is a copy. */
static void test_update_in_place_of_donated_parameters(void **state) {
  (void)state;
  const char *update_out0 =
      "  u = f32[4,8] dynamic-update-slice(c, q, i, z)\n"
      "  o = f32[4,8] iota(), iota_dimension=0\n"
      "  ROOT r = (f32[4,8], f32[4,8]) tuple(u, o)\n";
  const char *update_out1 =
      "  u = f32[4,8] dynamic-update-slice(c, q, i, z)\n"
      "  o = f32[4,8] iota(), iota_dimension=0\n"
      "  ROOT r = (f32[4,8], f32[4,8], f32[1,8]) tuple(o, u, q)\n";
  const char *scatter = SCATTER_ROW_ATTRIBUTES;
  char chain[1024];
  snprintf(chain, sizeof chain,
           "  u = f32[4,8] dynamic-update-slice(c, q, i, z)\n"
           "  s = f32[4,8] scatter(u, ix, q), %s"
           "  f = f32[4,8] fusion(s, q), kind=kLoop, calls=fused_dus\n"
           "  o = f32[4,8] iota(), iota_dimension=0\n"
           "  ROOT r = (f32[4,8], f32[4,8]) tuple(f, o)\n",
           scatter);
  const struct {
    const char *what, *header, *body, *updated; /* the buffer the update writes into */
    int in_place;                               /* updates in place, all into c (or e#1) */
    const char *copy; /* a copy's buffer: u's own (NULL), or the one donated to u ("d") */
  } cases[] = {
      {"must-alias", ", input_output_alias={ {0}: (2, {}, must-alias) }", update_out0, "c", 1,
       NULL},
      {"may-alias", ", input_output_alias={ {0}: (2, {}, may-alias) }", update_out0, "c", 1, NULL},
      {"no kind", ",input_output_alias={{0}:(2,{})}", update_out0, "c", 1, NULL},
      {"buffer donor", ", buffer_donor={ (2, {}) }", update_out0, "c", 1, NULL},
      {"a chain of three updates", ", input_output_alias={ {0}: (2, {}, must-alias) }", chain, "c",
       3, NULL},
      {"an element of a tuple parameter", ", input_output_alias={ {0}: (4, {1}, must-alias) }",
       "  g = f32[4,8] get-tuple-element(e), index=1\n"
       "  u = f32[4,8] dynamic-update-slice(g, q, i, z)\n"
       "  o = f32[4,8] iota(), iota_dimension=0\n"
       "  ROOT r = (f32[4,8], f32[4,8]) tuple(u, o)\n",
       "e#1", 1, NULL},
      {"the root itself", ", input_output_alias={ {}: (2, {}, may-alias) }",
       "  ROOT u = f32[4,8] dynamic-update-slice(c, q, i, z)\n", "c", 1, NULL},
      {"output 1", ", input_output_alias={ {1}: (2, {}, must-alias) }", update_out1, "c", 1, NULL},
      {"shape index {1,1} of a nested tuple", ", input_output_alias={ {0}: (5, {1,1}) }",
       "  g = (s32[], f32[4,8]) get-tuple-element(nt), index=1\n"
       "  h = f32[4,8] get-tuple-element(g), index=1\n"
       "  u = f32[4,8] dynamic-update-slice(h, q, i, z)\n"
       "  o = f32[4,8] iota(), iota_dimension=0\n"
       "  ROOT r = (f32[4,8], f32[4,8]) tuple(u, o)\n",
       "nt#2", 1, NULL},
      /* copies */
      {"no donation", "", update_out0, NULL, 0, NULL},
      {"donated to another output", ", input_output_alias={ {1}: (2, {}, must-alias) }",
       update_out0, NULL, 0, NULL},
      {"another parameter donated", ", input_output_alias={ {0}: (3, {}, must-alias) }",
       update_out0, NULL, 0, "d"},
      {"donated to output 0, the update is output 1",
       ", input_output_alias={ {0}: (2, {}, must-alias), {2}: (0, {}) }", update_out1, NULL, 0,
       NULL},
      {"read after the update", ", input_output_alias={ {0}: (2, {}, must-alias) }",
       "  u = f32[4,8] dynamic-update-slice(c, q, i, z)\n"
       "  a = f32[4,8] add(u, c)\n"
       "  ROOT r = (f32[4,8], f32[4,8]) tuple(u, a)\n",
       NULL, 0, NULL},
      {"a buffer donor whose update is no output", ", buffer_donor={ (2, {}) }",
       "  u = f32[4,8] dynamic-update-slice(c, q, i, z)\n"
       "  ROOT n = f32[4,8] negate(u)\n",
       NULL, 0, NULL},
      {"a buffer donor whose update nothing reads", ", buffer_donor={ (2, {}) }",
       "  u = f32[4,8] dynamic-update-slice(c, q, i, z)\n"
       "  ROOT n = f32[1,8] negate(q)\n",
       NULL, 0, NULL},
  };
  char text[4096];
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    donation_text(text, sizeof text, cases[k].header, cases[k].body);
    for (int fusion = 0; fusion <= 1; fusion++) {
      mb_error err = {{0}};
      mb_hlo_report rep;
      mb_workload *w = import_str(text, fusion, &rep, &err);
      if (!w) fail_msg("%s: %s", cases[k].what, err.message);
      assert_int_equal(rep.n_unknown_attributes, 0);
      int entries = 0; /* each entry of a donation has one '(' */
      for (const char *c = cases[k].header; *c; c++) entries += *c == '(';
      assert_int_equal(rep.n_donated_arrays, entries);
      if (!cases[k].updated) { /* a copy: the operand read whole, the result written whole */
        assert_int_equal(rep.n_updates_in_place, 0);
        assert_int_equal(rep.n_updates_into_donated, 0);
        assert_int_equal(rep.n_updates_copied, 1);
        expect_use(w, "c", "u", 128, 0);
        expect_use(w, cases[k].copy ? cases[k].copy : "u", "u", 0, 128);
        mb_workload_free(w);
        continue;
      }
      if (rep.n_updates_in_place != cases[k].in_place ||
          rep.n_updates_into_donated != cases[k].in_place || rep.n_updates_copied != 0)
        fail_msg("%s: %d in place, %d into a donated parameter, %d copied; expected %d, %d, 0",
                 cases[k].what, rep.n_updates_in_place, rep.n_updates_into_donated,
                 rep.n_updates_copied, cases[k].in_place, cases[k].in_place);
      assert_int_equal(rep.n_donated_holding, 1); /* the array, however many updates */
      assert_int_equal(rep.n_donated_returned, 0);
      /* the update writes its row and reads nothing of the rest; the donated buffer holds the
       * output: live from the start to the end, pinned as a parameter and as an output */
      assert_true(mb_workload_find_buffer(w, "u") < 0);
      expect_use(w, cases[k].updated, "u", 0, 32);
      expect_buffer(w, cases[k].updated, 128, 0, w->n_ops - 1);
      assert_true(buffer(w, cases[k].updated)->pinned);
      if (cases[k].in_place == 3) {
        assert_true(mb_workload_find_buffer(w, "s") < 0);
        assert_true(mb_workload_find_buffer(w, "f") < 0);
        expect_use(w, "c", "s", 32, 32);
        expect_use(w, "c", "f", 0, 32);
      }
      mb_workload_free(w);
    }
  }

  /* the header checked against the entry computation, each message naming its line */
  /* an index too long for the message is cut at 63 characters */
  char long_index[128] = "{0";
  char truncated[160] = "t.hlo:1: buffer_donor: parameter 2 has no array at shape index {";
  for (int k = 1; k < 40; k++) strcat(long_index, ",0");
  strcat(long_index, "}");
  for (int k = 0; k < 31; k++) strcat(truncated, "0,");
  char long_header[160];
  snprintf(long_header, sizeof long_header, ", buffer_donor={ (2, %s) }", long_index);
  const struct {
    const char *header, *message;
  } errors[] = {
      {", input_output_alias={ {0}: (7, {}, must-alias) }",
       "t.hlo:1: input_output_alias: parameter 7: the entry computation has no parameter 7"},
      {", input_output_alias={ {}: (6, {}) }",
       "t.hlo:1: input_output_alias: parameter 6: the entry computation has no parameter 6"},
      {long_header, truncated},
      {", buffer_donor={ (2, {0}) }",
       "t.hlo:1: buffer_donor: parameter 2 has no array at shape "
       "index {0}"},
      {", input_output_alias={ {0}: (4, {}, may-alias) }",
       "t.hlo:1: input_output_alias: parameter 4 has no array at shape index {}"},
      {", input_output_alias={ {2}: (2, {}, may-alias) }",
       "t.hlo:1: input_output_alias: the result has no array at shape index {2}"},
      {", input_output_alias={ {0,0}: (2, {}, may-alias) }",
       "t.hlo:1: input_output_alias: the result has no array at shape index {0,0}"},
      {", input_output_alias={ {0}: (0, {}, may-alias) }",
       "t.hlo:1: input_output_alias: output {0} (128 bytes) and parameter 0 {} (32 bytes): "
       "expected the same size"},
      {", input_output_alias={ {0}: (2, {}, may-alias), {1}: (2, {}, may-alias) }",
       "t.hlo:1: input_output_alias: parameter 2 {} is donated twice"},
      {", input_output_alias={ {0}: (2, {}) }, buffer_donor={ (2, {}) }",
       "t.hlo:1: buffer_donor: parameter 2 {} is donated twice"},
      {", input_output_alias={ {0}: (2, {}), {0}: (3, {}) }",
       "t.hlo:1: input_output_alias: output {0} is aliased twice"},
  };
  for (size_t k = 0; k < sizeof errors / sizeof errors[0]; k++) {
    donation_text(text, sizeof text, errors[k].header, update_out0);
    expect_error(text, errors[k].message);
  }
  donation_text(text, sizeof text, ", input_output_alias={ {}: (0, {}) }",
                "  ROOT u = f32[4,8] dynamic-update-slice(c, q, i, z)\n");
  expect_error(text,
               "t.hlo:1: input_output_alias: output {} (128 bytes) and parameter 0 {} (32 "
               "bytes): expected the same size");
  /* parameters numbered with a gap: the donated number is not one of the entry's */
  expect_error(
      "HloModule g, buffer_donor={ (1, {}) }\nENTRY e {\n  a = f32[2] parameter(0)\n"
      "  b = f32[2] parameter(2)\n  ROOT n = f32[2] add(a, b)\n}\n",
      "t.hlo:1: buffer_donor: parameter 1: the entry computation has no parameter 1");
}

/* A combiner of a scatter of two operands, f32 and s32: adds each pair. */
#define ADD_PAIR_COMPUTATION                  \
  "add2 {\n"                                  \
  "  a0 = f32[] parameter(0)\n"               \
  "  a1 = s32[] parameter(1)\n"               \
  "  b0 = f32[] parameter(2)\n"               \
  "  b1 = s32[] parameter(3)\n"               \
  "  s0 = f32[] add(a0, b0)\n"                \
  "  s1 = s32[] add(a1, b1)\n"                \
  "  ROOT t = (f32[], s32[]) tuple(s0, s1)\n" \
  "}\n"

/* A scatter of several operands updates each in place as a scatter of one does: leaf j of its
 * value is written into operand j's buffer when that buffer may be shared, reading and writing
 * update j's bytes of it; a shared operand and a copied one can sit in the same scatter. */
static void test_update_in_place_of_a_variadic_scatter(void **state) {
  (void)state;
  const char *head =
      "HloModule vs\n"
      ADD_PAIR_COMPUTATION
      "ENTRY main {\n"
      "  p = f32[8,4] parameter(0)\n"
      "  v = s32[8,4] parameter(1)\n"
      "  q = f32[1,8] parameter(2)\n"
      "  r = s32[1,8] parameter(3)\n"
      "  i = s32[] parameter(4)\n"
      "  ix = s32[1,1] reshape(i)\n"
      "  t = f32[4,8] transpose(p), dimensions={1,0}\n"
      "  m = s32[4,8] transpose(v), dimensions={1,0}\n"
      "  s = (f32[4,8], s32[4,8]) scatter(t, m, ix, q, r), " SCATTER_ROWS_BY("add2")
      "  a = f32[4,8] get-tuple-element(s), index=0\n"
      "  b = s32[4,8] get-tuple-element(s), index=1\n"
      "  c = s32[4,8] negate(b)\n";
  const char *tails[] = {
      "  n = f32[4,8] negate(a)\n  ROOT o = (f32[4,8], s32[4,8]) tuple(n, c)\n}\n",
      /* t read after the scatter: its update is a copy */
      "  n = f32[4,8] add(a, t)\n  ROOT o = (f32[4,8], s32[4,8]) tuple(n, c)\n}\n"};
  char text[4096];
  for (int k = 0; k < 2; k++) {
    snprintf(text, sizeof text, "%s%s", head, tails[k]);
    for (int fusion = 0; fusion <= 1; fusion++) {
      mb_error err = {{0}};
      mb_hlo_report rep;
      mb_workload *w = import_str(text, fusion, &rep, &err);
      if (!w) fail_msg("%s", err.message);
      assert_int_equal(rep.n_updates_in_place, k == 0 ? 2 : 1);
      assert_int_equal(rep.n_updates_copied, k == 0 ? 0 : 1);
      assert_true(mb_workload_find_buffer(w, "s#1") < 0);
      expect_use(w, "m", "s", 32, 32); /* combines its row with what it replaces */
      expect_use(w, "r", "s", 32, 0);
      expect_use(w, "q", "s", 32, 0);
      if (k == 0) {
        assert_true(mb_workload_find_buffer(w, "s#0") < 0);
        expect_use(w, "t", "s", 32, 32);
      } else { /* the operand read whole, the copy written whole */
        expect_use(w, "t", "s", 128, 0);
        expect_use(w, "s#0", "s", 0, 128);
      }
      mb_workload_free(w);
    }
  }

  /* an even number of operands is no scatter XLA knows: no update, imported as any op */
  snprintf(text, sizeof text, "%s%s", head,
           "  t2 = f32[4,8] transpose(p), dimensions={1,0}\n"
           "  e = f32[4,8] scatter(t2, ix, q, q), " SCATTER_ROWS_BY(
               "add2") "  ROOT o = (f32[4,8], s32[4,8]) tuple(e, c)\n}\n");
  {
    mb_error err = {{0}};
    mb_hlo_report rep;
    mb_workload *w = import_str(text, true, &rep, &err);
    if (!w) fail_msg("%s", err.message);
    assert_int_equal(rep.n_updates_in_place, 2); /* s's two, not e */
    assert_int_equal(rep.n_updates_copied, 0);
    expect_use(w, "e", "e", 0, 128);
    mb_workload_free(w);
  }

  /* in a loop's body, updating two arrays of its state: both in place, each run */
  const char *loop =
      "HloModule vl\n"
      ADD_PAIR_COMPUTATION
      "cond {\n"
      "  c = (s32[], f32[4,8], s32[4,8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(c), index=0\n"
      "  n = s32[] constant(3)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n"
      "}\n"
      "body {\n"
      "  b = (s32[], f32[4,8], s32[4,8]) parameter(0)\n"
      "  i = s32[] get-tuple-element(b), index=0\n"
      "  x = f32[4,8] get-tuple-element(b), index=1\n"
      "  y = s32[4,8] get-tuple-element(b), index=2\n"
      "  ix = s32[1,1] reshape(i)\n"
      "  u = f32[1,8] slice(x), slice={[0:1], [0:8]}\n"
      "  v = s32[1,8] slice(y), slice={[0:1], [0:8]}\n"
      "  s = (f32[4,8], s32[4,8]) scatter(x, y, ix, u, v), " SCATTER_ROWS_BY("add2")
      "  x1 = f32[4,8] get-tuple-element(s), index=0\n"
      "  y1 = s32[4,8] get-tuple-element(s), index=1\n"
      "  one = s32[] constant(1)\n"
      "  i1 = s32[] add(i, one)\n"
      "  ROOT r = (s32[], f32[4,8], s32[4,8]) tuple(i1, x1, y1)\n"
      "}\n"
      "ENTRY main {\n"
      "  p = f32[8,4] parameter(0)\n"
      "  q = s32[8,4] parameter(1)\n"
      "  t = f32[4,8] transpose(p), dimensions={1,0}\n"
      "  m = s32[4,8] transpose(q), dimensions={1,0}\n"
      "  z = s32[] constant(0)\n"
      "  init = (s32[], f32[4,8], s32[4,8]) tuple(z, t, m)\n"
      "  l = (s32[], f32[4,8], s32[4,8]) while(init), condition=cond, body=body, "
      "backend_config={\"known_trip_count\":{\"n\":\"3\"}}\n"
      "  ROOT o = f32[4,8] get-tuple-element(l), index=1\n"
      "}\n";
  for (int fusion = 0; fusion <= 1; fusion++) {
    mb_error err = {{0}};
    mb_hlo_report rep;
    mb_workload *w = import_str(loop, fusion, &rep, &err);
    if (!w) fail_msg("%s", err.message);
    assert_int_equal(rep.n_updates_in_place, 2);
    assert_int_equal(rep.n_updates_copied, 0);
    assert_true(mb_workload_find_buffer(w, "body/s#0") < 0);
    assert_true(mb_workload_find_buffer(w, "body/s#1") < 0);
    expect_use(w, "l#2", "body/s", 96, 96); /* its row, in each of 3 runs */
    mb_workload_free(w);
  }
}

/* Computations for test_outputs_into_donated_parameters: an elementwise loop fusion, one
 * elementwise in its parameter 0 only, one that transposes its parameter there and back, a
 * multi-output one, and a sort's comparison. */
static const char OUTPUT_DONATION_COMPUTATIONS[] =
    "fused_mix {\n"
    "  p0 = f32[4,8] parameter(0)\n"
    "  p1 = f32[8,4] parameter(1)\n"
    "  t = f32[4,8] transpose(p1), dimensions={1,0}\n"
    "  ROOT a = f32[4,8] add(p0, t)\n"
    "}\n"
    "sum {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "lt {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT l = pred[] compare(a, b), direction=LT\n"
    "}\n"
    "fused_axpy {\n"
    "  p0 = f32[4,8] parameter(0)\n"
    "  p1 = f32[4,8] parameter(1)\n"
    "  m = f32[4,8] multiply(p0, p1)\n"
    "  ROOT a = f32[4,8] add(m, p1)\n"
    "}\n"
    "fused_transpose {\n"
    "  p0 = f32[4,8] parameter(0)\n"
    "  t = f32[8,4] transpose(p0), dimensions={1,0}\n"
    "  ROOT b = f32[4,8] transpose(t), dimensions={1,0}\n"
    "}\n"
    "fused_pair {\n"
    "  p0 = f32[4,8] parameter(0)\n"
    "  p1 = f32[4,8] parameter(1)\n"
    "  a = f32[4,8] add(p0, p1)\n"
    "  s = f32[4,8] subtract(p1, p0)\n"
    "  ROOT t = (f32[4,8], f32[4,8]) tuple(a, s)\n"
    "}\n"
    "ENTRY main {\n"
    "  c = f32[4,8] parameter(0)\n"
    "  d = f32[4,8] parameter(1)\n"
    "  v = f32[8,4] parameter(2)\n"
    "  z = f32[] constant(0)\n";

/* An output that the header donates an entry parameter's array to (input_output_alias; a
 * buffer_donor: any output of its size) is written into that array's buffer when nothing reads
 * the parameter after the op that computes the output, and that op reads it, if at all, element
 * by element (an elementwise op, its fused producers, or a fusion's elementwise parameter): the
 * output's own buffer is gone, the parameter's lives to the end. Otherwise both stay. */
static void test_outputs_into_donated_parameters(void **state) {
  (void)state;
  const char *add = "  o = f32[4,8] add(c, d)\n  ROOT r = (f32[4,8]) tuple(o)\n";
  const struct {
    const char *what, *header, *body;
    const char *held_fused, *held_unfused; /* the parameter buffer that holds o (NULL: none) */
    int returned;                          /* parameters returned unchanged */
  } cases[] = {
      {"an add, the parameter's last read", "{ {0}: (0, {}, must-alias) }", add, "c", "c", 0},
      {"may-alias", "{ {0}: (0, {}, may-alias) }", add, "c", "c", 0},
      {"through fused elementwise producers", "{ {0}: (0, {}) }",
       "  n = f32[4,8] negate(c)\n  o = f32[4,8] multiply(n, d)\n"
       "  ROOT r = (f32[4,8]) tuple(o)\n",
       "c", "c", 0},
      {"after the parameter's last read", "{ {0}: (0, {}) }",
       "  t = f32[8,4] transpose(c), dimensions={1,0}\n"
       "  o = f32[4,8] transpose(t), dimensions={1,0}\n  ROOT r = (f32[4,8]) tuple(o)\n",
       "c", "c", 0},
      {"an elementwise loop fusion", "{ {0}: (0, {}) }",
       "  o = f32[4,8] fusion(c, d), kind=kLoop, calls=fused_axpy\n"
       "  ROOT r = (f32[4,8]) tuple(o)\n",
       "c", "c", 0},
      {"a fusion elementwise in that parameter", "{ {0}: (0, {}) }",
       "  o = f32[4,8] fusion(c, v), kind=kLoop, calls=fused_mix\n"
       "  ROOT r = (f32[4,8]) tuple(o)\n",
       "c", "c", 0},
      {"read by a later op", "{ {0}: (0, {}) }",
       "  o = f32[4,8] add(c, d)\n  n = f32[4,8] negate(o)\n"
       "  ROOT r = (f32[4,8], f32[4,8]) tuple(o, n)\n",
       "c", "c", 0},
      {"the root itself", "{ {}: (1, {}) }", "  ROOT o = f32[4,8] subtract(c, d)\n", "d", "d", 0},
      {"a parameter returned unchanged beside it", "{ {1}: (0, {}), {0}: (1, {}) }",
       "  o = f32[4,8] add(c, d)\n  ROOT r = (f32[4,8], f32[4,8]) tuple(d, o)\n", "c", "c", 1},
      /* two buffers */
      {"no donation", NULL, add, NULL, NULL, 0},
      {"donated to another output, a parameter", "{ {1}: (0, {}) }",
       "  o = f32[4,8] add(c, d)\n  ROOT r = (f32[4,8], f32[4,8]) tuple(o, d)\n", NULL, NULL, 0},
      {"read after the output's op", "{ {0}: (0, {}) }",
       "  o = f32[4,8] add(c, d)\n  a = f32[4,8] multiply(o, c)\n"
       "  ROOT r = (f32[4,8], f32[4,8]) tuple(o, a)\n",
       NULL, NULL, 0},
      {"donated to a parameter it never reads", "{ {0}: (0, {}) }",
       "  o = f32[4,8] negate(d)\n  ROOT r = (f32[4,8], f32[4,8]) tuple(d, o)\n", NULL, NULL, 0},
      {"a fusion that transposes that parameter", "{ {0}: (2, {}) }",
       "  o = f32[4,8] fusion(c, v), kind=kLoop, calls=fused_mix\n"
       "  ROOT r = (f32[4,8]) tuple(o)\n",
       NULL, NULL, 0},
      {"a sort of it", "{ {0}: (0, {}) }",
       "  o = f32[4,8] sort(c), dimensions={1}, to_apply=lt\n  ROOT r = (f32[4,8]) tuple(o)\n",
       NULL, NULL, 0},
      {"a tuple operand holding it", "{ {0}: (0, {}) }",
       "  t = (f32[4,8], f32[4,8]) tuple(d, c)\n"
       "  o = f32[4,8] custom-call(t), custom_call_target=\"combine\"\n"
       "  ROOT r = (f32[4,8]) tuple(o)\n",
       NULL, NULL, 0},
      {"read whole by the output's op", "{ {0}: (0, {}) }",
       "  o = f32[4,8] reverse(c), dimensions={0}\n  ROOT r = (f32[4,8]) tuple(o)\n", NULL, NULL,
       0},
      {"a fusion that transposes the parameter", "{ {0}: (0, {}) }",
       "  o = f32[4,8] fusion(c), kind=kLoop, calls=fused_transpose\n"
       "  ROOT r = (f32[4,8]) tuple(o)\n",
       NULL, NULL, 0},
      /* a broadcast is not elementwise: fused into o it makes o read c whole; as an op of its
       * own it is c's last read, before o */
      {"through a fused broadcast", "{ {0}: (0, {}) }",
       "  b = f32[4,8] broadcast(c), dimensions={0,1}\n  o = f32[4,8] add(b, d)\n"
       "  ROOT r = (f32[4,8]) tuple(o)\n",
       NULL, "c", 0},
  };
  char text[2048];
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    for (int fusion = 0; fusion <= 1; fusion++) {
      const char *held = fusion ? cases[k].held_fused : cases[k].held_unfused;
      mb_hlo_report rep, plain_rep;
      mb_error err = {{0}};
      snprintf(text, sizeof text, "HloModule od\n%s%s}\n", OUTPUT_DONATION_COMPUTATIONS,
               cases[k].body);
      mb_workload *plain = import_str(text, fusion, &plain_rep, &err);
      if (!plain) fail_msg("%s: %s", cases[k].what, err.message);
      snprintf(text, sizeof text, "HloModule od%s%s\n%s%s}\n",
               cases[k].header ? ", input_output_alias=" : "",
               cases[k].header ? cases[k].header : "", OUTPUT_DONATION_COMPUTATIONS, cases[k].body);
      mb_workload *w = import_str(text, fusion, &rep, &err);
      if (!w) fail_msg("%s: %s", cases[k].what, err.message);
      int held_count = held ? 1 : 0;
      if (rep.n_donated_holding != held_count || rep.n_donated_returned != cases[k].returned ||
          w->n_buffers != plain->n_buffers - held_count)
        fail_msg("%s, fusion %d: %d outputs held, %d returned, %d buffers; expected %d, %d, %d",
                 cases[k].what, fusion, rep.n_donated_holding, rep.n_donated_returned, w->n_buffers,
                 held_count, cases[k].returned, plain->n_buffers - held_count);
      assert_int_equal(rep.n_updates_into_donated, 0);
      if (held) { /* the op that computes o writes it into the parameter's buffer */
        assert_true(mb_workload_find_buffer(w, "o") < 0);
        expect_buffer(w, held, 128, 0, w->n_ops - 1);
        assert_true(buffer(w, held)->pinned);
        const mb_use *u = use_of(w, held, "o");
        assert_non_null(u);
        assert_int_equal(u->bytes_written, 128);
        if (mb_workload_find_op(w, "n") >= 0) expect_use(w, held, "n", 128, 0);
      } else {
        assert_true(mb_workload_find_buffer(w, "o") >= 0);
      }
      mb_workload_free(plain);
      mb_workload_free(w);
    }
  }

  /* a multi-output fusion writes each output into the parameter donated to it; a buffer donor
   * holds the first output of its size it may */
  const char *pair =
      "  f = (f32[4,8], f32[4,8]) fusion(c, d), kind=kLoop, calls=fused_pair\n"
      "  a = f32[4,8] get-tuple-element(f), index=0\n"
      "  s = f32[4,8] get-tuple-element(f), index=1\n"
      "  ROOT r = (f32[4,8], f32[4,8]) tuple(s, a)\n";
  const char *headers[] = {", input_output_alias={ {1}: (0, {}), {0}: (1, {}) }",
                           ", buffer_donor={ (0, {}), (1, {}) }"};
  for (size_t k = 0; k < sizeof headers / sizeof headers[0]; k++) {
    snprintf(text, sizeof text, "HloModule od%s\n%s%s}\n", headers[k], OUTPUT_DONATION_COMPUTATIONS,
             pair);
    mb_hlo_report rep;
    mb_error err = {{0}};
    mb_workload *w = import_str(text, true, &rep, &err);
    if (!w) fail_msg("%s: %s", headers[k], err.message);
    assert_int_equal(rep.n_donated_holding, 2);
    assert_int_equal(w->n_buffers, 4); /* c, d and the unread v and z */
    assert_true(mb_workload_find_buffer(w, "f#0") < 0 && mb_workload_find_buffer(w, "f#1") < 0);
    expect_use(w, "c", "f", 128, 128);
    expect_use(w, "d", "f", 128, 128);
    mb_workload_free(w);
  }

  /* a buffer donor takes the first output of its size */
  snprintf(text, sizeof text, "HloModule od, buffer_donor={ (0, {}) }\n%s%s}\n",
           OUTPUT_DONATION_COMPUTATIONS,
           "  s = f32[4] reduce(c, z), dimensions={1}, to_apply=sum\n"
           "  o = f32[4,8] add(c, d)\n  ROOT r = (f32[4], f32[4,8]) tuple(s, o)\n");
  {
    mb_hlo_report rep;
    mb_error err = {{0}};
    mb_workload *w = import_str(text, true, &rep, &err);
    if (!w) fail_msg("%s", err.message);
    assert_int_equal(rep.n_donated_holding, 1);
    assert_true(mb_workload_find_buffer(w, "o") < 0 && mb_workload_find_buffer(w, "s") >= 0);
    mb_workload_free(w);
  }

  /* past MAX_DEPENDENCE_DEPTH producers fused into the output's op, or instructions in a fusion,
   * the answer is the conservative one: two buffers (no fusion: c's last read is the first
   * negate, before o) */
  char deep[16384], fused_deep[16384];
  size_t used = 0, fused_used = 0;
  used += (size_t)snprintf(deep, sizeof deep, "  n0 = f32[4,8] negate(c)\n");
  fused_used += (size_t)snprintf(fused_deep, sizeof fused_deep,
                                 "deep {\n  p0 = f32[4,8] parameter(0)\n  n0 = f32[4,8] "
                                 "negate(p0)\n");
  for (int k = 1; k < 300; k++) {
    used += (size_t)snprintf(deep + used, sizeof deep - used, "  n%d = f32[4,8] negate(n%d)\n", k,
                             k - 1);
    fused_used += (size_t)snprintf(fused_deep + fused_used, sizeof fused_deep - fused_used,
                                   "  n%d = f32[4,8] negate(n%d)\n", k, k - 1);
  }
  snprintf(deep + used, sizeof deep - used,
           "  o = f32[4,8] add(n299, d)\n  ROOT r = (f32[4,8]) tuple(o)\n");
  snprintf(fused_deep + fused_used, sizeof fused_deep - fused_used,
           "  ROOT o = f32[4,8] add(n299, p0)\n}\n");
  char *big = malloc(40000);
  assert_non_null(big);
  for (int k = 0; k < 3; k++) {
    if (k < 2)
      snprintf(big, 40000, "HloModule od, input_output_alias={ {0}: (0, {}) }\n%s%s}\n",
               OUTPUT_DONATION_COMPUTATIONS, deep);
    else
      snprintf(
          big, 40000, "HloModule od, input_output_alias={ {0}: (0, {}) }\n%s%s%s}\n", fused_deep,
          OUTPUT_DONATION_COMPUTATIONS,
          "  o = f32[4,8] fusion(c), kind=kLoop, calls=deep\n  ROOT r = (f32[4,8]) tuple(o)\n");
    mb_hlo_report rep;
    mb_error err = {{0}};
    mb_workload *w = import_str(big, k != 0, &rep, &err);
    if (!w) fail_msg("%s", err.message);
    assert_int_equal(rep.n_donated_holding, k == 0 ? 1 : 0);
    mb_workload_free(w);
  }
  free(big);

  /* unpinned (--no-pin-params --no-pin-outputs), the parameter's buffer may go to fast memory
   * like any other: it holds the output live to the end */
  snprintf(text, sizeof text, "HloModule od, input_output_alias={ {0}: (0, {}) }\n%s%s}\n",
           OUTPUT_DONATION_COMPUTATIONS, add);
  mb_hlo_options opt;
  mb_hlo_options_default(&opt);
  opt.pin_parameters = opt.pin_outputs = false;
  mb_error err = {{0}};
  mb_workload *w = mb_hlo_import_text(text, strlen(text), "t.hlo", &opt, NULL, &err);
  assert_non_null(w);
  expect_buffer(w, "c", 128, 0, w->n_ops - 1);
  assert_false(buffer(w, "c")->pinned);
  expect_use(w, "c", "o", 128, 128);
  mb_workload_free(w);
}

/* The header's donations as parsed: every entry of input_output_alias, then of buffer_donor,
 * with its shape indices and kind; malformed entries refused with the expected form. */
static void test_parse_donations(void **state) {
  (void)state;
  const char *text =
      "HloModule d, input_output_alias={ {0}: (1, {}, must-alias), {1, 2}: (0, "
      "{1,0}, may-alias), {}: (3, {}) }, buffer_donor={ (2, {}), (4, {5}) }, "
      "is_scheduled=true\n"
      "ENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n";
  mb_error err = {{0}};
  mb_hlo_module *m = mb_hlo_parse(text, strlen(text), "t.hlo", &err);
  if (!m) fail_msg("%s", err.message);
  assert_true(m->is_scheduled);
  assert_int_equal(m->n_unknown_attributes, 0);
  assert_int_equal(m->n_donations, 5);
  const struct {
    int64_t parameter;
    int n_param, param[2], n_output, output[2];
    bool must;
  } want[] = {{1, 0, {0}, 1, {0}, true},
              {0, 2, {1, 0}, 2, {1, 2}, false},
              {3, 0, {0}, 0, {0}, false},
              {2, 0, {0}, -1, {0}, false},
              {4, 1, {5}, -1, {0}, false}};
  for (int k = 0; k < 5; k++) {
    const mb_hlo_donation *d = &m->donations[k];
    assert_int_equal(d->parameter, want[k].parameter);
    assert_int_equal(d->line, 1);
    assert_int_equal(d->must_alias, want[k].must);
    assert_int_equal(d->param_index.n, want[k].n_param);
    for (int j = 0; j < want[k].n_param; j++)
      assert_int_equal(m->ints[d->param_index.first + j], want[k].param[j]);
    assert_int_equal(d->output_index.n, want[k].n_output);
    for (int j = 0; j < want[k].n_output; j++)
      assert_int_equal(m->ints[d->output_index.first + j], want[k].output[j]);
  }
  mb_hlo_module_free(m);

  /* none at all */
  const char *none =
      "HloModule d, input_output_alias={ }, buffer_donor={}\n"
      "ENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n";
  m = mb_hlo_parse(none, strlen(none), "t.hlo", &err);
  if (!m) fail_msg("%s", err.message);
  assert_int_equal(m->n_donations, 0);
  mb_hlo_module_free(m);

  const char *alias_form =
      "expected input_output_alias={ {OUTPUT}: (PARAMETER, {INDEX}, must-alias|may-alias), ... }";
  const struct {
    const char *header, *message;
  } bad[] = {
      {"input_output_alias={ {0}: 2 }", "%s, got '{0}: 2 }'"},
      {"input_output_alias={ {0}: (2, {}, could-alias) }",
       "%s, got '{0}: (2, {}, could-alias'" /* 24 characters */},
      {"input_output_alias={ {0}: (-2, {}) }", "%s, got '{0}: (-2, {}) }'"},
      {"input_output_alias=0", "%s"},
      {"input_output_alias={ {0}: (2, {}) (3, {}) }",
       "expected ',' or '}' after an entry of input_output_alias=, got '(3, {}) }'"},
      {"input_output_alias={ {0}: (2, {}), }", "%s, got '}'"},
      {"input_output_alias={ {0,}: (2, {}) }",
       "expected a list of integers like {0,1} after 'input_output_alias='"},
      {"buffer_donor={ (2, {x}) }",
       "expected buffer_donor={ (PARAMETER, {INDEX}), ... }, got "
       "'(2, {x}) }'"},
      {"buffer_donor={ (99999999999999999999, {}) }",
       "expected an integer below 2^62 after 'buffer_donor='"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char src[512], message[512], body[256];
    snprintf(src, sizeof src, "HloModule d, %s\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n",
             bad[k].header);
    snprintf(body, sizeof body, bad[k].message, alias_form);
    snprintf(message, sizeof message, "t.hlo:1: %s", body);
    expect_error(src, message);
  }
}

static void test_select_and_scatter_flops(void **state) {
  (void)state;
  const char *text =
      "HloModule sas\n" GE_COMPUTATION
      "%add (x: f32[], y: f32[]) -> f32[] {\n"
      "  %x = f32[] parameter(0)\n"
      "  %y = f32[] parameter(1)\n"
      "  %n = f32[] negate(%y)\n"
      "  ROOT %s = f32[] add(%x, %n)\n"
      "}\n"
      "ENTRY %main (o: f32[1,8,8,1], s: f32[1,4,4,1]) -> f32[1,8,8,1] {\n"
      "  %o = f32[1,8,8,1] parameter(0)\n"
      "  %s = f32[1,4,4,1] parameter(1)\n"
      "  %zero = f32[] constant(0)\n"
      "  ROOT %r = f32[1,8,8,1] select-and-scatter(%o, %s, %zero), "
      "window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, scatter=%add, select=%ge\n"
      "}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, true, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(rep.n_unknown_attributes, 0);
  /* 16 source elements x ((9 - 1) x 1 compare + 2 (negate, add)) */
  assert_int_equal(w->n_ops, 1);
  assert_true(w->ops[0].flops == 16 * (8 * 1 + 2));
  mb_workload_free(w);
  /* without its source operand there is nothing to count: 0 FLOPs, not a read past the
   * operands */
  const char *one =
      "HloModule sas\n" GE_COMPUTATION
      "ENTRY %main (o: f32[8]) -> f32[8] {\n"
      "  %o = f32[8] parameter(0)\n"
      "  %n = f32[8] negate(%o)\n"
      "  ROOT %r = f32[8] select-and-scatter(%n), window={size=3}, select=%ge, scatter=%ge\n"
      "}\n";
  w = import_str(one, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  assert_true(w->ops[1].flops == 0);
  mb_workload_free(w);
}

/* Asynchronous pairs: a start's tuple holds its operands themselves (copy-start: its source)
 * and the done passes on the result the start wrote; the done is an op that moves no bytes and
 * keeps the start's buffers live up to it. */
static void test_async_pairs(void **state) {
  (void)state;
  const char *text =
      "HloModule async\n"
      "add (a: f32[], b: f32[]) -> f32[] {\n"
      "  a = f32[] parameter(0)\n"
      "  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n"
      "}\n"
      "ENTRY e {\n"
      "  p = f32[256] parameter(0)\n"
      "  q = f32[64] parameter(1)\n"
      "  n = f32[256] negate(p)\n"
      "  cs = (f32[64], f32[64], u32[]) copy-start(q)\n"
      "  cd = f32[64] copy-done(cs)\n"
      "  ags = (f32[256], f32[512]) all-gather-start(n), dimensions={0}\n"
      "  agd = f32[512] all-gather-done(ags)\n"
      "  ars = f32[512] all-reduce-start(agd), to_apply=add\n"
      "  ard = f32[512] all-reduce-done(ars)\n"
      "  m = f32[64] negate(cd)\n"
      "  ROOT r = (f32[512], f32[64]) tuple(ard, m)\n"
      "}\n";
  mb_error err = {{0}};
  mb_workload *w = import_str(text, false, NULL, &err);
  if (!w) fail_msg("%s", err.message);
  /* buffers: p, q, the copy's destination cs#0 and context cs#2 (cs#1 is q), n, the gather's
   * result ags#1 (ags#0 is n), the reduction's ars, m: 8; the dones define none */
  assert_int_equal(w->n_buffers, 8);
  assert_int_equal(mb_workload_find_buffer(w, "cs#1"), -1);
  assert_int_equal(mb_workload_find_buffer(w, "ags#0"), -1);
  assert_int_equal(mb_workload_find_buffer(w, "cd"), -1);
  assert_int_equal(mb_workload_find_buffer(w, "agd"), -1);
  assert_int_equal(mb_workload_find_buffer(w, "ard"), -1);
  /* ops in schedule order: n 0, cs 1, cd 2, ags 3, agd 4, ars 5, ard 6, m 7 */
  assert_int_equal(w->n_ops, 8);
  /* the copy reads q and writes its destination; the done reads nothing, m reads the copy */
  assert_int_equal(use_of(w, "q", "cs")->bytes_read, 256);
  assert_int_equal(use_of(w, "cs#0", "cs")->bytes_written, 256);
  assert_int_equal(use_of(w, "cs#0", "cd")->bytes_read, 0);
  assert_int_equal(use_of(w, "cs#0", "m")->bytes_read, 256);
  assert_int_equal(use_of(w, "n", "ags")->bytes_read, 1024);
  /* the gather's input stays live until its done (XLA may read it until then) */
  assert_int_equal(buffer(w, "n")->end, 4);
  assert_int_equal(use_of(w, "n", "agd")->bytes_read, 0);
  assert_int_equal(use_of(w, "ags#1", "ars")->bytes_read, 2048);
  /* the reduction's result is the program's output, through its done and the tuple */
  assert_true(buffer(w, "ars")->pinned);
  assert_int_equal(buffer(w, "ars")->end, 7);
  assert_true(w->ops[6].flops == 0);
  mb_workload_free(w);

  /* a done whose shape does not fit its start's result: two ops with buffers of their own */
  const char *odd =
      "HloModule odd\n"
      "ENTRY e {\n"
      "  p = f32[256] parameter(0)\n"
      "  ags = (f32[256], f32[512]) all-gather-start(p), dimensions={0}\n"
      "  ROOT agd = (f32[512], f32[512]) all-gather-done(ags)\n"
      "}\n";
  w = import_str(odd, false, NULL, &err);
  if (!w) fail_msg("%s", err.message);
  assert_int_equal(w->n_buffers, 4); /* p, ags#1, agd#0, agd#1 */
  assert_int_equal(buffer(w, "agd#1")->size, 2048);
  assert_int_equal(use_of(w, "agd#0", "agd")->bytes_written, 2048);
  mb_workload_free(w);

  /* send(data, token) = (data, context, token): the data is its operand, read by the send and
   * live to its send-done; recv(token) = (data, context, token) writes the data, which its
   * recv-done passes on as its element 0 */
  const char *p2p =
      "HloModule p2p\n"
      "ENTRY e {\n"
      "  p = f32[128] parameter(0)\n"
      "  tok = token[] after-all()\n"
      "  n = f32[128] negate(p)\n"
      "  s = (f32[128], u32[], token[]) send(n, tok), channel_id=1\n"
      "  r = (f32[32], u32[], token[]) recv(tok), channel_id=2\n"
      "  sd = token[] send-done(s), channel_id=1\n"
      "  rd = (f32[32], token[]) recv-done(r), channel_id=2\n"
      "  d = f32[32] get-tuple-element(rd), index=0\n"
      "  ROOT m = f32[32] negate(d)\n"
      "}\n";
  w = import_str(p2p, false, NULL, &err);
  if (!w) fail_msg("%s", err.message);
  /* buffers: p, n, the send's context s#1, the recv's data r#0 and context r#1, m */
  assert_int_equal(w->n_buffers, 6);
  assert_int_equal(mb_workload_find_buffer(w, "s#0"), -1);
  assert_int_equal(mb_workload_find_buffer(w, "rd#0"), -1);
  /* ops: after-all 0, n 1, s 2, r 3, sd 4, rd 5, m 6 */
  assert_int_equal(w->n_ops, 7);
  assert_int_equal(use_of(w, "n", "s")->bytes_read, 512);
  assert_int_equal(use_of(w, "n", "sd")->bytes_read, 0);
  assert_int_equal(buffer(w, "n")->end, 4);
  assert_int_equal(use_of(w, "r#0", "r")->bytes_written, 128);
  assert_int_equal(use_of(w, "r#0", "rd")->bytes_read, 0);
  assert_int_equal(use_of(w, "r#0", "m")->bytes_read, 128);
  assert_int_equal(buffer(w, "s#1")->size, 4);
  assert_true(w->ops[4].flops == 0 && w->ops[5].flops == 0);
  mb_workload_free(w);
}

/* Called computations nest at most 64 deep, whichever instruction calls them: a while's body,
 * a call's to_apply or a select-and-scatter's scatter=; 64 levels are counted, 65 refused. */
static void test_call_nesting_limit(void **state) {
  (void)state;
  const char *callers[] = {
      "ROOT w = f32[2] while(p), condition=cc, body=c%d",
      "ROOT w = f32[2] call(p), to_apply=c%d",
      "ROOT w = f32[2] select-and-scatter(p, p, z), window={size=2}, select=cc, scatter=c%d",
      "i = s32[] constant(0)\n  ROOT w = f32[2] conditional(i, p), branch_computations={c%d}",
  };
  for (int kind = 0; kind < 4; kind++) {
    for (int levels = 64; levels <= 65; levels++) {
      char text[32768], call[160];
      int k = snprintf(text, sizeof text,
                       "HloModule deep\ncc (p: f32[2]) -> pred[] {\n  p = f32[2] parameter(0)\n"
                       "  ROOT t = pred[] constant(true)\n}\n");
      for (int c = levels; c >= 0; c--) {
        snprintf(call, sizeof call, callers[kind], c + 1);
        if (c == levels)
          k += snprintf(text + k, sizeof text - (size_t)k,
                        "c%d (p: f32[2]) -> f32[2] {\n  p = f32[2] parameter(0)\n"
                        "  ROOT n = f32[2] negate(p)\n}\n",
                        c);
        else
          k += snprintf(text + k, sizeof text - (size_t)k,
                        "%sc%d (p: f32[2]) -> f32[2] {\n  p = f32[2] parameter(0)\n"
                        "  z = f32[] constant(0)\n  %s\n}\n",
                        c == 0 ? "ENTRY " : "", c, call);
      }
      mb_error err = {{0}};
      mb_hlo_report rep;
      if (kind == 0) { /* inlined, the loops are held to the same limit */
        mb_hlo_report inlined;
        mb_workload *v = import_str(text, true, &inlined, &err);
        if (levels == 65) {
          if (v || !strstr(err.message, "expected calls nested at most 64 deep"))
            fail_msg("inlined, 65 levels: %s", v ? "imported" : err.message);
        } else {
          if (!v) fail_msg("inlined, 64 levels: %s", err.message);
          /* 64 whiles and the innermost negate; each body's result is its loop's state */
          assert_int_equal(v->n_ops, 65);
          assert_int_equal(inlined.n_inlined_loops, 64);
          assert_true(inlined.loop_flops == 0 && inlined.total_flops == 2);
        }
        mb_workload_free(v);
      }
      mb_workload *w = import_loops_as_ops(text, &rep, &err);
      if (levels == 65) {
        if (w || !strstr(err.message, "computation 'c65': expected calls nested at most 64 deep"))
          fail_msg("%s, 65 levels: %s", callers[kind], w ? "imported" : err.message);
        mb_workload_free(w);
        continue;
      }
      if (!w) fail_msg("%s, 64 levels: %s", callers[kind], err.message);
      if (kind == 0) {
        /* the innermost negate (2 FLOPs), every loop running once; only the entry's loop
         * counts toward the loop FLOPs, not again for each loop inside it */
        assert_true(w->ops[0].flops == 2);
        assert_int_equal(rep.n_loops, 64);
        assert_true(rep.loop_flops == 2 && rep.total_flops == 2);
      }
      mb_workload_free(w);
    }
  }
}

static void test_pinning_options(void **state) {
  (void)state;
  mb_hlo_options opt;
  mb_hlo_options_default(&opt);
  assert_true(opt.fusion && opt.pin_parameters && opt.pin_outputs);
  opt.pin_parameters = false;
  mb_error err = {{0}};
  mb_workload *w =
      mb_hlo_import_text(REDUCE_MODULE, strlen(REDUCE_MODULE), "t.hlo", &opt, NULL, &err);
  assert_non_null(w);
  assert_false(buffer(w, "p0")->pinned);
  assert_true(buffer(w, "r")->pinned);
  mb_workload_free(w);
  opt.pin_parameters = true;
  opt.pin_outputs = false;
  w = mb_hlo_import_text(REDUCE_MODULE, strlen(REDUCE_MODULE), "t.hlo", &opt, NULL, &err);
  assert_non_null(w);
  assert_true(buffer(w, "p0")->pinned);
  assert_false(buffer(w, "r")->pinned);
  mb_workload_free(w);
}

static void test_unknown_opcode_and_attribute(void **state) {
  (void)state;
  const char *text =
      "HloModule u\n"
      "ENTRY main {\n"
      "  p = f32[8] parameter(0), parameter_replication={false}\n"
      "  q = f32[8] frobnicate(p), frob_level=3\n"
      "  ROOT r = f32[8] sqrt(q)\n"
      "}\n";
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, true, &rep, &err);
  assert_non_null(w);
  assert_int_equal(rep.n_unknown_opcodes, 1);
  assert_string_equal(rep.first_unknown, "frobnicate");
  assert_int_equal(rep.n_unknown_attributes, 1);
  assert_string_equal(rep.first_unknown_attribute, "frob_level");
  /* bytes only: a buffer, a read and a write, no FLOPs; not fused into, not fusible */
  assert_true(w->ops[mb_workload_find_op(w, "q")].flops == 0);
  assert_int_equal(use_of(w, "p", "q")->bytes_read, 32);
  assert_int_equal(use_of(w, "q", "q")->bytes_written, 32);
  mb_workload_free(w);
}

/* Every opcode of XLA's HLO_OPCODE_LIST (xla/hlo/ir/hlo_opcode.h, 2025) is known by its printed
 * name ("sine", "cosine" and "topk", not "sin", "cos" and "top-k"); parameter, constant,
 * get-tuple-element, tuple and convolution, which need operands or attributes of their own
 * kind, are checked elsewhere. */
static void test_xla_opcode_names(void **state) {
  (void)state;
  static const char *const XLA_OPCODES[] = {"abs",
                                            "add",
                                            "add-dependency",
                                            "after-all",
                                            "all-gather",
                                            "all-gather-done",
                                            "all-gather-start",
                                            "all-reduce",
                                            "all-reduce-done",
                                            "all-reduce-start",
                                            "all-to-all",
                                            "and",
                                            "async-done",
                                            "async-start",
                                            "async-update",
                                            "atan2",
                                            "batch-norm-grad",
                                            "batch-norm-inference",
                                            "batch-norm-training",
                                            "bitcast",
                                            "bitcast-convert",
                                            "broadcast",
                                            "call",
                                            "cbrt",
                                            "ceil",
                                            "cholesky",
                                            "clamp",
                                            "count-leading-zeros",
                                            "collective-broadcast",
                                            "collective-permute",
                                            "collective-permute-done",
                                            "collective-permute-start",
                                            "compare",
                                            "complex",
                                            "concatenate",
                                            "conditional",
                                            "convert",
                                            "copy",
                                            "copy-done",
                                            "copy-start",
                                            "cosine",
                                            "custom-call",
                                            "divide",
                                            "domain",
                                            "dot",
                                            "dynamic-reshape",
                                            "dynamic-slice",
                                            "dynamic-update-slice",
                                            "erf",
                                            "exponential",
                                            "exponential-minus-one",
                                            "fft",
                                            "floor",
                                            "fusion",
                                            "gather",
                                            "get-dimension-size",
                                            "imag",
                                            "infeed",
                                            "iota",
                                            "is-finite",
                                            "log",
                                            "log-plus-one",
                                            "logistic",
                                            "map",
                                            "maximum",
                                            "minimum",
                                            "multiply",
                                            "negate",
                                            "not",
                                            "opt-barrier",
                                            "or",
                                            "outfeed",
                                            "pad",
                                            "partition-id",
                                            "popcnt",
                                            "power",
                                            "real",
                                            "recv",
                                            "recv-done",
                                            "reduce",
                                            "reduce-precision",
                                            "reduce-scatter",
                                            "reduce-window",
                                            "remainder",
                                            "replica-id",
                                            "reshape",
                                            "reverse",
                                            "rng",
                                            "rng-bit-generator",
                                            "rng-get-and-update-state",
                                            "round-nearest-afz",
                                            "round-nearest-even",
                                            "rsqrt",
                                            "scatter",
                                            "select",
                                            "select-and-scatter",
                                            "send",
                                            "send-done",
                                            "set-dimension-size",
                                            "shift-left",
                                            "shift-right-arithmetic",
                                            "shift-right-logical",
                                            "sign",
                                            "sine",
                                            "slice",
                                            "sort",
                                            "sqrt",
                                            "stochastic-convert",
                                            "subtract",
                                            "tan",
                                            "tanh",
                                            "topk",
                                            "transpose",
                                            "triangular-solve",
                                            "while",
                                            "xor"};
  size_t n = sizeof XLA_OPCODES / sizeof XLA_OPCODES[0];
  char text[16384];
  int k = snprintf(text, sizeof text, "HloModule names\nENTRY main {\n  p = f32[8] parameter(0)\n");
  for (size_t i = 0; i < n; i++)
    k += snprintf(text + k, sizeof text - (size_t)k, "  x%zu = f32[8] %s(p, p)\n", i,
                  XLA_OPCODES[i]);
  snprintf(text + k, sizeof text - (size_t)k, "  ROOT r = f32[8] negate(p)\n}\n");
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  if (rep.n_unknown_opcodes != 0) fail_msg("unknown opcode: %s", rep.first_unknown);
  /* the trigonometric ones are elementwise: 1 FLOP per element */
  int trigonometric = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(XLA_OPCODES[i], "sine") && strcmp(XLA_OPCODES[i], "cosine")) continue;
    char name[16];
    snprintf(name, sizeof name, "x%zu", i);
    assert_true(op_flops(w, name) == 8);
    trigonometric++;
  }
  assert_int_equal(trigonometric, 2);
  mb_workload_free(w);
}

static void test_literals_comments_and_lines(void **state) {
  (void)state;
  /* a multi-line literal with nested braces, a string with braces and escaped quotes, and a
   * comment: the error on line 8 must still name line 8 */
  const char *text =
      "HloModule lines\n"
      "ENTRY main {\n"
      "  c = f32[2,2]{1,0} constant({ { 1, 2 },\n"
      "    { 3, 4 } }), metadata={op_name=\"{\\\"}\" source_line=3}\n"
      "  /* a comment\n"
      "     over two lines */\n"
      "  n = f32[2,2]{1,0} negate(c)\n"
      "  ROOT r = f32[2,2]{1,0} add(n c)\n"
      "}\n";
  expect_error(text, "t.hlo:8: expected ',' or ')' in the operands of 'r', got 'c)'");
}

/* The parser's tree, read directly: '//' comments, a tuple shape nested after an element,
 * a list of called computations, and the last computation as the entry when none is marked. */
static void test_parse_tree(void **state) {
  (void)state;
  const char *text =
      "HloModule tree // the module\n"
      "// a line comment\n"
      "%a (x: f32[4]) -> f32[4] {\n"
      "  ROOT %x = f32[4] parameter(0) // the only instruction\n"
      "}\n"
      "%b (y: f32[4]) -> f32[4] {\n"
      "  %y = f32[4] parameter(0)\n"
      "  ROOT %z = f32[4] negate(%y)\n"
      "}\n"
      "%main (i: s32[], t: (f32[4], (f32[2], s8[3]), pred[])) -> f32[4] {\n"
      "  %i = s32[] parameter(0)\n"
      "  %t = (f32[4], (f32[2], s8[3]), pred[]) parameter(1)\n"
      "  %v = f32[4] get-tuple-element(%t), index=0\n"
      "  ROOT %c = f32[4] conditional(%i, %v, %v), branch_computations={%a, %b}\n"
      "}\n"
      "// the end\n";
  mb_error err = {{0}};
  mb_hlo_module *m = mb_hlo_parse(text, strlen(text), "t.hlo", &err);
  if (!m) fail_msg("%s", err.message);
  assert_int_equal(m->n_comps, 3);
  assert_int_equal(m->entry, 2); /* unmarked: the last one, as XLA takes it */
  assert_int_equal(m->comps[0].n_instrs, 1);
  assert_int_equal(m->comps[0].root, 0);
  /* %t: 3 elements, the second a tuple of 2; leaves f32[4], f32[2], s8[3], pred[] */
  const mb_hlo_instr *t = &m->instrs[m->comps[2].first_instr + 1];
  const mb_hlo_shape *ts = &m->shapes[t->shape];
  assert_int_equal(ts->etype, MB_HLO_TUPLE);
  assert_int_equal(ts->n_tuple, 3);
  assert_int_equal(ts->n_leaves, 4);
  assert_int_equal(ts->bytes, 16 + 8 + 3 + 1);
  const mb_hlo_shape *inner = &m->shapes[m->ints[ts->tuple + 1]];
  assert_int_equal(inner->etype, MB_HLO_TUPLE);
  assert_int_equal(inner->n_tuple, 2);
  assert_int_equal(inner->bytes, 11);
  const int64_t leaf_bytes[4] = {16, 8, 3, 1};
  for (int k = 0; k < 4; k++)
    assert_int_equal(m->shapes[mb_hlo_shape_leaf(m, t->shape, k)].bytes, leaf_bytes[k]);
  assert_int_equal(mb_hlo_shape_leaf(m, t->shape, 4), -1);
  /* the conditional calls %a then %b */
  const mb_hlo_instr *c = &m->instrs[m->comps[2].root];
  assert_int_equal(c->n_called, 2);
  assert_int_equal(m->refs[c->called], 0);
  assert_int_equal(m->refs[c->called + 1], 1);
  mb_hlo_module_free(m);
}

static void test_malformed_messages(void **state) {
  (void)state;
  expect_error("HloMod x\n", "t.hlo:1: expected 'HloModule' at the start of the module");
  expect_error("", "t.hlo:1: expected 'HloModule' at the start of the module");
  expect_error("HloModule m\n", "t.hlo:2: expected at least one computation after the header");
  expect_error("HloModule m\nENTRY e {\n  p f32[2] parameter(0)\n}\n",
               "t.hlo:3: expected '=' after instruction name 'p'");
  expect_error("HloModule m\nENTRY e {\n  p = f33[2] parameter(0)\n}\n",
               "t.hlo:3: expected an element type (pred, s4..s64, u4..u64, f16, bf16, f32, f64, "
               "f8e4m3fn, f8e5m2, c64, c128, token, ...), got 'f33'");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2 parameter(0)\n}\n",
               "t.hlo:3: expected a shape (like f32[2,3]{1,0} or (f32[], s32[4])), got 'f32[2 "
               "parameter(0)'");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  q = f32[2] negate(p)\n",
               "t.hlo:5: expected '}' closing computation 'e' opened at line 2");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(0), metadata={op_name=\"x}\n}\n",
               "t.hlo:3: expected '\"' closing the string opened here");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  q = f32[2] negate p\n}\n",
               "t.hlo:4: expected '(' after opcode 'negate' of 'q'");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  p = f32[2] negate(p)\n}\n",
               "t.hlo:4: instruction 'p' is defined twice (first at line 3)");
  expect_error(
      "HloModule m\nENTRY e {\n  p = (f32[2], s32[]) parameter(0)\n"
      "  g = f32[2] get-tuple-element(p), index=2\n  ROOT n = f32[2] negate(g)\n}\n",
      "t.hlo:4: get-tuple-element 'g': index=2 is not an element of its operand's shape");
  expect_error(
      "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3] parameter(1)\n"
      "  ROOT d = f32[2] dot(a, b), lhs_contracting_dims={2}\n}\n",
      "t.hlo:5: dot 'd': lhs_contracting_dims: dimension 2 out of range for rank 2");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
      "  ROOT r = f32[2] map(p), to_apply=%nowhere\n}\n",
      "t.hlo:4: computation 'nowhere' called by 'r' is not defined");
  expect_error(
      "HloModule m\nc {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c\n}\n"
      "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] map(p), to_apply=c\n}\n",
      "t.hlo:2: computation 'c' calls itself (directly or through others)");
  expect_error("HloModule m\nENTRY e {\n  n = f32[2] negate(p)\n  p = f32[2] parameter(0)\n}\n",
               "t.hlo:3: operand 'p' of 'n' is used before it is defined (line 4)");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  n = f32[2] negate(n)\n"
      "  ROOT r = f32[2] add(p, n)\n}\n",
      "t.hlo:4: operand 'n' of 'n' is used before it is defined (line 4)");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(0), dimensions=\n}\n",
               "t.hlo:3: expected a value after 'dimensions='");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n}\n",
               "t.hlo:2: entry computation 'e': expected at least one instruction that computes "
               "(found only parameters, constants and aliases)");
  expect_error("HloModule m\nENTRY e {\n  p = f32[4611686018427387904] parameter(0)\n}\n",
               "t.hlo:3: expected a dimension below 2^62 in the shape");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(0), index=16666666666666666666\n}\n",
               "t.hlo:3: expected an integer below 2^62 after 'index='");
  expect_error("HloModule m\nENTRY e {\n  p = c128[300000000000000000] parameter(0)\n}\n",
               "t.hlo:3: expected a shape below 2^62 bytes");
  /* a tuple's bytes: 2^61 + 2^61 is refused, 2^61 + (2^61 - 1) parses */
  expect_error(
      "HloModule m\nENTRY e {\n  p = (s8[2305843009213693952], s8[2305843009213693952]) "
      "parameter(0)\n}\n",
      "t.hlo:3: expected a tuple shape below 2^62 bytes");
  const char *largest =
      "HloModule m\nENTRY e {\n  p = (s8[2305843009213693952], "
      "s8[2305843009213693951]) parameter(0)\n}\n";
  mb_error err = {{0}};
  mb_hlo_module *m = mb_hlo_parse(largest, strlen(largest), "t.hlo", &err);
  if (!m) fail_msg("%s", err.message);
  assert_int_equal(m->shapes[m->instrs[0].shape].bytes, ((int64_t)1 << 62) - 1);
  mb_hlo_module_free(m);
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  c = f32[4] convolution(p, p), "
      "window={size=2}\n}\n",
      "t.hlo:4: convolution 'c': expected dim_labels= (like b01f_01io->b01f)");
}

/* The messages of the parser's remaining refusals (found untested by scripts/coverage.sh): each
 * names the file, the line and what was expected there. */
static void test_structure_messages(void **state) {
  (void)state;
  const char *body = "  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n";
  char text[4096];
  snprintf(text, sizeof text, "HloModule m\nENTRY e {\n%sENTRY f {\n%s", body, body);
  expect_error(text, "t.hlo:6: expected one ENTRY computation, found a second (first at line 2)");
  snprintf(text, sizeof text, "HloModule m\nc {\n%sc {\n%sENTRY e {\n%s", body, body, body);
  expect_error(text, "t.hlo:6: computation 'c' is defined twice (first at line 2)");
  snprintf(text, sizeof text, "HloModule m\nc {\n}\nENTRY e {\n%s", body);
  expect_error(text, "t.hlo:2: expected at least one instruction in computation 'c'");
  snprintf(text, sizeof text, "HloModule m\nENTRY e (p: f32[2]) f32[2] {\n%s", body);
  expect_error(text, "t.hlo:2: expected '->' after the parameters of 'e'");
  snprintf(text, sizeof text, "HloModule m\nENTRY e (p: f32[2] f32[2] {\n%s", body);
  expect_error(text, "t.hlo:2: expected ',' or ')' in the signature of 'e'");
  expect_error("HloModule m\n%x e {\n}\n", "t.hlo:2: expected '{' opening computation 'x'");
  /* the first ROOT is the module's instruction 0 */
  expect_error(
      "HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n",
      "t.hlo:4: expected one ROOT in computation 'e' (first at line 3)");
  expect_error("HloModule m\nENTRY e {\n  /* open\n  ROOT p = f32[2] parameter(0)\n}\n",
               "t.hlo:3: expected '*/' closing the comment");
  expect_error("HloModule m\nENTRY e {\n  = f32[2] parameter(0)\n}\n",
               "t.hlo:3: expected an instruction name or '}', got '= f32[2] parameter(0)'");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] (0)\n}\n",
               "t.hlo:3: expected an opcode after the shape of 'p', got '(0)'");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(x)\n}\n",
               "t.hlo:3: expected a parameter number in 'parameter(N)' of 'p'");
  expect_error("HloModule m\nENTRY e {\n  p = f32[2] parameter(0), 5\n}\n",
               "t.hlo:3: expected an attribute 'key=value' after ',', got '5'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(5)\n}\n",
      "t.hlo:4: expected an operand name in the operands of 'n', got '5)'");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[?] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n",
      "t.hlo:3: expected a bounded dimension (like 4 or <=4), got '?' (unbounded dynamic)");
  /* tuple shapes: 64 levels deep are read, 65 refused */
  for (int depth = 64; depth <= 65; depth++) {
    int k = snprintf(text, sizeof text, "HloModule m\nENTRY e {\n  p = ");
    for (int i = 0; i < depth; i++) text[k++] = '(';
    k += snprintf(text + k, sizeof text - (size_t)k, "f32[2]");
    for (int i = 0; i < depth; i++) text[k++] = ')';
    snprintf(text + k, sizeof text - (size_t)k,
             " parameter(0)\n  g = f32[2] get-tuple-element(p), index=0\n  ROOT n = f32[2] "
             "negate(p)\n}\n");
    if (depth == 65) {
      expect_error(text, "t.hlo:3: expected tuple shapes nested at most 64 deep");
    } else {
      mb_error err = {{0}};
      mb_workload *w = import_str(text, true, NULL, &err);
      if (!w) fail_msg("64-deep tuple: %s", err.message);
      mb_workload_free(w);
    }
  }
  /* a token (after-all's result) holds no memory: no buffer for it */
  mb_error err = {{0}};
  mb_workload *w = import_str(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  t = token[] "
      "after-all()\n  ROOT n = f32[2] negate(p)\n}\n",
      true, NULL, &err);
  if (!w) fail_msg("token: %s", err.message);
  assert_true(mb_workload_find_buffer(w, "t") < 0);
  mb_workload_free(w);
}

/* ---- custom-calls ---- */

/* Library GEMMs get 2*M*N*K from their shapes (here M=4, N=16, K=8, so 1024 per batch);
 * GEMMs whose shapes or dimension numbers do not determine it, and other targets, get 0 FLOPs
 * of their own and are counted and named in the report, never refused. */
static const char *CUSTOM_CALL_MODULE =
    "HloModule cc\n"
    "%inner (u: f32[4,8], v: f32[8,16]) -> f32[4,16] {\n"
    "  %u = f32[4,8] parameter(0)\n"
    "  %v = f32[8,16] parameter(1)\n"
    "  ROOT %gi = f32[4,16] custom-call(%u, %v), custom_call_target=\"__onednn$matmul\"\n"
    "}\n"
    "ENTRY %main {\n"
    "  %a = f32[4,8] parameter(0)\n"
    "  %b = f32[8,16] parameter(1)\n"
    "  %x = f32[2,8,4] parameter(2)\n"
    "  %y = f32[2,16,8] parameter(3)\n"
    "  %p = f32[2,4,8] parameter(4)\n"
    "  %q = f32[2,8,16] parameter(5)\n"
    "  %v1 = f32[8] parameter(8)\n"
    /* cuBLAS: (result, workspace), JSON backend_config */
    "  %g1 = (f32[4,16]{1,0}, s8[1024]{0}) custom-call(f32[4,8]{1,0} %a, f32[8,16]{1,0} %b), "
    "custom_call_target=\"__cublas$gemm\", backend_config={\"operation_queue_id\":\"0\","
    "\"gemm_backend_config\":{\"alpha_real\":1,\"beta\":0,\"dot_dimension_numbers\":{"
    "\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"],"
    "\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[]},\"epilogue\":\"DEFAULT\"}}\n"
    /* batched, both operands transposed, backend_config as an escaped string: only the
     * dimension numbers give K = 8 (the standard layout does not fit these shapes) */
    "  %g2 = f32[2,4,16] custom-call(%x, %y), custom_call_target=\"__cublas$lt$matmul\", "
    "backend_config=\"{\\\"gemm_backend_config\\\":{\\\"dot_dimension_numbers\\\":{"
    "\\\"lhs_contracting_dimensions\\\":[\\\"1\\\"],\\\"rhs_contracting_dimensions\\\":"
    "[\\\"2\\\"],\\\"lhs_batch_dimensions\\\":[\\\"0\\\"],\\\"rhs_batch_dimensions\\\":"
    "[\\\"0\\\"]}}}\"\n"
    /* no dimension numbers: the standard layout [B, M, K] x [B, K, N] -> [B, M, N] */
    "  %g3 = f32[2,4,16] custom-call(%p, %q), custom_call_target=\"__onednn$matmul\", "
    "backend_config={\"onednn_matmul_config\":{\"transpose_a\":false}}\n"
    "  %c = f32[4,16] call(%a, %b), to_apply=%inner\n"
    /* GEMMs whose cost the shapes do not determine */
    "  %g4 = f32[4,16] custom-call(%a, %q), custom_call_target=\"__cublas$gemm\"\n"
    "  %g5 = f32[4,16] custom-call(%a, %b), custom_call_target=\"__cublas$gemm\", "
    "backend_config={\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"7\"],"
    "\"rhs_contracting_dimensions\":[\"0\"]}}\n"
    "  %g6 = f32[4,16] custom-call(%a, %b), custom_call_target=\"__cublas$gemm\", "
    "backend_config={\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\",\"x\"],"
    "\"rhs_contracting_dimensions\":[\"0\"]}}\n"
    "  %g7 = f32[4,16] custom-call(%a, %b), custom_call_target=\"__cublas$gemm\", "
    "backend_config={\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":"
    "[\"0\"],\"lhs_contracting_dimensions\":[\"1\"]}\n"
    "  %g8 = f32[4,16] custom-call(%a), custom_call_target=\"__cublas$gemm\"\n"
    "  %g9 = f32[4,17] custom-call(%a, %b), custom_call_target=\"__cublas$gemm\", "
    "backend_config={\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],"
    "\"rhs_contracting_dimensions\":[\"0\"]}}\n"
    "  %g10 = f32[16] custom-call(%v1, %b), custom_call_target=\"__cublas$gemm\"\n"
    /* other targets: cuDNN (unknown), XLA's Sharding (0 FLOPs, known), none at all */
    "  %img = f32[1,8,8,4] parameter(6)\n"
    "  %ker = f32[3,3,4,4] parameter(7)\n"
    "  %cv = (f32[1,8,8,4], u8[0]) custom-call(%img, %ker), window={size=3x3 pad=1_1x1_1}, "
    "dim_labels=b01f_01io->b01f, custom_call_target=\"__cudnn$convForward\"\n"
    "  %sh = f32[4,8] custom-call(%a), custom_call_target=\"Sharding\", sharding={replicated}\n"
    "  %nt = f32[4,8] custom-call(%a)\n"
    "  ROOT %out = ((f32[4,16], s8[1024]), f32[2,4,16], f32[2,4,16], f32[4,16], f32[4,16], "
    "f32[4,16], f32[4,16], f32[4,16], f32[4,16], f32[4,17], f32[16], (f32[1,8,8,4], u8[0]), "
    "f32[4,8], f32[4,8]) "
    "tuple(%g1, %g2, %g3, %c, %g4, %g5, %g6, %g7, %g8, %g9, %g10, %cv, %sh, %nt)\n"
    "}\n";

static void test_custom_call_gemm_flops(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(CUSTOM_CALL_MODULE, false, &rep, &err);
  if (!w) fprintf(stderr, "%s\n", err.message);
  assert_non_null(w);
  assert_true(op_flops(w, "g1") == 1024);
  assert_true(op_flops(w, "g2") == 2048);
  assert_true(op_flops(w, "g3") == 2048);
  /* the GEMM in the called computation, inlined in place of the call */
  assert_true(op_flops(w, "inner/gi") == 1024);
  assert_true(mb_workload_find_op(w, "c") < 0);
  assert_int_equal(rep.n_gemm_custom_calls, 4);
  /* cuBLAS's tuple: one buffer per leaf, the workspace included */
  assert_int_equal(buffer(w, "g1#1")->size, 1024);
  const char *zero[] = {"g4", "g5", "g6", "g7", "g8", "g9", "g10", "cv", "sh", "nt"};
  for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++) assert_true(op_flops(w, zero[i]) == 0);
  mb_workload_free(w);
}

static void test_custom_call_unknown_cost_reported(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(CUSTOM_CALL_MODULE, true, &rep, &err);
  assert_non_null(w);
  /* g4..g10 (7 GEMMs the shapes do not determine), cv, nt; not the estimated GEMMs or Sharding */
  assert_int_equal(rep.n_unknown_custom_calls, 9);
  assert_int_equal(rep.n_unknown_opcodes, 0);
  assert_int_equal(rep.n_unknown_targets, 3);
  assert_string_equal(rep.unknown_targets[0].name, "__cublas$gemm");
  assert_int_equal(rep.unknown_targets[0].count, 7);
  assert_string_equal(rep.unknown_targets[1].name, "__cudnn$convForward");
  assert_int_equal(rep.unknown_targets[1].count, 1);
  char out[256];
  assert_string_equal(mb_hlo_report_targets(&rep, out, sizeof out),
                      "__cublas$gemm x7, __cudnn$convForward, (no custom_call_target)");
  /* cut to fit, always terminated */
  assert_string_equal(mb_hlo_report_targets(&rep, out, 10), "__cublas$");
  mb_workload_free(w);

  /* more distinct targets than the report lists: the rest are counted */
  char text[4096];
  int n = snprintf(text, sizeof text, "HloModule many\nENTRY main {\n  p = f32[2] parameter(0)\n");
  for (int i = 0; i < 11; i++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "  c%d = f32[2] custom-call(p), custom_call_target=\"lib$op%d\"\n", i,
                  i == 1 ? 0 : i);
  snprintf(text + n, sizeof text - (size_t)n, "  ROOT r = f32[2] add(c9, c10)\n}\n");
  w = import_str(text, true, &rep, &err);
  assert_non_null(w);
  assert_int_equal(rep.n_unknown_custom_calls, 11);
  assert_int_equal(rep.n_unknown_targets, MB_HLO_MAX_TARGETS);
  assert_string_equal(mb_hlo_report_targets(&rep, out, sizeof out),
                      "lib$op0 x2, lib$op2, lib$op3, lib$op4, lib$op5, lib$op6, lib$op7, "
                      "lib$op8, and 2 more");
  mb_workload_free(w);

  /* a file without custom-calls reports none */
  w = import_str(REDUCE_MODULE, true, &rep, &err);
  assert_non_null(w);
  assert_int_equal(rep.n_unknown_custom_calls, 0);
  assert_string_equal(mb_hlo_report_targets(&rep, out, sizeof out), "");
  mb_workload_free(w);
}

/* A kernel's own cost_estimate in its backend_config (JAX's Pallas on TPU writes one when the
 * kernel's author gave pl.CostEstimate): FLOPs = flops + transcendentals, in either JSON form;
 * an estimate that is absent, unreadable or ambiguous leaves the kernel of unknown cost. */
static void test_custom_call_kernel_cost_estimate(void **state) {
  (void)state;
  /* each kernel k<i> gets "cost_estimate": {<fields[i]>} (the escaped form for even i) */
  static const char *const fields[] = {
      /* read: */
      ("\"bytes_accessed\":4096,\"flops\":1000,\"remote_bytes_transferred\":0,"
       "\"transcendentals\":24"),
      "\"flops\": 1000, \"transcendentals\": 24, \"bytes_accessed\": 4096",
      "\"flops\":999999999999999999",
      "\"transcendentals\":0, \"flops\":7",
      "\"flops\":0",
      /* unknown: */
      "\"flops\":1.5e9",
      "\"flops\":1,\"flops\":2",
      "\"flops\":0,\"flops\":2",
      "\"transcendentals\":5",
      "\"remote_flops\":5,\"bytes_accessed\":1",
      "\"flops\":1000000000000000000",
      "\"flops\":-3",
  };
  enum { N_READ = 5, N_KERNELS = sizeof fields / sizeof fields[0] };
  const double flops[N_READ] = {1024, 1024, 999999999999999999.0, 7, 0};
  char text[8192];
  int n = snprintf(text, sizeof text,
                   "HloModule pallas\nENTRY main {\n  p = f32[8,128] parameter(0)\n");
  for (int i = 0; i < N_KERNELS; i++) {
    char cfg[512], escaped[1024];
    snprintf(cfg, sizeof cfg,
             "{\"custom_call_config\": {\"body\": \"TUxSQ\", \"cost_estimate\": {%s}}}", fields[i]);
    size_t k = 0;
    for (const char *c = cfg; *c; c++) {
      if (*c == '"') escaped[k++] = '\\';
      escaped[k++] = *c;
    }
    escaped[k] = '\0';
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "  k%d = f32[8,128] custom-call(p), custom_call_target=\"tpu_custom_call\", "
                  "backend_config=%s%s%s\n",
                  i, i % 2 ? "" : "\"", i % 2 ? cfg : escaped, i % 2 ? "" : "\"");
  }
  /* the estimate's fields are read inside its object only; a second object is ambiguous */
  n += snprintf(text + n, sizeof text - (size_t)n,
                "  outside = f32[8,128] custom-call(p), custom_call_target=\"tpu_custom_call\", "
                "backend_config={\"cost_estimate\": {\"transcendentals\": 5}, \"flops\": 9}\n"
                "  twice = f32[8,128] custom-call(p), custom_call_target=\"tpu_custom_call\", "
                "backend_config={\"cost_estimate\": {\"flops\": 5}, \"cost_estimate\": "
                "{\"flops\": 5}}\n"
                "  none = f32[8,128] custom-call(p), custom_call_target=\"tpu_custom_call\"\n"
                "  ROOT r = (f32[8,128], f32[8,128]) tuple(k0, k1)\n}\n");
  assert_true(n < (int)sizeof text);
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, false, &rep, &err);
  if (!w) fail_msg("%s", err.message);
  char op[16];
  for (int i = 0; i < N_KERNELS; i++) {
    snprintf(op, sizeof op, "k%d", i);
    double expected = i < N_READ ? flops[i] : 0;
    if (op_flops(w, op) != expected)
      fail_msg("%s: %g FLOPs, expected %g", op, op_flops(w, op), expected);
  }
  assert_true(op_flops(w, "outside") == 0 && op_flops(w, "twice") == 0 && op_flops(w, "none") == 0);
  assert_int_equal(rep.n_estimated_kernels, N_READ);
  assert_int_equal(rep.n_unknown_custom_calls, N_KERNELS - N_READ + 3);
  assert_int_equal(rep.n_gemm_custom_calls, 0);
  mb_workload_free(w);
}

/* A custom-call whose text is malformed is refused with file:line, like any instruction; a GEMM
 * whose operands or backend_config make no sense is imported with 0 FLOPs and counted. */
static void test_custom_call_malformed(void **state) {
  (void)state;
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[2,2] parameter(0)\n"
      "  ROOT g = f32[2,2] custom-call(p, p), custom_call_target=\n}\n",
      "t.hlo:4: expected a value after 'custom_call_target='");
  expect_error(
      "HloModule m\nENTRY e {\n  p = f32[2,2] parameter(0)\n"
      "  ROOT g = f32[2,2] custom-call(p, p), custom_call_target=\"__cublas$gemm\", "
      "backend_config=\"{\\\"a\\\":1}\n}\n",
      "t.hlo:4: expected '\"' closing the string opened here");
  static const char *const CONFIGS[] = {
      "[\"99999999999\"],\"rhs_contracting_dimensions\":[\"0\"]", /* too large */
      "[\"-1\"],\"rhs_contracting_dimensions\":[\"0\"]",          /* negative */
      "[\"1\"2],\"rhs_contracting_dimensions\":[\"0\"]",          /* junk after an item */
      "[1,],\"rhs_contracting_dimensions\":[0]",                  /* empty item */
      "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"rhs_contracting_dimensions\":[0]", /* 17 dims */
      "[\"1\",\"1\"],\"rhs_contracting_dimensions\":[\"0\",\"0\"]",             /* a dim twice */
      "[\"1\"]",                                                                /* no rhs dims */
      /* batch dimensions on one side only */
      "[\"1\"],\"rhs_contracting_dimensions\":[\"0\"],\"lhs_batch_dimensions\":[\"0\"]",
  };
  char text[8192];
  int n = snprintf(text, sizeof text,
                   "HloModule m\nENTRY e {\n  a = f32[4,8] parameter(0)\n"
                   "  b = f32[8,16] parameter(1)\n  t = (f32[4,8], f32[8,16]) tuple(a, b)\n"
                   "  tk = token[] after-all()\n");
  int32_t k = 0;
  for (; k < (int32_t)(sizeof CONFIGS / sizeof CONFIGS[0]); k++)
    n +=
        snprintf(text + n, sizeof text - (size_t)n,
                 "  g%d = f32[4,16] custom-call(a, b), custom_call_target=\"__cublas$gemm\", "
                 "backend_config={\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":%s}}\n",
                 k, CONFIGS[k]);
  n += snprintf(text + n, sizeof text - (size_t)n,
                "  g%d = f32[4,16] custom-call(t, b), custom_call_target=\"__cublas$gemm\"\n"
                "  g%d = f32[4,16] custom-call(tk, b), custom_call_target=\"__cublas$gemm\"\n"
                "  g%d = () custom-call(a, b), custom_call_target=\"__onednn$matmul\"\n"
                "  ROOT r = f32[4,16] custom-call(a, b), custom_call_target=\"__cublas$gemm\", "
                "backend_config={}\n}\n",
                k, k + 1, k + 2);
  assert_true(n < (int)sizeof text);
  mb_error err = {{0}};
  mb_hlo_report rep;
  mb_workload *w = import_str(text, false, &rep, &err);
  if (!w) fprintf(stderr, "%s\n", err.message);
  assert_non_null(w);
  assert_int_equal(rep.n_unknown_custom_calls, k + 3);
  assert_int_equal(rep.n_gemm_custom_calls, 1); /* r: no dimension numbers, standard layout */
  for (int32_t i = 0; i < k + 3; i++) {
    char nm[16];
    snprintf(nm, sizeof nm, "g%d", i);
    assert_true(op_flops(w, nm) == 0);
  }
  assert_true(op_flops(w, "r") == 1024);
  mb_workload_free(w);
}

static void test_workload_name_and_source(void **state) {
  (void)state;
  mb_error err = {{0}};
  mb_hlo_options opt;
  mb_hlo_options_default(&opt);
  mb_workload *w = mb_hlo_import_text(REDUCE_MODULE, strlen(REDUCE_MODULE), "dir/my model.hlo",
                                      &opt, NULL, &err);
  assert_non_null(w);
  assert_string_equal(w->name, "my_model");
  assert_non_null(strstr(w->source, "module t"));
  mb_workload_free(w);
  /* a file name without an extension is the name as it is */
  w = mb_hlo_import_text(REDUCE_MODULE, strlen(REDUCE_MODULE), "d.v2/module", &opt, NULL, &err);
  assert_non_null(w);
  assert_string_equal(w->name, "module");
  mb_workload_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_real_files_golden),
      cmocka_unit_test(test_no_fusion_buffers_and_flops),
      cmocka_unit_test(test_fusion_rule),
      cmocka_unit_test(test_fusion_keeps_outputs_and_large_constants),
      cmocka_unit_test(test_shapes_and_aliasing),
      cmocka_unit_test(test_layout_bytes_rule),
      cmocka_unit_test(test_layouts_in_text),
      cmocka_unit_test(test_dot_and_convolution_flops),
      cmocka_unit_test(test_called_computation_flops),
      cmocka_unit_test(test_control_flow),
      cmocka_unit_test(test_loop_inlining),
      cmocka_unit_test(test_loop_inlining_limits),
      cmocka_unit_test(test_call_inlining),
      cmocka_unit_test(test_conditional_inlining),
      cmocka_unit_test(test_sliced_reads),
      cmocka_unit_test(test_slice_and_gather_reads),
      cmocka_unit_test(test_scatter_in_place),
      cmocka_unit_test(test_update_in_place_outside_loops),
      cmocka_unit_test(test_update_in_place_of_a_variadic_scatter),
      cmocka_unit_test(test_update_in_place_of_donated_parameters),
      cmocka_unit_test(test_outputs_into_donated_parameters),
      cmocka_unit_test(test_parse_donations),
      cmocka_unit_test(test_select_and_scatter_flops),
      cmocka_unit_test(test_call_nesting_limit),
      cmocka_unit_test(test_async_pairs),
      cmocka_unit_test(test_pinning_options),
      cmocka_unit_test(test_unknown_opcode_and_attribute),
      cmocka_unit_test(test_xla_opcode_names),
      cmocka_unit_test(test_literals_comments_and_lines),
      cmocka_unit_test(test_parse_tree),
      cmocka_unit_test(test_malformed_messages),
      cmocka_unit_test(test_structure_messages),
      cmocka_unit_test(test_workload_name_and_source),
      cmocka_unit_test(test_custom_call_gemm_flops),
      cmocka_unit_test(test_custom_call_unknown_cost_reported),
      cmocka_unit_test(test_custom_call_kernel_cost_estimate),
      cmocka_unit_test(test_custom_call_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
