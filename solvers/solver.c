/* The solver registry: every solver behind one name, in the order tables list them. */
#include "solver.h"

#include <stdlib.h>
#include <string.h>

static const mb_solver SOLVERS[] = {
    {"heuristic",
     "XLA memory-space-assignment style: memory-boundedness order, best fit over the live range",
     mb_solve_heuristic, NULL, false, 0},
    {"greedy",
     "ILP-free: lazy greedy on exact simulated gains, lowest-offset placement, evict-and-insert "
     "and repacking local search",
     mb_solve_greedy, NULL, false, MB_GREEDY_DEFAULT_BUDGET_S},
    {"mallocmuzero",
     "MuZero agent (results/agents/default.h5): Gumbel search in its learned model, "
     "value network at the leaves",
     mb_solve_mallocmuzero, mb_check_mallocmuzero, true, MB_MUZERO_DEFAULT_BUDGET_S},
    {"mallocmuzero-exact",
     "the same agent searching the real game (exact rewards and masks), leaves valued by "
     "rollouts of its own policy network",
     mb_solve_mallocmuzero_exact, mb_check_mallocmuzero, true, MB_MUZERO_DEFAULT_BUDGET_S},
};

const mb_solver *mb_solver_find(const char *name) {
  int n;
  const mb_solver *all = mb_solver_list(&n);
  for (int i = 0; i < n; i++)
    if (!strcmp(all[i].name, name)) return &all[i];
  return NULL;
}

const mb_solver *mb_solver_list(int *count) {
  *count = (int)(sizeof SOLVERS / sizeof SOLVERS[0]);
  return SOLVERS;
}

void mb_solver_options_default(mb_solver_options *opt) {
  memset(opt, 0, sizeof *opt);
  opt->seed = 1;
  opt->budget_seconds = 0; /* each solver's default */
  opt->order = "heuristic";
}

bool mb_solver_search_parse(const char *name, int *search) {
  if (!strcmp(name, "gumbel"))
    *search = MB_SOLVER_SEARCH_GUMBEL;
  else if (!strcmp(name, "puct"))
    *search = MB_SOLVER_SEARCH_PUCT;
  else
    return false;
  return true;
}

const char *mb_solver_search_name(int search) {
  return search == MB_SOLVER_SEARCH_GUMBEL ? "gumbel"
         : search == MB_SOLVER_SEARCH_PUCT ? "puct"
                                           : NULL;
}

void mb_solver_stats_free(mb_solver_stats *st) {
  if (!st) return;
  free(st->curve_step);
  free(st->curve_return);
  st->curve_step = NULL;
  st->curve_return = NULL;
  st->curve_len = 0;
}
