/* An upper bound on the time any solver can save: not a solver, a yardstick, so every table
 * can show how far each solver is from optimal ("gap to bound").
 *
 * LP relaxation (GLPK simplex): maximise sum_b benefit_b x_b over 0 <= x_b <= 1 subject to
 * sum of r(size_b) x_b over the buffers live at t <= r(capacity), for every time t, where r
 * rounds up to the alignment (each fast buffer occupies at least that much). Fragmentation
 * is otherwise ignored (any fractional set that fits by aligned bytes counts), pinned and
 * over-capacity buffers are fixed at 0. Why this bounds every valid assignment's saving, and why
 * constraints at buffer start times suffice: see bound.c. */
#ifndef MB_BOUND_H
#define MB_BOUND_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "hardware.h"
#include "workload.h"

typedef enum mb_bound_status {
  MB_BOUND_SOLVED = 0,     /* LP solved to optimality: saving_ps is the bound */
  MB_BOUND_NOT_SOLVED = 1, /* time or iteration limit, or numerical trouble: saving_ps is the
                              trivial bound (sum of all standalone benefits), lowered to the
                              weak-duality bound of the stopped simplex's duals when GLPK
                              stopped on a limit (bound.c); valid, weaker than the LP optimum */
} mb_bound_status;

typedef struct mb_bound_result {
  mb_bound_status status;
  mb_time_ps slow_ps;    /* T_slow */
  mb_time_ps saving_ps;  /* upper bound on T_slow - T(any valid assignment) */
  mb_time_ps bound_ps;   /* T_bound = T_slow - saving_ps: no assignment is faster */
  int32_t n_vars;        /* LP columns (candidate buffers) */
  int32_t n_constraints; /* LP rows (maximal sets of buffers live together) */
  double seconds;        /* wall clock */
} mb_bound_result;

/* budget_s <= 0: no time limit. False only on allocation failure or bad input (err set);
 * a time-limited LP is a result with status NOT_SOLVED, not an error. */
bool mb_bound_lp(const mb_workload *w, const mb_hardware *hw, double budget_s, mb_bound_result *out,
                 mb_error *err);

const char *mb_bound_status_name(mb_bound_status s);

#endif
