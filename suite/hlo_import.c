/* HLO module -> workload. The rules implemented here are documented, with their reasons, in
 * datasets/HLO_IMPORT.md (listed in datasets/README.md); keep both in step. */
#include "hlo_import.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "hlo_parse.h"
#include "paths.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define MAX_CALL_DEPTH 64    /* nesting of called computations; real modules use a few levels */
#define MAX_RUNS (1ll << 40) /* runs of an instruction in nested loops, so that bytes fit */

/* ---- opcode classes ---- */

typedef enum op_class {
  C_UNKNOWN = 0,
  C_PARAMETER,
  C_CONSTANT,
  C_ALIAS,       /* bitcast, get-tuple-element, tuple, add-dependency, domain, opt-barrier */
  C_RESHAPE,     /* an alias when element type and count are unchanged (always, when valid) */
  C_ELEMENTWISE, /* 1 FLOP per output element; fusible producer */
  C_BROADCAST,   /* broadcast, iota: 0 FLOPs; fusible producer */
  C_DOT,
  C_CONVOLUTION,
  C_REDUCE,             /* to_apply once per element of operand 0 */
  C_REDUCE_WINDOW,      /* to_apply once per output element per window element */
  C_MAP,                /* to_apply once per output element */
  C_SCATTER,            /* to_apply once per element of the updates (last operand) */
  C_SELECT_AND_SCATTER, /* per source element: select (window - 1) times, scatter once */
  C_WHILE, /* body N times, condition N + 1 times (N: known_trip_count); once each if unknown */
  C_CONDITIONAL, /* the most expensive branch */
  C_CALLER,      /* fusion, call, async-start, custom-call...: sum of called computations */
  C_ASYNC_DONE,  /* *-done, async-update: 0 FLOPs; passes on what its *-start wrote (below) */
  C_DATA,        /* data movement and other known ops: 0 FLOPs, bytes only */
  C_OPAQUE,      /* known ops a fusion cannot enter (control flow, collectives, I/O) */
} op_class;

typedef struct {
  const char *name;
  op_class cls;
} opcode_info;

static const opcode_info OPCODES[] = {
    {"parameter", C_PARAMETER},
    {"constant", C_CONSTANT},
    {"bitcast", C_ALIAS},
    {"get-tuple-element", C_ALIAS},
    {"tuple", C_ALIAS},
    {"add-dependency", C_ALIAS},
    {"domain", C_ALIAS},
    {"opt-barrier", C_ALIAS},
    {"reshape", C_RESHAPE},
    {"broadcast", C_BROADCAST},
    {"iota", C_BROADCAST},
    {"dot", C_DOT},
    {"convolution", C_CONVOLUTION},
    {"reduce", C_REDUCE},
    {"reduce-window", C_REDUCE_WINDOW},
    {"map", C_MAP},
    {"scatter", C_SCATTER},
    {"select-and-scatter", C_SELECT_AND_SCATTER},
    {"sort", C_REDUCE},
    {"while", C_WHILE},
    {"conditional", C_CONDITIONAL},
    {"fusion", C_CALLER},
    {"call", C_CALLER},
    {"abs", C_ELEMENTWISE},
    {"add", C_ELEMENTWISE},
    {"and", C_ELEMENTWISE},
    {"atan2", C_ELEMENTWISE},
    {"bitcast-convert", C_ELEMENTWISE},
    {"cbrt", C_ELEMENTWISE},
    {"ceil", C_ELEMENTWISE},
    {"clamp", C_ELEMENTWISE},
    {"compare", C_ELEMENTWISE},
    {"complex", C_ELEMENTWISE},
    {"convert", C_ELEMENTWISE},
    {"cosine", C_ELEMENTWISE},
    {"count-leading-zeros", C_ELEMENTWISE},
    {"divide", C_ELEMENTWISE},
    {"erf", C_ELEMENTWISE},
    {"exponential", C_ELEMENTWISE},
    {"exponential-minus-one", C_ELEMENTWISE},
    {"floor", C_ELEMENTWISE},
    {"imag", C_ELEMENTWISE},
    {"is-finite", C_ELEMENTWISE},
    {"log", C_ELEMENTWISE},
    {"log-plus-one", C_ELEMENTWISE},
    {"logistic", C_ELEMENTWISE},
    {"maximum", C_ELEMENTWISE},
    {"minimum", C_ELEMENTWISE},
    {"multiply", C_ELEMENTWISE},
    {"negate", C_ELEMENTWISE},
    {"not", C_ELEMENTWISE},
    {"or", C_ELEMENTWISE},
    {"popcnt", C_ELEMENTWISE},
    {"power", C_ELEMENTWISE},
    {"real", C_ELEMENTWISE},
    {"reduce-precision", C_ELEMENTWISE},
    {"remainder", C_ELEMENTWISE},
    {"round-nearest-afz", C_ELEMENTWISE},
    {"round-nearest-even", C_ELEMENTWISE},
    {"rsqrt", C_ELEMENTWISE},
    {"select", C_ELEMENTWISE},
    {"shift-left", C_ELEMENTWISE},
    {"shift-right-arithmetic", C_ELEMENTWISE},
    {"shift-right-logical", C_ELEMENTWISE},
    {"sign", C_ELEMENTWISE},
    {"sine", C_ELEMENTWISE},
    {"sqrt", C_ELEMENTWISE},
    {"stochastic-convert", C_ELEMENTWISE},
    {"subtract", C_ELEMENTWISE},
    {"tan", C_ELEMENTWISE},
    {"tanh", C_ELEMENTWISE},
    {"xor", C_ELEMENTWISE},
    {"batch-norm-grad", C_DATA},
    {"batch-norm-inference", C_DATA},
    {"batch-norm-training", C_DATA},
    {"cholesky", C_DATA},
    {"concatenate", C_DATA},
    {"copy", C_DATA},
    {"dynamic-reshape", C_DATA},
    {"dynamic-slice", C_DATA},
    {"dynamic-update-slice", C_DATA},
    {"fft", C_DATA},
    {"gather", C_DATA},
    {"get-dimension-size", C_DATA},
    {"set-dimension-size", C_DATA},
    {"pad", C_DATA},
    {"reverse", C_DATA},
    {"rng", C_DATA},
    {"rng-bit-generator", C_DATA},
    {"rng-get-and-update-state", C_DATA},
    {"slice", C_DATA},
    {"topk", C_DATA},
    {"transpose", C_DATA},
    {"triangular-solve", C_DATA},
    {"partition-id", C_DATA},
    {"replica-id", C_DATA},
    {"custom-call", C_CALLER},
    {"async-start", C_CALLER},
    {"async-update", C_ASYNC_DONE},
    {"async-done", C_ASYNC_DONE},
    {"after-all", C_OPAQUE},
    {"all-gather", C_OPAQUE},
    {"all-gather-start", C_OPAQUE},
    {"all-gather-done", C_ASYNC_DONE},
    {"all-reduce", C_OPAQUE},
    {"all-reduce-start", C_OPAQUE},
    {"all-reduce-done", C_ASYNC_DONE},
    {"all-to-all", C_OPAQUE},
    {"ragged-all-to-all", C_OPAQUE},
    {"collective-broadcast", C_OPAQUE},
    {"collective-permute", C_OPAQUE},
    {"collective-permute-start", C_OPAQUE},
    {"collective-permute-done", C_ASYNC_DONE},
    {"reduce-scatter", C_OPAQUE},
    {"copy-start", C_OPAQUE},
    {"copy-done", C_ASYNC_DONE},
    {"infeed", C_OPAQUE},
    {"outfeed", C_OPAQUE},
    {"send", C_OPAQUE},
    {"send-done", C_ASYNC_DONE},
    {"recv", C_OPAQUE},
    {"recv-done", C_ASYNC_DONE},
};
static const int N_OPCODES = (int)(sizeof OPCODES / sizeof OPCODES[0]);

static op_class classify(const mb_hlo_module *m, mb_hlo_span opcode) {
  for (int i = 0; i < N_OPCODES; i++)
    if (mb_hlo_span_eq(m, opcode, OPCODES[i].name)) return OPCODES[i].cls;
  return C_UNKNOWN;
}

void mb_hlo_options_default(mb_hlo_options *opt) {
  opt->fusion = true;
  opt->pin_parameters = true;
  opt->pin_outputs = true;
  opt->loop_bodies = true;
}

/* ---- state ---- */

typedef struct int_list {
  int32_t *v;
  int32_t n, cap;
} int_list;

static bool list_push(int_list *l, int32_t x) {
  if (l->n == l->cap) {
    int32_t ncap = l->cap ? l->cap * 2 : 4;
    int32_t *q = realloc(l->v, (size_t)ncap * sizeof *q);
    if (!q) return false;
    l->v = q;
    l->cap = ncap;
  }
  l->v[l->n++] = x;
  return true;
}

static bool list_has(const int_list *l, int32_t x) {
  for (int32_t i = 0; i < l->n; i++)
    if (l->v[i] == x) return true;
  return false;
}

enum { NOT_DONATED = -2, DONATED_ANY = -1 };

typedef struct buffer_info {
  int32_t def;  /* flat index of the defining instruction */
  int32_t leaf; /* leaf index within the definer's shape */
  int64_t size;
  bool output;
  bool dead;             /* fused away */
  int32_t merged_into;   /* part of a loop's state or updated in place: the buffer that holds it
                          * (-1: none) */
  bool updated_in_place; /* an update outside a loop's state holds its value here
                          * (merge_in_place_updates) */
  int32_t donated_to;    /* an entry parameter's array that the header donates (mark_donations):
                          * the root's leaf it may hold, DONATED_ANY (a buffer donor: any output
                          * of its size) or NOT_DONATED */
  int_list readers;      /* flat instructions that read it (may hold fused ones) */
} buffer_info;

/* An instruction of the flat program: the entry computation's instructions in order, with the
 * condition and then the body of each inlined while loop right after the while, and each
 * call's callee in place of the call (datasets/HLO_IMPORT.md, "While loops" and "Calls"). */
typedef struct flat_instr {
  int32_t g;         /* its module-wide instruction */
  int32_t fop_start; /* its operands, as flat indices: fops[fop_start + k] */
  int32_t instance;  /* instances of its computation flattened before this one (0: the first) */
  int32_t value_of;  /* the flat instruction whose value this one's is: for a parameter of an
                      * inlined condition or body its loop's while, for one of an inlined
                      * callee the call's operand, for an inlined call its callee's root; -1 */
  int32_t loop;      /* the while of the innermost inlined loop around it; -1 */
  int32_t loop_last; /* an inlined while: its body's last flat instruction; else -1 */
  int32_t body_root; /* an inlined while: its body's root; else -1 */
  int64_t runs;      /* how often it runs: the trip counts of the loops around it, multiplied */
} flat_instr;

typedef struct importer {
  const mb_hlo_module *m;
  const mb_hlo_options *opt;
  mb_hlo_report *rep;
  mb_error *err;
  const char *path;
  op_class *gcls;   /* class of every instruction of the module, by module-wide index */
  double *cc_flops; /* own FLOPs of estimated custom-calls, by module-wide index */
  int64_t *sliced;  /* per parameter of any computation, by module-wide index: the bytes of the
                     * slices and dynamic-slices that are all its users (0: none; -1: another
                     * use; find_sliced_parameters) */
  mb_hlo_span listed[MB_HLO_MAX_TARGETS]; /* the targets in rep->unknown_targets */
  pcre2_code *re_dnums; /* compiled at the first GEMM custom-call with a backend_config */
  pcre2_match_data *md;
  pcre2_code *re_trips; /* compiled at the first while with a backend_config */
  pcre2_match_data *md_trips;
  pcre2_code *re_cost, *re_cost_field; /* compiled at the first custom-call of unknown target */
  pcre2_match_data *md_cost, *md_cost_field;
  double *comp_flops;
  int8_t *comp_state;   /* 0 not computed, 1 in progress, 2 done */
  int8_t *inlining;     /* per computation: being flattened (a loop that holds itself) */
  int32_t *n_instances; /* per computation: instances flattened so far */
  /* the flat program: the entry computation's instructions in order (datasets/HLO_IMPORT.md,
   * "Schedule"), with loops inlined (flat_instr), indexed by e; the arrays below are per flat
   * instruction */
  int32_t n, cap;
  flat_instr *fi;
  int32_t *fops;
  int32_t n_fops, cap_fops;
  op_class *cls;
  int32_t *leaf_start; /* leaf_buf[leaf_start[e] .. + n_leaves): buffer per leaf, -1 none */
  int32_t *leaf_buf;
  double *flops;
  bool *fused;
  int32_t *op_of;
  int_list *reads;       /* distinct buffers read per entry instruction */
  int_list *fused_reads; /* of those, the ones read through a producer fused into it (kept for
                          * the ops that may read a part: may_read_part) */
  buffer_info *bufs;
  int32_t n_bufs, cap_bufs;
} importer;

