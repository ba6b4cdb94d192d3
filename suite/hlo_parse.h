/* XLA HLO text parser: turns an `--xla_dump_hlo_as_text` module into a syntax tree of
 * computations and instructions, without interpreting it (suite/hlo_import.c does that).
 *
 * Why a separate parser: the importer's rules (buffers, aliasing, fusion, FLOPs) are easier to
 * read and test when they work on resolved structs rather than on text, and the parser can be
 * fuzzed on its own. The grammar follows XLA's hlo_parser: a `HloModule name, attrs` header,
 * then computations `[ENTRY] [%]name [(params) -> shape] { instructions }`, each instruction
 * `[ROOT] [%]name = shape opcode(operands), key=value, ...`. Operands may carry their shape
 * (`f32[2]{0} %x`, PyTorch/XLA style) or not; `/ * ... * /` comments are skipped; constants
 * and attribute values are skipped as balanced text ({...}, (...), [...], "strings" with
 * escapes), so large literals cost one linear scan.
 *
 * Lexing uses anchored PCRE2 patterns compiled once per parse (no start-of-match scans, so the
 * whole parse is linear in the text). The tree refers to the text through spans: the caller
 * keeps the text alive while the module is used. Every error names "file:line: expected ...". */
#ifndef MB_HLO_PARSE_H
#define MB_HLO_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* A slice of the source text. */
typedef struct mb_hlo_span {
  int32_t off, len;
} mb_hlo_span;

typedef enum mb_hlo_etype {
  MB_HLO_INVALID = 0,
  MB_HLO_PRED,
  MB_HLO_S2,
  MB_HLO_S4,
  MB_HLO_S8,
  MB_HLO_S16,
  MB_HLO_S32,
  MB_HLO_S64,
  MB_HLO_U2,
  MB_HLO_U4,
  MB_HLO_U8,
  MB_HLO_U16,
  MB_HLO_U32,
  MB_HLO_U64,
  MB_HLO_F4E2M1FN,
  MB_HLO_F6E2M3FN,
  MB_HLO_F6E3M2FN,
  MB_HLO_F8E3M4,
  MB_HLO_F8E4M3,
  MB_HLO_F8E4M3FN,
  MB_HLO_F8E4M3B11FNUZ,
  MB_HLO_F8E4M3FNUZ,
  MB_HLO_F8E5M2,
  MB_HLO_F8E5M2FNUZ,
  MB_HLO_F8E8M0FNU,
  MB_HLO_F16,
  MB_HLO_BF16,
  MB_HLO_F32,
  MB_HLO_F64,
  MB_HLO_C64,
  MB_HLO_C128,
  MB_HLO_TOKEN,  /* no data: defines no buffer */
  MB_HLO_OPAQUE, /* opaque handle: no data */
  MB_HLO_TUPLE,  /* not an element type: marks a tuple shape */
} mb_hlo_etype;

/* Bits per element (pred is stored in one byte as XLA does); 0 for token, opaque, tuple. */
int mb_hlo_etype_bits(mb_hlo_etype t);

/* The most dimensions an array layout may list (XLA's shapes have far fewer). */
#define MB_HLO_MAX_LAYOUT_RANK 64

/* The parts of an array's layout ("{1,0:T(8,128)(2,1)L(4)E(4)S(1)}") that decide how many bytes
 * XLA allocates for it, and the memory space XLA put it in; the other parts (index types, split
 * configs, ...) are read and skipped. */
typedef struct mb_hlo_layout {
  int32_t rank;                                   /* entries of minor_to_major (0: "{}") */
  int64_t minor_to_major[MB_HLO_MAX_LAYOUT_RANK]; /* a permutation of 0..rank-1 */
  int32_t tile_rank;                              /* dims of the first tile; 0: not tiled */
  int64_t tile[MB_HLO_MAX_LAYOUT_RANK];           /* the first tile, major to minor; 1 for '*' */
  int64_t tail_alignment;                         /* L(n): elements rounded up to n; 1 absent */
  int32_t element_bits;                           /* E(n): bits per element; 0 absent */
  int32_t memory_space;                           /* S(n): 0 absent (the default memory) */
} mb_hlo_layout;

/* The bytes XLA allocates for an array of `rank` dims of type t under `layout` (NULL: none),
 * following its ShapeUtil::ArraySize: with a tile, each of the minor-most dims (in
 * minor_to_major order; dims beyond the rank count as 1) is padded up to a multiple of the first
 * tile's matching dim (later tiles, such as bf16's (2,1), subdivide a tile without padding), then
 * the element count up to a multiple of L(n). Each element takes E(n) bits when given, else
 * whole bytes (s4 and pred take one). False when the size reaches 2^62 bytes. */
bool mb_hlo_array_bytes(mb_hlo_etype t, const int64_t *dims, int32_t rank,
                        const mb_hlo_layout *layout, int64_t *bytes);

/* A shape: an array (etype, dims) or a tuple of shapes. An array's bytes are what XLA allocates
 * for it under its layout (mb_hlo_array_bytes); data_bytes is what its elements' own bits need. */
