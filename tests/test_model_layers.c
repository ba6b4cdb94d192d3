/* model_layers.h, tested against its contract on layers small enough to work out by hand: op
 * names and kinds, FLOPs (2 per multiply-accumulate for products, the per-element constants of
 * model_layers.c for the rest), buffer sizes from shapes and dtypes, live ranges and pinning
 * (entry parameters from op 0, outputs to the last op, saved activations until their backward
 * op, weights and Adam moments pinned through the end in training), the backward and Adam ops
 * of training, and the messages of bad parameters, which name the model and the layer. Every
 * expected number below is worked out in the comment next to it, not by the library. */
#include <stdlib.h>
#include <string.h>

#include "model_layers.h"
#include "support.h"
#include "workload.h"

/* ---- helpers ---- */

static const mb_op *op(const mb_workload *w, const char *name) {
  int32_t i = mb_workload_find_op(w, name);
  if (i < 0) fail_msg("no op '%s'", name);
  return &w->ops[i];
}

static int32_t op_index(const mb_workload *w, const char *name) {
  int32_t i = mb_workload_find_op(w, name);
  if (i < 0) fail_msg("no op '%s'", name);
  return i;
}

static const mb_buffer *buf(const mb_workload *w, const char *name) {
  int32_t i = mb_workload_find_buffer(w, name);
  if (i < 0) fail_msg("no buffer '%s'", name);
  return &w->buffers[i];
}

/* op `name` has this kind and FLOPs */
static void expect_op(const mb_workload *w, const char *name, const char *kind, double flops) {
  const mb_op *o = op(w, name);
  if (strcmp(o->kind, kind)) fail_msg("op '%s': kind '%s', want '%s'", name, o->kind, kind);
  if (o->flops != flops) fail_msg("op '%s': %.17g FLOPs, want %.17g", name, o->flops, flops);
}

/* buffer `name` has this size, live range and pinning */
static void expect_buf(const mb_workload *w, const char *name, int64_t size, int32_t start,
                       int32_t end, bool pinned) {
  const mb_buffer *b = buf(w, name);
  if (b->size != size || b->start != start || b->end != end || b->pinned != pinned)
    fail_msg("buffer '%s': %lld B [%d, %d]%s, want %lld B [%d, %d]%s", name, (long long)b->size,
             b->start, b->end, b->pinned ? " pinned" : "", (long long)size, start, end,
             pinned ? " pinned" : "");
}

/* bytes op `o` reads from and writes to buffer `b` (-1, -1 when it does not use it) */
static void use_bytes(const mb_workload *w, const char *o, const char *b, int64_t *rd,
                      int64_t *wr) {
  int32_t oi = op_index(w, o), bi = mb_workload_find_buffer(w, b);
  if (bi < 0) fail_msg("no buffer '%s'", b);
  *rd = *wr = -1;
  const mb_buffer *bb = &w->buffers[bi];
  for (int32_t u = bb->first_use; u < bb->first_use + bb->n_uses; u++)
    if (w->uses[u].op == oi) {
      *rd = w->uses[u].bytes_read;
      *wr = w->uses[u].bytes_written;
    }
}

static void expect_use(const mb_workload *w, const char *o, const char *b, int64_t rd, int64_t wr) {
  int64_t r, x;
  use_bytes(w, o, b, &r, &x);
  if (r != rd || x != wr)
    fail_msg("op '%s' on '%s': read %lld written %lld, want %lld and %lld", o, b, (long long)r,
             (long long)x, (long long)rd, (long long)wr);
}

static mb_workload *finish_ok(mb_net *n) {
  mb_error err = {{0}};
  mb_workload *w = mb_net_finish(n, &err);
  if (!w) fail_msg("mb_net_finish: %s", err.message);
  return w;
}

static void finish_fails(mb_net *n, const char *message) {
  mb_error err = {{0}};
  mb_workload *w = mb_net_finish(n, &err);
  if (w) {
    mb_workload_free(w);
    fail_msg("mb_net_finish succeeded; want '%s'", message);
  }
  if (strcmp(err.message, message)) fail_msg("error '%s', want '%s'", err.message, message);
}

static mb_net *infer(mb_dtype dt) { return mb_net_new("tnet", "test", false, dt, MB_DTYPE_F32); }
static mb_net *train(mb_dtype dt, mb_dtype odt) {
  return mb_net_new("tnet", "test", true, dt, odt);
}

/* ---- dtypes ---- */

static void test_dtypes(void **state) {
  (void)state;
  assert_int_equal(mb_dtype_size(MB_DTYPE_F32), 4);
  assert_int_equal(mb_dtype_size(MB_DTYPE_BF16), 2);
  assert_int_equal(mb_dtype_size(MB_DTYPE_F16), 2);
  assert_int_equal(mb_dtype_size(MB_DTYPE_S32), 4);
  const char *names[] = {"f32", "bf16", "f16", "s32"};
  const mb_dtype types[] = {MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16, MB_DTYPE_S32};
  for (int i = 0; i < 4; i++) {
    assert_string_equal(mb_dtype_name(types[i]), names[i]);
    mb_dtype t = MB_DTYPE_S32 == types[i] ? MB_DTYPE_F32 : MB_DTYPE_S32;
    assert_true(mb_dtype_from_name(names[i], &t));
    assert_int_equal(t, types[i]);
  }
  mb_dtype t = MB_DTYPE_BF16;
  assert_false(mb_dtype_from_name("f64", &t));
  assert_false(mb_dtype_from_name("F32", &t));
  assert_false(mb_dtype_from_name("", &t));
  assert_int_equal(t, MB_DTYPE_BF16); /* left alone */
  assert_string_equal(mb_dtype_name((mb_dtype)17), "?");
}

/* ---- inference: a linear layer ---- */

static void test_linear_inference(void **state) {
  (void)state;
  mb_net *n = infer(MB_DTYPE_F32);
  assert_false(mb_net_training(n));
  assert_int_equal(mb_net_dtype(n), MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 6, MB_DTYPE_F32); /* rows 2 x in 3 */
  mb_tensor y = mb_l_linear(n, "fc", x, 2, 3, 4, true);
  assert_int_equal(mb_net_numel(n, x), 6);
  assert_int_equal(mb_net_numel(n, y), 8); /* 2 x 4 */
  assert_int_equal(mb_net_numel(n, 99), 0);
  assert_int_equal(mb_net_numel(n, MB_NO_TENSOR), 0);
  mb_l_head(n, y, 2, 4); /* inference: the logits are the output */
  mb_workload *w = finish_ok(n);
  assert_string_equal(w->name, "tnet");
  assert_int_equal(w->n_ops, 1);
  /* 2 x rows x in x out = 2*2*3*4 = 48, plus the bias: rows x out = 8 */
  expect_op(w, "fwd.fc", "dot", 56);
  assert_int_equal(w->n_buffers, 4);
  expect_buf(w, "x", 24, 0, 0, true);    /* 6 f32 */
  expect_buf(w, "fc.w", 48, 0, 0, true); /* 3 x 4 f32 */
  expect_buf(w, "fc.b", 16, 0, 0, true); /* 4 f32 */
  expect_buf(w, "fc", 32, 0, 0, true);   /* output 2 x 4 f32 */
  expect_use(w, "fwd.fc", "x", 24, 0);
  expect_use(w, "fwd.fc", "fc.w", 48, 0);
  expect_use(w, "fwd.fc", "fc.b", 16, 0);
  expect_use(w, "fwd.fc", "fc", 0, 32);
  mb_workload_free(w);
}

/* Two layers in bf16: weights and activations take the net's dtype, the input its own; in
 * inference an entry parameter lives from op 0 to its last use, an activation from its op to
 * its last reader, and only outputs are pinned to the end. */
static void test_inference_lifetimes_and_dtype(void **state) {
  (void)state;
  mb_net *n = infer(MB_DTYPE_BF16);
  mb_tensor x = mb_net_input(n, "x", 4, MB_DTYPE_F32); /* rows 1 x 4 */
  mb_tensor h = mb_l_linear(n, "fc1", x, 1, 4, 8, false);
  mb_tensor a = mb_l_act(n, "relu", h, MB_ACT_RELU);
  mb_tensor y = mb_l_linear(n, "fc2", a, 1, 8, 2, false);
  mb_l_head(n, y, 1, 2);
  mb_workload *w = finish_ok(n);
  assert_int_equal(w->n_ops, 3);
  assert_int_equal(op_index(w, "fwd.fc1"), 0);
  assert_int_equal(op_index(w, "fwd.relu"), 1);
  assert_int_equal(op_index(w, "fwd.fc2"), 2);
  expect_op(w, "fwd.fc1", "dot", 2.0 * 1 * 4 * 8);
  expect_op(w, "fwd.relu", "relu", 8); /* 1 per element */
  expect_op(w, "fwd.fc2", "dot", 2.0 * 1 * 8 * 2);
  expect_buf(w, "x", 16, 0, 0, true);     /* f32 as given */
  expect_buf(w, "fc1.w", 64, 0, 0, true); /* 32 bf16 */
  expect_buf(w, "fc1", 16, 0, 1, false);  /* 8 bf16, read by relu */
  expect_buf(w, "relu", 16, 1, 2, false);
  expect_buf(w, "fc2.w", 32, 0, 2, true); /* entry: from op 0 although first read at op 2 */
  expect_buf(w, "fc2", 4, 2, 2, true);    /* the output */
  mb_workload_free(w);
}

/* ---- training: forward, loss, backward in reverse order, Adam ---- */

