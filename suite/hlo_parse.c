#include "hlo_parse.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <inttypes.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "text_lines.h"

#define MAX_TUPLE_DEPTH 64           /* nested tuple shapes; real dumps use 2-3 */
#define MAX_TEXT ((size_t)1 << 30)   /* spans are int32 */
#define MAX_VALUE ((int64_t)1 << 62) /* integers, element counts and byte sizes */

/* ---- element types ---- */

typedef struct {
  const char *name;
  mb_hlo_etype type;
  int bits;
} etype_info;

static const etype_info ETYPES[] = {
    {"pred", MB_HLO_PRED, 8},
    {"s2", MB_HLO_S2, 2},
    {"s4", MB_HLO_S4, 4},
    {"s8", MB_HLO_S8, 8},
    {"s16", MB_HLO_S16, 16},
    {"s32", MB_HLO_S32, 32},
    {"s64", MB_HLO_S64, 64},
    {"u2", MB_HLO_U2, 2},
    {"u4", MB_HLO_U4, 4},
    {"u8", MB_HLO_U8, 8},
    {"u16", MB_HLO_U16, 16},
    {"u32", MB_HLO_U32, 32},
    {"u64", MB_HLO_U64, 64},
    {"f4e2m1fn", MB_HLO_F4E2M1FN, 4},
    /* XLA stores the 6-bit floats in one byte each. */
    {"f6e2m3fn", MB_HLO_F6E2M3FN, 8},
    {"f6e3m2fn", MB_HLO_F6E3M2FN, 8},
    {"f8e3m4", MB_HLO_F8E3M4, 8},
    {"f8e4m3", MB_HLO_F8E4M3, 8},
    {"f8e4m3fn", MB_HLO_F8E4M3FN, 8},
    {"f8e4m3b11fnuz", MB_HLO_F8E4M3B11FNUZ, 8},
    {"f8e4m3fnuz", MB_HLO_F8E4M3FNUZ, 8},
    {"f8e5m2", MB_HLO_F8E5M2, 8},
    {"f8e5m2fnuz", MB_HLO_F8E5M2FNUZ, 8},
    {"f8e8m0fnu", MB_HLO_F8E8M0FNU, 8},
    {"f16", MB_HLO_F16, 16},
    {"bf16", MB_HLO_BF16, 16},
    {"f32", MB_HLO_F32, 32},
    {"f64", MB_HLO_F64, 64},
    {"c64", MB_HLO_C64, 64},
    {"c128", MB_HLO_C128, 128},
    {"token", MB_HLO_TOKEN, 0},
    {"opaque", MB_HLO_OPAQUE, 0},
};
static const int N_ETYPES = (int)(sizeof ETYPES / sizeof ETYPES[0]);

int mb_hlo_etype_bits(mb_hlo_etype t) {
  for (int i = 0; i < N_ETYPES; i++)
    if (ETYPES[i].type == t) return ETYPES[i].bits;
  return 0;
}

/* a * b, false when it reaches MAX_VALUE (a, b >= 0) */
static bool mul_below_max(int64_t a, int64_t b, int64_t *out) {
  if (b != 0 && a >= MAX_VALUE / b) return false;
  *out = a * b;
  return true;
}

/* x rounded up to a multiple of m (m >= 1), false when it reaches MAX_VALUE */
static bool round_up_below_max(int64_t x, int64_t m, int64_t *out) {
  int64_t q = x / m + (x % m != 0);
  return mul_below_max(q, m, out);
}

bool mb_hlo_array_bytes(mb_hlo_etype t, const int64_t *dims, int32_t rank,
                        const mb_hlo_layout *layout, int64_t *bytes) {
  int bits = mb_hlo_etype_bits(t);
  *bytes = 0;
  if (bits == 0) return true;
  int64_t count = 1;
  bool tiled = layout && layout->tile_rank > 0 && layout->rank == rank;
  if (tiled) {
    /* XLA's ArraySize: the k-th minor-most dim (minor_to_major[k]) meets the tile's k-th dim
     * from its minor end; dims the shape lacks count as 1 */
    int32_t k = 0;
    for (; k < layout->tile_rank; k++) {
      int64_t d = k < rank ? dims[layout->minor_to_major[k]] : 1;
      if (!round_up_below_max(d, layout->tile[layout->tile_rank - 1 - k], &d) ||
          !mul_below_max(count, d, &count))
        return false;
    }
    for (; k < rank; k++)
      if (!mul_below_max(count, dims[layout->minor_to_major[k]], &count)) return false;
    if (!round_up_below_max(count, layout->tail_alignment, &count)) return false;
  } else {
    for (int32_t k = 0; k < rank; k++)
      if (!mul_below_max(count, dims[k], &count)) return false;
  }
  int64_t element_bits =
      layout && layout->element_bits > 0 ? layout->element_bits : (bits + 7) / 8 * 8;
  /* ceil(count * element_bits / 8) without overflowing */
  if (count / 8 >= MAX_VALUE / element_bits) return false;
  *bytes = (count / 8) * element_bits + ((count % 8) * element_bits + 7) / 8;
  return *bytes < MAX_VALUE;
}

/* Attributes whose meaning XLA defines. The parser interprets a few of them (see
 * interpret_attribute) and skips the others; keys outside this list are counted as unknown. */
static const char *const KNOWN_ATTRIBUTES[] = {
    "algorithm",
    "all_gather_dimension",
    "calls",
    "api_version",
    "async_execution_thread",
    "async_group_id",
    "backend_config",
    "batch_group_count",
    "body",
    "branch_computations",
    "called_computations",
    "channel_id",
    "collapsed_slice_dims",
    "comparator",
    "condition",
    "constrain_layout",
    "control-predecessors",
    "cross_program_prefetch_index",
    "custom_call_has_side_effect",
    "custom_call_schedule",
    "custom_call_target",
    "delta",
    "dim_labels",
    "dimensions",
    "direction",
    "distribution",
    "domain",
    "dynamic_slice_sizes",
    "epsilon",
    "execution_thread",
    "exponent_bits",
    "false_computation",
    "feature_group_count",
    "feature_index",
    "fft_length",
    "fft_type",
    "frontend_attributes",
    "index",
    "index_vector_dim",
    "indices_are_sorted",
    "infeed_config",
    "inferred_dimension",
    "input_batching_dims",
    "inserted_window_dims",
    "iota_dimension",
    "is_cross_program_prefetch",
    "is_composite",
    "is_host_transfer",
    "is_stable",
    "k",
    "kind",
    "largest",
    "left_side",
    "lhs_batch_dims",
    "lhs_contracting_dims",
    "literal",
    "lower",
    "mantissa_bits",
    "metadata",
    "offset_dims",
    "operand_batching_dims",
    "operand_layout_constraints",
    "operand_precision",
    "origin",
    "outfeed_config",
    "outfeed_shape",
    "output_to_operand_aliasing",
    "padding",
    "parameter_replication",
    "precision_config",
    "replica_groups",
    "result_accuracy",
    "rhs_batch_dims",
    "rhs_contracting_dims",
    "scatter",
    "scatter_dims_to_operand_dims",
    "scatter_indices_batching_dims",
    "schedule",
    "select",
    "sharding",
    "slice",
    "slice_sizes",
    "source_target_pairs",
    "sparsity",
    "split_dimension",
    "start_index_map",
    "start_indices_batching_dims",
    "statistics_viz",
    "to_apply",
    "transpose_a",
    "true_computation",
    "type",
    "unique_indices",
    "unit_diagonal",
    "update_window_dims",
    "use_global_device_ids",
    "window",
    "wrapped_computation",
    /* module and computation headers */
    "alias_passthrough_params",
    "allow_spmd_sharding_propagation_to_output",
    "allow_spmd_sharding_propagation_to_parameters",
    "buffer_donor",
    "entry_computation_layout",
    "input_output_alias",
    "is_scheduled",
    "num_partitions",
    "replica_count",
    "spmd_output_sharding",
    "spmd_parameters_shardings",
};
static const int N_KNOWN_ATTRIBUTES = (int)(sizeof KNOWN_ATTRIBUTES / sizeof KNOWN_ATTRIBUTES[0]);

