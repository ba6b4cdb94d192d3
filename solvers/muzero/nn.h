/* mallocMuZero's neural-network core: layers, residual MLPs, losses, explicit backprop.
 *
 * Why this shape. MuZero trains three networks on K-step unrolls: representation
 * h(obs) -> s0, dynamics g(s_k, one_hot(a_k)) -> s_{k+1} (+ reward head), prediction
 * f(s_k) -> (policy logits, value), with backpropagation through time across the K
 * applications of the same dynamics weights. So parameters and activations are separated:
 *   - an mb_nn_module owns parameters (value + gradient tensors) and a flat list of layers;
 *   - an mb_nn_tape holds the activations of ONE application of a module (sized once for a
 *     maximum batch). Applying a module K times in one forward pass uses K tapes; calling
 *     mb_nn_backward on them in reverse order accumulates every application's contribution
 *     into the module's parameter gradients (gradients are added, never overwritten, until
 *     mb_nn_zero_grad).
 * Backprop is explicit: the caller passes the gradient of the loss with respect to a module's
 * output and receives the gradient with respect to its input, so heads, concatenation with the
 * action and MuZero's gradient scaling between unroll steps are plain tensor operations
 * (mb_nn_scale_gradient, mb_tensor_get_cols). No global state; forward and backward never
 * allocate.
 *
 * A K-step training unroll (tests/test_nn.c, test_grad_unroll, checks exactly this):
 *   s = forward(repr_tape, obs)
 *   for k = 0..K-1: forward(pred_tape[k], s); in = [s | one_hot(a_k)]  (set_cols, set_onehot)
 *                   s = forward(dyn_tape[k], in)
 *   forward(pred_tape[K], s)
 *   zero_grad(all); carry = 0
 *   for k = K..0:   backward(pred_tape[k], d loss_k / d pred output, ds);  ds += carry
 *                   if k == 0: break
 *                   backward(dyn_tape[k-1], ds, din); carry = get_cols(din, 0, W) * 0.5
 *   backward(repr_tape, ds, NULL)    (then clip_grad_norm and adam_step)
 *
 * Layers (a module is a sequence of them; widths are inferred from the previous layer):
 *   linear      y = x W + b, W is in x out (He-uniform, Xavier-uniform or zero init)
 *   relu        y = max(x, 0)
 *   layernorm   y = gain * (x - mean) / sqrt(var + 1e-5) + shift, per sample
 *   minmax      y = (x - min x) / max(max x - min x, 1e-5) per sample: MuZero's hidden-state
 *               scaling to [0, 1], with its exact (sub)gradient through argmin and argmax
 *   simnorm     a softmax over each group of MB_NN_SIMNORM_GROUP consecutive features: the
 *               simplicial normalisation of TD-MPC2's latent states (Lavoie et al. 2022), an
 *               alternative to minmax (mb_latent_norm; measured in datasets/agents/EXPERIMENTS.md)
 *   resblock    y = x + Linear(ReLU(LN(Linear(ReLU(LN(x)))))) (pre-activation, width kept);
 *               stored as the marker layers res_begin ... res_end around 6 primitive layers
 * Parameter names are "l<layer index>.<weight|bias|gain|shift>"; the checkpoint format
 * (nn_io.h) and error messages use them.
 *
 * Losses return scale * sum over samples of weight[b] * loss_b (weight NULL = all 1) and write
 * d(that)/d(input) into a gradient tensor (overwritten; NULL to skip). Pass scale = 1/B for a
 * batch mean. Value and reward heads use MuZero's categorical representation: the scalar is
 * squashed by h(x) = sign(x)(sqrt(|x|+1)-1) + eps x (eps = 0.001), two-hot encoded on a
 * uniform support, and fitted with softmax cross-entropy; mb_categorical_decode inverts it. */
#ifndef MB_NN_H
#define MB_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "rng.h"
#include "tensor.h"

typedef enum mb_layer_kind {
  MB_LAYER_LINEAR,
  MB_LAYER_RELU,
  MB_LAYER_LAYERNORM,
  MB_LAYER_MINMAX,
  MB_LAYER_SIMNORM,
  MB_LAYER_RES_BEGIN,
  MB_LAYER_RES_END,
} mb_layer_kind;

typedef enum mb_init {
  MB_INIT_HE,     /* uniform(+-sqrt(6 / fan_in)): layers followed by ReLU */
  MB_INIT_XAVIER, /* uniform(+-sqrt(6 / (fan_in + fan_out))): output layers */
  MB_INIT_ZERO,   /* all zero: e.g. MuZero-style zero-initialised value/reward heads */
} mb_init;

/* How a latent network scales its output: MuZero's min-max to [0, 1] (the default) or SimNorm.
 * The values are stored in agent checkpoints (cfg.latent_norm): do not renumber. */