static bool fail_line(importer *im, int32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail_line(importer *im, int32_t line, const char *fmt, ...) {
  char msg[MB_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mb_fail(im->err, "%s:%d: %s", im->path, line, msg);
}

static const char *iname(const importer *im, int32_t g, char *out, size_t n) {
  return mb_hlo_span_str(im->m, im->m->instrs[g].name, out, n);
}

static const mb_hlo_shape *shape_of(const importer *im, int32_t g) {
  return &im->m->shapes[im->m->instrs[g].shape];
}

static int32_t operand(const importer *im, const mb_hlo_instr *ins, int32_t k) {
  return im->m->refs[ins->operands + k];
}

/* Array shape of operand k, or NULL (with err set) when absent or not an array. */
static const mb_hlo_shape *operand_array(importer *im, const mb_hlo_instr *ins, int32_t k,
                                         const char *what) {
  char nm[128];
  if (k >= ins->n_operands) {
    fail_line(im, ins->line, "%s '%s': expected at least %d operands", what,
              mb_hlo_span_str(im->m, ins->name, nm, sizeof nm), k + 1);
    return NULL;
  }
  const mb_hlo_shape *s = shape_of(im, operand(im, ins, k));
  if (s->etype == MB_HLO_TUPLE) {
    fail_line(im, ins->line, "%s '%s': expected operand %d to be an array, got a tuple", what,
              mb_hlo_span_str(im->m, ins->name, nm, sizeof nm), k);
    return NULL;
  }
  return s;
}

static double elements_of(const mb_hlo_shape *s) {
  return s->etype == MB_HLO_TUPLE ? 0.0 : (double)s->elements;
}

static bool computation_flops(importer *im, int32_t c, int depth, double *out);

/* Sum (or max) of the FLOPs of an instruction's called computations. */
static bool called_flops(importer *im, const mb_hlo_instr *ins, int depth, bool take_max,
                         double *out) {
  double total = 0;
  for (int32_t k = 0; k < ins->n_called; k++) {
    double f = 0;
    if (!computation_flops(im, im->m->refs[ins->called + k], depth + 1, &f)) return false;
    total = take_max ? fmax(total, f) : total + f;
  }
  *out = total;
  return true;
}

static bool dot_flops(importer *im, const mb_hlo_instr *ins, double *out) {
  const mb_hlo_shape *lhs = operand_array(im, ins, 0, "dot");
  if (!lhs) return false;
  double contract = 1;
  char nm[128];
  for (int32_t k = 0; ins->lhs_contracting.n > 0 && k < ins->lhs_contracting.n; k++) {
    int64_t d = im->m->ints[ins->lhs_contracting.first + k];
    if (d >= lhs->rank)
      return fail_line(im, ins->line,
                       "dot '%s': lhs_contracting_dims: dimension %lld out of range for rank %d",
                       mb_hlo_span_str(im->m, ins->name, nm, sizeof nm), (long long)d, lhs->rank);
    contract *= (double)im->m->ints[lhs->dims + d];
  }
  *out = 2.0 * elements_of(&im->m->shapes[ins->shape]) * contract;
  return true;
}

/* 2 * output elements * kernel spatial window * input features / feature_group_count, with the
 * input-feature and kernel-spatial dimensions found through dim_labels (b01f_01io->b01f). */
static bool convolution_flops(importer *im, const mb_hlo_instr *ins, double *out) {
  char nm[128], labels[128];
  mb_hlo_span_str(im->m, ins->name, nm, sizeof nm);
  const mb_hlo_shape *lhs = operand_array(im, ins, 0, "convolution");
  const mb_hlo_shape *rhs = lhs ? operand_array(im, ins, 1, "convolution") : NULL;
  if (!rhs) return false;
  if (ins->dim_labels.len == 0 || ins->dim_labels.len >= (int32_t)sizeof labels)
    return fail_line(im, ins->line, "convolution '%s': expected dim_labels= (like b01f_01io->b01f)",
                     nm);
  mb_hlo_span_str(im->m, ins->dim_labels, labels, sizeof labels);
  char *us = strchr(labels, '_'), *arrow = strstr(labels, "->");
  if (!us || !arrow || arrow < us)
    return fail_line(im, ins->line,
                     "convolution '%s': expected dim_labels like b01f_01io->b01f, got '%s'", nm,
                     labels);
  int32_t lhs_len = (int32_t)(us - labels), rhs_len = (int32_t)(arrow - us - 1);
  if (lhs_len != lhs->rank || rhs_len != rhs->rank)
    return fail_line(im, ins->line,
                     "convolution '%s': dim_labels '%s' do not match operand ranks %d and %d", nm,
                     labels, lhs->rank, rhs->rank);
  double in_features = -1, window = 1;
  for (int32_t d = 0; d < lhs_len; d++)
    if (labels[d] == 'f') in_features = (double)im->m->ints[lhs->dims + d];
  for (int32_t d = 0; d < rhs_len; d++)
    if (us[1 + d] >= '0' && us[1 + d] <= '9') window *= (double)im->m->ints[rhs->dims + d];
  if (in_features < 0)
    return fail_line(im, ins->line,
                     "convolution '%s': dim_labels '%s': expected an 'f' in the input labels", nm,
                     labels);
  if (ins->feature_group_count <= 0)
    return fail_line(im, ins->line, "convolution '%s': feature_group_count must be >= 1", nm);
  *out = 2.0 * elements_of(&im->m->shapes[ins->shape]) * window * in_features /
         (double)ins->feature_group_count;
  return true;
}

/* ---- custom-calls (datasets/HLO_IMPORT.md, "Custom-calls") ---- */

/* Library GEMMs: result = lhs x rhs (+ an epilogue, not counted), 2*M*N*K FLOPs from shapes. */
static const char *const GEMM_TARGETS[] = {"__cublas$gemm", "__cublas$lt$matmul",
                                           "__cublas$lt$matmul$f8", "__onednn$matmul"};
/* XLA's own targets that annotate or move data: 0 FLOPs is their cost, not a guess. */
static const char *const DATA_TARGETS[] = {
    "Sharding",     "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost",
    "MoveToDevice", "AllocateBuffer",       "PadToStatic",          "SliceToDynamic"};

/* dot_dimension_numbers fields of a backend_config, as JSON ("lhs_contracting_dimensions":
 * ["1"]) or inside a JSON string (\"lhs_contracting_dimensions\":[\"1\"]). */
static const char DNUMS_PATTERN[] =
    "\\\\?\"(lhs|rhs)_(contracting|batch)_dimensions\\\\?\"\\s*:\\s*\\[([^\\]]*)\\]";

#define GEMM_MAX_DIMS 16

typedef struct gemm_dims {
  int32_t n[4]; /* lhs contracting, rhs contracting, lhs batch, rhs batch; -1 absent */
  int64_t d[4][GEMM_MAX_DIMS];
} gemm_dims;

static mb_hlo_span target_of(const mb_hlo_module *m, const mb_hlo_instr *ins) {
  mb_hlo_span t = ins->custom_call_target;
  if (t.len >= 2 && m->text[t.off] == '"' && m->text[t.off + t.len - 1] == '"') {
    t.off++;
    t.len -= 2;
  }
  return t;
}

static bool target_in(const mb_hlo_module *m, mb_hlo_span t, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (mb_hlo_span_eq(m, t, list[i])) return true;
  return false;
}

/* The inside of a dimension list: items 1, "1" or \"1\" (below 10^9) separated by commas. */
static bool parse_dim_list(const char *s, size_t len, int32_t *n, int64_t *d) {
  size_t i = 0;
  *n = 0;
  while (i < len && s[i] == ' ') i++;
  if (i == len) return true;
  for (;;) {
    while (i < len && s[i] == ' ') i++;
    bool quoted = false;
    if (i + 1 < len && s[i] == '\\' && s[i + 1] == '"') i++;
    if (i < len && s[i] == '"') {
      quoted = true;
      i++;
    }
    int64_t x = 0;
    int digits = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++)
      if (digits < 9) x = x * 10 + (s[i] - '0');
    if (digits == 0 || digits > 9 || *n == GEMM_MAX_DIMS) return false;
    if (quoted) {
      if (i + 1 < len && s[i] == '\\' && s[i + 1] == '"') i++;
      if (i >= len || s[i] != '"') return false;
      i++;
    }
    d[(*n)++] = x;
    while (i < len && s[i] == ' ') i++;
    if (i == len) return true;
    if (s[i++] != ',') return false;
  }
}

/* Compiles `pattern` into *re and its match data into *md at its first use (most modules need
 * neither). False with err set when that fails. */
static bool pattern_at_first_use(importer *im, const char *pattern, const char *what,
                                 pcre2_code **re, pcre2_match_data **md) {
  if (*re) return true;
  int code;
  PCRE2_SIZE off;
  *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
  if (!*re) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(code, buf, sizeof buf);
    return mb_fail(im->err, "%s: internal error compiling the %s pattern: %s", im->path, what,
                   (const char *)buf);
  }
  *md = pcre2_match_data_create_from_pattern(*re, NULL);
  return *md ? true : mb_fail(im->err, "%s: out of memory", im->path);
}

/* The dot_dimension_numbers in a backend_config: 1 found (in g), 0 absent, -1 malformed or
 * ambiguous (a field given twice), -2 internal error (err set). */
static int backend_dims(importer *im, mb_hlo_span cfg, gemm_dims *g) {
  if (!pattern_at_first_use(im, DNUMS_PATTERN, "backend_config", &im->re_dnums, &im->md)) return -2;
  const char *subject = im->m->text + cfg.off;
  PCRE2_SIZE len = (PCRE2_SIZE)cfg.len, pos = 0;
  int found = 0;
  for (;;) {
    int rc = pcre2_match(im->re_dnums, (PCRE2_SPTR)subject, len, pos, 0, im->md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH) return found;
    if (rc < 0) return -1; /* e.g. the match limit: treated as unparseable */
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(im->md);
    int k = (subject[ov[2]] == 'r' ? 1 : 0) + (subject[ov[4]] == 'b' ? 2 : 0);
    if (g->n[k] >= 0) return -1;
    if (!parse_dim_list(subject + ov[6], ov[7] - ov[6], &g->n[k], g->d[k])) return -1;
    found = 1;
    pos = ov[1];
  }
}

/* 2*M*N*K of a library GEMM custom-call when its shapes (and backend_config's
 * dot_dimension_numbers, when present) determine it unambiguously: *known, *flops. false only
 * on internal errors (err set). */
static bool gemm_flops(importer *im, const mb_hlo_instr *ins, bool *known, double *flops) {
  const mb_hlo_module *m = im->m;
  *known = false;
  *flops = 0;
  if (ins->n_operands < 2) return true;
  const mb_hlo_shape *lhs = shape_of(im, operand(im, ins, 0));
  const mb_hlo_shape *rhs = shape_of(im, operand(im, ins, 1));
  int32_t leaf = mb_hlo_shape_leaf(m, ins->shape, 0); /* cuBLAS returns (result, workspace) */
  if (leaf < 0) return true;
  const mb_hlo_shape *res = &m->shapes[leaf];
  if (mb_hlo_etype_bits(lhs->etype) == 0 || mb_hlo_etype_bits(rhs->etype) == 0 ||
      mb_hlo_etype_bits(res->etype) == 0 || lhs->rank < 2 || rhs->rank < 2)
    return true;
  const int64_t *ld = &m->ints[lhs->dims], *rd = &m->ints[rhs->dims], *od = &m->ints[res->dims];
  gemm_dims g;
  for (int k = 0; k < 4; k++) g.n[k] = -1;
  int found = ins->backend_config.len > 0 ? backend_dims(im, ins->backend_config, &g) : 0;
  if (found == -2) return false;
  if (found < 0) return true;
  double k_size = 1;
  if (found == 0) {
    /* no dimension numbers: lhs [..., M, K] x rhs [..., K, N] -> [..., M, N], or unknown */
    int32_t r = lhs->rank;
    if (rhs->rank != r || res->rank != r) return true;
    for (int32_t d = 0; d < r - 2; d++)
      if (ld[d] != rd[d] || ld[d] != od[d]) return true;
    if (ld[r - 2] != od[r - 2] || rd[r - 1] != od[r - 1] || ld[r - 1] != rd[r - 2]) return true;
    k_size = (double)ld[r - 1];
  } else {
    if (g.n[0] < 0 || g.n[0] != g.n[1]) return true;
    if (g.n[2] < 0) g.n[2] = 0;
    if (g.n[3] < 0) g.n[3] = 0;
    if (g.n[2] != g.n[3] || lhs->rank > 64 || rhs->rank > 64) return true;
    uint64_t lmask = 0, rmask = 0;
    double batch = 1, lfree = 1, rfree = 1;
    for (int pair = 0; pair < 2; pair++) { /* contracting, then batch dimensions */
      for (int32_t i = 0; i < g.n[2 * pair]; i++) {
        int64_t a = g.d[2 * pair][i], b = g.d[2 * pair + 1][i];
        if (a >= lhs->rank || b >= rhs->rank || ((lmask >> a) & 1) || ((rmask >> b) & 1) ||
            ld[a] != rd[b])
          return true;
        lmask |= 1ull << a;
        rmask |= 1ull << b;
        if (pair == 0)
          k_size *= (double)ld[a];
        else
          batch *= (double)ld[a];
      }
    }
    int32_t free_rank = 0;
    for (int32_t d = 0; d < lhs->rank; d++) {
      if ((lmask >> d) & 1) continue;
      lfree *= (double)ld[d];
      free_rank++;
    }
    for (int32_t d = 0; d < rhs->rank; d++) {
      if ((rmask >> d) & 1) continue;
      rfree *= (double)rd[d];
      free_rank++;
    }
    if (res->rank != g.n[2] + free_rank || (double)res->elements != batch * lfree * rfree)
      return true;
  }
  *flops = 2.0 * (double)res->elements * k_size;
  *known = true;
  return true;
}

static void note_unknown_target(importer *im, mb_hlo_span t) {
  mb_hlo_report *r = im->rep;
  r->n_unknown_custom_calls++;
  for (int32_t k = 0; k < r->n_unknown_targets; k++) {
    if (im->listed[k].len == t.len &&
        !memcmp(im->m->text + im->listed[k].off, im->m->text + t.off, (size_t)t.len)) {
      r->unknown_targets[k].count++;
      return;
    }
  }
  if (r->n_unknown_targets == MB_HLO_MAX_TARGETS) return;
  int32_t k = r->n_unknown_targets++;
  im->listed[k] = t;
  mb_hlo_span_str(im->m, t, r->unknown_targets[k].name, sizeof r->unknown_targets[k].name);
  r->unknown_targets[k].count = 1;
}

/* A kernel's own cost estimate in its backend_config, as JAX's Pallas writes it for a Mosaic
 * TPU kernel (tpu_custom_call) whose author gave pl.CostEstimate: "cost_estimate": {
 * "bytes_accessed": B, "flops": F, "transcendentals": T, ...}, as JSON or inside a JSON string
 * (with \"). The object, and each field in it, at most once; integers only. */
static const char COST_PATTERN[] = "\\\\?\"cost_estimate\\\\?\"\\s*:\\s*\\{([^{}]*)\\}";
static const char COST_FIELD_PATTERN[] =
    "\\\\?\"(flops|transcendentals)\\\\?\"\\s*:\\s*([0-9]{1,18})(?![0-9.eE])";