/* Attributes that name called computations (one name or a {list}). */
static const char *const CALL_ATTRIBUTES[] = {
    "to_apply",
    "calls",
    "body",
    "condition",
    "true_computation",
    "false_computation",
    "branch_computations",
    "called_computations",
    "comparator",
    "wrapped_computation",
    "select",  /* select-and-scatter */
    "scatter", /* select-and-scatter */
};
static const int N_CALL_ATTRIBUTES = (int)(sizeof CALL_ATTRIBUTES / sizeof CALL_ATTRIBUTES[0]);

/* ---- parser state ---- */

typedef struct parser {
  const char *s;
  int32_t n, pos, line;
  const char *path;
  mb_error *err;
  mb_hlo_module *m;
  int32_t cap_comps, cap_instrs, cap_shapes, cap_ints, cap_refs, cap_donations;
  mb_hlo_span *ref_names; /* parallel to m->refs: the name to resolve ({-1,0}: resolved) */
  int32_t cap_ref_names;
  int32_t *stack; /* tuple elements being parsed */
  int32_t n_stack, cap_stack;
  pcre2_code *re_name, *re_array, *re_key, *re_opcode;
  pcre2_code *re_alias, *re_donor; /* entries of input_output_alias= and buffer_donor= */
  pcre2_match_data *md;
} parser;

static bool oom(parser *p) { return mb_fail(p->err, "%s: out of memory while parsing", p->path); }

/* "file:line: expected ..." */
#define FAIL(p, ...) fail_at((p), (p)->line, __VA_ARGS__)
static bool fail_at(parser *p, int32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail_at(parser *p, int32_t line, const char *fmt, ...) {
  char msg[MB_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mb_fail(p->err, "%s:%d: %s", p->path, line, msg);
}

/* A printable excerpt of the text at pos, for "got '...'" in messages. */
static const char *excerpt(const parser *p, int32_t pos, char *out, size_t n) {
  if (pos >= p->n) return "end of file";
  size_t k = 0;
  while (k + 1 < n && k < 24 && pos + (int32_t)k < p->n) {
    char c = p->s[pos + k];
    if (c == '\n' || c == '\r' || c == '\0') break;
    out[k] = (c >= 32 && c < 127) ? c : '?';
    k++;
  }
  out[k] = '\0';
  return k ? out : "end of line";
}

static void advance(parser *p, int32_t k) {
  for (int32_t i = 0; i < k && p->pos < p->n; i++, p->pos++)
    if (p->s[p->pos] == '\n') p->line++;
}

/* Skips spaces, newlines and comments. A "/ *" comment left open fails. */
static bool skip_ws(parser *p) {
  while (p->pos < p->n) {
    char c = p->s[p->pos];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
      advance(p, 1);
    } else if (c == '/' && p->pos + 1 < p->n && p->s[p->pos + 1] == '*') {
      int32_t line = p->line;
      advance(p, 2);
      while (p->pos + 1 < p->n && !(p->s[p->pos] == '*' && p->s[p->pos + 1] == '/')) advance(p, 1);
      if (p->pos + 1 >= p->n) return fail_at(p, line, "expected '*/' closing the comment");
      advance(p, 2);
    } else if (c == '/' && p->pos + 1 < p->n && p->s[p->pos + 1] == '/') {
      while (p->pos < p->n && p->s[p->pos] != '\n') advance(p, 1);
    } else {
      break;
    }
  }
  return true;
}

static bool at(const parser *p, char c) { return p->pos < p->n && p->s[p->pos] == c; }

/* Anchored match of re at pos within [pos, end); returns the match length or -1. */
static int32_t match(parser *p, pcre2_code *re, int32_t pos, int32_t end) {
  if (pos >= end) return -1;
  int rc = pcre2_match(re, (PCRE2_SPTR)p->s, (PCRE2_SIZE)end, (PCRE2_SIZE)pos, 0, p->md, NULL);
  if (rc < 0) return -1;
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(p->md);
  return (int32_t)(ov[1] - ov[0]);
}

/* Group g of the last match as a span (len 0 when unset). */
static mb_hlo_span group(parser *p, int g) {
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(p->md);
  if (ov[2 * g] == PCRE2_UNSET) return (mb_hlo_span){0, 0};
  return (mb_hlo_span){(int32_t)ov[2 * g], (int32_t)(ov[2 * g + 1] - ov[2 * g])};
}

static bool span_is(const parser *p, mb_hlo_span s, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)s.len == n && !memcmp(p->s + s.off, lit, n);
}

static const char *span_cstr(const parser *p, mb_hlo_span s, char *out, size_t n) {
  size_t k = (size_t)s.len < n - 1 ? (size_t)s.len : n - 1;
  memcpy(out, p->s + s.off, k);
  out[k] = '\0';
  return out;
}

/* Skips a "string" with backslash escapes; pos is at the opening quote. */
static bool skip_string(parser *p) {
  int32_t line = p->line;
  advance(p, 1);
  while (p->pos < p->n && p->s[p->pos] != '"') {
    if (p->s[p->pos] == '\\' && p->pos + 1 < p->n) advance(p, 1);
    advance(p, 1);
  }
  if (p->pos >= p->n) return fail_at(p, line, "expected '\"' closing the string opened here");
  advance(p, 1);
  return true;
}

/* Skips a balanced group starting at an opening bracket: {...}, (...) or [...], with strings.
 * One linear scan with a depth counter (bracket kinds are not cross-checked: the content is
 * skipped, not interpreted). */
static bool skip_balanced(parser *p) {
  char open = p->s[p->pos];
  char close = open == '{' ? '}' : open == '(' ? ')' : ']';
  int32_t line = p->line;
  int64_t depth = 0;
  while (p->pos < p->n) {
    char c = p->s[p->pos];
    if (c == '"') {
      if (!skip_string(p)) return false;
      continue;
    }
    if (c == '{' || c == '(' || c == '[') depth++;
    if (c == '}' || c == ')' || c == ']') depth--;
    advance(p, 1);
    if (depth == 0) return true;
  }
  return fail_at(p, line, "expected '%c' closing the '%c' opened here", close, open);
}

/* An attribute value: one run of balanced groups, strings and other characters, ending at
 * whitespace, ',' or an unmatched closer at depth 0. */
static bool scan_value(parser *p, mb_hlo_span *out) {
  int32_t start = p->pos;
  while (p->pos < p->n) {
    char c = p->s[p->pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '}' || c == ')' ||
        c == ']')
      break;
    if (c == '{' || c == '(' || c == '[') {
      if (!skip_balanced(p)) return false;
    } else if (c == '"') {
      if (!skip_string(p)) return false;
    } else {
      advance(p, 1);
    }
  }
  *out = (mb_hlo_span){start, p->pos - start};
  return true;
}

/* ---- arenas ---- */

