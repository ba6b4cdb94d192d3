/* Model zoo: one builder per family, each a sequence of calls into the layer library
 * (model_layers.h) following the published architecture. Simplifications (no dropout, no
 * T5 relative position bias, unfused ops) are listed in datasets/models/README.md. */
#include "model_zoo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_layers.h"
#include "model_spec.h"
#include "paths.h"

#define NT MB_NO_TENSOR

/* ---- shared pieces ---- */

/* A feed-forward stack: `layers` hidden layers of `hidden` units with ReLU, then a head. */
static void build_mlp(mb_net *n, const mb_model_spec *s) {
  int64_t B = s->batch, in = s->features;
  mb_tensor x = mb_net_input(n, "x", B * in, mb_net_dtype(n));
  for (int64_t l = 0; l < s->layers; l++) {
    mb_net_scope_push(n, "l%lld", (long long)l);
    x = mb_l_act(n, "relu", mb_l_linear(n, "fc", x, B, in, s->hidden, true), MB_ACT_RELU);
    mb_net_scope_pop(n);
    in = s->hidden;
  }
  mb_l_head(n, mb_l_linear(n, "head", x, B, in, s->classes, true), B, s->classes);
}

typedef struct block_cfg {
  int64_t batch, len, d, heads, kv_heads, ffn;
  mb_norm norm;
  mb_act act;
  bool pre_norm, causal, bias, gated;
  mb_tensor rope;
} block_cfg;

/* One transformer block. Pre-norm (GPT-2, ViT, LLaMA, T5): x + f(norm(x)); post-norm (BERT):
 * norm(x + f(x)). `mem` adds a cross-attention sub-layer (T5 decoder) over mem_len tokens. */
static mb_tensor transformer_block(mb_net *n, mb_tensor x, const block_cfg *c, mb_tensor mem,
                                   int64_t mem_len) {
  int64_t T = c->batch * c->len;
  mb_attn_cfg a = {.batch = c->batch,
                   .q_len = c->len,
                   .kv_len = c->len,
                   .d_model = c->d,
                   .heads = c->heads,
                   .kv_heads = c->kv_heads,
                   .head_dim = c->d / c->heads,
                   .causal = c->causal,
                   .bias = c->bias,
                   .rope_table = c->rope};
  if (c->pre_norm) {
    mb_tensor h = mb_l_norm(n, "attn_norm", x, T, c->d, c->norm);
    x = mb_l_add(n, "attn_residual", x, mb_l_attention(n, "attn", h, NT, &a));
    if (mem != NT) {
      mb_attn_cfg ca = a;
      ca.kv_len = mem_len;
      ca.causal = false;
      ca.rope_table = NT;
      h = mb_l_norm(n, "cross_norm", x, T, c->d, c->norm);
      x = mb_l_add(n, "cross_residual", x, mb_l_attention(n, "cross_attn", h, mem, &ca));
    }
    h = mb_l_norm(n, "mlp_norm", x, T, c->d, c->norm);
    return mb_l_add(n, "mlp_residual", x,
                    mb_l_mlp(n, "mlp", h, T, c->d, c->ffn, c->act, c->gated, c->bias));
  }
  x = mb_l_add(n, "attn_residual", x, mb_l_attention(n, "attn", x, NT, &a));
  x = mb_l_norm(n, "attn_norm", x, T, c->d, c->norm);
  x = mb_l_add(n, "mlp_residual", x,
               mb_l_mlp(n, "mlp", x, T, c->d, c->ffn, c->act, c->gated, c->bias));
  return mb_l_norm(n, "mlp_norm", x, T, c->d, c->norm);
}

static mb_tensor stack(mb_net *n, const char *prefix, mb_tensor x, int64_t layers,
                       const block_cfg *c, mb_tensor mem, int64_t mem_len) {
  for (int64_t l = 0; l < layers; l++) {
    mb_net_scope_push(n, "%s%lld", prefix, (long long)l);
    x = transformer_block(n, x, c, mem, mem_len);
    mb_net_scope_pop(n);
  }
  return x;
}

/* ---- transformers ---- */