typedef enum mb_latent_norm {
  MB_LATENT_MINMAX = 0,
  MB_LATENT_SIMNORM = 1,
} mb_latent_norm;
#define MB_NN_SIMNORM_GROUP 8
/* "minmax" or "simnorm" (as `train --latent-norm` takes them), "unknown" for another value. */
const char *mb_latent_norm_name(mb_latent_norm norm);

typedef struct mb_nn_param {
  char name[32];   /* "l3.weight" */
  mb_tensor value; /* linear weight: in x out; bias, gain, shift: 1 x width */
  mb_tensor grad;  /* same shape; accumulated by mb_nn_backward */
  bool decay;      /* AdamW weight decay applies (linear weights only) */
} mb_nn_param;

typedef struct mb_nn_layer {
  mb_layer_kind kind;
  int32_t in, out; /* widths */
  int32_t param;   /* index of the layer's first parameter, -1 when it has none */
  int32_t partner; /* res_end: index of its res_begin (the skip's input); else -1 */
  mb_init init;    /* linear only */
} mb_nn_layer;

typedef struct mb_nn_module {
  char name[32]; /* the HDF5 group name in checkpoints: [A-Za-z0-9_-]+ */
  int32_t in_dim, out_dim;
  int32_t n_layers, cap_layers;
  mb_nn_layer *layers;
  int32_t n_params, cap_params;
  mb_nn_param *params; /* stable once the module is built: tapes and optimisers point here */
  int32_t open_res;    /* index of an unclosed res_begin, -1 when none */
} mb_nn_module;

/* ---- building a module: init, add layers, then mb_nn_module_init_params ---- */
bool mb_nn_module_create(mb_nn_module *m, const char *name, int32_t in_dim, mb_error *err);
void mb_nn_module_free(mb_nn_module *m);
bool mb_nn_add_linear(mb_nn_module *m, int32_t out, mb_init init, mb_error *err);
bool mb_nn_add_relu(mb_nn_module *m, mb_error *err);
bool mb_nn_add_layernorm(mb_nn_module *m, mb_error *err);
bool mb_nn_add_minmax(mb_nn_module *m, mb_error *err);
/* A softmax over each group of MB_NN_SIMNORM_GROUP features; the width must be a multiple of it. */
bool mb_nn_add_simnorm(mb_nn_module *m, mb_error *err);
bool mb_nn_add_latent_norm(mb_nn_module *m, mb_latent_norm norm, mb_error *err);
/* Adds a whole pre-activation residual block (both linears He-initialised). */
bool mb_nn_add_resblock(mb_nn_module *m, mb_error *err);
/* The networks MuZero uses: Linear(in -> width) [He], ReLU, `blocks` residual blocks, then
 * either a minmax (out == 0: a latent of size width) or LN, ReLU, Linear(width -> out) with
 * `out_init` (a head). */
bool mb_nn_build_resmlp(mb_nn_module *m, const char *name, int32_t in, int32_t width,
                        int32_t blocks, int32_t out, mb_init out_init, mb_error *err);
/* A state network: mb_nn_build_resmlp's trunk (width, blocks), then, when state != width, LN,
 * ReLU, Linear(width -> state) [He], and the latent scaling `norm`: a latent of `state` floats.
 * With state == width and minmax it is mb_nn_build_resmlp's latent network (out 0), layer for
 * layer, so that its checkpoints load either way. */
bool mb_nn_build_state_resmlp(mb_nn_module *m, const char *name, int32_t in, int32_t width,
                              int32_t blocks, int32_t state, mb_latent_norm norm, mb_error *err);
/* (Re)initialises every parameter from rng (deterministic: same rng state, same weights);
 * biases and shifts 0, gains 1. Clears gradients. */
void mb_nn_module_init_params(mb_nn_module *m, mb_rng *rng);
void mb_nn_zero_grad(mb_nn_module *m);
int64_t mb_nn_param_count(const mb_nn_module *m);
/* FLOPs of the matrix products (2 per multiply-add) of one application at `batch`: forward
 * only, or forward + backward (backward skips the input gradient of the first layer when
 * need_input_grad is false). Elementwise work is not counted. */
int64_t mb_nn_gemm_flops(const mb_nn_module *m, int32_t batch, bool backward, bool need_input_grad);
/* The layer sequence on one line into out (size n), e.g. "repr: linear 12->8 relu [res ln relu
 * linear 8->8 ln relu linear 8->8 ] minmax" (stored in checkpoints as the architecture). */
void mb_nn_describe(const mb_nn_module *m, char *out, int n);

/* ---- one application: tape, forward, backward ---- */
typedef struct mb_nn_cache {
  mb_tensor out;  /* the layer's output (B x out) */
  mb_tensor aux;  /* layernorm: x_hat (B x width); minmax: 1 / denominator (B x 1) */
  mb_tensor aux2; /* layernorm: 1 / std (B x 1) */
  int32_t *idx;   /* minmax: argmin, argmax per row (2B), or -1 when the range was clamped */
} mb_nn_cache;

