/* mallocMuZero's tree search: Gumbel MuZero (Danihelka et al., "Policy improvement by planning
 * with Gumbel", ICLR 2022) and, as an option, MuZero's pUCT with Dirichlet root noise.
 *
 * Why callbacks. The same search runs in two models: the learned one (dynamics network: latent
 * states, predicted rewards, no exact legality below the root) for `mallocmuzero`, and the real
 * game (mb_game snapshot/restore: exact rewards and masks at every node) for
 * `mallocmuzero-exact`, and the tests drive it with hand-made trees whose values are known. The
 * search owns the tree statistics; the model (an mb_search_model) owns whatever a node needs
 * (a latent vector, a path to replay) and is asked to evaluate one new node per simulation.
 *
 * Gumbel root (default). Draw g(a) ~ Gumbel for the legal root actions, keep the m actions with
 * the largest g(a) + logits(a), and spend the simulation budget by sequential halving: in each of
 * ceil(log2 m) phases every surviving action gets an equal share of visits, then the better half
 * by g + logits + sigma(q^) survives. Visits always sum to the budget exactly. The action played
 * is the survivor (most visits) with the largest g + logits + sigma(q^). Interior nodes select
 * deterministically argmax_a pi'(a) - N(a) / (1 + sum_b N(b)), pi' = softmax(logits +
 * sigma(completed q^)). The policy target is pi' at the root (0 on illegal actions).
 *   sigma(q) = (c_visit + max_b N(b)) * c_scale * q;  completed q: Q(a) for visited actions,
 *   else the mixed value (v + sum_b N(b) / sum_{b visited} pi(b) * sum_{b visited} pi(b) Q(b)) /
 *   (1 + sum_b N(b)) (mctx's qtransform_completed_by_mix_value).
 * Normalisation of values to [0, 1]: the Gumbel rules rescale a node's completed Q by min-max
 * over that node's legal actions (mctx's rescale_values). A tree-wide min-max (MuZero's
 * MinMaxStats) was measured first and lost most of the contrast between root actions as the tree
 * grew (their differences are small next to the spread of values across depths): returns fell
 * back to the raw policy's at 8 and 32 simulations. The tree-wide rule stays available
 * (cfg.rescale = MB_Q_TREE): in the learned model per-node contrast also amplifies model error
 * (`bench muzero --returns --rescale node|tree` compares them). pUCT uses the tree-wide min-max
 * (0 while the tree has seen a single value), as in MuZero. Discount gamma (1: episodic).
 *
 * Masks. The root always uses the exact legal mask. Below the root a model may give a mask (the
 * exact game does); the learned model gives none, so every action is allowed there: its policy
 * head is trained with zero target mass on illegal actions, which pushes their prior down.
 *
 * pUCT (option, `train --search puct`). Root prior mixed with Dirichlet(alpha) noise on legal
 * actions (fraction eps); select argmax Q^(a) + pi(a) sqrt(1 + sum N) / (1 + N(a)) (c1 +
 * log((sum N + c2 + 1) / c2)), an unvisited child's Q^ being its parent's value (both as
 * mctx; MuZero's pseudocode has sqrt(sum N) and 0, the tree's minimum, for the unvisited: with
 * 8 simulations every visit then went to the first child tried, the policy target was one-hot
 * on best fit or slow, and a trained policy stayed the untrained one); play a move sampled by
 * visit counts at temperature 1 (self-play, as MuZero's first moves) or the most visited one
 * (`sample` false; among equally visited ones the higher prior, so that 2 simulations, which
 * often split 1-1, play the prior's move); policy target = visit distribution.
 *
 * mb_search_config_default gives self-play's exploration for either kind (Gumbel noise; pUCT's
 * root noise and sampling), mb_search_config_evaluation none.
 *
 * No allocation after mb_search_create; one search must not be used from two threads. */
#ifndef MB_SEARCH_H
#define MB_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "rng.h"

typedef enum mb_search_kind { MB_SEARCH_GUMBEL = 0, MB_SEARCH_PUCT } mb_search_kind;
/* How the Gumbel rules normalise a node's completed Q (see above): per node (default) or by the
 * tree-wide min-max. */