static void build_bert(mb_net *n, const mb_model_spec *s) {
  int64_t B = s->batch, S = s->seq, d = s->hidden, T = B * S;
  mb_tensor ids = mb_net_input(n, "token_ids", T, MB_DTYPE_S32);
  mb_tensor types = mb_net_input(n, "segment_ids", T, MB_DTYPE_S32);
  mb_net_scope_push(n, "embed");
  mb_tensor x = mb_l_embedding(n, "word", ids, mb_net_weight(n, "word_table", s->vocab * d), T, d);
  mb_tensor t = mb_l_embedding(n, "segment", types, mb_net_weight(n, "segment_table", 2 * d), T, d);
  x = mb_l_add(n, "add_segment", x, t);
  x = mb_l_add(n, "add_position", x, mb_net_weight(n, "position_table", S * d));
  x = mb_l_norm(n, "norm", x, T, d, MB_NORM_LAYER);
  mb_net_scope_pop(n);
  block_cfg c = {.batch = B,
                 .len = S,
                 .d = d,
                 .heads = s->heads,
                 .kv_heads = s->heads,
                 .ffn = s->ffn,
                 .norm = MB_NORM_LAYER,
                 .act = MB_ACT_GELU,
                 .pre_norm = false,
                 .causal = false,
                 .bias = true,
                 .gated = false,
                 .rope = NT};
  x = stack(n, "l", x, s->layers, &c, NT, 0);
  /* sequence classification: pooler on [CLS], then a classifier */
  mb_net_scope_push(n, "pooler");
  mb_tensor cls = mb_l_slice(n, "cls", x, B * d);
  mb_tensor p = mb_l_act(n, "tanh", mb_l_linear(n, "dense", cls, B, d, d, true), MB_ACT_TANH);
  mb_net_scope_pop(n);
  mb_l_head(n, mb_l_linear(n, "classifier", p, B, d, s->classes, true), B, s->classes);
}

static void build_gpt2(mb_net *n, const mb_model_spec *s) {
  int64_t B = s->batch, S = s->seq, d = s->hidden, T = B * S;
  mb_tensor ids = mb_net_input(n, "token_ids", T, MB_DTYPE_S32);
  mb_net_scope_push(n, "embed");
  mb_tensor wte = mb_net_weight(n, "word_table", s->vocab * d);
  mb_tensor x = mb_l_embedding(n, "word", ids, wte, T, d);
  x = mb_l_add(n, "add_position", x, mb_net_weight(n, "position_table", S * d));
  mb_net_scope_pop(n);
  block_cfg c = {.batch = B,
                 .len = S,
                 .d = d,
                 .heads = s->heads,
                 .kv_heads = s->heads,
                 .ffn = s->ffn,
                 .norm = MB_NORM_LAYER,
                 .act = MB_ACT_GELU,
                 .pre_norm = true,
                 .causal = true,
                 .bias = true,
                 .gated = false,
                 .rope = NT};
  x = stack(n, "l", x, s->layers, &c, NT, 0);
  x = mb_l_norm(n, "final_norm", x, T, d, MB_NORM_LAYER);
  /* the language-model head is tied to the word embedding */
  mb_l_head(n, mb_l_linear_w(n, "lm_head", x, wte, T, d, s->vocab), T, s->vocab);
}

static void build_llama(mb_net *n, const mb_model_spec *s) {
  int64_t B = s->batch, S = s->seq, d = s->hidden, T = B * S;
  mb_tensor ids = mb_net_input(n, "token_ids", T, MB_DTYPE_S32);
  /* cos and sin for every position and pair of dimensions */
  mb_tensor rope = mb_net_input(n, "rope_table", S * (d / s->heads), mb_net_dtype(n));
  mb_tensor x =
      mb_l_embedding(n, "embed", ids, mb_net_weight(n, "embed_table", s->vocab * d), T, d);
  block_cfg c = {.batch = B,
                 .len = S,
                 .d = d,
                 .heads = s->heads,
                 .kv_heads = s->kv_heads,
                 .ffn = s->ffn,
                 .norm = MB_NORM_RMS,
                 .act = MB_ACT_SILU,
                 .pre_norm = true,
                 .causal = true,
                 .bias = false,
                 .gated = true,
                 .rope = rope};
  x = stack(n, "l", x, s->layers, &c, NT, 0);
  x = mb_l_norm(n, "final_norm", x, T, d, MB_NORM_RMS);
  mb_l_head(n, mb_l_linear(n, "lm_head", x, T, d, s->vocab, false), T, s->vocab);
}