/* F + T of a custom-call's cost_estimate (a transcendental counts as one FLOP, as an elementwise
 * exp does here): 1 found (*flops), 0 absent, unreadable or ambiguous, -1 internal error. */
static int kernel_cost_estimate(importer *im, const mb_hlo_instr *ins, double *flops) {
  /* most configs have no estimate: not worth compiling the patterns for */
  static const char key[] = "cost_estimate";
  const char *cfg = im->m->text + ins->backend_config.off;
  PCRE2_SIZE len = (PCRE2_SIZE)ins->backend_config.len;
  bool has_key = false;
  for (PCRE2_SIZE i = 0; !has_key && i + sizeof key - 1 <= len; i++)
    has_key = cfg[i] == 'c' && !memcmp(cfg + i, key, sizeof key - 1);
  if (!has_key) return 0;
  if (!pattern_at_first_use(im, COST_PATTERN, "cost_estimate", &im->re_cost, &im->md_cost) ||
      !pattern_at_first_use(im, COST_FIELD_PATTERN, "cost_estimate field", &im->re_cost_field,
                            &im->md_cost_field))
    return -1;
  PCRE2_SPTR subject = (PCRE2_SPTR)cfg;
  if (pcre2_match(im->re_cost, subject, len, 0, 0, im->md_cost, NULL) < 0) return 0;
  const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(im->md_cost);
  PCRE2_SIZE pos = ov[2], end = ov[3];
  if (pcre2_match(im->re_cost, subject, len, ov[1], 0, im->md_cost, NULL) >= 0) return 0;
  int64_t value[2] = {-1, -1}; /* flops, transcendentals */
  /* the fields are matched within the object: the subject ends at its closing brace */
  while (pcre2_match(im->re_cost_field, subject, end, pos, 0, im->md_cost_field, NULL) >= 0) {
    const PCRE2_SIZE *fv = pcre2_get_ovector_pointer(im->md_cost_field);
    int k = subject[fv[2]] == 't';
    if (value[k] >= 0) return 0;
    value[k] = 0;
    for (PCRE2_SIZE i = fv[4]; i < fv[5]; i++) value[k] = value[k] * 10 + (subject[i] - '0');
    pos = fv[1];
  }
  if (value[0] < 0) return 0;
  *flops = (double)value[0] + (double)(value[1] > 0 ? value[1] : 0);
  return 1;
}

/* Custom-call g: an estimated GEMM (cc_flops), a data-movement target, a kernel with its own
 * cost estimate (cc_flops), or counted unknown. */
static bool custom_call_cost(importer *im, int32_t g) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  mb_hlo_span t = target_of(im->m, ins);
  if (target_in(im->m, t, GEMM_TARGETS, sizeof GEMM_TARGETS / sizeof GEMM_TARGETS[0])) {
    bool known;
    if (!gemm_flops(im, ins, &known, &im->cc_flops[g])) return false;
    if (known) {
      im->rep->n_gemm_custom_calls++;
      return true;
    }
  } else if (target_in(im->m, t, DATA_TARGETS, sizeof DATA_TARGETS / sizeof DATA_TARGETS[0])) {
    return true;
  } else {
    int found = kernel_cost_estimate(im, ins, &im->cc_flops[g]);
    if (found < 0) return false;
    if (found > 0) {
      im->rep->n_estimated_kernels++;
      return true;
    }
  }
  note_unknown_target(im, t);
  return true;
}

static void append(char *out, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *out, size_t n, size_t *used, const char *fmt, ...) {
  if (*used >= n - 1) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(out + *used, n - *used, fmt, ap);
  va_end(ap);
  if (k > 0) *used = *used + (size_t)k < n - 1 ? *used + (size_t)k : n - 1;
}

char *mb_hlo_report_targets(const mb_hlo_report *r, char *out, size_t n) {
  if (n == 0) return out;
  out[0] = '\0';
  size_t used = 0;
  int32_t listed = 0;
  for (int32_t k = 0; k < r->n_unknown_targets && k < MB_HLO_MAX_TARGETS; k++) {
    const mb_hlo_target_count *t = &r->unknown_targets[k];
    const char *name = t->name[0] ? t->name : "(no custom_call_target)";
    append(out, n, &used, "%s%s", k ? ", " : "", name);
    if (t->count > 1) append(out, n, &used, " x%d", t->count);
    listed += t->count;
  }
  if (r->n_unknown_custom_calls > listed)
    append(out, n, &used, "%s%d more", listed ? ", and " : "", r->n_unknown_custom_calls - listed);
  return out;
}

/* "known_trip_count":{"n":"10"} in a backend_config, as JSON or inside a JSON string (with \"),
 * the count as a string or a number. */
static const char TRIPS_PATTERN[] =
    "\\\\?\"known_trip_count\\\\?\"\\s*:\\s*\\{\\s*\\\\?\"n\\\\?\"\\s*:"
    "\\s*\\\\?\"?([0-9]{1,18})";

/* A while's trip count as XLA's WhileLoopTripCountAnnotator writes it into the backend_config:
 * {"known_trip_count":{"n":"10"}}. 1 found (*n), 0 absent or unreadable, -1 internal error. */
static int known_trip_count(importer *im, const mb_hlo_instr *ins, int64_t *n) {
  if (ins->backend_config.len == 0) return 0;
  if (!pattern_at_first_use(im, TRIPS_PATTERN, "trip count", &im->re_trips, &im->md_trips))
    return -1;
  const char *subject = im->m->text + ins->backend_config.off;
  int rc = pcre2_match(im->re_trips, (PCRE2_SPTR)subject, (PCRE2_SIZE)ins->backend_config.len, 0, 0,
                       im->md_trips, NULL);
  if (rc < 0) return 0;
  const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(im->md_trips);
  *n = 0;
  for (PCRE2_SIZE i = ov[2]; i < ov[3]; i++) *n = *n * 10 + (subject[i] - '0');
  return 1;
}

/* FLOPs of one instruction, including the computations it calls. */
static bool instr_flops(importer *im, int32_t g, int depth, double *out) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  const mb_hlo_shape *res = &im->m->shapes[ins->shape];
  double per_call = 0;
  *out = 0;
  switch (im->gcls[g]) {
    case C_ELEMENTWISE:
      *out = elements_of(res);
      return true;
    case C_DOT:
      return dot_flops(im, ins, out);
    case C_CONVOLUTION:
      return convolution_flops(im, ins, out);
    case C_REDUCE:
      if (!called_flops(im, ins, depth, false, &per_call)) return false;
      *out = ins->n_operands > 0 ? elements_of(shape_of(im, operand(im, ins, 0))) * per_call : 0;
      return true;
    case C_REDUCE_WINDOW: {
      if (!called_flops(im, ins, depth, false, &per_call)) return false;
      double window = 1;
      for (int32_t k = 0; k < ins->window_size.n; k++)
        window *= (double)im->m->ints[ins->window_size.first + k];
      int32_t leaf0 = mb_hlo_shape_leaf(im->m, ins->shape, 0);
      *out = (leaf0 >= 0 ? elements_of(&im->m->shapes[leaf0]) : 0) * window * per_call;
      return true;
    }
    case C_MAP:
      if (!called_flops(im, ins, depth, false, &per_call)) return false;
      *out = elements_of(res) * per_call;
      return true;
    case C_SCATTER:
      if (!called_flops(im, ins, depth, false, &per_call)) return false;
      *out = ins->n_operands > 0
                 ? elements_of(shape_of(im, operand(im, ins, ins->n_operands - 1))) * per_call
                 : 0;
      return true;
    case C_SELECT_AND_SCATTER: {
      /* XLA's cost analysis: per element of the source (operand 1), the select computation
       * compares the window's elements (window - 1 calls) and the scatter one adds */
      double window = 1, select = 0, scatter = 0;
      for (int32_t k = 0; k < ins->window_size.n; k++)
        window *= (double)im->m->ints[ins->window_size.first + k];
      for (int32_t k = 0; k < ins->n_called; k++) {
        double f = 0;
        if (!computation_flops(im, im->m->refs[ins->called + k], depth + 1, &f)) return false;
        if (k == ins->select_call)
          select += f;
        else
          scatter += f;
      }
      double source = ins->n_operands > 1 ? elements_of(shape_of(im, operand(im, ins, 1))) : 0;
      *out = source * (fmax(window - 1, 0) * select + scatter);
      return true;
    }
    case C_WHILE: {
      int64_t trips = 1;
      int found = known_trip_count(im, ins, &trips);
      if (found < 0) return false;
      for (int32_t k = 0; k < ins->n_called; k++) {
        double f = 0;
        if (!computation_flops(im, im->m->refs[ins->called + k], depth + 1, &f)) return false;
        /* the condition runs once more than the body, when the count is known */
        *out += f * (double)(k == ins->condition_call && found ? trips + 1 : trips);
      }
      return true;
    }
    case C_CONDITIONAL:
      return called_flops(im, ins, depth, true, out);
    case C_CALLER:
      if (!called_flops(im, ins, depth, false, out)) return false;
      *out += im->cc_flops[g]; /* 0 except for estimated GEMM custom-calls */
      return true;
    case C_OPAQUE:
    case C_DATA:
    case C_UNKNOWN:
      return called_flops(im, ins, depth, false, out);
    default:
      return true;
  }
}

/* Computation c may be entered through a call `depth` levels deep: false (err set, naming c by
 * line) when it is already being entered (it calls itself) or nests too deep. */
static bool check_call(importer *im, int32_t c, bool entered, int depth) {
  const mb_hlo_computation *comp = &im->m->comps[c];
  char nm[128];
  if (entered)
    return fail_line(im, comp->line, "computation '%s' calls itself (directly or through others)",
                     mb_hlo_span_str(im->m, comp->name, nm, sizeof nm));
  if (depth > MAX_CALL_DEPTH)
    return fail_line(im, comp->line, "computation '%s': expected calls nested at most %d deep",
                     mb_hlo_span_str(im->m, comp->name, nm, sizeof nm), MAX_CALL_DEPTH);
  return true;
}

static bool computation_flops(importer *im, int32_t c, int depth, double *out) {
  const mb_hlo_computation *comp = &im->m->comps[c];
  if (im->comp_state[c] == 2) {
    *out = im->comp_flops[c];
    return true;
  }
  if (!check_call(im, c, im->comp_state[c] == 1 || c == im->m->entry, depth)) return false;
  im->comp_state[c] = 1;
  double total = 0;
  for (int32_t i = comp->first_instr; i < comp->first_instr + comp->n_instrs; i++) {
    double f = 0;
    if (!instr_flops(im, i, depth, &f)) return false;
    total += f;
  }
  im->comp_state[c] = 2;
  im->comp_flops[c] = total;
  *out = total;
  return true;
}

/* ---- entry computation: buffers and aliasing ---- */

static int32_t new_buffer(importer *im, int32_t e, int32_t leaf, int64_t size) {
  if (im->n_bufs == im->cap_bufs) {
    int32_t ncap = im->cap_bufs ? im->cap_bufs * 2 : 256;
    buffer_info *q = realloc(im->bufs, (size_t)ncap * sizeof *q);
    if (!q) return -1;
    im->bufs = q;
    im->cap_bufs = ncap;
  }
  im->bufs[im->n_bufs] = (buffer_info){
      .def = e, .leaf = leaf, .size = size, .merged_into = -1, .donated_to = NOT_DONATED};
  return im->n_bufs++;
}

/* Operand k of flat instruction e, as a flat index. */
static int32_t flat_operand(const importer *im, int32_t e, int32_t k) {
  return im->fops[im->fi[e].fop_start + k];
}

static int32_t n_leaves(const importer *im, int32_t e) {
  return shape_of(im, im->fi[e].g)->n_leaves;
}

/* Leaf offset of tuple element `index` of shape s, and that element's shape. */
static bool tuple_element(const importer *im, const mb_hlo_shape *s, int64_t index, int32_t *offset,
                          int32_t *elem) {
  if (s->etype != MB_HLO_TUPLE || index < 0 || index >= s->n_tuple) return false;
  int32_t off = 0;
  for (int32_t k = 0; k < index; k++) off += im->m->shapes[im->m->ints[s->tuple + k]].n_leaves;
  *offset = off;
  *elem = (int32_t)im->m->ints[s->tuple + (int32_t)index];
  return true;
}

/* Asynchronous pairs as XLA's dataflow analysis sees them: a *-start returns a tuple one of
 * whose elements is its operands themselves (copy-start: its source; send: its data), not a
 * copy of them, and its *-done (and an async-update) passes on one element of the start's
 * value, the result the start writes (recv-done: as its own element 0, beside a token). The
 * done is an op of the schedule that keeps the start's buffers live to it and moves no bytes. */
typedef struct async_rule {
  const char *opcode;
  bool done;        /* a done: its value comes from its one operand, the start */
  int32_t element;  /* start: its element that is its operands; done: the start's element it
                     * passes on (-1: the whole value; all-reduce-start returns its result alone) */
  int32_t operands; /* start: how many leading operands make up that element (0: all) */
  int32_t into;     /* done: its own element that is the start's (-1: its whole value) */
} async_rule;
static const async_rule ASYNC_RULES[] = {
    {"async-start", false, 0, 0, 0},
    {"all-gather-start", false, 0, 0, 0},
    {"collective-permute-start", false, 0, 0, 0},
    {"copy-start", false, 1, 0, 0},
    {"send", false, 0, 1, 0}, /* send(data, token) = (data, context, token) */
    {"async-done", true, 1, 0, -1},
    {"all-gather-done", true, 1, 0, -1},
    {"collective-permute-done", true, 1, 0, -1},
    {"copy-done", true, 0, 0, -1},
    {"all-reduce-done", true, -1, 0, -1},
    {"async-update", true, -1, 0, -1},
    {"send-done", true, 2, 0, -1}, /* the send's token */
    {"recv-done", true, 0, 0, 0},  /* recv(token) = (data, context, token) -> (data, token) */
};

/* The leaves [*off, *off + *n) of element `element` of shape s (-1: all of them); false when s
 * has no such element. */