static int32_t add_ref(parser *p, int32_t value, mb_hlo_span name) {
  mb_hlo_module *m = p->m;
  if (!mb_array_reserve((void **)&m->refs, &p->cap_refs, (int64_t)m->n_refs + 1, sizeof *m->refs) ||
      !mb_array_reserve((void **)&p->ref_names, &p->cap_ref_names, (int64_t)m->n_refs + 1,
                        sizeof *p->ref_names)) {
    oom(p);
    return -1;
  }
  m->refs[m->n_refs] = value;
  p->ref_names[m->n_refs] = name;
  return m->n_refs++;
}

static int32_t add_int(parser *p, int64_t v) {
  mb_hlo_module *m = p->m;
  if (!mb_array_reserve((void **)&m->ints, &p->cap_ints, (int64_t)m->n_ints + 1, sizeof *m->ints)) {
    oom(p);
    return -1;
  }
  m->ints[m->n_ints] = v;
  return m->n_ints++;
}

static int32_t add_shape(parser *p, const mb_hlo_shape *s) {
  mb_hlo_module *m = p->m;
  if (!mb_array_reserve((void **)&m->shapes, &p->cap_shapes, (int64_t)m->n_shapes + 1,
                        sizeof *m->shapes)) {
    oom(p);
    return -1;
  }
  m->shapes[m->n_shapes] = *s;
  return m->n_shapes++;
}

/* Parses a decimal integer (optionally negative) in [pos, end) below 2^62. */
static bool parse_int_at(parser *p, int32_t *pos, int32_t end, int64_t *out) {
  int32_t i = *pos;
  bool neg = false;
  if (i < end && p->s[i] == '-') {
    neg = true;
    i++;
  }
  if (i >= end || p->s[i] < '0' || p->s[i] > '9') return false;
  int64_t v = 0;
  while (i < end && p->s[i] >= '0' && p->s[i] <= '9') {
    if (v >= MAX_VALUE / 10) return false; /* v * 10 + 9 stays below 2^62 + 9: no overflow */
    v = v * 10 + (p->s[i] - '0');
    i++;
  }
  *pos = i;
  *out = neg ? -v : v;
  return true;
}

/* ---- shapes ---- */

static bool layout_follows(const parser *p) {
  /* XLA prints a layout right after ']' ("f32[2,3]{1,0}", "{1,0:T(8,128)(2,1)}", "{}"); a
   * '{' after a space is a computation body. */
  return at(p, '{');
}

static int32_t parse_shape(parser *p, int depth);

static int32_t parse_tuple_shape(parser *p, int depth) {
  int32_t line = p->line;
  if (depth >= MAX_TUPLE_DEPTH) {
    FAIL(p, "expected tuple shapes nested at most %d deep", MAX_TUPLE_DEPTH);
    return -1;
  }
  advance(p, 1); /* '(' */
  int32_t base = p->n_stack;
  mb_hlo_shape t = {.etype = MB_HLO_TUPLE};
  if (!skip_ws(p)) return -1;
  if (at(p, ')')) {
    advance(p, 1);
  } else {
    for (;;) {
      int32_t e = parse_shape(p, depth + 1);
      if (e < 0) return -1;
      const mb_hlo_shape *es = &p->m->shapes[e];
      if (t.n_leaves > INT32_MAX - es->n_leaves || t.bytes >= MAX_VALUE - es->bytes) {
        FAIL(p, "expected a tuple shape below 2^62 bytes");
        return -1;
      }
      t.n_leaves += es->n_leaves;
      t.bytes += es->bytes;
      t.data_bytes += es->data_bytes;
      if (!mb_array_reserve((void **)&p->stack, &p->cap_stack, (int64_t)p->n_stack + 1,
                            sizeof *p->stack)) {
        oom(p);
        return -1;
      }
      p->stack[p->n_stack++] = e;
      if (!skip_ws(p)) return -1;
      if (at(p, ',')) {
        advance(p, 1);
        if (!skip_ws(p)) return -1;
        continue;
      }
      if (at(p, ')')) {
        advance(p, 1);
        break;
      }
      char ex[32];
      fail_at(p, p->line, "expected ',' or ')' in the tuple shape opened at line %d, got '%s'",
              line, excerpt(p, p->pos, ex, sizeof ex));
      return -1;
    }
  }
  t.n_tuple = p->n_stack - base;
  t.tuple = p->m->n_ints;
  for (int32_t k = base; k < p->n_stack; k++)
    if (add_int(p, p->stack[k]) < 0) return -1;
  p->n_stack = base;
  if (layout_follows(p) && !skip_balanced(p)) return -1;
  return add_shape(p, &t);
}

/* excerpt() cut after the layout's closing '}' at `close`: a message shows the layout only. */
static const char *layout_excerpt(const parser *p, int32_t close, int32_t pos, char *out,
                                  size_t n) {
  excerpt(p, pos, out, n);
  if (pos <= close && (size_t)(close - pos + 1) < strlen(out)) out[close - pos + 1] = '\0';
  return out;
}

/* The first tile of a layout, the text between its parentheses [from, end): positive dims, '*'
 * (a combined dim, which pads nothing) counting as 1. The layout is at line `line` and ends at
 * `close` (for messages). */
static bool parse_first_tile(parser *p, int32_t line, int32_t close, int32_t from, int32_t end,
                             mb_hlo_layout *out) {
  char ex[32];
  for (int32_t k = from; k < end;) {
    if (out->tile_rank >= MB_HLO_MAX_LAYOUT_RANK)
      return fail_at(p, line, "expected a tile of at most %d dimensions", MB_HLO_MAX_LAYOUT_RANK);
    int64_t t = 1;
    int32_t dim_at = k;
    if (p->s[k] == '*')
      k++;
    else if (!parse_int_at(p, &k, end, &t) || t < 1)
      return fail_at(p, line, "expected a positive tile dimension, got '%s'",
                     layout_excerpt(p, close, dim_at, ex, sizeof ex));
    out->tile[out->tile_rank++] = t;
    if (k < end && p->s[k] == ',')
      k++;
    else if (k < end)
      return fail_at(p, line, "expected ',' or ')' in the tile, got '%s'",
                     layout_excerpt(p, close, k, ex, sizeof ex));
  }
  return true;
}

/* The number of a layout's L(n), E(n) or S(n) item (`item`), the text [from, end). */
static bool parse_layout_number(parser *p, int32_t line, int32_t close, char item, int32_t from,
                                int32_t end, mb_hlo_layout *out) {
  char ex[32];
  int32_t k = from;
  int64_t v;
  if (!parse_int_at(p, &k, end, &v) || k != end || v < 0 || (item == 'L' && v < 1) ||
      (item != 'L' && v > 1024))
    return fail_at(p, line, "expected %s in the layout's %c(...), got '%s'",
                   item == 'L'   ? "a positive element count"
                   : item == 'E' ? "a number of bits (0..1024)"
                                 : "a memory space number (0..1024)",
                   item, layout_excerpt(p, close, from, ex, sizeof ex));
  if (item == 'L')
    out->tail_alignment = v;
  else if (item == 'E')
    out->element_bits = (int32_t)v;
  else
    out->memory_space = (int32_t)v;
  return true;
}

/* Parses an array layout at '{': "{1,0}", "{}", "{1,0:T(8,128)(2,1)L(4)E(4)S(1)}". The minor-to-
 * major list must be a permutation of the shape's `rank` dims (or empty); after ':' come items
 * NAME(...)(...)...: T (tiles), L, E and S are read, every other item (D, #, *, SC, P, M, and
 * any later XLA adds) is skipped as balanced groups. */
