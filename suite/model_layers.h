/* Layer library of the model zoo: builds the scheduled program of a neural network (forward,
 * and for training: loss, backward in reverse order, one Adam update per weight) the way a
 * compiler schedules it, and turns it into an mb_workload.
 *
 * Why a library and not hand-written workloads: realistic live ranges come from the data flow.
 * Every forward layer emits its op at once (schedule order = call order) and, in training,
 * records on a tape which tensors its backward ops read and which gradients they write. The
 * tensors read by backward ops (saved activations) therefore stay live until their backward
 * op, which is what makes training memory-hungry.
 *
 * Naming convention (the tests and reports rely on it):
 *   ops      fwd.<scope>.<layer>   forward ops
 *            loss.<name>           the loss (training only)
 *            bwd.<scope>.<layer>.<what>   backward ops (d<input> / dw: gradient written)
 *            adam.<weight>         Adam update of one weight
 *   buffers  <scope>.<layer>       activations, weights (<layer>.w, <layer>.b), inputs
 *            grad.<tensor>[.N]     gradients (.N: N-th accumulated version, SSA style)
 *            adam_m.<w>, adam_v.<w>  Adam moments
 * Op kinds: "dot" (matrix products), "convolution" (incl. depthwise, strided, transposed and
 * the backward convolutions), elementwise kinds ("add", "mul", "relu", "gelu", ...),
 * "softmax", "layernorm", "rmsnorm", "batchnorm", "reduce-window", "gather", "scatter",
 * "concatenate", "slice", "spmm", "softmax-cross-entropy", "adam".
 *
 * FLOPs: 2 per multiply-accumulate for dot and convolution (FLOPs = 2 x MACs); elementwise
 * and normalisation ops count the per-element constants documented in model_layers.c.
 * Backward: a weighted layer emits dX and dW, each with the FLOPs of the forward product.
 *
 * Memory roles: inputs and weights are entry parameters (pinned, live from op 0); the
 * inference outputs and the loss are pinned outputs (live to the last op); in training the
 * weights and both Adam moments are pinned (they persist across steps), gradients and
 * activations are ordinary buffers whose live range runs from their defining op to their
 * last use. Ops are not fused: one op per layer primitive, like HLO before fusion. */
#ifndef MB_MODEL_LAYERS_H
#define MB_MODEL_LAYERS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "workload.h"

typedef enum mb_dtype { MB_DTYPE_F32, MB_DTYPE_BF16, MB_DTYPE_F16, MB_DTYPE_S32 } mb_dtype;

int64_t mb_dtype_size(mb_dtype t);
const char *mb_dtype_name(mb_dtype t);
/* "f32", "bf16", "f16", "s32"; false when unknown. */
bool mb_dtype_from_name(const char *s, mb_dtype *out);

/* A tensor of the network: an index into the net's tensor table (one buffer each). */
typedef int32_t mb_tensor;
#define MB_NO_TENSOR (-1)

typedef struct mb_net mb_net;

/* dtype: activations, weights and gradients; opt_dtype: Adam moments. */
mb_net *mb_net_new(const char *name, const char *source, bool training, mb_dtype dtype,
                   mb_dtype opt_dtype);
void mb_net_free(mb_net *n);
bool mb_net_training(const mb_net *n);
mb_dtype mb_net_dtype(const mb_net *n);
int64_t mb_net_numel(const mb_net *n, mb_tensor t);