static bool element_leaves(const importer *im, const mb_hlo_shape *s, int32_t element, int32_t *off,
                           int32_t *n) {
  if (element < 0) {
    *off = 0;
    *n = s->n_leaves;
    return true;
  }
  int32_t elem;
  if (!tuple_element(im, s, element, off, &elem)) return false;
  *n = im->m->shapes[elem].n_leaves;
  return true;
}

/* The array leaves of an instruction's first `count` operands, in order. */
static int32_t operands_leaves(const importer *im, int32_t e, int32_t count) {
  int32_t total = 0;
  for (int32_t j = 0; j < count; j++) total += n_leaves(im, flat_operand(im, e, j));
  return total;
}

/* Copies the buffers of the leaves of an instruction's first `count` operands, in order, to dst
 * (which holds operands_leaves() of them). */
static void copy_operands_leaves(importer *im, int32_t e, int32_t count, int32_t *dst) {
  for (int32_t j = 0; j < count; j++) {
    int32_t o = flat_operand(im, e, j);
    memcpy(dst, &im->leaf_buf[im->leaf_start[o]], (size_t)n_leaves(im, o) * sizeof *dst);
    dst += n_leaves(im, o);
  }
}

/* The leaves [*given, *given + *given_n) of an asynchronous op's value that are another value's
 * buffers by its rule in ASYNC_RULES, copied to out; false when it has no rule or the shapes do
 * not fit it (then it defines all its leaves, as any op). */
static bool async_given_leaves(importer *im, int32_t e, int32_t *out, int32_t *given,
                               int32_t *given_n) {
  const mb_hlo_instr *ins = &im->m->instrs[im->fi[e].g];
  const async_rule *rule = NULL;
  op_class c = im->cls[e];
  if (c != C_ASYNC_DONE && c != C_OPAQUE && c != C_CALLER) return false; /* the rules' classes */
  for (size_t i = 0; i < sizeof ASYNC_RULES / sizeof *ASYNC_RULES && !rule; i++)
    if (mb_hlo_span_eq(im->m, ins->opcode, ASYNC_RULES[i].opcode)) rule = &ASYNC_RULES[i];
  if (!rule) return false;
  const mb_hlo_shape *own = shape_of(im, im->fi[e].g);
  if (rule->done) {
    int32_t from, n;
    if (ins->n_operands != 1) return false;
    int32_t o = flat_operand(im, e, 0);
    if (!element_leaves(im, shape_of(im, im->fi[o].g), rule->element, &from, &n) ||
        !element_leaves(im, own, rule->into, given, given_n) || n != *given_n)
      return false;
    memcpy(out + *given, &im->leaf_buf[im->leaf_start[o] + from], (size_t)n * sizeof *out);
    return true;
  }
  int32_t count = rule->operands > 0 ? rule->operands : ins->n_operands;
  if (count > ins->n_operands || !element_leaves(im, own, rule->element, given, given_n) ||
      operands_leaves(im, e, count) != *given_n)
    return false;
  copy_operands_leaves(im, e, count, out + *given);
  return true;
}

static bool define_leaves(importer *im, int32_t e) {
  const mb_hlo_instr *ins = &im->m->instrs[im->fi[e].g];
  int32_t nl = n_leaves(im, e);
  int32_t same = im->fi[e].value_of;
  if (same >= 0) { /* an inlined parameter or call: another flat instruction's value */
    memcpy(&im->leaf_buf[im->leaf_start[e]], &im->leaf_buf[im->leaf_start[same]],
           (size_t)nl * sizeof *im->leaf_buf);
    return true;
  }
  char nm[128];
  iname(im, im->fi[e].g, nm, sizeof nm);
  op_class cls = im->cls[e];
  if (cls == C_RESHAPE) {
    const mb_hlo_shape *res = shape_of(im, im->fi[e].g);
    const mb_hlo_shape *src = ins->n_operands == 1 ? shape_of(im, operand(im, ins, 0)) : NULL;
    bool bitcast = src && src->etype != MB_HLO_TUPLE && res->etype == src->etype &&
                   res->elements == src->elements;
    cls = im->cls[e] = bitcast ? C_ALIAS : C_DATA;
  }
  int32_t *out = &im->leaf_buf[im->leaf_start[e]];
  if (cls == C_ALIAS) {
    /* a tuple may be empty: tuple() is what a computation returning nothing returns */
    if (mb_hlo_span_eq(im->m, ins->opcode, "tuple")) {
      int32_t total = operands_leaves(im, e, ins->n_operands);
      if (total != nl)
        return fail_line(im, ins->line,
                         "tuple '%s': expected its shape to hold its operands' %d arrays, got %d",
                         nm, total, nl);
      copy_operands_leaves(im, e, ins->n_operands, out);
      return true;
    }
    if (ins->n_operands == 0)
      return fail_line(im, ins->line, "'%s': expected an operand to %.*s", nm, ins->opcode.len,
                       im->m->text + ins->opcode.off);
    int32_t o = flat_operand(im, e, 0);
    const int32_t *src = &im->leaf_buf[im->leaf_start[o]];
    if (mb_hlo_span_eq(im->m, ins->opcode, "get-tuple-element")) {
      int32_t off, elem;
      if (ins->index < 0)
        return fail_line(im, ins->line, "get-tuple-element '%s': expected index=N", nm);
      if (!tuple_element(im, shape_of(im, im->fi[o].g), ins->index, &off, &elem))
        return fail_line(im, ins->line,
                         "get-tuple-element '%s': index=%lld is not an element of its operand's "
                         "shape",
                         nm, (long long)ins->index);
      if (im->m->shapes[elem].n_leaves != nl)
        return fail_line(im, ins->line,
                         "get-tuple-element '%s': expected its shape to match tuple element %lld",
                         nm, (long long)ins->index);
      memcpy(out, src + off, (size_t)nl * sizeof *out);
      return true;
    }
    if (n_leaves(im, o) != nl)
      return fail_line(im, ins->line,
                       "%.*s '%s': expected the same number of arrays as its operand",
                       ins->opcode.len, im->m->text + ins->opcode.off, nm);
    memcpy(out, src, (size_t)nl * sizeof *out);
    return true;
  }
  int32_t given = -1, given_n = 0;
  if (!async_given_leaves(im, e, out, &given, &given_n)) given = -1;
  /* a defining instruction: one buffer per array leaf with bytes */
  for (int32_t k = 0; k < nl; k++) {
    if (given >= 0 && k >= given && k < given + given_n) continue; /* another value's */
    int32_t leaf = mb_hlo_shape_leaf(im->m, ins->shape, k);
    const mb_hlo_shape *ls = &im->m->shapes[leaf];
    out[k] = -1;
    if (ls->bytes > 0) {
      out[k] = new_buffer(im, e, k, ls->bytes);
      if (out[k] < 0) return mb_fail(im->err, "%s: out of memory", im->path);
    }
  }
  return true;
}

/* Whether instruction ins reads only its result's bytes of its operand 0, as XLA's cost analysis
 * counts a slice, a dynamic-slice and a gather (HandleSlice, HandleDynamicSlice, HandleGather). */
static bool reads_slice(const mb_hlo_module *m, const mb_hlo_instr *ins) {
  return mb_hlo_span_eq(m, ins->opcode, "slice") ||
         mb_hlo_span_eq(m, ins->opcode, "dynamic-slice") ||
         mb_hlo_span_eq(m, ins->opcode, "gather");
}

/* Whether op e may read a part of a buffer (part_read): a slice, a dynamic-slice, a gather, a
 * dynamic-update-slice, a scatter or a fusion. Its class is compared first, which is quicker. */
static bool may_read_part(const importer *im, int32_t e) {
  const mb_hlo_instr *ins = &im->m->instrs[im->fi[e].g];
  if (im->cls[e] == C_SCATTER) return true; /* the class of `scatter` alone */
  return (im->cls[e] == C_DATA || im->cls[e] == C_CALLER) &&
         (reads_slice(im->m, ins) || mb_hlo_span_eq(im->m, ins->opcode, "dynamic-update-slice") ||
          mb_hlo_span_eq(im->m, ins->opcode, "fusion"));
}

/* Producers fused into their consumers (see datasets/HLO_IMPORT.md, "Fusion"). */
static bool fusible_producer(const importer *im, int32_t e) {
  op_class c = im->cls[e];
  const mb_hlo_shape *s = shape_of(im, im->fi[e].g);
  if (s->etype == MB_HLO_TUPLE) return false;
  if (c == C_ELEMENTWISE || c == C_BROADCAST) return true;
  /* scalar-like constants only: larger literals stay buffers (XLA keeps them in memory) */
  return c == C_CONSTANT && s->elements <= 1;
}

static bool fusible_consumer(op_class c) {
  return c == C_ELEMENTWISE || c == C_BROADCAST || c == C_DOT || c == C_CONVOLUTION ||
         c == C_REDUCE || c == C_REDUCE_WINDOW || c == C_MAP || c == C_SCATTER ||
         c == C_SELECT_AND_SCATTER || c == C_DATA;
}

static bool fuse(importer *im) {
  int32_t *stamp = malloc((size_t)im->n * sizeof *stamp);
  int_list consumers = {0};
  if (!stamp) return mb_fail(im->err, "%s: out of memory", im->path);
  for (int32_t e = 0; e < im->n; e++) stamp[e] = -1;
  bool ok = true;
  for (int32_t e = im->n - 1; ok && e >= 0; e--) {
    if (!fusible_producer(im, e)) continue;
    int32_t b = im->leaf_buf[im->leaf_start[e]];
    /* a loop's state and a buffer updated in place are written in place, not fused away */
    if (b < 0 || im->bufs[b].output || im->bufs[b].merged_into >= 0 || im->bufs[b].updated_in_place)
      continue;
    consumers.n = 0;
    bool eligible = true;
    const int_list *rd = &im->bufs[b].readers;
    for (int32_t k = 0; k < rd->n; k++) {
      int32_t r = rd->v[k];
      if (im->fused[r] || stamp[r] == e) continue;
      stamp[r] = e;
      /* never into another loop (or out of one) */
      if (!fusible_consumer(im->cls[r]) || im->fi[r].loop != im->fi[e].loop) eligible = false;
      if (!list_push(&consumers, r)) ok = false;
    }
    if (!ok || !eligible || consumers.n == 0) continue;
    im->fused[e] = true;
    im->bufs[b].dead = true;
    im->rep->n_fused++;
    for (int32_t k = 0; ok && k < consumers.n; k++) {
      int32_t r = consumers.v[k];
      int_list *rr = &im->reads[r];
      for (int32_t j = 0; j < rr->n; j++) {
        if (rr->v[j] == b) {
          rr->v[j] = rr->v[--rr->n];
          break;
        }
      }
      bool partial = may_read_part(im, r); /* the only ops whose fused_reads are asked for */
      for (int32_t j = 0; ok && j < im->reads[e].n; j++) {
        int32_t x = im->reads[e].v[j];
        if (partial && !list_has(&im->fused_reads[r], x)) ok = list_push(&im->fused_reads[r], x);
        if (!ok || list_has(rr, x)) continue;
        ok = list_push(rr, x) && list_push(&im->bufs[x].readers, r);
      }
      im->flops[r] += im->flops[e];
    }
  }
  free(stamp);
  free(consumers.v);
  return ok ? true : mb_fail(im->err, "%s: out of memory", im->path);
}

/* Names that fit MB_NAME_MAX: long ones keep a prefix and get a hash suffix (still unique). */
static void safe_name(const char *in, char *out, size_t n) {
  size_t len = strlen(in);
  if (len < 100 && len < n) {
    memcpy(out, in, len + 1);
    return;
  }
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)in[i]) * 1099511628211ull;
  snprintf(out, n, "%.80s~%016llx", in, (unsigned long long)h);
}

static void workload_name(const char *path, const mb_hlo_module *m, char *out, size_t n) {
  char base[256];
  const char *slash = path ? strrchr(path, '/') : NULL;
  const char *b = slash ? slash + 1 : path ? path : "";
  snprintf(base, sizeof base, "%s", b);
  char *dot = strrchr(base, '.');
  if (dot && dot != base) *dot = '\0';
  if (!base[0]) mb_hlo_span_str(m, m->name, base, sizeof base);
  if (!base[0]) snprintf(base, sizeof base, "hlo");
  for (char *c = base; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '_' || *c == '.' || *c == '-'))
      *c = '_';
  safe_name(base, out, n);
}

static void importer_free(importer *im) {
  for (int32_t e = 0; im->reads && e < im->n; e++) free(im->reads[e].v);
  for (int32_t e = 0; im->fused_reads && e < im->n; e++) free(im->fused_reads[e].v);
  for (int32_t b = 0; b < im->n_bufs; b++) free(im->bufs[b].readers.v);
  free(im->bufs);
  free(im->reads);
  free(im->fused_reads);
  free(im->fi);
  free(im->fops);
  free(im->inlining);
  free(im->n_instances);
  free(im->cls);
  free(im->leaf_start);
  free(im->leaf_buf);
  free(im->flops);
  free(im->fused);
  free(im->op_of);
  free(im->gcls);
  free(im->cc_flops);
  free(im->sliced);
  pcre2_code_free(im->re_dnums);
  pcre2_match_data_free(im->md);
  pcre2_code_free(im->re_trips);
  pcre2_match_data_free(im->md_trips);
  pcre2_code_free(im->re_cost);
  pcre2_match_data_free(im->md_cost);
  pcre2_code_free(im->re_cost_field);
  pcre2_match_data_free(im->md_cost_field);
  free(im->comp_flops);
  free(im->comp_state);
}

/* Whether module instruction g's operands are all defined before it (false, err set, if not). */
static bool operands_defined(importer *im, int32_t g) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  char a[128], b[128];
  for (int32_t k = 0; k < ins->n_operands; k++) {
    int32_t o = operand(im, ins, k);
    if (o >= g)
      return fail_line(im, ins->line, "operand '%s' of '%s' is used before it is defined (line %d)",
                       iname(im, o, a, sizeof a), iname(im, g, b, sizeof b), im->m->instrs[o].line);
  }
  return true;
}