static void test_training_program(void **state) {
  (void)state;
  mb_net *n = train(MB_DTYPE_F32, MB_DTYPE_F16);
  assert_true(mb_net_training(n));
  mb_tensor x = mb_net_input(n, "x", 6, MB_DTYPE_F32);
  mb_tensor h = mb_l_linear(n, "fc", x, 2, 3, 4, false);
  mb_tensor r = mb_l_act(n, "r", h, MB_ACT_RELU);
  mb_l_head(n, r, 2, 4);
  mb_workload *w = finish_ok(n);
  /* forward fc, relu, loss; backward of the loss, of relu, of fc's weight (no dx: x is data,
   * it needs no gradient); one Adam update */
  const char *order[] = {"fwd.fc",   "fwd.r",     "loss.xent", "bwd.xent.dlogits",
                         "bwd.r.dx", "bwd.fc.dw", "adam.fc.w"};
  assert_int_equal(w->n_ops, 7);
  for (int i = 0; i < 7; i++) assert_string_equal(w->ops[i].name, order[i]);
  assert_int_equal(mb_workload_find_op(w, "bwd.fc.dx"), -1);
  expect_op(w, "fwd.fc", "dot", 48);                                  /* 2*2*3*4 */
  expect_op(w, "fwd.r", "relu", 8);                                   /* 1 x 8 elements */
  expect_op(w, "loss.xent", "softmax-cross-entropy", 40);             /* 5 x 2 rows x 4 classes */
  expect_op(w, "bwd.xent.dlogits", "softmax-cross-entropy-grad", 16); /* 2 x 8 */
  expect_op(w, "bwd.r.dx", "relu-grad", 8);                           /* 1 x 8 */
  expect_op(w, "bwd.fc.dw", "dot", 48);                               /* the forward product */
  expect_op(w, "adam.fc.w", "adam", 120);                             /* 10 x 12 elements */
  assert_int_equal(w->n_buffers, 11);
  expect_buf(w, "x", 24, 0, 5, true);     /* data, read again by bwd.fc.dw (op 5) */
  expect_buf(w, "fc.w", 48, 0, 6, true);  /* trained: pinned to the end */
  expect_buf(w, "fc", 32, 0, 4, false);   /* saved for relu's backward (op 4) */
  expect_buf(w, "r", 32, 1, 3, false);    /* the logits, read by the loss's backward */
  expect_buf(w, "labels", 8, 0, 3, true); /* 2 s32 labels */
  expect_buf(w, "xent", 4, 2, 6, true);   /* the loss: an f32 scalar output */
  expect_buf(w, "grad.r", 32, 3, 4, false);
  expect_buf(w, "grad.fc", 32, 4, 5, false);
  expect_buf(w, "grad.fc.w", 48, 5, 6, false);
  expect_buf(w, "adam_m.fc.w", 24, 0, 6, true); /* 12 moments in f16 */
  expect_buf(w, "adam_v.fc.w", 24, 0, 6, true);
  /* Adam reads and writes the weight and both moments, reads the gradient */
  expect_use(w, "adam.fc.w", "fc.w", 48, 48);
  expect_use(w, "adam.fc.w", "grad.fc.w", 48, 0);
  expect_use(w, "adam.fc.w", "adam_m.fc.w", 24, 24);
  expect_use(w, "adam.fc.w", "adam_v.fc.w", 24, 24);
  /* relu differentiates from its input (fc), the loss from the logits and labels */
  expect_use(w, "bwd.r.dx", "fc", 32, 0);
  expect_use(w, "bwd.r.dx", "grad.r", 32, 0);
  expect_use(w, "bwd.r.dx", "grad.fc", 0, 32);
  expect_use(w, "bwd.xent.dlogits", "labels", 8, 0);
  mb_workload_free(w);
}

/* Gradients: a tensor read twice accumulates (a new SSA version that reads the old one, its
 * elements added to the FLOPs); an add passes its gradient through without an op unless the
 * target already has one. */
static void test_gradient_accumulation_and_alias(void **state) {
  (void)state;
  mb_net *n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_tensor h = mb_l_linear(n, "fc1", x, 1, 2, 2, false);
  mb_tensor b = mb_net_weight(n, "b", 2);
  mb_tensor s = mb_l_add(n, "s", h, b);
  mb_tensor r = mb_l_act(n, "r", h, MB_ACT_TANH);
  mb_tensor t = mb_l_add(n, "t", s, r);
  mb_l_head(n, t, 1, 2);
  mb_workload *w = finish_ok(n);
  /* backward, last layer first: t passes grad.xent... on to s and r as aliases (no ops);
   * r.dx writes fc1's first gradient; s.da finds fc1 already has one: an add op that writes
   * version 1; s.db aliases b's gradient to t's */
  const char *order[] = {
      "fwd.fc1",  "fwd.s",    "fwd.r",      "fwd.t",      "loss.xent", "bwd.xent.dlogits",
      "bwd.r.dx", "bwd.s.da", "bwd.fc1.dw", "adam.fc1.w", "adam.b"};
  assert_int_equal(w->n_ops, 11);
  for (int i = 0; i < 11; i++) assert_string_equal(w->ops[i].name, order[i]);
  assert_int_equal(mb_workload_find_op(w, "bwd.t.da"), -1);
  assert_int_equal(mb_workload_find_op(w, "bwd.s.db"), -1);
  expect_op(w, "fwd.s", "add", 2);
  expect_op(w, "bwd.r.dx", "tanh-grad", 6); /* 3 per element */
  expect_op(w, "bwd.s.da", "add", 2);       /* one add per element of the old gradient */
  expect_use(w, "bwd.s.da", "grad.fc1", 8, 0);
  expect_use(w, "bwd.s.da", "grad.t", 8, 0);
  expect_use(w, "bwd.s.da", "grad.fc1.1", 0, 8);
  expect_use(w, "bwd.fc1.dw", "grad.fc1.1", 8, 0); /* the accumulated version */
  expect_use(w, "bwd.r.dx", "r", 8, 0);            /* tanh differentiates from its output */
  expect_use(w, "adam.b", "grad.t", 8, 0);         /* b's gradient is t's */
  assert_int_equal(mb_workload_find_buffer(w, "grad.b"), -1);
  assert_int_equal(mb_workload_find_buffer(w, "grad.s"), -1);
  /* trained state is live to the last op (10), not to its own Adam update (9) */
  expect_buf(w, "fc1.w", 16, 0, 10, true);
  expect_buf(w, "adam_m.fc1.w", 16, 0, 10, true);
  expect_buf(w, "adam_v.fc1.w", 16, 0, 10, true);
  mb_workload_free(w);

  /* the same tensor through two weighted layers: the second gradient op accumulates */
  n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  x = mb_net_input(n, "x", 3, MB_DTYPE_F32);
  h = mb_l_linear(n, "fc", x, 1, 3, 3, false);
  mb_tensor p = mb_l_linear(n, "p", h, 1, 3, 2, false);
  mb_tensor q = mb_l_linear(n, "q", h, 1, 3, 2, false);
  mb_l_head(n, mb_l_add(n, "pq", p, q), 1, 2);
  w = finish_ok(n);
  expect_op(w, "bwd.q.dx", "dot", 12);     /* 2*1*3*2, the first gradient of fc */
  expect_op(w, "bwd.p.dx", "dot", 12 + 3); /* + 3 elements accumulated */
  expect_use(w, "bwd.p.dx", "grad.fc", 12, 0);
  expect_use(w, "bwd.p.dx", "grad.fc.1", 0, 12);
  expect_buf(w, "grad.fc", 12, op_index(w, "bwd.q.dx"), op_index(w, "bwd.p.dx"), false);
  mb_workload_free(w);
}

/* ---- convolutions ---- */

static void test_conv2d(void **state) {
  (void)state;
  mb_net *n = infer(MB_DTYPE_F32);
  /* 5x5x2 image, 3x3 kernel, 3 channels out, stride 1, no padding: 3x3 output */
  mb_conv_cfg c = {.batch = 1,
                   .cin = 2,
                   .h = 5,
                   .w = 5,
                   .cout = 3,
                   .kh = 3,
                   .kw = 3,
                   .stride = 1,
                   .pad = 0,
                   .groups = 1,
                   .bias = true};
  mb_tensor x = mb_net_input(n, "img", 50, MB_DTYPE_F32);
  int64_t oh = 0, ow = 0;
  mb_tensor y = mb_l_conv2d(n, "c1", x, &c, &oh, &ow);
  assert_int_equal(oh, 3);
  assert_int_equal(ow, 3);
  assert_int_equal(mb_net_numel(n, y), 27); /* 3x3x3 */
  /* stride 2, pad 1 on the same 5x5: (5 + 2 - 3) / 2 + 1 = 3; a 5x3 kernel on 5 rows: 3, 2 */
  mb_conv_cfg s = c;
  s.stride = 2;
  s.pad = 1;
  s.bias = false;
  mb_tensor y2 = mb_l_conv2d(n, "c2", x, &s, &oh, &ow);
  assert_int_equal(oh, 3);
  assert_int_equal(ow, 3);
  s.kh = 5;
  s.pad = 0;
  mb_tensor y3 = mb_l_conv2d(n, "c3", x, &s, &oh, &ow);
  assert_int_equal(oh, 1); /* (5 - 5) / 2 + 1 */
  assert_int_equal(ow, 2); /* (5 - 3) / 2 + 1 */
  /* depthwise: 4 channels, groups 4, 3x3 pad 1 on 4x4: 4x4 out */
  mb_conv_cfg d = {.batch = 2,
                   .cin = 4,
                   .h = 4,
                   .w = 4,
                   .cout = 4,
                   .kh = 3,
                   .kw = 3,
                   .stride = 1,
                   .pad = 1,
                   .groups = 4};
  mb_tensor xd = mb_net_input(n, "dimg", 2 * 4 * 4 * 4, MB_DTYPE_F32);
  mb_tensor yd = mb_l_conv2d(n, "dw", xd, &d, &oh, &ow);
  assert_int_equal(oh, 4);
  /* transposed 2x2 stride 2: 2x2x4 -> 4x4x2 */
  mb_conv_cfg t = {.batch = 1,
                   .cin = 4,
                   .h = 2,
                   .w = 2,
                   .cout = 2,
                   .kh = 2,
                   .kw = 2,
                   .stride = 2,
                   .groups = 1,
                   .transposed = true};
  mb_tensor xt = mb_net_input(n, "timg", 16, MB_DTYPE_F32);
  mb_tensor yt = mb_l_conv2d(n, "up", xt, &t, &oh, &ow);
  assert_int_equal(oh, 4);
  assert_int_equal(ow, 4);
  assert_int_equal(mb_net_numel(n, yt), 32);
  mb_tensor outs[] = {y, y2, y3, yd, yt};
  for (int i = 0; i < 5; i++) mb_net_output(n, outs[i]);
  mb_workload *w = finish_ok(n);
  /* c1: 9 outputs x 3 cout x (2 cin x 3 x 3) = 486 MACs = 972 FLOPs, + 27 bias adds */
  expect_op(w, "fwd.c1", "convolution", 999);
  expect_buf(w, "c1.w", 3 * 3 * 2 * 3 * 4, 0, 0, true);
  expect_buf(w, "c1.b", 12, 0, 0, true);
  expect_buf(w, "c1", 108, 0, 4, true);
  /* c2: 9 outputs x 3 x 18 = 486 MACs, no bias */
  expect_op(w, "fwd.c2", "convolution", 972);
  assert_int_equal(mb_workload_find_buffer(w, "c2.b"), -1);
  /* c3: 1x2 outputs x 3 x (2 x 5 x 3) = 180 MACs */
  expect_op(w, "fwd.c3", "convolution", 360);
  expect_buf(w, "c3.w", 5 * 3 * 2 * 3 * 4, 0, 2, true);
  /* depthwise: 2 images x 16 outputs x 4 channels x (1 x 3 x 3) = 1152 MACs */
  expect_op(w, "fwd.dw", "convolution", 2304);
  expect_buf(w, "dw.w", 3 * 3 * 1 * 4 * 4, 0, 3, true);
  /* transposed: 4 input pixels x (2 cout x 4 cin) x 2 x 2 = 128 MACs */
  expect_op(w, "fwd.up", "convolution", 256);
  expect_buf(w, "up.w", 2 * 2 * 4 * 2 * 4, 0, 4, true);
  mb_workload_free(w);
}

