/* The mallocMuZero player: plays the mallocGame with an agent, by search in its learned model,
 * by search in the real game (mallocmuzero-exact), or by the raw policy network alone. Used by
 * the solvers, self-play, evaluation and the diagnostics. */
#ifndef MB_PLAYER_H
#define MB_PLAYER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent.h"
#include "error.h"
#include "game.h"
#include "hardware.h"
#include "rng.h"
#include "search.h"
#include "workload.h"

/* Reward normalisation. Workloads differ by orders of magnitude in how much one decision can
 * save (a 30-buffer program vs a 5000-buffer one), so the agent works with rewards divided by
 * R_ref = (sum of the standalone benefits of the episode's visitable buffers) / T_slow, a
 * property of the workload alone (no solver involved): normalised returns are O(1) everywhere.
 * Search runs in normalised units (learned model and exact game alike); reported returns are
 * always the game's true (T_slow - T) / T_slow. Returns 1 when the sum is 0. */
double mb_return_scale(const mb_workload *w, const mb_hardware *hw, const mb_game *g);

/* A player: the agent's networks, a search, and the buffers one decision needs, so that playing
 * allocates nothing per move. It plays with the search in the learned model (exact false) or in
 * the real game (exact true, mallocmuzero-exact), or with the raw policy network alone. The agent
 * must outlive the player.
 * Leaf values: the value network's, or with scfg->leaf_rollout > 0 a rollout of the raw policy
 * (greedy) from the new node: in the real game up to leaf_rollout steps with exact rewards and
 * masks, then the value network (0 at the episode's end), the game restored afterwards; in the
 * learned model up to leaf_rollout dynamics steps (and no further than the buffers the real
 * episode has left to visit, an upper bound on its decisions left, since the learned model has no
 * end) with predicted rewards, then the value head.
 * The search sees only the resulting value. */
typedef struct mb_player mb_player;
/* A player for searches of up to max_simulations per decision. */
mb_player *mb_player_create(const mb_agent *ag, int32_t max_simulations, mb_error *err);
/* Plays with the networks' sgemv numerics (mb_agent_infer_use_gemv: about 3x faster, equal to
 * float rounding); a new player has sgemm's, those of training. The solvers set it; self-play
 * never does, so that training reproduces the agents documented. */
void mb_player_use_gemv(mb_player *p, bool on);
/* Sets the reward normalisation of the next episodes (mb_return_scale of their workload; the
 * default is 1). */
void mb_player_set_scale(mb_player *p, double return_scale);
/* Oracle parts, a diagnostic (the solvers never set one): in the learned model's search, the
 * parts named come from the real game at every node whose path from the root is legal there
 * (replayed from a snapshot, as the exact search does), the rest from the learned model. None
 * (0, the default) is MuZero's search; all of them is mallocmuzero-exact's, move for move. What
 * the search gains from one part is what the learned model's version of it costs
 * (`bench muzero --returns LIST --oracle PARTS`). */
enum {
  MB_ORACLE_VALUES = 1,     /* v(h(o)) of the real observation (0 at the real end) for v^(g^k) */
  MB_ORACLE_PRIORS = 2,     /* the policy logits of the real observation */
  MB_ORACLE_REWARDS = 4,    /* the true reward of the edge into the node */
  MB_ORACLE_MASKS = 8,      /* the exact legal mask (the learned model allows every action) */
  MB_ORACLE_TERMINALS = 16, /* the episode's real end: no children */
  MB_ORACLE_ALL = 31
};
void mb_player_set_oracle(mb_player *p, unsigned parts);
/* How far the oracle's values and rewards move the learned model's toward the real game's:
 * x = (1 - weight) x^ + weight x_real, so that weight w shrinks the learned model's error at
 * those nodes by the factor 1 - w (1, the default: replaced; priors, masks and ends are always
 * replaced). How precise the learned model would have to be for its search to gain. */
void mb_player_set_oracle_weight(mb_player *p, double weight);
/* Nodes below the root that learned-model searches expanded with an oracle set (since
 * creation), and how many of them lie on a path that the real game does not allow or that runs
 * past its end (the learned model allows both; no oracle part applies there). */
void mb_player_oracle_stats(const mb_player *p, int64_t *nodes, int64_t *off_game);
void mb_player_free(mb_player *p);
/* Plays one whole episode of `g` (reset first) with search. Stops searching when `deadline`
 * (mb_wall_seconds(), clock.h; <= 0: none) passes and finishes with the raw policy; *searched
 * counts the searched decisions. The final state stays in g. */
bool mb_player_play(mb_player *p, mb_game *g, const mb_search_config *scfg, bool exact,
                    double deadline, mb_rng *rng, int64_t *searched, int64_t *decisions,
                    mb_error *err);
/* One searched decision at g's current state (g is left there): the action the search plays. */
bool mb_player_decide(mb_player *p, mb_game *g, const mb_search_config *scfg, bool exact,
                      mb_rng *rng, int32_t *action, mb_error *err);
/* One decision with what self-play stores of it. The pointers are into the player: valid until
 * its next decision (mb_player_raw_action leaves them alone). */
typedef struct mb_player_decision {
  int32_t action;
  float value;         /* the search's value of the state (mean over its tree), or the value
                          network's when not searched */
  const float *obs;    /* the observation at the state decided on */
  const uint8_t *mask; /* its legal actions */
  const float *policy; /* the policy target: the search's improved policy, or one-hot on the
                          raw policy's move when not searched */
} mb_player_decision;
/* One decision at g's current state (g is left there): the search's when `search`, else the raw
 * policy network's (greedy, scfg unused and may be NULL). */
bool mb_player_decide_record(mb_player *p, mb_game *g, const mb_search_config *scfg, bool exact,
                             bool search, mb_rng *rng, mb_player_decision *out, mb_error *err);
/* The raw policy network's greedy move on observation obs among mask's legal actions (-1 when
 * none is legal). */
bool mb_player_raw_action(mb_player *p, const float *obs, const uint8_t *mask, int32_t *action,
                          mb_error *err);
/* The search of p's last searched decision (its tree stays valid until the next one). */
const mb_search *mb_player_search(const mb_player *p);
/* The reward unit of the current episodes: a true reward times this is the agent's (1 / R_ref,
 * mb_player_set_scale). */
double mb_player_reward_unit(const mb_player *p);

#endif