/* Appends module instruction g to the flat program (inside `loop`, running `runs` times; its
 * value another flat instruction's when value_of >= 0), its operands resolved through flat_of
 * (module instruction -> flat index, for the computation being flattened). */
static bool flat_append(importer *im, int32_t g, int32_t *flat_of, int32_t loop, int64_t runs,
                        int32_t instance, int32_t value_of) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  if (!operands_defined(im, g)) return false;
  if (!mb_array_reserve((void **)&im->fi, &im->cap, (int64_t)im->n + 1, sizeof *im->fi) ||
      !mb_array_reserve((void **)&im->fops, &im->cap_fops, (int64_t)im->n_fops + ins->n_operands,
                        sizeof *im->fops))
    return mb_fail(im->err, "%s: out of memory", im->path);
  int32_t e = im->n;
  im->fi[e] = (flat_instr){.g = g,
                           .fop_start = im->n_fops,
                           .instance = instance,
                           .value_of = value_of,
                           .loop = loop,
                           .loop_last = -1,
                           .body_root = -1,
                           .runs = runs};
  for (int32_t k = 0; k < ins->n_operands; k++)
    im->fops[im->n_fops++] = flat_of[operand(im, ins, k)];
  flat_of[g] = e;
  im->n++;
  return true;
}

/* The single parameter of computation c when it has exactly one, numbered 0; else -1. */
static int32_t only_parameter(const importer *im, int32_t c) {
  const mb_hlo_computation *comp = &im->m->comps[c];
  int32_t found = -1;
  for (int32_t g = comp->first_instr; g < comp->first_instr + comp->n_instrs; g++) {
    if (im->gcls[g] != C_PARAMETER) continue;
    if (found >= 0 || im->m->instrs[g].index != 0) return -1;
    found = g;
  }
  return found;
}

/* Whether while instruction g is inlined: asked for, with one operand, a condition and a body
 * of one parameter each shaped like its state, and a body root of that shape. */
static bool inlined_loop(const importer *im, int32_t g) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  if (!im->opt->loop_bodies || ins->n_operands != 1 || ins->n_called != 2 ||
      ins->condition_call < 0)
    return false;
  int32_t state = shape_of(im, g)->n_leaves;
  if (shape_of(im, operand(im, ins, 0))->n_leaves != state) return false;
  for (int32_t k = 0; k < 2; k++) {
    int32_t c = im->m->refs[ins->called + k];
    int32_t p = only_parameter(im, c);
    if (p < 0 || shape_of(im, p)->n_leaves != state) return false;
    if (k != ins->condition_call && shape_of(im, im->m->comps[c].root)->n_leaves != state)
      return false;
  }
  return true;
}

/* Whether call instruction g is inlined (*inlined): it calls one computation, whose parameters
 * are numbered 0 .. n - 1 for its n operands and shaped like them, and whose root is shaped
 * like the call's value. False (err set) when out of memory. */
static bool inlined_call(importer *im, int32_t g, bool *inlined) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  *inlined = false;
  if (!mb_hlo_span_eq(im->m, ins->opcode, "call") || ins->n_called != 1) return true;
  const mb_hlo_computation *comp = &im->m->comps[im->m->refs[ins->called]];
  if (shape_of(im, comp->root)->n_leaves != shape_of(im, g)->n_leaves) return true;
  bool *numbered = calloc(ins->n_operands > 0 ? (size_t)ins->n_operands : 1, sizeof *numbered);
  if (!numbered) return mb_fail(im->err, "%s: out of memory", im->path);
  int32_t n_parameters = 0;
  bool form = true;
  for (int32_t p = comp->first_instr; form && p < comp->first_instr + comp->n_instrs; p++) {
    if (im->gcls[p] != C_PARAMETER) continue;
    int64_t k = im->m->instrs[p].index;
    form = k >= 0 && k < ins->n_operands && !numbered[k] &&
           shape_of(im, p)->n_leaves == shape_of(im, operand(im, ins, (int32_t)k))->n_leaves;
    if (form) numbered[k] = true;
    n_parameters++;
  }
  free(numbered);
  *inlined = form && n_parameters == ins->n_operands;
  return true;
}

static bool flatten(importer *im, int32_t c, int32_t *flat_of, int32_t loop, int64_t runs,
                    int depth, const int32_t *args);

/* Whether conditional instruction g is inlined, and as which branch (*branch; -1: it stays one
 * op): in XLA's form (branch k of one parameter shaped like operand k + 1, its root shaped like
 * g), as its most expensive branch by FLOPs (the first of equals), which is what the FLOPs of a
 * conditional that stays one op assume. False (err set) when a branch's FLOPs cannot be had. */
static bool inlined_branch(importer *im, int32_t g, int depth, int32_t *branch) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  *branch = -1;
  if (ins->n_called < 1 || ins->n_operands != ins->n_called + 1) return true;
  for (int32_t k = 0; k < ins->n_called; k++) {
    int32_t c = im->m->refs[ins->called + k];
    int32_t p = only_parameter(im, c);
    if (p < 0 || shape_of(im, p)->n_leaves != shape_of(im, operand(im, ins, k + 1))->n_leaves ||
        shape_of(im, im->m->comps[c].root)->n_leaves != shape_of(im, g)->n_leaves)
      return true;
  }
  double most = 0;
  for (int32_t k = 0; k < ins->n_called; k++) {
    double f = 0;
    if (!computation_flops(im, im->m->refs[ins->called + k], depth + 1, &f)) return false;
    if (*branch < 0 || f > most) {
      *branch = k;
      most = f;
    }
  }
  return true;
}

/* Instruction g inlined as computation c (a call's callee, XLA's CallInliner; a conditional's
 * branch): c's instructions, their parameters g's operands first .. first + n - 1, then g
 * itself, an alias of c's root. */
static bool inline_computation(importer *im, int32_t g, int32_t c, int32_t first, int32_t n,
                               int32_t *flat_of, int32_t loop, int64_t runs, int32_t instance,
                               int depth) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  if (!operands_defined(im, g)) return false;
  int32_t *args = malloc((size_t)(n > 0 ? n : 1) * sizeof *args);
  if (!args) return mb_fail(im->err, "%s: out of memory", im->path);
  for (int32_t k = 0; k < n; k++) args[k] = flat_of[operand(im, ins, first + k)];
  bool ok = flatten(im, c, flat_of, loop, runs, depth + 1, args);
  free(args);
  return ok && flat_append(im, g, flat_of, loop, runs, instance, flat_of[im->m->comps[c].root]);
}

/* The flat program of computation c, run `runs` times inside `loop` (see flat_instr), its
 * parameter k being flat instruction args[k] (NULL: the entry's own parameters): an inlined
 * while loop is followed by its condition (run once more than its body when its trip count is
 * known) and its body, and an inlined call or conditional is replaced by its callee or the
 * branch it takes. */
static bool flatten(importer *im, int32_t c, int32_t *flat_of, int32_t loop, int64_t runs,
                    int depth, const int32_t *args) {
  const mb_hlo_computation *comp = &im->m->comps[c];
  char nm[128];
  if (!check_call(im, c, im->inlining[c], depth)) return false;
  im->inlining[c] = 1;
  int32_t instance = im->n_instances[c]++;
  for (int32_t g = comp->first_instr; g < comp->first_instr + comp->n_instrs; g++) {
    const mb_hlo_instr *ins = &im->m->instrs[g];
    bool call = false;
    if (im->gcls[g] == C_CALLER && !inlined_call(im, g, &call)) return false;
    if (call) {
      if (!inline_computation(im, g, im->m->refs[ins->called], 0, ins->n_operands, flat_of, loop,
                              runs, instance, depth))
        return false;
      im->rep->n_inlined_calls++;
      continue;
    }
    int32_t branch = -1;
    if (im->gcls[g] == C_CONDITIONAL && !inlined_branch(im, g, depth, &branch)) return false;
    if (branch >= 0) {
      if (!inline_computation(im, g, im->m->refs[ins->called + branch], branch + 1, 1, flat_of,
                              loop, runs, instance, depth))
        return false;
      im->rep->n_inlined_conditionals++;
      continue;
    }
    /* inlined_loop and inlined_call have checked that an inlined computation's parameter
     * numbers index args */
    bool argument = args && im->gcls[g] == C_PARAMETER;
    if (!flat_append(im, g, flat_of, loop, runs, instance,
                     argument ? args[im->m->instrs[g].index] : -1))
      return false;
    if (im->gcls[g] != C_WHILE || !inlined_loop(im, g)) continue;
    int32_t w = im->n - 1;
    int64_t trips = 1;
    int found = known_trip_count(im, ins, &trips);
    if (found < 0) return false;
    im->rep->n_inlined_loops++;
    int32_t order[2] = {ins->condition_call, 1 - ins->condition_call}; /* condition, body */
    for (int32_t i = 0; i < 2; i++) {
      int32_t called = im->m->refs[ins->called + order[i]];
      int64_t times = i == 0 && found ? trips + 1 : trips, inner;
      if (__builtin_mul_overflow(runs, times, &inner) || inner > MAX_RUNS)
        return fail_line(im, ins->line,
                         "while '%s': expected the trip counts of its loops to multiply to at "
                         "most %lld runs",
                         iname(im, g, nm, sizeof nm), (long long)MAX_RUNS);
      if (!flatten(im, called, flat_of, w, inner, depth + 1, &w)) return false;
    }
    im->fi[w].loop_last = im->n - 1;
    im->fi[w].body_root = flat_of[im->m->comps[im->m->refs[ins->called + order[1]]].root];
  }
  im->inlining[c] = 0;
  return true;
}

/* A while loop met (the report's n_loops and n_counted_loops). */
static bool count_loop(importer *im, int32_t g) {
  int64_t trips = 1;
  int found = known_trip_count(im, &im->m->instrs[g], &trips);
  if (found < 0) return false;
  im->rep->n_loops++;
  im->rep->n_counted_loops += found;
  return true;
}

/* Counts the while loops in the computations instruction g calls and in those they call, each
 * computation once (walked). Calls nest at most MAX_CALL_DEPTH deep where they count toward
 * FLOPs (checked there); the walk goes no deeper in any case. */
static bool count_called_loops(importer *im, int32_t g, int8_t *walked, int depth) {
  const mb_hlo_instr *ins = &im->m->instrs[g];
  for (int32_t k = 0; k < ins->n_called && depth <= MAX_CALL_DEPTH; k++) {
    int32_t c = im->m->refs[ins->called + k];
    if (walked[c]) continue;
    walked[c] = 1;
    const mb_hlo_computation *comp = &im->m->comps[c];
    for (int32_t h = comp->first_instr; h < comp->first_instr + comp->n_instrs; h++)
      if ((im->gcls[h] == C_WHILE && !count_loop(im, h)) ||
          !count_called_loops(im, h, walked, depth + 1))
        return false;
  }
  return true;
}

/* The while loops of the imported program: each of the flat program (an inlined one each time
 * it is inlined), and each in the computations its ops call (inside loops that stay one op,
 * say), once. */
static bool count_loops(importer *im) {
  int8_t *walked = calloc(im->m->n_comps > 0 ? (size_t)im->m->n_comps : 1, sizeof *walked);
  if (!walked) return mb_fail(im->err, "%s: out of memory", im->path);
  bool ok = true;
  for (int32_t e = 0; ok && e < im->n; e++) {
    int32_t g = im->fi[e].g;
    if (im->fi[e].value_of >= 0) continue; /* inlined parameters, calls and conditionals */
    if (im->gcls[g] == C_WHILE) ok = count_loop(im, g);
    if (ok && im->fi[e].loop_last < 0) ok = count_called_loops(im, g, walked, 1);
  }
  free(walked);
  return ok;
}

/* The buffer that holds buffer x: x itself, or the loop state it was merged into (-1: -1). */
static int32_t holder(const importer *im, int32_t x) {
  while (x >= 0 && im->bufs[x].merged_into >= 0) x = im->bufs[x].merged_into;
  return x;
}

/* Whether buffer x is a parameter's or a constant's (read-only: never a loop's state). */
static bool read_only(const importer *im, int32_t x) {
  op_class c = im->cls[im->bufs[x].def];
  return c == C_PARAMETER || c == C_CONSTANT;
}

/* The state of each inlined loop, as XLA's copy insertion and buffer assignment leave it: the
 * while defines a buffer per array of its state, a copy of its operand's, which its body
 * updates in place. So a value the body computes as element k of its result is written into
 * state buffer k (merged into it), and an element the body passes on unchanged needs no copy:
 * its state is the operand's buffer itself (the state buffer is merged into that one). */
static void merge_loop_states(importer *im) {
  for (int32_t w = 0; w < im->n; w++) {
    const flat_instr *f = &im->fi[w];
    if (f->loop_last < 0) continue;
    int32_t init = flat_operand(im, w, 0);
    for (int32_t k = 0; k < n_leaves(im, w); k++) {
      int32_t s = im->leaf_buf[im->leaf_start[w] + k];
      int32_t b = im->leaf_buf[im->leaf_start[f->body_root] + k];
      int32_t x = im->leaf_buf[im->leaf_start[init] + k];
      if (s < 0 || b < 0) continue;
      if (b == s) { /* unchanged (and not already the state of a loop around this one) */
        if (x >= 0 && im->bufs[x].size == im->bufs[s].size && im->bufs[s].merged_into < 0)
          im->bufs[s].merged_into = x;
      } else if (im->bufs[b].def > w && im->bufs[b].def <= f->loop_last &&
                 im->bufs[b].merged_into < 0 && im->bufs[b].size == im->bufs[s].size &&
                 !read_only(im, b)) {
        im->bufs[b].merged_into = s; /* computed by the body */
      }
    }
  }
}

/* Flat instruction e's name: its instruction's, prefixed "COMPUTATION/" inside an inlined
 * computation and suffixed "@N" in the Nth instance of one inlined more than once (names are
 * unique in a workload; those of different computations need not be in HLO text). */
