/* The mallocGame: memory mapping posed as a single-player game, for mallocMuZero and for
 * simple policies (`mallocbench play`).
 *
 * An episode visits the "visitable" buffers one at a time in a fixed order: every buffer that
 * could ever gain from fast memory (not pinned, size <= capacity, standalone benefit > 0), in
 * the heuristic's priority order (mb_heuristic_order, the default), by start time, or by size.
 * At each decision the player picks one of A actions (A = config.n_actions):
 *   - actions 0 .. A-2: candidate offsets, the canonical positions of the free gaps over the
 *     buffer's live range that hold it: the lowest aligned offset of each such gap and its
 *     top-aligned offset (highest aligned offset with offset + size <= gap end), deduplicated,
 *     ranked best fit first: smaller gap first, then lower offset. Candidate 0 is therefore
 *     exactly the heuristic solver's best-fit choice (mb_occupancy_best_fit). When more than
 *     A-1 positions exist, the A-1 best ranked are offered; unused slots are illegal.
 *   - action A-1: slow memory, always legal.
 * Illegal offsets are never offered. With config.auto_slow (default) a buffer that has no
 * candidate at all goes to slow memory without a decision (the only legal move is forced).
 *
 * Reward of a step = the exact drop of simulated program time it causes / T_slow, computed
 * incrementally (mb_cost_move) in integer picoseconds; the episode return
 * (T_slow - T_final) / T_slow is the exact sum of the integer drops divided once, so it equals
 * a from-scratch mb_program_time of the final assignment. The simulator is the ground truth.
 *
 * Search support: every step pushes one entry on an undo stack. A snapshot is the stack depth
 * plus a serial number; restore pops back to it (O(steps undone), no allocation). Snapshots
 * are valid for the state they were taken in and its descendants: restoring a snapshot whose
 * branch was undone and replaced is detected and refused. A copy (mb_game_copy, mb_game_clone)
 * accepts the snapshots of its source's history up to the copy, not the later ones. The game
 * allocates nothing after mb_game_new: step, observe, snapshot, restore and copy work in
 * preallocated arrays (the occupancy's gap query sorts with libc qsort, which may take a
 * temporary buffer when many rectangles overlap the live range).
 *
 * The observation is a fixed-size float vector (mb_game_observation_size), laid out in four
 * fixed blocks and three optional ones; every value lies in [0, 1]. Field-by-field
 * documentation: datasets/GAME.md.
 *   [0, 10)            current buffer (MB_GAME_OBS_BUFFER fields, see below)
 *   [10, 10 + B*T)     occupancy picture: B address bins x T time bins, address-major
 *   next (A-1) * 6     per candidate slot (MB_GAME_OBS_PER_CANDIDATE fields)
 *   next N * 6         the next N buffers of the order (MB_GAME_OBS_PER_NEXT fields; N =
 *                      next_buffers, 0 by default)
 *   next D * 3         the demand profile over the whole schedule (MB_GAME_OBS_PER_DEMAND_BIN
 *                      fields per time bin; D = demand_bins, 0 by default)
 *   next 2 + N         the gain block (with gain_features, off by default)
 *   last 5             progress (MB_GAME_OBS_PROGRESS fields)
 * When the episode is over the vector is all zeros except the progress block.
 *
 * A game references the workload it was made with (which must outlive it) and keeps its own copy
 * of the hardware. One game must not be used from two threads at once (it owns scratch
 * arrays); give each actor its own mb_game_clone. */
#ifndef MB_GAME_H
#define MB_GAME_H

#include <stdbool.h>
#include <stdint.h>

#include "assignment.h"
#include "error.h"
#include "hardware.h"
#include "workload.h"

typedef enum mb_game_order {
  MB_GAME_ORDER_HEURISTIC = 0, /* mb_heuristic_order (solvers/solver.h) */
  MB_GAME_ORDER_START,         /* earlier start first, then longer live range, then id */
  MB_GAME_ORDER_SIZE,          /* larger first, then earlier start, then id */
} mb_game_order;