static void build_t5(mb_net *n, const mb_model_spec *s) {
  int64_t B = s->batch, S = s->seq, St = s->tgt_seq, d = s->hidden;
  mb_tensor src = mb_net_input(n, "source_ids", B * S, MB_DTYPE_S32);
  mb_tensor tgt = mb_net_input(n, "target_ids", B * St, MB_DTYPE_S32);
  mb_tensor shared = mb_net_weight(n, "shared_table", s->vocab * d);
  block_cfg c = {.batch = B,
                 .len = S,
                 .d = d,
                 .heads = s->heads,
                 .kv_heads = s->heads,
                 .ffn = s->ffn,
                 .norm = MB_NORM_RMS,
                 .act = MB_ACT_RELU,
                 .pre_norm = true,
                 .causal = false,
                 .bias = false,
                 .gated = false,
                 .rope = NT};
  mb_net_scope_push(n, "encoder");
  mb_tensor e = mb_l_embedding(n, "embed", src, shared, B * S, d);
  e = stack(n, "l", e, s->layers, &c, NT, 0);
  e = mb_l_norm(n, "final_norm", e, B * S, d, MB_NORM_RMS);
  mb_net_scope_pop(n);
  mb_net_scope_push(n, "decoder");
  mb_tensor y = mb_l_embedding(n, "embed", tgt, shared, B * St, d);
  c.len = St;
  c.causal = true;
  y = stack(n, "l", y, s->dec_layers, &c, e, S);
  y = mb_l_norm(n, "final_norm", y, B * St, d, MB_NORM_RMS);
  mb_net_scope_pop(n);
  mb_l_head(n, mb_l_linear_w(n, "lm_head", y, shared, B * St, d, s->vocab), B * St, s->vocab);
}

static void build_vit(mb_net *n, const mb_model_spec *s) {
  int64_t B = s->batch, d = s->hidden, side = s->image / s->patch, np = side * side;
  int64_t len = np + 1, T = B * len;
  mb_tensor img = mb_net_input(n, "image", B * s->image * s->image * s->channels, mb_net_dtype(n));
  mb_net_scope_push(n, "embed");
  mb_conv_cfg pc = {.batch = B,
                    .cin = s->channels,
                    .h = s->image,
                    .w = s->image,
                    .cout = d,
                    .kh = s->patch,
                    .kw = s->patch,
                    .stride = s->patch,
                    .pad = 0,
                    .groups = 1,
                    .bias = true};
  mb_tensor x = mb_l_conv2d(n, "patches", img, &pc, NULL, NULL);
  x = mb_l_gather2(n, "prepend_cls", x, mb_net_weight(n, "cls_token", d), T * d);
  x = mb_l_add(n, "add_position", x, mb_net_weight(n, "position_table", len * d));
  mb_net_scope_pop(n);
  block_cfg c = {.batch = B,
                 .len = len,
                 .d = d,
                 .heads = s->heads,
                 .kv_heads = s->heads,
                 .ffn = s->ffn,
                 .norm = MB_NORM_LAYER,
                 .act = MB_ACT_GELU,
                 .pre_norm = true,
                 .causal = false,
                 .bias = true,
                 .gated = false,
                 .rope = NT};
  x = stack(n, "l", x, s->layers, &c, NT, 0);
  x = mb_l_norm(n, "final_norm", x, T, d, MB_NORM_LAYER);
  mb_tensor cls = mb_l_slice(n, "cls", x, B * d);
  mb_l_head(n, mb_l_linear(n, "head", cls, B, d, s->classes, true), B, s->classes);
}

/* ---- convolutional networks (NHWC) ---- */

typedef struct fmap {
  mb_tensor t;
  int64_t batch, h, w, c;
} fmap;

/* Convolution, optional batch norm, optional activation (act < 0: none). */
static fmap conv_block(mb_net *n, const char *name, fmap x, int64_t cout, int64_t k, int64_t stride,
                       int64_t groups, bool bn, int act) {
  mb_net_scope_push(n, "%s", name);
  mb_conv_cfg c = {.batch = x.batch,
                   .cin = x.c,
                   .h = x.h,
                   .w = x.w,
                   .cout = cout,
                   .kh = k,
                   .kw = k,
                   .stride = stride,
                   .pad = k / 2,
                   .groups = groups,
                   .bias = !bn};
  fmap y = {NT, x.batch, 0, 0, cout};
  y.t = mb_l_conv2d(n, "conv", x.t, &c, &y.h, &y.w);
  if (bn) y.t = mb_l_norm(n, "bn", y.t, y.batch * y.h * y.w, cout, MB_NORM_BATCH);
  if (act >= 0) y.t = mb_l_act(n, "act", y.t, (mb_act)act);
  mb_net_scope_pop(n);
  return y;
}