static const char *flat_name(const importer *im, int32_t e, char *out, size_t n) {
  char nm[128], comp[128], instance[16] = "";
  const flat_instr *f = &im->fi[e];
  int32_t computation = im->m->instrs[f->g].computation;
  const mb_hlo_computation *c = &im->m->comps[computation];
  if (computation == im->m->entry) /* the entry's: as iname's 127 characters */
    return iname(im, f->g, out, n < sizeof nm ? n : sizeof nm);
  iname(im, f->g, nm, sizeof nm);
  if (f->instance > 0) snprintf(instance, sizeof instance, "@%d", f->instance + 1);
  snprintf(out, n, "%s/%s%s", mb_hlo_span_str(im->m, c->name, comp, sizeof comp), nm, instance);
  return out;
}

/* The op at which buffer x's live range starts: its definer's (parameters and constants are in
 * memory from the start). */
static int32_t live_start(const importer *im, int32_t x) {
  int32_t def_op = im->op_of[im->bufs[x].def];
  return def_op >= 0 ? def_op : 0;
}

/* end, extended to a use of buffer x by flat instruction u; a use inside an inlined loop that
 * x was defined before (a parameter or constant: before everything) keeps x live to the loop's
 * end, for the body's next run. */
static int32_t live_to(const importer *im, const int32_t *last_op, int32_t x, int32_t u,
                       int32_t end) {
  const buffer_info *bi = &im->bufs[x];
  int32_t def = read_only(im, x) ? -1 : bi->def;
  if (im->op_of[u] > end) end = im->op_of[u];
  for (int32_t loop = im->fi[u].loop; loop >= 0 && def <= loop; loop = im->fi[loop].loop)
    if (last_op[im->fi[loop].loop_last] > end) end = last_op[im->fi[loop].loop_last];
  return end;
}

/* Fills im->sliced: each parameter read only by slices and dynamic-slices (as their operand 0)
 * gets the bytes of their results, as XLA's cost analysis counts a fused parameter's reads
 * (FusionParameterReadBytes; a gather there reads its operand whole). */
static void find_sliced_parameters(importer *im) {
  const mb_hlo_module *m = im->m;
  for (int32_t h = 0; h < m->n_instrs; h++) {
    const mb_hlo_instr *ins = &m->instrs[h];
    bool slice =
        mb_hlo_span_eq(m, ins->opcode, "slice") || mb_hlo_span_eq(m, ins->opcode, "dynamic-slice");
    for (int32_t k = 0; k < ins->n_operands; k++) {
      int32_t p = operand(im, ins, k);
      if (im->gcls[p] != C_PARAMETER || im->sliced[p] < 0) continue;
      if (!slice || k != 0 ||
          __builtin_add_overflow(im->sliced[p], shape_of(im, h)->bytes, &im->sliced[p]))
        im->sliced[p] = -1;
    }
  }
}

/* Whether op e may be an update (update_operand): the classes of its opcodes, quick to compare. */
static bool may_update(const importer *im, int32_t e) {
  return im->cls[e] == C_DATA || im->cls[e] == C_SCATTER || im->cls[e] == C_CALLER;
}

/* The operand that leaf j of op e's value may update in place (-1: none), and the bytes of the
 * update (*update): a dynamic-update-slice's operand 0; a scatter's operand j (a scatter of N
 * operands has N operands, the indices and N updates, and a value of N arrays); or the operand
 * of a fusion whose fused parameter is used only as operand 0 of the fused root, a
 * dynamic-update-slice. That operand is one array, and so is e's value but a scatter's. */
static int32_t update_operand(const importer *im, int32_t e, int32_t j, int64_t *update) {
  const mb_hlo_instr *ins = &im->m->instrs[im->fi[e].g];
  int32_t k = -1;
  if (mb_hlo_span_eq(im->m, ins->opcode, "dynamic-update-slice")) {
    if (ins->n_operands < 2 || j != 0) return -1;
    k = 0;
    *update = shape_of(im, operand(im, ins, 1))->bytes;
  } else if (mb_hlo_span_eq(im->m, ins->opcode, "scatter")) {
    int32_t n = (ins->n_operands - 1) / 2;
    if (ins->n_operands < 3 || ins->n_operands % 2 == 0 || j >= n || n_leaves(im, e) != n)
      return -1;
    *update = shape_of(im, operand(im, ins, n + 1 + j))->bytes;
    return n_leaves(im, flat_operand(im, e, j)) == 1 ? j : -1;
  } else if (mb_hlo_span_eq(im->m, ins->opcode, "fusion") && ins->n_called == 1 && j == 0) {
    const mb_hlo_computation *c = &im->m->comps[im->m->refs[ins->called]];
    const mb_hlo_instr *root = &im->m->instrs[c->root];
    if (!mb_hlo_span_eq(im->m, root->opcode, "dynamic-update-slice") || root->n_operands < 2)
      return -1;
    int32_t p = operand(im, root, 0), uses = 0;
    for (int32_t h = c->first_instr; h < c->first_instr + c->n_instrs; h++)
      for (int32_t q = 0; q < im->m->instrs[h].n_operands; q++)
        uses += operand(im, &im->m->instrs[h], q) == p;
    if (im->gcls[p] != C_PARAMETER || uses != 1 || im->m->instrs[p].index >= ins->n_operands)
      return -1;
    k = (int32_t)im->m->instrs[p].index;
    *update = shape_of(im, operand(im, root, 1))->bytes;
  } else {
    return -1;
  }
  return n_leaves(im, e) == 1 && n_leaves(im, flat_operand(im, e, k)) == 1 ? k : -1;
}

/* Whether leaf j of op e's value is written into the buffer that its update_operand k holds, as
 * XLA's buffer assignment shares it: a loop's state (merge_loop_states) or a buffer no later
 * instruction reads (merge_in_place_updates). */
static bool shares_operand(const importer *im, int32_t e, int32_t j, int32_t k) {
  int32_t own = im->leaf_buf[im->leaf_start[e] + j];
  int32_t updated = im->leaf_buf[im->leaf_start[flat_operand(im, e, k)]];
  return own >= 0 && updated >= 0 && holder(im, own) != own &&
         holder(im, own) == holder(im, updated);
}

/* Whether op e updates its operand k in place (update_operand, shares_operand), and the bytes of
 * the update (*update): leaf k of a scatter's value updates operand k, leaf 0 of another op's. */
static bool updates_operand(const importer *im, int32_t e, int32_t k, int64_t *update) {
  int32_t j = im->cls[e] == C_SCATTER ? k : 0;
  if (j >= n_leaves(im, e)) return false;
  int32_t u = update_operand(im, e, j, update);
  return u == k && shares_operand(im, e, j, u);
}

/* The leaf offset (*leaf) and shape (*sub) that shape index idx names within shape `shape`;
 * false when idx is not one of its indices. */
static bool index_leaf(const importer *im, int32_t shape, mb_hlo_ints idx, int32_t *leaf,
                       int32_t *sub) {
  int32_t off = 0, cur = shape;
  for (int32_t j = 0; j < idx.n; j++) {
    int32_t o, elem;
    if (!tuple_element(im, &im->m->shapes[cur], im->m->ints[idx.first + j], &o, &elem))
      return false;
    off += o;
    cur = elem;
  }
  *leaf = off;
  *sub = cur;
  return true;
}

/* A shape index as written, "{0,1}" (truncated to fit out). */
static const char *index_str(const importer *im, mb_hlo_ints idx, char *out, size_t n) {
  size_t k = (size_t)snprintf(out, n, "{");
  for (int32_t j = 0; j < idx.n && k < n; j++)
    k += (size_t)snprintf(out + k, n - k, "%s%lld", j ? "," : "",
                          (long long)im->m->ints[idx.first + j]);
  if (k < n) snprintf(out + k, n - k, "}");
  return out;
}

/* Whether flat instruction e is a parameter of the entry computation (an inlined computation's
 * parameters are aliases of the values they stand for: C_ALIAS). */
static bool is_entry_parameter(const importer *im, int32_t e) { return im->cls[e] == C_PARAMETER; }

/* Marks the entry parameters' arrays that the header donates (mb_hlo_donation): each gets the
 * root's leaf it may hold (input_output_alias) or DONATED_ANY (buffer_donor). Checked as XLA's
 * verifier checks them: the parameter exists and the shape indices name arrays, an aliased
 * output is as large as its parameter array, and no array or output is named twice. */
static bool mark_donations(importer *im, int32_t root) {
  const mb_hlo_module *m = im->m;
  if (m->n_donations == 0) return true;
  int32_t n_params = 0;
  for (int32_t e = 0; e < im->n; e++) n_params += is_entry_parameter(im, e);
  int32_t *param = malloc((size_t)(n_params > 0 ? n_params : 1) * sizeof *param);
  bool *output_taken = calloc((size_t)n_leaves(im, root) + 1, sizeof *output_taken);
  bool ok = param && output_taken;
  if (!ok) mb_fail(im->err, "%s: out of memory", im->path);
  for (int32_t k = 0; ok && k < n_params; k++) param[k] = -1;
  for (int32_t e = 0; ok && e < im->n; e++) {
    int64_t number = m->instrs[im->fi[e].g].index;
    if (is_entry_parameter(im, e) && number >= 0 && number < n_params) param[number] = e;
  }
  for (int32_t i = 0; ok && i < m->n_donations; i++) {
    const mb_hlo_donation *d = &m->donations[i];
    const char *key = d->output_index.n >= 0 ? "input_output_alias" : "buffer_donor";
    char pidx[64], oidx[64];
    index_str(im, d->param_index, pidx, sizeof pidx);
    int32_t e = d->parameter < n_params ? param[d->parameter] : -1, leaf, sub;
    if (e < 0) {
      ok = fail_line(im, d->line, "%s: parameter %lld: the entry computation has no parameter %lld",
                     key, (long long)d->parameter, (long long)d->parameter);
      break;
    }
    int32_t x = -1;
    if (index_leaf(im, m->instrs[im->fi[e].g].shape, d->param_index, &leaf, &sub) &&
        m->shapes[sub].etype != MB_HLO_TUPLE && m->shapes[sub].n_leaves == 1)
      x = im->leaf_buf[im->leaf_start[e] + leaf];
    if (x < 0) {
      ok = fail_line(im, d->line, "%s: parameter %lld has no array at shape index %s", key,
                     (long long)d->parameter, pidx);
      break;
    }
    if (im->bufs[x].donated_to != NOT_DONATED) {
      ok = fail_line(im, d->line, "%s: parameter %lld %s is donated twice", key,
                     (long long)d->parameter, pidx);
      break;
    }
    im->bufs[x].donated_to = DONATED_ANY;
    im->rep->n_donated_arrays++;
    if (d->output_index.n < 0) continue;
    index_str(im, d->output_index, oidx, sizeof oidx);
    int32_t out = -1;
    if (index_leaf(im, m->instrs[im->fi[root].g].shape, d->output_index, &leaf, &sub) &&
        m->shapes[sub].etype != MB_HLO_TUPLE && m->shapes[sub].n_leaves == 1)
      out = im->leaf_buf[im->leaf_start[root] + leaf];
    if (out < 0) {
      ok = fail_line(im, d->line, "%s: the result has no array at shape index %s", key, oidx);
    } else if (output_taken[leaf]) {
      ok = fail_line(im, d->line, "%s: output %s is aliased twice", key, oidx);
    } else if (m->shapes[sub].bytes != im->bufs[x].size) {
      ok = fail_line(im, d->line,
                     "%s: output %s (%lld bytes) and parameter %lld %s (%lld bytes): expected "
                     "the same size",
                     key, oidx, (long long)m->shapes[sub].bytes, (long long)d->parameter, pidx,
                     (long long)im->bufs[x].size);
    } else {
      output_taken[leaf] = true;
      im->bufs[x].donated_to = leaf;
    }
  }
  free(param);
  free(output_taken);
  return ok;
}

/* Whether the donated entry parameter array x (mark_donations) may hold the value of the update
 * whose own buffer is `own`, as XLA writes a donated parameter's output into its buffer: own's
 * value reaches the output x is donated to (any output for a buffer donor) itself or through a
 * chain of updates of it, each its operand's last reader (last_reader) in the same loop. */
static bool donated_into(const importer *im, const int32_t *last_reader, int32_t root, int32_t x,
                         int32_t own) {
  int32_t to = im->bufs[x].donated_to;
  if (to == NOT_DONATED) return false;
  int32_t target = to >= 0 ? holder(im, im->leaf_buf[im->leaf_start[root] + to]) : -1;
  for (int32_t steps = 0; steps < im->n; steps++) {
    if (target >= 0 ? own == target : im->bufs[own].output) return true;
    int32_t e = last_reader[own], leaf = -1;
    int64_t update;
    for (int32_t j = 0; leaf < 0 && e >= 0 && may_update(im, e) && j < n_leaves(im, e); j++) {
      int32_t k = update_operand(im, e, j, &update);
      if (k >= 0 && holder(im, im->leaf_buf[im->leaf_start[flat_operand(im, e, k)]]) == own)
        leaf = j;
    }
    if (leaf < 0) return false;
    int32_t next = im->leaf_buf[im->leaf_start[e] + leaf];
    if (next < 0 || im->bufs[next].merged_into >= 0 || im->bufs[next].size != im->bufs[own].size ||
        im->fi[e].loop != im->fi[im->bufs[own].def].loop)
      return false;
    own = next;
  }
  return false;
}

/* Updates outside a loop's state, as XLA's buffer assignment leaves them: an update
 * (update_operand) shares its operand's buffer, and so updates it in place (its own buffer is
 * merged into that one), when that buffer is computed in the same loop as the update (or
 * outside every loop), is not a parameter, a constant or an output, and no later instruction
 * reads it. Else the update is a copy (XLA's copy insertion adds one). Called once the outputs
 * are known; updates of an update chain into the first one's operand. Counts the updates in
 * place (these and those of loops' states) and the copies in the report. */