static void test_conv2d_training_backward(void **state) {
  (void)state;
  mb_net *n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  mb_conv_cfg c = {.batch = 1,
                   .cin = 1,
                   .h = 3,
                   .w = 3,
                   .cout = 2,
                   .kh = 2,
                   .kw = 2,
                   .stride = 1,
                   .groups = 1,
                   .bias = true};
  mb_tensor x = mb_net_input(n, "img", 9, MB_DTYPE_F32);
  mb_tensor h = mb_l_conv2d(n, "c", x, &c, NULL, NULL); /* 2x2x2 */
  mb_tensor y = mb_l_conv2d(
      n, "d", h,
      &(mb_conv_cfg){
          .batch = 1, .cin = 2, .h = 2, .w = 2, .cout = 1, .kh = 2, .kw = 2, .stride = 1},
      NULL, NULL); /* 1x1x1 */
  mb_l_head(n, y, 1, 1);
  mb_workload *w = finish_ok(n);
  /* c: 4 outputs x 2 cout x 4 = 32 MACs = 64, + 8 bias; d: 1 x 1 x 8 = 8 MACs = 16 */
  expect_op(w, "fwd.c", "convolution", 72);
  expect_op(w, "fwd.d", "convolution", 16);
  expect_op(w, "bwd.d.dx", "convolution", 16);
  expect_op(w, "bwd.d.dw", "convolution", 16);
  expect_op(w, "bwd.c.dw", "convolution", 72);              /* weight and bias gradients */
  assert_int_equal(mb_workload_find_op(w, "bwd.c.dx"), -1); /* the image needs none */
  expect_op(w, "loss.xent", "sigmoid-cross-entropy", 5);    /* classes 1: sigmoid, 5 x 1 */
  expect_op(w, "bwd.xent.dlogits", "sigmoid-cross-entropy-grad", 2);
  expect_use(w, "bwd.c.dw", "grad.c.w", 0, 32);
  expect_use(w, "bwd.c.dw", "grad.c.b", 0, 8);
  expect_op(w, "adam.c.b", "adam", 20);
  mb_workload_free(w);
}

static void test_conv2d_errors(void **state) {
  (void)state;
  mb_conv_cfg c = {
      .batch = 1, .cin = 1, .h = 2, .w = 2, .cout = 1, .kh = 3, .kw = 3, .stride = 1, .groups = 1};
  mb_net *n = infer(MB_DTYPE_F32);
  mb_net_scope_push(n, "stem");
  mb_tensor x = mb_net_input(n, "img", 4, MB_DTYPE_F32);
  assert_int_equal(mb_l_conv2d(n, "conv", x, &c, NULL, NULL), MB_NO_TENSOR);
  finish_fails(n,
               "model 'tnet': convolution 'stem.conv': input 2x2x1 does not fit a 3x3 kernel "
               "(image too small for the network?)");
  /* too small with a stride: (2 - 3) / 2 + 1 rounds to 1 in C, but a 3x3 window does not fit
   * a 2x2 input */
  n = infer(MB_DTYPE_F32);
  c.stride = 2;
  x = mb_net_input(n, "img", 4, MB_DTYPE_F32);
  assert_int_equal(mb_l_conv2d(n, "conv", x, &c, NULL, NULL), MB_NO_TENSOR);
  finish_fails(n,
               "model 'tnet': convolution 'conv': input 2x2x1 does not fit a 3x3 kernel "
               "(image too small for the network?)");
  /* an input whose size is not batch x h x w x cin: said so, not "too small" */
  c.kh = c.kw = 1;
  c.stride = 1;
  n = infer(MB_DTYPE_F32);
  mb_net_scope_push(n, "stem");
  x = mb_net_input(n, "img", 5, MB_DTYPE_F32);
  mb_l_conv2d(n, "conv", x, &c, NULL, NULL);
  finish_fails(n,
               "model 'tnet': generator bug: convolution 'stem.conv': x ('stem.img') has 5 "
               "elements, expected batch x h x w x cin = 1 x 2 x 2 x 1 = 4");
  /* each bad parameter named with its value */
  static const char *const bad[] = {
      "model 'tnet': convolution 'conv': stride = 0 (must be > 0)",
      "model 'tnet': convolution 'conv': kw = 0 (must be > 0)",
      "model 'tnet': convolution 'conv': groups = 3 does not divide cin = 4",
      "model 'tnet': convolution 'conv': groups = 4 does not divide cout = 6",
      "model 'tnet': convolution 'conv': h = -4 (must be > 0)",
      "model 'tnet': convolution 'conv': cout = 0 (must be > 0)",
      "model 'tnet': convolution 'conv': groups = -1 (must be >= 0; 0 means 1)",
      "model 'tnet': convolution 'conv': pad = 1 (must be >= 0 and less than the 1x1 kernel)",
      "model 'tnet': convolution 'conv': pad = -1 (must be >= 0 and less than the 1x1 kernel)",
      ("model 'tnet': convolution 'conv': kh x kw x cin / groups x cout = 1 x 1152921504606846975 "
       "x 4 x 4: more than 1152921504606846975 elements"),
  };
  for (int k = 0; k < (int)(sizeof bad / sizeof *bad); k++) {
    mb_conv_cfg b = {.batch = 1,
                     .cin = 4,
                     .h = 4,
                     .w = 4,
                     .cout = 4,
                     .kh = 1,
                     .kw = 1,
                     .stride = 1,
                     .groups = 1};
    if (k == 0) b.stride = 0;
    if (k == 1) b.kw = 0;
    if (k == 2) b.groups = 3;
    if (k == 3) b.cout = 6, b.groups = 4;
    if (k == 4) b.h = -4;
    if (k == 5) b.cout = 0;
    if (k == 6) b.groups = -1;
    if (k == 7) b.pad = 1;
    if (k == 8) b.pad = -1;
    if (k == 9) b.kw = INT64_MAX / 8;
    n = infer(MB_DTYPE_F32);
    x = mb_net_input(n, "img", 64, MB_DTYPE_F32);
    int64_t oh = -7;
    assert_int_equal(mb_l_conv2d(n, "conv", x, &b, &oh, NULL), MB_NO_TENSOR);
    assert_int_equal(oh, -7); /* not written on failure */
    finish_fails(n, bad[k]);
  }
}

/* ---- normalisation, activations, elementwise ---- */

static void test_norms(void **state) {
  (void)state;
  mb_net *n = infer(MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 6, MB_DTYPE_F32); /* rows 2 x features 3 */
  mb_net_output(n, mb_l_norm(n, "ln", x, 2, 3, MB_NORM_LAYER));
  mb_net_output(n, mb_l_norm(n, "rms", x, 2, 3, MB_NORM_RMS));
  mb_net_output(n, mb_l_norm(n, "bn", x, 2, 3, MB_NORM_BATCH));
  mb_workload *w = finish_ok(n);
  expect_op(w, "fwd.ln", "layernorm", 48); /* 8 per element x 6 */
  expect_op(w, "fwd.rms", "rmsnorm", 24);  /* 4 x 6 */
  expect_op(w, "fwd.bn", "batchnorm", 12); /* inference: folded, 2 x 6 */
  expect_buf(w, "ln.scale", 12, 0, 0, true);
  expect_buf(w, "ln.shift", 12, 0, 0, true);
  expect_buf(w, "rms.scale", 12, 0, 1, true);
  assert_int_equal(mb_workload_find_buffer(w, "rms.shift"), -1); /* rms norm has no shift */
  /* inference batch norm reads its running statistics, entry parameters */
  expect_buf(w, "bn.mean", 12, 0, 2, true);
  expect_buf(w, "bn.var", 12, 0, 2, true);
  expect_use(w, "fwd.bn", "bn.var", 12, 0);
  mb_workload_free(w);

  n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  x = mb_net_input(n, "x", 6, MB_DTYPE_F32);
  mb_tensor h = mb_l_linear(n, "fc", x, 2, 3, 3, false);
  mb_tensor b = mb_l_norm(n, "bn", h, 2, 3, MB_NORM_BATCH);
  mb_l_head(n, b, 2, 3);
  w = finish_ok(n);
  expect_op(w, "fwd.bn", "batchnorm", 48); /* training: batch statistics, 8 x 6 */
  assert_int_equal(mb_workload_find_buffer(w, "bn.mean"), -1);
  expect_op(w, "bwd.bn.dx", "batchnorm-grad", 60); /* 10 x 6 */
  expect_op(w, "bwd.bn.dw", "reduce", 18);         /* 3 x 6 */
  expect_use(w, "bwd.bn.dw", "grad.bn.scale", 0, 12);
  expect_use(w, "bwd.bn.dw", "grad.bn.shift", 0, 12);
  expect_use(w, "bwd.bn.dx", "bn.scale", 12, 0);
  mb_workload_free(w);
}