static bool parse_layout(parser *p, int32_t rank, mb_hlo_layout *out) {
  /* fields set one by one: the arrays (1 KiB) are read only up to their counts */
  out->rank = out->tile_rank = out->element_bits = out->memory_space = 0;
  out->tail_alignment = 1;
  int32_t line = p->line, start = p->pos, close = p->pos;
  /* the closing '}' on the same line: braces nest only in a P(shape{layout}) item */
  for (int32_t depth = 0; close < p->n && p->s[close] != '\n'; close++) {
    depth += p->s[close] == '{';
    depth -= p->s[close] == '}';
    if (depth == 0) break;
  }
  if (close >= p->n || p->s[close] != '}') return FAIL(p, "expected '}' closing the layout");
  advance(p, close + 1 - start);
  int32_t i = start + 1;
  char ex[32];
  /* minor_to_major */
  while (i < close && p->s[i] != ':') {
    int64_t d;
    if (p->s[i] == ' ') {
      i++;
      continue;
    }
    if (p->s[i] == ',' && out->rank > 0) i++;
    if (out->rank >= MB_HLO_MAX_LAYOUT_RANK)
      return fail_at(p, line, "expected a layout of at most %d dimensions", MB_HLO_MAX_LAYOUT_RANK);
    int32_t dim_at = i;
    if (!parse_int_at(p, &i, close, &d) || d < 0 || d >= rank)
      return fail_at(p, line,
                     "expected a dimension number below %d in the layout's minor-to-major list, "
                     "got '%s'",
                     rank, layout_excerpt(p, close, dim_at, ex, sizeof ex));
    for (int32_t k = 0; k < out->rank; k++)
      if (out->minor_to_major[k] == d)
        return fail_at(p, line, "expected each dimension once in the layout, got %" PRId64 " twice",
                       d);
    out->minor_to_major[out->rank++] = d;
  }
  if (out->rank != 0 && out->rank != rank)
    return fail_at(p, line, "expected a layout of the shape's %d dimensions, got %d", rank,
                   out->rank);
  if (i < close) i++; /* ':' */
  /* items: a name, then one or more parenthesised groups */
  while (i < close) {
    int32_t name = i;
    while (i < close && p->s[i] != '(') i++;
    if (i >= close)
      return fail_at(p, line, "expected a layout item like T(8,128) or S(1), got '%s'",
                     layout_excerpt(p, close, name, ex, sizeof ex));
    /* a single letter names the item; none is the tiles of older XLA ("{1,0:(2,2)}") */
    char item = i == name ? 'T' : i - name == 1 ? p->s[name] : '\0';
    for (int32_t group_no = 0; i < close && p->s[i] == '('; group_no++) {
      int32_t group = i, end = group;
      /* the group's closing ')' (items may nest, P(...) holds a shape) */
      for (int64_t depth = 0; end < close; end++) {
        depth += p->s[end] == '(';
        depth -= p->s[end] == ')';
        if (depth == 0) break;
      }
      if (end >= close)
        return fail_at(p, line, "expected ')' closing the layout item '%s'",
                       layout_excerpt(p, close, name, ex, sizeof ex));
      bool first = group_no == 0;
      if (item == 'T' && first && !parse_first_tile(p, line, close, group + 1, end, out))
        return false;
      if ((item == 'L' || item == 'E' || item == 'S') && first &&
          !parse_layout_number(p, line, close, item, group + 1, end, out))
        return false;
      i = end + 1;
    }
  }
  return true;
}

/* Tries to parse an array shape at pos ("f32[2,3]{1,0}", "token[]", "pred[]"). Returns the
 * shape index, -1 on error (err set), or -2 when the text there is not an array shape. */
static int32_t parse_array_shape(parser *p) {
  int32_t len = match(p, p->re_array, p->pos, p->n);
  if (len < 0) return -2;
  mb_hlo_span ty = group(p, 1), dims = group(p, 2);
  mb_hlo_etype et = MB_HLO_INVALID;
  int bits = 0;
  for (int i = 0; i < N_ETYPES; i++) {
    if (span_is(p, ty, ETYPES[i].name)) {
      et = ETYPES[i].type;
      bits = ETYPES[i].bits;
      break;
    }
  }
  if (et == MB_HLO_INVALID) {
    char tn[40];
    FAIL(p,
         "expected an element type (pred, s4..s64, u4..u64, f16, bf16, f32, f64, f8e4m3fn, "
         "f8e5m2, c64, c128, token, ...), got '%s'",
         span_cstr(p, ty, tn, sizeof tn));
    return -1;
  }
  mb_hlo_shape s = {.etype = et, .dims = p->m->n_ints, .n_leaves = 1, .elements = 1};
  int32_t i = dims.off, end = dims.off + dims.len;
  while (dims.len > 0 && i < end) {
    while (i < end && (p->s[i] == ' ' || p->s[i] == ',' || p->s[i] == '<' || p->s[i] == '=')) i++;
    if (i < end && p->s[i] == '?') {
      FAIL(p, "expected a bounded dimension (like 4 or <=4), got '?' (unbounded dynamic)");
      return -1;
    }
    int64_t d;
    if (!parse_int_at(p, &i, end, &d)) {
      FAIL(p, "expected a dimension below 2^62 in the shape");
      return -1;
    }
    if (add_int(p, d) < 0) return -1;
    s.rank++;
    if (d != 0 && s.elements > MAX_VALUE / d) {
      FAIL(p, "expected a shape with fewer than 2^62 elements");
      return -1;
    }
    s.elements *= d;
  }
  /* data_bytes = ceil(elements * bits / 8) without overflowing */
  if (bits > 0 && s.elements / 8 > (MAX_VALUE - 128) / bits) {
    FAIL(p, "expected a shape below 2^62 bytes");
    return -1;
  }
  s.data_bytes = (s.elements / 8) * bits + ((s.elements % 8) * bits + 7) / 8;
  if (bits == 0) s.data_bytes = 0;
  advance(p, len);
  mb_hlo_layout layout;
  bool has_layout = layout_follows(p);
  if (has_layout && !parse_layout(p, s.rank, &layout)) return -1;
  if (has_layout) s.memory_space = layout.memory_space;
  if (!mb_hlo_array_bytes(et, p->m->ints + s.dims, s.rank, has_layout ? &layout : NULL, &s.bytes)) {
    FAIL(p, "expected a shape below 2^62 bytes as laid out");
    return -1;
  }
  return add_shape(p, &s);
}

static int32_t parse_shape(parser *p, int depth) {
  if (!skip_ws(p)) return -1;
  if (at(p, '(')) return parse_tuple_shape(p, depth);
  int32_t r = parse_array_shape(p);
  if (r != -2) return r;
  /* a bare "token" (no brackets) as some XLA versions print it */
  int32_t len = match(p, p->re_name, p->pos, p->n);
  if (len == 5 && !memcmp(p->s + p->pos, "token", 5)) {
    advance(p, len);
    mb_hlo_shape s = {.etype = MB_HLO_TOKEN, .n_leaves = 1, .dims = p->m->n_ints};
    return add_shape(p, &s);
  }
  char ex[32];
  FAIL(p, "expected a shape (like f32[2,3]{1,0} or (f32[], s32[4])), got '%s'",
       excerpt(p, p->pos, ex, sizeof ex));
  return -1;
}