static bool merge_in_place_updates(importer *im, int32_t root) {
  /* the last flat instruction that reads each buffer, through the buffer that holds it */
  int32_t *last_reader = malloc((size_t)(im->n_bufs > 0 ? im->n_bufs : 1) * sizeof *last_reader);
  if (!last_reader) return mb_fail(im->err, "%s: out of memory", im->path);
  for (int32_t x = 0; x < im->n_bufs; x++) last_reader[x] = -1;
  for (int32_t e = 0; e < im->n; e++) {
    op_class c = im->cls[e];
    if (c == C_ALIAS || c == C_PARAMETER || c == C_CONSTANT) continue;
    for (int32_t k = 0; k < im->m->instrs[im->fi[e].g].n_operands; k++) {
      int32_t o = flat_operand(im, e, k);
      for (int32_t j = 0; j < n_leaves(im, o); j++) {
        int32_t x = holder(im, im->leaf_buf[im->leaf_start[o] + j]);
        if (x >= 0) last_reader[x] = e;
      }
    }
  }
  for (int32_t e = 0; e < im->n; e++) {
    for (int32_t j = 0; may_update(im, e) && j < n_leaves(im, e); j++) {
      int64_t update;
      int32_t k = update_operand(im, e, j, &update);
      if (k < 0) continue;
      int32_t own = im->leaf_buf[im->leaf_start[e] + j];
      int32_t x = holder(im, im->leaf_buf[im->leaf_start[flat_operand(im, e, k)]]);
      if (own < 0 || x < 0 || im->bufs[own].merged_into >= 0 || im->bufs[x].output ||
          last_reader[x] != e || im->bufs[x].size != im->bufs[own].size ||
          im->fi[im->bufs[x].def].loop != im->fi[e].loop ||
          (read_only(im, x) && !donated_into(im, last_reader, root, x, own)))
        continue;
      if (read_only(im, x)) im->rep->n_updates_into_donated++;
      im->bufs[own].merged_into = x;
      im->bufs[x].updated_in_place = true;
      im->bufs[x].output = im->bufs[own].output;
      last_reader[x] = last_reader[own];
    }
  }
  free(last_reader);
  for (int32_t e = 0; e < im->n; e++) {
    for (int32_t j = 0; may_update(im, e) && j < n_leaves(im, e); j++) {
      int64_t update;
      int32_t k = update_operand(im, e, j, &update);
      if (k < 0) continue;
      if (shares_operand(im, e, j, k))
        im->rep->n_updates_in_place++;
      else
        im->rep->n_updates_copied++;
    }
  }
  return true;
}

/* How a value depends on a buffer: not at all, element by element (each element of the value
 * from the same element of the buffer, and from nothing else of it), or otherwise. */
typedef enum { DEP_NONE = 1, DEP_ELEMENTWISE, DEP_OTHER, DEP_VISITING } dependence;

/* Deeper chains of fused producers are taken as DEP_OTHER: a conservative answer, never wrong. */
#define MAX_DEPENDENCE_DEPTH 256

/* How instruction h of fused computation c depends on its fused parameter p (memo: per
 * module-wide instruction, 0 not yet known): elementwise through elementwise ops and bitcasts of
 * p's element count, and tuples (a multi-output fusion's root). */
static dependence fused_dependence(const importer *im, int32_t c, int32_t p, int32_t h,
                                   int8_t *memo, int depth) {
  if (h == p) return DEP_ELEMENTWISE;
  if (memo[h] != 0) return memo[h] == DEP_VISITING ? DEP_OTHER : (dependence)memo[h];
  if (depth > MAX_DEPENDENCE_DEPTH) return DEP_OTHER;
  memo[h] = DEP_VISITING;
  const mb_hlo_module *m = im->m;
  const mb_hlo_instr *ins = &m->instrs[h];
  bool tuple = mb_hlo_span_eq(m, ins->opcode, "tuple");
  bool keeps_elements = im->gcls[h] == C_ELEMENTWISE || mb_hlo_span_eq(m, ins->opcode, "bitcast");
  dependence d = DEP_NONE;
  for (int32_t k = 0; d != DEP_OTHER && k < ins->n_operands; k++) {
    dependence dk = fused_dependence(im, c, p, operand(im, ins, k), memo, depth + 1);
    if (dk == DEP_OTHER ||
        (dk == DEP_ELEMENTWISE && !tuple &&
         (!keeps_elements || shape_of(im, h)->elements != shape_of(im, p)->elements)))
      d = DEP_OTHER;
    else if (dk == DEP_ELEMENTWISE)
      d = DEP_ELEMENTWISE;
  }
  memo[h] = (int8_t)d;
  return d;
}

/* How flat instruction e's value depends on buffer x (memo: per flat instruction, 0 not yet
 * known; fmemo: scratch for fused_dependence): through its operands' arrays that x holds, and
 * through the producers fused into it (elementwise ops, broadcasts and scalar constants, whose
 * buffers are dead), reached through any aliasing. */
static dependence value_dependence(const importer *im, int32_t e, int32_t x, int8_t *memo,
                                   int8_t *fmemo, int depth) {
  if (memo[e] != 0) return memo[e] == DEP_VISITING ? DEP_OTHER : (dependence)memo[e];
  if (depth > MAX_DEPENDENCE_DEPTH) return DEP_OTHER;
  memo[e] = DEP_VISITING;
  const mb_hlo_module *m = im->m;
  const mb_hlo_instr *ins = &m->instrs[im->fi[e].g];
  bool fusion = mb_hlo_span_eq(m, ins->opcode, "fusion") && ins->n_called == 1;
  int64_t elements = shape_of(im, im->fi[e].g)->elements;
  dependence d = DEP_NONE;
  for (int32_t k = 0; d != DEP_OTHER && k < ins->n_operands; k++) {
    int32_t o = flat_operand(im, e, k);
    for (int32_t j = 0; d != DEP_OTHER && j < n_leaves(im, o); j++) {
      int32_t b = im->leaf_buf[im->leaf_start[o] + j];
      dependence dk = DEP_NONE;
      if (b >= 0 && holder(im, b) == x) {
        dk = DEP_OTHER; /* read whole, or as one array of a tuple operand */
        bool one_array = n_leaves(im, o) == 1;
        if (one_array && im->cls[e] == C_ELEMENTWISE) {
          if (shape_of(im, im->fi[o].g)->elements == elements) dk = DEP_ELEMENTWISE;
        } else if (one_array && fusion) {
          int32_t c = m->refs[ins->called], p = -1;
          const mb_hlo_computation *fc = &m->comps[c];
          for (int32_t h = fc->first_instr; h < fc->first_instr + fc->n_instrs; h++)
            if (im->gcls[h] == C_PARAMETER && m->instrs[h].index == k) p = h;
          if (p >= 0) {
            memset(fmemo + fc->first_instr, 0, (size_t)fc->n_instrs);
            dk = fused_dependence(im, c, p, fc->root, fmemo, 0);
          }
        }
      } else if (b >= 0 && im->bufs[b].dead) { /* a producer fused into e */
        dk = value_dependence(im, im->bufs[b].def, x, memo, fmemo, depth + 1);
        if (dk == DEP_ELEMENTWISE && im->cls[e] != C_ELEMENTWISE) dk = DEP_OTHER;
      }
      if (dk != DEP_NONE) d = dk;
    }
  }
  memo[e] = (int8_t)d;
  return d;
}

/* Whether the donated entry parameter array x, no output, may hold output buffer t (the buffer
 * that holds a root's leaf: never fused away), as XLA's buffer assignment writes an output into
 * the parameter buffer aliased to it: t is of x's size and computed by an op, and nothing reads
 * x after that op (a read inside a loop: after the loop's end); the op may read x itself only
 * element by element, as XLA shares an operand's buffer with an elementwise user (an Adam
 * step's fused update of a weight, say). */
static bool may_hold_output(const importer *im, int32_t x, int32_t t, int8_t *memo, int8_t *fmemo) {
  if (t < 0 || read_only(im, t) || im->bufs[t].size != im->bufs[x].size) return false;
  int32_t p = im->bufs[t].def;
  bool read_by_p = false;
  const int_list *rd = &im->bufs[x].readers;
  for (int32_t k = 0; k < rd->n; k++) {
    int32_t r = rd->v[k], last = r;
    if (im->fused[r]) continue;
    for (int32_t loop = im->fi[r].loop; loop >= 0; loop = im->fi[loop].loop)
      last = im->fi[loop].loop_last; /* a parameter is read again in every run */
    if (last > p) return false;
    read_by_p = read_by_p || r == p;
  }
  if (!read_by_p) return true;
  memset(memo, 0, (size_t)im->n);
  return value_dependence(im, p, x, memo, fmemo, 0) == DEP_ELEMENTWISE;
}

/* Replaces buffer t by buffer x in list l (once; dropped if x is in it already). */
static void list_replace(int_list *l, int32_t t, int32_t x) {
  for (int32_t j = 0; j < l->n; j++) {
    if (l->v[j] != t) continue;
    if (list_has(l, x))
      l->v[j] = l->v[--l->n];
    else
      l->v[j] = x;
    return;
  }
}

/* Outputs written into their donated parameter's buffer (mark_donations), as XLA writes them:
 * each donated array that does not hold an output yet (an update of it in place,
 * merge_in_place_updates) holds the output it is donated to (for a buffer donor, the first
 * output of its size that it may hold) when may_hold_output allows it. Called once the reads
 * are known and producers fused, which may_hold_output judges; the output's readers then read
 * the parameter's buffer. Counts in the report the donated arrays that hold their output, by
 * an update or so, and those returned unchanged. */
static bool merge_donated_outputs(importer *im, int32_t root) {
  if (im->m->n_donations == 0) return true;
  int8_t *memo = malloc((size_t)im->n);
  int8_t *fmemo = malloc((size_t)(im->m->n_instrs > 0 ? im->m->n_instrs : 1));
  bool ok = memo && fmemo;
  for (int32_t x = 0; ok && x < im->n_bufs; x++) {
    buffer_info *bx = &im->bufs[x];
    if (bx->donated_to == NOT_DONATED) continue;
    if (bx->updated_in_place) { /* holds the output its updates compute */
      im->rep->n_donated_holding++;
      continue;
    }
    if (bx->output) { /* returned as it came, or returned and its output computed elsewhere */
      int32_t to = bx->donated_to;
      if (to == DONATED_ANY || holder(im, im->leaf_buf[im->leaf_start[root] + to]) == x)
        im->rep->n_donated_returned++;
      continue;
    }
    int32_t t = -1;
    for (int32_t k = 0; t < 0 && k < n_leaves(im, root); k++) {
      int32_t c = holder(im, im->leaf_buf[im->leaf_start[root] + k]);
      if ((bx->donated_to == DONATED_ANY || bx->donated_to == k) &&
          may_hold_output(im, x, c, memo, fmemo))
        t = c;
    }
    if (t < 0) continue;
    im->bufs[t].merged_into = x;
    bx->output = true;
    im->rep->n_donated_holding++;
    const int_list *rd = &im->bufs[t].readers;
    for (int32_t k = 0; ok && k < rd->n; k++) {
      int32_t r = rd->v[k];
      list_replace(&im->fused_reads[r], t, x);
      list_replace(&im->reads[r], t, x);
      if (!list_has(&bx->readers, r)) ok = list_push(&bx->readers, r);
    }
  }
  free(memo);
  free(fmemo);
  return ok ? true : mb_fail(im->err, "%s: out of memory", im->path);
}

/* Whether op e reads only a part of its operand k, and how many bytes (*bytes), as XLA's cost
 * analysis counts them: a slice, a dynamic-slice or a gather its result's bytes of operand 0; an
 * in-place update of its operand (updates_operand, of `update` bytes) nothing of it when it is a
 * dynamic-update-slice or a fusion rooted in one, and the update's bytes when it is a scatter
 * (which combines each update with what it replaces); a fusion the slices that slices and
 * dynamic-slices take of a fused parameter they alone read. */
static bool part_read(const importer *im, int32_t e, int32_t k, int64_t *bytes) {
  const mb_hlo_instr *ins = &im->m->instrs[im->fi[e].g];
  if (reads_slice(im->m, ins)) {
    *bytes = shape_of(im, im->fi[e].g)->bytes;
    return k == 0;
  }
  int64_t update;
  if (updates_operand(im, e, k, &update)) {
    *bytes = im->cls[e] == C_SCATTER ? update : 0;
    return true;
  }
  if (!mb_hlo_span_eq(im->m, ins->opcode, "fusion") || ins->n_called != 1) return false;
  const mb_hlo_computation *c = &im->m->comps[im->m->refs[ins->called]];
  for (int32_t p = c->first_instr; p < c->first_instr + c->n_instrs; p++)
    if (im->gcls[p] == C_PARAMETER && im->m->instrs[p].index == k) {
      *bytes = im->sliced[p];
      return *bytes > 0;
    }
  return false;
}

/* The bytes op e reads of buffer x, one of its reads: the parts it reads (part_read) when it
 * reads x only through such operands, at most x's size; else all of x. An asynchronous done
 * reads nothing: it keeps its start's buffers live up to it. */
static int64_t read_bytes(const importer *im, int32_t e, int32_t x) {
  if (im->cls[e] == C_ASYNC_DONE) return 0;
  const mb_hlo_instr *ins = &im->m->instrs[im->fi[e].g];
  int64_t size = im->bufs[x].size, part = 0, bytes;
  if (!may_read_part(im, e)) return size;
  if (list_has(&im->fused_reads[e], x)) return size; /* through a fused producer: whole */
  bool through_operand = false;
  for (int32_t k = 0; k < ins->n_operands; k++) {
    int32_t o = flat_operand(im, e, k);
    for (int32_t j = 0; j < n_leaves(im, o); j++) {
      int32_t b = im->leaf_buf[im->leaf_start[o] + j];
      if (b < 0 || holder(im, b) != x) continue;
      if (!part_read(im, e, k, &bytes) || __builtin_add_overflow(part, bytes, &part)) return size;
      through_operand = true;
    }
  }
  return through_operand && part < size ? part : size;
}

/* A use of builder buffer wb by flat instruction e's op, its bytes times e's runs. */
static bool add_use(importer *im, mb_workload_builder *b, int32_t wb, int32_t e, int64_t read,
                    int64_t written) {
  int64_t runs = im->fi[e].runs, r, w;
  if (__builtin_mul_overflow(read, runs, &r) || __builtin_mul_overflow(written, runs, &w)) {
    char nm[MB_NAME_MAX];
    return fail_line(im, im->m->instrs[im->fi[e].g].line,
                     "'%s': expected its bytes times its %lld runs to fit in 63 bits",
                     flat_name(im, e, nm, sizeof nm), (long long)runs);
  }
  return mb_builder_add_use(b, wb, im->op_of[e], r, w);
}