typedef struct mb_game_config {
  int32_t n_actions; /* A in [2, 1024]: A-1 candidate slots + slow (action A-1); default 16 */
  mb_game_order order;
  int32_t addr_bins;    /* occupancy picture rows (address), [1, 256]; default 16 */
  int32_t time_bins;    /* occupancy picture columns (time), [1, 256]; default 16 */
  int32_t lookahead;    /* buffers after the current one used by the blocking feature, and
                           buffers from the current one on used by the shaping potential (0: Phi
                           is 0), [0, 4096]; default 32 */
  bool auto_slow;       /* buffers without any candidate go slow without a decision; default on */
  int32_t next_buffers; /* upcoming buffers of the order the observation describes, [0, 64];
                           default 0. A learned model can only predict the next state when the
                           buffer it is centred on is in the current one (agents README). */
  int32_t demand_bins;  /* time bins of the demand profile over the whole schedule, [0, 256];
                           default 0 (none): per bin the fast bytes placed and the bytes and
                           benefit of the buffers still to come (datasets/GAME.md). Observing
                           it costs O(buffers) per decision. */
  bool gain_features;   /* the observation also gives the current buffer's exact gain now and
                           its standalone benefit, in the agent's reward unit (below) */
  double shaping;       /* weight of potential-based reward shaping, [0, 100]; default 0 (off).
                           See mb_game_step. */
} mb_game_config;

/* Observation block sizes and the fields of the fixed blocks. */
#define MB_GAME_OBS_BUFFER 10
enum {
  MB_GAME_F_SIZE = 0,         /* size / capacity */
  MB_GAME_F_LOG_SIZE,         /* log2(size) / log2(capacity) (0 when capacity < 2) */
  MB_GAME_F_LENGTH,           /* (end - start + 1) / schedule_length */
  MB_GAME_F_START,            /* start / schedule_length */
  MB_GAME_F_END,              /* (end + 1) / schedule_length */
  MB_GAME_F_WINDOW_START,     /* (start - window start) / window length */
  MB_GAME_F_WINDOW_END,       /* (end + 1 - window start) / window length */
  MB_GAME_F_BENEFIT,          /* standalone benefit / T_slow */
  MB_GAME_F_BENEFIT_PER_BYTE, /* (benefit / size) / max over visitable buffers */
  MB_GAME_F_USES,             /* number of uses / max over visitable buffers */
};
#define MB_GAME_OBS_PER_CANDIDATE 6
enum {
  MB_GAME_C_LEGAL = 0, /* 1 when the slot holds a candidate; all fields 0 otherwise */
  MB_GAME_C_OFFSET,    /* offset / capacity */
  MB_GAME_C_GAP,       /* size of the gap holding it / capacity */
  MB_GAME_C_WASTE,     /* (gap size - buffer size) / capacity */
  MB_GAME_C_TOP,       /* 1 for a gap's top-aligned position, 0 for its lowest position */
  MB_GAME_C_BLOCKING,  /* share of the lookahead buffers' benefit this position blocks */
};
#define MB_GAME_OBS_PER_NEXT 6
enum {
  MB_GAME_N_PRESENT = 0, /* 1 when the order has a buffer at this distance; all 0 otherwise */
  MB_GAME_N_SIZE,        /* size / capacity */
  MB_GAME_N_START,       /* start / schedule_length */
  MB_GAME_N_END,         /* (end + 1) / schedule_length */
  MB_GAME_N_BENEFIT,     /* standalone benefit / T_slow */
  MB_GAME_N_OVERLAPS,    /* 1 when its live range overlaps the current buffer's */
};
/* With gain_features, a block of MB_GAME_OBS_GAIN + next_buffers values between the next
 * buffers and the progress block, in units of the summed standalone benefit of the visitable
 * buffers (the unit mallocMuZero's rewards are normalised by, train.h): without it an agent
 * cannot tell the size of the reward a placement earns (agents README, "Gain features"). */
