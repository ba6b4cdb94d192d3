/* Model spec files (datasets/models/NAME.spec): the small text files the model zoo generates
 * workloads from. Format (documented in datasets/models/README.md):
 *
 *   # comment
 *   family = bert             # key = value, one per line; '#' starts a comment
 *   layers = 12
 *   dtype  = bf16
 *   reference = "Jiao et al. 2020, Table 1"   # quoted strings may contain '#'
 *
 * Every key is checked: unknown keys, keys the family does not use, duplicates, bad numbers,
 * missing required keys and unknown families or enum values are errors naming
 * "file:line: key 'k': ...". `reference_gflops` (published forward FLOPs per sample,
 * FLOPs = 2 x multiply-accumulates) and `reference` (its source) are not used by the
 * generator; the tests compare the generated FLOPs against them. */
#ifndef MB_MODEL_SPEC_H
#define MB_MODEL_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "model_layers.h"
#include "workload.h"

typedef enum mb_model_family {
  MB_FAMILY_MLP,
  MB_FAMILY_BERT,
  MB_FAMILY_GPT2,
  MB_FAMILY_T5,
  MB_FAMILY_VIT,
  MB_FAMILY_LLAMA,
  MB_FAMILY_RESNET,
  MB_FAMILY_ALEXNET,
  MB_FAMILY_MOBILENETV2,
  MB_FAMILY_EFFICIENTNET,
  MB_FAMILY_UNET,
  MB_FAMILY_LSTM,
  MB_FAMILY_DLRM,
  MB_FAMILY_GCN,
  MB_FAMILY_GRAPHSAGE,
  MB_FAMILY_COUNT
} mb_model_family;

const char *mb_model_family_name(mb_model_family f);

#define MB_SPEC_LIST_MAX 64
#define MB_SPEC_TEXT_MAX 512

typedef struct mb_model_spec {
  char path[MB_SPEC_TEXT_MAX];
  char name[MB_NAME_MAX]; /* `name`, else the file name without directory and .spec (cut to
                           * MB_NAME_MAX - 1 bytes; "model" when nothing is left) */
  mb_model_family family;
  bool training; /* mode = training | inference */
  mb_dtype dtype, opt_dtype;
  /* Sizes; a key the family does not use stays 0. */
  int64_t batch, seq, tgt_seq, layers, dec_layers, hidden, heads, kv_heads, ffn, vocab;
  int64_t image, patch, channels, classes, depth, width, levels;
  int64_t features, nodes, edges, embed_dim;
  int32_t n_table_rows, n_bottom_mlp, n_top_mlp;
  int64_t table_rows[MB_SPEC_LIST_MAX], bottom_mlp[MB_SPEC_LIST_MAX], top_mlp[MB_SPEC_LIST_MAX];
  /* Not used by the generator: the published figure the tests compare against. */
  bool has_reference;
  double reference_gflops; /* forward GFLOPs per sample (image, sequence, graph, ...) */
  char reference[MB_SPEC_TEXT_MAX];
} mb_model_spec;

/* Parses a spec from text (len bytes, need not be NUL-terminated); `path` names it in errors
 * and gives the default name. */
bool mb_model_spec_parse(const char *text, size_t len, const char *path, mb_model_spec *out,
                         mb_error *err);
bool mb_model_spec_load(const char *path, mb_model_spec *out, mb_error *err);

/* Builds the workload of a parsed spec (suite/model_zoo.c). A spec the parser accepts is
 * generated (the parser refuses, naming file:line:key, what the layers would refuse). */
mb_workload *mb_model_generate_spec(const mb_model_spec *spec, mb_error *err);

/* The smallest `image` whose every convolution and pooling window fits, worked out from the
 * family's layers with mb_window_out (suite/model_zoo.c): the parser's check of `image`. 1
 * for the families whose windows are all padded to k / 2 ("same"); ViT and U-Net have their
 * own rules (patch divides image; image divisible by 2^levels). */
int64_t mb_model_min_image(mb_model_family f);

#endif
