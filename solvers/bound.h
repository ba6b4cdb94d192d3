/* An upper bound on the time any solver can save: not a solver, a yardstick, so every table
 * can show how far each solver is from optimal ("gap to bound").
 *
 * LP relaxation (GLPK simplex): maximise the saving sum_o s_o over 0 <= x_b <= 1, where each
 * op saves s_o <= sum of its buffers' standalone savings e_{b,o} x_b and, where the roofline
 * caps it (a compute-bound op), s_o <= what it saves with every buffer it uses fast (with no
 * op capped, and for an op-less workload, this is sum_b benefit_b x_b), subject to
 * sum of r(size_b) x_b over the buffers live at t <= r(capacity), for every time t, where r
 * rounds up to the alignment (each fast buffer occupies at least that much). Fragmentation
 * is otherwise ignored (any fractional set that fits by aligned bytes counts), pinned and
 * over-capacity buffers are fixed at 0. Cover cuts then tighten it: no valid assignment holds
 * all of a set of buffers live together whose aligned sizes exceed the capacity, so at most
 * |C| - 1 of such a set C (and of its extension by buffers at least as large as C's largest)
 * are fast; up to MB_BOUND_COVER_ROUNDS rounds add the ones the LP solution violates and solve
 * again. Why this bounds every valid assignment's saving, why constraints at buffer start
 * times suffice and why the cuts are valid: see bound.c. */
#ifndef MB_BOUND_H
#define MB_BOUND_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "hardware.h"
#include "workload.h"

/* Rounds of cover cuts after the LP: each solves the LP again with the cuts its solution
 * violated (the dual simplex, from the last optimal basis). On 81 of the catalogue's 85 cases
 * no cut is violated any more within 34 rounds; lstm_medium_train_b20-tpu (3293 cuts),
 * resnet50_train_b32-gpu (318), vit_b16_train_b8-tpu (262) and ssd_mobilenet_tf-tpu (53) reach
 * the limit, none of them in more than 1.3 s (measured 2026-12-02, with the ops' caps). */
#define MB_BOUND_COVER_ROUNDS 50

typedef enum mb_bound_status {
  MB_BOUND_SOLVED = 0,     /* the LP and every round of cuts solved to optimality: saving_ps is
                              the bound, the same on every machine */
  MB_BOUND_NOT_SOLVED = 1, /* time or iteration limit in the LP or a round of cuts, or numerical
                              trouble: saving_ps is the best weak-duality bound of the solves
                              that stopped (bound.c), or the trivial bound (sum of all
                              standalone benefits) when none gave one; valid, weaker */
} mb_bound_status;

typedef struct mb_bound_result {
  mb_bound_status status;
  mb_time_ps slow_ps;    /* T_slow */
  mb_time_ps saving_ps;  /* upper bound on T_slow - T(any valid assignment) */
  mb_time_ps bound_ps;   /* T_bound = T_slow - saving_ps: no assignment is faster */
  int32_t n_vars;        /* LP columns (candidate buffers) */
  int32_t n_constraints; /* LP rows (maximal sets of buffers live together) */
  int32_t n_cuts;        /* cover cuts added to them */
  int32_t n_capped_ops;  /* ops whose saving the roofline caps below the sum of their
                            buffers' savings: a column and a row each */
  double seconds;        /* wall clock */
} mb_bound_result;

/* budget_s <= 0: no time limit. False only on allocation failure or bad input (err set);
 * a time-limited LP is a result with status NOT_SOLVED, not an error. Cuts for up to
 * MB_BOUND_COVER_ROUNDS rounds. */
bool mb_bound_lp(const mb_workload *w, const mb_hardware *hw, double budget_s, mb_bound_result *out,
                 mb_error *err);
/* The same with at most cover_rounds rounds of cuts (0: the LP alone), for comparisons. */
bool mb_bound_lp_cuts(const mb_workload *w, const mb_hardware *hw, double budget_s,
                      int cover_rounds, mb_bound_result *out, mb_error *err);

const char *mb_bound_status_name(mb_bound_status s);

#endif