typedef struct mb_hlo_shape {
  mb_hlo_etype etype;
  int32_t rank;         /* arrays: number of dims */
  int32_t dims;         /* arrays: index of the first dim in module->ints */
  int32_t n_tuple;      /* tuples: number of elements */
  int32_t tuple;        /* tuples: index of the first element's shape id in module->ints */
  int32_t n_leaves;     /* non-tuple leaves (arrays, tokens) in this shape tree */
  int64_t elements;     /* arrays: product of dims */
  int64_t bytes;        /* arrays: as allocated (layout padding included); tuples: sum of leaves */
  int64_t data_bytes;   /* arrays: ceil(elements * bits / 8); tuples: sum of leaves */
  int32_t memory_space; /* arrays: the layout's S(n), XLA's own placement (0: default) */
} mb_hlo_shape;

/* A list of integers stored in module->ints. */
typedef struct mb_hlo_ints {
  int32_t first, n; /* n < 0: attribute absent */
} mb_hlo_ints;

typedef struct mb_hlo_instr {
  mb_hlo_span name; /* without the leading '%' */
  mb_hlo_span opcode;
  int32_t line;
  int32_t shape; /* index into module->shapes */
  bool is_root;
  int32_t computation;          /* index of the enclosing computation */
  int32_t operands, n_operands; /* module->refs[operands + k] = module-wide instruction index */
  int32_t called, n_called;     /* module->refs[called + k] = computation index
                                   (to_apply, calls, body, condition, branches, ...) */
  int32_t select_call;          /* select-and-scatter: k of its select= computation; -1 absent */
  int32_t condition_call;       /* while: k of its condition= computation; -1 absent */
  int64_t index;                /* parameter number or get-tuple-element index=; -1 absent */
  int64_t feature_group_count;  /* 1 when absent */
  int64_t batch_group_count;    /* 1 when absent */
  mb_hlo_ints lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
  mb_hlo_ints window_size;        /* window={size=AxB ...} */
  mb_hlo_span dim_labels;         /* e.g. b01f_01io->b01f; len 0 when absent */
  mb_hlo_span custom_call_target; /* as written, with its quotes; len 0 when absent */
  mb_hlo_span backend_config;     /* as written ({...} or "..."); len 0 when absent */
  int32_t n_unknown_attributes;   /* attributes this parser does not know (skipped) */
} mb_hlo_instr;

typedef struct mb_hlo_computation {
  mb_hlo_span name;
  int32_t line;
  bool is_entry;
  int32_t first_instr, n_instrs; /* module->instrs[first_instr .. + n_instrs) in text order */
  int32_t root;                  /* module-wide index of the ROOT (the last one when unmarked) */
} mb_hlo_computation;

/* An array of an entry parameter whose buffer the module lets an output be written into (XLA's
 * buffer donation), from the header's `input_output_alias={ {OUT}: (P, {IDX}, must-alias), ... }`
 * (output OUT, a shape index of the result; the kind may be absent, as in older dumps) or
 * `buffer_donor={ (P, {IDX}), ... }` (any output of its size). Shape indices are as written:
 * the importer checks them against the entry computation. */
typedef struct mb_hlo_donation {
  int64_t parameter;        /* the entry parameter's number */
  mb_hlo_ints param_index;  /* its shape index ({}: n 0, the whole parameter) */
  mb_hlo_ints output_index; /* the result's shape index; n < 0: a buffer donor (any output) */
  bool must_alias;          /* `must-alias`; false for `may-alias`, no kind and buffer donors */
  int32_t line;             /* of the header attribute, for messages */
} mb_hlo_donation;

typedef struct mb_hlo_module {
  const char *text; /* not owned */
  const char *path; /* not owned; names the file in messages */
  mb_hlo_span name;
  bool is_scheduled;
  int32_t entry; /* computation index */
  mb_hlo_computation *comps;
  int32_t n_comps;
  mb_hlo_instr *instrs;
  int32_t n_instrs;
  mb_hlo_shape *shapes;
  int32_t n_shapes;
  int64_t *ints;
  int32_t n_ints;
  int32_t *refs;
  int32_t n_refs;
  mb_hlo_donation *donations; /* input_output_alias entries, then buffer_donor entries */
  int32_t n_donations;
  int32_t n_unknown_attributes; /* over all instructions and headers */
  mb_hlo_span first_unknown_attribute;
} mb_hlo_module;

/* Parses `len` bytes of HLO text (need not be NUL-terminated). `path` names the file in
 * messages ("path:line: expected ..."). NULL with err set on malformed text. */
mb_hlo_module *mb_hlo_parse(const char *text, size_t len, const char *path, mb_error *err);
void mb_hlo_module_free(mb_hlo_module *m);

/* Copies a span into out (size n, NUL-terminated, truncated to fit); returns out. */
char *mb_hlo_span_str(const mb_hlo_module *m, mb_hlo_span s, char *out, size_t n);
bool mb_hlo_span_eq(const mb_hlo_module *m, mb_hlo_span s, const char *lit);

/* Flattened leaf k (0-based, depth-first) of a shape tree: its shape index, or -1. */
int32_t mb_hlo_shape_leaf(const mb_hlo_module *m, int32_t shape, int32_t k);

#endif