/* Name scopes: names of later tensors and ops are prefixed "<scope>." (nested with '.'). */
void mb_net_scope_push(mb_net *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mb_net_scope_pop(mb_net *n);

/* An entry parameter that is data (no gradient): images, token ids, labels, adjacency. */
mb_tensor mb_net_input(mb_net *n, const char *name, int64_t numel, mb_dtype dtype);
/* A weight (entry parameter; trained with Adam in training mode). */
mb_tensor mb_net_weight(mb_net *n, const char *name, int64_t numel);
/* Marks an embedding table's gradient sparse: only `touched_numel` elements (the rows the batch
 * looks up, times the row width) are written by backward and updated by Adam, as DLRM trains
 * its tables. */
void mb_net_sparse_grad(mb_net *n, mb_tensor weight, int64_t touched_numel);
/* Marks a tensor as a program output (pinned, live to the end). */
void mb_net_output(mb_net *n, mb_tensor t);

/* Records a failure (first one wins); mb_net_finish reports it. Every layer below checks its
 * parameters and records a failure instead of emitting an op when one is wrong: a size that is
 * not positive or whose product passes 2^60 elements (named by its parameter: "matmul
 * 'l0.attn.scores': k = 0 (must be > 0)"), an operand whose number of elements is not the one
 * its parameters give ("generator bug: ... x ('l0.fc1') has 5 elements, expected rows x in =
 * 2 x 3 = 6"), an unknown enum value, a name or scope part that does not fit MB_NAME_MAX (never
 * cut short). Messages name the layer with its scope; mb_net_finish prefixes "model 'NAME': ". */
void mb_net_fail(mb_net *n, const char *message);

/* Emits backward and Adam ops (training), creates the buffers and validates the workload.
 * Consumes the net. NULL with err set on failure (allocation, or a generator bug reported as
 * an unused tensor). */
mb_workload *mb_net_finish(mb_net *n, mb_error *err);

/* ---- layers: each returns its output tensor (MB_NO_TENSOR only after an allocation failure,
 * which mb_net_finish then reports). `rows` is the number of independent vectors (tokens,
 * batch x positions, nodes). ---- */

/* y[rows, out] = x[rows, in] . W[in, out] (+ b). */
mb_tensor mb_l_linear(mb_net *n, const char *name, mb_tensor x, int64_t rows, int64_t in,
                      int64_t out, bool bias);
/* The same with an existing weight (tied embeddings); no bias. */
mb_tensor mb_l_linear_w(mb_net *n, const char *name, mb_tensor x, mb_tensor w, int64_t rows,
                        int64_t in, int64_t out);
/* Batched product of two activations: c[batch, m, n] = a[batch, m, k] . b[batch, k, n]. b may
 * instead hold batch / g matrices of k x n, each shared by g consecutive products (the k and v
 * of grouped-query attention); a must have batch x m x k elements. */
mb_tensor mb_l_matmul(mb_net *n, const char *name, mb_tensor a, mb_tensor b, int64_t batch,
                      int64_t m, int64_t k, int64_t nn);

typedef struct mb_conv_cfg {
  int64_t batch, cin, h, w, cout, kh, kw, stride, pad, groups; /* groups = cin: depthwise */
  bool bias;
  bool transposed; /* 2x2 stride-2 "up-convolution": output h*stride, w*stride */
} mb_conv_cfg;
/* 2-D convolution (NHWC); writes the output height and width to *oh, *ow (left alone on
 * failure). x must have batch x h x w x cin elements; groups (0: 1) must divide cin and
 * cout; pad must be in [0, min(kh, kw)) (a transposed convolution ignores pad). An input
 * smaller than the padded kernel is refused as "does not fit a KxK kernel". */
mb_tensor mb_l_conv2d(mb_net *n, const char *name, mb_tensor x, const mb_conv_cfg *c, int64_t *oh,
                      int64_t *ow);

/* Output positions of a window of k positions moved by `stride` over `in` positions padded
 * by `pad` on both sides: (in + 2 pad - k) / stride + 1, or 0 when the window does not fit
 * (in + 2 pad < k) or a parameter is out of range (in, k, stride > 0; pad in [0, k)). The
 * arithmetic of mb_l_conv2d and mb_l_pool, public so that a spec check agrees with them. */
int64_t mb_window_out(int64_t in, int64_t k, int64_t stride, int64_t pad);

typedef enum mb_norm { MB_NORM_LAYER, MB_NORM_RMS, MB_NORM_BATCH } mb_norm;
/* Normalisation over `features` (per row for layer/rms norm; per channel over rows for
 * batch norm) with learned scale (and shift, except rms norm). x: rows x features. */
mb_tensor mb_l_norm(mb_net *n, const char *name, mb_tensor x, int64_t rows, int64_t features,
                    mb_norm kind);

typedef enum mb_act {
  MB_ACT_RELU,
  MB_ACT_RELU6,
  MB_ACT_GELU,
  MB_ACT_SILU,
  MB_ACT_SIGMOID,
  MB_ACT_TANH
} mb_act;
mb_tensor mb_l_act(mb_net *n, const char *name, mb_tensor x, mb_act act);
/* SwiGLU: silu(gate) * up (LLaMA's MLP). */
mb_tensor mb_l_swiglu(mb_net *n, const char *name, mb_tensor gate, mb_tensor up);
/* Rotary position embedding on q or k: reads a cos/sin table (an input) whose number of
 * elements divides x's. */
mb_tensor mb_l_rope(mb_net *n, const char *name, mb_tensor x, mb_tensor table);
/* Softmax over rows of `cols` elements (scale and causal mask fused in); x: rows x cols. */
mb_tensor mb_l_softmax(mb_net *n, const char *name, mb_tensor x, int64_t rows, int64_t cols);
/* a + b, where b may be smaller and broadcast (a bias or positional embedding). */
mb_tensor mb_l_add(mb_net *n, const char *name, mb_tensor a, mb_tensor b);
/* x * s with s broadcast over x (squeeze-and-excitation scaling): s's number of elements
 * divides x's. */
mb_tensor mb_l_scale(mb_net *n, const char *name, mb_tensor x, mb_tensor s);

typedef enum mb_pool { MB_POOL_MAX, MB_POOL_AVG, MB_POOL_GLOBAL_AVG } mb_pool;
/* Pooling (NHWC); global average pooling ignores k, stride, pad and gives 1x1. x: batch x h x
 * w x c; k, stride > 0, pad in [0, k); an input smaller than the padded window is refused. */
mb_tensor mb_l_pool(mb_net *n, const char *name, mb_tensor x, mb_pool kind, int64_t batch,
                    int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad,
                    int64_t *oh, int64_t *ow);

/* Embedding lookup: `lookups` rows of `dim` from `table` (a weight of rows x dim: its number
 * of elements a multiple of dim) indexed by `ids` (s32, at least `lookups` entries, of which
 * `lookups` are read). */
mb_tensor mb_l_embedding(mb_net *n, const char *name, mb_tensor ids, mb_tensor table,
                         int64_t lookups, int64_t dim);
/* Concatenation of k > 0 tensors; the backward op slices the gradient back. */
mb_tensor mb_l_concat(mb_net *n, const char *name, const mb_tensor *parts, int32_t k);
/* A contiguous part of x (e.g. the [CLS] token of every sequence): out_numel elements, in
 * 1 .. x's number of elements. */
mb_tensor mb_l_slice(mb_net *n, const char *name, mb_tensor x, int64_t out_numel);
/* Gathers out_numel elements out of a and b (DLRM's interaction triangle + dense features). */
mb_tensor mb_l_gather2(mb_net *n, const char *name, mb_tensor a, mb_tensor b, int64_t out_numel);

/* One LSTM cell step: gates = x.Wx + h.Wh + b (one dot), then the pointwise cell. Weights are
 * shared across steps: pass the same wx/wh/b (from mb_l_lstm_weights) at every step. */
typedef struct mb_lstm_weights {
  mb_tensor wx, wh, b;
  int64_t in, hidden;
} mb_lstm_weights;
mb_lstm_weights mb_l_lstm_weights(mb_net *n, const char *name, int64_t in, int64_t hidden);
void mb_l_lstm_cell(mb_net *n, const char *name, const mb_lstm_weights *wt, mb_tensor x,
                    mb_tensor h, mb_tensor c, int64_t batch, mb_tensor *h_out, mb_tensor *c_out);

/* Sparse-dense product for graph aggregation: out[nodes, dim] = A . x, A with nnz entries
 * (adj: an s32 input holding CSR row pointers, column indices and values: nodes + 1 + 2 x nnz
 * elements). */
mb_tensor mb_l_spmm(mb_net *n, const char *name, mb_tensor adj, mb_tensor x, int64_t nodes,
                    int64_t nnz, int64_t dim);

/* ---- composites ---- */
typedef struct mb_attn_cfg {
  int64_t batch, q_len, kv_len, d_model, heads, kv_heads, head_dim;
  bool causal, bias;
  mb_tensor rope_table; /* MB_NO_TENSOR: no rotary embedding */
} mb_attn_cfg;
/* Multi-head attention: q from x, k and v from mem (x itself when mem is MB_NO_TENSOR),
 * grouped-query when kv_heads < heads, output projection back to d_model. */
mb_tensor mb_l_attention(mb_net *n, const char *name, mb_tensor x, mb_tensor mem,
                         const mb_attn_cfg *c);
/* Position-wise MLP: fc1, activation, fc2; gated (SwiGLU) when `gated`. */
mb_tensor mb_l_mlp(mb_net *n, const char *name, mb_tensor x, int64_t rows, int64_t d, int64_t ff,
                   mb_act act, bool gated, bool bias);

/* The head: in training, softmax cross-entropy against an s32 label input, the loss becomes
 * the pinned output and backward starts here; in inference the logits are the output.
 * classes == 1: sigmoid binary cross-entropy (same cost model). logits: rows x classes. */
void mb_l_head(mb_net *n, mb_tensor logits, int64_t rows, int64_t classes);

#endif
