/* AdamW (Adam with decoupled weight decay) and global-norm gradient clipping over the
 * parameters of several modules (MuZero trains representation, dynamics, prediction and their
 * heads as one model with one optimiser).
 *
 * Update per step t (Loshchilov & Hutter, "Decoupled Weight Decay Regularization"):
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p -= lr * weight_decay * p            (only parameters with decay set: linear weights)
 *   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
 * The moments are float tensors shaped like the parameters; bias corrections in double. The
 * optimiser keeps pointers to the modules' parameters: build the modules completely first and
 * keep them alive and unmoved while the optimiser exists. */
#ifndef MB_ADAM_H
#define MB_ADAM_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "nn.h"
#include "tensor.h"

typedef struct mb_adam_config {
  double lr;           /* learning rate (callers may change cfg.lr between steps: schedules) */
  double beta1, beta2; /* moment decay rates */
  double eps;
  double weight_decay; /* decoupled, multiplied by lr */
} mb_adam_config;

typedef struct mb_adam_slot {
  const char *module; /* owning module's name */
  mb_nn_param *param;
  mb_tensor m, v;
  bool frozen; /* not updated (nor decayed), and left out of the gradient norm */
} mb_adam_slot;

typedef struct mb_adam {
  mb_adam_config cfg;
  int64_t step; /* updates done */
  int32_t n;
  mb_adam_slot *slots;
} mb_adam;

/* lr 1e-3, betas 0.9 / 0.999, eps 1e-8, weight decay 1e-4. */
void mb_adam_config_default(mb_adam_config *cfg);
/* An optimiser over every parameter of modules[0..n_modules) (module names must differ). */
bool mb_adam_create(mb_adam *opt, mb_nn_module *const *modules, int32_t n_modules,
                    const mb_adam_config *cfg, mb_error *err);
void mb_adam_free(mb_adam *opt);
/* Freezes every parameter of the module named `module`: later steps leave it as it is (a
 * resumed optimiser's moments would otherwise keep moving it with zero gradients), and the
 * gradient norm and clipping ignore it. An error names a module that is not optimised here. */
bool mb_adam_freeze(mb_adam *opt, const char *module, mb_error *err);
/* One AdamW update from the accumulated gradients (which are left as they are: zero them
 * with mb_nn_zero_grad before the next accumulation). False on a non-finite gradient, naming
 * the parameter, without changing any parameter. */
bool mb_adam_step(mb_adam *opt, mb_error *err);
/* Global L2 norm of all gradients but the frozen ones (in double). */
double mb_adam_grad_norm(const mb_adam *opt);
/* Scales all gradients by max_norm / norm when the global norm exceeds max_norm (> 0).
 * Returns the norm before clipping. */
double mb_adam_clip_grad_norm(mb_adam *opt, double max_norm);

#endif