int32_t mb_hlo_shape_leaf(const mb_hlo_module *m, int32_t shape, int32_t k) {
  for (int depth = 0; depth <= MAX_TUPLE_DEPTH + 1; depth++) {
    if (shape < 0 || shape >= m->n_shapes || k < 0) return -1;
    const mb_hlo_shape *s = &m->shapes[shape];
    if (s->etype != MB_HLO_TUPLE) return k == 0 ? shape : -1;
    int32_t next = -1;
    for (int32_t c = 0; c < s->n_tuple; c++) {
      int32_t e = (int32_t)m->ints[s->tuple + c];
      if (k < m->shapes[e].n_leaves) {
        next = e;
        break;
      }
      k -= m->shapes[e].n_leaves;
    }
    if (next < 0) return -1;
    shape = next;
  }
  return -1;
}

/* ---- attributes ---- */

static bool is_known_attribute(const parser *p, mb_hlo_span key) {
  for (int i = 0; i < N_KNOWN_ATTRIBUTES; i++)
    if (span_is(p, key, KNOWN_ATTRIBUTES[i])) return true;
  return false;
}

/* "{1, 2}" in the value span -> ints. */
static bool parse_int_list(parser *p, mb_hlo_span v, const char *key, mb_hlo_ints *out) {
  int32_t i = v.off, end = v.off + v.len;
  if (i >= end || p->s[i] != '{')
    return FAIL(p, "expected a list of integers like {0,1} after '%s='", key);
  i++;
  out->first = p->m->n_ints;
  out->n = 0;
  for (;;) {
    while (i < end && p->s[i] == ' ') i++;
    if (i < end && p->s[i] == '}' && out->n == 0) {
      i++;
      break;
    }
    int64_t x;
    if (!parse_int_at(p, &i, end, &x) || x < 0)
      return FAIL(p, "expected a list of integers like {0,1} after '%s='", key);
    if (add_int(p, x) < 0) return false;
    out->n++;
    while (i < end && p->s[i] == ' ') i++;
    if (i < end && p->s[i] == ',') {
      i++;
      continue;
    }
    if (i < end && p->s[i] == '}') {
      i++;
      break;
    }
    return FAIL(p, "expected a list of integers like {0,1} after '%s='", key);
  }
  if (i != end) return FAIL(p, "expected a list of integers like {0,1} after '%s='", key);
  return true;
}

static bool parse_int_value(parser *p, mb_hlo_span v, const char *key, int64_t *out) {
  int32_t i = v.off;
  if (!parse_int_at(p, &i, v.off + v.len, out) || i != v.off + v.len)
    return FAIL(p, "expected an integer below 2^62 after '%s='", key);
  return true;
}

/* window={size=3x3 stride=2x2 pad=0_1x0_1}: the size= field. */
static bool parse_window(parser *p, mb_hlo_span v, mb_hlo_ints *out) {
  int32_t end = v.off + v.len;
  out->first = p->m->n_ints;
  out->n = 0;
  for (int32_t i = v.off; i + 5 <= end; i++) {
    if ((p->s[i - 1] == '{' || p->s[i - 1] == ' ') && !memcmp(p->s + i, "size=", 5)) {
      i += 5;
      for (;;) {
        int64_t x;
        if (!parse_int_at(p, &i, end, &x) || x < 0)
          return FAIL(p, "expected window={size=AxB ...} with sizes >= 0");
        if (add_int(p, x) < 0) return false;
        out->n++;
        if (i < end && p->s[i] == 'x') {
          i++;
          continue;
        }
        break;
      }
      return true;
    }
  }
  return true; /* no size= : a window of no spatial dims */
}

/* Called computations: "%name" or "{%a, %b}". */
static bool parse_call_refs(parser *p, mb_hlo_span v, const char *key, mb_hlo_instr *ins) {
  int32_t i = v.off, end = v.off + v.len;
  bool list = i < end && p->s[i] == '{';
  if (list) i++;
  if (ins->n_called == 0) ins->called = p->m->n_refs;
  if (!strcmp(key, "select")) ins->select_call = ins->n_called;
  if (!strcmp(key, "condition")) ins->condition_call = ins->n_called;
  for (;;) {
    while (i < end && p->s[i] == ' ') i++;
    if (list && i < end && p->s[i] == '}') {
      i++;
      break;
    }
    int32_t len = match(p, p->re_name, i, end);
    if (len < 0) return FAIL(p, "expected a computation name after '%s='", key);
    /* refs of one instruction must be contiguous: only one call attribute per instruction
     * may add refs after other refs were added. */
    if (ins->called + ins->n_called != p->m->n_refs)
      return FAIL(p, "expected called computations of one instruction to be listed together");
    if (add_ref(p, -1, group(p, 1)) < 0) return false;
    ins->n_called++;
    i += len;
    if (!list) break;
    while (i < end && p->s[i] == ' ') i++;
    if (i < end && p->s[i] == ',') {
      i++;
      continue;
    }
    if (i < end && p->s[i] == '}') {
      i++;
      break;
    }
    return FAIL(p, "expected ',' or '}' in the list after '%s='", key);
  }
  if (i != end) return FAIL(p, "expected a computation name after '%s='", key);
  return true;
}

/* The header's input_output_alias={ {OUT}: (P, {IDX}, must-alias), ... } (alias true) or
 * buffer_donor={ (P, {IDX}), ... }: their entries appended to the module's donations, checked
 * for syntax only (mb_hlo_donation). */
static bool parse_donations(parser *p, mb_hlo_span v, bool alias) {
  const char *key = alias ? "input_output_alias" : "buffer_donor";
  const char *form = alias ? "{ {OUTPUT}: (PARAMETER, {INDEX}, must-alias|may-alias), ... }"
                           : "{ (PARAMETER, {INDEX}), ... }";
  int32_t i = v.off, end = v.off + v.len;
  char ex[32];
  if (i >= end || p->s[i] != '{') return FAIL(p, "expected %s=%s", key, form);
  i++;
  while (i < end && (p->s[i] == ' ' || p->s[i] == '\n' || p->s[i] == '\t' || p->s[i] == '\r')) i++;
  if (i + 1 == end && p->s[i] == '}') return true; /* none */
  for (;;) {
    int32_t len = match(p, alias ? p->re_alias : p->re_donor, i, end);
    if (len < 0) {
      while (i < end && p->s[i] == ' ') i++; /* the excerpt starts at the entry */
      return FAIL(p, "expected %s=%s, got '%s'", key, form, excerpt(p, i, ex, sizeof ex));
    }
    /* the match's groups, read before the helpers below parse them */
    mb_hlo_span output = alias ? group(p, 1) : (mb_hlo_span){0, 0};
    mb_hlo_span number = group(p, alias ? 2 : 1), index = group(p, alias ? 3 : 2);
    mb_hlo_span kind = alias ? group(p, 4) : (mb_hlo_span){0, 0};
    mb_hlo_donation d = {.line = p->line, .output_index = {.first = 0, .n = -1}};
    d.must_alias = span_is(p, kind, "must-alias");
    if (!parse_int_value(p, number, key, &d.parameter) ||
        !parse_int_list(p, index, key, &d.param_index) ||
        (alias && !parse_int_list(p, output, key, &d.output_index)))
      return false;
    mb_hlo_module *m = p->m;
    if (!mb_array_reserve((void **)&m->donations, &p->cap_donations, (int64_t)m->n_donations + 1,
                          sizeof *m->donations))
      return oom(p);
    m->donations[m->n_donations++] = d;
    i += len;
    if (i < end && p->s[i] == ',') {
      i++;
      continue;
    }
    if (i + 1 == end && p->s[i] == '}') return true;
    return FAIL(p, "expected ',' or '}' after an entry of %s=, got '%s'", key,
                excerpt(p, i, ex, sizeof ex));
  }
}

