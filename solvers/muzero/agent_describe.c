#include "agent_describe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "error.h"
#include "game.h"
#include "nn_io.h"
#include "train_state.h"

/* The first, last and best finite points of a series (NaN marks points not evaluated). */
typedef struct series_summary {
  int64_t first, last, best; /* indices; -1 when no point is finite */
} series_summary;

static series_summary summarise(const double *x, int64_t n) {
  series_summary s = {-1, -1, -1};
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) continue;
    if (s.first < 0) s.first = i;
    s.last = i;
    if (s.best < 0 || x[i] > x[s.best]) s.best = i;
  }
  return s;
}

static void print_series(FILE *out, const char *label, const char *what, const mb_agent_curve *c,
                         const double *x) {
  series_summary s = summarise(x, c->len);
  if (s.first < 0) return;
  fprintf(out, "%-16s %s: step %.0f %.4f, step %.0f (last) %.4f, best %.4f at step %.0f\n", label,
          what, c->step[s.first], x[s.first], c->step[s.last], x[s.last], x[s.best],
          c->step[s.best]);
}

void mb_agent_describe_game(FILE *out, const mb_agent_config *c, const char *prefix) {
  const mb_game_config *g = &c->game;
  fprintf(
      out, "%s%-16s %d actions (%d candidate slots + slow), buffer order %s, %s, ", prefix, "game",
      g->n_actions, g->n_actions - 1, mb_game_order_name(g->order),
      g->auto_slow ? "buffers without a candidate go slow unasked" : "a decision for every buffer");
  if (g->shaping > 0)
    fprintf(out, "reward shaping %g\n", g->shaping);
  else
    fprintf(out, "no reward shaping\n");
  fprintf(out,
          "%s%-16s %d values: the current buffer, a %d x %d occupancy picture (address x time), "
          "%d candidate slots",
          prefix, "observation", c->obs_dim, g->addr_bins, g->time_bins, g->n_actions - 1);
  if (g->next_buffers > 0) fprintf(out, ", the next %d buffers", g->next_buffers);
  if (g->gain_features) fprintf(out, ", the gain block");
  if (g->demand_bins > 0) fprintf(out, ", a demand profile of %d time bins", g->demand_bins);
  fprintf(out, ", globals; blocking lookahead %d buffers\n", g->lookahead);
  if (c->action_features)
    fprintf(out,
            "%s%-16s one-hot plus the candidate slot's %d fields where the observation is real "
            "(the search's root, the first unroll step)\n",
            prefix, "dynamics action", MB_AGENT_ACTION_FEATURES);
}

bool mb_agent_describe(const char *path, FILE *out, mb_error *err) {
  mb_nn_file *f = mb_nn_file_open(path, err);
  if (!f) return false;
  /* older or hand-made checkpoints may lack the counters or the curve: describe what is there */
  bool has_progress = mb_nn_file_has(f, "train.steps");
  bool has_curve = mb_nn_file_has_series(f, "curve_step");
  mb_agent ag;
  mb_agent_progress prog;
  mb_agent_curve curve;
  mb_agent_curve_init(&curve);
  char *note = NULL;
  bool ok =
      mb_agent_read(f, &ag, NULL, has_progress ? &prog : NULL, has_curve ? &curve : NULL, err);
  if (ok && mb_nn_file_has(f, "training")) {
    ok = (note = mb_nn_file_get_string_alloc(f, "training", err)) != NULL;
    if (!ok) {
      mb_fail_prefix(err, "%s", path);
      mb_agent_curve_free(&curve);
      mb_agent_free(&ag);
    }
  }
  int64_t checked = 0, unchecked = 0;
  mb_nn_file_checksum_counts(f, &checked, &unchecked);
  mb_nn_file_close(f);
  if (!ok) return false;

  const mb_agent_config *c = &ag.cfg;
  /* texts from the file (and paths): escaped as in messages (error.h) */
  mb_diag(out, "%-16s %s", "agent checkpoint", path);
  /* the history: the command line that started the run, then one per resumed run */
  const char *line = note && note[0] ? note : "(not recorded)";
  for (const char *label = "trained by"; line; label = "resumed by") {
    const char *nl = strchr(line, '\n');
    int len = nl ? (int)(nl - line) : (int)strlen(line);
    mb_diag(out, "%-16s %.*s", label, len, line);
    line = nl ? nl + 1 : NULL;
  }
  free(note);
  if (has_progress && prog.options[0]) mb_diag(out, "%-16s %s", "run options", prog.options);
  if (has_progress) {
    fprintf(out,
            "%-16s %lld updates, %lld self-play episodes, %lld decisions, %.0f s of training, "
            "seed %llu\n",
            "training", (long long)prog.steps, (long long)prog.episodes, (long long)prog.decisions,
            prog.seconds, (unsigned long long)prog.seed);
    /* the sgemm kernel decides the last bits of every update (tensor.h, "Determinism") */
    mb_diag(out, "%-16s %s", "BLAS kernel", prog.blas[0] ? prog.blas : "(not recorded)");
  }
  /* damage to a checkpoint without checksums would load unnoticed: say which kind this is */
  if (unchecked == 0)
    fprintf(out, "%-16s SHA-256 of each dataset: all %lld read match\n", "checksums",
            (long long)checked);
  else
    fprintf(out,
            "%-16s %lld of %lld datasets read have no SHA-256 (written before checksums, or "
            "removed): damage to them would load unnoticed\n",
            "checksums", (long long)unchecked, (long long)(checked + unchecked));
  char state[4096];
  if (mb_train_state_path(path, state, sizeof state))
    mb_diag(out, "%-16s %s", "resume state",
            access(state, F_OK) == 0 ? state
                                     : "none beside it (the run finished, or never "
                                       "wrote one)");
  char dynamics[96] = "";
  if (c->dyn_width || c->dyn_blocks)
    snprintf(dynamics, sizeof dynamics, " (the dynamics: %d wide, %d block%s)",
             mb_agent_dyn_width(c), mb_agent_dyn_blocks(c), mb_agent_dyn_blocks(c) == 1 ? "" : "s");
  fprintf(out,
          "%-16s latent %d (%s), %d residual block%s per module%s, %lld parameters; value and "
          "reward on %d atoms over [%g, %g] (h-transformed, %g units per unit of return)\n",
          "networks", c->latent, mb_latent_norm_name(c->latent_norm), c->blocks,
          c->blocks == 1 ? "" : "s", dynamics, (long long)mb_agent_param_count(&ag), c->support,
          c->support_min, c->support_max, c->value_scale);
  char digest[65];
  mb_agent_digest(&ag, digest);
  fprintf(out, "%-16s %s (SHA-256 of the config and weights: equal for equal networks)\n", "digest",
          digest);
  mb_agent_describe_game(out, c, "");
  if (has_curve) {
    fprintf(out, "%-16s %lld points", "training curve", (long long)curve.len);
    if (isfinite(curve.heuristic) || isfinite(curve.random)) {
      fprintf(out, "; eval set references: heuristic %.4f, random play %.4f", curve.heuristic,
              curve.random);
    }
    fprintf(out, " (mean returns, simulated)\n");
    print_series(out, "raw policy", "greedy, no search, on the eval set", &curve, curve.policy);
    print_series(out, "validation", "raw policy on the held-out workloads", &curve,
                 curve.validation);
  } else {
    fprintf(out, "%-16s none stored\n", "training curve");
  }
  mb_agent_curve_free(&curve);
  mb_agent_free(&ag);
  return true;
}