static void test_activations(void **state) {
  (void)state;
  const mb_act acts[] = {MB_ACT_RELU, MB_ACT_RELU6,   MB_ACT_GELU,
                         MB_ACT_SILU, MB_ACT_SIGMOID, MB_ACT_TANH};
  const char *kinds[] = {"relu", "relu6", "gelu", "silu", "logistic", "tanh"};
  const double per[] = {1, 2, 8, 4, 4, 4};     /* forward FLOPs per element */
  const double per_dx[] = {1, 2, 12, 6, 3, 3}; /* backward */
  for (int i = 0; i < 6; i++) {
    mb_net *n = train(MB_DTYPE_F32, MB_DTYPE_F32);
    mb_tensor x = mb_net_input(n, "x", 5, MB_DTYPE_F32);
    mb_tensor h = mb_l_linear(n, "fc", x, 1, 5, 5, false);
    mb_tensor a = mb_l_act(n, "a", h, acts[i]);
    assert_int_equal(mb_net_numel(n, a), 5);
    mb_l_head(n, a, 1, 5);
    mb_workload *w = finish_ok(n);
    expect_op(w, "fwd.a", kinds[i], 5 * per[i]);
    char grad_kind[32];
    snprintf(grad_kind, sizeof grad_kind, "%s-grad", kinds[i]);
    expect_op(w, "bwd.a.dx", grad_kind, 5 * per_dx[i]);
    /* sigmoid and tanh differentiate from their output, the others from their input */
    bool from_out = acts[i] == MB_ACT_SIGMOID || acts[i] == MB_ACT_TANH;
    expect_use(w, "bwd.a.dx", "a", from_out ? 20 : -1, from_out ? 0 : -1);
    expect_use(w, "bwd.a.dx", "fc", from_out ? -1 : 20, from_out ? -1 : 0);
    mb_workload_free(w);
  }
}

static void test_elementwise(void **state) {
  (void)state;
  mb_net *n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 6, MB_DTYPE_F32);
  mb_tensor tab = mb_net_input(n, "tab", 6, MB_DTYPE_F32);
  mb_tensor g = mb_l_linear(n, "g", x, 2, 3, 3, false);
  mb_tensor u = mb_l_linear(n, "u", x, 2, 3, 3, false);
  mb_tensor sw = mb_l_swiglu(n, "sw", g, u);
  mb_tensor ro = mb_l_rope(n, "ro", sw, tab);
  mb_tensor sm = mb_l_softmax(n, "sm", ro, 2, 3);
  mb_tensor pos = mb_net_weight(n, "pos", 3);
  mb_tensor ad = mb_l_add(n, "ad", sm, pos); /* broadcast 3 over 6 */
  mb_tensor sc = mb_net_weight(n, "sc", 2);
  mb_tensor sd = mb_l_scale(n, "sd", ad, sc);
  mb_l_head(n, sd, 2, 3);
  mb_workload *w = finish_ok(n);
  expect_op(w, "fwd.sw", "swiglu", 30);  /* 5 x 6 */
  expect_op(w, "fwd.ro", "rope", 18);    /* 3 x 6 */
  expect_op(w, "fwd.sm", "softmax", 30); /* 5 x 2 x 3 */
  expect_op(w, "fwd.ad", "add", 6);      /* one per element of the larger */
  expect_op(w, "fwd.sd", "multiply", 6);
  expect_op(w, "bwd.sw.dx", "swiglu-grad", 60); /* 10 x 6, writes both inputs' gradients */
  expect_use(w, "bwd.sw.dx", "grad.g", 0, 24);
  expect_use(w, "bwd.sw.dx", "grad.u", 0, 24);
  expect_op(w, "bwd.ro.dx", "rope", 18);
  expect_op(w, "bwd.sm.dx", "softmax-grad", 24); /* 4 x 6 */
  expect_use(w, "bwd.sm.dx", "sm", 24, 0);       /* softmax keeps its output live */
  expect_op(w, "bwd.ad.db", "reduce", 6);        /* a broadcast operand's gradient is summed */
  assert_int_equal(mb_workload_find_op(w, "bwd.ad.da"), -1); /* the other is an alias */
  expect_op(w, "bwd.sd.dx", "multiply", 6);
  expect_op(w, "bwd.sd.ds", "reduce", 12);
  expect_buf(w, "grad.pos", 12, op_index(w, "bwd.ad.db"), op_index(w, "adam.pos"), false);
  mb_workload_free(w);

  /* a + b where b does not broadcast: named with its scope */
  n = infer(MB_DTYPE_F32);
  mb_net_scope_push(n, "blk");
  mb_tensor a = mb_net_input(n, "a", 6, MB_DTYPE_F32);
  mb_tensor b = mb_net_input(n, "b", 4, MB_DTYPE_F32);
  assert_int_equal(mb_l_add(n, "sum", a, b), MB_NO_TENSOR);
  finish_fails(n, "model 'tnet': generator bug: add 'blk.sum': 4 elements do not broadcast to 6");
}

/* ---- pooling, lookups, reshaping ---- */

static void test_pool(void **state) {
  (void)state;
  mb_net *n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 32, MB_DTYPE_F32);
  mb_tensor h = mb_l_linear(n, "fc", x, 16, 2, 2, false); /* 4x4x2, NHWC */
  int64_t oh = 0, ow = 0;
  mb_tensor mp = mb_l_pool(n, "mp", h, MB_POOL_MAX, 1, 2, 4, 4, 2, 2, 0, &oh, &ow);
  assert_int_equal(oh, 2);
  assert_int_equal(ow, 2);
  assert_int_equal(mb_net_numel(n, mp), 8);
  mb_tensor ap = mb_l_pool(n, "ap", h, MB_POOL_AVG, 1, 2, 4, 4, 3, 1, 1, &oh, &ow);
  assert_int_equal(oh, 4); /* (4 + 2 - 3) / 1 + 1 */
  mb_tensor gp = mb_l_pool(n, "gp", h, MB_POOL_GLOBAL_AVG, 1, 2, 4, 4, 99, 0, 0, &oh, &ow);
  assert_int_equal(oh, 1);
  assert_int_equal(ow, 1);
  assert_int_equal(mb_net_numel(n, gp), 2);
  mb_tensor parts[] = {mp, ap, gp};
  mb_tensor cat = mb_l_concat(n, "cat", parts, 3);
  assert_int_equal(mb_net_numel(n, cat), 8 + 32 + 2);
  mb_l_head(n, cat, 1, 42);
  mb_workload *w = finish_ok(n);
  expect_op(w, "fwd.mp", "reduce-window", 32);  /* 2 ch x 2x2 outputs x 2x2 window */
  expect_op(w, "fwd.ap", "reduce-window", 288); /* 2 x 4x4 x 3x3 */
  expect_op(w, "fwd.gp", "reduce-window", 32);  /* every input element once */
  /* backward, last pool first: gp writes fc's gradient, ap and mp each accumulate onto it:
   * one FLOP per input element (32), + 32 for the accumulation */
  expect_op(w, "bwd.gp.dx", "reduce-window-grad", 32);
  expect_op(w, "bwd.mp.dx", "select-and-scatter", 64);
  expect_use(w, "bwd.mp.dx", "fc", 128, 0); /* max pooling re-reads its input */
  expect_op(w, "bwd.ap.dx", "reduce-window-grad", 64);
  expect_use(w, "bwd.ap.dx", "grad.fc", 128, 0);
  expect_use(w, "bwd.ap.dx", "grad.fc.1", 0, 128);
  expect_use(w, "bwd.ap.dx", "fc", -1, -1); /* average pooling does not */
  expect_op(w, "fwd.cat", "concatenate", 0);
  expect_op(w, "bwd.cat.dparts", "slice", 0);
  expect_use(w, "bwd.cat.dparts", "grad.mp", 0, 32);
  expect_use(w, "bwd.cat.dparts", "grad.gp", 0, 8);
  mb_workload_free(w);

  n = infer(MB_DTYPE_F32);
  x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_net_scope_push(n, "s");
  assert_int_equal(mb_l_pool(n, "p", x, MB_POOL_MAX, 1, 2, 1, 1, 2, 1, 0, NULL, NULL),
                   MB_NO_TENSOR);
  finish_fails(n, "model 'tnet': pool 's.p': input 1x1 smaller than the 2x2 window");
  /* (2 - 3) / 2 + 1 rounds to 1 in C: a 3x3 window with stride 2 on 2x2 is still refused */
  n = infer(MB_DTYPE_F32);
  x = mb_net_input(n, "x", 8, MB_DTYPE_F32);
  assert_int_equal(mb_l_pool(n, "p", x, MB_POOL_MAX, 1, 2, 2, 2, 3, 2, 0, NULL, NULL),
                   MB_NO_TENSOR);
  finish_fails(n, "model 'tnet': pool 'p': input 2x2 smaller than the 3x3 window");
  /* one side too small is enough */
  for (int tall = 0; tall < 2; tall++) {
    n = infer(MB_DTYPE_F32);
    x = mb_net_input(n, "x", 32, MB_DTYPE_F32);
    assert_int_equal(
        mb_l_pool(n, "p", x, MB_POOL_MAX, 1, 2, tall ? 8 : 2, tall ? 2 : 8, 3, 1, 0, NULL, NULL),
        MB_NO_TENSOR);
    finish_fails(n, tall ? "model 'tnet': pool 'p': input 8x2 smaller than the 3x3 window"
                         : "model 'tnet': pool 'p': input 2x8 smaller than the 3x3 window");
  }
  /* bad windows and shapes name the scope and the field */
  struct {
    int64_t numel, h, k, stride, pad;
    mb_pool kind;
    const char *message;
  } bad[] = {
      {2, 1, 1, 0, 0, MB_POOL_AVG, "model 'tnet': pool 'blk.p': stride = 0 (must be > 0)"},
      {2, 1, 0, 1, 0, MB_POOL_MAX, "model 'tnet': pool 'blk.p': k = 0 (must be > 0)"},
      {2, 1, 2, 1, 2, MB_POOL_MAX,
       "model 'tnet': pool 'blk.p': pad = 2 (must be >= 0 and less than the 2x2 window)"},
      {2, 1, 2, 1, -1, MB_POOL_MAX,
       "model 'tnet': pool 'blk.p': pad = -1 (must be >= 0 and less than the 2x2 window)"},
      {2, 0, 1, 1, 0, MB_POOL_GLOBAL_AVG, "model 'tnet': pool 'blk.p': h = 0 (must be > 0)"},
      {3, 1, 1, 1, 0, MB_POOL_GLOBAL_AVG,
       "model 'tnet': generator bug: pool 'blk.p': x ('x') has 3 elements, expected batch x h "
       "x w x c = 1 x 1 x 1 x 2 = 2"},
      {2, 1, 1, 1, 0, (mb_pool)7,
       "model 'tnet': generator bug: pool 'blk.p': kind = 7 is not one of the 3 known"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    n = infer(MB_DTYPE_F32);
    x = mb_net_input(n, "x", bad[i].numel, MB_DTYPE_F32);
    mb_net_scope_push(n, "blk");
    assert_int_equal(mb_l_pool(n, "p", x, bad[i].kind, 1, 2, bad[i].h, 1, bad[i].k, bad[i].stride,
                               bad[i].pad, NULL, NULL),
                     MB_NO_TENSOR);
    finish_fails(n, bad[i].message);
  }
}