typedef enum mb_q_rescale { MB_Q_NODE = 0, MB_Q_TREE } mb_q_rescale;

/* Longest leaf rollout a config may ask for. */
#define MB_SEARCH_MAX_LEAF_ROLLOUT 100000

typedef struct mb_search_config {
  mb_search_kind kind;
  int32_t simulations;     /* budget per move, >= 1 */
  int32_t max_considered;  /* Gumbel: m, actions sampled at the root (default 16) */
  double c_visit, c_scale; /* Gumbel sigma: 50, 0.1 */
  double gamma;            /* discount, (0, 1]; default 1 */
  bool gumbel_noise;       /* Gumbel: sample g (self-play); false: g = 0 (evaluation) */
  mb_q_rescale rescale;    /* Gumbel: MB_Q_NODE (default) or MB_Q_TREE */
  double q_min_range;      /* Gumbel, per node: min-max divides by max(hi - lo, this); default
                              1e-8 (mctx), MB_SEARCH_EVAL_Q_MIN_RANGE at evaluation. A larger
                              floor keeps Q differences below it from outweighing the prior
                              (`bench muzero --q-range`) */
  int32_t max_depth;       /* a node this deep is a leaf: simulations reaching it again back up
                              its value without expanding below it; 0 (default): no limit */
  int32_t leaf_rollout;    /* read by the model, not the search (mb_player): a new node's value
                              is the return of this many greedy raw-policy steps played from it
                              in the model searched plus the value network where they stop,
                              instead of the value network alone; 0 (default): MuZero's */
  double dirichlet_alpha, dirichlet_frac; /* pUCT root noise: 0.3, 0.25 (frac 0: none) */
  double c1, c2;                          /* pUCT: 1.25, 19652 */
  bool sample; /* pUCT: sample the move by visit counts (default true); false: most visited */
} mb_search_config;

void mb_search_config_default(mb_search_config *c);
/* The setting the mallocmuzero solvers play with (and `bench muzero --returns` measures by
 * default): the defaults above with Gumbel noise off, MB_SEARCH_EVAL_SIMULATIONS simulations and
 * c_scale MB_SEARCH_EVAL_C_SCALE. Chosen on the catalogue's train split only (the test split is
 * never used to choose), `mallocbench bench muzero --agent A --returns 0,2,8,32 --split train
 * --c-scale X`: c_scale 0.1 lets a trained policy's sharp logits override the search's Q almost
 * always (exact game, 45-minute agent, 32 simulations: 0.1098 vs 0.1096 for the raw policy),
 * c_scale 1 makes the search count (0.1218; 3 and 10: 0.1218, 0.1225, a plateau). The training
 * self-play keeps Gumbel MuZero's 0.1. With c_scale 1, sigma gives a node's best child at least
 * 50 logits more than its worst whatever their Q spread, so value-network noise between
 * siblings of equal reward decided the move; q_min_range MB_SEARCH_EVAL_Q_MIN_RANGE (in units
 * of the return scale, ~ one episode's return) scales spreads below it down instead. Measured
 * on the train split with three sibling-transition agents (42k, 100k, 200k updates; `--q-range
 * X`): learned-model search at 32 simulations 0.1053 -> 0.1073, 0.1046 -> 0.1076, 0.1056 ->
 * 0.1082; exact game 0.1193 -> 0.1222, 0.1204 -> 0.1203 (datasets/agents/EXPERIMENTS.md). */
#define MB_SEARCH_EVAL_SIMULATIONS 32
#define MB_SEARCH_EVAL_C_SCALE 1.0
#define MB_SEARCH_EVAL_Q_MIN_RANGE 0.1
/* Leaf rollouts at evaluation: in the real game (exact true) a new node's value is the return of
 * MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT greedy raw-policy steps from it plus the value network where
 * they stop, AlphaGo's leaf evaluation; in the learned model none (its value network alone,
 * MuZero's). Measured with the default agent, `bench muzero --returns 0,2,8,32 --leaf-rollout D`
 * (datasets/agents/EXPERIMENTS.md, "Leaf rollouts"): in the real game they make search rise with
 * the budget and beat best fit on the packing validation set, where the value network alone made
 * search worse than the raw policy; in the learned model they make it worse at every depth. 64
 * steps keep the cost per decision bounded (simulations x 64 steps), so the largest catalogue
 * workloads stay within the solvers' time budget. */