/* Interprets the attributes the importer needs; skips the rest. ins may be NULL (headers). */
static bool interpret_attribute(parser *p, mb_hlo_span key, mb_hlo_span v, mb_hlo_instr *ins) {
  char k[64];
  span_cstr(p, key, k, sizeof k);
  if (!is_known_attribute(p, key)) {
    if (p->m->n_unknown_attributes++ == 0) p->m->first_unknown_attribute = key;
    if (ins) ins->n_unknown_attributes++;
    return true;
  }
  if (!ins) {
    if (!strcmp(k, "is_scheduled")) p->m->is_scheduled = span_is(p, v, "true");
    if (!strcmp(k, "input_output_alias")) return parse_donations(p, v, true);
    if (!strcmp(k, "buffer_donor")) return parse_donations(p, v, false);
    return true;
  }
  for (int i = 0; i < N_CALL_ATTRIBUTES; i++)
    if (!strcmp(k, CALL_ATTRIBUTES[i])) return parse_call_refs(p, v, k, ins);
  if (!strcmp(k, "index")) return parse_int_value(p, v, k, &ins->index);
  if (!strcmp(k, "feature_group_count")) return parse_int_value(p, v, k, &ins->feature_group_count);
  if (!strcmp(k, "batch_group_count")) return parse_int_value(p, v, k, &ins->batch_group_count);
  if (!strcmp(k, "lhs_contracting_dims")) return parse_int_list(p, v, k, &ins->lhs_contracting);
  if (!strcmp(k, "rhs_contracting_dims")) return parse_int_list(p, v, k, &ins->rhs_contracting);
  if (!strcmp(k, "lhs_batch_dims")) return parse_int_list(p, v, k, &ins->lhs_batch);
  if (!strcmp(k, "rhs_batch_dims")) return parse_int_list(p, v, k, &ins->rhs_batch);
  if (!strcmp(k, "window")) return parse_window(p, v, &ins->window_size);
  if (!strcmp(k, "dim_labels")) {
    ins->dim_labels = v;
    return true;
  }
  if (!strcmp(k, "custom_call_target")) {
    ins->custom_call_target = v;
    return true;
  }
  if (!strcmp(k, "backend_config")) {
    ins->backend_config = v;
    return true;
  }
  return true;
}

/* ", key=value" repeated. */
static bool parse_attributes(parser *p, mb_hlo_instr *ins) {
  for (;;) {
    if (!skip_ws(p)) return false;
    if (!at(p, ',')) return true;
    advance(p, 1);
    if (!skip_ws(p)) return false;
    int32_t len = match(p, p->re_key, p->pos, p->n);
    if (len < 0) {
      char ex[32];
      return FAIL(p, "expected an attribute 'key=value' after ',', got '%s'",
                  excerpt(p, p->pos, ex, sizeof ex));
    }
    mb_hlo_span key = group(p, 1);
    advance(p, len);
    mb_hlo_span v;
    if (!scan_value(p, &v)) return false;
    if (v.len == 0) {
      char k[64];
      return FAIL(p, "expected a value after '%s='", span_cstr(p, key, k, sizeof k));
    }
    if (!interpret_attribute(p, key, v, ins)) return false;
  }
}

/* ---- instructions and computations ---- */

static bool parse_operands(parser *p, mb_hlo_instr *ins) {
  char nm[MB_ERROR_MAX / 4];
  span_cstr(p, ins->name, nm, sizeof nm);
  ins->operands = p->m->n_refs;
  if (!skip_ws(p)) return false;
  if (at(p, ')')) {
    advance(p, 1);
    return true;
  }
  for (;;) {
    if (!skip_ws(p)) return false;
    /* optional operand shape (PyTorch/XLA style "f32[2]{0} %x") */
    if (at(p, '(')) {
      if (parse_tuple_shape(p, 0) < 0) return false;
    } else {
      int32_t r = parse_array_shape(p);
      if (r == -1) return false;
    }
    if (!skip_ws(p)) return false;
    int32_t len = match(p, p->re_name, p->pos, p->n);
    if (len < 0) {
      char ex[32];
      return FAIL(p, "expected an operand name in the operands of '%s', got '%s'", nm,
                  excerpt(p, p->pos, ex, sizeof ex));
    }
    if (add_ref(p, -1, group(p, 1)) < 0) return false;
    ins->n_operands++;
    advance(p, len);
    if (!skip_ws(p)) return false;
    if (at(p, ',')) {
      advance(p, 1);
      continue;
    }
    if (at(p, ')')) {
      advance(p, 1);
      return true;
    }
    char ex[32];
    return FAIL(p, "expected ',' or ')' in the operands of '%s', got '%s'", nm,
                excerpt(p, p->pos, ex, sizeof ex));
  }
}

static bool parse_instruction(parser *p, int32_t comp) {
  mb_hlo_module *m = p->m;
  if (!mb_array_reserve((void **)&m->instrs, &p->cap_instrs, (int64_t)m->n_instrs + 1,
                        sizeof *m->instrs))
    return oom(p);
  mb_hlo_instr *ins = &m->instrs[m->n_instrs];
  memset(ins, 0, sizeof *ins);
  ins->index = -1;
  ins->select_call = ins->condition_call = -1;
  ins->feature_group_count = ins->batch_group_count = 1;
  ins->lhs_contracting.n = ins->rhs_contracting.n = ins->lhs_batch.n = ins->rhs_batch.n = -1;
  ins->window_size.n = -1;
  ins->computation = comp;
  ins->line = p->line;
  int32_t len = match(p, p->re_name, p->pos, p->n);
  if (len == 4 && !memcmp(p->s + p->pos, "ROOT", 4)) {
    ins->is_root = true;
    advance(p, len);
    if (!skip_ws(p)) return false;
    ins->line = p->line;
    len = match(p, p->re_name, p->pos, p->n);
  }
  if (len < 0) {
    char ex[32];
    return FAIL(p, "expected an instruction name or '}', got '%s'",
                excerpt(p, p->pos, ex, sizeof ex));
  }
  ins->name = group(p, 1);
  advance(p, len);
  char nm[MB_ERROR_MAX / 4];
  span_cstr(p, ins->name, nm, sizeof nm);
  if (!skip_ws(p)) return false;
  if (!at(p, '=')) return FAIL(p, "expected '=' after instruction name '%s'", nm);
  advance(p, 1);
  int32_t shape = parse_shape(p, 0);
  if (shape < 0) return false;
  ins->shape = shape;
  if (!skip_ws(p)) return false;
  len = match(p, p->re_opcode, p->pos, p->n);
  if (len < 0) {
    char ex[32];
    return FAIL(p, "expected an opcode after the shape of '%s', got '%s'", nm,
                excerpt(p, p->pos, ex, sizeof ex));
  }
  ins->opcode = group(p, 1);
  advance(p, len);
  if (!skip_ws(p)) return false;
  if (!at(p, '('))
    return FAIL(p, "expected '(' after opcode '%.*s' of '%s'", ins->opcode.len,
                p->s + ins->opcode.off, nm);
  if (span_is(p, ins->opcode, "constant")) {
    if (!skip_balanced(p)) return false; /* the literal, however large */
    ins->operands = m->n_refs;
  } else if (span_is(p, ins->opcode, "parameter")) {
    advance(p, 1);
    if (!skip_ws(p)) return false;
    int32_t i = p->pos;
    if (!parse_int_at(p, &i, p->n, &ins->index) || ins->index < 0)
      return FAIL(p, "expected a parameter number in 'parameter(N)' of '%s'", nm);
    advance(p, i - p->pos);
    if (!skip_ws(p)) return false;
    if (!at(p, ')')) return FAIL(p, "expected ')' after the parameter number of '%s'", nm);
    advance(p, 1);
    ins->operands = m->n_refs;
  } else {
    advance(p, 1);
    if (!parse_operands(p, ins)) return false;
  }
  if (!parse_attributes(p, ins)) return false;
  m->n_instrs++;
  return true;
}