static void test_embedding_and_sparse_gradient(void **state) {
  (void)state;
  mb_net *n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  mb_tensor ids = mb_net_input(n, "ids", 10, MB_DTYPE_S32);
  mb_tensor table = mb_net_weight(n, "table", 5 * 4); /* 5 rows of 4 */
  mb_net_sparse_grad(n, table, 12);                   /* the 3 rows looked up */
  mb_tensor e = mb_l_embedding(n, "emb", ids, table, 3, 4);
  assert_int_equal(mb_net_numel(n, e), 12);
  mb_l_head(n, e, 3, 4);
  mb_workload *w = finish_ok(n);
  expect_op(w, "fwd.emb", "gather", 0);
  expect_use(w, "fwd.emb", "ids", 12, 0);   /* 3 ids of 4 bytes, not all 10 */
  expect_use(w, "fwd.emb", "table", 48, 0); /* 3 rows x 4 x 4 bytes, not the table's 80 */
  expect_op(w, "bwd.emb.dw", "scatter", 12);
  expect_buf(w, "table", 80, 0, w->n_ops - 1, true);
  expect_buf(w, "grad.table", 48, op_index(w, "bwd.emb.dw"), op_index(w, "adam.table"), false);
  expect_op(w, "adam.table", "adam", 120); /* 10 x 12 touched elements */
  expect_use(w, "adam.table", "table", 48, 48);
  expect_use(w, "adam.table", "adam_m.table", 48, 48);
  expect_buf(w, "adam_m.table", 80, 0, w->n_ops - 1, true); /* moments of the whole table */
  mb_workload_free(w);

  /* touched >= the table: dense (as is a negative count) */
  for (int k = 0; k < 2; k++) {
    n = train(MB_DTYPE_F32, MB_DTYPE_F32);
    ids = mb_net_input(n, "ids", 2, MB_DTYPE_S32);
    table = mb_net_weight(n, "table", 8);
    mb_net_sparse_grad(n, table, k ? -3 : 8);
    mb_l_head(n, mb_l_embedding(n, "emb", ids, table, 2, 4), 2, 4);
    w = finish_ok(n);
    expect_op(w, "adam.table", "adam", 80);
    expect_buf(w, "grad.table", 32, op_index(w, "bwd.emb.dw"), op_index(w, "adam.table"), false);
    mb_workload_free(w);
  }
}

static void test_slice_and_gather2(void **state) {
  (void)state;
  mb_net *n = train(MB_DTYPE_BF16, MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 4, MB_DTYPE_F32);
  mb_tensor h = mb_l_linear(n, "fc", x, 1, 4, 10, false);
  mb_tensor s = mb_l_slice(n, "cls", h, 3);
  mb_tensor g = mb_l_gather2(n, "inter", s, h, 7);
  assert_int_equal(mb_net_numel(n, s), 3);
  assert_int_equal(mb_net_numel(n, g), 7);
  mb_l_head(n, g, 1, 7);
  mb_workload *w = finish_ok(n);
  expect_op(w, "fwd.cls", "slice", 0);
  expect_use(w, "fwd.cls", "fc", 6, 0); /* 3 bf16 of 10 */
  expect_use(w, "fwd.cls", "cls", 0, 6);
  expect_op(w, "bwd.cls.dx", "pad", 10); /* accumulates onto the 10 of inter's gradient */
  expect_use(w, "bwd.cls.dx", "grad.fc.1", 0, 20);
  expect_op(w, "fwd.inter", "gather", 0);
  expect_op(w, "bwd.inter.dab", "scatter", 7);
  expect_use(w, "bwd.inter.dab", "grad.cls", 0, 6);
  expect_use(w, "bwd.inter.dab", "grad.fc", 0, 20);
  mb_workload_free(w);
}

/* ---- recurrent and graph layers ---- */

static void test_lstm(void **state) {
  (void)state;
  mb_net *n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  mb_lstm_weights wt = mb_l_lstm_weights(n, "lstm", 3, 2);
  assert_int_equal(wt.in, 3);
  assert_int_equal(wt.hidden, 2);
  assert_int_equal(mb_net_numel(n, wt.wx), 3 * 8);
  assert_int_equal(mb_net_numel(n, wt.wh), 2 * 8);
  assert_int_equal(mb_net_numel(n, wt.b), 8);
  mb_tensor h = mb_net_input(n, "h0", 4, MB_DTYPE_F32); /* batch 2 x hidden 2 */
  mb_tensor c = mb_net_input(n, "c0", 4, MB_DTYPE_F32);
  for (int t = 0; t < 2; t++) {
    char name[16];
    snprintf(name, sizeof name, "x%d", t);
    mb_tensor x = mb_net_input(n, name, 6, MB_DTYPE_F32);
    snprintf(name, sizeof name, "step%d", t);
    mb_l_lstm_cell(n, name, &wt, x, h, c, 2, &h, &c);
    assert_int_equal(mb_net_numel(n, h), 4);
    assert_int_equal(mb_net_numel(n, c), 4);
  }
  mb_l_head(n, h, 2, 2);
  mb_net_output(n, c);
  mb_workload *w = finish_ok(n);
  /* gates: 2 x batch 2 x (in 3 + hidden 2) x 4 hidden = 160, + bias 2 x 8 = 16 */
  expect_op(w, "fwd.step0.gates", "dot", 176);
  expect_op(w, "fwd.step0", "lstm-cell", 96); /* 24 x batch 2 x hidden 2 */
  expect_buf(w, "step1.h", 16, op_index(w, "fwd.step1"), op_index(w, "bwd.xent.dlogits"), false);
  expect_buf(w, "step1.c", 16, op_index(w, "fwd.step1"), w->n_ops - 1, true); /* an output */
  expect_op(w, "bwd.step1.dgates", "lstm-cell-grad", 120);                    /* 30 x 4 */
  expect_op(w, "bwd.step1.gates.dxh", "dot", 160);
  /* shared weights: the second step's weight gradient accumulates into version 1 */
  expect_op(w, "bwd.step1.gates.dw", "dot", 176);
  expect_op(w, "bwd.step0.gates.dw", "dot", 176 + 24 + 16 + 8);
  expect_use(w, "bwd.step0.gates.dw", "grad.lstm.wx.1", 0, 96);
  expect_op(w, "adam.lstm.wx", "adam", 240);
  expect_use(w, "adam.lstm.wx", "grad.lstm.wx.1", 96, 0);
  mb_workload_free(w);
}

static void test_spmm(void **state) {
  (void)state;
  mb_net *n = infer(MB_DTYPE_F32);
  mb_tensor adj = mb_net_input(n, "adj", 4 + 1 + 5 + 5, MB_DTYPE_S32);
  mb_tensor x = mb_net_input(n, "feat", 12, MB_DTYPE_F32);
  mb_tensor y = mb_l_spmm(n, "agg", adj, x, 4, 5, 3);
  assert_int_equal(mb_net_numel(n, y), 12);
  mb_net_output(n, y);
  mb_workload *w = finish_ok(n);
  expect_op(w, "fwd.agg", "spmm", 30); /* 2 x nnz 5 x dim 3 */
  expect_buf(w, "adj", 60, 0, 0, true);
  mb_workload_free(w);
}

/* ---- composites ---- */