#define MB_SEARCH_EVAL_EXACT_LEAF_ROLLOUT 64
void mb_search_config_evaluation(mb_search_config *c, bool exact);
bool mb_search_config_check(const mb_search_config *c, mb_error *err);
/* "gumbel" or "puct". */
bool mb_search_kind_parse(const char *s, mb_search_kind *out);

/* What the model returns for one node. logits and mask have A entries. */
typedef struct mb_search_eval {
  float *logits; /* prior logits (written by the model) */
  uint8_t *mask; /* legal actions (written by the model when it knows them; see has_mask) */
  bool has_mask; /* the model wrote an exact mask */
  float value;   /* predicted value of the node (0 is used for terminal nodes) */
  float reward;  /* reward of the edge into the node (ignored at the root) */
  bool terminal; /* the node ends the episode: no children */
} mb_search_eval;

/* The model the search plans in. expand() evaluates node `node`: the root (parent -1, action
 * -1) or the child of `parent` by `action`; path[0..depth) are the actions from the root to the
 * node (depth 0 at the root). Nodes are numbered 0 (root), 1, 2, ... in expansion order within
 * one search, so a model can keep per-node data in arrays indexed by node. */
typedef struct mb_search_model {
  void *ctx;
  bool (*expand)(void *ctx, int32_t node, int32_t parent, int32_t action, const int32_t *path,
                 int32_t depth, mb_search_eval *out, mb_error *err);
} mb_search_model;

/* The result of one search. Arrays have A entries and belong to the search (valid until the
 * next run). */
typedef struct mb_search_result {
  int32_t action;        /* the move to play */
  const float *policy;   /* improved policy target (sums to 1, 0 on illegal actions) */
  const int32_t *visits; /* root visit counts (sum = simulations) */
  float root_value;      /* network value at the root */
  float search_value;    /* mean value of the root after the search: (v + sum N Q) / (1 + sum N) */
  int32_t nodes;         /* nodes expanded (= simulations + 1 unless terminal leaves repeat) */
} mb_search_result;

typedef struct mb_search mb_search;

/* A search for A actions and up to max_simulations per move. */
mb_search *mb_search_create(int32_t n_actions, int32_t max_simulations, mb_error *err);
void mb_search_free(mb_search *s);
/* Searches from the root whose exact legal mask is root_mask (A bytes, at least one set).
 * cfg->simulations <= the max given at creation. */
bool mb_search_run(mb_search *s, const mb_search_config *cfg, const mb_search_model *model,
                   const uint8_t *root_mask, mb_rng *rng, mb_search_result *out, mb_error *err);

/* What the last run's tree says beyond its result (for training on the search's own paths).
 * mb_search_best_alternative: the visited root action other than `taken` whose edge has the
 * highest mean backed-up return Q (ties: the lower index), -1 when there is none.
 * mb_search_tree_path: path[0] = action, then from its node down the most visited child at
 * each step (ties: higher Q, then the lower index) while one was visited, at most max_len
 * actions; returns the length (1 when the action's node was never expanded). */
int32_t mb_search_best_alternative(const mb_search *s, int32_t taken);
int32_t mb_search_tree_path(const mb_search *s, int32_t action, int32_t *path, int32_t max_len);

/* The Gumbel sequential-halving schedule, exposed for tests: fills visits_at[0..n) with the
 * visit count the considered action chosen at simulation i is due to reach (mctx's
 * get_sequence_of_considered_visits); returns false when n or m < 1. */
bool mb_search_halving_schedule(int32_t m, int32_t n, int32_t *visits_at);

#endif