static fmap image_input(mb_net *n, const mb_model_spec *s) {
  fmap x = {NT, s->batch, s->image, s->image, s->channels};
  x.t = mb_net_input(n, "image", x.batch * x.h * x.w * x.c, mb_net_dtype(n));
  return x;
}

/* Global average pooling, then a fully connected classifier. */
static void pool_classify(mb_net *n, fmap x, int64_t classes) {
  mb_tensor p =
      mb_l_pool(n, "pool", x.t, MB_POOL_GLOBAL_AVG, x.batch, x.c, x.h, x.w, 0, 0, 0, NULL, NULL);
  mb_l_head(n, mb_l_linear(n, "fc", p, x.batch, x.c, classes, true), x.batch, classes);
}

static fmap maxpool(mb_net *n, const char *name, fmap x, int64_t k, int64_t stride, int64_t pad) {
  fmap y = x;
  y.t = mb_l_pool(n, name, x.t, MB_POOL_MAX, x.batch, x.c, x.h, x.w, k, stride, pad, &y.h, &y.w);
  return y;
}

static void build_resnet(mb_net *n, const mb_model_spec *s) {
  static const int64_t blocks50[4] = {3, 4, 6, 3}, blocks101[4] = {3, 4, 23, 3},
                       blocks152[4] = {3, 8, 36, 3};
  const int64_t *blocks = s->depth == 50 ? blocks50 : s->depth == 101 ? blocks101 : blocks152;
  fmap x = image_input(n, s);
  x = conv_block(n, "stem", x, 64, 7, 2, 1, true, MB_ACT_RELU);
  x = maxpool(n, "stem.pool", x, 3, 2, 1);
  for (int stage = 0; stage < 4; stage++) {
    int64_t width = 64 << stage;
    for (int64_t b = 0; b < blocks[stage]; b++) {
      mb_net_scope_push(n, "s%d.b%lld", stage + 1, (long long)b);
      int64_t stride = b == 0 && stage > 0 ? 2 : 1; /* v1.5: stride on the 3x3 conv */
      fmap y = conv_block(n, "a", x, width, 1, 1, 1, true, MB_ACT_RELU);
      y = conv_block(n, "b", y, width, 3, stride, 1, true, MB_ACT_RELU);
      y = conv_block(n, "c", y, 4 * width, 1, 1, 1, true, -1);
      fmap sc = x;
      if (b == 0) sc = conv_block(n, "downsample", x, 4 * width, 1, stride, 1, true, -1);
      y.t = mb_l_act(n, "relu", mb_l_add(n, "residual", y.t, sc.t), MB_ACT_RELU);
      x = y;
      mb_net_scope_pop(n);
    }
  }
  pool_classify(n, x, s->classes);
}

/* AlexNet's spatial layers in order (kernel, stride, padding): what build_alexnet builds and
 * what its smallest image is worked out from. conv_block pads k / 2, as the table says. */
enum { AX_CONV1, AX_POOL1, AX_CONV2, AX_POOL2, AX_CONV3, AX_CONV4, AX_CONV5, AX_POOL5, AX_N };
static const int64_t alexnet_windows[AX_N][3] = {{11, 4, 2}, {3, 2, 0}, {5, 1, 2}, {3, 2, 0},
                                                 {3, 1, 1},  {3, 1, 1}, {3, 1, 1}, {3, 2, 0}};

static fmap alexnet_conv(mb_net *n, const char *name, fmap x, int64_t cout, int layer) {
  const int64_t *k = alexnet_windows[layer];
  return conv_block(n, name, x, cout, k[0], k[1], 1, false, MB_ACT_RELU);
}

static fmap alexnet_pool(mb_net *n, const char *name, fmap x, int layer) {
  const int64_t *k = alexnet_windows[layer];
  return maxpool(n, name, x, k[0], k[1], k[2]);
}