/* ---- name tables (open addressing over spans) ---- */

static uint64_t hash_span(const char *s, int32_t len) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

typedef struct {
  int32_t *slots;
  uint32_t mask;
} name_table;

static bool table_init(name_table *t, int32_t n) {
  uint32_t cap = 16;
  while (cap < (uint32_t)n * 2u + 2u) cap *= 2;
  t->slots = malloc(cap * sizeof *t->slots);
  if (!t->slots) return false;
  memset(t->slots, 0xff, cap * sizeof *t->slots);
  t->mask = cap - 1;
  return true;
}

/* Finds `name`; when insert_value >= 0 and absent, inserts it. Returns the stored value or
 * -1. `name_of(i)` gives the span of stored value i. */
typedef mb_hlo_span (*span_of_fn)(const mb_hlo_module *m, int32_t i);
static mb_hlo_span instr_span(const mb_hlo_module *m, int32_t i) { return m->instrs[i].name; }
static mb_hlo_span comp_span(const mb_hlo_module *m, int32_t i) { return m->comps[i].name; }

static int32_t table_find(name_table *t, const mb_hlo_module *m, span_of_fn span_of,
                          mb_hlo_span name, int32_t insert_value) {
  uint32_t h = (uint32_t)hash_span(m->text + name.off, name.len) & t->mask;
  for (;;) {
    int32_t v = t->slots[h];
    if (v < 0) {
      if (insert_value >= 0) t->slots[h] = insert_value;
      return -1;
    }
    mb_hlo_span s = span_of(m, v);
    if (s.len == name.len && !memcmp(m->text + s.off, m->text + name.off, (size_t)name.len))
      return v;
    h = (h + 1) & t->mask;
  }
}

static bool resolve_operands(parser *p, int32_t c) {
  mb_hlo_module *m = p->m;
  mb_hlo_computation *comp = &m->comps[c];
  name_table t;
  if (!table_init(&t, comp->n_instrs)) return oom(p);
  bool ok = true;
  char a[MB_ERROR_MAX / 4], b[MB_ERROR_MAX / 4];
  for (int32_t i = comp->first_instr; ok && i < comp->first_instr + comp->n_instrs; i++) {
    int32_t prev = table_find(&t, m, instr_span, m->instrs[i].name, i);
    if (prev >= 0)
      ok = fail_at(p, m->instrs[i].line, "instruction '%s' is defined twice (first at line %d)",
                   span_cstr(p, m->instrs[i].name, a, sizeof a), m->instrs[prev].line);
  }
  for (int32_t i = comp->first_instr; ok && i < comp->first_instr + comp->n_instrs; i++) {
    mb_hlo_instr *ins = &m->instrs[i];
    for (int32_t k = 0; ok && k < ins->n_operands; k++) {
      int32_t r = ins->operands + k;
      int32_t v = table_find(&t, m, instr_span, p->ref_names[r], -1);
      if (v < 0) {
        ok = fail_at(p, ins->line, "operand '%s' of '%s' is not defined in computation '%s'",
                     span_cstr(p, p->ref_names[r], a, sizeof a),
                     span_cstr(p, ins->name, b, sizeof b),
                     span_cstr(p, comp->name, (char[64]){0}, 64));
      }
      m->refs[r] = v;
    }
  }
  free(t.slots);
  return ok;
}

static bool resolve_calls(parser *p) {
  mb_hlo_module *m = p->m;
  name_table t;
  if (!table_init(&t, m->n_comps)) return oom(p);
  bool ok = true;
  char a[MB_ERROR_MAX / 4], b[MB_ERROR_MAX / 4];
  for (int32_t c = 0; ok && c < m->n_comps; c++) {
    int32_t prev = table_find(&t, m, comp_span, m->comps[c].name, c);
    if (prev >= 0)
      ok = fail_at(p, m->comps[c].line, "computation '%s' is defined twice (first at line %d)",
                   span_cstr(p, m->comps[c].name, a, sizeof a), m->comps[prev].line);
  }
  for (int32_t i = 0; ok && i < m->n_instrs; i++) {
    mb_hlo_instr *ins = &m->instrs[i];
    for (int32_t k = 0; ok && k < ins->n_called; k++) {
      int32_t r = ins->called + k;
      int32_t v = table_find(&t, m, comp_span, p->ref_names[r], -1);
      if (v < 0)
        ok = fail_at(p, ins->line, "computation '%s' called by '%s' is not defined",
                     span_cstr(p, p->ref_names[r], a, sizeof a),
                     span_cstr(p, ins->name, b, sizeof b));
      m->refs[r] = v;
    }
  }
  free(t.slots);
  return ok;
}

static bool parse_computation(parser *p, int32_t *first_entry_line) {
  mb_hlo_module *m = p->m;
  if (!mb_array_reserve((void **)&m->comps, &p->cap_comps, (int64_t)m->n_comps + 1,
                        sizeof *m->comps))
    return oom(p);
  int32_t c = m->n_comps;
  mb_hlo_computation *comp = &m->comps[c];
  memset(comp, 0, sizeof *comp);
  comp->line = p->line;
  int32_t len = match(p, p->re_name, p->pos, p->n);
  if (len == 5 && !memcmp(p->s + p->pos, "ENTRY", 5)) {
    if (*first_entry_line > 0)
      return FAIL(p, "expected one ENTRY computation, found a second (first at line %d)",
                  *first_entry_line);
    *first_entry_line = p->line;
    comp->is_entry = true;
    m->entry = c;
    advance(p, len);
    if (!skip_ws(p)) return false;
    len = match(p, p->re_name, p->pos, p->n);
  }
  if (len < 0) {
    char ex[32];
    return FAIL(p, "expected a computation name or 'ENTRY', got '%s'",
                excerpt(p, p->pos, ex, sizeof ex));
  }
  comp->name = group(p, 1);
  advance(p, len);
  char nm[MB_ERROR_MAX / 4];
  span_cstr(p, comp->name, nm, sizeof nm);
  if (!skip_ws(p)) return false;
  if (at(p, '(')) { /* (p0: f32[2], ...) -> shape */
    advance(p, 1);
    if (!skip_ws(p)) return false;
    while (!at(p, ')')) {
      len = match(p, p->re_name, p->pos, p->n);
      if (len < 0) return FAIL(p, "expected a parameter name in the signature of '%s'", nm);
      advance(p, len);
      if (!skip_ws(p)) return false;
      if (!at(p, ':')) return FAIL(p, "expected ':' after a parameter name of '%s'", nm);
      advance(p, 1);
      if (parse_shape(p, 0) < 0) return false;
      if (!skip_ws(p)) return false;
      if (at(p, ',')) {
        advance(p, 1);
        if (!skip_ws(p)) return false;
      } else if (!at(p, ')')) {
        return FAIL(p, "expected ',' or ')' in the signature of '%s'", nm);
      }
    }
    advance(p, 1);
    if (!skip_ws(p)) return false;
    if (!(p->pos + 1 < p->n && p->s[p->pos] == '-' && p->s[p->pos + 1] == '>'))
      return FAIL(p, "expected '->' after the parameters of '%s'", nm);
    advance(p, 2);
    if (parse_shape(p, 0) < 0) return false;
    if (!skip_ws(p)) return false;
  }
  if (!at(p, '{')) return FAIL(p, "expected '{' opening computation '%s'", nm);
  int32_t open_line = p->line;
  advance(p, 1);
  m->comps[c].first_instr = m->n_instrs;
  m->n_comps++;
  int32_t root = -1;
  for (;;) {
    if (!skip_ws(p)) return false;
    if (p->pos >= p->n)
      return fail_at(p, p->line, "expected '}' closing computation '%s' opened at line %d", nm,
                     open_line);
    if (at(p, '}')) {
      advance(p, 1);
      break;
    }
    if (!parse_instruction(p, c)) return false;
    if (m->instrs[m->n_instrs - 1].is_root) {
      if (root >= 0)
        return fail_at(p, m->instrs[m->n_instrs - 1].line,
                       "expected one ROOT in computation '%s' (first at line %d)", nm,
                       m->instrs[root].line);
      root = m->n_instrs - 1;
    }
  }
  comp = &m->comps[c];
  comp->n_instrs = m->n_instrs - comp->first_instr;
  if (comp->n_instrs == 0)
    return fail_at(p, open_line, "expected at least one instruction in computation '%s'", nm);
  comp->root = root >= 0 ? root : m->n_instrs - 1; /* XLA: the last one when unmarked */
  if (!resolve_operands(p, c)) return false;
  return parse_attributes(p, NULL); /* e.g. ", execution_thread=\"host\"" */
}