typedef struct mb_nn_tape {
  const mb_nn_module *module;
  int32_t max_batch, batch;
  mb_tensor input;    /* copy of the input of the last forward */
  mb_nn_cache *cache; /* one per layer */
  mb_tensor grad[2];  /* backward ping-pong buffers (max_batch x widest layer) */
  mb_tensor stash;    /* residual branch gradient */
  bool gemv;          /* batch 1 through sgemv (mb_nn_tape_use_gemv); false at creation */
} mb_nn_tape;

bool mb_nn_tape_create(mb_nn_tape *t, const mb_nn_module *m, int32_t max_batch, mb_error *err);
void mb_nn_tape_free(mb_nn_tape *t);
/* Whether a forward at batch 1 multiplies by cblas_sgemv instead of cblas_sgemm. The two agree
 * to float rounding, not to the bit: sgemv is about 3x faster at batch 1 (sgemm packs the whole
 * weight matrix at every call) but sums in another order. Training and self-play keep sgemm
 * (training is chaotic in the last bits, and every agent documented was trained with it);
 * playing a trained agent may use sgemv (tensor.h, "Determinism": deterministic either way). */
static inline void mb_nn_tape_use_gemv(mb_nn_tape *t, bool on) { t->gemv = on; }
/* Runs the module on x (batch x in_dim, batch <= max_batch) and records activations in the
 * tape. Returns the output (owned by the tape, valid until its next forward), or NULL. */
const mb_tensor *mb_nn_forward(mb_nn_tape *t, const mb_tensor *x, mb_error *err);
/* The output of the tape's last forward (what mb_nn_forward returned). */
static inline const mb_tensor *mb_nn_tape_output(const mb_nn_tape *t) {
  return &t->cache[t->module->n_layers - 1].out;
}
/* Backpropagates dy (d loss / d output of the tape's last forward, batch x out_dim) through
 * that application: adds parameter gradients into the module and, when dx is not NULL,
 * writes d loss / d input into dx (reshaped to batch x in_dim). */
bool mb_nn_backward(mb_nn_tape *t, const mb_tensor *dy, mb_tensor *dx, mb_error *err);
/* MuZero's scale_gradient(x, s): identity forward, multiplies the gradient flowing back
 * through it by s. With explicit backprop it is applied to the gradient tensor. */
static inline void mb_nn_scale_gradient(mb_tensor *grad, float s) { mb_tensor_scale(grad, s); }

/* ---- losses ---- */
/* Softmax cross-entropy against target distributions (rows of target, B x A, each summing
 * to 1). mask (B x A bytes, NULL = all legal): illegal logits are excluded from the softmax
 * (as if -inf) and get gradient 0; a target with mass on an illegal action, a row with no
 * legal action or a negative target is an error naming the row and column. */
bool mb_loss_softmax_xent(const mb_tensor *logits, const mb_tensor *target, const uint8_t *mask,
                          const float *weight, float scale, double *loss, mb_tensor *dlogits,
                          mb_error *err);
/* Squared error: loss_b = sum_j (pred[b,j] - target[b,j])^2. */
bool mb_loss_mse(const mb_tensor *pred, const mb_tensor *target, const float *weight, float scale,
                 double *loss, mb_tensor *dpred, mb_error *err);

/* MuZero's invertible value transform and its exact inverse (computed in double). */
#define MB_VALUE_EPS 0.001
double mb_value_transform(double x);
double mb_value_inverse(double y);

/* A uniform categorical support: n atoms from lo to hi (n >= 2, lo < hi). */
typedef struct mb_support {
  int32_t n;
  float lo, hi;
} mb_support;
bool mb_support_check(const mb_support *s, mb_error *err);
static inline float mb_support_atom(const mb_support *s, int32_t i) {
  return s->lo + (s->hi - s->lo) * (float)i / (float)(s->n - 1);
}
/* Two-hot encoding of y (clamped to [lo, hi]) into probs[n]: mass on the two neighbouring
 * atoms so that the expectation is y. Returns the clamped value. */
float mb_twohot_encode(const mb_support *s, float y, float *probs);
/* Expectation sum_i probs[i] * atom_i. */
float mb_twohot_decode(const mb_support *s, const float *probs);
/* Scalar prediction of a categorical head: inverse(E_softmax(logits)[atom]) for each row of
 * logits (B x n) into out[B]. */
bool mb_categorical_decode(const mb_support *s, const mb_tensor *logits, float *out, mb_error *err);
/* Categorical value/reward loss: cross-entropy between softmax(logits) (B x n) and the
 * two-hot encoding of mb_value_transform(target[b]). */
bool mb_loss_categorical(const mb_support *s, const mb_tensor *logits, const float *target,
                         const float *weight, float scale, double *loss, mb_tensor *dlogits,
                         mb_error *err);

#endif