static void build_alexnet(mb_net *n, const mb_model_spec *s) {
  /* torchvision's AlexNet (the one-GPU variant of Krizhevsky et al. 2012) */
  fmap x = image_input(n, s);
  const int64_t *k1 = alexnet_windows[AX_CONV1];
  mb_conv_cfg c1 = {.batch = x.batch,
                    .cin = x.c,
                    .h = x.h,
                    .w = x.w,
                    .cout = 64,
                    .kh = k1[0],
                    .kw = k1[0],
                    .stride = k1[1],
                    .pad = k1[2],
                    .groups = 1,
                    .bias = true};
  fmap y = {NT, x.batch, 0, 0, 64};
  mb_net_scope_push(n, "conv1");
  y.t = mb_l_act(n, "act", mb_l_conv2d(n, "conv", x.t, &c1, &y.h, &y.w), MB_ACT_RELU);
  mb_net_scope_pop(n);
  y = alexnet_pool(n, "pool1", y, AX_POOL1);
  y = alexnet_conv(n, "conv2", y, 192, AX_CONV2);
  y = alexnet_pool(n, "pool2", y, AX_POOL2);
  y = alexnet_conv(n, "conv3", y, 384, AX_CONV3);
  y = alexnet_conv(n, "conv4", y, 256, AX_CONV4);
  y = alexnet_conv(n, "conv5", y, 256, AX_CONV5);
  y = alexnet_pool(n, "pool5", y, AX_POOL5);
  int64_t B = y.batch, flat = y.h * y.w * y.c;
  mb_tensor h =
      mb_l_act(n, "fc6.act", mb_l_linear(n, "fc6", y.t, B, flat, 4096, true), MB_ACT_RELU);
  h = mb_l_act(n, "fc7.act", mb_l_linear(n, "fc7", h, B, 4096, 4096, true), MB_ACT_RELU);
  mb_l_head(n, mb_l_linear(n, "fc8", h, B, 4096, s->classes, true), B, s->classes);
}