static bool compile_all(parser *p) {
  static const struct {
    const char *pattern;
    size_t offset;
  } PATTERNS[] = {
      {"%?([A-Za-z_][A-Za-z0-9_.\\-]*)", offsetof(parser, re_name)},
      /* element type and dims: f32[2,<=3] ; layouts are skipped as balanced braces */
      {"([a-z][a-z0-9]*)\\[\\s*((?:(?:<=)?[0-9]+|\\?)(?:\\s*,\\s*(?:(?:<=)?[0-9]+|\\?))*)?\\s*\\]",
       offsetof(parser, re_array)},
      {"([A-Za-z_][A-Za-z0-9_.\\-]*)=", offsetof(parser, re_key)},
      {"([a-z][a-z0-9\\-]*)", offsetof(parser, re_opcode)},
      /* {OUTPUT}: (PARAMETER, {INDEX}, KIND) with an optional kind; shape indices checked by
       * parse_int_list */
      {"\\s*(\\{[0-9,\\s]*\\})\\s*:\\s*\\(\\s*([0-9]+)\\s*,\\s*(\\{[0-9,\\s]*\\})\\s*"
       "(?:,\\s*(must-alias|may-alias)\\s*)?\\)\\s*",
       offsetof(parser, re_alias)},
      /* (PARAMETER, {INDEX}) */
      {"\\s*\\(\\s*([0-9]+)\\s*,\\s*(\\{[0-9,\\s]*\\})\\s*\\)\\s*", offsetof(parser, re_donor)},
  };
  for (size_t i = 0; i < sizeof PATTERNS / sizeof PATTERNS[0]; i++) {
    int errcode;
    PCRE2_SIZE erroff;
    /* Anchored, and without start-of-match optimisations (which may scan ahead for a
     * required character): every match costs only what it consumes, so lexing is linear. */
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)PATTERNS[i].pattern, PCRE2_ZERO_TERMINATED,
                      PCRE2_ANCHORED | PCRE2_NO_START_OPTIMIZE, &errcode, &erroff, NULL);
    if (!re) {
      PCRE2_UCHAR buf[256];
      pcre2_get_error_message(errcode, buf, sizeof buf);
      return mb_fail(p->err, "%s: internal error compiling pattern %zu: %s", p->path, i,
                     (const char *)buf);
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* optional: interpreted when unavailable */
    *(pcre2_code **)((char *)p + PATTERNS[i].offset) = re;
  }
  p->md = pcre2_match_data_create(8, NULL);
  return p->md ? true : oom(p);
}

void mb_hlo_module_free(mb_hlo_module *m) {
  if (!m) return;
  free(m->comps);
  free(m->instrs);
  free(m->shapes);
  free(m->ints);
  free(m->refs);
  free(m->donations);
  free(m);
}

mb_hlo_module *mb_hlo_parse(const char *text, size_t len, const char *path, mb_error *err) {
  if (!path) path = "<hlo>";
  if (len >= MAX_TEXT) {
    mb_fail(err, "%s: expected HLO text below 1 GiB, got %zu bytes", path, len);
    return NULL;
  }
  if (!mb_text_check_no_nul(text, len, path, err)) return NULL;
  parser p = {.s = text, .n = (int32_t)len, .line = 1, .path = path, .err = err};
  p.m = calloc(1, sizeof *p.m);
  if (!p.m) {
    oom(&p);
    return NULL;
  }
  mb_hlo_module *m = p.m;
  m->text = text;
  m->path = path;
  m->entry = -1;
  bool ok = compile_all(&p) && skip_ws(&p);
  if (ok) {
    int32_t len_kw = match(&p, p.re_name, p.pos, p.n);
    if (len_kw != 9 || memcmp(p.s + p.pos, "HloModule", 9))
      ok = FAIL(&p, "expected 'HloModule' at the start of the module");
    else {
      advance(&p, len_kw);
      ok = skip_ws(&p);
      int32_t ln = ok ? match(&p, p.re_name, p.pos, p.n) : -1;
      if (ok && ln < 0) ok = FAIL(&p, "expected a module name after 'HloModule'");
      if (ok) {
        m->name = group(&p, 1);
        advance(&p, ln);
        ok = parse_attributes(&p, NULL);
      }
    }
  }
  int32_t entry_line = 0;
  while (ok) {
    ok = skip_ws(&p);
    if (!ok || p.pos >= p.n) break;
    ok = parse_computation(&p, &entry_line);
  }
  if (ok && m->n_comps == 0) ok = FAIL(&p, "expected at least one computation after the header");
  if (ok && m->entry < 0) m->entry = m->n_comps - 1; /* XLA: the last one when unmarked */
  if (ok) ok = resolve_calls(&p);
  pcre2_code_free(p.re_name);
  pcre2_code_free(p.re_array);
  pcre2_code_free(p.re_key);
  pcre2_code_free(p.re_opcode);
  pcre2_code_free(p.re_alias);
  pcre2_code_free(p.re_donor);
  pcre2_match_data_free(p.md);
  free(p.ref_names);
  free(p.stack);
  if (!ok) {
    mb_hlo_module_free(m);
    return NULL;
  }
  return m;
}

char *mb_hlo_span_str(const mb_hlo_module *m, mb_hlo_span s, char *out, size_t n) {
  if (n == 0) return out;
  size_t k = s.len > 0 ? (size_t)s.len : 0;
  if (k > n - 1) k = n - 1;
  if (k) memcpy(out, m->text + s.off, k);
  out[k] = '\0';
  return out;
}

bool mb_hlo_span_eq(const mb_hlo_module *m, mb_hlo_span s, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)s.len == n && !memcmp(m->text + s.off, lit, n);
}