static void test_attention(void **state) {
  (void)state;
  mb_net *n = infer(MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 8, MB_DTYPE_F32); /* batch 1 x 2 tokens x d_model 4 */
  mb_attn_cfg c = {.batch = 1,
                   .q_len = 2,
                   .kv_len = 2,
                   .d_model = 4,
                   .heads = 2,
                   .kv_heads = 1,
                   .head_dim = 2,
                   .rope_table = MB_NO_TENSOR};
  mb_tensor y = mb_l_attention(n, "attn", x, MB_NO_TENSOR, &c);
  assert_int_equal(mb_net_numel(n, y), 8);
  mb_net_output(n, y);
  mb_workload *w = finish_ok(n);
  const char *order[] = {"fwd.attn.q",     "fwd.attn.k",       "fwd.attn.v",  "fwd.attn.scores",
                         "fwd.attn.probs", "fwd.attn.context", "fwd.attn.out"};
  assert_int_equal(w->n_ops, 7);
  for (int i = 0; i < 7; i++) assert_string_equal(w->ops[i].name, order[i]);
  expect_op(w, "fwd.attn.q", "dot", 64); /* 2 x 2 rows x 4 x (2 heads x 2) */
  expect_op(w, "fwd.attn.k", "dot", 32); /* 2 x 2 x 4 x (1 kv head x 2) */
  expect_op(w, "fwd.attn.v", "dot", 32);
  expect_op(w, "fwd.attn.scores", "dot", 32);    /* 2 x 2 heads x 2 x 2 x 2 */
  expect_op(w, "fwd.attn.probs", "softmax", 40); /* 5 x (2 heads x 2 queries) x 2 keys */
  expect_op(w, "fwd.attn.context", "dot", 32);
  expect_op(w, "fwd.attn.out", "dot", 64);
  expect_buf(w, "attn.q.w", 64, 0, 0, true);
  expect_buf(w, "attn.k.w", 32, 0, 1, true); /* grouped-query: half the heads for k, v */
  expect_buf(w, "attn.scores", 32, 3, 4, false);
  expect_buf(w, "attn.out", 32, 6, 6, true);
  assert_int_equal(mb_workload_find_buffer(w, "attn.q.b"), -1);
  mb_workload_free(w);

  /* cross-attention with rotary embeddings and biases: k and v read the memory */
  n = infer(MB_DTYPE_F32);
  x = mb_net_input(n, "x", 8, MB_DTYPE_F32);
  mb_tensor mem = mb_net_input(n, "mem", 12, MB_DTYPE_F32); /* 3 tokens */
  mb_tensor rope = mb_net_input(n, "rope", 4, MB_DTYPE_F32);
  c.kv_len = 3;
  c.kv_heads = 0; /* as many as heads */
  c.bias = true;
  c.rope_table = rope;
  y = mb_l_attention(n, "x", x, mem, &c);
  mb_net_output(n, y);
  w = finish_ok(n);
  expect_op(w, "fwd.x.k", "dot", 2.0 * 3 * 4 * 4 + 3 * 4);
  expect_use(w, "fwd.x.k", "mem", 48, 0);
  expect_use(w, "fwd.x.k", "x", -1, -1);
  expect_op(w, "fwd.x.q_rope", "rope", 24); /* 3 x 8 */
  expect_op(w, "fwd.x.k_rope", "rope", 36); /* 3 x 12 */
  expect_op(w, "fwd.x.scores", "dot", 2.0 * 2 * 2 * 2 * 3);
  expect_op(w, "fwd.x.probs", "softmax", 5.0 * 4 * 3);
  expect_use(w, "fwd.x.scores", "x.q_rope", 32, 0);
  mb_workload_free(w);
}

static void test_mlp(void **state) {
  (void)state;
  mb_net *n = infer(MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 8, MB_DTYPE_F32); /* 2 rows x d 4 */
  mb_tensor y = mb_l_mlp(n, "mlp", x, 2, 4, 6, MB_ACT_GELU, false, true);
  mb_tensor z = mb_l_mlp(n, "glu", y, 2, 4, 6, MB_ACT_GELU, true, false);
  assert_int_equal(mb_net_numel(n, z), 8);
  mb_net_output(n, z);
  mb_workload *w = finish_ok(n);
  const char *order[] = {"fwd.mlp.fc1", "fwd.mlp.act", "fwd.mlp.fc2", "fwd.glu.gate",
                         "fwd.glu.up",  "fwd.glu.act", "fwd.glu.down"};
  assert_int_equal(w->n_ops, 7);
  for (int i = 0; i < 7; i++) assert_string_equal(w->ops[i].name, order[i]);
  expect_op(w, "fwd.mlp.fc1", "dot", 2.0 * 2 * 4 * 6 + 12);
  expect_op(w, "fwd.mlp.act", "gelu", 8 * 12);
  expect_op(w, "fwd.mlp.fc2", "dot", 2.0 * 2 * 6 * 4 + 8);
  expect_op(w, "fwd.glu.gate", "dot", 96);
  expect_op(w, "fwd.glu.act", "swiglu", 5 * 12);
  expect_op(w, "fwd.glu.down", "dot", 96);
  expect_buf(w, "mlp.fc1.b", 24, 0, 0, true);
  assert_int_equal(mb_workload_find_buffer(w, "glu.gate.b"), -1);
  mb_workload_free(w);
}

/* ---- scopes and names ---- */