#define MB_GAME_OBS_GAIN 2
enum {
  MB_GAME_G_GAIN = 0, /* time saved if the buffer were placed now (the reward of every
                         candidate action) / summed standalone benefit */
  MB_GAME_G_SHARE,    /* standalone benefit / summed standalone benefit; then the same for each
                         of the next_buffers next buffers of the order (0 beyond its end) */
};
#define MB_GAME_OBS_PER_DEMAND_BIN 3
enum {
  MB_GAME_D_USED = 0, /* fast bytes placed, mean over the bin's ops / capacity */
  MB_GAME_D_DEMAND,   /* bytes of the buffers after the current one, mean over the bin's ops,
                         x / capacity squashed as x / (1 + x) */
  MB_GAME_D_BENEFIT,  /* their standalone benefit spread over their live ranges, share of the
                         summed benefit times demand_bins, squashed as x / (1 + x) */
};
/* Size of the gain block (0 without gain_features). */
int32_t mb_game_gain_block_size(const mb_game_config *c);
#define MB_GAME_OBS_PROGRESS 5
enum {
  MB_GAME_P_VISITED = 0,  /* visitable buffers already decided / visitable buffers */
  MB_GAME_P_BENEFIT_LEFT, /* standalone benefit of the undecided / of all visitable */
  MB_GAME_P_IN_USE,       /* 1 - free bytes over the live range / capacity (0 when over) */
  MB_GAME_P_RETURN,       /* return so far: (T_slow - T) / T_slow */
  MB_GAME_P_CANDIDATES,   /* number of candidates / (A - 1) */
};

/* Candidate offset of an action that is not legal now. */
#define MB_GAME_ILLEGAL (-2)

typedef struct mb_game mb_game;

/* A state to return to: valid on the game it was taken on (or an mb_game_copy of it). */
typedef struct mb_game_snapshot {
  int32_t depth;   /* undo stack depth */
  int32_t cursor;  /* position in the visiting order */
  uint64_t serial; /* serial of the top stack entry (0 at depth 0) */
} mb_game_snapshot;

void mb_game_config_default(mb_game_config *c);
/* False (err names the field and value) when a config field is out of range. */
bool mb_game_config_check(const mb_game_config *c, mb_error *err);
/* "heuristic", "start", "size". */
bool mb_game_order_parse(const char *s, mb_game_order *out);
const char *mb_game_order_name(mb_game_order order);
/* Index of the first candidate slot's fields in the observation (after the current buffer and
 * the occupancy picture); slot k's MB_GAME_OBS_PER_CANDIDATE fields follow at
 * + k * MB_GAME_OBS_PER_CANDIDATE. */
int32_t mb_game_candidate_block_offset(const mb_game_config *c);
/* Length of the observation vector:
 * 10 + B*T + (A-1)*6 + N*6 + D*3 (+ 2 + N with gain_features) + 5. */
int32_t mb_game_observation_size(const mb_game_config *c);

/* NULL with err set on a bad config, a bad hardware profile (capacity < 0, alignment < 1) or
 * allocation failure. The game starts reset. */
mb_game *mb_game_new(const mb_workload *w, const mb_hardware *hw, const mb_game_config *c,
                     mb_error *err);
void mb_game_free(mb_game *g);
/* An independent game in the same state (same workload pointer, hardware copied). */
mb_game *mb_game_clone(const mb_game *g, mb_error *err);
/* Makes dst's state identical to src's, including snapshot validity; no allocation; O(decisions
 * taken in src). False when they were not made from the same workload (pointer), hardware
 * (values) and config. */
bool mb_game_copy(mb_game *dst, const mb_game *src, mb_error *err);