static mb_workload *build(importer *im) {
  const mb_hlo_module *m = im->m;
  const mb_hlo_computation *entry = &m->comps[m->entry];
  char nm[320], name[MB_NAME_MAX], kind[64], source[512], wname[MB_NAME_MAX];
  int32_t n_ops = 0;
  for (int32_t e = 0; e < im->n; e++) {
    op_class c = im->cls[e];
    bool op = c != C_ALIAS && c != C_PARAMETER && c != C_CONSTANT && !im->fused[e];
    im->op_of[e] = op ? n_ops++ : -1;
  }
  if (n_ops == 0) {
    fail_line(im, entry->line,
              "entry computation '%s': expected at least one instruction that computes "
              "(found only parameters, constants and aliases)",
              mb_hlo_span_str(m, entry->name, nm, sizeof nm));
    return NULL;
  }
  workload_name(im->path, m, wname, sizeof wname);
  snprintf(source, sizeof source, "XLA HLO text %s (module %.*s), fusion %s", im->path,
           m->name.len > 200 ? 200 : m->name.len, m->text + m->name.off,
           im->opt->fusion ? "on" : "off");
  mb_workload_builder *b = mb_builder_new(wname, source);
  if (!b) {
    mb_fail(im->err, "%s: out of memory", im->path);
    return NULL;
  }
  for (int32_t e = 0; e < im->n; e++) {
    if (im->op_of[e] < 0) continue;
    const mb_hlo_instr *ins = &m->instrs[im->fi[e].g];
    safe_name(flat_name(im, e, nm, sizeof nm), name, sizeof name);
    mb_hlo_span_str(m, ins->opcode, kind, sizeof kind);
    mb_builder_add_op(b, name, kind, im->flops[e]);
  }
  /* the last op at or before each flat instruction (where an inlined loop ends), and each
   * buffer's live range: definition to last use, outputs to the end */
  int32_t *last_op = malloc((size_t)im->n * sizeof *last_op);
  int32_t *wb = malloc((size_t)(im->n_bufs ? im->n_bufs : 1) * sizeof *wb);
  int32_t *end = malloc((size_t)(im->n_bufs ? im->n_bufs : 1) * sizeof *end);
  if (!wb || !last_op || !end) {
    free(wb);
    free(last_op);
    free(end);
    mb_builder_free(b);
    mb_fail(im->err, "%s: out of memory", im->path);
    return NULL;
  }
  for (int32_t e = 0, last = 0; e < im->n; e++)
    last_op[e] = last = im->op_of[e] >= 0 ? im->op_of[e] : last;
  for (int32_t i = 0; i < im->n_bufs; i++) {
    const buffer_info *bi = &im->bufs[i];
    end[i] = live_start(im, i);
    for (int32_t k = 0; k < bi->readers.n; k++)
      if (!im->fused[bi->readers.v[k]]) end[i] = live_to(im, last_op, i, bi->readers.v[k], end[i]);
  }
  for (int32_t i = 0; i < im->n_bufs; i++) { /* values written into a loop's state */
    int32_t h = holder(im, i);
    if (h != i && im->op_of[im->bufs[i].def] >= 0)
      end[h] = live_to(im, last_op, h, im->bufs[i].def, end[h]);
  }
  for (int32_t i = 0; i < im->n_bufs; i++) {
    buffer_info *bi = &im->bufs[i];
    wb[i] = -1;
    if (bi->dead || bi->merged_into >= 0) continue;
    /* what its layout says (hlo_parse.h): bytes added to its elements' own, XLA's placement */
    int32_t def_shape = im->m->instrs[im->fi[bi->def].g].shape;
    const mb_hlo_shape *ds = &im->m->shapes[def_shape];
    const mb_hlo_shape *ls = &im->m->shapes[mb_hlo_shape_leaf(im->m, def_shape, bi->leaf)];
    if (ls->bytes > ls->data_bytes) {
      im->rep->n_padded_buffers++;
      im->rep->padding_bytes += ls->bytes - ls->data_bytes;
    }
    if (ls->memory_space != 0) {
      im->rep->n_placed_buffers++;
      im->rep->placed_bytes += bi->size;
    }
    flat_name(im, bi->def, nm, sizeof nm);
    char full[340];
    if (ds->etype == MB_HLO_TUPLE)
      snprintf(full, sizeof full, "%s#%d", nm, bi->leaf);
    else
      snprintf(full, sizeof full, "%s", nm);
    safe_name(full, name, sizeof name);
    bool pinned = (im->cls[bi->def] == C_PARAMETER && im->opt->pin_parameters) ||
                  (bi->output && im->opt->pin_outputs);
    wb[i] = mb_builder_add_buffer(b, name, bi->size, live_start(im, i),
                                  bi->output ? n_ops - 1 : end[i], pinned);
  }
  /* uses, in bytes as often as the op runs: the definer writes its buffer (a value of a loop's
   * body writes the state it was merged into; the state's own copy, when merged into the
   * loop's operand, is not made), and each op reads its reads */
  bool ok = true;
  for (int32_t i = 0; ok && i < im->n_bufs; i++) {
    const buffer_info *bi = &im->bufs[i];
    int32_t h = holder(im, i);
    if (bi->dead || im->op_of[bi->def] < 0 || (h != i && im->fi[bi->def].loop_last >= 0)) continue;
    /* an in-place update writes its update's bytes */
    int64_t written = bi->size, update;
    int32_t k = may_read_part(im, bi->def) ? update_operand(im, bi->def, bi->leaf, &update) : -1;
    if (k >= 0 && shares_operand(im, bi->def, bi->leaf, k) && update < written) written = update;
    ok = add_use(im, b, wb[h], bi->def, 0, written);
  }
  for (int32_t e = 0; ok && e < im->n; e++) {
    if (im->op_of[e] < 0) continue;
    for (int32_t k = 0; ok && k < im->reads[e].n; k++) {
      int32_t x = im->reads[e].v[k];
      if (wb[x] >= 0) ok = add_use(im, b, wb[x], e, read_bytes(im, e, x), 0);
    }
  }
  free(wb);
  free(last_op);
  free(end);
  if (!ok) {
    mb_builder_free(b);
    return NULL;
  }
  mb_workload *w = mb_builder_finish(b, im->err);
  if (!w) mb_fail_prefix(im->err, "%s", im->path);
  return w;
}

mb_workload *mb_hlo_import_text(const char *text, size_t len, const char *path,
                                const mb_hlo_options *opt, mb_hlo_report *report, mb_error *err) {
  mb_hlo_options defaults;
  mb_hlo_report local;
  if (!opt) {
    mb_hlo_options_default(&defaults);
    opt = &defaults;
  }
  if (!report) report = &local;
  memset(report, 0, sizeof *report);
  if (!path) path = "<hlo>";
  mb_hlo_module *m = mb_hlo_parse(text, len, path, err);
  if (!m) return NULL;
  importer im = {.m = m, .opt = opt, .rep = report, .err = err, .path = path};
  const mb_hlo_computation *entry = &m->comps[m->entry];
  report->n_instructions = entry->n_instrs;
  report->n_computations = m->n_comps;
  report->n_unknown_attributes = m->n_unknown_attributes;
  mb_hlo_span_str(m, m->first_unknown_attribute, report->first_unknown_attribute,
                  sizeof report->first_unknown_attribute);
  report->is_scheduled = m->is_scheduled;
  im.gcls = malloc((size_t)(m->n_instrs > 0 ? m->n_instrs : 1) * sizeof *im.gcls);
  if (!im.gcls) {
    mb_fail(err, "%s: out of memory", path);
    mb_hlo_module_free(m);
    return NULL;
  }
  for (int32_t i = 0; i < m->n_instrs; i++) {
    im.gcls[i] = classify(m, m->instrs[i].opcode);
    if (im.gcls[i] != C_UNKNOWN) continue;
    if (report->n_unknown_opcodes++ == 0)
      mb_hlo_span_str(m, m->instrs[i].opcode, report->first_unknown, sizeof report->first_unknown);
  }
  mb_workload *w = NULL;
  size_t nc = m->n_comps > 0 ? (size_t)m->n_comps : 1; /* the parser guarantees n_comps >= 1 */
  int32_t *flat_of = malloc((size_t)(m->n_instrs > 0 ? m->n_instrs : 1) * sizeof *flat_of);
  im.inlining = calloc(nc, sizeof *im.inlining);
  im.n_instances = calloc(nc, sizeof *im.n_instances);
  /* FLOPs are known before flattening: an inlined conditional takes its most expensive branch */
  im.cc_flops = calloc(m->n_instrs > 0 ? (size_t)m->n_instrs : 1, sizeof *im.cc_flops);
  im.comp_flops = calloc(nc, sizeof *im.comp_flops);
  im.comp_state = calloc(nc, sizeof *im.comp_state);
  im.sliced = calloc(m->n_instrs > 0 ? (size_t)m->n_instrs : 1, sizeof *im.sliced);
  bool allocated = flat_of && im.inlining && im.n_instances && im.cc_flops && im.comp_flops &&
                   im.comp_state && im.sliced;
  bool flat = allocated;
  for (int32_t i = 0; flat && i < m->n_instrs; i++)
    if (mb_hlo_span_eq(m, m->instrs[i].opcode, "custom-call")) flat = custom_call_cost(&im, i);
  if (flat) find_sliced_parameters(&im);
  flat = flat && flatten(&im, m->entry, flat_of, -1, 1, 0, NULL);
  if (!allocated) mb_fail(err, "%s: out of memory", path);
  int32_t root = flat ? flat_of[entry->root] : -1;
  free(flat_of);
  if (!flat) goto done;
  int64_t total_leaves = 0;
  for (int32_t e = 0; e < im.n; e++) total_leaves += n_leaves(&im, e);
  size_t ni = im.n > 0 ? (size_t)im.n : 1; /* and n >= 1; the max() keeps the sizes positive */
  size_t nl = total_leaves > 0 && total_leaves <= INT32_MAX ? (size_t)total_leaves : 1;
  im.cls = calloc(ni, sizeof *im.cls);
  im.leaf_start = calloc(ni, sizeof *im.leaf_start);
  im.leaf_buf = calloc(nl, sizeof *im.leaf_buf);
  im.flops = calloc(ni, sizeof *im.flops);
  im.fused = calloc(ni, sizeof *im.fused);
  im.op_of = calloc(ni, sizeof *im.op_of);
  im.reads = calloc(ni, sizeof *im.reads);
  im.fused_reads = calloc(ni, sizeof *im.fused_reads);
  if (total_leaves > INT32_MAX || !im.cls || !im.leaf_start || !im.leaf_buf || !im.flops ||
      !im.fused || !im.op_of || !im.reads || !im.fused_reads) {
    mb_fail(err, "%s: out of memory", path);
    goto done;
  }
  int32_t off = 0;
  for (int32_t e = 0; e < im.n; e++) {
    int32_t g = im.fi[e].g;
    im.cls[e] = im.fi[e].value_of >= 0 ? C_ALIAS : im.gcls[g];
    im.leaf_start[e] = off;
    off += n_leaves(&im, e);
    if (!define_leaves(&im, e)) goto done;
    /* an inlined while, call or conditional: its FLOPs are its body's, callee's or branch's,
     * as ops */
    if (im.fi[e].loop_last >= 0 || im.fi[e].value_of >= 0) continue;
    if (!instr_flops(&im, g, 0, &im.flops[e])) goto done;
    im.flops[e] *= (double)im.fi[e].runs;
    report->total_flops += im.flops[e];
    if (im.cls[e] == C_WHILE) report->loop_flops += im.flops[e];
  }
  if (!count_loops(&im)) goto done;
  merge_loop_states(&im);
  /* outputs: the root's arrays, through any aliasing */
  for (int32_t k = 0; k < n_leaves(&im, root); k++) {
    int32_t x = im.leaf_buf[im.leaf_start[root] + k];
    if (x >= 0) im.bufs[holder(&im, x)].output = true;
  }
  if (!mark_donations(&im, root) || !merge_in_place_updates(&im, root)) goto done;
  /* reads: every computing instruction reads each distinct buffer behind its operands once */
  for (int32_t e = 0; e < im.n; e++) {
    op_class c = im.cls[e];
    if (c == C_ALIAS || c == C_PARAMETER || c == C_CONSTANT) continue;
    const mb_hlo_instr *ins = &m->instrs[im.fi[e].g];
    for (int32_t k = 0; k < ins->n_operands; k++) {
      int32_t o = flat_operand(&im, e, k);
      for (int32_t j = 0; j < n_leaves(&im, o); j++) {
        int32_t x = im.leaf_buf[im.leaf_start[o] + j];
        if (x < 0) continue;
        x = holder(&im, x);
        /* an inlined while copies in the state its body changes, not what it leaves alone */
        if (im.fi[e].loop_last >= 0 && holder(&im, im.leaf_buf[im.leaf_start[e] + j]) == x)
          continue;
        if (list_has(&im.reads[e], x)) continue;
        if (!list_push(&im.reads[e], x) || !list_push(&im.bufs[x].readers, e)) {
          mb_fail(err, "%s: out of memory", path);
          goto done;
        }
      }
    }
  }
  if (opt->fusion && !fuse(&im)) goto done;
  if (!merge_donated_outputs(&im, root)) goto done;
  w = build(&im);
done:
  importer_free(&im);
  mb_hlo_module_free(m);
  return w;
}

mb_workload *mb_hlo_import_file(const char *path, const mb_hlo_options *opt, mb_hlo_report *report,
                                mb_error *err) {
  size_t len = 0;
  char *text = mb_read_file(path, &len);
  if (!text) {
    mb_fail(err, "%s: cannot read: %s", path, strerror(errno));
    return NULL;
  }
  mb_workload *w = mb_hlo_import_text(text, len, path, opt, report, err);
  free(text);
  return w;
}