static void test_scopes(void **state) {
  (void)state;
  mb_net *n = infer(MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_net_scope_push(n, "layer%d", 3);
  mb_tensor a = mb_l_linear(n, "fc", x, 1, 2, 2, false);
  mb_net_scope_push(n, "inner");
  mb_tensor b = mb_l_act(n, "act", a, MB_ACT_RELU);
  mb_net_scope_pop(n);
  mb_tensor c = mb_l_act(n, "act", b, MB_ACT_TANH);
  mb_net_scope_pop(n);
  mb_net_scope_pop(n); /* one pop too many: nothing happens */
  mb_tensor d = mb_l_act(n, "act", c, MB_ACT_SILU);
  mb_net_output(n, d);
  mb_workload *w = finish_ok(n);
  expect_op(w, "fwd.layer3.fc", "dot", 8);
  expect_buf(w, "layer3.fc.w", 16, 0, 0, true);
  expect_op(w, "fwd.layer3.inner.act", "relu", 2);
  expect_op(w, "fwd.layer3.act", "tanh", 8);
  expect_op(w, "fwd.act", "silu", 8);
  expect_buf(w, "act", 8, 3, 3, true);
  mb_workload_free(w);

  /* 16 levels are allowed, the 17th is refused */
  n = infer(MB_DTYPE_F32);
  for (int i = 0; i < 16; i++) mb_net_scope_push(n, "s");
  x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_net_output(n, mb_l_act(n, "a", x, MB_ACT_RELU));
  w = finish_ok(n);
  expect_buf(w, "s.s.s.s.s.s.s.s.s.s.s.s.s.s.s.s.x", 8, 0, 0, true);
  expect_op(w, "fwd.s.s.s.s.s.s.s.s.s.s.s.s.s.s.s.s.a", "relu", 2);
  mb_workload_free(w);
  n = infer(MB_DTYPE_F32);
  for (int i = 0; i < 17; i++) mb_net_scope_push(n, "s");
  finish_fails(n, "model 'tnet': generator bug: scopes nested deeper than 16");
}

static void test_names_too_long(void **state) {
  (void)state;
  /* a tensor name must leave 16 characters for "adam_m." and ".NNN": at most 111 */
  char name[200];
  memset(name, 'n', 111);
  name[111] = '\0';
  mb_net *n = infer(MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, name, 1, MB_DTYPE_F32);
  assert_true(x >= 0);
  mb_net_output(n, mb_l_act(n, "a", x, MB_ACT_RELU));
  mb_workload *w = finish_ok(n);
  assert_string_equal(w->buffers[0].name, name);
  mb_workload_free(w);
  name[111] = 'n';
  name[112] = '\0';
  n = infer(MB_DTYPE_F32);
  mb_net_scope_push(n, "blk");
  assert_int_equal(mb_net_input(n, name + 4, 1, MB_DTYPE_F32), MB_NO_TENSOR);
  char want[400];
  snprintf(want, sizeof want, "model 'tnet': name 'blk.%s' longer than 111 characters", name + 4);
  finish_fails(n, want);
  /* without a scope: the name alone, no leading '.' */
  n = infer(MB_DTYPE_F32);
  assert_int_equal(mb_net_input(n, name, 1, MB_DTYPE_F32), MB_NO_TENSOR);
  snprintf(want, sizeof want, "model 'tnet': name '%s' longer than 111 characters", name);
  finish_fails(n, want);
  /* a scope that does not fit after its parent (127 characters at most in all) */
  n = infer(MB_DTYPE_F32);
  memset(name, 'a', 100);
  name[100] = '\0';
  mb_net_scope_push(n, "%s", name);
  mb_net_scope_push(n, "%s", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
  snprintf(want, sizeof want,
           "model 'tnet': scope name '%s.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' longer than 127 "
           "characters",
           name);
  finish_fails(n, want);
  /* one scope part longer than 127 characters is refused, not cut to its first 127 (which
   * would fit as the only scope) */
  n = infer(MB_DTYPE_F32);
  memset(name, 'c', 130);
  name[130] = '\0';
  mb_net_scope_push(n, "%s", name);
  mb_net_scope_pop(n);
  x = mb_net_input(n, "x", 1, MB_DTYPE_F32);
  mb_net_output(n, mb_l_act(n, "a", x, MB_ACT_RELU));
  snprintf(want, sizeof want,
           "model 'tnet': scope name '%.127s...' (130 characters) longer than 127 characters",
           name);
  finish_fails(n, want);
  /* a layer's weight keeps the layer's whole name (it used to be cut to 100 characters) */
  n = infer(MB_DTYPE_F32);
  memset(name, 'l', 105);
  name[105] = '\0';
  x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_net_output(n, mb_l_linear(n, name, x, 1, 2, 2, true));
  w = finish_ok(n);
  char wname[200];
  snprintf(wname, sizeof wname, "%s.w", name);
  expect_buf(w, wname, 16, 0, 0, true);
  snprintf(wname, sizeof wname, "%s.b", name);
  expect_buf(w, wname, 8, 0, 0, true);
  mb_workload_free(w);
  /* ... and one whose weight name would not fit is refused naming it */
  n = infer(MB_DTYPE_F32);
  memset(name, 'm', 110);
  name[110] = '\0';
  mb_net_scope_push(n, "s");
  x = mb_net_input(n, "x", 4, MB_DTYPE_F32);
  assert_int_equal(mb_l_norm(n, name, x, 2, 2, MB_NORM_LAYER), MB_NO_TENSOR);
  snprintf(want, sizeof want, "model 'tnet': name 's.%s.scale' longer than 111 characters", name);
  finish_fails(n, want);
}

/* ---- errors ---- */

static void test_bad_parameters(void **state) {
  (void)state;
  /* a tensor of no elements names the tensor */
  mb_net *n = infer(MB_DTYPE_F32);
  mb_net_scope_push(n, "emb");
  assert_int_equal(mb_net_input(n, "ids", 0, MB_DTYPE_S32), MB_NO_TENSOR);
  finish_fails(n, "model 'tnet': tensor 'emb.ids': 0 elements (must be > 0)");
  n = infer(MB_DTYPE_F32);
  mb_tensor x = mb_net_input(n, "x", 4, MB_DTYPE_F32);
  assert_int_equal(mb_l_linear(n, "fc", x, 4, 1, -2, false), MB_NO_TENSOR);
  finish_fails(n, "model 'tnet': linear 'fc': out = -2 (must be > 0)");
  /* too many elements: named as such, not as "must be > 0" */
  n = infer(MB_DTYPE_F32);
  assert_int_equal(mb_net_input(n, "huge", INT64_MAX / 4, MB_DTYPE_F32), MB_NO_TENSOR);
  finish_fails(n,
               "model 'tnet': tensor 'huge': 2305843009213693951 elements, more than "
               "1152921504606846975");
  /* an input whose size is not rows x in */
  n = infer(MB_DTYPE_F32);
  mb_net_scope_push(n, "blk");
  x = mb_net_input(n, "x", 5, MB_DTYPE_F32);
  assert_int_equal(mb_l_linear(n, "fc", x, 2, 3, 4, true), MB_NO_TENSOR);
  finish_fails(n,
               "model 'tnet': generator bug: linear 'blk.fc': x ('blk.x') has 5 elements, "
               "expected rows x in = 2 x 3 = 6");
  /* a tied weight of the wrong size is named as the weight, not as the input */
  n = infer(MB_DTYPE_F32);
  x = mb_net_input(n, "x", 6, MB_DTYPE_F32);
  mb_tensor tied = mb_net_weight(n, "tied", 11);
  assert_int_equal(mb_l_linear_w(n, "head", x, tied, 2, 3, 4), MB_NO_TENSOR);
  finish_fails(n,
               "model 'tnet': generator bug: linear 'head': w ('tied') has 11 elements, "
               "expected in x out = 3 x 4 = 12");
  /* a tensor id that is not one of the net's */
  n = infer(MB_DTYPE_F32);
  mb_net_scope_push(n, "b");
  assert_int_equal(mb_l_act(n, "a", 42, MB_ACT_RELU), MB_NO_TENSOR);
  finish_fails(n, "model 'tnet': generator bug: invalid tensor 42 in scope 'b'");
  n = infer(MB_DTYPE_F32);
  mb_net_output(n, MB_NO_TENSOR);
  finish_fails(n, "model 'tnet': generator bug: invalid tensor -1 in scope ''");
  /* a parameter nobody reads */
  n = infer(MB_DTYPE_F32);
  x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_net_weight(n, "stray", 3);
  mb_net_output(n, mb_l_act(n, "a", x, MB_ACT_RELU));
  finish_fails(n, "model 'tnet': generator bug: tensor 'stray' is never used");
  /* training needs a loss */
  n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_net_output(n, mb_l_linear(n, "fc", x, 1, 2, 2, false));
  finish_fails(n, "model 'tnet': training workload without a loss (generator bug)");
  /* the first failure wins; layers after it return MB_NO_TENSOR */
  n = infer(MB_DTYPE_F32);
  x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_net_fail(n, "image 7x7 too small");
  mb_net_fail(n, "second");
  assert_int_equal(mb_l_act(n, "a", x, MB_ACT_RELU), MB_NO_TENSOR);
  assert_int_equal(mb_net_input(n, "y", 2, MB_DTYPE_F32), MB_NO_TENSOR);
  finish_fails(n, "model 'tnet': image 7x7 too small");
  /* a net freed without finishing (ASan checks that nothing leaks) */
  n = train(MB_DTYPE_F32, MB_DTYPE_F32);
  x = mb_net_input(n, "x", 2, MB_DTYPE_F32);
  mb_l_head(n, mb_l_linear(n, "fc", x, 1, 2, 2, true), 1, 2);
  mb_net_free(n);
  mb_net_free(NULL);
}

/* Layers that checked nothing: each refuses a size that is not positive, an operand of the
 * wrong number of elements, an out-of-range slice and an overflowing size, naming the model,
 * the layer with its scope and the field. A net builds one tensor per call in the order below
 * (ids, table are inputs). */
typedef struct bad_layer {
  const char *message;
  int kind;     /* which layer call */
  int64_t v[4]; /* its parameters */
} bad_layer;

enum {
  BL_MATMUL,
  BL_SOFTMAX,
  BL_NORM,
  BL_EMBED,
  BL_SLICE,
  BL_CONCAT,
  BL_SPMM,
  BL_HEAD,
  BL_ACT,
  BL_LSTM,
  BL_SWIGLU,
  BL_ROPE,
  BL_SCALE,
  BL_GATHER
};

static void run_bad_layer(const bad_layer *t) {
  const int64_t *v = t->v;
  mb_net *n = infer(MB_DTYPE_F32);
  mb_net_scope_push(n, "blk");
  mb_tensor x = mb_net_input(n, "x", 12, MB_DTYPE_F32); /* 12 elements: 2 x 2 x 3 */
  mb_tensor y = mb_net_input(n, "y", 6, MB_DTYPE_F32);
  mb_tensor r = MB_NO_TENSOR;
  switch (t->kind) {
    case BL_MATMUL: /* a = x, b = y */
      r = mb_l_matmul(n, "mm", x, y, v[0], v[1], v[2], v[3]);
      break;
    case BL_SOFTMAX:
      r = mb_l_softmax(n, "sm", x, v[0], v[1]);
      break;
    case BL_NORM:
      r = mb_l_norm(n, "ln", x, v[0], v[1], (mb_norm)v[2]);
      break;
    case BL_EMBED: { /* ids: v[2] elements of s32 (f32 when v[3]), table: x */
      mb_tensor ids = mb_net_input(n, "ids", v[2], v[3] ? MB_DTYPE_F32 : MB_DTYPE_S32);
      r = mb_l_embedding(n, "emb", ids, x, v[0], v[1]);
      break;
    }
    case BL_SLICE:
      r = mb_l_slice(n, "cls", x, v[0]);
      break;
    case BL_CONCAT:
      r = mb_l_concat(n, "cat", (mb_tensor[]){x, y}, (int32_t)v[0]);
      break;
    case BL_SPMM: { /* adj: v[2] elements of s32 (f32 when v[3]), x as nodes x dim */
      mb_tensor adj = mb_net_input(n, "adj", v[2], v[3] ? MB_DTYPE_F32 : MB_DTYPE_S32);
      r = mb_l_spmm(n, "agg", adj, x, v[0], 2, v[1]);
      break;
    }
    case BL_HEAD:
      mb_l_head(n, x, v[0], v[1]);
      break;
    case BL_ACT:
      r = mb_l_act(n, "a", x, (mb_act)v[0]);
      break;
    case BL_LSTM: { /* weights in v[0], hidden v[1]; x as the step input, y as h and c */
      mb_lstm_weights wt = mb_l_lstm_weights(n, "lstm", v[0], v[1]);
      mb_tensor h, c;
      mb_l_lstm_cell(n, "step", &wt, x, y, y, v[2], &h, &c);
      r = h;
      break;
    }
    case BL_SWIGLU:
      r = mb_l_swiglu(n, "sw", x, y);
      break;
    case BL_ROPE:
      r = mb_l_rope(n, "ro", y, mb_net_input(n, "tab", v[0], MB_DTYPE_F32));
      break;
    case BL_SCALE:
      r = mb_l_scale(n, "sc", x, mb_net_input(n, "s", v[0], MB_DTYPE_F32));
      break;
    case BL_GATHER:
      r = mb_l_gather2(n, "g", x, y, v[0]);
      break;
  }
  if (r != MB_NO_TENSOR) fail_msg("accepted; want '%s'", t->message);
  finish_fails(n, t->message);
}

static void test_shape_checks(void **state) {
  (void)state;
  const int64_t big = INT64_C(1) << 40;
  const bad_layer bad[] = {
      /* matmul: x is a[2, 2, 3], y is b[2, 3, 1] */
      {"model 'tnet': matmul 'blk.mm': k = 0 (must be > 0)", BL_MATMUL, {2, 2, 0, 1}},
      {"model 'tnet': matmul 'blk.mm': batch = -2 (must be > 0)", BL_MATMUL, {-2, 2, 3, 1}},
      {"model 'tnet': matmul 'blk.mm': n = 0 (must be > 0)", BL_MATMUL, {2, 2, 3, 0}},
      {"model 'tnet': generator bug: matmul 'blk.mm': a ('blk.x') has 12 elements, expected "
       "batch x m x k = 2 x 3 x 3 = 18",
       BL_MATMUL,
       {2, 3, 3, 1}},
      /* inner dimensions that do not match: a is 2 x (3 x 2), b (6) is not 2 x 2 x 2 nor
       * shared 2 x 2 matrices */
      {"model 'tnet': generator bug: matmul 'blk.mm': b ('blk.y') has 6 elements, expected "
       "batch x k x n = 2 x 2 x 2 = 8 (or a divisor of batch times k x n)",
       BL_MATMUL,
       {2, 3, 2, 2}},
      {"model 'tnet': matmul 'blk.mm': batch x m x k = 1099511627776 x 1099511627776 x 3: more "
       "than 1152921504606846975 elements",
       BL_MATMUL,
       {big, big, 3, 1}},
      /* softmax over x[2, 6] */
      {"model 'tnet': softmax 'blk.sm': cols = 0 (must be > 0)", BL_SOFTMAX, {2, 0}},
      {"model 'tnet': generator bug: softmax 'blk.sm': x ('blk.x') has 12 elements, expected "
       "rows x cols = 2 x 5 = 10",
       BL_SOFTMAX,
       {2, 5}},
      {"model 'tnet': softmax 'blk.sm': rows x cols = 1099511627776 x 1099511627776: more than "
       "1152921504606846975 elements",
       BL_SOFTMAX,
       {big, big}},
      /* norms */
      {"model 'tnet': norm 'blk.ln': features = -3 (must be > 0)", BL_NORM, {4, -3, 0}},
      {"model 'tnet': generator bug: norm 'blk.ln': x ('blk.x') has 12 elements, expected "
       "rows x features = 3 x 3 = 9",
       BL_NORM,
       {3, 3, MB_NORM_RMS}},
      {"model 'tnet': generator bug: norm 'blk.ln': kind = 3 is not one of the 3 known",
       BL_NORM,
       {4, 3, 3}},
      /* embedding from the table x (12 elements) */
      {"model 'tnet': embedding 'blk.emb': lookups = 0 (must be > 0)", BL_EMBED, {0, 4, 4, 0}},
      {"model 'tnet': embedding 'blk.emb': dim = 0 (must be > 0)", BL_EMBED, {2, 0, 4, 0}},
      {"model 'tnet': generator bug: embedding 'blk.emb': ids ('blk.ids') has 2 elements, fewer "
       "than lookups = 3",
       BL_EMBED,
       {3, 4, 2, 0}},
      {"model 'tnet': generator bug: embedding 'blk.emb': ids ('blk.ids') is f32, expected s32",
       BL_EMBED,
       {3, 4, 4, 1}},
      {"model 'tnet': generator bug: embedding 'blk.emb': table ('blk.x') has 12 elements, not "
       "rows of dim = 5",
       BL_EMBED,
       {3, 5, 4, 0}},
      {"model 'tnet': embedding 'blk.emb': lookups x dim = 1099511627776 x 1099511627776: more "
       "than 1152921504606846975 elements",
       BL_EMBED,
       {big, big, 4, 0}},
      /* slice of x */
      {"model 'tnet': slice 'blk.cls': out_numel = 0 (must be > 0)", BL_SLICE, {0}},
      {"model 'tnet': slice 'blk.cls': out_numel = 13 is more than the 12 elements of x "
       "('blk.x')",
       BL_SLICE,
       {13}},
      {"model 'tnet': generator bug: concat 'blk.cat': k = 0 parts (must be > 0)", BL_CONCAT, {0}},
      /* spmm: x as nodes x dim, nnz 2 */
      {"model 'tnet': generator bug: spmm 'blk.agg': x ('blk.x') has 12 elements, expected "
       "nodes x dim = 5 x 2 = 10",
       BL_SPMM,
       {5, 2, 10, 0}},
      {"model 'tnet': generator bug: spmm 'blk.agg': adj ('blk.adj') has 10 elements, "
       "expected nodes + 1 + 2 x nnz = 4 + 1 + 2 x 2",
       BL_SPMM,
       {4, 3, 10, 0}},
      {"model 'tnet': generator bug: spmm 'blk.agg': adj ('blk.adj') is f32, expected s32",
       BL_SPMM,
       {4, 3, 9, 1}},
      {"model 'tnet': spmm 'blk.agg': nodes = 0 (must be > 0)", BL_SPMM, {0, 3, 9, 0}},
      /* the head over x */
      {"model 'tnet': generator bug: head 'blk.xent': logits ('blk.x') has 12 elements, "
       "expected rows x classes = 5 x 2 = 10",
       BL_HEAD,
       {5, 2}},
      {"model 'tnet': head 'blk.xent': classes = 0 (must be > 0)", BL_HEAD, {5, 0}},
      {"model 'tnet': generator bug: activation 'blk.a': act = 6 is not one of the 6 known",
       BL_ACT,
       {6}},
      {"model 'tnet': generator bug: activation 'blk.a': act = -1 is not one of the 6 known",
       BL_ACT,
       {-1}},
      /* an LSTM step: x (12) is batch 3 x in 4 when in = 4; h and c (6) are batch 3 x hidden 2 */
      {"model 'tnet': lstm 'blk.lstm': hidden = 0 (must be > 0)", BL_LSTM, {4, 0, 3}},
      {"model 'tnet': generator bug: lstm cell 'blk.step': x ('blk.x') has 12 elements, "
       "expected batch x in = 3 x 3 = 9",
       BL_LSTM,
       {3, 2, 3}},
      {"model 'tnet': generator bug: lstm cell 'blk.step': h ('blk.y') has 6 elements, expected "
       "batch x hidden = 4 x 2 = 8",
       BL_LSTM,
       {3, 2, 4}},
      {"model 'tnet': generator bug: swiglu 'blk.sw': up ('blk.y') has 6 elements, gate "
       "('blk.x') 12",
       BL_SWIGLU,
       {0}},
      {"model 'tnet': generator bug: rope 'blk.ro': table ('blk.tab') has 4 elements, which do "
       "not divide the 6 of 'blk.y'",
       BL_ROPE,
       {4}},
      {"model 'tnet': generator bug: scale 'blk.sc': s ('blk.s') has 5 elements, which do not "
       "divide the 12 of 'blk.x'",
       BL_SCALE,
       {5}},
      {"model 'tnet': gather2 'blk.g': out_numel = 0 (must be > 0)", BL_GATHER, {0}},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) run_bad_layer(&bad[i]);

  /* what they accept: grouped-query sharing of b over batch (2 groups of 2 share b) */
  mb_net *n = infer(MB_DTYPE_F32);
  mb_tensor a = mb_net_input(n, "a", 4 * 1 * 3, MB_DTYPE_F32); /* batch 4, m 1, k 3 */
  mb_tensor b = mb_net_input(n, "b", 2 * 3 * 2, MB_DTYPE_F32); /* 2 matrices of 3 x 2 */
  mb_tensor c = mb_l_matmul(n, "mm", a, b, 4, 1, 3, 2);
  assert_int_equal(mb_net_numel(n, c), 8);
  mb_tensor s = mb_l_slice(n, "all", c, 8); /* the whole tensor is a slice too */
  mb_net_output(n, s);
  mb_workload *w = finish_ok(n);
  expect_op(w, "fwd.mm", "dot", 48); /* 2 x 4 x 1 x 3 x 2 */
  mb_workload_free(w);
  /* b shared by 3 products does not divide batch 4 */
  n = infer(MB_DTYPE_F32);
  a = mb_net_input(n, "a", 12, MB_DTYPE_F32);
  b = mb_net_input(n, "b", 6, MB_DTYPE_F32); /* 1 matrix of 3 x 2: fine, shared by all 4 */
  mb_net_output(n, mb_l_matmul(n, "mm", a, b, 4, 1, 3, 2));
  mb_workload_free(finish_ok(n));
  n = infer(MB_DTYPE_F32);
  a = mb_net_input(n, "a", 12, MB_DTYPE_F32);
  b = mb_net_input(n, "b", 18, MB_DTYPE_F32); /* 3 matrices for 4 products */
  assert_int_equal(mb_l_matmul(n, "mm", a, b, 4, 1, 3, 2), MB_NO_TENSOR);
  finish_fails(n,
               "model 'tnet': generator bug: matmul 'mm': b ('b') has 18 elements, expected "
               "batch x k x n = 4 x 3 x 2 = 24 (or a divisor of batch times k x n)");
}

/* The element bound (INT64_MAX / 8, so that 8-byte elements stay in int64): a tensor may have
 * exactly that many, a concatenation may not sum past it; a layer given one invalid tensor
 * stops. */
static void test_size_limits(void **state) {
  (void)state;
  const int64_t max_numel = INT64_MAX / 8;
  mb_net *n = infer(MB_DTYPE_F32);
  assert_true(mb_net_input(n, "largest", max_numel, MB_DTYPE_F32) >= 0);
  assert_int_equal(mb_net_input(n, "over", max_numel + 1, MB_DTYPE_F32), MB_NO_TENSOR);
  char want[160];
  snprintf(want, sizeof want, "model 'tnet': tensor 'over': %lld elements, more than %lld",
           (long long)(max_numel + 1), (long long)max_numel);
  finish_fails(n, want);
  n = infer(MB_DTYPE_F32);
  mb_tensor parts[2] = {mb_net_input(n, "a", max_numel / 2 + 1, MB_DTYPE_F32),
                        mb_net_input(n, "b", max_numel / 2 + 1, MB_DTYPE_F32)};
  assert_int_equal(mb_l_concat(n, "cat", parts, 2), MB_NO_TENSOR);
  snprintf(want, sizeof want, "model 'tnet': concat 'cat': parts 0..1: more than %lld elements",
           (long long)max_numel);
  finish_fails(n, want);
  for (int which = 0; which < 2; which++) {
    n = infer(MB_DTYPE_F32);
    mb_tensor a = mb_net_input(n, "a", 4, MB_DTYPE_F32);
    assert_int_equal(
        mb_l_matmul(n, "mm", which ? a : MB_NO_TENSOR, which ? MB_NO_TENSOR : a, 1, 2, 2, 2),
        MB_NO_TENSOR);
    finish_fails(n, "model 'tnet': generator bug: invalid tensor -1 in scope ''");
  }
}

static void test_window_out(void **state) {
  (void)state;
  assert_int_equal(mb_window_out(5, 3, 1, 0), 3);
  assert_int_equal(mb_window_out(5, 3, 2, 1), 3);
  assert_int_equal(mb_window_out(2, 3, 2, 0), 0); /* C would round (2 - 3) / 2 + 1 to 1 */
  assert_int_equal(mb_window_out(2, 3, 1, 1), 2);
  assert_int_equal(mb_window_out(1, 3, 2, 1), 1);
  assert_int_equal(mb_window_out(224, 11, 4, 2), 55); /* AlexNet's first layer */
  assert_int_equal(mb_window_out(0, 1, 1, 0), 0);
  assert_int_equal(mb_window_out(0, 3, 1, 2), 0); /* no input, though the padding fits a window */
  assert_int_equal(mb_window_out(4, 0, 1, 0), 0);
  assert_int_equal(mb_window_out(4, 2, 0, 0), 0);
  assert_int_equal(mb_window_out(4, 2, 1, 2), 0); /* pad must be < k */
  assert_int_equal(mb_window_out(4, 2, 1, -1), 0);
  assert_int_equal(mb_window_out(INT64_MAX, 2, 1, 1), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_linear_inference),
      cmocka_unit_test(test_inference_lifetimes_and_dtype),
      cmocka_unit_test(test_training_program),
      cmocka_unit_test(test_gradient_accumulation_and_alias),
      cmocka_unit_test(test_conv2d),
      cmocka_unit_test(test_conv2d_training_backward),
      cmocka_unit_test(test_conv2d_errors),
      cmocka_unit_test(test_norms),
      cmocka_unit_test(test_activations),
      cmocka_unit_test(test_elementwise),
      cmocka_unit_test(test_pool),
      cmocka_unit_test(test_embedding_and_sparse_gradient),
      cmocka_unit_test(test_slice_and_gather2),
      cmocka_unit_test(test_lstm),
      cmocka_unit_test(test_spmm),
      cmocka_unit_test(test_attention),
      cmocka_unit_test(test_mlp),
      cmocka_unit_test(test_scopes),
      cmocka_unit_test(test_names_too_long),
      cmocka_unit_test(test_bad_parameters),
      cmocka_unit_test(test_shape_checks),
      cmocka_unit_test(test_size_limits),
      cmocka_unit_test(test_window_out),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