/* Back to the initial state: everything slow, first buffer of the order. */
void mb_game_reset(mb_game *g);
bool mb_game_done(const mb_game *g);
/* Buffer to decide now, or -1 when done. */
int32_t mb_game_current_buffer(const mb_game *g);
const mb_game_config *mb_game_get_config(const mb_game *g);
const mb_workload *mb_game_workload(const mb_game *g);
/* The time window of the current buffer's occupancy picture (datasets/GAME.md, "Occupancy
 * picture"): ops [*start, *start + *length), the live range with its own length on either side
 * (at least time_bins ops, at most the schedule), shifted to stay inside the schedule. Length 0
 * when the episode is over. */
void mb_game_window(const mb_game *g, int32_t *start, int32_t *length);
int32_t mb_game_n_actions(const mb_game *g);
int32_t mb_game_slow_action(const mb_game *g); /* A - 1 */
/* Number of candidate offsets offered now (legal actions = this + 1, or 0 when done). */
int32_t mb_game_n_candidates(const mb_game *g);
/* mask[a] = 1 when action a is legal now (A entries). Returns the number of legal actions. */
int32_t mb_game_legal_mask(const mb_game *g, uint8_t *mask);
bool mb_game_is_legal(const mb_game *g, int32_t action);
/* The offset action a places the current buffer at: an offset, MB_SLOW for the slow action, or
 * MB_GAME_ILLEGAL. */
int64_t mb_game_candidate_offset(const mb_game *g, int32_t action);
/* The action the heuristic solver takes: 0 (best fit) when a candidate exists, else slow;
 * -1 when done. */
int32_t mb_game_heuristic_action(const mb_game *g);

/* Plays action a: places the current buffer, advances to the next decision. *reward (may be
 * NULL) = time saved / T_slow, plus, with config.shaping = lambda > 0, the potential-based
 * shaping term lambda * (Phi(s') - Phi(s)) (Ng, Harada and Russell, ICML 1999), where Phi(s) is
 * the standalone benefit / T_slow of the buffers among the `lookahead` next ones of the order
 * (the current one included) that still fit somewhere in fast memory. Phi is 0 once the episode
 * is over, so the shaped rewards of an episode sum to its return minus lambda * Phi(start): the
 * same best play. mb_game_return always gives the unshaped return. False with err set (state
 * unchanged) when done or a is illegal. With reward NULL no potential is computed: the shaped
 * rewards of a path sum to its mb_game_return difference plus lambda times the difference of
 * mb_game_potential at its ends. */
bool mb_game_step(mb_game *g, int32_t action, double *reward, mb_error *err);
/* Phi of the current state (see mb_game_step); 0 without shaping and once the episode is over.
 * Computed on the first call in a state (lookahead gap queries), then cached. */
double mb_game_potential(mb_game *g);
/* Writes mb_game_observation_size(config) floats. Uses the game's scratch arrays. */
void mb_game_observe(mb_game *g, float *obs);

mb_game_snapshot mb_game_snapshot_take(const mb_game *g);
/* False with err set (state unchanged) when snap is not this state or one of its ancestors. */
bool mb_game_restore(mb_game *g, mb_game_snapshot snap, mb_error *err);

/* Decisions taken so far (the undo stack depth) and the visitable buffers of an episode. */
int32_t mb_game_depth(const mb_game *g);
int32_t mb_game_n_visitable(const mb_game *g);
/* The visiting order (mb_game_n_visitable entries; owned by the game). */
const int32_t *mb_game_visit_order(const mb_game *g);
/* Current simulated program time, the all-slow time, and the return so far. */
mb_time_ps mb_game_time(const mb_game *g);
mb_time_ps mb_game_slow_time(const mb_game *g);
double mb_game_return(const mb_game *g);
/* Writes the current placement (undecided buffers slow). out->n_buffers must match. */
bool mb_game_assignment(const mb_game *g, mb_assignment *out, mb_error *err);

#endif