static void build_mobilenetv2(mb_net *n, const mb_model_spec *s) {
  /* Sandler et al. 2018, Table 2: expansion t, channels c, repeats r, stride st */
  static const int64_t cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                    {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  fmap x = conv_block(n, "stem", image_input(n, s), 32, 3, 2, 1, true, MB_ACT_RELU6);
  int blk = 0;
  for (int i = 0; i < 7; i++) {
    for (int64_t r = 0; r < cfg[i][2]; r++, blk++) {
      mb_net_scope_push(n, "b%d", blk);
      int64_t stride = r == 0 ? cfg[i][3] : 1, hidden = x.c * cfg[i][0];
      fmap y = x;
      if (cfg[i][0] != 1) y = conv_block(n, "expand", y, hidden, 1, 1, 1, true, MB_ACT_RELU6);
      y = conv_block(n, "depthwise", y, hidden, 3, stride, hidden, true, MB_ACT_RELU6);
      y = conv_block(n, "project", y, cfg[i][1], 1, 1, 1, true, -1);
      if (stride == 1 && x.c == cfg[i][1]) y.t = mb_l_add(n, "residual", y.t, x.t);
      x = y;
      mb_net_scope_pop(n);
    }
  }
  x = conv_block(n, "last", x, 1280, 1, 1, 1, true, MB_ACT_RELU6);
  pool_classify(n, x, s->classes);
}

static void build_efficientnet(mb_net *n, const mb_model_spec *s) {
  /* Tan & Le 2019, Table 1 (B0): expansion, kernel, stride, repeats, channels */
  static const int64_t cfg[7][5] = {{1, 3, 1, 1, 16}, {6, 3, 2, 2, 24},  {6, 5, 2, 2, 40},
                                    {6, 3, 2, 3, 80}, {6, 5, 1, 3, 112}, {6, 5, 2, 4, 192},
                                    {6, 3, 1, 1, 320}};
  fmap x = conv_block(n, "stem", image_input(n, s), 32, 3, 2, 1, true, MB_ACT_SILU);
  int blk = 0;
  for (int i = 0; i < 7; i++) {
    for (int64_t r = 0; r < cfg[i][3]; r++, blk++) {
      mb_net_scope_push(n, "b%d", blk);
      int64_t stride = r == 0 ? cfg[i][2] : 1, hidden = x.c * cfg[i][0];
      int64_t se = x.c / 4 > 0 ? x.c / 4 : 1; /* squeeze ratio 0.25 of the block input */
      fmap y = x;
      if (cfg[i][0] != 1) y = conv_block(n, "expand", y, hidden, 1, 1, 1, true, MB_ACT_SILU);
      y = conv_block(n, "depthwise", y, hidden, cfg[i][1], stride, hidden, true, MB_ACT_SILU);
      /* squeeze and excitation */
      mb_net_scope_push(n, "se");
      mb_tensor p = mb_l_pool(n, "pool", y.t, MB_POOL_GLOBAL_AVG, y.batch, hidden, y.h, y.w, 0, 0,
                              0, NULL, NULL);
      p = mb_l_act(n, "act1", mb_l_linear(n, "reduce", p, y.batch, hidden, se, true), MB_ACT_SILU);
      p = mb_l_act(n, "act2", mb_l_linear(n, "expand", p, y.batch, se, hidden, true),
                   MB_ACT_SIGMOID);
      y.t = mb_l_scale(n, "scale", y.t, p);
      mb_net_scope_pop(n);
      y = conv_block(n, "project", y, cfg[i][4], 1, 1, 1, true, -1);
      if (stride == 1 && x.c == cfg[i][4]) y.t = mb_l_add(n, "residual", y.t, x.t);
      x = y;
      mb_net_scope_pop(n);
    }
  }
  x = conv_block(n, "head", x, 1280, 1, 1, 1, true, MB_ACT_SILU);
  pool_classify(n, x, s->classes);
}

static void build_unet(mb_net *n, const mb_model_spec *s) {
  /* Ronneberger et al. 2015 with "same" padding: two 3x3 conv + ReLU per level, 2x2 max
   * pooling down, 2x2 up-convolution up, skip connections by concatenation. */
  fmap skips[8];
  fmap x = image_input(n, s);
  int64_t levels = s->levels;
  for (int64_t l = 0; l < levels; l++) {
    mb_net_scope_push(n, "down%lld", (long long)l);
    int64_t c = s->width << l;
    x = conv_block(n, "conv1", x, c, 3, 1, 1, false, MB_ACT_RELU);
    x = conv_block(n, "conv2", x, c, 3, 1, 1, false, MB_ACT_RELU);
    skips[l] = x;
    x = maxpool(n, "pool", x, 2, 2, 0);
    mb_net_scope_pop(n);
  }
  mb_net_scope_push(n, "bottom");
  x = conv_block(n, "conv1", x, s->width << levels, 3, 1, 1, false, MB_ACT_RELU);
  x = conv_block(n, "conv2", x, s->width << levels, 3, 1, 1, false, MB_ACT_RELU);
  mb_net_scope_pop(n);
  for (int64_t l = levels - 1; l >= 0; l--) {
    mb_net_scope_push(n, "up%lld", (long long)l);
    int64_t c = s->width << l;
    mb_conv_cfg uc = {.batch = x.batch,
                      .cin = x.c,
                      .h = x.h,
                      .w = x.w,
                      .cout = c,
                      .kh = 2,
                      .kw = 2,
                      .stride = 2,
                      .pad = 0,
                      .groups = 1,
                      .bias = true,
                      .transposed = true};
    fmap u = {NT, x.batch, 0, 0, c};
    u.t = mb_l_conv2d(n, "upconv", x.t, &uc, &u.h, &u.w);
    fmap cat = {NT, x.batch, u.h, u.w, 2 * c};
    cat.t = mb_l_concat(n, "concat", (mb_tensor[]){skips[l].t, u.t}, 2);
    x = conv_block(n, "conv1", cat, c, 3, 1, 1, false, MB_ACT_RELU);
    x = conv_block(n, "conv2", x, c, 3, 1, 1, false, MB_ACT_RELU);
    mb_net_scope_pop(n);
  }
  mb_conv_cfg oc = {.batch = x.batch,
                    .cin = x.c,
                    .h = x.h,
                    .w = x.w,
                    .cout = s->classes,
                    .kh = 1,
                    .kw = 1,
                    .stride = 1,
                    .pad = 0,
                    .groups = 1,
                    .bias = true};
  mb_tensor logits = mb_l_conv2d(n, "out", x.t, &oc, NULL, NULL);
  mb_l_head(n, logits, x.batch * x.h * x.w, s->classes);
}

/* ---- recurrent, recommender, graph ---- */

static void build_lstm(mb_net *n, const mb_model_spec *s) {
  /* LSTM language model (Zaremba et al. 2014): embedding, stacked LSTM unrolled over seq
   * steps, softmax layer over the vocabulary applied to all steps at once. */
  int64_t B = s->batch, S = s->seq, H = s->hidden, L = s->layers;
  mb_tensor ids = mb_net_input(n, "token_ids", B * S, MB_DTYPE_S32);
  mb_tensor table = mb_net_weight(n, "embed_table", s->vocab * H);
  mb_lstm_weights *wts = calloc((size_t)L, sizeof *wts);
  mb_tensor *h = calloc((size_t)L, sizeof *h), *c = calloc((size_t)L, sizeof *c);
  mb_tensor *tops = calloc((size_t)S, sizeof *tops);
  if (!wts || !h || !c || !tops) {
    mb_net_fail(n, "out of memory");
    free(wts), free(h), free(c), free(tops);
    return;
  }
  for (int64_t l = 0; l < L; l++) {
    char name[32];
    snprintf(name, sizeof name, "l%lld", (long long)l);
    wts[l] = mb_l_lstm_weights(n, name, H, H);
    snprintf(name, sizeof name, "l%lld.h0", (long long)l);
    h[l] = mb_net_input(n, name, B * H, mb_net_dtype(n));
    snprintf(name, sizeof name, "l%lld.c0", (long long)l);
    c[l] = mb_net_input(n, name, B * H, mb_net_dtype(n));
  }
  for (int64_t t = 0; t < S; t++) {
    mb_net_scope_push(n, "t%lld", (long long)t);
    mb_tensor x = mb_l_embedding(n, "embed", ids, table, B, H);
    for (int64_t l = 0; l < L; l++) {
      char name[32];
      snprintf(name, sizeof name, "l%lld", (long long)l);
      mb_l_lstm_cell(n, name, &wts[l], x, h[l], c[l], B, &h[l], &c[l]);
      x = h[l];
    }
    tops[t] = x;
    mb_net_scope_pop(n);
  }
  mb_tensor all = mb_l_concat(n, "outputs", tops, (int32_t)S);
  mb_l_head(n, mb_l_linear(n, "softmax", all, S * B, H, s->vocab, true), S * B, s->vocab);
  free(wts), free(h), free(c), free(tops);
}

static void build_dlrm(mb_net *n, const mb_model_spec *s) {
  /* Naumov et al. 2019: bottom MLP on dense features, one embedding lookup per table,
   * pairwise dot-product interaction, top MLP, sigmoid click probability. */
  int64_t B = s->batch, D = s->embed_dim, nt = s->n_table_rows;
  mb_tensor x = mb_net_input(n, "dense", B * s->features, mb_net_dtype(n));
  int64_t in = s->features;
  for (int32_t i = 0; i < s->n_bottom_mlp; i++) {
    mb_net_scope_push(n, "bottom%d", i);
    x = mb_l_act(n, "relu", mb_l_linear(n, "fc", x, B, in, s->bottom_mlp[i], true), MB_ACT_RELU);
    in = s->bottom_mlp[i];
    mb_net_scope_pop(n);
  }
  mb_tensor ids = mb_net_input(n, "sparse_ids", B * nt, MB_DTYPE_S32);
  mb_tensor parts[MB_SPEC_LIST_MAX + 1];
  parts[0] = x;
  for (int64_t i = 0; i < nt; i++) {
    mb_net_scope_push(n, "emb%lld", (long long)i);
    mb_tensor table = mb_net_weight(n, "table", s->table_rows[i] * D);
    /* one lookup per sample: at most min(batch, rows) rows get a gradient */
    mb_net_sparse_grad(n, table, (B < s->table_rows[i] ? B : s->table_rows[i]) * D);
    parts[i + 1] = mb_l_embedding(n, "lookup", ids, table, B, D);
    mb_net_scope_pop(n);
  }
  int64_t F = nt + 1, pairs = F * (F - 1) / 2;
  mb_net_scope_push(n, "interaction");
  mb_tensor z = mb_l_concat(n, "stack", parts, (int32_t)F);
  mb_tensor zz = mb_l_matmul(n, "dot", z, z, B, F, D, F);
  mb_tensor y = mb_l_gather2(n, "triangle", zz, x, B * (pairs + D));
  mb_net_scope_pop(n);
  in = pairs + D;
  for (int32_t i = 0; i < s->n_top_mlp; i++) {
    mb_net_scope_push(n, "top%d", i);
    y = mb_l_linear(n, "fc", y, B, in, s->top_mlp[i], true);
    if (i + 1 < s->n_top_mlp) y = mb_l_act(n, "relu", y, MB_ACT_RELU);
    in = s->top_mlp[i];
    mb_net_scope_pop(n);
  }
  mb_l_head(n, y, B * in, 1);
}

static void build_graph(mb_net *n, const mb_model_spec *s) {
  /* Full-graph GCN (Kipf & Welling 2017) or GraphSAGE-mean (Hamilton et al. 2017) over a CSR
   * adjacency with `edges` non-zeros (self loops included for GCN). */
  int64_t N = s->nodes, E = s->edges, in = s->features;
  mb_tensor adj = mb_net_input(n, "adjacency", (N + 1) + 2 * E, MB_DTYPE_S32);
  mb_tensor x = mb_net_input(n, "features", N * in, mb_net_dtype(n));
  for (int64_t l = 0; l < s->layers; l++) {
    bool last = l + 1 == s->layers;
    int64_t out = last ? s->classes : s->hidden;
    mb_net_scope_push(n, "l%lld", (long long)l);
    if (s->family == MB_FAMILY_GCN) {
      mb_tensor xw = mb_l_linear(n, "transform", x, N, in, out, false);
      x = mb_l_spmm(n, "aggregate", adj, xw, N, E, out);
      x = mb_l_add(n, "add_bias", x, mb_net_weight(n, "bias", out));
      if (!last) x = mb_l_norm(n, "bn", x, N, out, MB_NORM_BATCH);
    } else {
      mb_tensor agg = mb_l_spmm(n, "aggregate", adj, x, N, E, in);
      mb_tensor self = mb_l_linear(n, "self", x, N, in, out, true);
      x = mb_l_add(n, "combine", self, mb_l_linear(n, "neighbours", agg, N, in, out, false));
    }
    if (!last) x = mb_l_act(n, "relu", x, MB_ACT_RELU);
    in = out;
    mb_net_scope_pop(n);
  }
  mb_l_head(n, x, N, s->classes);
}

/* ---- entry points ---- */

int64_t mb_model_min_image(mb_model_family f) {
  if (f != MB_FAMILY_ALEXNET) return 1;
  for (int64_t image = 1;; image++) {
    int64_t side = image;
    for (int i = 0; i < AX_N && side > 0; i++)
      side =
          mb_window_out(side, alexnet_windows[i][0], alexnet_windows[i][1], alexnet_windows[i][2]);
    if (side > 0) return image;
  }
}

void mb_model_source(char *out, size_t n, const char *spec_path) {
  snprintf(out, n, "model zoo v%d: %s", MB_MODEL_ZOO_VERSION, spec_path);
}

mb_workload *mb_model_generate_spec(const mb_model_spec *s, mb_error *err) {
  char source[MB_SPEC_TEXT_MAX + 64];
  char path[MB_SPEC_TEXT_MAX + 1];
  snprintf(path, sizeof path, "%.*s", MB_SPEC_TEXT_MAX, s->path);
  mb_model_source(source, sizeof source, path);
  mb_net *n = mb_net_new(s->name, source, s->training, s->dtype, s->opt_dtype);
  if (!n) {
    mb_fail(err, "%s: out of memory", s->path);
    return NULL;
  }
  switch (s->family) {
    case MB_FAMILY_MLP:
      build_mlp(n, s);
      break;
    case MB_FAMILY_BERT:
      build_bert(n, s);
      break;
    case MB_FAMILY_GPT2:
      build_gpt2(n, s);
      break;
    case MB_FAMILY_T5:
      build_t5(n, s);
      break;
    case MB_FAMILY_VIT:
      build_vit(n, s);
      break;
    case MB_FAMILY_LLAMA:
      build_llama(n, s);
      break;
    case MB_FAMILY_RESNET:
      build_resnet(n, s);
      break;
    case MB_FAMILY_ALEXNET:
      build_alexnet(n, s);
      break;
    case MB_FAMILY_MOBILENETV2:
      build_mobilenetv2(n, s);
      break;
    case MB_FAMILY_EFFICIENTNET:
      build_efficientnet(n, s);
      break;
    case MB_FAMILY_UNET:
      build_unet(n, s);
      break;
    case MB_FAMILY_LSTM:
      build_lstm(n, s);
      break;
    case MB_FAMILY_DLRM:
      build_dlrm(n, s);
      break;
    case MB_FAMILY_GCN:
    case MB_FAMILY_GRAPHSAGE:
      build_graph(n, s);
      break;
    case MB_FAMILY_COUNT:
      break;
  }
  mb_workload *w = mb_net_finish(n, err);
  if (!w) mb_fail_prefix(err, "%s", s->path);
  return w;
}

mb_workload *mb_model_generate_text(const char *text, size_t len, const char *path, mb_error *err) {
  mb_model_spec spec;
  if (!mb_model_spec_parse(text, len, path, &spec, err)) return NULL;
  return mb_model_generate_spec(&spec, err);
}

mb_workload *mb_model_generate_file(const char *spec_path, mb_error *err) {
  mb_model_spec spec;
  if (!mb_model_spec_load(spec_path, &spec, err)) return NULL;
  return mb_model_generate_spec(&spec, err);
}
